"""What numba-cuda needs of NumPy before it loads, on the NumPy versions it was not made for.

numba-cuda 0.30.4 registers ``np.row_stack`` among its array functions without asking whether
NumPy still has it; NumPy 2.5 removed that alias of ``np.vstack``, so there the CUDA target
fails at its first kernel compile (``AttributeError: module 'numpy' has no attribute
'row_stack'`` from ``numba/cuda/np/arrayobj.py``). pip's resolver avoids the pair on a fresh
environment (numba 0.68.1 bounds NumPy below 2.5), but curated GPU images ship numba 0.68.0
with NumPy 2.5. ``prepare_numba_cuda`` gives NumPy its alias back, which it had for twenty
years: code written for either NumPy sees what it expects, and no other name is touched.
"""

from __future__ import annotations

import numpy as np


def prepare_numba_cuda() -> None:
    """Restore ``numpy.row_stack`` (an alias of ``numpy.vstack``) where NumPy removed it.
    Idempotent; call before anything imports ``numba.cuda``."""
    if "row_stack" not in np.__dict__:
        setattr(np, "row_stack", np.vstack)  # noqa: B010 (NumPy 2.5 has no such name)
