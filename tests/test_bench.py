"""The benchmark command runs and times the function it claims to (quick mode)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from fastpool import _bench


def test_cnn_workload_is_the_31_layers():
    pytest.importorskip("onnx")
    cases = _bench.cnn_cases(1)
    assert len(cases) == 31
    assert len({(c.shape, repr(sorted(c.attrs.items()))) for c in cases}) == 31
    assert all(c.shape[0] == 1 and len(c.shape) == 4 for c in cases)
    assert {c.shape[0] for c in _bench.cnn_cases(8)} == {8}


def test_peers_compute_the_same_values():
    """Every peer the benchmark times returns what fastpool returns on a workload case."""
    case = _bench.extra_cases(1)[-1]  # ceil mode
    x = np.random.default_rng(0).standard_normal(case.shape).astype(np.float32)
    ours = _bench.fastpool.max_pool(x, **case.attrs)
    for make in (_bench._onnxruntime_call, _bench._torch_call):
        call = make(case, x, False)
        if call is None:
            continue
        theirs = call()
        theirs = theirs[0] if isinstance(theirs, (list, tuple)) else theirs
        np.testing.assert_array_equal(np.asarray(theirs), ours)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_bench_command_quick_json(layout):
    result = subprocess.run(
        [sys.executable, "-m", "fastpool", "bench", "--quick", "--json", "--layout", layout],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    for row in rows:
        assert row["seconds"]["fastpool"] > 0
        assert row["layout"] == layout
    assert "[3/3]" in result.stderr  # progress goes to stderr
