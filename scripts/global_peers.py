"""GlobalMaxPool and GlobalLpPool (p = 2) against numpy and onnxruntime on large inputs.

    python scripts/global_peers.py [--quick]   # onnxruntime when installed (with onnx)

(``--quick``: two small inputs, short blocks, to check that it runs.)

For each float32 input, times in the same process, in alternating blocks: fastpool's call
(fp), numpy's ``x.max(axis=(2, 3), keepdims=True)`` or ``np.sqrt((x * x).sum(axis=(2, 3),
keepdims=True))`` (np), and onnxruntime's GlobalMaxPool or GlobalLpPool node with its default
CPU settings (ort). Before the timing, each peer's output is checked against fastpool's (equal
for the maximum, within float32 rounding for the norm). Our aims (README, Benchmarks):
GlobalMaxPool at least twice numpy's speed (fp/np <= 0.5) and no slower than onnxruntime
(fp/ort <= 1.0); GlobalLpPool the same.
"""

from __future__ import annotations

import sys

import numpy as np

import fastpool
from fastpool import _bench
from fastpool._bench import geomean

OPERATORS = [
    ("max", "GlobalMaxPool", {}, fastpool.global_max_pool, _bench.numpy_global_max),
    (
        "lp2",
        "GlobalLpPool",
        {"p": 2},
        lambda x: fastpool.global_lp_pool(x, p=2),
        _bench.numpy_global_norm,
    ),
]


def main(argv):
    quick = "--quick" in argv
    shapes = _bench.GLOBAL_QUICK_SHAPES if quick else _bench.GLOBAL_SHAPES
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.05)
    rng = np.random.default_rng(0)
    ratios = {(name, peer): [] for name, *_ in OPERATORS for peer in ("np", "ort")}
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        for name, op, attrs, ours, theirs in OPERATORS:
            calls = {"fp": lambda x=x, f=ours: f(x), "np": lambda x=x, f=theirs: f(x)}
            session = _bench.onnxruntime_session(op, attrs, x)
            if session is not None:
                calls["ort"] = lambda s=session: s()[0]
            expected = calls["fp"]()
            for peer in ("np", "ort"):
                if peer not in calls:
                    continue
                got = calls[peer]()
                # (a maximum is exact; a norm's sum depends on the order of the additions)
                same = (np.array_equal(got, expected) if name == "max"
                        else np.allclose(got, expected, rtol=1e-5, atol=0))  # fmt: skip
                if got.shape != expected.shape or not same:
                    sys.exit(f"{op}: {peer} and fastpool differ on {shape}")
            t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
            line = f"{'x'.join(map(str, shape)):<16} {name:<4} fp {t['fp'] * 1e6:8.1f} us"
            for peer in ("np", "ort"):
                if peer in t:
                    ratios[name, peer].append(t["fp"] / t[peer])
                    line += f"  {peer} {t[peer] * 1e6:8.1f} us  fp/{peer} {t['fp'] / t[peer]:.3f}"
            print(line, flush=True)
    means = ", ".join(
        f"{name} fp/{peer} {geomean(values):.3f}"
        for (name, peer), values in ratios.items()
        if values
    )
    print(f"geometric means: {means}")


if __name__ == "__main__":
    main(sys.argv[1:])
