"""What a -0.0 or a NaN in the data costs MaxPool.

    python scripts/special_values_cost.py [batch] [--nhwc] [--volumes] [--quick]

(default batch 1; needs onnx. ``--nhwc``: the data channels last, for the channels-last
kernel; ``--volumes``: the volumes of the benchmark's extra shapes instead of the CNN
layers; ``--quick``: three layers, short blocks, to check that it runs.)

Random normal data holds neither -0.0 nor NaN, but real data may: rounding, or a product
of a negative number and zero, gives -0.0. Both need care to keep SEMANTICS.md exact (the
first of a -0.0/+0.0 tie wins; the first NaN wins), so the planar, channels-last and volume
kernels look for them before pooling a block of rows. The planar kernel pools a block
holding a NaN window by window with the exact comparison; a block holding a -0.0 but no
NaN takes the fast loops, and then only the windows whose maximum is a zero are redone
exactly. The channels-last and volume kernels do the same with a -0.0, and send a task
holding a NaN to the general kernel.

For each CNN layer (or volume) of ``python -m fastpool bench`` (float32), this times in
the same process, in alternating blocks, fastpool on three copies of one random normal
input: as it is (clean), with a -0.0 in every plane (zero), and with a NaN in every plane
(nan), values and Indices, and onnxruntime's MaxPool (values, on the data channels first)
on the copy with -0.0s when it is installed (ort). A "plane" is each image's and channel's;
the special value goes to one place of the last two spatial axes, the same in all of them.
It prints each copy's time as a share of the clean one's, and zero / ort. The script exits
with an error if fastpool's outputs differ from the reference's on those copies (the
values, and the Indices of the first plane).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

import fastpool
from fastpool import _bench
from fastpool._bench import geomean

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "tests"))
from reference import ref_max_pool, ref_max_pool_values


def with_special(x: np.ndarray, value: float, rng, layout: str) -> np.ndarray:
    """A copy of x with ``value`` at one random place of every plane."""
    special = x.copy()
    if layout == "NCHW":
        rows, columns = x.shape[-2:]
        special[..., rng.integers(rows), rng.integers(columns)] = value
    else:
        rows, columns = x.shape[-3:-1]
        special[..., rng.integers(rows), rng.integers(columns), :] = value
    return special


def check(x: np.ndarray, attrs: dict, layout: str, name: str) -> None:
    """Exits unless fastpool gives the reference's values on x, and its Indices on the
    first plane."""
    y = fastpool.max_pool(x, layout=layout, **attrs)
    expected = ref_max_pool_values(x, layout=layout, **attrs)
    if not np.array_equal(y.view(np.uint32), expected.view(np.uint32)):
        sys.exit(f"{name}: values differ from the reference's")
    plane = np.ascontiguousarray(x[:1, :1] if layout == "NCHW" else x[:1, ..., :1])
    y, indices = fastpool.max_pool(plane, return_indices=True, layout=layout, **attrs)
    expected_y, expected_indices = ref_max_pool(plane, layout=layout, **attrs)
    if not (np.array_equal(y.view(np.uint32), expected_y.view(np.uint32))
            and np.array_equal(indices, expected_indices)):  # fmt: skip
        sys.exit(f"{name}: Indices differ from the reference's")


def main(argv):
    quick = "--quick" in argv
    layout = "NHWC" if "--nhwc" in argv else "NCHW"
    numbers = [arg for arg in argv if not arg.startswith("--")]
    batch = int(numbers[0]) if numbers else 1
    if "--volumes" in argv:
        cases = [case for case in _bench.extra_cases(batch) if len(case.shape) == 5]
    else:
        cases = _bench.cnn_cases(batch)[: 3 if quick else None]
    blocks, block_seconds = (3, 0.002) if quick else (7, 0.05)
    rng = np.random.default_rng(0)
    shares = {key: [] for key in ("zero", "nan", "zero_i", "nan_i", "zero/ort")}
    for case in cases:
        x = rng.standard_normal(case.shape).astype(np.float32)
        if layout == "NHWC":
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        data = {"clean": x}
        data["zero"] = with_special(x, -0.0, rng, layout)
        data["nan"] = with_special(x, np.nan, rng, layout)
        calls = {}
        for kind, d in data.items():
            check(d, case.attrs, layout, f"{case.name} ({kind})")
            calls[kind] = lambda d=d, a=case.attrs: fastpool.max_pool(d, layout=layout, **a)
            calls[kind + "_i"] = lambda d=d, a=case.attrs: fastpool.max_pool(
                d, return_indices=True, layout=layout, **a
            )
        zero = data["zero"] if layout == "NCHW" else np.ascontiguousarray(
            np.moveaxis(data["zero"], -1, 1))  # fmt: skip
        ort = _bench._onnxruntime_call(case, zero, False)
        if ort is not None:
            calls["ort"] = ort
        t = _bench.time_blocks(calls, blocks=blocks, block_seconds=block_seconds)
        line = [f"{case.name:<48} clean {t['clean'] * 1e6:7.1f} us"]
        for key in ("zero", "nan", "zero_i", "nan_i"):
            shares[key].append(t[key] / t["clean_i" if key.endswith("_i") else "clean"])
            line.append(f"{key} {shares[key][-1]:6.2f}")
        if ort is not None:
            shares["zero/ort"].append(t["zero"] / t["ort"])
            line.append(f"zero/ort {shares['zero/ort'][-1]:.2f}")
        print("  ".join(line), flush=True)
    summary = ", ".join(f"{key} {geomean(values):.2f}" for key, values in shares.items() if values)
    print(f"batch {batch}, {layout}, geometric means (share of clean): {summary}")


if __name__ == "__main__":
    main(sys.argv[1:])
