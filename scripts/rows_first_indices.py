"""A prototype for 3x3/2 MaxPool with row-major Indices, pooled along the rows first.

    python scripts/rows_first_indices.py [--quick]

(``--quick``: one small input, short blocks, to check that it runs.)

The first maximum in row-major window order is the first one in the earliest row holding
the maximum. So a window's maximum can be taken along each of its rows first, the three
taps in order with a plain ``>`` (of equal values the first stays), and then down its
three rows, again in order with a plain ``>``: neither pass compares positions. The
kernel's path for these windows when this was written (``_triple_windows``, since replaced
by the long rows, whose vectors pool each window's rows the same way) went down the
columns first and settled ties by the smallest key. Each input row is pooled along once:
the last tap row of an output row is the first of the next one's, kept in a carry.

This standalone loop (float32 without NaN or -inf; pads of 0 or 1 on both axes) is checked
against ``fastpool.max_pool`` with Indices on data with and without ties, and then timed in
the same process, in alternating blocks, against fastpool's values call (v) and its call
with Indices (i), both with preallocated outputs. The Indices call also checks its input
for NaN and -0.0 and sets up its tasks, which this loop does not: moved into the kernel,
the loop took about the time of the kernel's own path (0.985 of it), and is not used
there. See "Indices" in docs/measurements.md.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit, prange

import fastpool
from fastpool import _bench
from fastpool._max_kernels import _u

LOWEST = np.float32(-np.inf)


@njit(parallel=True)
def rows_first(x, y, indices, H, W, OH, OW, ph, pw):
    """3x3/2 MaxPool of the planes of H x W in x (flat) with pads ph, pw (0 or 1) before
    and as needed after, into y and row-major indices (flat)."""
    planes = x.shape[0] // (H * W)
    zero, one, two = np.int32(0), np.int32(1), np.int32(2)
    W1, W2 = np.int32(W), np.int32(2 * W)
    # windows o_lo..o_hi-1 have taps 0 and 1 inside the row
    o_lo = pw
    o_hi = min(OW, (W + pw) // 2)  # (the windows o with 2 * o + 1 - pw < W)
    for p in prange(planes):
        # tap row 0's window maxima and taps (carried from the output row before);
        # rows 1 and 2: tap 0 of each window (tap 2 of the one before), and the larger
        # of taps 0 and 1 with its tap
        row0 = np.empty(OW + 1, np.float32)
        key0 = np.empty(OW + 1, np.int32)
        first1 = np.empty(OW + 1, np.float32)
        first2 = np.empty(OW + 1, np.float32)
        max1 = np.empty(OW + 1, np.float32)
        key1 = np.empty(OW + 1, np.int32)
        max2 = np.empty(OW + 1, np.float32)
        key2 = np.empty(OW + 1, np.int32)
        xa = p * H * W
        for oh in range(OH):
            r0 = 2 * oh - ph
            for t in range(3):
                if t == 0 and oh > 0:
                    continue  # (the carry holds it)
                r = r0 + t
                if t == 0:  # (first1 as scratch: row 1 rewrites it next)
                    maxima, taps, first = row0, key0, first1
                elif t == 1:
                    maxima, taps, first = max1, key1, first1
                else:
                    maxima, taps, first = max2, key2, first2
                if r < 0 or r >= H:  # a row in the pads: loses to every row inside
                    for o in range(OW + 1):
                        maxima[o], taps[o], first[o] = LOWEST, 0, LOWEST
                    continue
                ra = xa + r * W
                for o in range(o_lo, o_hi):
                    a = x[_u(ra + 2 * o - pw)]
                    b = x[_u(ra + 2 * o + 1 - pw)]
                    first[_u(o)] = a
                    take = b > a
                    maxima[_u(o)] = b if take else a
                    taps[_u(o)] = one if take else zero
                for o in range(o_lo):  # (tap 0 in the pads)
                    first[_u(o)] = LOWEST
                    maxima[_u(o)] = x[_u(ra + 2 * o + 1 - pw)]
                    taps[_u(o)] = one
                for o in range(o_hi, OW + 1):  # (tap 1 past the row's end)
                    c = 2 * o - pw
                    first[o] = x[ra + c] if c < W else LOWEST
                    maxima[o] = first[o]
                    taps[o] = 0
                if t == 0:  # tap 2 of row 0
                    for o in range(OW):
                        c = first[_u(o + 1)]
                        take = c > maxima[_u(o)]
                        maxima[_u(o)] = c if take else maxima[_u(o)]
                        taps[_u(o)] = two if take else taps[_u(o)]
            ya = (p * OH + oh) * OW
            base = xa + r0 * W - pw
            for o in range(OW):
                v0, k0 = row0[_u(o)], key0[_u(o)]
                v1, k1 = max1[_u(o)], key1[_u(o)]
                c = first1[_u(o + 1)]
                take = c > v1
                v1 = c if take else v1
                k1 = two if take else k1
                v2, k2 = max2[_u(o)], key2[_u(o)]
                c = first2[_u(o + 1)]
                take = c > v2
                v2 = c if take else v2
                k2 = two if take else k2
                take = v1 > v0
                v = v1 if take else v0
                k = (k1 + W1) if take else k0
                take = v2 > v
                y[_u(ya + o)] = v2 if take else v
                k = (k2 + W2) if take else k
                indices[_u(ya + o)] = base + 2 * o + k
                row0[_u(o)] = v2  # (tap row 2 is the next output row's tap row 0)
                key0[_u(o)] = k2


def main(argv):
    quick = "--quick" in argv
    # (shape, pads before on both axes): the CNN layers of 3x3/2 windows on rows of at
    # least 48 windows (DenseNet, Inception v1, SqueezeNet, ZFNet, ShuffleNet), and batch 8
    cases = [
        ((1, 64, 112, 112), 1),
        ((1, 64, 112, 112), 0),
        ((1, 64, 111, 111), 0),
        ((1, 96, 109, 109), 0),
        ((1, 24, 112, 112), 1),
        ((8, 64, 112, 112), 1),
    ]
    if quick:
        cases = [((1, 3, 20, 100), 1), ((2, 2, 21, 97), 0)]
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.06)
    rng = np.random.default_rng(0)
    over_i, over_v = [], []
    for shape, pad in cases:
        H, W = shape[2:]
        attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [pad, pad, 1, 1]}
        ties = np.round(rng.standard_normal(shape) * 2).astype(np.float32) + np.float32(0.0)
        x = rng.standard_normal(shape).astype(np.float32)
        for data in (ties, x):  # (+ 0.0 turns np.round's -0.0 into +0.0)
            expected_y, expected_i = fastpool.max_pool(data, return_indices=True, **attrs)
            OH, OW = expected_y.shape[2:]
            y = np.empty(expected_y.size, np.float32)
            indices = np.empty(expected_y.size, np.int64)
            rows_first(data.ravel(), y, indices, H, W, OH, OW, pad, pad)
            if not (np.array_equal(y, expected_y.ravel())
                    and np.array_equal(indices, expected_i.ravel())):  # fmt: skip
                sys.exit(f"rows_first_indices.py: the prototype differs from fastpool on {shape}")
        values = np.empty_like(expected_y)
        xf = x.ravel()
        calls = {
            "v": lambda x=x, a=attrs, o=values: fastpool.max_pool(x, out=o, **a),
            "i": lambda x=x, a=attrs, o=(expected_y, expected_i): fastpool.max_pool(
                x, return_indices=True, out=o, **a
            ),
            "rf": lambda s=(xf, y, indices, H, W, OH, OW, pad, pad): rows_first(*s),
        }
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        over_i.append(t["rf"] / t["i"])
        over_v.append(t["rf"] / t["v"])
        print(
            f"{'x'.join(map(str, shape))} pads {pad}: v {t['v'] * 1e6:7.0f} us  "
            f"i {t['i'] * 1e6:7.0f} us  prototype {t['rf'] * 1e6:7.0f} us  "
            f"prototype/i {over_i[-1]:.2f}  prototype/v {over_v[-1]:.2f}  i/v "
            f"{t['i'] / t['v']:.2f}",
            flush=True,
        )
    print(f"geometric means: prototype/i {_bench.geomean(over_i):.3f}, "
          f"prototype/v {_bench.geomean(over_v):.3f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
