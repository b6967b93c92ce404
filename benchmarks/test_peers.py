"""pytest-benchmark: fastpool and its peers on the workload, one test per case and peer.

    python -m pytest benchmarks -n 0 --benchmark-only --benchmark-group-by=param:case

groups each case's peers together, so the ratios can be read off one table (``-n 0``: in one
process, as pytest-benchmark times nothing under pytest-xdist, which the project's pytest
options turn on for the test suite). CI runs these
with --benchmark-disable (each once, as plain tests) so that they cannot rot. Nothing here
asserts a time; the tests check that every peer computes fastpool's answer.
"""

import numpy as np
import pytest

import fastpool
from fastpool import _bench

pytest.importorskip("pytest_benchmark")

try:
    CASES = _bench.cnn_cases(1) + _bench.extra_cases(1)
except ImportError:  # onnx missing: the extra shapes only
    CASES = _bench.extra_cases(1)

PEERS = {"fastpool": None, "onnxruntime": _bench._onnxruntime_call, "torch": _bench._torch_call}


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_max_pool(benchmark, case, peer):
    x = np.random.default_rng(0).standard_normal(case.shape).astype(np.float32)
    expected = fastpool.max_pool(x, **case.attrs)
    if peer == "fastpool":
        call = lambda: fastpool.max_pool(x, **case.attrs)  # noqa: E731
    else:
        call = PEERS[peer](case, x, False)
        if call is None:
            pytest.skip(f"{peer} is not installed or cannot run this case")
    result = benchmark(call)
    result = result[0] if isinstance(result, (list, tuple)) else result
    np.testing.assert_array_equal(np.asarray(result), expected)
