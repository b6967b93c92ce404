"""Attribute checking and output-shape arithmetic: the one place for both.

Everything here is pure Python. ``resolve_geometry`` turns an input shape and the ONNX
attributes into a :class:`Geometry` (output shape, resolved pads, per-axis tap ranges) and
is cached per attribute set, so a repeated call costs a dictionary look-up.
"""

from __future__ import annotations

import functools
import numbers
from typing import NamedTuple

import numpy as np

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
LAYOUTS = ("NCHW", "NHWC")


class KernelGeometry(NamedTuple):
    """The geometry as read-only int64 arrays, in the form the kernels take."""

    in_shape: np.ndarray  # (rank,)
    out_shape: np.ndarray  # (rank,)
    strides: np.ndarray  # (rank,)
    dilations: np.ndarray  # (rank,)
    pads_begin: np.ndarray  # (rank,)
    # Window o on axis i reads the taps j in [tap_lo[i, o], tap_hi[i, o]): the ones that land
    # inside the input, at coordinate o * strides[i] - pads_begin[i] + j * dilations[i].
    tap_lo: np.ndarray  # (rank, max(1, max(out_shape)))
    tap_hi: np.ndarray
    row_major: np.ndarray  # index strides of the spatial axes, storage_order=0
    column_major: np.ndarray  # the same for storage_order=1
    kernel_size: int  # number of taps in a whole window


class Geometry(NamedTuple):
    """Resolved pooling geometry over the spatial axes (tuples of Python ints)."""

    input_spatial: tuple
    kernel: tuple
    strides: tuple
    dilations: tuple
    pads_begin: tuple
    pads_end: tuple
    output_spatial: tuple
    arrays: KernelGeometry


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_layout(layout) -> str:
    if isinstance(layout, bytes):
        layout = layout.decode("ascii", "replace")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'NCHW' or 'NHWC', got {layout!r}")
    return layout


def check_flag(name: str, value) -> int:
    """ceil_mode / storage_order: 0 or 1 (bools allowed, as onnx.helper writes them)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if _is_int(value) and int(value) in (0, 1):
        return int(value)
    raise ValueError(f"{name} must be 0 or 1, got {value!r}")


def check_auto_pad(value) -> str:
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str) or value not in AUTO_PADS:
        raise ValueError(f"auto_pad must be one of {', '.join(AUTO_PADS)}, got {value!r}")
    return value


def int_tuple(name: str, value, minimum: int) -> tuple | None:
    """Check a list attribute: a sequence (list, tuple, 1-D array) of integers >= minimum."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ValueError(f"{name} must be a sequence of integers, got {value!r}")
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {value.shape}")
    items = tuple(value)
    what = "a positive integer" if minimum == 1 else "a non-negative integer"
    for i, item in enumerate(items):
        if not _is_int(item) or item < minimum:
            raise ValueError(f"{name}[{i}] must be {what}, got {item!r}")
    return tuple(int(item) for item in items)


def _check_length(name: str, items: tuple | None, length: int) -> tuple | None:
    if items is not None and len(items) != length:
        per_axis = "a begin and an end for each" if name == "pads" else "one for each"
        raise ValueError(
            f"{name} must have {length} values ({per_axis} spatial axis of the input), "
            f"got {len(items)}: {list(items)!r}"
        )
    return items


def check_rank(shape: tuple, layout: str, what: str = "X") -> None:
    if len(shape) < 3:
        axes = "(N, C, D1, ..., Dn)" if layout == "NCHW" else "(N, D1, ..., Dn, C)"
        raise ValueError(
            f"{what} must have at least 3 dimensions {axes} for layout {layout!r}, "
            f"got shape {tuple(shape)}"
        )


def split_shape(shape: tuple, layout: str) -> tuple[int, int, tuple]:
    """(batch, channels, spatial shape) of an input shape in the given layout."""
    if layout == "NCHW":
        return shape[0], shape[1], tuple(shape[2:])
    return shape[0], shape[-1], tuple(shape[1:-1])


def join_shape(batch: int, channels: int, spatial: tuple, layout: str) -> tuple:
    if layout == "NCHW":
        return (batch, channels, *spatial)
    return (batch, *spatial, channels)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _axis_output(size, kernel, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode):
    """Output length and resolved (pad_begin, pad_end) of one spatial axis (SEMANTICS.md s1)."""
    extent = (kernel - 1) * dilation + 1
    if auto_pad == "VALID":
        return max(0, (size - extent) // stride + 1), 0, 0
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = _ceil_div(size, stride)
        total = max(0, (out - 1) * stride + extent - size)
        small, large = total // 2, total - total // 2
        if auto_pad == "SAME_UPPER":
            return max(0, out), small, large
        return max(0, out), large, small
    span = size + pad_begin + pad_end - extent
    if ceil_mode:
        out = _ceil_div(span, stride) + 1
        # A window may not start in the right padding (ONNX >= 1.16).
        if out > 0 and (out - 1) * stride >= size + pad_begin:
            out -= 1
    else:
        out = span // stride + 1
    return max(0, out), pad_begin, pad_end


def _tap_ranges(size, kernel, stride, dilation, pad_begin, out):
    """Per-window range [lo, hi) of kernel taps j that land inside [0, size)."""
    starts = np.arange(out, dtype=np.int64) * stride - pad_begin
    # first j with start + j*dilation >= 0, and first j with start + j*dilation >= size
    lo = np.clip(-((starts) // dilation), 0, kernel)
    hi = np.clip(-((starts - size) // dilation), 0, kernel)
    return lo, np.maximum(hi, lo)


@functools.lru_cache(maxsize=512)
def resolve_geometry(
    input_spatial: tuple,
    kernel_shape,
    auto_pad: str,
    ceil_mode: int,
    dilations,
    pads,
    strides,
) -> Geometry:
    """Check the list attributes against the spatial rank and compute the output geometry.

    The list attributes arrive as tuples of checked integers (or None) from :func:`int_tuple`;
    this checks their lengths against the spatial rank.
    """
    rank = len(input_spatial)
    kernel = _check_length("kernel_shape", kernel_shape, rank)
    strides = _check_length("strides", strides, rank) or (1,) * rank
    dilations = _check_length("dilations", dilations, rank) or (1,) * rank
    pads = _check_length("pads", pads, 2 * rank) or (0,) * (2 * rank)
    if auto_pad != "NOTSET" and any(pads):
        raise ValueError(
            f"pads must be all zero (or absent) when auto_pad is {auto_pad!r}, got {list(pads)!r}"
        )
    outs, begins, ends = [], [], []
    for i in range(rank):
        out, begin, end = _axis_output(
            input_spatial[i],
            kernel[i],
            strides[i],
            dilations[i],
            pads[i],
            pads[rank + i],
            auto_pad,
            ceil_mode,
        )
        outs.append(out)
        begins.append(begin)
        ends.append(end)
    width = max([*outs, 1])
    tap_lo = np.zeros((rank, width), dtype=np.int64)
    tap_hi = np.zeros((rank, width), dtype=np.int64)
    for i in range(rank):
        lo, hi = _tap_ranges(
            input_spatial[i], kernel[i], strides[i], dilations[i], begins[i], outs[i]
        )
        tap_lo[i, : outs[i]] = lo
        tap_hi[i, : outs[i]] = hi
    row_major = np.cumprod((1, *input_spatial[:0:-1]))[::-1]
    column_major = np.cumprod((1, *input_spatial[:-1]))
    arrays = KernelGeometry(
        *(
            _frozen(np.array(values, dtype=np.int64))
            for values in (
                input_spatial,
                outs,
                strides,
                dilations,
                begins,
                tap_lo,
                tap_hi,
                row_major,
                column_major,
            )
        ),
        kernel_size=int(np.prod(kernel)),
    )
    return Geometry(
        tuple(input_spatial),
        kernel,
        strides,
        dilations,
        tuple(begins),
        tuple(ends),
        tuple(outs),
        arrays,
    )


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
