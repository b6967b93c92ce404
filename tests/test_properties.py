"""Property-based tests: hypothesis draws the operator, rank, shape, every attribute, dtype,
layout, memory order and special values, and fastpool must match the slow reference (and
onnxruntime where it follows the contract) exactly; then metamorphic properties that need
no oracle.

Profiles (conftest.py): "ci" (the default, a few hundred examples per test) and "long"
(thousands): ``FASTPOOL_HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py``.
A failure hypothesis finds is kept below as an ``@example``, so it is rerun every time.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from conftest import ALL_DTYPES, BFLOAT16, assert_identical
from hypothesis import assume, example, given
from hypothesis import strategies as st
from reference import ref_global_lp_pool, ref_global_max_pool, ref_max_pool
from test_global import assert_close
from test_onnxruntime import run_onnxruntime

import fastpool

MEMORY_ORDERS = ["C", "F", "negative", "sliced", "readonly", "byteswapped"]


def values_pool(dtype: np.dtype) -> np.ndarray:
    """Ordinary values with ties, and each dtype's specials and extremes."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.min + 1, 0, 1, 2, 7, info.max - 1, info.max], dtype)
    finfo = ml_dtypes.finfo(dtype) if dtype == BFLOAT16 else np.finfo(dtype)
    pool = [np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.0, 2.5, 2.5,
            float(finfo.max), float(finfo.min), float(finfo.tiny)]  # fmt: skip
    return np.array(pool, dtype=np.float64).astype(dtype)


def make_data(shape, dtype, seed, specials):
    """Seeded values from the pool; without specials no NaN and no -0.0."""
    pool = values_pool(dtype)
    if not specials and dtype.kind not in "iu":
        keep = ~np.isnan(pool.astype(np.float64)) & ~(
            (pool.astype(np.float64) == 0) & np.signbit(pool.astype(np.float64))
        )
        pool = pool[keep]
    rng = np.random.default_rng(seed)
    data = pool[rng.integers(0, len(pool), size=shape)]
    if specials and dtype.kind not in "iu" and data.size:
        nan = np.isnan(data.astype(np.float64)) & (rng.random(shape) < 0.8)
        data[nan] = pool[5]  # keep NaN rare enough that most windows have none
    return data


def in_memory_order(a: np.ndarray, order: str) -> np.ndarray:
    """An array with a's values, laid out as asked."""
    if order == "F":
        return np.asfortranarray(a)
    if order == "negative":
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    if order == "sliced":
        big = np.zeros((*a.shape[:-1], 2 * a.shape[-1] + 1), dtype=a.dtype)
        big[..., 1::2] = a
        return big[..., 1::2]
    if order == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if order == "byteswapped" and a.dtype.itemsize > 1 and a.dtype != BFLOAT16:
        return a.astype(a.dtype.newbyteorder())
    return a.copy()


@st.composite
def max_pool_calls(draw):
    rank = draw(st.integers(1, 4))
    most = {1: 9, 2: 7, 3: 4, 4: 3}[rank]
    spatial = tuple(draw(st.lists(st.integers(1, most), min_size=rank, max_size=rank)))
    batch = draw(st.sampled_from([1, 2, 1, 0]))
    channels = draw(st.sampled_from([1, 3, 2, 0]))
    kernel = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    attrs = dict(kernel_shape=kernel)
    if draw(st.booleans()):
        attrs["strides"] = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    if draw(st.booleans()):
        attrs["dilations"] = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    auto_pad = draw(st.sampled_from(["NOTSET"] * 4 + ["SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad != "NOTSET":
        attrs["auto_pad"] = auto_pad
    elif draw(st.booleans()):  # asymmetric, and larger than the kernel
        attrs["pads"] = draw(st.lists(st.integers(0, 5), min_size=2 * rank, max_size=2 * rank))
    if draw(st.booleans()):
        attrs["ceil_mode"] = 1
    layout = draw(st.sampled_from(["NCHW", "NHWC"]))
    if layout == "NCHW" and draw(st.booleans()):
        attrs["storage_order"] = 1
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = (batch, channels, *spatial) if layout == "NCHW" else (batch, *spatial, channels)
    return dict(
        shape=shape,
        dtype=dtype,
        layout=layout,
        attrs=attrs,
        order=draw(st.sampled_from(MEMORY_ORDERS)),
        seed=draw(st.integers(0, 2**32 - 1)),
        specials=draw(st.booleans()),
    )


def ort_follows_contract(call, x) -> bool:
    """Whether onnxruntime computes this call as SEMANTICS.md does (section 7)."""
    attrs, shape = call["attrs"], call["shape"]
    rank = len(shape) - 2
    if (
        call["layout"] != "NCHW"
        or rank > 3
        or x.dtype.name not in ("float32", "float64", "int8", "uint8")
    ):
        return False  # fmt: skip
    if (call["specials"] and x.dtype.kind == "f") or 0 in shape:
        return False  # NaN handling and -0.0 ties differ; empty tensors
    if x.dtype.kind == "f" and np.isneginf(x).any():
        return False  # several of its paths give -FLT_MAX for a window of -inf only
    if any(p >= k for p, k in zip(attrs.get("pads", [0] * 2 * rank),
                                  attrs["kernel_shape"] * 2)):  # fmt: skip
        return False  # refused
    if attrs.get("auto_pad") == "VALID" and attrs.get("ceil_mode"):
        return False  # it rounds VALID's division up under ceil_mode (3 rows, 2x1/2: 2 rows)
    if attrs.get("auto_pad", "").startswith("SAME"):
        if max(attrs.get("dilations", [1])) > 1:
            return False  # pads from the undilated kernel
        # strides above the kernel make its pads (out - 1) * stride + kernel - in negative:
        # refused, or a shape that differs from its own shape inference
        strides = attrs.get("strides", [1] * rank)
        for size, k, s in zip(shape[2:], attrs["kernel_shape"], strides):
            if (-(-size // s) - 1) * s + k - size < 0:
                return False
    shape_attrs = {k: v for k, v in attrs.items() if k != "storage_order"}
    return 0 not in fastpool.pool_output_shape(shape, **shape_attrs)


@given(max_pool_calls())
@example(dict(shape=(2, 3, 2, 1), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[2, 1]), order="C", seed=0, specials=False))  # fmt: skip
@example(dict(shape=(2, 3, 1), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[1]), order="C", seed=0, specials=False))  # fmt: skip
@example(dict(shape=(1, 1, 3), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[2], pads=[5, 5]), order="C", seed=0,
              specials=True))  # fmt: skip
@example(dict(shape=(1, 1, 1, 1, 3), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[1, 1, 1], strides=[1, 1, 3], auto_pad="SAME_UPPER",
                         storage_order=1), order="C", seed=0, specials=False))  # fmt: skip
@example(dict(shape=(1, 1, 1, 1, 2), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[1, 1, 1], strides=[1, 1, 2], auto_pad="SAME_UPPER"),
              order="C", seed=0, specials=False))  # fmt: skip
@example(dict(shape=(1, 1, 3, 1), dtype=np.dtype(np.float32), layout="NCHW",
              attrs=dict(kernel_shape=[2, 1], strides=[2, 1], auto_pad="VALID", ceil_mode=1),
              order="C", seed=0, specials=False))  # fmt: skip
def test_max_pool_matches_reference(call):
    logical = make_data(call["shape"], call["dtype"], call["seed"], call["specials"])
    x = in_memory_order(logical, call["order"])
    before = x.copy()
    attrs, layout = call["attrs"], call["layout"]
    expected_y, expected_i = ref_max_pool(logical, layout=layout, **attrs)
    y, indices = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    assert_identical(y, expected_y)
    assert_identical(indices, expected_i)
    assert_identical(fastpool.max_pool(x, layout=layout, **attrs), expected_y)
    shape_attrs = {k: v for k, v in attrs.items() if k != "storage_order"}
    assert fastpool.pool_output_shape(x.shape, layout=layout, **shape_attrs) == y.shape
    assert_identical(x, before)  # the input is never modified
    if ort_follows_contract(call, logical):
        plain = np.ascontiguousarray(logical)
        (ort_y,) = run_onnxruntime(plain, "MaxPool", attrs)
        assert_identical(y, ort_y)
        if plain.dtype.kind == "f":  # onnxruntime's Indices output is for floats
            ort_y, ort_indices = run_onnxruntime(plain, "MaxPool", attrs, want_indices=True)
            assert_identical(y, ort_y)
            assert_identical(indices, ort_indices)


@given(
    op=st.sampled_from(["GlobalMaxPool", "GlobalLpPool"]),
    rank=st.integers(1, 4),
    layout=st.sampled_from(["NCHW", "NHWC"]),
    dtype=st.sampled_from(ALL_DTYPES),
    order=st.sampled_from(MEMORY_ORDERS),
    seed=st.integers(0, 2**32 - 1),
    specials=st.booleans(),
    p=st.sampled_from([1, 2, 3, 0.5, 2.5]),
    data=st.data(),
)
def test_global_ops_match_reference(op, rank, layout, dtype, order, seed, specials, p, data):
    spatial = data.draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank))
    batch, channels = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 3))
    shape = (batch, channels, *spatial) if layout == "NCHW" else (batch, *spatial, channels)
    if op == "GlobalLpPool":
        assume(dtype.kind not in "iu")
        # keep |x|^p finite in float64 for the reference: no dtype extremes here
        specials = False
    logical = make_data(shape, dtype, seed, specials)
    if op == "GlobalLpPool":
        finite = np.isfinite(logical.astype(np.float64))
        logical = np.where(finite & (np.abs(logical.astype(np.float64)) < 1e4), logical,
                           logical.dtype.type(1))  # fmt: skip
    x = in_memory_order(logical, order)
    if op == "GlobalMaxPool":
        assert_identical(fastpool.global_max_pool(x, layout=layout),
                         ref_global_max_pool(logical, layout))  # fmt: skip
    else:
        assert_close(fastpool.global_lp_pool(x, p, layout=layout),
                     ref_global_lp_pool(logical, p, layout), dtype)  # fmt: skip


# ---- metamorphic properties ------------------------------------------------------------


def small_integer_data(shape, dtype, seed):
    """Integers 0..20 in any dtype (exact in every float format), with -0.0 and NaN among
    the floats."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 21, size=shape).astype(np.float64)
    if dtype.kind not in "iu" and data.size:
        data[rng.random(shape) < 0.05] = -0.0
        data[rng.random(shape) < 0.02] = np.nan
    return data.astype(dtype)


@given(max_pool_calls())
def test_pooling_commutes_with_increasing_maps(call):
    """max(f(x)) = f(max(x)), and the same element wins, for f strictly increasing:
    x -> 2x + 1 for floats, x -> x + 100 for integers (no overflow on 0..20)."""
    dtype, layout = call["dtype"], call["layout"]
    attrs = {k: v for k, v in call["attrs"].items() if k != "storage_order"}
    x = small_integer_data(call["shape"], dtype, call["seed"])
    if dtype.kind in "iu":
        mapped = (x + 100).astype(dtype)
    else:
        mapped = (x.astype(np.float32) * 2 + 1).astype(dtype)
    y, indices = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    y_mapped, indices_mapped = fastpool.max_pool(mapped, layout=layout, return_indices=True,
                                                 **attrs)  # fmt: skip
    assert_identical(indices_mapped, indices)
    taps = indices >= 0  # windows with no tap give the dtype's lowest, which is not mapped
    expected = (x.reshape(-1)[indices[taps]], mapped.reshape(-1)[indices[taps]])
    assert_identical(y[taps], expected[0])
    assert_identical(y_mapped[taps], expected[1])


def nchw_index_to_nhwc(indices, shape_nchw):
    """Flat NCHW indices (storage_order 0) as flat indices into the NHWC transpose."""
    n_c_spatial = np.unravel_index(np.where(indices >= 0, indices, 0), shape_nchw)
    n, c, spatial = n_c_spatial[0], n_c_spatial[1], n_c_spatial[2:]
    nhwc_shape = (shape_nchw[0], *shape_nchw[2:], shape_nchw[1])
    flat = np.ravel_multi_index((n, *spatial, c), nhwc_shape)
    return np.where(indices >= 0, flat, -1)


@given(max_pool_calls())
def test_nhwc_equals_nchw_transposed(call):
    attrs = {k: v for k, v in call["attrs"].items() if k != "storage_order"}
    rank = len(call["shape"]) - 2
    shape = call["shape"] if call["layout"] == "NCHW" else (
        call["shape"][0], call["shape"][-1], *call["shape"][1:-1])  # fmt: skip
    x = make_data(shape, call["dtype"], call["seed"], call["specials"])
    nhwc = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    y, indices = fastpool.max_pool(x, return_indices=True, **attrs)
    y_last, indices_last = fastpool.max_pool(nhwc, layout="NHWC", return_indices=True, **attrs)
    assert_identical(np.ascontiguousarray(np.moveaxis(y_last, -1, 1)), y)
    expected = nchw_index_to_nhwc(indices, shape) if indices.size else indices
    assert_identical(np.ascontiguousarray(np.moveaxis(indices_last, -1, 1)),
                     np.ascontiguousarray(expected).reshape(indices.shape))  # fmt: skip
    assert rank == len(y.shape) - 2


@given(max_pool_calls())
def test_indices_point_at_the_output(call):
    """X.flat[I] has Y's bits wherever I >= 0 (NaN and -0.0 included); I = -1 only for
    windows without a tap, whose Y is the dtype's lowest."""
    attrs = {k: v for k, v in call["attrs"].items() if k != "storage_order"}
    x = make_data(call["shape"], call["dtype"], call["seed"], call["specials"])
    y, indices = fastpool.max_pool(x, layout=call["layout"], return_indices=True, **attrs)
    taps = indices >= 0
    assert_identical(x.reshape(-1)[indices[taps]], y[taps])
    lowest = values_pool(x.dtype)[1 if x.dtype.kind not in "iu" else 0]
    assert_identical(y[~taps], np.full(int((~taps).sum()), lowest, dtype=x.dtype))
    assert (indices[taps] < max(x.size, 1)).all()


@given(max_pool_calls())
def test_out_equals_fresh_result(call):
    attrs, layout = call["attrs"], call["layout"]
    x = make_data(call["shape"], call["dtype"], call["seed"], call["specials"])
    y, indices = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    out = (np.full_like(y, 3), np.full(indices.shape, 99, dtype=np.int64))
    got = fastpool.max_pool(x, layout=layout, return_indices=True, out=out, **attrs)
    assert got[0] is out[0] and got[1] is out[1]
    assert_identical(out[0], y)
    assert_identical(out[1], indices)


def test_profiles_are_registered():
    from hypothesis import settings

    assert settings.get_profile("ci").max_examples >= 200
    assert settings.get_profile("long").max_examples >= 2000
    assert math.isfinite(settings.get_profile("ci").max_examples)
