"""``python -m fastpool``: the self-check; ``... warmup``: compile every kernel ahead of time;
``... bench``: the benchmark against onnxruntime and torch."""

import sys


def _main(argv: list[str]) -> int:
    if argv == ["warmup"]:
        from fastpool._warmup import warmup

        warmup()
        return 0
    if argv[:1] == ["bench"]:
        from fastpool._bench import main

        return main(argv[1:])
    if argv:
        print(
            "usage: python -m fastpool [bench [--json] [--quick] [--dtype D] [--indices]]",
            file=sys.stderr,
        )
        return 2
    from fastpool._selfcheck import main

    return main()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
