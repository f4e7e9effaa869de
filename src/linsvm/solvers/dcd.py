"""Dual coordinate descent for the L1-loss and L2-loss linear SVM (Hsieh et al., ICML 2008).

The dual (DESIGN.md section 2)::

    min_a  f(a) = 1/2 a'(Q + D)a - e'a   s.t.  0 <= a_i <= U_i
    L1 loss: U_i = C_i, D_ii = 0;   L2 loss: U_i = inf, D_ii = 1/(2 C_i)

is minimised one coordinate at a time. With w = sum_i y_i a_i x_i kept up to date, the partial
derivative is G = y_i w'x_i - 1 + D_ii a_i (cost nnz(x_i)) and the exact one-variable step is
a_i <- min(max(a_i - G/Qbar_ii, 0), U_i), then w += (a_i - a_i_old) y_i x_i.

As LIBLINEAR's ``solve_l2r_l1l2_svc``: projected-gradient shrinking against the previous outer
iteration's extremes, its stopping rule (max PG - min PG <= eps and both within eps of zero) on
the active set, then a re-check on every row before returning. Different from it: coordinates
are visited bucket by bucket (SySCD's "bucketing", DESIGN.md section 3). The active rows are
kept in ascending order and cut into buckets of ``bucket_size`` neighbours; each outer iteration
shuffles the buckets' order and the rows inside each bucket. Random enough to converge like a
full permutation, but it streams through the CSR arrays instead of jumping row by row.
``bucket_size=1`` is a plain random permutation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..objective import LOSS_HINGE, LOSS_SQUARED_HINGE
from ..sparse_rows import row_axpy, row_dot, row_sq_norm
from ._dual import (
    cache_resident,
    choose_order,
    prefetch_ahead,
    reset_active,
    rows_with_cost,
    visiting_order,
)
from ._random import new_state

# Layout of the small state arrays carried between kernel calls (so that a Python loop can run
# the kernel one outer iteration at a time for progress reports without changing the result).
_F_PGMAX_OLD, _F_PGMIN_OLD, _F_PGMAX_NEW, _F_PGMIN_NEW = 0, 1, 2, 3
_I_ACTIVE, _I_ITER, _I_CONVERGED = 0, 1, 2

# Columns of the per-row record. One 32-byte record per row, so that visiting a row touches one
# cache line for its scalars (the visiting order is random: separate arrays would cost a miss
# each). The record holds U_i for the L1 loss and D_ii for the L2 loss: the other is 0 or inf.
_ALPHA, _QBAR, _Y, _BOUND_OR_DIAG = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def dcd_svm_kernel(
    indptr,
    indices,
    data,
    bias,
    loss,
    rec,
    w,
    active,
    trainable_rows,
    fstate,
    istate,
    rng,
    eps,
    n_epochs,
    shrinking,
    bucket_size,
    buckets_per_group,
    use_prefetch,
):
    """Run up to ``n_epochs`` outer iterations of DCD from the state given; update it in place.

    Shapes: rec: (l, 4) per-row records (alpha, Qbar_ii, y_i, U_i or D_ii); w: (n [+1],);
    active: (l,) int64 holding the active rows in ascending order in its first
    istate[_I_ACTIVE] entries; trainable_rows: the rows with C_i > 0, ascending. Returns when
    converged (istate[_I_CONVERGED] = 1) or after n_epochs outer iterations.
    """
    inf = np.inf
    squared_hinge = loss == LOSS_SQUARED_HINGE
    rec_flat = rec.reshape(rec.size)  # a 1-D view for prefetch
    n_all = trainable_rows.shape[0]
    removed = np.zeros(rec.shape[0], dtype=np.uint8)
    bucket_order = np.empty(max(1, (n_all + bucket_size - 1) // bucket_size), dtype=active.dtype)
    order = np.empty(max(n_all, 1), dtype=active.dtype)

    for _ in range(n_epochs):
        n_active = istate[_I_ACTIVE]
        pgmax_old = fstate[_F_PGMAX_OLD]
        pgmin_old = fstate[_F_PGMIN_OLD]
        pgmax_new = -inf
        pgmin_new = inf
        visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)

        for s in range(n_active):
            i = order[s]
            if use_prefetch:
                prefetch_ahead(order, s, n_active, indptr, indices, data, rec_flat, 4)
            a = rec[i, _ALPHA]
            yi = rec[i, _Y]
            if squared_hinge:
                u = inf
                g = (
                    yi * row_dot(indptr, indices, data, bias, i, w)
                    - 1.0
                    + a * rec[i, _BOUND_OR_DIAG]
                )
            else:
                u = rec[i, _BOUND_OR_DIAG]
                g = yi * row_dot(indptr, indices, data, bias, i, w) - 1.0

            # Projected gradient; shrink coordinates stuck at a bound whose gradient points
            # further out than last iteration's extremes (LIBLINEAR's rule).
            pg = 0.0
            if a == 0.0:
                if shrinking and g > pgmax_old:
                    removed[i] = 1
                    continue
                if g < 0.0:
                    pg = g
            elif a == u:
                if shrinking and g < pgmin_old:
                    removed[i] = 1
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            pgmax_new = max(pgmax_new, pg)
            pgmin_new = min(pgmin_new, pg)

            if abs(pg) > 1.0e-12:
                qbar = rec[i, _QBAR]
                if qbar > 0.0:
                    a_new = min(max(a - g / qbar, 0.0), u)
                else:  # an empty row without bias under the L1 loss: f is linear in a_i
                    a_new = u if g < 0.0 else 0.0
                rec[i, _ALPHA] = a_new
                row_axpy(indptr, indices, data, bias, i, (a_new - a) * yi, w)

        # Drop the shrunk rows, keeping the active set ascending (buckets stay neighbours).
        kept = 0
        for s in range(n_active):
            i = active[s]
            if removed[i]:
                removed[i] = 0
            else:
                active[kept] = i
                kept += 1
        n_active = kept

        istate[_I_ITER] += 1
        fstate[_F_PGMAX_NEW] = pgmax_new
        fstate[_F_PGMIN_NEW] = pgmin_new
        if (
            pgmax_new - pgmin_new <= eps and abs(pgmax_new) <= eps and abs(pgmin_new) <= eps
        ) or n_active == 0:
            if n_active == n_all and n_active > 0 or n_all == 0:
                istate[_I_ACTIVE] = n_active
                istate[_I_CONVERGED] = 1
                return
            # Converged on the active set: re-check every row before stopping.
            istate[_I_ACTIVE] = reset_active(active, trainable_rows)
            fstate[_F_PGMAX_OLD] = inf
            fstate[_F_PGMIN_OLD] = -inf
            continue
        istate[_I_ACTIVE] = n_active
        fstate[_F_PGMAX_OLD] = pgmax_new if pgmax_new > 0.0 else inf
        fstate[_F_PGMIN_OLD] = pgmin_new if pgmin_new < 0.0 else -inf


@njit(cache=True, nogil=True)
def _prepare(indptr, indices, data, bias, y, C, loss, alpha0, w, rec, row_index_dtype):
    """Fill the per-row records; w from alpha0 (warm start); return the trainable rows."""
    for i in range(y.shape[0]):
        sq = row_sq_norm(indptr, data, bias, i)
        a = 0.0
        bound_or_diag = 0.0
        diag = 0.0
        if C[i] > 0.0:
            if loss == LOSS_SQUARED_HINGE:
                diag = 0.5 / C[i]
                bound_or_diag = diag
                a = max(alpha0[i], 0.0)
            else:
                bound_or_diag = C[i]
                a = min(max(alpha0[i], 0.0), C[i])
        rec[i, _ALPHA] = a
        rec[i, _QBAR] = sq + diag
        rec[i, _Y] = y[i]
        rec[i, _BOUND_OR_DIAG] = bound_or_diag
        if a != 0.0:
            row_axpy(indptr, indices, data, bias, i, y[i] * a, w)
    return rows_with_cost(C, row_index_dtype)


@dataclass
class DualSolution:
    """What a dual solver returns for one binary sub-problem."""

    w: np.ndarray  # (n [+1],) float64
    alpha: np.ndarray  # (l,) float64
    n_iter: int
    converged: bool
    pg_max: float  # extremes of the projected gradient in the last outer iteration
    pg_min: float
    bucket_size: int  # the coordinate order used
    buckets_per_group: int


def solve_svm_dual(
    X,
    y: np.ndarray,
    C: np.ndarray,
    loss: int,
    bias: float,
    eps: float,
    max_iter: int,
    *,
    shrinking: bool = True,
    bucket_size: int | None = None,
    buckets_per_group: int | None = None,
    seed: int = 1,
    alpha0: np.ndarray | None = None,
    on_iteration=None,
) -> DualSolution:
    """Solve the L1-/L2-loss SVM dual by DCD.

    X: CSR (l, n), any float dtype, int32/int64 indices; y: (l,) float64 of +1/-1;
    C: (l,) float64 per-row cost (class weight x sample weight x C; 0 drops the row);
    loss: LOSS_HINGE (L1) or LOSS_SQUARED_HINGE (L2). ``on_iteration(iteration, n_active,
    pg_max, pg_min, w, alpha)`` is called after each outer iteration when given.
    """
    if loss not in (LOSS_HINGE, LOSS_SQUARED_HINGE):
        raise ValueError(f"DCD-SVM handles the hinge and squared hinge losses, not {loss}")
    bucket_size, buckets_per_group = choose_order(X, y, bucket_size, buckets_per_group, seed)
    n_rows = X.shape[0]
    n_weights = X.shape[1] + (1 if bias >= 0 else 0)
    w = np.zeros(n_weights)
    alpha0 = np.zeros(n_rows) if alpha0 is None else np.asarray(alpha0, dtype=np.float64)
    rec = np.empty((n_rows, 4))
    # Row numbers in 4 bytes where they fit: three arrays of them live through the solve.
    row_index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    trainable = _prepare(
        X.indptr, X.indices, X.data, float(bias), y, C, loss, alpha0, w, rec, row_index_dtype
    )
    active = np.empty(max(n_rows, 1), dtype=row_index_dtype)
    fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
    istate = np.array([reset_active(active, trainable), 0, 0], dtype=np.int64)
    rng = new_state(seed)
    use_prefetch = not cache_resident(X, rec.itemsize * rec.shape[1])

    def run(n_epochs: int) -> None:
        dcd_svm_kernel(
            X.indptr,
            X.indices,
            X.data,
            float(bias),
            loss,
            rec,
            w,
            active,
            trainable,
            fstate,
            istate,
            rng,
            float(eps),
            n_epochs,
            bool(shrinking),
            int(bucket_size),
            int(buckets_per_group),
            use_prefetch,
        )

    if on_iteration is None:
        run(max_iter)
    else:
        while istate[_I_ITER] < max_iter and not istate[_I_CONVERGED]:
            run(1)
            on_iteration(
                int(istate[_I_ITER]),
                int(istate[_I_ACTIVE]),
                float(fstate[_F_PGMAX_NEW]),
                float(fstate[_F_PGMIN_NEW]),
                w,
                np.ascontiguousarray(rec[:, _ALPHA]),
            )
    alpha = np.ascontiguousarray(rec[:, _ALPHA])
    return DualSolution(
        w=w,
        alpha=alpha,
        n_iter=int(istate[_I_ITER]),
        converged=bool(istate[_I_CONVERGED]),
        pg_max=float(fstate[_F_PGMAX_NEW]),
        pg_min=float(fstate[_F_PGMIN_NEW]),
        bucket_size=bucket_size,
        buckets_per_group=buckets_per_group,
    )


__all__ = [
    "DualSolution",
    "solve_svm_dual",
    "LOSS_HINGE",
    "LOSS_SQUARED_HINGE",
]
