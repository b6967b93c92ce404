"""How much of the Indices path's extra time the Indices output alone explains.

    python scripts/indices_floor.py [batch] [--quick]   # default batch 8; needs onnx

(``--quick``: three layers, short blocks, to check that it runs.)

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
    numbers = [arg for arg in argv if arg != "--quick"]
    batch = int(numbers[0]) if numbers else 8
    cases = _bench.cnn_cases(batch)[: 3 if quick else None]
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.06)
    rng = np.random.default_rng(0)
    i_over_v, floor = [], []
    for case in cases:
        x = rng.standard_normal(case.shape).astype(np.float32)
        attrs = case.attrs
        y, indices = fastpool.max_pool(x, return_indices=True, **attrs)
        values_out = y.copy()
        written = np.empty(indices.size, dtype=np.int64)
        write_int64(written)  # (compiled before the timing)
        calls = {
            "v": lambda x=x, a=attrs, o=values_out: fastpool.max_pool(x, out=o, **a),
            "i": lambda x=x, a=attrs, y=y, k=indices: fastpool.max_pool(
                x, return_indices=True, out=(y, k), **a
            ),
            "w": lambda w=written: write_int64(w),
        }
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        i_over_v.append(t["i"] / t["v"])
        floor.append((t["v"] + t["w"]) / t["v"])
        print(
            f"{case.name:<48} v {t['v'] * 1e6:8.0f} us  i {t['i'] * 1e6:8.0f} us  "
            f"w {t['w'] * 1e6:7.0f} us  i/v {i_over_v[-1]:.2f}  (v+w)/v {floor[-1]:.2f}  "
            f"i/(v+w) {t['i'] / (t['v'] + t['w']):.2f}",
            flush=True,
        )
    print(f"batch {batch}, geometric means: i/v {geomean(i_over_v):.3f}, "
          f"(v+w)/v {geomean(floor):.3f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
