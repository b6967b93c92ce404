"""Big tensors: int64 indices past 2**31 and 2**32 elements, a 4 GiB input pooled without a
copy, and peak memory within input + outputs + small scratch.

Each case runs in a fresh process so that its peak resident memory can be measured. The
inputs are made with np.zeros, whose pages the kernel reads without making them resident,
so a copy of the input (which writes every page) shows as gigabytes of extra peak memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

RUNNER = """
import json, resource, sys
import numpy as np
import fastpool

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

case = json.loads(sys.argv[1])
dtype = np.dtype(case["dtype"])
small = np.zeros(case["warm_shape"], dtype=dtype)  # compile (or load) the kernel first
fastpool.max_pool(small, layout=case["layout"], return_indices=True, **case["attrs"])
x = np.zeros(case["shape"], dtype=dtype)
flat = x.reshape(-1)
for position, value in case["marks"]:
    flat[position] = value
before = peak_mb()
y, indices = fastpool.max_pool(x, layout=case["layout"], return_indices=True, **case["attrs"])
y_only = fastpool.max_pool(x, layout=case["layout"], **case["attrs"])
after = peak_mb()
result = {
    "extra_mb": after - before,
    "output_mb": (y.nbytes + indices.nbytes + y_only.nbytes) / 2**20,
    "same_values": bool(np.array_equal(y, y_only)),
    "max_index": int(indices.max()),
    "y_max": float(y.max()),
    "indices_point_at_y": bool(np.array_equal(flat[indices.reshape(-1)], y.reshape(-1))),
}
print(json.dumps(result))
"""

BIG = 2**31 + 8

CASES = {
    # 1-D channels first, one plane of 2**31 + 8 int8: the general kernel
    "int8-1d-past-2**31": dict(
        dtype="int8", layout="NCHW", shape=[1, 1, BIG], warm_shape=[1, 1, 64],
        attrs=dict(kernel_shape=[8], strides=[2**20]),
        marks=[[2**31 + 1, 7], [2**31 + 5, 7], [2**31 - 2**20, 3], [5, 1]],
        max_index=2**31 + 1,  # the first of the tie, in the last window
    ),
    # 32769 rows of 64Ki uint8: the planar kernel, the last row's indices past 2**31
    "uint8-2d-past-2**31": dict(
        dtype="uint8", layout="NCHW", shape=[1, 1, 32769, 65536], warm_shape=[1, 1, 2, 64],
        attrs=dict(kernel_shape=[2, 4], strides=[1, 16384]),
        marks=[[2**31 + 16385, 9], [2**31 + 16386, 9], [3, 2]],
        max_index=2**31 + 16385,
    ),
    # two rows of 2**30 + 4 with a large stride: the general kernel (the planar one would
    # need a 1 GiB row buffer), indices of the second row past 2**31
    "uint8-2d-wide-rows": dict(
        dtype="uint8", layout="NCHW", shape=[1, 1, 2, 2**30 + 4], warm_shape=[1, 1, 2, 64],
        attrs=dict(kernel_shape=[2, 4], strides=[1, 2**20]),
        marks=[[2**30 + 4 + 2**30, 9], [2**30 + 4 + 2**30 + 3, 9], [3, 2]],
        max_index=2**31 + 4,
    ),
    # channels last, 2 channels: flat indices run over both
    "int8-nhwc-past-2**31": dict(
        dtype="int8", layout="NHWC", shape=[1, 2**30 + 4, 2], warm_shape=[1, 64, 2],
        attrs=dict(kernel_shape=[4], strides=[2**20]),
        marks=[[2 * 2**30 + 1, 5], [2 * 2**30 + 3, 6]],
        max_index=2**31 + 3,
    ),
    # channels-last volume, values through the channels-last kernel (compared with the
    # general kernel's, with Indices): the last row starts 2 below 2**31
    "uint8-ndhwc-past-2**31": dict(
        dtype="uint8", layout="NHWC", shape=[1, 2, 16384, 65538, 1],
        warm_shape=[1, 2, 4, 64, 1], attrs=dict(kernel_shape=[2, 1, 4], strides=[1, 16383, 16384]),
        marks=[[32767 * 65538 + 49153, 9], [32767 * 65538 + 49154, 9], [3, 2]],
        max_index=32767 * 65538 + 49153,
    ),
    # one plane of 2**32 + 512 uint8 in rows of 256, whose windows would take the rows of
    # pitch column maxima: those count positions from the plane's start in 32 bits, which
    # wrapped in the last output row (its rows start at 2**32); such planes go rows first
    "uint8-plane-past-2**32": dict(
        dtype="uint8", layout="NCHW", shape=[1, 1, 2**24 + 2, 256], warm_shape=[1, 1, 4, 256],
        attrs=dict(kernel_shape=[2, 256], strides=[2, 256]),
        marks=[[2**32 + 263, 9], [2**32 + 265, 9], [2**32 - 256, 8], [3, 2]],
        max_index=2**32 + 263,  # the first of the tie, in the last window
    ),
    # 2**22 rows of 64 uint8, 2x2 windows 1,024 rows apart, with Indices rows first (the
    # windows reach past rows of pitch column maxima): the tasks pooled, and held scratch
    # for, every row between their first and last, 600 MB of it; the tie (first row wins)
    # sets the largest index
    "uint8-rows-far-apart": dict(
        dtype="uint8", layout="NCHW", shape=[1, 1, 2**22, 64], warm_shape=[1, 1, 4, 64],
        attrs=dict(kernel_shape=[2, 2], strides=[1024, 1]),
        marks=[[4095 * 1024 * 64 + 12, 9], [(4095 * 1024 + 1) * 64 + 12, 9], [5, 3]],
        max_index=4095 * 1024 * 64 + 62,  # (the tie's second would give + 76)
    ),
    # 4 GiB of float32 in one C-contiguous array
    "float32-4GiB": dict(
        dtype="float32", layout="NCHW", shape=[1, 1, 32768, 32768], warm_shape=[1, 1, 64, 64],
        attrs=dict(kernel_shape=[2, 2], strides=[1024, 1024]),
        marks=[[32768 * 31745 + 31745, 2.5], [32768 * 1024 + 1025, 1.5], [0, -1.0]],
        max_index=32768 * 31745 + 31745,
    ),
}  # fmt: skip


def run_case(case: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(case)],
                          capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", CASES)
def test_big_input(name):
    case = CASES[name]
    result = run_case(case)
    assert result["max_index"] == case["max_index"]
    assert result["y_max"] == max(value for _, value in case["marks"])
    assert result["same_values"] and result["indices_point_at_y"]
    # no copy of the input: the extra peak is the outputs and small scratch
    assert result["extra_mb"] <= result["output_mb"] + 64, textwrap.shorten(str(result), 300)
