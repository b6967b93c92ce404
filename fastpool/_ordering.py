"""How the kernels compare and decode one element, per storage type.

Kernels see float32, float64, int8 and uint8 arrays as they are. float16 and bfloat16 arrive
as their uint16 bit patterns (numba has no 16-bit float arithmetic on the CPU). Both formats
put the sign in bit 15 and order the magnitude bits like an integer, so
``key = +magnitude`` or ``-magnitude`` is an exact, order-preserving integer key in which
-0.0 and +0.0 tie. A bit pattern is NaN when its magnitude exceeds that of infinity
(``inf_bits``: 0x7C00 for float16, 0x7F80 for bfloat16); NaN gets the key 0x8000, above
everything, so a plain "strictly greater" on keys already keeps the first NaN.

The helpers are numba overloads so that one kernel body serves every storage type; for the
native types they reduce to the plain value and ``v != v``.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.extending import overload, register_jitable

FLOAT16_INF_BITS = 0x7C00
BFLOAT16_INF_BITS = 0x7F80


def _is_bits16(value_type) -> bool:
    return isinstance(value_type, types.Integer) and value_type.bitwidth == 16


def order_key(value, inf_bits):
    """Exact ordering key of an element (Python stub; the kernels use the overload)."""
    raise NotImplementedError


def is_nan(value, inf_bits):
    """Whether an element is NaN (Python stub; the kernels use the overload)."""
    raise NotImplementedError


def may_be_nan(value, inf_bits):
    """Whether :func:`greater` can be wrong for this value (Python stub)."""
    raise NotImplementedError


def to_sortable(value):
    """An element as a value whose plain ``>`` orders like the numbers, for data without NaN
    and -0.0 (Python stub; the kernels use the overload)."""
    raise NotImplementedError


def from_sortable(value):
    """The inverse of :func:`to_sortable` (Python stub)."""
    raise NotImplementedError


def same_type(value, like):
    """``value`` cast to the type of ``like`` (Python stub; the kernels use the overload).
    numba widens small integers to 64 bits in arithmetic; casting back keeps vectors wide."""
    raise NotImplementedError


def to_float(value, lut):
    """An element as a float (Python stub; the kernels use the overload)."""
    raise NotImplementedError


def as_unsigned(value):
    """An integer's bits as the unsigned integer of its width (Python stub; the kernels
    use the overload). For a float's bits read as a signed integer, the unsigned order puts
    every negative float above every positive one, and the negative NaNs above -inf."""
    raise NotImplementedError


@overload(order_key, inline="always")
def _order_key(value, inf_bits):
    if _is_bits16(value):

        def key_bits16(value, inf_bits):
            # +magnitude, or -magnitude when the sign bit is set; every NaN above +inf
            # (branch-free, so that loops over it vectorise)
            magnitude = np.int32(value & 0x7FFF)
            signed = magnitude * (np.int32(1) - np.int32(2) * np.int32(value >> 15))
            nan = np.int32(magnitude > inf_bits)
            return signed + nan * (np.int32(0x8000) - signed)

        return key_bits16
    return lambda value, inf_bits: value


@overload(is_nan, inline="always")
def _is_nan(value, inf_bits):
    if _is_bits16(value):
        return lambda value, inf_bits: (value & 0x7FFF) > inf_bits
    if isinstance(value, types.Integer):
        return lambda value, inf_bits: False
    return lambda value, inf_bits: value != value


@overload(may_be_nan, inline="always")
def _may_be_nan(value, inf_bits):
    if isinstance(value, types.Float):
        return lambda value, inf_bits: value != value
    # integers have no NaN, and the 16-bit key already orders NaN above everything
    return lambda value, inf_bits: False


@overload(to_sortable, inline="always")
def _to_sortable(value):
    if _is_bits16(value):
        # the classic float-sorting trick: set the sign bit of a positive number, flip every
        # bit of a negative one; unsigned order is then numeric order (-0.0 below +0.0)
        # (cast back to 16 bits: numba computes it in 64 bits, which made every vector loop
        # over 16-bit floats 4 lanes wide instead of 16, and them 1.1-1.9x slower)
        bits = value
        return lambda value: bits(value ^ (0x8000 | (0x7FFF * (value >> 15))))
    return lambda value: value


@overload(from_sortable, inline="always")
def _from_sortable(value):
    if _is_bits16(value):
        bits = value
        return lambda value: bits(value ^ (0x8000 | (0x7FFF * (1 - (value >> 15)))))
    return lambda value: value


def wide_items(values):
    """Whether an array's items are 4 or 8 bytes wide (Python stub; the kernels use the
    overload, a constant of each compiled kernel, so that the code for the other widths is
    not compiled into it)."""
    return values.itemsize >= 4


@overload(wide_items, inline="always")
def _wide_items(values):
    wide = values.dtype.bitwidth >= 32
    return lambda values: wide


def index_words(indices, values):
    """The int64 ``indices`` as the array the kernels store them through, for pooling
    ``values``: pairs of uint32 where the items are narrower than 8 bytes, else int64
    (Python stub; the kernels use the overload, a view either way). LLVM sizes a loop's
    vectors by its widest type, and prefers 256 bits here: a loop storing int64 Indices ran
    4 lanes a vector, one storing pairs of uint32 runs 8, as its float32 values do."""
    return indices.view(np.int64 if values.itemsize == 8 else np.uint32)


@overload(index_words, inline="always")
def _index_words(indices, values):
    if values.dtype.bitwidth == 64:
        return lambda indices, values: indices.view(np.int64)
    return lambda indices, values: indices.view(np.uint32)


@overload(same_type, inline="always")
def _same_type(value, like):
    target = like  # a numba type, callable as a cast in compiled code
    return lambda value, like: target(value)


@overload(as_unsigned, inline="always")
def _as_unsigned(value):
    # (same width: a cast that costs no instruction, and keeps vector loops as wide)
    target = types.Integer.from_bitwidth(value.bitwidth, signed=False)
    return lambda value: target(value)


@overload(to_float, inline="always")
def _to_float(value, lut):
    if _is_bits16(value):
        # lut: the 65536 float32 values of the 16-bit format, made once per format.
        return lambda value, lut: np.float64(lut[value])
    return lambda value, lut: np.float64(value)


@register_jitable
def replaces(value, best, inf_bits):
    """Whether ``value``, met after ``best`` in scan order, becomes the window's maximum.

    A NaN best is final (the first NaN wins); a NaN value beats any number; otherwise only a
    strictly greater value replaces, so the first of equal maxima is kept. Written without
    branches so that loops over it vectorise.
    """
    best_is_number = not is_nan(best, inf_bits)
    greater = order_key(value, inf_bits) > order_key(best, inf_bits)
    return best_is_number & (is_nan(value, inf_bits) | greater)


@register_jitable
def greater(value, best, inf_bits):
    """The fast test: equal to :func:`replaces` unless ``may_be_nan(value)``.

    Kernels run on it while collecting ``may_be_nan`` over the values they read, and redo
    the work with :func:`replaces` in the rare case that a float NaN was among them.
    """
    return order_key(value, inf_bits) > order_key(best, inf_bits)
