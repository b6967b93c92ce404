"""Importing fastpool compiles nothing; kernels compile on first use and land in the disk cache."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest


def run_python(code: str, timeout: float = 600) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_compiles_nothing():
    out = run_python(
        """
        import numba
        import fastpool
        from fastpool import _activation, _lp_kernels, _max_kernels
        kernels = [
            f for module in (_max_kernels, _lp_kernels, _activation) for f in vars(module).values()
            if isinstance(f, numba.core.registry.CPUDispatcher)
        ]
        print(len(kernels), sum(len(k.signatures) for k in kernels))
        """
    )
    n_kernels, n_compiled = map(int, out.split())
    assert n_kernels >= 8
    assert n_compiled == 0


def test_kernels_are_cached_on_disk():
    """Every kernel entry a call ran has its index file in numba's cache directory."""
    out = run_python(
        """
        import numba, numpy as np
        import fastpool
        from fastpool import _max_kernels
        fastpool.max_pool(np.zeros((1, 1, 4, 4), np.float32), [2, 2])
        ran = [name for name, f in vars(_max_kernels).items()
               if isinstance(f, numba.core.registry.CPUDispatcher) and f.signatures]
        print(_max_kernels.max_pool_serial.stats.cache_path, *ran)
        """
    )
    cache_path, *ran = out.split()
    assert ran
    for name in ran:
        assert list(pathlib.Path(cache_path).glob(f"_max_kernels.{name}-*.nbi")), name


def test_tasks_kernels_compile_once_per_dtype():
    """The kernels that the entries call (each of which takes minutes to compile) have one
    compiled version per dtype in the disk cache: every call passes the same argument types,
    and no literal integer, for which numba would compile the kernel again (a 1 and a 0
    passed as literals made four versions of _planar_tasks per dtype, 4-5 minutes each, on
    a 2-core AMD EPYC Zen 3). numba writes a callee's versions to the cache index as it
    compiles them; the warmup's MaxPool steps reach every call of these kernels, for float32
    here (a cold cache compiles them first)."""
    out = run_python(
        """
        import json
        from fastpool import _max_kernels, _warmup
        labels = [step[0] for step in _warmup._steps()]
        _warmup._run_steps([labels.index("MaxPool float32 serial"),
                            labels.index("MaxPool float32 parallel")], None)
        found = {}
        for name in ("_planar_tasks", "_volume_tasks", "_volume_indices_tasks",
                     "_channels_last_tasks", "_max_pool_tasks"):
            index = getattr(_max_kernels, name)._cache._cache_file._load_index()
            found[name] = sorted({str(key[0]) for key in index})
        print(json.dumps(found))
        """,
        timeout=1800,  # (a cold cache: 8 min alone on a 2-core Zen 3, more beside other tests)
    )
    for name, signatures in json.loads(out).items():
        assert signatures, name
        assert not [s for s in signatures if "Literal" in s], (name, signatures)
        # one version per type of x (the first argument); float16 and bfloat16 share uint16
        first_arguments = [s.split("), ")[0] for s in signatures]
        assert len(first_arguments) == len(set(first_arguments)), (name, signatures)
        assert any("float32" in first for first in first_arguments), (name, signatures)


@pytest.mark.parametrize("jobs", [1, 2])
def test_warmup_reaches_every_kernel_entry(jobs):
    """Every kernel entry has a compiled signature in the calling process afterwards; with
    jobs=2, child processes compile into the disk cache and the caller loads from it."""
    out = run_python(
        f"""
        import io, numba
        import fastpool
        from fastpool import _activation, _lp_kernels, _max_kernels
        log = io.StringIO()
        steps = fastpool.warmup(file=log, jobs={jobs})
        entries = [
            (name, f) for module in (_max_kernels, _lp_kernels, _activation)
            for name, f in vars(module).items()
            if isinstance(f, numba.core.registry.CPUDispatcher) and not name.startswith("_")
        ]
        missing = [name for name, f in entries if not f.signatures]
        text = log.getvalue()
        print(steps, len(entries), len(missing), text.count("warm:"), text.count("/33] "),
              text.count("loaded here: 33 steps"), int(fastpool._config.cache_lock_available),
              missing)
        """
    )
    steps, n_entries, n_missing, summary, step_lines, loaded, lock = map(int, out.split()[:7])
    assert steps == 33 and n_entries >= 10 and summary == 1
    assert step_lines == 33  # one progress line per step, from the children with jobs=2
    # children only when a file lock keeps them from damaging the shared cache
    assert loaded == (jobs > 1 and lock == 1)
    if sys.platform != "win32":
        assert lock == 1
    assert n_missing == 0, out


def test_warmup_jobs_must_be_positive():
    import fastpool

    for jobs in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="jobs"):
            fastpool.warmup(jobs=jobs)
    done = subprocess.run([sys.executable, "-m", "fastpool", "warmup", "--jobs", "0"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "--jobs" in done.stderr
