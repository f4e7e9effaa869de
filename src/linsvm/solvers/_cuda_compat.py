"""What numba-cuda needs before it runs linsvm's kernels, where it falls short.

**NumPy 2.5.** numba-cuda 0.30.4 registers ``np.row_stack`` among its array functions without
asking whether NumPy still has it; NumPy 2.5 removed that alias of ``np.vstack``, so there the
CUDA target fails at its first kernel compile (``AttributeError: module 'numpy' has no
attribute 'row_stack'`` from ``numba/cuda/np/arrayobj.py``). pip's resolver avoids the pair on
a fresh environment (numba 0.68.1 bounds NumPy below 2.5), but curated GPU images ship numba
0.68.0 with NumPy 2.5. ``prepare_numba_cuda`` gives NumPy its alias back, which it had for
twenty years: code written for either NumPy sees what it expects, and no other name is touched.

**The simulator's shared arrays.** Under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``,
the tests' GPU where there is none) a block's threads are Python threads, and a
``cuda.shared.array`` is made by the first thread that asks for it, looked up and stored
without a lock: two threads asking at once each make their own, and the block's threads then
work on different "shared" memory for the whole launch (seen with a short GIL switch
interval: one thread read another's step as garbage, and the GPU solver's w drifted from
sum_i beta_i x_i in one run in ten). ``prepare_simulator`` makes the lookup and the store one
step under a lock; a GPU is not concerned.
"""

from __future__ import annotations

import sys
import threading

import numpy as np


def prepare_numba_cuda() -> None:
    """Restore ``numpy.row_stack`` (an alias of ``numpy.vstack``) where NumPy removed it.
    Idempotent; call before anything imports ``numba.cuda``."""
    if "row_stack" not in np.__dict__:
        setattr(np, "row_stack", np.vstack)  # noqa: B010 (NumPy 2.5 has no such name)


_shared_lock = threading.Lock()


def prepare_simulator() -> None:
    """Shared arrays of numba-cuda's simulator made under a lock (the module's note).
    Idempotent; a no-op where the simulator's class is not the one this was written for."""
    try:
        from numba.core import types
        from numba.cuda.simulator.kernelapi import FakeCUDAShared
        from numba.np import numpy_support
    except ImportError:
        return
    if getattr(FakeCUDAShared.array, "_linsvm_locked", False):
        return
    original = FakeCUDAShared.array

    def array(self, shape, dtype, alignment=None):
        allocations = getattr(self, "_allocations", None)
        if alignment is not None or shape == 0 or not isinstance(allocations, dict):
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        frame = sys._getframe(1)  # (the simulator's key: the line that asks)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with _shared_lock:
            made = allocations.get(caller)
            if made is None:
                made = allocations[caller] = np.empty(shape, dtype)
        return made

    array._linsvm_locked = True
    FakeCUDAShared.array = array
