"""MaxPool on large inputs: the memory bandwidth it reaches and what the second thread gives.

    python scripts/large_inputs.py [--quick]

(``--quick``: small inputs, short blocks, to check that it runs.)

For each float32 input, with and without Indices, times in the same process, in alternating
blocks, with preallocated outputs: fastpool's MaxPool on all of numba's threads (fp), the same
call on one thread (one; ``numba.set_num_threads(1)`` before it, as a caller would), and
``np.copyto`` from the input into an array of its size (copy), and a numba copy split over
the threads like the kernels' work, on all of numba's threads and on one. Bandwidth counts
the bytes a call must read and write once each: the input, the values and, with Indices, 8
bytes an output; a copy moves twice the input's bytes. ``fp/copy`` is fastpool's rate over
the copy's (our aim: at least 0.70), ``one/fp`` what the second thread gives (our aim: at
least 1.6x), and ``copy one/all`` what it gives the plain copy: where the memory bus is
what limits, no kernel's second thread can give much more than that. See the README's
Benchmarks and docs/measurements.md.
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from numba import njit, prange

import fastpool
from fastpool import _bench
from fastpool._bench import geomean

# (shape, attributes): ResNet's stem pooling at batch 32, VGG-19's first pooling at batch 8
CASES = [
    ((32, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((8, 64, 224, 224), {"kernel_shape": [2, 2], "strides": [2, 2]}),
]
QUICK_CASES = [
    ((2, 16, 56, 56), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 16, 56, 56), {"kernel_shape": [2, 2], "strides": [2, 2]}),
]


@njit(parallel=True)
def parallel_copy(source, target):
    """target[:] = source[:] (1-D arrays), in blocks over the threads numba runs."""
    n = source.shape[0]
    blocks = 8 * numba.get_num_threads()
    for block in prange(blocks):
        for i in range(block * n // blocks, (block + 1) * n // blocks):
            # (unsigned indices: a signed one keeps the loop from vectorising)
            target[np.uint64(i)] = source[np.uint64(i)]


def on_threads(threads: int, call):
    """``call`` run with numba's thread count set to ``threads`` first."""

    def run():
        numba.set_num_threads(threads)
        call()

    return run


def main(argv):
    quick = "--quick" in argv
    cases = QUICK_CASES if quick else CASES
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.2)
    threads = numba.get_num_threads()
    rng = np.random.default_rng(0)
    fp_over_copy, speedups, copy_speedups = [], [], []
    for shape, attrs in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        copy = np.empty_like(x)
        flat_x, flat_copy = x.reshape(-1), copy.reshape(-1)  # (views, made once)
        parallel_copy(flat_x, flat_copy)
        if not np.array_equal(copy, x):
            sys.exit(f"the parallel copy is wrong on {shape}")
        for indices in (False, True):
            out = fastpool.max_pool(x, return_indices=indices, **attrs)
            numba.set_num_threads(1)
            alone = fastpool.max_pool(x, return_indices=indices, **attrs)
            numba.set_num_threads(threads)
            outs, alones = (out, alone) if indices else ((out,), (alone,))
            if not all(np.array_equal(a, b) for a, b in zip(outs, alones)):
                sys.exit(f"one thread and {threads} give different results on {shape}")

            def copy_in_parallel(source=flat_x, target=flat_copy):
                parallel_copy(source, target)

            def pool(x=x, attrs=attrs, indices=indices, out=out):
                fastpool.max_pool(x, return_indices=indices, out=out, **attrs)

            calls = {
                "fp": on_threads(threads, pool),
                "one": on_threads(1, pool),
                "copy": lambda x=x, copy=copy: np.copyto(copy, x),
                "copy all": on_threads(threads, copy_in_parallel),
                "copy one": on_threads(1, copy_in_parallel),
            }
            try:
                t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
            finally:
                numba.set_num_threads(threads)
            moved = x.nbytes + sum(array.nbytes for array in outs)
            rate, copy_rate = moved / t["fp"], 2 * x.nbytes / t["copy"]
            fp_over_copy.append(rate / copy_rate)
            speedups.append(t["one"] / t["fp"])
            copy_speedups.append(t["copy one"] / t["copy all"])
            name = _bench._describe(shape, attrs) + (" indices" if indices else "")
            print(
                f"{name:<44} fp {t['fp'] * 1e3:7.2f} ms  one {t['one'] * 1e3:7.2f} ms  "
                f"copy {t['copy'] * 1e3:7.2f} ms  fp {rate / 1e9:5.1f} GB/s  "
                f"copy {copy_rate / 1e9:5.1f} GB/s  fp/copy {fp_over_copy[-1]:.2f}  "
                f"one/fp {speedups[-1]:.2f}  copy one/all {copy_speedups[-1]:.2f}",
                flush=True,
            )
    print(f"{threads} threads, geometric means: fp/copy {geomean(fp_over_copy):.2f}, "
          f"one/fp {geomean(speedups):.2f}, copy one/all {geomean(copy_speedups):.2f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
