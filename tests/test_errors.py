"""Bad input gives a ValueError/TypeError that names the problem (SEMANTICS.md section 6)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import fastpool

X = np.zeros((1, 2, 5, 5), dtype=np.float32)

MAX_POOL_VALUE_ERRORS = [
    # (keyword arguments, regex the message must match)
    (dict(kernel_shape=[3]), r"kernel_shape must have 2 values .*got 1"),
    (dict(kernel_shape=[3, 3, 3]), r"kernel_shape must have 2 values .*got 3"),
    (dict(kernel_shape=[0, 3]), r"kernel_shape\[0\] must be a positive integer, got 0"),
    (dict(kernel_shape=[3, -1]), r"kernel_shape\[1\] must be a positive integer, got -1"),
    (dict(kernel_shape=[2.5, 2]), r"kernel_shape\[0\] must be a positive integer, got 2.5"),
    (dict(kernel_shape=[2.0, 2]), r"kernel_shape\[0\] must be a positive integer, got 2.0"),
    (dict(kernel_shape=[True, 2]), r"kernel_shape\[0\] must be a positive integer, got True"),
    (dict(kernel_shape="33"), r"kernel_shape must be a sequence of integers, got '33'"),
    (dict(kernel_shape=3), r"kernel_shape must be a sequence of integers, got 3"),
    (dict(kernel_shape=None), r"kernel_shape is required"),
    (dict(kernel_shape=np.array([[2, 2]])), r"kernel_shape must be one-dimensional"),
    (dict(kernel_shape=[2, 2], strides=[0, 1]), r"strides\[0\] must be a positive integer, got 0"),
    (dict(kernel_shape=[2, 2], strides=[1]), r"strides must have 2 values .*got 1"),
    (
        dict(kernel_shape=[2, 2], dilations=[1, 0]),
        r"dilations\[1\] must be a positive integer, got 0",
    ),
    (dict(kernel_shape=[2, 2], dilations=[1, 1, 1]), r"dilations must have 2 values"),
    (
        dict(kernel_shape=[2, 2], pads=[0, 0, -1, 0]),
        r"pads\[2\] must be a non-negative integer, got -1",
    ),
    (dict(kernel_shape=[2, 2], pads=[1, 1]), r"pads must have 4 values .*got 2"),
    (dict(kernel_shape=[2, 2], auto_pad="SAME"), r"auto_pad must be one of .*got 'SAME'"),
    (dict(kernel_shape=[2, 2], auto_pad=b"same_upper"), r"auto_pad must be one of"),
    (dict(kernel_shape=[2, 2], auto_pad=1), r"auto_pad must be one of .*got 1"),
    (
        dict(kernel_shape=[2, 2], auto_pad="VALID", pads=[1, 0, 0, 0]),
        r"pads must be all zero .*auto_pad is 'VALID'",
    ),
    (dict(kernel_shape=[2, 2], ceil_mode=2), r"ceil_mode must be 0 or 1, got 2"),
    (dict(kernel_shape=[2, 2], ceil_mode="1"), r"ceil_mode must be 0 or 1, got '1'"),
    (dict(kernel_shape=[2, 2], storage_order=-1), r"storage_order must be 0 or 1, got -1"),
    (dict(kernel_shape=[2, 2], layout="NCWH"), r"layout must be 'NCHW' or 'NHWC', got 'NCWH'"),
    (
        dict(kernel_shape=[2, 2], layout="NHWC", storage_order=1),
        r"storage_order must be 0 with layout 'NHWC'",
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), MAX_POOL_VALUE_ERRORS)
def test_max_pool_value_errors(kwargs, message):
    kwargs = dict(kwargs)
    kernel_shape = kwargs.pop("kernel_shape")
    with pytest.raises(ValueError, match=message):
        fastpool.max_pool(X, kernel_shape, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [case for case in MAX_POOL_VALUE_ERRORS if "storage_order" not in case[0]],
)
def test_pool_output_shape_value_errors(kwargs, message):
    kwargs = dict(kwargs)
    kernel_shape = kwargs.pop("kernel_shape")
    with pytest.raises(ValueError, match=message):
        fastpool.pool_output_shape(X.shape, kernel_shape, **kwargs)


@pytest.mark.parametrize("shape", [(5,), (2, 5), ()])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_wrong_rank(shape, layout):
    x = np.zeros(shape, dtype=np.float32)
    match = rf"X must have at least 3 dimensions .* got shape {re.escape(str(shape))}"
    with pytest.raises(ValueError, match=match):
        fastpool.max_pool(x, [2], layout=layout)
    with pytest.raises(ValueError, match=match):
        fastpool.global_max_pool(x, layout=layout)
    with pytest.raises(ValueError, match=match):
        fastpool.global_lp_pool(x, layout=layout)


def test_pool_output_shape_bad_input_shape():
    with pytest.raises(ValueError, match=r"input_shape\[1\] must be a non-negative integer"):
        fastpool.pool_output_shape((1, -2, 5, 5), [2, 2])
    with pytest.raises(ValueError, match=r"at least 3 dimensions"):
        fastpool.pool_output_shape((1, 2), [2])


UNSUPPORTED = [
    np.zeros((1, 1, 4), dtype=np.int32),
    np.zeros((1, 1, 4), dtype=np.int64),
    np.zeros((1, 1, 4), dtype=np.uint16),
    np.zeros((1, 1, 4), dtype=bool),
    np.zeros((1, 1, 4), dtype=np.complex64),
    np.zeros((1, 1, 4), dtype=object),
    np.array([[["a", "b", "c"]]]),
    np.zeros((1, 1, 4), dtype="datetime64[s]"),
    [[[1, 2, 3]]],  # a list of Python ints is int64
]


@pytest.mark.parametrize("x", UNSUPPORTED, ids=lambda x: str(np.asarray(x).dtype))
def test_unsupported_dtypes(x):
    name = str(np.asarray(x).dtype)
    with pytest.raises(TypeError, match=rf"MaxPool does not support dtype {re.escape(name)}"):
        fastpool.max_pool(x, [2])
    with pytest.raises(TypeError, match=rf"GlobalMaxPool does not support dtype {re.escape(name)}"):
        fastpool.global_max_pool(x)
    with pytest.raises(TypeError, match=rf"GlobalLpPool does not support dtype {re.escape(name)}"):
        fastpool.global_lp_pool(x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_global_lp_pool_rejects_integers(dtype):
    with pytest.raises(TypeError, match=r"GlobalLpPool does not support dtype u?int8; supported"):
        fastpool.global_lp_pool(np.zeros((1, 1, 3), dtype=dtype))


@pytest.mark.parametrize("p", [0, -1, -0.5, float("nan"), float("inf"), "2", None, True, [2]])
def test_global_lp_pool_bad_p(p):
    with pytest.raises(ValueError, match=r"p must be a positive finite number, got"):
        fastpool.global_lp_pool(X, p)


def test_global_layout_error():
    with pytest.raises(ValueError, match=r"layout must be 'NCHW' or 'NHWC'"):
        fastpool.global_max_pool(X, layout="CHW")
    with pytest.raises(ValueError, match=r"layout must be 'NCHW' or 'NHWC'"):
        fastpool.global_lp_pool(X, layout=None)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (dict(kernel_shape=[2.0, 2]), r"kernel_shape\[0\] must be a positive integer, got 2.0"),
        (dict(kernel_shape=[True, 2]), r"kernel_shape\[0\] must be a positive integer, got True"),
        (dict(kernel_shape=[2, 2], strides=[1.0, 1]), r"strides\[0\] must be a positive"),
        (dict(kernel_shape=[2, 2], ceil_mode=0.0), r"ceil_mode must be 0 or 1, got 0.0"),
        (dict(kernel_shape=[2, 2], storage_order=0.0), r"storage_order must be 0 or 1"),
    ],
)
def test_cached_plans_never_accept_equal_but_invalid_values(bad, message):
    """A valid call caches its plan; an invalid one that compares equal still raises."""
    good = {
        key: (type(value)(int(v) for v in value) if isinstance(value, list) else 0)
        for key, value in bad.items()
    }
    good["kernel_shape"] = [2, 2]
    kwargs = dict(bad)
    fastpool.max_pool(X, good.pop("kernel_shape"), **good)
    with pytest.raises(ValueError, match=message):
        fastpool.max_pool(X, kwargs.pop("kernel_shape"), **kwargs)
