"""``fastpool.warmup()`` / ``python -m fastpool warmup``: compile every kernel ahead of time."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import threading
import time
from typing import TextIO

import numpy as np

from fastpool import _api
from fastpool._config import cache_lock_available, disk_cache_usable

FLOATS = ["float16", "float32", "float64", "bfloat16"]


def _steps():
    """(label, call) pairs that between them reach every kernel entry for every dtype."""
    # GlobalMaxPool's threshold counts bytes: planes of 64x64 enough for it, even of uint8
    global_planes = -(-_api._global_max_serial_below("NCHW") // (64 * 64))
    steps = []
    for name in [*FLOATS, "int8", "uint8"]:
        for entry, shape in (("serial", (1, 2, 6, 6)), ("parallel", (1, 8, 64, 64))):
            steps.append((f"MaxPool {name} {entry}", name, shape, "max_pool"))
            global_shape = (1, global_planes, 64, 64) if entry == "parallel" else shape
            steps.append((f"GlobalMaxPool {name} {entry}", name, global_shape,
                          "global_max_pool"))  # fmt: skip
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


def _group(dtype_name: str) -> str:
    """Steps that share compiled kernels: float16 and bfloat16 both reach them as uint16."""
    return "16-bit" if dtype_name in ("float16", "bfloat16") else dtype_name


def _run_steps(numbers: list[int], out: TextIO | None) -> int:
    """Run the given steps in this process (a progress line each, unless out is None); the
    number run."""
    steps = _steps()
    done = 0
    for i in numbers:
        label, dtype_name, shape, function = steps[i]
        x = _array(dtype_name, shape)
        if x is None:
            continue
        began = time.perf_counter()
        _run_step(x, dtype_name, function)
        done += 1
        if out is not None:
            print(f"[{i + 1}/{len(steps)}] {label}: {time.perf_counter() - began:.1f} s",
                  file=out, flush=True)  # fmt: skip
    return done


def _run_step(x: np.ndarray, dtype_name: str, function: str) -> None:
    for layout in ("NCHW", "NHWC"):
        if function == "activation":
            _api.max_pool(x, [1, 1], activation="Relu", layout=layout)
        elif function == "max_pool":
            # with an activation for the floats (16-bit ones apply it in a second pass)
            activation = "Relu" if dtype_name in FLOATS else None
            _api.max_pool(x, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], layout=layout,
                          return_indices=True, activation=activation)  # fmt: skip
            if layout == "NCHW":  # volumes: the volume kernel, and with Indices its own
                volume = x.reshape(*x.shape[:2], 2, -1, x.shape[-1])
                for return_indices in (False, True):
                    _api.max_pool(volume, [2, 2, 2], strides=[2, 2, 2],
                                  return_indices=return_indices, activation=activation)  # fmt: skip
            else:  # channels last without Indices: the channels-last kernel
                _api.max_pool(x, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], layout=layout,
                              activation=activation)  # fmt: skip
        else:
            getattr(_api, function)(x, layout=layout)


def _compile_in_processes(jobs: int, out: TextIO | None) -> None:
    """Compile the steps into the disk cache in up to ``jobs`` child processes at once, one
    group of steps sharing kernels per process (numba compiles on one thread)."""
    steps = _steps()
    groups: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        groups.setdefault(_group(step[1]), []).append(i)
    lock = threading.Lock()

    def compile_group(numbers: list[int]) -> int:
        code = ("import sys; from fastpool._warmup import _run_steps; "
                f"_run_steps({numbers!r}, sys.stdout)")  # fmt: skip
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)  # fmt: skip
        for line in child.stdout:
            if out is not None:
                with lock:
                    print(line, end="", file=out, flush=True)
        return child.wait()

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        codes = list(pool.map(compile_group, groups.values()))
    if any(codes) and out is not None:
        print("warmup: a compiling process failed; compiling the rest here", file=out)


def warmup(progress: bool = True, file: TextIO | None = None, jobs: int = 1) -> int:
    """Compile every kernel for every dtype and entry, or load it from the disk cache.

    Parameters
    ----------
    progress : bool
        Print one line per step.
    file : text stream, optional
        Where progress goes (default: standard error).
    jobs : int
        Processes compiling at once (numba compiles on one thread). With more than one,
        child processes compile into the disk cache and this process then loads every
        kernel from it. Without a usable disk cache, or without the file lock that keeps
        processes from damaging it (``fcntl``, missing on Windows), everything is compiled
        here.

    Returns
    -------
    int
        The number of steps run in this process.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    out = (file if file is not None else sys.stderr) if progress else None
    start = time.perf_counter()
    every_step = list(range(len(_steps())))
    if jobs > 1 and disk_cache_usable() and cache_lock_available:
        _compile_in_processes(jobs, out)
        began = time.perf_counter()
        done = _run_steps(every_step, None)
        if out is not None:
            print(f"loaded here: {done} steps in {time.perf_counter() - began:.1f} s",
                  file=out)  # fmt: skip
    else:
        done = _run_steps(every_step, out)
    if out is not None:
        print(f"warm: {done} steps in {time.perf_counter() - start:.1f} s", file=out)
    return done
