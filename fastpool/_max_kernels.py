"""MaxPool and GlobalMaxPool kernels: loops only.

Every kernel takes the input as a C-contiguous array in its storage type (see
``_ordering``), writes into preallocated outputs, and follows SEMANTICS.md: taps outside
the input are skipped, the first maximum in row-major kernel order wins, the first NaN wins
over everything, and a window without taps gives ``fill`` (the dtype's lowest) and index -1.

The geometry arrives precomputed from ``_attrs``: ``geo[ROW, axis]`` holds one int per spatial
axis for each of the rows named in ``_attrs`` (input and output shape, kernel, strides, ...),
and window o on axis i reads the taps j in ``[taps[0, i, o], taps[1, i, o])``, the ones that
land inside the input, at coordinate ``o * strides[i] - pads_begin[i] + j * dilations[i]``.

MaxPool is separable. Along the last spatial axis, a contiguous (vectorised) pass takes the
maximum of every window of an input row, once per row however many windows overlap it;
those row maxima are then merged, in scan order, into each output row. Every merge keeps the
earlier of equal values and the first NaN, so the row-major "first maximum wins" rule holds
exactly. The MaxPool kernel works on flat arrays with offsets (slicing rows would cost a
reference count per row), and has a parallel entry (``prange`` over chunks of tasks) and a
serial one for small calls, over one serial body.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from fastpool._attrs import (
    DILATIONS,
    IN_SHAPE,
    INTERIOR_HI,
    INTERIOR_LO,
    KERNEL,
    OUT_SHAPE,
    PADS_BEGIN,
    STRIDES,
)
from fastpool._ordering import replaces

# Indexing with unsigned integers spares numba's negative-index wraparound, which would
# otherwise keep LLVM from vectorising the loops.
_u = np.uint64


# ---- primitives on flat arrays -----------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _window_max(out, out_at, src, src_at, count, taps, dilation, inf_bits):
    """out[out_at + i] = max over j < taps of src[src_at + i + j*dilation], for i < count."""
    for i in range(count):
        out[_u(out_at + i)] = src[_u(src_at + i)]
    for j in range(1, taps):
        shift = src_at + j * dilation
        for i in range(count):
            value = src[_u(shift + i)]
            best = out[_u(out_at + i)]
            out[_u(out_at + i)] = value if replaces(value, best, inf_bits) else best


@njit(cache=True, nogil=True, inline="always")
def _window_argmax(out, out_col, out_at, src, src_at, count, taps, dilation, origin, inf_bits):
    """As _window_max, also recording each winner's position (src index - origin)."""
    for i in range(count):
        out[_u(out_at + i)] = src[_u(src_at + i)]
        out_col[_u(out_at + i)] = src_at + i - origin
    for j in range(1, taps):
        shift = src_at + j * dilation
        for i in range(count):
            value = src[_u(shift + i)]
            best = out[_u(out_at + i)]
            take = replaces(value, best, inf_bits)
            out[_u(out_at + i)] = value if take else best
            col = shift + i - origin
            out_col[_u(out_at + i)] = col if take else out_col[_u(out_at + i)]


@njit(cache=True, nogil=True, inline="always")
def _merge(acc, acc_at, values, values_at, count, step, block, first, inf_bits):
    """Fold values into acc, ``block`` elements at a time, picking every step-th block.

    acc[acc_at + o*block + c] = max(itself, values[values_at + o*step*block + c]) for
    o < count, c < block; a plain copy when ``first``. (The flags are tested outside the
    loops, and block 1 has loops of its own, so that every loop vectorises.)
    """
    if block == 1:
        if first:
            for o in range(count):
                acc[_u(acc_at + o)] = values[_u(values_at + o * step)]
        else:
            for o in range(count):
                value = values[_u(values_at + o * step)]
                best = acc[_u(acc_at + o)]
                acc[_u(acc_at + o)] = value if replaces(value, best, inf_bits) else best
        return
    for o in range(count):
        at = acc_at + o * block
        src = values_at + o * step * block
        if first:
            for c in range(block):
                acc[_u(at + c)] = values[_u(src + c)]
        else:
            for c in range(block):
                value = values[_u(src + c)]
                best = acc[_u(at + c)]
                acc[_u(at + c)] = value if replaces(value, best, inf_bits) else best


@njit(cache=True, nogil=True, inline="always")
def _merge_arg(
    acc,
    acc_index,
    acc_at,
    values,
    cols,
    values_at,
    count,
    step,
    block,
    first,
    base,
    col_stride,
    inf_bits,
):
    """As _merge, with acc_index = base + col * col_stride of each winner (-1 for col -1)."""
    if block == 1:
        if first:
            for o in range(count):
                col = cols[_u(values_at + o * step)]
                acc[_u(acc_at + o)] = values[_u(values_at + o * step)]
                acc_index[_u(acc_at + o)] = base + col * col_stride if col >= 0 else -1
        else:
            for o in range(count):
                value = values[_u(values_at + o * step)]
                col = cols[_u(values_at + o * step)]
                best = acc[_u(acc_at + o)]
                take = replaces(value, best, inf_bits)
                acc[_u(acc_at + o)] = value if take else best
                index = base + col * col_stride if col >= 0 else -1
                acc_index[_u(acc_at + o)] = index if take else acc_index[_u(acc_at + o)]
        return
    for o in range(count):
        at = acc_at + o * block
        src = values_at + o * step * block
        if first:
            for c in range(block):
                col = cols[_u(src + c)]
                acc[_u(at + c)] = values[_u(src + c)]
                acc_index[_u(at + c)] = base + col * col_stride if col >= 0 else -1
        else:
            for c in range(block):
                value = values[_u(src + c)]
                col = cols[_u(src + c)]
                best = acc[_u(at + c)]
                take = replaces(value, best, inf_bits)
                acc[_u(at + c)] = value if take else best
                index = base + col * col_stride if col >= 0 else -1
                acc_index[_u(at + c)] = index if take else acc_index[_u(at + c)]


@njit(cache=True, nogil=True, inline="always")
def _interior(
    out,
    out_col,
    out_at,
    want_indices,
    src,
    src_at,
    origin,
    count,
    kernel,
    dilation,
    n_windows,
    stride,
    block,
    inf_bits,
    scratch,
    scratch_col,
):
    """The interior windows of a row: the max at every start, then every stride-th one."""
    if want_indices:
        _window_argmax(
            scratch, scratch_col, 0, src, src_at, count, kernel, dilation, origin, inf_bits
        )
        _merge_arg(
            out,
            out_col,
            out_at,
            scratch,
            scratch_col,
            0,
            n_windows,
            stride,
            block,
            True,
            0,
            1,
            inf_bits,
        )
    else:
        _window_max(scratch, 0, src, src_at, count, kernel, dilation, inf_bits)
        _merge(out, out_at, scratch, 0, n_windows, stride, block, True, inf_bits)


@njit(cache=True, nogil=True)
def _row_windows(
    out,
    out_col,
    out_at,
    want_indices,
    src,
    src_at,
    geo,
    taps,
    block,
    inf_bits,
    fill,
    scratch,
    scratch_col,
):
    """The maximum of every window along the last spatial axis of the row at src[src_at:].

    Rows hold ``block`` elements per position (1 for NCHW, C for channels last):
    out[out_at + o*block + c] is window o's maximum for element c, out_col its position in
    the row (``fill`` and -1 for a window with no tap). Interior windows (every tap inside
    the row) go through the vectorised primitives, the few border windows one by one.
    """
    axis = geo.shape[1] - 1
    stride = geo[STRIDES, axis]
    dilation = geo[DILATIONS, axis]
    pad = geo[PADS_BEGIN, axis]
    lo, hi = geo[INTERIOR_LO, axis], geo[INTERIOR_HI, axis]
    if hi > lo:
        start = src_at + (lo * stride - pad) * block
        count = ((hi - lo - 1) * stride + 1) * block
        kernel = geo[KERNEL, axis]
        at = out_at + lo * block
        n = hi - lo
        # The common channels-first shapes get loops with constant strides and kernel sizes,
        # which LLVM unrolls and vectorises far better.
        if block == 1 and dilation == 1 and stride == 2 and kernel == 3:
            _interior(
                out,
                out_col,
                at,
                want_indices,
                src,
                start,
                src_at,
                count,
                3,
                1,
                n,
                2,
                1,
                inf_bits,
                scratch,
                scratch_col,
            )
        elif block == 1 and dilation == 1 and stride == 2 and kernel == 2:
            _interior(
                out,
                out_col,
                at,
                want_indices,
                src,
                start,
                src_at,
                count,
                2,
                1,
                n,
                2,
                1,
                inf_bits,
                scratch,
                scratch_col,
            )
        elif block == 1 and dilation == 1 and stride == 1:
            _interior(
                out,
                out_col,
                at,
                want_indices,
                src,
                start,
                src_at,
                count,
                kernel,
                1,
                n,
                1,
                1,
                inf_bits,
                scratch,
                scratch_col,
            )
        else:
            _interior(
                out,
                out_col,
                at,
                want_indices,
                src,
                start,
                src_at,
                count,
                kernel,
                dilation * block,
                n,
                stride,
                block,
                inf_bits,
                scratch,
                scratch_col,
            )
    for part in range(2):  # the border windows: before and after the interior
        o_from, o_to = (0, lo) if part == 0 else (hi, geo[OUT_SHAPE, axis])
        for o in range(o_from, o_to):
            j_lo, j_hi = taps[0, axis, o], taps[1, axis, o]
            for c in range(block):
                at = out_at + o * block + c
                best, best_col = fill, -1
                for j in range(j_lo, j_hi):
                    col = (o * stride - pad + j * dilation) * block + c
                    if best_col < 0 or replaces(src[src_at + col], best, inf_bits):
                        best, best_col = src[src_at + col], col
                out[at] = best
                if want_indices:
                    out_col[at] = best_col


# ---- MaxPool, any number of spatial axes, channels first or last ------------------------


@njit(cache=True, nogil=True)
def _max_pool_tasks(
    x,
    y,
    indices,
    want_indices,
    shape,
    geo,
    taps,
    order,
    inf_bits,
    fill,
    row_blocks,
    first_task,
    last_task,
):
    """Tasks first_task..last_task-1; a task is one block of output rows of one plane.

    x, y, indices are flat. ``shape`` = (planes, rows, row length, output rows, output row
    length, block): rows is the product of the leading input spatial axes, a row holds the
    last axis times ``block`` elements. Channels first: planes = N*C, block = 1; channels
    last: planes = N, block = C. Each task first takes the window maxima along the last axis
    of every input row its outputs read, then merges those, in scan order, into each output
    row.
    """
    rows, row_length = shape[1], shape[2]
    out_rows, out_length, block = shape[3], shape[4], shape[5]
    lead = geo.shape[1] - 1
    plane_size = rows * row_length
    index_plane_size = plane_size // block if block > 0 else 0
    # rows per step along the first leading axis (all rows when there is none)
    inner = rows // geo[IN_SHAPE, 0] if lead > 0 and geo[IN_SHAPE, 0] > 0 else rows
    out_inner = out_rows // geo[OUT_SHAPE, 0] if lead > 0 else out_rows
    out_first = geo[OUT_SHAPE, 0] if lead > 0 else 1
    scratch = np.empty(row_length, dtype=x.dtype)
    scratch_col = np.empty(row_length if want_indices else 0, dtype=np.int64)
    window_rows = np.empty(0, dtype=x.dtype)
    window_cols = np.empty(0, dtype=np.int64)
    out_coord = np.empty(lead, dtype=np.int64)
    tap = np.empty(lead, dtype=np.int64)
    for task in range(first_task, last_task):
        plane = task // row_blocks
        block_no = task - plane * row_blocks
        o_lo = block_no * out_first // row_blocks
        o_hi = (block_no + 1) * out_first // row_blocks
        # the input rows these outputs read: a range along the first leading axis
        r_lo, r_hi = 0, rows
        if lead > 0:
            r_lo, r_hi = geo[IN_SHAPE, 0], 0
            for o in range(o_lo, o_hi):
                j_lo, j_hi = taps[0, 0, o], taps[1, 0, o]
                if j_lo < j_hi:
                    start = o * geo[STRIDES, 0] - geo[PADS_BEGIN, 0]
                    r_lo = min(r_lo, start + j_lo * geo[DILATIONS, 0])
                    r_hi = max(r_hi, start + (j_hi - 1) * geo[DILATIONS, 0] + 1)
            r_lo, r_hi = r_lo * inner, max(r_lo, r_hi) * inner
        needed = (r_hi - r_lo) * out_length
        if window_rows.shape[0] < needed:
            window_rows = np.empty(needed, dtype=x.dtype)
            if want_indices:
                window_cols = np.empty(needed, dtype=np.int64)
        for r in range(r_lo, r_hi):
            _row_windows(
                window_rows,
                window_cols,
                (r - r_lo) * out_length,
                want_indices,
                x,
                (plane * rows + r) * row_length,
                geo,
                taps,
                block,
                inf_bits,
                fill,
                scratch,
                scratch_col,
            )
        for q in range(o_lo * out_inner, o_hi * out_inner):
            y_at = (plane * out_rows + q) * out_length
            empty = False
            rest = q
            for i in range(lead - 1, -1, -1):
                out_coord[i] = rest % geo[OUT_SHAPE, i]
                rest //= geo[OUT_SHAPE, i]
                tap[i] = taps[0, i, out_coord[i]]
                empty |= tap[i] >= taps[1, i, out_coord[i]]
            if empty:
                for e in range(y_at, y_at + out_length):
                    y[e] = fill
                    if want_indices:
                        indices[e] = -1
                continue
            first = True
            while True:  # the leading taps inside the input, in row-major order
                row = 0
                offset = 0
                for i in range(lead):
                    coord = (
                        out_coord[i] * geo[STRIDES, i]
                        - geo[PADS_BEGIN, i]
                        + tap[i] * geo[DILATIONS, i]
                    )
                    row = row * geo[IN_SHAPE, i] + coord
                    offset += coord * geo[order, i]
                window_at = (row - r_lo) * out_length
                if want_indices:
                    _merge_arg(
                        y,
                        indices,
                        y_at,
                        window_rows,
                        window_cols,
                        window_at,
                        out_length,
                        1,
                        1,
                        first,
                        (plane * index_plane_size + offset) * block,
                        geo[order, lead],
                        inf_bits,
                    )
                else:
                    _merge(y, y_at, window_rows, window_at, out_length, 1, 1, first, inf_bits)
                first = False
                axis = lead - 1
                while axis >= 0:
                    tap[axis] += 1
                    if tap[axis] < taps[1, axis, out_coord[axis]]:
                        break
                    tap[axis] = taps[0, axis, out_coord[axis]]
                    axis -= 1
                if axis < 0:
                    break


@njit(parallel=True, cache=True, nogil=True)
def max_pool(x, y, indices, want_indices, shape, geo, taps, order, inf_bits, fill, threads):
    """Parallel MaxPool; see _max_pool_tasks for the arguments."""
    planes = shape[0]
    out_first = geo[OUT_SHAPE, 0] if geo.shape[1] > 1 else 1
    # split planes into blocks of output rows until every thread has a few tasks
    row_blocks = min(out_first, max(1, -(-4 * threads // max(planes, 1))))
    tasks = planes * row_blocks
    chunks = min(tasks, 4 * threads)
    for chunk in prange(chunks):
        _max_pool_tasks(
            x,
            y,
            indices,
            want_indices,
            shape,
            geo,
            taps,
            order,
            inf_bits,
            fill,
            row_blocks,
            chunk * tasks // chunks,
            (chunk + 1) * tasks // chunks,
        )


@njit(cache=True, nogil=True)
def max_pool_serial(x, y, indices, want_indices, shape, geo, taps, order, inf_bits, fill, threads):
    """max_pool on the calling thread (``threads`` is ignored), for small inputs."""
    _max_pool_tasks(
        x, y, indices, want_indices, shape, geo, taps, order, inf_bits, fill, 1, 0, shape[0]
    )


# ---- GlobalMaxPool ----------------------------------------------------------------------

# A plane is reduced in LANES interleaved lanes (vectorised), each remembering where its
# maximum was, so that the lanes' results combine into exactly the sequential scan's answer.
LANES = 64


@njit(cache=True, nogil=True)
def _plane_max(values, inf_bits, fill, lane_best, lane_at):
    size = values.shape[0]
    if size == 0:
        return fill
    used = min(size, LANES)
    for k in range(used):
        lane_best[k] = values[k]
        lane_at[k] = k
    for block_start in range(LANES, size - LANES + 1, LANES):
        for k in range(LANES):
            value = values[_u(block_start + k)]
            best = lane_best[_u(k)]
            take = replaces(value, best, inf_bits)
            lane_best[_u(k)] = value if take else best
            lane_at[_u(k)] = block_start + k if take else lane_at[_u(k)]
    tail = max(LANES, size - size % LANES)
    for at in range(tail, size):
        k = at - tail
        if replaces(values[at], lane_best[k], inf_bits):
            lane_best[k] = values[at]
            lane_at[k] = at
    best, best_at = lane_best[0], lane_at[0]
    for k in range(1, used):
        value, at = lane_best[k], lane_at[k]
        tie = not replaces(best, value, inf_bits)  # neither beats the other
        if replaces(value, best, inf_bits) or (tie and at < best_at):
            best, best_at = value, at
    return best


@njit(parallel=True, cache=True, nogil=True)
def global_max_nchw(x, y, inf_bits, fill, threads):
    """x (planes, P) -> y (planes,)."""
    planes = x.shape[0]
    chunks = min(planes, 4 * threads)
    for chunk in prange(chunks):
        lane_best = np.empty(LANES, dtype=x.dtype)
        lane_at = np.empty(LANES, dtype=np.int64)
        for plane in range(chunk * planes // chunks, (chunk + 1) * planes // chunks):
            y[plane] = _plane_max(x[plane], inf_bits, fill, lane_best, lane_at)


@njit(parallel=True, cache=True, nogil=True)
def global_max_nhwc(x, y, inf_bits, fill, threads):
    """x (N, P, C) -> y (N, C): each thread folds a stretch of positions, then the stretches
    are folded in order (earlier stretches win ties, as in one sequential scan)."""
    batch, positions, channels = x.shape
    stretches = max(1, min(positions, 4 * threads))
    partial = np.empty((batch, stretches, channels), dtype=x.dtype)
    for task in prange(batch * stretches):
        n = task // stretches
        s = task - n * stretches
        lo, hi = s * positions // stretches, (s + 1) * positions // stretches
        for p in range(lo, hi):
            _merge(partial[n, s], 0, x[n, p], 0, 1, 1, channels, p == lo, inf_bits)
    for n in range(batch):
        for c in range(channels):
            y[n, c] = fill if positions == 0 else partial[n, 0, c]
        for s in range(1, stretches if positions > 0 else 0):
            _merge(y[n], 0, partial[n, s], 0, 1, 1, channels, False, inf_bits)
