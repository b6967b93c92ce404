"""ONNX's own conformance cases, from the installed onnx package.

``collect_testcases`` registers cases in a module-global list and generates them only once per
process, so the cases are collected in a child process and handed over as a pickle.
"""

from __future__ import annotations

import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import assert_identical

import fastpool

onnx = pytest.importorskip("onnx")

OPS = ("MaxPool", "GlobalMaxPool", "GlobalLpPool")

COLLECT = textwrap.dedent(
    """
    import pickle, sys, warnings
    warnings.simplefilter("ignore")
    from onnx import helper, numpy_helper
    from onnx.backend.test.case.node import collect_testcases

    ops = sys.argv[2:]
    cases = []
    for case in collect_testcases(None):
        node = case.model.graph.node[0]
        if node.op_type not in ops:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for inputs, outputs in case.data_sets:
            cases.append(dict(name=case.name, op=node.op_type, attrs=attrs,
                              n_outputs=len(node.output), inputs=inputs, outputs=outputs))
    with open(sys.argv[1], "wb") as f:
        pickle.dump(cases, f)
    """
)


def _collect(tmp_dir: pathlib.Path):
    path = tmp_dir / "cases.pkl"
    subprocess.run([sys.executable, "-c", COLLECT, str(path), *OPS], check=True)
    with open(path, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def conformance_cases(tmp_path_factory):
    return {case["name"]: case for case in _collect(tmp_path_factory.mktemp("onnx"))}


# The cases onnx 1.23 generates for these operators (checked, so a missing one is noticed).
EXPECTED_CASES = [
    "test_globalmaxpool",
    "test_globalmaxpool_precomputed",
    "test_maxpool_1d_default",
    "test_maxpool_2d_ceil",
    "test_maxpool_2d_ceil_output_size_reduce_by_one",
    "test_maxpool_2d_default",
    "test_maxpool_2d_dilations",
    "test_maxpool_2d_pads",
    "test_maxpool_2d_precomputed_pads",
    "test_maxpool_2d_precomputed_same_upper",
    "test_maxpool_2d_precomputed_strides",
    "test_maxpool_2d_same_lower",
    "test_maxpool_2d_same_upper",
    "test_maxpool_2d_strides",
    "test_maxpool_2d_uint8",
    "test_maxpool_3d_default",
    "test_maxpool_3d_dilations",
    "test_maxpool_3d_dilations_use_ref_impl",
    "test_maxpool_3d_dilations_use_ref_impl_large",
    "test_maxpool_with_argmax_2d_precomputed_pads",
    "test_maxpool_with_argmax_2d_precomputed_strides",
]


def run_onnx_node(op, attrs, inputs, n_outputs):
    attrs = dict(attrs)
    x = inputs[0]
    if op == "GlobalMaxPool":
        return [fastpool.global_max_pool(x)]
    if op == "GlobalLpPool":
        return [fastpool.global_lp_pool(x, attrs.get("p", 2))]
    result = fastpool.max_pool(x, attrs.pop("kernel_shape"), return_indices=n_outputs == 2, **attrs)
    return list(result) if n_outputs == 2 else [result]


def test_all_cases_collected(conformance_cases):
    assert set(EXPECTED_CASES) <= set(conformance_cases)


def check_case(case):
    outputs = run_onnx_node(case["op"], case["attrs"], case["inputs"], case["n_outputs"])
    assert len(outputs) == len(case["outputs"])
    for actual, expected in zip(outputs, case["outputs"]):
        assert_identical(actual, expected)


@pytest.mark.parametrize("name", EXPECTED_CASES)
def test_onnx_node_case(conformance_cases, name):
    check_case(conformance_cases[name])


def test_cases_added_by_newer_onnx(conformance_cases):
    for name in sorted(set(conformance_cases) - set(EXPECTED_CASES)):
        check_case(conformance_cases[name])


PYTORCH_DIR = pathlib.Path(onnx.__file__).parent / "backend/test/data/pytorch-converted"
PYTORCH_CASES = sorted(p.name for p in PYTORCH_DIR.glob("test_MaxPool*"))


def test_pytorch_cases_found():
    assert len(PYTORCH_CASES) >= 8, PYTORCH_CASES


def _load_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return onnx.numpy_helper.to_array(tensor)


@pytest.mark.parametrize("name", PYTORCH_CASES)
def test_pytorch_converted_model(name):
    model = onnx.load(str(PYTORCH_DIR / name / "model.onnx"))
    (node,) = [n for n in model.graph.node if n.op_type == "MaxPool"]
    assert len(model.graph.node) == 1
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    data_sets = sorted((PYTORCH_DIR / name).glob("test_data_set_*"))
    assert data_sets
    for data_set in data_sets:
        x = _load_tensor(data_set / "input_0.pb")
        expected = _load_tensor(data_set / "output_0.pb")
        (actual,) = run_onnx_node("MaxPool", attrs, [x], len(node.output))
        np.testing.assert_array_equal(actual, expected)
        assert actual.dtype == expected.dtype
