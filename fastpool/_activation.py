"""The activations the ``com.ms.internal.nhwc`` MaxPool applies to its pooled values: loops only.

Each is applied in place to Y in float32 or float64 and keeps a NaN (payload included):
every test below is false for NaN, so a NaN falls through unchanged.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from fastpool._config import kernel

_u = np.uint64  # unsigned indices vectorise (see _max_kernels)

# Activation codes, in the order of ``_attrs.ACTIVATIONS``.
RELU, LEAKY_RELU, CLIP, SIGMOID, TANH, HARD_SIGMOID = range(6)


@kernel()
def _activate_range(y, code, constants, first, last):
    """y[first:last] in place; constants = (a, b, 0, 1) in y's dtype."""
    a, b, zero, one = constants[0], constants[1], constants[2], constants[3]
    if code == RELU:
        for i in range(first, last):
            v = y[_u(i)]
            y[_u(i)] = zero if v < zero else v
    elif code == LEAKY_RELU:
        for i in range(first, last):
            v = y[_u(i)]
            y[_u(i)] = a * v if v < zero else v
    elif code == CLIP:
        for i in range(first, last):
            v = y[_u(i)]
            y[_u(i)] = a if v < a else (b if v > b else v)
    elif code == SIGMOID:
        for i in range(first, last):
            v = y[_u(i)]
            y[_u(i)] = one / (one + math.exp(-v)) if v == v else v
    elif code == TANH:
        for i in range(first, last):
            v = y[_u(i)]
            y[_u(i)] = math.tanh(v) if v == v else v
    elif code == HARD_SIGMOID:
        for i in range(first, last):
            v = y[_u(i)]
            w = a * v + b
            y[_u(i)] = (zero if w < zero else (one if w > one else w)) if v == v else v


@kernel(parallel=True)
def activate(y, code, constants, threads):
    """Apply activation ``code`` with ``constants`` = (a, b, 0, 1) to flat y in place."""
    chunks = max(1, min(4 * threads, y.shape[0] // 4096))
    for chunk in prange(chunks):
        _activate_range(y, code, constants, chunk * y.shape[0] // chunks,
                        (chunk + 1) * y.shape[0] // chunks)  # fmt: skip


@kernel()
def activate_serial(y, code, constants, threads):
    """activate on the calling thread, for small outputs."""
    _activate_range(y, code, constants, 0, y.shape[0])
