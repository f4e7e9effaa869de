"""Dual coordinate descent for the SVM (-s 1, -s 3) on several threads: rounds of rows solved
side by side from one w, merged in a fixed order, with an exact line search.

**Rounds.** Each outer iteration visits the active rows in the serial solver's order
(``_dual.visiting_order``: bucketed, shuffled by the same generator), cut into chunks of about
``chunk_nnz`` non-zeros. Chunk c goes to thread c mod T in round c div T: a round is T chunks
of consecutive rows of the order, about ``round_rows`` rows in all. In a round each thread

1. computes w'x_i for its rows against w as the round found it (the bulk of the work);
2. steps its rows' alpha by the serial coordinate update (``dcd.svm_coordinate``), in order;
3. logs the changes of w, sorted by the thread that will merge them.

Then every thread merges the logged changes of its own range of features, the logs taken in
thread order: each weight receives its changes in one fixed order whatever the timing, so with
a seed and a thread count the run is the same every time.

**Hot features in sequence.** Rows of a round do not see each other's changes of w, which is
harmless for features that few rows of a round share, and ruinous for those most rows share:
above all the bias (every row has it), and on one-hot data columns that half the rows have.
Each row would push them as if alone: with the bias on text, 256-row rounds took 10x the
serial solver's outer iterations. So the "hot" weights, the bias and the features that the
rows of a round share most, are taken in sequence: step 2 runs thread after thread, each
row's gradient corrected by the hot weights' changes of the rows before it in the round
(``hot``: their running sum, handed from thread to thread), exactly as the serial solver would
see them. Feature j is hot when rho_j = (rows a round) / l * sum_i x_ij^2 / Qbar_ii >= 1,
the share of a row's curvature it carries, summed over a round (at most ``MAX_HOT``).

**Why it converges at every thread count.** Let d be a round's change of alpha (m rows).
Step 2 is one pass of exact coordinate descent on a convex model of f around alpha: the true
dual with the rows' coupling through the cold features dropped. So g = grad f(alpha)'d < 0
(the model's decrease is at least d'Md/2 >= 0 below g). Along d the dual is the quadratic
phi(gamma) = f(alpha + gamma d) - f(alpha) = gamma g + gamma^2 q / 2, with q = d'Qbar d =
2 (phi(1) - g), where phi(1) comes from the merge itself: a weight changed from b by v moves
w'w / 2 by v (b + v/2), summed exactly over the logs. The merge keeps gamma = 1 when
phi(1) <= phi(1/m), else takes the exact line search's gamma = -g/q < 1 (alpha and w scaled
back by another pass over the round's logs). Each merge lowers the dual by at least
phi(1/m) <= g/(2m) < 0 whatever the coupling that the model left out (q <= m d'Md by
Cauchy-Schwarz over the round's rows): a convergent descent for any number of threads and any
round, the rate depending on the round's size in rows, never on the thread count. In practice
gamma is 1 (measured: the serial solver's outer iterations on pypi-recent, reuters and
generated text, with and without a bias, at 256 rows a round). A thread's view of the cold
features lags by at most the round's rows, by construction.

Shrinking and the stopping rule are the serial solver's (``dcd.end_iteration`` on the extremes
of every thread's projected gradients, then the re-check of every row before stopping), and the
state (records, w, active set, thresholds, generator) is the serial one, so a threaded solve
checkpoints and resumes through the same ``_dual.run_dual``. w is the running sum of the
merges: sum_i y_i alpha_i x_i up to rounding.

**The simulator.** ``run_simulated`` runs the same phases with the threads taken one after
another on the calling thread (the same chunks, hand-overs, merges and line searches): the
same bits as T real threads at the cost of one, so that any thread count can be studied and
tested on a small machine.

**Threads.** T - 1 Python threads and the caller run ``run_threads`` in compiled code without
the GIL, meeting at barriers and passing the hot weights' changes on by flags (spinning
briefly, then giving the core to the operating system, so that more threads than cores still
progress).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from .._intrinsics import (
    atomic_fetch_add,
    atomic_load,
    atomic_store,
    prefetch,
    spin_pause,
    yield_core,
)
from ..objective import LOSS_SQUARED_HINGE
from ..sparse_rows import row_dot
from ._dual import I_ACTIVE, prefetch_ahead, visiting_order
from .dcd import (
    _ALPHA,
    _BOUND_OR_DIAG,
    _F_PGMAX_OLD,
    _F_PGMIN_OLD,
    _QBAR,
    _Y,
    PG_ZERO,
    end_iteration,
    svm_coordinate,
)

# Rows of a round (all threads together), by default: how far a thread's view of the cold
# features may lag. Up to 256 the serial solver's outer iterations are kept (pypi-recent,
# reuters: -s 1 and -s 3, no bias); at 1024 they grow 1.7x on pypi-recent -s 1.
DEFAULT_ROUND_ROWS = 256
# Hot features (besides the bias) at most: each costs the sequential step a multiply-add for
# every row that has it.
MAX_HOT = 64
# Rows ahead whose weights a thread asks for before computing w'x_i.
W_AHEAD = 3
# Features are owned by threads for the merge in blocks of this many (8 cache lines of w), so
# that no two threads write one cache line.
OWNER_BLOCK_SHIFT = 6
# Spins while waiting before each yield of the core (a few microseconds), when every thread
# has a core of its own; with more threads than cores a waiting thread yields at once.
WAIT_SPINS = 200

# The barrier's array: arrivals, generation, the run's flags, then one hand-over flag a
# thread; every entry on a cache line of its own.
_LINE = 8
_SYNC_COUNT, _SYNC_GENERATION, _SYNC_DONE, _SYNC_N_CHUNKS, _SYNC_SPINS = 0, 8, 16, 24, 32
_SYNC_HANDED = 40

# Per thread and round (two rounds' worth, by parity): g = sum_i d_i G_i, the alpha terms of
# phi(1), the rows changed, the change of the bias weight. Each thread's entries are padded to a cache line.
_P_G, _P_ROWTERM, _P_ROWS, _P_BIAS = 0, 1, 2, 3

# The run's counters (``stats``): rounds merged, rounds whose step the line search shortened.
_S_ROUNDS, _S_SHORTENED = 0, 1


@njit(cache=True, nogil=True, inline="always")
def _wait_while_equal(sync, index, value) -> None:
    """Spin (up to sync[_SYNC_SPINS] times), then yield the core, until sync[index] differs
    from ``value``."""
    limit = sync[_SYNC_SPINS]
    spins = 0
    while atomic_load(sync, index) == value:
        spins += 1
        if spins < limit:
            spin_pause()
        else:
            yield_core()


@njit(cache=True, nogil=True, inline="always")
def _barrier(sync, n_threads) -> None:
    """Wait until all ``n_threads`` threads have arrived (a counter and a generation: the last
    to arrive resets the counter and opens the next generation). The atomic operations order
    every write made before the barrier before every read made after it."""
    generation = atomic_load(sync, _SYNC_GENERATION)
    if atomic_fetch_add(sync, _SYNC_COUNT, 1) == n_threads - 1:
        atomic_store(sync, _SYNC_COUNT, 0)
        atomic_fetch_add(sync, _SYNC_GENERATION, 1)
        return
    _wait_while_equal(sync, _SYNC_GENERATION, generation)


@njit(cache=True, nogil=True)
def _begin_iteration(
    active, istate, order, bucket_order, bucket_size, buckets_per_group, rng, chunk_rows,
    pg_extremes,
) -> int:  # fmt: skip
    """The serial start of an outer iteration: the visiting order (the serial solver's),
    every thread's projected-gradient extremes reset. Returns the number of chunks."""
    n_active = istate[I_ACTIVE]
    visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)
    for t in range(pg_extremes.shape[0]):
        pg_extremes[t, 0] = -np.inf
        pg_extremes[t, 1] = np.inf
    return (n_active + chunk_rows - 1) // chunk_rows


@njit(cache=True, nogil=True)
def _end_iteration(active, istate, fstate, removed, trainable, pg_extremes, eps) -> bool:
    """The serial end of an outer iteration: every thread's extremes combined, then the serial
    solver's shrinking and stopping rule. True once converged."""
    pgmax = -np.inf
    pgmin = np.inf
    for t in range(pg_extremes.shape[0]):
        pgmax = max(pgmax, pg_extremes[t, 0])
        pgmin = min(pgmin, pg_extremes[t, 1])
    return end_iteration(
        active, istate[I_ACTIVE], removed, trainable, fstate, istate, pgmax, pgmin, eps
    )


@njit(cache=True, nogil=True)
def _dots(
    t, rnd, n_threads, indptr, indices, data, bias, rec, w, use_prefetch, order, n_visits,
    chunk_rows, dots,
) -> None:  # fmt: skip
    """Step 1 of thread t's part of round ``rnd``: w'x_i of its rows, w as the round found it."""
    s0 = (rnd * n_threads + t) * chunk_rows
    s1 = min(s0 + chunk_rows, n_visits)
    rec_flat = rec.reshape(rec.size)
    for s in range(s0, s1):
        i = order[s]
        if use_prefetch:
            prefetch_ahead(order, s, s1, indptr, indices, data, rec_flat, 4)
            # the weights of a row visited soon: other threads' merges keep moving their
            # cache lines to other cores, so each read may wait on another core
            if s + W_AHEAD < s1:
                ahead = order[s + W_AHEAD]
                for k in range(indptr[ahead], indptr[ahead + 1]):
                    prefetch(w, indices[k])
        dots[t, s - s0] = row_dot(indptr, indices, data, bias, i, w)


@njit(cache=True, nogil=True)
def _steps(
    t, rnd, n_threads, bias, squared_hinge, rec, fstate, shrinking, order, n_visits,
    chunk_rows, removed, pg_extremes, partials, dots, row_log, row_step, hot_ptr, hot_slot,
    hot_val, hot,
) -> None:  # fmt: skip
    """Step 2: the coordinate steps of thread t's rows, in order, each row's w'x_i corrected by
    the changes of the hot weights made before it in the round (``hot``: slots 0.. the hot
    features', the last the bias'; updated in place for the next rows and threads)."""
    parity = rnd & 1
    g = 0.0
    rowterm = 0.0
    n_rows = 0
    bias_change = 0.0
    s0 = (rnd * n_threads + t) * chunk_rows
    s1 = min(s0 + chunk_rows, n_visits)
    if s0 < s1:
        pgmax_old = fstate[_F_PGMAX_OLD]
        pgmin_old = fstate[_F_PGMIN_OLD]
        pgmax = pg_extremes[t, 0]
        pgmin = pg_extremes[t, 1]
        n_slots = hot.shape[0]
        bias_slot = n_slots - 1
        for s in range(s0, s1):
            i = order[s]
            a = rec[i, _ALPHA]
            yi = rec[i, _Y]
            diag = rec[i, _BOUND_OR_DIAG]
            dot = dots[t, s - s0]
            seen = dot
            for k in range(hot_ptr[i], hot_ptr[i + 1]):
                seen += hot_val[k] * hot[hot_slot[k]]
            if bias >= 0.0:
                seen += bias * hot[bias_slot]
            shrunk, pg, a_new = svm_coordinate(
                a, yi, seen, diag, rec[i, _QBAR], squared_hinge, shrinking, pgmax_old,
                pgmin_old,
            )  # fmt: skip
            if shrunk:
                removed[i] = 1
                continue
            pgmax = max(pgmax, pg)
            pgmin = min(pgmin, pg)
            if abs(pg) > PG_ZERO and a_new != a:
                d = a_new - a
                rec[i, _ALPHA] = a_new
                row_log[t, n_rows] = s
                row_step[t, n_rows, 0] = a
                row_step[t, n_rows, 1] = d
                n_rows += 1
                # the directional derivative at the round's alpha: the gradient before the
                # corrections (the round's w)
                g += d * (yi * dot - 1.0 + (diag * a if squared_hinge else 0.0))
                if squared_hinge:
                    rowterm += diag * d * (a + 0.5 * d)
                rowterm -= d
                step = d * yi
                for k in range(hot_ptr[i], hot_ptr[i + 1]):
                    hot[hot_slot[k]] += step * hot_val[k]
                if bias >= 0.0:
                    hot[bias_slot] += step * bias
                    bias_change += step * bias
        pg_extremes[t, 0] = pgmax
        pg_extremes[t, 1] = pgmin
    partials[parity, t, _P_G] = g
    partials[parity, t, _P_ROWTERM] = rowterm
    partials[parity, t, _P_ROWS] = n_rows
    partials[parity, t, _P_BIAS] = bias_change


@njit(cache=True, nogil=True, inline="always")
def _lower_bound(indices, start, stop, value):
    """The first position in indices[start:stop] (ascending) holding ``value`` or more."""
    while start < stop:
        mid = (start + stop) >> 1
        if indices[mid] < value:
            start = mid + 1
        else:
            stop = mid
    return start


@njit(cache=True, nogil=True)
def _segments(t, rnd, indptr, indices, order, partials, row_log, owner_start, seg_count,
              seg_row, seg_span) -> None:  # fmt: skip
    """Step 3 of thread t: the rows it changed, cut where their entries cross from one
    owner's range of features into the next; the piece of row r in owner o's range is
    appended to owner o's list, (seg_row, seg_span)[t, o, :seg_count[t, o]]."""
    n_owners = owner_start.shape[0] - 1
    for o in range(n_owners):
        seg_count[t, o] = 0
    for r in range(int(partials[rnd & 1, t, _P_ROWS])):
        i = order[row_log[t, r]]
        k = indptr[i]
        stop = indptr[i + 1]
        if k == stop:
            continue
        # the owner of the row's first feature, then from range to range
        o = _lower_bound(owner_start, 1, n_owners, indices[k] + 1) - 1
        while k < stop:
            end = _lower_bound(indices, k, stop, owner_start[o + 1])
            if end > k:
                c = seg_count[t, o]
                seg_row[t, o, c] = r
                seg_span[t, o, c, 0] = k
                seg_span[t, o, c, 1] = end
                seg_count[t, o] = c + 1
            k = end
            o += 1


@njit(cache=True, nogil=True)
def _merge(
    o, rnd, scale, indices, data, w, order, rec, partials, row_log, row_step, seg_count,
    seg_row, seg_span, owner_change, slot,
) -> None:  # fmt: skip
    """Step 4, owner o: w_j += scale d_i y_i x_ij for the entries of its range of every row
    changed in the round (its lists of ``_segments``), threads in order, each thread's rows
    in the order it stepped them; the last owner also adds the bias weight's changes, each
    thread's summed. Records in owner_change[o, slot] how much this moved w'w / 2 (a change
    v of a weight b moves it by v (b + v/2)): slot 0 for the merge, which every thread reads
    for the line search, another for the line search's own pass."""
    parity = rnd & 1
    n_threads = seg_count.shape[0]
    change = 0.0
    for t in range(n_threads):
        for e in range(seg_count[t, o]):
            r = seg_row[t, o, e]
            step = scale * row_step[t, r, 1] * rec[order[row_log[t, r]], _Y]
            for k in range(seg_span[t, o, e, 0], seg_span[t, o, e, 1]):
                j = indices[k]
                v = step * data[k]
                b = w[j]
                w[j] = b + v
                change += v * (b + 0.5 * v)
    if o == n_threads - 1:
        for t in range(n_threads):
            v = scale * partials[parity, t, _P_BIAS]
            if v != 0.0:
                b = w[w.shape[0] - 1]
                w[w.shape[0] - 1] = b + v
                change += v * (b + 0.5 * v)
    owner_change[o, slot] = change


@njit(cache=True, nogil=True)
def _round_sums(rnd, partials, owner_change) -> tuple[float, float, float]:
    """(g, q, m) of a merged round: the directional derivative along its change d of alpha,
    d'Qbar d, and the rows changed; summed in thread order (every thread gets the same)."""
    parity = rnd & 1
    g = 0.0
    rowterm = 0.0
    m = 0.0
    change = 0.0
    for t in range(partials.shape[1]):
        g += partials[parity, t, _P_G]
        rowterm += partials[parity, t, _P_ROWTERM]
        m += partials[parity, t, _P_ROWS]
        change += owner_change[t, 0]
    return g, 2.0 * (change + rowterm - g), m


@njit(cache=True, nogil=True)
def _round_step(rnd, partials, owner_change) -> float:
    """The round's step along d: 1 if phi(1) <= phi(1/m), else the exact line search's -g/q."""
    g, q, m = _round_sums(rnd, partials, owner_change)
    if m <= 1.0 or g >= 0.0 or q <= -2.0 * g * m / (m + 1.0):
        return 1.0
    return -g / q


@njit(cache=True, nogil=True)
def _shorten_rows(t, rnd, gamma, rec, order, partials, row_log, row_step, squared_hinge):
    """Thread t's rows of the round back to alpha_i + gamma d_i."""
    for r in range(int(partials[rnd & 1, t, _P_ROWS])):
        i = order[row_log[t, r]]
        a = max(row_step[t, r, 0] + gamma * row_step[t, r, 1], 0.0)
        if not squared_hinge:
            a = min(a, rec[i, _BOUND_OR_DIAG])
        rec[i, _ALPHA] = a


@njit(cache=True, nogil=True)
def run_threads(
    t, n_threads, n_epochs, indptr, indices, data, bias, loss, rec, w, active, trainable,
    fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group, use_prefetch,
    removed, order, bucket_order, chunk_rows, pg_extremes, partials, dots,
    row_log, row_step, hot_ptr, hot_slot, hot_val, handed, owner_start, seg_count, seg_row,
    seg_span, owner_change, stats, sync,
) -> None:  # fmt: skip
    """Thread t's side of up to ``n_epochs`` outer iterations; every thread calls it with the
    same arrays (thread 0 runs the serial parts), ``sync`` zeroed but for its spin limit.
    Returns when converged or done."""
    squared_hinge = loss == LOSS_SQUARED_HINGE
    in_sequence = hot_ptr[hot_ptr.shape[0] - 1] > 0 or bias >= 0.0
    hot = np.zeros(handed.shape[1])
    rounds_done = 0
    for _ in range(n_epochs):
        if t == 0:
            n_chunks = _begin_iteration(
                active, istate, order, bucket_order, bucket_size, buckets_per_group, rng,
                chunk_rows, pg_extremes,
            )  # fmt: skip
            atomic_store(sync, _SYNC_N_CHUNKS, n_chunks)
        _barrier(sync, n_threads)
        n_chunks = atomic_load(sync, _SYNC_N_CHUNKS)
        n_visits = istate[I_ACTIVE]
        for rnd in range((n_chunks + n_threads - 1) // n_threads):
            rounds_done += 1
            _dots(t, rnd, n_threads, indptr, indices, data, bias, rec, w, use_prefetch, order,
                  n_visits, chunk_rows, dots)  # fmt: skip
            if in_sequence:  # the hot weights' changes so far, from the thread before
                if t > 0:
                    _wait_while_equal(sync, _SYNC_HANDED + _LINE * t, rounds_done - 1)
                    hot[:] = handed[t - 1]
                else:
                    hot[:] = 0.0
            _steps(
                t, rnd, n_threads, bias, squared_hinge, rec, fstate, shrinking, order,
                n_visits, chunk_rows, removed, pg_extremes, partials, dots, row_log,
                row_step, hot_ptr, hot_slot, hot_val, hot,
            )  # fmt: skip
            if in_sequence and t + 1 < n_threads:
                handed[t] = hot
                atomic_store(sync, _SYNC_HANDED + _LINE * (t + 1), rounds_done)
            _segments(t, rnd, indptr, indices, order, partials, row_log, owner_start, seg_count,
                      seg_row, seg_span)  # fmt: skip
            _barrier(sync, n_threads)
            _merge(t, rnd, 1.0, indices, data, w, order, rec, partials, row_log, row_step,
                   seg_count, seg_row, seg_span, owner_change, 0)  # fmt: skip
            _barrier(sync, n_threads)
            gamma = _round_step(rnd, partials, owner_change)
            if t == 0:
                stats[_S_ROUNDS] += 1
            if gamma < 1.0:
                _shorten_rows(t, rnd, gamma, rec, order, partials, row_log, row_step,
                              squared_hinge)  # fmt: skip
                _merge(t, rnd, gamma - 1.0, indices, data, w, order, rec, partials, row_log,
                       row_step, seg_count, seg_row, seg_span, owner_change, 1)  # fmt: skip
                if t == 0:
                    stats[_S_SHORTENED] += 1
                _barrier(sync, n_threads)
        if t == 0:
            done = _end_iteration(active, istate, fstate, removed, trainable, pg_extremes, eps)
            atomic_store(sync, _SYNC_DONE, 1 if done else 0)
        _barrier(sync, n_threads)
        if atomic_load(sync, _SYNC_DONE) == 1:
            return


@njit(cache=True, nogil=True)
def run_simulated(
    n_threads, n_epochs, indptr, indices, data, bias, loss, rec, w, active, trainable,
    fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group, use_prefetch,
    removed, order, bucket_order, chunk_rows, pg_extremes, partials, dots,
    row_log, row_step, hot_ptr, hot_slot, hot_val, handed, owner_start, seg_count, seg_row,
    seg_span, owner_change, stats, round_changes,
) -> None:  # fmt: skip
    """``run_threads``' arithmetic with the threads taken one after another on this thread:
    the same result, bit for bit. ``round_changes`` (an empty array: not kept) receives the
    change of the dual f made by each merged round, in order, until it is full."""
    squared_hinge = loss == LOSS_SQUARED_HINGE
    hot = np.zeros(handed.shape[1])
    for _ in range(n_epochs):
        n_chunks = _begin_iteration(
            active, istate, order, bucket_order, bucket_size, buckets_per_group, rng, chunk_rows,
            pg_extremes,
        )  # fmt: skip
        n_visits = istate[I_ACTIVE]
        for rnd in range((n_chunks + n_threads - 1) // n_threads):
            hot[:] = 0.0
            for t in range(n_threads):
                _dots(t, rnd, n_threads, indptr, indices, data, bias, rec, w, use_prefetch,
                      order, n_visits, chunk_rows, dots)  # fmt: skip
            for t in range(n_threads):
                _steps(
                    t, rnd, n_threads, bias, squared_hinge, rec, fstate, shrinking, order,
                    n_visits, chunk_rows, removed, pg_extremes, partials, dots, row_log,
                    row_step, hot_ptr, hot_slot, hot_val, hot,
                )  # fmt: skip
                _segments(t, rnd, indptr, indices, order, partials, row_log, owner_start,
                          seg_count, seg_row, seg_span)  # fmt: skip
            for o in range(n_threads):
                _merge(o, rnd, 1.0, indices, data, w, order, rec, partials, row_log, row_step,
                       seg_count, seg_row, seg_span, owner_change, 0)  # fmt: skip
            gamma = _round_step(rnd, partials, owner_change)
            k = stats[_S_ROUNDS]
            if k < round_changes.shape[0]:
                g, q, _ = _round_sums(rnd, partials, owner_change)
                round_changes[k] = gamma * g + 0.5 * gamma * gamma * q
            stats[_S_ROUNDS] += 1
            if gamma < 1.0:
                for t in range(n_threads):
                    _shorten_rows(t, rnd, gamma, rec, order, partials, row_log, row_step,
                                  squared_hinge)  # fmt: skip
                for o in range(n_threads):
                    _merge(o, rnd, gamma - 1.0, indices, data, w, order, rec, partials,
                           row_log, row_step, seg_count, seg_row, seg_span,
                           owner_change, 1)  # fmt: skip
                stats[_S_SHORTENED] += 1
        if _end_iteration(active, istate, fstate, removed, trainable, pg_extremes, eps):
            return


@njit(cache=True, nogil=True)
def _rho(indptr, indices, data, rec, n_features, round_rows) -> np.ndarray:
    """rho_j = round_rows / l * sum_i x_ij^2 / Qbar_ii: how much of the curvature of a round's
    rows feature j carries."""
    n_rows = indptr.shape[0] - 1
    rho = np.zeros(n_features)
    for i in range(n_rows):
        qbar = rec[i, _QBAR]
        if qbar <= 0.0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[k])
            rho[indices[k]] += v * v / qbar
    scale = round_rows / max(n_rows, 1)
    for j in range(n_features):
        rho[j] *= scale
    return rho


@njit(cache=True, nogil=True)
def _hot_rows(indptr, indices, data, slot_of):
    """Each row's entries of hot features: (hot_ptr, hot_slot, hot_val), CSR-like, the
    features numbered by slot (``slot_of``: a feature's slot or -1)."""
    n_rows = indptr.shape[0] - 1
    hot_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    for i in range(n_rows):
        count = 0
        for k in range(indptr[i], indptr[i + 1]):
            if slot_of[indices[k]] >= 0:
                count += 1
        hot_ptr[i + 1] = hot_ptr[i] + count
    hot_slot = np.empty(hot_ptr[n_rows], dtype=np.int32)
    hot_val = np.empty(hot_ptr[n_rows])
    for i in range(n_rows):
        p = hot_ptr[i]
        for k in range(indptr[i], indptr[i + 1]):
            h = slot_of[indices[k]]
            if h >= 0:
                hot_slot[p] = h
                hot_val[p] = data[k]
                p += 1
    return hot_ptr, hot_slot, hot_val


def hot_features(X, rec, round_rows: int, max_hot: int = MAX_HOT) -> np.ndarray:
    """The features taken in sequence (besides the bias): rho_j >= 1, at most ``max_hot`` of
    the largest, ascending."""
    rho = _rho(X.indptr, X.indices, X.data, rec, X.shape[1], float(round_rows))
    hot = np.flatnonzero(rho >= 1.0)
    if hot.shape[0] > max_hot:
        hot = hot[np.argsort(-rho[hot], kind="stable")[:max_hot]]
    return np.sort(hot)


def feature_owners(X, n_threads: int) -> np.ndarray:
    """Each thread's range of features in the merge, [owner_start[o], owner_start[o + 1]):
    contiguous, of about equal non-zeros (the merge's work), cut at multiples of
    2**OWNER_BLOCK_SHIFT features so that no two owners write one cache line of w. The last
    range ends past every feature (the bias weight is the last owner's)."""
    n_features = X.shape[1]
    n_blocks = (n_features >> OWNER_BLOCK_SHIFT) + 1
    counts = np.bincount(np.asarray(X.indices) >> OWNER_BLOCK_SHIFT, minlength=n_blocks)
    cumulative = np.cumsum(counts, dtype=np.float64)
    total = max(float(cumulative[-1]), 1.0)
    targets = total * np.arange(1, n_threads) / n_threads
    cuts = np.searchsorted(cumulative, targets, side="left") + 1
    owner_start = np.empty(n_threads + 1, dtype=np.int64)
    owner_start[0] = 0
    owner_start[1:n_threads] = np.minimum(cuts << OWNER_BLOCK_SHIFT, n_features)
    owner_start[n_threads] = n_features + 1
    return np.maximum.accumulate(owner_start)


class ThreadedRounds:
    """The work arrays and the threads of one threaded (or simulated) solve.

    ``advance(n)`` runs up to n outer iterations on the solve's state arrays (those of
    ``dcd._solve_svm_dual``), on ``n_threads`` threads, or with ``simulate`` the same
    arithmetic on the calling thread alone; ``close()`` ends the threads. ``round_rows``:
    rows of a round, all threads together; ``keep_round_changes``: with ``simulate``, the
    change of the dual made by each of the first so many merges is kept in
    ``round_changes``.
    """

    def __init__(
        self, X, bias: float, loss: int, rec, w, active, trainable, fstate, istate, rng,
        eps: float, shrinking: bool, bucket_size: int, buckets_per_group: int,
        use_prefetch: bool, removed, order, bucket_order, n_threads: int, *,
        simulate: bool = False, round_rows: int = DEFAULT_ROUND_ROWS, max_hot: int = MAX_HOT,
        keep_round_changes: int = 0,
    ) -> None:  # fmt: skip
        self.n_threads = T = int(n_threads)
        n_rows = X.shape[0]
        round_rows = max(int(round_rows), 1)
        # A thread's chunk: its share of a round's rows. In a bucketed order a chunk is one
        # group of whole buckets, so that neighbouring rows, whose records share cache lines,
        # go to one thread.
        chunk_rows = max(1, -(-round_rows // T))
        if bucket_size > 1:
            buckets_per_group = max(1, chunk_rows // bucket_size)
            chunk_rows = bucket_size * buckets_per_group
        self.chunk_rows = chunk_rows
        self.buckets_per_group = buckets_per_group
        rows_cap = chunk_rows
        hot = hot_features(X, rec, round_rows, max_hot)
        self.n_hot = int(hot.shape[0])
        slot_of = np.full(X.shape[1], -1, dtype=np.int32)
        slot_of[hot] = np.arange(hot.shape[0], dtype=np.int32)
        hot_ptr, hot_slot, hot_val = _hot_rows(X.indptr, X.indices, X.data, slot_of)
        self.shared = (
            X.indptr, X.indices, X.data, float(bias), int(loss), rec, w, active, trainable,
            fstate, istate, rng, float(eps), bool(shrinking), int(bucket_size),
            int(buckets_per_group), bool(use_prefetch), removed, order, bucket_order,
            chunk_rows,
            np.zeros((T, _LINE)),  # pg_extremes: max, min
            np.zeros((2, T, _LINE)),  # partials
            np.zeros((T, rows_cap)),  # dots
            np.zeros((T, rows_cap), dtype=np.int64),  # row_log: positions in the order
            np.zeros((T, rows_cap, 2)),  # row_step: alpha before, change
            hot_ptr, hot_slot, hot_val,
            np.zeros((T, self.n_hot + 1)),  # handed: the hot weights' changes, thread to thread
            feature_owners(X, T),
            np.zeros((T, T), dtype=np.int64),  # seg_count
            np.zeros((T, T, rows_cap), dtype=np.int64),  # seg_row
            np.zeros((T, T, rows_cap, 2), dtype=X.indptr.dtype),  # seg_span
            np.zeros((T, _LINE)),  # owner_change
        )
        self.stats = np.zeros(2, dtype=np.int64)
        self.simulate = bool(simulate) or T == 1
        self.round_changes = np.zeros(int(keep_round_changes))
        self._sync = np.zeros(_SYNC_HANDED + _LINE * (T + 1), dtype=np.int64)
        self._pool = None
        if not self.simulate:
            self._pool = ThreadPoolExecutor(max_workers=T - 1, thread_name_prefix="linsvm-dcd")

    def advance(self, n_epochs: int) -> None:
        T = self.n_threads
        if self.simulate:
            run_simulated(T, n_epochs, *self.shared, self.stats, self.round_changes)
            return
        sync = self._sync
        sync[:] = 0  # (the hand-over flags count this call's rounds)
        sync[_SYNC_SPINS] = WAIT_SPINS if T <= (os.cpu_count() or 1) else 0
        # compiled (or loaded) here first: a thread that failed to start its kernel would
        # leave the others waiting
        run_threads(0, T, 0, *self.shared, self.stats, sync)
        futures = [
            self._pool.submit(run_threads, t, T, n_epochs, *self.shared, self.stats, sync)
            for t in range(1, T)
        ]
        run_threads(0, T, n_epochs, *self.shared, self.stats, sync)
        for future in futures:
            future.result()

    @property
    def figures(self) -> dict[str, int]:
        return {
            "n_threads": self.n_threads,
            "hot_features": self.n_hot,
            "chunk_rows": self.chunk_rows,
            "rounds": int(self.stats[_S_ROUNDS]),
            "shortened_rounds": int(self.stats[_S_SHORTENED]),
        }

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
