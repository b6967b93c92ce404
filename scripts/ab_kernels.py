"""Two versions of fastpool's kernels timed against each other.

    python scripts/ab_kernels.py OLD_TREE NEW_TREE [NAME ...] [--indices] [--batch B[,B]]
                                 [--dtype D] [--threads N] [--rounds R] [--blocks N]
                                 [--same-process] [--quick]

OLD_TREE and NEW_TREE are directories holding a ``fastpool`` package (a checkout, or a
``git worktree add /tmp/old <rev>``). A tree whose kernels were never compiled compiles them
in the first process that calls them, which takes minutes (copying ``fastpool/__pycache__``
from a checkout of the same commit gives a warm cache).

The cases are those of ``python -m fastpool bench`` whose names contain one of the NAMEs (all
of them without a NAME), in --dtype (float32, float16, float64, uint8 or int8; default
float32), at the batch sizes given (default 1). ``--indices`` times the calls with Indices.
``--quick``: two short rounds, to check that it runs.

By default each tree runs in processes of its own, --rounds of them (default 4), the two trees'
processes alternating (old new, new old, old new, ...). Each process is pinned (on Linux) to
--threads CPUs (default 1, the last ones this process may use), numba runs on as many
threads, and in it fastpool is timed against onnxruntime's values call on the same data with
as many threads, in alternating blocks (``_bench.time_blocks``, --blocks of them, default
9). onnxruntime is the yardstick that takes out the machine's drift between processes:
new/old is the ratio of the two trees' medians of fastpool / onnxruntime, and the range after
it that of the rounds, each round's new process against its old one. The outputs of every
process must be equal.

``--same-process``: both trees imported into this process, one after the other, and timed
directly against each other in alternating blocks (--threads 0, the default there, leaves
numba's number of threads alone). Not a fair comparison where the change is inside a kernel
compiled on its own (one that another kernel calls, not inlined, such as ``_pitch_columns``):
in the case checked (2026-12-05), both trees ran the code of the tree whose kernel was called
first, and timed alike (docs/measurements.md, "Two trees in one process").
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve()
ROOT = HERE.parents[1]  # the checkout holding this script: its _bench has the workload


def load_fastpool(tree: pathlib.Path):
    """The fastpool package as imported from ``tree``, after dropping any fastpool imported
    before (modules already taken from the one before keep working)."""
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
    return fastpool


def workload_helpers():
    """This checkout's ``fastpool._bench`` (imports fastpool, calls no kernel)."""
    load_fastpool(ROOT)
    return importlib.import_module("fastpool._bench")


def make_input(rng, shape, dtype: str) -> np.ndarray:
    if dtype in ("uint8", "int8"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)
    return rng.standard_normal(shape).astype(dtype)


def outputs_of(result, indices: bool) -> tuple:
    return tuple(result) if indices else (result,)


def digest(parts) -> str:
    """A fingerprint of a call's outputs: dtype, shape and bytes of each."""
    sha = hashlib.sha256()
    for part in parts:
        part = np.ascontiguousarray(part)
        sha.update(f"{part.dtype.str}{part.shape}".encode())
        sha.update(part.tobytes())
    return sha.hexdigest()


def child(spec: dict) -> None:
    """One process of the per-process mode: this tree's fastpool against onnxruntime, on each
    case, one JSON line each (seconds and the outputs' digest)."""
    helpers = workload_helpers()
    max_pool = load_fastpool(pathlib.Path(spec["tree"])).max_pool
    rng = np.random.default_rng(0)
    for name, shape, attrs in spec["cases"]:
        x = make_input(rng, shape, spec["dtype"])
        ours = functools.partial(max_pool, x, return_indices=spec["indices"], **attrs)
        fingerprint = digest(outputs_of(ours(), spec["indices"]))  # (compiles, if it must)
        peer = helpers.onnxruntime_session("MaxPool", attrs, x, threads=spec["threads"])
        if peer is None:
            raise SystemExit(f"ab_kernels.py: onnxruntime has no MaxPool for {name}")
        calls = {"fastpool": ours, "onnxruntime": peer}
        seconds = helpers.time_blocks(calls, spec["blocks"], spec["block_seconds"])
        print(json.dumps(dict(name=name, digest=fingerprint, **seconds)), flush=True)


def run_child(tree: pathlib.Path, spec: dict, cpus: list[int] | None) -> dict:
    """The per-case results of one process of ``tree``, pinned to ``cpus`` (None: not
    pinned)."""
    env = dict(os.environ, NUMBA_NUM_THREADS=str(spec["threads"]),
               OMP_NUM_THREADS=str(spec["threads"]), OPENBLAS_NUM_THREADS="1")  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(HERE), "--child"],
        input=json.dumps(dict(spec, tree=str(tree))),
        capture_output=True,
        text=True,
        env=env,
        # (pinned in the child before it runs anything, so every thread it starts inherits it)
        preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
    )
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise SystemExit(f"ab_kernels.py: the process of {tree} failed: {message[0]}")
    return {row["name"]: row for row in map(json.loads, done.stdout.splitlines())}


def per_process(args, cases, parser) -> list[float]:
    if importlib.util.find_spec("onnxruntime") is None:
        raise SystemExit("ab_kernels.py: each tree is timed against onnxruntime, which is not "
                         "installed (--same-process needs no peer)")  # fmt: skip
    threads = args.threads or 1
    if hasattr(os, "sched_getaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if threads > len(allowed):
            parser.error(f"--threads {threads}: this process may use {len(allowed)} CPUs")
        cpus = allowed[-threads:]  # (the last ones: the first often takes the interrupts)
    else:  # (not Linux: no pinning)
        cpus = None
    rounds = args.rounds  # (two with --quick)
    spec = dict(cases=[[c.name, list(c.shape), c.attrs] for c in cases], dtype=args.dtype,
                indices=args.indices, threads=threads, blocks=args.blocks,
                block_seconds=args.block_seconds)  # fmt: skip
    trees = {"old": args.old_tree, "new": args.new_tree}
    results = {"old": [], "new": []}
    fingerprints: dict = {}
    for r in range(rounds):
        for label in ("old", "new") if r % 2 == 0 else ("new", "old"):
            print(f"round {r + 1}/{rounds}: {label} ({trees[label]}), CPUs {cpus or 'any'}",
                  file=sys.stderr, flush=True)  # fmt: skip
            rows = run_child(trees[label], spec, cpus)
            for case in cases:
                seen = fingerprints.setdefault(case.name, (label, rows[case.name]["digest"]))
                if seen[1] != rows[case.name]["digest"]:
                    if seen[0] == label:
                        raise SystemExit(f"ab_kernels.py: {label} gave different outputs on "
                                         f"{case.name} in two processes")  # fmt: skip
                    raise SystemExit(f"ab_kernels.py: old and new differ on {case.name}")
            results[label].append(rows)
    ratios = []
    for case in cases:
        old = [rows[case.name] for rows in results["old"]]
        new = [rows[case.name] for rows in results["new"]]
        old_rel = [row["fastpool"] / row["onnxruntime"] for row in old]
        new_rel = [row["fastpool"] / row["onnxruntime"] for row in new]
        ratio = float(np.median(new_rel) / np.median(old_rel))
        per_round = [n / o for n, o in zip(new_rel, old_rel)]
        ratios.append(ratio)
        old_s = np.median([row["fastpool"] for row in old])
        new_s = np.median([row["fastpool"] for row in new])
        peer_s = np.median([row["onnxruntime"] for row in old + new])
        print(f"{case.name:50s} old {old_s * 1e6:9.1f} us  new {new_s * 1e6:9.1f} us  "
              f"onnxruntime {peer_s * 1e6:9.1f} us  new/old {ratio:.3f} "
              f"({min(per_round):.3f}-{max(per_round):.3f})", flush=True)  # fmt: skip
    return ratios


def same_process(args, cases, helpers) -> list[float]:
    import numba

    if args.threads:
        numba.set_num_threads(args.threads)  # (raises for more threads than numba has)
    versions = {"old": load_fastpool(args.old_tree).max_pool,
                "new": load_fastpool(args.new_tree).max_pool}  # fmt: skip
    rng = np.random.default_rng(0)
    ratios = []
    for case in cases:
        x = make_input(rng, case.shape, args.dtype)
        calls = {label: functools.partial(f, x, return_indices=args.indices, **case.attrs)
                 for label, f in versions.items()}  # fmt: skip
        old_out = outputs_of(calls["old"](), args.indices)  # (compiles, if it must)
        new_out = outputs_of(calls["new"](), args.indices)
        for old_part, new_part in zip(old_out, new_out):
            if not np.array_equal(old_part, new_part, equal_nan=True):
                raise SystemExit(f"ab_kernels.py: old and new differ on {case.name}")
        seconds = helpers.time_blocks(calls, args.blocks, args.block_seconds)
        old_s, new_s = seconds["old"], seconds["new"]
        ratios.append(new_s / old_s)
        print(f"{case.name:50s} old {old_s * 1e6:9.1f} us  new {new_s * 1e6:9.1f} us  "
              f"new/old {new_s / old_s:.3f}", flush=True)  # fmt: skip
    return ratios


def main(argv):
    if argv[:1] == ["--child"]:
        child(json.load(sys.stdin))
        return
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
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--blocks", type=int, default=9)
    parser.add_argument("--same-process", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    for tree in (args.old_tree, args.new_tree):
        if not (tree / "fastpool" / "__init__.py").is_file():
            parser.error(f"{tree} holds no fastpool package")
    if args.blocks < 1 or args.rounds < 1:
        parser.error("--blocks and --rounds must be at least 1")
    if args.threads < 0:
        parser.error("--threads must be at least 1 (0: the default)")
    # (--quick: two short rounds of two short blocks, in either mode)
    args.rounds, args.blocks = (2, 2) if args.quick else (args.rounds, args.blocks)
    args.block_seconds = 0.002 if args.quick else 0.05
    batches = [int(b) for b in args.batch.split(",")]
    helpers = workload_helpers()
    cases = [case for batch in batches
             for case in helpers.cnn_cases(batch) + helpers.extra_cases(batch)
             if not args.names or any(name in case.name for name in args.names)]  # fmt: skip
    if not cases:
        raise SystemExit("ab_kernels.py: no case matches " + " ".join(args.names))
    if args.same_process:
        ratios = same_process(args, cases, helpers)
    else:
        ratios = per_process(args, cases, parser)
    print(f"{len(ratios)} cases, geometric mean new/old {helpers.geomean(ratios):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
