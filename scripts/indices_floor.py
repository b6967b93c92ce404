"""How much of the Indices path's extra time the Indices output alone explains.

    python scripts/indices_floor.py [batch] [--inputs N] [--quick]   # default batch 8; needs onnx

(``--quick``: three layers, short blocks, to check that it runs. ``--inputs N``: each timed
call goes through N different inputs in turn, default 1. On one input called again and
again, a layer whose values call fits the processor's last-level cache may stay there while
the Indices call, whose outputs take three times the bytes, does not; with inputs that
together exceed the cache, both calls read from memory.)

For each CNN layer of ``python -m fastpool bench``, times in the same process, in alternating
blocks, with preallocated outputs: the values call (v), the call with Indices (i), and a
parallel loop that does nothing but write an int64 array of the output's size (w). (v + w) / v
is what an Indices path with no more work than the values path would still take, as the
int64 Indices are written on top of the values; i / (v + w) is what is left for compute.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit, prange

import fastpool
from fastpool import _bench
from fastpool._bench import geomean


@njit(parallel=True)
def write_int64(out):
    """out[k] = k, on every thread numba has."""
    for k in prange(out.shape[0]):
        out[k] = k


def main(argv):
    quick = "--quick" in argv
    argv = [arg for arg in argv if arg != "--quick"]
    n_inputs = 1
    if "--inputs" in argv:
        at = argv.index("--inputs")
        if at + 1 >= len(argv) or not argv[at + 1].isdigit() or int(argv[at + 1]) < 1:
            raise SystemExit("indices_floor.py: --inputs needs a whole number >= 1")
        n_inputs = int(argv[at + 1])
        del argv[at : at + 2]
    batch = int(argv[0]) if argv else 8
    cases = _bench.cnn_cases(batch)[: 3 if quick else None]
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.06)
    rng = np.random.default_rng(0)
    i_over_v, floor = [], []
    for case in cases:
        xs = [rng.standard_normal(case.shape).astype(np.float32) for _ in range(n_inputs)]
        attrs = case.attrs
        y, indices = fastpool.max_pool(xs[0], return_indices=True, **attrs)
        values_out = y.copy()
        written = np.empty(indices.size, dtype=np.int64)
        write_int64(written)  # (compiled before the timing)

        # (each timed call goes through the N inputs; the times below are per input)
        def values(xs=xs, a=attrs, o=values_out):
            for x in xs:
                fastpool.max_pool(x, out=o, **a)

        def with_indices(xs=xs, a=attrs, y=y, k=indices):
            for x in xs:
                fastpool.max_pool(x, return_indices=True, out=(y, k), **a)

        def write(w=written, n=n_inputs):
            for _ in range(n):
                write_int64(w)

        calls = {"v": values, "i": with_indices, "w": write}
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        t = {name: seconds / n_inputs for name, seconds in t.items()}
        i_over_v.append(t["i"] / t["v"])
        floor.append((t["v"] + t["w"]) / t["v"])
        print(
            f"{case.name:<48} v {t['v'] * 1e6:8.0f} us  i {t['i'] * 1e6:8.0f} us  "
            f"w {t['w'] * 1e6:7.0f} us  i/v {i_over_v[-1]:.2f}  (v+w)/v {floor[-1]:.2f}  "
            f"i/(v+w) {t['i'] / (t['v'] + t['w']):.2f}",
            flush=True,
        )
    inputs = f", {n_inputs} inputs in turn" if n_inputs > 1 else ""
    print(f"batch {batch}{inputs}, geometric means: i/v {geomean(i_over_v):.3f}, "
          f"(v+w)/v {geomean(floor):.3f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
