"""What the NaN and -0.0 check costs the values path of MaxPool.

    python scripts/nan_check_cost.py [batch] [--quick]   # default batch 1; needs onnx

(``--quick``: three layers, short blocks, to check that it runs.)

Before pooling a block of output rows, the planar kernel reads the block's input rows once
more to find out whether they hold a NaN or a -0.0; if they do, that block is pooled window
by window with the exact comparison (SEMANTICS.md), otherwise with the fast one. For each CNN
layer of ``python -m fastpool bench`` (float32, values only, random normal data, which holds
neither), this times in the same process, in alternating blocks: the kernel with that check
(check), the same kernel with it switched off (none), both run from a prepared plan with a
preallocated output so that neither pays the public call's Python, and onnxruntime's MaxPool
when it is installed (ort). none / check is the share of the time left without the check;
check / ort and none / ort are the two against onnxruntime. The script exits with an error
if the two kernels' outputs differ.
"""

from __future__ import annotations

import sys

import numpy as np

from fastpool import _api, _bench
from fastpool._bench import geomean
from fastpool._dtypes import for_kernels

# _Plan.kernel_args of the planar kernel: (dims, taps, inf_bits, fill, special_mask,
# special_inf); a special_mask of 0 turns the check off (as for the integer dtypes)
SPECIAL_MASK = 4


def plans(x: np.ndarray, attrs: dict):
    """The planar kernel's plan of a values call, and that plan with the check off."""
    plan = _api._plan_max_pool(
        x, attrs["kernel_shape"], attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0),
        attrs.get("dilations"), attrs.get("pads"), 0, attrs.get("strides"), False, "NCHW",
    )  # fmt: skip
    if plan.kernel != "planar":
        sys.exit(f"{x.shape} {attrs}: not the planar kernel ({plan.kernel})")
    args = list(plan.kernel_args)
    args[SPECIAL_MASK] = type(args[SPECIAL_MASK])(0)
    return plan, plan._replace(kernel_args=tuple(args))


def main(argv):
    quick = "--quick" in argv
    numbers = [arg for arg in argv if arg != "--quick"]
    batch = int(numbers[0]) if numbers else 1
    cases = _bench.cnn_cases(batch)[: 3 if quick else None]
    blocks, block_seconds = (3, 0.002) if quick else (9, 0.05)
    rng = np.random.default_rng(0)
    none_over_check, check_over_ort, none_over_ort = [], [], []
    for case in cases:
        x = rng.standard_normal(case.shape).astype(np.float32)
        checked, unchecked = plans(x, case.attrs)
        data = for_kernels(x)
        y_checked = np.empty(checked.out_shape, dtype=np.float32)
        y_unchecked = np.full(checked.out_shape, np.nan, dtype=np.float32)
        _api._execute(checked, data, y_checked, None, None)
        _api._execute(unchecked, data, y_unchecked, None, None)
        if not np.array_equal(y_checked, y_unchecked):
            sys.exit(f"{case.name}: the kernel without the check gives other values")
        calls = {
            "check": lambda p=checked, d=data, y=y_checked: _api._execute(p, d, y, None, None),
            "none": lambda p=unchecked, d=data, y=y_unchecked: _api._execute(p, d, y, None, None),
        }
        ort = _bench._onnxruntime_call(case, x, False)
        if ort is not None:
            calls["ort"] = ort
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        none_over_check.append(t["none"] / t["check"])
        line = (f"{case.name:<48} check {t['check'] * 1e6:7.1f} us  none {t['none'] * 1e6:7.1f} us"
                f"  none/check {none_over_check[-1]:.3f}")  # fmt: skip
        if ort is not None:
            check_over_ort.append(t["check"] / t["ort"])
            none_over_ort.append(t["none"] / t["ort"])
            line += (f"  ort {t['ort'] * 1e6:7.1f} us  check/ort {check_over_ort[-1]:.2f}"
                     f"  none/ort {none_over_ort[-1]:.2f}")  # fmt: skip
        print(line, flush=True)
    summary = f"batch {batch}, geometric means: none/check {geomean(none_over_check):.3f}"
    if check_over_ort:
        summary += (f", check/ort {geomean(check_over_ort):.3f}"
                    f", none/ort {geomean(none_over_ort):.3f}")  # fmt: skip
    print(summary)


if __name__ == "__main__":
    main(sys.argv[1:])
