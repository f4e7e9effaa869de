"""Two threaded forms of dual coordinate descent for the SVM (-s 1, -s 3): a reference.

Not part of linsvm: kept for ``benchmarks/bench_dcd_threads.py``, which measured them against
the serial solver and found neither faster to 1e-2 or 1e-3 relative accuracy on two cores
(benchmarks/RESULTS-dcd-threads.md), so linsvm trains -s 1/-s 3 on one thread. Both are exact:
whenever the threads meet, ``w = sum_i y_i alpha_i x_i`` up to the order of the additions.
They share the serial solver's coordinate step (``dcd.svm_coordinate``), its end of an outer
iteration (shrinking, LIBLINEAR's stopping rule on all of alpha: ``dcd.end_iteration``) and
its bucketed visiting order; within an outer iteration the threads take chunks of that order
from a shared counter (each row is visited once, by one thread).

``atomic``: PASSCoDe-Atomic (Hsieh, Yu, Dhillon, ICML 2015) with thread-local frequent
features. The threads update one shared w with atomic adds, except for the ``n_hot`` most
frequent features and the bias: those stay in a copy of each thread's own, whose changes the
thread publishes every ``push_rows`` visits (the bias every 32), reading everyone else's at
the same time (a row of published sums a thread; only its owner writes it, so no atomic is
needed). Atomic adds on every feature made two threads slower than one (the frequent features'
cache lines bounce between the cores); plain adds lose updates (PASSCoDe-Wild; measured here
1-80% of w lost, depending on how many features are kept local).

``replicas``: SySCD-like (Ioannou, Mendler-Duenner, Parnell, NeurIPS 2019). Each thread runs
the serial kernel unchanged on a full replica of w; the frequent features are synchronised as
above; the whole of w is merged (every replica's change added, in a fixed order) ``merges``
times an outer iteration, and every replica restarts from the merged w. No per-non-zero cost,
but the other threads' updates of the remaining features are seen only at a merge, and on text
(whose mid-frequency features many rows share) that staleness cost more outer iterations than
the threads saved (never converged to 1e-2 with one merge an iteration).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from linsvm._intrinsics import prefetch
from linsvm.features._rows import row_scratch
from linsvm.objective import LOSS_SQUARED_HINGE, svm_objectives
from linsvm.solvers import _dual
from linsvm.solvers._dual import I_ACTIVE, prefetch_ahead, visiting_order
from linsvm.solvers._random import new_state
from linsvm.solvers.dcd import (
    _ALPHA,
    _BOUND_OR_DIAG,
    _F_PGMAX_OLD,
    _F_PGMIN_OLD,
    _QBAR,
    _Y,
    PG_ZERO,
    _prepare,
    dcd_svm_kernel,
    end_iteration,
    svm_coordinate,
)
from linsvm.sparse_rows import row_axpy, row_dot

CHUNK_VISITS = 2048
BIAS_PUSH_ROWS = 32


# ----------------------------------------------------------------------------- atomics


def _element_pointer(context, builder, array_type, array_value, index_value):
    arr = context.make_array(array_type)(context, builder, array_value)
    return cgutils.get_item_pointer(
        context, builder, array_type, arr, [index_value], wraparound=False
    )


@intrinsic
def atomic_add(typingctx, array, index, value):
    """array[index] += value as one atomic read-modify-write (1-D float64 arrays)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.float64):
        return None
    sig = types.void(array, index, types.float64)

    def codegen(context, builder, signature, args):
        array_value, index_value, value_value = args
        pointer = _element_pointer(context, builder, signature.args[0], array_value, index_value)
        builder.atomic_rmw("fadd", pointer, value_value, "monotonic")
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """old = array[index]; array[index] += value, atomically (1-D int64 arrays)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.int64):
        return None
    sig = types.int64(array, index, types.int64)

    def codegen(context, builder, signature, args):
        array_value, index_value, value_value = args
        pointer = _element_pointer(context, builder, signature.args[0], array_value, index_value)
        return builder.atomic_rmw("add", pointer, value_value, "seq_cst")

    return sig, codegen


# ----------------------------------------------------------------------------- hot features


def hot_columns_of(X, n_hot: int, bias: float) -> np.ndarray:
    """The n_hot most frequent columns, ascending, then the bias weight's index if bias >= 0."""
    counts = np.bincount(X.indices, minlength=X.shape[1])
    n_hot = min(n_hot, int(np.count_nonzero(counts)))
    hot = np.sort(np.argsort(-counts, kind="stable")[:n_hot]).astype(np.int64)
    return np.append(hot, X.shape[1]) if bias >= 0 else hot


@njit(cache=True, nogil=True)
def publish_and_refresh(w_local, hot_columns, base, published, thread, snapshot, first, stop):
    """Slots [first, stop): add this thread's changes since its last refresh to its published
    row, then read base + every thread's published sum into its local copy."""
    mine = published[thread]
    for s in range(first, stop):
        mine[s] += w_local[hot_columns[s]] - snapshot[s]
    for s in range(first, stop):
        value = base[s]
        for t in range(published.shape[0]):
            value += published[t, s]
        w_local[hot_columns[s]] = value
        snapshot[s] = value


@njit(cache=True, nogil=True)
def close_hot(w, hot_columns, base, published) -> None:
    for s in range(hot_columns.shape[0]):
        value = base[s]
        for t in range(published.shape[0]):
            value += published[t, s]
        w[hot_columns[s]] = value


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def hot_first_rows(indptr, indices, data, slot_of, out_indices, out_data, bounds):
    """Copy the rows with each row's hot entries first, numbered by their slot: row i's hot
    entries at [bounds[2i], bounds[2i+1]), its cold ones (original columns) up to bounds[2i+2].
    (Two loops a row instead of a test per non-zero, which mispredicts.)"""
    n_rows = indptr.shape[0] - 1
    bounds[2 * n_rows] = indptr[n_rows]
    for i in range(n_rows):
        k = indptr[i]
        bounds[2 * i] = k
        for p in range(indptr[i], indptr[i + 1]):
            if slot_of[indices[p]] >= 0:
                out_indices[k] = slot_of[indices[p]]
                out_data[k] = data[p]
                k += 1
        bounds[2 * i + 1] = k
        for p in range(indptr[i], indptr[i + 1]):
            if slot_of[indices[p]] < 0:
                out_indices[k] = indices[p]
                out_data[k] = data[p]
                k += 1


@njit(cache=True, nogil=True)
def atomic_thread_kernel(
    bounds, indices, data, bias, loss, rec, w, w_hot, slots, order, n_visits, counter,
    push_rows, shrinking, pgmax_old, pgmin_old, removed, pg_out, hot_columns, base, published,
    thread, snapshot,
):  # fmt: skip
    """One thread's share of an iteration of ``atomic``, over ``hot_first_rows``: hot entries
    from this thread's w_hot (by slot; slots = arange(n_slots), the bias last), cold ones read
    from w and added to it atomically."""
    squared_hinge = loss == LOSS_SQUARED_HINGE
    n_slots = w_hot.shape[0]
    last = n_slots - 1
    for s in range(n_slots):
        snapshot[s] = w_hot[s]
    publish_and_refresh(w_hot, slots, base, published, thread, snapshot, 0, n_slots)
    pgmax_new = -np.inf
    pgmin_new = np.inf
    since_push = 0
    while True:
        start = fetch_add(counter, 0, CHUNK_VISITS)
        if start >= n_visits:
            break
        stop = min(start + CHUNK_VISITS, n_visits)
        for s in range(start, stop):
            i = order[s]
            if s + 8 < stop:
                prefetch(bounds, 2 * order[s + 8])
                prefetch(rec.reshape(rec.size), 4 * order[s + 8])
            h = bounds[2 * i + 1]
            dot = 0.0
            for k in range(bounds[2 * i], h):
                dot += w_hot[indices[k]] * data[k]
            for k in range(h, bounds[2 * i + 2]):
                dot += w[indices[k]] * data[k]
            if bias >= 0.0:
                dot += w_hot[last] * bias
            a = rec[i, _ALPHA]
            yi = rec[i, _Y]
            shrunk, pg, a_new = svm_coordinate(
                a, yi, dot, rec[i, _BOUND_OR_DIAG], rec[i, _QBAR], squared_hinge, shrinking,
                pgmax_old, pgmin_old,
            )  # fmt: skip
            if shrunk:
                removed[i] = 1
                continue
            pgmax_new = max(pgmax_new, pg)
            pgmin_new = min(pgmin_new, pg)
            if abs(pg) > PG_ZERO:
                rec[i, _ALPHA] = a_new
                scale = (a_new - a) * yi
                for k in range(bounds[2 * i], h):
                    w_hot[indices[k]] += scale * data[k]
                for k in range(h, bounds[2 * i + 2]):
                    atomic_add(w, indices[k], scale * data[k])
                if bias >= 0.0:
                    w_hot[last] += scale * bias
            since_push += 1
            if since_push % push_rows == 0:
                publish_and_refresh(w_hot, slots, base, published, thread, snapshot, 0, n_slots)
            elif bias >= 0.0 and since_push % BIAS_PUSH_ROWS == 0:
                publish_and_refresh(w_hot, slots, base, published, thread, snapshot, last,
                                    n_slots)  # fmt: skip
    publish_and_refresh(w_hot, slots, base, published, thread, snapshot, 0, n_slots)
    pg_out[thread, 0] = pgmax_new
    pg_out[thread, 1] = pgmin_new


@njit(cache=True, nogil=True)
def replica_thread_kernel(
    indptr, indices, data, bias, loss, rec, w_replica, order, first, n_visits, counter,
    push_rows, shrinking, pgmax_old, pgmin_old, removed, pg_out, hot_columns, base, published,
    thread, snapshot,
):  # fmt: skip
    """One thread's share of a segment of an iteration of ``replicas``: the serial step on
    this thread's replica, its hot features synchronised as in ``atomic``."""
    squared_hinge = loss == LOSS_SQUARED_HINGE
    rec_flat = rec.reshape(rec.size)
    n_slots = hot_columns.shape[0]
    for s in range(n_slots):
        snapshot[s] = w_replica[hot_columns[s]]
    publish_and_refresh(w_replica, hot_columns, base, published, thread, snapshot, 0, n_slots)
    pgmax_new = pg_out[thread, 0]
    pgmin_new = pg_out[thread, 1]
    since_push = 0
    while True:
        start = fetch_add(counter, 0, CHUNK_VISITS)
        if start >= n_visits:
            break
        stop = min(start + CHUNK_VISITS, n_visits)
        for s in range(start, stop):
            i = order[s]
            prefetch_ahead(order, s, stop, indptr, indices, data, rec_flat, 4)
            a = rec[i, _ALPHA]
            yi = rec[i, _Y]
            shrunk, pg, a_new = svm_coordinate(
                a, yi, row_dot(indptr, indices, data, bias, i, w_replica),
                rec[i, _BOUND_OR_DIAG], rec[i, _QBAR], squared_hinge, shrinking, pgmax_old,
                pgmin_old,
            )  # fmt: skip
            if shrunk:
                removed[i] = 1
                continue
            pgmax_new = max(pgmax_new, pg)
            pgmin_new = min(pgmin_new, pg)
            if abs(pg) > PG_ZERO:
                rec[i, _ALPHA] = a_new
                row_axpy(indptr, indices, data, bias, i, (a_new - a) * yi, w_replica)
            since_push += 1
            if since_push % push_rows == 0:
                publish_and_refresh(w_replica, hot_columns, base, published, thread, snapshot,
                                    0, n_slots)  # fmt: skip
            elif bias >= 0.0 and since_push % BIAS_PUSH_ROWS == 0:
                publish_and_refresh(w_replica, hot_columns, base, published, thread, snapshot,
                                    n_slots - 1, n_slots)  # fmt: skip
    publish_and_refresh(w_replica, hot_columns, base, published, thread, snapshot, 0, n_slots)
    pg_out[thread, 0] = pgmax_new
    pg_out[thread, 1] = pgmin_new


@njit(cache=True, nogil=True)
def merge_replicas(w, replicas, is_hot, first, stop) -> None:
    """Columns [first, stop) that are not hot: w += sum_t (replica_t - w), in thread order."""
    for j in range(first, stop):
        if is_hot[j] == 0:
            start = w[j]
            value = start
            for t in range(replicas.shape[0]):
                value += replicas[t, j] - start
            w[j] = value


@njit(cache=True, nogil=True)
def copy_to_replicas(w, replicas, first, stop) -> None:
    for t in range(replicas.shape[0]):
        for j in range(first, stop):
            replicas[t, j] = w[j]


# ----------------------------------------------------------------------------- runs


class ThreadedDCD:
    """A resumable solve of the SVM dual, run one outer iteration at a time by ``epoch()``.

    scheme: "serial" (linsvm's kernel), "atomic" or "replicas"; the problem as
    ``dcd._solve_svm_dual`` sees it (CSR X, y in +-1, per-row C, bias, loss), no shrinking
    unless asked. ``objectives()``: (P(w), D(alpha), gap); ``w_error()``: max |w - sum_i y_i
    alpha_i x_i| / max |w|.
    """

    def __init__(self, X, y, C, bias, loss, scheme, n_threads=2, n_hot=4096, push_rows=2048,
                 merges=4, shrinking=True, eps=1e-12, seed=1, bucket_size=16):  # fmt: skip
        self.X, self.y, self.C, self.bias, self.loss = X, y, C, bias, loss
        self.scheme, self.n_threads, self.push_rows, self.merges = (
            scheme, n_threads, push_rows, merges
        )
        self.shrinking, self.eps = shrinking, eps
        n_rows, n_features = X.shape
        self.w = np.zeros(n_features + (1 if bias >= 0 else 0))
        self.rec = np.empty((n_rows, 4))
        self.trainable = _prepare(
            X.indptr, X.indices, X.data, bias, y, C, loss, np.zeros(n_rows), True, self.w,
            self.rec, np.int32, None, *row_scratch(X.indptr, None),
        )  # fmt: skip
        self.active, self.removed = _dual.active_set(self.trainable, n_rows)
        self.fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
        self.istate = np.array([self.trainable.shape[0], 0, 0], dtype=np.int64)
        self.rng = new_state(seed)
        self.bucket_size = bucket_size
        self.order, self.bucket_order = _dual.order_buffers(n_rows, bucket_size, np.int32)
        if scheme == "serial":
            return
        self.pool = ThreadPoolExecutor(n_threads)
        self.hot_columns = hot_columns_of(X, n_hot, bias)
        n_slots = self.hot_columns.shape[0]
        self.base = np.zeros(n_slots)
        self.published = np.zeros((n_threads, (n_slots + 15) // 8 * 8))
        self.snapshots = [np.zeros(n_slots) for _ in range(n_threads)]
        self.counter = np.zeros(1, dtype=np.int64)
        self.pg = np.zeros((n_threads, 2))
        if scheme == "atomic":
            self.w_hots = [np.zeros(n_slots) for _ in range(n_threads)]
            self.slots = np.arange(n_slots)
            slot_of = np.full(n_features, -1, dtype=np.int64)
            n_features_hot = n_slots - (1 if bias >= 0 else 0)
            slot_of[self.hot_columns[:n_features_hot]] = np.arange(n_features_hot)
            self.hot_indices = np.empty_like(X.indices)
            self.hot_data = np.empty_like(X.data)
            self.bounds = np.empty(2 * n_rows + 1, dtype=np.int64)
            hot_first_rows(X.indptr, X.indices, X.data, slot_of, self.hot_indices,
                           self.hot_data, self.bounds)  # fmt: skip
        else:
            self.replicas = np.tile(self.w, (n_threads, 1))
            self.is_hot = np.zeros(self.w.shape[0], dtype=np.uint8)
            self.is_hot[self.hot_columns] = 1

    def epoch(self) -> bool:
        """One outer iteration; True once converged."""
        n_active = int(self.istate[I_ACTIVE])
        if self.scheme == "serial":
            X = self.X
            dcd_svm_kernel(
                X.indptr, X.indices, X.data, self.bias, self.loss, self.rec, self.w,
                self.active, self.trainable, self.fstate, self.istate, self.rng, self.eps, 1,
                self.shrinking, self.bucket_size, 16, True, self.removed, self.order,
                self.bucket_order, None,
            )  # fmt: skip
            return bool(self.istate[2])
        visiting_order(
            self.active, n_active, self.order, self.bucket_order, self.bucket_size, 16, self.rng
        )
        self.pg[:, 0] = -np.inf
        self.pg[:, 1] = np.inf
        if self.scheme == "atomic":
            self._segment(0, n_active)
        else:
            for m in range(self.merges):
                self._segment(n_active * m // self.merges, n_active * (m + 1) // self.merges)
        return end_iteration(
            self.active, n_active, self.removed, self.trainable, self.fstate, self.istate,
            self.pg[:, 0].max(), self.pg[:, 1].min(), self.eps,
        )  # fmt: skip

    def _segment(self, first: int, stop: int) -> None:
        X = self.X
        self.base[:] = self.w[self.hot_columns]
        self.published[:] = 0.0
        self.counter[0] = first
        common = (self.push_rows, self.shrinking, self.fstate[_F_PGMAX_OLD],
                  self.fstate[_F_PGMIN_OLD], self.removed, self.pg, self.hot_columns,
                  self.base, self.published)  # fmt: skip
        if self.scheme == "atomic":
            for w_hot in self.w_hots:
                w_hot[:] = self.base
            futures = [
                self.pool.submit(
                    atomic_thread_kernel, self.bounds, self.hot_indices, self.hot_data,
                    self.bias, self.loss, self.rec, self.w, self.w_hots[t], self.slots,
                    self.order, stop, self.counter, *common, t, self.snapshots[t],
                )  # fmt: skip
                for t in range(self.n_threads)
            ]
            for future in futures:
                future.result()
            close_hot(self.w, self.hot_columns, self.base, self.published)
            return
        futures = [
            self.pool.submit(
                replica_thread_kernel, X.indptr, X.indices, X.data, self.bias, self.loss,
                self.rec, self.replicas[t], self.order, first, stop, self.counter, *common, t,
                self.snapshots[t],
            )  # fmt: skip
            for t in range(self.n_threads)
        ]
        for future in futures:
            future.result()
        n = self.w.shape[0]
        cuts = [n * t // self.n_threads for t in range(self.n_threads + 1)]
        for kernel, args in ((merge_replicas, (self.replicas, self.is_hot)),
                             (copy_to_replicas, (self.replicas,))):  # fmt: skip
            if kernel is copy_to_replicas:
                close_hot(self.w, self.hot_columns, self.base, self.published)
            futures = [
                self.pool.submit(kernel, self.w, *args, cuts[t], cuts[t + 1])
                for t in range(self.n_threads)
            ]
            for future in futures:
                future.result()

    def objectives(self) -> tuple[float, float, float]:
        alpha = np.ascontiguousarray(self.rec[:, _ALPHA])
        return svm_objectives(self.X, self.bias, self.y, self.C, self.w, alpha, self.loss)

    def w_error(self) -> float:
        ya = self.y * self.rec[:, _ALPHA]
        exact = np.asarray(self.X.T @ ya).ravel()
        if self.bias >= 0:
            exact = np.append(exact, self.bias * ya.sum())
        return float(np.abs(exact - self.w).max() / max(np.abs(self.w).max(), 1e-300))

    def close(self) -> None:
        if self.scheme != "serial":
            self.pool.shutdown()
