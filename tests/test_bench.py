"""The benchmark command runs and times the function it claims to (quick mode)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from conftest import this_fastpool_env

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


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "uint8", "int8"])
def test_onnxruntime_peer_takes_every_dtype_it_has_a_kernel_for(dtype):
    """The onnxruntime peer runs MaxPool on each dtype its CPU provider has a kernel for
    (float16 among them, the peer of fastpool's 16-bit floats) and agrees with fastpool."""
    pytest.importorskip("onnxruntime")
    case = _bench.extra_cases(1)[-1]  # 3x3/2, ceil mode
    # integers fit every dtype exactly (uint8 wraps the negative ones), and give ties
    x = np.random.default_rng(1).integers(-100, 100, case.shape).astype(dtype)
    call = _bench.onnxruntime_session("MaxPool", case.attrs, x)
    assert call is not None
    np.testing.assert_array_equal(call()[0], _bench.fastpool.max_pool(x, **case.attrs))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("indices", [False, True])
def test_16_bit_peers_compute_the_same_values(dtype, layout, indices):
    """For 16-bit floats the benchmark adds fastpool on the same data in float32, and
    onnxruntime pools bfloat16 data as float16: each peer must compute the same maxima
    (bfloat16 to float16 rounds, but rounding keeps order, so the maxima round alike)."""
    element = _bench.bench_dtype(dtype)
    case = _bench.extra_cases(1)[-1]  # 3x3/2, ceil mode
    x = np.random.default_rng(2).standard_normal(case.shape).astype(np.float32).astype(element)
    calls = _bench.peer_calls(case, x, indices, layout)
    assert "fastpool float32" in calls
    ours = calls["fastpool"]()
    ours_values = (ours[0] if indices else ours).astype(np.float32)
    if layout == "NHWC":
        ours_values = np.moveaxis(ours_values, -1, 1)
    theirs = calls["fastpool float32"]()
    np.testing.assert_array_equal(theirs[0] if indices else theirs, ours[0] if indices else ours)
    if indices:
        np.testing.assert_array_equal(theirs[1], ours[1])
    if importlib.util.find_spec("onnxruntime") is not None:
        peer = calls["onnxruntime"]()[0]
        assert peer.dtype == np.float16
        expected = ours_values.astype(np.float16)  # rounded as onnxruntime's input was
        np.testing.assert_array_equal(peer, expected)


def test_bench_dtype_names_what_it_takes():
    assert _bench.bench_dtype("uint8") == np.uint8
    with pytest.raises(ValueError, match="float16"):
        _bench.bench_dtype("float128")


@pytest.mark.parametrize("layout, dtype", [("NCHW", "float32"), ("NHWC", "float32"),
                                           ("NCHW", "bfloat16")])  # fmt: skip
def test_bench_command_quick_json(layout, dtype):
    result = subprocess.run(
        [sys.executable, "-m", "fastpool", "bench", "--quick", "--json", "--layout", layout,
         "--dtype", dtype],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    for row in rows:
        assert row["seconds"]["fastpool"] > 0
        assert row["layout"] == layout
        assert row["dtype"] == dtype
        assert ("fastpool float32" in row["seconds"]) == (dtype != "float32")
    assert "[3/3]" in result.stderr  # progress goes to stderr


def test_bench_command_refuses_an_unknown_dtype():
    result = subprocess.run(
        [sys.executable, "-m", "fastpool", "bench", "--quick", "--dtype", "float128"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 2
    assert "float128" in result.stderr and "bfloat16" in result.stderr


def test_time_blocks_times_the_steady_call_not_the_wake_up():
    """A peer whose first call after an idle spell is slow (sleeping worker threads on a
    virtual machine) is timed at its steady cost: the pause between peers is followed by
    untimed calls."""
    import time

    last = [0.0]

    def sleepy():  # 20 ms when 50 ms have passed since the previous call, else 0.1 ms
        start = time.perf_counter()
        if start - last[0] > 0.05:
            time.sleep(0.02)
        while time.perf_counter() - start < 0.0001:
            pass
        last[0] = time.perf_counter()

    times = _bench.time_blocks({"sleepy": sleepy, "other": lambda: None}, blocks=3)
    assert set(times) == {"sleepy", "other"}
    # A ~10 ms block of ~100 calls that began with the 20 ms call would give >= 0.3 ms.
    # (0.1 ms calls measured 0.22 ms with both cores busy compiling, 2026-12-03)
    assert times["sleepy"] < 0.00027, times


def _script(name: str, *args: str) -> subprocess.CompletedProcess:
    """scripts/<name> run with args, its output captured."""
    script = pathlib.Path(__file__).parents[1] / "scripts" / name
    return subprocess.run([sys.executable, str(script), *args], env=this_fastpool_env(),
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _run_script(name: str, *args: str) -> list[str]:
    """The output lines of scripts/<name> run with args, which must succeed."""
    done = _script(name, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize("inputs", [[], ["--inputs", "2"]])
def test_indices_floor_script_quick(inputs):
    """scripts/indices_floor.py (docs/measurements.md) runs, on one input or several in turn,
    and reports its ratios."""
    pytest.importorskip("onnx")
    lines = _run_script("indices_floor.py", "8", "--quick", *inputs)
    assert len(lines) == 4, lines  # three layers and the geometric means
    assert all(" 8x" in line and "i/(v+w)" in line for line in lines[:3]), lines
    turn = ", 2 inputs in turn" if inputs else ""
    assert lines[-1].startswith(f"batch 8{turn}, geometric means: i/v "), lines


def test_indices_floor_script_rejects_a_bad_count():
    """--inputs without a whole number >= 1 stops with a message, not a traceback."""
    done = _script("indices_floor.py", "8", "--inputs", "0")
    assert done.returncode != 0
    assert "--inputs needs a whole number" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_rows_first_indices_script_quick():
    """scripts/rows_first_indices.py (docs/measurements.md) runs: its prototype gives
    fastpool's values and Indices on data with and without ties (else it stops), and it
    reports its ratios."""
    lines = _run_script("rows_first_indices.py", "--quick")
    assert len(lines) == 3, lines  # two inputs and the geometric means
    assert all("prototype/i" in line for line in lines[:2]), lines
    assert lines[-1].startswith("geometric means: prototype/i "), lines


def test_extra_indices_script_one_shape():
    """scripts/extra_indices.py (docs/measurements.md) runs on one extra shape: it checks
    fastpool's values and Indices against onnxruntime's (else it stops), and reports the
    ratios."""
    pytest.importorskip("onnxruntime")
    lines = _run_script("extra_indices.py", "k13x13")
    assert len(lines) == 1, lines
    assert lines[0].startswith("extra 1x256x13x13 k13x13"), lines
    assert "Indices/values" in lines[0] and "Indices/onnxruntime" in lines[0], lines


def test_ab_kernels_script_quick():
    """scripts/ab_kernels.py (docs/measurements.md) runs with this tree as both versions, each
    in processes of its own timed against onnxruntime: outputs compared, ratio reported."""
    pytest.importorskip("onnxruntime")
    root = str(pathlib.Path(__file__).parents[1])
    done = _script("ab_kernels.py", root, root, "inception_v1 1x64x112x112", "--indices",
                   "--quick")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2, lines  # the one case and the geometric mean
    assert lines[0].startswith("inception_v1 1x64x112x112"), lines
    assert " onnxruntime " in lines[0] and " new/old " in lines[0], lines
    assert lines[1].startswith("1 cases, geometric mean new/old "), lines
    # two rounds, the trees' processes alternating, each pinned to one CPU
    rounds = [line.split(" (")[0] for line in done.stderr.splitlines()
              if line.startswith("round ")]  # fmt: skip
    assert rounds == ["round 1/2: old", "round 1/2: new", "round 2/2: new", "round 2/2: old"]
    assert all(line.endswith(f"CPUs [{sorted(os.sched_getaffinity(0))[-1]}]")
               for line in done.stderr.splitlines() if line.startswith("round "))  # fmt: skip


def test_ab_kernels_script_quick_same_process():
    """scripts/ab_kernels.py --same-process: both trees imported into one process and timed
    directly against each other."""
    root = str(pathlib.Path(__file__).parents[1])
    lines = _run_script("ab_kernels.py", root, root, "inception_v1 1x64x112x112", "--indices",
                        "--quick", "--same-process")  # fmt: skip
    assert len(lines) == 2, lines
    assert lines[0].startswith("inception_v1 1x64x112x112") and "new/old" in lines[0], lines
    assert " onnxruntime " not in lines[0], lines
    assert lines[1].startswith("1 cases, geometric mean new/old "), lines


@pytest.mark.parametrize("mode", [[], ["--same-process"]])
def test_ab_kernels_script_stops_on_different_outputs(tmp_path, mode):
    """A version whose outputs differ from the other's stops the script with a message: the
    two versions are really compared (here a stand-in max_pool that returns zeros), in their
    own processes or in one."""
    if not mode:
        pytest.importorskip("onnxruntime")
    package = tmp_path / "fastpool"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import numpy as np\n\n\n"
        "def max_pool(x, return_indices=False, **attrs):\n"
        "    y = np.zeros(1, dtype=x.dtype)\n"
        "    return (y, np.zeros(1, dtype=np.int64)) if return_indices else y\n"
    )
    root = str(pathlib.Path(__file__).parents[1])
    done = _script("ab_kernels.py", str(tmp_path), root, "inception_v1 1x64x112x112", "--quick",
                   *mode)  # fmt: skip
    assert done.returncode != 0
    assert "old and new differ on inception_v1 1x64x112x112" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_global_floor_script_quick():
    """scripts/global_floor.py (docs/measurements.md) runs, checks its floor loop against numpy
    and reports its ratios."""
    lines = _run_script("global_floor.py", "--quick")
    assert len(lines) == 3, lines  # two inputs and the geometric means
    assert all("floor/np" in line and "fp/floor" in line for line in lines[:2]), lines
    assert " threads, geometric means: fp/np " in lines[-1], lines


def test_global_peers_script_quick():
    """scripts/global_peers.py (docs/measurements.md) runs, checks numpy's outputs (and
    onnxruntime's, when installed) against fastpool's and reports the ratios of both
    operators."""
    lines = _run_script("global_peers.py", "--quick")
    assert len(lines) == 5, lines  # two inputs, two operators each, and the means
    assert [line.split()[:2] for line in lines[:4]] == [
        ["1x64x56x56", "max"], ["1x64x56x56", "lp2"], ["2x32x28x28", "max"],
        ["2x32x28x28", "lp2"],
    ], lines  # fmt: skip
    assert all("fp/np " in line for line in lines[:4]), lines
    assert lines[-1].startswith("geometric means: max fp/np "), lines
    assert "lp2 fp/np " in lines[-1], lines
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return  # (the script needs both for its onnxruntime peer)
    assert all("fp/ort " in line for line in lines[:4]), lines
    assert "max fp/ort " in lines[-1] and "lp2 fp/ort " in lines[-1], lines


def test_large_inputs_script_quick():
    """scripts/large_inputs.py (docs/measurements.md) runs, finds one thread giving the same
    results as all of them, and reports its ratios, with and without Indices."""
    lines = _run_script("large_inputs.py", "--quick")
    assert len(lines) == 5, lines  # two inputs, each with and without Indices, and the means
    assert [line.split()[0] for line in lines[:4]] == ["2x16x56x56"] * 4, lines
    assert [" indices " in line for line in lines[:4]] == [False, True] * 2, lines
    assert all("fp/copy" in line and "one/fp" in line for line in lines[:4]), lines
    assert all("copy one/all" in line for line in lines), lines
    assert " threads, geometric means: fp/copy " in lines[-1], lines


def test_nan_check_cost_script_quick():
    """scripts/nan_check_cost.py (docs/measurements.md) runs, finds the kernel without the NaN
    and -0.0 check giving the same values on data without either, and reports its ratios."""
    pytest.importorskip("onnx")
    lines = _run_script("nan_check_cost.py", "--quick")
    assert len(lines) == 4, lines  # three layers and the geometric means
    assert all(" 1x" in line and "none/check" in line for line in lines[:3]), lines
    assert lines[-1].startswith("batch 1, geometric means: none/check "), lines


def test_special_values_cost_script_quick():
    """scripts/special_values_cost.py (docs/measurements.md) runs, channels first and last,
    finds fastpool giving the reference's outputs on data with a -0.0 or a NaN in every
    plane, and reports its ratios (against onnxruntime too when it is installed)."""
    pytest.importorskip("onnx")
    for layout in ("NCHW", "NHWC"):
        layout_flag = ["--nhwc"] if layout == "NHWC" else []
        lines = _run_script("special_values_cost.py", "--quick", *layout_flag)
        assert len(lines) == 4, lines  # three layers and the geometric means
        assert all(" 1x" in line and " zero_i " in line and " nan_i " in line for line in lines[:3])
        assert lines[-1].startswith(f"batch 1, {layout}, geometric means (share of clean): zero ")
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            continue
        assert all(" zero/ort " in line for line in lines), lines


def test_fresh_outputs_script_quick():
    """scripts/fresh_outputs.py (docs/measurements.md) runs its layer in a process of its own,
    finds out= giving the same outputs as new arrays, and reports its ratios."""
    lines = _run_script("fresh_outputs.py", "--quick", "--inputs", "2")
    assert len(lines) == 3, lines  # values, Indices, and their ratio
    assert lines[0].startswith("2x16x56x56 k3x3 values  fresh "), lines
    assert lines[1].startswith("2x16x56x56 k3x3 indices fresh "), lines
    assert all("faults/call" in line and "fresh/out= " in line for line in lines[:2]), lines
    assert lines[2].startswith("2x16x56x56 k3x3 indices/values: fresh "), lines


def test_fresh_outputs_script_rejects_bad_arguments():
    """A bad --inputs or an unknown argument stops with a message, not a traceback."""
    for args, message in [(["--inputs", "x"], "needs a whole number >= 1, got 'x'"),
                          (["--inputs", "0"], "needs a whole number >= 1, got '0'"),
                          (["--fast"], "unrecognized arguments: --fast")]:  # fmt: skip
        done = _script("fresh_outputs.py", *args)
        assert done.returncode != 0
        assert message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr, done.stderr


def test_small_calls_script_quick():
    """scripts/small_calls.py (docs/measurements.md) runs, with this tree as the tree to A/B
    against: every case gets a line with its call, its kernel entry and the two trees' ratio."""
    root = pathlib.Path(__file__).parents[1]
    lines = _run_script("small_calls.py", "--quick", "--against", str(root))
    assert len(lines) == 9, lines
    assert all(" us  kernel entry " in line and " new/old " in line for line in lines), lines


def test_small_calls_script_stops_on_different_outputs(tmp_path):
    """An A/B tree whose Python side gives other outputs stops the script with a message."""
    source = (pathlib.Path(__file__).parents[1] / "fastpool" / "_api.py").read_text()
    returned = "    return (y, indices) if plan.return_indices else y\n"
    assert returned in source
    (tmp_path / "fastpool").mkdir()
    (tmp_path / "fastpool" / "_api.py").write_text(
        source.replace(returned, "    y[...] = 0\n" + returned)
    )
    done = _script("small_calls.py", "--quick", "--against", str(tmp_path))
    assert done.returncode != 0 and "outputs differ" in done.stderr, done.stderr[-2000:]
    missing = _script("small_calls.py", "--quick", "--against", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no " in missing.stderr
