"""What a small call costs, and how much of it is Python.

    python scripts/small_calls.py [--against OLD_TREE] [--quick]

(``--quick``: short blocks, to check that it runs.)

For small inputs (2-D, with and without Indices, 1-D, 3-D, channels last, float16, uint8, and
GlobalMaxPool) it times, in alternating blocks (``_bench.time_blocks``, as ``bench`` times its
peers), medians of 9, the public call and the kernel
entry alone, called with the arguments the call gave it (captured once). The difference is
the call's Python side: checks, the plan look-up, output allocation, views and the launch.
The kernel entry's own time includes numba's dispatch of its arguments (about 0.1 us each).

``--against OLD_TREE`` times this tree's public functions against those of
``OLD_TREE/fastpool/_api.py`` loaded into the same process on this tree's kernels, after
checking that both give the same outputs: an A/B of the Python side alone, for trees whose
kernels are the same.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib

import numpy as np

import fastpool
from fastpool import _api, _bench

# (name, input shape, dtype, call keywords); None as the keywords: GlobalMaxPool
CASES = [
    ("1x1x4x4 2x2", (1, 1, 4, 4), np.float32, dict(kernel_shape=[2, 2])),
    (
        "1x1x4x4 2x2 Indices",
        (1, 1, 4, 4),
        np.float32,
        dict(kernel_shape=[2, 2], return_indices=True),
    ),
    (
        "1x8x8x8 3x3/2 pads 1",
        (1, 8, 8, 8),
        np.float32,
        dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    ),
    ("1x4x16 1-D k3", (1, 4, 16), np.float32, dict(kernel_shape=[3])),
    ("1x4x4x4x4 3-D 2x2x2", (1, 4, 4, 4, 4), np.float32, dict(kernel_shape=[2, 2, 2])),
    ("1x4x4x8 NHWC 2x2", (1, 4, 4, 8), np.float32, dict(kernel_shape=[2, 2], layout="NHWC")),
    ("1x1x4x4 2x2 float16", (1, 1, 4, 4), np.float16, dict(kernel_shape=[2, 2])),
    ("1x1x4x4 2x2 uint8", (1, 1, 4, 4), np.uint8, dict(kernel_shape=[2, 2])),
    ("GlobalMaxPool 1x64x7x7", (1, 64, 7, 7), np.float32, None),
]


def _call(module, x, keywords):
    if keywords is None:
        return lambda: module.global_max_pool(x)
    return lambda: module.max_pool(x, **keywords)


def _kernel_call(x, keywords):
    """The kernel entry the public call runs, with the arguments it gets."""
    captured = []
    launch = _api._launch

    def spy(serial_kernel, parallel_kernel, serial, args):
        captured.append((serial_kernel if serial else parallel_kernel, serial, args))
        launch(serial_kernel, parallel_kernel, serial, args)

    _api._launch = spy
    try:
        _call(_api, x, keywords)()
    finally:
        _api._launch = launch
    ((kernel, serial, args),) = captured
    threads = 1 if serial else _api._thread_count()
    return lambda: kernel(*args, threads)


def _same(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(u.shape == v.shape and u.tobytes() == v.tobytes() for u, v in zip(a, b))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="OLD_TREE", help="a tree to A/B the Python side")
    parser.add_argument("--quick", action="store_true", help="short blocks")
    args = parser.parse_args(argv)
    blocks, seconds = (3, 0.002) if args.quick else (9, 0.05)
    old = None
    if args.against:
        path = pathlib.Path(args.against) / "fastpool" / "_api.py"
        if not path.is_file():
            parser.error(f"no {path}")
        spec = importlib.util.spec_from_file_location("fastpool._api_against", path)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
    rng = np.random.default_rng(0)
    for name, shape, dtype, keywords in CASES:
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        calls = {"call": _call(fastpool, x, keywords), "kernel": _kernel_call(x, keywords)}
        if old is not None:
            calls["old call"] = _call(old, x, keywords)
            if not _same(calls["call"](), calls["old call"]()):
                raise SystemExit(f"{name}: the two trees' outputs differ")
        t = {
            name: seconds_a_call * 1e6
            for name, seconds_a_call in _bench.time_blocks(
                calls, blocks=blocks, block_seconds=seconds
            ).items()
        }
        line = (f"{name:24s} call {t['call']:6.2f} us  kernel entry {t['kernel']:6.2f} us  "
                f"Python {t['call'] - t['kernel']:6.2f} us")  # fmt: skip
        if old is not None:
            line += f"  old call {t['old call']:6.2f} us  new/old {t['call'] / t['old call']:.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
