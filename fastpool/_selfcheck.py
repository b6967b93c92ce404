"""``python -m fastpool``: run every operator on the specifications' worked examples.

Prints one row per example (pass/fail and the time of a call) and a timing table against
numpy and, when installed, onnxruntime on a typical CNN layer. Exit status 1 on any failure.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import fastpool
from fastpool._bench import onnxruntime_session, time_blocks
from fastpool._examples import EXAMPLES, Example


def _run(example: Example, layout: str = "NCHW"):
    attrs = dict(example.attrs)
    x = example.x if layout == "NCHW" else np.ascontiguousarray(np.moveaxis(example.x, 1, -1))
    if example.op == "GlobalMaxPool":
        outputs = [fastpool.global_max_pool(x, layout=layout)]
    elif example.op == "GlobalLpPool":
        outputs = [fastpool.global_lp_pool(x, attrs.get("p", 2), layout=layout)]
    else:
        want = example.indices is not None
        result = fastpool.max_pool(
            x, attrs.pop("kernel_shape"), return_indices=want, layout=layout, **attrs
        )
        outputs = list(result) if want else [result]
    return [out if layout == "NCHW" else np.moveaxis(out, -1, 1) for out in outputs]


def _identical(actual: np.ndarray, expected: np.ndarray) -> bool:
    return (
        actual.dtype == expected.dtype
        and actual.shape == expected.shape
        and actual.tobytes() == np.ascontiguousarray(expected).tobytes()
    )


def check_example(example: Example) -> tuple[bool, float]:
    """Whether fastpool reproduces the example in both layouts; seconds per NCHW call."""
    expected = [example.y] if example.indices is None else [example.y, example.indices]
    ok = all(_identical(a, e) for a, e in zip(_run(example), expected))
    if not example.attrs.get("storage_order"):  # column-major indices are NCHW only
        ok = ok and all(_identical(a, e) for a, e in zip(_run(example, "NHWC"), expected))
    return ok, time_blocks({"example": lambda: _run(example)}, block_seconds=0.004)["example"]


def numpy_max_pool(x, kernel, strides, pads):
    """MaxPool in plain numpy (pad with -inf, sliding windows): the timing peer."""
    rank = len(kernel)
    padded = np.pad(
        x,
        [(0, 0), (0, 0)] + [(pads[i], pads[rank + i]) for i in range(rank)],
        constant_values=-np.inf,
    )
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel, axis=tuple(range(2, x.ndim)))
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in strides))]
    return windows.max(axis=tuple(range(x.ndim, windows.ndim)))


def _timed_row(label, peers: dict, agree: bool):
    """(label, fastpool s, numpy s, onnxruntime s or None, agree), timed in one run."""
    peers = {name: call for name, call in peers.items() if call is not None}
    times = time_blocks(peers)
    return label, times["fastpool"], times["numpy"], times.get("onnxruntime"), agree


def _timings():
    """One timed row per operator, on typical layers."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 112, 112)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    agree = np.array_equal(
        fastpool.max_pool(x, **attrs), numpy_max_pool(x, [3, 3], [2, 2], [1, 1, 1, 1])
    )
    rows = [
        _timed_row(
            "MaxPool 1x64x112x112 float32, 3x3 s2 p1",
            {
                "fastpool": lambda: fastpool.max_pool(x, **attrs),
                "numpy": lambda: numpy_max_pool(x, [3, 3], [2, 2], [1, 1, 1, 1]),
                "onnxruntime": onnxruntime_session("MaxPool", attrs, x),
            },
            bool(agree),
        )
    ]
    x = rng.standard_normal((8, 256, 14, 14)).astype(np.float32)
    expected = x.max(axis=(2, 3), keepdims=True)
    rows.append(
        _timed_row(
            "GlobalMaxPool 8x256x14x14 float32",
            {
                "fastpool": lambda: fastpool.global_max_pool(x),
                "numpy": lambda: x.max(axis=(2, 3), keepdims=True),
                "onnxruntime": onnxruntime_session("GlobalMaxPool", {}, x),
            },
            bool(np.array_equal(fastpool.global_max_pool(x), expected)),
        )
    )
    expected = np.sqrt((x.astype(np.float64) ** 2).sum(axis=(2, 3), keepdims=True))
    rows.append(
        _timed_row(
            "GlobalLpPool p=2 8x256x14x14 float32",
            {
                "fastpool": lambda: fastpool.global_lp_pool(x),
                "numpy": lambda: np.sqrt((x * x).sum(axis=(2, 3), keepdims=True)),
                "onnxruntime": onnxruntime_session("GlobalLpPool", {"p": 2}, x),
            },
            bool(np.allclose(fastpool.global_lp_pool(x), expected, rtol=1e-6)),
        )
    )
    return rows


def _us(seconds):
    return "-" if seconds is None else f"{seconds * 1e6:,.1f} us"


def main(out=sys.stdout) -> int:
    start = time.perf_counter()
    print(
        f"fastpool {fastpool.__version__} self-check "
        "(the first call of each kernel compiles it, or loads it from the disk cache)\n",
        file=out,
    )
    failures = 0
    width = max(len(e.name) for e in EXAMPLES)
    print(f"{'worked example':<{width}}  {'operator':<13}  result  time/call", file=out)
    for example in EXAMPLES:
        ok, seconds = check_example(example)
        failures += not ok
        print(
            f"{example.name:<{width}}  {example.op:<13}  {'pass' if ok else 'FAIL':<6}  "
            f"{_us(seconds)}",
            file=out,
            flush=True,
        )
    print(
        f"\n{'timing (median of 5 blocks, gc off)':<42}  {'fastpool':>12}  {'numpy':>12}  "
        f"{'onnxruntime':>12}  agree",
        file=out,
    )
    for label, ours, numpy_time, ort_time, agree in _timings():
        failures += not agree
        print(
            f"{label:<42}  {_us(ours):>12}  {_us(numpy_time):>12}  {_us(ort_time):>12}  "
            f"{'yes' if agree else 'NO'}",
            file=out,
            flush=True,
        )
    verdict = "all passed" if not failures else f"{failures} FAILED"
    print(f"\n{len(EXAMPLES)} examples, {verdict} ({time.perf_counter() - start:.1f} s)", file=out)
    return 1 if failures else 0
