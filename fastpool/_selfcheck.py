"""``python -m fastpool``: run every operator on the specifications' worked examples.

Prints one row per example (pass/fail and the time of a call) and a timing table against
numpy and, when installed, onnxruntime on a typical CNN layer. Exit status 1 on any failure.
"""

from __future__ import annotations

import gc
import sys
import time

import numpy as np

import fastpool
from fastpool._bench import onnxruntime_session
from fastpool._examples import EXAMPLES, Example


def _time_call(call, min_seconds=0.05, repeats=5) -> float:
    """Median seconds per call over a few blocks of calls (garbage collector off)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _median_block(call, min_seconds, repeats)
    finally:
        if collecting:
            gc.enable()


def _median_block(call, min_seconds, repeats) -> float:
    call()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds / repeats or number >= 1 << 20:
            break
        number *= 4
    blocks = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            call()
        blocks.append((time.perf_counter() - start) / number)
    return float(np.median(blocks))


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
    return ok, _time_call(lambda: _run(example), min_seconds=0.02)


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


def _timings():
    """(label, fastpool s, numpy s, onnxruntime s or None, agree) on typical layers."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 112, 112)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = fastpool.max_pool(x, **attrs)
    peer_y = numpy_max_pool(x, attrs["kernel_shape"], attrs["strides"], attrs["pads"])
    ort = onnxruntime_session("MaxPool", attrs, x)
    rows = [
        (
            "MaxPool 1x64x112x112 float32, 3x3 s2 p1",
            _time_call(lambda: fastpool.max_pool(x, **attrs)),
            _time_call(lambda: numpy_max_pool(x, [3, 3], [2, 2], [1, 1, 1, 1])),
            _time_call(ort) if ort else None,
            bool(np.array_equal(y, peer_y)),
        )
    ]
    x = rng.standard_normal((8, 256, 14, 14)).astype(np.float32)
    ort = onnxruntime_session("GlobalMaxPool", {}, x)
    rows.append(
        (
            "GlobalMaxPool 8x256x14x14 float32",
            _time_call(lambda: fastpool.global_max_pool(x)),
            _time_call(lambda: x.max(axis=(2, 3), keepdims=True)),
            _time_call(ort) if ort else None,
            bool(np.array_equal(fastpool.global_max_pool(x), x.max(axis=(2, 3), keepdims=True))),
        )
    )
    ort = onnxruntime_session("GlobalLpPool", {"p": 2}, x)
    reference = np.sqrt((x.astype(np.float64) ** 2).sum(axis=(2, 3), keepdims=True))
    rows.append(
        (
            "GlobalLpPool p=2 8x256x14x14 float32",
            _time_call(lambda: fastpool.global_lp_pool(x)),
            _time_call(lambda: np.sqrt((x * x).sum(axis=(2, 3), keepdims=True))),
            _time_call(ort) if ort else None,
            bool(np.allclose(fastpool.global_lp_pool(x), reference, rtol=1e-6)),
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
        f"\n{'timing (median of 5 blocks)':<42}  {'fastpool':>12}  {'numpy':>12}  "
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
