"""numba compilation flags, in one place (CI greps the kernels for hard-coded fastmath).

Only reassociation is allowed: it lets LLVM vectorise float sums by reordering them, which
changes a sum by rounding only. Flags that assume no NaN or infinity never appear: NaN must
propagate.
"""

SUM_FASTMATH = {"reassoc"}
