"""Primal coordinate descent (PCD) for the L2-regularised L2-loss SVM.

The problem (DESIGN.md section 2), for one binary sub-problem (y_i = +1/-1, per-row cost C_i)::

    min_w  P(w) = 1/2 w'w + sum_i C_i max(0, b_i(w))^2,   b_i(w) = 1 - y_i w'x_i

with the bias as LIBLINEAR's implicit last feature of value ``bias`` (when ``bias >= 0``),
regularised like every weight. Rows with C_i = 0 are not part of the problem.

The method is Chang, Hsieh and Lin's (JMLR 2008), written from the paper over column (CSC)
arrays. Each outer iteration visits every feature once, in a fresh random order. For feature j
the one-variable problem in the step z along e_j is

    D_j(z) = P(w + z e_j) - P(w)
           = w_j z + z^2/2 + sum_i C_i [max(0, b_i - z y_i x_ij)^2 - max(0, b_i)^2],

and with b kept up to date its derivative and generalised second derivative at z = 0 cost one
pass over column j:

    D_j'(0)  = w_j - 2 sum_{b_i > 0} C_i y_i x_ij b_i,
    D_j''(0) = 1 + 2 sum_{b_i > 0} C_i x_ij^2.

One Newton step d = -D_j'(0) / D_j''(0) is taken with a backtracking line search: the first of
z = d, d/2, d/4, ... (beta = 0.5) with the sufficient decrease D_j(z) <= -sigma z^2
(sigma = 0.01). Evaluating D_j(z) is one more pass over column j, which the paper's cheap
test often avoids (measured at C = 1: for 64% of the steps on a9a, 80% on reuters): D_j' is
Lipschitz with constant H_j = 1 + 2 sum_i C_i x_ij^2 (all rows, computed once), so
D_j(z) <= D_j'(0) z + H_j z^2 / 2 and the step lambda d satisfies the
condition whenever lambda <= D_j''(0) / (H_j / 2 + sigma). That test is exact (a proven upper
bound, not a heuristic): a step it accepts is one the full evaluation would accept, so the steps
taken are exactly those of always evaluating D_j (tests/test_pcd.py checks this bit for bit;
in floating point the two can part only on rounding-sized steps of a coordinate that is
already optimal, where D_j'(0) is noise). With D_j''(0) >= 1 the bound is > 0, so the search
always ends. (Measured: the first trial, z = d, is accepted for all but ~1 in 10^4 steps on
a9a and reuters; far less often on badly scaled data.) An accepted step updates w_j and b
over column j. A trial that is evaluated is written into b during its evaluation (the
column's old b_i kept aside for the next trial if it is rejected), so an evaluated step that
is accepted, nearly always the first, costs no extra pass. A step is skipped only when
w_j + d == w_j in floating point (no absolute threshold on |d|: with large C_i x_ij^2, hence a
large D_j''(0), a tiny d can carry a partial derivative far above the tolerance).

Stopping rule (the paper gives the method, not a tolerance): LIBLINEAR -s 2's,

    ||grad P(w)||_2 <= eps * ||grad P(0)||_2   (also the reference after a warm start),

checked cheaply. The partial derivatives D_j'(0) come free as the features are visited; their
2-norm over an outer iteration, the sweep measure, is the per-iteration progress (as the
violation 1-norm of LIBLINEAR's -s 5). It is not the gradient at one point, since w moves
during the sweep, and on badly conditioned data it can be far below it: a feature of huge
curvature (a row with large values near its margin) has D_j'(0) ~ 0 right after its own step,
yet the other features' tiny steps move it back by orders of magnitude (seen on generated
data: sweep measure 1e-3 with ||grad P(w)|| = 1 and a duality gap of 4%). So the sweep measure
only triggers the test: when it is <= eps ||grad P(0)||, the exact gradient at the end of the
sweep is computed (one more pass over the non-zeros, like a sweep without updates) and the run
stops if it passes. On a9a and reuters this costs a few extra passes at the end of a run.
``sub.eps`` is applied as given: training passes LIBLINEAR's meaning of ``-e`` for its primal
solvers (eps * max(min(#pos, #neg), 1) / l, ``solver_tolerance``), as for -s 2, which then
stops on the same condition. Default -e ``DEFAULT_EPS``.
At most ``max_iter`` outer iterations (default 1000, as LIBLINEAR's -s 5). No shrinking: with
the L2 regulariser no weight sits at a bound.

The answer is scored by ``linsvm.objective``: P(w), and the dual value -f(alpha) at the
feasible dual point alpha_i = 2 C_i max(0, b_i(w)) of w, so gap = P(w) + f(alpha) >= 0 bounds
P(w) - P*.

The solver runs through ``_base.drive``: a kernel call runs a number of outer iterations and
keeps all it needs to continue in arrays (w, b, the feature order, the generator, the
counters), so batching does not change the result and a checkpoint resumes exactly.

Layout: the CSC copy of y_i x_ij over the rows with C_i > 0 (bias column appended) is built
by ``_columns.signed_columns``, shared with the L1-regularised solvers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..objective import LOSS_SQUARED_HINGE, squared_hinge_dual_point, svm_objectives
from . import _columns as cc
from ._base import Hook, Solution, Subproblem, copy_state, restore_state
from ._columns import squared_hinge_column
from ._newton_common import check_gradient_at_zero
from ._random import FIRST, new_state, shuffle

__all__ = ["BETA", "DEFAULT_EPS", "DEFAULT_MAX_ITER", "SIGMA", "gradient_norm", "solve_pcd"]

DEFAULT_EPS = 0.01  # relative stopping tolerance (LIBLINEAR's primal -e default, unscaled)
DEFAULT_MAX_ITER = 1000  # outer iterations (LIBLINEAR -s 5's cap)
SIGMA = 0.01  # sufficient decrease: D_j(z) <= -SIGMA z^2
BETA = 0.5  # backtracking factor

# The kernel's counters (istate, int64) and last sweep measure (fstate), by position.
I_OUTER, I_CONVERGED, I_BACKTRACK, I_EVAL, I_CHECKS = 0, 1, 2, 3, 4
F_MEASURE = 0


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def gradient_norm(colptr, rowpos, vals, C, c_step, w, b) -> float:
    """||grad P(w)||_2 from the signed columns and b = 1 - y_i w'x_i (rows with C_i > 0)."""
    total = 0.0
    for j in range(w.shape[0]):
        gb, _ = squared_hinge_column(colptr, rowpos, vals, C, c_step, b, j)
        g = w[j] - 2.0 * gb
        total += g * g
    return np.sqrt(total)


@njit(cache=True, nogil=True)
def pcd_kernel(colptr, rowpos, vals, C, c_step, H, w, b, index, rng, saved, max_iter, n_more,
               tol, istate, fstate):  # fmt: skip
    """Up to ``n_more`` outer iterations of PCD, ``max_iter`` in all; w (n_w,) and b (l,)
    updated in place.

    ``index`` (n_w,): the feature order, reshuffled in place each outer iteration from
    ``rng``; H (n_w,): the curvature bounds 1 + 2 sum_i C_i x_ij^2; C_i is C[i * c_step]
    (``_columns.squared_hinge_column``); ``saved``: scratch as long as the longest column.
    Stops after the first outer iteration whose sweep measure sqrt(sum_j D_j'(0)^2) is <= tol
    and whose w then has ||grad P(w)|| <= tol. istate: outer iterations run, converged,
    backtracking steps, full evaluations of D_j, exact gradient checks (I_* positions);
    fstate[F_MEASURE]: the last sweep measure.
    """
    n_w = w.shape[0]
    n_outer = istate[I_OUTER]
    converged = istate[I_CONVERGED] != 0
    measure = fstate[F_MEASURE]
    stop = min(max_iter, n_outer + n_more)
    while n_outer < stop and not converged:
        shuffle(index, FIRST, n_w, rng)
        sumsq = 0.0
        for s in range(n_w):
            j = index[s]
            k0 = np.uint64(colptr[j])
            k1 = np.uint64(colptr[j + 1])
            gb, h = squared_hinge_column(colptr, rowpos, vals, C, c_step, b, j)
            wj = w[j]
            g = wj - 2.0 * gb
            h = 1.0 + 2.0 * h
            sumsq += g * g
            d = -g / h
            # no representable change of w_j (d = 0, or tiny against w_j), or none computable
            # (g or h past float64: NaN, and the backtracking below would never end)
            if wj + d == wj or not np.isfinite(d):
                continue
            # lam <= h / (H_j/2 + sigma) guarantees D_j(lam d) <= -sigma (lam d)^2
            lam_ok = h / (0.5 * H[j] + SIGMA)
            # Evaluated trials are written into b in place (the first, lam = 1, is nearly
            # always accepted: no further pass), the column's b_i at w kept in ``saved`` so
            # that every trial, and the step finally taken, is b_i - z y_i x_ij from the same
            # b_i (no drift from undoing rejected trials).
            lam = 1.0
            evaluated = False
            while True:
                z = lam * d
                if lam <= lam_ok:
                    for k in range(k0, k1):
                        i = np.uint64(rowpos[k])
                        bo = saved[k - k0] if evaluated else b[i]
                        b[i] = bo - z * vals[k]
                    break
                change = wj * z + (0.5 + SIGMA) * z * z
                istate[I_EVAL] += 1
                for k in range(k0, k1):
                    i = np.uint64(rowpos[k])
                    v = vals[k]
                    bo = saved[k - k0] if evaluated else b[i]  # b_i at w
                    saved[k - k0] = bo
                    bn = bo - z * v  # b_i at w + z e_j
                    b[i] = bn
                    if bo > 0.0 and bn > 0.0:  # bn^2 - bo^2 without cancellation
                        change -= C[i] * z * v * (bn + bo)
                    elif bo > 0.0:
                        change -= C[i] * bo * bo
                    elif bn > 0.0:
                        change += C[i] * bn * bn
                evaluated = True
                if change <= 0.0:
                    break
                lam *= BETA
                istate[I_BACKTRACK] += 1
            w[j] = wj + z
        n_outer += 1
        measure = np.sqrt(sumsq)
        if measure <= tol:  # the sweep measure triggers the exact test
            istate[I_CHECKS] += 1
            if gradient_norm(colptr, rowpos, vals, C, c_step, w, b) <= tol:
                converged = True
    istate[I_OUTER] = n_outer
    istate[I_CONVERGED] = converged
    fstate[F_MEASURE] = measure


@njit(cache=True, nogil=True)
def _longest_column(colptr) -> int:
    longest = 0
    for j in range(colptr.shape[0] - 1):
        longest = max(longest, colptr[j + 1] - colptr[j])
    return longest


# ----------------------------------------------------------------------------- driver


def solve_pcd(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2 by primal coordinate descent.

    ``sub``: X CSR (l, n); y (l,) (y > 0 is positive); C (l,) per-row cost (0 drops the row);
    bias: LIBLINEAR's -B (an implicit last feature of that value when >= 0, regularised); eps:
    stop when ||grad P(w)||_2 <= eps * ||grad P(0)||_2, tested when the sweep measure is below
    that (see the module docstring); max_iter: cap on outer iterations; seed: the feature
    order's seed (equal seeds, equal w); w0: (n [+1],) a warm start.

    The hook's ``measure`` is the sweep measure / ||grad P(0)|| of the last outer iteration
    (free; the exact gradient is computed only to confirm convergence).

    If grad P(0) = 0 (e.g. every C_i = 0), w = 0 is the optimum and is returned at once, with
    n_iter = 0 and w0 ignored. Returns a Solution: primal, dual and gap at the feasible dual
    point alpha_i = 2 C_i max(0, 1 - y_i w'x_i) (also returned); figures stop_measure (the
    last sweep measure), stop_measure0 (||grad P(0)||), grad_norm (exact, at the returned w),
    stop_ratio (grad_norm / stop_measure0), n_line_search_steps, n_evaluations,
    n_gradient_checks, eps.
    """
    max_iter = cc.check_max_iter(sub.max_iter)
    seed = cc.check_seed(sub.seed)
    cols = cc.signed_columns(sub.X, sub.y, sub.C, sub.bias, sub.eps, sub.values_checked)
    colptr, rowpos, vals, Cr = cols.colptr, cols.rowpos, cols.vals, cols.Cr
    c_step = cc.cost_step(Cr)
    n_w = cols.n_w
    w = np.zeros(n_w)
    b = np.ones(Cr.size)
    measure0 = float(gradient_norm(colptr, rowpos, vals, Cr, c_step, w, b))
    check_gradient_at_zero(measure0, sub.w0 is not None)
    tol = float(sub.eps) * measure0
    # grad P(0) = 0: w = 0 is the optimum (P is strictly convex)
    istate = np.array([0, measure0 == 0.0, 0, 0, 0], dtype=np.int64)
    fstate = np.array([measure0])
    index = np.arange(n_w, dtype=np.int64)
    rng = new_state(seed)
    if sub.resume is not None:
        restore_state(
            {"w": w, "b": b, "index": index, "rng": rng, "istate": istate, "fstate": fstate},
            sub.resume,
        )
    elif sub.w0 is not None:
        w0 = cc.check_w0(sub.w0, n_w)
        if not istate[I_CONVERGED]:
            w[:] = w0
            cc.slacks(colptr, rowpos, vals, w, b)
    H = 1.0 + 2.0 * cc.column_curvature(colptr, rowpos, vals, Cr)
    saved = np.empty(_longest_column(colptr))  # b over the column being stepped, at w

    def advance(n_more: int) -> None:
        pcd_kernel(
            colptr, rowpos, vals, Cr, c_step, H, w, b, index, rng, saved, max_iter, n_more, tol,
            istate, fstate,
        )  # fmt: skip

    def values(at: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        """P, D, gap at ``at`` and the dual point they are taken at."""
        alpha = squared_hinge_dual_point(cols.X, cols.bias, cols.ysign, cols.C, at)
        primal, dual, gap = svm_objectives(
            cols.X, cols.bias, cols.ysign, cols.C, at, alpha, LOSS_SQUARED_HINGE
        )
        return primal, dual, gap, alpha

    def result() -> dict:
        grad = float(gradient_norm(colptr, rowpos, vals, Cr, c_step, w, b))
        primal, dual, gap, alpha = values(w)
        return {
            "w": w,
            "primal": primal,
            "dual": dual,
            "gap": gap,
            "alpha": alpha,
            "figures": {
                "stop_measure": float(fstate[F_MEASURE]),  # the last outer iteration's sweep
                "stop_measure0": measure0,  # ||grad P(0)||_2, the rule's reference
                # exact ||grad P(w)||_2 at the returned w: converged <=> grad_norm <= eps *
                # stop_measure0 (and stop_measure too)
                "grad_norm": grad,
                "stop_ratio": grad / measure0 if measure0 > 0 else 0.0,
                "n_line_search_steps": int(istate[I_BACKTRACK]),  # backtracking (halvings)
                "n_evaluations": int(istate[I_EVAL]),  # full evaluations of D_j (cheap test failed)
                "n_gradient_checks": int(istate[I_CHECKS]),  # exact tests the sweep triggered
                "eps": float(sub.eps),
            },
        }

    return cc.run_primal(
        sub, hook, 34, max_iter, advance,
        status=lambda: (int(istate[I_OUTER]), bool(istate[I_CONVERGED])),
        live=lambda: (
            w, float(fstate[F_MEASURE] / measure0), {"sweep_measure": float(fstate[F_MEASURE])}
        ),
        state=lambda: copy_state(w=w, b=b, index=index, rng=rng, istate=istate, fstate=fstate),
        objectives=lambda at: values(at)[:2],
        result=result,
    )  # fmt: skip
