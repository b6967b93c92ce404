"""Every worked example of the operator specifications (../shared/seeds/).

Two independent routes: the examples transcribed into ``fastpool._examples`` (what
``python -m fastpool`` runs), and the specification texts themselves, whose example code is
executed with a recording ``expect`` and whose SONNX matrices are parsed from the text.
"""

from __future__ import annotations

import pathlib
import re
import textwrap

import numpy as np
import pytest
from conftest import assert_identical

import fastpool
from fastpool._examples import EXAMPLES

SEEDS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="shared/seeds not beside the repo")


def run_example(op, attrs, x, layout="NCHW", want_indices=False):
    attrs = dict(attrs)
    if layout == "NHWC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    if op == "GlobalMaxPool":
        outputs = [fastpool.global_max_pool(x, layout=layout)]
    elif op == "GlobalLpPool":
        outputs = [fastpool.global_lp_pool(x, attrs.get("p", 2), layout=layout)]
    else:
        result = fastpool.max_pool(
            x, attrs.pop("kernel_shape"), return_indices=want_indices, layout=layout, **attrs
        )
        outputs = list(result) if want_indices else [result]
    if layout == "NHWC":
        outputs = [np.moveaxis(out, -1, 1) for out in outputs]
    return outputs


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_transcribed_example(example, layout):
    if layout == "NHWC" and example.attrs.get("storage_order"):
        # column-major indices are NCHW only (SEMANTICS.md section 3)
        with pytest.raises(ValueError, match="storage_order must be 0 with layout 'NHWC'"):
            run_example(example.op, example.attrs, example.x, layout, want_indices=True)
        return
    outputs = run_example(
        example.op, example.attrs, example.x, layout, want_indices=example.indices is not None
    )
    assert_identical(outputs[0], example.y)
    if example.indices is not None:
        assert_identical(outputs[1], example.indices)


def code_blocks(text: str):
    """The indented literal blocks after '::' lines in an RST page."""
    for match in re.finditer(r"::\n\n((?:(?: {4}.*)?\n)+)", text):
        yield textwrap.dedent(match.group(1))


def recorded_examples(seed_file: pathlib.Path):
    """Run each precomputed example of a seed page, recording what it passes to expect()."""
    onnx = pytest.importorskip("onnx")
    recorded = []

    def expect(node, inputs, outputs, name):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        recorded.append((name, node.op_type, attrs, inputs, outputs))

    for block in code_blocks(seed_file.read_text()):
        if "expect(" not in block or "x = np.array(" not in block:
            continue  # random-data examples are covered by the conformance tests
        exec(block, {"np": np, "onnx": onnx, "expect": expect})
    return recorded


SEED_PAGES = {"000": "GlobalMaxPool", "001": "MaxPool", "004": "MaxPool (NHWC)"}


@needs_seeds
@pytest.mark.parametrize("prefix", SEED_PAGES)
def test_seed_page_examples(prefix):
    (page,) = SEEDS.glob(f"{prefix}_*.txt")
    recorded = recorded_examples(page)
    assert len(recorded) >= (1 if prefix == "000" else 8)
    transcribed = {e.name: e for e in EXAMPLES}
    layout = "NHWC" if prefix == "004" else "NCHW"  # the channels-last domain's page
    for name, op, attrs, inputs, outputs in recorded:
        if layout == "NHWC" and attrs.get("storage_order"):
            # column-major indices are NCHW only (SEMANTICS.md section 3)
            with pytest.raises(ValueError, match="storage_order must be 0 with layout 'NHWC'"):
                run_example(op, attrs, inputs[0], layout, want_indices=True)
            layout_here = "NCHW"
        else:
            layout_here = layout
        actual = run_example(op, attrs, inputs[0], layout_here, want_indices=len(outputs) == 2)
        for a, e in zip(actual, outputs):
            assert_identical(a, e)
        # the transcription python -m fastpool runs matches the page
        example = transcribed[name.removeprefix("test_")]
        assert_identical(example.x, inputs[0])
        assert_identical(example.y, outputs[0])
        for key, value in attrs.items():
            value = value.decode() if isinstance(value, bytes) else value
            assert example.attrs.get(key) == value, (name, key)


def parse_matrix(text: str, label: str, shape, dtype):
    """The numbers printed after '$label$:' in the SONNX page."""
    start = re.search(rf"\${label}\$: *\n\s*\[\[\[\[", text).start()
    body = text[start + len(label) + 3 :]
    end = body.index("]]]]")
    numbers = re.findall(r"-?\d+(?:\.\d+)?", body[:end])
    return np.array([float(n) for n in numbers], dtype=dtype).reshape(shape)


@needs_seeds
def test_sonnx_example_1():
    (page,) = SEEDS.glob("002_*.txt")
    text = page.read_text()
    x = parse_matrix(text, "X", (1, 1, 8, 8), np.float64)
    y = parse_matrix(text, "Y", (1, 1, 6, 6), np.float64)
    indices = parse_matrix(text, "Indices", (1, 1, 6, 6), np.int64)
    attrs = dict(
        auto_pad="NOTSET", dilations=[1, 1], kernel_shape=[3, 3], pads=[0, 0, 0, 0], strides=[1, 1]
    )
    for layout in ("NCHW", "NHWC"):
        actual_y, actual_indices = run_example("MaxPool", attrs, x, layout, want_indices=True)
        assert_identical(actual_y, y)
        assert_identical(actual_indices, indices)
    (example,) = [e for e in EXAMPLES if e.name == "sonnx_maxpool_example_1"]
    assert_identical(example.x, x)
    assert_identical(example.y, y)
    assert_identical(example.indices, indices)
