"""The GPU kernels of the dual coordinate descent (``dcd_cuda``): imported only on a GPU solve.

This module imports ``numba.cuda`` at its top, so nothing on the CPU path imports it. The
kernels use only what both a real GPU and numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``)
provide: shared memory, ``syncthreads`` and atomic adds (the simulator has no warp shuffles),
so the tests run the very code a GPU runs.

Layout of a launch (``dcd_epoch``): a block of ``blockDim.y`` row slots of ``blockDim.x``
threads each (a power of two, at most ``MAX_THREADS_PER_ROW``); the slots of all blocks walk
the positions 0..l-1 of this epoch's order, ``gridDim.x * blockDim.y`` positions at a time,
each slot one row: its threads read the row's non-zeros side by side (consecutive threads,
consecutive non-zeros), sum their parts of w'x_i in shared memory, the slot's first thread
takes the exact one-variable step, and the slot's threads add step * x_i to w with atomic
adds. The step is the CPU solvers' own function, compiled for the GPU: ``dcd.svm_coordinate``
for the SVM dual (-s 1, -s 3), ``svr.svr_coordinate`` for the SVR dual (-s 12, -s 13); the
kernel's flags ``regression`` and ``squared`` (the L2 loss) choose it and its records'
meaning. The order is a permutation computed, not stored (``order_position``: a keyed Feistel
network over the row numbers with cycle walking), redrawn each epoch from the seed and the
epoch number.

Between epochs (``dcd_cuda``'s safeguard against stale reads): ``dual_objective_partials``
sums the dual objective f (``row_dual_terms``) by blocks into the same
``partial`` figures the epoch writes, ``reduce_partials`` finishes both, and ``keep_state`` /
``keep_state(..., restore=True)`` copy alpha, the flags and w to and from their kept copies.
"""

from __future__ import annotations

import math

from ._cuda_compat import prepare_numba_cuda
from .dcd import svm_coordinate
from .svr import svr_coordinate

prepare_numba_cuda()  # (before numba.cuda loads: NumPy 2.5 lacks what numba-cuda 0.30 asks for)
from numba import cuda, float64, int64  # noqa: E402

# Per-row records, as the CPU kernels' (dcd.py; svr.py: beta, H_ii, y_i, U_i or lambda_i):
# the dual variable, Q_ii plus the diagonal term, the target, U_i (L1 loss) or the diagonal
# term D_ii or lambda_i (L2 loss).
ALPHA, QBAR, Y, BOUND_OR_DIAG = 0, 1, 2, 3
# Row flags: trains this epoch; shrunk (skipped until the active set is re-checked); never
# trains (C_i = 0).
ACTIVE, SHRUNK, FIXED = 0, 1, 2
# The epoch's figures per block (``partial``) and for the whole launch (``reduce_partials``):
# max and min over the rows that took part of their measure (the projected gradient of the SVM
# dual, the violation of the SVR dual), rows that took part, rows shrunk this epoch, the dual
# objective f after the epoch (its blocks' parts: ``dual_objective_partials``), and the sum of
# the measures' magnitudes (the SVR dual's stopping rule: the violations' 1-norm).
PG_MAX, PG_MIN, KEPT, SHRUNK_NOW, OBJECTIVE, MEASURE_SUM = 0, 1, 2, 3, 4, 5
N_FIGURES = 6

MAX_BLOCK_THREADS = 256  # the shared scratch's size: threads per row x rows per block
MAX_ROWS_PER_BLOCK = 32
MAX_THREADS_PER_ROW = 32
# Hot weights a block keeps a view of (``hot_views``): the hot features and the bias.
MAX_HOT_SLOTS = 65
REDUCE_THREADS = 256  # at most, for reduce_partials (a power of two)


def feistel_round(right, key, mask):
    """The round function of ``order_position``: a multiply-xorshift hash of right ^ key.
    Operands stay below 2**62, so int64 arithmetic never wraps (Python ints in the simulator
    and int64 on a GPU give the same bits)."""
    v = (right ^ key) * 2654435761
    v = v ^ (v >> 16)
    v = (v & 0xFFFFFFFF) * 0x2C1B3C6D
    v = v ^ (v >> 13)
    return (v >> 5) & mask


def order_position(s, n_rows, half_bits, k0, k1, k2, k3):
    """The row visited at position s (0 <= s < n_rows) of an epoch: a four-round Feistel
    permutation of [0, 4**half_bits) keyed by k0..k3 (each below 2**half_bits), walked until
    it lands below n_rows. A bijection of [0, n_rows) for any keys; half_bits <= 16."""
    mask = (1 << half_bits) - 1
    x = s
    while True:
        left = x >> half_bits
        right = x & mask
        left, right = right, left ^ order_round(right, k0, mask)
        left, right = right, left ^ order_round(right, k1, mask)
        left, right = right, left ^ order_round(right, k2, mask)
        left, right = right, left ^ order_round(right, k3, mask)
        x = (left << half_bits) | right
        if x < n_rows:
            return x


order_round = cuda.jit(device=True)(feistel_round)
device_order_position = cuda.jit(device=True)(order_position)
svm_step = cuda.jit(device=True)(svm_coordinate.py_func)
svr_step = cuda.jit(device=True)(svr_coordinate.py_func)


@cuda.jit(device=True)
def row_dual_terms(a, yi, bound_or_diag, squared, regression, p):
    """Row i's terms of the dual objective f at its dual variable a (the rest is 1/2 w'w).

    SVM (-s 1, -s 3): f(alpha) = 1/2 w'w - sum_i alpha_i + 1/2 sum_i D_ii alpha_i^2; SVR (-s 12,
    -s 13): f(beta) = 1/2 w'w - sum_i y_i beta_i + p sum_i |beta_i| + 1/2 sum_i lambda_i
    beta_i^2 (``linsvm.objective``'s forms, minimised). D_ii or lambda_i is ``bound_or_diag``
    under the L2 loss (``squared``), 0 under the L1 loss."""
    diag = bound_or_diag if squared else 0.0
    if regression:
        return a * (0.5 * diag * a - yi) + p * abs(a)
    return a * (0.5 * diag * a - 1.0)


@cuda.jit(device=True)
def _flush_views(me, n_threads, hot_weight, n_slots, view, kept, w):
    """The block's changes of the hot weights since its last flush added to w (atomically),
    and its view read back from w with the other blocks' flushed changes (thread ``me`` of
    ``n_threads`` takes every n_threads-th slot)."""
    for h in range(me, n_slots, n_threads):
        change = view[h] - kept[h]
        if change != 0.0:
            cuda.atomic.add(w, hot_weight[h], change)
        value = w[hot_weight[h]]
        view[h] = value
        kept[h] = value


@cuda.jit(device=True)
def _row_slot_sum(acc, me, lane, width, sums):
    """The sum over a row slot's threads of their ``acc`` (thread ``me``, ``lane`` of
    ``width``), in ``sums``; every thread of the block must call it."""
    sums[me] = acc
    cuda.syncthreads()
    half = width // 2
    while half > 0:
        if lane < half:
            sums[me] += sums[me + half]
        cuda.syncthreads()
        half //= 2
    return sums[me - lane]


@cuda.jit(cache=True)
def dcd_epoch(
    indptr, indices, data, bias, bias_index, rec, w, flags, n_rows, half_bits, k0, k1, k2, k3,
    regression, squared, p, shrinking, upper_old, lower_old, partial, views, hot_base,
    hot_weight, flush_rounds, block, block_weight, position_start, position_stop,
):  # fmt: skip
    """One epoch (outer iteration) of dual CD over the rows whose flag is ACTIVE, or the part
    of it at positions ``position_start`` to ``position_stop`` of its order.

    indptr (l+1,), indices (nnz,) int32, data (nnz,) float32 or float64: the CSR rows;
    bias >= 0 adds the implicit feature whose weight is w[bias_index]; rec (l, 4) float64
    records; w (n [+1],) float64; flags (l,) uint8; k0..k3 this epoch's order keys;
    regression: the SVR dual (w += step x_i, tube half width p) rather than the SVM dual
    (w += step y_i x_i); squared: the L2 loss; upper_old/lower_old: the shrinking thresholds
    from the previous epoch (LIBLINEAR's: max and min PG for the SVM, the largest violation
    and its negative for the SVR); partial (>= gridDim.x, N_FIGURES) float64: each block writes
    its figures there (all but OBJECTIVE).

    ``views`` (``dcd_cuda``'s hot views): the hot weights, hot_weight (n_slots,) (the bias
    weight last when bias >= 0), live in a view in each block's shared memory; ``indices``
    then number hot feature s as hot_base + s (hot_base >= len(w)). The block's rows read the
    view, and its first thread steps the block's rows of a round one after another, each
    row's w'x_i corrected by the hot changes of the rows before it in the round, adding its
    own to the view, so that the block's rows meet the hot weights as serial coordinate
    descent does; their other features' changes are added to w by the row's threads as
    without views. Every ``flush_rounds`` rounds, and at the end, the block adds its view's
    changes to w and reads the view back.

    ``block`` (``dcd_cuda``'s hot block; not with ``views``): the hot features, numbered as
    for the views, and the bias (last, when bias >= 0) are a primal block whose weights,
    block_weight (n_slots,), stay fixed during the launch: the rows read them there and add
    their changes to the other weights only.
    """
    lane = cuda.threadIdx.x
    slot = cuda.threadIdx.y
    width = cuda.blockDim.x
    rows_per_block = cuda.blockDim.y
    me = slot * width + lane
    sums = cuda.shared.array(MAX_BLOCK_THREADS, float64)
    steps = cuda.shared.array(MAX_ROWS_PER_BLOCK, float64)
    block_figures = cuda.shared.array((MAX_ROWS_PER_BLOCK, N_FIGURES), float64)
    view = cuda.shared.array(MAX_HOT_SLOTS, float64)
    kept_view = cuda.shared.array(MAX_HOT_SLOTS, float64)
    round_change = cuda.shared.array(MAX_HOT_SLOTS, float64)
    rows = cuda.shared.array(MAX_ROWS_PER_BLOCK, int64)
    n_slots = hot_weight.shape[0] if views else 0
    bias_slot = n_slots - 1
    n_threads = width * rows_per_block
    for h in range(me, n_slots, n_threads):
        view[h] = w[hot_weight[h]]
        kept_view[h] = view[h]
        round_change[h] = 0.0
    if views:
        cuda.syncthreads()  # (the view whole before any row reads it)
    rounds = 0

    # the slot's figures (kept by its first thread)
    pgmax = -math.inf
    pgmin = math.inf
    kept = 0.0
    shrunk_now = 0.0
    measure_sum = 0.0
    stride = cuda.gridDim.x * rows_per_block
    base = position_start + cuda.blockIdx.x * rows_per_block
    block_bias_slot = block_weight.shape[0] - 1
    while base < position_stop:  # the same number of rounds for every thread of the block
        s = base + slot
        i = int64(-1)
        if s < position_stop:
            i = device_order_position(s, n_rows, half_bits, k0, k1, k2, k3)
            if flags[i] != ACTIVE:
                i = -1
        start = int64(0)
        end = int64(0)
        if i >= 0:
            start = indptr[i]
            end = indptr[i + 1]
        acc = 0.0
        for k in range(start + lane, end, width):
            j = indices[k]
            if views and j >= hot_base:
                acc += view[j - hot_base] * data[k]
            elif block and j >= hot_base:
                acc += block_weight[j - hot_base] * data[k]
            else:
                acc += w[j] * data[k]
        if lane == 0:
            rows[slot] = i
        _row_slot_sum(acc, me, lane, width, sums)  # (each slot's w'x_i at its lane 0's place)
        if views and me == 0:
            # the block's rows one after another against the hot weights (the docstring)
            for r in range(rows_per_block):
                step = 0.0
                ir = rows[r]
                if ir >= 0:
                    r_start = indptr[ir]
                    r_end = indptr[ir + 1]
                    dot = sums[r * width]
                    for k in range(r_start, r_end):
                        j = indices[k]
                        if j >= hot_base:
                            dot += round_change[j - hot_base] * data[k]
                    if bias >= 0.0:
                        dot += bias * view[bias_slot]
                    a = rec[ir, ALPHA]
                    yi = rec[ir, Y]
                    if regression:
                        shrunk, measure, a_new = svr_step(
                            a, yi, dot, rec[ir, BOUND_OR_DIAG], rec[ir, QBAR], squared, p,
                            shrinking, upper_old,
                        )  # fmt: skip
                    else:
                        shrunk, measure, a_new = svm_step(
                            a, yi, dot, rec[ir, BOUND_OR_DIAG], rec[ir, QBAR], squared,
                            shrinking, upper_old, lower_old,
                        )  # fmt: skip
                    if shrunk:
                        flags[ir] = SHRUNK
                        shrunk_now += 1.0
                    else:
                        kept += 1.0
                        pgmax = max(pgmax, measure)
                        pgmin = min(pgmin, measure)
                        measure_sum += abs(measure)
                        if a_new != a:
                            rec[ir, ALPHA] = a_new
                            step = a_new - a if regression else (a_new - a) * yi
                            for k in range(r_start, r_end):
                                j = indices[k]
                                if j >= hot_base:
                                    change = step * data[k]
                                    view[j - hot_base] += change
                                    round_change[j - hot_base] += change
                            if bias >= 0.0:
                                view[bias_slot] += step * bias
                                round_change[bias_slot] += step * bias
                steps[r] = step
        if not views and lane == 0:
            step = 0.0
            if i >= 0:
                dot = sums[me]
                if bias >= 0.0:
                    dot += bias * (block_weight[block_bias_slot] if block else w[bias_index])
                a = rec[i, ALPHA]
                yi = rec[i, Y]
                if regression:
                    shrunk, measure, a_new = svr_step(
                        a, yi, dot, rec[i, BOUND_OR_DIAG], rec[i, QBAR], squared, p, shrinking,
                        upper_old,
                    )  # fmt: skip
                else:
                    shrunk, measure, a_new = svm_step(
                        a, yi, dot, rec[i, BOUND_OR_DIAG], rec[i, QBAR], squared, shrinking,
                        upper_old, lower_old,
                    )  # fmt: skip
                if shrunk:
                    flags[i] = SHRUNK
                    shrunk_now += 1.0
                else:
                    kept += 1.0
                    pgmax = max(pgmax, measure)
                    pgmin = min(pgmin, measure)
                    measure_sum += abs(measure)
                    if a_new != a:
                        rec[i, ALPHA] = a_new
                        step = a_new - a if regression else (a_new - a) * yi
            steps[slot] = step
        cuda.syncthreads()
        # every slot of the block has read w (bias weight included): now the adds
        step = steps[slot]
        if step != 0.0:
            for k in range(start + lane, end, width):
                j = indices[k]
                if not (views or block) or j < hot_base:
                    cuda.atomic.add(w, j, step * data[k])
            if lane == 0 and bias >= 0.0 and not (views or block):
                cuda.atomic.add(w, bias_index, step * bias)
        if views:
            for h in range(me, n_slots, n_threads):
                round_change[h] = 0.0
            rounds += 1
            if rounds % flush_rounds == 0:
                cuda.syncthreads()
                _flush_views(me, n_threads, hot_weight, n_slots, view, kept_view, w)
                cuda.syncthreads()
        base += stride

    if views:
        cuda.syncthreads()
        _flush_views(me, n_threads, hot_weight, n_slots, view, kept_view, w)

    if lane == 0:
        block_figures[slot, PG_MAX] = pgmax
        block_figures[slot, PG_MIN] = pgmin
        block_figures[slot, KEPT] = kept
        block_figures[slot, SHRUNK_NOW] = shrunk_now
        block_figures[slot, MEASURE_SUM] = measure_sum
    cuda.syncthreads()
    if me == 0:
        for r in range(1, rows_per_block):
            pgmax = max(pgmax, block_figures[r, PG_MAX])
            pgmin = min(pgmin, block_figures[r, PG_MIN])
            kept += block_figures[r, KEPT]
            shrunk_now += block_figures[r, SHRUNK_NOW]
            measure_sum += block_figures[r, MEASURE_SUM]
        b = cuda.blockIdx.x
        partial[b, PG_MAX] = pgmax
        partial[b, PG_MIN] = pgmin
        partial[b, KEPT] = kept
        partial[b, SHRUNK_NOW] = shrunk_now
        partial[b, MEASURE_SUM] = measure_sum


@cuda.jit(device=True)
def _block_total(acc, t, scratch):
    """The sum over a 1-D block's threads of their ``acc`` (thread ``t``), by a tree in
    ``scratch``; every thread of the block must call it, and gets the total."""
    scratch[t] = acc
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half:
            scratch[t] += scratch[t + half]
        cuda.syncthreads()
        half //= 2
    total = scratch[0]
    cuda.syncthreads()  # (every thread has read it before the scratch is written again)
    return total


@cuda.jit(cache=True)
def dual_objective_partials(rec, w, regression, squared, p, offset, partial):
    """Each block's part of the dual objective (the form dual CD decreases) into
    partial[blockIdx.x, OBJECTIVE]: 1/2 w'w plus ``row_dual_terms`` over the rows (the SVM or,
    ``regression``, the SVR dual; ``squared``: the L2 loss; p: the SVR's tube half width).
    With a hot block (offset (l,), each row's margin on the block; empty without one) w holds
    the other weights and the form is the dual of the problem with the block fixed: each row
    adds alpha_i y_i offset_i (SVR: beta_i offset_i).

    rec (l, 4), w (n [+1],): the running state; partial (gridDim.x or more, N_FIGURES). A 1-D
    launch of a power-of-two number of threads, at most MAX_BLOCK_THREADS."""
    t = cuda.threadIdx.x
    scratch = cuda.shared.array(MAX_BLOCK_THREADS, float64)
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    for j in range(start, w.shape[0], stride):
        acc += 0.5 * w[j] * w[j]
    for i in range(start, rec.shape[0], stride):
        acc += row_dual_terms(rec[i, ALPHA], rec[i, Y], rec[i, BOUND_OR_DIAG], squared,
                              regression, p)  # fmt: skip
        if offset.shape[0] > 0:
            acc += rec[i, ALPHA] * (offset[i] if regression else rec[i, Y] * offset[i])
    total = _block_total(acc, t, scratch)
    if t == 0:
        partial[cuda.blockIdx.x, OBJECTIVE] = total


@cuda.jit(cache=True)
def reduce_partials(partial, n_epoch_blocks, out):
    """The epoch's figures from the blocks' (partial (G, N_FIGURES) -> out (N_FIGURES,)): max,
    min, sum, sum (and MEASURE_SUM's sum) over the epoch's first n_epoch_blocks rows, and the
    sum of OBJECTIVE over all G rows. One block of a power-of-two number of threads."""
    t = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    scratch = cuda.shared.array((REDUCE_THREADS, N_FIGURES), float64)
    pgmax = -math.inf
    pgmin = math.inf
    kept = 0.0
    shrunk_now = 0.0
    measure_sum = 0.0
    objective = 0.0
    for b in range(t, partial.shape[0], n_threads):
        if b < n_epoch_blocks:
            pgmax = max(pgmax, partial[b, PG_MAX])
            pgmin = min(pgmin, partial[b, PG_MIN])
            kept += partial[b, KEPT]
            shrunk_now += partial[b, SHRUNK_NOW]
            measure_sum += partial[b, MEASURE_SUM]
        objective += partial[b, OBJECTIVE]
    scratch[t, PG_MAX] = pgmax
    scratch[t, PG_MIN] = pgmin
    scratch[t, KEPT] = kept
    scratch[t, SHRUNK_NOW] = shrunk_now
    scratch[t, OBJECTIVE] = objective
    scratch[t, MEASURE_SUM] = measure_sum
    cuda.syncthreads()
    half = n_threads // 2
    while half > 0:
        if t < half:
            scratch[t, PG_MAX] = max(scratch[t, PG_MAX], scratch[t + half, PG_MAX])
            scratch[t, PG_MIN] = min(scratch[t, PG_MIN], scratch[t + half, PG_MIN])
            scratch[t, KEPT] += scratch[t + half, KEPT]
            scratch[t, SHRUNK_NOW] += scratch[t + half, SHRUNK_NOW]
            scratch[t, OBJECTIVE] += scratch[t + half, OBJECTIVE]
            scratch[t, MEASURE_SUM] += scratch[t + half, MEASURE_SUM]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        for f in range(N_FIGURES):
            out[f] = scratch[0, f]


@cuda.jit(cache=True)
def keep_state(rec, w, flags, alpha_kept, w_kept, flags_kept, restore):
    """Copy the solver's state to its kept copy (restore False: after an accepted epoch) or
    back from it (restore True: an epoch rejected). Only alpha of the records changes in an
    epoch: rec (l, 4), alpha_kept (l,), w and w_kept (n [+1],), flags and flags_kept (l,)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, rec.shape[0], stride):
        if restore:
            rec[i, ALPHA] = alpha_kept[i]
            flags[i] = flags_kept[i]
        else:
            alpha_kept[i] = rec[i, ALPHA]
            flags_kept[i] = flags[i]
    for j in range(start, w.shape[0], stride):
        if restore:
            w[j] = w_kept[j]
        else:
            w_kept[j] = w[j]


@cuda.jit(cache=True)
def clear_shrunk(flags):
    """Every shrunk row active again (the re-check of all rows before stopping)."""
    start = cuda.grid(1)
    for i in range(start, flags.shape[0], cuda.gridsize(1)):
        if flags[i] == SHRUNK:
            flags[i] = ACTIVE


# ------------------------------------------------------------------ the hot block's Newton step
# (``dcd_cuda._HotBlock``: the primal over the block's weights u, the other weights fixed, of
# the L2-loss SVM, 1/2 u'u + sum_i C_i max(0, 1 - y_i m_i)^2, or SVR, 1/2 u'u + sum_i C_i
# max(0, |m_i - y_i| - p)^2; its vectors of the block's length live on the host, each sweep
# of the rows is one of these launches.)


@cuda.jit(cache=True)
def rows_times(indptr, indices, data, v, scale, out):
    """out_i = scale_i x_i'v over CSR rows (scale empty: 1): X_B u, y * X_B s, or with the
    block's transposed rows X_B' t. Launch as ``dcd_epoch``: blockDim (threads a row, rows a
    block), any grid."""
    lane = cuda.threadIdx.x
    width = cuda.blockDim.x
    me = cuda.threadIdx.y * width + lane
    sums = cuda.shared.array(MAX_BLOCK_THREADS, float64)
    n_rows = out.shape[0]
    stride = cuda.gridDim.x * cuda.blockDim.y
    base = cuda.blockIdx.x * cuda.blockDim.y
    while base < n_rows:  # the same number of rounds for every thread of the block
        i = base + cuda.threadIdx.y
        acc = 0.0
        if i < n_rows:
            for k in range(indptr[i] + lane, indptr[i + 1], width):
                acc += v[indices[k]] * data[k]
        total = _row_slot_sum(acc, me, lane, width, sums)
        if lane == 0 and i < n_rows:
            out[i] = total * (scale[i] if scale.shape[0] > 0 else 1.0)
        cuda.syncthreads()
        base += stride


@cuda.jit(cache=True)
def block_slacks(indptr, indices, data, bias, bias_index, w, hot_base, block_weight, rec,
                 flags, regression, p, slack, weight, coef):  # fmt: skip
    """For the block's Newton step, each row's slack z_i = 1 - y_i w'x_i (the rows as
    ``dcd_epoch`` reads them: hot features numbered from hot_base, their weights and the
    bias's in block_weight), weight_i = 2 C_i where z_i > 0 (else 0: the generalised
    Hessian's rows) and coef_i = weight_i z_i y_i (minus the loss's gradient: X_B' coef).
    ``regression`` (the SVR, tube half width p): slack_i is the residual r_i = w'x_i - y_i,
    z_i = |r_i| - p, coef_i = -weight_i z_i sign(r_i). C_i is 1 / (2 D_ii) (SVR: 1 / (2
    lambda_i)) of the records; a row that never trains (C_i = 0) weighs 0."""
    lane = cuda.threadIdx.x
    width = cuda.blockDim.x
    me = cuda.threadIdx.y * width + lane
    sums = cuda.shared.array(MAX_BLOCK_THREADS, float64)
    n_rows = rec.shape[0]
    bias_slot = block_weight.shape[0] - 1
    stride = cuda.gridDim.x * cuda.blockDim.y
    base = cuda.blockIdx.x * cuda.blockDim.y
    while base < n_rows:
        i = base + cuda.threadIdx.y
        acc = 0.0
        if i < n_rows:
            for k in range(indptr[i] + lane, indptr[i + 1], width):
                j = indices[k]
                acc += (block_weight[j - hot_base] if j >= hot_base else w[j]) * data[k]
        total = _row_slot_sum(acc, me, lane, width, sums)
        if lane == 0 and i < n_rows:
            if bias >= 0.0:
                total += bias * block_weight[bias_slot]
            yi = rec[i, Y]
            residual = total - yi
            z = abs(residual) - p if regression else 1.0 - yi * total
            c2 = 0.0
            if z > 0.0 and flags[i] != FIXED:
                c2 = 1.0 / rec[i, BOUND_OR_DIAG]
            slack[i] = residual if regression else z
            weight[i] = c2
            if regression:
                coef[i] = -c2 * z if residual > 0.0 else c2 * z
            else:
                coef[i] = c2 * z * yi
        cuda.syncthreads()
        base += stride


@cuda.jit(cache=True)
def block_line_values(slack, slope, rec, flags, regression, p, trials, partial):
    """Each block's part of sum_i C_i max(0, z_i - t d_i)^2 for every trial step t of
    ``trials`` (T,) into partial[blockIdx.x, :T] (z: the slacks, d: y_i x_i's change of
    margin along the step, C_i = 1 / (2 D_ii); rows that never train left out); SVR
    (``regression``): of sum_i C_i max(0, |r_i + t d_i| - p)^2 (r: the residuals, d: x_i's
    change of margin). A 1-D launch of a power-of-two number of threads, at most
    MAX_BLOCK_THREADS."""
    t = cuda.threadIdx.x
    scratch = cuda.shared.array(MAX_BLOCK_THREADS, float64)
    for k in range(trials.shape[0]):
        acc = 0.0
        for i in range(cuda.grid(1), slack.shape[0], cuda.gridsize(1)):
            if regression:
                z = abs(slack[i] + trials[k] * slope[i]) - p
            else:
                z = slack[i] - trials[k] * slope[i]
            if z > 0.0 and flags[i] != FIXED:
                acc += 0.5 * z * z / rec[i, BOUND_OR_DIAG]
        total = _block_total(acc, t, scratch)
        if t == 0:
            partial[cuda.blockIdx.x, k] = total
