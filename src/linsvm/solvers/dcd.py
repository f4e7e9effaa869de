"""Dual coordinate descent for the L1-loss and L2-loss linear SVM (Hsieh et al., ICML 2008).

The dual (docs/architecture.md, "The problems")::

    min_a  f(a) = 1/2 a'(Q + D)a - e'a   s.t.  0 <= a_i <= U_i
    L1 loss: U_i = C_i, D_ii = 0;   L2 loss: U_i = inf, D_ii = 1/(2 C_i)

is minimised one coordinate at a time. With w = sum_i y_i a_i x_i kept up to date, the partial
derivative is G = y_i w'x_i - 1 + D_ii a_i (cost nnz(x_i)) and the exact one-variable step is
a_i <- min(max(a_i - G/Qbar_ii, 0), U_i), then w += (a_i - a_i_old) y_i x_i.

As LIBLINEAR's ``solve_l2r_l1l2_svc``: projected-gradient shrinking against the previous outer
iteration's extremes, its stopping rule (max PG - min PG <= eps and both within eps of zero) on
the active set, then a re-check on every row before returning. Different from it: coordinates
are visited bucket by bucket (SySCD's "bucketing": docs/architecture.md, "The dual plumbing",
and ``_dual.py``), and the kernel keeps its whole state in arrays, so that it can run one outer
iteration per call for a hook, or stop and resume from a checkpoint, with the same result as one
uninterrupted call.

-s 3 (``solve_l1svc_dual``) and -s 1 (``solve_l2svc_dual``) are this one routine with the loss
as a parameter.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..features._rows import mapped_axpy, mapped_dot, mapped_sq_norm, row_scratch
from ..objective import (
    LOSS_HINGE,
    LOSS_SQUARED_HINGE,
    svm_objectives,
    svm_objectives_maintained,
)
from ..parallel import for_row_chunks
from ..partitioned import stopping_measure
from ..sparse_rows import row_axpy, row_dot, row_sq_norm
from . import _dual
from ._base import Hook, Solution, Subproblem
from ._dual import I_ACTIVE, I_CONVERGED, I_ITER, prefetch_ahead, reset_active, visiting_order
from ._dual_threads import thread_plan

# The float state carried between kernel calls: the previous outer iteration's projected
# gradient extremes (shrinking thresholds) and the last one's (the stopping rule's measure).
# The integer state is _dual's (I_ACTIVE, I_ITER, I_CONVERGED).
_F_PGMAX_OLD, _F_PGMIN_OLD, _F_PGMAX_NEW, _F_PGMIN_NEW = 0, 1, 2, 3

# Columns of the per-row record. One 32-byte record per row, so that visiting a row touches one
# cache line for its scalars (the visiting order is random: separate arrays would cost a miss
# each). The record holds U_i for the L1 loss and D_ii for the L2 loss: the other is 0 or inf.
_ALPHA, _QBAR, _Y, _BOUND_OR_DIAG = 0, 1, 2, 3
ALPHA_COLUMN = _ALPHA  # (for callers that read alpha back from records)


# A projected gradient this small counts as zero: the coordinate is left as it is.
PG_ZERO = 1.0e-12


@njit(cache=True, nogil=True, inline="always")
def svm_coordinate(
    a, yi, dot, bound_or_diag, qbar, squared_hinge, shrinking, pgmax_old, pgmin_old
):
    """One coordinate of the SVM dual at alpha_i = a, given dot = w'x_i.

    Returns (shrunk, PG, new alpha_i): shrunk when the coordinate sits at a bound with a
    gradient pointing further out than last iteration's extremes (LIBLINEAR's rule; it is then
    left alone this iteration), PG the projected gradient, and the exact one-variable step
    min(max(a - G/Qbar_ii, 0), U_i) when |PG| > PG_ZERO.
    """
    if squared_hinge:
        u = np.inf
        g = yi * dot - 1.0 + a * bound_or_diag
    else:
        u = bound_or_diag
        g = yi * dot - 1.0
    pg = 0.0
    if a == 0.0:
        if shrinking and g > pgmax_old:
            return True, 0.0, a
        if g < 0.0:
            pg = g
    elif a == u:
        if shrinking and g < pgmin_old:
            return True, 0.0, a
        if g > 0.0:
            pg = g
    else:
        pg = g
    a_new = a
    if abs(pg) > PG_ZERO:
        if qbar > 0.0:
            a_new = min(max(a - g / qbar, 0.0), u)
        else:  # an empty row without bias under the L1 loss: f is linear in a_i
            a_new = u if g < 0.0 else 0.0
    return False, pg, a_new


@njit(cache=True, nogil=True)
def end_iteration(
    active, n_active, removed, trainable_rows, fstate, istate, pgmax_new, pgmin_new, eps
) -> bool:
    """Close an outer iteration: drop the shrunk rows, apply the stopping rule (LIBLINEAR's:
    max PG - min PG <= eps and both within eps of zero, on the active set, then once more on
    every row), set the next iteration's shrinking thresholds. True once converged."""
    n_kept = _dual.drop_shrunk(active, n_active, removed)
    return close_iteration(active, n_kept, trainable_rows, fstate, istate, pgmax_new, pgmin_new,
                           eps)  # fmt: skip


@njit(cache=True, nogil=True)
def close_iteration(
    active, n_active, trainable_rows, fstate, istate, pgmax_new, pgmin_new, eps
) -> bool:
    """``end_iteration`` once the shrunk rows are dropped (``n_active`` kept): the stopping
    rule and the next thresholds. (Threads drop their shares of the rows themselves.)"""
    inf = np.inf
    n_all = trainable_rows.shape[0]
    istate[I_ITER] += 1
    fstate[_F_PGMAX_NEW] = pgmax_new
    fstate[_F_PGMIN_NEW] = pgmin_new
    if (
        pgmax_new - pgmin_new <= eps and abs(pgmax_new) <= eps and abs(pgmin_new) <= eps
    ) or n_active == 0:
        if n_active == n_all and n_active > 0 or n_all == 0:
            istate[I_ACTIVE] = n_active
            istate[I_CONVERGED] = 1
            return True
        # Converged on the active set: re-check every row before stopping.
        istate[I_ACTIVE] = reset_active(active, trainable_rows)
        fstate[_F_PGMAX_OLD] = inf
        fstate[_F_PGMIN_OLD] = -inf
        return False
    istate[I_ACTIVE] = n_active
    fstate[_F_PGMAX_OLD] = pgmax_new if pgmax_new > 0.0 else inf
    fstate[_F_PGMIN_OLD] = pgmin_new if pgmin_new < 0.0 else -inf
    return False


@njit(cache=True, nogil=True, inline="always")
def fill_record(rec, i, a, yi, c, sq, squared_hinge, sigma) -> None:
    """Row i's record for cost c = C_i > 0: alpha_i = a, Qbar_ii = sigma x_i'x_i + D_ii
    (``sq`` = x_i'x_i), y_i, and U_i = C_i (L1 loss) or D_ii = 1/(2 C_i) (L2 loss)."""
    diag = 0.5 / c if squared_hinge else 0.0
    rec[i, _ALPHA] = a
    rec[i, _QBAR] = sigma * sq + diag
    rec[i, _Y] = yi
    rec[i, _BOUND_OR_DIAG] = diag if squared_hinge else c


@njit(cache=True, nogil=True)
def svm_pass(indptr, indices, data, bias, squared_hinge, rec, w, order, n_visits, shrinking,
             pgmax_old, pgmin_old, use_prefetch, removed, fparams, sigma, offset=0.0):  # fmt: skip
    """One pass of DCD over the rows ``order[:n_visits]``, in that order: each row's exact
    one-variable step (``svm_coordinate``) from the ``w`` of the steps before it.

    ``rec``: (l, 4) per-row records (alpha, Qbar_ii, y_i, U_i or D_ii), alpha updated in
    place; a row shrunk against (``pgmax_old``, ``pgmin_old``) is left alone and marked in
    ``removed``. ``fparams``/``sigma``/``offset`` as ``dcd_svm_kernel``. Returns the projected
    gradients' (max, min) over the rows not shrunk (-inf, inf when none)."""
    rec_flat = rec.reshape(rec.size)  # a 1-D view for prefetch
    pgmax_new = -np.inf
    pgmin_new = np.inf
    for s in range(n_visits):
        i = order[s]
        if use_prefetch:
            prefetch_ahead(order, s, n_visits, indptr, indices, data, rec_flat, 4)
        a = rec[i, _ALPHA]
        yi = rec[i, _Y]
        if fparams is None:
            dot = row_dot(indptr, indices, data, bias, i, w)
        else:
            dot = mapped_dot(indptr, indices, data, bias, i, w, fparams)
        shrunk, pg, a_new = svm_coordinate(
            a, yi, dot + offset, rec[i, _BOUND_OR_DIAG], rec[i, _QBAR], squared_hinge, shrinking,
            pgmax_old, pgmin_old,
        )  # fmt: skip
        if shrunk:
            removed[i] = 1
            continue
        pgmax_new = max(pgmax_new, pg)
        pgmin_new = min(pgmin_new, pg)
        if abs(pg) > PG_ZERO:
            rec[i, _ALPHA] = a_new
            # (times sigma = 1.0 is exact: the plain solver's bits)
            step = (a_new - a) * yi * sigma
            if fparams is None:
                row_axpy(indptr, indices, data, bias, i, step, w)
            else:
                mapped_axpy(indptr, indices, data, bias, i, step, w, fparams)
    return pgmax_new, pgmin_new


@njit(cache=True, nogil=True)
def dcd_svm_kernel(
    indptr, indices, data, bias, loss, rec, w, active, trainable_rows, fstate, istate, rng, eps,
    n_epochs, shrinking, bucket_size, buckets_per_group, use_prefetch, removed, order,
    bucket_order, fparams, sigma=1.0, offset=0.0,
):  # fmt: skip
    """Run up to ``n_epochs`` outer iterations of DCD from the state given; update it in place.

    Shapes: rec: (l, 4) per-row records (alpha, Qbar_ii, y_i, U_i or D_ii); w: (n [+1],);
    active: (l,) holding the active rows in ascending order in its first istate[I_ACTIVE]
    entries; trainable_rows: the rows with C_i > 0, ascending; fstate: (4,), istate: (3,);
    rng: (1,) uint64. Work arrays, all zero / overwritten within an iteration: removed: (l,)
    uint8, order and bucket_order from ``order_buffers``. With ``fparams`` (not None) the
    rows are phi(x_i) of that feature map (``features._rows``), formed on the fly; None
    compiles the plain kernel, the mapped code pruned away. ``sigma``: CoCoA+'s sigma'
    (``_solve_svm_dual``): w is the local view, moved by sigma times each step, and the
    records' Qbar_ii already hold sigma Q_ii + D_ii (``_prepare``). ``offset``: added to every
    w'x_i, the margin of a bias weight the caller holds fixed (``_solve_svm_dual``). Returns
    when converged (istate[I_CONVERGED] = 1) or after n_epochs outer iterations.
    """
    squared_hinge = loss == LOSS_SQUARED_HINGE
    for _ in range(n_epochs):
        n_active = istate[I_ACTIVE]
        visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)
        pgmax_new, pgmin_new = svm_pass(
            indptr, indices, data, bias, squared_hinge, rec, w, order, n_active, shrinking,
            fstate[_F_PGMAX_OLD], fstate[_F_PGMIN_OLD], use_prefetch, removed, fparams, sigma,
            offset,
        )  # fmt: skip
        if end_iteration(
            active, n_active, removed, trainable_rows, fstate, istate, pgmax_new, pgmin_new, eps
        ):
            return


@njit(cache=True, nogil=True)
def _fill_records(indptr, indices, data, bias, y, C, loss, alpha0, rec, fparams, cols, vals,
                  sigma, lo, hi, norms) -> None:  # fmt: skip
    """The records of rows [lo, hi) (``_prepare``), alpha_i = alpha0_i within its bounds;
    ``norms``: the rows' squared norms computed already (``_dual.SharedRows``), or None."""
    for i in range(lo, hi):
        if norms is not None:
            sq = norms[i]
        elif fparams is None:
            sq = row_sq_norm(indptr, data, bias, i)
        else:
            sq = mapped_sq_norm(indptr, indices, data, bias, i, fparams, cols, vals)
        if C[i] > 0.0:
            if loss == LOSS_SQUARED_HINGE:
                a = max(alpha0[i], 0.0)
            else:
                a = min(max(alpha0[i], 0.0), C[i])
            fill_record(rec, i, a, y[i], C[i], sq, loss == LOSS_SQUARED_HINGE, sigma)
        else:  # not trained: alpha 0, no bound
            rec[i, _ALPHA] = 0.0
            rec[i, _QBAR] = sigma * sq
            rec[i, _Y] = y[i]
            rec[i, _BOUND_OR_DIAG] = 0.0


@njit(cache=True, nogil=True)
def _add_start(indptr, indices, data, bias, rec, w, fparams) -> None:
    """w += sum_i y_i alpha_i x_i over the records' alpha (a warm start), in row order."""
    for i in range(rec.shape[0]):
        a = rec[i, _ALPHA]
        if a != 0.0:
            if fparams is None:
                row_axpy(indptr, indices, data, bias, i, rec[i, _Y] * a, w)
            else:
                mapped_axpy(indptr, indices, data, bias, i, rec[i, _Y] * a, w, fparams)


@njit(cache=True, nogil=True)
def _prepare(
    indptr, indices, data, bias, y, C, loss, alpha0, add_to_w, w, rec, index_dtype, fparams,
    cols, vals, sigma=1.0, norms=None,
):  # fmt: skip
    """Fill the per-row records; with ``add_to_w``, w += sum_i y_i alpha0_i x_i (warm start);
    return the trainable rows. ``fparams`` not None: the rows are phi(x_i) (``cols``/``vals``:
    room for one mapped row). The records' Qbar_ii is sigma Q_ii + D_ii (CoCoA+'s scaled
    local problem; sigma = 1.0 gives Q_ii + D_ii exactly)."""
    # (a typed 0: a literal one would compile it once more)
    _fill_records(indptr, indices, data, bias, y, C, loss, alpha0, rec, fparams, cols, vals,
                  sigma, np.int64(0), y.shape[0], norms)  # fmt: skip
    if add_to_w:
        _add_start(indptr, indices, data, bias, rec, w, fparams)
    return _dual.rows_with_cost(C, index_dtype)


def prepare_records(
    indptr, indices, data, bias, y, C, loss, alpha0, add_to_w, w, rec, index_dtype, fparams,
    cols, vals, sigma=1.0, n_threads: int = 1, norms: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """``_prepare``, its records filled on ``n_threads`` threads (rows side by side: the same
    records; the warm start's w on one thread, in row order: the same bits). A feature map
    formed on the fly fills them on this thread (one row's scratch). ``norms``: the rows'
    squared norms computed already (the plain rows only), or None."""
    if n_threads <= 1 or fparams is not None:
        return _prepare(indptr, indices, data, bias, y, C, loss, alpha0, add_to_w, w, rec,
                        index_dtype, fparams, cols, vals, sigma, norms)  # fmt: skip
    for_row_chunks(indptr, n_threads, lambda r0, r1: _fill_records(
        indptr, indices, data, bias, y, C, loss, alpha0, rec, fparams, cols, vals, sigma, r0, r1,
        norms,
    ))  # fmt: skip
    if add_to_w:
        _add_start(indptr, indices, data, bias, rec, w, fparams)
    return _dual.rows_with_cost(C, index_dtype)


def solve_l1svc_dual(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 3: the L1-loss (hinge) SVM dual by DCD, 0 <= alpha_i <= C_i. See ``_solve_svm_dual``."""
    return _solve_svm_dual(sub, LOSS_HINGE, hook)


def solve_l2svc_dual(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 1: the L2-loss (squared hinge) SVM dual by DCD, alpha_i >= 0. See ``_solve_svm_dual``."""
    return _solve_svm_dual(sub, LOSS_SQUARED_HINGE, hook)


def _solve_svm_dual(sub: Subproblem, loss: int, hook: Hook | None = None) -> Solution:
    """Solve the L1- or L2-loss SVM dual (``loss``: LOSS_HINGE or LOSS_SQUARED_HINGE) by DCD.

    sub.X: CSR (l, n), any float dtype, int32/int64 indices; sub.y: (l,) of +1/-1; sub.C: (l,)
    per-row cost (0 drops the row); sub.eps: the stopping tolerance on the projected gradient;
    sub.alpha0: (l,) a warm start, projected into the bounds. Options: ``shrinking`` (True),
    ``bucket_size`` and ``buckets_per_group`` (None: ``choose_order``'s).

    A partition of a larger problem (blocks of data larger than memory, workers): with
    ``sub.w0`` given too, w starts at w0 instead of sum_i y_i alpha0_i x_i over these rows.
    The caller vouches that w0 = sum_j y_j alpha_j x_j over ALL rows of the larger problem,
    these rows' feasible alpha0 included; the solver then minimises the larger problem's dual
    over these rows' alpha only, and the returned w is the larger problem's (its change is
    the partition's delta w). Primal, dual and gap then score these rows only against that w.

    CoCoA+'s local sub-problem (Ma et al., ICML 2015; ``linsvm.distributed``): option
    ``sigma`` (sigma' >= 1, default 1.0, the plain solver bit for bit) with a partition's w0
    minimises over these rows' alpha, with dw = sum_i y_i (alpha_i - alpha0_i) x_i,

        w0'dw + sigma/2 ||dw||^2 + sum_i [D_ii/2 alpha_i^2 - alpha_i]   within the bounds,

    so a step on row i reads the local view u = w0 + sigma dw: G = y_i u'x_i - 1 + D_ii alpha_i,
    second derivative sigma Q_ii + D_ii, then u += sigma (alpha_i - alpha_i_old) y_i x_i. The
    returned w is u, not the larger problem's w: the caller forms dw from the alphas (exact,
    no cancellation) and passes ``objectives=False`` (the values at u mean nothing).

    Option ``margin_offset`` c (default 0.0), for rows without a bias feature (sub.bias < 0):
    every step reads y_i (u'x_i + c), the margin of a bias weight the caller holds fixed (its
    value times the bias feature's). The solve then minimises the dual of the primal with
    that bias weight fixed, whose linear term is sum_i (1 - y_i c) alpha_i (CoCoA+ with the
    bias held by the client, ``linsvm.distributed``); one thread.

    Solution.alpha: (l,) the dual variables; figures: ``pg_max``, ``pg_min`` (the projected
    gradient's extremes in the last outer iteration), ``bucket_size``, ``buckets_per_group``
    (the order used). The hook's Progress has ``measure`` the stopping rule's quantity,
    max(pg_max - pg_min, |pg_max|, |pg_min|), and figures ``n_active``, ``pg_max``, ``pg_min``;
    its ``alpha`` is a live strided view of the records.
    """
    if loss not in (LOSS_HINGE, LOSS_SQUARED_HINGE):
        raise ValueError(f"DCD-SVM handles the hinge and squared hinge losses, not {loss}")
    solver = 3 if loss == LOSS_HINGE else 1
    X, bias = sub.X, float(sub.bias)
    y, C, eps, sigma = _dual.classifier_problem(sub)
    shrinking = bool(sub.option("shrinking", True))
    n_rows = X.shape[0]
    bucket_size, buckets_per_group = _dual.start_order(sub, y)
    alpha0, _, w, partition = _dual.classifier_start(sub)
    rec = np.empty((n_rows, 4))
    index_dtype = _dual.row_index_dtype(n_rows)
    fmap = sub.feature_map
    fparams = None if fmap is None else fmap.params  # None: the plain kernels
    cols, vals = row_scratch(X.indptr, fparams)
    offset = _dual.margin_offset(sub)
    plan = thread_plan(sub, X, fparams is not None or sigma != 1.0 or offset != 0.0)
    # the threads of the set-up's and the objectives' sweeps of the rows
    sweep_threads = 1 if plan.simulated else plan.n_threads
    norms = _dual.shared_sq_norms(sub, X, bias) if fparams is None else None
    trainable = prepare_records(
        X.indptr, X.indices, X.data, bias, y, C, loss, alpha0, not partition, w, rec, index_dtype,
        fparams, cols, vals, sigma, sweep_threads, norms,
    )  # fmt: skip
    fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
    istate = np.array([trainable.shape[0], 0, 0], dtype=np.int64)

    def serial(run: _dual.ShrinkingDual, n_epochs: int) -> None:
        dcd_svm_kernel(
            X.indptr, X.indices, X.data, bias, loss, *run.kernel_arguments(n_epochs), fparams,
            sigma, offset,
        )  # fmt: skip

    run = _dual.ShrinkingDual(
        sub, plan, loss, rec, w, trainable, fstate, istate, eps, shrinking,
        (bucket_size, buckets_per_group), serial,
    )  # fmt: skip

    def pg_extremes() -> dict[str, float]:
        return {"pg_max": float(fstate[_F_PGMAX_NEW]), "pg_min": float(fstate[_F_PGMIN_NEW])}

    def report() -> tuple[float, dict]:
        pg = pg_extremes()
        return stopping_measure(pg["pg_max"], pg["pg_min"]), run.live_figures(pg)

    def values() -> tuple[float, float, float]:
        if not partition and fmap is None:
            # w is these rows' w(alpha), up to rounding: the serial kernel's running sum, or
            # the threads' (each scheme's w holds every step's change; the shared w's is
            # recomputed from alpha at the end). So the dual needs no sweep of its own, and
            # the threads share the margins' sweep. (alpha read in the records: a copy of
            # 3M rows' took 50 ms)
            return svm_objectives_maintained(X, bias, y, C, w, rec[:, _ALPHA], loss,
                                             sweep_threads)  # fmt: skip
        alpha = np.ascontiguousarray(rec[:, _ALPHA])
        return svm_objectives(X, bias, y, C, w, alpha, loss, feature_map=fmap)

    def figures() -> dict:
        return {**pg_extremes(), **run.threaded_figures()}

    return run.solve(sub, hook, solver, rec[:, _ALPHA], report, values, figures)


__all__ = [
    "solve_l1svc_dual",
    "solve_l2svc_dual",
    "dcd_svm_kernel",
]
