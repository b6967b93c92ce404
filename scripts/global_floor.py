"""How close GlobalMaxPool is to the least time any parallel kernel could take on this machine.

    python scripts/global_floor.py [--quick]

(``--quick``: two small inputs, short blocks, to check that it runs.)

For each float32 input, times in the same process, in alternating blocks: numpy's
``x.max(axis=(2, 3))`` (np), fastpool's GlobalMaxPool (fp), and a loop on numba's threads that
only reads each plane once and keeps the largest of its bits as integers (floor): no NaN rule,
no call overhead, a preallocated output; timed plain and with the prefetching blocks of fastpool's
kernel (see fastpool/_prefetch.py), the faster counting. floor / np is the least share of numpy's
time that any GlobalMaxPool using those threads can reach; when it is above 0.5, "twice as fast
as numpy" is out of reach on this machine for that input, however good the kernel.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import get_num_threads, njit, prange

import fastpool
from fastpool import _bench
from fastpool._bench import geomean
from fastpool._max_kernels import GLOBAL_PREFETCH_BYTES, PREFETCH_BLOCK
from fastpool._prefetch import CACHE_LINE, prefetch


@njit(parallel=True)
def read_max(bits, out, threads):
    """out[p] = the largest of plane p's bits, one share of the planes per thread."""
    planes = out.shape[0]
    size = bits.shape[0] // planes
    for share in prange(threads):
        for plane in range(share * planes // threads, (share + 1) * planes // threads):
            at = plane * size
            largest = bits[at]
            for i in range(size):
                # an unsigned index: no negative-index wraparound, so the loop vectorises
                largest = max(bits[np.uint64(at + i)], largest)
            out[plane] = largest


@njit(parallel=True)
def read_max_prefetching(bits, out, threads):
    """read_max in blocks that first ask for the lines GLOBAL_PREFETCH_BYTES ahead."""
    planes = out.shape[0]
    size = bits.shape[0] // planes
    ahead = GLOBAL_PREFETCH_BYTES // bits.itemsize
    step = CACHE_LINE // bits.itemsize
    for share in prange(threads):
        for plane in range(share * planes // threads, (share + 1) * planes // threads):
            at = plane * size
            largest = bits[at]
            done = size - size % PREFETCH_BLOCK
            for s in range(at, at + done, PREFETCH_BLOCK):
                for line in range(s + ahead, s + ahead + PREFETCH_BLOCK, step):
                    prefetch(bits, line)
                for i in range(s, s + PREFETCH_BLOCK):
                    largest = max(bits[np.uint64(i)], largest)
            for i in range(at + done, at + size):
                largest = max(bits[np.uint64(i)], largest)
            out[plane] = largest


def main(argv):
    quick = "--quick" in argv
    shapes = _bench.GLOBAL_QUICK_SHAPES if quick else _bench.GLOBAL_SHAPES
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.05)
    threads = get_num_threads()
    rng = np.random.default_rng(0)
    floor_over_np, fp_over_np = [], []
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        bits = x.reshape(-1).view(np.int32)
        largest = np.empty(shape[0] * shape[1], dtype=np.int32)
        # every plane holds a positive number (hundreds of normal samples), so the largest
        # bits are its maximum: the floor loops do the whole reduction
        for loop in (read_max, read_max_prefetching):
            largest[:] = 0
            loop(bits, largest, threads)  # (compiled before the timing)
            if not np.array_equal(largest.view(np.float32), x.max(axis=(2, 3)).reshape(-1)):
                sys.exit(f"the floor loop's maxima differ from numpy's on {shape}")
        calls = {
            "np": lambda x=x: _bench.numpy_global_max(x),
            "fp": lambda x=x: fastpool.global_max_pool(x),
            "plain": lambda b=bits, o=largest: read_max(b, o, threads),
            "prefetching": lambda b=bits, o=largest: read_max_prefetching(b, o, threads),
        }
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        t["floor"] = min(t["plain"], t["prefetching"])
        floor_over_np.append(t["floor"] / t["np"])
        fp_over_np.append(t["fp"] / t["np"])
        print(
            f"{'x'.join(map(str, shape)):<16} np {t['np'] * 1e6:8.1f} us  "
            f"fp {t['fp'] * 1e6:8.1f} us  floor {t['floor'] * 1e6:8.1f} us "
            f"({'prefetching' if t['prefetching'] < t['plain'] else 'plain'})  "
            f"fp/np {fp_over_np[-1]:.3f}  floor/np {floor_over_np[-1]:.3f}  "
            f"fp/floor {t['fp'] / t['floor']:.2f}",
            flush=True,
        )
    print(f"{threads} threads, geometric means: fp/np {geomean(fp_over_np):.3f}, "
          f"floor/np {geomean(floor_over_np):.3f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
