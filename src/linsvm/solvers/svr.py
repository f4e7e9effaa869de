"""Linear support vector regression: LIBLINEAR's -s 11 (primal), -s 12 and -s 13 (dual).

The primal, L2-regularised, with the epsilon-insensitive width ``p`` and per-row costs C_i::

    P(w) = 1/2 w'w + sum_i C_i xi(w'x_i - y_i)
    L2 loss (-s 11, -s 12):  xi(d) = max(0, |d| - p)^2
    L1 loss (-s 13):         xi(d) = max(0, |d| - p)

and its dual (Ho and Lin 2012), minimised, with Q_ij = x_i'x_j and w(beta) = sum_i beta_i x_i::

    f(beta) = 1/2 beta'(Q + diag(lambda)) beta - y'beta + p sum_i |beta_i|,
              -U_i <= beta_i <= U_i
    L1 loss: U_i = C_i, lambda_i = 0;   L2 loss: U_i = inf, lambda_i = 1/(2 C_i)

For any feasible beta and any w, -f(beta) <= P* <= P(w): the gap P(w) + f(beta) >= 0.

-s 11: LIBLINEAR 2.50's line-search Newton method (``l2r_l2_svr_fun`` of ``linear.cpp`` over
``newton.cpp``): ``newton.run_newton`` with the L2-loss SVR datafit (the generalised Hessian is
I + 2 X_I' diag(C_I) X_I over the rows I outside the tube, |w'x_i - y_i| > p). The stopping
rule is NEWTON's: ||g(w)|| <= eps ||g(0)|| (for regression LIBLINEAR passes -e as is, default
0.0001), line-search failure, tiny reduction, or 1000 iterations. An unregularised bias (-R)
is supported as in LIBLINEAR.

The dual point of a primal w: beta_i = -2 C_i r_i with r_i = sign(d_i) max(0, |d_i| - p),
d_i = w'x_i - y_i (the stationarity condition of P: w = sum_i beta_i x_i at the optimum). It
is feasible for the L2 loss (no bound), so -s 11 reports a true duality gap when the bias is
regularised. With -R the dual has the equality constraint sum_i beta_i = 0 (bias feature), which
beta(w) meets only at the optimum: then the gap is NaN and the gradient norm is the measure.

-s 12 / -s 13: ``solve_l2r_l1l2_svr`` (dual coordinate descent, Algorithm 4 of Ho and Lin). For
coordinate i, G = w'x_i - y_i + lambda_i beta_i, H = ||x_i||^2 + lambda_i; the one-variable
problem min_d 1/2 H d^2 + G d + p |beta_i + d| has the closed form: beta_i - (G + p)/H if that
is positive, beta_i - (G - p)/H if that is negative, else 0; then clipped to [-U_i, U_i]. Its
violation (the distance of 0 from the subdifferential, zero exactly at coordinate optimality)
drives LIBLINEAR's shrinking (against the previous outer iteration's largest violation) and its
stop: the 1-norm of the violations of an outer iteration <= eps times that of the first outer
iteration (default eps 0.1), then a re-check on all rows; at most 300 outer iterations (a warm
start keeps the cold start's reference: see ``solve_svr_dual``). At the cap the solver returns
MAX_ITER; training applies LIBLINEAR's -s 12 -> -s 11 fallback and the -s 13 advice.

Different from LIBLINEAR: the coordinate order is ``_dual``'s (``choose_order``: bucketed random
order on large data, a plain random permutation on small or neighbour-correlated data) with
the repo's own generator; LIBLINEAR's dual supports one C only (per-row C_i are supported here:
sample weights). The bias is the implicit last feature of value ``bias`` (when >= 0), as in
LIBLINEAR regularised in the dual solvers (-R is rejected there, as LIBLINEAR does).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import (
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    add_rows,
    svr_dual_point,
    svr_dual_value,
    svr_objectives_maintained,
    svr_primal_value,
)
from ..parallel import for_row_chunks
from ..sparse_rows import row_axpy, row_dot, row_sq_norm
from . import _dual
from ._base import Hook, Solution, Subproblem, check_eps, check_number
from ._dual import I_ACTIVE, I_CONVERGED, I_ITER, prefetch_ahead, reset_active, visiting_order
from ._dual_threads import thread_plan
from ._random import new_state
from .newton import LOSS_SVR_SQUARED, run_newton

DEFAULT_P = 0.1  # LIBLINEAR's -p

# Per-row record of the dual kernel (one cache line per visit, as in dcd.py).
_BETA, _H, _Y, _LAMBDA_OR_BOUND = 0, 1, 2, 3
# The float state carried between kernel calls: the previous outer iteration's largest
# violation (shrinking threshold), the stopping rule's reference (the first outer iteration's
# violation 1-norm), and the last outer iteration's largest violation and violation 1-norm.
_F_GMAX_OLD, _F_GNORM1_INIT, _F_GMAX_NEW, _F_GNORM1_NEW = 0, 1, 2, 3
# The integer state: _dual's (I_ACTIVE, I_ITER, I_CONVERGED), then whether the reference was
# given (a warm start's, measured on the cold start) rather than measured by this run.
_I_REF_GIVEN = 3


def check_p(p: Any) -> float:
    """The tube's half width -p as a float, checked to be a number >= 0."""
    return check_number(p, 0.0, "p must be a number, got {value!r}",
                        "p must be a finite number >= 0, got {number}")


def _check_targets(sub: Subproblem) -> tuple[np.ndarray, np.ndarray]:
    n_rows = sub.X.shape[0]
    y = np.ascontiguousarray(sub.y, dtype=np.float64)
    C = np.ascontiguousarray(sub.C, dtype=np.float64)
    if y.shape != (n_rows,) or C.shape != (n_rows,):
        raise InvalidInputError(f"y and C must have shape ({n_rows},)")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("regression targets must be finite")
    return y, C


def dual_problem(sub: Subproblem) -> tuple[float, np.ndarray, np.ndarray, float]:
    """(p, y, C, eps) of an SVR dual solve (-s 12, -s 13, on the CPU or the GPU), checked:
    a regularised bias (-R is the primal's only), p >= 0, finite targets, eps >= 0."""
    if not sub.regularize_bias:
        raise InvalidInputError("-R (unregularised bias) is supported by -s 11 only")
    p = check_p(sub.option("p", DEFAULT_P))
    y, C = _check_targets(sub)
    return p, y, C, check_eps(sub.eps)


# ----------------------------------------------------------------------------- -s 11


def solve_svr_primal(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 11: minimise 1/2 w'w + sum_i C_i max(0, |w'x_i - y_i| - p)^2 by Newton's method.

    sub.X: CSR (l, n); sub.y: (l,) real targets; sub.C: (l,) per-row cost (0 drops the row);
    option ``p``: the tube's half width (-p, default 0.1); sub.eps: relative gradient-norm
    tolerance (LIBLINEAR passes -e unscaled for regression; default 1e-4); sub.w0: initial w
    (init_sol; the -s 12 fallback starts from the dual's w); sub.regularize_bias=False: -R.

    Solution.alpha: the dual point beta(w) (None with -R, whose dual and gap are NaN);
    figures: f, grad_norm, grad_norm0, stop_ratio, n_cg_iter, history, n_sv. The hook sees
    what ``run_newton`` gives it (iteration 0 first, then every Newton iteration).
    """
    p = check_p(sub.option("p", DEFAULT_P))
    y, C = _check_targets(sub)
    X, bias, reg_bias = sub.X, float(sub.bias), bool(sub.regularize_bias)

    def bounds(w: np.ndarray, f: float):
        primal = svr_primal_value(X, bias, y, C, w, SVR_LOSS_L2, p, regularize_bias=reg_bias)
        if not reg_bias:
            return primal, math.nan, math.nan, None
        beta = svr_dual_point(X, bias, y, C, w, p)
        dual = svr_dual_value(X, bias, y, C, beta, SVR_LOSS_L2, p)
        return primal, dual, primal - dual, beta

    return run_newton(sub.but(y=y, C=C), hook, LOSS_SVR_SQUARED, 11, bounds, p)


# ----------------------------------------------------------------------------- -s 12/13 kernel


@njit(cache=True, nogil=True, inline="always")
def svr_coordinate(b, yi, dot, lambda_or_bound, h, squared, p, shrinking, gmax_old):
    """One coordinate of the SVR dual at beta_i = b, given dot = w'x_i (``dcd_svr_kernel``'s
    step; the GPU kernel compiles the same function).

    lambda_or_bound: lambda_i under the L2 loss (``squared``), U_i under the L1 loss; h:
    H_ii = ||x_i||^2 + lambda_i. Returns (shrunk, violation, new beta_i): shrunk when beta_i
    sits at 0 or a bound with a gradient beyond last outer iteration's largest violation
    ``gmax_old`` (LIBLINEAR's rule: left alone this iteration); the violation, the distance
    of 0 from the subdifferential in the feasible directions; and the exact minimiser of
    1/2 h d^2 + G d + p |b + d| clipped to [-U_i, U_i] (b itself for a step under 1e-12).
    """
    if squared:
        lam = lambda_or_bound
        u = np.inf
    else:
        lam = 0.0
        u = lambda_or_bound
    g = dot - yi + lam * b
    gp = g + p
    gn = g - p
    violation = 0.0
    if b == 0.0:
        if gp < 0.0:
            violation = -gp
        elif gn > 0.0:
            violation = gn
        elif shrinking and gp > gmax_old and gn < -gmax_old:
            return True, 0.0, b
    elif b >= u:
        if gp > 0.0:
            violation = gp
        elif shrinking and gp < -gmax_old:
            return True, 0.0, b
    elif b <= -u:
        if gn < 0.0:
            violation = -gn
        elif shrinking and gn > gmax_old:
            return True, 0.0, b
    elif b > 0.0:
        violation = abs(gp)
    else:
        violation = abs(gn)
    if h > 0.0:
        if gp < h * b:
            step = -gp / h
        elif gn > h * b:
            step = -gn / h
        else:
            step = -b
    else:  # an empty row, L1 loss, no bias: f linear in beta_i
        if gp < 0.0:
            step = u - b
        elif gn > 0.0:
            step = -u - b
        else:
            step = -b
    if abs(step) < 1.0e-12:
        return False, violation, b
    return False, violation, min(max(b + step, -u), u)


@njit(cache=True, nogil=True)
def dcd_svr_kernel(
    indptr, indices, data, bias, loss, p, rec, w, active, trainable_rows, fstate, istate, rng,
    eps, n_epochs, shrinking, bucket_size, buckets_per_group, use_prefetch, removed, order,
    bucket_order,
):  # fmt: skip
    """Run up to ``n_epochs`` outer iterations of the SVR dual CD; update the state in place.

    Shapes: rec: (l, 4) records (beta, H_ii = ||x_i||^2 + lambda_i, y_i, lambda_i (L2) or U_i
    (L1)); w: (n [+1],); active: (l,) holding the active rows in ascending order in its first
    istate[I_ACTIVE] entries; trainable_rows: the rows with C_i > 0, ascending; fstate: (4,),
    istate: (4,); rng: (1,) uint64. Work arrays, all zero / overwritten within an iteration:
    removed: (l,) uint8, order and bucket_order from ``order_buffers``. Returns when converged
    (istate[I_CONVERGED] = 1) or after n_epochs outer iterations.
    """
    l2 = loss == SVR_LOSS_L2
    for _ in range(n_epochs):
        n_active = istate[I_ACTIVE]
        visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)
        gmax_new, gnorm1_new = svr_pass(
            indptr, indices, data, bias, l2, p, rec, w, order, n_active, shrinking,
            fstate[_F_GMAX_OLD], use_prefetch, removed,
        )  # fmt: skip
        if svr_end_iteration(
            active, n_active, removed, trainable_rows, fstate, istate, gmax_new, gnorm1_new, eps
        ):
            return


@njit(cache=True, nogil=True)
def svr_pass(indptr, indices, data, bias, l2, p, rec, w, order, n_visits, shrinking, gmax_old,
             use_prefetch, removed):  # fmt: skip
    """One pass of the SVR dual CD over the rows ``order[:n_visits]``, in that order: each
    row's exact one-variable step (``svr_coordinate``) from the ``w`` of the steps before it.
    ``rec``'s beta updated in place; a row shrunk against ``gmax_old`` is left alone and
    marked in ``removed``. Returns (the largest violation, the violations' 1-norm) over the
    rows not shrunk."""
    rec_flat = rec.reshape(rec.size)  # a 1-D view for prefetch
    gmax_new = 0.0
    gnorm1_new = 0.0
    for s in range(n_visits):
        i = order[s]
        if use_prefetch:
            prefetch_ahead(order, s, n_visits, indptr, indices, data, rec_flat, 4)
        b = rec[i, _BETA]
        dot = row_dot(indptr, indices, data, bias, i, w)
        shrunk, violation, b_new = svr_coordinate(
            b, rec[i, _Y], dot, rec[i, _LAMBDA_OR_BOUND], rec[i, _H], l2, p, shrinking, gmax_old
        )  # fmt: skip
        if shrunk:
            removed[i] = 1
            continue
        gmax_new = max(gmax_new, violation)
        gnorm1_new += violation
        if b_new != b:
            rec[i, _BETA] = b_new
            row_axpy(indptr, indices, data, bias, i, b_new - b, w)
    return gmax_new, gnorm1_new


@njit(cache=True, nogil=True)
def svr_end_iteration(
    active, n_active, removed, trainable_rows, fstate, istate, gmax_new, gnorm1_new, eps
) -> bool:
    """The end of an outer iteration over ``active[:n_active]`` (the rows marked in
    ``removed`` shrunk): the shrunk rows dropped, the violations' largest ``gmax_new`` and
    1-norm ``gnorm1_new`` recorded, LIBLINEAR's stopping rule applied (gnorm1 <= eps times the
    first outer iteration's, then a re-check on every row). True once converged."""
    n_kept = _dual.drop_shrunk(active, n_active, removed)
    return svr_close_iteration(active, n_kept, trainable_rows, fstate, istate, gmax_new,
                               gnorm1_new, eps)  # fmt: skip


@njit(cache=True, nogil=True)
def svr_close_iteration(
    active, n_active, trainable_rows, fstate, istate, gmax_new, gnorm1_new, eps
) -> bool:
    """``svr_end_iteration`` once the shrunk rows are dropped (``n_active`` kept)."""
    if istate[I_ITER] == 0 and istate[_I_REF_GIVEN] == 0:
        fstate[_F_GNORM1_INIT] = gnorm1_new
    istate[I_ITER] += 1
    fstate[_F_GMAX_NEW] = gmax_new
    fstate[_F_GNORM1_NEW] = gnorm1_new
    if gnorm1_new <= eps * fstate[_F_GNORM1_INIT]:
        if n_active == trainable_rows.shape[0]:
            istate[I_ACTIVE] = n_active
            istate[I_CONVERGED] = 1
            return True
        # Converged on the active set: re-check every row before stopping.
        istate[I_ACTIVE] = reset_active(active, trainable_rows)
        fstate[_F_GMAX_OLD] = np.inf
        return False
    istate[I_ACTIVE] = n_active
    fstate[_F_GMAX_OLD] = gmax_new
    return False


@njit(cache=True, nogil=True)
def _fill_svr_records(indptr, data, bias, y, C, loss, rec, beta0, use_beta0, lo, hi) -> None:
    """The records of rows [lo, hi) (``prepare_svr``)."""
    for i in range(lo, hi):
        sq = row_sq_norm(indptr, data, bias, i)
        lam = 0.0
        col3 = 0.0
        b = 0.0
        if C[i] > 0.0:
            if loss == SVR_LOSS_L2:
                lam = 0.5 / C[i]
                col3 = lam
            else:
                col3 = C[i]
            if use_beta0:
                b = beta0[i]
                if loss != SVR_LOSS_L2:
                    b = min(max(b, -C[i]), C[i])
        rec[i, _BETA] = b
        rec[i, _H] = sq + lam
        rec[i, _Y] = y[i]
        rec[i, _LAMBDA_OR_BOUND] = col3


@njit(cache=True, nogil=True)
def prepare_svr(indptr, indices, data, bias, y, C, loss, rec, index_dtype, beta0, use_beta0, w):
    """Fill the (l, 4) records; return the rows with C_i > 0.

    Cold (``use_beta0`` False): beta = 0 and w (zeros) is left alone. Warm: beta_i = beta0_i
    projected into the feasible set (clipped to [-C_i, C_i] for the L1 loss, as is for the L2
    loss, 0 where C_i = 0) and w += beta_i x_i, so that w = w(beta) on return.
    """
    # (a typed 0: a literal one would compile it once more)
    _fill_svr_records(indptr, data, bias, y, C, loss, rec, beta0, use_beta0, np.int64(0),
                      y.shape[0])  # fmt: skip
    if use_beta0:
        add_rows(indptr, indices, data, bias, rec[:, _BETA], w)  # (w += beta_i x_i)
    return _dual.rows_with_cost(C, index_dtype)


def prepare_svr_records(indptr, indices, data, bias, y, C, loss, rec, index_dtype, beta0,
                        use_beta0, w, n_threads: int = 1) -> np.ndarray:  # fmt: skip
    """``prepare_svr``, its records filled on ``n_threads`` threads (rows side by side: the
    same records; a warm start's w on one thread, in row order: the same bits)."""
    if n_threads <= 1:
        return prepare_svr(indptr, indices, data, bias, y, C, loss, rec, index_dtype, beta0,
                           use_beta0, w)  # fmt: skip
    for_row_chunks(indptr, n_threads, lambda r0, r1: _fill_svr_records(
        indptr, data, bias, y, C, loss, rec, beta0, use_beta0, r0, r1))  # fmt: skip
    if use_beta0:
        add_rows(indptr, indices, data, bias, rec[:, _BETA], w)  # (w += beta_i x_i)
    return _dual.rows_with_cost(C, index_dtype)


# ----------------------------------------------------------------------------- -s 12/13


def solve_l2svr_dual(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 12: the L2-loss SVR dual by coordinate descent (beta unbounded). See
    ``solve_svr_dual``."""
    return solve_svr_dual(sub, hook, SVR_LOSS_L2)


def solve_l1svr_dual(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 13: the L1-loss SVR dual by coordinate descent, |beta_i| <= C_i. See
    ``solve_svr_dual``."""
    return solve_svr_dual(sub, hook, SVR_LOSS_L1)


def solve_svr_dual(sub: Subproblem, hook: Hook | None, loss: int) -> Solution:
    """The SVR dual (``loss``: SVR_LOSS_L2 for -s 12, SVR_LOSS_L1 for -s 13) by dual CD.

    sub.X: CSR (l, n); sub.y: (l,) real targets; sub.C: (l,) per-row cost (0 drops the row);
    sub.eps: -e, relative to the first outer iteration's violation 1-norm (default 0.1);
    sub.max_iter: outer iterations (300). Options: ``p`` (-p, default 0.1), ``shrinking``
    (True), ``bucket_size`` and ``buckets_per_group`` (None: ``choose_order``'s).

    sub.alpha0: (l,) a warm start, e.g. the alpha of an earlier Solution at another C or with
    other sample weights; it is projected into the current feasible set (-s 13: clipped to
    |beta_i| <= C_i; -s 12: unbounded; 0 where C_i = 0) and w starts as w(beta). The stopping
    rule then keeps the cold start's reference, not the 1-norm of the warm start's first outer
    iteration (already small: it would demand a far tighter tolerance than a cold start). That
    reference is measured during the first outer iteration while beta moves, so it is obtained
    by running the cold start's first outer iteration (from beta = 0, same seed) and discarding
    it: one extra pass over the data, not counted in ``n_iter``, after which the warm start
    stops exactly where a cold start's rule would. (The 1-norm evaluated at beta = 0 alone,
    sum_i max(0, |y_i| - p), can be several times larger.) If the reference is 0, beta = 0 is
    optimal and alpha0 is ignored.

    Solution.alpha: (l,) beta; figures: gnorm1 (the violation 1-norm of the last outer
    iteration), gnorm1_init (the stopping rule's reference), gmax (the largest violation of the
    last outer iteration), bucket_size, buckets_per_group, n_sv. The hook's Progress has
    ``measure`` gnorm1 / gnorm1_init (the rule stops at eps) and figures n_active, gnorm1,
    gnorm1_init, gmax; its ``alpha`` is a live strided view of the records.
    """
    if loss not in (SVR_LOSS_L1, SVR_LOSS_L2):
        raise ValueError(f"the SVR dual solver handles losses {SVR_LOSS_L1} and {SVR_LOSS_L2}")
    solver = 12 if loss == SVR_LOSS_L2 else 13
    p, y, C, eps = dual_problem(sub)
    X, bias = sub.X, float(sub.bias)
    n_rows = X.shape[0]
    shrinking = bool(sub.option("shrinking", True))
    beta0 = _dual.warm_start(sub, (n_rows,))
    # (the order ignores the targets' signs: y = 1)
    bucket_size, buckets_per_group = _dual.start_order(sub, np.ones(n_rows))

    w = np.zeros(sub.n_weights)
    rec = np.empty((n_rows, 4))
    index_dtype = _dual.row_index_dtype(n_rows)
    no_beta0 = np.zeros(0)
    plan = thread_plan(sub, X, False)
    # the threads of the set-up's and the objectives' sweeps of the rows
    sweep_threads = 1 if plan.simulated else plan.n_threads
    trainable = prepare_svr_records(
        X.indptr, X.indices, X.data, bias, y, C, loss, rec, index_dtype, no_beta0, False, w,
        sweep_threads,
    )  # fmt: skip
    fstate = np.array([np.inf, 0.0, 0.0, 0.0])
    istate = np.array([trainable.shape[0], 0, 0, 0], dtype=np.int64)

    def serial(run: _dual.ShrinkingDual, n_epochs: int) -> None:
        dcd_svr_kernel(X.indptr, X.indices, X.data, bias, loss, p, *run.kernel_arguments(n_epochs))

    # (threads as the SVM dual's: ``_dual_threads``)
    run = _dual.ShrinkingDual(
        sub, plan, loss, rec, w, trainable, fstate, istate, eps, shrinking,
        (bucket_size, buckets_per_group), serial, p=p,
    )  # fmt: skip

    if beta0 is not None:
        # The cold start's reference: its first outer iteration, run from beta = 0 with the
        # same seed (so the same value a cold start gets) and then discarded.
        run.advance(1)
        gnorm1_ref = float(fstate[_F_GNORM1_INIT])
        use_beta0 = gnorm1_ref > 0.0  # else beta = 0 is optimal: restart cold, ignore beta0
        w[:] = 0.0
        prepare_svr_records(
            X.indptr, X.indices, X.data, bias, y, C, loss, rec, index_dtype,
            beta0 if use_beta0 else no_beta0, use_beta0, w, sweep_threads,
        )  # fmt: skip
        fstate[:] = (np.inf, gnorm1_ref if use_beta0 else 0.0, 0.0, 0.0)
        istate[:] = (reset_active(run.active, trainable), 0, 0, int(use_beta0))
        run.rng[:] = new_state(sub.seed)

    def violations() -> dict[str, float]:
        return {
            "gnorm1": float(fstate[_F_GNORM1_NEW]),
            "gnorm1_init": float(fstate[_F_GNORM1_INIT]),
            "gmax": float(fstate[_F_GMAX_NEW]),
        }

    def report() -> tuple[float, dict]:
        v = violations()
        measure = v["gnorm1"] / v["gnorm1_init"] if v["gnorm1_init"] > 0 else 0.0
        return measure, run.live_figures(v)

    def values() -> tuple[float, float, float]:
        # w is sum_i beta_i x_i up to rounding (the serial kernel's running sum or the
        # threads': ``dcd._solve_svm_dual``'s values): one sweep, the threads sharing it
        return svr_objectives_maintained(X, bias, y, C, w, rec[:, _BETA], loss, p,
                                         sweep_threads)  # fmt: skip

    def figures() -> dict:
        n_sv = int(np.count_nonzero(rec[:, _BETA]))
        return {**violations(), "n_sv": n_sv, **run.threaded_figures()}

    return run.solve(sub, hook, solver, rec[:, _BETA], report, values, figures)


__all__ = [
    "solve_svr_primal",
    "solve_l2svr_dual",
    "solve_l1svr_dual",
    "solve_svr_dual",
    "dual_problem",
    "dcd_svr_kernel",
    "svr_coordinate",
    "prepare_svr",
    "DEFAULT_P",
    "check_p",
]
