"""``fastpool.warmup()`` / ``python -m fastpool warmup``: compile every kernel ahead of time."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import numpy as np

from fastpool import _api

FLOATS = ["float16", "float32", "float64", "bfloat16"]


def _steps():
    """(label, call) pairs that between them reach every kernel entry for every dtype."""
    steps = []
    for name in [*FLOATS, "int8", "uint8"]:
        for entry, shape in (("serial", (1, 2, 6, 6)), ("parallel", (1, 8, 64, 64))):
            steps.append((f"MaxPool {name} {entry}", name, shape, "max_pool"))
            steps.append((f"GlobalMaxPool {name} {entry}", name, shape, "global_max_pool"))
            if name in FLOATS:
                steps.append((f"GlobalLpPool {name} {entry}", name, shape, "global_lp_pool"))
    # 16-bit floats apply an activation in a second pass, in parallel on large outputs
    steps.append(("Activation float16 parallel", "float16", (1, 8, 256, 256), "activation"))
    return steps


def _array(dtype_name: str, shape) -> np.ndarray | None:
    if dtype_name == "bfloat16":
        dtype = np.dtype(np.float16)  # stands in below if ml_dtypes is missing
        try:
            import ml_dtypes

            dtype = np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return None  # no bfloat16 arrays can exist without ml_dtypes
    else:
        dtype = np.dtype(dtype_name)
    return np.zeros(shape, dtype=dtype)


def warmup(progress: bool = True, file: TextIO | None = None) -> int:
    """Compile every kernel for every dtype and entry, or load it from the disk cache.

    Parameters
    ----------
    progress : bool
        Print one line per step.
    file : text stream, optional
        Where progress goes (default: standard error).

    Returns
    -------
    int
        The number of steps run.
    """
    out = file if file is not None else sys.stderr
    steps = _steps()
    start = time.perf_counter()
    done = 0
    for i, (label, dtype_name, shape, function) in enumerate(steps):
        x = _array(dtype_name, shape)
        if x is None:
            continue
        began = time.perf_counter()
        for layout in ("NCHW", "NHWC"):
            if function == "activation":
                _api.max_pool(x, [1, 1], activation="Relu", layout=layout)
            elif function == "max_pool":
                # with an activation for the floats (16-bit ones apply it in a second pass)
                activation = "Relu" if dtype_name in FLOATS else None
                _api.max_pool(x, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], layout=layout,
                              return_indices=True, activation=activation)  # fmt: skip
                if layout == "NCHW":  # volumes without Indices: the volume kernel
                    volume = x.reshape(*x.shape[:2], 2, -1, x.shape[-1])
                    _api.max_pool(volume, [2, 2, 2], strides=[2, 2, 2], activation=activation)
                else:  # channels last without Indices: the channels-last kernel
                    _api.max_pool(x, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], layout=layout,
                                  activation=activation)  # fmt: skip
            else:
                getattr(_api, function)(x, layout=layout)
        done += 1
        if progress:
            print(f"[{i + 1}/{len(steps)}] {label}: {time.perf_counter() - began:.1f} s",
                  file=out, flush=True)  # fmt: skip
    if progress:
        print(f"warm: {done} steps in {time.perf_counter() - start:.1f} s", file=out)
    return done
