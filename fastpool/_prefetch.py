"""A software prefetch for the kernels, as a numba intrinsic.

A loop that streams from memory is fed by the processor's own prefetchers and by the loads
its out-of-order window holds. A loop of several operations per loaded vector holds fewer
bytes in that window, so fewer loads are under way at once: on an Intel Xeon (2026-12-02),
GlobalMaxPool's float loop (two reductions a vector) read 102 MB at 0.81-0.84 of the speed
of a loop of one reduction. A hint for the line some kilobytes ahead puts the loads back in
flight, whatever the loop does with the data: with it, the same loop took 0.88-0.90 of its
time without, on par with the loop of one.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

# Bytes in a cache line on the processors we run on (x86-64 and arm64 servers): one hint a line.
CACHE_LINE = 64


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array[index]`` (a 1-D C-contiguous array, any integer index) will be read
    soon. It reads nothing and never faults, so the index may lie past the array's end."""
    if not isinstance(array, types.Array) or array.ndim != 1:
        return None
    if not isinstance(index, types.Integer):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        offset = context.cast(builder, args[1], sig.args[1], types.intp)
        # a plain getelementptr (not inbounds): an address past the end is allowed
        address = builder.gep(view.data, [offset])
        byte_pointer = builder.bitcast(address, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        hint = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer.type],
            ir.FunctionType(ir.VoidType(), [byte_pointer.type, i32, i32, i32]),
        )  # fmt: skip
        # read (0), keep in all cache levels (locality 3), data cache (1)
        builder.call(hint, [byte_pointer, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return signature, codegen
