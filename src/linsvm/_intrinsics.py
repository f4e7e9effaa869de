"""Low-level helpers for kernels that Numba does not expose.

``prefetch(array, index)``: LLVM's prefetch hint for the cache line holding ``array[index]``.
DCD visits rows in a random order, so each visit would otherwise wait on memory for the row's
record and its CSR slice; asking for rows a few visits ahead hides most of that latency.
A hint only: it never faults and has no effect on results.
"""

from __future__ import annotations

import ctypes
import time

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _has_thread_calls() -> bool:
    """Whether this system has the C functions ``yield_core`` and ``monotonic_seconds`` call,
    ``sched_yield`` and ``clock_gettime`` (POSIX: Linux, macOS, the BSDs; not Windows, where a
    kernel calling them would not compile, or would abort the process when loaded)."""
    if not hasattr(time, "CLOCK_MONOTONIC"):
        return False
    try:
        process = ctypes.CDLL(None)  # (Windows: a TypeError)
    except (OSError, TypeError):
        return False
    return hasattr(process, "sched_yield") and hasattr(process, "clock_gettime")


# Whether the kernels of the threaded dual schemes can run here (they yield and read the clock);
# where they cannot, the dual solves run on one thread.
THREAD_CALLS = _has_thread_calls()


def _call(builder, name: str, return_type, args: list):
    """Call the function ``name`` (an LLVM intrinsic or a C library function) on ``args``,
    declaring it in the module being built if it is not declared yet."""
    fn_type = ir.FunctionType(return_type, [arg.type for arg in args])
    fn = cgutils.get_or_insert_function(builder.module, fn_type, name)
    return builder.call(fn, args)


def _on_item(emit):
    """The codegen of an intrinsic (array, index, *rest) that works on array[index]:
    ``emit(builder, pointer, *rest)`` with the pointer to that element (no wraparound: the
    callers' indices are never negative); its value is returned, None as void."""

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = cgutils.get_item_pointer(
            context, builder, signature.args[0], array, [args[1]], wraparound=False
        )
        result = emit(builder, pointer, *args[2:])
        return context.get_dummy_value() if result is None else result

    return codegen


def _call_without_arguments(name: str, return_type, x86_only: bool = False):
    """The codegen of an intrinsic () -> None that calls ``name`` (on x86 only: elsewhere
    nothing)."""

    def codegen(context, builder, signature, args):
        triple = builder.module.triple
        if not x86_only or "x86" in triple or "i686" in triple:
            _call(builder, name, return_type, [])
        return context.get_dummy_value()

    return codegen


def _is_vector_of(array, dtype) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == dtype


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array[index]`` (a 1-D array) will be read soon (read, high locality)."""
    if not (isinstance(array, types.Array) and array.ndim == 1):
        return None
    if not isinstance(index, types.Integer):
        return None

    def emit(builder, pointer):
        address = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        # (address, rw = 0: read, locality = 3: keep in all cache levels, 1: data cache)
        _call(builder, "llvm.prefetch.p0", ir.VoidType(), [address, i32(0), i32(3), i32(1)])

    return types.void(array, index), _on_item(emit)


# ----------------------------------------------------------------------------- threads
#
# What threads that meet inside compiled code need (the threaded dual coordinate descent's
# barriers and shared weights): atomic operations on int64 counters and float64 weights, a
# spin-wait hint, and giving the core back to the operating system, so that more threads than
# cores (oversubscribed) still progress.


@intrinsic
def atomic_fetch_add(typingctx, array, index, value):
    """old = array[index]; array[index] += value, as one atomic step (sequentially
    consistent: it also orders every plain read and write around it). 1-D int64 arrays."""
    if not (_is_vector_of(array, types.int64) and isinstance(index, types.Integer)):
        return None
    return types.int64(array, index, types.int64), _on_item(
        lambda builder, pointer, value: builder.atomic_rmw("add", pointer, value, "seq_cst")
    )


@intrinsic
def atomic_load(typingctx, array, index):
    """array[index] read atomically (sequentially consistent). 1-D int64 arrays."""
    if not (_is_vector_of(array, types.int64) and isinstance(index, types.Integer)):
        return None
    return types.int64(array, index), _on_item(
        lambda builder, pointer: builder.load_atomic(pointer, "seq_cst", 8)
    )


@intrinsic
def atomic_store(typingctx, array, index, value):
    """array[index] = value written atomically (sequentially consistent). 1-D int64 arrays."""
    if not (_is_vector_of(array, types.int64) and isinstance(index, types.Integer)):
        return None
    return types.void(array, index, types.int64), _on_item(
        lambda builder, pointer, value: builder.store_atomic(value, pointer, "seq_cst", 8)
    )


@intrinsic
def atomic_add_float(typingctx, array, index, value):
    """array[index] += value as one atomic step (1-D float64 arrays; no ordering of the memory
    operations around it: the threads' barriers order those). On x86 a compare-and-swap loop:
    about ten times a plain add, uncontended, and nothing is lost when threads collide."""
    if not (_is_vector_of(array, types.float64) and isinstance(index, types.Integer)):
        return None
    return types.void(array, index, types.float64), _on_item(
        lambda builder, pointer, value: builder.atomic_rmw("fadd", pointer, value, "monotonic")
    )


@intrinsic
def spin_pause(typingctx):
    """The processor's spin-wait hint (x86 ``pause``; nothing elsewhere)."""
    pause = _call_without_arguments("llvm.x86.sse2.pause", ir.VoidType(), x86_only=True)
    return types.void(), pause


@intrinsic
def yield_core(typingctx):
    """Give the core back to the operating system (POSIX ``sched_yield``)."""
    return types.void(), _call_without_arguments("sched_yield", ir.IntType(32))


@intrinsic
def monotonic_seconds(typingctx):
    """The monotonic clock in seconds (POSIX ``clock_gettime(CLOCK_MONOTONIC)``, a 64-bit
    ``timespec``), for kernels that time parts of their own work."""

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        f64 = ir.DoubleType()
        spec = cgutils.alloca_once(builder, ir.LiteralStructType([i64, i64]))
        # (the clock's number as this platform's Python knows it: 1 on Linux, 6 on macOS)
        clock = ir.Constant(ir.IntType(32), time.CLOCK_MONOTONIC)
        _call(builder, "clock_gettime", ir.IntType(32),
              [clock, builder.bitcast(spec, ir.IntType(8).as_pointer())])  # fmt: skip
        seconds = builder.load(cgutils.gep_inbounds(builder, spec, 0, 0))
        nanoseconds = builder.load(cgutils.gep_inbounds(builder, spec, 0, 1))
        return builder.fadd(
            builder.sitofp(seconds, f64),
            builder.fmul(builder.sitofp(nanoseconds, f64), ir.Constant(f64, 1e-9)),
        )

    return types.float64(), codegen


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
