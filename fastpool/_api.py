"""The public functions: check the call, resolve the geometry once, pick a kernel."""

from __future__ import annotations

import functools
import numbers
import os
import threading
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple, Union

import numba
import numpy as np
from numba.np.ufunc import parallel as _numba_parallel
from numpy.typing import ArrayLike

from fastpool import _activation, _lp_kernels, _max_kernels
from fastpool._attrs import (
    COLUMN_MAJOR,
    P_OW,
    P_ROW_LENGTH,
    ROW_MAJOR,
    check_activation,
    check_auto_pad,
    check_flag,
    check_layout,
    check_rank,
    int_tuple,
    join_shape,
    resolve_geometry,
    slices_apart,
    split_shape,
)
from fastpool._dtypes import EMPTY_TABLE, float32_table, for_kernels, prepare

IntList = Union[Sequence[int], np.ndarray]  # noqa: UP007 (a runtime alias)
Layout = Literal["NCHW", "NHWC"]

# Stands in for the Indices output when it is not wanted (same numba type as a real one).
_NO_INDICES = np.empty(0, dtype=np.int64)


def _geometry(shape, layout, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides):
    check_rank(shape, layout)
    if kernel_shape is None:
        raise ValueError("kernel_shape is required")
    return resolve_geometry(
        split_shape(shape, layout)[2],
        int_tuple("kernel_shape", kernel_shape, 1),
        check_auto_pad(auto_pad),
        check_flag("ceil_mode", ceil_mode),
        int_tuple("dilations", dilations, 1),
        int_tuple("pads", pads, 0),
        int_tuple("strides", strides, 1),
    )


def pool_output_shape(
    input_shape: IntList,
    kernel_shape: IntList,
    *,
    auto_pad: str | bytes = "NOTSET",
    ceil_mode: int = 0,
    dilations: IntList | None = None,
    pads: IntList | None = None,
    strides: IntList | None = None,
    layout: Layout = "NCHW",
) -> tuple:
    """Shape of MaxPool's outputs (Y and Indices) for an input shape.

    Parameters
    ----------
    input_shape : sequence of int
        ``(N, C, D1, ..., Dn)`` for ``layout="NCHW"``, ``(N, D1, ..., Dn, C)`` for ``"NHWC"``.
    kernel_shape, auto_pad, ceil_mode, dilations, pads, strides, layout
        As for :func:`max_pool`.

    Returns
    -------
    tuple of int
        The output shape, in the input's layout. An axis whose windows do not fit is 0.

    Raises
    ------
    ValueError
        For a bad attribute or input shape, naming it.
    """
    layout = check_layout(layout)
    shape = int_tuple("input_shape", input_shape, 0)
    if shape is None:
        raise ValueError("input_shape is required")
    geometry = _geometry(shape, layout, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides)
    batch, channels, _ = split_shape(shape, layout)
    return join_shape(batch, channels, geometry.output_spatial, layout)


def max_pool(
    X: ArrayLike,
    kernel_shape: IntList,
    *,
    auto_pad: str | bytes = "NOTSET",
    ceil_mode: int = 0,
    dilations: IntList | None = None,
    pads: IntList | None = None,
    storage_order: int = 0,
    strides: IntList | None = None,
    return_indices: bool = False,
    layout: Layout = "NCHW",
    activation: str | None = None,
    activation_params: Sequence[float] | None = None,
    out: np.ndarray | tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """ONNX MaxPool, with its optional Indices output.

    Parameters
    ----------
    X : array_like
        ``(N, C, D1, ..., Dn)`` (``layout="NCHW"``) or ``(N, D1, ..., Dn, C)`` (``"NHWC"``),
        n >= 1, of dtype float16, float32, float64, bfloat16, int8 or uint8.
    kernel_shape : sequence of int
        Window size along each spatial axis.
    auto_pad : {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}
        Automatic padding; "NOTSET" uses ``pads``.
    ceil_mode : {0, 1}
        Round the output size up instead of down (a window may not start in the end padding).
    dilations, strides : sequence of int, optional
        Per spatial axis; default all 1.
    pads : sequence of int, optional
        ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``; default all 0. Padding is never
        compared: it only shifts the windows.
    storage_order : {0, 1}
        Indices over the spatial axes in row-major (0) or column-major (1) order. NCHW only.
    return_indices : bool
        Also return the Indices output.
    layout : {"NCHW", "NHWC"}
        Channels first or channels last; the outputs have the input's layout.
    activation : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid"}, optional
        Applied to Y after pooling, as the ``com.ms.internal.nhwc`` MaxPool does (floats
        only; computed in float32 for the 16-bit floats, then rounded). NaN stays NaN.
    activation_params : sequence of float, optional
        LeakyRelu: ``[alpha]``; Clip: ``[min, max]``; HardSigmoid: ``[alpha, beta]``
        (``max(0, min(1, alpha * y + beta))``); none for the others.
    out : ndarray or (ndarray, ndarray), optional
        Arrays to write the results into, returned as they are: ``Y`` or, with
        ``return_indices=True``, ``(Y, Indices)``. Each must be C-contiguous, writeable, of
        the output shape (see :func:`pool_output_shape`) and dtype (``X``'s, int64 for
        Indices), and must not overlap ``X`` or each other.

    Returns
    -------
    Y : ndarray
        The window maxima, dtype of ``X``. A NaN in a window gives NaN; a window with no input
        tap gives the dtype's lowest value.
    Indices : ndarray of int64
        Only with ``return_indices=True``: the flat index into ``X`` of each maximum (the first
        one in row-major window order; the first NaN), or -1 for a window with no input tap.

    Raises
    ------
    ValueError
        For a bad attribute value or input shape, naming it.
    TypeError
        For an unsupported dtype.
    """
    key = _plan_key(X, kernel_shape, auto_pad, ceil_mode, dilations, pads, storage_order,
                    strides, return_indices, layout)  # fmt: skip
    try:
        plan = _PLANS.get(key)  # (hashing the key once: 0.2 us)
    except TypeError:  # an unhashable attribute: the full checks will say what
        key = plan = None
    if plan is None:
        plan = _plan_max_pool(X, kernel_shape, auto_pad, ceil_mode, dilations, pads,
                              storage_order, strides, return_indices, layout)  # fmt: skip
        if key is not None:
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    array = np.asarray(X, dtype=plan.dtype, order="C")
    fused = second_pass = None
    if activation is not None or activation_params is not None:
        checked = check_activation(activation, activation_params)
        if checked is not None and plan.dtype.kind in "iu":
            raise TypeError(f"activation needs a float dtype, got {plan.dtype}")
        if checked is not None and plan.kernel_dtype == plan.dtype:
            # float32 and float64: the kernels apply it as they write each block of outputs
            code, a, b = checked
            fused = code, np.array([a, b, 0, 1], dtype=plan.dtype)
        else:
            second_pass = checked  # 16-bit floats: computed in float32 afterwards
    y, indices = (None, None) if out is None else _check_max_pool_out(out, plan, array)
    result = _execute(plan, for_kernels(array), y, indices, fused)
    if second_pass is not None:
        _second_pass_activation(result[0] if plan.return_indices else result, *second_pass)
    return result


def _second_pass_activation(y: np.ndarray, code: int, a: float, b: float) -> None:
    """Apply an activation to 16-bit float Y in place, computed in float32."""
    work = y.astype(np.float32)
    constants = np.array([a, b, 0, 1], dtype=np.float32)
    # an elementwise pass is cheap: threads pay off only on large outputs
    serial = work.size < 8 * _SERIAL_BELOW
    _launch(_activation.activate_serial, _activation.activate, serial,
            (work.reshape(-1), code, constants))  # fmt: skip
    y[...] = work  # rounds to nearest, as astype does


def _check_out(out, name: str, shape: tuple, dtype: np.dtype, inputs: tuple) -> np.ndarray:
    """A caller's output buffer, checked: the right type, shape and dtype, C-contiguous,
    writeable, and sharing no memory with the inputs (or the call's other output)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    if out.dtype != dtype:
        raise ValueError(f"{name} must have dtype {dtype}, got {out.dtype}")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable")
    for other in inputs:
        if np.may_share_memory(out, other):
            raise ValueError(f"{name} must not share memory with the input or another output")
    return out


def _check_max_pool_out(out, plan: _Plan, array: np.ndarray):
    if plan.return_indices:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("out must be a pair (Y, Indices) when return_indices=True")
        y = _check_out(out[0], "out[0] (Y)", plan.out_shape, plan.dtype, (array,))
        indices = _check_out(
            out[1], "out[1] (Indices)", plan.out_shape, np.dtype(np.int64), (array, y)
        )
        return y, indices
    if isinstance(out, (tuple, list)):
        raise TypeError("out must be one array (Y) unless return_indices=True")
    return _check_out(out, "out", plan.out_shape, plan.dtype, (array,)), None


class _Plan(NamedTuple):
    """Everything a MaxPool call needs beyond the input, worked out once per call form."""

    out_shape: tuple
    dtype: np.dtype  # of the input (in native byte order) and of Y
    kernel_dtype: np.dtype  # how the kernels see it (uint16 for 16-bit floats)
    return_indices: bool
    kernel: str  # "planar", "volume", "volume_indices", "channels_last" or "general"
    # The planar kernel's (dims, taps, inf_bits, fill, special_mask, special_inf) for one or
    # two spatial axes channels first; the general kernel's (shape, geo, taps, order,
    # inf_bits, fill), followed for the volume kernel (three axes channels first, values
    # only) by the planar tables of the last two axes and (special_mask, special_inf), and
    # for the channels-last kernel (two or three axes, values only) by (special_mask,
    # special_inf); the volume Indices kernel's (shape, geo, taps, inf_bits, fill, planar
    # dims of the last two axes in the storage order, their taps, special_mask,
    # special_inf)
    kernel_args: tuple
    bits_dtype: np.dtype | None  # how the check for NaN and -0.0 sees x (None: general)
    # the kernels' activation constants when there is no activation (one numba type per
    # kernel dtype)
    no_constants: np.ndarray
    # worked out from the above by _Plan.make, for the call's few microseconds of Python
    out_size: int
    work: int  # input plus output elements (serial below _SERIAL_BELOW)
    serial_kernel: object
    parallel_kernel: object
    tail: tuple  # the kernel's arguments after the arrays, with no activation

    @classmethod
    def make(cls, out_shape, dtype, kernel_dtype, return_indices, kernel, kernel_args,
             bits_dtype, no_constants, in_size):  # fmt: skip
        out_size = int(np.prod(out_shape))
        serial_kernel, parallel_kernel = _KERNELS[kernel]
        return cls(out_shape, dtype, kernel_dtype, return_indices, kernel, kernel_args,
                   bits_dtype, no_constants, out_size, in_size + out_size, serial_kernel,
                   parallel_kernel, (*kernel_args, -1, no_constants))  # fmt: skip


# MaxPool's (serial, parallel) kernel entries by plan kind
_KERNELS = {
    "planar": (_max_kernels.max_pool_planar_serial, _max_kernels.max_pool_planar),
    "volume": (_max_kernels.max_pool_volume_serial, _max_kernels.max_pool_volume),
    "volume_indices": (
        _max_kernels.max_pool_volume_indices_serial,
        _max_kernels.max_pool_volume_indices,
    ),
    "channels_last": (
        _max_kernels.max_pool_channels_last_serial,
        _max_kernels.max_pool_channels_last,
    ),
    "general": (_max_kernels.max_pool_serial, _max_kernels.max_pool),
}


# Plans by call form (input shape and dtype, attribute values and their types, so that an
# invalid 2.0 or True never meets the plan of a valid 2 or 1). Bounded; cleared when full.
_PLANS: dict = {}
_MAX_PLANS = 4096


def _list_key(value):
    if value is None:
        return None
    items = tuple(value)
    return items, tuple(map(type, items))


def _plan_key(
    X,
    kernel_shape,
    auto_pad,
    ceil_mode,
    dilations,
    pads,
    storage_order,
    strides,
    return_indices,
    layout,
):
    if type(X) is not np.ndarray:
        return None
    try:
        key = (
            X.shape,
            X.dtype,
            layout,
            auto_pad,
            type(ceil_mode),
            ceil_mode,
            type(storage_order),
            storage_order,
            bool(return_indices),
            _list_key(kernel_shape),
            _list_key(dilations),
            _list_key(pads),
            _list_key(strides),
        )
    except TypeError:  # not iterable: the full checks will say what
        return None
    return key


def _plan_max_pool(
    X,
    kernel_shape,
    auto_pad,
    ceil_mode,
    dilations,
    pads,
    storage_order,
    strides,
    return_indices,
    layout,
) -> _Plan:
    """Check a MaxPool call completely and work out its plan."""
    layout = check_layout(layout)
    array, data, storage = prepare(X, "MaxPool")
    storage_order = check_flag("storage_order", storage_order)
    geometry = _geometry(
        array.shape, layout, kernel_shape, auto_pad, ceil_mode, dilations, pads, strides
    )
    if storage_order and layout == "NHWC":
        raise ValueError("storage_order must be 0 with layout 'NHWC', got 1")
    batch, channels, spatial = split_shape(array.shape, layout)
    out_spatial = geometry.output_spatial
    planes, block = (batch * channels, 1) if layout == "NCHW" else (batch, channels)
    rows, out_rows = int(np.prod(spatial[:-1])), int(np.prod(out_spatial[:-1]))
    shape = np.array(
        [planes, rows, spatial[-1] * block, out_rows, out_spatial[-1] * block, block],
        dtype=np.int64,
    )
    out_shape = join_shape(batch, channels, out_spatial, layout)
    no_constants = np.zeros(4, dtype=data.dtype)
    planar = geometry.planar
    if (layout == "NCHW" and planar is None and geometry.volume is not None
            and slices_apart(geometry) and not (return_indices and storage_order)):  # fmt: skip
        # windows 1 deep (as video networks pool 1x3x3): the slices are planes of their
        # own, for the planar kernel (their row-major Indices are the same numbers)
        planar = (geometry.volume[0], geometry.volume[0], geometry.volume[2])
    if layout == "NCHW" and planar is not None and _planar_fits(planar[0]):
        dims = planar[storage_order]
        kernel_args = (dims, planar[2], storage.inf_bits, storage.fill,
                       storage.special_mask, storage.special_inf)  # fmt: skip
        return _Plan.make(out_shape, array.dtype, data.dtype, bool(return_indices), "planar",
                          kernel_args, storage.bits_dtype, no_constants, array.size)  # fmt: skip
    order = COLUMN_MAJOR if storage_order else ROW_MAJOR
    kernel_args = (shape, geometry.geo, geometry.taps, order, storage.inf_bits, storage.fill)
    if (layout == "NCHW" and geometry.volume is not None
            and _planar_fits(geometry.volume[0])):  # fmt: skip
        if return_indices:  # (the planar kernel's Indices, slice by slice, in this order)
            kernel_args = (shape, geometry.geo, geometry.taps, storage.inf_bits, storage.fill,
                           geometry.volume[storage_order], geometry.volume[2],
                           storage.special_mask, storage.special_inf)  # fmt: skip
            return _Plan.make(out_shape, array.dtype, data.dtype, True, "volume_indices",
                              kernel_args, storage.bits_dtype, no_constants,
                              array.size)  # fmt: skip
        kernel_args += (geometry.volume[0], geometry.volume[2], storage.special_mask,
                        storage.special_inf)  # fmt: skip
        return _Plan.make(out_shape, array.dtype, data.dtype, False, "volume", kernel_args,
                          storage.bits_dtype, no_constants, array.size)  # fmt: skip
    if layout == "NHWC" and len(spatial) in (2, 3) and not return_indices:
        kernel_args += (storage.special_mask, storage.special_inf)
        return _Plan.make(out_shape, array.dtype, data.dtype, False, "channels_last",
                          kernel_args, storage.bits_dtype, no_constants, array.size)  # fmt: skip
    return _Plan.make(out_shape, array.dtype, data.dtype, bool(return_indices), "general",
                      kernel_args, None, no_constants, array.size)  # fmt: skip


def _planar_fits(dims: np.ndarray) -> bool:
    """Whether the planar kernel's scratch, a padded input row, stays small: at most 64Ki
    elements or twice an output row (a long 1-D signal pooled with a large stride goes to
    the general kernel, whose scratch is an output row)."""
    return int(dims[P_ROW_LENGTH]) <= max(1 << 16, 2 * int(dims[P_OW]))


# Below this many input plus output elements, a call runs on the calling thread: starting
# the thread pool costs more than it saves.
_SERIAL_BELOW = 1 << 15

# GlobalMaxPool does so little per byte that its threshold counts bytes (a uint8 input holds
# four times the items of a float32 one of the same size): serial below 512 KiB channels
# first, 128 KiB channels last. Measured crossovers, Intel Xeon, 2026-11-28: 0.5-0.8 MiB for
# every dtype channels first, 0.1-0.4 MiB channels last, whose loop is slower. (Bytes per
# item of _SERIAL_BELOW, so that the tests' switch of _SERIAL_BELOW covers it too.)
_GLOBAL_MAX_BYTES_PER_SERIAL_ITEM = {"NCHW": 16, "NHWC": 4}


def _global_max_serial_below(layout: str) -> int:
    """Input bytes under which GlobalMaxPool runs on the calling thread."""
    return _GLOBAL_MAX_BYTES_PER_SERIAL_ITEM[layout] * _SERIAL_BELOW


# GlobalMaxPool on float inputs of at least this many bytes asks for the data ahead of its loop
# (see fastpool._prefetch): there they come from memory. Intel Xeon (480 MiB L3), 2026-12-02,
# against the same loop without: channels first 0.73-0.91 of the time from 102 MB on, float32,
# float64 and float16, and 0.98-1.03 from 0.8 to 51 MB; channels last float32 0.54-0.74 (the
# kernels say where it is not taken). The tests set it to 0 to run those loops on small inputs.
_GLOBAL_PREFETCH_FROM = 16 << 20


# One parallel kernel runs at a time: numba's default "workqueue" threading layer aborts the
# process when two threads launch parallel work at once, and on the others a second launch
# would only oversubscribe the cores. A call that finds the pool busy runs its serial kernel
# on its own thread instead (the kernels release the GIL), so concurrent callers still keep
# every core busy.
_PARALLEL = threading.Lock()
# Cleared in a child forked after GNU OpenMP started in the parent: OpenMP cannot run there
# (it terminates the process), so the child runs everything serially.
_parallel_allowed = True


def _after_fork_in_child() -> None:
    global _PARALLEL, _parallel_allowed
    _PARALLEL = threading.Lock()  # another thread of the parent may have held it
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel work ran in the parent: the child may start any layer
        return
    if layer == "omp":
        _parallel_allowed = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def _launch(serial_kernel, parallel_kernel, serial: bool, args: tuple) -> None:
    """Run a kernel entry on ``args``: the parallel one when the call is big enough and the
    thread pool is free, else the serial one. Every entry takes the thread count last."""
    try:
        _launch_once(serial_kernel, parallel_kernel, serial, args)
    except Exception as error:
        if not _from_disk_cache(error):
            raise
        _compile_in_memory(error)
        _launch_once(serial_kernel, parallel_kernel, serial, args)


def _thread_count() -> int:
    """numba.get_num_threads(): once numba's thread pool has started, through its C getter
    (0.09 us a call here, against 0.66 us for the public function, which takes two locks
    on every call to check that the pool has started). The public function whenever the
    private names are missing, as they may be in another numba version."""
    if getattr(_numba_parallel, "_is_initialized", False):
        getter = getattr(_numba_parallel, "_get_num_threads", None)
        count = getter() if getter is not None else 0
        if count > 0:
            return count
    return numba.get_num_threads()


def _launch_once(serial_kernel, parallel_kernel, serial: bool, args: tuple) -> None:
    if not serial and _parallel_allowed and _PARALLEL.acquire(blocking=False):
        try:
            parallel_kernel(*args, _thread_count())
        finally:
            _PARALLEL.release()
    else:
        serial_kernel(*args, 1)


def _from_disk_cache(error: BaseException) -> bool:
    """Whether an error came from reading numba's on-disk cache (a corrupted or truncated
    file, say) rather than from the computation."""
    frames = traceback.extract_tb(error.__traceback__)
    return any(Path(frame.filename).parts[-3:] == ("numba", "core", "caching.py")
               for frame in frames)  # fmt: skip


def _compile_in_memory(error: BaseException) -> None:
    """Stop every fastpool kernel from using the disk cache, with one warning."""
    from numba.core.caching import NullCache

    from fastpool import _activation

    for module in (_max_kernels, _lp_kernels, _activation):
        for kernel in vars(module).values():
            if isinstance(kernel, numba.core.registry.CPUDispatcher):
                kernel._cache = NullCache()
    warnings.warn(
        f"fastpool could not read numba's kernel cache ({type(error).__name__}: {error}); "
        "compiling in memory from now on. Deleting the cache directory repairs it.",
        RuntimeWarning,
        stacklevel=4,
    )


def _execute(plan: _Plan, array: np.ndarray, y, indices, fused: tuple | None):
    if y is None:
        y = np.empty(plan.out_shape, dtype=plan.dtype)
        if plan.return_indices:
            indices = np.empty(plan.out_shape, dtype=np.int64)
    if plan.out_size:
        flat_x, flat_y = array.reshape(-1), y.reshape(-1)
        if plan.kernel_dtype is not plan.dtype:
            flat_x, flat_y = flat_x.view(plan.kernel_dtype), flat_y.view(plan.kernel_dtype)
        tail = plan.tail if fused is None else (*plan.kernel_args, *fused)
        # the arrays each kind of kernel takes ahead of its tables: x's bits are for the
        # check for NaN and -0.0 of the kernels other than the general one
        if plan.kernel == "planar":
            flat_indices = indices.reshape(-1) if plan.return_indices else _NO_INDICES
            args = (flat_x, flat_x.view(plan.bits_dtype), flat_y, flat_indices,
                    plan.return_indices, *tail)  # fmt: skip
        elif plan.kernel == "volume_indices":
            args = (flat_x, flat_x.view(plan.bits_dtype), flat_y, indices.reshape(-1), *tail)
        elif plan.kernel == "general":
            flat_indices = indices.reshape(-1) if plan.return_indices else _NO_INDICES
            args = (flat_x, flat_y, flat_indices, plan.return_indices, *tail)
        else:  # volume, channels last: values only
            args = (flat_x, flat_x.view(plan.bits_dtype), flat_y, *tail)
        _launch(plan.serial_kernel, plan.parallel_kernel, plan.work < _SERIAL_BELOW, args)
    return (y, indices) if plan.return_indices else y


@functools.lru_cache(maxsize=1024)
def _global_shapes(shape: tuple, layout: str):
    """(kernel output shape, output shape) of a global pooling call on an input shape; the
    kernels read the input flat. (Cached: 1.3 us of a call's Python side.)"""
    check_rank(shape, layout)
    batch, channels, spatial = split_shape(shape, layout)
    out_shape = join_shape(batch, channels, (1,) * len(spatial), layout)
    if layout == "NCHW":
        return (batch * channels,), out_shape
    return (batch, channels), out_shape


def global_max_pool(
    X: ArrayLike, *, layout: Layout = "NCHW", out: np.ndarray | None = None
) -> np.ndarray:
    """ONNX GlobalMaxPool: the maximum over all spatial axes, keeping them as size 1.

    Parameters
    ----------
    X : array_like
        ``(N, C, D1, ..., Dn)`` or, with ``layout="NHWC"``, ``(N, D1, ..., Dn, C)``; n >= 1;
        dtype float16, float32, float64, bfloat16, int8 or uint8.
    layout : {"NCHW", "NHWC"}
        Channels first or channels last.
    out : ndarray, optional
        An array to write the result into, returned as it is: C-contiguous, writeable, of the
        output shape and ``X``'s dtype, not overlapping ``X``.

    Returns
    -------
    ndarray
        ``(N, C, 1, ..., 1)`` or ``(N, 1, ..., 1, C)``, dtype of ``X``. NaN propagates; an
        empty spatial extent gives the dtype's lowest value.

    Raises
    ------
    ValueError
        For an input of fewer than 3 dimensions or an unknown layout.
    TypeError
        For an unsupported dtype.
    """
    layout = check_layout(layout)
    array, data, storage = prepare(X, "GlobalMaxPool")
    shape_out, out_shape = _global_shapes(array.shape, layout)
    if out is None:
        y = np.empty(out_shape, dtype=array.dtype)
    else:
        y = _check_out(out, "out", out_shape, array.dtype, (array,))
    if y.size:
        flat_x, flat_y = data.reshape(-1), y.view(data.dtype).reshape(-1)
        serial = flat_x.nbytes < _global_max_serial_below(layout)
        if layout == "NCHW":
            bits, y_bits = flat_x.view(storage.bits_dtype), flat_y.view(storage.bits_dtype)
            _launch(_max_kernels.global_max_nchw_serial, _max_kernels.global_max_nchw, serial,
                    (flat_x, bits, flat_y, y_bits, storage.special_mask, storage.special_inf,
                     storage.inf_bits, storage.fill, _GLOBAL_PREFETCH_FROM))  # fmt: skip
        else:
            _launch(_max_kernels.global_max_nhwc_serial, _max_kernels.global_max_nhwc, serial,
                    (flat_x, flat_y, shape_out[1], storage.inf_bits, storage.fill,
                     _GLOBAL_PREFETCH_FROM))  # fmt: skip
    return y


def _check_p(p) -> float:
    if (
        isinstance(p, (bool, np.bool_))
        or not isinstance(p, numbers.Real)
        or not np.isfinite(p)
        or p <= 0
    ):
        raise ValueError(f"p must be a positive finite number, got {p!r}")
    return float(p)


def global_lp_pool(
    X: ArrayLike, p: float = 2, *, layout: Layout = "NCHW", out: np.ndarray | None = None
) -> np.ndarray:
    """ONNX GlobalLpPool: ``(sum |x|^p) ** (1/p)`` over all spatial axes, kept as size 1.

    Parameters
    ----------
    X : array_like
        ``(N, C, D1, ..., Dn)`` or, with ``layout="NHWC"``, ``(N, D1, ..., Dn, C)``; n >= 1;
        dtype float16, float32, float64 or bfloat16.
    p : int or float
        The order of the norm, any positive finite number (default 2).
    layout : {"NCHW", "NHWC"}
        Channels first or channels last.
    out : ndarray, optional
        As for :func:`global_max_pool`.

    Returns
    -------
    ndarray
        ``(N, C, 1, ..., 1)`` or ``(N, 1, ..., 1, C)``, dtype of ``X``. Accumulated in float64
        and rescaled when needed, so the result is finite whenever the true value fits the
        dtype. NaN propagates; an empty spatial extent gives 0.

    Raises
    ------
    ValueError
        For a bad ``p``, an input of fewer than 3 dimensions or an unknown layout.
    TypeError
        For an unsupported dtype (integers included).
    """
    layout = check_layout(layout)
    p = _check_p(p)
    array, data, storage = prepare(X, "GlobalLpPool", floats_only=True)
    shape_out, out_shape = _global_shapes(array.shape, layout)
    if out is not None:
        out = _check_out(out, "out", out_shape, array.dtype, (array,))
    result = np.empty(shape_out, dtype=np.float64)
    if result.size:
        table = float32_table(array.dtype) if storage.inf_bits else EMPTY_TABLE
        serial = data.size < _SERIAL_BELOW
        if layout == "NCHW":
            kernels = _lp_kernels.global_lp_nchw_serial, _lp_kernels.global_lp_nchw
        else:
            kernels = _lp_kernels.global_lp_nhwc_serial, _lp_kernels.global_lp_nhwc
        _launch(*kernels, serial, (data.reshape(-1), result, p, table))
    if out is None:
        return result.astype(array.dtype).reshape(out_shape)
    out.reshape(-1)[...] = result.reshape(-1)  # rounds as astype does
    return out
