"""The fused activations of the com.ms.internal.nhwc MaxPool, against numpy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FLOAT_DTYPES, assert_identical, make_input
from reference import ref_max_pool

import fastpool

ATTRS = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


def numpy_activation(y, name, params):
    """The activation written from its definition, in float32 (float64 for float64)."""
    work = y.astype(np.float64 if y.dtype == np.float64 else np.float32)
    t = work.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "Relu":
            out = np.where(work < 0, t(0), work)
        elif name == "LeakyRelu":
            out = np.where(work < 0, t(params[0]) * work, work)
        elif name == "Clip":
            out = np.where(work < t(params[0]), t(params[0]), work)
            out = np.where(out > t(params[1]), t(params[1]), out)
        elif name == "Sigmoid":
            out = t(1) / (t(1) + np.exp(-work))
        elif name == "Tanh":
            out = np.tanh(work)
        else:
            v = t(params[0]) * work + t(params[1])
            out = np.where(v < 0, t(0), np.where(v > 1, t(1), v))
    out = np.where(np.isnan(work), work, out)  # NaN stays, payload and all
    return out.astype(y.dtype)


CASES = [
    ("Relu", None),
    ("LeakyRelu", [0.1]),
    ("Clip", [-0.75, 2.0]),
    ("Sigmoid", None),
    ("Tanh", None),
    ("HardSigmoid", [0.2, 0.5]),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize(("name", "params"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_activation_matches_formula(layout, name, params, dtype, entry):
    shape = (2, 9, 8, 5) if layout == "NHWC" else (2, 5, 9, 8)
    x = make_input(shape, dtype, seed=11)
    x = (x.astype(np.float32) * np.float32(3.0)).astype(dtype)  # reach Clip's bounds
    expected_y, expected_i = ref_max_pool(x, layout=layout, **ATTRS)
    expected_y = numpy_activation(expected_y, name, params)
    y, indices = fastpool.max_pool(x, layout=layout, activation=name, activation_params=params,
                                   return_indices=True, **ATTRS)  # fmt: skip
    assert_identical(indices, expected_i)  # the activation does not move the maxima
    if name in ("Sigmoid", "Tanh"):  # libm and numpy may differ in the last bit
        assert y.dtype == expected_y.dtype
        np.testing.assert_array_equal(np.isnan(y.astype(np.float64)),
                                      np.isnan(expected_y.astype(np.float64)))  # fmt: skip
        rtol = 1e-6 if dtype in (np.float32, np.float64) else 1e-2
        np.testing.assert_allclose(y.astype(np.float64), expected_y.astype(np.float64),
                                   rtol=rtol, atol=0)  # fmt: skip
    else:
        assert_identical(y, expected_y)


def test_activation_errors():
    x = np.zeros((1, 4, 4, 2), dtype=np.float32)
    cases = [
        (ValueError, "activation must be one of", dict(activation="Gelu")),
        (ValueError, r"activation_params for Clip must have 2 value\(s\), got 1",
         dict(activation="Clip", activation_params=[1.0])),
        (ValueError, "activation_params for Relu must have 0", dict(activation="Relu",
                                                                    activation_params=[1.0])),
        (ValueError, r"activation_params\[0\] must be finite",
         dict(activation="LeakyRelu", activation_params=[np.nan])),
        (ValueError, "Clip's min must not exceed its max",
         dict(activation="Clip", activation_params=[1.0, -1.0])),
        (ValueError, "activation_params given without an activation",
         dict(activation_params=[1.0])),
    ]  # fmt: skip
    for error, message, kwargs in cases:
        with pytest.raises(error, match=message):
            fastpool.max_pool(x, [2, 2], layout="NHWC", **kwargs)
    with pytest.raises(TypeError, match="activation needs a float dtype, got int8"):
        fastpool.max_pool(x.astype(np.int8), [2, 2], layout="NHWC", activation="Relu")


def test_activation_with_out_and_large_output(entry):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 64, 64, 16)).astype(np.float32)
    expected = numpy_activation(ref_max_pool(x, layout="NHWC", **ATTRS)[0], "Relu", None)
    out = np.empty(expected.shape, dtype=expected.dtype)
    assert fastpool.max_pool(x, layout="NHWC", activation="Relu", out=out, **ATTRS) is out
    assert_identical(out, expected)
