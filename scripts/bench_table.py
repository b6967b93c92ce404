"""Regenerate the benchmark table in README.md from a real run.

    python scripts/bench_table.py            # runs `python -m fastpool bench --json`
    python scripts/bench_table.py run.jsonl  # or reads a saved run

Writes the table between the <!-- bench-table --> markers, with the machine, date and
command under it, and a bar chart of the ratios to docs/benchmark.png (needs matplotlib,
in the bench extra).
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np

from fastpool._bench import geomean

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "fastpool", "bench", "--json"]
START, END = "<!-- bench-table -->", "<!-- /bench-table -->"


def load(argv):
    if argv:
        return [json.loads(line) for line in pathlib.Path(argv[0]).read_text().splitlines()]
    out = subprocess.run(COMMAND, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def cpu_model() -> str:
    """The processor's name (Linux), as the ratios depend on it: the same kernels compare
    differently with onnxruntime's on an AMD and on an Intel machine."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def table(rows):
    peers = [p for p in ("onnxruntime", "torch") if any(p in r["seconds"] for r in rows)]
    lines = [
        "| case | fastpool | " + " | ".join(f"{p} | ratio" for p in peers) + " |",
        "|---|---:|" + "---:|---:|" * len(peers),
    ]
    for r in rows:
        cells = [r["case"], f"{r['seconds']['fastpool'] * 1e6:,.0f} us"]
        for p in peers:
            t = r["seconds"].get(p)
            cells += (
                ["-", "-"]
                if t is None
                else [f"{t * 1e6:,.0f} us", f"{r['seconds']['fastpool'] / t:.2f}"]
            )
        lines.append("| " + " | ".join(cells) + " |")
    summary = []
    for p in peers:
        ratios = [r["seconds"]["fastpool"] / r["seconds"][p] for r in rows if p in r["seconds"]]
        summary.append(
            f"fastpool / {p}: geometric mean {geomean(ratios):.2f} over {len(ratios)} cases"
        )
    machine = (f"{cpu_model()}, {platform.machine()}, {os.cpu_count()} cores, "
               f"Python {platform.python_version()}")  # fmt: skip
    date = datetime.date.today().isoformat()
    return "\n".join(
        [
            *lines,
            "",
            "; ".join(summary) + ".",
            "",
            f"Ratios below 1 mean fastpool is faster. Machine: {machine}. Date: {date}. "
            f"Command: `python -m fastpool bench --json` (float32, values only), "
            f"tabulated by `python scripts/bench_table.py`.",
        ]
    )


def chart(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    peers = [p for p in ("onnxruntime", "torch") if any(p in r["seconds"] for r in rows)]
    fig, ax = plt.subplots(figsize=(9, 0.18 * len(rows) + 1.5))
    positions = np.arange(len(rows))
    height = 0.8 / len(peers)
    for k, peer in enumerate(peers):
        ratios = [r["seconds"]["fastpool"] / r["seconds"][peer] if peer in r["seconds"]
                  else np.nan for r in rows]  # fmt: skip
        ax.barh(positions + k * height, ratios, height, label=f"fastpool / {peer}")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(positions + height * (len(peers) - 1) / 2)
    ax.set_yticklabels([r["case"] for r in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("time ratio (below 1: fastpool is faster)")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv):
    rows = load(argv)
    try:
        chart(rows, ROOT / "docs" / "benchmark.png")
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
    readme = ROOT / "README.md"
    text = readme.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n{table(rows)}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
