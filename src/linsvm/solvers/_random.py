"""A small random generator for kernels: splitmix64 on a one-element uint64 state array.

Each solver call owns its state array, so runs are reproducible from a seed and kernels running
in different threads never share a generator (Numba's np.random state is per-thread global).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def new_state(seed: int) -> np.ndarray:
    """A generator state for ``seed`` (any Python int)."""
    return np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


def numpy_generator(seed: int, *streams: int) -> np.random.Generator:
    """NumPy's generator of ``seed`` (any int the solvers take: NumPy's takes none below 0,
    so the seed's 64 bits as unsigned, as ``new_state``), ``streams`` mixed in."""
    seed = int(seed) % 2**64  # (a NumPy int64's % 2**64 overflows)
    return np.random.default_rng([seed, *streams] if streams else seed)


@njit(cache=True, nogil=True, inline="always")
def next_u64(state):
    z = state[0] + _GOLDEN
    state[0] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def rand_below(state, n):
    """A uniform integer in [0, n) for 0 < n < 2**32.

    Lemire's multiply-shift instead of a modulo: no division in the shuffles' inner loop; the
    bias is below n / 2**32.
    """
    return np.int64(((next_u64(state) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


# A typed 0 for `shuffle`'s start: a literal 0 (and the literal types type inference tries
# before it settles) would each compile it once more.
FIRST = np.int64(0)


@njit(cache=True, nogil=True)
def shuffle(a, start, stop, state) -> None:
    """Fisher-Yates shuffle of a[start:stop] in place."""
    for k in range(stop - 1, start, -1):
        j = start + rand_below(state, k - start + 1)
        t = a[k]
        a[k] = a[j]
        a[j] = t
