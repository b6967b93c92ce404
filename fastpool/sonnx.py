"""MaxPool under the SONNX safety-related profile (``shared/seeds/002``).

The profile allows no defaults: every attribute is passed explicitly, and four restrictions
narrow ONNX MaxPool-22:

- R1: the input has 2 spatial axes (``(N, C, H, W)``);
- R2: ``auto_pad`` is ``"NOTSET"``;
- R3: ``ceil_mode`` is 0;
- R4: ``storage_order`` is 0.

Types: float16, float32, float64, int8, uint8. Both outputs, Y and Indices, are returned.
Apart from these checks it is :func:`fastpool.max_pool`, with the same semantics.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from fastpool._api import IntList
from fastpool._api import max_pool as _max_pool

SONNX_DTYPES = (np.float16, np.float32, np.float64, np.int8, np.uint8)
_ATTRIBUTES = ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
               "strides")  # fmt: skip


def max_pool(
    X: ArrayLike,
    *,
    auto_pad: str,
    ceil_mode: int,
    dilations: IntList,
    kernel_shape: IntList,
    pads: IntList,
    storage_order: int,
    strides: IntList,
) -> tuple[np.ndarray, np.ndarray]:
    """SONNX MaxPool: ONNX MaxPool-22 with every attribute required and R1-R4 enforced.

    Parameters
    ----------
    X : array_like
        ``(N, C, H, W)`` (R1), dtype float16, float32, float64, int8 or uint8.
    auto_pad : str
        Must be ``"NOTSET"`` (R2).
    ceil_mode : int
        Must be 0 (R3).
    dilations, strides : sequence of int
        Two values each.
    kernel_shape : sequence of int
        Two values.
    pads : sequence of int
        Four values ``[h_begin, w_begin, h_end, w_end]``.
    storage_order : int
        Must be 0 (R4).

    Returns
    -------
    Y : ndarray
        The window maxima.
    Indices : ndarray of int64
        Flat indices into ``X`` of the maxima.

    Raises
    ------
    TypeError
        For an attribute given as None, or a dtype outside the profile.
    ValueError
        For a broken restriction (the message names it: ``[R1]`` ... ``[R4]``) or a bad
        attribute value.
    """
    given = dict(auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=dilations,
                 kernel_shape=kernel_shape, pads=pads, storage_order=storage_order,
                 strides=strides)  # fmt: skip
    for name in _ATTRIBUTES:
        if given[name] is None:
            raise TypeError(f"{name} is required by the SONNX profile (no defaults), got None")
    array = np.asarray(X)
    if array.dtype.type not in SONNX_DTYPES:
        raise TypeError(
            f"SONNX MaxPool does not support dtype {array.dtype}; "
            "supported: float16, float32, float64, int8, uint8"
        )
    if array.ndim != 4:
        raise ValueError(f"[R1] X must have 2 spatial axes (N, C, H, W), got shape {array.shape}")
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode("ascii", "replace")
    if auto_pad != "NOTSET":
        raise ValueError(f"[R2] auto_pad must be 'NOTSET', got {auto_pad!r}")
    if isinstance(ceil_mode, bool) or ceil_mode != 0:
        raise ValueError(f"[R3] ceil_mode must be 0, got {ceil_mode!r}")
    if isinstance(storage_order, bool) or storage_order != 0:
        raise ValueError(f"[R4] storage_order must be 0, got {storage_order!r}")
    return _max_pool(array, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=dilations,
                     pads=pads, storage_order=0, strides=strides,
                     return_indices=True)  # fmt: skip
