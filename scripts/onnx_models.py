"""Run the CNNs shipped in the onnx wheel through onnx's ReferenceEvaluator, with its own
pooling operators and with fastpool's, check that the outputs agree, and report the time
spent in the pooling nodes either way.

    python scripts/onnx_models.py            # all nine models
    python scripts/onnx_models.py --json     # one JSON line per model

Needs the onnx extra. The models are onnx/backend/test/data/light/light_*.onnx; each gets a
seeded random input of its declared shape.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

import fastpool.onnx

POOLING = ("MaxPool", "GlobalMaxPool", "GlobalLpPool")
MODELS = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def model_paths() -> list[pathlib.Path]:
    return sorted(MODELS.glob("light_*.onnx"))


def timed(cls: type, clock: dict) -> type:
    """A subclass of an operator class that adds the time of each run to clock[name]."""

    def _run(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return cls._run(self, *args, **kwargs)
        finally:
            clock[cls.__name__] = clock.get(cls.__name__, 0.0) + time.perf_counter() - start

    return type(cls.__name__, (cls,), {"_run": _run, "op_domain": cls.op_domain})


def reference_pooling_ops() -> list[type]:
    from onnx.reference.ops import load_op

    return [load_op("", name) for name in POOLING if name != "GlobalLpPool"]


def model_input(model: onnx.ModelProto) -> tuple[str, np.ndarray]:
    initialized = {i.name for i in model.graph.initializer}
    (graph_input,) = [i for i in model.graph.input if i.name not in initialized]
    shape = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    return graph_input.name, np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def run_model(path: pathlib.Path) -> dict:
    model = onnx.load(path)
    name, x = model_input(model)
    pooling_nodes = [n.op_type for n in model.graph.node if n.op_type in POOLING]
    results, seconds = {}, {}
    for label, ops in (("reference", reference_pooling_ops()),
                       ("fastpool", fastpool.onnx.reference_ops())):  # fmt: skip
        clock: dict = {}
        evaluator = ReferenceEvaluator(model, new_ops=[timed(op, clock) for op in ops])
        evaluator.run(None, {name: x})  # once to warm up (fastpool compiles or loads kernels)
        clock.clear()
        results[label] = evaluator.run(None, {name: x})
        seconds[label] = sum(clock.values())
    agree = all(
        a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
        for a, b in zip(results["reference"], results["fastpool"])
    )
    return {
        "model": path.stem.removeprefix("light_"),
        "input": list(x.shape),
        "pooling_nodes": len(pooling_nodes),
        "outputs_agree": bool(agree),
        "reference_pooling_s": seconds["reference"],
        "fastpool_pooling_s": seconds["fastpool"],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON line per model")
    args = parser.parse_args(argv)
    rows = [run_model(path) for path in model_paths()]
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print(f"{'model':<14} {'pool nodes':>10} {'reference ms':>13} {'fastpool ms':>12} "
              f"{'speed-up':>9}  outputs")  # fmt: skip
        for r in rows:
            ref, fast = 1e3 * r["reference_pooling_s"], 1e3 * r["fastpool_pooling_s"]
            print(f"{r['model']:<14} {r['pooling_nodes']:>10} {ref:>13.2f} {fast:>12.2f} "
                  f"{ref / fast if fast else float('nan'):>8.1f}x  "
                  f"{'agree' if r['outputs_agree'] else 'DIFFER'}")  # fmt: skip
    return 0 if rows and all(r["outputs_agree"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
