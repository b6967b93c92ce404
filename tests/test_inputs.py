"""Awkward but valid inputs give the same results as a fresh C-contiguous array, and no
public function ever modifies the caller's array."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL_DTYPES, DTYPE_IDS, assert_identical, make_input

import fastpool

CALLS = {
    "max_pool-2d": lambda x, layout: fastpool.max_pool(
        x, [3, 2], strides=[2, 1], pads=[1, 0, 1, 1], return_indices=True, layout=layout
    ),
    "max_pool-2d-values": lambda x, layout: fastpool.max_pool(x, [2, 2], layout=layout),
    "max_pool-1d": lambda x, layout: fastpool.max_pool(
        x.reshape(x.shape[0], x.shape[1], -1)
        if layout == "NCHW"
        else x.reshape(x.shape[0], -1, x.shape[-1]),
        [4],
        strides=[3],
        return_indices=True,
        layout=layout,
    ),
    "global_max_pool": lambda x, layout: fastpool.global_max_pool(x, layout=layout),
    "global_lp_pool": lambda x, layout: fastpool.global_lp_pool(x, 3, layout=layout),
}


def variants(base: np.ndarray):
    """Views and copies of ``base`` holding the same logical values."""
    yield "fortran", np.asfortranarray(base)
    padded = np.zeros(tuple(s * 2 for s in base.shape), dtype=base.dtype)
    view = padded[::2, ::2, ::2, ::2]
    view[...] = base
    yield "strided-view", view
    reversed_copy = np.ascontiguousarray(base[:, :, ::-1, ::-1])
    yield "negative-strides", reversed_copy[:, :, ::-1, ::-1]
    readonly = base.copy()
    readonly.flags.writeable = False
    yield "read-only", readonly
    if base.dtype.kind in "fiu" and base.dtype.itemsize > 1:
        yield "byte-swapped", base.astype(base.dtype.newbyteorder())
    yield "transposed-back", np.ascontiguousarray(base.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)


def run(call, x, layout):
    try:
        return call(x, layout)
    except TypeError:
        return "TypeError"


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_awkward_inputs_match_contiguous(call, dtype, layout):
    base = make_input((2, 3, 5, 4), dtype, seed=3)
    expected = run(CALLS[call], base, layout)
    for name, x in variants(base):
        before = x.copy()
        actual = run(CALLS[call], x, layout)
        if isinstance(expected, str):
            assert actual == expected, name
            continue
        for a, e in zip(as_tuple(actual), as_tuple(expected)):
            assert a.flags.c_contiguous, name
            assert_identical(a, e)
        assert_identical(x, before)  # untouched


@pytest.mark.parametrize("call", [name for name in CALLS if name != "max_pool-1d"])
def test_python_lists(call):
    base = make_input((1, 2, 4, 4), np.float64, seed=1, specials=False)
    expected = as_tuple(CALLS[call](base, "NCHW"))
    actual = as_tuple(CALLS[call](base.tolist(), "NCHW"))
    for a, e in zip(actual, expected):
        assert_identical(a, e)


def test_python_list_1d():
    values = [[[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]]]
    y, indices = fastpool.max_pool(values, [3], strides=[2], return_indices=True)
    assert y.dtype == np.float64 and y.tolist() == [[[4.0, 5.0, 9.0]]]
    assert indices.tolist() == [[[2, 4, 5]]]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_inputs_never_modified(dtype):
    """Every public function, on a plain input, leaves it bit-for-bit unchanged."""
    x = make_input((2, 3, 6, 5), dtype, seed=9)
    before = x.copy()
    for call in CALLS.values():
        for layout in ("NCHW", "NHWC"):
            run(call, x, layout)
            assert_identical(x, before)
    fastpool.pool_output_shape(list(x.shape), [2, 2])
    assert_identical(x, before)


def test_outputs_do_not_alias_the_input():
    x = make_input((1, 1, 3, 3), np.float32, specials=False)
    y = fastpool.max_pool(x, [1, 1])
    assert not np.shares_memory(x, y)
    y[...] = 99
    assert (x != 99).all()


def test_attribute_forms_are_equivalent():
    """Lists, tuples, integer arrays, numpy integers and bytes all mean the same."""
    x = make_input((1, 2, 7, 7), np.float32, seed=2)
    expected = fastpool.max_pool(
        x, [3, 3], strides=[2, 2], pads=[1, 1, 0, 0], auto_pad="NOTSET", return_indices=True
    )
    forms = [
        dict(kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 0, 0), auto_pad=b"NOTSET"),
        dict(
            kernel_shape=np.array([3, 3]),
            strides=np.array([2, 2], dtype=np.int32),
            pads=np.array([1, 1, 0, 0], dtype=np.uint8),
            auto_pad="NOTSET",
        ),
        dict(kernel_shape=[np.int64(3), np.int8(3)], strides=[2, 2], pads=[1, 1, 0, 0]),
    ]
    for form in forms:
        actual = fastpool.max_pool(x, form.pop("kernel_shape"), return_indices=True, **form)
        for a, e in zip(actual, expected):
            assert_identical(a, e)


def _compiled_signatures() -> int:
    import numba

    from fastpool import _activation, _lp_kernels, _max_kernels

    return sum(
        len(f.signatures)
        for module in (_max_kernels, _lp_kernels, _activation)
        for f in vars(module).values()
        if isinstance(f, numba.core.registry.CPUDispatcher)
    )


READ_ONLY_CASES = {  # each reaches a different kernel family
    "planar": ((2, 3, 6, 5), lambda x: fastpool.max_pool(x, [3, 3])),
    "general": ((2, 6, 5, 3), lambda x: fastpool.max_pool(x, [2, 2], layout="NHWC",
                                                         return_indices=True)),
    "volume": ((1, 2, 4, 4, 4), lambda x: fastpool.max_pool(x, [2, 2, 2])),
    "volume-indices": ((1, 2, 4, 4, 4),
                       lambda x: fastpool.max_pool(x, [2, 2, 2], return_indices=True)),
    "channels-last": ((2, 6, 5, 3), lambda x: fastpool.max_pool(x, [2, 2], layout="NHWC")),
    "global-max-nchw": ((2, 3, 6, 5), lambda x: fastpool.global_max_pool(x)),
    "global-max-nhwc": ((2, 6, 5, 3), lambda x: fastpool.global_max_pool(x, layout="NHWC")),
    "global-lp": ((2, 3, 6, 5), lambda x: fastpool.global_lp_pool(x)),
}  # fmt: skip


@pytest.mark.parametrize("case", READ_ONLY_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float16], ids=lambda d: d.__name__)
def test_read_only_inputs_run_the_same_compiled_kernels(case, dtype):
    """A read-only input (a memory map, np.frombuffer of bytes) gives the same results with
    the kernels already compiled for writeable ones: numba would otherwise compile (and
    warmup would not have cached) a second copy of every kernel, and it stays read-only
    and unchanged."""
    shape, call = READ_ONLY_CASES[case]
    if dtype == np.uint8 and case == "global-lp":
        dtype = np.float64  # GlobalLpPool takes floats only
    writeable = make_input(shape, dtype, seed=5)
    expected = as_tuple(call(writeable))
    compiled = _compiled_signatures()
    read_only = np.frombuffer(writeable.tobytes(), dtype=writeable.dtype).reshape(shape)
    assert not read_only.flags.writeable
    actual = as_tuple(call(read_only))
    assert _compiled_signatures() == compiled
    for a, e in zip(actual, expected):
        assert_identical(a, e)
    assert not read_only.flags.writeable
    assert_identical(read_only, writeable)
