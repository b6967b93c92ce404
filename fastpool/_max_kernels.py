"""MaxPool and GlobalMaxPool kernels: loops only.

Every kernel takes the input as a C-contiguous array in its storage type (see
``_ordering``), writes into preallocated outputs, and follows SEMANTICS.md: taps outside
the input are skipped, the first maximum in row-major kernel order wins, the first NaN wins
over everything, and a window without taps gives ``fill`` (the dtype's lowest) and index -1.

The geometry arrives precomputed from ``_attrs``: ``geo[ROW, axis]`` holds one int per spatial
axis for each of the rows named in ``_attrs`` (input and output shape, kernel, strides, ...),
and window o on axis i reads the taps j in ``[taps[0, i, s], taps[1, i, s])``, the ones that
land inside the input, at coordinate ``o * strides[i] - pads_begin[i] + j * dilations[i]``.

Five MaxPool kernels. Channels-first inputs with one or two spatial axes go to the planar
kernel (``_planar_tasks``, described there), channels-first volumes without Indices to the
volume kernel (``_volume_tasks``: maxima along the first axis, then the planar kernel), and
with Indices to the volume Indices kernel (``_volume_indices_tasks``: the planar kernel on
each input slice, then the first maximum over a window's slices), channels-last images and
volumes without Indices to the channels-last kernel (``_channels_last_tasks``: down the
columns, then along the rows C values at a time). Tasks of the volume and channels-last
kernels whose input holds a NaN (with a -0.0 they redo only their outputs with a zero
maximum), and everything else, go to the general one (``_max_pool_tasks``), which is
separable: along the last spatial axis, every input row's window maxima are taken once,
however many windows of the other axes overlap that row; they are then merged, in scan
order, into each output row. Every step keeps the earlier of equal values and the first
NaN, so the row-major "first maximum wins" rule holds exactly.

Speed comes from a few habits. The arrays are flat and addressed by offset (slicing a row
would cost a reference count), and the hot loops are written out in one function: in numba,
helpers that take arrays, or are picked at run time, cost the vectoriser its grip on them.
The loops compare with the cheap ``greater`` unless a float NaN is among a row's values (a
separate, vectorised pass finds out), in which case that row, and every merge it takes part
in, uses the exact ``replaces``. The common channels-first cases (stride 1; 3- and 2-wide
windows at stride 2) get loops with constant bounds and strides, which LLVM unrolls and
vectorises; short rows are pooled as one flat stretch over many rows or planes, with masks
instead of bounds (``_flat_rows``, inlined at the numba IR level so that it vectorises in
place); channels last vectorises along C. In the vector loops, a value and its position
picked by one condition are two selects, not one select of a tuple, which cost one loop 8x.
In a loop LLVM leaves scalar (rows shorter than its vector threshold), it may turn those
selects into branches, which random data mispredict: such rows take the flat stretches.

A kernel that calls another one passes it integers as ``np.int64(1)``, never as a literal
``1``: numba compiles the callee again for each literal argument, and ``_planar_tasks``, 4-5
minutes to compile, had four versions per dtype that way (AMD EPYC Zen 3, 2026-12-07).
"""

from __future__ import annotations

import sys

import numpy as np
from numba import prange

from fastpool._activation import _activate_range
from fastpool._attrs import (
    COLUMN_BLOCK,
    DILATIONS,
    IN_SHAPE,
    INTERIOR_HI,
    INTERIOR_LO,
    KERNEL,
    OUT_SHAPE,
    P_COLUMN_MAJOR,
    P_DH,
    P_DW,
    P_FLAT_ROWS,
    P_FOLD,
    P_GROUP_VALUES,
    P_H,
    P_HELD,
    P_HI_W,
    P_KH,
    P_KW,
    P_LO_W,
    P_OH,
    P_OW,
    P_PH,
    P_PITCH,
    P_PITCH_ROWS,
    P_PW,
    P_ROW_LENGTH,
    P_SH,
    P_SW,
    P_W,
    PADS_BEGIN,
    STRIDES,
)
from fastpool._config import kernel
from fastpool._ordering import (
    as_unsigned,
    from_sortable,
    greater,
    index_words,
    may_be_nan,
    order_key,
    replaces,
    same_type,
    to_sortable,
    wide_items,
)
from fastpool._prefetch import CACHE_LINE, prefetch
from fastpool._vectors import (
    ARGMAX_READ,
    LANES,
    argmax_of_2x2_stride_2,
    argmax_of_3x3_stride_2,
    max_of_2_rows,
    max_of_2_rows_along,
    max_of_2x2_stride_2,
    max_of_3_rows,
    max_of_3_rows_along,
    max_of_3_taps_stride_2,
    max_of_3x3_stride_1,
    max_of_3x3_stride_1_narrow,
    max_of_3x3_stride_2,
)

# Indexing with unsigned integers spares numba's negative-index wraparound, which would
# otherwise keep LLVM from vectorising the loops.
_u = np.uint64


@kernel(inline="always")
def _slot_in(o, lo, hi):
    """_slot, with the axis' interior [lo, hi) at hand (per-row loops that store keep
    them in registers: read from the table, they were read again for every row)."""
    return o - max(0, min(o, hi - 1) - lo)


@kernel(inline="always")
def _interior_lo(taps, axis):
    """The first window along ``axis`` whose taps all land inside the input (the table's
    last column holds the interior [lo, hi), see _attrs.tap_windows)."""
    return taps[0, axis, taps.shape[2] - 1]


@kernel(inline="always")
def _interior_hi(taps, axis):
    """One past the last window along ``axis`` whose taps all land inside the input."""
    return taps[1, axis, taps.shape[2] - 1]


@kernel(inline="always")
def _slot(taps, axis, o):
    """Where window o's tap range along ``axis`` sits in the compact ``taps``: the windows
    of the interior [lo, hi) share the slot of the first (see _attrs.tap_windows)."""
    return _slot_in(o, _interior_lo(taps, axis), _interior_hi(taps, axis))


@kernel(inline="always")
def _tap_lo(taps, axis, o):
    """The first kernel tap of window o along ``axis`` that lands inside the input."""
    return taps[0, axis, _slot(taps, axis, o)]


@kernel(inline="always")
def _tap_hi(taps, axis, o):
    """One past the last kernel tap of window o along ``axis`` inside the input."""
    return taps[1, axis, _slot(taps, axis, o)]


# ---- MaxPool, any number of spatial axes, channels first or last ------------------------


@kernel(inline="always")
def _takes(value, best, inf_bits, has_nan):
    """replaces where a row may hold a NaN, else greater: the same answer without one, in
    fewer operations (in the loops that carry positions, 0.63-0.85 of the time on four
    channels-last cases with Indices)."""
    if has_nan:
        return replaces(value, best, inf_bits)
    return greater(value, best, inf_bits)


@kernel()
def _max_pool_tasks(
    x, y, indices, want, shape, geo, taps, order, inf_bits, fill, act_code, act_constants,
    row_blocks, first_task, last_task,
):  # fmt: skip
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
    # along the last axis
    kernel = geo[KERNEL, lead]
    stride = geo[STRIDES, lead]
    dilation = geo[DILATIONS, lead]
    pad = geo[PADS_BEGIN, lead]
    lo, hi = geo[INTERIOR_LO, lead], geo[INTERIOR_HI, lead]
    n_out = geo[OUT_SHAPE, lead]
    # rows per step along the first leading axis (all rows when there is none)
    inner = rows // geo[IN_SHAPE, 0] if lead > 0 and geo[IN_SHAPE, 0] > 0 else rows
    out_inner = out_rows // geo[OUT_SHAPE, 0] if lead > 0 else out_rows
    out_first = geo[OUT_SHAPE, 0] if lead > 0 else 1
    window_rows = np.empty(0, dtype=x.dtype)
    window_cols = np.empty(0, dtype=np.int64)
    row_has_nan = np.empty(0, dtype=np.bool_)
    out_coord = np.empty(lead, dtype=np.int64)
    tap = np.empty(lead, dtype=np.int64)
    for task in range(first_task, last_task):
        plane = task // row_blocks
        block_no = task - plane * row_blocks
        o_lo = block_no * out_first // row_blocks
        o_hi = (block_no + 1) * out_first // row_blocks
        # the task's outputs, for the activation
        y_from = (plane * out_rows + o_lo * out_inner) * out_length
        y_to = (plane * out_rows + o_hi * out_inner) * out_length
        # the input rows these outputs read: a range along the first leading axis
        r_lo, r_hi = 0, rows
        if lead > 0:
            r_lo, r_hi = geo[IN_SHAPE, 0], 0
            for o in range(o_lo, o_hi):
                j_lo, j_hi = _tap_lo(taps, 0, o), _tap_hi(taps, 0, o)
                if j_lo < j_hi:
                    start = o * geo[STRIDES, 0] - geo[PADS_BEGIN, 0]
                    r_lo = min(r_lo, start + j_lo * geo[DILATIONS, 0])
                    r_hi = max(r_hi, start + (j_hi - 1) * geo[DILATIONS, 0] + 1)
            r_lo, r_hi = r_lo * inner, max(r_lo, r_hi) * inner
        # (the rows are contiguous, so one sweep tells whether any holds a NaN)
        any_nan = False
        for i in range((plane * rows + r_lo) * row_length, (plane * rows + r_hi) * row_length):
            any_nan |= may_be_nan(x[_u(i)], inf_bits)
        if row_has_nan.shape[0] < r_hi - r_lo:
            window_rows = np.empty((r_hi - r_lo) * out_length, dtype=x.dtype)
            row_has_nan = np.empty(r_hi - r_lo, dtype=np.bool_)
            if want:
                window_cols = np.empty((r_hi - r_lo) * out_length, dtype=np.int64)

        # 1. window maxima along the last axis, for each input row (if the sweep above found
        # a NaN, each row is checked)
        for r in range(r_lo, r_hi):
            xa = (plane * rows + r) * row_length
            wa = (r - r_lo) * out_length
            has_nan = False
            if any_nan:
                for i in range(row_length):
                    has_nan |= may_be_nan(x[_u(xa + i)], inf_bits)
            row_has_nan[r - r_lo] = has_nan
            # (the loops that carry positions, or compare by the NaN rule: _takes picks)
            exact = want or has_nan
            if block > 1:  # channels last: vectorised along the channels
                for o in range(lo, hi):
                    at = xa + (o * stride - pad) * block
                    out_at = wa + o * block
                    for c in range(block):
                        window_rows[_u(out_at + c)] = x[_u(at + c)]
                        if want:
                            window_cols[_u(out_at + c)] = at + c - xa
                    for j in range(1, kernel):
                        tap_at = at + j * dilation * block
                        if exact:
                            for c in range(block):
                                value = x[_u(tap_at + c)]
                                best = window_rows[_u(out_at + c)]
                                take = _takes(value, best, inf_bits, has_nan)
                                window_rows[_u(out_at + c)] = value if take else best
                                if want:
                                    col = window_cols[_u(out_at + c)]
                                    window_cols[_u(out_at + c)] = tap_at + c - xa if take else col
                        else:
                            for c in range(block):
                                value = x[_u(tap_at + c)]
                                best = window_rows[_u(out_at + c)]
                                take = greater(value, best, inf_bits)
                                window_rows[_u(out_at + c)] = value if take else best
            elif stride == 1:  # consecutive windows: one contiguous sweep per tap
                at = xa + lo - pad
                for o in range(lo, hi):
                    window_rows[_u(wa + o)] = x[_u(at + o - lo)]
                    if want:
                        window_cols[_u(wa + o)] = at + o - lo - xa
                for j in range(1, kernel):
                    tap_at = at + j * dilation - lo
                    if exact:
                        for o in range(lo, hi):
                            value = x[_u(tap_at + o)]
                            best = window_rows[_u(wa + o)]
                            take = _takes(value, best, inf_bits, has_nan)
                            window_rows[_u(wa + o)] = value if take else best
                            if want:
                                col = window_cols[_u(wa + o)]
                                window_cols[_u(wa + o)] = tap_at + o - xa if take else col
                    else:
                        for o in range(lo, hi):
                            value = x[_u(tap_at + o)]
                            best = window_rows[_u(wa + o)]
                            take = greater(value, best, inf_bits)
                            window_rows[_u(wa + o)] = value if take else best
            elif want and stride == 2 and kernel == 3 and dilation == 1:
                for o in range(lo, hi):
                    at = xa + 2 * o - pad
                    best, best_at = x[_u(at)], at
                    value = x[_u(at + 1)]
                    take = _takes(value, best, inf_bits, has_nan)
                    best = value if take else best
                    best_at = at + 1 if take else best_at
                    value = x[_u(at + 2)]
                    take = _takes(value, best, inf_bits, has_nan)
                    best = value if take else best
                    best_at = at + 2 if take else best_at
                    window_rows[_u(wa + o)] = best
                    window_cols[_u(wa + o)] = best_at - xa
            elif exact:  # window by window
                for o in range(lo, hi):
                    at = xa + o * stride - pad
                    best, best_at = x[_u(at)], at
                    for j in range(1, kernel):
                        value = x[_u(at + j * dilation)]
                        if _takes(value, best, inf_bits, has_nan):
                            best, best_at = value, at + j * dilation
                    window_rows[_u(wa + o)] = best
                    if want:
                        window_cols[_u(wa + o)] = best_at - xa
            elif stride == 2 and kernel == 3 and dilation == 1:
                for o in range(lo, hi):
                    at = xa + 2 * o - pad
                    best = x[_u(at)]
                    value = x[_u(at + 1)]
                    best = value if greater(value, best, inf_bits) else best
                    value = x[_u(at + 2)]
                    best = value if greater(value, best, inf_bits) else best
                    window_rows[_u(wa + o)] = best
            elif stride == 2 and kernel == 2 and dilation == 1:
                for o in range(lo, hi):
                    at = xa + 2 * o - pad
                    best = x[_u(at)]
                    value = x[_u(at + 1)]
                    window_rows[_u(wa + o)] = value if greater(value, best, inf_bits) else best
            else:
                for o in range(lo, hi):
                    at = xa + o * stride - pad
                    best = x[_u(at)]
                    for j in range(1, kernel):
                        value = x[_u(at + j * dilation)]
                        best = value if greater(value, best, inf_bits) else best
                    window_rows[_u(wa + o)] = best
            for part in range(2):  # the border windows: before and after the interior
                o_from, o_to = (0, lo) if part == 0 else (hi, n_out)
                for o in range(o_from, o_to):
                    j_lo, j_hi = _tap_lo(taps, lead, o), _tap_hi(taps, lead, o)
                    for c in range(block):
                        best, best_col = fill, -1
                        for j in range(j_lo, j_hi):
                            col = (o * stride - pad + j * dilation) * block + c
                            if best_col < 0 or replaces(x[xa + col], best, inf_bits):
                                best, best_col = x[xa + col], col
                        window_rows[wa + o * block + c] = best
                        if want:
                            window_cols[wa + o * block + c] = best_col

        # 2. merge, for each output row, the rows its windows cover, in scan order
        for q in range(o_lo * out_inner, o_hi * out_inner):
            ya = (plane * out_rows + q) * out_length
            empty = False
            rest = q
            for i in range(lead - 1, -1, -1):
                out_coord[i] = rest % geo[OUT_SHAPE, i]
                rest //= geo[OUT_SHAPE, i]
                tap[i] = _tap_lo(taps, i, out_coord[i])
                empty |= tap[i] >= _tap_hi(taps, i, out_coord[i])
            if empty:
                for e in range(ya, ya + out_length):
                    y[e] = fill
                    if want:
                        indices[e] = -1
                continue
            first = True
            exact = False  # from the first row holding a NaN on, compare exactly
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
                wa = (row - r_lo) * out_length
                exact |= row_has_nan[row - r_lo]
                if want:
                    base = (plane * index_plane_size + offset) * block
                    col_stride = geo[order, lead]
                    if first:
                        for e in range(out_length):
                            col = window_cols[_u(wa + e)]
                            y[_u(ya + e)] = window_rows[_u(wa + e)]
                            indices[_u(ya + e)] = base + col * col_stride if col >= 0 else -1
                    elif exact:  # (a loop each: one with _takes took 1.03-1.20x the time)
                        for e in range(out_length):
                            value = window_rows[_u(wa + e)]
                            col = window_cols[_u(wa + e)]
                            index = base + col * col_stride if col >= 0 else -1
                            take = replaces(value, y[_u(ya + e)], inf_bits)
                            y[_u(ya + e)] = value if take else y[_u(ya + e)]
                            indices[_u(ya + e)] = index if take else indices[_u(ya + e)]
                    else:
                        for e in range(out_length):
                            value = window_rows[_u(wa + e)]
                            col = window_cols[_u(wa + e)]
                            index = base + col * col_stride if col >= 0 else -1
                            take = greater(value, y[_u(ya + e)], inf_bits)
                            y[_u(ya + e)] = value if take else y[_u(ya + e)]
                            indices[_u(ya + e)] = index if take else indices[_u(ya + e)]
                elif first:
                    for e in range(out_length):
                        y[_u(ya + e)] = window_rows[_u(wa + e)]
                elif exact:
                    for e in range(out_length):
                        value = window_rows[_u(wa + e)]
                        best = y[_u(ya + e)]
                        y[_u(ya + e)] = value if replaces(value, best, inf_bits) else best
                else:
                    for e in range(out_length):
                        value = window_rows[_u(wa + e)]
                        best = y[_u(ya + e)]
                        y[_u(ya + e)] = value if greater(value, best, inf_bits) else best
                first = False
                axis = lead - 1
                while axis >= 0:
                    tap[axis] += 1
                    if tap[axis] < _tap_hi(taps, axis, out_coord[axis]):
                        break
                    tap[axis] = _tap_lo(taps, axis, out_coord[axis])
                    axis -= 1
                if axis < 0:
                    break
        if act_code >= 0:  # the activation, while the outputs are in cache
            _activate_range(y, act_code, act_constants, y_from, y_to)


@kernel(parallel=True)
def max_pool(
    x, y, indices, want, shape, geo, taps, order, inf_bits, fill, act_code, act_constants, threads
):
    """Parallel MaxPool; see _max_pool_tasks for the arguments."""
    planes = shape[0]
    out_first = geo[OUT_SHAPE, 0] if geo.shape[1] > 1 else 1
    # split planes into blocks of output rows until every thread has a few tasks
    row_blocks = min(out_first, max(1, -(-4 * threads // max(planes, 1))))
    tasks = planes * row_blocks
    chunks = min(tasks, threads)  # (one chunk per thread: see max_pool_planar)
    for chunk in prange(chunks):
        _max_pool_tasks(
            x,
            y,
            indices,
            want,
            shape,
            geo,
            taps,
            order,
            inf_bits,
            fill,
            act_code,
            act_constants,
            row_blocks,
            chunk * tasks // chunks,
            (chunk + 1) * tasks // chunks,
        )


@kernel()
def max_pool_serial(
    x, y, indices, want, shape, geo, taps, order, inf_bits, fill, act_code, act_constants, threads
):
    """max_pool on the calling thread (``threads`` is ignored), for small inputs."""
    _max_pool_tasks(x, y, indices, want, shape, geo, taps, order, inf_bits, fill, act_code,
                    act_constants, np.int64(1), np.int64(0), shape[0])  # fmt: skip


# ---- MaxPool, channels first, one or two spatial axes -------------------------------------

# Window maxima of input rows that rows-first Indices keep at a time (a sortable value and
# an int64 index each): a task's output rows go in blocks whose input rows fit, except
# that one output row always fits.
ROWS_SCRATCH = 1 << 16


# int32 0, 1, 2, ...: a column's offset in a row of column maxima (see _pitch_columns).
# A global array: numba compiles it in as a constant.
_COLUMN_OFFSETS = np.arange(COLUMN_BLOCK, dtype=np.int32)


@kernel(inline="always")
def _column_max(x, ra, step, n_rows, columns, ca, n, sortable_fill, spare):
    """columns[ca + i] = the maximum (sortable) of x[ra + t * step + i] over the rows t <
    n_rows, for i < n (``sortable_fill`` when there are none): the pass down the columns of
    the flat stretches. Inlined into the kernel (numba IR), so its loops vectorise there.
    ``spare``: scratch of columns' size, for windows of 4 rows or more than 5."""
    if n_rows <= 0:
        for i in range(n):
            columns[_u(ca + i)] = sortable_fill
    elif n_rows == 3:
        for i in range(n):
            a = to_sortable(x[_u(ra + i)])
            b = to_sortable(x[_u(ra + step + i)])
            a = b if b > a else a
            b = to_sortable(x[_u(ra + 2 * step + i)])
            columns[_u(ca + i)] = b if b > a else a
    elif n_rows == 2:
        for i in range(n):
            a = to_sortable(x[_u(ra + i)])
            b = to_sortable(x[_u(ra + step + i)])
            columns[_u(ca + i)] = b if b > a else a
    elif n_rows == 5:  # (5x5 stride 1, as spatial pyramid pooling has)
        for i in range(n):
            a = to_sortable(x[_u(ra + i)])
            b = to_sortable(x[_u(ra + step + i)])
            a = b if b > a else a
            b = to_sortable(x[_u(ra + 2 * step + i)])
            a = b if b > a else a
            b = to_sortable(x[_u(ra + 3 * step + i)])
            a = b if b > a else a
            b = to_sortable(x[_u(ra + 4 * step + i)])
            columns[_u(ca + i)] = b if b > a else a
    else:
        # Row by row from one buffer into the other, starting in the one that leaves the
        # last row's maxima in columns. (In place, each select was stored back where it was
        # read, a masked store, slow on AMD processors: values of 7x7 windows on 56x56
        # planes took twice the time, Zen 3.)
        into_columns = n_rows % 2 == 1
        into = columns if into_columns else spare
        for i in range(n):
            into[_u(ca + i)] = to_sortable(x[_u(ra + i)])
        for t in range(1, n_rows):
            read = into
            into_columns = not into_columns
            into = columns if into_columns else spare
            for i in range(n):
                a = read[_u(ca + i)]
                b = to_sortable(x[_u(ra + t * step + i)])
                into[_u(ca + i)] = b if b > a else a


@kernel(inline="always")
def _held(b, special_mask, largest, smallest):
    """largest and smallest updated with the bits b of one float (see _specials_held)."""
    magnitude = same_type(b & special_mask, b)
    largest = magnitude if magnitude > largest else largest
    smallest = b if b < smallest else smallest
    return largest, smallest


# _special_flags: bits[lo:hi] hold a NaN, a -0.0
HOLDS_NAN, HOLDS_NEGATIVE_ZERO = 1, 2


@kernel(inline="always")
def _special_flags(bits, lo, hi, special_mask, special_inf):
    """HOLDS_NAN if bits[lo:hi] (floats seen as signed integers) hold a NaN, plus
    HOLDS_NEGATIVE_ZERO if they hold a -0.0: the largest magnitude tells the first, the
    smallest signed integer the second (bit pattern = the type's minimum). Min/max
    reductions vectorise best; the magnitudes are cast back to the bits' type (numba widens
    ``&`` to 64 bits, which made the float32 loop three times slower). One integer, not a
    pair of flags: see _window_task."""
    largest = same_type(bits[lo] & special_mask, special_mask)
    smallest = bits[lo]
    for i in range(lo, hi):
        largest, smallest = _held(bits[_u(i)], special_mask, largest, smallest)
    return HOLDS_NAN * (largest > special_inf) + HOLDS_NEGATIVE_ZERO * (smallest == ~special_mask)


@kernel(inline="always")
def _specials_held(bits, lo, hi, special_mask, special_inf):
    """Whether bits[lo:hi] hold a NaN, and whether they hold a -0.0 (see _special_flags)."""
    flags = _special_flags(bits, lo, hi, special_mask, special_inf)
    return (flags & HOLDS_NAN) != 0, (flags & HOLDS_NEGATIVE_ZERO) != 0


@kernel(inline="always")
def _column_argmax(x, ra, step, n_rows, columns, positions, ca, n, at, sortable_fill, spare,
                   spare_at):  # fmt: skip
    """_column_max, also writing the position of each column maximum into positions[ca + i]:
    at + t * step + i for the first row t holding it (int32; -1 when there is no row),
    made from _COLUMN_OFFSETS (see _pitch_columns): n <= COLUMN_BLOCK. ``spare``,
    ``spare_at``: scratch of the sizes of columns and positions, as in _column_max."""
    if n_rows <= 0:
        for i in range(n):
            columns[_u(ca + i)] = sortable_fill
            positions[_u(ca + i)] = -1
        return
    at0, step32 = np.int32(at), np.int32(step)
    if n_rows == 3:  # (one pass, the rows written out)
        step2 = np.int32(2 * step)
        for i in range(n):
            a = to_sortable(x[_u(ra + i)])
            b = to_sortable(x[_u(ra + step + i)])
            c = to_sortable(x[_u(ra + 2 * step + i)])
            t1 = b > a
            m = b if t1 else a
            t2 = c > m
            columns[_u(ca + i)] = c if t2 else m
            p0 = np.int32(_COLUMN_OFFSETS[_u(i)] + at0)
            p1 = np.int32(p0 + step32)
            p2 = np.int32(p0 + step2)
            positions[_u(ca + i)] = p2 if t2 else (p1 if t1 else p0)
        return
    if n_rows == 2:
        for i in range(n):
            a = to_sortable(x[_u(ra + i)])
            b = to_sortable(x[_u(ra + step + i)])
            t1 = b > a
            columns[_u(ca + i)] = b if t1 else a
            p0 = np.int32(_COLUMN_OFFSETS[_u(i)] + at0)
            p1 = np.int32(p0 + step32)
            positions[_u(ca + i)] = p1 if t1 else p0
        return
    # row by row from one pair of buffers into the other, as in _column_max
    into_columns = n_rows % 2 == 1
    into, into_at = (columns, positions) if into_columns else (spare, spare_at)
    for i in range(n):
        into[_u(ca + i)] = to_sortable(x[_u(ra + i)])
        into_at[_u(ca + i)] = np.int32(_COLUMN_OFFSETS[_u(i)] + at0)
    for t in range(1, n_rows):
        at_t = np.int32(at + t * step)
        read, read_at = into, into_at
        into_columns = not into_columns
        into, into_at = (columns, positions) if into_columns else (spare, spare_at)
        for i in range(n):
            a, a_at = read[_u(ca + i)], read_at[_u(ca + i)]
            b = to_sortable(x[_u(ra + t * step + i)])
            take = b > a
            into[_u(ca + i)] = b if take else a
            into_at[_u(ca + i)] = np.int32(_COLUMN_OFFSETS[_u(i)] + at_t) if take else a_at


@kernel(inline="always")
def _fold_argmax(columns, positions, at):
    """Column at + 1 (computed too) into column at, for the last window of a row: the
    larger column maximum, and of equal ones the first in row-major order."""
    a, a_at = columns[_u(at)], positions[_u(at)]
    b, b_at = columns[_u(at + 1)], positions[_u(at + 1)]
    take = b > a or (b == a and b_at < a_at)
    columns[_u(at)] = b if take else a
    positions[_u(at)] = b_at if take else a_at


@kernel(inline="always")
def _fold(x, at, W, n_rows, columns, ca):
    """columns[ca] = the larger of columns ca and ca + 1 of a row of column maxima just
    stored by max_of_2_rows or max_of_3_rows, whose n_rows (2 or 3) rows of W start at x[at]
    for column ca. 4- and 8-byte items read them from x: read back from a vector store of
    64 bytes or more, 3x3/2 on 832 planes of 13x13 took 1.10x the time (float32, serial
    kernel, AMD Zen 5). 1- and 2-byte items, whose stores are narrower, read them back:
    from x, the same layer took 1.4x (uint8) and 1.7x (float16) the time."""
    if wide_items(x):
        a = to_sortable(x[_u(at)])
        b = to_sortable(x[_u(at + 1)])
        a = b if b > a else a
        for t in range(1, n_rows):
            b = to_sortable(x[_u(at + t * W)])
            a = b if b > a else a
            b = to_sortable(x[_u(at + t * W + 1)])
            a = b if b > a else a
        columns[_u(ca)] = a
    else:
        _fold_stored(columns, ca)


@kernel(inline="always")
def _fold_stored(columns, ca):
    """columns[ca] = the larger of columns ca and ca + 1, both stored."""
    a, b = columns[_u(ca)], columns[_u(ca + 1)]
    columns[_u(ca)] = b if b > a else a


@kernel(counted=False)
def _pitch_columns(
    x, taps, dims, u_from, u_to, columns, guard, lanes, sortable_fill, want, positions, seen,
    spare, spare_at,
):  # fmt: skip
    """The pass down the columns for a row pass over rows of ``pitch`` column maxima:
    output rows u_from..u_to-1 (row u = p * OH + oh: row oh of plane p) into
    columns[guard + (u - u_from) * pitch + c], ``lanes`` columns (a multiple of 16, at
    least those held) at a time; the values of the rows whose taps all lie inside the plane
    as vectors of 16 (_vectors). With ``want``, also the position of each column maximum
    (the first, down the column) into ``positions``, counted from the first plane's start
    (int32; -1: no row). Compiled on its own: inside the planar kernel the same loops ran
    twice as slowly.

    (A position is the column's entry in _COLUMN_OFFSETS plus the row's start: counted up
    beside the loop's index, even cast back to int32 at every step, LLVM derived it from
    that 64-bit index and computed it in 64-bit lanes, packing each vector to store it.
    Read from a table it stays in 32-bit lanes, and from a constant one, which no store
    can overlap, without a run-time check that would keep rows of 16 columns from the
    vector loop.)

    Where ``seen`` has items (values of windows 2 high on rows of at least 16 held
    columns), the rows whose two taps are inside the plane are pooled a row at a time by
    max_of_2_rows_along, which checks both rows for NaN and -0.0 into the lanes of
    ``seen`` as it loads them; it reads only the held columns (and a folded one), so
    nothing past a row."""
    H, W, OH = dims[P_H], dims[P_W], dims[P_OH]
    kh, sh, dh, ph = dims[P_KH], dims[P_SH], dims[P_DH], dims[P_PH]
    pitch, held, fold = dims[P_PITCH], dims[P_HELD], dims[P_FOLD] != 0
    step = dh * W
    w1, w2 = np.int32(W), np.int32(2 * W)
    vectors = lanes // LANES  # (lanes: a multiple of 16)
    # 1. 2 or 3 rows a window: the rows whose taps are all inside the plane, with no decision
    # per row (on rows this short, the decisions and the loop set-up were most of the time).
    # Whole vectors of ``lanes``, as below.
    full_lo, full_hi = 0, 0
    if dh == 1 and (kh == 2 or kh == 3):  # (the interior rows, from the last column)
        full_lo, full_hi = _interior_lo(taps, 0), _interior_hi(taps, 0)
    # (windows move monotonically, so the full rows are contiguous; when every row is full,
    # one loop takes the rows of all the planes: where no rows are left over at a plane's end
    # (2x2/2 on planes of even height), and for 3x3 values, stepping over those rows)
    every_row_full = full_lo == 0 and full_hi == OH
    plane_gap = (H - OH * sh) * W  # (from a plane's last row to the next one's first)
    # the rows before u_safe read whole vectors inside x (rows read later come later in x)
    u_safe = x.shape[0] // max(H * W, 1) * OH
    while u_safe > 0:
        last_p, last_oh = (u_safe - 1) // OH, (u_safe - 1) % OH
        if last_p * H * W + (last_oh * sh - ph + kh - 1) * W + lanes <= x.shape[0]:
            break
        u_safe -= 1
    # 2-row values that fold the check of the rows they read (see max_of_2_rows_along)
    checking = kh == 2 and not want and seen.shape[0] > 0
    p = u_from // OH
    oh = u_from - p * OH
    p_first = p
    u = u_from
    while u < u_to:
        if full_lo <= oh < full_hi:
            # this plane's full rows from here, in order (each row's vectors spill into
            # the next row's columns, which that row then overwrites)
            ra = p * H * W + (oh * sh - ph) * W
            # (3x3/2 values plane by plane took 1.19x the time of the serial kernel on 832
            # planes of 13x13; the other loops count no rows: with the count, 2x2/2 on
            # 12x12 to 28x28 planes took 1.05-1.17x, and Indices gained little)
            across = every_row_full and (plane_gap == 0 or (kh == 3 and not want))
            u_hi = u_to if across else min(u_to, u + full_hi - oh)
            # (not the rows whose vectors would read past the input; the checking loop
            # reads none)
            if not checking:
                u_hi = max(u, min(u_hi, u_safe))
            plane_row = oh  # (of the row at ra)
            ca = guard + (u - u_from) * pitch
            if want and kh == 3:
                # (the loops written out, with positions: through the inlined
                # _column_argmax, the same loop ran 6-11x slower on an Intel Xeon with
                # AVX-512, on 12x12 to 14x14 planes)
                for _ in range(u, u_hi):
                    at = np.int32(ra - p_first * H * W)
                    for i in range(lanes):
                        a = to_sortable(x[_u(ra + i)])
                        b = to_sortable(x[_u(ra + W + i)])
                        c = to_sortable(x[_u(ra + 2 * W + i)])
                        t1 = b > a
                        m = b if t1 else a
                        t2 = c > m
                        columns[_u(ca + i)] = c if t2 else m
                        p0 = np.int32(_COLUMN_OFFSETS[_u(i)] + at)
                        p1 = np.int32(p0 + w1)
                        p2 = np.int32(p0 + w2)
                        positions[_u(ca + i)] = p2 if t2 else (p1 if t1 else p0)
                    if fold:
                        _fold_argmax(columns, positions, ca + pitch - 1)
                    ra += sh * W
                    ca += pitch
            elif want:  # (kh == 2)
                for _ in range(u, u_hi):
                    at = np.int32(ra - p_first * H * W)
                    for i in range(lanes):
                        a = to_sortable(x[_u(ra + i)])
                        b = to_sortable(x[_u(ra + W + i)])
                        t1 = b > a
                        columns[_u(ca + i)] = b if t1 else a
                        p0 = np.int32(_COLUMN_OFFSETS[_u(i)] + at)
                        p1 = np.int32(p0 + w1)
                        positions[_u(ca + i)] = p1 if t1 else p0
                    if fold:
                        _fold_argmax(columns, positions, ca + pitch - 1)
                    ra += sh * W
                    ca += pitch
            elif kh == 3:
                # (values: 16 columns a vector, the first written out as most rows have one:
                # LLVM's own loop over ``lanes`` set up its overlap check and vector loop on
                # every row, see _vectors)
                for _ in range(u, u_hi):
                    max_of_3_rows(x, ra, ra + W, ra + 2 * W, columns, ca)
                    for v in range(1, vectors):
                        i = v * LANES
                        max_of_3_rows(x, ra + i, ra + W + i, ra + 2 * W + i, columns, ca + i)
                    if fold:  # column `pitch` into the one before it
                        _fold(x, ra + pitch - 1, W, 3, columns, ca + pitch - 1)
                    ra += sh * W
                    ca += pitch
                    plane_row += 1
                    if plane_row == OH:
                        ra += plane_gap
                        plane_row = 0
            elif checking:
                # (a folded column, `pitch`, is pooled and checked as the row's last, then
                # folded into the one before it: it lies inside the row, as the last
                # window reads it)
                count = held + 1 if fold else held
                for _ in range(u, u_hi):
                    max_of_2_rows_along(x, ra, W, count, columns, ca, seen)
                    if fold:
                        _fold_stored(columns, ca + pitch - 1)
                    ra += sh * W
                    ca += pitch
            else:
                for _ in range(u, u_hi):
                    max_of_2_rows(x, ra, ra + W, columns, ca)
                    for v in range(1, vectors):
                        i = v * LANES
                        max_of_2_rows(x, ra + i, ra + W + i, columns, ca + i)
                    if fold:
                        _fold(x, ra + pitch - 1, W, 2, columns, ca + pitch - 1)
                    ra += sh * W
                    ca += pitch
            if u_hi > u:
                oh += u_hi - u
                u = u_hi
                while oh >= OH:  # (not a division for each plane)
                    p, oh = p + 1, oh - OH
                continue
        # 2. Every other row, one at a time.
        ca = guard + (u - u_from) * pitch
        t_lo, t_hi = _tap_lo(taps, 0, oh), _tap_hi(taps, 0, oh)
        ra = p * H * W + (oh * sh - ph + t_lo * dh) * W
        n_rows = t_hi - t_lo
        if want:
            n = lanes if ra + (n_rows - 1) * step + lanes <= x.shape[0] else held
            _column_argmax(x, ra, step, n_rows, columns, positions, ca, n,
                           ra - p_first * H * W, sortable_fill, spare, spare_at)  # fmt: skip
            if fold and n == lanes:
                _fold_argmax(columns, positions, ca + pitch - 1)
            elif fold:  # column `pitch` into the one before it, the first maximum winning
                a, at = columns[ca + pitch - 1], positions[ca + pitch - 1]
                for t in range(n_rows):
                    b = to_sortable(x[ra + t * step + pitch])
                    b_at = np.int32(ra - p_first * H * W + t * step + pitch)
                    take = b > a or (b == a and b_at < at)
                    a, at = (b, b_at) if take else (a, at)
                columns[ca + pitch - 1], positions[ca + pitch - 1] = a, at
        elif ra + (n_rows - 1) * step + lanes <= x.shape[0]:
            # whole vectors: the columns past the row are overwritten by the next
            # row, or never read unmasked (a loop length LLVM does not know: a known
            # one is unrolled to scalars, as it cannot prove x and columns apart)
            _column_max(x, ra, step, n_rows, columns, ca, lanes, sortable_fill, spare)
            if fold:  # column `pitch` (computed too) into the one before it
                _fold_stored(columns, ca + pitch - 1)
        else:
            _column_max(x, ra, step, n_rows, columns, ca, held, sortable_fill, spare)
            if fold:  # column `pitch` into the one before it
                a = columns[ca + pitch - 1]
                for t in range(n_rows):
                    b = to_sortable(x[ra + t * step + pitch])
                    a = b if b > a else a
                columns[ca + pitch - 1] = a
        u += 1
        oh += 1
        if oh == OH:
            p, oh = p + 1, 0


@kernel(inline="always")
def _short_square_rows(dims):
    """Whether values of a group of small planes take the short rows
    (_short_rows_2x2_3x3, _short_rows_3x3_stride_1): undilated windows, each
    holding a row and a column of the plane, on rows of at most 32 columns: 2x2 or 3x3 at
    stride 2 with no pad before a row, the windows' columns among the first 32 (2x2: 16
    windows a row, 3x3: 15), or 3x3 at stride 1 on rows of 10 to 32 with the pad before
    them (of at most 2)."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    k, ph, pw = dims[P_KH], dims[P_PH], dims[P_PW]
    if _square_stride_2(dims, 2) or _square_stride_2(dims, 3):
        return (
            pw == 0
            and ph < k
            and W <= 2 * LANES
            and 2 * (OW - 1) < W
            and 2 * (OW - 1) + k <= 2 * LANES
            and 2 * (OH - 1) - ph < H
        )
    # (3x3/1 on rows of under 10 columns stays with the flat stretches: called on their
    # own, one thread, float32, the short rows took 1.1-1.9x their time on 6x6 and 7x7
    # planes, 0.9-1.1x on 8x8 and 9x9, 0.74-0.78x on 10x10 and 0.6x on 11x11)
    return (
        _square_stride_1(dims, 3)
        and ph < k
        and pw < k
        and W >= 10
        and W + pw <= 2 * LANES
        and OW <= W + pw
        and OH <= H + ph
    )


# the windows of the short rows, one intrinsic each (_short_kind)
SHORT_2X2_STRIDE_2, SHORT_3X3_STRIDE_2, SHORT_3X3_STRIDE_1, SHORT_3X3_STRIDE_1_NARROW = range(4)


@kernel(inline="always")
def _short_kind(dims):
    """Which of the SHORT_ kinds the short rows pool (3x3/1 narrow: rows of at most 16
    columns, pad before included, one vector a row)."""
    if dims[P_SH] == 2:
        return SHORT_3X3_STRIDE_2 if dims[P_KH] == 3 else SHORT_2X2_STRIDE_2
    if dims[P_W] + dims[P_PW] <= LANES:
        return SHORT_3X3_STRIDE_1_NARROW
    return SHORT_3X3_STRIDE_1


@kernel(inline="always")
def _short_row_vectors(x, first, second, third, kind, pw, W, y, at, sortable_fill):
    """y[at:] = an output row of the short rows (and the windows after it, up to 16 or 32) from
    the rows at x[first], x[second] and x[third] (2x2: the first two). (Its arguments are
    plain integers, not dims: the stores to y would make LLVM read dims again each row.)"""
    if kind == SHORT_3X3_STRIDE_1_NARROW:
        max_of_3x3_stride_1_narrow(x, first, second, third, pw, W, y, at, sortable_fill)
    elif kind == SHORT_3X3_STRIDE_1:
        max_of_3x3_stride_1(x, first, second, third, pw, W, y, at, sortable_fill)
    elif kind == SHORT_3X3_STRIDE_2:
        max_of_3x3_stride_2(x, first, second, third, W, y, at, sortable_fill)
    else:
        max_of_2x2_stride_2(x, first, second, W, y, at, sortable_fill)


@kernel(inline="always")
def _short_window_rows(xa, top, kind, H, W):
    """(first, second, third): where the rows of a short-rows window whose rows start at
    row ``top`` of the plane at x[xa] begin; a pad row is the window's first row inside,
    read again (2x2: third is first)."""
    first = xa + max(top, 0) * W
    second = xa + (top + 1) * W if 0 <= top + 1 < H else first
    third = (xa + (top + 2) * W if 0 <= top + 2 < H and kind != SHORT_2X2_STRIDE_2
             else first)  # fmt: skip
    return first, second, third


@kernel(inline="always")
def _short_row(x, y, xa, at, top, kind, H, W, OW, pw, careful, scratch, sortable_fill):
    """y[at:][:OW] = an output row of the short rows whose window rows start at row ``top`` of
    the plane at x[xa] (a pad row: the window's first row inside, read again).
    ``careful``: rows whose vectors would read outside x (from ``pw`` items before a row
    to 32 after its start), or outputs whose 32 would land past the caller's (y.shape[0],
    see _short_rows_2x2_3x3), go through ``scratch``."""
    first, second, third = _short_window_rows(xa, top, kind, H, W)
    if not careful or (
        min(first, min(second, third)) >= pw
        and max(first, max(second, third)) + 2 * LANES <= x.shape[0]
        and at + 2 * LANES <= y.shape[0]
    ):
        _short_row_vectors(x, first, second, third, kind, pw, W, y, at, sortable_fill)
        return
    # (each row at pw in its 32 items; the lanes before it are masked)
    for c in range(W):
        scratch[pw + c] = x[first + c]
        scratch[2 * LANES + pw + c] = x[second + c]
        scratch[4 * LANES + pw + c] = x[third + c]
    _short_row_vectors(scratch, pw, 2 * LANES + pw, 4 * LANES + pw, kind, pw, W, scratch,
                       6 * LANES, sortable_fill)  # fmt: skip
    for c in range(OW):
        y[at + c] = scratch[6 * LANES + c]


@kernel(inline="always")
def _planes_in_place(x, y, p_from, p_to, H, W, OH, OW, pw, read, stored):
    """(p_lo, p_safe): the planes p_lo to p_safe - 1 of the short rows' p_from to p_to - 1
    pool in place, the others through the scratch (_short_plane_by_rows). Before p_lo: the
    input's first plane, whose first row would be read from ``pw`` items before x. From
    p_safe: the planes at the ends of x and y, where a row's vectors (``read`` items from
    its start) would read past x, or the ``stored`` outputs of its last row land past y."""
    p_lo = min(p_to, p_from + 1) if p_from == 0 and pw > 0 else p_from
    p_safe = p_to
    while p_safe > p_lo and (p_safe * H * W - W + read > x.shape[0]
                             or p_safe * OH * OW - OW + stored > y.shape[0]):  # fmt: skip
        p_safe -= 1
    return p_lo, p_safe


@kernel(counted=False)
def _short_plane_by_rows(x, y, p, dims, kind, scratch, sortable_fill):
    """Plane p of the short rows row by row, through ``scratch`` where a row must
    (_short_row). (A function of its own: inlined into the first stride-1 loop, this made
    it take 1.4-1.7x the prototype's time, against 1.3-1.6x out of it.)"""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    sh, ph, pw = dims[P_SH], dims[P_PH], dims[P_PW]
    xa, ya = p * H * W, p * OH * OW
    for oh in range(OH):
        _short_row(x, y, xa, ya + oh * OW, sh * oh - ph, kind, H, W, OW, pw, True, scratch,
                   sortable_fill)  # fmt: skip


@kernel(counted=False)
def _short_rows_2x2_3x3(x, y, dims, p_from, p_to, scratch, sortable_fill):
    """Values of 2x2 or 3x3 windows at stride 2 on planes p_from to p_to - 1 whose rows
    are short (_short_square_rows): both passes at once, an output row at a time in
    registers. The window's rows are loaded as two vectors of 16 each, their column maxima
    split into even and odd columns, and 16 windows stored (max_of_3x3_stride_2): the
    first OW are the output row, the others land on the next row's outputs, which that row
    then overwrites. ``y`` ends where the caller's outputs do (another thread's may follow).
    The planes at the ends of x and y go row by row through ``scratch`` (8 x 16 items)
    where they must. (The pass down the columns into a buffer, then along the rows over the
    whole group, took about 2x the time of this on the 3x3/2 layers of 12x12 to 28x28
    planes: float32, one thread, docs/measurements.md; with this loop's decisions made on
    every row, 1.4x; with one loop for these and 3x3/1 choosing the intrinsic once a plane,
    1.04-1.2x.)"""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    k, ph = dims[P_KH], dims[P_PH]
    kind = _short_kind(dims)
    # the output rows whose windows lie inside the plane
    in_lo = min(OH, (ph + 1) // 2)
    in_hi = max(in_lo, min(OH, (H - k + ph) // 2 + 1))
    # (no pad before a row: p_lo is p_from)
    _, p_safe = _planes_in_place(x, y, p_from, p_to, H, W, OH, OW, 0, 2 * LANES, LANES)
    for p in range(p_from, p_safe):
        xa, ya = p * H * W, p * OH * OW
        for oh in range(in_lo):
            _short_row(x, y, xa, ya + oh * OW, 2 * oh - ph, kind, H, W, OW, 0, False, scratch,
                       sortable_fill)  # fmt: skip
        ra, at = xa + (2 * in_lo - ph) * W, ya + in_lo * OW
        if kind == SHORT_3X3_STRIDE_2:
            for _ in range(in_lo, in_hi):
                max_of_3x3_stride_2(x, ra, ra + W, ra + 2 * W, W, y, at, sortable_fill)
                ra += 2 * W
                at += OW
        else:
            for _ in range(in_lo, in_hi):
                max_of_2x2_stride_2(x, ra, ra + W, W, y, at, sortable_fill)
                ra += 2 * W
                at += OW
        for oh in range(in_hi, OH):
            _short_row(x, y, xa, ya + oh * OW, 2 * oh - ph, kind, H, W, OW, 0, False, scratch,
                       sortable_fill)  # fmt: skip
    for p in range(p_safe, p_to):
        _short_plane_by_rows(x, y, p, dims, kind, scratch, sortable_fill)


@kernel(counted=False)
def _short_rows_3x3_stride_1(x, y, dims, p_from, p_to, scratch, sortable_fill):
    """_short_rows_2x2_3x3 for 3x3 windows at stride 1 on rows of at most 32 columns, the
    pad before included: each row loaded as one vector of 16 (rows of at most 16) or two
    from the pad before it, the column maxima shifted by one and two lanes, and 16 or 32
    windows stored (max_of_3x3_stride_1). The input's first plane, whose first row would
    be read from before the input when there is a pad, and the planes at the ends of x
    and y go row by row through ``scratch``."""
    H, W, OH, OW, ph, pw = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW], dims[P_PH], dims[P_PW]
    kind = _short_kind(dims)
    narrow = kind == SHORT_3X3_STRIDE_1_NARROW
    in_lo = min(OH, ph)
    in_hi = max(in_lo, min(OH, H - 2 + ph))
    p_lo, p_safe = _planes_in_place(x, y, p_from, p_to, H, W, OH, OW, pw, 2 * LANES, 2 * LANES)
    # (in order: a row's 32 windows land on the next rows' outputs, even the next plane's)
    for p in range(p_from, p_lo):
        _short_plane_by_rows(x, y, p, dims, kind, scratch, sortable_fill)
    for p in range(p_lo, p_safe):
        xa, ya = p * H * W, p * OH * OW
        for oh in range(in_lo):
            _short_row(x, y, xa, ya + oh * OW, oh - ph, kind, H, W, OW, pw, False, scratch,
                       sortable_fill)  # fmt: skip
        # (the inside rows on plain offsets, the intrinsic chosen once a plane: with every
        # window's rows worked out on every row, the loop took 1.02-1.45x the time of
        # this, called on its own)
        ra, at = xa + (in_lo - ph) * W, ya + in_lo * OW
        if narrow:
            for _ in range(in_lo, in_hi):
                max_of_3x3_stride_1_narrow(x, ra, ra + W, ra + 2 * W, pw, W, y, at,
                                           sortable_fill)  # fmt: skip
                ra += W
                at += OW
        else:
            for _ in range(in_lo, in_hi):
                max_of_3x3_stride_1(x, ra, ra + W, ra + 2 * W, pw, W, y, at, sortable_fill)
                ra += W
                at += OW
        for oh in range(in_hi, OH):
            _short_row(x, y, xa, ya + oh * OW, oh - ph, kind, H, W, OW, pw, False, scratch,
                       sortable_fill)  # fmt: skip
    for p in range(p_safe, p_to):
        _short_plane_by_rows(x, y, p, dims, kind, scratch, sortable_fill)


@kernel(inline="always")
def _short_argmax_rows(dims):
    """Whether Indices of a group of small planes take the short rows (_short_rows_argmax):
    those of _short_square_rows at stride 2 on rows of more than 16 columns. (With the
    rows pooled first, a window's taps take three times the compares and selects of the
    values' column maxima. Against the flat stretches, float32, batch 1, one thread, AMD
    Zen 3: 0.81-0.97 of the time on 3x3/2 over 25x25 to 28x28 planes, but 1.22-1.36x on
    12x12 to 14x14, 1.04-1.05x with 2x2/2 there, and 1.04-1.28x with 3x3/1 on 13x13,
    whose form was dropped.)"""
    return dims[P_SH] == 2 and dims[P_W] > LANES and _short_square_rows(dims)


@kernel(inline="always")
def _argmax_run(x, r0, r1, r2, width, y, indices, at, kind, sortable_fill):
    """One run of 16 windows of the short or the long rows, in place: the windows from y[at]
    on, of the window rows read from x[r0], x[r1] (and x[r2]) on, whose lanes from
    ``width`` on hold the fill."""
    if kind == SHORT_3X3_STRIDE_2:
        argmax_of_3x3_stride_2(x, r0, r1, r2, r0, r1, r2, width, y, indices, at, sortable_fill)
    else:
        argmax_of_2x2_stride_2(x, r0, r1, r0, r1, width, y, indices, at, sortable_fill)


@kernel(counted=False)
def _argmax_run_through_scratch(x, r0, r1, r2, width, y, indices, at, n, kind, scratch,
                                index_scratch, sortable_fill):  # fmt: skip
    """_argmax_run through ``scratch`` and ``index_scratch``, with the rows' own positions,
    storing its first n windows: where the run's rows would read past the end of x, or
    its 16 windows land past the outputs it may write. Compiled on its own (see
    _long_rows)."""
    for c in range(width):
        scratch[c] = x[r0 + c]
        scratch[2 * LANES + c] = x[r1 + c]
        scratch[4 * LANES + c] = x[r2 + c]
    loads = (np.int64(0), np.int64(2 * LANES), np.int64(4 * LANES))
    if kind == SHORT_3X3_STRIDE_2:
        argmax_of_3x3_stride_2(scratch, loads[0], loads[1], loads[2], r0, r1, r2, width, scratch,
                               index_scratch, np.int64(6 * LANES), sortable_fill)  # fmt: skip
    else:
        argmax_of_2x2_stride_2(scratch, loads[0], loads[1], r0, r1, width, scratch,
                               index_scratch, np.int64(6 * LANES), sortable_fill)  # fmt: skip
    for c in range(n):
        y[at + c] = scratch[6 * LANES + c]
        indices[at + c] = index_scratch[6 * LANES + c]


@kernel(counted=False)
def _short_row_argmax(x, y, indices, xa, at, top, kind, H, W, OW, careful, scratch,
                      index_scratch, sortable_fill):  # fmt: skip
    """_short_row with Indices, at stride 2: y[at:][:OW] and indices[at:][:OW]
    (argmax_of_3x3_stride_2, argmax_of_2x2_stride_2; through ``scratch`` and
    ``index_scratch`` where _short_row goes through its scratch, _argmax_run_through_scratch).
    Compiled on its own, for the rows with a pad row in their windows and the planes at the
    ends of x and y."""
    first, second, third = _short_window_rows(xa, top, kind, H, W)
    if careful and not (
        max(first, max(second, third)) + ARGMAX_READ <= x.shape[0] and at + LANES <= y.shape[0]
    ):
        _argmax_run_through_scratch(x, first, second, third, W, y, indices, at, OW, kind,
                                    scratch, index_scratch, sortable_fill)  # fmt: skip
    else:
        _argmax_run(x, first, second, third, W, y, indices, at, kind, sortable_fill)


@kernel(counted=False)
def _short_rows_argmax(x, y, indices, dims, p_from, p_to, scratch, index_scratch,
                       sortable_fill):  # fmt: skip
    """_short_rows_2x2_3x3 with Indices (``indices`` ending where ``y`` does), on the rows
    _short_argmax_rows takes: each output row's windows with the positions of their
    maxima (argmax_of_3x3_stride_2, argmax_of_2x2_stride_2), the planes in order (a row's
    vectors land on the next rows' outputs). As there, the rows whose windows lie inside
    the plane go on plain offsets; the others, and the planes at the ends of x and y, go
    through _short_row_argmax. Row-major positions: the caller makes column-major ones."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    k, ph = dims[P_KH], dims[P_PH]
    kind = _short_kind(dims)
    # the output rows whose windows lie inside the plane
    in_lo = min(OH, (ph + 1) // 2)
    in_hi = max(in_lo, min(OH, (H - k + ph) // 2 + 1))
    # (no pad before a row: p_lo is p_from)
    _, p_safe = _planes_in_place(x, y, p_from, p_to, H, W, OH, OW, 0, ARGMAX_READ, LANES)
    yes, no = np.bool_(True), np.bool_(False)
    for p in range(p_from, p_safe):
        xa, ya = p * H * W, p * OH * OW
        for oh in range(in_lo):
            _short_row_argmax(x, y, indices, xa, ya + oh * OW, 2 * oh - ph, kind, H, W, OW, no,
                              scratch, index_scratch, sortable_fill)  # fmt: skip
        ra, at = xa + (2 * in_lo - ph) * W, ya + in_lo * OW
        if kind == SHORT_3X3_STRIDE_2:
            for _ in range(in_lo, in_hi):
                argmax_of_3x3_stride_2(x, ra, ra + W, ra + 2 * W, ra, ra + W, ra + 2 * W, W, y,
                                       indices, at, sortable_fill)  # fmt: skip
                ra += 2 * W
                at += OW
        else:
            for _ in range(in_lo, in_hi):
                argmax_of_2x2_stride_2(x, ra, ra + W, ra, ra + W, W, y, indices, at,
                                       sortable_fill)  # fmt: skip
                ra += 2 * W
                at += OW
        for oh in range(in_hi, OH):
            _short_row_argmax(x, y, indices, xa, ya + oh * OW, 2 * oh - ph, kind, H, W, OW, no,
                              scratch, index_scratch, sortable_fill)  # fmt: skip
    for p in range(p_safe, p_to):
        xa, ya = p * H * W, p * OH * OW
        for oh in range(OH):
            _short_row_argmax(x, y, indices, xa, ya + oh * OW, 2 * oh - ph, kind, H, W, OW, yes,
                              scratch, index_scratch, sortable_fill)  # fmt: skip


@kernel(inline="always")
def _long_argmax_rows(dims):
    """Whether Indices of 2x2 and 3x3 windows at stride 2 take the long rows
    (_long_rows_argmax): on rows of more than 32 columns (shorter ones: the short rows or
    the flat stretches) and of under 2**29 (the rows of a window lie at most 2 * W apart,
    kept in int32 by the vectors; longer rows go rows first), with a pad before the row
    narrower than the window (so that window 0 has a tap inside the row)."""
    return ((_square_stride_2(dims, 3) or _square_stride_2(dims, 2))
            and 2 * LANES < dims[P_W] < (1 << 29) and dims[P_PW] < dims[P_KW])  # fmt: skip


@kernel(counted=False)
def _long_rows_argmax(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi, scratch,
                      index_scratch, sortable_fill):  # fmt: skip
    """Output rows oh_lo..oh_hi-1 of a plane of 2x2 or 3x3 windows at stride 2, with
    Indices, for rows without NaN (the caller checks them after): each output row in runs
    of 15 windows (2x2: 16) that read 32 columns (3x3: ARGMAX_READ), as the short rows
    pool theirs (argmax_of_3x3_stride_2, argmax_of_2x2_stride_2; _long_rows), then the
    windows at the row's ends (_long_rows_ends). Compiled on its own."""
    if _short_kind(dims) == SHORT_3X3_STRIDE_2:
        _long_rows(x, y, indices, dims, plane, oh_lo, oh_hi, scratch, index_scratch,
                   sortable_fill, SHORT_3X3_STRIDE_2)  # fmt: skip
    else:
        _long_rows(x, y, indices, dims, plane, oh_lo, oh_hi, scratch, index_scratch,
                   sortable_fill, SHORT_2X2_STRIDE_2)  # fmt: skip
    _long_rows_ends(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi)


@kernel(inline="always")
def _run_windows(kind):
    """(k, per_run): the long rows' windows of a ``kind`` are k x k, their runs give per_run
    (a 3x3 run's 16th window would need column 32)."""
    return (3, LANES - 1) if kind == SHORT_3X3_STRIDE_2 else (2, LANES)


@kernel(inline="always")
def _long_row_windows(dims, per_run):
    """(o_lo, o_hi, o_full) of the long rows: windows o_lo..o_hi-1 have no tap before the
    row and their first inside it; the runs from o_lo on that start before o_full read
    their ARGMAX_READ columns inside the row and store 16 windows inside it (the 16th of a
    3x3 run may be past the row's last window, whose last tap need not end the row)."""
    W, OW, pw = dims[P_W], dims[P_OW], dims[P_PW]
    o_lo = min(OW, (pw + 1) // 2)
    o_hi = max(o_lo, min(OW, (W + pw - 1) // 2 + 1))
    o_full = max(o_lo, min(min(o_hi, OW - LANES + 1), (W - ARGMAX_READ + pw) // 2 + 1))
    return o_lo, o_hi, o_full


@kernel(inline="always")
def _long_rows(x, y, indices, dims, plane, oh_lo, oh_hi, scratch, index_scratch, sortable_fill,
               kind):  # fmt: skip
    """The runs of _long_rows_argmax, for windows of one ``kind``: on each output row with a
    tap row inside the plane (a pad row is the window's first row inside, read again, see
    _short_window_rows), the runs of _long_row_windows' o_full, then the rest in runs whose
    lanes past the row hold the fill, as pads after it, the last moved back to end at the
    row's last window whose first column is inside; and the windows with a tap in the pad
    before the row one at a time. Row-major positions.

    A 3x3 run stores 16 windows, the last of them wrong (it would need column 32), which
    the next run or row overwrites: so the run that ends the task's last row, and any run
    whose rows would read past the end of x, go through the scratch. (Everything else
    stays out of these loops, in functions compiled on their own: with the scratch's
    copies inlined, or the ends' exact windows and the column-major rewrite in the row
    loop, the same runs took 1.3-2.1x the time of a prototype that had only the runs,
    float32, one thread, 1x64x112x112.)"""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    ph, pw = dims[P_PH], dims[P_PW]
    k, per_run = _run_windows(kind)
    o_lo, o_hi, o_full = _long_row_windows(dims, per_run)
    if o_hi - o_lo < per_run:  # (rows too short for a run: _long_rows_ends takes them)
        return
    xa = plane * H * W
    full = np.int32(2 * LANES)
    for oh in range(oh_lo, oh_hi):
        top = 2 * oh - ph
        if top + k <= 0 or top >= H:  # (no tap row inside: _long_rows_ends)
            continue
        ya = (plane * OH + oh) * OW
        first, second, third = _short_window_rows(xa, top, kind, H, W)
        o = o_lo
        while o < o_full:
            c0 = 2 * o - pw
            _argmax_run(x, first + c0, second + c0, third + c0, full, y, indices, ya + o, kind,
                        sortable_fill)  # fmt: skip
            o += per_run
        while o < o_hi:  # (usually one or two runs: o_hi - o_full is at most 16)
            o0 = min(o, o_hi - per_run)
            c0 = 2 * o0 - pw
            r0, r1, r2 = first + c0, second + c0, third + c0
            width = min(W - c0, 2 * LANES)
            if max(r0, max(r1, r2)) + ARGMAX_READ <= x.shape[0] and not (
                oh == oh_hi - 1 and o0 + LANES > OW
            ):
                _argmax_run(x, r0, r1, r2, np.int32(width), y, indices, ya + o0, kind,
                            sortable_fill)  # fmt: skip
            else:
                _argmax_run_through_scratch(x, r0, r1, r2, width, y, indices, ya + o0, per_run,
                                            kind, scratch, index_scratch,
                                            sortable_fill)  # fmt: skip
            o = o0 + per_run
        # the windows with a tap in the pad before the row (pads of 1 or 2: window 0): its
        # taps in row-major order, a later one only when larger
        for o in range(o_lo):
            rows = (first, second, third)
            best, best_at = to_sortable(x[first]), first
            for t in range(k):
                for c in range(2 * o + k - pw):
                    value = to_sortable(x[rows[t] + c])
                    if value > best:
                        best, best_at = value, rows[t] + c
            y[ya + o] = from_sortable(best)
            indices[ya + o] = best_at


@kernel(counted=False)
def _long_rows_ends(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi):
    """What _long_rows leaves of rows oh_lo..oh_hi-1: the Indices made column-major where
    they must be, and with _windows_exact the windows past the row's last run, and whole
    rows with no tap row inside or too short for a run."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    k, per_run = _run_windows(_short_kind(dims))
    ph = dims[P_PH]
    o_lo, o_hi, _ = _long_row_windows(dims, per_run)
    xa = plane * H * W
    if dims[P_COLUMN_MAJOR] != 0:
        _as_column_major(indices, (plane * OH + oh_lo) * OW, (plane * OH + oh_hi) * OW, xa,
                         H * W, H, W)  # fmt: skip
    for oh in range(oh_lo, oh_hi):
        top = 2 * oh - ph
        if top + k <= 0 or top >= H or o_hi - o_lo < per_run:
            _windows_exact(x, y, indices, True, dims, taps, inf_bits, fill, plane, oh, 0, OW)
        else:
            _windows_exact(x, y, indices, True, dims, taps, inf_bits, fill, plane, oh, o_hi, OW)


@kernel(inline="always")
def _flat_rows(
    columns, column_of, y, y_at, n, guard, held, sw, kw, dw, pw, sortable_fill, evens, free
):  # fmt: skip
    """The row pass of the planar kernel's flat stretches: y[y_at + e] = the maximum of
    columns[guard - pw + sw * e + j * dw] over the taps j inside the row of e: those whose
    column column_of[e] - pw + j * dw is in [0, held). The others (padding, or the
    neighbouring rows, or the guard zones) are masked, except the first ``free`` taps,
    which the caller knows to be inside every row (at stride 2: no masks where there is
    nothing to mask). Values are sortable. Inlined into the kernel (numba IR), so that its
    loops vectorise there. ``evens``: scratch of n + 1 values (3 taps at stride 2)."""
    # int32 bounds: int64 would halve the vector width
    lo0, lo1, lo2 = np.int32(pw), np.int32(pw - dw), np.int32(pw - 2 * dw)
    hi0, hi1, hi2 = np.int32(held + pw), np.int32(held + pw - dw), np.int32(held + pw - 2 * dw)
    start = guard - pw
    # (each common case with its stride written out: a stride known at compile time
    # lets LLVM load contiguous vectors and deinterleave them instead of gathering)
    if kw == 3 and sw == 1:  # (any dilation: the taps are still contiguous runs)
        for e in range(n):
            c = column_of[_u(e)]
            a = columns[_u(start + e)]
            a = a if c >= lo0 and c < hi0 else sortable_fill
            b = columns[_u(start + e + dw)]
            b = b if c >= lo1 and c < hi1 else sortable_fill
            a = b if b > a else a
            b = columns[_u(start + e + 2 * dw)]
            b = b if c >= lo2 and c < hi2 else sortable_fill
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    elif kw == 2 and sw == 1:  # (any dilation, as above; YOLO's 2x2 stride 1)
        for e in range(n):
            c = column_of[_u(e)]
            a = columns[_u(start + e)]
            a = a if c >= lo0 and c < hi0 else sortable_fill
            b = columns[_u(start + e + dw)]
            b = b if c >= lo1 and c < hi1 else sortable_fill
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    elif dw == 1 and kw == 5 and sw == 1:  # (as spatial pyramid pooling has, 5x5 stride 1)
        lo3, lo4 = np.int32(pw - 3), np.int32(pw - 4)
        hi3, hi4 = np.int32(held + pw - 3), np.int32(held + pw - 4)
        for e in range(n):
            c = column_of[_u(e)]
            a = columns[_u(start + e)]
            a = a if c >= lo0 and c < hi0 else sortable_fill
            b = columns[_u(start + e + 1)]
            b = b if c >= lo1 and c < hi1 else sortable_fill
            a = b if b > a else a
            b = columns[_u(start + e + 2)]
            b = b if c >= lo2 and c < hi2 else sortable_fill
            a = b if b > a else a
            b = columns[_u(start + e + 3)]
            b = b if c >= lo3 and c < hi3 else sortable_fill
            a = b if b > a else a
            b = columns[_u(start + e + 4)]
            b = b if c >= lo4 and c < hi4 else sortable_fill
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    elif dw == 1 and kw == 3 and sw == 2:
        # taps 0 and 1, keeping tap 0's column in evens: read as 2 * e + 2 in the same
        # loop, the third tap made LLVM gather
        if free >= 2:
            for e in range(n):
                a = columns[_u(start + 2 * e)]
                evens[_u(e)] = a
                b = columns[_u(start + 2 * e + 1)]
                y[_u(y_at + e)] = b if b > a else a
        for e in range(n if free < 2 else 0):
            c = column_of[_u(e)]
            a = columns[_u(start + 2 * e)]
            evens[_u(e)] = a
            a = a if c >= lo0 and c < hi0 else sortable_fill
            b = columns[_u(start + 2 * e + 1)]
            b = b if c >= lo1 and c < hi1 else sortable_fill
            y[_u(y_at + e)] = b if b > a else a
        evens[_u(n)] = columns[_u(start + 2 * n)]
        for e in range(n):
            c = column_of[_u(e)]
            a = y[_u(y_at + e)]
            b = evens[_u(e + 1)]
            b = b if c >= lo2 and c < hi2 else sortable_fill
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    elif dw == 1 and kw == 2 and sw == 2 and free == 2:
        for e in range(n):
            a = columns[_u(start + 2 * e)]
            b = columns[_u(start + 2 * e + 1)]
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    elif dw == 1 and kw == 2 and sw == 2:
        for e in range(n):
            c = column_of[_u(e)]
            a = columns[_u(start + 2 * e)]
            a = a if c >= lo0 and c < hi0 else sortable_fill
            b = columns[_u(start + 2 * e + 1)]
            b = b if c >= lo1 and c < hi1 else sortable_fill
            y[_u(y_at + e)] = from_sortable(b if b > a else a)
    else:  # tap by tap, accumulating sortable values in y
        for e in range(n):
            y[_u(y_at + e)] = sortable_fill
        for j in range(kw):
            lo, hi = np.int32(pw - j * dw), np.int32(held + pw - j * dw)
            first = start + j * dw
            if sw == 1 and not wide_items(columns):
                # (8- and 16-bit items: a literal step, and the tap loaded whatever the mask.
                # With the run-time step and the load under the mask, LLVM gathered, which
                # AVX2 has only for 32- and 64-bit lanes: float16 and uint8 calls of 13x13
                # windows on 13x13 planes took 8-11x the time they take this way, Zen 3. The
                # guard zones hold every tap a window can reach. float32 did not gain this
                # way, and keeps the loop below.)
                for e in range(n):
                    c = column_of[_u(e)]
                    a = y[_u(y_at + e)]
                    b = columns[_u(first + e)]
                    b = b if c >= lo and c < hi else a
                    y[_u(y_at + e)] = b if b > a else a
            else:
                for e in range(n):
                    c = column_of[_u(e)]
                    a = y[_u(y_at + e)]
                    b = columns[_u(first + sw * e)] if c >= lo and c < hi else a
                    y[_u(y_at + e)] = b if b > a else a
        for e in range(n):
            y[_u(y_at + e)] = from_sortable(y[_u(y_at + e)])


# Indices stored as pairs of uint32 (index_words): which of the two holds the low half
LOW_WORD = 0 if sys.byteorder == "little" else 1
NO_POSITION = np.uint32(0xFFFFFFFF)  # (-1 as uint32: no row, or a masked tap)


@kernel(inline="always")
def _put_index(words, e, won, base):
    """Index e of ``words`` (index_words) = base + won, or -1 where won is NO_POSITION
    (won: a position >= 0, an int32 seen as uint32). As pairs of uint32: the low halves
    added with their carry. (It takes only the array it stores through: given both the
    int64 Indices and their uint32 view, numba's inlining lost the int64 stores in one loop
    of _flat_rows_argmax, and float64 Indices were left unwritten.)"""
    if words.itemsize == 8:
        words[_u(e)] = base + np.int32(won) if won != NO_POSITION else -1
    else:
        lo = np.uint32(won + np.uint32(base & 0xFFFFFFFF))
        hi = np.uint32(np.uint32(base >> 32) + np.uint32(lo < won))
        found = won != NO_POSITION
        words[_u(2 * e + LOW_WORD)] = lo if found else NO_POSITION
        words[_u(2 * e + 1 - LOW_WORD)] = hi if found else NO_POSITION


@kernel(inline="always")
def _flat_rows_argmax(
    columns, positions, column_of, y, indices, y_at, n, guard, held, sw, kw, dw, pw,
    sortable_fill, base, evens, even_at, free,
):  # fmt: skip
    """_flat_rows with Indices: over the taps of e inside its row, the largest column
    maximum, and of equal ones the first in row-major order (the smallest position);
    indices[y_at + e] = base + that position (-1: none). ``evens`` (2 * n + 2 values) and
    ``even_at`` (int32, 2 * n + 2): scratch. ``free``: as in _flat_rows, the
    first taps, known to be inside every row. A column with no row holds sortable_fill
    and position -1."""
    start = guard - pw
    if dw == 1 and sw == 2 and (kw == 2 or kw == 3):
        # (the taps written out: accumulating in y and indices tap by tap, with the tap's
        # offset a run-time value, was 5x slower; with a pad before, taps 0 and 1, then
        # tap 2 from the even columns kept aside, as in _flat_rows; the best positions kept
        # as int32 until the end, as int64 would halve the vector width)
        lo0, lo1, lo2 = np.int32(pw), np.int32(pw - 1), np.int32(pw - 2)
        hi0, hi1, hi2 = np.int32(held + pw), np.int32(held + pw - 1), np.int32(held + pw - 2)
        best_at = even_at[n + 1 :]
        # (the first loop's maxima go to ``best``, not to y: a y read back and written
        # through a select became a masked store, slow on AMD processors; 3x3/2 layers
        # with Indices took 1.07x the time that way on the AVX2 AMD EPYC (Zen) machine)
        best = evens[n + 1 :]
        # Positions compared as unsigned: -1 (no row; and the masked taps') is then the
        # largest, so "larger, or equal at a smaller position" needs no test for it, and
        # no tap with a row loses to one without (with the full rows in _pitch_columns and
        # the merged last pass below: 0.76-1.00 of the time on 3x3/2 and 2x2/2 layers in
        # float32, float16 and uint8, but 1.03-1.07 on float32 13x13 planes). With no pad
        # before, taps 0 and 1 need no column masks; a 3x3 window's tap 2 is never free, as
        # the last window's is in the pads or the column folded into the one before it
        # (_attrs).
        none = NO_POSITION
        words = index_words(indices, columns)
        if free >= 2 and kw == 2:
            # (no even columns kept aside, and the values and indices written out in the
            # same loop: 2x2/2 with Indices took 0.71-0.83 of the time of the general loops
            # on 12x12 to 28x28 planes, an Intel Xeon with AVX-512)
            for e in range(n):
                a, a_at = columns[_u(start + 2 * e)], positions[_u(start + 2 * e)]
                b, b_at = columns[_u(start + 2 * e + 1)], positions[_u(start + 2 * e + 1)]
                ua, ub = np.uint32(a_at), np.uint32(b_at)
                take = (b > a) | ((b == a) & (ub < ua))
                y[_u(y_at + e)] = from_sortable(b if take else a)
                _put_index(words, y_at + e, ub if take else ua, base)
            return
        # 3x3 takes two loops whether or not there is a pad before: taps 0 and 1, keeping
        # tap 0 aside, then tap 2 from it. (One loop reading tap 2 through a view two
        # columns on took 0.84-0.95 of the time of the two on an Intel Xeon with AVX-512;
        # on an AMD Zen 4 the compiler gathers that tap, and the two loops took 0.71-0.86
        # of its time on 12x12 to 56x56 planes.)
        if free >= 2:  # (without the masks: 0.88-1.02 of the time, 12x12 to 56x56 planes)
            for e in range(n):
                a, a_at = columns[_u(start + 2 * e)], positions[_u(start + 2 * e)]
                evens[_u(e)], even_at[_u(e)] = a, a_at
                b, b_at = columns[_u(start + 2 * e + 1)], positions[_u(start + 2 * e + 1)]
                ua, ub = np.uint32(a_at), np.uint32(b_at)
                take = (b > a) | ((b == a) & (ub < ua))
                best[_u(e)] = b if take else a
                best_at[_u(e)] = np.int32(ub if take else ua)
        for e in range(n if free < 2 else 0):
            c = column_of[_u(e)]
            a, a_at = columns[_u(start + 2 * e)], positions[_u(start + 2 * e)]
            evens[_u(e)], even_at[_u(e)] = a, a_at
            inside = (c >= lo0) & (c < hi0)
            a = a if inside else sortable_fill
            ua = np.uint32(a_at) if inside else none
            b, b_at = columns[_u(start + 2 * e + 1)], positions[_u(start + 2 * e + 1)]
            ub = np.uint32(b_at)
            inside = (c >= lo1) & (c < hi1)
            take = inside & ((b > a) | ((b == a) & (ub < ua)))
            best[_u(e)] = b if take else a
            best_at[_u(e)] = np.int32(ub if take else ua)
        if kw == 3:  # (read as 2 * e + 2 in the loop above, it made LLVM gather)
            evens[_u(n)] = columns[_u(start + 2 * n)]
            even_at[_u(n)] = positions[_u(start + 2 * n)]
            for e in range(n):
                c = column_of[_u(e)]
                a, a_at = best[_u(e)], best_at[_u(e)]
                b, b_at = evens[_u(e + 1)], even_at[_u(e + 1)]
                ua, ub = np.uint32(a_at), np.uint32(b_at)
                inside = (c >= lo2) & (c < hi2)
                take = inside & ((b > a) | ((b == a) & (ub < ua)))
                # (written out here: a pass of its own was 1.1x the row pass's time)
                y[_u(y_at + e)] = from_sortable(b if take else a)
                _put_index(words, y_at + e, ub if take else ua, base)
            return
        for e in range(n):
            y[_u(y_at + e)] = from_sortable(best[_u(e)])
            _put_index(words, y_at + e, np.uint32(best_at[_u(e)]), base)
        return
    # Other windows tap by tap, from one buffer into the other (a select stored back where
    # it was read becomes a masked store, slow on AMD processors) with int32 positions
    # compared as unsigned, as above. (It accumulated in y and the int64 Indices with tests
    # that branched; in standalone loops on the AVX2 AMD EPYC (Zen 3) machine, the store in
    # place took 3.5x the time and the int64 positions 3x.)
    best, best_at = evens[:n], even_at[:n]
    other, other_at = evens[n + 1 : 2 * n + 1], even_at[n + 1 : 2 * n + 1]
    for e in range(n):
        best[_u(e)] = sortable_fill
        best_at[_u(e)] = np.int32(-1)
    for j in range(kw):
        lo, hi = np.int32(pw - j * dw), np.int32(held + pw - j * dw)
        if sw == 1:  # (a constant step: contiguous loads, where a run-time one gathers)
            _tap_argmax(columns, positions, column_of, best, best_at, other, other_at, n,
                        start + j * dw, 1, lo, hi)  # fmt: skip
        elif sw == 2:  # (likewise: with a run-time step, scalar code; 4x4/2 took 6x as long)
            _tap_argmax(columns, positions, column_of, best, best_at, other, other_at, n,
                        start + j * dw, 2, lo, hi)  # fmt: skip
        else:
            _tap_argmax(columns, positions, column_of, best, best_at, other, other_at, n,
                        start + j * dw, sw, lo, hi)  # fmt: skip
        best, other = other, best
        best_at, other_at = other_at, best_at
    words = index_words(indices, columns)
    for e in range(n):
        y[_u(y_at + e)] = from_sortable(best[_u(e)])
        _put_index(words, y_at + e, np.uint32(best_at[_u(e)]), base)


@kernel(inline="always")
def _tap_argmax(columns, positions, column_of, best, best_at, other, other_at, n, first,
                step, lo, hi):  # fmt: skip
    """One tap of _flat_rows_argmax: for e < n, the column maximum at first + step * e
    (with its position) where its column c = column_of[e] is in [lo, hi) and it is
    larger than best[e], or equal at a smaller position; else best[e]. Into other."""
    for e in range(n):
        c = column_of[_u(e)]
        a, ua = best[_u(e)], np.uint32(best_at[_u(e)])
        b = columns[_u(first + step * e)]
        ub = np.uint32(positions[_u(first + step * e)])
        take = (c >= lo) & (c < hi) & ((b > a) | ((b == a) & (ub < ua)))
        other[_u(e)] = b if take else a
        other_at[_u(e)] = np.int32(ub if take else ua)


@kernel(inline="always")
def _as_column_major(indices, lo, hi, base, span, H, W):
    """indices[lo:hi], flat row-major indices (-1: none) into planes of H x W that lie
    in [base, base + span) (base: a plane's start), made column-major: row r, column c of
    plane p, at p * H * W + r * W + c, moves to p * H * W + c * H + r. (The flat stretches
    find the first maximum by the smallest row-major position.)

    The divisions are multiplications by a reciprocal, which vectorise: (d + 0.5) / n lies
    at least 0.5 / n from an integer, more than the rounding of the product, so truncating
    it gives d // n exactly: in float32 for d below 2**21 (16 lanes of int32 arithmetic;
    the rounding stays below 0.25 / n), else in float64 (below 2**50)."""
    plane_size = H * W
    if plane_size == 0:  # (an empty plane: every index is -1 already)
        return
    if span < (1 << 21):
        per_row, per_plane = np.float32(1.0 / W), np.float32(1.0 / H)
        half = np.float32(0.5)
        W32, H32, size32 = np.int32(W), np.int32(H), np.int32(plane_size)
        for e in range(lo, hi):
            q = indices[_u(e)]
            d = np.int32(q - base)
            rows = np.int32((np.float32(d) + half) * per_row)
            plane = np.int32((np.float32(rows) + half) * per_plane)
            r = rows - plane * H32
            c = d - rows * W32
            indices[_u(e)] = base + (plane * size32 + c * H32 + r) if q >= 0 else -1
        return
    per_plane, per_row = 1.0 / plane_size, 1.0 / W
    for e in range(lo, hi):
        q = indices[_u(e)]
        plane = np.int64((q + 0.5) * per_plane)
        in_plane = q - plane * plane_size
        r = np.int64((in_plane + 0.5) * per_row)
        c = in_plane - r * W
        indices[_u(e)] = plane * plane_size + c * H + r if q >= 0 else -1


@kernel(inline="always")
def _group_argmax(
    x, ga, n, columns, group_at, positions, column_of, row_of, y, indices, H, W, kh, kw, dh,
    dw, ph, pw, sortable_fill, spare, spare_at,
):  # fmt: skip
    """MaxPool with Indices of the n values x[ga:ga + n], whole planes of H x W at stride 1
    with outputs of the input's size (row-major): 1. along the rows, each value's window
    maximum (sortable, into columns) and the group-relative position of its first maximum
    (group_at; -1: none); 2. down the columns, keeping the earlier row on ties, into y and
    indices. Taps outside their row or plane are masked by int32 tables of each value's
    column and row (column_of, row_of). 3-tap windows (the common case) have their taps
    written out; the rest, and the values whose taps would read outside x or the group,
    go tap by tap. ``positions``: int32 scratch of n; ``spare`` (of columns' dtype) and
    ``spare_at`` (int32), scratch of n for the tap by tap loops."""
    no_at = np.int32(-1)
    # 1. along the rows: tap j of value i reads x[ga + i + j * dw - pw]
    i_lo, i_hi = 0, 0
    if kw == 3 and dw == 1 and pw == 1:
        # the centre tap (the value itself) first: it is inside every row, so the others
        # need one bound each and no check for a missing maximum; tap 0 comes before it
        # in the window and wins ties, tap 2 after it and does not
        i_lo = min(n, max(0, 1 - ga))
        i_hi = max(i_lo, min(n, x.shape[0] - ga - 1))
        lo0, hi2, one = np.int32(1), np.int32(W - 1), np.int32(1)
        for i in range(i_lo, i_hi):
            c, i32 = column_of[_u(i)], np.int32(i)
            a = to_sortable(x[_u(ga + i)])
            b = to_sortable(x[_u(ga + i - 1)])
            take = (c >= lo0) & (b >= a)
            a = b if take else a
            at = i32 - one if take else i32
            b = to_sortable(x[_u(ga + i + 1)])
            take = (c < hi2) & (b > a)
            columns[_u(i)] = b if take else a
            group_at[_u(i)] = i32 + one if take else at
    elif kw == 3 and dw == 1:
        i_lo = min(n, max(0, pw - ga))
        i_hi = max(i_lo, min(n, x.shape[0] - ga - (2 - pw)))
        lo0, lo1, lo2 = np.int32(pw), np.int32(pw - 1), np.int32(pw - 2)
        hi0, hi1, hi2 = np.int32(W + pw), np.int32(W + pw - 1), np.int32(W + pw - 2)
        at0 = np.int32(-pw)
        for i in range(i_lo, i_hi):
            c, i32 = column_of[_u(i)], np.int32(i)
            a = to_sortable(x[_u(ga + i - pw)])
            inside = (c >= lo0) & (c < hi0)
            a = a if inside else sortable_fill
            at = i32 + at0 if inside else no_at
            b = to_sortable(x[_u(ga + i + 1 - pw)])
            take = (c >= lo1) & (c < hi1) & ((b > a) | (at < 0))
            a = b if take else a
            at = i32 + at0 + 1 if take else at
            b = to_sortable(x[_u(ga + i + 2 - pw)])
            take = (c >= lo2) & (c < hi2) & ((b > a) | (at < 0))
            columns[_u(i)] = b if take else a
            group_at[_u(i)] = i32 + at0 + 2 if take else at
    # The other windows, and the values whose taps would read outside x, tap by tap from
    # one buffer into the other, ``spare`` and ``spare_at`` (a select stored back where it
    # was read becomes a masked store, slow on AMD processors: 5x5 windows at stride 1
    # took 6-12x their values' time), starting where the last tap lands in columns.
    for part in range(2):
        i_from, i_to = (0, i_lo) if part == 0 else (i_hi, n)
        best, best_at = (columns, group_at) if kw % 2 == 0 else (spare, spare_at)
        other, other_at = (spare, spare_at) if kw % 2 == 0 else (columns, group_at)
        for i in range(i_from, i_to):
            best[_u(i)] = sortable_fill
            best_at[_u(i)] = -1
        for j in range(kw):
            lo, hi = np.int32(pw - j * dw), np.int32(W + pw - j * dw)
            offset = j * dw - pw
            offset32 = np.int32(offset)
            # (taps outside x are outside their plane too: their values are carried over)
            t_from = min(i_to, max(i_from, -(ga + offset)))
            t_to = max(t_from, min(i_to, x.shape[0] - ga - offset))
            for i in range(t_from, t_to):
                c = column_of[_u(i)]
                a, at = best[_u(i)], best_at[_u(i)]
                b = to_sortable(x[_u(ga + i + offset)])
                take = (c >= lo) & (c < hi) & ((b > a) | (at < 0))
                other[_u(i)] = b if take else a
                other_at[_u(i)] = np.int32(i) + offset32 if take else at
            for out_part in range(2):
                c_from, c_to = (i_from, t_from) if out_part == 0 else (t_to, i_to)
                for i in range(c_from, c_to):
                    other[_u(i)] = best[_u(i)]
                    other_at[_u(i)] = best_at[_u(i)]
            best, other = other, best
            best_at, other_at = other_at, best_at
    # 2. down the columns: tap t of output e reads columns[e + (t * dh - ph) * W]
    words = index_words(indices, columns)
    e_lo, e_hi = 0, 0
    if kh == 3 and dh == 1 and ph == 1:
        # the centre row first, as above: every window holds its own value, so the row
        # pass found a maximum everywhere, and the row above wins ties
        e_lo = min(n, W)
        e_hi = max(e_lo, n - W)
        lo0, hi2, one = np.int32(1), np.int32(H - 1), np.int32(1)
        for e in range(e_lo, e_hi):
            r = row_of[_u(e)]
            a, at = columns[_u(e)], group_at[_u(e)]
            b, b_at = columns[_u(e - W)], group_at[_u(e - W)]
            # (two selects: one of the pair, as a tuple, kept this loop 8x slower. The
            # positions are picked with bit masks: through selects, LLVM moved their loads
            # into the branches and made them masked loads, and 3x3/1 layers with Indices
            # took 1.5-1.7x the time on the AVX2 AMD EPYC (Zen) machine)
            take = (r >= lo0) & (b >= a)
            a = b if take else a
            keep = np.int32(take) - one
            at = (at & keep) | (b_at & ~keep)
            b, b_at = columns[_u(e + W)], group_at[_u(e + W)]
            take = (r < hi2) & (b > a)
            y[_u(ga + e)] = from_sortable(b if take else a)
            keep = np.int32(take) - one
            won = np.uint32((at & keep) | (b_at & ~keep))
            _put_index(words, ga + e, won, ga)
    elif kh == 3 and dh == 1:
        e_lo = min(n, max(0, ph * W))
        e_hi = max(e_lo, min(n, n - (2 - ph) * W))
        lo0, lo1, lo2 = np.int32(ph), np.int32(ph - 1), np.int32(ph - 2)
        hi0, hi1, hi2 = np.int32(H + ph), np.int32(H + ph - 1), np.int32(H + ph - 2)
        for e in range(e_lo, e_hi):
            r = row_of[_u(e)]
            a, at = columns[_u(e - ph * W)], group_at[_u(e - ph * W)]
            inside = (r >= lo0) & (r < hi0) & (at >= 0)
            a = a if inside else sortable_fill
            at = at if inside else no_at
            b, b_at = columns[_u(e + (1 - ph) * W)], group_at[_u(e + (1 - ph) * W)]
            take = (r >= lo1) & (r < hi1) & (b_at >= 0) & ((b > a) | (at < 0))
            a = b if take else a
            at = b_at if take else at
            b, b_at = columns[_u(e + (2 - ph) * W)], group_at[_u(e + (2 - ph) * W)]
            take = (r >= lo2) & (r < hi2) & (b_at >= 0) & ((b > a) | (at < 0))
            a = b if take else a
            at = b_at if take else at
            y[_u(ga + e)] = from_sortable(a)
            _put_index(words, ga + e, np.uint32(at), ga)
    # the others row by row, from one buffer into the other, as in 1.
    for part in range(2):
        e_from, e_to = (0, e_lo) if part == 0 else (e_hi, n)
        best, best_at = spare, spare_at
        other, other_at = y[ga : ga + n], positions
        for e in range(e_from, e_to):
            best[_u(e)] = sortable_fill
            best_at[_u(e)] = -1
        for t in range(kh):
            lo, hi = np.int32(ph - t * dh), np.int32(H + ph - t * dh)
            offset = (t * dh - ph) * W
            t_from = min(e_to, max(e_from, -offset))
            t_to = max(t_from, min(e_to, n - offset))
            for e in range(t_from, t_to):
                r = row_of[_u(e)]
                a, at = best[_u(e)], best_at[_u(e)]
                b, b_at = columns[_u(e + offset)], group_at[_u(e + offset)]
                take = (r >= lo) & (r < hi) & (b_at >= 0) & ((b > a) | (at < 0))
                other[_u(e)] = b if take else a
                other_at[_u(e)] = b_at if take else at
            for out_part in range(2):
                c_from, c_to = (e_from, t_from) if out_part == 0 else (t_to, e_to)
                for e in range(c_from, c_to):
                    other[_u(e)] = best[_u(e)]
                    other_at[_u(e)] = best_at[_u(e)]
            best, other = other, best
            best_at, other_at = other_at, best_at
        for e in range(e_from, e_to):
            y[_u(ga + e)] = from_sortable(best[_u(e)])
            at = best_at[_u(e)]
            indices[_u(ga + e)] = at + ga if at >= 0 else -1


@kernel(inline="always")
def _square_stride_2(dims, k):
    """Whether the windows are k x k, undilated, at stride 2 along both axes (2x2: VGG's)."""
    return (dims[P_KH] == k and dims[P_KW] == k and dims[P_SH] == 2 and dims[P_SW] == 2
            and dims[P_DH] == 1 and dims[P_DW] == 1)  # fmt: skip


@kernel(inline="always")
def _square_stride_1(dims, k):
    """Whether the windows are k x k, undilated, at stride 1 along both axes."""
    return (dims[P_KH] == k and dims[P_KW] == k and dims[P_SH] == 1 and dims[P_SW] == 1
            and dims[P_DH] == 1 and dims[P_DW] == 1)  # fmt: skip


@kernel(inline="always")
def _positions_fit(dims):
    """Whether every position in a plane fits in int32 (planes of under 2**31 values), as
    the pitch rows keep the positions of their column maxima. (From 2**31 on, they read as
    unsigned up to 2**32 - 2, but the ties of a folded column compare them signed; from
    2**32 on they wrapped: a plane of 2**32 + 65,536 uint8 gave wrong Indices.)"""
    return dims[P_H] * dims[P_W] < (1 << 31)


@kernel(inline="always")
def _pair_offsets_fit(dims):
    """Whether a 2x2 window's tap offsets from its first tap (W, W + 1 row-major; H, H + 1
    column-major) fit in int32, as _window_task keeps them."""
    return dims[P_H] < (1 << 31) - 1 and dims[P_W] < (1 << 31) - 1


@kernel(inline="always")
def _pairs_inside(dims):
    """Whether the windows are 2x2 at stride 2, undilated, with every tap of every window
    inside the plane (no pads, no ceil_mode window past the end): of those, the planar
    kernel's parallel entry pools with Indices through _window_task the ones _task_pairs
    picks. (Not on rows or columns of 2**31 - 1 or more: see _pair_offsets_fit.)"""
    return (_square_stride_2(dims, 2) and dims[P_PH] == 0 and 2 * dims[P_OH] <= dims[P_H]
            and dims[P_LO_W] == 0 and dims[P_HI_W] == dims[P_OW]
            and _pair_offsets_fit(dims))  # fmt: skip


@kernel(inline="always")
def _task_pairs(dims, x):
    """Whether the parallel entry pools 2x2/2 windows with Indices through _window_task:
    those _pairs_inside takes, on rows of at least 8 windows (24 for the 16-bit floats), or
    of any length for column-major Indices and 8-byte items. On shorter rows the flat
    stretches, which take many planes in one loop, took 0.78-0.89 of _window_task's time on
    row-major Indices on rows of 6 and 7 windows (1x512x12x12 and 1x512x14x14: float32 and
    uint8; float16 0.55-0.64, and 0.81-0.99 on rows of 8 to 22), but 1.15-1.21x for
    column-major ones, which they convert at the end (_as_column_major), and 1.03-1.09x for
    float64, whose Indices they store as int64 (see index_words). From 8 windows on they took
    1.01-1.32x for float32 and 1.03-1.47x for uint8 (Intel Xeon, kernel entries, batch 1,
    2026-12-03)."""
    short_rows_flat = dims[P_COLUMN_MAJOR] == 0 and x.itemsize < 8
    shortest = 24 if x.itemsize == 2 else 8  # (windows a row)
    return _pairs_inside(dims) and (dims[P_OW] >= shortest or not short_rows_flat)


@kernel(inline="always")
def _windows_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh, ow_from, ow_to):
    """Windows ow_from..ow_to-1 of output row oh of a plane of the planar kernel, one at a
    time with the exact ``replaces``: for rows holding a NaN, for the windows with a zero
    maximum in rows holding a -0.0, and for the windows at the borders of the paths that
    take the others whole."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    sh, sw, dh, dw = dims[P_SH], dims[P_SW], dims[P_DH], dims[P_DW]
    ph, pw = dims[P_PH], dims[P_PW]
    column_major = dims[P_COLUMN_MAJOR] != 0
    xa = plane * H * W
    for ow in range(ow_from, ow_to):
        best, best_at = fill, -1
        for th in range(_tap_lo(taps, 0, oh), _tap_hi(taps, 0, oh)):
            r = oh * sh - ph + th * dh
            for tw in range(_tap_lo(taps, 1, ow), _tap_hi(taps, 1, ow)):
                c = ow * sw - pw + tw * dw
                value = x[xa + r * W + c]
                if best_at < 0 or replaces(value, best, inf_bits):
                    best = value
                    best_at = c * H + r if column_major else r * W + c
        y[(plane * OH + oh) * OW + ow] = best
        if want:
            indices[(plane * OH + oh) * OW + ow] = xa + best_at if best_at >= 0 else -1


@kernel(inline="always")
def _zero_count(y, lo, hi, inf_bits):
    """How many of y[lo:hi] are zeros (either sign). The zero-maxima redos count first:
    the count vectorises, and zero maxima are rare."""
    zeros = 0
    for e in range(lo, hi):
        zeros += order_key(y[_u(e)], inf_bits) == 0
    return zeros


@kernel(inline="always")
def _zero_maxima_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi):
    """Redoes with _windows_exact the windows of output rows oh_lo..oh_hi-1 of a plane whose
    maximum is a zero. For rows holding a -0.0 but no NaN: there the fast paths find every
    maximum, and every first maximum that is not a zero, exactly (nonzero equal values have
    equal bits); of tied zeros, they may keep another one than the first (its sign and
    its index)."""
    OH, OW = dims[P_OH], dims[P_OW]
    for oh in range(oh_lo, oh_hi):
        ya = (plane * OH + oh) * OW
        # (a count first, which vectorises: zero maxima are rare, and a loop with the
        # window inside it, over every output, took about as long as the pooling)
        if _zero_count(y, ya, ya + OW, inf_bits) == 0:
            continue
        for ow in range(OW):
            if order_key(y[ya + ow], inf_bits) == 0:
                _windows_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh, ow,
                               ow + 1)  # fmt: skip


@kernel(inline="always")
def _pair_window(x, y, indices, ra, W, ya, o, base, col_step, at0, at1, at2, at3):
    """Window o of a row of _window_task: its maximum into y[ya + o] and the position of
    its first maximum into indices[ya + o]."""
    a = to_sortable(x[_u(ra + 2 * o)])
    b = to_sortable(x[_u(ra + 2 * o + 1)])
    take = b > a
    a = b if take else a
    at = at1 if take else at0
    b = to_sortable(x[_u(ra + W + 2 * o)])
    take = b > a
    a = b if take else a
    at = at2 if take else at
    b = to_sortable(x[_u(ra + W + 2 * o + 1)])
    take = b > a
    y[_u(ya + o)] = from_sortable(b if take else a)
    indices[_u(ya + o)] = base + 2 * o * col_step + (at3 if take else at)


@kernel(counted=False)
def _rows_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi):
    """Output rows oh_lo..oh_hi-1 of a plane (with Indices if ``want``), window by window
    with the exact ``replaces``: rows holding a NaN. Compiled on its own, so that
    _window_task calls it instead of inlining it (see there)."""
    for oh in range(oh_lo, oh_hi):
        _windows_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh, 0,
                       dims[P_OW])  # fmt: skip


@kernel(counted=False)
def _zero_maxima_rows(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi):
    """_zero_maxima_exact with Indices, compiled on its own (see _rows_exact)."""
    _zero_maxima_exact(x, y, indices, True, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi)


@kernel(inline="always")
def _window_task(x, bits, y, indices, dims, taps, inf_bits, fill, special_mask, special_inf,
                 act_code, act_constants, row_blocks, task):  # fmt: skip
    """Task ``task`` (a block of output rows of one plane) of a call with Indices that
    _task_pairs takes: each 2x2 window with its four taps in row-major order (_pair_window).

    Inlined into the body of the parallel entry's prange loop, and only there: numba marks
    the arrays of such a body ``noalias`` when its own alias analysis finds no two of its
    variables that may share memory (the dispatcher makes sure the outputs share none with
    the input), and LLVM then vectorises the loops that write the outputs without checking
    at run time whether they overlap the input. Compiled apart, with those checks, LLVM ran
    the vector loop of 2x2 windows only on rows of 28 windows or more and left shorter rows
    to a scalar loop (float32 on an Intel Xeon, 2026-12-02: 2.0-2.4x the time of the values
    call on 1x512x28x28, against 0.95-1.05 here, without the check for NaN). So this body
    holds nothing that the analysis takes for an alias: no helper that returns a tuple or a
    bool (the check's result is one integer, _special_flags), and the rare paths are calls
    to kernels compiled on their own."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    plane = task // row_blocks
    block = task - plane * row_blocks
    oh_lo = block * OH // row_blocks
    oh_hi = (block + 1) * OH // row_blocks
    xa = plane * H * W
    # the input rows these outputs read
    r_lo = max(0, 2 * oh_lo - dims[P_PH])
    r_hi = min(H, 2 * (oh_hi - 1) - dims[P_PH] + 2)
    # a tap's position is its offset from the window's first: at1..3
    at0 = np.int32(0)
    if dims[P_COLUMN_MAJOR] != 0:
        at1, at2, at3 = np.int32(H), np.int32(1), np.int32(H + 1)
        for oh in range(oh_lo, oh_hi):
            ra = xa + 2 * oh * W
            ya = (plane * OH + oh) * OW
            for o in range(OW):
                _pair_window(x, y, indices, ra, W, ya, o, xa + 2 * oh, H, at0, at1, at2, at3)
    else:
        at1, at2, at3 = np.int32(1), np.int32(W), np.int32(W + 1)
        for oh in range(oh_lo, oh_hi):
            ra = xa + 2 * oh * W
            ya = (plane * OH + oh) * OW
            for o in range(OW):
                _pair_window(x, y, indices, ra, W, ya, o, ra, 1, at0, at1, at2, at3)
    # Checked for NaN and -0.0 after the pooling, as in _planar_tasks
    flags = 0
    if special_mask != 0 and r_lo < r_hi:
        flags = _special_flags(bits, xa + r_lo * W, xa + r_hi * W, special_mask, special_inf)
    if flags & HOLDS_NAN:
        _rows_exact(x, y, indices, True, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi)
    elif flags == HOLDS_NEGATIVE_ZERO:
        _zero_maxima_rows(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi)
    if act_code >= 0:
        _activate_range(y, act_code, act_constants, (plane * OH + oh_lo) * OW,
                        (plane * OH + oh_hi) * OW)  # fmt: skip


@kernel(inline="always")
def _values_row_by_row(dims, wide):
    """Whether values of 3x3 windows at stride 2 on rows of 33 to 64 columns (which would
    otherwise take rows of pitch column maxima) are pooled row by row: for 4- and 8-byte
    items (``wide``: see wide_items). On the AMD Zen 4 machine, through the public call,
    row by row took 0.85 of the time (float32, batch 8; about 0.95 at batch 1) and
    0.81-0.95 (float64) on the CNN layers of 54x54 to 56x56 planes, but 1.4-1.9x for
    float16 and uint8, whose rows of 33 to 64 fill at most two vectors (uint8: one)."""
    return wide and _square_stride_2(dims, 3) and dims[P_W] > 32


@kernel()
def _flat_tables(dims, row_blocks, tasks, want, wide):
    """(group_planes, block_rows, row_of, column_of) of the planar kernel's flat stretches
    for chunks of at most ``tasks`` tasks: the planes pooled at a time (0: none), the
    output rows of a block (stride 1 with outputs of the input's size, or rows of
    ``pitch`` column maxima: values on rows of up to 64 unless ``_values_row_by_row``,
    Indices on any; else 0), each
    value's row in its plane (when the pass down the columns is flat too) and each
    output's o * sw. int32, to be compared with int32 bounds: int64 would halve the
    vector width."""
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    if want and _long_argmax_rows(dims):  # (no tables)
        return 0, 0, np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    flat_rows = dims[P_FLAT_ROWS] == 1
    narrow_rows = dims[P_FLAT_ROWS] == 2  # (rows of W outputs too, cut to OW after)
    block_rows = max(1, min(OH, COLUMN_BLOCK // max(W, 1))) if flat_rows or narrow_rows else 0
    n_columns, n_rows_of = block_rows * W, 0
    pitch_rows = dims[P_PITCH_ROWS]
    if (pitch_rows == 1 and not want and not _values_row_by_row(dims, wide)) or (
        pitch_rows != 0 and want and _positions_fit(dims)
    ):
        block_rows = max(1, min(OH, COLUMN_BLOCK // dims[P_PITCH]))
        n_columns = block_rows * OW
    group_planes = 0
    flat_columns = (flat_rows and OH == H) or (narrow_rows and OH <= H)
    # (narrower outputs: values only, each plane's H x W outputs cut to OH x OW)
    if dims[P_GROUP_VALUES] > 0 and row_blocks == 1 and not (narrow_rows and want):
        group_planes = max(1, min(COLUMN_BLOCK // dims[P_GROUP_VALUES], tasks))
        n_columns = max(n_columns, group_planes * (H * W if narrow_rows else OH * OW))
        n_rows_of = group_planes * H * W if flat_columns else 0
    # Both tables repeat with a period (a plane, an output row): one period is written,
    # then copied onto the rest in doubling runs, which vectorise. (Written value by value,
    # they took 3.7 us for the 4,096 values of 7x7 planes at stride 1, before any thread
    # started: a fifth of such a call's kernel time.)
    row_of = np.empty(n_rows_of, dtype=np.int32)
    if n_rows_of > 0:
        for r in range(H):
            for c in range(W):
                row_of[r * W + c] = r
        _repeat_period(row_of, H * W)
    column_of = np.empty(n_columns, dtype=np.int32)
    period = W if narrow_rows else OW
    if n_columns > 0:
        for o in range(period):
            column_of[o] = o * dims[P_SW]
        _repeat_period(column_of, period)
    return group_planes, block_rows, row_of, column_of


@kernel(inline="always")
def _copy_eight(source, sa, target, ta):
    """target[ta:ta + 8] = source[sa:sa + 8], all eight loaded before any is stored."""
    a0, a1 = source[_u(sa)], source[_u(sa + 1)]
    a2, a3 = source[_u(sa + 2)], source[_u(sa + 3)]
    a4, a5 = source[_u(sa + 4)], source[_u(sa + 5)]
    a6, a7 = source[_u(sa + 6)], source[_u(sa + 7)]
    target[_u(ta)], target[_u(ta + 1)] = a0, a1
    target[_u(ta + 2)], target[_u(ta + 3)] = a2, a3
    target[_u(ta + 4)], target[_u(ta + 5)] = a4, a5
    target[_u(ta + 6)], target[_u(ta + 7)] = a6, a7


@kernel(inline="always")
def _cut_rows(rows_out, y, ya, n_rows, rows_kept, rows_held, W, OW):
    """y[ya + r * OW + c] = rows_out[row * W + c] for c < OW, over the first rows_kept rows
    of each rows_held in rows_out, n_rows of them in all: stride-1 outputs narrower than
    the input, pooled into rows of W (a block of rows: rows_kept == rows_held; small
    planes: OH of each H)."""
    # Eight values at a time, loaded into locals and then stored (LLVM makes one vector of
    # each eight; a loop of OW per row cost its set-up on every row): a row's last eight
    # run on into the places of the rows after it, which are written after it. The rows
    # whose eights would run past the end of this stretch go value by value.
    span = (OW + 7) // 8 * 8
    end = ya + n_rows * OW
    r, ra = 0, 0
    while r < n_rows:
        for k in range(min(rows_kept, n_rows - r)):
            yr = ya + (r + k) * OW
            if yr + span <= end:
                for c in range(0, span, 8):
                    _copy_eight(rows_out, ra + k * W + c, y, yr + c)
            else:
                for c in range(OW):
                    y[_u(yr + c)] = rows_out[_u(ra + k * W + c)]
        r += rows_kept
        ra += rows_held * W


@kernel(inline="always")
def _repeat_period(table, period):
    """Copy table[:period] onto the rest of table (whose length is a multiple of period)."""
    filled = period
    while filled < table.shape[0]:
        # (element by element: a slice assignment within one array went through a
        # temporary copy, seven times slower)
        count = min(filled, table.shape[0] - filled)
        for e in range(count):
            table[_u(filled + e)] = table[_u(e)]
        filled += count


@kernel(counted=False)
def _rows_3x3(x, y, ra, row_step, ya, n, W, OW, pw, padded, seen):
    """Values of n output rows of 3x3 windows at stride 2 along the rows, undilated, all of
    whose taps lie inside the plane: output row i from input rows ra + i * row_step, + W and
    + 2 * W, into y[ya + i * OW:]. Rows of at least 16 columns and 16 windows. Down the
    columns into padded[pw:pw + W], then along the row, each 16 columns or windows as one
    vector (_vectors); a row's last 16, where it holds no multiple of 16, overlap the ones
    before them, computed again (nothing is read past the row). Where ``seen`` has items,
    the first two rows of each window are checked for NaN and -0.0 into its lanes as they
    are loaded (max_of_3_rows_along). A function of its own with no other loops: the same
    loops as a branch of the row-by-row path took 1.15-2.5x the time, their vector loops set
    up on every row or not made at all. (Before, the row went through two more buffers, a
    column pair's maximum and its even column, as reading each window's three taps made LLVM
    gather one of them; and LLVM's loops, which step 64 items at a time as in
    _pitch_columns, probably left most of a row of up to 112 to their narrower epilogues.)"""
    last_o = OW - LANES
    for _ in range(n):
        max_of_3_rows_along(x, ra, W, W, padded, pw, seen)
        for o in range(0, last_o, LANES):
            max_of_3_taps_stride_2(padded, 2 * o, y, ya + o)
        max_of_3_taps_stride_2(padded, 2 * last_o, y, ya + last_o)
        ra += row_step
        ya += OW


@kernel()
def _planar_tasks(
    x, bits, y, indices, want, dims, taps, inf_bits, fill, special_mask, special_inf,
    act_code, act_constants, row_blocks, first_task, last_task, group_planes, block_rows,
    row_of, column_of,
):  # fmt: skip
    """Tasks first_task..last_task-1 of a channels-first pooling over planes of H x W.

    A task is a block of output rows of one plane. ``bits`` is ``x`` seen as signed
    integers of its width and ``special_mask`` the floats' magnitude mask (0 for the
    integers, which skip the check), both of that integer type: a task
    whose input rows hold a NaN is done window by window with the exact ``replaces``.
    Otherwise equal values have equal bits, but for the two zeros, so the order of
    comparisons cannot change a value, and the values are pooled down the columns first
    and then along the rows; where the rows hold a -0.0 (bit pattern = the type's
    minimum), the windows whose maximum is a zero are then redone exactly
    (_zero_maxima_exact). Three ways, by the geometry:

    - flat stretches, for small planes (``group_planes`` of them at once, when the row
      pass reads output rows of ``pitch`` column maxima, at stride 1 with outputs as large
      as the input or on rows of at most 16) and for stride 1 with outputs as large as the
      input (blocks of rows of one plane): each pass is one loop over the whole group or
      block, which vectorises however short the rows, and the taps that would cross into
      a neighbouring row or plane are masked by int32 tables of each value's row and
      column (``row_of``, ``column_of``);
    - otherwise row by row, through a row buffer padded with ``fill`` (never larger than a
      real value, so padding never wins).

    Groups of small planes whose rows are short (at most 32 columns) take the short rows
    with 2x2/2, 3x3/2 and 3x3/1 windows (_short_square_rows): an output row at a time in
    registers; so do Indices at stride 2 on rows of 17 to 32 (_short_rows_argmax). Other
    Indices take the flat stretches: on rows of pitch column maxima with the position
    of each (the first down its column), the row pass keeping the largest and, of equal
    ones, the smallest row-major position; at stride 1 with outputs of the input's size
    along the rows first, tap by tap. Column-major Indices are made from those at the end
    (``_as_column_major``: through the rows-first path below, they took 4-14x the time of
    the values on planes of 12x12 to 28x28 on an Intel Xeon, whose loops over rows that
    short stay scalar). Where the flat stretches do not apply, Indices are pooled along
    the rows first, so that the first maximum in row-major window order wins. At stride
    2, 2x2 and 3x3 windows on rows of more than 32 columns take the long rows, whose
    vectors pool along the rows first too (``_long_rows_argmax``), in either storage order.
    All compare the sortable form of the values (a plain ``>``; 16-bit floats get it with
    two bit operations instead of the exact key of every comparison).
    """
    H, W, OH, OW = dims[P_H], dims[P_W], dims[P_OH], dims[P_OW]
    kh, kw, sh, sw = dims[P_KH], dims[P_KW], dims[P_SH], dims[P_SW]
    dh, dw, ph, pw = dims[P_DH], dims[P_DW], dims[P_PH], dims[P_PW]
    column_major = dims[P_COLUMN_MAJOR] != 0
    lo_w, hi_w = dims[P_LO_W], dims[P_HI_W]
    rows_lo, rows_hi = _interior_lo(taps, 0), _interior_hi(taps, 0)  # (for _slot_in)
    long_rows = want and _long_argmax_rows(dims)
    # The fast paths compare sortable values (see _ordering.to_sortable)
    # (kept in the storage type: from_sortable picks its conversion by the type)
    sortable_fill = np.full(1, to_sortable(fill), dtype=x.dtype)[0]
    # Flat stretches (values path; layout in _attrs): output e of a stretch reads
    # columns[guard - pw + sw * e + j * dw] for its taps j, masked by column_of, and
    # group_planes > 0 takes small planes that many at a time.
    pitch, held, fold = dims[P_PITCH], dims[P_HELD], dims[P_FOLD] != 0
    flat_rows = dims[P_FLAT_ROWS] == 1
    # stride 1 with outputs narrower than the input: pooled as flat_rows, into rows of W
    # outputs (narrow_out) whose first OW are the output row
    narrow_rows = dims[P_FLAT_ROWS] == 2
    # the pass down the columns of a group flat too (row_of): each plane's H rows, of which
    # the first OH are its outputs' (the others read past the plane: masked, then dropped)
    flat_columns = (flat_rows and OH == H) or (narrow_rows and OH <= H)
    plane_values = dims[P_GROUP_VALUES]
    # with guard zones at both ends for the taps outside a stretch, which are masked
    guard = max(pw, (kw - 1) * dw)
    # (with no pad before, the first taps of the last window, and so of every window, may
    # lie inside the columns a row holds: those need no mask)
    free_taps = 0
    while pw == 0 and free_taps < kw and (OW - 1) * sw + free_taps * dw < held:
        free_taps += 1
    # (the short rows' pass down the columns writes whole vectors of 16)
    lanes = ((pitch + 1 if fold else held) + 15) // 16 * 16
    # (with Indices, only on planes whose positions fit in int32: block_rows is 0 on others)
    pitch_rows = dims[P_PITCH_ROWS] != 0 and block_rows > 0
    columns = np.empty(max(block_rows * max(W, pitch), group_planes * plane_values) + 2 * guard
                       + lanes, dtype=x.dtype)  # fmt: skip
    positions = np.empty(columns.shape[0] if want else 0, dtype=np.int32)
    # (the passes down the columns of windows 4 rows high or more: a second pair)
    column_spare = np.empty(columns.shape[0] if kh >= 4 else 0, dtype=x.dtype)
    column_spare_at = np.empty(positions.shape[0] if kh >= 4 else 0, dtype=np.int32)
    # (with Indices, also the spare buffers of _group_argmax, a group's values)
    n_evens = (max(max(group_planes * OH, block_rows, 1) * OW, group_planes * H * W) + 1
               if sw == 2 or want else 0)  # fmt: skip
    evens = np.empty(2 * n_evens if want else n_evens, dtype=x.dtype)
    even_at = np.empty(2 * n_evens if want else 0, dtype=np.int32)
    group_at = np.empty(group_planes * H * W if want else 0, dtype=np.int32)
    # tap t of a 3-row window is inside the plane for rows in [ph - t, H + ph - t)
    row_lo0, row_lo1 = np.int32(ph), np.int32(ph - 1)
    row_hi1, row_hi2 = np.int32(H + ph - 1), np.int32(H + ph - 2)
    padded = np.full(dims[P_ROW_LENGTH], sortable_fill, dtype=x.dtype)
    # the lanes into which the passes down the columns fold the check of the rows they
    # read (see max_of_2_rows_along; empty: no check), where they do: values at stride 2
    # down the columns, undilated, windows 2 high on rows of at least 16 (of held columns,
    # on the rows of pitch column maxima) and 3x3 ones through _rows_3x3
    seen = np.empty(2 * LANES if special_mask != 0 else 0, dtype=bits.dtype)
    takes_rows_3x3 = kh == 3 and dh == 1 and kw == 3 and dw == 1 and sw == 2 and OW >= LANES
    folds_check = (
        seen.shape[0] > 0
        and not want
        and sh == 2
        and dh == 1
        and (
            (kh == 2 and (held if pitch_rows else W) >= LANES)
            or (takes_rows_3x3 and not pitch_rows)
        )
    )
    # 2x2/2, 3x3/2 and 3x3/1 windows on short rows: groups of planes an output row at a
    # time in registers, without the buffers below (_short_rows_2x2_3x3,
    # _short_rows_3x3_stride_1; with Indices, at stride 2 on rows of 17 to 32,
    # _short_rows_argmax)
    short_rows = group_planes > 0 and (_short_argmax_rows(dims) if want
                                       else _short_square_rows(dims))  # fmt: skip
    # (the long rows, _long_rows_argmax, take the same scratch)
    short_scratch = np.full(8 * LANES if short_rows or long_rows else 0, sortable_fill,
                            dtype=x.dtype)  # fmt: skip
    short_index_scratch = np.empty(8 * LANES if (short_rows or long_rows) and want else 0,
                                   dtype=np.int64)  # fmt: skip
    # (the short rows write whole vectors up to the end of these)
    short_y, short_indices = y[: last_task * OH * OW], indices[: last_task * OH * OW]
    row_acc = np.empty(OW, dtype=x.dtype)
    # (rows first with Indices: a second pair of row buffers, and the running positions)
    row_spare = np.empty(OW if want else 0, dtype=x.dtype)
    index_spare = np.empty(OW if want else 0, dtype=np.int64)
    acc_index = np.empty(OW if want else 0, dtype=np.int64)
    narrow_out = np.empty(max(block_rows, group_planes * H) * W + 8
                          if narrow_rows and not want else 0, dtype=x.dtype)  # fmt: skip
    pairs = np.empty(OW + kw if sw == 2 else 0, dtype=x.dtype)
    pair_index = np.empty(OW + kw if want and sw == 2 else 0, dtype=np.int64)
    row_values = np.empty(0, dtype=x.dtype)
    row_index = np.empty(0, dtype=np.int64)
    task = first_task
    while task < last_task:
        if group_planes > 0:
            # Small planes, several whole ones at once (see _flat_tables).
            g_to = min(task + group_planes, last_task)
            ga = task * H * W
            n = (g_to - task) * H * W
            # A NaN anywhere: plane by plane, below (a -0.0: see _zero_maxima_exact).
            # (Checked before the pooling, unlike the tasks below: a group of at most
            # COLUMN_BLOCK values then lies in L1. Checked after, 3x3/1 layers with
            # Indices took 0.90-1.21x the time, float32, AVX2 AMD EPYC (Zen 3), 2026-12-04.)
            special, negative_zero = False, False
            if special_mask != 0:
                special, negative_zero = _specials_held(bits, ga, ga + n, special_mask,
                                                        special_inf)  # fmt: skip
            if not special and short_rows:
                if want:
                    _short_rows_argmax(x, short_y, short_indices, dims, task, g_to,
                                       short_scratch, short_index_scratch,
                                       sortable_fill)  # fmt: skip
                elif sh == 2:
                    _short_rows_2x2_3x3(x, short_y, dims, task, g_to, short_scratch,
                                        sortable_fill)  # fmt: skip
                else:
                    _short_rows_3x3_stride_1(x, short_y, dims, task, g_to, short_scratch,
                                             sortable_fill)  # fmt: skip
            elif not special and want and flat_columns:
                _group_argmax(x, ga, n, columns, group_at, positions, column_of, row_of, y,
                              indices, H, W, kh, kw, dh, dw, ph, pw, sortable_fill, evens,
                              even_at)  # fmt: skip
            elif not special and not flat_columns:
                # 1. down the columns, output row by output row
                _pitch_columns(x, taps, dims, task * OH, g_to * OH, columns, guard, lanes,
                               sortable_fill, want, positions, seen[:0], column_spare,
                               column_spare_at)  # fmt: skip
            elif not special:
                # 1. down the columns, into columns[guard + i]; tap t of element i reads
                # x[ga + i + (t * dh - ph) * W]. Where that lies outside x (only at its
                # two ends) the tap is outside the plane too: those elements are done
                # one tap at a time.
                safe_lo = min(n, max(0, ph * W - ga))
                safe_hi = max(safe_lo, min(n, x.shape[0] - ga - ((kh - 1) * dh - ph) * W))
                if kh == 3 and dh == 1:
                    for i in range(safe_lo, safe_hi):
                        # (pads add up to 2, so taps 0 and 2 need one bound each)
                        r = row_of[_u(i)]
                        a = to_sortable(x[_u(ga + i - ph * W)])
                        a = a if r >= row_lo0 else sortable_fill
                        b = to_sortable(x[_u(ga + i + (1 - ph) * W)])
                        b = b if r >= row_lo1 and r < row_hi1 else sortable_fill
                        a = b if b > a else a
                        b = to_sortable(x[_u(ga + i + (2 - ph) * W)])
                        b = b if r < row_hi2 else sortable_fill
                        columns[_u(guard + i)] = b if b > a else a
                    outside = 2
                elif kh == 2:
                    # (any dilation; tap t is inside for rows in [ph - t * dh, H + ph - t * dh))
                    lo1, hi0 = np.int32(ph - dh), np.int32(H + ph)
                    hi1 = np.int32(H + ph - dh)
                    for i in range(safe_lo, safe_hi):
                        r = row_of[_u(i)]
                        a = to_sortable(x[_u(ga + i - ph * W)])
                        a = a if r >= row_lo0 and r < hi0 else sortable_fill
                        b = to_sortable(x[_u(ga + i + (dh - ph) * W)])
                        b = b if r >= lo1 and r < hi1 else sortable_fill
                        columns[_u(guard + i)] = b if b > a else a
                    outside = 2
                elif kh == 5 and dh == 1:
                    # (pads add up to 4, so tap 0 needs only its lower bound and tap 4
                    # only its upper one; the others may need either)
                    lo2, lo3 = np.int32(ph - 2), np.int32(ph - 3)
                    hi3, hi4 = np.int32(H + ph - 3), np.int32(H + ph - 4)
                    for i in range(safe_lo, safe_hi):
                        r = row_of[_u(i)]
                        a = to_sortable(x[_u(ga + i - ph * W)])
                        a = a if r >= row_lo0 else sortable_fill
                        b = to_sortable(x[_u(ga + i + (1 - ph) * W)])
                        b = b if r >= row_lo1 and r < row_hi1 else sortable_fill
                        a = b if b > a else a
                        b = to_sortable(x[_u(ga + i + (2 - ph) * W)])
                        b = b if r >= lo2 and r < row_hi2 else sortable_fill
                        a = b if b > a else a
                        b = to_sortable(x[_u(ga + i + (3 - ph) * W)])
                        b = b if r >= lo3 and r < hi3 else sortable_fill
                        a = b if b > a else a
                        b = to_sortable(x[_u(ga + i + (4 - ph) * W)])
                        b = b if r < hi4 else sortable_fill
                        columns[_u(guard + i)] = b if b > a else a
                    outside = 2
                else:
                    safe_lo, safe_hi, outside = 0, 0, 1
                for part in range(outside):
                    i_from, i_to = (0, safe_lo) if part == 0 else (safe_hi, n)
                    if outside == 1:
                        i_from, i_to = 0, n
                    for i in range(i_from, i_to):
                        columns[_u(guard + i)] = sortable_fill
                    for t in range(kh):
                        offset = (t * dh - ph) * W
                        t_from = max(i_from, -(ga + offset))
                        t_to = min(i_to, x.shape[0] - ga - offset)
                        lo, hi = np.int32(ph - t * dh), np.int32(H + ph - t * dh)
                        for i in range(t_from, t_to):
                            r = row_of[_u(i)]
                            a = columns[_u(guard + i)]
                            b = to_sortable(x[_u(ga + i + offset)])
                            b = b if r >= lo and r < hi else a
                            columns[_u(guard + i)] = b if b > a else a
            if special or short_rows:
                pass  # (pooled plane by plane below, or in one pass above)
            elif not want and narrow_rows:
                # 2. along the rows, H x W outputs a plane, cut to OH x OW
                _flat_rows(columns, column_of, narrow_out, 0, n, guard, W, 1, kw, dw, pw,
                           sortable_fill, evens, 0)  # fmt: skip
                _cut_rows(narrow_out, y, task * OH * OW, (g_to - task) * OH, OH, H, W, OW)
            elif not want:
                # 2. along the rows
                ya, n_out = task * OH * OW, (g_to - task) * OH * OW
                _flat_rows(columns, column_of, y, ya, n_out, guard, held, sw, kw, dw, pw,
                           sortable_fill, evens, free_taps)  # fmt: skip
            elif not flat_columns:
                ya, n_out = task * OH * OW, (g_to - task) * OH * OW
                _flat_rows_argmax(columns, positions, column_of, y, indices, ya, n_out, guard,
                                  held, sw, kw, dw, pw, sortable_fill, ga, evens,
                                  even_at, free_taps)  # fmt: skip
            if not special:
                n_out = (g_to - task) * OH * OW
                if want and column_major:
                    _as_column_major(indices, task * OH * OW, task * OH * OW + n_out, ga, n,
                                     H, W)  # fmt: skip
                if negative_zero:
                    for plane in range(task, g_to):
                        _zero_maxima_exact(x, y, indices, want, dims, taps, inf_bits, fill,
                                           plane, 0, OH)  # fmt: skip
                if act_code >= 0:
                    _activate_range(y, act_code, act_constants, task * OH * OW,
                                    task * OH * OW + n_out)  # fmt: skip
                task = g_to
                continue
        plane = task // row_blocks
        block_no = task - plane * row_blocks
        oh_lo = block_no * OH // row_blocks
        oh_hi = (block_no + 1) * OH // row_blocks
        # the input rows these outputs read
        r_lo, r_hi = H, 0
        for oh in range(oh_lo, oh_hi):
            slot = _slot_in(oh, rows_lo, rows_hi)
            if taps[0, 0, slot] < taps[1, 0, slot]:
                r_lo = min(r_lo, oh * sh - ph + taps[0, 0, slot] * dh)
                r_hi = max(r_hi, oh * sh - ph + (taps[1, 0, slot] - 1) * dh + 1)
        r_hi = max(r_lo, r_hi)
        xa = plane * H * W
        # the task's output rows whose taps are all inside the plane
        in_lo, in_hi = max(oh_lo, rows_lo), max(oh_lo, min(oh_hi, rows_hi))
        # Checked for NaN and -0.0 after the pooling (below), but for rows seen_lo to
        # seen_hi - 1, which the pass down the columns checks as it loads them into the
        # lanes of seen: at stride 2 down the columns, the first two rows of each of those
        # rows' windows are the rows from the first one's on, each once.
        seen_lo, seen_hi = r_lo, r_lo
        if folds_check and in_lo < in_hi:
            seen_lo, seen_hi = 2 * in_lo - ph, 2 * in_hi - ph
            for lane in range(LANES):
                seen[lane] = 0
                seen[LANES + lane] = special_inf
        checked = seen if seen_lo < seen_hi else seen[:0]
        if long_rows:
            _long_rows_argmax(x, y, indices, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi,
                              short_scratch, short_index_scratch, sortable_fill)  # fmt: skip

        elif pitch_rows:
            # Other geometries where the row pass reads rows of pitch column maxima: blocks
            # of output rows, down the columns row by row, along the rows flat (with
            # Indices: the first maximum of each column, then of the window's columns)
            for b_lo in range(oh_lo, oh_hi, block_rows):
                b_hi = min(b_lo + block_rows, oh_hi)
                u_from = plane * OH + b_lo
                _pitch_columns(x, taps, dims, u_from, u_from + b_hi - b_lo, columns, guard,
                               lanes, sortable_fill, want, positions, checked, column_spare,
                               column_spare_at)  # fmt: skip
                if want:
                    _flat_rows_argmax(columns, positions, column_of, y, indices, u_from * OW,
                                      (b_hi - b_lo) * OW, guard, held, sw, kw, dw, pw,
                                      sortable_fill, xa, evens, even_at,
                                      free_taps)  # fmt: skip
                    if column_major:
                        _as_column_major(indices, u_from * OW, (u_from + b_hi - b_lo) * OW,
                                         xa, H * W, H, W)  # fmt: skip
                else:
                    _flat_rows(columns, column_of, y, u_from * OW, (b_hi - b_lo) * OW, guard,
                               held, sw, kw, dw, pw, sortable_fill, evens, free_taps)  # fmt: skip

        elif not want and (flat_rows or narrow_rows):
            # Stride 1 along both axes: a block of output rows is pooled as one flat
            # stretch each way, which vectorises however short the rows (the taps outside
            # their row are masked); rows as long as the input's straight into y, narrower
            # ones (windows that reach past the last column) cut to OW from rows of W.
            for b_lo in range(oh_lo, oh_hi, block_rows):
                b_hi = min(b_lo + block_rows, oh_hi)
                rows = b_hi - b_lo
                # 1. down the columns into columns[(oh - b_lo) * W + w]: consecutive output
                # rows with the same taps read consecutive input rows
                oh = b_lo
                while oh < b_hi:
                    slot = _slot_in(oh, rows_lo, rows_hi)
                    t_lo, t_hi = taps[0, 0, slot], taps[1, 0, slot]
                    run_end = oh + 1
                    while run_end < b_hi:
                        slot = _slot_in(run_end, rows_lo, rows_hi)
                        if taps[0, 0, slot] != t_lo or taps[1, 0, slot] != t_hi:
                            break
                        run_end += 1
                    ca = guard + (oh - b_lo) * W
                    n = (run_end - oh) * W
                    ra = xa + (oh - ph + t_lo * dh) * W
                    step = dh * W
                    n_rows = t_hi - t_lo
                    _column_max(x, ra, step, n_rows, columns, ca, n, sortable_fill,
                                column_spare)  # fmt: skip
                    oh = run_end
                # 2. along the rows
                ya = (plane * OH + b_lo) * OW
                rows_out, rows_at = (narrow_out, 0) if narrow_rows else (y, ya)
                _flat_rows(columns, column_of, rows_out, rows_at, rows * W, guard, W, 1, kw,
                           dw, pw, sortable_fill, evens, 0)  # fmt: skip
                if narrow_rows:
                    _cut_rows(narrow_out, y, ya, rows, rows, rows, W, OW)

        elif not want:
            # 3x3 windows at stride 2 along the rows: the rows whose windows lie inside the
            # plane through _rows_3x3, the others below
            if not takes_rows_3x3:
                in_lo, in_hi = oh_lo, oh_lo
            if in_lo < in_hi:
                _rows_3x3(x, y, xa + (in_lo * sh - ph) * W, sh * W, (plane * OH + in_lo) * OW,
                          in_hi - in_lo, W, OW, pw, padded, checked)  # fmt: skip
            for oh in range(oh_lo, oh_hi):
                if oh >= in_lo and oh < in_hi:
                    continue
                ya = (plane * OH + oh) * OW
                slot = _slot_in(oh, rows_lo, rows_hi)
                t_lo, t_hi = taps[0, 0, slot], taps[1, 0, slot]
                if t_lo >= t_hi:
                    for e in range(ya, ya + OW):
                        y[e] = fill
                    continue
                # 1. down the columns, into padded[pw:pw + W], as sortable values
                ra = xa + (oh * sh - ph + t_lo * dh) * W
                n_rows = t_hi - t_lo
                if dh == 1 and n_rows == 3:
                    for w in range(W):
                        a = to_sortable(x[_u(ra + w)])
                        b = to_sortable(x[_u(ra + W + w)])
                        a = b if b > a else a
                        b = to_sortable(x[_u(ra + 2 * W + w)])
                        padded[_u(pw + w)] = b if b > a else a
                elif dh == 1 and n_rows == 2 and kh == 2 and checked.shape[0] > 0:
                    max_of_2_rows_along(x, ra, W, W, padded, pw, checked)
                elif dh == 1 and n_rows == 2:
                    for w in range(W):
                        a = to_sortable(x[_u(ra + w)])
                        b = to_sortable(x[_u(ra + W + w)])
                        padded[_u(pw + w)] = b if b > a else a
                else:
                    for w in range(W):
                        padded[_u(pw + w)] = to_sortable(x[_u(ra + w)])
                    for t in range(1, n_rows):
                        ta = ra + t * dh * W
                        for w in range(W):
                            a = padded[_u(pw + w)]
                            b = to_sortable(x[_u(ta + w)])
                            padded[_u(pw + w)] = b if b > a else a
                # 2. along the row: window o reads padded[o * sw + j * dw]
                if dw == 1 and sw == 2 and kw == 3:
                    for o in range(OW):
                        a = padded[_u(2 * o)]
                        b = padded[_u(2 * o + 1)]
                        a = b if b > a else a
                        b = padded[_u(2 * o + 2)]
                        y[_u(ya + o)] = from_sortable(b if b > a else a)
                elif dw == 1 and sw == 2 and kw == 2:
                    for o in range(OW):
                        a = padded[_u(2 * o)]
                        b = padded[_u(2 * o + 1)]
                        y[_u(ya + o)] = from_sortable(b if b > a else a)
                elif dw == 1 and sw == 2:
                    # wider windows at stride 2: window o is the column pairs o .. o +
                    # kw // 2 - 1 (and for odd kw, one more even column), which contiguous
                    # loops take where reading the windows' taps made LLVM gather
                    half = kw // 2
                    for k in range(OW + half - 1):
                        a = padded[_u(2 * k)]
                        b = padded[_u(2 * k + 1)]
                        pairs[_u(k)] = b if b > a else a
                    for o in range(OW):
                        a = pairs[_u(o)]
                        b = pairs[_u(o + 1)]
                        row_acc[_u(o)] = b if b > a else a
                    for j in range(2, half):
                        for o in range(OW):
                            a = row_acc[_u(o)]
                            b = pairs[_u(o + j)]
                            row_acc[_u(o)] = b if b > a else a
                    if kw % 2 == 1:
                        for o in range(OW):
                            a = row_acc[_u(o)]
                            b = padded[_u(2 * (o + half))]
                            row_acc[_u(o)] = b if b > a else a
                    for o in range(OW):
                        y[_u(ya + o)] = from_sortable(row_acc[_u(o)])
                elif dw == 1 and sw == 1 and kw == 3:
                    for o in range(OW):
                        a = padded[_u(o)]
                        b = padded[_u(o + 1)]
                        a = b if b > a else a
                        b = padded[_u(o + 2)]
                        y[_u(ya + o)] = from_sortable(b if b > a else a)
                elif sw == 1:
                    for o in range(OW):
                        row_acc[_u(o)] = padded[_u(o)]
                    for j in range(1, kw):
                        for o in range(OW):
                            a = row_acc[_u(o)]
                            b = padded[_u(o + j * dw)]
                            row_acc[_u(o)] = b if b > a else a
                    for o in range(OW):
                        y[_u(ya + o)] = from_sortable(row_acc[_u(o)])
                else:
                    for o in range(OW):
                        a = padded[_u(o * sw)]
                        for j in range(1, kw):
                            b = padded[_u(o * sw + j * dw)]
                            a = b if b > a else a
                        y[_u(ya + o)] = from_sortable(a)

        else:
            # With Indices, rows first: 1. along each input row that a window reads, the
            # first maximum of each window (as a sortable value) and its index within the
            # plane; 2. down the columns. The output rows go in blocks whose input rows fit
            # in ROWS_SCRATCH values. A block pools each row of its span once, or, where
            # its windows read fewer rows than the span holds (row strides or dilations
            # that skip rows), each output row's own rows (a row pooled per window row
            # reading it). (Pooling the task's whole span, strides of 1024 on rows of 64
            # took 512x the rows and gigabytes of scratch.)
            cap_rows = max(1, ROWS_SCRATCH // OW)
            block = max(1, (cap_rows - (kh - 1) * dh - 1) // sh + 1)
            for b_lo in range(oh_lo, oh_hi, block):
                b_hi = min(b_lo + block, oh_hi)
                s_lo, s_hi, n_read = H, 0, 0
                for oh in range(b_lo, b_hi):
                    slot = _slot_in(oh, rows_lo, rows_hi)
                    t_lo, t_hi = taps[0, 0, slot], taps[1, 0, slot]
                    if t_lo < t_hi:
                        s_lo = min(s_lo, oh * sh - ph + t_lo * dh)
                        s_hi = max(s_hi, oh * sh - ph + (t_hi - 1) * dh + 1)
                        n_read += t_hi - t_lo
                dense = s_hi - s_lo <= n_read
                row_step = (dh if dense else 1) * OW
                g_lo = b_lo
                while g_lo < b_hi:  # the block at once, or output row by output row
                    g_hi = b_hi if dense else g_lo + 1
                    r0, r_step, n_pool = s_lo, 1, max(0, s_hi - s_lo)
                    if not dense:
                        slot = _slot_in(g_lo, rows_lo, rows_hi)
                        t_lo, t_hi = taps[0, 0, slot], taps[1, 0, slot]
                        r0, r_step = g_lo * sh - ph + t_lo * dh, dh
                        n_pool = max(0, t_hi - t_lo)
                    if row_index.shape[0] < n_pool * OW:
                        row_values = np.empty(n_pool * OW, dtype=x.dtype)
                        row_index = np.empty(n_pool * OW, dtype=np.int64)
                    for i in range(n_pool):
                        r = r0 + i * r_step
                        va = i * OW
                        ra = xa + r * W
                        # index of column c of this row: c * c_step + r_index
                        c_step, r_index = (H, r) if column_major else (1, r * W)
                        if dw == 1 and sw == 2 and kw == 3:
                            for o in range(lo_w, hi_w):
                                c = 2 * o - pw
                                a, at = to_sortable(x[_u(ra + c)]), c
                                b = to_sortable(x[_u(ra + c + 1)])
                                take = b > a
                                a = b if take else a
                                at = c + 1 if take else at
                                b = to_sortable(x[_u(ra + c + 2)])
                                take = b > a
                                a = b if take else a
                                at = c + 2 if take else at
                                row_values[_u(va + o)] = a
                                row_index[_u(va + o)] = at * c_step + r_index
                        elif dw == 1 and sw == 2:
                            # wider windows at stride 2, as the values' column pairs: each
                            # pair's first maximum, then window o takes pairs o .. o + kw //
                            # 2 - 1 in order (for odd kw, the even column after them), a
                            # later one only when larger. (The tap loop below branches on
                            # the data: the 1-D k4 s2 took 13x the values' time.)
                            half, c0, n_win = kw // 2, 2 * lo_w - pw, hi_w - lo_w
                            for k in range(n_win + half - 1 if n_win > 0 else 0):
                                c = c0 + 2 * k
                                a = to_sortable(x[_u(ra + c)])
                                b = to_sortable(x[_u(ra + c + 1)])
                                take = b > a
                                pairs[_u(k)] = b if take else a
                                pair_index[_u(k)] = c * c_step + r_index + (c_step if take else 0)
                            # (pairs 0 and 1 in one loop: one pass less than a copy and a
                            # merge, though the 1-D k4 s2 took the same time either way)
                            second = 1 if half > 1 else 0
                            for o in range(lo_w, hi_w):
                                k = o - lo_w
                                a = pairs[_u(k)]
                                b = pairs[_u(k + second)]
                                take = b > a
                                row_values[_u(va + o)] = b if take else a
                                at = pair_index[_u(k)]
                                row_index[_u(va + o)] = pair_index[_u(k + second)] if take else at
                            for j in range(2, half):
                                for o in range(lo_w, hi_w):
                                    k = o - lo_w + j
                                    a = row_values[_u(va + o)]
                                    b = pairs[_u(k)]
                                    take = b > a
                                    row_values[_u(va + o)] = b if take else a
                                    at = row_index[_u(va + o)]
                                    row_index[_u(va + o)] = pair_index[_u(k)] if take else at
                            if kw % 2 == 1:
                                for o in range(lo_w, hi_w):
                                    c = 2 * o - pw + kw - 1
                                    a = row_values[_u(va + o)]
                                    b = to_sortable(x[_u(ra + c)])
                                    take = b > a
                                    row_values[_u(va + o)] = b if take else a
                                    at = row_index[_u(va + o)]
                                    row_index[_u(va + o)] = c * c_step + r_index if take else at
                        elif sw == 1 and kw == 3:
                            # (the taps in registers: through the row's buffers, tap by
                            # tap as below, each select was stored back where it was read,
                            # a masked store, slow on AMD processors; 3x3 dilated 2 with
                            # Indices spent a quarter of its time in that loop)
                            for o in range(lo_w, hi_w):
                                c = o - pw
                                a, at = to_sortable(x[_u(ra + c)]), c
                                b = to_sortable(x[_u(ra + c + dw)])
                                take = b > a
                                a = b if take else a
                                at = c + dw if take else at
                                b = to_sortable(x[_u(ra + c + 2 * dw)])
                                take = b > a
                                a = b if take else a
                                at = c + 2 * dw if take else at
                                row_values[_u(va + o)] = a
                                row_index[_u(va + o)] = at * c_step + r_index
                        elif sw == 1:
                            # (tap by tap from one pair of buffers into the other, the row's
                            # own and the spare, starting where the last tap lands in the
                            # row's: a select stored back where it was read is a masked
                            # store, as above; 5x5 windows on 56x56 planes took 18x their
                            # values' time)
                            to_row = kw % 2 == 1
                            dst, dst_index = (
                                (row_values, row_index) if to_row else (row_spare, index_spare)
                            )
                            d_at = va if to_row else 0
                            for o in range(lo_w, hi_w):
                                dst[_u(d_at + o)] = to_sortable(x[_u(ra + o - pw)])
                                dst_index[_u(d_at + o)] = (o - pw) * c_step + r_index
                            for j in range(1, kw):
                                src, src_index, s_at = dst, dst_index, d_at
                                to_row = not to_row
                                dst, dst_index = (
                                    (row_values, row_index) if to_row else (row_spare, index_spare)
                                )
                                d_at = va if to_row else 0
                                for o in range(lo_w, hi_w):
                                    c = o - pw + j * dw
                                    a, at = src[_u(s_at + o)], src_index[_u(s_at + o)]
                                    b = to_sortable(x[_u(ra + c)])
                                    take = b > a
                                    dst[_u(d_at + o)] = b if take else a
                                    # (by bit masks: through a select, the load of ``at``
                                    # went into a branch, and the loop was scalar code)
                                    mask = -np.int64(take)
                                    b_at = c * c_step + r_index
                                    dst_index[_u(d_at + o)] = (b_at & mask) | (at & ~mask)
                        else:
                            for o in range(lo_w, hi_w):
                                c = o * sw - pw
                                a, at = to_sortable(x[_u(ra + c)]), c
                                for j in range(1, kw):
                                    b = to_sortable(x[_u(ra + c + j * dw)])
                                    if b > a:
                                        a, at = b, c + j * dw
                                row_values[_u(va + o)] = a
                                row_index[_u(va + o)] = at * c_step + r_index
                        for part in range(2):  # the windows with taps outside the row
                            o_from, o_to = (0, lo_w) if part == 0 else (hi_w, OW)
                            for o in range(o_from, o_to):
                                a, at = sortable_fill, -1
                                for j in range(_tap_lo(taps, 1, o), _tap_hi(taps, 1, o)):
                                    c = o * sw - pw + j * dw
                                    b = to_sortable(x[ra + c])
                                    if at < 0 or b > a:
                                        a, at = b, c
                                row_values[va + o] = a
                                row_index[va + o] = at * c_step + r_index if at >= 0 else -1
                    for oh in range(g_lo, g_hi):
                        ya = (plane * OH + oh) * OW
                        slot = _slot_in(oh, rows_lo, rows_hi)
                        t_lo, t_hi = taps[0, 0, slot], taps[1, 0, slot]
                        if t_lo >= t_hi:
                            for e in range(ya, ya + OW):
                                y[e] = fill
                                indices[e] = -1
                            continue
                        va = (oh * sh - ph + t_lo * dh - r0) // r_step * OW
                        if t_hi - t_lo <= 3:
                            # (the rows in registers, as along the rows above, each
                            # output written once; a later row's value and position are
                            # both loaded before the select, so no load waits on it)
                            va1 = va + row_step if t_hi - t_lo >= 2 else va
                            va2 = va + 2 * row_step if t_hi - t_lo == 3 else va1
                            for o in range(OW):
                                a, at = row_values[_u(va + o)], row_index[_u(va + o)]
                                b, b_at = row_values[_u(va1 + o)], row_index[_u(va1 + o)]
                                take = b > a
                                a = b if take else a
                                at = b_at if take else at
                                b, b_at = row_values[_u(va2 + o)], row_index[_u(va2 + o)]
                                take = b > a
                                a = b if take else a
                                at = b_at if take else at
                                y[_u(ya + o)] = from_sortable(a)
                                indices[_u(ya + o)] = at + xa if at >= 0 else -1
                            continue
                        # taller windows row by row, from the first row's buffers into
                        # one pair of running maxima, then from that pair into the other
                        src, src_index, s_at = row_values, row_index, va
                        dst, dst_index = row_acc, acc_index
                        for t in range(1, t_hi - t_lo):
                            ta = va + t * row_step
                            for o in range(OW):
                                a, at = src[_u(s_at + o)], src_index[_u(s_at + o)]
                                b, b_at = row_values[_u(ta + o)], row_index[_u(ta + o)]
                                take = b > a
                                dst[_u(o)] = b if take else a
                                mask = -np.int64(take)  # (as along the rows)
                                dst_index[_u(o)] = (b_at & mask) | (at & ~mask)
                            src, src_index, s_at = dst, dst_index, 0
                            dst, dst_index = (
                                (row_spare, index_spare) if t % 2 == 1 else (row_acc, acc_index)
                            )
                        for o in range(OW):  # back to values, and to flat indices
                            y[_u(ya + o)] = from_sortable(src[_u(o)])
                            at = src_index[_u(o)]
                            indices[_u(ya + o)] = at + xa if at >= 0 else -1
                    g_lo = g_hi
        # Checked for NaN and -0.0 after the pooling, which then reads the rows from the
        # last-level cache or memory while it computes, the check from the core's own
        # cache (checked first, the check waited for them doing nothing else: with
        # Indices 0.92-0.94 of that time, geometric means of two runs, on the 14 CNN layers
        # of 54x54 to 224x224 planes that take these tasks or _window_task, float32, batch
        # 1, AVX2 AMD EPYC (Zen 3), 2026-12-04; values unchanged, 1.015). A NaN has the
        # task redone window by window. The rows checked as they were pooled (seen_lo to
        # seen_hi - 1) are not read again (the check, reading them again, was 14-15% of
        # the kernel's time on the 3x3/2 layers of 54x54 and 55x55 planes and 22-25% on
        # 112x112 ones, float32, one thread, AMD Zen 5, 2026-12-06).
        flags = 0
        if checked.shape[0] > 0:
            # (the lanes' smallest patterns start at +inf's, whose magnitude is no NaN)
            flags = _special_flags(seen, 0, 2 * LANES, special_mask, special_inf)
        if special_mask != 0 and r_lo < seen_lo:
            flags |= _special_flags(bits, xa + r_lo * W, xa + seen_lo * W, special_mask,
                                    special_inf)  # fmt: skip
        if special_mask != 0 and seen_hi < r_hi:
            flags |= _special_flags(bits, xa + seen_hi * W, xa + r_hi * W, special_mask,
                                    special_inf)  # fmt: skip
        nan, negative_zero = (flags & HOLDS_NAN) != 0, (flags & HOLDS_NEGATIVE_ZERO) != 0
        if nan:
            _rows_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh_lo, oh_hi)
        elif negative_zero:
            # (a -0.0 took these rows window by window, 13-50x the time; a few zeros now)
            _zero_maxima_exact(x, y, indices, want, dims, taps, inf_bits, fill, plane, oh_lo,
                               oh_hi)  # fmt: skip
        if act_code >= 0:  # the activation, while the outputs are in cache
            _activate_range(y, act_code, act_constants, (plane * OH + oh_lo) * OW,
                           (plane * OH + oh_hi) * OW)  # fmt: skip
        task += 1


@kernel(parallel=True)
def max_pool_planar(
    x, bits, y, indices, want, dims, taps, inf_bits, fill, special_mask, special_inf,
    act_code, act_constants, threads,
):  # fmt: skip
    """Parallel channels-first MaxPool over 1-D or 2-D planes; see _planar_tasks."""
    planes = y.shape[0] // (dims[P_OH] * dims[P_OW])
    # split planes into blocks of output rows until every thread has a few tasks
    row_blocks = min(dims[P_OH], max(1, -(-4 * threads // max(planes, 1))))
    tasks = planes * row_blocks
    # one chunk per thread: numba hands each thread an equal share of a prange anyway, and
    # a chunk sets up its own scratch
    chunks = min(tasks, threads)
    # (rows the long rows take go to _planar_tasks)
    if want and _task_pairs(dims, x) and not _long_argmax_rows(dims):  # (see _window_task)
        for chunk in prange(chunks):
            for task in range(chunk * tasks // chunks, (chunk + 1) * tasks // chunks):
                _window_task(x, bits, y, indices, dims, taps, inf_bits, fill, special_mask,
                             special_inf, act_code, act_constants, row_blocks, task)  # fmt: skip
        return
    for chunk in prange(chunks):
        # the flat stretches' tables, made by each thread for itself: made once before the
        # loop, they were read by the other core straight after this one wrote them, and
        # the calls that use them took 1.2-1.4x the time at batch 1 (AMD Zen 4, 2 cores)
        group_planes, block_rows, row_of, column_of = _flat_tables(
            dims, row_blocks, -(-tasks // max(chunks, 1)), want, wide_items(x)
        )
        _planar_tasks(
            x, bits, y, indices, want, dims, taps, inf_bits, fill, special_mask, special_inf,
            act_code, act_constants, row_blocks, chunk * tasks // chunks,
            (chunk + 1) * tasks // chunks, group_planes, block_rows, row_of, column_of,
        )  # fmt: skip


@kernel()
def max_pool_planar_serial(
    x, bits, y, indices, want, dims, taps, inf_bits, fill, special_mask, special_inf,
    act_code, act_constants, threads,
):  # fmt: skip
    """max_pool_planar on the calling thread (``threads`` is ignored), for small inputs."""
    planes = y.shape[0] // (dims[P_OH] * dims[P_OW])
    wide = wide_items(x)
    one, zero = np.int64(1), np.int64(0)  # (not literals: see the module's docstring)
    group_planes, block_rows, row_of, column_of = _flat_tables(dims, one, planes, want, wide)
    _planar_tasks(
        x, bits, y, indices, want, dims, taps, inf_bits, fill, special_mask, special_inf,
        act_code, act_constants, one, zero, planes, group_planes, block_rows, row_of, column_of,
    )  # fmt: skip


# ---- MaxPool, channels first, three spatial axes ------------------------------------------

# Elements of the depth maxima a volume task keeps at a time (in L2).
VOLUME_SCRATCH = 1 << 15
# Narrowest plane the 2x2x2/2 one-pass loop takes: on shorter rows the two passes were
# faster (4x14x14 volumes 0.63 of onnxruntime's time against 2.11, 8x56x56 0.69 against
# 0.96; 64 wide and wider the loop won, 16x112x112 0.47 against 0.81; AMD EPYC Zen 3).
CUBES_MIN_WIDTH = 64


@kernel(inline="always")
def _depth_maxima(x, bits, maxima, ma, sa, step, n_taps, size, special_mask, largest, smallest,
                  check):  # fmt: skip
    """maxima[ma:ma+size] = the maxima over n_taps input slices x[sa:sa+size],
    x[sa+step:...], ...; with check (a constant), also largest and smallest updated over
    their bits (_held)."""
    if n_taps == 2:  # (the common depths written out: one pass)
        for i in range(size):
            a = x[_u(sa + i)]
            b = x[_u(sa + step + i)]
            if check:
                largest, smallest = _held(bits[_u(sa + i)], special_mask, largest, smallest)
                largest, smallest = _held(bits[_u(sa + step + i)], special_mask, largest,
                                          smallest)  # fmt: skip
            maxima[_u(ma + i)] = b if to_sortable(b) > to_sortable(a) else a
        return largest, smallest
    if n_taps == 3:
        for i in range(size):
            a = x[_u(sa + i)]
            b = x[_u(sa + step + i)]
            c = x[_u(sa + 2 * step + i)]
            if check:
                largest, smallest = _held(bits[_u(sa + i)], special_mask, largest, smallest)
                largest, smallest = _held(bits[_u(sa + step + i)], special_mask, largest,
                                          smallest)  # fmt: skip
                largest, smallest = _held(bits[_u(sa + 2 * step + i)], special_mask, largest,
                                          smallest)  # fmt: skip
            a = b if to_sortable(b) > to_sortable(a) else a
            maxima[_u(ma + i)] = c if to_sortable(c) > to_sortable(a) else a
        return largest, smallest
    for t in range(n_taps):
        ta = sa + t * step
        for i in range(size):
            b = x[_u(ta + i)]
            if check:
                largest, smallest = _held(bits[_u(ta + i)], special_mask, largest, smallest)
            if t == 0:
                maxima[_u(ma + i)] = b
            else:
                a = maxima[_u(ma + i)]
                maxima[_u(ma + i)] = b if to_sortable(b) > to_sortable(a) else a
    return largest, smallest


@kernel(inline="always")
def _square_max(x, bits, i, W, special_mask, largest, smallest, check):
    """The maximum of x[i], x[i+1], x[i+W], x[i+W+1], ties to the first; with check,
    largest and smallest updated as in _depth_maxima."""
    a = x[_u(i)]
    b = x[_u(i + 1)]
    c = x[_u(i + W)]
    e = x[_u(i + W + 1)]
    if check:
        largest, smallest = _held(bits[_u(i)], special_mask, largest, smallest)
        largest, smallest = _held(bits[_u(i + 1)], special_mask, largest, smallest)
        largest, smallest = _held(bits[_u(i + W)], special_mask, largest, smallest)
        largest, smallest = _held(bits[_u(i + W + 1)], special_mask, largest, smallest)
    a = b if to_sortable(b) > to_sortable(a) else a
    c = e if to_sortable(e) > to_sortable(c) else c
    return (c if to_sortable(c) > to_sortable(a) else a), largest, smallest


@kernel(inline="always")
def _cubes_2x2x2(x, bits, y, xa, ya, H, W, OH, OW, o_lo, o_hi, special_mask, largest, smallest,
                 check):  # fmt: skip
    """y[output slices o_lo..o_hi-1 of the volume at ya] = the maxima of the 2x2x2 cubes at
    stride 2 of the volume at xa, every cube inside it; with check, largest and smallest
    updated as in _depth_maxima."""
    for o in range(o_lo, o_hi):
        for oh in range(OH):
            sa = xa + (2 * o * H + 2 * oh) * W
            yo = ya + (o * OH + oh) * OW
            # (the stride 2 a constant: LLVM loads whole vectors and deinterleaves them)
            for ow in range(OW):
                a, largest, smallest = _square_max(x, bits, sa + 2 * ow, W, special_mask,
                                                   largest, smallest, check)  # fmt: skip
                b, largest, smallest = _square_max(x, bits, sa + H * W + 2 * ow, W,
                                                   special_mask, largest, smallest,
                                                   check)  # fmt: skip
                y[_u(yo + ow)] = b if to_sortable(b) > to_sortable(a) else a
    return largest, smallest


@kernel()
def _volume_tasks(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, row_blocks, first_task, last_task,
):  # fmt: skip
    """Tasks first_task..last_task-1 of a channels-first MaxPool over volumes (three
    spatial axes), values only. A task is a block of output slices (along the first axis)
    of one volume, as in _max_pool_tasks, which does the task exactly when the input slices
    it reads hold a NaN. Otherwise each window's maximum is taken over its depth taps first,
    slice by slice and flat, and then over the planes of those maxima by the planar kernel
    (``dims``, ``plane_taps``: its tables for the last two axes), in one call for as many
    slices as the scratch holds, of one task or of several (small volumes). Without NaN and
    -0.0 the order of comparisons cannot change a value; with a -0.0, the outputs whose
    maximum is a zero are then redone (_volume_zero_maxima). 2x2x2 windows at stride 2,
    all inside a volume at least CUBES_MIN_WIDTH wide, skip both passes: each task is
    pooled straight into y (_cubes_2x2x2), with the same check over the task."""
    D, OD = geo[IN_SHAPE, 0], geo[OUT_SHAPE, 0]
    sd, dd, pd = geo[STRIDES, 0], geo[DILATIONS, 0], geo[PADS_BEGIN, 0]
    plane_size, out_plane = dims[P_H] * dims[P_W], dims[P_OH] * dims[P_OW]
    # slices of depth maxima held at a time: those of several volumes when volumes are
    # small (no more than this chunk's tasks can use)
    task_slices = -(-OD // row_blocks)
    batch = max(1, min(VOLUME_SCRATCH // max(plane_size, 1),
                       (last_task - first_task) * task_slices))  # fmt: skip
    no_indices = np.empty(0, dtype=np.int64)
    no_want = np.bool_(False)
    # (the maxima come from slices checked here: the planar kernel need not check again)
    no_check = np.zeros(1, dtype=bits.dtype)[0]
    OH, OW = geo[OUT_SHAPE, 1], geo[OUT_SHAPE, 2]
    # (the planar kernel's column step at stride 2 took about 40% of this case's time,
    # even on maxima held in L2)
    cubes = geo[IN_SHAPE, 2] >= CUBES_MIN_WIDTH
    for axis in range(3):
        cubes = (cubes and geo[KERNEL, axis] == 2 and geo[STRIDES, axis] == 2
                 and geo[DILATIONS, axis] == 1 and geo[INTERIOR_LO, axis] == 0
                 and geo[INTERIOR_HI, axis] == geo[OUT_SHAPE, axis])  # fmt: skip
    # the two passes' scratch and the planar kernel's tables (the cubes need neither)
    if cubes:
        group_planes, block_rows = 0, 0
        row_of = column_of = np.empty(0, dtype=np.int32)
    else:
        group_planes, block_rows, row_of, column_of = _flat_tables(
            dims, np.int64(1), batch, no_want, wide_items(x)
        )
    maxima = np.empty(0 if cubes else batch * plane_size, dtype=x.dtype)
    # (the planar kernel's arguments as it always gets them: one compiled version)
    maxima_bits = maxima.view(bits.dtype)
    # Slices whose depth maxima are held, not yet pooled over their planes: the planar
    # kernel takes them in one call, which on small volumes (a few slices of 7x7 to 14x14)
    # saves the set-up of its scratch for each. Their outputs are consecutive in y, as the
    # tasks' slices follow each other there. (Volume by volume, 8x512x2x7x7 took 15x
    # onnxruntime's time, AMD EPYC Zen 3, 2026-12-04.)
    held, held_y = 0, 0
    for task in range(first_task, last_task):
        volume = task // row_blocks
        block_no = task - volume * row_blocks
        o_lo = block_no * OD // row_blocks
        o_hi = (block_no + 1) * OD // row_blocks
        xa = volume * D * plane_size
        if cubes:
            ya = volume * OD * out_plane
            if special_mask == 0:
                _cubes_2x2x2(x, bits, y, xa, ya, dims[P_H], dims[P_W], OH, OW, o_lo, o_hi,
                             special_mask, special_mask, special_mask, False)  # fmt: skip
            else:
                largest, smallest = _cubes_2x2x2(
                    x, bits, y, xa, ya, dims[P_H], dims[P_W], OH, OW, o_lo, o_hi,
                    special_mask, same_type(0, special_mask), special_mask, True,
                )  # fmt: skip
                if largest > special_inf:
                    _max_pool_tasks(x, y, no_indices, no_want, shape, geo, taps, order,
                                    inf_bits, fill, act_code, act_constants, row_blocks, task,
                                    task + 1)  # fmt: skip
                    continue
                zeros_held = smallest == ~special_mask
                if zeros_held:
                    _volume_zero_maxima(x, y, geo, taps, inf_bits, volume, o_lo, o_hi)
            if act_code >= 0:
                _activate_range(y, act_code, act_constants, ya + o_lo * out_plane,
                                ya + o_hi * out_plane)  # fmt: skip
            continue
        for s_lo in range(o_lo, o_hi, batch):
            s_hi = min(s_lo + batch, o_hi)
            if held + s_hi - s_lo > batch:  # no room: pool the slices held first
                _volume_planes(maxima, maxima_bits, y, held_y, 0, held, no_indices, no_want,
                               dims, plane_taps, inf_bits, fill, no_check, special_inf,
                               act_code, act_constants, group_planes, block_rows, row_of,
                               column_of)  # fmt: skip
                held = 0
            ma0 = held * plane_size
            # the NaN and -0.0 check rides on the depth pass, which reads every input slice
            # these outputs read (one read of the input, not two)
            largest, smallest = same_type(0, special_mask), special_mask
            for o in range(s_lo, s_hi):
                ma = ma0 + (o - s_lo) * plane_size
                t_lo, t_hi = _tap_lo(taps, 0, o), _tap_hi(taps, 0, o)
                if t_lo >= t_hi:  # no tap inside the input: every window is empty
                    for i in range(plane_size):
                        maxima[_u(ma + i)] = fill
                    continue
                sa = xa + (o * sd - pd + t_lo * dd) * plane_size
                # (a constant flag per call: integers, with nothing to check, get the
                # plain loops, which the reductions slowed by up to 14%)
                if special_mask == 0:
                    _depth_maxima(x, bits, maxima, ma, sa, dd * plane_size, t_hi - t_lo,
                                  plane_size, special_mask, largest, smallest, False)  # fmt: skip
                else:
                    largest, smallest = _depth_maxima(
                        x, bits, maxima, ma, sa, dd * plane_size, t_hi - t_lo, plane_size,
                        special_mask, largest, smallest, True,
                    )  # fmt: skip
            ya = (volume * OD + s_lo) * out_plane
            nan_held = special_mask != 0 and largest > special_inf
            zeros_held = special_mask != 0 and smallest == ~special_mask
            if not nan_held and not zeros_held:
                held_y = ya if held == 0 else held_y
                held += s_hi - s_lo
                continue
            # The slices held before these are pooled now, then these on their own.
            _volume_planes(maxima, maxima_bits, y, held_y, 0, held, no_indices, no_want,
                           dims, plane_taps, inf_bits, fill, no_check, special_inf, act_code,
                           act_constants, group_planes, block_rows, row_of,
                           column_of)  # fmt: skip
            held = 0
            if nan_held:
                # the whole task, exactly (its outputs written so far are the same either way)
                _max_pool_tasks(x, y, no_indices, no_want, shape, geo, taps, order, inf_bits,
                                fill, act_code, act_constants, row_blocks, task,
                                task + 1)  # fmt: skip
                break
            # a -0.0: the activation waits for the redo of the zero maxima
            _volume_planes(maxima, maxima_bits, y, ya, ma0, s_hi - s_lo, no_indices, no_want,
                           dims, plane_taps, inf_bits, fill, no_check, special_inf, -1,
                           act_constants, group_planes, block_rows, row_of,
                           column_of)  # fmt: skip
            _volume_zero_maxima(x, y, geo, taps, inf_bits, volume, s_lo, s_hi)
            if act_code >= 0:
                _activate_range(y, act_code, act_constants, ya,
                                ya + (s_hi - s_lo) * out_plane)  # fmt: skip
    _volume_planes(maxima, maxima_bits, y, held_y, 0, held, no_indices, no_want, dims,
                   plane_taps, inf_bits, fill, no_check, special_inf, act_code, act_constants,
                   group_planes, block_rows, row_of, column_of)  # fmt: skip


@kernel(inline="always")
def _volume_planes(
    maxima, maxima_bits, y, ya, ma, n_slices, no_indices, no_want, dims, plane_taps, inf_bits,
    fill, no_check, special_inf, act_code, act_constants, group_planes, block_rows, row_of,
    column_of,
):  # fmt: skip
    """The planar kernel over n_slices planes of depth maxima from maxima[ma:], into
    y[ya:] (nothing for none)."""
    if n_slices <= 0:
        return
    plane_size, out_plane = dims[P_H] * dims[P_W], dims[P_OH] * dims[P_OW]
    n = n_slices * plane_size
    _planar_tasks(
        maxima[ma : ma + n], maxima_bits[ma : ma + n], y[ya : ya + n_slices * out_plane],
        no_indices, no_want, dims, plane_taps, inf_bits, fill, no_check, special_inf,
        np.int64(act_code), act_constants, np.int64(1), np.int64(0), np.int64(n_slices),
        np.int64(group_planes), np.int64(block_rows), row_of, column_of,
    )  # fmt: skip


@kernel(inline="always")
def _volume_zero_maxima(x, y, geo, taps, inf_bits, volume, o_lo, o_hi):
    """Redoes the outputs of output slices o_lo..o_hi-1 of a channels-first volume whose
    maximum is a zero. For input holding a -0.0 but no NaN: there _volume_tasks finds every
    maximum, and every first maximum that is not a zero, exactly; of tied zeros it may keep
    another one than the first. The first zero in scan order is the exact answer."""
    D, H, W = geo[IN_SHAPE, 0], geo[IN_SHAPE, 1], geo[IN_SHAPE, 2]
    OD, OH, OW = geo[OUT_SHAPE, 0], geo[OUT_SHAPE, 1], geo[OUT_SHAPE, 2]
    sd, sh, sw = geo[STRIDES, 0], geo[STRIDES, 1], geo[STRIDES, 2]
    dd, dh, dw = geo[DILATIONS, 0], geo[DILATIONS, 1], geo[DILATIONS, 2]
    pd, ph, pw = geo[PADS_BEGIN, 0], geo[PADS_BEGIN, 1], geo[PADS_BEGIN, 2]
    xa = volume * D * H * W
    ya = volume * OD * OH * OW
    # (a count first, which vectorises, in stretches of 64 outputs: zero maxima are rare)
    for run_lo in range(ya + o_lo * OH * OW, ya + o_hi * OH * OW, 64):
        run_hi = min(run_lo + 64, ya + o_hi * OH * OW)
        if _zero_count(y, run_lo, run_hi, inf_bits) == 0:
            continue
        for e in range(run_lo, run_hi):
            if order_key(y[e], inf_bits) != 0:
                continue
            o = (e - ya) // (OH * OW)
            oh = (e - ya - o * OH * OW) // OW
            ow = e - ya - (o * OH + oh) * OW
            found = False
            for t in range(_tap_lo(taps, 0, o), _tap_hi(taps, 0, o)):
                for th in range(_tap_lo(taps, 1, oh), _tap_hi(taps, 1, oh)):
                    for tw in range(_tap_lo(taps, 2, ow), _tap_hi(taps, 2, ow)):
                        d = o * sd - pd + t * dd
                        r = oh * sh - ph + th * dh
                        c = ow * sw - pw + tw * dw
                        value = x[xa + (d * H + r) * W + c]
                        if order_key(value, inf_bits) == 0:
                            y[e] = value
                            found = True
                            break
                    if found:
                        break
                if found:
                    break


@kernel(inline="always")
def _volume_chunks(shape, geo, threads):
    """(row_blocks, tasks, chunks) of the volume kernels' parallel entries: volumes split
    into blocks of output slices until every thread has a few tasks, and one chunk of tasks
    per thread (see max_pool_planar)."""
    planes = shape[0]
    row_blocks = min(geo[OUT_SHAPE, 0], max(1, -(-4 * threads // max(planes, 1))))
    tasks = planes * row_blocks
    return row_blocks, tasks, min(tasks, threads)


@kernel(parallel=True)
def max_pool_volume(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, threads,
):  # fmt: skip
    """Parallel MaxPool over channels-first volumes, values only; see _volume_tasks."""
    row_blocks, tasks, chunks = _volume_chunks(shape, geo, threads)
    for chunk in prange(chunks):
        _volume_tasks(
            x, bits, y, shape, geo, taps, order, inf_bits, fill, dims, plane_taps,
            special_mask, special_inf, act_code, act_constants, row_blocks,
            chunk * tasks // chunks, (chunk + 1) * tasks // chunks,
        )  # fmt: skip


@kernel()
def max_pool_volume_serial(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, threads,
):  # fmt: skip
    """max_pool_volume on the calling thread (``threads`` is ignored), for small inputs."""
    _volume_tasks(
        x, bits, y, shape, geo, taps, order, inf_bits, fill, dims, plane_taps, special_mask,
        special_inf, act_code, act_constants, np.int64(1), np.int64(0), shape[0],
    )  # fmt: skip


# ---- MaxPool with Indices, channels first, three spatial axes ---------------------------

# Values of the planar results (with as many int64 positions) a task of the volume Indices
# kernel holds at a time: 192 KiB of float32 results and positions, in L2.
VOLUME_INDICES_SCRATCH = 1 << 14


@kernel(inline="always")
def _slices_read(geo, taps, u):
    """(first, end) of the input slices that output slice u reads, both counted over all
    the volumes' slices in turn; (0, 0) when it reads none. (With dilation and pads, the
    first slice read does not always grow with u.)"""
    D, OD = geo[IN_SHAPE, 0], geo[OUT_SHAPE, 0]
    volume = u // OD
    o = u - volume * OD
    t_lo, t_hi = _tap_lo(taps, 0, o), _tap_hi(taps, 0, o)
    if t_lo >= t_hi:
        return 0, 0
    start = volume * D + o * geo[STRIDES, 0] - geo[PADS_BEGIN, 0]
    return start + t_lo * geo[DILATIONS, 0], start + (t_hi - 1) * geo[DILATIONS, 0] + 1


@kernel(inline="always")
def _merge_slice_argmax(first, first_at, a, later, later_at, b, y, indices, ya, n, base,
                        inf_bits):  # fmt: skip
    """y[ya:ya+n], indices[ya:ya+n] = of the windows' results so far (at a) and those of a
    later slice (at b), the one ``replaces`` picks, with its position plus base (a position
    -1, a window with no tap, stays -1). Out of place: a select stored back where it was
    read becomes a masked store, slow on AMD processors.

    Both positions are loaded and blended by a mask: written as ``later_at[b + i] if take
    else first_at[a + i]``, the one load from a selected address was compiled, in the code
    numba caches, to a branch on ``take`` for each output, mispredicted half the time on
    real data (1x16x32x64x64 2x2x2/2 took 3x the 2-D call on the same slices; the same
    source compiled in the process, with a conditional move, ran at twice the speed). The
    mask makes the loop one of vectors, without branches."""
    for i in range(n):
        value, best = later[_u(b + i)], first[_u(a + i)]
        take = replaces(value, best, inf_bits)
        mask = -np.int64(take)  # (all ones where the later slice's value is taken)
        at = (later_at[_u(b + i)] & mask) | (first_at[_u(a + i)] & ~mask)
        y[_u(ya + i)] = value if take else best
        indices[_u(ya + i)] = at + base if at >= 0 else at


@kernel()
def _volume_indices_tasks(
    x, bits, y, indices, shape, geo, taps, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, row_blocks, first_task, last_task,
):  # fmt: skip
    """Tasks first_task..last_task-1 of a channels-first MaxPool over volumes with Indices,
    in the tasks of _volume_tasks (a block of output slices of one volume).

    A window's first maximum in scan order is the first over its slices, in order, of each
    slice's first maximum, since every tap of a slice comes before those of the next
    (likewise for the first NaN). So the input slices the tasks read are pooled as planes,
    with Indices, by the planar kernel (``dims``: its table for the last two axes, in the
    call's storage order), as many at a time as the scratch holds, of one volume or of many
    in turn; then each output slice takes, window by window, the first of the maxima of its
    slices by ``replaces``. The planar kernel's positions count from the first slice of the
    call: row-major, they are the input's flat offsets less that slice's; column-major (in
    the plane), a slice's are turned into the volume's column-major offsets before the
    merge. (Before, the general kernel carried each value with its offset one axis at a
    time, 13-19x the values' time on the 832-channel volumes of a video network.)"""
    D, OD = geo[IN_SHAPE, 0], geo[OUT_SHAPE, 0]
    plane_size = dims[P_H] * dims[P_W]
    out_plane = dims[P_OH] * dims[P_OW]
    step = geo[DILATIONS, 0] * out_plane  # (between a window's slices in the scratch)
    span = (geo[KERNEL, 0] - 1) * geo[DILATIONS, 0] + 1  # (the slices a window spans)
    held = max(VOLUME_INDICES_SCRATCH // max(out_plane, 1), min(span, D), 1)
    maxima = np.empty(held * out_plane, dtype=x.dtype)
    positions = np.empty(held * out_plane, dtype=np.int64)
    # a deeper window's results so far (its first two slices', then one more each time)
    kept = np.empty(2 * out_plane, dtype=x.dtype)
    kept_at = np.empty(2 * out_plane, dtype=np.int64)
    one, zero = np.int64(1), np.int64(0)  # (not literals: see the module's docstring)
    want = np.bool_(True)
    group_planes, block_rows, row_of, column_of = _flat_tables(dims, one, held, want,
                                                               wide_items(x))  # fmt: skip
    # the tasks' output slices, counted over all the volumes' in turn: [u_lo, u_hi)
    first_volume, last_volume = first_task // row_blocks, (last_task - 1) // row_blocks
    u_lo = first_volume * OD + (first_task - first_volume * row_blocks) * OD // row_blocks
    u_hi = last_volume * OD + (last_task - last_volume * row_blocks) * OD // row_blocks
    u = u_lo
    while u < u_hi:
        g_lo, g_hi = _slices_read(geo, taps, u)
        if g_lo >= g_hi:  # no tap inside the input: every window is empty
            for e in range(u * out_plane, (u + 1) * out_plane):
                y[e] = fill
                indices[e] = -1
            if act_code >= 0:
                _activate_range(y, act_code, act_constants, u * out_plane, (u + 1) * out_plane)
            u += 1
            continue
        # the output slices whose input slices fit in the scratch with these (and are not
        # further on than they are many: slices in between are pooled for nothing)
        u_end = u + 1
        while u_end < u_hi:
            n_lo, n_hi = _slices_read(geo, taps, u_end)
            if (n_lo >= n_hi or max(g_hi, n_hi) - min(g_lo, n_lo) > held
                    or n_lo - g_hi > n_hi - n_lo):  # fmt: skip
                break
            g_lo, g_hi = min(g_lo, n_lo), max(g_hi, n_hi)
            u_end += 1
        n = (g_hi - g_lo) * out_plane
        _planar_tasks(
            x[g_lo * plane_size : g_hi * plane_size], bits[g_lo * plane_size : g_hi * plane_size],
            maxima[:n], positions[:n], want, dims, plane_taps, inf_bits, fill, special_mask,
            special_inf, np.int64(-1), act_constants, one, zero, g_hi - g_lo,
            np.int64(group_planes), np.int64(block_rows), row_of, column_of,
        )  # fmt: skip
        base = g_lo * plane_size
        if dims[P_COLUMN_MAJOR] != 0:
            # slice p's positions, p * plane_size + h + w * H: the volume's offsets are
            # d + D * (h + w * H) from its first value
            for p in range(g_hi - g_lo):
                volume = (g_lo + p) // D
                offset = volume * D * plane_size + (g_lo + p - volume * D) - D * p * plane_size
                for i in range(p * out_plane, (p + 1) * out_plane):
                    at = positions[_u(i)]
                    positions[_u(i)] = D * at + offset if at >= 0 else at
            base = 0
        for o_all in range(u, u_end):
            volume = o_all // OD
            o = o_all - volume * OD
            t_lo, t_hi = _tap_lo(taps, 0, o), _tap_hi(taps, 0, o)
            a = (volume * D + o * geo[STRIDES, 0] - geo[PADS_BEGIN, 0] + t_lo * geo[DILATIONS, 0]
                 - g_lo) * out_plane  # fmt: skip
            ya = o_all * out_plane
            if t_hi - t_lo == 1:
                for i in range(out_plane):
                    at = positions[_u(a + i)]
                    y[_u(ya + i)] = maxima[_u(a + i)]
                    indices[_u(ya + i)] = at + base if at >= 0 else at
            elif t_hi - t_lo == 2:
                _merge_slice_argmax(maxima, positions, a, maxima, positions, a + step, y,
                                    indices, ya, out_plane, base, inf_bits)  # fmt: skip
            else:  # the first two into kept, each next one into its other half, the last into y
                _merge_slice_argmax(maxima, positions, a, maxima, positions, a + step, kept,
                                    kept_at, zero, out_plane, zero, inf_bits)  # fmt: skip
                ka = zero
                for t in range(2, t_hi - t_lo - 1):
                    _merge_slice_argmax(kept, kept_at, ka, maxima, positions, a + t * step,
                                        kept, kept_at, out_plane - ka, out_plane, zero,
                                        inf_bits)  # fmt: skip
                    ka = out_plane - ka
                _merge_slice_argmax(kept, kept_at, ka, maxima, positions,
                                    a + (t_hi - t_lo - 1) * step, y, indices, ya, out_plane,
                                    base, inf_bits)  # fmt: skip
            if act_code >= 0:
                _activate_range(y, act_code, act_constants, ya, ya + out_plane)
        u = u_end


@kernel(parallel=True)
def max_pool_volume_indices(
    x, bits, y, indices, shape, geo, taps, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, threads,
):  # fmt: skip
    """Parallel MaxPool with Indices over channels-first volumes; see _volume_indices_tasks."""
    row_blocks, tasks, chunks = _volume_chunks(shape, geo, threads)
    for chunk in prange(chunks):
        _volume_indices_tasks(
            x, bits, y, indices, shape, geo, taps, inf_bits, fill, dims, plane_taps,
            special_mask, special_inf, act_code, act_constants, row_blocks,
            chunk * tasks // chunks, (chunk + 1) * tasks // chunks,
        )  # fmt: skip


@kernel()
def max_pool_volume_indices_serial(
    x, bits, y, indices, shape, geo, taps, inf_bits, fill, dims, plane_taps, special_mask,
    special_inf, act_code, act_constants, threads,
):  # fmt: skip
    """max_pool_volume_indices on the calling thread (``threads`` is ignored)."""
    _volume_indices_tasks(
        x, bits, y, indices, shape, geo, taps, inf_bits, fill, dims, plane_taps, special_mask,
        special_inf, act_code, act_constants, np.int64(1), np.int64(0), shape[0],
    )  # fmt: skip


# ---- MaxPool, channels last, two or three spatial axes -------------------------------------


# The channels-last kernel checks its input for NaN and -0.0 in stretches of about this many
# elements, each just before it is pooled (so that the input is read from memory once).
CHECK_ELEMENTS = 1 << 15


@kernel()
def _channels_last_tasks(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, special_mask, special_inf, act_code,
    act_constants, row_blocks, first_task, last_task,
):  # fmt: skip
    """Tasks first_task..last_task-1 of a channels-last MaxPool over two or three spatial
    axes, values only, in the tasks of _max_pool_tasks (a block of outputs along the first
    spatial axis of one image or volume), which does a task exactly when the input it reads
    holds a NaN. Otherwise each output row is pooled down the columns first, over the input
    rows of W * C values its windows cover on the leading axes (two rows per flat loop), and
    then along the row, C values at a time. Without NaN and -0.0 the order of comparisons
    cannot change a value; once the task's input has shown a -0.0, the outputs whose maximum
    is a zero are redone (_channels_last_zero_maxima)."""
    lead = geo.shape[1] - 1  # 1 for images, 2 for volumes
    H, OH = geo[IN_SHAPE, 0], geo[OUT_SHAPE, 0]
    sh, dh, ph = geo[STRIDES, 0], geo[DILATIONS, 0], geo[PADS_BEGIN, 0]
    # a volume's second axis; an image has a stand-in of one row and one tap
    H2, OH2, sh2, dh2, ph2 = 1, 1, 0, 0, 0
    if lead == 2:
        H2, OH2 = geo[IN_SHAPE, 1], geo[OUT_SHAPE, 1]
        sh2, dh2, ph2 = geo[STRIDES, 1], geo[DILATIONS, 1], geo[PADS_BEGIN, 1]
    sw, dw, pw = geo[STRIDES, lead], geo[DILATIONS, lead], geo[PADS_BEGIN, lead]
    OW, kw = geo[OUT_SHAPE, lead], geo[KERNEL, lead]
    lo, hi = geo[INTERIOR_LO, lead], geo[INTERIOR_HI, lead]
    rows, row_length, out_length, C = shape[1], shape[2], shape[4], shape[5]
    slice_length = H2 * row_length  # elements per input index along the first axis
    # outputs along the first axis per check: about CHECK_ELEMENTS of new input each
    batch = max(1, CHECK_ELEMENTS // max(1, sh * slice_length))
    columns = np.empty(row_length, dtype=x.dtype)
    # (a window's taps inside the input: at most one per input index on each axis)
    most_taps = min(geo[KERNEL, 0], H) * (min(geo[KERNEL, 1], H2) if lead == 2 else 1)
    row_starts = np.empty(most_taps, dtype=np.int64)
    no_indices = np.empty(0, dtype=np.int64)
    no_want = np.bool_(False)
    for task in range(first_task, last_task):
        image = task // row_blocks
        block_no = task - image * row_blocks
        o_lo = block_no * OH // row_blocks
        o_hi = (block_no + 1) * OH // row_blocks
        xa = image * rows * row_length
        # the input read by a batch of outputs along the first axis is checked just before
        # it is pooled, so that it is read from memory once; with a NaN the whole task is
        # redone exactly (the outputs written so far are the same either way)
        checked = 0  # the input before this index along the first axis has been checked
        exact = False
        zeros_held = False  # a -0.0 in the input checked so far (later rows may read it)
        for b_lo in range(o_lo, o_hi, batch):
            b_hi = min(b_lo + batch, o_hi)
            r_lo, r_hi = H, 0
            for o in range(b_lo, b_hi):
                if _tap_lo(taps, 0, o) < _tap_hi(taps, 0, o):
                    r_lo = min(r_lo, o * sh - ph + _tap_lo(taps, 0, o) * dh)
                    r_hi = max(r_hi, o * sh - ph + (_tap_hi(taps, 0, o) - 1) * dh + 1)
            r_lo = max(r_lo, checked)
            if special_mask != 0 and r_lo < r_hi:
                nan, negative_zero = _specials_held(bits, xa + r_lo * slice_length,
                                                    xa + r_hi * slice_length, special_mask,
                                                    special_inf)  # fmt: skip
                if nan:
                    _max_pool_tasks(x, y, no_indices, no_want, shape, geo, taps, order, inf_bits,
                                    fill, act_code, act_constants, row_blocks, task,
                                    task + 1)  # fmt: skip
                    exact = True
                    break
                zeros_held |= negative_zero
            checked = max(checked, r_hi)
            for o in range(b_lo, b_hi):
                for o2 in range(OH2):
                    ya = ((image * OH + o) * OH2 + o2) * out_length
                    # the input rows of this output row's windows
                    t2_lo, t2_hi = (
                        (_tap_lo(taps, 1, o2), _tap_hi(taps, 1, o2)) if lead == 2 else (0, 1)
                    )
                    n = 0
                    for t in range(_tap_lo(taps, 0, o), _tap_hi(taps, 0, o)):
                        row = (o * sh - ph + t * dh) * H2
                        for t2 in range(t2_lo, t2_hi):
                            row_starts[n] = xa + (row + o2 * sh2 - ph2 + t2 * dh2) * row_length
                            n += 1
                    if n == 0:  # no tap inside the input: every window is empty
                        for e in range(out_length):
                            y[_u(ya + e)] = fill
                        continue
                    # 1. down the columns (2 or 3 rows written out, the maxima kept in
                    # registers: read back from columns and written through a select, LLVM
                    # made them masked stores, slow on AMD processors)
                    ra = row_starts[0]
                    if n == 3:
                        ra1, ra2 = row_starts[1], row_starts[2]
                        for i in range(row_length):
                            a = x[_u(ra + i)]
                            b = x[_u(ra1 + i)]
                            a = b if to_sortable(b) > to_sortable(a) else a
                            b = x[_u(ra2 + i)]
                            columns[_u(i)] = b if to_sortable(b) > to_sortable(a) else a
                    elif n == 2:
                        ra1 = row_starts[1]
                        for i in range(row_length):
                            a = x[_u(ra + i)]
                            b = x[_u(ra1 + i)]
                            columns[_u(i)] = b if to_sortable(b) > to_sortable(a) else a
                    else:  # one row, or four and more: the first, then two at a time
                        for i in range(row_length):
                            columns[_u(i)] = x[_u(ra + i)]
                        for k in range(1, n - 1, 2):
                            ra, rb = row_starts[k], row_starts[k + 1]
                            for i in range(row_length):
                                a = columns[_u(i)]
                                b = x[_u(ra + i)]
                                c = x[_u(rb + i)]
                                b = c if to_sortable(c) > to_sortable(b) else b
                                columns[_u(i)] = b if to_sortable(b) > to_sortable(a) else a
                        if n % 2 == 0:
                            ra = row_starts[n - 1]
                            for i in range(row_length):
                                a = columns[_u(i)]
                                b = x[_u(ra + i)]
                                columns[_u(i)] = b if to_sortable(b) > to_sortable(a) else a
                    # 2. along the row, C values at a time (all taps inside the row from lo to hi)
                    for w in range(OW):
                        j_lo, j_hi = 0, kw
                        if w < lo or w >= hi:  # a border window: its taps inside the row
                            j_lo, j_hi = _tap_lo(taps, lead, w), _tap_hi(taps, lead, w)
                        wa = ya + w * C
                        if j_lo >= j_hi:
                            for c in range(C):
                                y[_u(wa + c)] = fill
                            continue
                        ca = (w * sw - pw + j_lo * dw) * C
                        if j_hi - j_lo == 3:  # (in registers, as above)
                            cb, cc = ca + dw * C, ca + 2 * dw * C
                            for c in range(C):
                                a = columns[_u(ca + c)]
                                b = columns[_u(cb + c)]
                                a = b if to_sortable(b) > to_sortable(a) else a
                                b = columns[_u(cc + c)]
                                y[_u(wa + c)] = b if to_sortable(b) > to_sortable(a) else a
                            continue
                        if j_hi - j_lo == 2:
                            cb = ca + dw * C
                            for c in range(C):
                                a = columns[_u(ca + c)]
                                b = columns[_u(cb + c)]
                                y[_u(wa + c)] = b if to_sortable(b) > to_sortable(a) else a
                            continue
                        for c in range(C):
                            y[_u(wa + c)] = columns[_u(ca + c)]
                        for j in range(1, j_hi - j_lo):
                            ja = ca + j * dw * C
                            for c in range(C):
                                a = y[_u(wa + c)]
                                b = columns[_u(ja + c)]
                                y[_u(wa + c)] = b if to_sortable(b) > to_sortable(a) else a
                    if zeros_held:
                        _channels_last_zero_maxima(x, y, ya, row_starts, n, geo, taps, inf_bits,
                                                   C)  # fmt: skip
        if act_code >= 0 and not exact:  # the activation, while the outputs are in cache
            _activate_range(y, act_code, act_constants, (image * OH + o_lo) * OH2 * out_length,
                           (image * OH + o_hi) * OH2 * out_length)  # fmt: skip


@kernel(inline="always")
def _channels_last_zero_maxima(x, y, ya, row_starts, n, geo, taps, inf_bits, C):
    """Redoes the outputs of one channels-last output row (at ya in y) whose maximum is a
    zero, given the starts of the n input rows its windows cover, in scan order. For input
    holding a -0.0 but no NaN: there _channels_last_tasks finds every maximum, and every
    first maximum that is not a zero, exactly; of tied zeros it keeps +0.0 (to_sortable puts
    -0.0 below it), not the first. The first zero in scan order is the exact answer."""
    lead = geo.shape[1] - 1
    sw, dw, pw = geo[STRIDES, lead], geo[DILATIONS, lead], geo[PADS_BEGIN, lead]
    OW = geo[OUT_SHAPE, lead]
    # (a count first, which vectorises, in stretches of 64 outputs: zero maxima are rare,
    # and a scan over the whole row for each one made rows of thousands of outputs slower)
    for run_lo in range(ya, ya + OW * C, 64):
        run_hi = min(run_lo + 64, ya + OW * C)
        if _zero_count(y, run_lo, run_hi, inf_bits) == 0:
            continue
        for e in range(run_lo, run_hi):
            if order_key(y[e], inf_bits) != 0:
                continue
            w = (e - ya) // C
            c = e - ya - w * C
            found = False
            for k in range(n):
                for j in range(_tap_lo(taps, lead, w), _tap_hi(taps, lead, w)):
                    value = x[row_starts[k] + (w * sw - pw + j * dw) * C + c]
                    if order_key(value, inf_bits) == 0:
                        y[e] = value
                        found = True
                        break
                if found:
                    break


@kernel(parallel=True)
def max_pool_channels_last(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, special_mask, special_inf, act_code,
    act_constants, threads,
):  # fmt: skip
    """Parallel channels-last MaxPool over two or three spatial axes, values only; see
    _channels_last_tasks."""
    planes = shape[0]
    row_blocks = min(geo[OUT_SHAPE, 0], max(1, -(-4 * threads // max(planes, 1))))
    tasks = planes * row_blocks
    chunks = min(tasks, threads)  # (one chunk per thread: see max_pool_planar)
    for chunk in prange(chunks):
        _channels_last_tasks(
            x, bits, y, shape, geo, taps, order, inf_bits, fill, special_mask, special_inf,
            act_code, act_constants, row_blocks, chunk * tasks // chunks,
            (chunk + 1) * tasks // chunks,
        )  # fmt: skip


@kernel()
def max_pool_channels_last_serial(
    x, bits, y, shape, geo, taps, order, inf_bits, fill, special_mask, special_inf, act_code,
    act_constants, threads,
):  # fmt: skip
    """max_pool_channels_last on the calling thread (``threads`` is ignored)."""
    _channels_last_tasks(
        x, bits, y, shape, geo, taps, order, inf_bits, fill, special_mask, special_inf,
        act_code, act_constants, np.int64(1), np.int64(0), shape[0],
    )  # fmt: skip


# ---- GlobalMaxPool ----------------------------------------------------------------------

# A plane is reduced in whole blocks of KEY_BLOCK elements, the last one masked past the
# plane's end: loop lengths that are multiples of the vector width times LLVM's interleave,
# so the vectorised loops leave no scalar remainder (which would be all of a 7x7 plane).
KEY_BLOCK = 64
# With prefetching (see _global_max_planes), planes of at least PREFETCH_PLANE items are read
# in blocks of PREFETCH_BLOCK, each of which first asks for the lines GLOBAL_PREFETCH_BYTES
# ahead. (Blocks of 64 took twice the time of the plain loop on data in the L2 cache: every
# block ends its vector loop with a reduction across the lanes; 256 and 512 took 0.85-1.0.)
PREFETCH_BLOCK = 8 * KEY_BLOCK
PREFETCH_PLANE = 4 * PREFETCH_BLOCK
GLOBAL_PREFETCH_BYTES = 8192


@kernel()
def _plane_max_exact(values, at, size, inf_bits):
    """The maximum of values[at:at + size] (size >= 1), in scan order: the first maximum
    and the first NaN win."""
    best = values[at]
    for i in range(1, size):
        if replaces(values[at + i], best, inf_bits):
            best = values[at + i]
    return best


@kernel(inline="always")
def _largest_bits(bits, lo, hi, largest, largest_unsigned, floats):
    """largest and largest_unsigned updated with bits[lo:hi] read as signed and (floats
    only, for the NaN test) as unsigned integers: one vectorised loop."""
    if floats:
        for i in range(lo, hi):
            b = bits[_u(i)]
            largest = max(b, largest)
            largest_unsigned = max(as_unsigned(b), largest_unsigned)
    else:  # (integers: no NaN to look for)
        for i in range(lo, hi):
            largest = max(bits[_u(i)], largest)
    return largest, largest_unsigned


@kernel()
def _global_max_planes(x, bits, y, y_bits, special_mask, special_inf, inf_bits, fill,
                       prefetch_from, first, last):  # fmt: skip
    """Planes first..last-1 of x (planes * P,) flat -> y (planes,); ``bits`` and ``y_bits`` are the
    same arrays seen as signed integers of their width (see ``Storage``).

    A plane is reduced as integers, which LLVM vectorises (a float max reduction it does not): the
    largest of a float's bits read as a signed integer, and the largest read as unsigned.
    Non-negative floats order like their bits, so when the largest bits are non-negative (a positive
    number is there) they are the maximum. A NaN is there when the signed largest lies above +inf's
    bits (a NaN without its sign bit) or the unsigned one above -inf's (with it). (The largest
    magnitude, bits & mask, took one more operation a value: the unsigned maximum took 0.90 and 0.97
    of its time over six float32 inputs of 0.8 to 103 MB in two runs, float64 0.98, on an Intel
    Xeon.) A plane of negative numbers only (its largest bits are negative) is read again for its
    smallest bits, the number nearest zero; a plane with a NaN, or whose maximum is a zero (-0.0 and
    +0.0 tie, the first wins), is scanned again exactly, in order. Integers (special_mask 0) take
    the largest, in a loop of their own. (With the smallest bits kept in the same pass, a third
    reduction, float32 took 1.02-1.33x the time, float16 1.03-1.30x, and integers in the float loop
    1.09x: on an Intel Xeon whose last-level cache holds 260 MiB, where even 32x64x112x112 is read
    from the cache and the loop's arithmetic sets its speed. Planes of negative numbers only pay for
    it: with every value negative, 1.05-1.36x the three reductions' time.)

    The two reductions a vector slow the loop when the data come from memory (see _prefetch):
    there, on float inputs of at least prefetch_from bytes, the planes are read in blocks that
    each ask for the data ahead. On the Intel Xeon with 480 MiB of L3 (2026-12-02), against
    the plain loop: float32 0.78-0.91 of the time on 32x64x112x112, 32x256x56x56 and
    32x64x224x224, float64 0.73-0.96, float16 0.70-0.83 from 102 MB on; from 0.8 to 51 MB,
    0.98-1.03.
    """
    planes = y.shape[0]
    size = x.shape[0] // planes if planes > 0 else 0
    whole = size - size % KEY_BLOCK
    zero = same_type(0, special_mask)
    # -inf's bits, read as unsigned: only the negative NaNs lie above them
    negative_inf = as_unsigned(same_type(special_inf | ~special_mask, special_mask))
    # the last block's lanes inside the plane, all bits set: a plain load and two bit
    # operations a lane. (With `i < size - whole` tested in the loop, LLVM made masked
    # loads and rebuilt their masks for every plane; on the AVX2 AMD EPYC (Zen) machine,
    # 2026-12-01, this took 0.33-0.55 of that loop's time on planes of 5x5 to 13x13 and
    # 0.89 on 28x28, float32)
    keep_mask = np.zeros(KEY_BLOCK, dtype=bits.dtype)
    floats = special_mask != 0
    # A prefetch pays where the data come from memory (inputs of prefetch_from bytes), for
    # floats, whose loop does two reductions (the integers' one kept up without it), and on
    # planes of many blocks: float64 28x28 planes took 1.20x the time with it.
    prefetching = (floats and size >= PREFETCH_PLANE
                   and bits.shape[0] * bits.itemsize >= prefetch_from)  # fmt: skip
    line_items = max(1, CACHE_LINE // bits.itemsize)
    ahead = GLOBAL_PREFETCH_BYTES // bits.itemsize
    for i in range(size - whole):
        keep_mask[i] = -1
    for plane in range(first, last):
        if size == 0:
            y[plane] = fill
            continue
        at = plane * size
        # the plane in whole blocks, the last one masked past its end; at the end of the
        # input, where that block would run off it, the plain loop goes to the plane's end
        masked = whole < size and at + whole + KEY_BLOCK <= bits.shape[0]
        plain_end = whole if masked else size
        first_bits = bits[at]
        largest_bits = first_bits
        largest_unsigned = as_unsigned(first_bits)
        if prefetching:
            # blocks that first ask for the lines GLOBAL_PREFETCH_BYTES ahead (past the
            # plane's end too: the next plane's, or nothing, as a prefetch never faults)
            done = plain_end - plain_end % PREFETCH_BLOCK
            for s in range(at, at + done, PREFETCH_BLOCK):
                for line in range(s + ahead, s + ahead + PREFETCH_BLOCK, line_items):
                    prefetch(bits, line)
                largest_bits, largest_unsigned = _largest_bits(bits, s, s + PREFETCH_BLOCK,
                                                               largest_bits, largest_unsigned,
                                                               floats)  # fmt: skip
            largest_bits, largest_unsigned = _largest_bits(bits, at + done, at + plain_end,
                                                           largest_bits, largest_unsigned,
                                                           floats)  # fmt: skip
        elif special_mask == 0:  # (integers: no NaN to look for)
            for i in range(plain_end):
                largest_bits = max(bits[_u(at + i)], largest_bits)
        else:
            for i in range(plain_end):
                b = bits[_u(at + i)]
                largest_bits = max(b, largest_bits)
                largest_unsigned = max(as_unsigned(b), largest_unsigned)
        if masked:
            for i in range(KEY_BLOCK):
                # past the plane's end, its first element stands in: changes nothing
                keep = keep_mask[i]
                b = same_type((bits[_u(at + whole + i)] & keep) | (first_bits & ~keep), keep)
                largest_bits = max(b, largest_bits)
                largest_unsigned = max(as_unsigned(b), largest_unsigned)
        found = largest_bits
        nan = special_mask != 0 and (largest_bits > special_inf or largest_unsigned > negative_inf)
        if special_mask != 0 and largest_bits < zero and not nan:
            for i in range(size):
                found = min(bits[_u(at + i)], found)
        if nan or (special_mask != 0 and (found & special_mask) == 0):
            y[plane] = _plane_max_exact(x, at, size, inf_bits)
        else:
            y_bits[plane] = found


@kernel(parallel=True)
def global_max_nchw(x, bits, y, y_bits, special_mask, special_inf, inf_bits, fill, prefetch_from,
                    threads):  # fmt: skip
    """GlobalMaxPool, channels first, in parallel over chunks of planes; float inputs of at
    least prefetch_from bytes prefetch (see _global_max_planes)."""
    planes = y.shape[0]
    chunks = min(planes, 4 * threads)
    for chunk in prange(chunks):
        _global_max_planes(x, bits, y, y_bits, special_mask, special_inf, inf_bits, fill,
                           prefetch_from, chunk * planes // chunks,
                           (chunk + 1) * planes // chunks)  # fmt: skip


@kernel()
def global_max_nchw_serial(x, bits, y, y_bits, special_mask, special_inf, inf_bits, fill,
                           prefetch_from, threads):  # fmt: skip
    """global_max_nchw on the calling thread, for small inputs."""
    _global_max_planes(x, bits, y, y_bits, special_mask, special_inf, inf_bits, fill,
                       prefetch_from, 0, y.shape[0])  # fmt: skip


@kernel()
def _global_max_stretches(x, partial, positions, channels, stretches, inf_bits, fill,
                          prefetching, first, last):  # fmt: skip
    """Tasks first..last-1: task n*stretches + s folds stretch s of the positions of image n
    (x (N * P * C,) flat) into partial[task*C:(task+1)*C]; with ``prefetching``, each
    position first asks for the lines GLOBAL_PREFETCH_BYTES ahead (see _prefetch)."""
    line_items = max(1, CACHE_LINE // x.itemsize)
    ahead = GLOBAL_PREFETCH_BYTES // x.itemsize
    for task in range(first, last):
        n = task // stretches
        lo = (task - n * stretches) * positions // stretches
        hi = (task - n * stretches + 1) * positions // stretches
        acc = task * channels
        for c in range(channels):
            partial[acc + c] = x[(n * positions + lo) * channels + c] if hi > lo else fill
        for p in range(lo + 1, hi):
            at = (n * positions + p) * channels
            if prefetching:
                for line in range(at + ahead, at + ahead + channels, line_items):
                    prefetch(x, line)
            for c in range(channels):
                value = x[_u(at + c)]
                best = partial[_u(acc + c)]
                partial[_u(acc + c)] = value if replaces(value, best, inf_bits) else best


@kernel(inline="always")
def _channels_last_prefetching(x, prefetch_from):
    """Whether channels-last GlobalMaxPool prefetches: float32 and the 16-bit floats (their
    storage is 4 and 2 bytes), from prefetch_from bytes on. On the Intel Xeon with 480 MiB
    of L3 (2026-12-02), against the same loop without: float32 0.54 of the time on
    32x112x112x64, 0.73-0.74 on 64x28x28x512 and 256x7x7x2048; float16 0.91-0.99; but
    float64 0.89 on the first and 1.09-1.45x on 28x28x512 images, and uint8 1.35x on the
    first (their loops keep up with memory on their own)."""
    return (x.itemsize == 4 or x.itemsize == 2) and x.shape[0] * x.itemsize >= prefetch_from


@kernel()
def _stretches(x, y, channels, tasks):
    """(batch, positions, stretches, scratch for the stretches' maxima) of a channels-last
    GlobalMaxPool split into at least ``tasks`` tasks, as few stretches per image as that
    takes. (Each stretch but the first costs a fold of C maxima: with 8 stretches an image,
    8x7x7x2048 float32 took twice the time of one, Intel Xeon, 2026-12-02.)"""
    batch = y.shape[0] // channels if channels > 0 else 0
    positions = x.shape[0] // (batch * channels) if batch * channels > 0 else 0
    stretches = max(1, min(positions, -(-tasks // max(batch, 1))))
    return batch, positions, stretches, np.empty(batch * stretches * channels, dtype=x.dtype)


@kernel()
def _fold_stretches(partial, y, channels, stretches, inf_bits):
    """y[n*C + c] = the first maximum over the stretches of image n, in order. (Stretch by
    stretch, so that the loop over the channels vectorises: with the stretches innermost, a
    scalar loop, this took 0.55 of the time on 8x7x7x2048 float32.)"""
    for n in range(y.shape[0] // channels if channels > 0 else 0):
        ya, pa = n * channels, n * stretches * channels
        for c in range(channels):
            y[_u(ya + c)] = partial[_u(pa + c)]
        for s in range(1, stretches):
            sa = pa + s * channels
            for c in range(channels):
                value = partial[_u(sa + c)]
                best = y[_u(ya + c)]
                y[_u(ya + c)] = value if replaces(value, best, inf_bits) else best


@kernel(parallel=True)
def global_max_nhwc(x, y, channels, inf_bits, fill, prefetch_from, threads):
    """GlobalMaxPool, channels last: x (N * P * C,) flat -> y (N * C,). Each task folds a
    stretch of positions; the stretches are then folded in order (earlier stretches win
    ties, as in one sequential scan)."""
    batch, positions, stretches, partial = _stretches(x, y, channels, 4 * threads)
    prefetching = _channels_last_prefetching(x, prefetch_from)
    tasks = batch * stretches
    chunks = min(tasks, threads)  # (one chunk per thread: see max_pool_planar)
    for chunk in prange(chunks):
        _global_max_stretches(
            x,
            partial,
            positions,
            channels,
            stretches,
            inf_bits,
            fill,
            prefetching,
            chunk * tasks // chunks,
            (chunk + 1) * tasks // chunks,
        )
    _fold_stretches(partial, y, channels, stretches, inf_bits)


@kernel()
def global_max_nhwc_serial(x, y, channels, inf_bits, fill, prefetch_from, threads):
    """global_max_nhwc on the calling thread, for small inputs."""
    batch, positions, _, partial = _stretches(x, y, channels, 1)
    prefetching = _channels_last_prefetching(x, prefetch_from)
    _global_max_stretches(x, partial, positions, channels, 1, inf_bits, fill, prefetching, 0,
                          batch)  # fmt: skip
    _fold_stretches(partial, y, channels, 1, inf_bits)
