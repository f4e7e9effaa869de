"""Plumbing shared by the dual coordinate descent solvers (-s 1, 3, 7, 12, 13).

Each dual solver keeps its own kernel, with its coordinate update inline and readable as its
mathematics; what they share is here: which rows take part (C_i > 0), the active set that
shrinking reduces, the order in which an outer iteration visits it, and prefetching the rows
visited next; and the run between hook calls. Every dual kernel carries its whole state in
arrays (per-row records, w, the active set, a float and an integer state vector whose first
entries are ``I_ACTIVE``, ``I_ITER``, ``I_CONVERGED``, the generator), so a solve can run its
kernel one outer iteration per call, stop, be checkpointed (``snapshot``) and continue
(``restore``) to the same result as one uninterrupted call.

The order (SySCD's "bucketing", docs/architecture.md): the active rows are kept in ascending
order and cut into buckets of ``bucket_size`` neighbours; each outer iteration visits random
groups of ``buckets_per_group`` buckets, rows shuffled within a group. Random enough to
converge like a full permutation, but it streams through the CSR arrays instead of jumping row
by row. ``bucket_size=1, buckets_per_group=1`` is a plain random permutation (LIBLINEAR's).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from .._intrinsics import prefetch
from ..errors import InvalidInputError
from ..sparse_rows import rows_dot
from ._base import (
    CONVERGED,
    INTERRUPTED,
    MAX_ITER,
    Hook,
    Progress,
    Subproblem,
    copy_state,
    drive,
)
from ._random import new_state, rand_below, shuffle

# The first entries of every dual kernel's integer state: the number of active rows (the
# first entries of ``active``), the outer iterations done, and 1 once the stopping rule is met.
I_ACTIVE, I_ITER, I_CONVERGED = 0, 1, 2

DEFAULT_BUCKET_SIZE = 16
DEFAULT_BUCKETS_PER_GROUP = 16
# Above this excess correlation of neighbouring rows (see neighbour_correlation_excess), the
# automatic order falls back to a plain random permutation. Measured: w8a's file order 0.33
# (buckets need 2-4x the iterations), a9a 0.013, ijcnn1 0.015, reuters 0.0, pypi-recent 0.001.
NEIGHBOUR_EXCESS_LIMIT = 0.1
# Up to this many rows the automatic order is a plain random permutation.
SMALL_PROBLEM_ROWS = 2048
# Prefetch distances, in visits: a row's record and CSR offsets are asked for this far ahead,
# its indices and values half as far (they need the offsets first).
PREFETCH_ROW_AHEAD = 12
PREFETCH_DATA_AHEAD = 6
# Rows and per-row records up to this size stay in a core's own cache. Then prefetching is
# pure overhead (measured, -s 1/3: pendigits' 1.5 MB ran 30% slower with it, a9a's 7 MB the
# same, ijcnn1's 10 MB 2x faster, and pypi-recent needs it) and a bucketed order buys nothing
# (letter, pendigits: the same iterations and time either way), so the automatic order skips
# the neighbour check and takes a plain permutation.
CACHE_RESIDENT_BYTES = 4 << 20


def cache_resident(X, record_bytes: int) -> bool:
    """Whether a dual solver's CSR rows and its per-row records (``record_bytes`` a row) fit
    in a core's private cache."""
    nbytes = X.indptr.nbytes + X.indices.nbytes + X.data.nbytes + X.shape[0] * record_bytes
    return nbytes <= CACHE_RESIDENT_BYTES


def row_index_dtype(n_rows: int) -> type:
    """Row numbers in 4 bytes where they fit: the active set and the order are arrays of them."""
    return np.int32 if n_rows < 2**31 - 1 else np.int64


def order_buffers(n_rows: int, bucket_size: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The work arrays of ``visiting_order`` for up to ``n_rows`` active rows: (order,
    bucket_order). Allocated once per solve, not per kernel call, since a solve run for a hook
    calls its kernel once per outer iteration; their contents do not outlive an iteration."""
    order = np.empty(max(n_rows, 1), dtype=dtype)
    bucket_order = np.empty(max(1, (n_rows + bucket_size - 1) // bucket_size), dtype=dtype)
    return order, bucket_order


@njit(cache=True, nogil=True)
def reset_active(active, trainable_rows) -> int:
    n = trainable_rows.shape[0]
    active[:n] = trainable_rows
    return n


@njit(cache=True, nogil=True)
def rows_with_cost(C, row_index_dtype):
    """The rows with C_i > 0 (the ones a dual solver trains on), ascending."""
    n = 0
    for i in range(C.shape[0]):
        if C[i] > 0.0:
            n += 1
    rows = np.empty(n, dtype=row_index_dtype)
    k = 0
    for i in range(C.shape[0]):
        if C[i] > 0.0:
            rows[k] = i
            k += 1
    return rows


@njit(cache=True, nogil=True, inline="always")
def prefetch_ahead(order, s, n_visits, indptr, indices, data, rec_flat, rec_width) -> None:
    """Ask for the rows visited a few steps after visit s: records and offsets first, then
    (once their offsets have arrived) the start of their indices and values."""
    if s + PREFETCH_ROW_AHEAD < n_visits:
        ahead = order[s + PREFETCH_ROW_AHEAD]
        prefetch(indptr, ahead)
        prefetch(rec_flat, ahead * rec_width)
    if s + PREFETCH_DATA_AHEAD < n_visits:
        ahead = order[s + PREFETCH_DATA_AHEAD]
        start = indptr[ahead]
        prefetch(indices, start)
        prefetch(data, start)
        if indptr[ahead + 1] - start > 8:
            prefetch(data, start + 8)


@njit(cache=True, nogil=True)
def visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng):
    """This iteration's order: random groups of buckets, rows shuffled within each group."""
    if bucket_size == 1 and buckets_per_group == 1:  # a plain permutation (LIBLINEAR's)
        order[:n_active] = active[:n_active]
        shuffle(order, 0, n_active, rng)
        return
    n_buckets = (n_active + bucket_size - 1) // bucket_size
    for b in range(n_buckets):
        bucket_order[b] = b
    shuffle(bucket_order, 0, n_buckets, rng)
    m = 0
    group_start = 0
    for ib in range(n_buckets):
        if ib % buckets_per_group == 0:
            group_start = m
        first = bucket_order[ib] * bucket_size
        for s in range(first, min(first + bucket_size, n_active)):
            order[m] = active[s]
            m += 1
        if (ib + 1) % buckets_per_group == 0 or ib + 1 == n_buckets:
            shuffle(order, group_start, m, rng)


@njit(cache=True, nogil=True)
def neighbour_correlation_excess(indptr, indices, data, y, n_pairs, rng) -> float:
    """Mean cosine of Q_ij for neighbouring rows (j = i + 1) minus that for random pairs.

    Bucketed orders assume that neighbouring rows are no more alike than random ones. Files
    written in some meaningful order (near-duplicates next to each other, as in w8a) break
    that assumption, and visiting such neighbours together slows convergence several times.
    """
    n_rows = y.shape[0]
    if n_rows < 3:
        return 0.0
    total = 0.0
    for _ in range(n_pairs):
        i = rand_below(rng, n_rows - 1)
        for j, sign in ((i + 1, 1.0), (rand_below(rng, n_rows), -1.0)):
            norms = rows_dot(indptr, indices, data, i, i) * rows_dot(
                indptr, indices, data, j, j
            )
            if norms > 0.0:
                q = y[i] * y[j] * rows_dot(indptr, indices, data, i, j)
                total += sign * q / np.sqrt(norms)
    return total / n_pairs


def choose_order(
    X, y, bucket_size: int | None, buckets_per_group: int | None, seed: int
) -> tuple[int, int]:
    """The coordinate order: as given, or (None) buckets unless neighbouring rows are alike."""
    if (
        bucket_size is not None
        and bucket_size < 1
        or (buckets_per_group is not None and buckets_per_group < 1)
    ):
        raise InvalidInputError(
            f"bucket_size and buckets_per_group must be >= 1, got {bucket_size}, "
            f"{buckets_per_group}"
        )
    if bucket_size is None:
        n_rows = X.shape[0]
        # (32 bytes: DCD's four-double record; the other dual solvers' are alike)
        if n_rows <= SMALL_PROBLEM_ROWS or cache_resident(X, 32):  # locality buys nothing
            return 1, 1
        # (the sample grows with the rows up to 2000 pairs: a few ms, paid once per solve)
        excess = neighbour_correlation_excess(
            X.indptr, X.indices, X.data, y, min(2000, n_rows), new_state(seed ^ 0x5EED)
        )
        if excess > NEIGHBOUR_EXCESS_LIMIT:
            return 1, 1
        bucket_size = DEFAULT_BUCKET_SIZE
        if buckets_per_group is None:
            buckets_per_group = DEFAULT_BUCKETS_PER_GROUP
    if buckets_per_group is None:
        buckets_per_group = 1 if bucket_size == 1 else DEFAULT_BUCKETS_PER_GROUP
    if bucket_size < 1 or buckets_per_group < 1:
        raise InvalidInputError(
            f"bucket_size and buckets_per_group must be >= 1, got {bucket_size}, "
            f"{buckets_per_group}"
        )
    return int(bucket_size), int(buckets_per_group)


# ----------------------------------------------------------------------------- resumable runs


def start_order(sub: Subproblem, y: np.ndarray) -> tuple[int, int]:
    """(bucket_size, buckets_per_group) of a solve: the resumed run's, or ``choose_order``'s
    from the options ``bucket_size`` and ``buckets_per_group`` (None: automatic)."""
    if sub.resume is not None:
        try:
            return int(sub.resume["bucket_size"]), int(sub.resume["buckets_per_group"])
        except KeyError as missing:
            raise InvalidInputError(f"the state to resume from has no {missing}") from None
    return choose_order(
        sub.X, y, sub.option("bucket_size"), sub.option("buckets_per_group"), sub.seed
    )


def snapshot(
    arrays: dict[str, np.ndarray], bucket_size: int, buckets_per_group: int
) -> dict[str, np.ndarray]:
    """A copy of a dual kernel's complete state (``Progress.state``), the order included."""
    return copy_state(**arrays, bucket_size=bucket_size, buckets_per_group=buckets_per_group)


def restore(arrays: dict[str, np.ndarray], saved: dict[str, np.ndarray]) -> None:
    """Overwrite a fresh solve's state arrays with a snapshot's, checking that it fits."""
    for name, live in arrays.items():
        if name not in saved:
            raise InvalidInputError(f"the state to resume from has no {name!r}")
        value = np.asarray(saved[name])
        if value.shape != live.shape or value.dtype != live.dtype:
            raise InvalidInputError(
                f"the state to resume from does not fit this problem: {name!r} is "
                f"{value.dtype}{list(value.shape)}, expected {live.dtype}{list(live.shape)}"
            )
        live[...] = value


def run_resumable(
    advance: Callable[[int], None],
    istate: np.ndarray,
    hook: Hook | None,
    max_iter: int,
    progress: Callable[[], Progress],
) -> tuple[bool, str]:
    """Run a dual kernel through ``drive`` (in one call without a hook); (converged, why it
    stopped). A stop asked for by the hook after the last iteration still counts as converged."""
    went_on = drive(
        advance, lambda: (int(istate[I_ITER]), bool(istate[I_CONVERGED])), hook, max_iter, progress
    )
    if istate[I_CONVERGED]:
        return True, CONVERGED
    return False, (MAX_ITER if went_on else INTERRUPTED)
