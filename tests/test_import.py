"""Importing fastpool compiles nothing; kernels compile on first use and land in the disk cache."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600
    )
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


def test_warmup_reaches_every_kernel_entry():
    out = run_python(
        """
        import io, numba
        import fastpool
        from fastpool import _activation, _lp_kernels, _max_kernels
        log = io.StringIO()
        steps = fastpool.warmup(file=log)
        entries = [
            (name, f) for module in (_max_kernels, _lp_kernels, _activation)
            for name, f in vars(module).items()
            if isinstance(f, numba.core.registry.CPUDispatcher) and not name.startswith("_")
        ]
        missing = [name for name, f in entries if not f.signatures]
        print(steps, len(entries), len(missing), log.getvalue().count("warm:"), missing)
        """
    )
    steps, n_entries, n_missing, summary = map(int, out.split()[:4])
    assert steps == 33 and n_entries >= 10 and summary == 1
    assert n_missing == 0, out
