"""MaxPool and GlobalMaxPool kernels: loops only.

Every kernel takes the input as a C-contiguous array in its storage type (see
``_ordering``), writes into preallocated outputs, and follows SEMANTICS.md: taps outside
the input are skipped, the first maximum in row-major kernel order wins, the first NaN wins
over everything, and a window without taps gives ``fill`` (the dtype's lowest) and index -1.

Window geometry arrives precomputed (``_attrs.Geometry.arrays``): for spatial axis i and
window o, the taps inside the input are j in [tap_lo[i, o], tap_hi[i, o]) at coordinate
``o * strides[i] - pads_begin[i] + j * dilations[i]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from fastpool._ordering import replaces


@njit(parallel=True, cache=True, nogil=True)
def max_pool_2d(
    x,
    y,
    indices,
    want_indices,
    strides,
    dilations,
    pads_begin,
    tap_lo,
    tap_hi,
    index_strides,
    inf_bits,
    fill,
):
    """x (planes, H, W) -> y (planes, OH, OW); indices like y when want_indices."""
    planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    stride_h, stride_w = strides[0], strides[1]
    dil_h, dil_w = dilations[0], dilations[1]
    plane_size = height * width
    for task in prange(planes * out_h):
        plane = task // out_h
        oh = task - plane * out_h
        h_start = oh * stride_h - pads_begin[0]
        h_lo, h_hi = tap_lo[0, oh], tap_hi[0, oh]
        for ow in range(out_w):
            w_start = ow * stride_w - pads_begin[1]
            w_lo, w_hi = tap_lo[1, ow], tap_hi[1, ow]
            if h_lo >= h_hi or w_lo >= w_hi:
                y[plane, oh, ow] = fill
                if want_indices:
                    indices[plane, oh, ow] = -1
                continue
            best_h = h_start + h_lo * dil_h
            best_w = w_start + w_lo * dil_w
            best = x[plane, best_h, best_w]
            for jh in range(h_lo, h_hi):
                h = h_start + jh * dil_h
                for jw in range(w_lo, w_hi):
                    w = w_start + jw * dil_w
                    value = x[plane, h, w]
                    if replaces(value, best, inf_bits):
                        best, best_h, best_w = value, h, w
            y[plane, oh, ow] = best
            if want_indices:
                indices[plane, oh, ow] = (
                    plane * plane_size + best_h * index_strides[0] + best_w * index_strides[1]
                )


@njit(cache=True, nogil=True)
def _window_taps(
    out_coord, in_shape, strides, dilations, pads_begin, tap_lo, tap_hi, row_strides, tap, positions
):
    """Write the row-major input positions of one window's taps, in scan order; count them."""
    rank = in_shape.shape[0]
    for i in range(rank):
        if tap_lo[i, out_coord[i]] >= tap_hi[i, out_coord[i]]:
            return 0
        tap[i] = tap_lo[i, out_coord[i]]
    count = 0
    while True:
        position = 0
        for i in range(rank):
            position += (
                out_coord[i] * strides[i] - pads_begin[i] + tap[i] * dilations[i]
            ) * row_strides[i]
        positions[count] = position
        count += 1
        # next tap: the last axis moves fastest (row-major scan order)
        axis = rank - 1
        while axis >= 0:
            tap[axis] += 1
            if tap[axis] < tap_hi[axis, out_coord[axis]]:
                break
            tap[axis] = tap_lo[axis, out_coord[axis]]
            axis -= 1
        if axis < 0:
            return count


@njit(cache=True, nogil=True)
def _advance(coord, shape, first_axis):
    """Row-major increment of coord over the axes from first_axis on."""
    axis = shape.shape[0] - 1
    while axis >= first_axis:
        coord[axis] += 1
        if coord[axis] < shape[axis]:
            return
        coord[axis] = 0
        axis -= 1


@njit(cache=True, nogil=True)
def _row_strides(shape):
    strides = np.empty_like(shape)
    step = 1
    for i in range(shape.shape[0] - 1, -1, -1):
        strides[i] = step
        step *= shape[i]
    return strides


@njit(cache=True, nogil=True)
def _flat_index(position, in_shape, index_strides):
    """Row-major position within a plane -> index under the chosen storage order."""
    index = 0
    for i in range(in_shape.shape[0] - 1, -1, -1):
        index += (position % in_shape[i]) * index_strides[i]
        position //= in_shape[i]
    return index


@njit(parallel=True, cache=True, nogil=True)
def max_pool_nd(
    x,
    y,
    indices,
    want_indices,
    in_shape,
    out_shape,
    strides,
    dilations,
    pads_begin,
    tap_lo,
    tap_hi,
    index_strides,
    kernel_size,
    inf_bits,
    fill,
):
    """x (planes, P) -> y (planes, Q), any number of spatial axes, channels first."""
    planes, plane_size = x.shape
    rank = in_shape.shape[0]
    row_strides = _row_strides(in_shape)
    rows = out_shape[0]
    per_row = y.shape[1] // rows if rows > 0 else 0
    for task in prange(planes * rows):
        plane = task // rows
        out_coord = np.zeros(rank, dtype=np.int64)
        out_coord[0] = task - plane * rows
        tap = np.empty(rank, dtype=np.int64)
        positions = np.empty(kernel_size, dtype=np.int64)
        for q in range(out_coord[0] * per_row, (out_coord[0] + 1) * per_row):
            count = _window_taps(
                out_coord,
                in_shape,
                strides,
                dilations,
                pads_begin,
                tap_lo,
                tap_hi,
                row_strides,
                tap,
                positions,
            )
            _advance(out_coord, out_shape, 1)
            if count == 0:
                y[plane, q] = fill
                if want_indices:
                    indices[plane, q] = -1
                continue
            best_position = positions[0]
            best = x[plane, best_position]
            for t in range(1, count):
                value = x[plane, positions[t]]
                if replaces(value, best, inf_bits):
                    best, best_position = value, positions[t]
            y[plane, q] = best
            if want_indices:
                indices[plane, q] = plane * plane_size + _flat_index(
                    best_position, in_shape, index_strides
                )


@njit(parallel=True, cache=True, nogil=True)
def max_pool_nhwc(
    x,
    y,
    indices,
    want_indices,
    in_shape,
    out_shape,
    strides,
    dilations,
    pads_begin,
    tap_lo,
    tap_hi,
    kernel_size,
    inf_bits,
    fill,
):
    """x (N, P, C) -> y (N, Q, C), channels last; the channel loop is innermost."""
    batch, plane_size, channels = x.shape
    rank = in_shape.shape[0]
    row_strides = _row_strides(in_shape)
    rows = out_shape[0]
    per_row = y.shape[1] // rows if rows > 0 else 0
    for task in prange(batch * rows):
        n = task // rows
        out_coord = np.zeros(rank, dtype=np.int64)
        out_coord[0] = task - n * rows
        tap = np.empty(rank, dtype=np.int64)
        positions = np.empty(kernel_size, dtype=np.int64)
        for q in range(out_coord[0] * per_row, (out_coord[0] + 1) * per_row):
            count = _window_taps(
                out_coord,
                in_shape,
                strides,
                dilations,
                pads_begin,
                tap_lo,
                tap_hi,
                row_strides,
                tap,
                positions,
            )
            _advance(out_coord, out_shape, 1)
            if count == 0:
                for c in range(channels):
                    y[n, q, c] = fill
                    if want_indices:
                        indices[n, q, c] = -1
                continue
            first = positions[0]
            for c in range(channels):
                y[n, q, c] = x[n, first, c]
                if want_indices:
                    indices[n, q, c] = (n * plane_size + first) * channels + c
            for t in range(1, count):
                position = positions[t]
                for c in range(channels):
                    value = x[n, position, c]
                    if replaces(value, y[n, q, c], inf_bits):
                        y[n, q, c] = value
                        if want_indices:
                            indices[n, q, c] = (n * plane_size + position) * channels + c


@njit(parallel=True, cache=True, nogil=True)
def global_max_nchw(x, y, inf_bits, fill):
    """x (planes, P) -> y (planes,)."""
    planes, plane_size = x.shape
    for plane in prange(planes):
        if plane_size == 0:
            y[plane] = fill
            continue
        best = x[plane, 0]
        for i in range(1, plane_size):
            value = x[plane, i]
            if replaces(value, best, inf_bits):
                best = value
        y[plane] = best


@njit(parallel=True, cache=True, nogil=True)
def global_max_nhwc(x, y, inf_bits, fill):
    """x (N, P, C) -> y (N, C), sweeping P with the channel loop innermost."""
    batch, plane_size, channels = x.shape
    for n in prange(batch):
        for c in range(channels):
            y[n, c] = x[n, 0, c] if plane_size > 0 else fill
        for i in range(1, plane_size):
            for c in range(channels):
                value = x[n, i, c]
                if replaces(value, y[n, c], inf_bits):
                    y[n, c] = value
