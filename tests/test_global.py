"""GlobalMaxPool and GlobalLpPool against the reference, both layouts, 1-D to 4-D."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL_DTYPES, BFLOAT16, DTYPE_IDS, FLOAT_DTYPES, assert_identical, make_input
from reference import ref_global_lp_pool, ref_global_max_pool

import fastpool

SPATIAL = [(7,), (4, 5), (3, 2, 4), (2, 3, 2, 2), (0, 3), (13, 11), (200,)]
SPATIAL_IDS = ["1d", "2d", "3d", "4d", "empty-spatial", "2d-143", "1d-200"]


def make(layout, spatial, dtype, seed=0, batch=2, channels=3, specials=True):
    shape = (batch, channels, *spatial) if layout == "NCHW" else (batch, *spatial, channels)
    return make_input(shape, dtype, seed=seed, specials=specials)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("spatial", SPATIAL, ids=SPATIAL_IDS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_global_max_pool(layout, spatial, dtype, entry):
    for seed in range(3):
        x = make(layout, spatial, dtype, seed)
        assert_identical(fastpool.global_max_pool(x, layout=layout), ref_global_max_pool(x, layout))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_max_pool_empty_batch_and_channels(layout, entry):
    for batch, channels in ((0, 3), (2, 0)):
        x = make(layout, (4, 4), np.float32, batch=batch, channels=channels)
        y = fastpool.global_max_pool(x, layout=layout)
        assert_identical(y, ref_global_max_pool(x, layout))


def planes_of_every_kind(dtype, size, planes=24, seed=0):
    """(1, planes, size) planes, each of one kind: wide-range values (negative ones only in
    some), a maximum that is -0.0 or +0.0 in either order, one NaN (of either sign) among
    numbers of both signs or among negative ones only, +-inf, subnormals. The fast path of
    the channels-first kernel reduces integer keys, reads a plane of negative numbers again,
    and must fall back to the exact scan exactly where the keys cannot tell the first
    maximum."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    x = np.empty((1, planes, size), dtype=dtype)
    for p in range(planes):
        kind = p % 9
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            high = max(info.min + 1, 0) if kind == 1 else int(info.max) + 1
            x[0, p] = rng.integers(info.min, high, size=size)
            continue
        plane = rng.standard_normal(size) * 10.0 ** rng.integers(-3, 4)
        if kind == 1:
            plane = -np.abs(plane) - 1
        elif kind == 2:
            plane = -np.abs(plane) - 1
            plane[rng.integers(size)] = -0.0
            plane[rng.integers(size)] = 0.0
        elif kind == 3:
            plane = rng.choice(np.array([-0.0, 0.0, -1.0]), size=size)
        elif kind == 4:
            plane[rng.integers(size)] = np.nan if rng.random() < 0.5 else -np.nan
        elif kind == 5:
            plane[rng.integers(size)] = np.inf
            plane[rng.integers(size)] = -np.inf
        elif kind == 6:
            plane = np.full(size, -np.inf)
        elif kind == 7:
            plane = rng.standard_normal(size) * float(np.finfo(np.float32).smallest_subnormal)
        elif kind == 8:
            plane = -np.abs(plane) - 1
            plane[rng.integers(size)] = np.nan if rng.random() < 0.5 else -np.nan
        x[0, p] = plane.astype(np.float32).astype(dtype) if dtype.itemsize < 8 else plane
    return x


@pytest.mark.parametrize("size", [1, 7, 49, 63, 64, 65, 130, 196])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_global_max_pool_plane_kinds(size, dtype, entry):
    for seed in range(2):
        x = planes_of_every_kind(dtype, size, seed=seed)
        assert_identical(fastpool.global_max_pool(x), ref_global_max_pool(x))
        assert_identical(
            fastpool.global_max_pool(np.moveaxis(x, 1, -1).copy(), layout="NHWC"),
            ref_global_max_pool(np.moveaxis(x, 1, -1), "NHWC"),
        )


@pytest.fixture(params=["plain", "prefetching"])
def prefetching(request, monkeypatch):
    """Run a test with GlobalMaxPool's prefetching (taken for float inputs of 16 MiB and more:
    channels first on planes of 2048 items and more, channels last for float32 and the
    16-bit floats) for inputs of any size, or never."""
    from fastpool import _api

    threshold = 0 if request.param == "prefetching" else 1 << 62
    monkeypatch.setattr(_api, "_GLOBAL_PREFETCH_FROM", threshold)
    return request.param


@pytest.mark.parametrize("batch", [1, 2, 3, 9])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_global_max_pool_channels_last_stretches(batch, dtype, entry, prefetching):
    """Channels last splits each image's positions into stretches (as many as the threads
    need: 8 an image at batch 1 on two threads, 1 at batch 9) whose maxima are folded in
    order: ties of -0.0 and +0.0 and NaNs across stretches keep the first."""
    for seed in range(3):
        x = make_input((batch, 13, 5, 40), dtype, seed=seed, specials=True)
        assert_identical(fastpool.global_max_pool(x, layout="NHWC"), ref_global_max_pool(x, "NHWC"))
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return
    # +0.0 everywhere but a -0.0 first (the maximum: the first of the tie), and in half the
    # channels two NaNs of different payloads, in different stretches: the first wins
    unsigned = np.dtype(f"u{dtype.itemsize}")
    quiet = int(np.array(np.nan, dtype=np.float32).astype(dtype).view(unsigned))
    x = np.zeros((batch, 64, 24), dtype=dtype)
    x[:, 0] = -0.0
    bits = x.view(unsigned)
    bits[:, 20, :12], bits[:, 50, :12] = quiet | 2, quiet | 1
    y = fastpool.global_max_pool(x, layout="NHWC")
    assert_identical(y, ref_global_max_pool(x, "NHWC"))
    assert (y.view(unsigned)[:, 0, 12:] == int(np.array(-0.0, dtype=dtype).view(unsigned))).all()
    assert (y.view(unsigned)[:, 0, :12] == quiet | 2).all()


# Plane sizes for the prefetching blocks (of 512 items, on planes of 2048 and more): whole
# blocks only; whole blocks and the masked last 64; blocks, a plain stretch and the masked
# last 64. The input's last plane ends in a plain stretch instead of the masked block.
PREFETCH_SIZES = [2048, 2100, 2700]


@pytest.mark.parametrize("size", PREFETCH_SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
def test_global_max_pool_plane_kinds_with_prefetching(size, dtype, entry, prefetching):
    x = planes_of_every_kind(dtype, size, planes=18, seed=size)
    assert_identical(fastpool.global_max_pool(x), ref_global_max_pool(x))
    channels_last = np.moveaxis(x, 1, -1).copy()
    assert_identical(
        fastpool.global_max_pool(channels_last, layout="NHWC"),
        ref_global_max_pool(channels_last, "NHWC"),
    )


@pytest.mark.parametrize("size", PREFETCH_SIZES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
def test_global_max_pool_maximum_at_block_edges_with_prefetching(size, dtype, entry, prefetching):
    """One plane per position of the maximum, at the edges of the prefetching blocks, of the
    plain stretch and of the masked last block, among mixed-sign and negative numbers."""
    dtype = np.dtype(dtype)
    whole = size - size % 64  # the masked last block starts here (when whole < size)
    stretch = whole - whole % 512  # the plain stretch after the blocks starts here
    edges = {0, 1, 511, 512, 1023, 1024, 2047, stretch - 1, stretch, whole - 1, whole, size - 1}
    positions = sorted(at for at in edges if at < size)
    for negative in (True, False):
        base = -(np.arange(size) % 97 + 2.0) + (0.0 if negative else 50.0)
        top = -1.0 if negative else 60.0
        x = np.empty((1, len(positions), size), dtype=dtype)
        for plane, at in enumerate(positions):
            row = base.copy()
            row[at] = top
            x[0, plane] = row.astype(np.float32).astype(dtype)
        y = fastpool.global_max_pool(x)
        assert_identical(y, ref_global_max_pool(x))
        assert y.astype(np.float64).ravel().tolist() == [top] * len(positions)


def test_global_max_pool_large_float_input_takes_the_prefetching_blocks(entry):
    """A float32 input over the prefetching threshold (16 MiB), as the kernel gets it by
    default, planes of 509x523 (blocks, a plain stretch, a masked last 31): maxima planted
    at block edges and at the ends, a NaN in one plane and negative numbers only in another,
    against numpy (exact here: the maxima are unique and nonzero)."""
    from fastpool import _api

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 8, 509, 523)).astype(np.float32)
    assert x.nbytes >= _api._GLOBAL_PREFETCH_FROM
    planes = x.reshape(16, -1)
    size = planes.shape[1]
    whole = size - size % 64  # the masked last block starts here
    stretch = whole - whole % 512  # the plain stretch after the blocks starts here
    edges = [0, 511, 512, 2047, stretch - 1, stretch, whole - 1, whole, size - 1]
    for plane, at in enumerate(edges):
        planes[plane, at] = 100.0 + plane
    planes[9, size // 2] = np.nan
    planes[10] = -np.abs(planes[10]) - 1.0
    planes[15, size - 1] = 1e9  # the input's last element
    y = fastpool.global_max_pool(x)
    expected = x.max(axis=(2, 3), keepdims=True)
    assert np.isnan(y[1, 1, 0, 0]) and np.isnan(expected[1, 1, 0, 0])
    y[1, 1], expected[1, 1] = 0.0, 0.0
    assert_identical(y, expected)
    assert y.ravel()[:9].tolist() == [100.0 + plane for plane in range(9)]
    assert y.ravel()[15] == np.float32(1e9)


@pytest.mark.parametrize("size", [7, 64, 70, 130, *PREFETCH_SIZES])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
def test_global_max_pool_keeps_the_first_of_two_nans(size, dtype, entry, prefetching):
    """Two NaNs of one sign in a plane, the one of larger bits second, among numbers of both
    signs (channels first and last): the first NaN's bits, payload and sign, are the
    maximum, in the vector pass and in the masked last block. (One NaN alone is also the
    largest of the bits, so only two can tell whether the kernel looked for it.)"""
    dtype = np.dtype(dtype)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    quiet = int(np.array(np.nan, dtype=np.float32).astype(dtype).view(unsigned))
    sign = 1 << (8 * dtype.itemsize - 1)
    rng = np.random.default_rng(size)
    planes = []
    for first_at, second_at in ((0, size - 1), (size // 2, size - 1), (size - 2, size - 1)):
        for negative in (False, True):
            plane = rng.standard_normal(size).astype(np.float32).astype(dtype)
            bits = plane.view(unsigned)
            high = sign if negative else 0
            bits[first_at], bits[second_at] = quiet | 1 | high, quiet | 2 | high
            planes.append(plane)
    x = np.stack(planes)[None]
    y = fastpool.global_max_pool(x)
    assert_identical(y, ref_global_max_pool(x))
    assert_identical(y.reshape(-1).view(unsigned) & 3, np.ones(len(planes), dtype=unsigned))
    assert_identical(
        fastpool.global_max_pool(np.moveaxis(x, 1, -1).copy(), layout="NHWC").reshape(-1),
        y.reshape(-1),
    )


@pytest.mark.parametrize("size", [7, 64, 70, 130])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_global_max_pool_maximum_at_every_position(size, dtype, entry):
    """One plane per position of the maximum, in the vector pass and in the masked last
    block: all-negative planes (where the maximum is the smallest of the bits read as
    integers) and mixed-sign ones, the last plane ending at the input's end."""
    dtype = np.dtype(dtype)
    for negative in (True, False):
        x = np.empty((1, size, size), dtype=dtype)
        if dtype.kind in "iu":
            low, high = (-100, -50) if dtype.kind == "i" and negative else (0, 50)
            x[0] = np.random.default_rng(size).integers(low, high, size=(size, size))
            top = -10 if dtype.kind == "i" and negative else 100
        else:
            plane = -(np.arange(size * size) % 97 + 2.0).reshape(size, size)
            if not negative:
                plane = plane + 50.0
            x[0] = plane.astype(np.float32).astype(dtype)
            top = -1.0 if negative else 60.0
        for position in range(size):
            x[0, position, position] = top
        assert_identical(fastpool.global_max_pool(x), ref_global_max_pool(x))
        assert fastpool.global_max_pool(x).astype(np.float64).ravel().tolist() == [top] * size


def tolerance(dtype):
    # The result is rounded once to the dtype; the reference rounds once too, but the two
    # may straddle a rounding boundary: allow one unit in the last place.
    return {
        np.dtype(np.float16): 1e-3,
        np.dtype(np.float32): 2e-7,
        np.dtype(np.float64): 1e-14,
        BFLOAT16: 8e-3,
    }[np.dtype(dtype)]


def assert_close(actual, expected, dtype):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    np.testing.assert_allclose(a, e, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("spatial", SPATIAL, ids=SPATIAL_IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 2.5, 7])
def test_global_lp_pool(layout, spatial, dtype, p, entry):
    for seed in range(2):
        x = make(layout, spatial, dtype, seed, specials=seed == 1)
        assert_close(
            fastpool.global_lp_pool(x, p, layout=layout), ref_global_lp_pool(x, p, layout), dtype
        )


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("p", [1, 2, 3, 50])
def test_global_lp_pool_overflow_and_underflow_safe(layout, dtype, p, entry):
    """Huge and tiny inputs whose norm is representable give finite, accurate results."""
    info = np.finfo(np.float32 if dtype == BFLOAT16 else dtype)
    for scale in (float(info.max) / 4, float(info.tiny) * 4, float(info.smallest_subnormal)):
        x = np.full((1, 2, 3, 1), scale, dtype=np.float64)
        x[0, 1] *= -0.5
        x = x.astype(dtype)
        if layout == "NHWC":
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        expected = ref_global_lp_pool(x, p, layout)
        actual = fastpool.global_lp_pool(x, p, layout=layout)
        assert np.isfinite(expected.astype(np.float64)).all()
        assert_close(actual, expected, dtype)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_lp_pool_special_values(layout, entry):
    x = np.ones((1, 4, 3, 3), dtype=np.float32)
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 0, 0] = np.inf
    x[0, 2, 0, 0] = -np.inf
    x[0, 2, 1, 0] = np.nan
    x[0, 3] = 0.0
    if layout == "NHWC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    y = fastpool.global_lp_pool(x, layout=layout).reshape(-1)
    assert np.isnan(y[0]) and y[1] == np.inf and np.isnan(y[2]) and y[3] == 0.0


def test_global_lp_pool_default_p_is_2():
    x = make_input((2, 3, 4, 4), np.float64, specials=False)
    assert_identical(fastpool.global_lp_pool(x), fastpool.global_lp_pool(x, 2))
    np.testing.assert_allclose(
        fastpool.global_lp_pool(x)[..., 0, 0], np.sqrt((x * x).sum(axis=(2, 3))), rtol=1e-14
    )
