"""numba compilation flags, in one place (CI greps the kernels for hard-coded fastmath).

Only reassociation is allowed: it lets LLVM vectorise float sums by reordering them, which
changes a sum by rounding only. Flags that assume no NaN or infinity never appear: NaN must
propagate.
"""

import warnings

from numba import njit

SUM_FASTMATH = {"reassoc"}


def kernel(**options):
    """``numba.njit(cache=True, nogil=True, **options)``, or without the on-disk cache (and
    one warning for the whole package) when numba finds nowhere to write it: a read-only
    install and no writable user cache directory must not stop ``import fastpool``."""

    def decorate(function):
        global _warned
        try:
            return njit(cache=True, nogil=True, **options)(function)
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

    return decorate


_warned = False


def disk_cache_usable() -> bool:
    """Whether the kernels were created with numba's on-disk cache."""
    return not _warned
