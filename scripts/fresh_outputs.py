"""What new output arrays cost at large batch sizes, against buffers passed with ``out=``.

    python scripts/fresh_outputs.py [--inputs N] [--quick]   # default 4 inputs

(``--quick``: one small layer, short blocks, to check that it runs.)

Each timed round pools N different inputs in turn and keeps every round's results until the
round ends, as a network's forward pass keeps its activations. For each layer it times, in
alternating blocks, the values call and the Indices call, each with new outputs (fresh) and
with the same preallocated buffers every round (out=), and counts the minor page faults per
call (the kernel's handing out of new memory pages, which it fills with zeros first). Before
timing, it checks that both ways give the same outputs.

Large arrays come from the C library's allocator, which (glibc, by default) hands memory that
several freed results leave at the top of its heap back to the system, and takes new pages
for the next round: each costs a page fault. ``MALLOC_MMAP_THRESHOLD_`` and
``MALLOC_TRIM_THRESHOLD_`` (glibc's environment variables, set before the process starts)
change that for a whole program; run this script with and without them to see the effect.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

import fastpool

try:
    import resource
except ImportError:  # (not on Windows)
    resource = None

# (input shape, MaxPool attributes): the batch-8 layers of ResNet's stem, VGG-19's second and
# Inception v2's second pooling
LAYERS = [
    ((8, 64, 112, 112), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((8, 128, 112, 112), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((8, 192, 56, 56), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])),
]
QUICK_LAYERS = [((2, 16, 56, 56), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))]


def minor_faults() -> int:
    """Minor page faults of this process so far (0 where the resource module is missing)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def _calls(xs, ys, indices, attrs) -> dict:
    """The four timed rounds over the inputs xs: values and Indices, fresh and out=."""
    return {
        "values fresh": lambda: [fastpool.max_pool(x, **attrs) for x in xs],
        "values out=": lambda: [fastpool.max_pool(x, **attrs, out=y) for x, y in zip(xs, ys)],
        "indices fresh": lambda: [fastpool.max_pool(x, **attrs, return_indices=True) for x in xs],
        "indices out=": lambda: [
            fastpool.max_pool(x, **attrs, return_indices=True, out=(y, i))
            for x, y, i in zip(xs, ys, indices)
        ],
    }


def time_layer(shape, attrs, n_inputs: int, quick: bool) -> None:
    """Times one layer and prints its three lines."""
    blocks, rounds = (3, 2) if quick else (7, 5)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(n_inputs)]
    out_shape = fastpool.pool_output_shape(shape, **attrs)
    ys = [np.empty(out_shape, np.float32) for _ in xs]
    indices = [np.empty(out_shape, np.int64) for _ in xs]
    calls = _calls(xs, ys, indices, attrs)
    # one untimed round of each (the last one, Indices into out=, fills ys and indices)
    warm = {name: call() for name, call in calls.items()}
    for (y, i), y_out, i_out in zip(warm["indices fresh"], ys, indices):
        if not (np.array_equal(y, y_out) and np.array_equal(i, i_out)):
            raise SystemExit(f"fresh_outputs.py: out= gave other outputs on {shape}")
    del warm
    # (blocks timed here rather than by _bench.time_blocks: the page faults are counted
    # around each block)
    times = {name: [] for name in calls}
    faults = {name: [] for name in calls}
    for _ in range(blocks):
        for name, call in calls.items():
            before, start = minor_faults(), time.perf_counter()
            for _ in range(rounds):
                call()
            per_call = rounds * n_inputs
            times[name].append((time.perf_counter() - start) / per_call)
            faults[name].append((minor_faults() - before) / per_call)
    t = {name: statistics.median(v) for name, v in times.items()}
    f = {name: statistics.median(v) for name, v in faults.items()}
    label = "x".join(map(str, shape)) + " k" + "x".join(map(str, attrs["kernel_shape"]))
    for kind in ("values", "indices"):
        fresh_t, out_t = t[kind + " fresh"], t[kind + " out="]
        print(f"{label} {kind:7s} fresh {fresh_t * 1e6:7.0f} us ({f[kind + ' fresh']:5.0f} "
              f"faults/call), out= {out_t * 1e6:7.0f} us ({f[kind + ' out=']:3.0f}): "
              f"fresh/out= {fresh_t / out_t:.2f}", flush=True)  # fmt: skip
    print(f"{label} indices/values: fresh {t['indices fresh'] / t['values fresh']:.2f}, "
          f"out= {t['indices out='] / t['values out=']:.2f}", flush=True)  # fmt: skip


def _whole_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number >= 1, got {text!r}")
    return int(text)


def main(argv):
    parser = argparse.ArgumentParser(prog="fresh_outputs.py", description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=_whole_number, default=4, help="inputs in turn")
    parser.add_argument("--quick", action="store_true", help="one small layer, short blocks")
    # (one layer, in the process of its own that main starts for it)
    parser.add_argument("--layer", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    layers = QUICK_LAYERS if args.quick else LAYERS
    if args.layer is not None:
        time_layer(*layers[args.layer], args.inputs, args.quick)
        return
    # each layer in a new process: what the allocator does depends on what the process
    # allocated and freed before
    for number in range(len(layers)):
        options = ["--layer", str(number), "--inputs", str(args.inputs)]
        done = subprocess.run([sys.executable, __file__, *options] + ["--quick"] * args.quick,
                              check=False)  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(done.returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
