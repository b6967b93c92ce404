"""The geometry tables the kernels read: each window's range of taps inside the input, kept
compact (the windows at the ends, and one slot for all the interior ones), and their cost
on long rows."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import this_fastpool_env
from reference import windows

from fastpool import _attrs
from fastpool._max_kernels import _tap_hi, _tap_lo

AUTO_PADS = ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")


def contract_taps(size, kernel, stride, dilation, begin, o):
    """[lo, hi) of the taps j of window o that land inside [0, size), from SEMANTICS.md:
    tap j reads coordinate o * stride - begin + j * dilation."""
    inside = [j for j in range(kernel) if 0 <= o * stride - begin + j * dilation < size]
    return (inside[0], inside[-1] + 1) if inside else None


def check_axes(geometry, spatial, kernel_shape, attrs):
    """Every window of every axis reads, through the kernels' look-up, the contract's taps,
    and the interior rows of ``geo`` hold exactly the windows with every tap inside."""
    strides, dilations, outs, begins = windows(spatial, kernel_shape, **attrs)
    assert geometry.output_spatial == tuple(outs)
    tables = [(geometry.taps, range(len(spatial)))]
    if geometry.planar is not None:  # (axis 0 of a 1-D input's plane: its one row)
        tables.append((geometry.planar[2], range(2 - len(spatial), 2)))
        if len(spatial) == 1:
            row = geometry.planar[2]
            assert (_tap_lo.py_func(row, 0, 0), _tap_hi.py_func(row, 0, 0)) == (0, 1)
    for taps, axes in tables:
        for i, axis in enumerate(axes):
            args = (spatial[i], kernel_shape[i], strides[i], dilations[i], begins[i])
            full = []
            for o in range(outs[i]):
                expected = contract_taps(*args, o)
                lo, hi = _tap_lo.py_func(taps, axis, o), _tap_hi.py_func(taps, axis, o)
                if expected is None:
                    assert lo >= hi, (spatial, kernel_shape, attrs, i, o)
                else:
                    assert (lo, hi) == expected, (spatial, kernel_shape, attrs, i, o)
                if expected == (0, kernel_shape[i]):
                    full.append(o)
            interior = (full[0], full[-1] + 1) if full else (0, 0)
            geo = geometry.geo
            assert (geo[_attrs.INTERIOR_LO, i], geo[_attrs.INTERIOR_HI, i]) == interior
            assert full == list(range(*interior))  # (contiguous)


def test_tap_ranges_follow_the_contract():
    """Over sizes, kernels, strides, dilations, pads (larger than the kernel too), auto_pad
    and ceil_mode, in 1-D and 2-D: each window's taps, read as the kernels read them."""
    grid = itertools.product(
        (1, 2, 3, 5, 8, 13), (1, 2, 3, 5), (1, 2, 3), (1, 2, 3), ((0, 0), (1, 0), (2, 3), (6, 7))
    )
    for size, kernel, stride, dilation, (begin, end) in grid:
        for auto_pad, ceil_mode in itertools.product(AUTO_PADS, (0, 1)):
            pads = (begin, end) if auto_pad == "NOTSET" else None
            attrs = dict(auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=[dilation],
                         pads=pads, strides=[stride])  # fmt: skip
            try:
                geometry = _attrs.resolve_geometry(
                    (size,), (kernel,), auto_pad, ceil_mode, (dilation,), pads, (stride,)
                )
            except ValueError:  # (an empty output is allowed; other errors are tested apart)
                continue
            check_axes(geometry, (size,), (kernel,), attrs)
    rng = np.random.default_rng(1)
    for _ in range(300):
        spatial = tuple(int(v) for v in rng.integers(1, 12, 2))
        kernel_shape = tuple(int(v) for v in rng.integers(1, 5, 2))
        strides, dilations = rng.integers(1, 4, 2).tolist(), rng.integers(1, 3, 2).tolist()
        pads = rng.integers(0, 6, 4).tolist()
        ceil_mode = int(rng.integers(0, 2))
        attrs = dict(auto_pad="NOTSET", ceil_mode=ceil_mode, dilations=dilations, pads=pads,
                     strides=strides)  # fmt: skip
        lists = (tuple(dilations), tuple(pads), tuple(strides))
        geometry = _attrs.resolve_geometry(spatial, kernel_shape, "NOTSET", ceil_mode, *lists)
        check_axes(geometry, spatial, kernel_shape, attrs)


@pytest.mark.parametrize("spatial", [(2**40,), (3, 2**40), (2**20, 2**20, 7)])
def test_long_axes_make_small_tables(spatial):
    """The tables grow with the windows at the ends, not with the output: a row of 2**40
    takes a few slots (a table as long as the output would need 16 TiB)."""
    rank = len(spatial)
    geometry = _attrs.resolve_geometry(spatial, (3,) * rank, "NOTSET", 0, None, (1,) * (2 * rank),
                                       None)  # fmt: skip
    assert geometry.output_spatial == spatial
    assert geometry.taps.shape[2] <= 4  # (first window, the interior one, last, lo/hi)
    for taps in [geometry.taps, *(t[2] for t in (geometry.planar, geometry.volume) if t)]:
        assert taps.nbytes <= 512
    taps = geometry.taps
    for i, size in enumerate(spatial):  # the first, an interior and the last window
        for o, expected in [(0, (1, 3)), (1, (0, 3)), (size - 1, (0, 2))]:
            assert (_tap_lo.py_func(taps, i, o), _tap_hi.py_func(taps, i, o)) == expected


PILE_UP = """
import gc, json, sys
import numpy as np
import fastpool

def resident_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

def call(n):
    x = np.zeros((1, 1, n), np.float32)
    y, indices = fastpool.max_pool(x, kernel_shape=[3], pads=[1, 1], return_indices=True)
    del x, y, indices
    gc.collect()

call(2**20 - 1)  # (the kernels loaded, the allocator warm)
call(2**20 - 2)
before = resident_mb()
for n in range(2**20, 2**20 + 24):
    call(n)
print(json.dumps({"growth_mb": resident_mb() - before}))
"""


def test_calls_on_many_lengths_keep_little():
    """A call's plan is kept for the next call of the same form, and the plans of signals of
    many lengths must not pile up: 24 lengths of about 2**20 keep under 16 MiB. (With a
    table as long as the output in every plan, they kept 16 bytes a window: 384 MiB.)"""
    done = subprocess.run([sys.executable, "-c", PILE_UP], capture_output=True, text=True,
                          timeout=600, env=this_fastpool_env())  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    growth = json.loads(done.stdout.strip().splitlines()[-1])["growth_mb"]
    assert growth < 16, growth
