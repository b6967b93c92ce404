"""Two versions of fastpool's kernels timed against each other in one process.

    python scripts/ab_kernels.py OLD_TREE NEW_TREE [NAME ...] [--indices] [--batch B[,B]]
                                 [--dtype D] [--threads N] [--blocks N] [--quick]

OLD_TREE and NEW_TREE are directories holding a ``fastpool`` package (a checkout, or a
``git worktree add /tmp/old <rev>``). Each is imported in turn: the first one's ``max_pool`` is
kept, every ``fastpool`` module is then dropped from ``sys.modules`` and the second imported,
so that both live in this process, each with its own globals and its own kernel cache (a tree
whose kernels were never compiled compiles them here, which takes minutes).

For each case of ``python -m fastpool bench`` whose name contains one of the NAMEs (all of them
without a NAME), in --dtype (float32, float16, float64, uint8 or int8; default float32), at the
batch sizes given (default 1): both outputs must be equal, then old and new are timed in
alternating blocks (``_bench.time_blocks``, as ``bench`` times its peers; --blocks, default 9)
and the medians printed, with new / old and its geometric mean over the cases. ``--indices``
times the calls with Indices, ``--threads N`` runs on N of numba's threads. ``--quick``: short
blocks, to check that it runs.

Not a fair comparison where the change is inside a kernel compiled on its own (one that
another kernel calls, not inlined, such as ``_pitch_columns``): in the case checked
(2026-12-05), both trees ran the code of the tree whose kernel was called first, and timed
alike. Time such changes with each tree in its own process, pinned to one CPU, against a peer
timed in the same process (docs/measurements.md, "Two trees in one process").
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys

import numba
import numpy as np


def load_max_pool(tree: pathlib.Path):
    """fastpool.max_pool as imported from ``tree``, after dropping any fastpool imported before."""
    for name in [name for name in sys.modules if name.split(".")[0] == "fastpool"]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    try:
        import fastpool
    finally:
        sys.path.remove(str(tree))
    found = pathlib.Path(fastpool.__file__).resolve()
    if not found.is_relative_to(tree.resolve()):
        raise SystemExit(f"ab_kernels.py: fastpool came from {found}, not from {tree}")
    return fastpool.max_pool


def main(argv):
    parser = argparse.ArgumentParser(prog="ab_kernels.py", description=__doc__.split("\n")[0])
    parser.add_argument("old_tree", type=pathlib.Path)
    parser.add_argument("new_tree", type=pathlib.Path)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--indices", action="store_true")
    parser.add_argument("--batch", default="1")
    parser.add_argument(
        "--dtype", default="float32", choices=["float32", "float16", "float64", "uint8", "int8"]
    )
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--blocks", type=int, default=9)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    for tree in (args.old_tree, args.new_tree):
        if not (tree / "fastpool" / "__init__.py").is_file():
            parser.error(f"{tree} holds no fastpool package")
    if args.blocks < 1:
        parser.error("--blocks must be at least 1")
    if args.threads:
        numba.set_num_threads(args.threads)  # (raises for more threads than numba has)
    versions = {"old": load_max_pool(args.old_tree), "new": load_max_pool(args.new_tree)}
    from fastpool import _bench  # (the new tree's workload; both trees share its cases)

    batches = [int(b) for b in args.batch.split(",")]
    cases = [case for batch in batches
             for case in _bench.cnn_cases(batch) + _bench.extra_cases(batch)
             if not args.names or any(name in case.name for name in args.names)]  # fmt: skip
    if not cases:
        raise SystemExit("ab_kernels.py: no case matches " + " ".join(args.names))
    blocks, block_seconds = (2, 0.002) if args.quick else (args.blocks, 0.05)
    rng = np.random.default_rng(0)
    ratios = []
    for case in cases:
        if args.dtype in ("uint8", "int8"):
            info = np.iinfo(args.dtype)
            x = rng.integers(info.min, info.max, case.shape, endpoint=True, dtype=args.dtype)
        else:
            x = rng.standard_normal(case.shape).astype(args.dtype)
        calls = {label: functools.partial(f, x, return_indices=args.indices, **case.attrs)
                 for label, f in versions.items()}  # fmt: skip
        old_out, new_out = calls["old"](), calls["new"]()  # (compiles, if it must)
        if not args.indices:
            old_out, new_out = (old_out,), (new_out,)
        for old_part, new_part in zip(old_out, new_out):
            if not np.array_equal(old_part, new_part, equal_nan=True):
                raise SystemExit(f"ab_kernels.py: old and new differ on {case.name}")
        seconds = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        old_s, new_s = seconds["old"], seconds["new"]
        ratios.append(new_s / old_s)
        print(f"{case.name:50s} old {old_s * 1e6:9.1f} us  new {new_s * 1e6:9.1f} us  "
              f"new/old {new_s / old_s:.3f}", flush=True)  # fmt: skip
    print(f"{len(ratios)} cases, geometric mean new/old {_bench.geomean(ratios):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
