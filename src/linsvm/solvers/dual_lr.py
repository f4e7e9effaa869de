"""Dual coordinate descent for L2-regularised logistic regression (-s 7; Yu, Huang, Lin 2011).

The primal P(w) = 1/2 w'w + sum_i C_i log(1 + exp(-y_i w'x_i)) has the dual (minimised)::

    f(a) = 1/2 a'Qa + sum_i [a_i log a_i + (C_i - a_i) log(C_i - a_i) - C_i log C_i],
    0 < a_i < C_i,  Q_ij = y_i y_j x_i'x_j,  w(a) = sum_i y_i a_i x_i,

and -f(a) <= P* <= P(w) for every feasible a (the constant -C_i log C_i, which LIBLINEAR also
adds when it reports the objective, makes min f = -P*). Written as
a log(a/C) + (C-a) log((C-a)/C), every entropy term is <= 0 and 0 log 0 = 0 at the bounds.

As LIBLINEAR's ``solve_l2r_lr_dual`` (linear.cpp, 2.50):
- each row keeps the pair (a_i, C_i - a_i). For row i the sub-problem is written in whichever
  of the two is at most C_i/2 at the sub-problem's minimum (chosen by the sign of
  1/2 Q_ii ((C_i - a_i) - a_i) + y_i w'x_i); the smaller one is updated directly and the other
  set to C_i minus it, so the variable near its bound keeps full relative accuracy;
- the one-variable problem g(z) = z log z + (C-z) log(C-z) + 1/2 Q_ii (z - z_old)^2
  + sign y_i w'x_i (z - z_old) is solved by a modified Newton method: start from z_old, or from
  z_old/10 when z_old > C/2; a Newton step that would leave (0, C) through 0 is replaced by
  z <- eta z (eta = 0.1); at most ``MAX_INNER_ITER`` + 1 = 101 steps; stop when
  |g'(z)| < innereps;
- innereps starts at 1e-2 and is divided by 10 (down to min(1e-8, eps); 1e-8 for eps = 0,
  which would otherwise drive it to 0 and every inner loop to its cap) after every outer
  iteration whose Newton steps numbered at most l/10 (integer division);
- the outer loop stops when max_i |g'_i(start)| < eps over an outer iteration, or after
  ``max_iter`` (LIBLINEAR: 300) outer iterations; no shrinking. The rule is absolute (no
  reference from the first iteration), so a warm start stops at a cold start's tolerance;
- the initial point a_i = min(0.001 C_i, 1e-8).
Different from it: the coordinate order is the one of dcd.py (buckets of neighbouring rows,
or a plain random permutation, chosen by ``_dual.choose_order``; seeded, reproducible); rows
with C_i = 0 are left out (a_i = 0); the kernel keeps its whole state in arrays, so that it can
run one outer iteration per call for a hook, or stop and resume from a checkpoint, with the
same result as one uninterrupted call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..objective import lr_objectives
from ..sparse_rows import row_axpy, row_dot, row_sq_norm
from . import _dual
from ._base import Hook, Solution, Subproblem, check_number
from ._dual import I_ACTIVE, I_CONVERGED, I_ITER, prefetch_ahead, visiting_order
from ._random import new_state

# LIBLINEAR 2.50 solve_l2r_lr_dual constants.
MAX_INNER_ITER = 100  # inner Newton steps: the loop runs while inner_iter <= 100
INNER_EPS_START = 1e-2  # innereps
INNER_EPS_FLOOR = 1e-8  # innereps_min = min(1e-8, eps)
ETA = 0.1  # "xi" in the paper: z <- eta z when a Newton step leaves (0, C) through 0
INIT_FRACTION = 1e-3  # a_i = min(0.001 C_i, 1e-8) initially
INIT_CAP = 1e-8

# Per-row record: one 40-byte record per row (the visiting order is random within buckets).
_A, _CA, _QII, _Y, _C = 0, 1, 2, 3, 4
# The float state carried between kernel calls: the inner tolerance of the next outer
# iteration, and the last one's stopping measure and inner tolerance. The integer state is
# _dual's (I_ACTIVE: every row with C_i > 0, there is no shrinking; I_ITER; I_CONVERGED),
# then the last outer iteration's Newton steps.
_F_INNEREPS, _F_GMAX, _F_INNEREPS_USED = 0, 1, 2
_I_NEWTON = 3


@njit(cache=True, nogil=True)
def lr_dual_kernel(
    indptr,
    indices,
    data,
    bias,
    rec,
    w,
    rows,
    fstate,
    istate,
    rng,
    eps,
    inner_eps_min,
    n_epochs,
    bucket_size,
    buckets_per_group,
    use_prefetch,
    order,
    bucket_order,
    sigma=1.0,
    offset=0.0,
):
    """Run up to ``n_epochs`` outer iterations from the state given; update it in place.

    rec: (l, 5) records (a_i, C_i - a_i, Q_ii, y_i, C_i); w: (n [+1],); rows: the rows with
    C_i > 0, ascending; fstate: (3,), istate: (4,), rng: (1,) uint64; order and bucket_order:
    work arrays from ``order_buffers``. ``sigma``: CoCoA+'s sigma' (``solve_lr_dual``): w is
    the local view, moved by sigma times each step; the records' Q_ii already hold sigma Q_ii.
    ``offset``: added to every w'x_i, the margin of a bias weight the caller holds fixed.
    Returns when converged (istate[I_CONVERGED] = 1) or after n_epochs.
    """
    n_rows = rows.shape[0]
    rec_flat = rec.reshape(rec.size)
    ncol = rec.shape[1]

    for _ in range(n_epochs):
        if n_rows == 0:
            istate[I_CONVERGED] = 1
            fstate[_F_GMAX] = 0.0
            return
        innereps = fstate[_F_INNEREPS]
        visiting_order(rows, n_rows, order, bucket_order, bucket_size, buckets_per_group, rng)
        newton_iter = 0
        gmax = 0.0
        for s in range(n_rows):
            i = order[s]
            if use_prefetch:
                prefetch_ahead(order, s, n_rows, indptr, indices, data, rec_flat, ncol)
            yi = rec[i, _Y]
            c = rec[i, _C]
            qa = rec[i, _QII]
            qb = yi * (row_dot(indptr, indices, data, bias, i, w) + offset)

            # Which of the pair to optimise: the one whose sub-problem minimum is <= C/2.
            if 0.5 * qa * (rec[i, _CA] - rec[i, _A]) + qb < 0.0:
                k1, k2, sign = _CA, _A, -1.0
            else:
                k1, k2, sign = _A, _CA, 1.0
            z_old = rec[i, k1]
            z = z_old
            if c - z < 0.5 * c:
                z = 0.1 * z
            gp = qa * (z - z_old) + sign * qb + np.log(z / (c - z))
            gmax = max(gmax, abs(gp))

            inner = 0
            while inner <= MAX_INNER_ITER:
                if abs(gp) < innereps:
                    break
                gpp = qa + c / (c - z) / z
                z_try = z - gp / gpp
                if z_try <= 0.0:
                    z *= ETA
                else:  # the function's barrier keeps Newton's step below C
                    z = z_try
                gp = qa * (z - z_old) + sign * qb + np.log(z / (c - z))
                newton_iter += 1
                inner += 1

            if inner > 0:
                rec[i, k1] = z
                rec[i, k2] = c - z
                # (times sigma = 1.0 is exact: the plain solver's bits)
                row_axpy(indptr, indices, data, bias, i, sign * (z - z_old) * yi * sigma, w)

        istate[I_ITER] += 1
        istate[_I_NEWTON] = newton_iter
        fstate[_F_GMAX] = gmax
        fstate[_F_INNEREPS_USED] = innereps
        if gmax < eps:
            istate[I_CONVERGED] = 1
            return
        if newton_iter <= n_rows // 10:
            fstate[_F_INNEREPS] = max(inner_eps_min, 0.1 * innereps)


@njit(cache=True, nogil=True)
def _prepare(
    indptr, indices, data, bias, y, C, alpha0, use_alpha0, add_to_w, w, rec, index_dtype,
    sigma=1.0, norms=None,
):  # fmt: skip
    """Fill the per-row records; with ``add_to_w``, w += w(alpha) over these rows; return the
    rows with C_i > 0. The records' Q_ii is sigma Q_ii (CoCoA+'s scaled local problem; sigma =
    1.0 gives Q_ii exactly); ``norms``: the rows' squared norms computed already, or None."""
    for i in range(y.shape[0]):
        sq = row_sq_norm(indptr, data, bias, i) if norms is None else norms[i]
        c = C[i]
        a = 0.0
        ca = 0.0
        if c > 0.0:
            lo = min(INIT_FRACTION * c, INIT_CAP)
            a = lo
            ca = c - lo
            if use_alpha0:
                a0 = alpha0[i]
                if a0 >= c:
                    a, ca = c - lo, lo
                elif a0 > 0.0:
                    a, ca = a0, c - a0
                    if ca <= 0.0:
                        a, ca = c - lo, lo
        rec[i, _A] = a
        rec[i, _CA] = ca
        rec[i, _QII] = sigma * sq
        rec[i, _Y] = y[i]
        rec[i, _C] = c
        if add_to_w and a != 0.0:
            row_axpy(indptr, indices, data, bias, i, y[i] * a, w)
    return _dual.rows_with_cost(C, index_dtype)


def solve_lr_dual(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 7: the L2-regularised LR dual by coordinate descent (LIBLINEAR's solve_l2r_lr_dual).

    sub.X: CSR (l, n), any float dtype; sub.y: (l,) of +1/-1; sub.C: (l,) per-row cost (0 drops
    the row); sub.eps: the tolerance of the absolute rule max_i |g'_i| < eps (so a warm start
    stops at a cold start's tolerance); sub.alpha0: (l,) a warm start, moved into (0, C) where
    outside. Options: ``bucket_size``, ``buckets_per_group`` (None: ``choose_order``'s),
    ``inner_eps`` (the first outer iteration's inner tolerance, LIBLINEAR's 1e-2 by default: a
    caller that runs a pass or two per solve from a warm start, as CoCoA+'s rounds do, passes
    a small one, else a pass with |g'| below it everywhere changes nothing).

    A partition of a larger problem (workers: ``linsvm.distributed``), as in
    ``dcd._solve_svm_dual``: with ``sub.w0`` given too, w starts at w0, which the caller
    vouches is sum_j y_j alpha_j x_j over ALL rows, these rows' alpha0 included (alpha0 then
    strictly inside (0, C_i), else moved inside as above and w0 no longer matches it exactly).
    Option ``sigma`` (CoCoA+'s sigma' >= 1, default 1.0: the plain solver bit for bit) scales
    the local problem's quadratic term: each one-variable problem reads the local view
    u = w0 + sigma dw and has sigma Q_ii in place of Q_ii, and u moves by sigma times each step.
    The returned w is then u: the caller forms dw = sum_i y_i (alpha_i - alpha0_i) x_i from the
    alphas and passes ``objectives=False``. Option ``margin_offset`` as ``dcd._solve_svm_dual``'s:
    every step reads y_i (u'x_i + c), a bias weight held fixed by the caller.

    Solution.alpha: (l,) 0 < alpha_i < C_i (0 where C_i = 0); figures: ``alpha_complement``
    (C_i - alpha_i as the solver keeps it, with full relative accuracy near C_i), ``gmax`` (the
    last outer iteration's stopping measure), ``inner_eps`` (the inner Newton tolerance
    reached), ``bucket_size``, ``buckets_per_group``. The hook's Progress has ``measure`` =
    gmax and figures ``gmax``, ``inner_eps`` (the tolerance that iteration used), ``n_newton``
    and ``alpha_complement``; its ``alpha`` and ``alpha_complement`` are live strided views.

    The dual objective f decreases over an outer iteration only up to the inexact inner solves:
    a sub-problem stopped at |g'(z)| < innereps is within innereps^2 / (Q_ii + 4/C_i)
    <= innereps^2 C_i / 4 of its minimum (g is convex with g'' >= Q_ii + 4/C_i), so f can rise
    by at most innereps^2 sum_i C_i / 4 in one outer iteration (as LIBLINEAR's does), unless an
    inner loop hits its cap of 101 steps.
    """
    X, bias = sub.X, float(sub.bias)
    y, C, eps, sigma = _dual.classifier_problem(sub)
    n_rows = X.shape[0]
    bucket_size, buckets_per_group = _dual.start_order(sub, y)
    alpha0, use_alpha0, w, partition = _dual.classifier_start(sub)
    rec = np.empty((n_rows, 5))
    index_dtype = _dual.row_index_dtype(n_rows)
    rows = _prepare(
        X.indptr, X.indices, X.data, bias, y, C, alpha0, use_alpha0, not partition, w, rec,
        index_dtype, sigma, _dual.shared_sq_norms(sub, X, bias),
    )  # fmt: skip
    inner_eps = _positive(sub.option("inner_eps", INNER_EPS_START), "inner_eps")
    offset = _dual.margin_offset(sub)
    fstate = np.array([inner_eps, np.inf, inner_eps])
    istate = np.array([rows.shape[0], 0, 0, 0], dtype=np.int64)
    rng = new_state(sub.seed)
    state = {"rec": rec, "w": w, "fstate": fstate, "istate": istate, "rng": rng}

    # eps = 0 (no stopping rule) keeps the floor: innereps reaching 0 would make every inner
    # loop run to its cap of 101 steps
    inner_eps_min = min(INNER_EPS_FLOOR, eps) if eps > 0 else INNER_EPS_FLOOR
    order, bucket_order, use_prefetch = _dual.visit_buffers(X, rec, rows, bucket_size)

    def advance(n_epochs: int) -> None:
        lr_dual_kernel(
            X.indptr, X.indices, X.data, bias, rec, w, rows, fstate, istate, rng, eps,
            inner_eps_min, n_epochs, bucket_size, buckets_per_group, use_prefetch, order,
            bucket_order, sigma, offset,
        )  # fmt: skip

    def report() -> tuple[float, dict]:
        gmax = float(fstate[_F_GMAX])
        return gmax, {
            "gmax": gmax,
            "inner_eps": float(fstate[_F_INNEREPS_USED]),
            "n_newton": int(istate[_I_NEWTON]),
            "n_active": int(istate[I_ACTIVE]),
            "alpha_complement": rec[:, _CA],
        }

    def values() -> tuple[float, float, float]:
        alpha, alpha_complement = (np.ascontiguousarray(rec[:, k]) for k in (_A, _CA))
        return lr_objectives(X, bias, y, C, w, alpha, alpha_complement)

    def figures() -> dict:
        return {
            "alpha_complement": np.ascontiguousarray(rec[:, _CA]),
            "gmax": float(fstate[_F_GMAX]),
            "inner_eps": float(fstate[_F_INNEREPS]),
        }

    return _dual.run_dual(
        sub, hook, 7, advance, state, w=w, alpha=rec[:, _A], report=report, values=values,
        figures=figures, order=(bucket_size, buckets_per_group),
    )  # fmt: skip


def _positive(value, name: str) -> float:
    message = name + " must be a number > 0, got {value!r}"
    return check_number(value, 0.0, message, message, strict=True)


__all__ = ["solve_lr_dual", "lr_dual_kernel"]
