"""A slow, obviously correct implementation of SEMANTICS.md: the test oracle.

Written from the contract alone, sharing no code with fastpool: one Python loop per output
element, one per window tap, comparing Python floats. 16-bit floats are compared as float32
(exact), and the chosen element is copied from the input, so -0.0/+0.0 and NaN payloads
are preserved bit for bit.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def output_shape_1d(size, kernel, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode):
    """(out, pad_begin) of one axis, straight from SEMANTICS.md section 1."""
    ext = (kernel - 1) * dilation + 1
    if auto_pad == "VALID":
        out = math.floor((size - ext) / stride) + 1
        return max(out, 0), 0
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = math.ceil(size / stride)
        total = max(0, (out - 1) * stride + ext - size)
        begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        return max(out, 0), begin
    num = size + pad_begin + pad_end - ext
    if ceil_mode:
        out = math.ceil(num / stride) + 1
        if (out - 1) * stride >= size + pad_begin:
            out -= 1
    else:
        out = math.floor(num / stride) + 1
    return max(out, 0), pad_begin


def windows(spatial, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides):
    """(strides, dilations, output sizes, pads before) of each spatial axis, the unset
    attributes at their defaults."""
    rank = len(spatial)
    strides = list(strides or [1] * rank)
    dilations = list(dilations or [1] * rank)
    pads = list(pads or [0] * (2 * rank))
    outs, begins = [], []
    for i in range(rank):
        out, begin = output_shape_1d(
            spatial[i],
            kernel_shape[i],
            strides[i],
            dilations[i],
            pads[i],
            pads[rank + i],
            auto_pad,
            ceil_mode,
        )
        outs.append(out)
        begins.append(begin)
    return strides, dilations, outs, begins


def as_comparable(x: np.ndarray) -> np.ndarray:
    """Values that compare exactly like x's: float32 for the 16-bit floats, else x."""
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        return x.astype(np.float32)
    return x


def lowest(dtype):
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return -np.inf


def ref_max_pool(
    x,
    kernel_shape,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    pads=None,
    storage_order=0,
    strides=None,
    layout="NCHW",
):
    """Returns (Y, Indices) for any rank, dtype and layout."""
    x = np.asarray(x)
    nchw = np.moveaxis(x, -1, 1) if layout == "NHWC" else x
    n_batch, n_chan = nchw.shape[:2]
    spatial = nchw.shape[2:]
    rank = len(spatial)
    strides, dilations, outs, begins = windows(
        spatial, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides
    )
    values = as_comparable(nchw)
    y = np.empty((n_batch, n_chan, *outs), dtype=x.dtype)
    ind = np.empty((n_batch, n_chan, *outs), dtype=np.int64)
    plane = int(np.prod(spatial))
    for n in range(n_batch):
        for c in range(n_chan):
            for o in itertools.product(*(range(k) for k in outs)):
                best, best_coord = None, None
                for j in itertools.product(*(range(k) for k in kernel_shape)):
                    coord = tuple(
                        o[i] * strides[i] - begins[i] + j[i] * dilations[i] for i in range(rank)
                    )
                    if any(not 0 <= coord[i] < spatial[i] for i in range(rank)):
                        continue
                    v = float(values[(n, c, *coord)])
                    if best is None:
                        best, best_coord = v, coord
                    elif math.isnan(best):
                        pass
                    elif math.isnan(v) or v > best:
                        best, best_coord = v, coord
                if best_coord is None:
                    y[(n, c, *o)] = lowest(x.dtype)
                    ind[(n, c, *o)] = -1
                    continue
                y[(n, c, *o)] = nchw[(n, c, *best_coord)]
                if layout == "NHWC":
                    flat = (n * plane + int(np.ravel_multi_index(best_coord, spatial))) * n_chan + c
                elif storage_order == 1:
                    col = 0
                    for i in reversed(range(rank)):
                        col = col * spatial[i] + best_coord[i]
                    flat = (n * n_chan + c) * plane + col
                else:
                    flat = (n * n_chan + c) * plane + int(np.ravel_multi_index(best_coord, spatial))
                ind[(n, c, *o)] = flat
    if layout == "NHWC":
        return np.moveaxis(y, 1, -1), np.moveaxis(ind, 1, -1)
    return y, ind


def ref_max_pool_values(
    x,
    kernel_shape,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    pads=None,
    strides=None,
    layout="NCHW",
):
    """ref_max_pool's Y, for inputs too large for its loops (see ref_max_pool_vectorised)."""
    return ref_max_pool_vectorised(
        x, kernel_shape, auto_pad, ceil_mode, dilations, pads, 0, strides, layout
    )[0]


def ref_max_pool_vectorised(
    x,
    kernel_shape,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    pads=None,
    storage_order=0,
    strides=None,
    layout="NCHW",
):
    """ref_max_pool's (Y, Indices), for inputs too large for its loops: the same rules,
    applied to every output at once, one numpy step per window tap in row-major order
    (checked against ref_max_pool in test_max_pool.py)."""
    x = np.asarray(x)
    nchw = np.moveaxis(x, -1, 1) if layout == "NHWC" else x
    n_batch, n_chan = nchw.shape[:2]
    spatial = nchw.shape[2:]
    rank = len(spatial)
    strides, dilations, outs, begins = windows(
        spatial, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides
    )
    values = as_comparable(nchw)
    out_shape = (n_batch, n_chan, *outs)
    best = np.zeros(out_shape, dtype=values.dtype)
    best_at = np.zeros(out_shape, dtype=np.int64)  # the position in the plane
    found = np.zeros(out_shape, dtype=bool)
    for j in itertools.product(*(range(k) for k in kernel_shape)):
        # each axis's coordinates, shaped to broadcast over the output's spatial axes
        coords = [
            (np.arange(outs[i]) * strides[i] - begins[i] + j[i] * dilations[i]).reshape(
                [-1 if a == i else 1 for a in range(rank)]
            )
            for i in range(rank)
        ]
        inside = np.ones(outs, dtype=bool)
        for i in range(rank):
            inside = inside & (coords[i] >= 0) & (coords[i] < spatial[i])
        clipped = [np.clip(c, 0, max(spatial[i] - 1, 0)) for i, c in enumerate(coords)]
        if not inside.any():
            continue
        v = values[(slice(None), slice(None), *clipped)]
        with np.errstate(invalid="ignore"):
            # the first tap; after it, the first NaN, else a strictly greater value
            take = inside & (~found | (~np.isnan(best) & (np.isnan(v) | (v > best))))
        best = np.where(take, v, best)
        best_at = np.where(take, np.ravel_multi_index(clipped, spatial), best_at)
        found |= take
    planes = nchw.reshape(n_batch, n_chan, -1)
    if planes.shape[2] == 0:  # no taps at all: every window is empty
        planes = np.zeros((n_batch, n_chan, 1), dtype=x.dtype)
    y = np.take_along_axis(planes, best_at.reshape(n_batch, n_chan, -1), axis=2)
    y = np.where(found.reshape(y.shape), y, np.array(lowest(x.dtype)).astype(x.dtype))
    y = y.reshape(out_shape)
    # Indices: the position, row-major or column-major over the spatial axes, in X
    plane = int(np.prod(spatial))
    if storage_order == 1 and plane > 0:
        position = np.ravel_multi_index(np.unravel_index(best_at, spatial)[::-1], spatial[::-1])
    else:
        position = best_at
    n = np.arange(n_batch).reshape([-1] + [1] * (rank + 1))
    c = np.arange(n_chan).reshape([1, -1] + [1] * rank)
    if layout == "NHWC":
        flat = (n * plane + position) * n_chan + c
    else:
        flat = (n * n_chan + c) * plane + position
    ind = np.where(found, flat, -1).astype(np.int64)
    if layout == "NHWC":
        return np.moveaxis(y, 1, -1), np.moveaxis(ind, 1, -1)
    return y, ind


def ref_global_max_pool(x, layout="NCHW"):
    """Max over all spatial axes, scanning in row-major order (first max / first NaN wins)."""
    x = np.asarray(x)
    nchw = np.moveaxis(x, -1, 1) if layout == "NHWC" else x
    values = as_comparable(nchw)
    shape = (*nchw.shape[:2], *([1] * (nchw.ndim - 2)))
    y = np.empty(shape, dtype=x.dtype)
    for n in range(nchw.shape[0]):
        for c in range(nchw.shape[1]):
            best_at = None
            for at in itertools.product(*(range(k) for k in nchw.shape[2:])):
                v = float(values[(n, c, *at)])
                if best_at is None:
                    best_at, best = at, v
                elif not math.isnan(best) and (math.isnan(v) or v > best):
                    best_at, best = at, v
            index = (n, c, *([0] * (nchw.ndim - 2)))
            y[index] = lowest(x.dtype) if best_at is None else nchw[(n, c, *best_at)]
    return np.moveaxis(y, 1, -1) if layout == "NHWC" else y


def ref_global_lp_pool(x, p=2.0, layout="NCHW"):
    """Exact-as-possible Lp norm per channel in Python floats (fsum, rescaled by the max)."""
    x = np.asarray(x)
    nchw = np.moveaxis(x, -1, 1) if layout == "NHWC" else x
    values = nchw.astype(np.float64)
    out = np.empty(nchw.shape[:2], dtype=np.float64)
    for n in range(nchw.shape[0]):
        for c in range(nchw.shape[1]):
            flat = [abs(float(v)) for v in values[n, c].ravel()]
            if any(math.isnan(v) for v in flat):
                out[n, c] = math.nan
            elif any(math.isinf(v) for v in flat):
                out[n, c] = math.inf
            elif not flat or max(flat) == 0.0:
                out[n, c] = 0.0
            else:
                m = max(flat)
                out[n, c] = m * math.fsum((v / m) ** p for v in flat) ** (1.0 / p)
    shape = (*nchw.shape[:2], *([1] * (nchw.ndim - 2)))
    y = out.reshape(shape).astype(x.dtype)
    return np.moveaxis(y, 1, -1) if layout == "NHWC" else y
