"""fastpool: Numba-JIT CPU kernels for the ONNX max-pooling operators.

Importing fastpool compiles nothing: each kernel compiles on its first use and is cached on
disk, so later processes load it instead; ``fastpool.warmup()`` (or ``python -m fastpool warmup``)
compiles them all ahead of time.
"""

from fastpool._api import global_lp_pool, global_max_pool, max_pool, pool_output_shape
from fastpool._warmup import warmup

__all__ = ["global_lp_pool", "global_max_pool", "max_pool", "pool_output_shape", "warmup"]
__version__ = "0.1.0"
