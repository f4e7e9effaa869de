"""Low-level helpers for kernels that Numba does not expose.

``prefetch(array, index)``: LLVM's prefetch hint for the cache line holding ``array[index]``.
DCD visits rows in a random order, so each visit would otherwise wait on memory for the row's
record and its CSR slice; asking for rows a few visits ahead hides most of that latency.
A hint only: it never faults and has no effect on results.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array[index]`` (a 1-D array) will be read soon (read, high locality)."""
    if not (isinstance(array, types.Array) and array.ndim == 1):
        return None
    if not isinstance(index, types.Integer):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_value, index_value = args
        array_type, _ = signature.args
        arr = context.make_array(array_type)(context, builder, array_value)
        pointer = cgutils.get_item_pointer(
            context, builder, array_type, arr, [index_value], wraparound=False
        )
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn_type = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fn_type, "llvm.prefetch.p0")
        # (address, rw = 0: read, locality = 3: keep in all cache levels, 1: data cache)
        builder.call(fn, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen
