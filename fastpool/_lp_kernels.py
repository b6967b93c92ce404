"""GlobalLpPool kernels: loops only.

One pass accumulates ``sum |x|^p`` and ``max |x|`` in float64. Only when that sum overflowed
or fell into the range where float64 loses precision does a second pass rescale by the
maximum: ``m * (sum (|x|/m)^p) ** (1/p)``, which is finite whenever the true result is.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from fastpool._ordering import to_float

# Below this a float64 sum of powers may have lost bits to underflow: rescale instead.
_SMALLEST_SAFE_SUM = 1e-280


@njit(cache=True, nogil=True)
def _power(magnitude, p):
    if p == 2.0:
        return magnitude * magnitude
    if p == 1.0:
        return magnitude
    return magnitude**p


@njit(cache=True, nogil=True)
def _root(total, p):
    if p == 2.0:
        return math.sqrt(total)
    if p == 1.0:
        return total
    return total ** (1.0 / p)


@njit(cache=True, nogil=True)
def _needs_rescale(total, largest):
    """Whether the direct sum cannot give the answer (NaN, zero and inf inputs can)."""
    if total != total or largest == 0.0 or largest == math.inf:
        return False
    return not (_SMALLEST_SAFE_SUM <= total < math.inf)


@njit(cache=True, nogil=True)
def _direct_result(total, largest, p):
    if total != total:
        return math.nan
    if largest == math.inf:
        return math.inf
    return _root(total, p)


@njit(cache=True, nogil=True)
def _lp_planes(x, y, p, lut, first, last):
    """Planes first..last-1 of x (planes, P) -> y (planes,) float64."""
    plane_size = x.shape[1]
    for plane in range(first, last):
        total = 0.0
        largest = 0.0
        for i in range(plane_size):
            magnitude = abs(to_float(x[plane, i], lut))
            total += _power(magnitude, p)
            largest = max(largest, magnitude)
        if _needs_rescale(total, largest):
            scaled = 0.0
            for i in range(plane_size):
                scaled += _power(abs(to_float(x[plane, i], lut)) / largest, p)
            y[plane] = largest * _root(scaled, p)
        else:
            y[plane] = _direct_result(total, largest, p)


@njit(parallel=True, cache=True, nogil=True)
def global_lp_nchw(x, y, p, lut, threads):
    """GlobalLpPool, channels first, in parallel over chunks of planes."""
    planes = x.shape[0]
    chunks = min(planes, 4 * threads)
    for chunk in prange(chunks):
        _lp_planes(x, y, p, lut, chunk * planes // chunks, (chunk + 1) * planes // chunks)


@njit(cache=True, nogil=True)
def global_lp_nchw_serial(x, y, p, lut, threads):
    """global_lp_nchw on the calling thread, for small inputs."""
    _lp_planes(x, y, p, lut, 0, x.shape[0])


@njit(cache=True, nogil=True)
def _lp_images(x, y, p, lut, first, last):
    """Images first..last-1 of x (N, P, C) -> y (N, C) float64, channels innermost."""
    plane_size, channels = x.shape[1], x.shape[2]
    total = np.zeros(channels)
    largest = np.zeros(channels)
    for n in range(first, last):
        total[:] = 0.0
        largest[:] = 0.0
        for i in range(plane_size):
            for c in range(channels):
                magnitude = abs(to_float(x[n, i, c], lut))
                total[c] += _power(magnitude, p)
                largest[c] = max(largest[c], magnitude)
        for c in range(channels):
            if _needs_rescale(total[c], largest[c]):
                scaled = 0.0
                for i in range(plane_size):
                    scaled += _power(abs(to_float(x[n, i, c], lut)) / largest[c], p)
                y[n, c] = largest[c] * _root(scaled, p)
            else:
                y[n, c] = _direct_result(total[c], largest[c], p)


@njit(parallel=True, cache=True, nogil=True)
def global_lp_nhwc(x, y, p, lut, threads):
    """GlobalLpPool, channels last, in parallel over chunks of images."""
    batch = x.shape[0]
    chunks = min(batch, 4 * threads)
    for chunk in prange(chunks):
        _lp_images(x, y, p, lut, chunk * batch // chunks, (chunk + 1) * batch // chunks)


@njit(cache=True, nogil=True)
def global_lp_nhwc_serial(x, y, p, lut, threads):
    """global_lp_nhwc on the calling thread, for small inputs."""
    _lp_images(x, y, p, lut, 0, x.shape[0])
