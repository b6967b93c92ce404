"""What a runtime embedding fastpool relies on: caller-owned outputs, concurrent calls from
many threads on every numba threading layer, and multiprocessing with fork and spawn."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ALL_DTYPES, DTYPE_IDS, assert_identical, make_input, this_fastpool_env

import fastpool

MAX_POOL_CASES = {
    "2d-nchw": ((2, 3, 9, 8), "NCHW", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)),
    "1d-nchw": ((2, 3, 11), "NCHW", dict(kernel_shape=[3], strides=[2])),
    "3d-nchw": ((2, 3, 4, 5, 6), "NCHW", dict(kernel_shape=[2, 2, 2])),
    "2d-nhwc": ((2, 9, 8, 3), "NHWC", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)),
}


# ---- out= ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_max_pool_out_is_filled_and_returned(case, dtype, entry):
    shape, layout, attrs = MAX_POOL_CASES[case]
    x = make_input(shape, dtype, seed=3)
    expected_y, expected_i = fastpool.max_pool(x, layout=layout, return_indices=True, **attrs)
    y = np.full_like(expected_y, 7)  # stale contents must all be overwritten
    indices = np.full(expected_i.shape, 12345, dtype=np.int64)
    got = fastpool.max_pool(x, layout=layout, return_indices=True, out=(y, indices), **attrs)
    assert got[0] is y and got[1] is indices
    assert_identical(y, expected_y)
    assert_identical(indices, expected_i)
    y2 = np.full_like(expected_y, 7)
    assert fastpool.max_pool(x, layout=layout, out=y2, **attrs) is y2
    assert_identical(y2, expected_y)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_out_is_filled_and_returned(layout, dtype, entry):
    shape = (2, 5, 6, 3) if layout == "NCHW" else (2, 6, 3, 5)
    x = make_input(shape, dtype, seed=4)
    expected = fastpool.global_max_pool(x, layout=layout)
    out = np.full_like(expected, 9)
    assert fastpool.global_max_pool(x, layout=layout, out=out) is out
    assert_identical(out, expected)
    if dtype.kind in "iu":
        return
    expected = fastpool.global_lp_pool(x, 3, layout=layout)
    out = np.full_like(expected, 9)
    assert fastpool.global_lp_pool(x, 3, layout=layout, out=out) is out
    assert_identical(out, expected)


def bad_outs(x, y_shape):
    good = np.empty(y_shape, dtype=x.dtype)
    transposed = np.empty(y_shape[::-1], dtype=x.dtype).T
    readonly = np.empty(y_shape, dtype=x.dtype)
    readonly.flags.writeable = False
    return [
        (TypeError, "out must be a numpy array", 3.0),
        (ValueError, "out must have shape", np.empty((1, *y_shape), dtype=x.dtype)),
        (ValueError, "out must have dtype", np.empty(y_shape, dtype=np.float64)),
        (ValueError, "out must be C-contiguous", transposed),
        (ValueError, "out must be writeable", readonly),
        (TypeError, "out must be one array", (good, good)),
    ]


def test_out_errors_name_out():
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
    before = x.copy()
    for error, message, out in bad_outs(x, (2, 3, 2, 2)):
        with pytest.raises(error, match=message):
            fastpool.max_pool(x, [2, 2], strides=[2, 2], out=out)
    for error, message, out in bad_outs(x, (2, 3, 1, 1))[:-1]:
        with pytest.raises(error, match=message):
            fastpool.global_max_pool(x, out=out)
        with pytest.raises(error, match=message):
            fastpool.global_lp_pool(x, out=out)
    y = np.empty((2, 3, 2, 2), dtype=np.float32)
    with pytest.raises(TypeError, match=r"out must be a pair \(Y, Indices\)"):
        fastpool.max_pool(x, [2, 2], strides=[2, 2], return_indices=True, out=y)
    with pytest.raises(ValueError, match=r"out\[1\] \(Indices\) must have dtype int64"):
        fastpool.max_pool(x, [2, 2], strides=[2, 2], return_indices=True, out=(y, y.copy()))
    with pytest.raises(ValueError, match=r"out\[1\] \(Indices\) must not share memory"):
        both = np.empty(8 * y.size, dtype=np.uint8)
        y_view, i_view = both[: 4 * y.size].view(np.float32), both.view(np.int64)[: y.size]
        fastpool.max_pool(x, [2, 2], strides=[2, 2], return_indices=True,
                          out=(y_view.reshape(y.shape), i_view.reshape(y.shape)))  # fmt: skip
    # an output overlapping the input would overwrite values still to be read
    with pytest.raises(ValueError, match="out must not share memory"):
        fastpool.max_pool(x, [1, 1], out=x)
    with pytest.raises(ValueError, match="out must not share memory"):
        fastpool.global_max_pool(x, out=x.reshape(-1)[:6].reshape(2, 3, 1, 1))
    np.testing.assert_array_equal(x, before)


# ---- threads and processes ----------------------------------------------------------------

CONCURRENT_SCRIPT = """
import sys, threading
import numpy as np
import numba
import ml_dtypes
import fastpool

rng = np.random.default_rng(0)
calls = []
for dtype in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8):
    for layout in ("NCHW", "NHWC"):
        shape = (2, 16, 40, 36) if layout == "NCHW" else (2, 40, 36, 16)
        x = (rng.standard_normal(shape) * 20).astype(dtype)
        attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], layout=layout)
        calls.append(lambda x=x, a=attrs: fastpool.max_pool(x, return_indices=True, **a))
        calls.append(lambda x=x, l=layout: (fastpool.global_max_pool(x, layout=l),))
        if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16:
            calls.append(lambda x=x, l=layout: (fastpool.global_lp_pool(x, 2, layout=l),))
    x3 = (rng.standard_normal((1, 8, 10, 12, 14)) * 20).astype(dtype)
    calls.append(lambda x=x3: fastpool.max_pool(x, [3, 3, 3], return_indices=True))
expected = [call() for call in calls]  # one at a time
failures = []

def worker(seed):
    order = np.random.default_rng(seed).permutation(len(calls))
    for _ in range(3):
        for k in order:
            for got, want in zip(calls[k](), expected[k]):
                if got.tobytes() != want.tobytes():
                    failures.append(int(k))

threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(numba.threading_layer(), len(calls), len(failures))
"""


def available_layers():
    layers = ["workqueue"]
    for layer, module in (("omp", "numba.np.ufunc.omppool"), ("tbb", "numba.np.ufunc.tbbpool")):
        try:
            if importlib.util.find_spec(module) is not None:
                __import__(module)
                layers.append(layer)
        except ImportError:
            pass
    return layers


@pytest.mark.parametrize("layer", available_layers())
def test_concurrent_calls_from_eight_threads(layer):
    """Mixed operators, dtypes and layouts from 8 threads at once give exactly the results
    of one-at-a-time calls, and the process survives, on each available threading layer."""
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer, NUMBA_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", CONCURRENT_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    used, n_calls, n_failures = done.stdout.split()
    assert used == layer and int(n_calls) > 20 and int(n_failures) == 0, done.stdout


MULTIPROCESSING_SCRIPT = """
import multiprocessing, sys
import numpy as np
import fastpool

def work(seed):
    x = np.random.default_rng(seed).standard_normal((2, 16, 64, 64)).astype(np.float32)
    y, i = fastpool.max_pool(x, [3, 3], strides=[2, 2], return_indices=True)
    g = fastpool.global_lp_pool(x)
    return seed, y.tobytes(), i.tobytes(), g.tobytes()

if __name__ == "__main__":
    method = sys.argv[1]
    here = [work(s) for s in range(4)]  # parallel kernels have run in the parent
    with multiprocessing.get_context(method).Pool(2) as pool:
        there = pool.map(work, range(4))
    print(method, here == there)
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_pool(method, tmp_path):
    """Workers of a pool give the parent's results, and a forked child of a parent that ran
    GNU OpenMP (which cannot run in such a child) works on one thread. The processes share
    the package's disk cache; processes filling a new cache at once are test_cache's (with
    a new cache here, the parent compiled the planar kernel first: 7.5 min of the suite on
    the 2-core AMD EPYC machine, 2026-12-01)."""
    script = tmp_path / "pool_script.py"
    script.write_text(MULTIPROCESSING_SCRIPT)
    done = subprocess.run([sys.executable, str(script), method], cwd=tmp_path,
                          env=this_fastpool_env(), capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [method, "True"], done.stdout + done.stderr[-2000:]
    assert "Terminating" not in done.stderr


THREAD_COUNT_SCRIPT = """
import numba
import numpy as np
import fastpool
from fastpool import _api

given = []
serial, real = _api._KERNELS["planar"]  # (the entries a new plan takes)
assert real is fastpool._max_kernels.max_pool_planar

def spy(*args):
    given.append(args[-1])  # the thread count, the entries' last argument
    return real(*args)

_api._KERNELS["planar"] = serial, spy
x = np.random.default_rng(0).standard_normal((1, 16, 64, 64)).astype(np.float32)
expected = fastpool.max_pool(x[:, :1], [3, 3])
ys = [fastpool.max_pool(x, [3, 3])]  # the first parallel call: numba's pool not started
numba.set_num_threads(1)
ys.append(fastpool.max_pool(x, [3, 3]))
numba.set_num_threads(2)
ys.append(fastpool.max_pool(x, [3, 3]))
print(*given, all(np.array_equal(y, ys[0]) for y in ys))
"""


def test_parallel_entries_get_numbas_thread_count():
    """numba.set_num_threads is honoured: each parallel call is given the calling thread's
    count, on the first call of a process (before numba's thread pool has started) and
    after set_num_threads, with the same results."""
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", THREAD_COUNT_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2", "1", "2", "True"], done.stdout
