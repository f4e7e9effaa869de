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


def _item_pointer(context, builder, array_type, array_value, index_value):
    arr = context.make_array(array_type)(context, builder, array_value)
    return cgutils.get_item_pointer(
        context, builder, array_type, arr, [index_value], wraparound=False
    )


def _call(builder, name: str, return_type, args: list):
    """Call the function ``name`` (an LLVM intrinsic or a C library function) on ``args``,
    declaring it in the module being built if it is not declared yet."""
    fn_type = ir.FunctionType(return_type, [arg.type for arg in args])
    fn = cgutils.get_or_insert_function(builder.module, fn_type, name)
    return builder.call(fn, args)


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
        pointer = _item_pointer(context, builder, signature.args[0], array_value, index_value)
        address = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        # (address, rw = 0: read, locality = 3: keep in all cache levels, 1: data cache)
        _call(builder, "llvm.prefetch.p0", ir.VoidType(), [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


# ----------------------------------------------------------------------------- threads
#
# What threads that meet inside compiled code need (the threaded dual coordinate descent's
# barriers and shared weights): atomic operations on int64 counters and float64 weights, a
# spin-wait hint, and giving the core back to the operating system, so that more threads than
# cores (oversubscribed) still progress.


def _is_int64_vector(array) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.int64


@intrinsic
def atomic_fetch_add(typingctx, array, index, value):
    """old = array[index]; array[index] += value, as one atomic step (sequentially
    consistent: it also orders every plain read and write around it). 1-D int64 arrays."""
    if not (_is_int64_vector(array) and isinstance(index, types.Integer)):
        return None
    sig = types.int64(array, index, types.int64)

    def codegen(context, builder, signature, args):
        array_value, index_value, value_value = args
        pointer = _item_pointer(context, builder, signature.args[0], array_value, index_value)
        return builder.atomic_rmw("add", pointer, value_value, "seq_cst")

    return sig, codegen


@intrinsic
def atomic_load(typingctx, array, index):
    """array[index] read atomically (sequentially consistent). 1-D int64 arrays."""
    if not (_is_int64_vector(array) and isinstance(index, types.Integer)):
        return None
    sig = types.int64(array, index)

    def codegen(context, builder, signature, args):
        array_value, index_value = args
        pointer = _item_pointer(context, builder, signature.args[0], array_value, index_value)
        return builder.load_atomic(pointer, "seq_cst", 8)

    return sig, codegen


@intrinsic
def atomic_store(typingctx, array, index, value):
    """array[index] = value written atomically (sequentially consistent). 1-D int64 arrays."""
    if not (_is_int64_vector(array) and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index, types.int64)

    def codegen(context, builder, signature, args):
        array_value, index_value, value_value = args
        pointer = _item_pointer(context, builder, signature.args[0], array_value, index_value)
        builder.store_atomic(value_value, pointer, "seq_cst", 8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def atomic_add_float(typingctx, array, index, value):
    """array[index] += value as one atomic step (1-D float64 arrays; no ordering of the memory
    operations around it: the threads' barriers order those). On x86 a compare-and-swap loop:
    about ten times a plain add, uncontended, and nothing is lost when threads collide."""
    if not (
        isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.float64
        and isinstance(index, types.Integer)
    ):  # fmt: skip
        return None
    sig = types.void(array, index, types.float64)

    def codegen(context, builder, signature, args):
        array_value, index_value, value_value = args
        pointer = _item_pointer(context, builder, signature.args[0], array_value, index_value)
        builder.atomic_rmw("fadd", pointer, value_value, "monotonic")
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def spin_pause(typingctx):
    """The processor's spin-wait hint (x86 ``pause``; nothing elsewhere)."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        if "x86" in builder.module.triple or "i686" in builder.module.triple:
            _call(builder, "llvm.x86.sse2.pause", ir.VoidType(), [])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def yield_core(typingctx):
    """Give the core back to the operating system (POSIX ``sched_yield``)."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        _call(builder, "sched_yield", ir.IntType(32), [])
        return context.get_dummy_value()

    return sig, codegen


# ----------------------------------------------------------------------------- arithmetic


@intrinsic
def mul_u64(typingctx, a, b):
    """(hi, lo) of the full 128-bit product of two uint64 (one hardware multiply where the
    machine has it, where 32-bit limbs take four)."""
    if not (a == types.uint64 and b == types.uint64):
        return None
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i64, i128 = ir.IntType(64), ir.IntType(128)
        product = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        lo = builder.trunc(product, i64)
        hi = builder.trunc(builder.lshr(product, ir.Constant(i128, 64)), i64)
        return context.make_tuple(builder, signature.return_type, [hi, lo])

    return sig, codegen
