"""Explicit vectors of 16 items for the kernels' short loops over a row: down the columns
of small planes, of 3x3/2 rows (_rows_3x3) and of 2x2/2 rows, along the 3x3/2 rows, and
both ways at once on the short rows of 2x2/2, 3x3/2 and 3x3/1 windows.

On small planes the pass down the columns pools rows of 16 to 48 columns (_pitch_columns).
LLVM vectorised its loop over a row only behind a run-time check that the row it writes
does not overlap the rows it reads (numba tells it nothing about aliasing), with a main loop
of 64 items a step that such rows never enter and an epilogue of 8 a step: that set-up, on
every row, cost more than the work (3.4-4.7 ns a row of 16 float32 inside the kernel; the
same loads and stores as below, alone, 1.5-2 ns). numba compiles with LLVM's straight-line
vectoriser off, so a loop of a constant 16 is unrolled to scalars instead. These intrinsics
load each row's 16 items as one vector and store their maximum as one (AMD Zen 5, serial
kernel, 3x3/2 on the workload's seven layers of 12x12 to 27x27 planes, float32: about 0.92
of the time over the seven and 0.78-0.82 on 12x12 and 14x14, each version in its own
process against onnxruntime; the next session 0.89-0.98 on 12x12 to 14x14, and through the
public call 0.95-0.98 there and none on 25x25 to 28x28; docs/measurements.md).

_rows_3x3 takes the same loads down the columns and a vector of 16 windows of 3 taps at
stride 2 along the row (max_of_3_taps_stride_2): 0.77-0.91 of its time before on the 3x3/2
layers of 55x55 to 112x112 planes (float32, batch 1, one thread, per process;
docs/measurements.md). Its pass down the columns is one loop a row inside the intrinsic
(max_of_3_rows_along), which also checks the first two rows of each window for NaN and
-0.0 as it loads them, in two vectors of lanes kept in registers: the check read them
again after the pooling, 14-25% of the kernel's time on those layers. 2x2 windows at
stride 2 on rows of at least 16 (VGG's planes of 56x56 and larger) take the same loop over
two rows (max_of_2_rows_along), both checked: 0.78-0.94 of the time before on those layers
(float32, batch 1, one thread, per process).

On groups of small planes (rows of at most 32 columns, no pad before them), 2x2/2 and
3x3/2 values take both passes at once, an output row at a time (max_of_3x3_stride_2,
max_of_2x2_stride_2): each window row loaded as two vectors of 16, the column maxima split
into even and odd columns by two shuffles (and the evens moved one lane for a third tap),
16 windows stored. With the pass down the columns into a buffer and the flat pass along
the rows, the workload's 3x3/2 layers of 12x12 to 28x28 planes took 1.2-2.4x the time they
take this way (float32, batch 1 and 8, one thread, per process; docs/measurements.md).
3x3/1 windows on rows of at most 32 columns with their pad before take the same kind of
step (max_of_3x3_stride_1, and its one-vector form for rows of at most 16): each row
loaded from the pad before it, so that window j reads lanes j to j + 2 of the column
maxima, found by shifting them one and two lanes.

Values are compared in their sortable form (see _ordering.to_sortable): 16-bit floats
(uint16 bits) are made sortable as they are loaded, and the maxima are stored sortable, as
the loops they replace did. A plain ``>`` keeps the first of two operands unless the second
is greater, as ``b if b > a else a`` does (a NaN never wins: the kernels check for NaN
apart).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 16
# the items argmax_of_3x3_stride_2 and argmax_of_2x2_stride_2 read from each row's start
ARGMAX_READ = 2 * LANES + 2


def _vectors_at(context, builder, array_type, array, offsets):
    """Pointers to the vectors of 16 items of ``array`` at each offset (no alignment)."""
    data = context.make_array(array_type)(context, builder, array).data
    vector = ir.VectorType(context.get_data_type(array_type.dtype), LANES)
    return [builder.bitcast(builder.gep(data, [at]), vector.as_pointer()) for at in offsets]


def _sortable_flip(builder, dtype, vector, back=False):
    """to_sortable's float-sorting trick on a vector of 16-bit floats' bits: flip the sign
    bit of a positive number, every bit of a negative one; ``back`` (from_sortable): the
    top bit of a key that has it set (a positive number), every bit of any other. Other
    items are returned as they are."""
    if not (isinstance(dtype, types.Integer) and dtype.bitwidth == 16):
        return vector
    top_set = builder.ashr(vector, ir.Constant(vector.type, 15))  # (all ones or zeros)
    flip_all = builder.not_(top_set) if back else top_set
    flip = builder.or_(builder.and_(flip_all, ir.Constant(vector.type, 0x7FFF)),
                       ir.Constant(vector.type, 0x8000))  # fmt: skip
    return builder.xor(vector, flip)


def _greater(builder, dtype, a, b):
    if isinstance(dtype, types.Float):
        return builder.fcmp_ordered(">", a, b)
    # (to_sortable keeps 16-bit floats as uint16: an unsigned order)
    if dtype.signed:
        return builder.icmp_signed(">", a, b)
    return builder.icmp_unsigned(">", a, b)


def _largest(builder, dtype, vectors):
    """The lane-wise largest of the vectors, the first of equal ones."""
    best = vectors[0]
    for vector in vectors[1:]:
        best = builder.select(_greater(builder, dtype, vector, best), vector, best)
    return best


def _splat(builder, vector_type, value):
    """A vector of 16 lanes all holding value."""
    lane = ir.VectorType(ir.IntType(32), LANES)
    one = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value,
                                 ir.Constant(ir.IntType(32), 0))  # fmt: skip
    return builder.shuffle_vector(one, one, ir.Constant(lane, [0] * LANES))


def _store_largest(context, builder, x_type, x, offsets, columns_type, columns, at):
    """columns[at:][:16] = the largest of x's 16 items at each offset (the first of equal
    ones), sortable; returns the vectors as loaded, before the 16-bit floats' flip."""
    raw = [builder.load(pointer, align=1)
           for pointer in _vectors_at(context, builder, x_type, x, offsets)]  # fmt: skip
    rows = [_sortable_flip(builder, x_type.dtype, row) for row in raw]
    best = _largest(builder, x_type.dtype, rows)
    (target,) = _vectors_at(context, builder, columns_type, columns, [at])
    builder.store(best, target, align=1)
    return raw


def _rows_max(context, builder, signature, args):
    _store_largest(context, builder, signature.args[0], args[0], args[1:-2],
                   signature.args[-2], args[-2], args[-1])  # fmt: skip
    return context.get_dummy_value()


def _lane_indices(indices):
    return ir.Constant(ir.VectorType(ir.IntType(32), LANES), list(indices))


def _taps_3_stride_2(context, builder, signature, args):
    columns_type, y_type = signature.args[0], signature.args[2]
    columns, at, y, y_at = args
    # columns at..at+15, at+16..at+31 and at+17..at+32: window i reads 2i, 2i + 1, 2i + 2
    offsets = [at, builder.add(at, ir.Constant(at.type, LANES)),
               builder.add(at, ir.Constant(at.type, LANES + 1))]  # fmt: skip
    first, second, third = (builder.load(pointer, align=1)
                            for pointer in _vectors_at(context, builder, columns_type, columns,
                                                       offsets))  # fmt: skip
    evens = builder.shuffle_vector(first, second, _lane_indices(range(0, 2 * LANES, 2)))
    odds = builder.shuffle_vector(first, second, _lane_indices(range(1, 2 * LANES, 2)))
    # the evens moved down one lane, and column at + 32 (third's last lane) after them
    shifted = _lane_indices([*range(1, LANES), 2 * LANES - 1])
    next_evens = builder.shuffle_vector(evens, third, shifted)
    dtype = columns_type.dtype
    best = builder.select(_greater(builder, dtype, odds, evens), odds, evens)
    best = builder.select(_greater(builder, dtype, next_evens, best), next_evens, best)
    (target,) = _vectors_at(context, builder, y_type, y, [y_at])
    builder.store(_sortable_flip(builder, dtype, best, back=True), target, align=1)
    return context.get_dummy_value()


@intrinsic
def max_of_3_taps_stride_2(typingctx, columns, at, y, y_at):
    """y[y_at + i] = the largest of columns[at + 2 * i + j], j < 3, for i < 16, from the
    sortable form of columns (as _vectors keeps them) to y's values: 16 windows of 3 taps
    at stride 2 along a row of column maxima, reading columns at..at + 32. No bounds are
    checked: the caller's offsets lie inside. (With LLVM's own loops in both passes of _rows_3x3
    instead of these vectors, the calls on 55x55 to 112x112 planes took 1.1-1.3x the time.)"""
    if columns.dtype != y.dtype:
        return None
    return types.void(columns, at, y, y_at), _taps_3_stride_2


@intrinsic
def max_of_2_rows(typingctx, x, first, second, columns, at):
    """columns[at + i] = the larger of x[first + i] and x[second + i] (the first of equal
    ones), sortable, for i < 16. No bounds are checked: the caller's offsets lie inside."""
    return types.void(x, first, second, columns, at), _rows_max


@intrinsic
def max_of_3_rows(typingctx, x, first, second, third, columns, at):
    """columns[at + i] = the largest of x[first + i], x[second + i], x[third + i], as
    max_of_2_rows."""
    return types.void(x, first, second, third, columns, at), _rows_max


def _fold_specials(builder, raw, largest, smallest):
    """largest and smallest (vectors of signed integers) updated with the raw bits of 16
    floats: the largest magnitude and the smallest bit pattern of each lane, as
    _max_kernels._held keeps them one value at a time."""
    vector = largest.type
    bits = builder.bitcast(raw, vector)
    width = vector.element.width
    magnitude = builder.and_(bits, ir.Constant(vector, (1 << (width - 1)) - 1))
    largest = builder.select(builder.icmp_signed(">", magnitude, largest), magnitude, largest)
    smallest = builder.select(builder.icmp_signed("<", bits, smallest), bits, smallest)
    return largest, smallest


def _rows_along(n_rows, n_checked):
    """The code of a pass down n_rows rows whose first n_checked are checked as loaded."""

    def codegen(context, builder, signature, args):
        x_type, _, _, _, columns_type, _, held_type = signature.args
        x, first, step, count, columns, at, held = (
            context.cast(builder, value, type_, types.intp) if isinstance(type_, types.Integer)
            else value for value, type_ in zip(args, signature.args))  # fmt: skip
        dtype = x_type.dtype
        sixteen = ir.Constant(first.type, LANES)

        def columns_at(w, check):
            """columns[at + w:][:16] from the rows at first, first + step, ... at column w;
            with check, the raw bits of the first n_checked folded into the held lanes."""
            offsets = [builder.add(builder.add(first, builder.mul(step, ir.Constant(
                step.type, k))), w) for k in range(n_rows)]  # fmt: skip
            raw = _store_largest(context, builder, x_type, x, offsets, columns_type, columns,
                                 builder.add(at, w))  # fmt: skip
            if check:
                largest, smallest = builder.load(held_lanes[0]), builder.load(held_lanes[1])
                for loaded in raw[:n_checked]:
                    largest, smallest = _fold_specials(builder, loaded, largest, smallest)
                builder.store(largest, held_lanes[0])
                builder.store(smallest, held_lanes[1])

        def row(check):
            # the columns 16 at a time; the last 16, where count holds no multiple of 16,
            # overlapping the ones before them
            last = builder.sub(count, sixteen)
            steps = builder.sdiv(builder.add(last, ir.Constant(last.type, LANES - 1)), sixteen)
            with cgutils.for_range(builder, steps) as loop:
                columns_at(builder.mul(loop.index, sixteen), check)
            columns_at(last, check)

        held_lanes = []
        if isinstance(dtype, types.Integer) and dtype.bitwidth == 8:
            row(False)  # (integers hold no NaN or -0.0)
            return context.get_dummy_value()
        # the held lanes in registers while the row is pooled (allocas that LLVM promotes)
        stored = _vectors_at(context, builder, held_type, held,
                             [ir.Constant(first.type, 0), sixteen])  # fmt: skip
        held_array = context.make_array(held_type)(context, builder, held)
        n_held = builder.extract_value(held_array.shape, 0)
        with builder.if_else(builder.icmp_signed(">", n_held, ir.Constant(n_held.type, 0))) as (
                checked, unchecked):  # fmt: skip
            with checked:
                vector = stored[0].type.pointee
                held_lanes.extend(cgutils.alloca_once(builder, vector) for _ in range(2))
                for lanes, pointer in zip(held_lanes, stored):
                    builder.store(builder.load(pointer, align=1), lanes)
                row(True)
                for lanes, pointer in zip(held_lanes, stored):
                    builder.store(builder.load(lanes), pointer, align=1)
            with unchecked:
                row(False)
        return context.get_dummy_value()

    return codegen


def _rows_along_signature(x, first, step, count, columns, at, held):
    if held.dtype.bitwidth != x.dtype.bitwidth:
        return None
    return types.void(x, first, step, count, columns, at, held)


@intrinsic
def max_of_2_rows_along(typingctx, x, first, step, count, columns, at, held):
    """max_of_2_rows over ``count`` (at least 16) columns: columns[at + w] = the larger of
    x[first + w] and x[first + step + w] for w < count, sortable, 16 columns at a time, the
    last 16 overlapping the ones before them where count holds no multiple of 16. Where
    ``held`` (signed integers of the floats' width) has items, the raw bits of both rows
    are folded into its two vectors of 16 lanes as they are loaded: held[i] the largest
    magnitude (bits & the type's maximum), held[16 + i] the smallest bit pattern seen in
    lane i, so that the check for NaN and -0.0 need not read those rows again. No bounds
    are checked: the caller's offsets lie inside."""
    signature = _rows_along_signature(x, first, step, count, columns, at, held)
    return signature, _rows_along(2, 2)


@intrinsic
def max_of_3_rows_along(typingctx, x, first, step, count, columns, at, held):
    """max_of_2_rows_along with three rows: columns[at + w] = the largest of x[first + w],
    x[first + step + w] and x[first + 2 * step + w]; only the first two rows are folded
    into ``held`` (at stride 2 down the columns they are every row of the windows'; the
    third is the next window's first)."""
    signature = _rows_along_signature(x, first, step, count, columns, at, held)
    return signature, _rows_along(3, 2)


def _sortable_rows(context, builder, x_type, x, rows, n_vectors):
    """The n_vectors vectors of 16 items from each offset in ``rows`` (lane c of vector k:
    x[row + 16k + c]), sortable, row by row."""
    sixteen = ir.Constant(rows[0].type, LANES)
    offsets = [at for row in rows for at in (row, builder.add(row, sixteen))[:n_vectors]]
    return [_sortable_flip(builder, x_type.dtype, builder.load(pointer, align=1))
            for pointer in _vectors_at(context, builder, x_type, x, offsets)]  # fmt: skip


def _short_row_columns(context, builder, x_type, x, rows, n_vectors, lo, hi, fill):
    """The column maxima of the rows starting at each offset in ``rows``: n_vectors vectors
    of 16 lanes each (lane c: x[row + c]), the lanes outside [lo, hi) set to ``fill`` (lo
    None: from lane 0), so that the columns of a pad, and those past the row, are pads."""
    dtype = x_type.dtype
    loaded = _sortable_rows(context, builder, x_type, x, rows, n_vectors)
    lane = ir.VectorType(ir.IntType(32), LANES)
    his, fills = _splat(builder, lane, hi), _splat(builder, loaded[0].type, fill)
    los = None if lo is None else _splat(builder, lane, lo)
    columns = []
    for k in range(n_vectors):
        best = _largest(builder, dtype, loaded[k::n_vectors])
        lanes = _lane_indices(range(k * LANES, (k + 1) * LANES))
        inside = builder.icmp_signed("<", lanes, his)
        if los is not None:
            inside = builder.and_(inside, builder.icmp_signed(">=", lanes, los))
        columns.append(builder.select(inside, best, fills))
    return columns


def _square_row_code(n):
    """The code of an output row of n x n windows (2 or 3) at stride 2 on a row of at most
    32 columns, from its n input rows."""

    def codegen(context, builder, signature, args):
        x_type, y_type = signature.args[0], signature.args[n + 2]
        x, y = args[0], args[n + 2]
        rows, width, y_at = (
            [context.cast(builder, args[1 + k], signature.args[1 + k], types.intp)
             for k in range(n)],
            context.cast(builder, args[n + 1], signature.args[n + 1], types.int32),
            context.cast(builder, args[n + 3], signature.args[n + 3], types.intp),
        )  # fmt: skip
        dtype = x_type.dtype
        # each column's maximum down the rows, columns 0-15 and 16-31; the columns at and
        # past the row's end (the next row's, or past it) are the fill
        low, high = _short_row_columns(context, builder, x_type, x, rows, 2, None, width,
                                       args[n + 4])  # fmt: skip
        # window i reads columns 2i, 2i + 1 (and 2i + 2): split into even and odd columns
        taps = [
            builder.shuffle_vector(low, high, _lane_indices(range(0, 2 * LANES, 2))),
            builder.shuffle_vector(low, high, _lane_indices(range(1, 2 * LANES, 2))),
        ]
        if n == 3:  # (window 15 would read column 32: the callers have at most 15 windows)
            taps.append(builder.shuffle_vector(
                low, high, _lane_indices([*range(2, 2 * LANES, 2), 2 * LANES - 1])))  # fmt: skip
        best = _largest(builder, dtype, taps)
        (target,) = _vectors_at(context, builder, y_type, y, [y_at])
        builder.store(_sortable_flip(builder, dtype, best, back=True), target, align=1)
        return context.get_dummy_value()

    return codegen


def _stride_1_row_code(n_vectors):
    """The code of an output row of 3x3 windows at stride 1 on a row of at most 16 x
    n_vectors columns, pad included, from its 3 input rows."""

    def codegen(context, builder, signature, args):
        x_type, y_type = signature.args[0], signature.args[6]
        x, y = args[0], args[6]
        rows, pad, width, y_at = (
            [context.cast(builder, args[1 + k], signature.args[1 + k], types.intp)
             for k in range(3)],
            context.cast(builder, args[4], signature.args[4], types.int32),
            context.cast(builder, args[5], signature.args[5], types.int32),
            context.cast(builder, args[7], signature.args[7], types.intp),
        )  # fmt: skip
        dtype = x_type.dtype
        # lane c holds column c - pad: window j reads lanes j, j + 1 and j + 2
        starts = [builder.sub(row, context.cast(builder, pad, types.int32, types.intp))
                  for row in rows]  # fmt: skip
        columns = _short_row_columns(context, builder, x_type, x, starts, n_vectors, pad,
                                     builder.add(width, pad), args[8])  # fmt: skip
        columns.append(_splat(builder, columns[0].type, args[8]))  # (the lanes past them)
        sixteen = ir.Constant(y_at.type, LANES)
        targets = _vectors_at(context, builder, y_type, y,
                              [y_at, builder.add(y_at, sixteen)][:n_vectors])  # fmt: skip
        for k, target in enumerate(targets):
            taps = [columns[k]] + [
                builder.shuffle_vector(columns[k], columns[k + 1],
                                       _lane_indices(range(shift, shift + LANES)))
                for shift in (1, 2)
            ]  # fmt: skip
            best = _largest(builder, dtype, taps)
            builder.store(_sortable_flip(builder, dtype, best, back=True), target, align=1)
        return context.get_dummy_value()

    return codegen


@intrinsic
def max_of_3x3_stride_2(typingctx, x, first, second, third, width, y, y_at, fill):
    """y[y_at + i] = the largest of x[r + 2 * i + j] for r in first, second and third and
    j < 3, for i < 16 (the first 15 meaningful): an output row of 3x3 windows at stride 2
    on rows of ``width`` <= 32 columns starting at x[first], x[second] and x[third], with
    no pad before them. Each row is loaded as two vectors of 16 (32 items from its start);
    columns at or past ``width`` count as ``fill`` (sortable), so a pad after the row is
    one. From x's values to y's, compared in their sortable form. No bounds are checked:
    the caller's offsets lie inside."""
    if x.dtype != y.dtype or fill != x.dtype:
        return None
    return types.void(x, first, second, third, width, y, y_at, fill), _square_row_code(3)


@intrinsic
def max_of_2x2_stride_2(typingctx, x, first, second, width, y, y_at, fill):
    """max_of_3x3_stride_2 for 2x2 windows: y[y_at + i] = the largest of x[r + 2 * i + j]
    for r in first and second and j < 2, for i < 16."""
    if x.dtype != y.dtype or fill != x.dtype:
        return None
    return types.void(x, first, second, width, y, y_at, fill), _square_row_code(2)


def _stride_1_signature(x, first, second, third, pad, width, y, y_at, fill):
    if x.dtype != y.dtype or fill != x.dtype:
        return None
    return types.void(x, first, second, third, pad, width, y, y_at, fill)


@intrinsic
def max_of_3x3_stride_1(typingctx, x, first, second, third, pad, width, y, y_at, fill):
    """y[y_at + j] = the largest of x[r + j - pad + i] for r in first, second and third and
    i < 3, for j < 32: an output row of 3x3 windows at stride 1 on rows of ``width``
    columns starting at x[first], x[second] and x[third], with ``pad`` columns of pad
    before them, width + pad <= 32. Each row is loaded as two vectors of 16 from ``pad``
    items before its start; columns before the row or at or past ``width`` count as
    ``fill`` (sortable). From x's values to y's, compared in their sortable form. No
    bounds are checked: the caller's offsets lie inside."""
    signature = _stride_1_signature(x, first, second, third, pad, width, y, y_at, fill)
    return signature, _stride_1_row_code(2)


@intrinsic
def max_of_3x3_stride_1_narrow(typingctx, x, first, second, third, pad, width, y, y_at, fill):
    """max_of_3x3_stride_1 on rows of width + pad <= 16: each row loaded as one vector of
    16, and y[y_at + j] stored for j < 16."""
    signature = _stride_1_signature(x, first, second, third, pad, width, y, y_at, fill)
    return signature, _stride_1_row_code(1)


# Indices on the short rows at stride 2: each window's maximum with its position, the first
# maximum in row-major window order winning. Each row's taps are pooled along the row first (the
# leftmost of equal ones kept), then the rows down (the topmost kept): a plain ``>`` at
# each step, where the column maxima first would have to compare positions on ties. A
# lane's position is carried as an int32 offset from the window's first row and made an
# int64 position only when stored. The lanes hold the windows in _window_order's order
# until the store. The long rows (_max_kernels._long_rows) take the same vectors in runs
# along rows of any length.


def _short_row_lanes(context, builder, x_type, x, rows, width, fill, shift=0):
    """Each row's two vectors of 16 lanes from ``shift`` columns on (lane c:
    x[row + shift + c], sortable), the lanes of columns at and past ``width`` set to
    ``fill``: _short_row_columns row by row instead of their maxima."""
    start = [builder.add(row, ir.Constant(row.type, shift)) for row in rows]
    loaded = _sortable_rows(context, builder, x_type, x, start, 2)
    lane = ir.VectorType(ir.IntType(32), LANES)
    his, fills = _splat(builder, lane, width), _splat(builder, loaded[0].type, fill)
    masked = []
    for k, vector in enumerate(loaded):
        columns = range(shift + k % 2 * LANES, shift + (k % 2 + 1) * LANES)
        inside = builder.icmp_signed("<", _lane_indices(columns), his)
        masked.append(builder.select(inside, vector, fills))
    return [masked[2 * r : 2 * r + 2] for r in range(len(rows))]


def _window_order(dtype):
    """The lanes in which the argmax vectors hold an output row's 16 windows: window
    order[i] in lane i, where the even and the odd columns of a row come apart without
    crossing the 128-bit halves of AVX2's registers (shufps for 4-byte items, unpcklpd
    and unpckhpd for 8-byte ones; in order, the split took two more shuffles across the
    halves per vector of the row). An involution: it puts them back in order at the store.
    Other widths: in order."""
    if dtype.bitwidth == 32:
        group = (0, 1, 4, 5, 2, 3, 6, 7)
    elif dtype.bitwidth == 64:
        group = (0, 2, 1, 3)
    else:
        return list(range(LANES))
    return [start + g for start in range(0, LANES, len(group)) for g in group]


def _first_largest(builder, dtype, candidates):
    """(values, offsets): lane by lane the largest of the (values, int32 offsets) pairs and
    its offset, the first of equal ones."""
    best, best_at = candidates[0]
    for value, at in candidates[1:]:
        wins = _greater(builder, dtype, value, best)
        best = builder.select(wins, value, best)
        best_at = builder.select(wins, at, best_at)
    return best, best_at


def _row_distances(builder, positions):
    """Each row's position less the first row's, as a vector of 16 int32 lanes (the rows of
    a window lie a few rows apart)."""
    lane = ir.VectorType(ir.IntType(32), LANES)
    return [_splat(builder, lane, builder.trunc(builder.sub(at, positions[0]), ir.IntType(32)))
            for at in positions]  # fmt: skip


def _store_argmax(context, builder, y_type, y, i_type, indices, y_at, best, best_at, origin):
    """y[y_at:][:16] = best (sortable, made values again), indices[y_at:][:16] = origin +
    best_at (int32 offsets made int64 positions)."""
    (target,) = _vectors_at(context, builder, y_type, y, [y_at])
    builder.store(_sortable_flip(builder, y_type.dtype, best, back=True), target, align=1)
    wide = ir.VectorType(ir.IntType(64), LANES)
    positions = builder.add(builder.sext(best_at, wide), _splat(builder, wide, origin))
    (target,) = _vectors_at(context, builder, i_type, indices, [y_at])
    builder.store(positions, target, align=1)


def _argmax_args(context, builder, signature, args, n_rows):
    """The arguments of an argmax intrinsic (x, n_rows load offsets, n_rows positions,
    width, y, indices, y_at, fill), cast: load offsets and y_at to intp, positions to
    int64, width to int32."""
    types_ = signature.args
    rows = [context.cast(builder, args[1 + k], types_[1 + k], types.intp)
            for k in range(n_rows)]  # fmt: skip
    positions = [context.cast(builder, args[1 + n_rows + k], types_[1 + n_rows + k],
                              types.int64) for k in range(n_rows)]  # fmt: skip
    at = 1 + 2 * n_rows
    width = context.cast(builder, args[at], types_[at], types.int32)
    y_at = context.cast(builder, args[at + 3], types_[at + 3], types.intp)
    return rows, positions, width, args[at + 1], args[at + 2], y_at, args[at + 4]


def _square_row_argmax_code(n):
    """The code of an output row of n x n windows (2 or 3) at stride 2 on a row of at most
    32 columns, with Indices, from its n input rows."""

    def codegen(context, builder, signature, args):
        x_type, x = signature.args[0], args[0]
        y_type, i_type = signature.args[2 * n + 2], signature.args[2 * n + 3]
        rows, positions, width, y, indices, y_at, fill = _argmax_args(
            context, builder, signature, args, n
        )
        dtype = x_type.dtype
        distances = _row_distances(builder, positions)
        # window i reads columns 2i + j of each row, j < n, in lane order.index(i): the
        # evens and odds of the row, and for a third tap the evens of the row loaded two
        # columns on (a load is cheaper than moving the evens one lane across the halves)
        order = _window_order(dtype)
        evens = _lane_indices([2 * i for i in order])
        odds = _lane_indices([2 * i + 1 for i in order])
        offsets = [evens, odds, _lane_indices([2 * i + 2 for i in order])][:n]
        lanes = _short_row_lanes(context, builder, x_type, x, rows, width, fill)
        if n == 3:
            shifted = _short_row_lanes(context, builder, x_type, x, rows, width, fill, 2)
        candidates = []
        for r, (low, high) in enumerate(lanes):
            taps = [builder.shuffle_vector(low, high, evens),
                    builder.shuffle_vector(low, high, odds)]  # fmt: skip
            if n == 3:
                taps.append(builder.shuffle_vector(shifted[r][0], shifted[r][1], evens))
            best, best_at = _first_largest(builder, dtype, list(zip(taps, offsets)))
            candidates.append((best, best_at if r == 0 else builder.add(best_at, distances[r])))
        best, best_at = _first_largest(builder, dtype, candidates)
        in_order = _lane_indices(order)
        best = builder.shuffle_vector(best, best, in_order)
        best_at = builder.shuffle_vector(best_at, best_at, in_order)
        _store_argmax(context, builder, y_type, y, i_type, indices, y_at, best, best_at,
                      positions[0])  # fmt: skip
        return context.get_dummy_value()

    return codegen


def _argmax_signature(x, rows, positions, width, y, indices, y_at, fill):
    if x.dtype != y.dtype or fill != x.dtype or indices.dtype != types.int64:
        return None
    return types.void(x, *rows, *positions, width, y, indices, y_at, fill)


@intrinsic
def argmax_of_3x3_stride_2(typingctx, x, first, second, third, at_first, at_second, at_third,
                           width, y, indices, y_at, fill):  # fmt: skip
    """max_of_3x3_stride_2 with Indices: y[y_at + i] as there, and indices[y_at + i] = the
    position of that maximum, the first in row-major window order; ``at_first`` etc.: the
    positions of the rows loaded at x[first] etc. (themselves, or where a copy of the
    rows is loaded, the rows' own). Equal rows (a pad row given as the window's first
    row again) give the first one's positions. Each row is read as 34 items from its
    start (ARGMAX_READ; the last two only for window 15's third tap, past ``width``: the
    fill), all of which must lie inside x."""
    signature = _argmax_signature(x, (first, second, third), (at_first, at_second, at_third),
                                  width, y, indices, y_at, fill)  # fmt: skip
    return signature, _square_row_argmax_code(3)


@intrinsic
def argmax_of_2x2_stride_2(typingctx, x, first, second, at_first, at_second, width, y, indices,
                           y_at, fill):  # fmt: skip
    """argmax_of_3x3_stride_2 for 2x2 windows."""
    signature = _argmax_signature(x, (first, second), (at_first, at_second), width, y,
                                  indices, y_at, fill)  # fmt: skip
    return signature, _square_row_argmax_code(2)
