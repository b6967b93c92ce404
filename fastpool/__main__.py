"""``python -m fastpool``: the self-check; ``... warmup``: compile every kernel ahead of time;
``... bench``: the benchmark against onnxruntime and torch."""

import sys


def _main(argv: list[str]) -> int:
    if argv[:1] == ["warmup"]:
        import argparse
        import os

        from fastpool._warmup import warmup

        parser = argparse.ArgumentParser(
            prog="python -m fastpool warmup",
            description="Compile every kernel ahead of time into numba's disk cache.",
        )
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        parser.add_argument(
            "--jobs",
            type=int,
            default=cores or os.cpu_count() or 1,
            help="processes compiling at once (default: the usable cores)",
        )
        args = parser.parse_args(argv[1:])
        if args.jobs < 1:
            parser.error("--jobs must be at least 1")
        warmup(jobs=args.jobs)
        return 0
    if argv[:1] == ["bench"]:
        from fastpool._bench import main

        return main(argv[1:])
    if argv:
        print(
            "usage: python -m fastpool [warmup [--jobs N] | bench [--json] [--quick] "
            "[--dtype D] [--indices] [--layout L]]",
            file=sys.stderr,
        )
        return 2
    from fastpool._selfcheck import main

    return main()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
