"""Dual coordinate descent for the SVM (-s 1, -s 3) and the SVR (-s 12, -s 13) on several
threads: rounds of rows solved side by side from one w, merged in a fixed order, with an exact
line search.

**Rounds.** Each outer iteration visits the active rows in chunks: groups of buckets of
neighbouring rows (the serial solver's bucketed order, ``_dual.visiting_order``), each chunk
shuffled within itself, or consecutive pieces of a plain random permutation. Chunk c goes to
thread c mod T in round c div T: a round is T chunks, about ``round_rows`` rows in all. In a
round each thread

1. computes w'x_i for its rows against w as the round found it (the bulk of the work);
2. after a barrier (nobody reads w any more this round), steps its rows' alpha by the serial
   coordinate update (``dcd.svm_coordinate``; the SVR's beta by ``svr.svr_coordinate``), in
   order, and adds each change to the weights of its own range of features at once; the pieces
   of the rows in other threads' ranges it lists for their owners;
3. after another barrier, adds the other threads' listed pieces in its own range, threads in
   order.

Each weight thus receives its changes in one fixed order (its owner's rows first, then the
other threads' in thread order) whatever the timing: with a seed and a thread count the run
is the same every time.

**Hot features in sequence.** Rows of a round do not see each other's changes of w, which is
harmless for features that few rows of a round share, and ruinous for those most rows share:
above all the bias (every row has it), and on one-hot data columns that half the rows have.
Each row would push them as if alone: with the bias on generated text, 256-row rounds took 10x
the serial solver's outer iterations. So the "hot" weights, the bias and the features that the
rows of a round share most, are taken in sequence: step 2 runs thread after thread, each
row's w'x_i corrected by the hot weights' changes of the rows before it in the round
(``hot``: their running sum, handed from thread to thread), exactly as the serial solver
would see them. Feature j is hot when rho_j = (rows a round) / l * sum_i x_ij^2 / Qbar_ii >= 1,
the share of a row's curvature it carries, summed over a round (at most ``MAX_HOT``).

**Why it converges at every thread count.** Let d be a round's change of alpha (m rows).
Step 2 is one pass of exact coordinate descent, from alpha, on a convex model of the dual f:
the true one with the rows' coupling through the cold features dropped. So its directional
derivative g = grad f(alpha)'d is negative (the model decreased, by at least -g/2). Along d the
dual is the quadratic phi(gamma) = f(alpha + gamma d) - f(alpha) = gamma g + gamma^2 q / 2,
q = d'Qbar d = 2 (phi(1) - g), where phi(1) comes from the merge itself: a weight changed from
b by v moves w'w / 2 by v (b + v/2), summed exactly as the changes are added. The round keeps
gamma = 1 when phi(1) <= phi(1/m); otherwise it takes the exact line search's gamma = -g/q < 1
(alpha and w scaled back by one more pass over the round's changes). So every round lowers the
dual, by at least -phi(1/m) >= -g/(2m) (q <= m times the model's curvature along d, by
Cauchy-Schwarz over the round's rows): a descent that converges for any number of threads, its
rate bounded by the round's rows, never by the thread count. In practice gamma is 1: the
serial solver's outer iterations on pypi-recent, reuters and generated text, with and without
a bias, at 256 rows a round. A thread's view of the cold features lags by at most a round.

The SVR dual adds p sum_i |beta_i|, separable, so the model keeps it whole and the argument
holds with phi(gamma) = gamma g + gamma^2 q / 2 + N(gamma), N(gamma) = p sum_i (|beta_i +
gamma d_i| - |beta_i|) convex with N(0) = 0: phi(1/m) <= (g + N(1)) / m + q / (2 m^2) <= (the
model's decrease) / m. A round keeps gamma = 1 when phi(1) is at most that bound (the threads'
sums give it); otherwise phi, convex and piecewise quadratic, is minimised over [0, 1] by
halving on the sign of its slope (the round's rows read by every thread in the same order).

Shrinking and the stopping rule are the serial solver's (``dcd.end_iteration`` on the extremes
of every thread's projected gradients, ``svr.svr_end_iteration`` on the largest violation and
the violations' 1-norm summed in thread order, then the re-check of every row before stopping),
and the state (records, w, active set, thresholds, generator) is the serial one, so a threaded
solve checkpoints and resumes through the same ``_dual.run_dual``. w is the running sum of the
rounds' changes: sum_i y_i alpha_i x_i up to rounding.

**The simulator.** ``run_simulated`` runs the same steps with the threads taken one after
another on the calling thread (the same chunks, hand-overs, merges and line searches): the
same bits as T real threads at the cost of one, so that any thread count can be studied and
tested on a small machine.

**Threads.** T - 1 Python threads and the caller run ``run_threads`` in compiled code without
the GIL, meeting at barriers and handing the hot weights' changes on by flags (spinning
briefly, then giving the core to the operating system, so that more threads than cores still
progress). Every branch a thread takes depends only on what no thread changes before the next
barrier, so that all take the same branches and meet at the same barriers. Each outer
iteration on the threads is timed: when the operating system kept some thread off its core for
half of it (other programs want the cores), the threads would wait for each other more than
they work, so the next outer iterations run the simulator instead, the same bits on one
thread, before the threads are tried again (``ON_CORE_MIN``, ``OFF_CORE_BACKOFF``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from .._intrinsics import (
    atomic_fetch_add,
    atomic_load,
    atomic_store,
    spin_pause,
    yield_core,
)
from ..objective import LOSS_SQUARED_HINGE
from ..parallel import usable_cpus as _usable_cpus
from ..sparse_rows import row_dot, row_dot_and_split
from ._dual import (
    I_ACTIVE,
    I_CONVERGED,
    I_ITER,
    drop_shrunk,
    prefetch_ahead,
    prefetch_rows,
    visiting_order,
)
from ._random import FIRST, next_u64, shuffle
from .dcd import (
    _ALPHA,
    _BOUND_OR_DIAG,
    _F_PGMAX_OLD,
    _F_PGMIN_OLD,
    _QBAR,
    _Y,
    PG_ZERO,
    close_iteration,
    svm_coordinate,
)
from .svr import svr_close_iteration, svr_coordinate

# Rows of a round (all threads together), by default: how far a thread's view of the cold
# features may lag. Up to 256 the serial solver's outer iterations are kept (pypi-recent,
# reuters: -s 1 and -s 3, no bias); at 1024 they grow 1.7x on pypi-recent -s 1.
DEFAULT_ROUND_ROWS = 256
# Hot features (besides the bias) at most: each costs the sequential step a multiply-add for
# every row that has it.
MAX_HOT = 64
# Rows sampled to find the hot features and balance the owners' ranges (fixed seed).
SAMPLE_ROWS = 50_000
SAMPLE_SEED = 0x5EED
# The threads' ranges of features start at multiples of 2**OWNER_BLOCK_SHIFT features (8 cache
# lines of w), so that no two threads write one cache line.
OWNER_BLOCK_SHIFT = 6
# Up to this many threads the round's changes are added by their own threads, a range of
# features at a time in turn (T phases, each ending at a barrier; each thread rereads only
# rows it has just read); beyond, each thread adds every thread's changes in its own range
# (one phase, but most rows read again from other cores).
ROTATE_THREADS = 4
# Spins while waiting before each yield of the core (a few microseconds), when every thread
# has a core of its own; with more threads than cores a waiting thread yields at once.
WAIT_SPINS = 200
# Threads meet every few microseconds, so a thread that the operating system takes off its
# core (other programs want it) stops all of them: on a 2-core machine with other work running
# (load average 10), two threads took 16-240 s where one took 3-5 s (pypi-recent, -s 1).
# When some thread of an outer iteration was on its core less than this share of the time,
# the next iterations run the same arithmetic on one thread (``run_simulated``: the same bits),
# for OFF_CORE_BACKOFF outer iterations, doubling each time the threads are found off again.
ON_CORE_MIN = 0.5
OFF_CORE_BACKOFF = 8

# The barrier's array: arrivals, generation, the run's flags, then one hand-over flag a
# thread; every entry on a cache line of its own.
_LINE = 8
_SYNC_COUNT, _SYNC_GENERATION, _SYNC_DONE, _SYNC_N_CHUNKS, _SYNC_SPINS = 0, 8, 16, 24, 32
_SYNC_HANDED = 40

# Per thread and round (two rounds' worth, by parity; each thread's padded to a cache line):
# g = sum_i d_i G_i, the alpha terms of phi(1), the rows changed, the bias weight's change,
# and (regression) the change of p sum_i |beta_i| at step 1.
_P_G, _P_ROWTERM, _P_ROWS, _P_BIAS, _P_NONSMOOTH = 0, 1, 2, 3, 4
# Per thread: the epoch's projected-gradient extremes (regression: the largest violation and
# the violations' 1-norm), and how much the thread's additions to its range moved w'w / 2 in
# the round (its own rows', then the merge's; the shortening's).
_T_PGMAX, _T_PGMIN, _T_CHANGE, _T_SHORTENED = 0, 1, 2, 3
# (and the rows it kept of its range of the active set: ``_drop_shrunk_on_threads``)
_T_KEPT = 4
_T_GMAX, _T_GNORM1 = _T_PGMAX, _T_PGMIN
# Bisection steps of the line search when the regression dual's |beta| terms bend phi.
_LINE_SEARCH_HALVINGS = 60

# The run's counters (``stats``): rounds merged, rounds whose step the line search shortened,
# spells of outer iterations run on one thread because the threads were off their cores.
_S_ROUNDS, _S_SHORTENED, _S_ON_ONE_THREAD = 0, 1, 2


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


@njit(cache=True, nogil=True, inline="always")
def _lower_bound(values, start, stop, value):
    """The first position in values[start:stop] (ascending) holding ``value`` or more: a few
    entries scanned (most rows are short), then halving."""
    end = min(stop, start + 8)
    while start < end and values[start] < value:
        start += 1
    if start < end or start == stop:
        return start
    while start < stop:
        mid = (start + stop) >> 1
        if values[mid] < value:
            start = mid + 1
        else:
            stop = mid
    return start


# ----------------------------------------------------------------------------- an iteration


@njit(cache=True, nogil=True)
def _begin_iteration(
    active, istate, order, bucket_order, bucket_size, buckets_per_group, rng, chunk_rows,
    chunk_start, chunk_seed, per_thread, regression,
) -> int:  # fmt: skip
    """The serial start of an outer iteration (thread 0): the order of the chunks, every
    thread's projected-gradient extremes (regression: violations) reset. Returns the number
    of chunks.

    Bucketed: the buckets shuffled, chunk c being buckets_per_group of them, whose rows its
    thread gathers and shuffles (``_fill_chunk``) with a generator seeded by chunk_seed[0] + c;
    otherwise the serial solver's plain permutation, cut into pieces of chunk_rows."""
    n_active = istate[I_ACTIVE]
    for t in range(per_thread.shape[0]):
        per_thread[t, _T_PGMAX] = 0.0 if regression else -np.inf
        per_thread[t, _T_PGMIN] = 0.0 if regression else np.inf
    if bucket_size == 1:
        visiting_order(active, n_active, order, bucket_order, 1, 1, rng)
        n_chunks = (n_active + chunk_rows - 1) // chunk_rows
        for c in range(n_chunks + 1):
            chunk_start[c] = min(c * chunk_rows, n_active)
        return n_chunks
    n_buckets = (n_active + bucket_size - 1) // bucket_size
    for b in range(n_buckets):
        bucket_order[b] = b
    shuffle(bucket_order, FIRST, n_buckets, rng)
    chunk_seed[0] = np.int64(next_u64(rng) >> np.uint64(1))
    n_chunks = (n_buckets + buckets_per_group - 1) // buckets_per_group
    position = 0
    for c in range(n_chunks):
        chunk_start[c] = position
        for ib in range(c * buckets_per_group, min((c + 1) * buckets_per_group, n_buckets)):
            first = bucket_order[ib] * bucket_size
            position += min(first + bucket_size, n_active) - first
    chunk_start[n_chunks] = position
    return n_chunks


@njit(cache=True, nogil=True)
def _prepare_chunk(
    c, n_chunks, indptr, indices, data, rec, use_prefetch, active, order, bucket_order,
    bucket_size, buckets_per_group, chunk_start, chunk_seed, n_active, rng,
) -> None:  # fmt: skip
    """Ready chunk c (none if c >= n_chunks) a round ahead: in a bucketed order, the rows of
    its buckets, shuffled by a generator seeded with chunk_seed[0] + c (``rng``: the thread's
    own state array); then the first rows it will visit asked for."""
    if c >= n_chunks:
        return
    s0 = chunk_start[c]
    if bucket_size > 1:
        n_buckets = (n_active + bucket_size - 1) // bucket_size
        position = s0
        for ib in range(c * buckets_per_group, min((c + 1) * buckets_per_group, n_buckets)):
            first = bucket_order[ib] * bucket_size
            for s in range(first, min(first + bucket_size, n_active)):
                order[position] = active[s]
                position += 1
        rng[0] = np.uint64(chunk_seed[0]) + np.uint64(c)
        shuffle(order, s0, position, rng)
    if use_prefetch:
        prefetch_rows(order, s0, chunk_start[c + 1], indptr, indices, data,
                      rec.reshape(rec.size), 4)  # fmt: skip


@njit(cache=True, nogil=True)
def _drop_shrunk_on_threads(t, n_threads, active, n_active, removed, kept, scratch,
                            sync) -> int:  # fmt: skip
    """Thread t's side of dropping the outer iteration's shrunk rows from active[:n_active]
    (``_dual.drop_shrunk``'s result) on all ``n_threads`` threads, each calling it (three
    barriers): each drops those of its range of the active set, writes how many it kept in
    kept[t], copies them to their place in ``scratch`` (after the earlier ranges' rows), then
    copies its share of the joined rows back. Returns the rows kept (on every thread).
    (Serially the drop took 0.7-3 ms of each outer iteration on pypi-recent's 663k rows and
    3.4-14 ms on 3M, while the other threads waited; a serial join of the ranges, 0.3-1.3 ms.)"""
    lo = n_active * t // n_threads
    hi = n_active * (t + 1) // n_threads
    kept[t] = drop_shrunk(active[lo:hi], hi - lo, removed)
    _barrier(sync, n_threads)
    start = 0
    n_kept = 0
    for u in range(n_threads):
        if u == t:
            start = n_kept
        n_kept += int(kept[u])
    mine = int(kept[t])
    for s in range(mine):
        scratch[start + s] = active[lo + s]
    _barrier(sync, n_threads)
    first = n_kept * t // n_threads
    last = n_kept * (t + 1) // n_threads
    for s in range(first, last):
        active[s] = scratch[s]
    _barrier(sync, n_threads)
    return n_kept


@njit(cache=True, nogil=True)
def _end_iteration(active, n_kept, istate, fstate, trainable, per_thread, eps,
                   regression) -> bool:  # fmt: skip
    """The serial end of an outer iteration (thread 0), its shrunk rows dropped (``n_kept``
    left): every thread's extremes (regression: violations, summed in thread order)
    combined, then the serial solver's stopping rule. True once converged."""
    if regression:
        gmax = 0.0
        gnorm1 = 0.0
        for t in range(per_thread.shape[0]):
            gmax = max(gmax, per_thread[t, _T_GMAX])
            gnorm1 += per_thread[t, _T_GNORM1]
        return svr_close_iteration(
            active, n_kept, trainable, fstate, istate, gmax, gnorm1, eps
        )
    pgmax = -np.inf
    pgmin = np.inf
    for t in range(per_thread.shape[0]):
        pgmax = max(pgmax, per_thread[t, _T_PGMAX])
        pgmin = min(pgmin, per_thread[t, _T_PGMIN])
    return close_iteration(active, n_kept, trainable, fstate, istate, pgmax, pgmin, eps)


# ----------------------------------------------------------------------------- a round


@njit(cache=True, nogil=True)
def _dots(t, c, indptr, indices, data, bias, rec, w, use_prefetch, order, chunk_start, dots,
          rotate, owner_start, splits) -> None:  # fmt: skip
    """Step 1, thread t, chunk c: w'x_i of its rows, w as the round found it. With
    ``rotate``, also where each row's entries cross into each owner's range, while they are
    at hand: row p of the chunk has its entries of range o at
    [splits[t, p, o], splits[t, p, o + 1])."""
    s0 = chunk_start[c]
    s1 = chunk_start[c + 1]
    rec_flat = rec.reshape(rec.size)
    n_owners = owner_start.shape[0] - 1
    for s in range(s0, s1):
        if use_prefetch:
            prefetch_ahead(order, s, s1, indptr, indices, data, rec_flat, 4)
        i = order[s]
        if rotate:  # (the first crossing found by the dot product's own sweep)
            dot, k = row_dot_and_split(indptr, indices, data, bias, i, w, owner_start[1])
            stop = indptr[i + 1]
            splits[t, s - s0, 0] = indptr[i]
            splits[t, s - s0, 1] = k
            for o in range(2, n_owners):
                k = _lower_bound(indices, k, stop, owner_start[o])
                splits[t, s - s0, o] = k
            splits[t, s - s0, n_owners] = stop
        else:
            dot = row_dot(indptr, indices, data, bias, i, w)
        dots[t, s - s0] = dot


@njit(cache=True, nogil=True)
def _steps(
    t, c, n_chunks, parity, bias, squared_hinge, regression, p, rec, fstate, shrinking, order,
    chunk_start, removed, per_thread, partials, dots, row_index, row_pos, row_steps, hot_ptr,
    hot_slot, hot_val, hot,
) -> None:  # fmt: skip
    """Step 2, thread t, chunk c (none if c >= n_chunks): the coordinate steps of its rows in
    order (the SVM's ``svm_coordinate``, or with ``regression`` the SVR's ``svr_coordinate``
    at width ``p``), each row's w'x_i corrected by the hot weights' changes made before it in
    the round (``hot``: slots 0.. the hot features', the last the bias's; updated in place for
    the next rows and threads)."""
    g = 0.0
    rowterm = 0.0
    nonsmooth = 0.0
    bias_change = 0.0
    n_rows = 0
    pgmax_old = fstate[_F_PGMAX_OLD]
    pgmin_old = fstate[_F_PGMIN_OLD]
    pgmax = per_thread[t, _T_PGMAX]
    pgmin = per_thread[t, _T_PGMIN]
    bias_slot = hot.shape[0] - 1
    s0, s1 = (chunk_start[c], chunk_start[c + 1]) if c < n_chunks else (0, 0)
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
        if regression:  # (pgmax: the largest violation, pgmin: the violations' 1-norm)
            shrunk, violation, a_new = svr_coordinate(
                a, yi, seen, diag, rec[i, _QBAR], squared_hinge, p, shrinking, pgmax_old
            )
            if shrunk:
                removed[i] = 1
                continue
            pgmax = max(pgmax, violation)
            pgmin += violation
            if a_new == a:
                continue
            d = a_new - a
            step = d  # (w = sum_i beta_i x_i)
        else:
            shrunk, pg, a_new = svm_coordinate(
                a, yi, seen, diag, rec[i, _QBAR], squared_hinge, shrinking, pgmax_old, pgmin_old
            )
            if shrunk:
                removed[i] = 1
                continue
            pgmax = max(pgmax, pg)
            pgmin = min(pgmin, pg)
            if abs(pg) <= PG_ZERO or a_new == a:
                continue
            d = a_new - a
            step = d * yi
        rec[i, _ALPHA] = a_new
        r = n_rows
        n_rows += 1
        row_index[t, r] = i
        row_pos[t, r] = s - s0
        row_steps[t, r, 0] = a
        row_steps[t, r, 1] = d
        row_steps[t, r, 2] = step
        # the directional derivative at the round's alpha: the gradient at the round's w
        # (regression: of the smooth part, 1/2 beta'(Q + diag(lambda))beta - y'beta)
        if regression:
            lam = diag if squared_hinge else 0.0
            g += d * (dot - yi + lam * a)
            rowterm += lam * d * (a + 0.5 * d) - yi * d
            nonsmooth += p * (abs(a_new) - abs(a))
        else:
            g += d * (yi * dot - 1.0 + (diag * a if squared_hinge else 0.0))
            if squared_hinge:
                rowterm += diag * d * (a + 0.5 * d)
            rowterm -= d
        for k in range(hot_ptr[i], hot_ptr[i + 1]):
            hot[hot_slot[k]] += step * hot_val[k]
        if bias >= 0.0:
            hot[bias_slot] += step * bias
            bias_change += step * bias
    per_thread[t, _T_PGMAX] = pgmax
    per_thread[t, _T_PGMIN] = pgmin
    partials[parity, t, _P_G] = g
    partials[parity, t, _P_ROWTERM] = rowterm
    partials[parity, t, _P_ROWS] = n_rows
    partials[parity, t, _P_BIAS] = bias_change
    partials[parity, t, _P_NONSMOOTH] = nonsmooth


@njit(cache=True, nogil=True)
def _segments(t, parity, indptr, indices, partials, row_index, owner_start, seg_count, seg_row,
              seg_span) -> None:  # fmt: skip
    """Step 3, thread t: its changed rows cut where their entries cross from one thread's
    range of features into the next; the piece of its r-th changed row in owner o's range is
    listed for o, (seg_row, seg_span)[t, o, :seg_count[t, o]]."""
    n_owners = owner_start.shape[0] - 1
    for o in range(n_owners):
        seg_count[t, o] = 0
    for r in range(int(partials[parity, t, _P_ROWS])):
        i = row_index[t, r]
        k = indptr[i]
        stop = indptr[i + 1]
        if k == stop:
            continue
        # the owner of the row's first feature, then from range to range
        o = _lower_bound(owner_start, 1, n_owners, indices[k] + 1) - 1
        while k < stop:
            bound = owner_start[o + 1]
            end = stop if indices[stop - 1] < bound else _lower_bound(indices, k, stop, bound)
            if end > k:
                e = seg_count[t, o]
                seg_row[t, o, e] = r
                seg_span[t, o, e, 0] = k
                seg_span[t, o, e, 1] = end
                seg_count[t, o] = e + 1
            k = end
            o += 1


@njit(cache=True, nogil=True)
def _round_sums(parity, partials, per_thread, slot) -> tuple[float, float, float]:
    """(g, q, m) of a merged round: the directional derivative along its change d of alpha,
    d'Qbar d, and the rows changed; summed in thread order (every thread gets the same)."""
    g = 0.0
    rowterm = 0.0
    m = 0.0
    change = 0.0
    for t in range(partials.shape[1]):
        g += partials[parity, t, _P_G]
        rowterm += partials[parity, t, _P_ROWTERM]
        m += partials[parity, t, _P_ROWS]
        change += per_thread[t, slot]
    return g, 2.0 * (change + rowterm - g), m


@njit(cache=True, nogil=True, inline="always")
def _round_abs_terms(parity, partials, row_steps, gamma) -> tuple[float, float]:
    """(sum_i (|beta_i + gamma d_i| - |beta_i|), its right derivative in gamma) over the
    round's changed rows, threads in order (every thread gets the same): the regression
    dual's |beta| terms along the round's d, over p. Inlined: a caller's unused sum is
    compiled away."""
    total = 0.0
    slope = 0.0
    for t in range(partials.shape[1]):
        for r in range(int(partials[parity, t, _P_ROWS])):
            b = row_steps[t, r, 0]
            d = row_steps[t, r, 1]
            moved = b + gamma * d
            total += abs(moved) - abs(b)
            slope += d if moved > 0.0 else (-d if moved < 0.0 else abs(d))
    return total, slope


@njit(cache=True, nogil=True)
def _round_slope(parity, partials, row_steps, p, g, q, gamma) -> float:
    """phi's right derivative at gamma: g + gamma q plus that of the |beta| terms."""
    return g + gamma * q + p * _round_abs_terms(parity, partials, row_steps, gamma)[1]


@njit(cache=True, nogil=True)
def _phi(parity, partials, row_steps, p, g, q, gamma) -> float:
    """phi(gamma) = f(alpha + gamma d) - f(alpha), the change of the dual a step of gamma
    along the round's d makes (g, q: ``_round_sums``')."""
    change = gamma * g + 0.5 * gamma * gamma * q
    if p != 0.0:
        change += p * _round_abs_terms(parity, partials, row_steps, gamma)[0]
    return change


@njit(cache=True, nogil=True)
def _round_change(parity, partials, per_thread, row_steps, p, gamma) -> float:
    """phi(gamma) of the merged round."""
    g, q, _ = _round_sums(parity, partials, per_thread, _T_CHANGE)
    return _phi(parity, partials, row_steps, p, g, q, gamma)


@njit(cache=True, nogil=True)
def _round_step(parity, partials, per_thread, row_steps, p) -> float:
    """The round's step along d: 1 if phi(1) <= phi(1/m), else the exact line search's
    minimiser of phi over [0, 1] (-g/q; with the regression dual's |beta| terms, p > 0, phi
    is convex piecewise quadratic and its minimiser is found by halving on its slope)."""
    g, q, m = _round_sums(parity, partials, per_thread, _T_CHANGE)
    if p == 0.0:
        if m <= 1.0 or g >= 0.0 or q <= -2.0 * g * m / (m + 1.0):
            return 1.0
        return -g / q
    if m <= 1.0:
        return 1.0
    nonsmooth = 0.0
    for t in range(partials.shape[1]):
        nonsmooth += partials[parity, t, _P_NONSMOOTH]
    # phi(1/m) <= (g + N(1)) / m + q / (2 m^2), N the |beta| terms (convex, N(0) = 0): the
    # bound certifies the same decrease as phi(1/m) itself (see the module's note) and needs
    # only the threads' sums. The rows are read only past this point, which every thread
    # reaches or none, and which ends at a barrier before any thread steps the next round's
    # rows.
    inverse = 1.0 / m
    phi_1 = g + 0.5 * q + nonsmooth
    if phi_1 <= 0.0 and phi_1 <= inverse * (g + nonsmooth) + 0.5 * inverse * inverse * q:
        return 1.0
    phi_m = _phi(parity, partials, row_steps, p, g, q, inverse)
    low = 0.0
    high = 1.0
    for _ in range(_LINE_SEARCH_HALVINGS):
        middle = 0.5 * (low + high)
        if _round_slope(parity, partials, row_steps, p, g, q, middle) < 0.0:
            low = middle
        else:
            high = middle
    return low if _phi(parity, partials, row_steps, p, g, q, low) <= phi_m else inverse


@njit(cache=True, nogil=True)
def _shorten_rows(t, parity, gamma, rec, partials, row_index, row_steps, squared_hinge,
                  regression):  # fmt: skip
    """Thread t's rows changed in the round back to alpha_i + gamma d_i (inside the box that
    both ends of the step lie in: only rounding can leave it)."""
    for r in range(int(partials[parity, t, _P_ROWS])):
        i = row_index[t, r]
        a = row_steps[t, r, 0] + gamma * row_steps[t, r, 1]
        if regression:
            if not squared_hinge:
                a = min(max(a, -rec[i, _BOUND_OR_DIAG]), rec[i, _BOUND_OR_DIAG])
        else:
            a = max(a, 0.0)
            if not squared_hinge:
                a = min(a, rec[i, _BOUND_OR_DIAG])
        rec[i, _ALPHA] = a


# ----------------------------------------------------------------------------- the runs


@njit(cache=True, nogil=True, inline="always")
def _add_piece(indices, data, w, step, start, stop) -> float:
    """w_j += step x_j over entries [start, stop) of a row; returns how much this moved
    w'w / 2 (a change v of a weight b moves it by v (b + v/2)), summed in two chains (one
    chain of additions waits on each one's latency; a row's features are distinct)."""
    even = 0.0
    odd = 0.0
    k = start
    while k + 1 < stop:
        j0 = indices[k]
        j1 = indices[k + 1]
        v0 = step * data[k]
        v1 = step * data[k + 1]
        b0 = w[j0]
        b1 = w[j1]
        w[j0] = b0 + v0
        w[j1] = b1 + v1
        even += v0 * (b0 + 0.5 * v0)
        odd += v1 * (b1 + 0.5 * v1)
        k += 2
    if k < stop:
        j0 = indices[k]
        v0 = step * data[k]
        b0 = w[j0]
        w[j0] = b0 + v0
        even += v0 * (b0 + 0.5 * v0)
    return even + odd


@njit(cache=True, nogil=True, inline="always")
def _add_bias(w, v) -> float:
    """The bias weight (w's last) += v; its move of w'w / 2."""
    if v == 0.0:
        return 0.0
    n_weights = w.shape[0]
    b = w[n_weights - 1]
    w[n_weights - 1] = b + v
    return v * (b + 0.5 * v)


@njit(cache=True, nogil=True)
def _apply_pieces(t, o, parity, scale, indices, data, w, partials, row_steps, seg_count,
                  seg_row, seg_span) -> float:  # fmt: skip
    """w_j += scale d_i y_i x_ij over thread t's listed pieces in owner o's range of its rows
    changed in the round (and, when o is the last owner, thread t's summed change of the bias
    weight). Returns how much this moved w'w / 2: a change v of a weight b moves it by
    v (b + v/2)."""
    change = 0.0
    for e in range(seg_count[t, o]):
        step = scale * row_steps[t, seg_row[t, o, e], 2]
        change += _add_piece(indices, data, w, step, seg_span[t, o, e, 0], seg_span[t, o, e, 1])
    if o == seg_count.shape[1] - 1:
        change += _add_bias(w, scale * partials[parity, t, _P_BIAS])
    return change


@njit(cache=True, nogil=True)
def _apply_rows(t, o, parity, scale, indices, data, w, partials, row_pos, row_steps, splits):
    """``_apply_pieces`` from the rows' ``splits`` (taken by ``_dots`` with ``rotate``)."""
    change = 0.0
    for r in range(int(partials[parity, t, _P_ROWS])):
        p = row_pos[t, r]
        step = scale * row_steps[t, r, 2]
        change += _add_piece(indices, data, w, step, splits[t, p, o], splits[t, p, o + 1])
    if o == splits.shape[2] - 2:
        change += _add_bias(w, scale * partials[parity, t, _P_BIAS])
    return change


@njit(cache=True, nogil=True)
def _add_changes(
    t, n_threads, rotate, parity, scale, indices, data, w, partials, row_pos, row_steps,
    splits, seg_count, seg_row, seg_span, per_thread, slot, sync,
) -> None:  # fmt: skip
    """Step 3, thread t: add the round's changes of w (each scaled by ``scale``), after a
    barrier that every thread reaches once its rows are stepped and listed, and before the
    barrier that ends the step. Records how much thread t's additions moved w'w / 2 in
    per_thread[t, slot] (``_T_CHANGE``: read by every thread for the line search;
    ``_T_SHORTENED``: the line search's own pass, which needs no barrier before it: nobody
    reads w or those sums then).

    ``rotate`` (few threads): in phase p, thread t adds its own pieces in owner (t + p) mod T's
    range, from rows it has just read; a barrier between phases. Otherwise thread t, as owner,
    adds every thread's pieces in its range, threads in order. Either way each weight
    receives its changes in one fixed order. ``sync`` is None in the simulator, which runs
    the same additions in the same order without barriers (``_add_all``)."""
    change = 0.0
    if rotate:
        for p in range(n_threads):
            change += _apply_rows(
                t, (t + p) % n_threads, parity, scale, indices, data, w, partials, row_pos,
                row_steps, splits,
            )  # fmt: skip
            if p + 1 < n_threads:
                _barrier(sync, n_threads)
    else:
        for producer in range(n_threads):
            change += _apply_pieces(
                producer, t, parity, scale, indices, data, w, partials, row_steps, seg_count,
                seg_row, seg_span,
            )  # fmt: skip
    # (before the barrier: every thread reads every sum right after it)
    per_thread[t, slot] = change
    _barrier(sync, n_threads)


@njit(cache=True, nogil=True)
def _add_all(
    n_threads, rotate, parity, scale, indices, data, w, partials, row_pos, row_steps, splits,
    seg_count, seg_row, seg_span, per_thread, slot,
) -> None:  # fmt: skip
    """Every thread's ``_add_changes``, one after another, in the threads' order of additions
    for every weight and with the threads' own sums: the simulator's step 3."""
    if rotate:
        for t in range(n_threads):
            per_thread[t, slot] = 0.0
        for p in range(n_threads):
            for t in range(n_threads):
                per_thread[t, slot] += _apply_rows(
                    t, (t + p) % n_threads, parity, scale, indices, data, w, partials, row_pos,
                    row_steps, splits,
                )  # fmt: skip
        return
    for o in range(n_threads):
        change = 0.0
        for producer in range(n_threads):
            change += _apply_pieces(
                producer, o, parity, scale, indices, data, w, partials, row_steps, seg_count,
                seg_row, seg_span,
            )  # fmt: skip
        per_thread[o, slot] = change


@njit(cache=True, nogil=True)
def run_threads(
    t, n_threads, n_epochs, indptr, indices, data, bias, loss, regression, p, rec, w, active,
    trainable, fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group,
    use_prefetch, removed, order, bucket_order, chunk_rows, chunk_start, chunk_seed, rngs,
    per_thread, partials, dots, row_index, row_pos, row_steps, splits, hot_ptr, hot_slot,
    hot_val, handed, owner_start, seg_count, seg_row, seg_span, rotate, stats, sync,
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
                chunk_rows, chunk_start, chunk_seed, per_thread, regression,
            )  # fmt: skip
            atomic_store(sync, _SYNC_N_CHUNKS, n_chunks)
        _barrier(sync, n_threads)
        n_chunks = atomic_load(sync, _SYNC_N_CHUNKS)
        n_active = istate[I_ACTIVE]
        _prepare_chunk(
            t, n_chunks, indptr, indices, data, rec, use_prefetch, active, order, bucket_order,
            bucket_size, buckets_per_group, chunk_start, chunk_seed, n_active, rngs[t],
        )  # fmt: skip
        for rnd in range((n_chunks + n_threads - 1) // n_threads):
            rounds_done += 1
            c = rnd * n_threads + t
            parity = rnd & 1
            if c < n_chunks:
                _dots(t, c, indptr, indices, data, bias, rec, w, use_prefetch, order,
                      chunk_start, dots, rotate, owner_start, splits)  # fmt: skip
            if in_sequence:  # the hot weights' changes so far, from the thread before
                if t > 0:
                    _wait_while_equal(sync, _SYNC_HANDED + _LINE * t, rounds_done - 1)
                    for k in range(hot.shape[0]):
                        hot[k] = handed[t - 1, k]
                else:
                    hot[:] = 0.0
            _steps(
                t, c, n_chunks, parity, bias, squared_hinge, regression, p, rec, fstate,
                shrinking, order, chunk_start, removed, per_thread, partials, dots, row_index,
                row_pos, row_steps, hot_ptr, hot_slot, hot_val, hot,
            )  # fmt: skip
            if in_sequence and t + 1 < n_threads:
                handed[t] = hot
                atomic_store(sync, _SYNC_HANDED + _LINE * (t + 1), rounds_done)
            if not rotate:
                _segments(t, parity, indptr, indices, partials, row_index, owner_start,
                          seg_count, seg_row, seg_span)  # fmt: skip
            _prepare_chunk(
                c + n_threads, n_chunks, indptr, indices, data, rec, use_prefetch, active, order,
                bucket_order, bucket_size, buckets_per_group, chunk_start, chunk_seed,
                n_active, rngs[t],
            )  # fmt: skip
            _barrier(sync, n_threads)  # (every w'x_i of the round read: w may change)
            _add_changes(
                t, n_threads, rotate, parity, 1.0, indices, data, w, partials, row_pos,
                row_steps, splits, seg_count, seg_row, seg_span, per_thread, _T_CHANGE, sync,
            )  # fmt: skip
            gamma = _round_step(parity, partials, per_thread, row_steps, p)
            if t == 0:
                stats[_S_ROUNDS] += 1
            if gamma < 1.0:
                _shorten_rows(t, parity, gamma, rec, partials, row_index, row_steps,
                              squared_hinge, regression)  # fmt: skip
                _add_changes(
                    t, n_threads, rotate, parity, gamma - 1.0, indices, data, w, partials,
                    row_pos, row_steps, splits, seg_count, seg_row, seg_span, per_thread,
                    _T_SHORTENED, sync,
                )  # fmt: skip
                if t == 0:
                    stats[_S_SHORTENED] += 1
        n_kept = _drop_shrunk_on_threads(t, n_threads, active, n_active, removed,
                                         per_thread[:, _T_KEPT], order, sync)  # fmt: skip
        if t == 0:
            done = _end_iteration(
                active, n_kept, istate, fstate, trainable, per_thread, eps, regression
            )
            atomic_store(sync, _SYNC_DONE, 1 if done else 0)
        _barrier(sync, n_threads)
        if atomic_load(sync, _SYNC_DONE) == 1:
            return


@njit(cache=True, nogil=True)
def run_simulated(
    n_threads, n_epochs, indptr, indices, data, bias, loss, regression, p, rec, w, active,
    trainable, fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group,
    use_prefetch, removed, order, bucket_order, chunk_rows, chunk_start, chunk_seed, rngs,
    per_thread, partials, dots, row_index, row_pos, row_steps, splits, hot_ptr, hot_slot,
    hot_val, handed, owner_start, seg_count, seg_row, seg_span, rotate, stats, round_changes,
) -> None:  # fmt: skip
    """``run_threads``' arithmetic with the threads taken one after another on this thread:
    the same result, bit for bit. ``round_changes`` (an empty array: not kept) receives the
    change of the dual f made by each merged round, in order, until it is full."""
    squared_hinge = loss == LOSS_SQUARED_HINGE
    hot = np.zeros(handed.shape[1])
    for _ in range(n_epochs):
        n_chunks = _begin_iteration(
            active, istate, order, bucket_order, bucket_size, buckets_per_group, rng,
            chunk_rows, chunk_start, chunk_seed, per_thread, regression,
        )  # fmt: skip
        n_active = istate[I_ACTIVE]
        for t in range(n_threads):
            _prepare_chunk(
                t, n_chunks, indptr, indices, data, rec, use_prefetch, active, order,
                bucket_order, bucket_size, buckets_per_group, chunk_start, chunk_seed,
                n_active, rngs[t],
            )  # fmt: skip
        for rnd in range((n_chunks + n_threads - 1) // n_threads):
            parity = rnd & 1
            for t in range(n_threads):
                c = rnd * n_threads + t
                if c < n_chunks:
                    _dots(t, c, indptr, indices, data, bias, rec, w, use_prefetch, order,
                          chunk_start, dots, rotate, owner_start, splits)  # fmt: skip
            hot[:] = 0.0
            for t in range(n_threads):
                c = rnd * n_threads + t
                _steps(
                    t, c, n_chunks, parity, bias, squared_hinge, regression, p, rec, fstate,
                    shrinking, order, chunk_start, removed, per_thread, partials, dots,
                    row_index, row_pos, row_steps, hot_ptr, hot_slot, hot_val, hot,
                )  # fmt: skip
                if not rotate:
                    _segments(t, parity, indptr, indices, partials, row_index, owner_start,
                              seg_count, seg_row, seg_span)  # fmt: skip
                _prepare_chunk(
                    c + n_threads, n_chunks, indptr, indices, data, rec, use_prefetch, active,
                    order, bucket_order, bucket_size, buckets_per_group, chunk_start,
                    chunk_seed, n_active, rngs[t],
                )  # fmt: skip
            _add_all(
                n_threads, rotate, parity, 1.0, indices, data, w, partials, row_pos, row_steps,
                splits, seg_count, seg_row, seg_span, per_thread, _T_CHANGE,
            )  # fmt: skip
            gamma = _round_step(parity, partials, per_thread, row_steps, p)
            k = stats[_S_ROUNDS]
            if k < round_changes.shape[0]:
                round_changes[k] = _round_change(parity, partials, per_thread, row_steps, p,
                                                 gamma)  # fmt: skip
            stats[_S_ROUNDS] += 1
            if gamma < 1.0:
                for t in range(n_threads):
                    _shorten_rows(t, parity, gamma, rec, partials, row_index, row_steps,
                                  squared_hinge, regression)  # fmt: skip
                _add_all(
                    n_threads, rotate, parity, gamma - 1.0, indices, data, w, partials, row_pos,
                    row_steps, splits, seg_count, seg_row, seg_span, per_thread, _T_SHORTENED,
                )  # fmt: skip
                stats[_S_SHORTENED] += 1
        n_kept = drop_shrunk(active, n_active, removed)
        if _end_iteration(
            active, n_kept, istate, fstate, trainable, per_thread, eps, regression
        ):
            return


# ----------------------------------------------------------------------------- set-up


@njit(cache=True, nogil=True)
def _feature_sums(indptr, indices, data, rec, rows, n_features, with_blocks):
    """Over the given ``rows``: per feature, sum_i x_ij^2 / Qbar_ii (the curvature it carries,
    for ``hot_features``); with ``with_blocks``, the non-zeros in each block of
    2**OWNER_BLOCK_SHIFT features (for ``feature_owners``), else an empty array."""
    curvature = np.zeros(n_features)
    blocks = np.zeros(((n_features >> OWNER_BLOCK_SHIFT) + 1) if with_blocks else 0, np.int64)
    for i in rows:
        qbar = rec[i, _QBAR]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if qbar > 0.0:
                v = np.float64(data[k])
                curvature[j] += v * v / qbar
            if with_blocks:
                blocks[j >> OWNER_BLOCK_SHIFT] += 1
    return curvature, blocks


@njit(cache=True, nogil=True)
def _hot_rows(indptr, indices, data, slot_of, n_hot):
    """Each row's entries of hot features: (hot_ptr, hot_slot, hot_val), CSR-like, the
    features numbered by slot (``slot_of``: a feature's slot or -1). Without hot features,
    empty rows and no pass over the data."""
    n_rows = indptr.shape[0] - 1
    hot_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    if n_hot > 0:
        for i in range(n_rows):
            count = 0
            for k in range(indptr[i], indptr[i + 1]):
                if slot_of[indices[k]] >= 0:
                    count += 1
            hot_ptr[i + 1] = hot_ptr[i] + count
    hot_slot = np.empty(hot_ptr[n_rows], dtype=np.int32)
    hot_val = np.empty(hot_ptr[n_rows])
    if n_hot > 0:
        for i in range(n_rows):
            p = hot_ptr[i]
            for k in range(indptr[i], indptr[i + 1]):
                h = slot_of[indices[k]]
                if h >= 0:
                    hot_slot[p] = h
                    hot_val[p] = data[k]
                    p += 1
    return hot_ptr, hot_slot, hot_val


def hot_features(curvature: np.ndarray, n_rows: int, round_rows: int, max_hot: int = MAX_HOT):
    """The features taken in sequence (besides the bias): rho_j = round_rows / n_rows *
    curvature_j >= 1 (``curvature`` summed over ``n_rows`` rows), at most ``max_hot`` of the
    largest, ascending."""
    rho = curvature * (round_rows / max(n_rows, 1))
    hot = np.flatnonzero(rho >= 1.0)
    if hot.shape[0] > max_hot:
        hot = hot[np.argsort(-rho[hot], kind="stable")[:max_hot]]
    return np.sort(hot)


def feature_owners(blocks: np.ndarray, n_features: int, n_threads: int) -> np.ndarray:
    """Each thread's range of features, [owner_start[o], owner_start[o + 1]): contiguous, of
    about equal non-zeros (``blocks``: per block of 2**OWNER_BLOCK_SHIFT features; the work of
    adding the changes), cut at block boundaries so that no two threads write one cache line
    of w. The last range ends past every feature (the bias weight is the last thread's)."""
    owner_start = np.empty(n_threads + 1, dtype=np.int64)
    owner_start[0] = 0
    owner_start[n_threads] = n_features + 1
    owner_start[1:n_threads] = n_features  # (no counts: no owners needed)
    if n_threads > 1 and blocks.shape[0] > 0:
        cumulative = np.cumsum(blocks, dtype=np.float64)
        total = max(float(cumulative[-1]), 1.0)
        targets = total * np.arange(1, n_threads) / n_threads
        cuts = np.searchsorted(cumulative, targets, side="left") + 1
        owner_start[1:n_threads] = np.minimum(cuts << OWNER_BLOCK_SHIFT, n_features)
    return np.maximum.accumulate(owner_start)


# The processors held by the threaded solves running now. One-vs-rest sub-problems solved side
# by side each run threads of their own: each solve takes processors no other holds, so that
# four solves of 4 threads on 16 cores use the 16, not the first 4 four times over (pinned,
# spinning on each other's cores).
_held_lock = threading.Lock()
_held_cpus: set[int] = set()


def claim_cpus(n_threads: int) -> list[int]:
    """``n_threads`` processors for one solve's threads, none held by another solve (in the
    order of ``_usable_cpus``), held until ``release_cpus``; [] when too few are free: the
    threads then run unpinned and wait by yielding (``run_pinned``)."""
    usable = _usable_cpus()
    with _held_lock:
        free = [cpu for cpu in usable if cpu not in _held_cpus]
        if n_threads > len(free):
            return []
        chosen = free[:n_threads]
        _held_cpus.update(chosen)
    return chosen


def release_cpus(cpus: list[int]) -> None:
    """Give back what ``claim_cpus`` returned."""
    with _held_lock:
        _held_cpus.difference_update(cpus)


def _pin_to(cpu: int) -> None:
    """Keep the calling thread on one processor. Threads that meet every few microseconds
    must not share one: the scheduler, waking one beside the other on the same processor,
    left them there for whole outer iterations (measured: 2.5x the time, every other run)."""
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass


def run_pinned(pool: ThreadPoolExecutor, cpus: list[int], sync: np.ndarray, n_threads: int,
               work: Callable[[int], None]) -> bool:  # fmt: skip
    """``work(t)`` for every thread t < ``n_threads`` on the pool, each pinned to a processor
    of its own (``cpus``: from ``claim_cpus``) when there are enough; returns once all are
    done. sync[_SYNC_SPINS] is set first: waits spin before yielding only when every thread
    has a core of its own. Returns whether they had."""
    own_cores = 0 < n_threads <= len(cpus)
    sync[_SYNC_SPINS] = WAIT_SPINS if own_cores else 0

    def side(t: int) -> None:
        if own_cores:
            _pin_to(cpus[t])
        work(t)

    for future in [pool.submit(side, t) for t in range(n_threads)]:
        future.result()
    return own_cores


class ThreadedRounds:
    """The work arrays and the threads of one threaded (or simulated) solve.

    ``advance(n)`` runs up to n outer iterations on the solve's state arrays (those of
    ``dcd._solve_svm_dual``, or with ``p`` given those of ``svr.solve_svr_dual``: the SVR
    dual of width p, ``loss`` an SVR loss), on ``n_threads`` threads, or with ``simulate``
    the same arithmetic on the calling thread alone; ``close()`` ends the threads. ``round_rows``:
    rows of a round, all threads together; ``keep_round_changes``: with ``simulate``, the
    change of the dual made by each of the first so many rounds is kept in
    ``round_changes``; ``on_core_min``: the share of an outer iteration below which a thread
    counts as taken off its core (``ON_CORE_MIN``; above 1 every iteration after the first
    runs on one thread).
    """

    scheme = "rounds"

    def __init__(
        self, X, bias: float, loss: int, rec, w, active, trainable, fstate, istate, rng,
        eps: float, shrinking: bool, bucket_size: int, buckets_per_group: int,
        use_prefetch: bool, removed, order, bucket_order, n_threads: int, *,
        simulate: bool = False, round_rows: int = DEFAULT_ROUND_ROWS, max_hot: int = MAX_HOT,
        rotate_threads: int = ROTATE_THREADS, keep_round_changes: int = 0,
        on_core_min: float = ON_CORE_MIN, p: float | None = None,
    ) -> None:  # fmt: skip
        self.n_threads = T = int(n_threads)
        # the SVR dual (-s 12, 13) with its width p; else the SVM's (-s 1, 3)
        regression = p is not None
        p = 0.0 if p is None else float(p)
        round_rows = max(int(round_rows), 1)
        # A thread's chunk: its share of a round's rows; in a bucketed order, whole buckets,
        # so that neighbouring rows, whose records share cache lines, go to one thread, and
        # at least two of them, smaller if need be: rows visited with their own neighbours
        # only cost the serial solver too twice the outer iterations (pypi-recent's first
        # 200k rows, -s 1 with a bias, to 1e-3: 27 in groups of one 16-row bucket, 13 in
        # groups of two, 12 with two buckets of 2 rows).
        chunk_rows = max(1, -(-round_rows // T))
        if bucket_size > 1:
            bucket_size = max(1, min(bucket_size, chunk_rows // 2))
            buckets_per_group = max(1, chunk_rows // bucket_size)
            chunk_rows = bucket_size * buckets_per_group
            # (the serial solver's buffer holds its own, larger buckets)
            bucket_order = np.empty(order.shape[0] // bucket_size + 1, dtype=order.dtype)
        self.chunk_rows = chunk_rows
        self.chunk_buckets = (int(bucket_size), int(buckets_per_group))
        self.rotate = T <= rotate_threads
        # Hot features and the owners' balance from a sample of the rows: a full pass would
        # cost a quarter of an outer iteration, and both only steer the speed.
        n_rows = X.shape[0]
        sample = np.arange(n_rows)
        if n_rows > SAMPLE_ROWS:
            sample = np.sort(np.random.default_rng(SAMPLE_SEED).choice(n_rows, SAMPLE_ROWS, False))
        curvature, blocks = _feature_sums(
            X.indptr, X.indices, X.data, rec, sample, X.shape[1], True
        )  # fmt: skip
        hot = hot_features(curvature, sample.shape[0], T * chunk_rows, max_hot)
        self.n_hot = int(hot.shape[0])
        slot_of = np.full(X.shape[1], -1, dtype=np.int32)
        slot_of[hot] = np.arange(hot.shape[0], dtype=np.int32)
        hot_ptr, hot_slot, hot_val = _hot_rows(X.indptr, X.indices, X.data, slot_of, self.n_hot)
        del curvature, slot_of
        max_chunks = order.shape[0] // chunk_rows + 2
        self.per_thread = np.zeros((T, _LINE))
        self.shared = (
            X.indptr, X.indices, X.data, float(bias), int(loss), regression, float(p), rec, w,
            active, trainable, fstate, istate, rng, float(eps), bool(shrinking), int(bucket_size),
            int(buckets_per_group), bool(use_prefetch), removed, order, bucket_order,
            chunk_rows,
            np.zeros(max_chunks + 1, dtype=np.int64),  # chunk_start
            np.zeros(1, dtype=np.int64),  # chunk_seed
            np.zeros((T, _LINE), dtype=np.uint64),  # rngs: each thread's for its chunks
            self.per_thread,
            np.zeros((2, T, _LINE)),  # partials
            np.zeros((T, chunk_rows)),  # dots
            np.zeros((T, chunk_rows), dtype=np.int64),  # row_index
            np.zeros((T, chunk_rows), dtype=np.int64),  # row_pos: its place in the chunk
            np.zeros((T, chunk_rows, 3)),  # row_steps: alpha before, d, d y
            # (rotation) the rows' entries by owner's range; (owners) the owners' lists
            np.zeros((T, chunk_rows if self.rotate else 0, T + 1), dtype=X.indptr.dtype),
            hot_ptr, hot_slot, hot_val,
            np.zeros((T, self.n_hot + 1)),  # handed: the hot weights' changes, thread to thread
            feature_owners(blocks, X.shape[1], T),
            np.zeros((T, T), dtype=np.int64),  # seg_count
            np.zeros((T, T, 0 if self.rotate else chunk_rows), dtype=np.int64),  # seg_row
            np.zeros((T, T, 0 if self.rotate else chunk_rows, 2), dtype=X.indptr.dtype),
            self.rotate,
        )
        self.stats = np.zeros(3, dtype=np.int64)
        self.simulate = bool(simulate) or T == 1
        # outer iterations left on one thread, and the next such spell's length
        self.on_core_min = float(on_core_min)
        self._istate = istate
        self._on_one_thread = 0
        self._backoff = OFF_CORE_BACKOFF
        # (what the summary and progress lines say: the outer iterations the spells ran, and
        # whether the last one ran on one thread)
        self.epochs_on_one_thread = 0
        self.last_on_one_thread = False
        self.round_changes = np.zeros(int(keep_round_changes))
        self._sync = np.zeros(_SYNC_HANDED + _LINE * (T + 1), dtype=np.int64)
        self._pool = None
        self._cpus = []
        if not self.simulate:
            self._cpus = claim_cpus(T)
            self._pool = ThreadPoolExecutor(max_workers=T, thread_name_prefix="linsvm-dcd")

    def advance(self, n_epochs: int) -> None:
        """Up to ``n_epochs`` outer iterations (fewer once converged): on the threads one at a
        time, each timed, or on one thread while the threads are found off their cores."""
        T = self.n_threads
        left = int(n_epochs)
        while left > 0 and not self._istate[I_CONVERGED]:
            if self.simulate or self._on_one_thread > 0:
                spell = left if self.simulate else min(left, self._on_one_thread)
                done = int(self._istate[I_ITER])
                run_simulated(T, spell, *self.shared, self.stats, self.round_changes)
                if not self.simulate:
                    self.epochs_on_one_thread += int(self._istate[I_ITER]) - done
                    self.last_on_one_thread = True
                self._on_one_thread -= 0 if self.simulate else spell
                left -= spell
                continue
            self.last_on_one_thread = False
            if self._threads_off_cores():
                self._on_one_thread = self._backoff
                self._backoff *= 2
                self.stats[_S_ON_ONE_THREAD] += 1
            left -= 1

    def _threads_off_cores(self) -> bool:
        """One outer iteration on the threads; True when some thread spent less than
        ``on_core_min`` of it on its core (threads beyond the cores are off them by design:
        that is the caller's choice, and not counted)."""
        T = self.n_threads
        sync = self._sync
        sync[:] = 0  # (the hand-over flags count this call's rounds)
        # compiled (or loaded) here first: a thread that failed to start its kernel would
        # leave the others waiting
        run_threads(0, T, 0, *self.shared, self.stats, sync)
        on_core = np.ones(T)

        def timed(t: int) -> None:
            cpu, wall = time.thread_time(), time.perf_counter()
            run_threads(t, T, 1, *self.shared, self.stats, sync)
            wall = time.perf_counter() - wall
            on_core[t] = (time.thread_time() - cpu) / wall if wall > 0.0 else 1.0

        own_cores = run_pinned(self._pool, self._cpus, sync, T, timed)
        return own_cores and float(on_core.min()) < self.on_core_min

    @property
    def figures(self) -> dict:
        figures = {
            "n_threads": self.n_threads,
            "thread_scheme": self.scheme,
            "hot_features": self.n_hot,
            "chunk_rows": self.chunk_rows,
            "chunk_buckets": self.chunk_buckets,
            "rounds": int(self.stats[_S_ROUNDS]),
            "shortened_rounds": int(self.stats[_S_SHORTENED]),
            "spells_on_one_thread": int(self.stats[_S_ON_ONE_THREAD]),
            "epochs_on_one_thread": self.epochs_on_one_thread,
        }
        if self.round_changes.shape[0]:
            kept = min(int(self.stats[_S_ROUNDS]), self.round_changes.shape[0])
            figures["round_changes"] = self.round_changes[:kept].copy()
        return figures

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        release_cpus(self._cpus)
        self._cpus = []


class ThreadPlace:
    """The threads' shares of the rows as the place of a partitioned dual
    (``linsvm.partitioned``, merge rule ``SHARED``): a local solve of every share is ``passes``
    outer iterations of ``ThreadedRounds``, whose rounds merge the threads' changes into W as
    they come (in compiled code: a round lasts microseconds). One result per thread, with its
    last outer iteration's projected-gradient extremes."""

    def __init__(self, rounds: ThreadedRounds) -> None:
        self.rounds = rounds
        self.n_partitions = rounds.n_threads

    def solve(self, group, W, task):
        from ..partitioned import PartResult

        started = time.perf_counter()
        self.rounds.advance(task.passes)
        seconds = time.perf_counter() - started
        per_thread = self.rounds.per_thread
        return [
            PartResult(
                t, pg_max=np.array([per_thread[t, _T_PGMAX]]),
                pg_min=np.array([per_thread[t, _T_PGMIN]]), seconds=seconds,
            )
            for t in group
        ]  # fmt: skip


def simulate(
    X,
    y,
    n_threads: int,
    *,
    solver: int = 1,
    C: float = 1.0,
    bias: float = -1.0,
    eps: float | None = None,
    max_iter: int | None = None,
    shrinking: bool = True,
    seed: int = 1,
    hook=None,
    round_rows: int = DEFAULT_ROUND_ROWS,
    max_hot: int = MAX_HOT,
    keep_round_changes: int = 0,
    p: float = 0.1,
    scheme: str = "rounds",
):
    """The threaded solver's run on ``n_threads`` threads, simulated on this one: the same
    arithmetic, chunks, hand-overs and merges, bit for bit, at the cost of one thread. For
    studying and testing thread counts beyond the machine's cores. ``scheme="async"``: the
    asynchronous scheme's lockstep schedule instead (``dcd_async``: the delays at their
    bound; ``max_hot`` its hot features, the round options unused).

    X : (n_samples, n_features) matrix; y : (n_samples,) two classes (the first in
    LIBLINEAR's order is +1), or real targets for the SVR. solver 1 (L2-loss SVM), 3 (L1-loss
    SVM), 12 (L2-loss SVR) or 13 (L1-loss SVR, both of width ``p``); C, bias, eps (None:
    LIBLINEAR's 0.1), max_iter (None: 300), shrinking and seed as ``linsvm.train``; ``hook``
    as a solver's (``Progress`` after every outer iteration); ``round_rows`` and ``max_hot``:
    rows a round and hot features at most (0: only the bias in sequence). Returns the
    ``Solution``;
    its figures add ``n_threads``, ``hot_features``, ``chunk_rows``, ``rounds``,
    ``shortened_rounds`` (rounds whose step the line search shortened), and with
    ``keep_round_changes`` = k the change of the dual made by each of the first k rounds
    (``round_changes``: never positive)."""
    from ..data import as_csr, check_labels, group_labels
    from ..errors import InvalidInputError
    from . import DUAL_SOLVER_MAX_ITER, Subproblem, get_solver
    from .svr import check_p

    if scheme not in ("rounds", "async"):
        raise InvalidInputError(f"scheme must be 'rounds' or 'async', got {scheme!r}")
    spec = get_solver(solver)
    if spec.number not in (1, 3, 12, 13):
        raise InvalidInputError(
            f"the threaded scheme runs -s 1, 3, 12 and 13, not {spec.label}"
        )
    X = as_csr(X)
    y = check_labels(y, X.shape[0])
    if spec.number in (12, 13):
        if y.dtype.kind not in "biuf":
            raise InvalidInputError(f"regression targets must be numbers, got dtype {y.dtype}")
        targets = y.astype(np.float64)
        options = {"p": check_p(p)}
    else:
        labels, index = group_labels(y)
        if labels.shape[0] != 2:
            raise InvalidInputError(
                f"simulate trains a binary problem, got {labels.shape[0]} classes"
            )
        targets = np.where(index == 0, 1.0, -1.0)
        options = {}
    sub = Subproblem(
        X, targets, np.full(X.shape[0], float(C)),
        eps=0.1 if eps is None else float(eps),
        max_iter=DUAL_SOLVER_MAX_ITER if max_iter is None else int(max_iter),
        bias=float(bias), seed=int(seed),
        options={
            **options, "shrinking": bool(shrinking), "simulate_threads": int(n_threads),
            "thread_scheme": scheme,
            "thread_options": {"max_hot": int(max_hot)} if scheme == "async" else {
                "round_rows": int(round_rows), "max_hot": int(max_hot),
                "keep_round_changes": int(keep_round_changes),
            },
        },
    )  # fmt: skip
    return spec.solve(sub, hook)
