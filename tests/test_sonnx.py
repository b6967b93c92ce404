"""fastpool.sonnx: the SONNX profile's MaxPool (all attributes required, R1-R4)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_identical, make_input
from reference import ref_max_pool
from test_seeds import SEEDS, needs_seeds, parse_matrix

import fastpool.sonnx

FULL = dict(auto_pad="NOTSET", ceil_mode=0, dilations=[1, 1], kernel_shape=[3, 3],
            pads=[0, 0, 0, 0], storage_order=0, strides=[1, 1])  # fmt: skip


@needs_seeds
def test_example_1_exactly():
    (page,) = SEEDS.glob("002_*.txt")
    text = page.read_text()
    x = parse_matrix(text, "X", (1, 1, 8, 8), np.float64)
    y, indices = fastpool.sonnx.max_pool(x, **FULL)
    assert_identical(y, parse_matrix(text, "Y", (1, 1, 6, 6), np.float64))
    assert_identical(indices, parse_matrix(text, "Indices", (1, 1, 6, 6), np.int64))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.uint8])
def test_matches_reference(dtype):
    x = make_input((2, 3, 9, 7), dtype, seed=8)
    attrs = dict(FULL, kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 2], dilations=[1, 2])
    y, indices = fastpool.sonnx.max_pool(x, **attrs)
    expected_y, expected_i = ref_max_pool(x, **{k: v for k, v in attrs.items()})
    assert_identical(y, expected_y)
    assert_identical(indices, expected_i)


@pytest.mark.parametrize("name", list(FULL))
def test_every_attribute_is_required(name):
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    missing = {k: v for k, v in FULL.items() if k != name}
    with pytest.raises(TypeError, match=name):
        fastpool.sonnx.max_pool(x, **missing)
    with pytest.raises(TypeError, match=f"{name} is required by the SONNX profile"):
        fastpool.sonnx.max_pool(x, **dict(FULL, **{name: None}))


def test_restrictions_are_named():
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    cases = [
        ("R1", np.zeros((1, 1, 4), dtype=np.float32), {}),
        ("R1", np.zeros((1, 1, 4, 4, 4), dtype=np.float32), {}),
        ("R2", x, dict(auto_pad="SAME_UPPER")),
        ("R2", x, dict(auto_pad="VALID")),
        ("R3", x, dict(ceil_mode=1)),
        ("R3", x, dict(ceil_mode=True)),
        ("R4", x, dict(storage_order=1)),
    ]
    for restriction, data, change in cases:
        with pytest.raises(ValueError, match=rf"\[{restriction}\]"):
            fastpool.sonnx.max_pool(data, **dict(FULL, **change))
    with pytest.raises(TypeError, match="does not support dtype"):
        fastpool.sonnx.max_pool(np.zeros((1, 1, 4, 4), dtype=np.int16), **FULL)
    with pytest.raises(ValueError, match="strides must have 2 values"):
        fastpool.sonnx.max_pool(x, **dict(FULL, strides=[1]))
