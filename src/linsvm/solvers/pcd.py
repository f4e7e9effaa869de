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
``eps`` is applied as given; for LIBLINEAR's meaning of ``-e`` for its primal solvers pass
``primal_tolerance(e, y, C)`` (eps * max(min(#pos, #neg), 1) / l), as for -s 2, which then
stops on the same condition. Default ``DEFAULT_EPS``.
At most ``max_iter`` outer iterations (default 1000, as LIBLINEAR's -s 5). No shrinking: with
the L2 regulariser no weight sits at a bound.

The answer is scored by ``linsvm.objective``: P(w), and the dual value -f(alpha) at the
feasible dual point alpha_i = 2 C_i max(0, b_i(w)) of w, so gap = P(w) + f(alpha) >= 0 bounds
P(w) - P*.

Layout: the CSC copy of y_i x_ij over the rows with C_i > 0 (bias column appended) is built
by ``l1._prepare``, shared with the L1-regularised -s 5 solver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..data import as_csr
from ..errors import InvalidInputError
from ..objective import LOSS_SQUARED_HINGE, squared_hinge_dual_point, svm_objectives
from ._random import new_state, shuffle
from .l1 import _check_w0, _margins, _prepare

__all__ = ["DEFAULT_EPS", "DEFAULT_MAX_ITER", "PCDSolution", "solve_pcd"]

DEFAULT_EPS = 0.01  # relative stopping tolerance (LIBLINEAR's primal -e default, unscaled)
DEFAULT_MAX_ITER = 1000  # outer iterations (LIBLINEAR -s 5's cap)
SIGMA = 0.01  # sufficient decrease: D_j(z) <= -SIGMA z^2
BETA = 0.5  # backtracking factor


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _curvature_bounds(colptr, rowpos, vals, C):
    """H_j = 1 + 2 sum_i C_i x_ij^2 for every column j: (n_w,)."""
    n_w = colptr.shape[0] - 1
    H = np.empty(n_w)
    for j in range(n_w):
        s = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            v = vals[k]
            s += C[np.uint64(rowpos[k])] * v * v
        H[j] = 1.0 + 2.0 * s
    return H


@njit(cache=True, nogil=True)
def gradient_norm(colptr, rowpos, vals, C, w, b) -> float:
    """||grad P(w)||_2 from the signed columns and b = 1 - y_i w'x_i (rows with C_i > 0)."""
    total = 0.0
    for j in range(w.shape[0]):
        s = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            i = np.uint64(rowpos[k])
            bi = b[i]
            s += C[i] * vals[k] * bi * np.float64(bi > 0.0)  # a factor, not a branch
        g = w[j] - 2.0 * s
        total += g * g
    return np.sqrt(total)


@njit(cache=True, nogil=True)
def pcd_kernel(colptr, rowpos, vals, C, H, w, b, index, rng, max_outer, tol):
    """Up to ``max_outer`` outer iterations of PCD; w (n_w,) and b (l,) updated in place.

    ``index`` (n_w,): the feature order, reshuffled in place each outer iteration from
    ``rng``; H (n_w,): the curvature bounds of ``_curvature_bounds``. Stops after the first
    outer iteration whose sweep measure sqrt(sum_j D_j'(0)^2) is <= tol and whose w then has
    ||grad P(w)|| <= tol. Returns (outer iterations run, converged, last sweep measure,
    backtracking steps, full evaluations of D_j, exact gradient checks).
    """
    n_w = w.shape[0]
    longest = 0
    for j in range(n_w):
        longest = max(longest, colptr[j + 1] - colptr[j])
    saved = np.empty(longest)  # b over the column being stepped, at w
    n_outer = 0
    converged = False
    measure = np.inf
    n_backtrack = 0
    n_eval = 0
    n_checks = 0
    while n_outer < max_outer:
        shuffle(index, 0, n_w, rng)
        sumsq = 0.0
        for s in range(n_w):
            j = index[s]
            k0 = np.uint64(colptr[j])
            k1 = np.uint64(colptr[j + 1])
            g = 0.0
            h = 0.0
            for k in range(k0, k1):
                i = np.uint64(rowpos[k])
                bi = b[i]
                # rows with b_i > 0 only: a 0/1 factor, not a branch (unpredictable signs
                # cost more in mispredictions than the arithmetic; as in l1.py)
                t = C[i] * vals[k] * np.float64(bi > 0.0)
                g += t * bi
                h += t * vals[k]
            wj = w[j]
            g = wj - 2.0 * g
            h = 1.0 + 2.0 * h
            sumsq += g * g
            d = -g / h
            if wj + d == wj:  # no representable change of w_j (d = 0, or tiny against w_j)
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
                n_eval += 1
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
                n_backtrack += 1
            w[j] = wj + z
        n_outer += 1
        measure = np.sqrt(sumsq)
        if measure <= tol:  # the sweep measure triggers the exact test
            n_checks += 1
            if gradient_norm(colptr, rowpos, vals, C, w, b) <= tol:
                converged = True
                break
    return n_outer, converged, measure, n_backtrack, n_eval, n_checks


# ----------------------------------------------------------------------------- driver


@dataclass
class PCDSolution:
    """What ``solve_pcd`` returns for one binary sub-problem."""

    w: np.ndarray  # (n_w,) = (n [+1],) float64, bias weight last
    n_iter: int  # outer iterations (sweeps over all features)
    converged: bool  # the stopping rule was met (False: max_iter reached)
    primal: float  # P(w) (objective.svm_objectives)
    dual: float  # -f(alpha) at alpha_i = 2 C_i max(0, 1 - y_i w'x_i): a lower bound on P*
    gap: float  # primal - dual >= 0: bounds P(w) - P*
    stop_measure: float  # the last outer iteration's sweep measure (2-norm of its D_j'(0))
    stop_measure0: float  # ||grad P(0)||_2, the reference of the rule and of the progress
    n_line_search_steps: int  # backtracking steps (halvings) over the whole run
    n_evaluations: int = 0  # full evaluations of D_j (the cheap test failed)
    # exact ||grad P(w)||_2 at the returned w: converged <=> grad_norm <= eps * stop_measure0
    # (and stop_measure too)
    grad_norm: float = float("nan")
    n_gradient_checks: int = 0  # exact gradient tests triggered by the sweep measure
    eps: float = float("nan")  # the tolerance used


def _as_labels(y, n_rows: int) -> np.ndarray:
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("y must be numeric (+1/-1; y > 0 is positive)") from None
    if y.shape != (n_rows,):
        raise InvalidInputError(f"y must have shape ({n_rows},), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("y contains NaN or infinity")
    return np.where(y > 0, 1.0, -1.0)


def _as_costs(C, n_rows: int) -> np.ndarray:
    try:
        C = np.ascontiguousarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("C must be numeric") from None
    if C.shape != (n_rows,):
        raise InvalidInputError(f"C must have shape ({n_rows},), got {C.shape}")
    if not np.all(np.isfinite(C)) or np.any(C < 0):
        raise InvalidInputError("C must be finite and >= 0")
    return C


def solve_pcd(
    X,
    y: np.ndarray,
    C: np.ndarray,
    bias: float = -1.0,
    eps: float = DEFAULT_EPS,
    max_iter: int = DEFAULT_MAX_ITER,
    *,
    seed: int = 1,
    w0: np.ndarray | None = None,
    on_iteration: Callable[[int, np.ndarray, float], object] | None = None,
) -> PCDSolution:
    """Minimise 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2 by primal coordinate descent.

    X: CSR (l, n) (anything ``as_csr`` takes); y: (l,) +1/-1 (y > 0 is positive); C: (l,)
    per-row cost (0 drops the row); bias: LIBLINEAR's -B (an implicit last feature of that
    value when >= 0, regularised); eps: stop when ||grad P(w)||_2 <= eps * ||grad P(0)||_2,
    tested when the sweep measure is below that (see the module docstring; pass
    ``primal_tolerance(e, y, C)`` for -s 2's meaning of -e); max_iter: cap on outer iterations;
    seed: the feature order's seed (equal seeds, equal w); w0: (n_w,) = (n [+1],) a warm start.

    on_iteration(iteration, w, progress): called after each outer iteration (1, 2, ...) with
    the solver's own w (copy it to keep it) and progress = that iteration's sweep measure /
    stop_measure0 (free; the exact gradient is computed only to confirm convergence).
    Without it the whole run is one compiled call.

    If grad P(0) = 0 (e.g. every C_i = 0), w = 0 is the optimum and is returned at once, with
    n_iter = 0 and w0 ignored. Not converging within max_iter is reported (``converged``), not
    raised.
    """
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise InvalidInputError(f"max_iter must be an integer >= 0, got {max_iter!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidInputError(f"seed must be an integer, got {seed!r}")
    if not isinstance(eps, (int, float, np.integer, np.floating)):
        raise InvalidInputError(f"eps must be a number, got {eps!r}")
    X = as_csr(X)
    n_rows = X.shape[0]
    ysign = _as_labels(y, n_rows)
    C = _as_costs(C, n_rows)
    try:
        bias = float(bias)
    except (TypeError, ValueError):
        raise InvalidInputError(f"bias must be a number, got {bias!r}") from None
    if not np.isfinite(bias):
        raise InvalidInputError(f"bias must be finite, got {bias}")
    X, bias, eps, ysign, C, rows, n_w, colptr, rowpos, vals = _prepare(X, ysign, C, bias, eps, True)
    if w0 is not None:
        w0 = _check_w0(w0, n_w)
    Cr = np.ascontiguousarray(C[rows])
    w = np.zeros(n_w)
    b = np.ones(rows.size)
    measure0 = float(gradient_norm(colptr, rowpos, vals, Cr, w, b))
    tol = eps * measure0
    n_iter = 0
    converged = measure0 == 0.0  # grad P(0) = 0: w = 0 is the optimum (P is strictly convex)
    measure = measure0
    n_backtrack = 0
    n_eval = 0
    n_checks = 0
    if not converged and w0 is not None:
        w[:] = w0
        _margins(colptr, rowpos, vals, w, b)
        np.subtract(1.0, b, out=b)
    if not converged and max_iter > 0:
        H = _curvature_bounds(colptr, rowpos, vals, Cr)
        index = np.arange(n_w)
        rng = new_state(int(seed))
        if on_iteration is None:
            n_iter, converged, measure, n_backtrack, n_eval, n_checks = pcd_kernel(
                colptr, rowpos, vals, Cr, H, w, b, index, rng, int(max_iter), tol
            )
        else:
            while n_iter < max_iter and not converged:
                _, converged, measure, nb, ne, nc = pcd_kernel(
                    colptr, rowpos, vals, Cr, H, w, b, index, rng, 1, tol
                )
                n_iter += 1
                n_backtrack += nb
                n_eval += ne
                n_checks += nc
                on_iteration(n_iter, w, float(measure / measure0))
    grad = float(gradient_norm(colptr, rowpos, vals, Cr, w, b))
    alpha = squared_hinge_dual_point(X, bias, ysign, C, w)
    primal, dual, gap = svm_objectives(X, bias, ysign, C, w, alpha, LOSS_SQUARED_HINGE)
    return PCDSolution(
        w=w,
        n_iter=int(n_iter),
        converged=bool(converged),
        primal=primal,
        dual=dual,
        gap=gap,
        stop_measure=float(measure),
        stop_measure0=measure0,
        n_line_search_steps=int(n_backtrack),
        n_evaluations=int(n_eval),
        grad_norm=grad,
        n_gradient_checks=int(n_checks),
        eps=eps,
    )
