"""Input dtypes: which are accepted, and how each is handed to the kernels."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from fastpool._ordering import BFLOAT16_INF_BITS, FLOAT16_INF_BITS

MAX_POOL_DTYPES = "float16, float32, float64, bfloat16, int8, uint8"
LP_POOL_DTYPES = "float16, float32, float64, bfloat16"


class Storage(NamedTuple):
    """How a dtype is stored for the kernels."""

    kernel_dtype: np.dtype  # the dtype the kernels see (uint16 for 16-bit floats)
    inf_bits: int  # magnitude bits of +inf for 16-bit floats, else 0
    fill: object  # the dtype's lowest value, in kernel_dtype: output of a window with no tap
    is_float: bool
    # For the planar kernel's check for NaN and -0.0: the floats seen as signed integers of
    # their width (bits & special_mask > special_inf: NaN; bits == ~special_mask: -0.0),
    # the two numbers of that integer type. Integers have neither: special_mask = 0.
    bits_dtype: np.dtype
    special_mask: np.integer
    special_inf: np.integer


def is_bfloat16(dtype: np.dtype) -> bool:
    # ml_dtypes' bfloat16, recognised without importing ml_dtypes.
    return dtype.name == "bfloat16" and dtype.itemsize == 2


def _bits(int_type, inf_bits: int) -> tuple:
    """(bits_dtype, special_mask, special_inf) of a float format of that width."""
    return np.dtype(int_type), int_type(np.iinfo(int_type).max), int_type(inf_bits)


@functools.cache
def _storage(dtype: np.dtype) -> Storage | None:
    if dtype == np.dtype(np.float32):
        return Storage(dtype, 0, dtype.type(-np.inf), True, *_bits(np.int32, 0x7F80_0000))
    if dtype == np.dtype(np.float64):
        return Storage(dtype, 0, dtype.type(-np.inf), True, *_bits(np.int64, 0x7FF0_0000_0000_0000))
    if dtype in (np.dtype(np.int8), np.dtype(np.uint8)):
        lowest = dtype.type(np.iinfo(dtype).min)
        return Storage(dtype, 0, lowest, False, dtype, dtype.type(0), dtype.type(0))
    if dtype == np.dtype(np.float16):
        fill = np.uint16(0xFC00)
        return Storage(np.dtype(np.uint16), FLOAT16_INF_BITS, fill, True,
                       *_bits(np.int16, FLOAT16_INF_BITS))  # fmt: skip
    if is_bfloat16(dtype):
        fill = np.uint16(0xFF80)
        return Storage(np.dtype(np.uint16), BFLOAT16_INF_BITS, fill, True,
                       *_bits(np.int16, BFLOAT16_INF_BITS))  # fmt: skip
    return None


def prepare(x, op: str, floats_only: bool = False) -> tuple[np.ndarray, np.ndarray, Storage]:
    """Return (array, kernel view, storage) for an input, or raise TypeError.

    ``array`` is a native-byte-order C-contiguous array with the input's values (the input
    itself when it already is one, never modified); the view is what the kernels read.
    """
    array = np.asarray(x)
    dtype = array.dtype
    if not dtype.isnative and dtype.kind in "fiu":
        dtype = dtype.newbyteorder("=")
    storage = _storage(dtype)
    if storage is None or (floats_only and not storage.is_float):
        accepted = LP_POOL_DTYPES if floats_only else MAX_POOL_DTYPES
        raise TypeError(f"{op} does not support dtype {array.dtype}; supported: {accepted}")
    # A copy only when the kernels cannot read the input as it is.
    array = np.asarray(array, dtype=dtype, order="C")
    view = for_kernels(array)
    view = view.view(storage.kernel_dtype) if storage.kernel_dtype != dtype else view
    return array, view, storage


class _WriteableAlias:
    """Describes a read-only array's bytes as writeable (and keeps the array alive)."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.__array_interface__ = {
            "data": (array.__array_interface__["data"][0], False),
            "shape": (array.nbytes,),
            "typestr": "|u1",
            "version": 3,
        }


def for_kernels(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array as the kernels take it: a read-only one is seen through a
    writeable alias of its memory. numba compiles a separate copy of every kernel for
    read-only arrays (minutes of compilation, for the same loops), and the kernels never
    write their input."""
    if array.flags.writeable or array.size == 0:
        return array
    return np.asarray(_WriteableAlias(array)).view(array.dtype).reshape(array.shape)


@functools.cache
def float32_table(dtype: np.dtype) -> np.ndarray:
    """The float32 value of every 16-bit pattern of a 16-bit float dtype."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    if dtype == np.dtype(np.float16):
        table = bits.astype(np.uint16).view(np.float16).astype(np.float32)
    else:  # bfloat16: the high half of a float32
        table = (bits << 16).view(np.float32)
    table.flags.writeable = False
    return table


EMPTY_TABLE = np.zeros(1, dtype=np.float32)
