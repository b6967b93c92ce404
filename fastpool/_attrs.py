"""Attribute checking and output-shape arithmetic: the one place for both.

Everything here is pure Python. ``resolve_geometry`` turns an input shape and the ONNX
attributes into a :class:`Geometry` (the output shape, and the tables the kernels read:
resolved pads, per-axis tap ranges, index strides) and is cached per attribute set.
"""

from __future__ import annotations

import functools
import numbers
from typing import NamedTuple

import numpy as np

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
LAYOUTS = ("NCHW", "NHWC")


# Rows of the kernels' geometry table ``geo`` (int64, one column per spatial axis).
IN_SHAPE, OUT_SHAPE, KERNEL, STRIDES, DILATIONS, PADS_BEGIN = 0, 1, 2, 3, 4, 5
# Windows o in [INTERIOR_LO, INTERIOR_HI) have every tap inside the input.
INTERIOR_LO, INTERIOR_HI = 6, 7
# Index strides of the spatial axes for storage_order 0 and 1.
ROW_MAJOR, COLUMN_MAJOR = 8, 9

# Entries of ``dims``, the table of the channels-first planar kernel (one or two spatial
# axes; one axis is a plane of one row): input and output height and width, kernel,
# strides, dilations, pads at the beginning, storage order, length of a row padded at both
# ends, and the windows [P_LO_W, P_HI_W) of a row whose taps are all inside it. Then the
# layout of its flat stretches (see _max_kernels._planar_tasks): the pitch of a row of
# column maxima, the columns a row holds, whether the one column past them is folded into
# the last, whether blocks of rows are pooled flat (stride 1: 1 for outputs of the input's
# size, 2 for narrower ones, cut to their width),
# when planes may be pooled several at a time, the values one plane takes (else 0), and
# whether the row pass of other planes reads rows of ``pitch`` column maxima (1; 2: with
# Indices only).
(P_H, P_W, P_OH, P_OW, P_KH, P_KW, P_SH, P_SW, P_DH, P_DW, P_PH, P_PW, P_COLUMN_MAJOR,
 P_ROW_LENGTH, P_LO_W, P_HI_W, P_PITCH, P_HELD, P_FOLD, P_FLAT_ROWS,
 P_GROUP_VALUES, P_PITCH_ROWS) = range(22)  # fmt: skip
# Values of column maxima the planar kernel's flat stretches keep at a time (in L1).
COLUMN_BLOCK = 4096


class Geometry(NamedTuple):
    """Resolved pooling geometry over the spatial axes."""

    output_spatial: tuple  # of Python ints
    # For the kernels: ``geo[ROW, axis]`` (rows named above), and ``taps[0 or 1, axis, s]``,
    # the range [lo, hi) of kernel taps j that land inside the input of the window in slot
    # s (see tap_windows: the interior windows share one slot; the last column holds each
    # axis' interior). Shared by every call with this geometry: never written to (left
    # writeable only because numba dispatches on read-only arrays more slowly).
    geo: np.ndarray
    taps: np.ndarray
    # For one or two spatial axes: the channels-first planar kernel's tables (a 1-D input
    # is a plane of one row): ``dims`` for storage_order 0 and 1, and its taps, axis 0 the
    # rows and axis 1 the columns. None for more axes.
    planar: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    # For three spatial axes: the planar kernel's tables for the last two (the volume
    # kernel pools the planes of maxima over the first axis with it). None otherwise.
    volume: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


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


# The activations of the com.ms.internal.nhwc MaxPool: name -> number of parameters.
ACTIVATIONS = {
    "Relu": 0,
    "LeakyRelu": 1,
    "Clip": 2,
    "Sigmoid": 0,
    "Tanh": 0,
    "HardSigmoid": 2,
}


def check_activation(activation, params) -> tuple[int, float, float] | None:
    """(code, a, b) of an activation with its parameters, or None for none."""
    if activation is None:
        if params is not None and len(params):
            raise ValueError("activation_params given without an activation")
        return None
    if isinstance(activation, bytes):
        activation = activation.decode("ascii", "replace")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    wanted = ACTIVATIONS[activation]
    values = () if params is None else tuple(params)
    if len(values) != wanted:
        raise ValueError(
            f"activation_params for {activation} must have {wanted} value(s), "
            f"got {len(values)}: {list(values)!r}"
        )
    for i, value in enumerate(values):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"activation_params[{i}] must be a number, got {value!r}")
        if not np.isfinite(value):
            raise ValueError(f"activation_params[{i}] must be finite, got {value!r}")
    a, b = (float(v) for v in (*values, 0.0, 0.0)[:2])
    if activation == "Clip" and a > b:
        raise ValueError(f"Clip's min must not exceed its max, got min={a!r}, max={b!r}")
    return list(ACTIVATIONS).index(activation), a, b


def check_rank(shape: tuple, layout: str) -> None:
    if len(shape) < 3:
        axes = "(N, C, D1, ..., Dn)" if layout == "NCHW" else "(N, D1, ..., Dn, C)"
        raise ValueError(
            f"X must have at least 3 dimensions {axes} for layout {layout!r}, "
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


def _interior(size, kernel, stride, dilation, pad_begin, out):
    """[lo, hi): the windows with every tap inside [0, size), contiguous as windows move
    monotonically; (0, 0) when there is none."""
    extent = (kernel - 1) * dilation + 1
    lo = _ceil_div(pad_begin, stride)  # the first window to start at 0 or after
    hi = min(out, (size - extent + pad_begin) // stride + 1)  # past the last to end inside
    return (lo, hi) if lo < hi else (0, 0)


def _tap_ranges(windows, size, kernel, stride, dilation, pad_begin):
    """Per-window range [lo, hi) of kernel taps j that land inside [0, size)."""
    starts = windows * stride - pad_begin
    # first j with start + j*dilation >= 0, and first j with start + j*dilation >= size
    lo = np.clip(-((starts) // dilation), 0, kernel)
    hi = np.clip(-((starts - size) // dilation), 0, kernel)
    return lo, np.maximum(hi, lo)


def tap_windows(out: int, lo: int, hi: int) -> np.ndarray:
    """The windows of an axis of ``out`` whose tap ranges the compact taps table holds, in
    slot order: those before the interior [lo, hi), the first interior one (standing for
    all of them: their range is the whole kernel), and those after it. Window o sits in
    slot ``o - max(0, min(o, hi - 1) - lo)``."""
    inside = np.arange(lo, lo + 1 if lo < hi else lo, dtype=np.int64)
    return np.concatenate([np.arange(lo, dtype=np.int64), inside, np.arange(hi, out)])


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
    outs, begins = [], []
    for i in range(rank):
        out, begin, _ = _axis_output(
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
    # The tap ranges, compact: only the windows at the ends have their own; the interior
    # ones share one slot (a table as long as the output rows took 16 bytes a window per
    # axis, which a long 1-D signal paid in memory and time on every new length). The last
    # column holds each axis' interior [lo, hi), from which the kernels find a window's slot.
    interior = np.array(
        [_interior(input_spatial[i], kernel[i], strides[i], dilations[i], begins[i], outs[i])
         for i in range(rank)], dtype=np.int64).T.reshape(2, rank)  # fmt: skip
    windows = [tap_windows(outs[i], *interior[:, i]) for i in range(rank)]
    width = max(len(w) for w in windows) + 1
    taps = np.zeros((2, rank, width), dtype=np.int64)
    for i in range(rank):
        lo, hi = _tap_ranges(
            windows[i], input_spatial[i], kernel[i], strides[i], dilations[i], begins[i]
        )
        taps[0, i, : len(lo)] = lo
        taps[1, i, : len(lo)] = hi
        taps[:, i, -1] = interior[:, i]
    geo = np.array(
        [
            input_spatial,
            outs,
            kernel,
            strides,
            dilations,
            begins,
            interior[0],
            interior[1],
            np.cumprod((1, *input_spatial[:0:-1]))[::-1],
            np.cumprod((1, *input_spatial[:-1])),
        ],
        dtype=np.int64,
    ).reshape(10, rank)
    planar = _planar_tables(geo, taps) if rank <= 2 else None
    volume = _planar_tables(geo[:, 1:], taps[:, 1:]) if rank == 3 else None
    return Geometry(tuple(outs), geo, taps, planar, volume)


def slices_apart(geometry: Geometry) -> bool:
    """Whether the windows of a 3-D geometry read one input slice each along the first axis,
    the slice of their own index (kernel 1 and stride 1 there, no pads): each output slice
    is then its input slice pooled as a plane, and the volume kernel's pass over the first
    axis would only copy it."""
    geo = geometry.geo
    return (
        geo.shape[1] == 3
        and geo[KERNEL, 0] == 1
        and geo[STRIDES, 0] == 1
        and geo[PADS_BEGIN, 0] == 0
        and geo[OUT_SHAPE, 0] == geo[IN_SHAPE, 0]
    )


def _planar_tables(geo: np.ndarray, taps: np.ndarray) -> tuple:
    """(dims for storage_order 0, dims for 1, taps) of the planar kernel."""
    if geo.shape[1] == 1:  # one row: a leading axis of length 1 with one tap
        geo = np.concatenate([np.array([[1], [1], [1], [1], [1], [0], [0], [1], [1], [1]]), geo],
                             axis=1)  # fmt: skip
        row_taps = np.zeros((2, 1, taps.shape[2]), dtype=np.int64)
        row_taps[1, 0, 0] = row_taps[1, 0, -1] = 1  # (the row's one window, inside)
        taps = np.concatenate([row_taps, taps], axis=1)
    (h, w), (oh, ow) = geo[IN_SHAPE], geo[OUT_SHAPE]
    (kh, kw), (sh, sw), (dh, dw) = geo[KERNEL], geo[STRIDES], geo[DILATIONS]
    ph, pw = geo[PADS_BEGIN]
    row_length = max(pw + w, (ow - 1) * sw + (kw - 1) * dw + 1, 1)
    lo_w, hi_w = geo[INTERIOR_LO, 1], geo[INTERIOR_HI, 1]
    # Flat stretches: the row pass reads rows of pitch = sw * OW column maxima; a row holds
    # min(W, pitch) columns, and where windows read one column further (3 wide at stride
    # 2 with no pad before, odd W) that column is folded into the last, which only the
    # last window reads. Several planes at a time when that layout fits, at stride 1 with
    # outputs of the input's size or on rows short enough that the gain was measured;
    # other planes in blocks of rows when rows are that short too (longer rows vectorise
    # as they are: measured slower through the flat row pass), or with Indices.
    pitch = sw * ow
    reach = min(w, (ow - 1) * sw - pw + (kw - 1) * dw + 1)  # the columns windows read
    fold = reach == pitch + 1 and sw == 2 and kw == 3 and dw == 1 and pw == 0
    flat_rows = sh == 1 and sw == 1 and ow == w
    # Stride 1 with outputs narrower than the input, on rows of up to 64: pooled as those,
    # into rows of W outputs then cut to OW, and small planes several at a time when the
    # outputs are no taller than the input. (Row by row through a padded buffer, 2x2
    # windows took 4.2-4.3x onnxruntime's time on 13x13 planes and 1.5x on 56x56; on rows of
    # 112 and longer that way is the faster.)
    narrow_rows = sh == 1 and sw == 1 and 0 < ow < w <= 64
    plane_values = max(h * w, oh * pitch)
    pitch_rows = (reach <= pitch or fold) and 0 < pitch <= COLUMN_BLOCK // 2
    fits = pitch_rows and 2 * plane_values <= COLUMN_BLOCK
    group_values = plane_values if fits and ((flat_rows and oh == h) or w <= 32) else 0
    if narrow_rows and oh <= h and 2 * h * w <= COLUMN_BLOCK:
        group_values = h * w
    dims = [h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, 0, row_length, lo_w, hi_w,
            pitch, min(w, pitch), int(fold), 1 if flat_rows else 2 if narrow_rows else 0,
            group_values,
            int(pitch_rows and not flat_rows) * (1 if w <= 64 else 2)]  # fmt: skip
    row_major = np.array(dims, dtype=np.int64)
    dims[P_COLUMN_MAJOR] = 1
    return row_major, np.array(dims, dtype=np.int64), np.ascontiguousarray(taps)
