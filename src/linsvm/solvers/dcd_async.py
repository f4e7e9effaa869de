"""Dual coordinate descent for the SVM (-s 1, -s 3) and the SVR (-s 12, -s 13) on threads that
never wait for each other inside an outer iteration, in two ways: sharing one w
(PASSCoDe-Atomic, Hsieh, Yu, Dhillon, ICML 2015, with the hot features' changes gathered by
each thread; the ``"async"`` scheme), or each with a replica of w into which it replays the
other threads' steps (the ``"replicas"`` scheme, at the end of this note).

**The scheme.** An outer iteration visits the active rows in chunks, the serial solver's
order cut in pieces (groups of buckets of neighbouring rows, each shuffled, or pieces of a
plain permutation: ``dcd_threads._begin_iteration``), which the threads take as they come to
them (an atomic counter: a thread the operating system holds up delays its own chunk only).
A thread steps each row of its chunk as the serial solver does: w'x_i from the one shared w,
the exact one-variable step (``dcd.svm_coordinate``; the SVR's ``svr.svr_coordinate``), then
w += d y_i x_i (the SVR: d x_i), each weight's change added *atomically*, so that no change
is lost when two threads add to one weight at once. Nobody waits inside an outer iteration:
the threads meet only at its end, where the serial solver's shrinking and stopping rule run on
every thread's projected-gradient extremes (``dcd.end_iteration``; the SVR's violations,
``svr.svr_end_iteration``).

**Hot features.** A few features are in a large share of the rows (the bias in every one).
If every thread added to their weights at every row, the cache lines holding them would
travel from core to core at each add and the adds would queue on them. So each thread steps
against its own copy of the hot weights (its *view*), adds its changes to the view without
atomics, and every ``flush_rows`` rows adds what it changed to the shared weights (atomically)
and reads them back. The hot features are found in a sample of the rows before the first
outer iteration: those in at least ``HOT_MIN_SHARE`` of the rows, at most ``MAX_HOT`` of the
most frequent (``hot_features``). So that the row loops need no test per non-zero, the rows'
feature numbers are copied once with each hot feature renumbered past the weights
(``remapped_indices``: 4 bytes a non-zero; the values are not copied): a thread reads and
writes weight ``j + shift_t`` for those, its view, and the shared ``w_j`` for the rest.

**Why it converges.** A read of w misses the changes other threads have not yet made: of a
cold feature, those of the rows other threads are stepping at that moment (at most T - 1); of
a hot one, at most (T - 1) ``flush_rows`` rows. This is coordinate descent with bounded
delay (Liu and Wright, SIAM J. Optim. 2015; for this dual, Hsieh et al. 2015), which converges
as the serial method does when the delay is small enough for the data. Measured by
``benchmarks/bench_staleness.py`` and the simulator below: reads missing up to 256 rows'
changes keep the serial outer iterations on pypi-recent (-s 1, -s 3), at 1024 -s 1 diverges;
the simulator at 16 threads, 64 hot features flushed every 16 rows (240 rows missed at most),
takes the serial 6 / 9 outer iterations to 1e-2 / 1e-3 on pypi-recent -s 1, and diverges at
64 rows. So ``flush_rows`` starts at ``STALE_ROWS // T``.

**The guard.** How much delay is safe depends on the data: a feature in every row carrying a
large share of each row's curvature (the bias of normalised text: half of it) makes rows that
miss each other's changes push its weight too far together. At the end of every outer
iteration the dual objective f (1/2 w'w plus the rows' terms, -sum_i alpha_i + 1/2 sum_i
D_ii alpha_i^2; the SVR's -y'beta + p |beta|_1 + 1/2 sum_i lambda_i beta_i^2) is computed
from w, which holds every change (none is lost), and the rows' terms, which the threads sum
as they step. An outer iteration that raised it is undone (alpha and w as it found them: a
copy taken by the threads at its start), not counted, and the next made safer:
``flush_rows`` halved; at 1 (the delay then is the rows in flight only) half the threads,
down to two; then the rest of the solve handed to one thread, the serial kernel, whose every
step lowers f. So f never rises, whatever the data. With a bias the shared w's guard first
flushes the bias weight after every row, then halves the threads, and only then the flushes
(the note on many threads and a bias).

**The model.** When the solve ends on the threads, w is recomputed as sum_i y_i alpha_i x_i
(the SVR's sum_i beta_i x_i) from the dual variables (``exact_weights``, on the threads), so
that the model, the primal value and the duality gap are those of the alpha returned whatever
the interleaving was. Unlike ``dcd_threads``' rounds, two runs with the same seed differ: the
order in which the threads' steps meet depends on timing. Both stop by the same rule, and the
optima agree to the tolerance.

**Whether they pay.** Atomic adds cost about ten plain ones, and a shared w's cache lines
travel between the cores that change them, which on a 2-core VM made two threads slower than
one. So the solve measures how many threads pay (``_dual_threads.ThreadSchedule``): now and
then an outer iteration runs as a *ladder* (``run_threads``' ``ladder``), its first chunks
on one thread, the next on half the threads, the rest on all, each phase timed by the
threads (``monotonic_seconds``), and the fastest count runs until the next. A phase of one
steps by the serial solver's pass (on w itself in the shared scheme, its steps logged for
the replicas), so that it measures the serial kernel.

**The replicas.** Each thread steps its rows against its own copy of w (thread 0's is w), by
the serial solver's own pass (``dcd.svm_pass``, ``svr.svr_pass``) over a batch of
``flush_rows`` rows at a time, and logs each row's change of w (w += step_log[s] x_i, at the
row's position s in the outer iteration's order); after each batch it publishes how far it has
come in its chunk and adds to its replica the steps the other threads have published since it
last looked (``_replay``). At the end of an outer iteration every thread replays the rest, so
the replicas all hold w; the next starts them from thread 0's. A read misses at most about two
batches of each other thread's rows (``flush_rows`` starts at ``STALE_ROWS // (2 T)``), the
same bounded delay as above, and the guard, the stopping rule and the recomputed w are the
shared scheme's. What it buys: no atomic add and no cache line written by two cores. What it
costs: every thread adds every changed row to its replica, its own and the others', so the
threads overlap their waits on memory but do not divide them. Measured on 2 cores (threads
forced, medians of 2): 3M generated rows -s 1 / -s 3 in 0.81x / 0.85x one thread's time (the
shared w 1.4x), pypi-recent 0.9-1.1x; two threads on independent halves of the rows with
private weights (no sharing at all) took 0.53x an outer iteration, and adding the other half's
rows to each took that back to 0.75-0.9x. So it is the scheme of 2 threads ("auto" there), and
the shared w the one of many. Not a w split into one part a thread (each thread adding its
changes to its own part without atomics, every read summing the parts): no update is lost and
a read misses only the rows in flight, but a read of the other thread's part waits for the
cache lines that thread has just written to cross between the cores, and with the serial
kernel's prefetching two such threads took an outer iteration as long as one or longer
(pypi-recent, -s 3, 2-core VM: 1.0-1.2x; independent halves in the same run 0.55-0.7x); whole
solves to eps 0.1 took 1.12x the replicas' time on -s 1, 1.08x on -s 3.

**The replicas' bias.** The bias weight is in every row's w'x_i, with half of a normalised
row's curvature, so what a replica misses of it moves every projected gradient: replayed as
the other weights are (a read missing up to two 64-row batches of the other thread's steps),
it kept the stopping rule's spread wide, and pypi-recent with a bias took 15-19 outer
iterations on two threads against one thread's 11 (-s 1 and -s 3, eps = 1). So the bias weight
has a channel of its own: every ``bias_rows`` rows each thread adds its changes of it to one
shared number and reads back the sum with the others' changes (``_share_bias``: an atomic add
and a read, against a replay's walk over the rows), and the replays leave it out. Every 32
rows (``BIAS_STALE_ROWS // T``) the share cost nothing measurable and two threads took 14-15
outer iterations there, 1.02x-1.26x faster than with the bias replayed; every 8 rows took
12-14 but 10-15% longer an outer iteration on pypi-recent's short rows, every row 2x (threads
forced, medians of 3, 2-core VM; 750k generated rows: 13-15 outer iterations against 16-19,
1.12x-1.22x faster).

**The bias's overshoot, and the discount.** What was left of that gap was not what a read
misses but what the threads do with it: between two shares each thread's rows correct the error
of the bias weight they see, the same error for all, and none sees the others' corrections, so
together they move it about T times as far as it needed (on normalised rows the bias holds half
of each row's curvature: a few rows correct most of an error). Taken whole at the next share,
the others' corrections overshoot, the views swing about the shared value, and the spread of
projected gradients the stopping rule waits on stays wide. So a thread's view of the bias
weight, read back at a share or flush, leaves out ``bias_discount`` (1/2) of what the other
threads changed it by since it last read it (``_discounted_bias``); the shared weight itself
holds every change, so w, the guard's f and the model are as before. A two-state model of one
error (the shared value and the views, each thread correcting a fraction g of the error it sees
between shares) has eigenvalues 0 and 1 - T g without the discount, swinging once T g > 1 and
growing past 2, and complex ones of modulus sqrt(discount (T - 1) g) with it (at T = 2, g = 1:
0.71 instead of 1). Measured with a bias of 1, threads forced, medians of 3 (2-core VM):
pypi-recent eps 1 on two replicas 11 / 11 outer iterations (-s 1 / -s 3; one thread 11 / 11,
undiscounted 13-15 / 13-15), eps 0.1 22 / 48-53 (one thread 22 / 47, undiscounted 23-25 /
50-51); 750k generated rows eps 1 13-14 / 11-12 (one thread 13 / 11, undiscounted 14 / 15);
discounts 0.2-0.5 alike, 1 worse (27 / 55 at eps 0.1). In the simulator (pypi-recent, eps 1): 2
threads 11 / 11 outer iterations, none undone (undiscounted 20 / 21, 3-4 undone); 4 threads 16
/ 24 (19 / 30); a9a -s 1 169 against 276, ijcnn1 45 against 60, reuters 17 against 19. From 8
threads it does not help: there the rows in flight overshoot by themselves (next note).

**Many threads and a bias.** The shared w's threads miss each other's changes of the bias
weight too, and most of all those of the rows in flight: the T rows being stepped at once all
correct the same error of it, and with half of a normalised row's curvature in the bias their
steps move it about T / 2 times as far as one would. Beyond 2 that overshoots whatever the
flush interval: the simulator with a bias on pypi-recent (eps = 1, one thread 11 / 11 outer
iterations, -s 1 / -s 3) takes 12 / 11 at 2 threads flushing every row, 18 / 13 at 4, and at 8
or more the guard hands the solve to one thread (without a bias: 8 / 8 at any count). Option
``bias_damping`` d adds d (T' - 1) B^2 to each row's curvature in the threads' steps, T' the
threads that can be stepping rows at once (at most one a chunk): the projected gradients, so
the optimum and the stopping rule, are unchanged; only the steps shorten, as with a proximal
term. At d = 1/2 the simulator's 16 threads take 28-45 outer iterations instead of handing
over; on a small problem whose rows do not need it (1,500 rows, eps 1e-6) it took 1.1-1.5x the
undamped outer iterations. Off by default: whether 16 cores run an outer iteration fast enough
to pay 3-4x the outer iterations is for a machine with them to say
(``benchmarks/bench_async_costs.py --bias 1``). The discount of the views (above) answers the
flush interval's share of the overshoot, not this one: at 8 and 16 threads the simulator hands
over with it as without it, whatever the discount (1/4 to 9/10) or the flush interval (1, 8).

So with a bias the shared w's guard answers a rise first with the bias weight flushed after
every row (the thread's other hot weights as before: one atomic add and a read a row), then
with half the threads, down to two, and only then with shorter flushes and one thread. In the
simulator (pypi-recent, bias 1; one thread 11 / 11 outer iterations to eps 1, 22 / 47 to 0.1;
-s 1 / -s 3): 4 threads flushing the bias after every row 16 / 13 and none undone at eps 1
where flushing it with the others every 64 rows undid 6 / 5 and took 16 / 24 (every 2 or 4
rows: as every 64); 16 threads now take 17 / 21 with 3 undone, on 4, where they handed over
to one after 5 undone; to 0.1, 45 / 64 with 4 undone, ending on 2. Reuters (bias 1, eps 0.1;
one thread 19 / 18): 8 and 16 threads 17 / 20-22, one undone, all kept; ijcnn1 (35 / 87): 16
threads 38 / 109, ending on 2 / 4. Shorter flushes first (down to 8 rows, then the threads)
took more outer iterations there (pypi-recent 44 / 68 with 5 undone, ijcnn1 55 / 129) and
fewer undone on the small SVR test problem (-s 12, 1,200 rows, a hot column in 80% of them
and a bias: 4-6 undone, 2-16 threads kept, where threads first hand 4 and 16 threads to one
after 9-11 undone: its rises are the hot column's, which a shorter flush stops); halving both
at once lay between. Without a bias the guard's steps are the flushes' down to one row as
before, and then half the threads where it handed over: the simulator's 4 and 64 threads
on the 1,500-row test problem (-s 1, a hot column, flushes every 64 rows) end on 2 and 32
threads after the same 7 outer iterations undone, where they went to one thread. The rows
in flight that do not raise f may still slow it: pypi-recent's
4 threads took 17 outer iterations against 11 without an outer iteration undone, which the
guard does not see; the ladder (``_dual_threads.ThreadSchedule``) weighs seconds a row, not
progress a row.

**The simulator.** ``run_simulated`` takes T threads' steps on the calling thread in lockstep:
each thread reads w for its next row, then each in turn steps and adds (so every read misses
the other threads' rows in flight, the most a real run's can), the chunks dealt to the threads
in turn and the hot weights flushed every ``flush_rows`` rows of each: a deterministic
schedule with the real one's delays at their bound, to study and test any thread count on a
small machine. Runs on real threads are not the simulator's bits. The simulator is the shared
w's; the replicas run on real threads only.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from .._intrinsics import (
    atomic_add_float,
    atomic_fetch_add,
    atomic_load,
    atomic_store,
    monotonic_seconds,
)
from ..errors import InvalidInputError
from ..objective import LOSS_SQUARED_HINGE, weights_from_dual
from ..parallel import PARALLEL_MIN_NNZ, for_chunks, for_row_chunks
from ..sparse_rows import row_axpy
from ._dual import I_ACTIVE, I_CONVERGED, drop_shrunk, prefetch_ahead, prefetch_rows
from .dcd import (
    _ALPHA,
    _BOUND_OR_DIAG,
    _F_PGMAX_OLD,
    _F_PGMIN_OLD,
    _QBAR,
    _Y,
    PG_ZERO,
    svm_coordinate,
    svm_pass,
)
from .dcd_threads import (
    _LINE,
    _SYNC_DONE,
    _SYNC_N_CHUNKS,
    _T_PGMAX,
    _T_PGMIN,
    SAMPLE_ROWS,
    SAMPLE_SEED,
    _barrier,
    _begin_iteration,
    _drop_shrunk_on_threads,
    _end_iteration,
    _prepare_chunk,
    claim_cpus,
    release_cpus,
    run_pinned,
)
from .svr import svr_coordinate, svr_pass

# Rows whose changes a read of a hot weight may miss, all threads together: flush_rows starts
# at STALE_ROWS // T (see the module's note; 256 keeps the serial outer iterations on
# pypi-recent, 1024 diverges).
STALE_ROWS = 256
# The replicas' rows between shares of the bias weight, all threads together: each thread
# shares it every BIAS_STALE_ROWS // T rows (the module's note on the replicas' bias).
BIAS_STALE_ROWS = 64
# The share of the other threads' changes of the bias weight since a thread last read it that
# its view leaves out (``_discounted_bias``; the module's note on the bias's overshoot).
BIAS_DISCOUNT = 0.5
# Hot features (besides the bias) at most, and the share of the rows a feature must be in.
MAX_HOT = 64
HOT_MIN_SHARE = 0.01
# Rows of a chunk when the order is a plain permutation; a bucketed order's chunk is this many
# of the serial solver's groups of buckets. A thread's first rows of a chunk wait on memory
# (nothing asked for them ahead): at 256 rows a chunk that cost 15% of an outer iteration
# on one thread (pypi-recent).
CHUNK_ROWS = 1024
CHUNK_GROUPS = 4
# The share of an outer iteration's chunks that a ladder (``run_threads``) gives its phases
# but the last, in proportion to their threads: long enough that the phase of one outlasts
# what an outer iteration's start costs (the caches refilled after the set-up's copies: its
# first milliseconds). At 1024 rows a chunk, 4 chunks a thread (pypi-recent: 4096 rows, 0.7
# ms) read the serial pass 2-4x slower than its whole outer iterations ran.
LADDER_SHARE = 0.25
# An outer iteration that raised the dual objective by more than this times |f| counts as a
# rise (f is summed in float64 from a w whose atomic adds round in no fixed order, and its
# changes near the optimum are tiny: below this, rounding and the delays cannot be told apart).
F_RISE_RTOL = 1e-10

# Per thread (a cache line each): the outer iteration's projected-gradient extremes (the SVR:
# the largest violation and the violations' 1-norm; the columns ``dcd_threads`` combines),
# the change of the rows' terms of f, the thread's part of w'w, and the rows it visited.
_T_TERMS, _T_SQ, _T_ROWS = 2, 3, 4
# (and the rows it kept of its range of the active set: ``_drop_shrunk_on_threads``)
_T_KEPT = 5
# More of the barrier array (``dcd_threads``' layout): the next chunk to take.
_SYNC_NEXT = 40
_SYNC_SIZE = 48
# The run's control (int64): rows between flushes, outer iterations undone (they raised f),
# 1 once the rest of the solve is handed to one thread, the replicas' rows between shares
# of the bias weight, the threads the guard allows, and 1 once the shared w's threads flush
# the bias weight after every row. Its floats (``guard``): the rows' terms of f, f at the last
# check, ``bias_damping`` B^2 (the shared w's steps add that times the other threads stepping
# rows to each row's curvature), and ``bias_discount`` (0 without a bias).
_C_FLUSH_ROWS, _C_UNDONE, _C_ONE_THREAD, _C_BIAS_ROWS, _C_THREADS, _C_BIAS_EACH_ROW = range(6)
_G_TERMS, _G_F, _G_DAMPING, _G_BIAS_DISCOUNT = 0, 1, 2, 3
# _SYNC_DONE: the run goes on, converged, hands over to one thread, or is to go on on fewer
# threads (control[_C_THREADS]).
_GO_ON, _CONVERGED, _HAND_OVER, _FEWER_THREADS = 0, 1, 2, 3


# ----------------------------------------------------------------------------- a row


@njit(cache=True, nogil=True, inline="always")
def _dot(indptr, xind, data, bias, wx, i, n_weights, shift, bias_view) -> float:
    """w'x_i as a thread sees it: ``xind`` the rows' feature numbers with the hot features
    renumbered past the weights (``remapped_indices``), read at the thread's view (``shift``
    further on); the bias weight at ``bias_view``."""
    start = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    # (four partial sums: independent chains of additions; unsigned positions and feature
    # numbers: no wraparound checks, as sparse_rows.row_dot, and no float comparisons, which
    # Numba makes of a signed and an unsigned integer)
    n_weights = np.uint64(n_weights)
    # (the bias term before the sweep, added without a branch: as sparse_rows._row_sweep)
    bias_dot = wx[bias_view] * bias if bias >= 0.0 else 0.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    k = start
    while k + np.uint64(4) <= stop:
        j0 = np.uint64(xind[k])
        j1 = np.uint64(xind[k + np.uint64(1)])
        j2 = np.uint64(xind[k + np.uint64(2)])
        j3 = np.uint64(xind[k + np.uint64(3)])
        j0 += np.uint64(j0 >= n_weights) * shift
        j1 += np.uint64(j1 >= n_weights) * shift
        j2 += np.uint64(j2 >= n_weights) * shift
        j3 += np.uint64(j3 >= n_weights) * shift
        s0 += wx[j0] * data[k]
        s1 += wx[j1] * data[k + np.uint64(1)]
        s2 += wx[j2] * data[k + np.uint64(2)]
        s3 += wx[j3] * data[k + np.uint64(3)]
        k += np.uint64(4)
    while k < stop:
        j0 = np.uint64(xind[k])
        j0 += np.uint64(j0 >= n_weights) * shift
        s0 += wx[j0] * data[k]
        k += np.uint64(1)
    return (s0 + s1) + (s2 + s3) + bias_dot


@njit(cache=True, nogil=True, inline="always")
def _add(indptr, xind, data, bias, wx, i, v, n_weights, shift, bias_view, atomic) -> None:
    """w += v x_i as a thread adds it: the hot features' part to its view, the rest to the
    shared w (``atomic``: by atomic adds; the simulator, alone on its thread, adds plainly)."""
    n_weights = np.uint64(n_weights)
    start = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    k = start  # (while loops: ``sparse_rows``' note)
    if atomic:  # (two loops: no test of ``atomic`` per non-zero)
        while k < stop:
            j = np.uint64(xind[k])
            if j >= n_weights:
                wx[j + shift] += v * data[k]
            else:
                atomic_add_float(wx, j, v * data[k])
            k += np.uint64(1)
    else:
        while k < stop:
            j = np.uint64(xind[k])
            wx[j + np.uint64(j >= n_weights) * shift] += v * data[k]
            k += np.uint64(1)
    if bias >= 0.0:
        wx[bias_view] += v * bias


@njit(cache=True, nogil=True, inline="always")
def _terms_change(a, a_new, yi, diag, regression, squared, p) -> float:
    """The change of the rows' terms of f when a row's dual variable moves from a to a_new:
    the SVM's -alpha_i + 1/2 D_ii alpha_i^2, the SVR's -y_i beta_i + p |beta_i| + 1/2
    lambda_i beta_i^2."""
    d = a_new - a
    change = p * (abs(a_new) - abs(a)) - yi * d if regression else -d
    if squared:
        change += 0.5 * diag * d * (a_new + a)
    return change


@njit(cache=True, nogil=True, inline="always")
def _step(i, dot, indptr, xind, data, bias, regression, squared, p, rec, wx, shrinking,
          pgmax_old, pgmin_old, removed, n_weights, shift, bias_view, atomic,
          qbar_extra):  # fmt: skip
    """Row i's step at w'x_i = ``dot``, as the serial solver's: of the SVM dual
    (``dcd.svm_coordinate``), or with ``regression`` of the SVR dual (``svr.svr_coordinate``);
    the new dual variable in its record, its change added to w; ``qbar_extra`` added to the
    row's curvature (``AsyncThreads``' ``bias_damping``: a shorter step, the same optimum).
    Returns (shrunk, the projected
    gradient (the SVR: the violation), the change of the rows' terms of f: the SVM's -alpha_i
    + 1/2 D_ii alpha_i^2, the SVR's -y_i beta_i + p |beta_i| + 1/2 lambda_i beta_i^2)."""
    a = rec[i, _ALPHA]
    yi = rec[i, _Y]
    diag = rec[i, _BOUND_OR_DIAG]
    if regression:
        shrunk, pg, a_new = svr_coordinate(
            a, yi, dot, diag, rec[i, _QBAR] + qbar_extra, squared, p, shrinking, pgmax_old
        )
        moves = a_new != a
    else:
        shrunk, pg, a_new = svm_coordinate(
            a, yi, dot, diag, rec[i, _QBAR] + qbar_extra, squared, shrinking, pgmax_old,
            pgmin_old,
        )  # fmt: skip
        moves = abs(pg) > PG_ZERO and a_new != a
    # (one exit: Numba inlines a function with several returns into slower code)
    change = 0.0
    if shrunk:
        removed[i] = 1
    elif moves:
        change = _terms_change(a, a_new, yi, diag, regression, squared, p)
        step = a_new - a if regression else (a_new - a) * yi  # (the SVR: w = sum_i beta_i x_i)
        rec[i, _ALPHA] = a_new
        _add(indptr, xind, data, bias, wx, i, step, n_weights, shift, bias_view, atomic)
    return shrunk, pg, change


@njit(cache=True, nogil=True, inline="always")
def _flush(t, wx, view_start, stride, base, hot_weight, atomic, bias_discount, first) -> None:
    """Thread t's changes of the hot weights since its last flush (those of slots ``first``
    on: 0, all; the last, the bias weight alone) added to the shared ones; its view (and the
    base its next changes are counted from) read back from them, with the other threads'
    flushed changes. ``bias_discount`` > 0 (a bias, the last hot weight): the view of the
    bias weight as ``_discounted_bias`` (base[t, stride]: its last value read)."""
    view = view_start + t * stride
    n_hot = hot_weight.shape[0]
    change = 0.0
    for h in range(first, n_hot):
        change = wx[view + h] - base[t, h]
        if change != 0.0:
            if atomic:
                atomic_add_float(wx, hot_weight[h], change)
            else:
                wx[hot_weight[h]] += change
    for h in range(first, n_hot):
        value = wx[hot_weight[h]]
        if bias_discount > 0.0 and h == n_hot - 1:  # (change: the bias weight's, the last)
            last_read = base[t, stride]
            base[t, stride] = value
            value = _discounted_bias(value, change, last_read, bias_discount)
        wx[view + h] = value
        base[t, h] = value


@njit(cache=True, nogil=True, inline="always")
def _discounted_bias(value, own_change, last_read, bias_discount) -> float:
    """A thread's view of the bias weight, read back as ``value`` (every thread's changes
    shared so far): less ``bias_discount`` times what the other threads changed it by since
    this thread last read it (``last_read``; ``own_change``: its own changes since). They
    corrected the same error of it as this thread's rows did, each without seeing the
    others' corrections: taken whole, the views overshoot (the module's note)."""
    return value - bias_discount * (value - last_read - own_change)


@njit(cache=True, nogil=True, inline="always")
def _store_figures(acc, t, pgmax, pgmin, terms, rows) -> None:
    """Thread t's figures of the rows it just stepped, into its row of acc: written once a
    chunk (the threads' rows of acc may share a cache line, which a write at every row would
    send from core to core)."""
    acc[t, _T_PGMAX] = pgmax
    acc[t, _T_PGMIN] = pgmin
    acc[t, _T_TERMS] = terms
    acc[t, _T_ROWS] += rows


@njit(cache=True, nogil=True)
def _step_rows(
    t, s0, s1, since, flush_rows, indptr, xind, data, bias, regression, squared, p, rec, wx,
    fstate, shrinking, removed, acc, order, use_prefetch, n_weights, view_start, stride,
    base, hot_weight, qbar_extra, bias_discount, bias_each_row,
) -> int:  # fmt: skip
    """Thread t steps the rows order[s0:s1], flushing its hot weights every ``flush_rows``
    rows (``since``: rows since the last flush, returned updated), and with
    ``bias_each_row`` the bias weight alone after the others; its figures added to acc[t] at
    the end (``_store_figures``).

    The steps are written out in the loop, the SVM's and the SVR's apart (as ``_step``,
    which the simulator calls): with the steps as inlined functions the
    loop ran 1.3-1.6x slower on one thread (pypi-recent, -s 1), whatever their form. A test
    holds the two to the same bits (one thread against the simulator of one)."""
    rec_flat = rec.reshape(rec.size)
    shift = np.uint64(t * stride)
    bias_view = view_start + t * stride + hot_weight.shape[0] - 1
    pgmax = acc[t, _T_PGMAX]
    pgmin = acc[t, _T_PGMIN]
    terms = acc[t, _T_TERMS]
    pgmax_old = fstate[_F_PGMAX_OLD]
    pgmin_old = fstate[_F_PGMIN_OLD]
    for s in range(s0, s1):
        if use_prefetch:
            prefetch_ahead(order, s, s1, indptr, xind, data, rec_flat, 4)
        i = order[s]
        a = rec[i, _ALPHA]
        yi = rec[i, _Y]
        diag = rec[i, _BOUND_OR_DIAG]
        dot = _dot(indptr, xind, data, bias, wx, i, n_weights, shift, bias_view)
        if regression:  # (pgmax: the largest violation, pgmin: the violations' sum)
            shrunk, violation, a_new = svr_coordinate(
                a, yi, dot, diag, rec[i, _QBAR] + qbar_extra, squared, p, shrinking, pgmax_old
            )
            if shrunk:
                removed[i] = 1
            else:
                pgmax = max(pgmax, violation)
                pgmin += violation
                if a_new != a:
                    d = a_new - a
                    change = p * (abs(a_new) - abs(a)) - yi * d
                    if squared:
                        change += 0.5 * diag * d * (a_new + a)
                    terms += change
                    rec[i, _ALPHA] = a_new
                    _add(indptr, xind, data, bias, wx, i, d, n_weights, shift, bias_view, True)
        else:
            shrunk, pg, a_new = svm_coordinate(
                a, yi, dot, diag, rec[i, _QBAR] + qbar_extra, squared, shrinking, pgmax_old,
                pgmin_old,
            )  # fmt: skip
            if shrunk:
                removed[i] = 1
            else:
                pgmax = max(pgmax, pg)
                pgmin = min(pgmin, pg)
                if abs(pg) > PG_ZERO and a_new != a:
                    d = a_new - a
                    change = -d
                    if squared:
                        change += 0.5 * diag * d * (a_new + a)
                    terms += change
                    rec[i, _ALPHA] = a_new
                    _add(indptr, xind, data, bias, wx, i, d * yi, n_weights, shift, bias_view,
                         True)  # fmt: skip
        since += 1
        if since >= flush_rows:
            _flush(t, wx, view_start, stride, base, hot_weight, True, bias_discount, 0)
            since = 0
        elif bias_each_row:
            _flush(t, wx, view_start, stride, base, hot_weight, True, bias_discount,
                   hot_weight.shape[0] - 1)  # fmt: skip
    _store_figures(acc, t, pgmax, pgmin, terms, s1 - s0)
    return since


# ----------------------------------------------------------------------------- the replicas


@njit(cache=True, nogil=True)
def _replica_rows(
    t, c, s0, s1, since, flush_rows, indptr, indices, data, bias, regression, squared, p, rec,
    replica, fstate, shrinking, removed, acc, order, use_prefetch, step_log, chunk_start,
    progress, seen, sync, channel, base, bias_rows, bias_discount,
) -> int:  # fmt: skip
    """The replicas scheme's ``_step_rows``: thread t steps the rows order[s0:s1] (of chunk c)
    against its replica of w by the serial solver's own pass (``dcd.svm_pass``,
    ``svr.svr_pass``), at most ``flush_rows`` rows at a time; after each batch every row's
    change of w is logged (w += step_log[s] x_order[s]), and every ``flush_rows`` rows
    (``since``: rows since the last time, returned updated) the rows done are published and
    the other threads' published steps replayed (``_replay``). Its figures added to acc[t].

    ``bias_rows`` > 0: the bias weight shared through ``channel`` every ``bias_rows`` rows
    (``_share_bias``, with ``bias_discount``), and left out of the replays."""
    bias_weight = replica.shape[0] - 1
    sharing = bias_rows > 0
    replay_bias = -1.0 if sharing else bias
    if sharing:  # (a thread that sat out a ladder's phase: the bias as it is now)
        _share_bias(t, replica, bias_weight, channel, base, bias_discount)
    pgmax = acc[t, _T_PGMAX]
    pgmin = acc[t, _T_PGMIN]
    terms = acc[t, _T_TERMS]
    rec_flat = rec.reshape(rec.size)
    b0 = s0
    while b0 < s1:
        b1 = min(s1, b0 + max(flush_rows - since, 1))
        if sharing:
            b1 = min(b1, b0 + bias_rows)
        for s in range(b0, b1):  # (the dual variables before the pass)
            step_log[s] = rec[order[s], _ALPHA]
        if regression:  # (pgmax: the largest violation, pgmin: the violations' sum)
            gmax, gnorm1 = svr_pass(
                indptr, indices, data, bias, squared, p, rec, replica, order[b0:b1], b1 - b0,
                shrinking, fstate[_F_PGMAX_OLD], use_prefetch, removed,
            )  # fmt: skip
            pgmax = max(pgmax, gmax)
            pgmin += gnorm1
        else:
            batch_max, batch_min = svm_pass(
                indptr, indices, data, bias, squared, rec, replica, order[b0:b1], b1 - b0,
                shrinking, fstate[_F_PGMAX_OLD], fstate[_F_PGMIN_OLD], use_prefetch, removed,
                None, 1.0,
            )  # fmt: skip
            pgmax = max(pgmax, batch_max)
            pgmin = min(pgmin, batch_min)
        for s in range(b0, b1):  # (the steps the pass added to w, as it computed them)
            i = order[s]
            a = step_log[s]
            a_new = rec[i, _ALPHA]
            yi = rec[i, _Y]
            step_log[s] = 0.0
            if a_new != a:
                terms += _terms_change(a, a_new, yi, rec[i, _BOUND_OR_DIAG], regression,
                                       squared, p)  # fmt: skip
                step_log[s] = a_new - a if regression else (a_new - a) * yi
        since += b1 - b0
        b0 = b1
        if sharing:
            if use_prefetch and since < flush_rows:  # (the next rows asked for first)
                prefetch_rows(order, b0, s1, indptr, indices, data, rec_flat, 4)
            _share_bias(t, replica, bias_weight, channel, base, bias_discount)
        if since >= flush_rows:
            atomic_store(progress, c, b0 - chunk_start[c])
            if use_prefetch:  # (the next rows asked for while the others' are replayed)
                prefetch_rows(order, b0, s1, indptr, indices, data, rec_flat, 4)
            _replay(t, indptr, indices, data, replay_bias, replica, order, step_log,
                    chunk_start, progress, seen, sync)  # fmt: skip
            since = 0
    _store_figures(acc, t, pgmax, pgmin, terms, s1 - s0)
    return since


@njit(cache=True, nogil=True)
def _replay(t, indptr, indices, data, bias, replica, order, step_log, chunk_start, progress,
            seen, sync) -> None:  # fmt: skip
    """Thread t's replica of w brought up to date with every step the other threads have
    published: the first progress[c] rows of each chunk c taken so far, their changes of w in
    ``step_log``. seen[t, c]: the rows of chunk c already in the replica (a thread's own
    chunks count as seen when it takes them); seen[t, -1]: the first chunk not wholly in it."""
    last = seen.shape[1] - 1
    first = seen[t, last]
    taken = min(atomic_load(sync, _SYNC_NEXT), atomic_load(sync, _SYNC_N_CHUNKS))
    whole = True  # (every chunk before c wholly in the replica)
    for c in range(first, taken):
        s0 = chunk_start[c]
        have = seen[t, c]
        if have < chunk_start[c + 1] - s0:
            # (the atomic read orders the reads of the published steps after it)
            published = atomic_load(progress, c)
            for s in range(s0 + have, s0 + published):
                if step_log[s] != 0.0:
                    row_axpy(indptr, indices, data, bias, order[s], step_log[s], replica)
            seen[t, c] = have = published
        if whole and have == chunk_start[c + 1] - s0:
            first = c + 1
        else:
            whole = False
    seen[t, last] = first


@njit(cache=True, nogil=True, inline="always")
def _share_bias(t, replica, bias_weight, channel, base, bias_discount) -> None:
    """Thread t's changes of the bias weight since it last shared it added to the shared one
    (channel[0]), and its replica's bias weight read back from it, with the other threads'
    changes (``_discounted_bias``; base[t, 0]: the value its next changes are counted from,
    base[t, 1]: the shared value it last read)."""
    change = replica[bias_weight] - base[t, 0]
    if change != 0.0:
        atomic_add_float(channel, 0, change)
    value = channel[0]
    view = _discounted_bias(value, change, base[t, 1], bias_discount)
    base[t, 1] = value
    replica[bias_weight] = view
    base[t, 0] = view


# ----------------------------------------------------------------------------- an iteration


@njit(cache=True, nogil=True, inline="always")
def _dual_value(acc, guard) -> tuple[float, float]:
    """(f, the rows' terms of f) at an outer iteration's end: 1/2 w'w from every thread's
    part of w'w and the terms changed by its steps, added in thread order."""
    sq = 0.0
    terms = guard[_G_TERMS]
    for t in range(acc.shape[0]):
        sq += acc[t, _T_SQ]
        terms += acc[t, _T_TERMS]
    return 0.5 * sq + terms, terms


@njit(cache=True, nogil=True, inline="always")
def _rose(f, guard) -> bool:
    """Whether f rose past rounding since the guard's last check (NaN counts as a rise)."""
    return not f - guard[_G_F] <= F_RISE_RTOL * abs(guard[_G_F])


@njit(cache=True, nogil=True)
def _end_epoch(active, istate, fstate, removed, trainable, acc, eps, regression, guard,
               control, rec, wx, n_weights, kept_alpha, n_kept, n_threads,
               shared_bias) -> int:  # fmt: skip
    """The serial end of an outer iteration of ``n_threads`` threads (thread 0), every
    thread's hot weights flushed, its part of w'w in acc, and unless the guard undoes the
    outer iteration, its shrunk rows dropped (``n_kept`` left: the callers judge by ``_rose``
    too). The guard first: f from 1/2 w'w and the rows' terms; an outer iteration that raised
    it (or made it non-finite) is undone, alpha and w put back as it found them
    (``kept_alpha``, and the weights kept after them in the same array), its shrinking marks
    cleared, and not counted; then the first of these that is left is taken (the module's
    note on the guard): with ``shared_bias`` (the shared w's threads, a bias) the bias weight
    flushed after every row, then half the threads down to two; ``flush_rows`` (and the
    replicas' ``bias_rows``) halved down to 1; half the threads, down to two; the solve
    handed over to one thread.
    Otherwise the serial solver's stopping rule. Returns _CONVERGED, _HAND_OVER,
    _FEWER_THREADS (control[_C_THREADS] the threads to go on with) or _GO_ON."""
    f, terms = _dual_value(acc, guard)
    n_active = istate[I_ACTIVE]
    if _rose(f, guard):
        control[_C_UNDONE] += 1
        n_rows = rec.shape[0]
        for i in range(n_rows):
            rec[i, _ALPHA] = kept_alpha[i]
        for j in range(n_weights):
            wx[j] = kept_alpha[n_rows + j]
        for s in range(n_active):
            removed[active[s]] = 0
        fewer = n_threads // 2
        if shared_bias and control[_C_BIAS_EACH_ROW] == 0:
            control[_C_BIAS_EACH_ROW] = 1
            return _GO_ON
        if shared_bias and fewer >= 2:  # (the rows in flight overshoot the bias: the note)
            control[_C_THREADS] = fewer
            return _FEWER_THREADS
        if control[_C_FLUSH_ROWS] > 1:
            control[_C_FLUSH_ROWS] //= 2
            control[_C_BIAS_ROWS] = max(control[_C_BIAS_ROWS] // 2, 1)
            return _GO_ON
        if fewer >= 2:
            control[_C_THREADS] = fewer
            return _FEWER_THREADS
        control[_C_ONE_THREAD] = 1
        return _HAND_OVER
    guard[_G_TERMS] = terms
    guard[_G_F] = f
    if _end_iteration(active, n_kept, istate, fstate, trainable, acc, eps, regression):
        return _CONVERGED
    return _HAND_OVER if control[_C_ONE_THREAD] else _GO_ON


@njit(cache=True, nogil=True)
def _keep(t, n_threads, rec, wx, n_weights, kept_alpha) -> None:
    """Thread t's share of what an undone outer iteration puts back: alpha of its share of
    the rows and its share of the weights, into ``kept_alpha`` (rows first, then weights)."""
    n_rows = rec.shape[0]
    for i in range(n_rows * t // n_threads, n_rows * (t + 1) // n_threads):
        kept_alpha[i] = rec[i, _ALPHA]
    lo, hi = _weight_range(t, n_threads, n_weights)
    for j in range(lo, hi):
        kept_alpha[n_rows + j] = wx[j]


@njit(cache=True, nogil=True, inline="always")
def _refresh(t, wx, view_start, stride, base, hot_weight) -> None:
    """Thread t's view of the hot weights (and its base) read from the shared ones (the
    last hot weight's also as the value last read: ``_flush``)."""
    view = view_start + t * stride
    for h in range(hot_weight.shape[0]):
        value = wx[hot_weight[h]]
        wx[view + h] = value
        base[t, h] = value
        base[t, stride] = value


@njit(cache=True, nogil=True, inline="always")
def _weight_range(t, n_threads, n_weights) -> tuple[int, int]:
    """Thread t's share of the weights (for w'w in parts and zeroing)."""
    return n_weights * t // n_threads, n_weights * (t + 1) // n_threads


@njit(cache=True, nogil=True)
def _sq_part(wx, lo, hi) -> float:
    total = 0.0
    for j in range(lo, hi):
        total += wx[j] * wx[j]
    return total


@njit(cache=True, nogil=True, inline="always")
def _phases(ladder, n_chunks) -> tuple[int, int]:
    """(phases, chunks a thread in each but the last) of an outer iteration of ``n_chunks``
    on the thread counts ``ladder``: the phases but the last take LADDER_SHARE of the
    chunks, as many a thread; one phase (all threads) when a thread would get none."""
    n_phases = ladder.shape[0]
    if n_phases <= 1:
        return 1, 0
    threads_before_last = 0
    for phase in range(n_phases - 1):
        threads_before_last += ladder[phase]
    per_thread = int(n_chunks * LADDER_SHARE) // threads_before_last
    return (n_phases, per_thread) if per_thread > 0 else (1, 0)


@njit(cache=True, nogil=True)
def _take_chunks(
    t, end_chunk, n_chunks, n_active, since, flush_rows, alone, indptr, xind, data, bias,
    regression, squared, p, rec, wx, replica, fstate, shrinking, removed, acc, active, order,
    bucket_order, bucket_size, buckets_per_group, chunk_start, chunk_seed, rngs, use_prefetch,
    n_weights, view_start, stride, base, hot_weight, replicas, indices, step_log, progress, seen,
    channel, bias_rows, qbar_extra, bias_discount, bias_each_row, sync,
) -> int:  # fmt: skip
    """Thread t takes chunks as they come (an atomic counter) and steps their rows, until the
    counter passes ``end_chunk``; ``since`` returned updated (``_step_rows``). ``alone``: the
    only thread running (a phase of one), which steps each chunk with the serial solver's
    pass on its replica, or in the shared scheme on w itself (``indices``: the rows' own
    feature numbers), logging the steps for the replicas to replay: one thread's rate is
    then the serial kernel's."""
    while True:
        c = atomic_fetch_add(sync, _SYNC_NEXT, 1)
        if c >= end_chunk:
            return since
        _prepare_chunk(
            c, n_chunks, indptr, xind, data, rec, use_prefetch, active, order, bucket_order,
            bucket_size, buckets_per_group, chunk_start, chunk_seed, n_active, rngs[t],
        )  # fmt: skip
        s0, s1 = chunk_start[c], chunk_start[c + 1]
        if replicas or alone:
            if replicas:
                seen[t, c] = s1 - s0  # (its own: in its replica)
            own = replica if replicas else wx[:n_weights]
            # (alone: the chunk in one pass, nothing published or replayed before its end)
            since = _replica_rows(
                t, c, s0, s1, 0 if alone else since, s1 - s0 + 1 if alone else flush_rows,
                indptr, indices, data, bias, regression, squared, p, rec, own, fstate,
                shrinking, removed, acc, order, use_prefetch, step_log, chunk_start, progress,
                seen, sync, channel, base, bias_rows, bias_discount,
            )  # fmt: skip
            atomic_store(progress, c, s1 - s0)
        else:
            since = _step_rows(
                t, s0, s1, since, flush_rows, indptr, xind, data, bias, regression, squared, p,
                rec, wx, fstate, shrinking, removed, acc, order, use_prefetch, n_weights,
                view_start, stride, base, hot_weight, qbar_extra, bias_discount, bias_each_row,
            )  # fmt: skip


@njit(cache=True, nogil=True)
def run_threads(
    t, n_threads, n_epochs, indptr, xind, data, bias, loss, regression, p, rec, wx, active,
    trainable, fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group,
    use_prefetch, removed, order, bucket_order, chunk_rows, chunk_start, chunk_seed, rngs, acc,
    n_weights, view_start, stride, base, hot_weight, guard, control, kept_alpha, replicas,
    indices, step_log, progress, seen, channel, ladder, phase_chunks, phase_seconds, sync,
) -> None:  # fmt: skip
    """Thread t's side of up to ``n_epochs`` outer iterations (undone ones count); every
    thread calls it with the same arrays (thread 0 runs the serial parts), ``sync`` zeroed but
    for its spin limit. Returns when converged, handed over to one thread, or done.
    ``replicas``: the replicas scheme (``AsyncThreads``): thread t steps against its replica
    wx[t * stride:][:n_weights], thread 0's being w.

    ``ladder``: thread counts, ascending, the last ``n_threads`` (empty: all threads all
    along). Each outer iteration then runs in phases: the first chunks (``_phases``) on
    ladder[0] threads, the next on ladder[1], ..., the rest on all; phase p takes chunks
    phase_chunks[p] to phase_chunks[p + 1] (all zero: too few chunks for phases) in
    phase_seconds[p] (thread 0's clock, from barrier to barrier). A phase of one thread
    steps by the serial solver's pass (``_take_chunks``), so that its rate is the serial
    kernel's."""
    squared = loss == LOSS_SQUARED_HINGE
    lo, hi = _weight_range(t, n_threads, n_weights)
    replica = wx[t * stride:t * stride + n_weights]
    last = seen.shape[1] - 1
    # the replicas' bias weight shared every bias_rows rows (0: replayed as the others)
    bias_rows = control[_C_BIAS_ROWS] if replicas and bias >= 0.0 else 0
    replay_bias = -1.0 if bias_rows > 0 else bias
    for _ in range(n_epochs):
        if t == 0:
            n_chunks = _begin_iteration(
                active, istate, order, bucket_order, bucket_size, buckets_per_group, rng,
                chunk_rows, chunk_start, chunk_seed, acc, regression,
            )  # fmt: skip
            if replicas:
                progress[:n_chunks] = 0
                channel[0] = wx[n_weights - 1]
            atomic_store(sync, _SYNC_NEXT, 0)
            atomic_store(sync, _SYNC_N_CHUNKS, n_chunks)
        _barrier(sync, n_threads)
        _keep(t, n_threads, rec, wx, n_weights, kept_alpha)
        n_chunks = atomic_load(sync, _SYNC_N_CHUNKS)
        if replicas:  # (every replica w as the outer iteration starts)
            if t > 0:
                for j in range(n_weights):
                    replica[j] = wx[j]
            seen[t, :n_chunks] = 0
            seen[t, last] = 0
            base[t, 0] = base[t, 1] = wx[n_weights - 1]
        else:
            _refresh(t, wx, view_start, stride, base, hot_weight)
        n_active = istate[I_ACTIVE]
        flush_rows = control[_C_FLUSH_ROWS]
        # (the others stepping rows beside a thread's: no more than there are chunks)
        qbar_extra = guard[_G_DAMPING] * (min(n_threads, n_chunks) - 1)
        bias_discount = guard[_G_BIAS_DISCOUNT]
        bias_each_row = control[_C_BIAS_EACH_ROW] == 1
        acc[t, _T_TERMS] = 0.0
        since = 0
        n_phases, per_thread = _phases(ladder, n_chunks)
        if t == 0:
            phase_chunks[:] = 0
        _barrier(sync, n_threads)  # (all kept before any row changes)
        if n_phases > 1 and t == 0:
            # The phase of one is short: w read into this core's caches first, so that it
            # does not pay alone what the set-up (the copies above) evicted.
            acc[t, _T_SQ] = _sq_part(replica if replicas else wx, 0, n_weights)
        first_chunk = 0
        started = monotonic_seconds()
        for phase in range(n_phases):
            k = n_threads if phase == n_phases - 1 else ladder[phase]
            end_chunk = n_chunks if k == n_threads else first_chunk + per_thread * k
            if t < k:
                alone = k == 1 and k < n_threads  # (a ladder's phase of one)
                since = _take_chunks(
                    t, end_chunk, n_chunks, n_active, since, flush_rows, alone, indptr, xind,
                    data, bias, regression, squared, p, rec, wx, replica, fstate, shrinking,
                    removed, acc, active, order, bucket_order, bucket_size, buckets_per_group,
                    chunk_start, chunk_seed, rngs, use_prefetch, n_weights, view_start, stride,
                    base, hot_weight, replicas, indices, step_log, progress, seen, channel,
                    bias_rows, qbar_extra, bias_discount, bias_each_row, sync,
                )  # fmt: skip
            if k == n_threads:
                break
            # The phase's end: its hot weights' changes in w, every view read back, the next
            # phase's chunks counted from its first (the counter overshot by the takers).
            if not replicas:
                _flush(t, wx, view_start, stride, base, hot_weight, True, bias_discount, 0)
            _barrier(sync, n_threads)
            if t == 0:
                now = monotonic_seconds()
                phase_seconds[phase] = now - started
                started = now
                phase_chunks[phase + 1] = end_chunk
                atomic_store(sync, _SYNC_NEXT, end_chunk)
            _barrier(sync, n_threads)
            if not replicas:
                _refresh(t, wx, view_start, stride, base, hot_weight)
            since = 0
            first_chunk = end_chunk
        if replicas:
            _barrier(sync, n_threads)  # (every step published)
            _replay(t, indptr, xind, data, replay_bias, replica, order, step_log, chunk_start,
                    progress, seen, sync)  # fmt: skip
            if bias_rows > 0:  # (every thread's changes shared at its last rows)
                replica[n_weights - 1] = channel[0]
        else:
            _flush(t, wx, view_start, stride, base, hot_weight, True, bias_discount, 0)
        _barrier(sync, n_threads)  # (every change in w: w'w in parts)
        if t == 0 and n_phases > 1:
            phase_seconds[n_phases - 1] = monotonic_seconds() - started
            phase_chunks[n_phases] = n_chunks
        acc[t, _T_SQ] = _sq_part(wx, lo, hi)
        _barrier(sync, n_threads)
        # (the shrunk rows dropped by all threads, unless the guard is to undo the outer
        # iteration: every thread judges that alike, the same sums in the same order)
        n_kept = n_active
        if not _rose(_dual_value(acc, guard)[0], guard):
            n_kept = _drop_shrunk_on_threads(t, n_threads, active, n_active, removed,
                                             acc[:, _T_KEPT], order, sync)  # fmt: skip
        if t == 0:
            atomic_store(sync, _SYNC_DONE, _end_epoch(
                active, istate, fstate, removed, trainable, acc, eps, regression, guard,
                control, rec, wx, n_weights, kept_alpha, n_kept, n_threads,
                not replicas and bias >= 0.0,
            ))  # fmt: skip
        _barrier(sync, n_threads)
        if atomic_load(sync, _SYNC_DONE) != _GO_ON:
            return


@njit(cache=True, nogil=True)
def run_simulated(
    n_threads, n_epochs, indptr, xind, data, bias, loss, regression, p, rec, wx, active,
    trainable, fstate, istate, rng, eps, shrinking, bucket_size, buckets_per_group,
    use_prefetch, removed, order, bucket_order, chunk_rows, chunk_start, chunk_seed, rngs, acc,
    n_weights, view_start, stride, base, hot_weight, guard, control, kept_alpha, replicas,
    indices, step_log, progress, seen, channel, ladder, phase_chunks, phase_seconds, sync,
) -> None:  # fmt: skip
    """``run_threads``' scheme for ``n_threads`` threads on this one, in lockstep (the
    module's note): chunk c goes to thread c mod T; at each step every thread with a row left
    reads w'x_i for its next row, then each in thread order steps it and adds its change.
    Deterministic. Sets sync[_SYNC_DONE] as ``run_threads``. The shared w's scheme only (the
    replicas' arguments and the ladder are not used)."""
    squared = loss == LOSS_SQUARED_HINGE
    T = n_threads
    cursor = np.zeros(T, dtype=np.int64)  # the next position in order of each thread
    stop = np.zeros(T, dtype=np.int64)  # the end of its current chunk
    chunk = np.zeros(T, dtype=np.int64)  # its current chunk
    since = np.zeros(T, dtype=np.int64)
    dots = np.zeros(T)
    rows = np.zeros(T, dtype=np.int64)
    for _ in range(n_epochs):
        n_chunks = _begin_iteration(
            active, istate, order, bucket_order, bucket_size, buckets_per_group, rng,
            chunk_rows, chunk_start, chunk_seed, acc, regression,
        )  # fmt: skip
        n_active = istate[I_ACTIVE]
        flush_rows = control[_C_FLUSH_ROWS]
        qbar_extra = guard[_G_DAMPING] * (min(T, n_chunks) - 1)
        bias_discount = guard[_G_BIAS_DISCOUNT]
        bias_each_row = control[_C_BIAS_EACH_ROW] == 1
        _keep(0, 1, rec, wx, n_weights, kept_alpha)
        for t in range(T):
            _refresh(t, wx, view_start, stride, base, hot_weight)
            acc[t, _T_TERMS] = 0.0
            since[t] = 0
            chunk[t] = t - T  # (its first chunk taken below)
            cursor[t] = stop[t] = 0
        left = True
        while left:
            left = False
            for t in range(T):
                while cursor[t] == stop[t] and chunk[t] + T < n_chunks:
                    chunk[t] += T
                    c = chunk[t]
                    _prepare_chunk(
                        c, n_chunks, indptr, xind, data, rec, use_prefetch, active, order,
                        bucket_order, bucket_size, buckets_per_group, chunk_start, chunk_seed,
                        n_active, rngs[t],
                    )  # fmt: skip
                    cursor[t] = chunk_start[c]
                    stop[t] = chunk_start[c + 1]
                rows[t] = -1
                if cursor[t] < stop[t]:
                    left = True
                    i = order[cursor[t]]
                    cursor[t] += 1
                    rows[t] = i
                    dots[t] = _dot(
                        indptr, xind, data, bias, wx, i, n_weights, np.uint64(t * stride),
                        view_start + t * stride + hot_weight.shape[0] - 1,
                    )  # fmt: skip
            for t in range(T):
                if rows[t] < 0:
                    continue
                shift = np.uint64(t * stride)
                bias_view = view_start + t * stride + hot_weight.shape[0] - 1
                i = rows[t]
                shrunk, pg, change = _step(
                    i, dots[t], indptr, xind, data, bias, regression, squared, p, rec, wx,
                    shrinking, fstate[_F_PGMAX_OLD], fstate[_F_PGMIN_OLD], removed, n_weights,
                    shift, bias_view, False, qbar_extra,
                )  # fmt: skip
                if not shrunk:  # (the SVR: pgmax the largest violation, pgmin their sum)
                    acc[t, _T_PGMAX] = max(acc[t, _T_PGMAX], pg)
                    if regression:
                        acc[t, _T_PGMIN] += pg
                    else:
                        acc[t, _T_PGMIN] = min(acc[t, _T_PGMIN], pg)
                    acc[t, _T_TERMS] += change
                acc[t, _T_ROWS] += 1
                since[t] += 1
                if since[t] >= flush_rows:
                    _flush(t, wx, view_start, stride, base, hot_weight, False, bias_discount, 0)
                    since[t] = 0
                elif bias_each_row:
                    _flush(t, wx, view_start, stride, base, hot_weight, False, bias_discount,
                           hot_weight.shape[0] - 1)  # fmt: skip
        for t in range(T):
            _flush(t, wx, view_start, stride, base, hot_weight, False, bias_discount, 0)
            lo, hi = _weight_range(t, T, n_weights)
            acc[t, _T_SQ] = _sq_part(wx, lo, hi)
        n_kept = n_active
        if not _rose(_dual_value(acc, guard)[0], guard):
            n_kept = drop_shrunk(active, n_active, removed)
        done = _end_epoch(
            active, istate, fstate, removed, trainable, acc, eps, regression, guard, control,
            rec, wx, n_weights, kept_alpha, n_kept, T, bias >= 0.0,
        )  # fmt: skip
        sync[_SYNC_DONE] = done
        if done != _GO_ON:
            return


# ----------------------------------------------------------------------------- w from alpha


@njit(cache=True, nogil=True)
def recompute_replicas(t, n_threads, indptr, xind, data, bias, regression, rec, wx, n_weights,
                       stride, sync) -> None:  # fmt: skip
    """w = sum_i y_i alpha_i x_i (the SVR: sum_i beta_i x_i) recomputed in the replicas, thread
    t's side: it sums a fixed share of the rows (the same sum at every run) into its replica,
    then its share of the weights is added up across the replicas into w (thread 0's)."""
    replica = wx[t * stride:t * stride + n_weights]
    replica[:] = 0.0
    n_rows = rec.shape[0]
    for i in range(n_rows * t // n_threads, n_rows * (t + 1) // n_threads):
        a = rec[i, _ALPHA]
        if a != 0.0:
            row_axpy(indptr, xind, data, bias, i, a if regression else a * rec[i, _Y], replica)
    _barrier(sync, n_threads)
    lo, hi = _weight_range(t, n_threads, n_weights)
    for r in range(1, n_threads):
        for j in range(lo, hi):
            wx[j] += wx[r * stride + j]
    _barrier(sync, n_threads)


# ----------------------------------------------------------------------------- set-up


@njit(cache=True, nogil=True)
def _feature_counts(indices, indptr, rows, n_features):
    """Per feature, the rows among ``rows`` holding it."""
    counts = np.zeros(n_features, dtype=np.int64)
    for i in rows:
        for k in range(indptr[i], indptr[i + 1]):
            counts[indices[k]] += 1
    return counts


def hot_features(
    X, max_hot: int = MAX_HOT, min_share: float = HOT_MIN_SHARE, n_threads: int = 1
) -> np.ndarray:
    """The features each thread keeps a view of (besides the bias): those in at least
    ``min_share`` of a sample of the rows, at most ``max_hot`` of the most frequent,
    ascending. Counted on up to ``n_threads`` threads (parts of the sample, their counts
    added: the same features at any count; 3M generated rows' sample took 19 ms on one)."""
    n_rows = X.shape[0]
    sample = np.arange(n_rows)
    if n_rows > SAMPLE_ROWS:
        sample = np.sort(np.random.default_rng(SAMPLE_SEED).choice(n_rows, SAMPLE_ROWS, False))
    sample_nnz = int((X.indptr[sample + 1] - X.indptr[sample]).sum())
    n_parts = max(1, min(int(n_threads), sample_nnz // PARALLEL_MIN_NNZ, sample.shape[0]))
    parts = [(sample.shape[0] * k // n_parts, sample.shape[0] * (k + 1) // n_parts)
             for k in range(n_parts)]  # fmt: skip
    counts = sum(for_chunks(parts, lambda a, b: _feature_counts(
        X.indices, X.indptr, sample[a:b], X.shape[1])))  # fmt: skip
    hot = np.flatnonzero(counts >= max(min_share * sample.shape[0], 1.0))
    if hot.shape[0] > max_hot:
        hot = hot[np.argsort(-counts[hot], kind="stable")[:max_hot]]
    return np.sort(hot)


def _cache_lines(n: int) -> np.ndarray:
    """n cache lines of float64 (8 each), zeroed, from a line's start: what one thread writes
    shares no line with what another does."""
    space = np.zeros(8 * n + 8)
    first = (-(space.ctypes.data // 8)) % 8
    return space[first:first + 8 * n]


@njit(cache=True, nogil=True)
def _remap(indices, slot_of, view_start, out) -> None:
    for k in range(indices.shape[0]):
        slot = slot_of[indices[k]]
        out[k] = indices[k] if slot < 0 else view_start + slot


def remapped_indices(X, hot: np.ndarray, view_start: int, dtype, n_threads: int = 1) -> np.ndarray:
    """X.indices with hot feature ``hot[s]`` renumbered ``view_start + s`` (past every
    weight: where thread 0's view of it lies; thread t's is ``t * stride`` further); copied
    on ``n_threads`` threads."""
    slot_of = np.full(X.shape[1], -1, dtype=np.int64)
    slot_of[hot] = np.arange(hot.shape[0])
    indptr, indices = X.indptr, X.indices
    out = np.empty(indices.shape[0], dtype=dtype)

    def rows(r0: int, r1: int) -> None:
        p0, p1 = indptr[r0], indptr[r1]
        _remap(indices[p0:p1], slot_of, view_start, out[p0:p1])

    for_row_chunks(indptr, n_threads, rows)
    return out


@njit(cache=True, nogil=True)
def _row_terms(rec, regression, squared, p) -> float:
    """The rows' terms of the dual objective at the records' dual variables.

    (Compiled, as w'w beside it: a NumPy dot product here wakes the BLAS library's threads,
    which then spin on the cores for some 25 ms after it, and the solve's threads, started
    right after, ran their outer iteration 1.4x slower on 2 cores.)"""
    terms = 0.0
    for i in range(rec.shape[0]):
        terms += _terms_change(0.0, rec[i, _ALPHA], rec[i, _Y], rec[i, _BOUND_OR_DIAG],
                               regression, squared, p)  # fmt: skip
    return terms


def _phase_rates(ladder, phase_chunks, phase_seconds, chunk_start) -> dict[int, float]:
    """Seconds a row of each thread count of a ladder (``run_threads``; none when the phases
    did not run)."""
    rates = {}
    for p, k in enumerate(ladder):
        rows = chunk_start[phase_chunks[p + 1]] - chunk_start[phase_chunks[p]]
        if rows > 0 and phase_seconds[p] > 0.0:
            rates[int(k)] = float(phase_seconds[p] / rows)
    return rates


class AsyncThreads:
    """The work arrays and the threads of one asynchronous threaded (or simulated) solve.

    ``advance(n)`` runs up to n outer iterations on the solve's state arrays (those of
    ``dcd._solve_svm_dual``, or with ``p`` given those of ``svr.solve_svr_dual``), on
    ``n_threads`` threads, or with ``simulate`` the lockstep schedule on this thread;
    ``exact_weights()`` recomputes w from the dual variables; ``close()`` ends the threads.
    Options: ``max_hot``, ``hot_min_share`` (the hot features: ``hot_features``),
    ``flush_rows`` (rows between flushes at the start: ``STALE_ROWS // T`` by default; the
    replicas' rows between replays, ``STALE_ROWS // (2 T)``), ``replicas`` (the replicas
    scheme, the module's note: two or more real threads), ``bias_rows`` (the replicas' rows
    between shares of the bias weight: ``BIAS_STALE_ROWS // T`` by default), ``bias_damping``
    (the shared w's steps with ``bias_damping`` (T' - 1) B^2 added to each row's curvature,
    T' the threads that can step at once: the module's note on many threads and a bias; 0,
    none, by default), ``bias_discount`` (the share of the other threads' changes of the bias
    weight a thread's view leaves out: ``BIAS_DISCOUNT``, the module's note on the bias's
    overshoot), ``bias_each_row`` (the shared w's threads flush the bias weight after every
    row from the start, as the guard has them do after a rise). Once the guard has handed
    over (``one_thread``), the caller runs the serial kernel; ``max_threads`` is the threads
    it allows.
    """

    def __init__(
        self, X, bias: float, loss: int, rec, w, active, trainable, fstate, istate, rng,
        eps: float, shrinking: bool, bucket_size: int, buckets_per_group: int,
        use_prefetch: bool, removed, order, bucket_order, n_threads: int, *,
        simulate: bool = False, max_hot: int = MAX_HOT, hot_min_share: float = HOT_MIN_SHARE,
        flush_rows: int | None = None, p: float | None = None, replicas: bool = False,
        bias_rows: int | None = None, bias_damping: float = 0.0,
        bias_discount: float = BIAS_DISCOUNT, bias_each_row: bool = False,
    ) -> None:  # fmt: skip
        self.n_threads = T = int(n_threads)
        self.replicas = replicas = bool(replicas)
        self.scheme = "replicas" if replicas else "async"
        if replicas and (simulate or T < 2):
            raise InvalidInputError("the replicas scheme runs on two or more real threads")
        regression = p is not None
        p = 0.0 if p is None else float(p)
        self._squared = loss == LOSS_SQUARED_HINGE
        self._regression = regression
        self._p = p
        self.w = w
        self._rec = rec
        self._indptr, self._indices = X.indptr, X.indices
        self.simulate = bool(simulate) or T == 1
        # the threads of the sweeps of every row outside the outer iterations (the set-up's,
        # the guard's, w's recomputation): one for the simulator
        self._sweep_threads = 1 if self.simulate else T
        n_weights = w.shape[0]
        if replicas:
            # Thread t's replica of w at wx[t * stride:], thread 0's being w; a cache line
            # between two. No views: every weight is in the thread's own replica.
            hot = hot_weight = np.zeros(0, dtype=np.int64)
            stride = -(-n_weights // 8) * 8 + 8
            wx = np.zeros(T * stride)
            view_start = n_weights
            self.xind = X.indices
            self.base = _cache_lines(T).reshape(T, 8)
        else:
            hot = hot_features(X, int(max_hot), float(hot_min_share), self._sweep_threads)
            # the hot weights by slot, the bias weight last when there is one
            hot_weight = hot if bias < 0 else np.append(hot, n_weights - 1)
            # Views: after the weights, from a cache line's start, a cache line apart, so
            # that no two threads write one line. wx[:n_weights] is w.
            stride = max(8, -(-hot_weight.shape[0] // 8) * 8)
            wx = np.zeros(n_weights + 8 + T * stride + 8)
            view_start = n_weights + (-(wx.ctypes.data // 8 + n_weights)) % 8
            index_dtype = np.int32 if view_start + T * stride < 2**31 else np.int64
            self.xind = remapped_indices(X, hot, view_start, index_dtype, self._sweep_threads)
            # (and at column stride the bias weight's value last read: ``_flush``)
            self.base = _cache_lines(T * (stride // 8 + 1)).reshape(T, stride + 8)
        self.n_hot = int(hot.shape[0])
        self.hot_weight = hot_weight.astype(np.int64)
        self._wx = wx
        if bucket_size > 1:
            buckets_per_group = buckets_per_group * CHUNK_GROUPS
            chunk_rows = bucket_size * buckets_per_group
        else:
            chunk_rows = CHUNK_ROWS
        if flush_rows is not None:
            self.flush_rows_start = max(1, int(flush_rows))
        else:  # (a replica's read misses up to two intervals of each other thread's rows)
            self.flush_rows_start = max(1, STALE_ROWS // (2 * T if replicas else T))
        self.acc = self.per_thread = np.zeros((T, _LINE))
        self.guard = np.zeros(4)
        if not (isinstance(bias_damping, int | float) and 0.0 <= bias_damping < np.inf):
            raise InvalidInputError(f"bias_damping must be a number >= 0, got {bias_damping!r}")
        self.bias_damping = float(bias_damping) if bias >= 0.0 and not replicas else 0.0
        self.guard[_G_DAMPING] = self.bias_damping * bias * bias
        if not (isinstance(bias_discount, int | float) and 0.0 <= bias_discount <= 1.0):
            raise InvalidInputError(f"bias_discount must be a number in [0, 1], got "
                                    f"{bias_discount!r}")  # fmt: skip
        self.bias_discount = float(bias_discount) if bias >= 0.0 else 0.0
        self.guard[_G_BIAS_DISCOUNT] = self.bias_discount
        self._has_bias = bias >= 0.0
        self.bias_rows_start = max(1, int(bias_rows or BIAS_STALE_ROWS // T))
        each_row = bool(bias_each_row) and bias >= 0.0 and not replicas
        self.control = np.array([self.flush_rows_start, 0, 0, self.bias_rows_start, T,
                                 int(each_row)], dtype=np.int64)  # fmt: skip
        max_chunks = order.shape[0] // chunk_rows + 2
        self._chunk_start = np.zeros(max_chunks + 1, dtype=np.int64)  # (where chunk c starts)
        self.chunk_rows = chunk_rows
        # the replicas' logged steps (w += step_log[s] x_order[s]), the rows published of each
        # chunk, and the rows of each chunk in each thread's replica (``_replay``)
        # (the shared scheme's thread logs its steps too when it runs alone: ``_take_chunks``)
        step_log = np.zeros(order.shape[0])
        n_chunk_slots = max_chunks + 1
        self.shared = (
            X.indptr, self.xind, X.data, float(bias), int(loss), regression, p, rec, wx, active,
            trainable, fstate, istate, rng, float(eps), bool(shrinking), int(bucket_size),
            int(buckets_per_group), bool(use_prefetch), removed, order, bucket_order,
            chunk_rows,
            self._chunk_start,
            np.zeros(1, dtype=np.int64),  # chunk_seed
            np.zeros((T, _LINE), dtype=np.uint64),  # rngs: each thread's for its chunks
            self.acc, n_weights, view_start, stride, self.base, self.hot_weight, self.guard,
            self.control,
            np.empty(rec.shape[0] + n_weights),  # kept_alpha: alpha, then w, to undo with
            replicas,
            X.indices,
            step_log,
            np.zeros(n_chunk_slots, dtype=np.int64),  # progress
            np.zeros((T, n_chunk_slots + 1), dtype=np.int64),  # seen
            _cache_lines(1),  # channel: the replicas' shared bias weight
        )
        self._recompute_args = (X.indptr, X.data, float(bias), regression, rec)
        self._view_start, self._stride = view_start, stride
        self._istate = istate
        self.rows_visited = 0  # by the last ``advance``
        self.running = T  # the threads of the next ``advance`` (``set_run``)
        self._ladder = np.zeros(0, dtype=np.int64)
        self._phase_chunks = np.zeros(1, dtype=np.int64)
        self._phase_seconds = np.zeros(0)
        self.phase_rates: dict[int, float] = {}  # seconds a row by thread count (``set_run``)
        self._sync = np.zeros(_SYNC_SIZE, dtype=np.int64)
        self._cpus = []
        self._pool = None
        if not self.simulate:
            self._cpus = claim_cpus(T)
            self._pool = ThreadPoolExecutor(max_workers=T, thread_name_prefix="linsvm-async")
            # What the first outer iteration on the threads would otherwise pay, and the
            # schedule count against them: the threads started, and the pages of the arrays
            # they write (zeroed lazily by the system) touched.
            run_pinned(self._pool, self._cpus, self._sync, T, lambda t: None)
            wx.fill(0.0)
            step_log.fill(0.0)

    @property
    def one_thread(self) -> bool:
        """True once the guard has handed the rest of the solve to one thread."""
        return bool(self.control[_C_ONE_THREAD])

    @property
    def max_threads(self) -> int:
        """The threads the guard allows from now on (fewer than started once more raised the
        dual objective)."""
        return int(self.control[_C_THREADS])

    def _load(self) -> None:
        """wx from the solve's w (which may have been restored or reset since the last call),
        the views and bases from it, and the guard's f at this point."""
        n_weights = self.w.shape[0]
        wx = self._wx
        wx[:n_weights] = self.w
        values = wx[self.hot_weight]
        for t in range(self.n_threads):
            view = self._view_start + t * self._stride
            wx[view:view + values.shape[0]] = values
            self.base[t, : values.shape[0]] = values
            if values.shape[0]:  # (the bias weight's last value read: ``_flush``)
                self.base[t, self._stride] = values[-1]
        self.guard[_G_TERMS] = self._rows_terms()
        self.guard[_G_F] = 0.5 * _sq_part(self.w, 0, n_weights) + self.guard[_G_TERMS]

    def _rows_terms(self) -> float:
        """The rows' terms of the dual objective (``_row_terms``), on the solve's threads
        (their pool: a new one's threads took as long to start as the sum on one), a share
        of the rows each, added in thread order."""
        rec, args = self._rec, (self._regression, self._squared, self._p)
        if self._pool is None:
            return float(_row_terms(rec, *args))
        T, n_rows = self.n_threads, rec.shape[0]
        parts = np.zeros(T)

        def share(t: int) -> None:
            parts[t] = _row_terms(rec[n_rows * t // T:n_rows * (t + 1) // T], *args)

        run_pinned(self._pool, self._cpus, self._sync, T, share)
        total = 0.0
        for part in parts:
            total += part
        return total

    def set_run(self, n_threads: int, ladder: tuple[int, ...] = ()) -> None:
        """The threads of the following ``advance`` calls: the first ``n_threads`` of those
        started; with a ``ladder`` of thread counts (ascending, ending at ``n_threads``) the
        next ``advance`` runs one outer iteration in phases on each count in turn
        (``run_threads``) and leaves their seconds a row in ``phase_rates``."""
        if not 1 <= n_threads <= self.max_threads or (ladder and ladder[-1] != n_threads):
            raise ValueError(f"no run of {n_threads} threads, ladder {ladder}, on "
                             f"{self.max_threads} allowed of {self.n_threads}")  # fmt: skip
        self.running = int(n_threads)
        self._ladder = np.array(ladder, dtype=np.int64)
        self._phase_chunks = np.zeros(len(ladder) + 1, dtype=np.int64)
        self._phase_seconds = np.zeros(len(ladder))

    def advance(self, n_epochs: int) -> None:
        """Up to ``n_epochs`` outer iterations (fewer once converged or handed over; one
        with a ladder)."""
        if n_epochs <= 0 or self._istate[I_CONVERGED] or self.one_thread:
            return
        self._load()
        sync = self._sync
        sync[:] = 0
        self.acc[:, _T_ROWS] = 0.0
        ladder = self._ladder
        measured = (ladder, self._phase_chunks, self._phase_seconds)
        T = min(self.n_threads if self.simulate else self.running, self.max_threads)
        self.acc[T:, _T_TERMS] = 0.0  # (the rows of threads that do not run)
        self.acc[T:, _T_SQ] = 0.0
        if self.simulate:
            run_simulated(T, int(n_epochs), *self.shared, *measured, sync)
        else:
            if ladder.shape[0] > 1:
                n_epochs = 1
            # compiled (or loaded) here first: a thread that failed to start its kernel would
            # leave the others waiting
            run_threads(0, T, 0, *self.shared, *measured, sync)
            run_pinned(self._pool, self._cpus, sync, T, lambda t: run_threads(
                t, T, int(n_epochs), *self.shared, *measured, sync))  # fmt: skip
        self.phase_rates = _phase_rates(*measured, self._chunk_start)
        self._ladder = np.zeros(0, dtype=np.int64)
        self.running = min(self.running, self.max_threads)
        self.w[:] = self._wx[: self.w.shape[0]]
        self.rows_visited = int(self.acc[:, _T_ROWS].sum())

    def exact_weights(self) -> None:
        """w = sum_i y_i alpha_i x_i (the SVR: sum_i beta_i x_i), recomputed on the threads."""
        started = time.perf_counter()
        T = self.n_threads
        n_weights = self.w.shape[0]
        indptr, data, bias, regression, rec = self._recompute_args
        if self.replicas:  # (in the replicas, which hold T copies of w already)
            sync = self._sync
            sync[:] = 0
            wx = self._wx
            args = (indptr, self._indices, data, bias, regression, rec, wx, n_weights,
                    self._stride)  # fmt: skip
            run_pinned(self._pool, self._cpus, sync, T,
                       lambda t: recompute_replicas(t, T, *args, sync))
        else:
            # (each thread's rows into its own w, then added up: plain adds, the same sum at
            # every run; the shared w's atomic adds ran 2.8x slower on 2 threads, pypi-recent)
            alpha = rec[:, _ALPHA]
            coef = np.ascontiguousarray(alpha) if regression else alpha * rec[:, _Y]
            wx = weights_from_dual(indptr, self._indices, data, bias, coef, n_weights,
                                   self._sweep_threads)  # fmt: skip
        self.w[:] = wx[:n_weights]
        self.recompute_seconds = time.perf_counter() - started

    @property
    def figures(self) -> dict:
        return {
            "n_threads": self.n_threads,
            "thread_scheme": self.scheme,
            "hot_features": self.n_hot,
            "chunk_rows": self.chunk_rows,
            "flush_rows": int(self.control[_C_FLUSH_ROWS]),
            "flush_rows_start": self.flush_rows_start,
            "bias_rows": (int(self.control[_C_BIAS_ROWS])
                          if self.replicas and self._has_bias else None),
            "bias_damping": self.bias_damping,
            "bias_discount": self.bias_discount,
            "undone_epochs": int(self.control[_C_UNDONE]),
            "bias_each_row": bool(self.control[_C_BIAS_EACH_ROW]),
            "threads_allowed": self.max_threads,
            "handed_to_one_thread": self.one_thread,
        }

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        release_cpus(self._cpus)
        self._cpus = []
