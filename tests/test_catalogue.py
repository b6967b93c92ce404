"""The adversarial catalogue of valid edge cases, each its own test, on every kernel path
and dtype, against the reference; the caller's arrays are never modified. (Malformed
attributes and dtypes: test_errors.py; awkward memory layouts: test_inputs.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ALL_DTYPES, DTYPE_IDS, assert_identical, make_input
from reference import ref_global_lp_pool, ref_global_max_pool, ref_max_pool
from test_max_pool import PATHS, input_shape

import fastpool


def pool_both_ways(x, layout, reference_attrs=None, **attrs):
    """fastpool against the reference, values and indices, and the input left as it was.
    ``reference_attrs``: attributes that give the reference the same windows another way."""
    before = x.copy()
    expected_y, expected_i = ref_max_pool(x, layout=layout, **(reference_attrs or attrs))
    y, indices = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    assert_identical(y, expected_y)
    assert_identical(indices, expected_i)
    assert_identical(fastpool.max_pool(x, layout=layout, **attrs), expected_y)
    assert_identical(x, before)
    return y, indices


PARAMS = pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
PATH = pytest.mark.parametrize("path", PATHS)


@PARAMS
@PATH
def test_empty_batch(path, dtype):
    layout, spatial = PATHS[path]
    y, _ = pool_both_ways(make_input(input_shape(layout, spatial, 0, 3), dtype), layout,
                          kernel_shape=[2] * len(spatial))  # fmt: skip
    assert y.shape[0] == 0


@PARAMS
@PATH
def test_empty_channels(path, dtype):
    layout, spatial = PATHS[path]
    y, _ = pool_both_ways(make_input(input_shape(layout, spatial, 2, 0), dtype), layout,
                          kernel_shape=[2] * len(spatial))  # fmt: skip
    assert y.size == 0


@PARAMS
@PATH
def test_kernel_larger_than_the_input_gives_an_empty_output(path, dtype):
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, spatial), dtype)
    y, _ = pool_both_ways(x, layout, kernel_shape=[s + 1 for s in spatial])
    assert y.size == 0


@PARAMS
@PATH
def test_pads_larger_than_the_kernel_give_windows_without_taps(path, dtype):
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, spatial), dtype)
    r = len(spatial)
    _, indices = pool_both_ways(x, layout, kernel_shape=[2] * r, pads=[4] * (2 * r))
    assert (indices == -1).any() and (indices >= 0).any()


@PARAMS
@PATH
def test_stride_larger_than_the_input(path, dtype):
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, spatial), dtype)
    y, _ = pool_both_ways(x, layout, kernel_shape=[2] * len(spatial), strides=[50] * len(spatial))
    assert all(s == 1 for s in (y.shape[2:] if layout == "NCHW" else y.shape[1:-1]))


@PARAMS
@PATH
def test_kernel_of_a_million_taps(path, dtype):
    """A million taps per axis, with pads of nearly as many and an equal stride: two windows
    per axis, one holding the first input index alone and one the rest. The same windows as
    a kernel, stride and pads of the axis's size, whose result the reference gives (it would
    loop over every tap of the large kernel); the kernels' scratch must not grow with it."""
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, spatial), dtype, seed=6)
    r, taps = len(spatial), 10**6
    large = dict(kernel_shape=[taps] * r, strides=[taps] * r, pads=[taps - 1] * (2 * r))
    same = dict(kernel_shape=list(spatial), strides=list(spatial),
                pads=[s - 1 for s in spatial] * 2)  # fmt: skip
    pool_both_ways(x, layout, reference_attrs=same, **large)


@PARAMS
@PATH
def test_one_by_one_kernel_is_the_identity(path, dtype):
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, spatial), dtype, seed=3)
    y, indices = pool_both_ways(x, layout, kernel_shape=[1] * len(spatial))
    assert_identical(y, x)
    assert_identical(indices, np.arange(x.size, dtype=np.int64).reshape(x.shape))


@PARAMS
@PATH
def test_single_element_input(path, dtype):
    layout, spatial = PATHS[path]
    x = make_input(input_shape(layout, (1,) * len(spatial), 1, 1), dtype, seed=4)
    r = len(spatial)
    for attrs in (dict(kernel_shape=[1] * r), dict(kernel_shape=[3] * r, pads=[1] * (2 * r)),
                  dict(kernel_shape=[2] * r, auto_pad="SAME_UPPER")):  # fmt: skip
        y, indices = pool_both_ways(x, layout, **attrs)
        assert_identical(y.reshape(-1), x.reshape(-1))
        assert indices.reshape(-1).tolist() == [0]
    before = x.copy()
    assert_identical(fastpool.global_max_pool(x, layout=layout), ref_global_max_pool(x, layout))
    if dtype.kind not in "iu":
        expected = ref_global_lp_pool(x, 2, layout)
        np.testing.assert_array_equal(fastpool.global_lp_pool(x, layout=layout).astype(float),
                                      expected.astype(float))  # fmt: skip
    assert_identical(x, before)
