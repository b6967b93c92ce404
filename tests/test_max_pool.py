"""MaxPool against the reference: every kernel path x dtype x layout x indices mode."""

from __future__ import annotations

import itertools
import zlib
from pathlib import Path

import numba
import numpy as np
import pytest
from conftest import ALL_DTYPES, DTYPE_IDS, FLOAT_DTYPES, assert_identical, make_input
from reference import ref_max_pool, ref_max_pool_values, ref_max_pool_vectorised
from test_activation import numpy_activation

import fastpool

# Which kernel a case exercises: (layout, spatial shape). NCHW with 1 or 2 spatial axes runs
# the planar kernel; NCHW with 3 the volume kernel for values (it sends the tasks whose input
# holds a NaN or -0.0 to the N-D kernel) and the volume Indices kernel for Indices
# (test_volumes_with_indices); for values NHWC with 2 or 3 the channels-last kernel (NaN
# and -0.0 as the volume kernel); everything else (Indices channels last, other ranks) the
# N-D kernel.
PATHS = {
    "2d-nchw": ("NCHW", (6, 7)),
    "1d-nchw": ("NCHW", (9,)),
    "3d-nchw": ("NCHW", (4, 5, 3)),
    "4d-nchw": ("NCHW", (3, 4, 2, 3)),
    "1d-nhwc": ("NHWC", (9,)),
    "2d-nhwc": ("NHWC", (6, 7)),
    "3d-nhwc": ("NHWC", (4, 5, 3)),
}


def attribute_cases(rank):
    r = rank
    return {
        "kernel2": dict(kernel_shape=[2] * r),
        "k3-s2-p1": dict(kernel_shape=[3] * r, strides=[2] * r, pads=[1] * (2 * r)),
        "asymmetric-pads": dict(kernel_shape=[3] * r, pads=[0] * r + [2] * r),
        "asymmetric-pads2": dict(kernel_shape=[2] * r, strides=[2] * r, pads=[1] * r + [0] * r),
        "dilation": dict(kernel_shape=[2] * r, dilations=[2] * r, pads=[1] * (2 * r)),
        "ceil": dict(kernel_shape=[3] * r, strides=[2] * r, ceil_mode=1),
        "ceil-pads": dict(kernel_shape=[2] * r, strides=[3] * r, pads=[1] * (2 * r), ceil_mode=1),
        "same-upper": dict(kernel_shape=[3] * r, strides=[2] * r, auto_pad="SAME_UPPER"),
        "same-lower-dilated": dict(kernel_shape=[2] * r, dilations=[2] * r, auto_pad="SAME_LOWER"),
        "valid": dict(kernel_shape=[2] * r, strides=[2] * r, auto_pad="VALID"),
        "pads-beyond-kernel": dict(kernel_shape=[2] * r, strides=[2] * r, pads=[3] * (2 * r)),
        "kernel-larger-than-input": dict(kernel_shape=[10] * r),
        "big-stride": dict(kernel_shape=[1] * r, strides=[11] * r),
        "mixed": dict(
            kernel_shape=[1 + i % 3 for i in range(r)],
            strides=[1 + (i + 1) % 2 for i in range(r)],
            dilations=[1 + i % 2 for i in range(r)],
            pads=[i % 2 for i in range(r)] + [1] * r,
        ),
    }


CASES = [
    pytest.param(path, name, id=f"{path}-{name}")
    for path, (_, spatial) in PATHS.items()
    for name in attribute_cases(len(spatial))
]


def input_shape(layout, spatial, batch=2, channels=3):
    return (batch, channels, *spatial) if layout == "NCHW" else (batch, *spatial, channels)


def check_against_reference(x, attrs, layout):
    orders = (0, 1) if layout == "NCHW" else (0,)
    for storage_order in orders:
        expected_y, expected_i = ref_max_pool(
            x, layout=layout, storage_order=storage_order, **attrs
        )
        y, indices = fastpool.max_pool(
            x, layout=layout, storage_order=storage_order, return_indices=True, **attrs
        )
        assert_identical(y, expected_y)
        assert_identical(indices, expected_i)
    assert_identical(fastpool.max_pool(x, layout=layout, **attrs), expected_y)
    assert fastpool.pool_output_shape(x.shape, layout=layout, **attrs) == expected_y.shape


def with_specials(x, layout, rng):
    """Copies of float x with a special in its last plane (channels first) or image
    (channels last) only, anywhere or in its last input row (or slice) along the first
    spatial axis: found there, after a task's first outputs are pooled. The specials are
    ones the fast loops would get wrong: a NaN with its sign bit set (their order puts it
    below everything), and, in data that is otherwise negative, a -0.0 and then a +0.0 in
    row-major order: in the last row, the next along it (the sortable keys of 16-bit floats
    put +0.0 first); anywhere, one row down and one column back (where a pass down the
    columns meets the +0.0 first, and a plain float ">" keeps it)."""
    next_column = x.shape[-1] if layout == "NHWC" else 1  # in the same plane or channel
    next_row = x.shape[-1] * x.shape[-2] if layout == "NHWC" else x.shape[-1]
    down_and_back = max(next_row - next_column, next_column)
    # (where, and how far on the +0.0 goes)
    for where, step in ((slice(None), down_and_back), (slice(-1, None), next_column)):
        for special in ("nan", "zeros"):
            x_special = x.copy()
            image = x_special[-1, where] if layout == "NHWC" else x_special[-1, -1, where]
            if special == "nan":
                image.flat[rng.integers(image.size)] = np.copysign(np.nan, -1)
            else:
                image[...] = -np.abs(image) - 1
                at = rng.integers(max(1, image.size - step))
                image.flat[at], image.flat[min(at + step, image.size - 1)] = -0.0, 0.0
            yield x_special


def check_fast_values(x, attrs, layout, rng):
    """Values of a kernel that checks its input for NaN and -0.0 (the planar, volume and
    channels-last kernels) against the reference: as they are, with a fused activation,
    and as ``with_specials`` changes them. The volume and channels-last kernels redo such
    a task in the N-D kernel, which applies the activation itself. (HardSigmoid, unlike
    Relu, changes a value it is applied to twice.)"""
    expected = ref_max_pool_values(x, layout=layout, **attrs)
    assert_identical(fastpool.max_pool(x, layout=layout, **attrs), expected)
    if x.dtype.kind != "f":
        return
    expected = numpy_activation(expected, "HardSigmoid", [0.2, 0.5])
    fused = dict(layout=layout, activation="HardSigmoid", activation_params=[0.2, 0.5])
    assert_identical(fastpool.max_pool(x, **fused, **attrs), expected)
    for x_special in with_specials(x, layout, rng):
        expected = ref_max_pool_values(x_special, layout=layout, **attrs)
        assert_identical(fastpool.max_pool(x_special, layout=layout, **attrs), expected)
        expected = numpy_activation(expected, "HardSigmoid", [0.2, 0.5])
        assert_identical(fastpool.max_pool(x_special, **fused, **attrs), expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(("path", "case"), CASES)
def test_matches_reference(path, case, dtype, entry):
    layout, spatial = PATHS[path]
    attrs = attribute_cases(len(spatial))[case]
    x = make_input(input_shape(layout, spatial), dtype, seed=zlib.crc32(f"{path}{case}".encode()))
    check_against_reference(x, attrs, layout)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(("path", "case"), CASES)
def test_vectorised_reference(path, case, dtype):
    """ref_max_pool_values and ref_max_pool_vectorised, the oracles of the larger inputs
    below, give ref_max_pool's Y and Indices (NaN payloads, signed zeros and ties included;
    both storage orders where the layout has them)."""
    layout, spatial = PATHS[path]
    attrs = attribute_cases(len(spatial))[case]
    x = make_input(input_shape(layout, spatial), dtype, seed=zlib.crc32(f"v{path}{case}".encode()))
    for storage_order in (0, 1) if layout == "NCHW" else (0,):
        expected = ref_max_pool(x, layout=layout, storage_order=storage_order, **attrs)
        actual = ref_max_pool_vectorised(x, layout=layout, storage_order=storage_order, **attrs)
        assert_identical(actual[0], expected[0])
        np.testing.assert_array_equal(actual[1], expected[1])
    assert_identical(ref_max_pool_values(x, layout=layout, **attrs), expected[0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize(("path", "case"), CASES)
def test_matches_reference_without_nan_or_negative_zero(path, case, dtype, entry):
    """Float data that the kernels may take by their fast paths (a NaN or -0.0 sends work
    to the exact ones): ties, +0.0, +-inf and the lowest value still give exact results."""
    layout, spatial = PATHS[path]
    attrs = attribute_cases(len(spatial))[case]
    seed = zlib.crc32(f"fast{path}{case}".encode())
    x = make_input(input_shape(layout, spatial), dtype, seed, specials=False, negative_zero=False)
    x.reshape(-1)[::5] = -np.inf
    check_against_reference(x, attrs, layout)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("empty", ["batch", "channels", "spatial"])
def test_empty_inputs(path, empty, dtype, entry):
    layout, spatial = PATHS[path]
    batch, channels = (0, 3) if empty == "batch" else (2, 0) if empty == "channels" else (2, 3)
    if empty == "spatial":
        spatial = (0, *spatial[1:])
    x = make_input(input_shape(layout, spatial, batch, channels), dtype)
    attrs = dict(kernel_shape=[2] * len(spatial), pads=[1] * (2 * len(spatial)))
    check_against_reference(x, attrs, layout)


@pytest.mark.parametrize("path", PATHS)
def test_nan_first_in_scan_order_wins(path, entry):
    """A window with several NaNs (with distinct payloads) returns the first one's bits."""
    layout, spatial = PATHS[path]
    x = np.ones(input_shape(layout, spatial, 1, 2), dtype=np.float32)
    payloads = np.array([0x7FC00001, 0x7FC00002, 0xFFC00003], dtype=np.uint32).view(np.float32)
    flat = x.reshape(-1)
    flat[[3, 7, 11]] = payloads
    r = len(spatial)
    attrs = dict(kernel_shape=[3] * r, pads=[1] * (2 * r))
    check_against_reference(x, attrs, layout)
    expected = ref_max_pool(x, layout=layout, **attrs)[0]
    assert_identical(ref_max_pool_values(x, layout=layout, **attrs), expected)
    y, indices = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    assert np.isnan(y).any()
    nan_out = np.isnan(y)
    assert np.isnan(x.reshape(-1)[indices[nan_out]]).all()


@pytest.mark.parametrize("path", PATHS)
def test_signed_zeros_tie_first_wins(path, entry):
    layout, spatial = PATHS[path]
    for dtype in (np.float16, np.float32, np.float64, "bfloat16"):
        x = np.zeros(input_shape(layout, spatial, 1, 2), dtype=np.float32)
        x.reshape(-1)[::2] = -0.0
        x = x.astype(np.dtype(dtype) if dtype != "bfloat16" else ALL_DTYPES[3])
        check_against_reference(x, dict(kernel_shape=[2] * len(spatial)), layout)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_dtype_extremes(dtype, entry):
    """The dtype's lowest and highest values are ordinary values."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = info.min, info.max
    else:
        low, high = -np.inf, np.inf
    x = np.full((1, 2, 4, 4), low, dtype=np.float64)
    x[0, 1, 2, 3] = high
    x = x.astype(dtype)
    for layout in ("NCHW", "NHWC"):
        data = x if layout == "NCHW" else np.ascontiguousarray(np.moveaxis(x, 1, -1))
        check_against_reference(data, dict(kernel_shape=[2, 2], pads=[1, 1, 1, 1]), layout)


def test_large_planes_many_threads(entry):
    """Enough work for every thread, on each path; values against the reference."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 33, 31)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    check_against_reference(x, attrs, "NCHW")
    check_against_reference(np.ascontiguousarray(np.moveaxis(x, 1, -1)), attrs, "NHWC")
    check_against_reference(x.reshape(2, 5, 33 * 31), dict(kernel_shape=[5], strides=[3]), "NCHW")


# Cases of the planar kernel's flat stretches: stride 1 with outputs of the input's size
# (row blocks of large planes, several small planes at once) and, on rows of at most 64,
# other strides (several planes at once, or blocks of rows; the pass down the columns row
# by row).
FLAT_STRETCH_CASES = {
    "k3-p1": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "k5-p2": dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    "k5-asymmetric-pads": dict(kernel_shape=[5, 5], pads=[0, 3, 4, 1]),
    "k5-pads-1-3": dict(kernel_shape=[5, 5], pads=[1, 3, 3, 1]),
    "k3-pads-after": dict(kernel_shape=[3, 3], pads=[0, 0, 2, 2]),
    "k2-pads-before": dict(kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
    "k3-d2-p2": dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]),
    "k4x2-d3x1": dict(kernel_shape=[4, 2], dilations=[3, 1], pads=[4, 1, 5, 0]),
    "k7-p3": dict(kernel_shape=[7, 7], pads=[3, 3, 3, 3]),
    # (spatial pyramid pooling's 13x13: windows wider than most planes, every tap masked
    # somewhere; the general tap loops both ways)
    "k13-p6": dict(kernel_shape=[13, 13], pads=[6, 6, 6, 6]),
    "k3-s2": dict(kernel_shape=[3, 3], strides=[2, 2]),
    "k3-s2-pads-after": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]),
    "k3-s2-p1": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "k2-s2": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "k2x3-s2": dict(kernel_shape=[2, 3], strides=[2, 2]),
    "k3-s2x1-p1": dict(kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1]),
    "k3-s1x2-p1": dict(kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 1, 1]),
    "k2-s2-d2-ceil": dict(kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 2], ceil_mode=1),
    "k4-s2-p1": dict(kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]),
    "k5x7-s2": dict(kernel_shape=[5, 7], strides=[2, 2], pads=[0, 3, 1, 2]),
    # (with Indices, the general row pass at a column stride of 3)
    "k3-s3-p1": dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1]),
    # stride 1 with outputs narrower than the input: blocks of rows of W outputs, each
    # cut to OW (values); no pads, a pad before, taps past the row's end, dilated, and
    # rows as long as the input's beside narrower ones
    "k2-s1": dict(kernel_shape=[2, 2]),
    "k3-s1": dict(kernel_shape=[3, 3]),
    "k3-s1-pads-before": dict(kernel_shape=[3, 3], pads=[1, 1, 0, 0]),
    "k3x4-s1-d1x2": dict(kernel_shape=[3, 4], dilations=[1, 2], pads=[0, 1, 0, 2]),
    "k5x3-s1-full-height": dict(kernel_shape=[5, 3], pads=[2, 0, 2, 1]),
    # 2x2 windows at stride 1 have loops of their own both ways: YOLOv3-tiny's SAME_UPPER
    # (a pad after), and dilated, with outputs as large as the input or narrower
    "k2-s1-pads-after": dict(kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
    "k2-s1-d2-p1": dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]),
    "k2-s1-d2x1-narrow": dict(kernel_shape=[2, 2], dilations=[2, 1], pads=[1, 0, 0, 0]),
}


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.uint8, np.int8], ids=["f32", "f16", "u8", "i8"]
)
@pytest.mark.parametrize("case", FLAT_STRETCH_CASES)
def test_flat_stretches(case, dtype, entry):
    """Planes larger than one block, planes split between tasks, groups of planes (odd and
    even sizes, rows of up to 32), a fused activation, and NaN and -0.0 in the last plane
    only, with Indices (where the reference's loops are quick enough) and without, against
    the reference."""
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    attrs = FLAT_STRETCH_CASES[case]
    shapes = [(2, 5, 7, 6), (3, 30, 5, 3), (1, 2, 1, 9), (2, 4, 13, 13), (1, 9, 14, 14),
              (1, 5, 12, 11), (2, 3, 27, 26)]  # fmt: skip
    if dtype in (np.float32, np.float16):
        # (rows of 63: blocks of output rows, two to a plane at stride 2)
        shapes += [(1, 2, 60, 70), (1, 2, 140, 63)]
    for shape in shapes:
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        check_against_reference(x, attrs, "NCHW")
        check_fast_values(x, attrs, "NCHW", rng)
        if np.dtype(dtype).kind == "f" and shape[2] < 60:
            for x_special in with_specials(x, "NCHW", rng):
                check_against_reference(x_special, attrs, "NCHW")


@pytest.mark.parametrize("case", FLAT_STRETCH_CASES)
def test_flat_stretch_plans(case):
    """Which geometries the planar kernel pools in flat blocks of rows (the results alone
    cannot tell the row-by-row path from them): stride 1 both ways, with rows as long as
    the input's (1) or narrower, on rows of up to 64 (2, cut to their width; small planes
    several at a time when the outputs are no taller than the input)."""
    from fastpool import _api
    from fastpool._attrs import P_FLAT_ROWS, P_GROUP_VALUES

    attrs = FLAT_STRETCH_CASES[case]
    for shape in [(1, 2, 13, 13), (1, 1, 60, 70)]:
        x = np.zeros(shape, dtype=np.float32)
        plan = _api._plan_max_pool(
            x, attrs["kernel_shape"], "NOTSET", 0, attrs.get("dilations"), attrs.get("pads"),
            0, attrs.get("strides"), False, "NCHW",
        )  # fmt: skip
        assert plan.kernel == "planar"
        (height, width), (out_height, out_width) = shape[-2:], plan.out_shape[-2:]
        expected = 0
        if attrs.get("strides", [1, 1]) == [1, 1]:
            expected = 1 if out_width == width else 2 if out_width < width <= 64 else 0
        dims = plan.kernel_args[0]
        assert dims[P_FLAT_ROWS] == expected, (shape, plan.out_shape)
        if expected == 2:
            assert (dims[P_GROUP_VALUES] > 0) == (out_height <= height and width < 30)


# Windows whose Indices the groups of small planes pool with their taps written out (3
# undilated taps, pads other than 1) or tap by tap between two pairs of buffers (the
# others: odd and even counts of taps, dilated), outputs of the input's size
GROUP_TAPS_CASES = {
    "k5-p2": dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    "k5-pads-1-3": dict(kernel_shape=[5, 5], pads=[1, 3, 3, 1]),
    "k3x5-pads": dict(kernel_shape=[3, 5], pads=[0, 4, 2, 0]),
    "k5x3-d1x2": dict(kernel_shape=[5, 3], dilations=[1, 2], pads=[2, 2, 2, 2]),
    "k6x4-d2": dict(kernel_shape=[6, 4], dilations=[2, 2], pads=[5, 3, 5, 3]),
    "k13-p6": dict(kernel_shape=[13, 13], pads=[6, 6, 6, 6]),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", GROUP_TAPS_CASES)
def test_group_taps_indices(case, dtype, entry):
    """Indices of groups of small planes at stride 1 (the plans checked to take them), with
    many ties, with and without NaN, +-inf and -0.0, Relu fused, in both storage orders,
    against the reference; many planes, so that taps at x's two ends are cut off."""
    from fastpool._max_kernels import _flat_tables

    attrs = GROUP_TAPS_CASES[case]
    shapes = [(2, 4, 13, 13), (3, 30, 5, 3), (1, 5, 12, 11), (1, 1, 13, 13), (2, 3, 7, 6)]
    wide = np.dtype(dtype).itemsize >= 4
    for shape in shapes:
        dims = _planar_dims(shape, attrs["kernel_shape"], attrs)
        assert _flat_tables.py_func(dims, 1, 1, True, wide)[0] > 0, shape
    check_with_ties_and_relu(attrs, dtype, shapes)


def check_with_ties_and_relu(attrs, dtype, shapes):
    """NCHW inputs of these shapes with many ties, with and without NaN, +-inf and -0.0,
    against the reference in both storage orders, and with Relu fused (floats)."""
    for seed, shape in enumerate(shapes):
        for specials in (False, True):
            x = make_input(shape, dtype, seed=seed, specials=specials, negative_zero=specials)
            check_against_reference(x, attrs, "NCHW")
        if np.dtype(dtype).kind == "f":  # (Relu keeps -0.0 and NaN)
            pooled = ref_max_pool(x, **attrs)[0]
            expected = np.where(pooled < 0, 0, pooled).astype(dtype)
            assert_identical(fastpool.max_pool(x, activation="Relu", **attrs), expected)


# Planar geometries for test_negative_zero_without_nan, by test id: on its shapes they take
# every fast path of the planar kernel (groups of small planes, rows of pitch column maxima,
# rows of 33 to 64 row by row, stride 1 flat, the long rows with Indices, rows first).
NEGATIVE_ZERO_CASES = {
    "k3-s2-p1": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "k3-s2-ceil": dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    "k2-s2": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "k3-p1": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "k5-p2": dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    "k3-d2-p2": dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]),
    "k2x3-s2": dict(kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 1, 0]),
    "k2-s1": dict(kernel_shape=[2, 2]),
    "k2-s1-pads-after": dict(kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
}


def negative_with_zeros(shape, dtype, rng):
    """Mostly negative floats with both zeros and a few positives, so that many windows'
    maximum is a tie of -0.0 and +0.0 in either order."""
    pool = np.array([-3.0, -1.0, -0.0, 0.0, -0.0, -2.0, 1.0])
    x = rng.choice(pool, size=shape, p=[0.3, 0.3, 0.12, 0.12, 0.12, 0.035, 0.005])
    return x.astype(np.float32).astype(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("attrs", list(NEGATIVE_ZERO_CASES.values()), ids=list(NEGATIVE_ZERO_CASES))
def test_negative_zero_without_nan(attrs, dtype, entry):
    """Planes holding -0.0 but no NaN take the fast paths, whose windows with a zero maximum
    are then redone exactly (_zero_maxima_exact): the first zero in row-major order wins
    (its sign and index), on every planar path, both storage orders, with a fused
    activation, and with a NaN in the first plane only (that plane window by window, the
    others fast), against the reference."""
    rng = np.random.default_rng(zlib.crc32(repr(attrs).encode()))
    shapes = [(2, 3, 7, 7), (1, 3, 14, 14), (1, 2, 28, 29), (1, 2, 20, 47), (1, 2, 12, 112),
              (1, 2, 10, 64)]  # fmt: skip
    for shape in shapes:
        x = negative_with_zeros(shape, dtype, rng)
        check_against_reference(x, attrs, "NCHW")
        expected = numpy_activation(ref_max_pool_values(x, **attrs), "HardSigmoid", [0.2, 0.5])
        fused = dict(activation="HardSigmoid", activation_params=[0.2, 0.5])
        assert_identical(fastpool.max_pool(x, **fused, **attrs), expected)
        x[0, 0].flat[rng.integers(x[0, 0].size)] = np.nan
        check_against_reference(x, attrs, "NCHW")


# Attributes of the window-by-window paths at stride 2 (pads below both kernels), by test id
STRIDE_2_WINDOWS = {
    "no-pads": dict(),
    "pads-1": dict(pads=[1, 1, 1, 1]),
    "pads-0-1-1-0": dict(pads=[0, 1, 1, 0]),
    "ceil": dict(ceil_mode=1),
}
PAIR_WINDOWS = {**STRIDE_2_WINDOWS, "pads-1-0-0-1-ceil": dict(pads=[1, 0, 0, 1], ceil_mode=1)}
TRIPLE_WINDOWS = {
    **STRIDE_2_WINDOWS,
    "pads-2": dict(pads=[2, 2, 2, 2]),
    "pads-2-0-1-2-ceil": dict(pads=[2, 0, 1, 2], ceil_mode=1),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("attrs", list(PAIR_WINDOWS.values()), ids=list(PAIR_WINDOWS))
def test_window_pairs(attrs, dtype, entry):
    """2x2 windows at stride 2 with Indices on rows of at least 24 windows (VGG's layers),
    through the long rows (see test_long_rows_take_their_path) or, on rows of 32 columns
    or fewer, the flat stretches or _window_task (test_task_pairs), both storage orders:
    data with many ties (the first in row-major order wins), with and without NaN, +-inf
    and -0.0, planes split between tasks, odd and even sizes, rows whose length is not a
    multiple of the 16 windows of a run, rows too long for the flat stretches, with
    windows across their ends, and a fused activation, against the reference."""
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2], **attrs)
    shapes = [(2, 3, 50, 48), (1, 2, 49, 51), (1, 1, 70, 64), (1, 2, 9, 110), (2, 1, 12, 62),
              (1, 2, 5, 2061)]  # fmt: skip
    check_with_ties_and_relu(attrs, dtype, shapes)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("attrs", [{}, {"ceil_mode": 1}], ids=["no-pads", "ceil"])
def test_window_pairs_every_row_length(attrs, dtype, entry):
    """2x2 windows at stride 2 with Indices, every tap inside the plane, on rows of 1 to 28
    windows, odd and even sizes (ceil_mode adds a window past the end of odd ones), planes
    split between tasks or not: the parallel entry pools these window by window
    (_window_task, see test_pairs_inside), except rows of under 8 windows (16-bit floats:
    24) with row-major Indices of items under 8 bytes (test_task_pairs), and the serial one
    mostly through the flat stretches. Data with many ties, with and without NaN, +-inf and
    -0.0, both storage orders and a fused activation, against the reference."""
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2], **attrs)
    shapes = [(1, 3, 28, 28), (2, 2, 14, 14), (1, 5, 12, 13), (1, 1, 7, 9), (3, 1, 2, 2),
              (1, 4, 56, 57), (9, 2, 8, 6), (2, 3, 16, 17), (1, 2, 46, 47),
              (1, 1, 48, 49)]  # fmt: skip
    check_with_ties_and_relu(attrs, dtype, shapes)


def test_pairs_inside():
    """2x2/2 windows that the parallel entry may take window by window with Indices
    (_window_task, as test_task_pairs picks): exactly those with every tap of every window
    inside the plane, whatever the rows' length, odd sizes included, but not with pads,
    ceil_mode windows past the end, other kernels, strides or dilations."""
    from fastpool._max_kernels import _pairs_inside

    def takes(shape, kernel_shape=(2, 2), **attrs):
        attrs.setdefault("strides", [2, 2])
        return bool(_pairs_inside.py_func(_planar_dims(shape, list(kernel_shape), attrs)))

    for shape in [(1, 1, 2, 2), (1, 512, 28, 28), (1, 1, 7, 9), (1, 64, 224, 224),
                  (1, 1, 5, 2061)]:  # fmt: skip
        assert takes(shape), shape
    assert takes((1, 1, 8, 8), ceil_mode=1)  # (no window past the end)
    assert not takes((1, 1, 8, 9), ceil_mode=1)
    assert not takes((1, 1, 9, 8), ceil_mode=1)
    for pads in ([1, 1, 1, 1], [1, 0, 0, 0], [0, 1, 0, 0]):
        assert not takes((1, 1, 8, 8), pads=pads), pads
    assert not takes((1, 1, 9, 9), pads=[0, 0, 1, 1])  # (the last window reads a pad)
    assert takes((1, 1, 8, 8), pads=[0, 0, 1, 1])  # (no window reaches the pads)
    assert not takes((1, 1, 8, 8), strides=[1, 1])
    assert not takes((1, 1, 8, 8), strides=[2, 1])
    assert not takes((1, 1, 9, 9), dilations=[2, 2])
    assert not takes((1, 1, 9, 9), kernel_shape=(3, 3))
    assert not takes((1, 1, 9, 9), kernel_shape=(2, 3))


def test_task_pairs():
    """Of the windows _pairs_inside takes, the parallel entry leaves rows of under 8 windows
    (24 for the 16-bit floats) to the flat stretches where the Indices are row-major and
    the items narrower than 8 bytes, and takes all others window by window."""
    from fastpool._max_kernels import _task_pairs

    def takes(shape, dtype, storage_order=0, **attrs):
        dims = _planar_dims(shape, [2, 2], {"strides": [2, 2], **attrs}, storage_order)
        return bool(_task_pairs.py_func(dims, np.empty(1, dtype)))

    for dtype in (np.float32, np.uint16, np.int8, np.uint8):  # (uint16: the 16-bit floats)
        shortest = 24 if dtype == np.uint16 else 8  # (windows a row)
        for width in (1, 2, 14, 15, 2 * shortest - 2, 2 * shortest - 1):
            for shape in [(1, 512, width, width), (8, 3, 2, width)]:
                assert not takes(shape, dtype), (shape, dtype)
                assert takes(shape, dtype, storage_order=1), (shape, dtype)
        for width in (2 * shortest, 2 * shortest + 1, 56, 224):
            for shape in [(1, 64, width, width), (1, 1, 2, width)]:
                assert takes(shape, dtype), (shape, dtype)
                assert takes(shape, dtype, storage_order=1), (shape, dtype)
        assert not takes((1, 1, 60, 60), dtype, pads=[1, 1, 1, 1])  # (not _pairs_inside)
    for shape in [(1, 512, 14, 14), (1, 1, 2, 2), (1, 512, 28, 28)]:
        assert takes(shape, np.float64), shape


def test_int32_offsets_only_where_they_fit():
    """The planar kernel keeps some offsets in int32, and takes those paths only where they
    fit: 2x2 windows' tap offsets (W + 1 row-major, H + 1 column-major) in _window_task and
    on rows and columns of under 2**31 - 1; the positions of the
    pitch rows' column maxima (with Indices), on planes of under 2**31 values. (The tables
    for these shapes are a few slots, so only the rules are checked here: the inputs would
    need 4 to 8 GiB, and their outputs more; see also tests/test_scale.py.)"""
    from fastpool._attrs import P_PITCH_ROWS
    from fastpool._max_kernels import _flat_tables, _pair_offsets_fit, _pairs_inside

    pairs = dict(strides=[2, 2])
    for shape, order, fits in [((1, 1, 2, 2**31 - 2), 0, True), ((1, 1, 2, 2**31), 0, False),
                               ((1, 1, 2**31 - 2, 2), 1, True), ((1, 1, 2**31, 2), 1, False),
                               ((1, 1, 2**31, 2), 0, False)]:  # fmt: skip
        dims = _planar_dims(shape, [2, 2], pairs, order)
        assert bool(_pair_offsets_fit.py_func(dims)) == fits, shape
        assert bool(_pairs_inside.py_func(dims)) == fits, shape
    # 2x2 windows at strides (1024, 2) on rows of 64: rows of 64 column maxima
    for rows, fits in [(2**25 - 1, True), (2**25, False), (2**26 + 1024, False)]:
        dims = _planar_dims((1, 1, rows, 64), [2, 2], dict(strides=[1024, 2]))
        assert dims[P_PITCH_ROWS] != 0
        for want in (False, True):
            block_rows = _flat_tables.py_func(dims, 8, 1, want, False)[1]
            assert (block_rows > 0) == (fits or not want), (rows, want)


def _planar_dims(shape, kernel_shape, attrs, storage_order=0):
    """The planar kernel's dims for these NCHW attributes, in this storage order."""
    from fastpool._api import _geometry

    lists = (attrs.get(name) for name in ("dilations", "pads", "strides"))
    geometry = _geometry(shape, "NCHW", kernel_shape, "NOTSET", attrs.get("ceil_mode", 0), *lists)
    return geometry.planar[storage_order]


def test_long_rows_take_their_path():
    """Indices of 2x2 and 3x3 windows at stride 2, undilated, take the long rows
    (_long_rows_argmax) on rows of 33 columns to under 2**29, whatever the pads, ceil_mode
    and storage order; rows of 32 or fewer, other kernels, strides and dilations do not."""
    from fastpool._max_kernels import _long_argmax_rows

    def takes(shape, kernel_shape, storage_order=0, **attrs):
        attrs.setdefault("strides", [2, 2])
        dims = _planar_dims(shape, kernel_shape, attrs, storage_order)
        return bool(_long_argmax_rows.py_func(dims))

    for k in (2, 3):
        square = [k, k]
        for attrs in ({}, {"pads": [1, 1, 1, 1]}, {"pads": [0, 1, 1, 0]}, {"ceil_mode": 1}):
            for order in (0, 1):
                for width in (33, 34, 56, 112, 224, 2061):
                    assert takes((1, 64, 9, width), square, order, **attrs), (k, attrs, width)
                for width in (1, 16, 28, 31, 32):
                    assert not takes((1, 64, 9, width), square, order, **attrs), (k, width)
        assert takes((1, 1, 3, 2**29 - 1), square)
        assert not takes((1, 1, 3, 2**29), square)
        assert not takes((1, 1, 9, 64), square, strides=[1, 1])
        assert not takes((1, 1, 9, 64), square, strides=[2, 1])
        assert not takes((1, 1, 9, 64), square, dilations=[2, 2])
        # a pad before the row as wide as the window: window 0 has no tap in the row
        assert takes((1, 1, 9, 64), square, pads=[k, k - 1, k, k])
        assert not takes((1, 1, 9, 64), square, pads=[0, k, 0, 0])
    for kernel_shape in ([2, 3], [3, 2], [1, 2], [5, 5]):
        assert not takes((1, 1, 9, 64), kernel_shape), kernel_shape


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("k", [2, 3])
def test_long_rows_with_pads_as_wide_as_the_window(k, dtype, entry):
    """2x2/2 and 3x3/2 windows with Indices on rows of more than 32 columns, with pads as
    wide as the window or wider: rows in the pads above and below (no tap row inside, the
    long rows' exact windows), and a pad before the row of k - 1 (the long rows: window 0
    with its taps in the row's first columns only) or of k and more (another path), both
    storage orders, against the reference."""
    shapes = [(1, 2, 9, 64), (2, 1, 6, 37)]
    for pads in ([k, k - 1, k + 1, k], [k + 1, k, 0, 1], [0, k + 2, k, 0]):
        attrs = dict(kernel_shape=[k, k], strides=[2, 2], pads=pads)
        check_with_ties_and_relu(attrs, dtype, shapes)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("attrs", list(TRIPLE_WINDOWS.values()), ids=list(TRIPLE_WINDOWS))
def test_long_rows_3x3_stride_2(attrs, dtype, entry):
    """3x3 windows at stride 2 with Indices on rows of more than 32 columns (the long rows:
    runs of 15 windows, the last moved back to end the row, through the scratch where it
    ends a task), and on rows of 24 to 32 (the short rows or the flat stretches), both
    storage orders: data with many ties (the first in row-major order wins), with and
    without NaN, +-inf and -0.0, windows with one column or row inside (pads 2), planes
    split between tasks, odd and even sizes, rows of 16 to 57 windows, a multiple of 15 or
    not, and a fused activation, against the reference."""
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], **attrs)
    shapes = [(2, 3, 20, 97), (1, 2, 31, 100), (1, 1, 70, 112), (2, 3, 50, 49), (1, 1, 51, 64),
              (1, 2, 7, 33), (3, 1, 6, 35), (1, 2, 9, 62)]  # fmt: skip
    check_with_ties_and_relu(attrs, dtype, shapes)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_long_rows_stay_inside_their_outputs(dtype, entry):
    """A run of the long rows stores 16 windows, and a 3x3 run's last one is not a window
    of its own: the runs write only their task's outputs. Outputs passed as ``out=`` views
    between sentinels, on rows whose last window ends before the row does (its 16th would
    land on the next row, or past the outputs), with pads after, ceil_mode, a single plane
    and several, both storage orders: the sentinels stay, and the outputs match the
    reference. (A first version wrote one item past the outputs on 1x2x7x62.)"""
    guard = 64
    cases = [((1, 2, 7, 62), {}), ((3, 1, 4, 63), {"pads": [0, 1, 1, 0]}),
             ((1, 3, 20, 33), {"pads": [0, 1, 1, 0]}), ((1, 1, 5, 61), {"ceil_mode": 1}),
             ((2, 1, 3, 93), {}), ((1, 1, 9, 64), {})]  # fmt: skip
    for (shape, extra), k in itertools.product(cases, (3, 2)):
        attrs = dict(kernel_shape=[k, k], strides=[2, 2], **extra)
        x = make_input(shape, dtype, seed=shape[3], specials=False, negative_zero=False)
        for order in (0, 1):
            expected, expected_at = ref_max_pool(x, storage_order=order, **attrs)
            n = expected.size
            y_buffer = np.zeros((n + 2 * guard) * x.itemsize, np.uint8).view(x.dtype)
            y_buffer.view(np.uint8)[:] = 0x5A
            at_buffer = np.full(n + 2 * guard, -7, dtype=np.int64)
            y = y_buffer[guard : guard + n].reshape(expected.shape)
            at = at_buffer[guard : guard + n].reshape(expected.shape)
            fastpool.max_pool(x, return_indices=True, storage_order=order, out=(y, at), **attrs)
            assert_identical(y, expected)
            assert_identical(at, expected_at)
            for part in (slice(0, guard), slice(guard + n, None)):
                assert (y_buffer[part].view(np.uint8) == 0x5A).all(), (shape, attrs, order)
                assert (at_buffer[part] == -7).all(), (shape, attrs, order)


# Run in a child process: a fault there fails the test instead of ending pytest.
_GUARD_PAGE_CHILD = """
import ctypes, mmap, sys
import numpy as np
import fastpool
from fastpool import _api

sys.path.insert(0, sys.argv[1])
from reference import ref_max_pool

page = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
# rows of 55 and 56 windows (the long rows); rows of 62 to 64 columns, whose full runs end
# near the row's end; rows of 33 (one run); short rows of 30 and 32 columns
shapes = [(1, 3, 61, 112), (1, 2, 9, 62), (1, 2, 8, 63), (1, 2, 7, 64), (1, 3, 9, 33),
          (1, 3, 20, 30), (1, 4, 18, 32)]
buffers = []  # (kept open: an array still views each)
for shape in shapes:
    nbytes = int(np.prod(shape)) * 4
    n_pages = -(-nbytes // page) + 1
    buffer = mmap.mmap(-1, n_pages * page)
    buffers.append(buffer)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    # the last page unreadable; the input ends right before it
    assert libc.mprotect(base + (n_pages - 1) * page, page, 0) == 0  # PROT_NONE
    start = (n_pages - 1) * page - nbytes
    x = np.frombuffer(buffer, dtype=np.float32, count=nbytes // 4, offset=start)
    x = x.reshape(shape)
    x[...] = np.random.default_rng(0).standard_normal(shape).astype(np.float32).round(1)
    for k in (3, 2):
        for pads in ([0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 1, 1]):
            attrs = dict(kernel_shape=[k, k], strides=[2, 2], pads=pads)
            for order in (0, 1):
                expected = ref_max_pool(np.array(x), storage_order=order, **attrs)
                for serial_below in (0, 1 << 62):  # the parallel entry, then the serial one
                    _api._SERIAL_BELOW = serial_below
                    y, indices = fastpool.max_pool(x, return_indices=True,
                                                   storage_order=order, **attrs)
                    assert np.array_equal(y, expected[0]), (shape, attrs, serial_below)
                    assert np.array_equal(indices, expected[1]), (shape, attrs, order)
print("ok")
"""


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux (mprotect, mmap)")
def test_argmax_rows_at_the_end_of_the_input():
    """The argmax vectors of the long and the short rows read 34 columns from each run's
    first (ARGMAX_READ), and the rows near the end of the input would read past it: those
    go through the scratch. Inputs ending right before an unreadable page, 3x3/2 and 2x2/2
    on long and short rows, with and without pads, both entries and storage orders:
    nothing past the input is read, and the outputs match the reference."""
    import subprocess
    import sys

    tests = str(Path(__file__).parent)
    result = subprocess.run([sys.executable, "-c", _GUARD_PAGE_CHILD, tests],
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("attrs", list(STRIDE_2_WINDOWS.values()), ids=list(STRIDE_2_WINDOWS))
def test_3x3_stride_2_on_rows_of_33_to_64(attrs, dtype, entry):
    """3x3 windows at stride 2 on rows of 33 to 64 columns: values row by row for 4- and
    8-byte items, through rows of pitch column maxima for 1- and 2-byte ones and with
    Indices (_values_row_by_row), both storage orders: data with many ties, with and
    without NaN, +-inf and -0.0, planes split between tasks, odd and even sizes, and a
    fused activation, against the reference."""
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], **attrs)
    # (4- and 8-byte items: 33 columns make 16 windows, one vector along the row; 63
    # columns, 15 past a multiple of 16, and 31 windows, 15 past, overlap their last
    # vectors most)
    shapes = [(1, 3, 41, 47), (2, 2, 36, 33), (1, 2, 20, 64), (1, 2, 9, 63)]
    check_with_ties_and_relu(attrs, dtype, shapes)


# 3x3 windows at stride 2 along the rows, undilated, on rows too long for the flat
# stretches: the rows whose windows lie inside the plane go through _rows_3x3, which takes
# 16 columns or 16 windows a vector, a row's last 16 overlapping the ones before them
# where the row holds no multiple of 16 (nothing read past the row), the others row by
# row.
ROWS_3X3_CASES = {
    "no-pads": dict(strides=[2, 2]),
    "pads-1": dict(strides=[2, 2], pads=[1, 1, 1, 1]),
    "pads-before": dict(strides=[2, 2], pads=[1, 1, 0, 0]),
    "pads-after": dict(strides=[2, 2], pads=[0, 0, 1, 1]),
    "ceil": dict(strides=[2, 2], ceil_mode=1),
    "row-stride-1": dict(strides=[1, 2]),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("attrs", list(ROWS_3X3_CASES.values()), ids=list(ROWS_3X3_CASES))
def test_3x3_stride_2_interior_rows(attrs, dtype, entry):
    """Values of 3x3 windows at stride 2 along rows of 65 to 112 columns: rows of 0, 1, 3,
    7 and 15 columns past a multiple of 16, and of 0, 1, 3, 7 and 15 windows past one (no
    pads; pads move them by one), which the last vectors of _rows_3x3 overlap; pads before,
    after or both, ceil_mode (a window past the row's end), and stride 1 down the columns;
    many ties, with and without NaN, +-inf and -0.0, planes split between tasks, against
    the reference."""
    from fastpool._attrs import P_FLAT_ROWS, P_GROUP_VALUES

    attrs = dict(kernel_shape=[3, 3], **attrs)
    shapes = [(1, 3, 11, 71), (2, 2, 9, 112), (1, 2, 8, 65), (1, 1, 7, 95), (1, 2, 6, 67)]
    for shape in shapes:
        dims = _planar_dims(shape, [3, 3], attrs)
        assert dims[P_FLAT_ROWS] == 0 and dims[P_GROUP_VALUES] == 0, (shape, attrs)
    check_with_ties_and_relu(attrs, dtype, shapes)


def one_special_per_plane(shape, dtype, positions, special):
    """Planes of ``shape`` (H, W), one per (row, column) of ``positions``, each holding one
    special there and nothing else special: a NaN (either sign), or, in data that is
    otherwise negative, a -0.0 there and a +0.0 after it in row-major order in a window
    they share (one row down and one column back, or in the last row the next column),
    which a pass that missed the -0.0 would get wrong."""
    H, W = shape
    rng = np.random.default_rng(len(positions))
    x = -rng.choice(np.array([1.0, 2.0, 3.0, 4.5]), size=(1, len(positions), H, W))
    if special != "zeros":
        x[...] = make_input(x.shape, np.float32, specials=False, negative_zero=False)
    x = x.astype(np.float32).astype(dtype)
    for plane, (r, c) in enumerate(positions):
        if special == "zeros":
            x[0, plane, r, c] = -0.0
            after = (r + 1, c - 1) if r + 1 < H and c > 0 else (r, c + 1)
            x[(0, plane, *after)] = 0.0
        else:
            x[0, plane, r, c] = np.copysign(np.nan, -1.0 if special == "nan-" else 1.0)
    return x


def check_one_special_per_plane(attrs, dtype, sizes):
    """For planes of each (H, W) of ``sizes``: one special per plane (see
    one_special_per_plane) at every row, at columns at both ends of the rows' vectors of
    16 (the last overlapping the ones before), NaN of either sign and -0.0, whole planes a
    task and one plane split between tasks, against the reference."""
    for H, W in sizes:
        columns = sorted({0, 1, 15, 16, 17, W - 17, W - 16, W - 2, W - 1})
        positions = [(r, c) for r in range(H) for c in columns if (r, c) != (H - 1, W - 1)]
        for special in ("nan+", "nan-", "zeros"):
            x = one_special_per_plane((H, W), dtype, positions, special)
            expected = ref_max_pool_values(x, **attrs)
            assert_identical(fastpool.max_pool(x, **attrs), expected)
            for plane in range(0, len(positions), len(columns) - 1):
                one = np.ascontiguousarray(x[:, plane : plane + 1])
                assert_identical(fastpool.max_pool(one, **attrs), expected[:, plane : plane + 1])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("attrs", list(ROWS_3X3_CASES.values()), ids=list(ROWS_3X3_CASES))
def test_3x3_stride_2_rows_check_every_row(attrs, dtype, entry):
    """_rows_3x3 checks the first two rows of each window for NaN and -0.0 as it pools them
    (at stride 2 down the columns); the task's other rows are checked after. A special in
    any row and at either end of the vectors is found (check_one_special_per_plane)."""
    check_one_special_per_plane(dict(kernel_shape=[3, 3], **attrs), dtype, [(11, 71), (8, 112)])


# 2x2 windows at stride 2, values, on rows too long for the groups of small planes: rows of
# 33 to 64 through rows of pitch column maxima, longer ones row by row. At stride 2 down
# the columns, the rows whose taps are all inside the plane are pooled 16 columns at a time
# by max_of_2_rows_along, which checks them for NaN and -0.0 as it loads them; the task's
# other rows (a pad above or below, or a stride of 1 down the columns) are checked after.
# The geometries are those of ROWS_3X3_CASES.
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("attrs", list(ROWS_3X3_CASES.values()), ids=list(ROWS_3X3_CASES))
def test_2x2_stride_2_rows_check_every_row(attrs, dtype, entry):
    """A special in any row and at either end of the vectors of 2x2/2 rows is found
    (check_one_special_per_plane), on rows of pitch column maxima (rows of 40, and of 57,
    whose last column no window reads without pads) and row by row (71 and 112); and
    with 2x3 windows, whose rows of pitch column maxima (41 columns, 40 held) fold the
    last column into the one before it without pads. The plans checked to take those
    paths."""
    from fastpool._attrs import P_FOLD, P_GROUP_VALUES, P_PITCH_ROWS

    sizes = [(9, 40), (8, 57), (7, 71), (6, 112)]
    for H, W in sizes:
        dims = _planar_dims((1, 1, H, W), [2, 2], dict(kernel_shape=[2, 2], **attrs))
        assert dims[P_GROUP_VALUES] == 0 and dims[P_PITCH_ROWS] == (1 if W <= 64 else 2)
    check_one_special_per_plane(dict(kernel_shape=[2, 2], **attrs), dtype, sizes)
    wide = dict(kernel_shape=[2, 3], **attrs)
    dims = _planar_dims((1, 1, 9, 41), [2, 3], wide)
    assert dims[P_GROUP_VALUES] == 0 and dims[P_PITCH_ROWS] == 1
    assert dims[P_FOLD] == 1 or "pads" in attrs
    check_one_special_per_plane(wide, dtype, [(9, 41)])


# Values through rows of pitch column maxima on small planes (groups of planes) and on rows
# of up to 64 (plane by plane): the pass down the columns takes each output row's 16, 32 or
# 48 columns as vectors of 16 (_vectors), with a column past the pitch folded into the last
# (fold), in one loop over every plane's rows (3x3/2 with no row at a border) or plane by
# plane (the rows with a pad go through _column_max). Since 2026-12-06 the groups of planes
# take this path for these windows only with a pad before the rows (pads-1, pad-left) or on
# the rows _short_rows_2x2_3x3 leaves (see SHORT_ROWS_CASES); the other shapes below take
# that path, as the every-dtype tests of both check.
PITCH_ROW_VECTOR_CASES = {
    "k3-s2": (dict(kernel_shape=[3, 3], strides=[2, 2]), 1,
              [(2, 3, 13, 13), (1, 2, 26, 26), (1, 3, 27, 27), (1, 2, 40, 40)]),
    "k3-s2-pads-after": (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]), 0,
                         [(1, 3, 14, 14), (2, 2, 12, 12), (1, 2, 28, 28)]),
    "k3-s2-pads-1": (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), None,
                     [(1, 3, 13, 13), (1, 2, 28, 28)]),
    "k2-s2": (dict(kernel_shape=[2, 2], strides=[2, 2]), 0,
              [(1, 3, 12, 12), (2, 2, 13, 13), (1, 2, 27, 27)]),
    "k2-s2-pads-after": (dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1]), 0,
                         [(1, 2, 13, 13), (1, 2, 29, 29)]),
    "k2-s2-pad-left": (dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 1, 0, 0]), None,
                       [(1, 3, 12, 12), (1, 2, 27, 27)]),
}  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", list(PITCH_ROW_VECTOR_CASES.values()),
                         ids=list(PITCH_ROW_VECTOR_CASES))  # fmt: skip
def test_pitch_rows_values_as_vectors(case, dtype, entry):
    """Values of 3x3 and 2x2 windows at stride 2 through rows of pitch column maxima, whose
    pass down the columns loads and stores 16 columns at a time (one to three vectors a
    row, a folded column or none, rows with a pad above or below, groups of planes and
    single planes), with many ties, with and without NaN, +-inf and -0.0, and Relu fused,
    against the reference; the plans checked to take that path."""
    from fastpool._attrs import P_FOLD, P_HELD, P_PITCH_ROWS

    attrs, fold, shapes = case
    helds = set()
    for shape in shapes:
        dims = _planar_dims(shape, attrs["kernel_shape"], attrs)
        assert dims[P_PITCH_ROWS] != 0, (shape, attrs)
        assert fold is None or dims[P_FOLD] == fold, (shape, attrs)
        helds.add((dims[P_HELD] + 15) // 16)
    assert len(helds) > 1 or len(shapes) < 3  # (rows of one vector and of more)
    check_with_ties_and_relu(attrs, dtype, shapes)


# Values of 2x2/2 and 3x3/2 windows on groups of small planes whose rows hold at most 32
# columns, with no pad before them, and of 3x3/1 ones on rows of 10 to 32 with the pad
# before them: _short_rows_2x2_3x3 and _short_rows_3x3_stride_1, an output row at a time
# in registers (at stride 2 each row two vectors of 16, its column maxima split into even
# and odd columns, 16 windows stored; at stride 1 one vector or two from the pad before
# the row, shifted by one and two lanes, 16 or 32 windows stored; the first OW kept); a
# pad row above or below is the window's first row read again, columns outside the row
# count as the fill.
SHORT_ROWS_CASES = {
    "k3": dict(kernel_shape=[3, 3], strides=[2, 2]),
    "k3-pads-after": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]),
    "k3-pads-rows": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[2, 0, 1, 0]),
    "k3-ceil": dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    "k2": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "k2-pads-after": dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1]),
    "k2-pads-above": dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 0]),
    "k3-s1-pads-1": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "k3-s1": dict(kernel_shape=[3, 3]),
    "k3-s1-pads-before": dict(kernel_shape=[3, 3], pads=[2, 2, 0, 1]),
    "k3-s1-pads-after": dict(kernel_shape=[3, 3], pads=[0, 0, 2, 2]),
}
# (rows of one vector and of two, 16 and 17 columns, the longest, odd and even; at stride
# 1, rows of 15 and 16 with their pad too)
SHORT_ROWS_SIZES = [(12, 12), (13, 13), (9, 16), (8, 17), (14, 14), (27, 27), (7, 31), (6, 32),
                    (5, 15), (11, 10), (9, 9)]  # fmt: skip
# 3x3/2 windows whose 16th would read column 32, and 3x3/1 rows longer than 32 with their
# pad or shorter than 10, take the other paths
NOT_SHORT_ROWS = {("k3-pads-after", (6, 32)), ("k3-ceil", (6, 32)), ("k3-s1-pads-1", (6, 32)),
                  ("k3-s1-pads-before", (7, 31)), ("k3-s1-pads-before", (6, 32)),
                  *((name, (9, 9)) for name in ("k3-s1-pads-1", "k3-s1", "k3-s1-pads-before",
                                                  "k3-s1-pads-after"))}  # fmt: skip


def _takes_short_rows(name, size, indices=False):
    from fastpool._attrs import P_GROUP_VALUES
    from fastpool._max_kernels import _short_argmax_rows, _short_square_rows

    attrs = SHORT_ROWS_CASES[name]
    dims = _planar_dims((1, 1, *size), attrs["kernel_shape"], attrs)
    takes = _short_argmax_rows if indices else _short_square_rows
    return dims[P_GROUP_VALUES] > 0 and bool(takes.py_func(dims))


# of those, the ones whose Indices take the short rows too (_short_rows_argmax): stride 2,
# rows of 17 to 32 columns
SHORT_ROWS_WITH_INDICES = {(name, size) for name in SHORT_ROWS_CASES if "s1" not in name
                           for size in SHORT_ROWS_SIZES if size[1] > 16
                           and (name, size) not in NOT_SHORT_ROWS}  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(SHORT_ROWS_CASES))
def test_short_rows(name, dtype, entry):
    """Values of 2x2/2, 3x3/2 and 3x3/1 windows on rows of up to 32 columns (the plans
    checked to take the short rows, but for those listed in NOT_SHORT_ROWS; with Indices
    those of SHORT_ROWS_WITH_INDICES): pads before (3x3/1) and after, pad rows above and
    below, ceil_mode, many ties, with and without NaN, +-inf and -0.0, Relu fused, one
    plane and many, in both storage orders, against the reference."""
    attrs = SHORT_ROWS_CASES[name]
    for size in SHORT_ROWS_SIZES:
        assert _takes_short_rows(name, size) == ((name, size) not in NOT_SHORT_ROWS), size
        with_indices = (name, size) in SHORT_ROWS_WITH_INDICES
        assert _takes_short_rows(name, size, indices=True) == with_indices, size
    shapes = [(1, 1, *size) for size in SHORT_ROWS_SIZES]
    shapes += [(2, 5, 13, 13), (1, 7, 27, 27), (3, 3, 6, 32)]
    check_with_ties_and_relu(attrs, dtype, shapes)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_short_rows_stay_inside(dtype):
    """The short rows (_short_rows_2x2_3x3, _short_rows_3x3_stride_1) called on their own
    for some planes of an input: they write their outputs and nothing else (the output rows
    that end near y_end, the end of a thread's outputs, go through the scratch, and so does
    the input's first plane at stride 1 with a pad before the rows), and the rows at the
    input's end (read through the scratch) pool right; against the reference."""
    from fastpool import _api
    from fastpool._attrs import P_SH
    from fastpool._max_kernels import LANES, _short_rows_2x2_3x3, _short_rows_3x3_stride_1
    from fastpool._ordering import to_sortable

    @numba.njit
    def pool_planes(x, y, dims, p_from, p_to, y_end, fill):
        sortable_fill = np.full(1, to_sortable(fill), dtype=x.dtype)[0]
        scratch = np.full(8 * LANES, sortable_fill, dtype=x.dtype)
        if dims[P_SH] == 1:
            _short_rows_3x3_stride_1(x, y[:y_end], dims, p_from, p_to, scratch, sortable_fill)
        else:
            _short_rows_2x2_3x3(x, y[:y_end], dims, p_from, p_to, scratch, sortable_fill)

    for name, attrs in SHORT_ROWS_CASES.items():
        for size in SHORT_ROWS_SIZES:
            if (name, size) in NOT_SHORT_ROWS:
                continue
            x = make_input((1, 4, *size), dtype, specials=False, negative_zero=False)
            plan = _api._plan_max_pool(
                x, attrs["kernel_shape"], "NOTSET", attrs.get("ceil_mode", 0), None,
                attrs.get("pads"), 0, attrs.get("strides", [1, 1]), False, "NCHW",
            )  # fmt: skip
            dims, fill = plan.kernel_args[0], plan.kernel_args[3]
            expected = ref_max_pool_values(x, **attrs).reshape(4, -1)
            plane_out = expected.shape[1]
            flat_x = x.reshape(-1).view(plan.kernel_dtype)
            for p_from, p_to in [(0, 2), (1, 4), (3, 4), (0, 4)]:
                y = np.full(4 * plane_out * x.itemsize, 0x5A, dtype=np.uint8)
                pool_planes(flat_x, y.view(plan.kernel_dtype), dims, p_from, p_to,
                            p_to * plane_out, fill)  # fmt: skip
                planes = y.view(x.dtype).reshape(4, plane_out)
                untouched = np.full(plane_out * x.itemsize, 0x5A, dtype=np.uint8)
                for p in range(4):
                    if p_from <= p < p_to:
                        assert_identical(planes[p], expected[p])
                    else:
                        written = planes[p : p + 1].view(np.uint8)[0]
                        assert np.array_equal(written, untouched), (name, size, p_from, p)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_short_rows_with_indices_stay_inside(dtype):
    """The short rows with Indices (_short_rows_argmax) called on their own for some planes
    of an input with many ties: they write their outputs and Indices and nothing else (the
    rows near y_end through the scratch, as without Indices), and the rows at the input's
    end (read through the scratch) keep their own positions, on four planes and on one
    (whose rows through the scratch may have outputs at the scratch's own offset); against
    the reference."""
    from fastpool import _api
    from fastpool._max_kernels import LANES, _short_rows_argmax
    from fastpool._ordering import to_sortable

    @numba.njit
    def pool_planes(x, y, indices, dims, p_from, p_to, y_end, fill):
        sortable_fill = np.full(1, to_sortable(fill), dtype=x.dtype)[0]
        scratch = np.full(8 * LANES, sortable_fill, dtype=x.dtype)
        index_scratch = np.empty(8 * LANES, dtype=np.int64)
        _short_rows_argmax(x, y[:y_end], indices[:y_end], dims, p_from, p_to, scratch,
                           index_scratch, sortable_fill)  # fmt: skip

    ranges = {4: [(0, 2), (1, 4), (3, 4), (0, 4)], 1: [(0, 1)]}
    assert len(SHORT_ROWS_WITH_INDICES) >= 20
    for (name, size), n_planes in itertools.product(sorted(SHORT_ROWS_WITH_INDICES), ranges):
        attrs = SHORT_ROWS_CASES[name]
        x = make_input((1, n_planes, *size), dtype, seed=size[0], specials=False,
                       negative_zero=False)  # fmt: skip
        plan = _api._plan_max_pool(
            x, attrs["kernel_shape"], "NOTSET", attrs.get("ceil_mode", 0), None,
            attrs.get("pads"), 0, attrs.get("strides", [1, 1]), True, "NCHW",
        )  # fmt: skip
        dims, fill = plan.kernel_args[0], plan.kernel_args[3]
        expected, expected_at = (a.reshape(n_planes, -1) for a in ref_max_pool(x, **attrs))
        plane_out = expected.shape[1]
        flat_x = x.reshape(-1).view(plan.kernel_dtype)
        for p_from, p_to in ranges[n_planes]:
            y = np.full(n_planes * plane_out * x.itemsize, 0x5A, dtype=np.uint8)
            indices = np.full(n_planes * plane_out, -7, dtype=np.int64)
            pool_planes(flat_x, y.view(plan.kernel_dtype), indices, dims, p_from, p_to,
                        p_to * plane_out, fill)  # fmt: skip
            planes = y.view(x.dtype).reshape(n_planes, plane_out)
            positions = indices.reshape(n_planes, plane_out)
            untouched = np.full(plane_out * x.itemsize, 0x5A, dtype=np.uint8)
            for p in range(n_planes):
                if p_from <= p < p_to:
                    assert_identical(planes[p], expected[p])
                    assert_identical(positions[p], expected_at[p])
                else:
                    written = planes[p : p + 1].view(np.uint8)[0]
                    assert np.array_equal(written, untouched), (name, size, p_from, p)
                    assert (positions[p] == -7).all(), (name, size, p_from, p)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_pitch_rows_at_their_widest(dtype, entry):
    """Indices through rows of pitch column maxima as wide as they come (a pitch of
    COLUMN_BLOCK / 2 columns, and with windows 3 wide at stride 2 one column past it folded
    into the last: 2,064 columns pooled at a time), whose positions are read from the table
    _COLUMN_OFFSETS: 3x2 and 2x3 windows at stride 2 on rows of 2,048 and 2,049, with a pad
    row above (rows with a tap outside the plane), against the reference."""
    from fastpool._attrs import COLUMN_BLOCK, P_FOLD, P_PITCH, P_PITCH_ROWS
    from fastpool._max_kernels import _COLUMN_OFFSETS

    assert np.array_equal(_COLUMN_OFFSETS, np.arange(COLUMN_BLOCK))
    cases = [
        (2048, dict(kernel_shape=[3, 2], strides=[2, 2]), 0),
        (2049, dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 0]), 0),
        (2049, dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 0, 0, 0]), 1),
    ]
    for width, attrs, fold in cases:
        shape = (1, 2, 9, width)
        dims = _planar_dims(shape, attrs["kernel_shape"], attrs)
        assert dims[P_PITCH_ROWS] != 0, attrs
        assert dims[P_PITCH] == COLUMN_BLOCK // 2 and dims[P_FOLD] == fold, attrs
        check_with_ties_and_relu(attrs, dtype, [shape])


@pytest.mark.parametrize("value_dtype", ["float32", "uint16", "uint8", "int8", "float64"])
def test_indices_stored_as_words(value_dtype):
    """_put_index through index_words: the kernels' loops that store Indices as pairs of
    uint32 (items narrower than 8 bytes) or as int64 give base + position, or -1 for
    NO_POSITION, whatever the base: the low halves carried into the high ones, on bases
    around 2**32 and beyond (inputs of more than 4G items, too large to pool in a test)."""
    from fastpool._max_kernels import NO_POSITION, _put_index
    from fastpool._ordering import index_words

    @numba.njit
    def store(indices, values, positions, base):
        words = index_words(indices, values)
        for e in range(positions.shape[0]):
            _put_index(words, e, positions[e], base)

    values = np.zeros(1, value_dtype)
    positions = np.array([0, 1, 5, 2**31 - 1, int(NO_POSITION), 2**31 - 2], dtype=np.uint32)
    for base in (0, 7, 2**31, 2**32 - 1, 2**32 - 5, 2**32, 2**40 + 3, 2**62):
        indices = np.full(positions.shape[0], 123, dtype=np.int64)
        store(indices, values, positions, base)
        expected = [-1 if p == NO_POSITION else base + int(p) for p in positions]
        assert indices.tolist() == expected, (value_dtype, base)


def _sortable_reference(values):
    """to_sortable in numpy: 16-bit float bits (uint16) with the sign bit of a positive
    number set and every bit of a negative one flipped; other types as they are."""
    if values.dtype != np.uint16:
        return values
    negative = (values >> 15).astype(np.uint16)
    return values ^ (np.uint16(0x8000) | (np.uint16(0x7FFF) * negative))


@pytest.mark.parametrize("kernel_dtype", ["float32", "float64", "uint16", "uint8", "int8"])
def test_row_vectors_take_the_first_of_equal_maxima(kernel_dtype):
    """max_of_2_rows and max_of_3_rows (_vectors): 16 items from each of two or three
    offsets of x, at any alignment, give columns[at:at + 16] = the running maximum in their
    sortable form, a later row replacing only a strictly greater value (so of +0.0 and
    -0.0 the first stays, and a NaN never replaces nor is replaced), and write nothing
    else: against numpy, on data with many ties, +-inf, -0.0 and NaN; 16-bit floats as
    their uint16 bits."""
    from fastpool._vectors import LANES, max_of_2_rows, max_of_3_rows

    @numba.njit
    def pool(x, first, second, third, columns, at, n_rows):
        if n_rows == 2:
            max_of_2_rows(x, first, second, columns, at)
        else:
            max_of_3_rows(x, first, second, third, columns, at)

    rng = np.random.default_rng(16)
    kernel_dtype = np.dtype(kernel_dtype)
    if kernel_dtype.kind == "f":
        pool_of = np.array([-np.inf, -1.5, -0.0, 0.0, 1.5, 2.0, np.inf, np.nan], kernel_dtype)
        x = rng.choice(pool_of, 200)
    elif kernel_dtype == np.uint16:
        floats = np.array([-np.inf, -1.5, -0.0, 0.0, 1.5, 2.0, np.inf, np.nan], np.float16)
        x = rng.choice(floats, 200).view(np.uint16)
    else:
        info = np.iinfo(kernel_dtype)
        x = rng.choice(np.array([info.min, -1 if info.min < 0 else 1, 0, 7, info.max]), 200)
        x = x.astype(kernel_dtype)
    sortable = _sortable_reference(x)
    for n_rows in (2, 3):
        for _ in range(40):
            offsets = rng.integers(0, x.shape[0] - LANES, 3)
            at = int(rng.integers(0, 8))
            columns = np.full(LANES + 16, 99, dtype=kernel_dtype)
            pool(x, *offsets, columns, at, n_rows)
            rows = [sortable[offset:][:LANES] for offset in offsets[:n_rows]]
            best = rows[0]
            for value in rows[1:]:
                best = np.where(value > best, value, best)
            expected = np.full(LANES + 16, 99, dtype=kernel_dtype)
            expected[at:][:LANES] = best
            same = np.array_equal(columns.view(np.uint8), expected.view(np.uint8))
            assert same, (n_rows, offsets, at)


def test_wide_items_in_kernels():
    """wide_items tells the item widths apart inside compiled code (16-bit floats arrive as
    their uint16 bits): 4- and 8-byte items are wide."""
    import numba

    from fastpool._ordering import wide_items

    wide_in_kernel = numba.njit(lambda values: wide_items(values))
    widths = {"float32": True, "float64": True, "uint16": False, "int8": False, "uint8": False}
    for dtype, wide in widths.items():
        assert wide_in_kernel(np.zeros(2, dtype)) is wide, dtype


def test_column_major_indices_of_large_planes(entry):
    """Column-major Indices are the flat stretches' row-major ones rewritten; on planes of
    over 2**21 values that rewriting runs in float64. 2x3 windows at stride 2 on two planes
    of 1,100 x 2,000 (blocks of output rows), with ties, against a numpy reference: the
    six taps of every window side by side, the first maximum by argmax."""
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, (1, 2, 1100, 2000)).astype(np.float32)
    attrs = dict(kernel_shape=[2, 3], strides=[2, 2])
    H, W = x.shape[2:]
    OH, OW = (H - 2) // 2 + 1, (W - 3) // 2 + 1
    taps = [(t, j) for t in range(2) for j in range(3)]  # row-major window order
    stacked = np.stack([x[:, :, t : t + 2 * OH : 2, j : j + 2 * OW : 2] for t, j in taps])
    first = np.argmax(stacked, axis=0)  # the first maximum
    tap_row = np.array([t for t, _ in taps])[first]
    tap_column = np.array([j for _, j in taps])[first]
    rows = 2 * np.arange(OH)[:, None] + tap_row
    columns = 2 * np.arange(OW)[None, :] + tap_column
    plane_start = np.arange(2)[None, :, None, None] * H * W
    expected_y = np.take_along_axis(stacked, first[None], axis=0)[0]
    for storage_order, expected_i in ((0, rows * W + columns), (1, columns * H + rows)):
        y, indices = fastpool.max_pool(x, storage_order=storage_order, return_indices=True, **attrs)
        assert_identical(y, expected_y)
        assert_identical(indices, plane_start + expected_i)


# Geometries the planar kernel pools rows first with Indices, by test id: rows past the
# flat stretches' 2,048 columns, windows reaching past a row of pitch column maxima
# (stride 1 along the rows without pads), or flat block rows without pitch rows (their
# values alone are pooled flat). Row strides or dilations that skip input rows
# (each output row pools its own rows), and ones that read every row (blocks of output
# rows, several to a task on the wide rows: ROWS_SCRATCH holds 31 rows of 2,098 windows).
ROWS_FIRST = {
    "wide-k3": ((1, 1, 70, 2100), dict(kernel_shape=[3, 3])),
    "wide-k3-s2-pads": ((1, 1, 75, 2100), dict(kernel_shape=[3, 3], strides=[2, 1],
                                               pads=[1, 1, 1, 1])),
    "wide-k2x3-s7": ((1, 2, 40, 2100), dict(kernel_shape=[2, 3], strides=[7, 1])),
    "wide-d5-s2-pads": ((1, 1, 60, 2100), dict(kernel_shape=[3, 2], dilations=[5, 1],
                                               strides=[2, 1], pads=[4, 0, 3, 0])),
    "k2-s9": ((2, 3, 60, 64), dict(kernel_shape=[2, 2], strides=[9, 1])),
    "k3-d5-s11-ceil": ((1, 2, 64, 64), dict(kernel_shape=[3, 2], dilations=[5, 1],
                                            strides=[11, 1], ceil_mode=1)),
    "k5-d3-ceil": ((1, 1, 40, 64), dict(kernel_shape=[5, 2], dilations=[3, 1], ceil_mode=1)),
    # column stride 2 (windows from the column pairs' maxima, for any width)
    "1d-k4-s2-pads": ((1, 3, 4500), dict(kernel_shape=[4], strides=[2], pads=[1, 1])),
    "1d-k2-s2": ((2, 1, 4400), dict(kernel_shape=[2], strides=[2])),
    "1d-k7-s2-ceil": ((1, 2, 4403), dict(kernel_shape=[7], strides=[2], pads=[3, 2],
                                         ceil_mode=1)),
    "wide-k3x4-s2-pads": ((1, 2, 9, 4200), dict(kernel_shape=[3, 4], strides=[2, 2],
                                                pads=[1, 1, 1, 1])),
    "wide-k2x5-s1x2-ceil": ((1, 1, 6, 4300), dict(kernel_shape=[2, 5], strides=[1, 2],
                                                  pads=[0, 2, 0, 1], ceil_mode=1)),
    "1d-k9-s2": ((1, 1, 4501), dict(kernel_shape=[9], strides=[2])),
    # column stride 1: one column, even and odd widths, dilated; column stride 3
    "wide-k3x1": ((1, 1, 20, 2100), dict(kernel_shape=[3, 1], pads=[1, 0, 1, 0])),
    "wide-k2x4-d2": ((1, 1, 12, 2100), dict(kernel_shape=[2, 4], dilations=[1, 2],
                                            pads=[0, 3, 1, 2])),
    "wide-k1x5": ((1, 1, 6, 2100), dict(kernel_shape=[1, 5], pads=[0, 2, 0, 2])),
    "wide-k2x3-s3": ((1, 1, 8, 2100), dict(kernel_shape=[2, 3], strides=[1, 3],
                                           pads=[0, 1, 0, 1])),
    # flat block rows without pitch rows (the dilated extra shape)
    "k3-d2-p2": ((1, 2, 56, 56), dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2])),
    # 3 taps a row at column stride 1 and windows of up to 3 rows, in registers: dilated
    # along the row, pads on one side only, 2-row windows, a row stride with ceil_mode
    "k2x3-d1x3-pads": ((1, 2, 50, 60), dict(kernel_shape=[2, 3], dilations=[1, 3],
                                            pads=[1, 3, 0, 2])),
    "k3-d3-pads-after": ((1, 2, 50, 60), dict(kernel_shape=[3, 3], dilations=[3, 3],
                                              pads=[0, 3, 3, 0])),
    "k3-d2x4-s2x1-ceil": ((2, 1, 41, 57), dict(kernel_shape=[3, 3], dilations=[2, 4],
                                               strides=[2, 1], pads=[1, 2, 2, 5],
                                               ceil_mode=1)),
    # windows of more than 3 taps a row at column stride 1 and more than 3 rows: tap by tap
    # and row by row between two pairs of buffers (odd and even counts of both)
    "k5-p2": ((1, 2, 56, 56), dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2])),
    "k4x6-d2x1-pads": ((1, 1, 50, 60), dict(kernel_shape=[4, 6], dilations=[2, 1],
                                            pads=[3, 2, 4, 3])),
    "k7-p3": ((1, 1, 45, 50), dict(kernel_shape=[7, 7], pads=[3, 3, 3, 3])),
    # rows of more than ROWS_SCRATCH / 2 windows: blocks of one output row, whose window
    # rows outnumber ROWS_SCRATCH's rows (the scratch grows to hold them)
    "wider-k3-d2": ((1, 1, 9, 33000), dict(kernel_shape=[3, 3], dilations=[2, 1])),
}  # fmt: skip


def _goes_rows_first(shape, attrs, dtype) -> bool:
    """Whether the planar kernel pools these NCHW attributes with Indices rows first."""
    from fastpool._attrs import P_PITCH_ROWS
    from fastpool._max_kernels import _flat_tables, _long_argmax_rows

    wide = np.dtype(dtype).itemsize >= 4
    for storage_order in (0, 1):
        dims = _planar_dims(shape, attrs["kernel_shape"], attrs, storage_order)
        if _long_argmax_rows.py_func(dims):
            return False
        group_planes, block_rows = _flat_tables.py_func(dims, 1, 1, True, wide)[:2]
        if group_planes > 0 or (dims[P_PITCH_ROWS] != 0 and block_rows > 0):
            return False
    return True


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(("shape", "attrs"), list(ROWS_FIRST.values()), ids=list(ROWS_FIRST))
def test_rows_first_indices(shape, attrs, dtype, entry):
    """Indices pooled rows first (see ROWS_FIRST), both storage orders, data with many ties,
    with and without NaN, +-inf and -0.0, against the vectorised reference; the values
    alone too."""
    assert _goes_rows_first(shape, attrs, dtype)
    for specials in (False, True):
        seed = zlib.crc32(f"{shape}{attrs}{specials}".encode())
        x = make_input(shape, dtype, seed=seed, specials=specials, negative_zero=specials)
        for storage_order in (0, 1):
            expected = ref_max_pool_vectorised(x, storage_order=storage_order, **attrs)
            y, indices = fastpool.max_pool(x, storage_order=storage_order, return_indices=True,
                                           **attrs)  # fmt: skip
            assert_identical(y, expected[0])
            assert_identical(indices, expected[1])
        assert_identical(fastpool.max_pool(x, **attrs), expected[0])


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.uint8, np.int8], ids=["f32", "f16", "u8", "i8"]
)
@pytest.mark.parametrize("kernel", [2, 3, 4, 5, 6, 8])
def test_long_signals_stride_2(kernel, dtype, entry):
    """1-D signals too long for the flat stretches at stride 2 (window maxima from column
    pairs, row by row), odd and even lengths, pads on either side or both, a NaN or a -0.0
    in one signal, against the reference."""
    rng = np.random.default_rng(kernel)
    for length, pads in [(3000, [0, 0]), (3001, [1, 1]), (2501, [kernel - 1, 0]),
                         (4096, [0, kernel // 2])]:  # fmt: skip
        x = rng.standard_normal((2, 3, length)) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        attrs = dict(kernel_shape=[kernel], strides=[2], pads=pads)
        check_against_reference(x, attrs, "NCHW")
        if np.dtype(dtype).kind == "f":
            for special in (np.nan, -0.0):
                x_special = x.copy()
                x_special[1, 2, rng.integers(length)] = special
                expected = ref_max_pool(x_special, **attrs)[0]
                assert_identical(fastpool.max_pool(x_special, **attrs), expected)


# Cases of the volume kernel (three spatial axes, channels first, values only): maxima over
# the first axis, then the planar kernel on their planes.
VOLUME_CASES = {
    "k2-s2": dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    # (the last windows of odd sizes hang over the end: not the 2x2x2 loop, which needs
    # every window inside; even sizes take it on planes at least 64 wide)
    "k2-s2-ceil": dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2], ceil_mode=1),
    "k3-s2-p1": dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6),
    "k3-p1": dict(kernel_shape=[3, 3, 3], pads=[1] * 6),
    "mixed": dict(
        kernel_shape=[3, 2, 3], strides=[1, 2, 2], dilations=[2, 1, 1], pads=[2, 0, 1, 1, 1, 0]
    ),
    "ceil": dict(kernel_shape=[2, 3, 3], strides=[3, 2, 2], ceil_mode=1),
    "pads-beyond-kernel": dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2], pads=[3] * 6),
    # (more than three taps along the first axis: the depth pass's general loop)
    "k4-deep": dict(kernel_shape=[4, 3, 3], strides=[1, 2, 2], pads=[2, 1, 1, 1, 1, 1]),
}


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.uint8, np.int8], ids=["f32", "f16", "u8", "i8"]
)
@pytest.mark.parametrize("case", VOLUME_CASES)
def test_volumes(case, dtype, entry):
    """The volume kernel: volumes whose slices' maxima take several batches of scratch,
    volumes split between tasks, and tasks checked for NaN and -0.0 batch by batch."""
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    attrs = VOLUME_CASES[case]
    # (2000-value planes: 16 slices of maxima at a time, fewer than the 20-odd outputs;
    # 64 wide: the 2x2x2/2 one-pass loop, which narrower planes do not take)
    for shape in [(2, 3, 5, 6, 7), (1, 2, 40, 50, 40), (3, 1, 4, 13, 13), (2, 2, 4, 6, 64)]:
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        check_fast_values(x, attrs, "NCHW", rng)


# Windows one slice deep: with stride 1 and no pads along the first axis, each output slice
# is its input slice pooled as a plane, and the planar kernel takes them all (values, and
# Indices in row-major order); with pads there, or column-major Indices, the volume and
# volume Indices kernels do.
SLICE_CASES = {
    "1x3x3-s1x2x2": dict(kernel_shape=[1, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1]),
    "1x2x2-s1x2x2": dict(kernel_shape=[1, 2, 2], strides=[1, 2, 2]),
    "1x3x3-dilated": dict(kernel_shape=[1, 3, 3], dilations=[4, 2, 1], auto_pad="SAME_UPPER"),
    "1x3x3-depth-pads": dict(kernel_shape=[1, 3, 3], pads=[1, 1, 1, 0, 1, 1]),
    "1x3x3-depth-stride": dict(kernel_shape=[1, 3, 3], strides=[2, 1, 1]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8], ids=["f32", "f16", "u8"])
@pytest.mark.parametrize("case", SLICE_CASES)
def test_windows_one_slice_deep(case, dtype, entry):
    from fastpool import _api

    rng = np.random.default_rng(zlib.crc32(f"one slice {case}".encode()))
    attrs = SLICE_CASES[case]
    apart = "depth" not in case
    for shape in [(2, 3, 4, 9, 10), (1, 5, 6, 28, 28)]:
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        for return_indices, storage_order, kernel in [
            (False, 0, "planar" if apart else "volume"),
            (False, 1, "planar" if apart else "volume"),
            (True, 0, "planar" if apart else "volume_indices"),
            (True, 1, "volume_indices"),
        ]:
            plan = _api._plan_max_pool(
                x, attrs["kernel_shape"], attrs.get("auto_pad", "NOTSET"), 0,
                attrs.get("dilations"), attrs.get("pads"), storage_order, attrs.get("strides"),
                return_indices, "NCHW",
            )  # fmt: skip
            assert plan.kernel == kernel, (return_indices, storage_order)
        check_against_reference(x, attrs, "NCHW")
        check_fast_values(x, attrs, "NCHW", rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8], ids=["f32", "f16", "u8"])
@pytest.mark.parametrize("case", ["k3-p1", "k2-s2-ceil", "mixed"])
def test_many_small_volumes(case, dtype, entry):
    """Small volumes, many of them: the volume kernel holds the depth maxima of several
    volumes and pools their planes in one go (more slices than it holds at a time, so it
    empties them several times). Volumes holding a NaN or a -0.0 among the others, not only
    the last: those are done on their own, and the volumes held before them and after them
    must still be pooled, each exactly once (a fused HardSigmoid applied twice would show)."""
    rng = np.random.default_rng(zlib.crc32(f"small volumes {case}".encode()))
    attrs = VOLUME_CASES[case]
    for shape in [(2, 5, 3, 4, 5), (1, 600, 4, 5, 6)]:
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        check_fast_values(x, attrs, "NCHW", rng)
        if x.dtype.kind != "f":
            continue
        for special in ("nan", "zeros"):
            x_special = x.copy()
            volumes = x_special.reshape(-1, *shape[2:])  # (a view: writes reach x_special)
            for volume in rng.choice(len(volumes), size=max(2, len(volumes) // 7), replace=False):
                if special == "nan":
                    volumes[volume].flat[rng.integers(volumes[volume].size)] = np.nan
                else:
                    volumes[volume] = -np.abs(volumes[volume]) - 1
                    volumes[volume].flat[rng.integers(volumes[volume].size)] = -0.0
            for fused in ({}, dict(activation="HardSigmoid", activation_params=[0.2, 0.5])):
                expected = ref_max_pool_values(x_special, **attrs)
                if fused:
                    expected = numpy_activation(expected, "HardSigmoid", [0.2, 0.5])
                assert_identical(fastpool.max_pool(x_special, **fused, **attrs), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=["f32", "f16", "f64"])
@pytest.mark.parametrize(
    ("shape", "ceil_mode"), [((1, 2, 4, 6, 64), 0), ((1, 2, 4, 6, 8), 0), ((1, 2, 5, 7, 9), 1)]
)
def test_volume_zeros_in_every_window(shape, ceil_mode, dtype, entry):
    """2x2x2 windows at stride 2 of negative data, each holding a -0.0 at one of its eight
    places and a +0.0 at a later one: the first zero in scan order, -0.0, is the maximum.
    Every pair of places, in every window at once, so no window can miss it: the loop that
    takes each window's eight inputs straight into the output (all windows inside, even
    sizes, 64 wide) and the two passes (narrower, or ceil_mode with odd sizes)."""
    attrs = dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2], ceil_mode=ceil_mode)
    places = [(d, h, w) for d in range(2) for h in range(2) for w in range(2)]
    rng = np.random.default_rng(7)
    base = -1 - rng.random(shape) * 8
    for first in range(8):
        for later in range(first + 1, 8):
            x = base.copy()
            for place, zero in ((places[first], -0.0), (places[later], 0.0)):
                d, h, w = place
                x[:, :, d::2, h::2, w::2] = zero
            x = x.astype(dtype)
            expected = ref_max_pool_values(x, **attrs)
            got = fastpool.max_pool(x, **attrs)
            assert_identical(got, expected)
            # (the windows that hold both zeros: -0.0)
            assert np.signbit(got[:, :, :2, :3, :4]).all(), (first, later)


# The volume Indices kernel's cases beyond VOLUME_CASES: windows whose output slices read
# input slices further apart than the windows are deep (the slices between are not pooled),
# and dilated windows with pads, whose first slice read goes back down from one output
# slice to the next
VOLUME_INDICES_CASES = {
    **VOLUME_CASES,
    "depth-stride-3": dict(kernel_shape=[1, 3, 3], strides=[3, 1, 1]),
    "deep-dilated": dict(kernel_shape=[3, 2, 2], dilations=[3, 1, 1], pads=[4, 0, 0, 0, 1, 1]),
    "k5-deep": dict(kernel_shape=[5, 1, 1]),
}


def volume_indices_plan(shape, dtype, attrs) -> bool:
    """Whether both storage orders' Indices of these volumes take the volume Indices kernel."""
    from fastpool import _api

    kinds = [
        _api._plan_max_pool(
            np.empty(shape, dtype), attrs["kernel_shape"], "NOTSET", attrs.get("ceil_mode", 0),
            attrs.get("dilations"), attrs.get("pads"), storage_order, attrs.get("strides"),
            True, "NCHW",
        ).kernel
        for storage_order in (0, 1)
    ]  # fmt: skip
    return kinds == ["volume_indices"] * 2


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", VOLUME_INDICES_CASES)
def test_volumes_with_indices(case, dtype, entry):
    """The volume Indices kernel (the planar kernel on each input slice, then the first
    maximum over a window's slices): volumes split between tasks, data with many ties
    (and, for floats, with and without NaN, +-inf and -0.0), the specials of
    ``with_specials`` in the last plane only, both storage orders, and a fused
    activation."""
    attrs = VOLUME_INDICES_CASES[case]
    for seed, shape in enumerate([(2, 3, 5, 6, 7), (1, 2, 9, 10, 11), (3, 1, 4, 13, 13)]):
        assert volume_indices_plan(shape, dtype, attrs)
        for specials in (False, True):
            x = make_input(shape, dtype, seed=seed, specials=specials, negative_zero=specials)
            check_against_reference(x, attrs, "NCHW")
        if np.dtype(dtype).kind != "f":
            continue
        rng = np.random.default_rng(zlib.crc32(f"{case}{seed}".encode()))
        x = (rng.standard_normal(shape) * 8).astype(dtype)
        for x_special in with_specials(x, "NCHW", rng):
            check_against_reference(x_special, attrs, "NCHW")
        expected_y, expected_i = ref_max_pool(x, **attrs)
        expected_y = numpy_activation(expected_y, "HardSigmoid", [0.2, 0.5])
        y, indices = fastpool.max_pool(x, return_indices=True, activation="HardSigmoid",
                                       activation_params=[0.2, 0.5], **attrs)  # fmt: skip
        assert_identical(y, expected_y)
        assert_identical(indices, expected_i)


# (shape, case): the volume Indices kernel's scratch (VOLUME_INDICES_SCRATCH planar results)
# holds 334 slices of 7x7 outputs, fewer than these 180 volumes of 4 slices have, even split
# between two threads (360 each); the 40 slices of 25x20 outputs and the 12 of 40x41 outputs
# of one volume do not fit in it either
SCRATCH_GROUP_CASES = {
    "many-volumes": ((1, 180, 4, 14, 14), "k2-s2"),
    "deep-volume": ((1, 1, 40, 50, 40), "k3-s2-p1"),
    "deep-windows": ((1, 1, 12, 40, 41), "k5-deep"),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8], ids=["f32", "f16", "u8"])
@pytest.mark.parametrize("name", SCRATCH_GROUP_CASES)
def test_volume_indices_past_the_scratch(name, dtype, entry):
    """Volumes whose input slices outnumber what the volume Indices kernel's scratch holds:
    their output slices are pooled in groups, and the planar results of slices that two
    groups read are made again for the second; against the reference, with NaN, +-inf and
    -0.0 among the values for floats."""
    shape, case = SCRATCH_GROUP_CASES[name]
    attrs = VOLUME_INDICES_CASES[case]
    assert volume_indices_plan(shape, dtype, attrs)
    check_against_reference(make_input(shape, dtype, seed=len(name)), attrs, "NCHW")


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.uint8, np.int8], ids=["f32", "f16", "u8", "i8"]
)
@pytest.mark.parametrize("case", FLAT_STRETCH_CASES)
def test_channels_last(case, dtype, entry):
    """The channels-last kernel on images: one to many channels, images split between
    tasks, and tasks checked for NaN and -0.0 in several stretches of rows."""
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    attrs = FLAT_STRETCH_CASES[case]
    # (the last: 36 rows of 24 * 64 values, checked in stretches of about 2**15 values)
    for shape in [(2, 7, 6, 1), (1, 13, 13, 3), (3, 9, 14, 17), (1, 20, 21, 64),
                  (8, 36, 24, 64)]:  # fmt: skip
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        check_fast_values(x, attrs, "NHWC", rng)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.uint8, np.int8], ids=["f32", "f16", "u8", "i8"]
)
@pytest.mark.parametrize("case", VOLUME_CASES)
def test_channels_last_volumes(case, dtype, entry):
    """The channels-last kernel on volumes (three spatial axes): one to many channels,
    volumes split between tasks, and tasks checked for NaN and -0.0 in several stretches
    of slices."""
    rng = np.random.default_rng(zlib.crc32(f"last{case}".encode()))
    attrs = VOLUME_CASES[case]
    # (the last two: slices of 2,400 and 4,000 values, checked about 2**15 values at a time)
    for shape in [(2, 5, 6, 7, 3), (3, 4, 13, 13, 1), (1, 9, 10, 11, 33), (8, 24, 30, 20, 4),
                  (1, 40, 50, 40, 2)]:  # fmt: skip
        x = rng.standard_normal(shape) * 8
        x = (x + 128 if dtype == np.uint8 else x).clip(-128, 255).astype(dtype)
        check_fast_values(x, attrs, "NHWC", rng)
