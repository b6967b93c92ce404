"""numba compilation flags, in one place (CI greps the kernels for hard-coded fastmath), and
the on-disk kernel cache made safe for processes that fill it at once.

Only reassociation is allowed: it lets LLVM vectorise float sums by reordering them, which
changes a sum by rounding only. Flags that assume no NaN or infinity never appear: NaN must
propagate.
"""

import contextlib
import hashlib
import os
import threading
import warnings

from numba import njit
from numba.core import sigutils

try:
    import fcntl
except ImportError:  # Windows: no lock, so ``warmup`` compiles in one process there
    fcntl = None

SUM_FASTMATH = {"reassoc"}


def kernel(counted=True, **options):
    """``numba.njit(cache=True, nogil=True, **options)``, or without the on-disk cache (and
    one warning for the whole package) when numba finds nowhere to write it: a read-only
    install and no writable user cache directory must not stop ``import fastpool``.

    ``counted=False`` compiles the function without numba's reference counting (its NRT),
    for kernels compiled on their own that allocate no array and return none: the caller
    holds the arrays for the whole call. Counted, each call counts every array argument
    up on entry and down on return with locked instructions, which wait for the stores
    before them to drain (7-11% of the serial kernel's samples on 3x3/2 windows over 14x14
    planes, where such a kernel is called for every group of planes; the time saved was
    within the noise of separate processes: docs/measurements.md)."""
    if not counted:
        options["_nrt"] = False

    def decorate(function):
        global _warned
        try:
            dispatcher = njit(cache=True, nogil=True, **options)(function)
        except RuntimeError as error:  # "cannot cache function ...: no locator available"
            if not _warned:
                _warned = True
                warnings.warn(
                    f"fastpool finds no writable place for numba's kernel cache ({error}); "
                    "kernels will be compiled in memory in each process. Set "
                    "NUMBA_CACHE_DIR to a writable directory to cache them.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return njit(nogil=True, **options)(function)
        _guard_cache(dispatcher)
        return dispatcher

    return decorate


_warned = False


def disk_cache_usable() -> bool:
    """Whether the kernels were created with numba's on-disk cache."""
    return not _warned


# numba adds an entry to a function's cache by reading its index, choosing the first free
# data file name and writing both back. Two processes doing so at once can lose an entry, or
# leave one signature's entry pointing at another signature's machine code (seen in CI, when
# the warmup's processes compiled the same helper; a call then fails to type, or runs the
# wrong code on its arguments). A lock file in the cache directory makes each read and write
# of fastpool's cache whole.
CACHE_LOCK_FILE = "fastpool-cache.lock"
cache_lock_available = fcntl is not None
_lock_in_process = threading.RLock()
_lock_depth = 0
_warned_mismatch = False


@contextlib.contextmanager
def _cache_locked(directory: str):
    """Hold the cache directory's lock file (taken once per process; reentrant)."""
    global _lock_depth
    with _lock_in_process:
        handle = None
        if _lock_depth == 0 and fcntl is not None:
            try:
                handle = open(os.path.join(directory, CACHE_LOCK_FILE), "ab")
                fcntl.flock(handle, fcntl.LOCK_EX)
            except OSError:  # no lock rather than no cache: numba reports its own errors
                if handle is not None:
                    handle.close()
                handle = None
        _lock_depth += 1
        try:
            yield
        finally:
            _lock_depth -= 1
            if handle is not None:
                handle.close()  # closing the file releases the lock


# The modules whose code or constants the compiled kernels hold. numba keys a kernel's cache
# entries to a hash of the kernel's own file only: an upgrade that changed, say, _vectors.py
# alone would otherwise leave every kernel running its old machine code (pip leaves the
# cache files in __pycache__ behind). Each kernel's entries are keyed to all of these too.
KERNEL_SOURCES = ("_activation.py", "_attrs.py", "_config.py", "_lp_kernels.py",
                  "_max_kernels.py", "_ordering.py", "_prefetch.py", "_vectors.py")  # fmt: skip


def _kernel_sources_stamp() -> bytes | None:
    """A hash of the KERNEL_SOURCES (None if one cannot be read)."""
    digest = hashlib.sha256()
    try:
        for name in KERNEL_SOURCES:
            with open(os.path.join(os.path.dirname(__file__), name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read() + b"\0")
    except OSError:
        return None
    return digest.digest()


_KERNEL_SOURCES_STAMP = _kernel_sources_stamp()


def _guard_cache(dispatcher) -> None:
    """Wrap the dispatcher's cache: its entries keyed to all the KERNEL_SOURCES, loads and
    saves under the lock, and a loaded entry whose signature is not the one asked for (a
    cache filled without the lock) is refused, so that numba compiles it again and
    overwrites the entry."""
    cache = getattr(dispatcher, "_cache", None)
    directory = getattr(cache, "cache_path", None)
    if directory is None:  # a numba without these names: its cache as it is
        return
    index = getattr(cache, "_cache_file", None)
    if _KERNEL_SOURCES_STAMP is not None and hasattr(index, "_source_stamp"):
        # (numba saves this stamp in the index, and drops an index whose stamp differs:
        # that of the kernel's own file, to which the sources' is added)
        own = repr(index._source_stamp).encode()
        index._source_stamp = hashlib.sha256(own + _KERNEL_SOURCES_STAMP).digest()
    load_overload, save_overload = cache.load_overload, cache.save_overload

    def locked_load(sig, target_context):
        global _warned_mismatch
        with _cache_locked(directory):
            result = load_overload(sig, target_context)
        if result is None:
            return None
        wanted = tuple(sigutils.normalize_signature(sig)[0])
        if tuple(result.signature.args) == wanted:
            return result
        if not _warned_mismatch:
            _warned_mismatch = True
            warnings.warn(
                f"fastpool found a wrong entry in numba's kernel cache ({dispatcher.__name__} "
                f"for {wanted}); compiling it again",
                RuntimeWarning,
                stacklevel=2,
            )
        return None

    def locked_save(sig, data):
        with _cache_locked(directory):
            return save_overload(sig, data)

    cache.load_overload, cache.save_overload = locked_load, locked_save
