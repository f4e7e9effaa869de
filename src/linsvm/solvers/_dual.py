"""Plumbing shared by the dual solvers (-s 1, 3, 7, 12, 13; the run, the warm start: -s 4, 21).

Each dual solver keeps its own kernel, with its coordinate update inline and readable as its
mathematics; what they share is here: which rows take part (C_i > 0), the active set that
shrinking reduces, the order in which an outer iteration visits it, and prefetching the rows
visited next; the checks of a classifier's options and warm start; the run between hook calls
(``run_dual``), and for the SVM's and the SVR's kernels the run on one thread or on threads
(``ShrinkingDual``). Every dual kernel carries its whole state in arrays (per-row records, w,
the active set, a float and an integer state vector whose first entries are ``I_ACTIVE``,
``I_ITER``, ``I_CONVERGED``, the generator), so a solve can run its kernel one outer iteration
per call, stop, be checkpointed (``Progress.state()``) and resume (``Subproblem.resume``) to
the same result as one uninterrupted call.

The order (SySCD's "bucketing", docs/architecture.md): the active rows are kept in ascending
order and cut into buckets of ``bucket_size`` neighbours; each outer iteration visits random
groups of ``buckets_per_group`` buckets, rows shuffled within a group. Random enough to
converge like a full permutation, but it streams through the CSR arrays instead of jumping row
by row. ``bucket_size=1, buckets_per_group=1`` is a plain random permutation (LIBLINEAR's).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from .._intrinsics import prefetch
from ..data import is_integer
from ..errors import InvalidInputError
from ..sparse_rows import row_sq_norm, rows_dot, rows_sq_norms
from . import _base
from ._base import Hook, Progress, Solution, Subproblem, check_eps, check_number
from ._columns import check_w0
from ._random import FIRST, new_state, rand_below, shuffle

if TYPE_CHECKING:  # (_dual_threads imports this module)
    from ._dual_threads import ThreadPlan

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
# Rows and per-row records up to this size stay in a core's own cache. Then a bucketed order
# buys nothing (letter, pendigits: the same iterations and time either way), so the automatic
# order skips the neighbour check and takes a plain permutation. (A fixed bound: the order
# decides the model's last bits, which must not depend on the machine.)
CACHE_RESIDENT_BYTES = 4 << 20
# Prefetching the rows ahead pays only for rows that are not in the last-level cache: for rows
# that are, each visit pays for the hints and gains nothing. Measured (-s 1 / -s 3, one
# thread): on one machine (4 MiB bound) pendigits' 1.5 MB ran 30% slower with them and ijcnn1's
# 10 MB 2x faster; on a Zen 5 with a 32 MiB L3, a9a's 7 MB, w8a's 7 MB and ijcnn1's 10 MB ran
# 2.1-2.4x faster without them (-s 7, 12, 13 on a9a 1.35-2.2x), generated text rows of 10 /
# 25 / 49 MB 0.85 / 1.0 / 1.0x, and pypi-recent's 145 MB needs them (1.1x). So the bound is
# the machine's last-level cache (``last_level_cache_bytes``), CACHE_RESIDENT_BYTES where the
# system does not say.


def visited_bytes(X, record_bytes: int, stored_widths: bool = True) -> int:
    """The bytes a dual solver's pass reads: X's CSR arrays and the per-row records
    (``record_bytes`` a row), at X's own widths, or with ``stored_widths=False`` at those
    `read_libsvm` gives (4-byte offsets and indices, 8-byte values) whatever X's dtypes."""
    n_rows, nnz = X.shape[0], int(X.indptr[-1])
    if stored_widths:
        nbytes = X.indptr.nbytes + X.indices.nbytes + X.data.nbytes
    else:
        nbytes = 4 * (n_rows + 1) + 12 * nnz
    return nbytes + n_rows * record_bytes


def cache_resident(X, record_bytes: int, stored_widths: bool = True) -> bool:
    """Whether ``visited_bytes`` fit in ``CACHE_RESIDENT_BYTES``; ``stored_widths=False`` for
    the choice of the coordinate order, which decides the model's last bits: int64 indices or
    float32 values must not change it."""
    return visited_bytes(X, record_bytes, stored_widths) <= CACHE_RESIDENT_BYTES


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


def visit_buffers(X, rec: np.ndarray, rows: np.ndarray, bucket_size: int):
    """What a kernel visiting the trainable ``rows`` needs besides its state: (order,
    bucket_order) from ``order_buffers``, and whether to prefetch (``prefetch_pays``)."""
    order, bucket_order = order_buffers(rows.shape[0], bucket_size, rows.dtype)
    return order, bucket_order, prefetch_pays(X, rec.itemsize * rec.shape[1])


def prefetch_pays(X, record_bytes: int) -> bool:
    """Whether a dual solver's kernel should prefetch the rows it visits next: when X's CSR
    arrays and the per-row records (``record_bytes`` a row) exceed the machine's last-level
    cache (``CACHE_RESIDENT_BYTES`` where it is unknown). A hint only: the results are the
    same either way."""
    bound = max(CACHE_RESIDENT_BYTES, last_level_cache_bytes() or 0)
    return visited_bytes(X, record_bytes) > bound


@functools.cache
def last_level_cache_bytes() -> int | None:
    """The largest data (or unified) cache of the first CPU, as Linux's sysfs says; None
    where it does not (other systems, or a container without /sys)."""
    import glob
    import re

    largest = None
    for folder in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(f"{folder}/type") as f:
                kind = f.read().strip()
            with open(f"{folder}/size") as f:
                size = f.read().strip()
        except OSError:
            continue
        found = re.fullmatch(r"(\d+)([KMG]?)", size)
        if kind == "Instruction" or found is None:
            continue
        nbytes = int(found[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[found[2]]
        largest = nbytes if largest is None else max(largest, nbytes)
    return largest


def active_set(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(active, removed) of a solver that shrinks: the active set holding all the trainable
    ``rows`` (``reset_active``), and the zeroed (l,) marks of the rows an outer iteration
    shrinks (``drop_shrunk``)."""
    active = np.empty(max(n_rows, 1), dtype=rows.dtype)
    reset_active(active, rows)
    return active, np.zeros(n_rows, dtype=np.uint8)


@njit(cache=True, nogil=True)
def reset_active(active, trainable_rows) -> int:
    n = trainable_rows.shape[0]
    for s in range(n):
        active[s] = trainable_rows[s]
    return n


@njit(cache=True, nogil=True)
def drop_shrunk(active, n_active, removed) -> int:
    """Drop the rows marked in ``removed`` from active[:n_active] and clear their marks; the
    rows kept stay ascending (so buckets stay neighbours). Returns how many are kept."""
    kept = 0
    for s in range(n_active):
        i = active[s]
        if removed[i]:
            removed[i] = 0
        else:
            active[kept] = i
            kept += 1
    return kept


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


@njit(cache=True, nogil=True, inline="always")
def prefetch_rows(order, start, stop, indptr, indices, data, rec_flat, rec_width) -> None:
    """Ask for the first rows of order[start:stop] (records, offsets, indices, values): what
    ``prefetch_ahead`` would have asked for them had a pass been at them already."""
    for s in range(start, min(start + PREFETCH_ROW_AHEAD, stop)):
        i = order[s]
        prefetch(indptr, i)
        prefetch(rec_flat, rec_width * i)
        prefetch(indices, indptr[i])
        prefetch(data, indptr[i])


@njit(cache=True, nogil=True)
def visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng):
    """This iteration's order: random groups of buckets, rows shuffled within each group."""
    if bucket_size == 1 and buckets_per_group == 1:  # a plain permutation (LIBLINEAR's)
        for s in range(n_active):
            order[s] = active[s]
        shuffle(order, FIRST, n_active, rng)
        return
    n_buckets = (n_active + bucket_size - 1) // bucket_size
    for b in range(n_buckets):
        bucket_order[b] = b
    shuffle(bucket_order, FIRST, n_buckets, rng)
    m = np.int64(0)
    group_start = np.int64(0)
    for ib in range(n_buckets):
        if ib % buckets_per_group == 0:
            group_start = m
        first = bucket_order[ib] * bucket_size
        for s in range(first, min(first + bucket_size, n_active)):
            order[m] = active[s]
            m += 1
        if (ib + 1) % buckets_per_group == 0 or ib + 1 == n_buckets:
            shuffle(order, group_start, m, rng)


def neighbour_correlation_excess(indptr, indices, data, y, n_pairs, rng) -> float:
    """Mean cosine of Q_ij for neighbouring rows (j = i + 1) minus that for random pairs
    (y: +1/-1; rng: a state of ``_random``, advanced by the draws).

    Bucketed orders assume that neighbouring rows are no more alike than random ones. Files
    written in some meaningful order (near-duplicates next to each other, as in w8a) break
    that assumption, and visiting such neighbours together slows convergence several times.
    """
    n_rows = y.shape[0]
    if n_rows < 3:
        return 0.0
    return _label_weighted(y, *neighbour_pairs(indptr, indices, data, n_rows, n_pairs, rng))


@njit(cache=True, nogil=True)
def neighbour_pairs(indptr, indices, data, n_rows, n_pairs, rng):
    """The rows' part of ``neighbour_correlation_excess``: ``n_pairs`` rows i drawn at random,
    each with a row j drawn after it; returns (i, j, cos(x_i, x_i+1), cos(x_i, x_j)), arrays
    of shape (n_pairs,), a cosine 0 where a row is empty."""
    first = np.empty(n_pairs, dtype=np.int64)
    other = np.empty(n_pairs, dtype=np.int64)
    near = np.zeros(n_pairs)
    far = np.zeros(n_pairs)
    for p in range(n_pairs):
        i = rand_below(rng, n_rows - 1)
        j = rand_below(rng, n_rows)
        first[p] = i
        other[p] = j
        # (a row's norm by its own sweep, not a merge with itself: the same sum)
        norm_i = row_sq_norm(indptr, data, -1.0, i)
        norms = norm_i * row_sq_norm(indptr, data, -1.0, i + 1)
        if norms > 0.0:
            near[p] = rows_dot(indptr, indices, data, i, i + 1) / np.sqrt(norms)
        norms = norm_i * row_sq_norm(indptr, data, -1.0, j)
        if norms > 0.0:
            far[p] = rows_dot(indptr, indices, data, i, j) / np.sqrt(norms)
    return first, other, near, far


@njit(cache=True, nogil=True)
def _label_weighted(y, first, other, near, far) -> float:
    """``neighbour_correlation_excess`` from the pairs' cosines: each taken with the sign of
    y_i y_j (+1/-1 labels: the products are exact, the value the one of Q_ij's cosines)."""
    total = 0.0
    for p in range(first.shape[0]):
        i = first[p]
        total += y[i] * y[i + 1] * near[p]
        total -= y[i] * y[other[p]] * far[p]
    return total / first.shape[0]


class SharedRows:
    """What the sub-problems of one run on the same rows X (one-vs-rest's classes) compute of
    the rows alone, computed once instead of once a class: ``choose_order``'s pairs of rows
    (``neighbour_pairs``; each solve weighs their cosines with its own labels) and the rows'
    squared norms (the records' Q_ii). On sector.scale's 105 classes the pairs cost 3.3 ms a
    class, a third of a -s 1 fit, and the norms 0.4 ms. Each is computed by the first solve
    that needs it, the pairs from ``seed`` (the run's: its first class's own draw), under a
    lock (one-vs-rest's classes may start together on threads)."""

    def __init__(self, X, seed: int) -> None:
        self.X = X
        self.seed = int(seed)
        self._pairs: tuple | None = None
        self._norms: dict[float, np.ndarray] = {}
        self._lock = threading.Lock()

    def excess(self, y: np.ndarray, n_pairs: int) -> float:
        """``neighbour_correlation_excess`` of the rows with labels y (n_pairs: the same at
        every call, as the rows are)."""
        if y.shape[0] < 3:
            return 0.0
        with self._lock:
            if self._pairs is None:
                X = self.X
                self._pairs = neighbour_pairs(X.indptr, X.indices, X.data, X.shape[0], n_pairs,
                                              _order_sample_state(self.seed))  # fmt: skip
        return _label_weighted(y, *self._pairs)

    def sq_norms(self, bias: float) -> np.ndarray:
        """||x_i||^2 (+ bias^2 with a bias) of every row, as ``row_sq_norm`` gives them."""
        with self._lock:
            if bias not in self._norms:
                X = self.X
                self._norms[bias] = rows_sq_norms(X.indptr, X.data, float(bias))
            return self._norms[bias]

    def __getstate__(self) -> dict:  # (a lock does not pickle: sub-problems sent to workers)
        return {**self.__dict__, "_lock": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


def shared_sq_norms(sub: Subproblem, X, bias: float) -> np.ndarray | None:
    """The rows' squared norms from the run's ``SharedRows`` where it is of these rows (X the
    sub-problem's own, not a converted copy); None: the solve computes its own."""
    shared = sub.shared_rows
    if shared is None or shared.X is not X:
        return None
    return shared.sq_norms(bias)


def _order_sample_state(seed: int) -> np.ndarray:
    """The generator of ``choose_order``'s sample of pairs for a solve of seed ``seed``."""
    return new_state(int(seed) ^ 0x5EED)


def choose_order(
    X, y, bucket_size: int | None, buckets_per_group: int | None, seed: int,
    shared: SharedRows | None = None,
) -> tuple[int, int]:
    """The coordinate order: as given, or (None) buckets unless neighbouring rows are alike
    (the pairs of rows compared drawn from ``seed``, or taken from ``shared`` where it is of
    these rows)."""
    for name, value in (("bucket_size", bucket_size), ("buckets_per_group", buckets_per_group)):
        if value is not None and not (is_integer(value) and value >= 1):
            raise InvalidInputError(f"{name} must be an integer >= 1, got {value!r}")
    if bucket_size is None:
        n_rows = X.shape[0]
        # (32 bytes: DCD's four-double record; the other dual solvers' are alike)
        if n_rows <= SMALL_PROBLEM_ROWS or cache_resident(X, 32, stored_widths=False):
            return 1, 1  # locality buys nothing
        # (the sample grows with the rows up to 2000 pairs: a few ms, paid once per solve,
        # or once per run with a sample shared by its sub-problems)
        n_pairs = min(2000, n_rows)
        if shared is not None and shared.X is X:
            excess = shared.excess(y, n_pairs)
        else:
            excess = neighbour_correlation_excess(X.indptr, X.indices, X.data, y, n_pairs,
                                                  _order_sample_state(seed))  # fmt: skip
        if excess > NEIGHBOUR_EXCESS_LIMIT:
            return 1, 1
        bucket_size = DEFAULT_BUCKET_SIZE
        if buckets_per_group is None:
            buckets_per_group = DEFAULT_BUCKETS_PER_GROUP
    if buckets_per_group is None:
        buckets_per_group = 1 if bucket_size == 1 else DEFAULT_BUCKETS_PER_GROUP
    return int(bucket_size), int(buckets_per_group)


# ----------------------------------------------------------------------------- resumable runs


def start_order(sub: Subproblem, y: np.ndarray) -> tuple[int, int]:
    """(bucket_size, buckets_per_group) of a solve: the resumed run's, or ``choose_order``'s
    from the options ``bucket_size`` and ``buckets_per_group`` (None: automatic)."""
    if sub.resume is not None:
        try:
            order = int(sub.resume["bucket_size"]), int(sub.resume["buckets_per_group"])
        except KeyError as missing:
            raise InvalidInputError(f"the state to resume from has no {missing}") from None
        except (TypeError, ValueError):
            order = (0, 0)
        # what choose_order accepts, within int32 (the kernels' products of them stay exact)
        if not all(1 <= k < 2**31 for k in order):
            raise InvalidInputError(f"the state to resume from is damaged: its coordinate "
                                    f"order (bucket size {order[0]}, {order[1]} a group)")
        return order
    return choose_order(sub.X, y, sub.option("bucket_size"), sub.option("buckets_per_group"),
                        sub.seed, sub.shared_rows)  # fmt: skip


def warm_start(sub: Subproblem, shape: tuple[int, ...]) -> np.ndarray | None:
    """``sub.alpha0`` as float64, checked to have ``shape`` and be finite; None when the solve
    starts cold or resumes from a checkpoint (whose state replaces any start)."""
    if sub.alpha0 is None or sub.resume is not None:
        return None
    alpha0 = np.ascontiguousarray(sub.alpha0, dtype=np.float64)
    if alpha0.shape != shape:
        raise InvalidInputError(f"alpha0 must have shape {shape}, got {alpha0.shape}")
    if not np.all(np.isfinite(alpha0)):
        raise InvalidInputError("alpha0 must be finite")
    return alpha0


def check_sigma(sigma) -> float:
    """CoCoA+'s sigma' as a float, checked: finite and >= 1 (below 1 the local problems'
    quadratic no longer bounds the partitions' joint change, and the added updates can
    overshoot)."""
    message = "sigma must be a number >= 1, got {value!r}"
    return check_number(sigma, 1.0, message, message)


def classifier_problem(sub: Subproblem) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(y, C, eps, sigma) of a binary classifier's dual solve (-s 1, 3, 7): y (l,) and C (l,)
    as float64, the tolerance and CoCoA+'s sigma' (option ``sigma``, default 1.0) checked."""
    y = np.asarray(sub.y, dtype=np.float64)
    C = np.asarray(sub.C, dtype=np.float64)
    return y, C, check_eps(sub.eps), check_sigma(sub.option("sigma", 1.0))


def margin_offset(sub: Subproblem) -> float:
    """The option ``margin_offset`` checked: a finite number, only for rows without a bias
    feature (the offset stands for one) and with ``objectives=False`` (the solver's primal
    and dual know nothing of it)."""
    offset = sub.option("margin_offset", 0.0)
    message = "margin_offset must be a finite number, got {value!r}"
    offset = check_number(offset, -np.inf, message, message)
    if offset != 0.0 and (sub.bias >= 0 or sub.feature_map is not None
                          or sub.option("objectives", True)):  # fmt: skip
        raise InvalidInputError("margin_offset stands for a held bias: the rows must have no "
                                "bias feature nor feature map, and objectives=False")
    return float(offset)


def classifier_start(sub: Subproblem) -> tuple[np.ndarray, bool, np.ndarray, bool]:
    """Where a classifier's dual solve (-s 1, 3, 7) starts: (alpha0, warm, w, partition).

    alpha0: (l,) ``warm_start``'s, zeros when there is none (``warm`` False); the solver
    projects it into its bounds. w: (n_weights,) zeros, to which the solver adds
    sum_i y_i alpha0_i x_i, or, for a partition of a larger problem (``partition``: sub.w0
    given), the checked w0, which holds that sum over all rows already."""
    n_rows = sub.X.shape[0]
    alpha0 = warm_start(sub, (n_rows,))
    warm = alpha0 is not None
    if not warm:
        alpha0 = np.zeros(n_rows)
    w = np.zeros(sub.n_weights)
    partition = sub.w0 is not None
    if partition:
        w[:] = check_w0(sub.w0, sub.n_weights)
    return alpha0, warm, w, partition


def drive_dual(
    sub: Subproblem,
    hook: Hook | None,
    advance: Callable[[int], None],
    istate: np.ndarray,
    progress: Callable[[], Progress],
) -> tuple[bool, str]:
    """Run a dual kernel through ``_base.drive`` until ``istate`` says converged or
    ``sub.max_iter`` outer iterations are done; return (converged, the stop reason)."""
    went_on = _base.drive(
        advance,
        lambda: (int(istate[I_ITER]), bool(istate[I_CONVERGED])),
        hook,
        sub.max_iter,
        progress,
    )
    converged = bool(istate[I_CONVERGED])
    finished = int(istate[I_ITER]) >= sub.max_iter
    return converged, _base.stop_reason(converged, went_on, finished)


def run_dual(
    sub: Subproblem,
    hook: Hook | None,
    solver: int,
    advance: Callable[[int], None],
    state: dict[str, np.ndarray],
    *,
    w: np.ndarray,
    alpha: np.ndarray,
    report: Callable[[], tuple[float, dict[str, Any]]],
    values: Callable[[], tuple[float, float, float]],
    figures: Callable[[], dict[str, Any]],
    order: tuple[int, int] | None = None,
    finish: Callable[[], None] | None = None,
) -> Solution:
    """Run a dual kernel to its end and return its Solution: the plumbing of every dual solver.

    ``state``: the kernel's whole state by name, ``istate`` among them (``I_ITER`` and
    ``I_CONVERGED`` in place); overwritten first from ``sub.resume`` if given, and copied for
    ``Progress.state()``. ``advance(n)`` runs the kernel for at most n outer iterations, through
    ``drive`` (in one call without a hook). ``w`` and ``alpha``: live views of the weights and
    dual variables, for the hook and (as contiguous copies) the Solution. ``report()``: the
    hook's (measure, figures); ``values()``: (P(w), -f(alpha), gap) at the current iterate;
    ``figures()``: the Solution's own. ``order``: (bucket_size, buckets_per_group) of the
    solvers whose order ``start_order`` chose, kept in the state and reported in the figures.
    ``finish()``: run once the kernel has stopped, before the final values (a threaded
    scheme's exact w).

    A hook's stop after the iteration that met the stopping rule still counts as converged.
    """
    if sub.resume is not None:
        # istate[I_ACTIVE] counts the rows in the active set: at most the trainable rows,
        # which a fresh state's count is
        rows = int(state["istate"][I_ACTIVE])
        _base.restore_state(state, sub.resume, counts=((I_ACTIVE, rows),))
    istate = state["istate"]
    extra = {} if order is None else {"bucket_size": order[0], "buckets_per_group": order[1]}

    def progress() -> Progress:
        measure, live_figures = report()
        return Progress(
            solver=solver,
            index=sub.index,
            iteration=int(istate[I_ITER]),
            w=w,
            alpha=alpha,
            measure=measure,
            figures=live_figures,
            state=lambda: _base.copy_state(**state, **extra),
            objectives=lambda: values()[:2],
        )

    converged, stop_reason = drive_dual(sub, hook, advance, istate, progress)
    if finish is not None:
        finish()
    # a partition's caller (block minimisation) may have no use for them: a pass saved
    primal, dual, gap = values() if sub.option("objectives", True) else (math.nan,) * 3
    return Solution(
        w=np.ascontiguousarray(w),
        n_iter=int(istate[I_ITER]),
        converged=converged,
        stop_reason=stop_reason,
        primal=primal,
        dual=dual,
        gap=gap,
        alpha=np.ascontiguousarray(alpha),
        solver=solver,
        figures={**figures(), **extra},
    )


class ShrinkingDual:
    """The run of a dual kernel that shrinks and that ``_dual_threads``' schemes can take over:
    the SVM's (-s 1, -s 3: ``dcd.dcd_svm_kernel``) and the SVR's (-s 12, -s 13:
    ``svr.dcd_svr_kernel``). Both kernels carry the same state and work arrays, in the same
    order (``kernel_arguments``); this object makes them, starts the threads when ``plan``
    has more than one, and runs the kernel on one thread or on them (``advance``, ``solve``).

    rec: (l, 4) per-row records; w: (n_weights,); trainable: the rows with C_i > 0,
    ascending; fstate, istate: the kernel's float and integer state (istate[I_ACTIVE] = the
    trainable rows); order: (bucket_size, buckets_per_group). ``serial(run, n)`` runs the
    kernel on one thread for at most n outer iterations, given ``run.kernel_arguments(n)``.
    ``p``: the SVR's tube width (None: the SVM).
    """

    def __init__(
        self,
        sub: Subproblem,
        plan: ThreadPlan,
        loss: int,
        rec: np.ndarray,
        w: np.ndarray,
        trainable: np.ndarray,
        fstate: np.ndarray,
        istate: np.ndarray,
        eps: float,
        shrinking: bool,
        order: tuple[int, int],
        serial: Callable[[ShrinkingDual, int], None],
        p: float | None = None,
    ) -> None:
        # (imported here: _dual_threads imports this module)
        from ._dual_threads import start_threads

        self.rec, self.w, self.trainable = rec, w, trainable
        self.fstate, self.istate = fstate, istate
        self.eps, self.shrinking = eps, shrinking
        self.bucket_size, self.buckets_per_group = order
        self._serial = serial
        self.active, self.removed = active_set(trainable, rec.shape[0])
        self.rng = new_state(sub.seed)
        self.state = {"rec": rec, "w": w, "active": self.active, "fstate": fstate,
                      "istate": istate, "rng": self.rng}  # fmt: skip
        self.order, self.bucket_order, self.use_prefetch = visit_buffers(
            sub.X, rec, trainable, self.bucket_size
        )
        self.threads = self.driver = self.schedule = None
        if plan.n_threads > 1:
            # the rows shared among threads: a partitioned dual whose place merges as it goes
            self.threads, self.driver, self.schedule = start_threads(
                plan, sub, loss, rec, w, self.active, trainable, fstate, istate, self.rng, eps,
                shrinking, self.bucket_size, self.buckets_per_group, self.use_prefetch,
                self.removed, self.order, self.bucket_order, p=p,
            )  # fmt: skip

    def kernel_arguments(self, n_epochs: int) -> tuple:
        """What both kernels take after the problem's arguments, in their order: rec, w,
        active, trainable, fstate, istate, rng, eps, n_epochs, shrinking, bucket_size,
        buckets_per_group, use_prefetch, removed, order, bucket_order."""
        return (self.rec, self.w, self.active, self.trainable, self.fstate, self.istate,
                self.rng, self.eps, n_epochs, self.shrinking, self.bucket_size,
                self.buckets_per_group, self.use_prefetch, self.removed, self.order,
                self.bucket_order)  # fmt: skip

    def advance(self, n_epochs: int) -> None:
        """At most ``n_epochs`` outer iterations, on one thread or on the threads."""
        if self.driver is None:
            self._serial(self, n_epochs)
            return
        from ._dual_threads import run_epochs

        serial = functools.partial(self._serial, self)
        run_epochs(n_epochs, self.threads, self.driver, serial, self.istate, self.schedule)

    def live_figures(self, rule: dict[str, Any]) -> dict[str, Any]:
        """A hook's figures: the active rows, the stopping rule's ``rule``, the threads'."""
        from ._dual_threads import live_figures

        return {"n_active": int(self.istate[I_ACTIVE]), **rule,
                **live_figures(self.threads, self.schedule)}  # fmt: skip

    def threaded_figures(self) -> dict[str, Any]:
        """The Solution's figures of the threads (none on one thread)."""
        from ._dual_threads import threaded_figures

        return threaded_figures(self.threads, self.schedule)

    def solve(
        self,
        sub: Subproblem,
        hook: Hook | None,
        solver: int,
        alpha: np.ndarray,
        report: Callable[[], tuple[float, dict[str, Any]]],
        values: Callable[[], tuple[float, float, float]],
        figures: Callable[[], dict[str, Any]],
    ) -> Solution:
        """``run_dual`` with this kernel (``alpha``: the live view of the dual variables in
        the records; the rest as there), w made exact where the threads' scheme needs it,
        and the threads closed however the run ends."""
        from ._dual_threads import exact_weights

        try:
            return run_dual(
                sub, hook, solver, self.advance, self.state, w=self.w, alpha=alpha,
                report=report, values=values, figures=figures,
                order=(self.bucket_size, self.buckets_per_group),
                finish=lambda: exact_weights(self.threads, self.schedule),
            )  # fmt: skip
        finally:
            if self.threads is not None:
                self.threads.close()
