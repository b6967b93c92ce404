"""The on-disk kernel cache can be unusable or damaged: fastpool then compiles in memory,
with at most one warning and never an exception, and computes the same results.

Each case runs in a fresh process in which every warning but fastpool's own is an error.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

CHILD = """
import hashlib, sys, warnings
warnings.filterwarnings("error")  # any other warning fails the run
warnings.filterwarnings("always", message="fastpool ", category=RuntimeWarning)
if sys.argv[1] == "no-locator":  # as with a read-only install and no user cache directory
    import numba.core.caching
    numba.core.caching.CacheImpl._locator_classes = []
import numpy as np
import fastpool
"""

# The workloads use the global operators' kernels: they come from the same decorator and
# are launched by the same function as MaxPool's, and compile in seconds, where MaxPool's
# take minutes each (on the 2-core AMD EPYC machine of 2026-12-01, with MaxPool's kernels
# in the workload, one of these tests took 241 s and the next was still running 13 minutes
# later).
WORK = """
def work(fastpool):  # both kernel files, both layouts
    rng = np.random.default_rng(0)
    parts = []
    for shape, layout in (((2, 3, 9, 8), "NCHW"), ((2, 9, 8, 3), "NHWC")):
        x = rng.standard_normal(shape).astype(np.float32)
        parts += [fastpool.global_max_pool(x, layout=layout),
                  fastpool.global_lp_pool(x, layout=layout)]
    return hashlib.sha256(b"".join(p.tobytes() for p in parts)).hexdigest()


def work_one(fastpool):  # one kernel
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 8)).astype(np.float32)
    return hashlib.sha256(fastpool.global_max_pool(x).tobytes()).hexdigest()
"""


def expected_digest(work: str) -> str:
    import fastpool

    namespace = {"np": np, "hashlib": hashlib}
    exec(WORK, namespace)
    return namespace[work](fastpool)


def run_child(mode: str, cache_dir: pathlib.Path, work: str = "work"):
    """Run a workload of WORK in a fresh process with the given cache directory."""
    code = CHILD + "\n" + WORK + f"\nprint({work}(fastpool))\n"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    done.work = work
    return done


def check(done: subprocess.CompletedProcess, most_warnings: int = 1) -> None:
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("RuntimeWarning: fastpool") <= most_warnings, done.stderr
    assert done.stdout.split()[-1] == expected_digest(done.work)


def test_cache_dir_that_is_a_file(tmp_path):
    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("not a directory")
    check(run_child("plain", not_a_dir))


def test_nowhere_to_write_the_cache(tmp_path):
    done = run_child("no-locator", tmp_path / "unused")
    check(done)
    assert done.stderr.count("RuntimeWarning: fastpool finds no writable place") == 1


def damage(cache_dir: pathlib.Path, how: str) -> int:
    files = [f for f in cache_dir.rglob("*") if f.suffix in (".nbi", ".nbc")]
    for f in files:
        data = f.read_bytes()
        if how == "garbage" or (f.suffix == ".nbi" and how == "index"):
            f.write_bytes(bytes(range(256)) * 4)
        elif how == "truncated" and f.suffix == ".nbc":
            f.write_bytes(data[: len(data) // 2])
    return len(files)


def test_corrupted_cache_files(tmp_path):
    """Each kind of damage to one kernel's files; after the first, every kernel compiles
    in memory, and the whole workload still computes the same results."""
    cache_dir = tmp_path / "cache"
    check(run_child("plain", cache_dir, "work_one"), most_warnings=0)  # fills the cache
    for how, work in (("garbage", "work"), ("truncated", "work_one"),
                      ("index", "work_one")):  # fmt: skip
        assert damage(cache_dir, how) > 0
        done = run_child("plain", cache_dir, work)
        check(done)
        assert done.stderr.count("RuntimeWarning: fastpool could not read") == 1, how


def make_read_only(path: pathlib.Path) -> bool:
    """Make a directory unwritable, even for root when chattr can (the immutable flag)."""
    path.chmod(0o555)
    for child in path.rglob("*"):
        child.chmod(0o555 if child.is_dir() else 0o444)
    if os.geteuid() != 0:
        return True
    done = subprocess.run(["chattr", "-R", "+i", str(path)], capture_output=True)
    return done.returncode == 0


def undo_read_only(path: pathlib.Path) -> None:
    subprocess.run(["chattr", "-R", "-i", str(path)], capture_output=True)
    for child in [path, *path.rglob("*")]:
        child.chmod(0o755)


def test_read_only_cache_dir(tmp_path):
    """A read-only cache directory, empty or filled: results as usual, at most one warning."""
    for filled in (False, True):
        cache_dir = tmp_path / f"cache-{filled}"
        cache_dir.mkdir()
        if filled:
            check(run_child("plain", cache_dir), most_warnings=0)
        read_only = make_read_only(cache_dir)
        try:
            probe = cache_dir / "probe"
            if read_only:  # the directory really refuses writes
                try:
                    probe.write_text("x")
                    read_only = False
                except OSError:
                    pass
            check(run_child("plain", cache_dir))
        finally:
            undo_read_only(cache_dir)
        assert read_only, "could not make a read-only directory on this machine"


# A small kernel made by fastpool's own decorator, so that the tests below take seconds: the
# lock and the signature check wrap every kernel that decorator makes.
TOY = """
import numpy as np
from fastpool._config import kernel


@kernel()
def add_one(x):
    return x + 1


def arguments():
    values = []
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"):
        values.append(np.dtype(name).type(3))
        values += [np.full((2,) * ndim, 3, dtype=name) for ndim in (1, 2, 3)]
    return values
"""

# Widens the window between numba's reading of a cache index and its writing it back, as a
# slow (network) file system would: without fastpool's lock, processes then lose entries or
# point them at other signatures' code on nearly every run.
FILL_TOY = """
import sys, time
from numba.core import caching

read_index = caching.IndexDataCacheFile._load_index


def slow_read_index(self):
    overloads = read_index(self)
    time.sleep(0.05)
    return overloads


caching.IndexDataCacheFile._load_index = slow_read_index
sys.path.insert(0, sys.argv[2])
import toy

# each process compiles signatures of its own, so that none mends another's lost entries
for value in toy.arguments()[int(sys.argv[1]) :: int(sys.argv[3])]:
    toy.add_one(value)
"""

CHECK_TOY = """
import sys, warnings
warnings.filterwarnings("always", message="fastpool ", category=RuntimeWarning)
sys.path.insert(0, sys.argv[1])
import numpy as np
import toy

values = toy.arguments()
wrong = 0
for value in values:
    try:
        result = toy.add_one(value)
        wrong += not (np.shape(result) == np.shape(value) and np.all(result == value + 1))
    except Exception:
        wrong += 1
stats = toy.add_one.stats
print(len(values), sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), wrong)
"""


def run_toy(code: str, tmp_path: pathlib.Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def check_toy(tmp_path: pathlib.Path) -> tuple[list[int], str]:
    """(values, cache hits, cache misses, wrong results) of a fresh process, and its
    standard error."""
    out, err = run_toy(CHECK_TOY, tmp_path, str(tmp_path)).communicate(timeout=300)
    assert "Traceback" not in err, err[-3000:]
    return list(map(int, out.split())), err


def test_processes_filling_the_cache_at_once(tmp_path):
    """Four processes compile one kernel for 12 signatures each into one new cache, on a
    slow file system: afterwards every signature loads from the cache, with its own code."""
    (tmp_path / "toy.py").write_text(TOY)
    fillers = [run_toy(FILL_TOY, tmp_path, str(i), str(tmp_path), "4") for i in range(4)]
    for filler in fillers:
        _, err = filler.communicate(timeout=600)
        assert filler.returncode == 0, err[-3000:]
    (count, hits, misses, wrong), err = check_toy(tmp_path)
    assert count == 48
    assert (hits, misses, wrong) == (48, 0, 0), err[-3000:]
    assert "RuntimeWarning" not in err, err


def test_cache_entry_with_another_signature(tmp_path):
    """Two entries whose machine code was swapped (as a cache filled by racing processes
    without the lock can hold): one warning, each compiled again and right, and the cache
    mended for the next process."""
    (tmp_path / "toy.py").write_text(TOY)
    filler = run_toy(FILL_TOY.replace("0.05", "0"), tmp_path, "0", str(tmp_path), "1")
    _, err = filler.communicate(timeout=600)
    assert filler.returncode == 0, err[-3000:]
    first, second = (next((tmp_path / "cache").rglob(f"*.{n}.nbc")) for n in (1, 2))
    code_of_first = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(code_of_first)
    (count, hits, misses, wrong), err = check_toy(tmp_path)
    assert (count, hits, misses, wrong) == (48, 46, 2, 0), err[-3000:]
    assert err.count("RuntimeWarning: fastpool found a wrong entry") == 1, err
    assert check_toy(tmp_path) == ([48, 48, 0, 0], "")


def test_cache_keyed_to_every_kernel_source(tmp_path):
    """A kernel's cache entries are dropped when any of _config.KERNEL_SOURCES changes, not
    only its own file (numba's own key): on a copy of the package, the toy kernel loads
    every signature from the cache, compiles them all again once _vectors.py changes, and
    loads them again after; a change to a module outside the list keeps them."""
    import fastpool
    from fastpool._config import KERNEL_SOURCES

    package = tmp_path / "package" / "fastpool"
    shutil.copytree(pathlib.Path(fastpool.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (tmp_path / "toy.py").write_text(TOY)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(package.parent))  # fmt: skip

    def run(code: str) -> list[int]:
        # (from tmp_path: from the tests' folder, "-c" would import the package there)
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                              cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)  # fmt: skip
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
        return list(map(int, done.stdout.split()))

    check = CHECK_TOY.replace("import toy", "import toy, fastpool\nassert fastpool.__file__"
                              f".startswith({str(package)!r}), fastpool.__file__")  # fmt: skip
    assert "_vectors.py" in KERNEL_SOURCES and "_bench.py" not in KERNEL_SOURCES
    run(check)  # (fills the cache)
    assert run(check) == [48, 48, 0, 0]
    with open(package / "_bench.py", "a") as source:
        source.write("# not compiled into any kernel\n")
    assert run(check) == [48, 48, 0, 0]
    with open(package / "_vectors.py", "a") as source:
        source.write("# changed\n")
    assert run(check) == [48, 0, 48, 0]
    assert run(check) == [48, 48, 0, 0]
