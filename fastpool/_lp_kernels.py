"""GlobalLpPool kernels: loops only.

One pass sums ``|x|^p`` in float64 (vectorised: the sum may be reassociated). That sum gives
the answer unless it overflowed, underflowed or fell where float64 loses bits; then a second
pass finds the largest magnitude m and computes ``m * (sum (|x|/m)^p) ** (1/p)``, which is
finite whenever the true result is (and is +inf or 0 when m is).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from fastpool._config import SUM_FASTMATH, kernel
from fastpool._ordering import to_float

# Unsigned indices spare numba's negative-index wraparound, which blocks vectorisation.
_u = np.uint64

# Below this a float64 sum of powers may have lost bits to underflow: rescale instead.
_SMALLEST_SAFE_SUM = 1e-280


@kernel()
def _power(magnitude, p):
    if p == 2.0:
        return magnitude * magnitude
    if p == 1.0:
        return magnitude
    return magnitude**p


@kernel()
def _root(total, p):
    if p == 2.0:
        return math.sqrt(total)
    if p == 1.0:
        return total
    return total ** (1.0 / p)


@kernel()
def _direct(total):
    """Whether the plain sum gives the answer (a NaN sum is the NaN answer)."""
    return total != total or _SMALLEST_SAFE_SUM <= total < math.inf


@kernel()
def _rescaled(x, at, count, step, p, lut):
    """The Lp norm of x[at], x[at + step], ... (count values), rescaled by the largest."""
    largest = 0.0
    for i in range(count):
        magnitude = abs(to_float(x[at + i * step], lut))
        largest = magnitude if magnitude > largest else largest
    if largest == 0.0 or largest == math.inf:
        return largest
    scaled = 0.0
    for i in range(count):
        scaled += _power(abs(to_float(x[at + i * step], lut)) / largest, p)
    return largest * _root(scaled, p)


@kernel(fastmath=SUM_FASTMATH)
def _power_sum(x, at, count, p, lut):
    """sum |x[at + i]|^p for i < count, in float64, with loops of their own for p 1 and 2."""
    total = 0.0
    if p == 2.0:
        for i in range(count):
            value = to_float(x[_u(at + i)], lut)
            total += value * value
    elif p == 1.0:
        for i in range(count):
            total += abs(to_float(x[_u(at + i)], lut))
    else:
        for i in range(count):
            total += abs(to_float(x[_u(at + i)], lut)) ** p
    return total


@kernel()
def _lp_planes(x, y, p, lut, first, last):
    """Planes first..last-1 of x (planes * P,) flat -> y (planes,) float64."""
    size = x.shape[0] // y.shape[0]
    for plane in range(first, last):
        total = _power_sum(x, plane * size, size, p, lut)
        y[plane] = (
            _root(total, p) if _direct(total) else _rescaled(x, plane * size, size, 1, p, lut)
        )


@kernel(parallel=True)
def global_lp_nchw(x, y, p, lut, threads):
    """GlobalLpPool, channels first, in parallel over chunks of planes."""
    planes = y.shape[0]
    chunks = min(planes, 4 * threads)
    for chunk in prange(chunks):
        _lp_planes(x, y, p, lut, chunk * planes // chunks, (chunk + 1) * planes // chunks)


@kernel()
def global_lp_nchw_serial(x, y, p, lut, threads):
    """global_lp_nchw on the calling thread, for small inputs."""
    _lp_planes(x, y, p, lut, 0, y.shape[0])


@kernel(fastmath=SUM_FASTMATH)
def _lp_images(flat, y, p, lut, first, last):
    """Images first..last-1 of x (N * P * C,) flat -> y (N, C) float64, channels innermost."""
    channels = y.shape[1]
    plane_size = flat.shape[0] // y.size if y.size > 0 else 0
    total = np.zeros(channels)
    for n in range(first, last):
        total[:] = 0.0
        for i in range(plane_size):
            at = (n * plane_size + i) * channels
            if p == 2.0:
                for c in range(channels):
                    value = to_float(flat[_u(at + c)], lut)
                    total[_u(c)] += value * value
            else:
                for c in range(channels):
                    total[_u(c)] += _power(abs(to_float(flat[_u(at + c)], lut)), p)
        for c in range(channels):
            if _direct(total[c]):
                y[n, c] = _root(total[c], p)
            else:
                y[n, c] = _rescaled(
                    flat, n * plane_size * channels + c, plane_size, channels, p, lut
                )


@kernel(parallel=True)
def global_lp_nhwc(x, y, p, lut, threads):
    """GlobalLpPool, channels last, in parallel over chunks of images."""
    batch = y.shape[0]
    chunks = min(batch, 4 * threads)
    for chunk in prange(chunks):
        _lp_images(x, y, p, lut, chunk * batch // chunks, (chunk + 1) * batch // chunks)


@kernel()
def global_lp_nhwc_serial(x, y, p, lut, threads):
    """global_lp_nhwc on the calling thread, for small inputs."""
    _lp_images(x, y, p, lut, 0, y.shape[0])
