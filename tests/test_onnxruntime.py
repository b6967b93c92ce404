"""Differential tests against onnxruntime, on the inputs where it follows the contract.

SEMANTICS.md section 7: onnxruntime drops or mishandles NaN, computes SAME pads from the
undilated kernel, refuses pads >= kernel, has at most 3 spatial axes and (before 1.32) no
float16 MaxPool on x86 (the cases here are float32, float64, uint8 and int8). It also does not
keep the first of a -0.0/+0.0 tie (measured with onnxruntime 1.31). The cases here avoid
exactly those; everything else must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_identical, make_input

import fastpool

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ELEMENT_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
}


def ordinary(shape, dtype, seed):
    """Test data without NaN and without -0.0 (where onnxruntime leaves the contract)."""
    x = make_input(shape, dtype, seed=seed, specials=False)
    if x.dtype.kind == "f":
        x[x == 0] = 0.0
    return x


def run_onnxruntime(x, op, attrs, want_indices=False):
    element = ELEMENT_TYPES[x.dtype]
    outputs = ["Y", "Indices"] if want_indices else ["Y"]
    node = helper.make_node(op, ["X"], outputs, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", element, list(x.shape))],
        [helper.make_tensor_value_info("Y", element, None)]
        + (
            [helper.make_tensor_value_info("Indices", TensorProto.INT64, None)]
            if want_indices
            else []
        ),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, {"X": x})


def cases(rank):
    r = rank
    return [
        dict(kernel_shape=[2] * r),
        dict(kernel_shape=[3] * r, strides=[2] * r, pads=[1] * (2 * r)),
        dict(kernel_shape=[3] * r, pads=[0] * r + [2] * r),
        dict(kernel_shape=[2] * r, dilations=[2] * r, pads=[1] * (2 * r)),
        dict(kernel_shape=[3] * r, strides=[2] * r, ceil_mode=1),
        dict(kernel_shape=[3] * r, strides=[2] * r, pads=[1] * (2 * r), ceil_mode=1),
        dict(kernel_shape=[3] * r, strides=[2] * r, auto_pad="SAME_UPPER"),
        dict(kernel_shape=[3] * r, strides=[2] * r, auto_pad="SAME_LOWER"),
        dict(kernel_shape=[2] * r, dilations=[2] * r, auto_pad="VALID"),
        dict(kernel_shape=[1] * r, strides=[3] * r),
    ]


SPATIAL = {1: (11,), 2: (9, 8), 3: (5, 6, 4)}
PARAMS = [
    pytest.param(rank, i, dtype, id=f"{rank}d-case{i}-{np.dtype(dtype).name}")
    for rank in SPATIAL
    for i in range(len(cases(rank)))
    for dtype in ELEMENT_TYPES
]


@pytest.mark.parametrize(("rank", "case", "dtype"), PARAMS)
def test_max_pool_matches_onnxruntime(rank, case, dtype):
    attrs = cases(rank)[case]
    x = ordinary((2, 3, *SPATIAL[rank]), dtype, seed=rank * 100 + case)
    (expected,) = run_onnxruntime(x, "MaxPool", attrs)
    assert_identical(fastpool.max_pool(x, **attrs), expected)
    nhwc = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    assert_identical(np.moveaxis(fastpool.max_pool(nhwc, layout="NHWC", **attrs), -1, 1), expected)
    if np.dtype(dtype).kind == "f":  # onnxruntime's Indices output is for floats
        for storage_order in (0, 1):
            ort_y, ort_indices = run_onnxruntime(
                x, "MaxPool", dict(attrs, storage_order=storage_order), want_indices=True
            )
            y, indices = fastpool.max_pool(
                x, storage_order=storage_order, return_indices=True, **attrs
            )
            assert_identical(y, ort_y)
            assert_identical(indices, ort_indices)


# onnxruntime's CPU provider has GlobalMaxPool and GlobalLpPool for float32 only.
@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32])
def test_global_max_pool_matches_onnxruntime(rank, dtype):
    x = ordinary((2, 4, *SPATIAL[rank]), dtype, seed=rank)
    (expected,) = run_onnxruntime(x, "GlobalMaxPool", {})
    assert_identical(fastpool.global_max_pool(x), expected)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_matches_onnxruntime(rank, dtype, p):
    x = ordinary((2, 4, *SPATIAL[rank]), dtype, seed=rank)
    (expected,) = run_onnxruntime(x, "GlobalLpPool", dict(p=p))
    actual = fastpool.global_lp_pool(x, p)
    # onnxruntime sums in the input dtype, fastpool in float64: equal to rounding.
    np.testing.assert_allclose(actual, expected, rtol=1e-5)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
