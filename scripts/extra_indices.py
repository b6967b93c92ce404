"""The benchmark's extra shapes at batch 1, float32, with Indices: fastpool's values, fastpool's
Indices and onnxruntime's Indices timed in one process.

    python scripts/extra_indices.py [name ...]

(names: substrings of the case names, e.g. ``16000`` or ``d2x2``; none: all seven.)

Each case is first checked against onnxruntime (values and Indices equal), then timed in
alternating blocks (``fastpool._bench.time_blocks``, medians of 7). Prints the times, Indices
/ values and Indices / onnxruntime's Indices. See "Indices" in docs/measurements.md.
"""

from __future__ import annotations

import sys

import numpy as np

import fastpool
from fastpool import _bench


def main(names: list[str]) -> None:
    rng = np.random.default_rng(0)
    for case in _bench.extra_cases(1):
        if names and not any(name in case.name for name in names):
            continue
        x = rng.standard_normal(case.shape).astype(np.float32)
        attrs = case.attrs
        peer = _bench.onnxruntime_session("MaxPool", attrs, x, outputs=2)
        y, indices = fastpool.max_pool(x, **attrs, return_indices=True)
        y_peer, indices_peer = peer()
        assert np.array_equal(y, y_peer) and np.array_equal(indices, indices_peer), case.name
        times = _bench.time_blocks(
            {
                "values": lambda x=x, attrs=attrs: fastpool.max_pool(x, **attrs),
                "indices": lambda x=x, attrs=attrs: fastpool.max_pool(
                    x, **attrs, return_indices=True
                ),
                "onnxruntime": peer,
            },
            blocks=7,
            block_seconds=0.1,
        )
        values, with_indices, other = times["values"], times["indices"], times["onnxruntime"]
        print(
            f"{case.name:50s} values {values * 1e3:8.3f} ms  Indices {with_indices * 1e3:8.3f}"
            f"  onnxruntime Indices {other * 1e3:8.3f}  Indices/values"
            f" {with_indices / values:6.2f}  Indices/onnxruntime {with_indices / other:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
