"""The worked examples of the operator specifications, as data.

Transcribed from the ONNX operator documentation (MaxPool, GlobalMaxPool) and the SONNX
safety-profile MaxPool specification (Example 1, 8x8 float64 with Indices); the test suite
checks this transcription against the specification texts. ``python -m fastpool`` runs them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Example(NamedTuple):
    name: str
    op: str  # "MaxPool", "GlobalMaxPool" or "GlobalLpPool"
    attrs: dict  # ONNX attribute names and values
    x: np.ndarray
    y: np.ndarray
    indices: np.ndarray | None = None


_GRID5 = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
_GRID4 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
_PADS_Y = np.array(
    [
        [13, 14, 15, 15, 15],
        [18, 19, 20, 20, 20],
        [23, 24, 25, 25, 25],
        [23, 24, 25, 25, 25],
        [23, 24, 25, 25, 25],
    ],
    dtype=np.float32,
).reshape(1, 1, 5, 5)
_PADS_INDICES = np.array(
    [
        [12, 13, 14, 14, 14],
        [17, 18, 19, 19, 19],
        [22, 23, 24, 24, 24],
        [22, 23, 24, 24, 24],
        [22, 23, 24, 24, 24],
    ],
    dtype=np.int64,
).reshape(1, 1, 5, 5)

_SONNX_X = np.array([
    [5.67591154, -0.04859958, 2.94203104, 3.70327292, 2.47014306, 4.12455586, 5.81838665, 1.84118807],
    [-0.05267874, 2.75227858, 2.16608732, 4.03416243, 1.28184638, 4.81748948, 4.64878412, 3.31626988],
    [3.55427648, 0.39997585, 4.45761508, 4.82722666, 0.18843372, 0.49564314, 7.96647029, 4.82851447],
    [1.52417623, 2.28965587, 0.36251913, 1.64413983, 4.67267459, 3.73167179, 2.20052118, 2.06720836],
    [-1.22446366, -0.86469519, 6.01461967, -1.08813165, 2.11920055, 0.78561867, 0.29834533, 1.94499626],
    [1.57776732, 3.64260188, 3.47181319, 4.83723727, 1.49868674, 3.27683692, 2.42625178, 0.4401565],
    [6.8972704, 5.51113868, 5.99293336, 4.24088721, 1.94993561, -0.04040625, 3.07940675, 3.06769141],
    [3.1299626, 4.5546675, 3.5008191, 2.06181403, 3.27400104, 6.70386189, 0.92777015, -1.29092574],
]).reshape(1, 1, 8, 8)  # fmt: skip
_SONNX_INDICES = np.array([
    [0, 19, 19, 19, 22, 22],
    [18, 19, 19, 19, 22, 22],
    [34, 34, 34, 19, 22, 22],
    [34, 34, 34, 43, 28, 29],
    [48, 34, 34, 43, 45, 45],
    [48, 50, 50, 61, 61, 61],
], dtype=np.int64).reshape(1, 1, 6, 6)  # fmt: skip

EXAMPLES = [
    Example(
        "maxpool_2d_uint8",
        "MaxPool",
        dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
        _GRID5.astype(np.uint8),
        _PADS_Y.astype(np.uint8),
    ),
    Example(
        "maxpool_2d_precomputed_pads",
        "MaxPool",
        dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
        _GRID5,
        _PADS_Y,
    ),
    Example(
        "maxpool_with_argmax_2d_precomputed_pads",
        "MaxPool",
        dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
        _GRID5,
        _PADS_Y,
        _PADS_INDICES,
    ),
    Example(
        "maxpool_2d_precomputed_strides",
        "MaxPool",
        dict(kernel_shape=[2, 2], strides=[2, 2]),
        _GRID5,
        np.array([[[[7, 9], [17, 19]]]], dtype=np.float32),
    ),
    Example(
        "maxpool_with_argmax_2d_precomputed_strides",
        "MaxPool",
        dict(kernel_shape=[2, 2], strides=[2, 2], storage_order=1),
        _GRID5,
        np.array([[[[7, 9], [17, 19]]]], dtype=np.float32),
        np.array([[[[6, 16], [8, 18]]]], dtype=np.int64),
    ),
    Example(
        "maxpool_2d_precomputed_same_upper",
        "MaxPool",
        dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        _GRID5,
        np.array([[[[7, 9, 10], [17, 19, 20], [22, 24, 25]]]], dtype=np.float32),
    ),
    Example(
        "maxpool_2d_ceil",
        "MaxPool",
        dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        _GRID4,
        np.array([[[[11, 12], [15, 16]]]], dtype=np.float32),
    ),
    Example(
        "maxpool_2d_dilations",
        "MaxPool",
        dict(kernel_shape=[2, 2], strides=[1, 1], dilations=[2, 2]),
        _GRID4,
        np.array([[[[11, 12], [15, 16]]]], dtype=np.float32),
    ),
    Example(
        "globalmaxpool_precomputed",
        "GlobalMaxPool",
        {},
        np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3),
        np.array([[[[9]]]], dtype=np.float32),
    ),
    Example(
        "sonnx_maxpool_example_1",
        "MaxPool",
        dict(
            auto_pad="NOTSET",
            dilations=[1, 1],
            kernel_shape=[3, 3],
            pads=[0, 0, 0, 0],
            strides=[1, 1],
        ),
        _SONNX_X,
        _SONNX_X.reshape(-1)[_SONNX_INDICES],
        _SONNX_INDICES,
    ),
    # GlobalLpPool's documentation has no worked example; this one is checkable by hand:
    # the 3-4-5 triangle for p=2, and |3| + |-4| = 7 for p=1.
    Example(
        "globallppool_p2",
        "GlobalLpPool",
        dict(p=2),
        np.array([[[[3.0, 0.0], [0.0, -4.0]]]]),
        np.array([[[[5.0]]]]),
    ),
    Example(
        "globallppool_p1",
        "GlobalLpPool",
        dict(p=1),
        np.array([[[3.0, -4.0]]], dtype=np.float32),
        np.array([[[7.0]]], dtype=np.float32),
    ),
]
