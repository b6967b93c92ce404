"""Shared test helpers: the dtypes, awkward input arrays, and exact comparison."""

from __future__ import annotations

import os
import pathlib

import ml_dtypes
import numpy as np
import pytest

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_DTYPES = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), BFLOAT16]
INT_DTYPES = [np.dtype(np.int8), np.dtype(np.uint8)]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES
DTYPE_IDS = [d.name for d in ALL_DTYPES]


def make_input(shape, dtype, seed=0, specials=True, negative_zero=True):
    """Seeded data with many ties; floats get +0.0 and, when asked, -0.0 (negative_zero)
    and +-inf and NaN (specials)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.min + 1, -3, -1, 0, 1, 2, 5, info.max], dtype=np.int64)
        pool = pool[(pool >= info.min) & (pool <= info.max)]
        data = rng.choice(pool, size=shape)
        if rng.random() < 0.5:  # also plain wide-range data
            data = rng.integers(info.min, int(info.max) + 1, size=shape)
        return data.astype(dtype)
    pool = [-2.5, -1.0, 0.0, 0.5, 1.0, 1.0, 3.25, 7.0] + ([-0.0] if negative_zero else [])
    if specials:
        pool += [np.inf, -np.inf, np.nan]
    data = rng.choice(np.array(pool), size=shape)
    if specials and data.size:
        # keep NaN rare enough that most windows hold none
        nan = np.isnan(data)
        data[nan & (rng.random(shape) < 0.7)] = 2.0
    return data.astype(np.float32).astype(dtype)


def this_fastpool_env() -> dict:
    """os.environ for a child Python that must import the copy of fastpool the tests
    import, whose kernel cache the warmup filled: a script run from another folder would
    import the installed copy instead, and compile its kernels again (minutes each)."""
    import fastpool

    here = str(pathlib.Path(fastpool.__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [here, os.environ.get("PYTHONPATH")])))  # fmt: skip


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of an array, for exact comparison (NaN payloads and -0.0 included)."""
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.itemsize > 1 else a.view(np.uint8)


def assert_identical(actual, expected):
    """Same dtype, shape and bits."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    mismatch = bits(actual) != bits(expected)
    if mismatch.any():
        where = np.argwhere(mismatch)[:5]
        raise AssertionError(
            f"{int(mismatch.sum())} of {actual.size} elements differ, e.g. at {where.tolist()}: "
            f"got {actual[tuple(where.T)]}, expected {expected[tuple(where.T)]}"
        )


@pytest.fixture(params=ALL_DTYPES, ids=DTYPE_IDS)
def dtype(request):
    return request.param


@pytest.fixture(params=["serial", "parallel"])
def entry(request, monkeypatch):
    """Run a test through the serial kernel entries (small calls) or the parallel ones."""
    from fastpool import _api

    monkeypatch.setattr(_api, "_SERIAL_BELOW", 1 << 62 if request.param == "serial" else 0)
    return request.param


# Hypothesis profiles: "ci" by default; FASTPOOL_HYPOTHESIS_PROFILE=long for thousands of
# examples per property. No deadline: the first example of a kind compiles kernels.
def _register_hypothesis_profiles():
    import os

    from hypothesis import HealthCheck, settings

    slow = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=slow)
    settings.register_profile("long", max_examples=3000, deadline=None,
                              suppress_health_check=slow)  # fmt: skip
    settings.load_profile(os.environ.get("FASTPOOL_HYPOTHESIS_PROFILE", "ci"))


_register_hypothesis_profiles()
