"""The benchmark's extra shapes at batch 1, float32, with Indices: fastpool's values, fastpool's
Indices and onnxruntime's Indices timed in one process.

    python scripts/extra_indices.py [name ...]

(names: substrings of the case names, e.g. ``16000`` or ``d2x2``; none: all seven.)

Each case is first checked against onnxruntime (values and Indices equal), then timed in
alternating blocks (``fastpool._bench.time_blocks``, medians of 7). Prints the times, Indices
/ values and Indices / onnxruntime's Indices. See "Indices" in docs/measurements.md.
"""

from __future__ import annotations

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import fastpool
from fastpool import _bench


def onnxruntime_session(shape: tuple[int, ...], attrs: dict) -> ort.InferenceSession:
    """A session running one MaxPool with both outputs."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph(
        [node],
        "maxpool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def time_case(x: np.ndarray, attrs: dict, session: ort.InferenceSession) -> dict:
    """Median seconds per call: fastpool's values, its Indices, onnxruntime's Indices."""
    return _bench.time_blocks(
        {
            "values": lambda: fastpool.max_pool(x, **attrs),
            "indices": lambda: fastpool.max_pool(x, **attrs, return_indices=True),
            "onnxruntime": lambda: session.run(None, {"x": x}),
        },
        blocks=7,
        block_seconds=0.1,
    )


def main(names: list[str]) -> None:
    rng = np.random.default_rng(0)
    for case in _bench.extra_cases(1):
        if names and not any(name in case.name for name in names):
            continue
        x = rng.standard_normal(case.shape).astype(np.float32)
        session = onnxruntime_session(case.shape, case.attrs)
        y, indices = fastpool.max_pool(x, **case.attrs, return_indices=True)
        y_ort, indices_ort = session.run(None, {"x": x})
        assert np.array_equal(y, y_ort) and np.array_equal(indices, indices_ort), case.name
        times = time_case(x, case.attrs, session)
        values, with_indices, peer = times["values"], times["indices"], times["onnxruntime"]
        print(
            f"{case.name:50s} values {values * 1e3:8.3f} ms  Indices {with_indices * 1e3:8.3f}"
            f"  onnxruntime Indices {peer * 1e3:8.3f}  Indices/values"
            f" {with_indices / values:6.2f}  Indices/onnxruntime {with_indices / peer:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
