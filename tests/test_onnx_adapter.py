"""fastpool.onnx: ReferenceEvaluator operators and run_node with opset-exact validation."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_identical, make_input, this_fastpool_env
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from reference import ref_global_lp_pool, ref_global_max_pool, ref_max_pool

import fastpool.onnx
from fastpool.onnx import NHWC_DOMAIN, run_node

ELEMENT = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
}


def evaluate(node, x, opsets):
    outputs = [helper.make_tensor_value_info(name, TensorProto.UNDEFINED, None)
               for name in node.output]  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", ELEMENT[x.dtype], None)], outputs
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()]
    )
    return ReferenceEvaluator(model, new_ops=fastpool.onnx.reference_ops()).run(None, {"X": x})


# Cases where onnx's own reference is wrong (SEMANTICS.md section 7): per-plane indices on
# its stride-1 path, storage_order ignored, SAME_LOWER shape; fastpool must follow the contract.
MAX_POOL_CASES = {
    "stride1-indices": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "storage-order": dict(kernel_shape=[2, 2], storage_order=1),
    "same-lower": dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER"),
    "ceil-dilated": dict(kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 1], ceil_mode=1),
    "1d": dict(kernel_shape=[3], strides=[2]),
}


@pytest.mark.parametrize("case", MAX_POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, ml_dtypes.bfloat16])
def test_reference_evaluator_max_pool(case, dtype):
    attrs = MAX_POOL_CASES[case]
    shape = (2, 3, 11) if case == "1d" else (2, 3, 7, 6)
    x = make_input(shape, dtype, seed=5)
    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], **attrs)
    y, indices = evaluate(node, x, {"": 22})
    expected_y, expected_i = ref_max_pool(x, **attrs)
    assert_identical(y, expected_y)
    assert_identical(indices, expected_i)
    (y_only,) = evaluate(helper.make_node("MaxPool", ["X"], ["Y"], **attrs), x, {"": 22})
    assert_identical(y_only, expected_y)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, ml_dtypes.bfloat16])
def test_reference_evaluator_global_ops(dtype):
    x = make_input((2, 3, 4, 5, 3), dtype, seed=6)  # 3 spatial axes: the reference fails here
    (y,) = evaluate(helper.make_node("GlobalMaxPool", ["X"], ["Y"]), x, {"": 22})
    assert_identical(y, ref_global_max_pool(x))
    (y,) = evaluate(helper.make_node("GlobalLpPool", ["X"], ["Y"], p=3), x, {"": 22})
    assert_identical(y, ref_global_lp_pool(x, 3))
    (y,) = evaluate(helper.make_node("GlobalLpPool", ["X"], ["Y"]), x, {"": 22})  # p = 2
    assert_identical(y, ref_global_lp_pool(x, 2))


def test_reference_evaluator_nhwc_domain_with_activation():
    x = make_input((2, 7, 6, 4), np.float32, seed=7, specials=False)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], domain=NHWC_DOMAIN,
                            activation="Clip", activation_params=[-0.5, 1.0], **attrs)  # fmt: skip
    y, indices = evaluate(node, x, {"": 22, NHWC_DOMAIN: 11})
    expected_y, expected_i = ref_max_pool(x, layout="NHWC", **attrs)
    assert_identical(y, np.clip(expected_y, np.float32(-0.5), np.float32(1.0)))
    assert_identical(indices, expected_i)


def test_reference_evaluator_checks_the_model_opset():
    x = np.zeros((1, 1, 4, 4), dtype=np.int8)
    node = helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2])
    with pytest.raises(TypeError, match=r"MaxPool-11 \(opset 11\) does not support dtype int8"):
        evaluate(node, x, {"": 11})


def max_pool_node(outputs=("Y",), **attrs):
    return helper.make_node("MaxPool", ["X"], list(outputs), **attrs)


X32 = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)

# (node, input, opset, error, message): each version rule of each operator.
REFUSED = [
    (max_pool_node(("Y", "I"), kernel_shape=[2, 2]), X32, 7, ValueError,
     r"MaxPool-1 \(opset 7\) has at most 1 output"),
    (max_pool_node(kernel_shape=[2, 2], storage_order=0), X32, 7, ValueError,
     r"MaxPool-1 \(opset 7\) has no attribute 'storage_order'"),
    (max_pool_node(kernel_shape=[2, 2], dilations=[1, 1]), X32, 9, ValueError,
     r"MaxPool-8 \(opset 9\) has no attribute 'dilations'"),
    (max_pool_node(kernel_shape=[2, 2], ceil_mode=1), X32, 9, ValueError,
     r"MaxPool-8 \(opset 9\) has no attribute 'ceil_mode'"),
    (max_pool_node(kernel_shape=[2, 2]), X32.astype(np.int8), 11, TypeError,
     r"MaxPool-11 \(opset 11\) does not support dtype int8"),
    (max_pool_node(kernel_shape=[2, 2]), X32.astype(np.uint8), 11, TypeError,
     r"MaxPool-11 \(opset 11\) does not support dtype uint8"),
    (max_pool_node(kernel_shape=[2, 2]), X32.astype(ml_dtypes.bfloat16), 21, TypeError,
     r"MaxPool-12 \(opset 21\) does not support dtype bfloat16"),
    (helper.make_node("GlobalMaxPool", ["X"], ["Y"]), X32.astype(ml_dtypes.bfloat16), 21,
     TypeError, r"GlobalMaxPool-1 \(opset 21\) does not support dtype bfloat16"),
    (helper.make_node("GlobalMaxPool", ["X"], ["Y"]), X32.astype(np.int8), 22,
     TypeError, r"GlobalMaxPool-22 \(opset 22\) does not support dtype int8"),
    (helper.make_node("GlobalLpPool", ["X"], ["Y"]), X32.astype(ml_dtypes.bfloat16), 21,
     TypeError, r"GlobalLpPool-2 \(opset 21\) does not support dtype bfloat16"),
    (helper.make_node("GlobalLpPool", ["X"], ["Y"], p=2), X32, 1, ValueError,
     r"GlobalLpPool-1 \(opset 1\): attribute 'p' must be of type FLOAT, got INT"),
    (helper.make_node("GlobalLpPool", ["X"], ["Y"], p=2.0), X32, 2, ValueError,
     r"GlobalLpPool-2 \(opset 2\): attribute 'p' must be of type INT, got FLOAT"),
    (max_pool_node(kernel_shape=[2.0, 2.0]), X32, 22, ValueError,
     r"attribute 'kernel_shape' must be of type INTS, got FLOATS"),
    (max_pool_node(kernel_shape=[2, 2], activation="Relu"), X32, 22, ValueError,
     r"MaxPool-22 \(opset 22\) has no attribute 'activation'"),
    (max_pool_node(strides=[1, 1]), X32, 22, ValueError, "'kernel_shape' is required"),
    (max_pool_node(kernel_shape=[2, 2], strides=[0, 1]), X32, 22, ValueError,
     r"strides\[0\] must be a positive integer, got 0"),
    (helper.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[2, 2]), X32, 22,
     ValueError, "fastpool has no operator ai.onnx:AveragePool"),
    (helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2], domain="com.example"),
     X32, 22, ValueError, "fastpool has no operator com.example:MaxPool"),
    (helper.make_node("GlobalMaxPool", ["X", "X2"], ["Y"]), X32, 22, ValueError,
     "takes one input"),
    (max_pool_node(kernel_shape=[2, 2]), X32, 0, ValueError,
     "opset must be a positive integer, got 0"),
    (max_pool_node(kernel_shape=[2, 2]), X32, {NHWC_DOMAIN: 11}, ValueError,
     "opset gives no version for the default domain"),
    (helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2], domain=NHWC_DOMAIN),
     X32, {"": 22, NHWC_DOMAIN: 10}, ValueError, "does not exist at opset 10"),
]  # fmt: skip


@pytest.mark.parametrize(("node", "x", "opset", "error", "message"), REFUSED)
def test_run_node_refuses(node, x, opset, error, message):
    with pytest.raises(error, match=message):
        run_node(node, [x], opset)


ACCEPTED = [
    (max_pool_node(kernel_shape=[2, 2], auto_pad="VALID", pads=[0, 0, 0, 0]), X32, 1),
    (max_pool_node(("Y", "I"), kernel_shape=[2, 2], storage_order=1), X32, 8),
    (max_pool_node(kernel_shape=[2, 2], dilations=[2, 1], ceil_mode=1), X32, 10),
    (max_pool_node(kernel_shape=[2, 2]), X32.astype(np.uint8), 12),
    (max_pool_node(("Y", "I"), kernel_shape=[2, 2]), X32.astype(ml_dtypes.bfloat16), 22),
    (helper.make_node("GlobalMaxPool", ["X"], ["Y"]), X32.astype(ml_dtypes.bfloat16), 22),
    (helper.make_node("GlobalLpPool", ["X"], ["Y"], p=3.0), X32, 1),
    (helper.make_node("GlobalLpPool", ["X"], ["Y"], p=3), X32, 2),
]


@pytest.mark.parametrize(("node", "x", "opset"), ACCEPTED)
def test_run_node_accepts_and_computes(node, x, opset):
    outputs = run_node(node, [x], opset)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    if node.op_type == "MaxPool":
        expected = ref_max_pool(x, **attrs)[: len(node.output)]
    elif node.op_type == "GlobalMaxPool":
        expected = [ref_global_max_pool(x)]
    else:
        expected = [ref_global_lp_pool(x, attrs["p"])]
    assert len(outputs) == len(node.output)
    for got, want in zip(outputs, expected):
        assert_identical(got, want)


def test_run_node_takes_a_node_proto():
    with pytest.raises(TypeError, match=r"node must be an onnx\.NodeProto"):
        run_node("MaxPool", [X32])


def test_missing_onnx_names_the_extra():
    code = (
        "import sys; sys.modules['onnx'] = None\n"
        "import fastpool.onnx\n"
        "try:\n    fastpool.onnx.reference_ops()\n"
        "except ImportError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pip install 'fastpool[onnx]'" in done.stdout


def test_cnn_models_agree_with_the_reference_evaluator():
    """scripts/onnx_models.py: the nine CNNs of the onnx wheel give the same outputs with
    fastpool's pooling operators as with the reference's own."""
    script = pathlib.Path(__file__).parents[1] / "scripts" / "onnx_models.py"
    done = subprocess.run([sys.executable, str(script), "--json"], capture_output=True,
                          text=True, timeout=1800, env=this_fastpool_env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 9, done.stdout
    assert all('"outputs_agree": true' in row for row in rows)
