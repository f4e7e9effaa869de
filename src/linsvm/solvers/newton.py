"""Primal Newton method for L2-regularised logistic regression (-s 0) and L2-loss SVM (-s 2).

The problem (DESIGN.md section 2), for one binary sub-problem::

    min_w  P(w) = 1/2 w'w + sum_i C_i xi(y_i w'x_i)
    logistic:      xi(z) = log(1 + exp(-z)),  xi'' = sigma(z) (1 - sigma(z))
    squared hinge: xi(z) = max(0, 1 - z)^2,   generalised xi'' = 2 on {i: z_i < 1}

LIBLINEAR 2.50's line-search Newton method (``newton.cpp``, the classes ``l2r_erm_fun``,
``l2r_lr_fun`` and ``l2r_l2_svc_fun`` of ``linear.cpp``), written afresh over CSR arrays:

- each iteration solves H d = -g approximately by conjugate gradient preconditioned with
  M = (1 - a) I + a diag(H), a = 0.01, stopped by the quadratic-model rule of
  ``NEWTON::pcg``: with Q_k the model value after k CG steps, stop when
  k (Q_k - Q_{k-1}) >= cgtol Q_k, cgtol = min(eps_cg, sqrt(||g||_{M^-1})), eps_cg = 0.5; at
  most max(n, 5) CG steps;
- then a backtracking line search from step 1, halving up to 20 times, accepting the first
  step a with P(w + a d) - P(w) <= eta a g'd, eta = 0.01 (``l2r_erm_fun::
  linesearch_and_update``). The margins y_i x_i'd are computed once per search, so each trial
  costs O(l), not O(nnz);
- stop when ||g(w)|| <= eps ||g(0)|| (the gradient norm at w = 0, whatever the initial w);
  also when the line search fails, when |P_old - P_new| <= 1e-12 |P_new|, or after
  ``max_iter`` (1000) Newton iterations.

Hessian-free: H v = v + X_I' D_I X_I v, one pass over the selected rows I (all rows with
C_i > 0 for the logistic loss, those with margin < 1 for the squared hinge), row by row. The
function value, the gradient, the selection I with its D_i, and the preconditioner come from
one pass; the margins y_i w'x_i are kept up to date by the line search.

The bias is LIBLINEAR's implicit last feature of value ``bias`` (when ``bias >= 0``). It is
regularised like every weight unless ``regularize_bias=False`` (LIBLINEAR's ``-R``): then the
bias weight is left out of 1/2 w'w and out of its gradient, Hessian and preconditioner terms.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_value, sq_norm

# Constants of LIBLINEAR 2.50's newton.cpp / newton.h.
EPS_CG = 0.5  # NEWTON(..., eps_cg = 0.5): cap on the CG relative tolerance
PRECONDITIONER_MIX = 0.01  # alpha_pcg in NEWTON::newton: M = (1 - a) + a diag(H)
ARMIJO_ETA = 0.01  # eta in linesearch_and_update
MAX_LINE_SEARCH = 20  # max_num_linesearch: halvings before the search fails
INIT_STEP_SIZE = 1.0  # init_step_size
SMALL_REDUCTION = 1.0e-12  # stop when |f_old - f| <= 1e-12 |f|
DEFAULT_MAX_ITER = 1000  # NEWTON(..., max_iter = 1000)


def primal_tolerance(eps: float, y: np.ndarray, C: np.ndarray | None = None) -> float:
    """LIBLINEAR's tolerance of the primal solvers for classification (``train_one``).

    eps * max(min(pos, neg), 1) / l with pos and neg the numbers of +1 and -1 rows (LIBLINEAR
    counts y > 0 as positive). When ``C`` is given, rows with C_i == 0 are not counted (they
    are not part of the problem). The -s 1 -> -s 2 fallback further multiplies it by 0.1.
    """
    y = np.asarray(y)
    if C is not None:
        y = y[np.asarray(C) != 0]
    n_rows = y.shape[0]
    if n_rows == 0:
        return float(eps)
    pos = int(np.count_nonzero(y > 0))
    neg = n_rows - pos
    return float(eps) * max(min(pos, neg), 1) / n_rows


# ----------------------------------------------------------------------------- kernels

# The row loops are written out in each kernel, over unsigned indices. Measured on a9a: Numba
# wraps negative signed indices around (a compare-and-select per access), and calling a helper
# for x_i'v and for out += a x_i (even inlined) made the Hessian-vector product 2-2.5x slower.


@njit(cache=True, nogil=True)
def value_grad(
    indptr,
    indices,
    data,
    bias,
    y,
    C,
    rows,
    loss,
    reg_bias,
    w,
    margins,
    compute_margins,
    want_value,
    g,
    M,
    sel,
    dsel,
):
    """One pass over the rows: loss value, gradient, Hessian selection and preconditioner.

    Rows visited: ``rows`` (those with C_i > 0). With ``compute_margins`` the margins
    y_i w'x_i are computed into ``margins`` first; otherwise ``margins`` holds them already.
    Writes g = grad P(w); M = (1 - a) + a diag(H) (LIBLINEAR's preconditioner); sel[:k] the
    rows entering the Hessian and dsel[:k] their D_i (C_i sigma (1 - sigma) or 2 C_i).
    Returns (sum_i C_i xi(margin_i) if want_value else 0, k, ||g||).
    """
    n_w = w.shape[0]
    last = n_w - 1
    for j in range(n_w):
        g[j] = w[j]
        M[j] = 1.0
    if not reg_bias:
        g[last] = 0.0
        M[last] = 0.0
    logistic = loss == LOSS_LOGISTIC
    has_bias = bias >= 0.0
    loss_sum = 0.0
    n_sel = 0
    for p in range(rows.shape[0]):
        i = rows[p]
        k0 = np.uint64(indptr[i])
        k1 = np.uint64(indptr[i + 1])
        if compute_margins:
            t = 0.0
            for k in range(k0, k1):
                t += w[np.uint64(indices[k])] * data[k]
            if has_bias:
                t += w[last] * bias
            margins[i] = y[i] * t
        z = margins[i]
        ci = C[i]
        if want_value:
            loss_sum += ci * loss_value(loss, z)
        if logistic:
            e = np.exp(-abs(z))
            if z >= 0.0:
                sig = 1.0 / (1.0 + e)
                one_minus_sig = e / (1.0 + e)
            else:
                sig = e / (1.0 + e)
                one_minus_sig = 1.0 / (1.0 + e)
            coef = -ci * one_minus_sig * y[i]
            dii = ci * sig * one_minus_sig
        else:
            if z >= 1.0:
                continue
            coef = 2.0 * ci * y[i] * (z - 1.0)
            dii = 2.0 * ci
        if coef == 0.0 and dii == 0.0:
            continue
        for k in range(k0, k1):
            j = np.uint64(indices[k])
            v = np.float64(data[k])
            g[j] += coef * v
            M[j] += dii * v * v
        if has_bias:
            g[last] += coef * bias
            M[last] += dii * bias * bias
        if dii != 0.0:
            sel[n_sel] = i
            dsel[n_sel] = dii
            n_sel += 1
    gg = 0.0
    for j in range(n_w):
        gg += g[j] * g[j]
        M[j] = (1.0 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * M[j]
    return loss_sum, n_sel, np.sqrt(gg)


@njit(cache=True, nogil=True)
def hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, v, out) -> float:
    """out = H v = v + X_I' D_I X_I v (bias weight unregularised if not reg_bias); returns v'Hv.

    One pass over the selected rows: u = x_i'v, then out += D_i u x_i. v'Hv is accumulated
    on the way as v'v + sum_i D_i u_i^2.
    """
    n_w = v.shape[0]
    last = n_w - 1
    has_bias = bias >= 0.0
    vv = 0.0
    for j in range(n_w):
        out[j] = v[j]
        vv += v[j] * v[j]
    if not reg_bias:
        vv -= v[last] * v[last]
        out[last] = 0.0
    quad = 0.0
    for p in range(n_sel):
        i = sel[p]
        k0 = np.uint64(indptr[i])
        k1 = np.uint64(indptr[i + 1])
        u = 0.0
        for k in range(k0, k1):
            u += v[np.uint64(indices[k])] * data[k]
        if has_bias:
            u += v[last] * bias
        du = dsel[p] * u
        quad += du * u
        for k in range(k0, k1):
            out[np.uint64(indices[k])] += du * data[k]
        if has_bias:
            out[last] += du * bias
    return vv + quad


@njit(cache=True, nogil=True)
def pcg(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, g, M, eps_cg, s, r, d, Hd):
    """Preconditioned CG for H s = -g with LIBLINEAR's quadratic-model stopping rule.

    s, r, d, Hd: work arrays of length n_w (s the step and r the residual on return).
    Returns (CG steps, status): 0 stopped by the rule, 1 d'Hd <= 1e-16, 2 the model value
    turned positive or increased, 3 max(n_w, 5) steps reached.
    """
    n_w = g.shape[0]
    z_dot_r = 0.0
    for j in range(n_w):
        s[j] = 0.0
        r[j] = -g[j]
        d[j] = r[j] / M[j]
        z_dot_r += d[j] * r[j]
    cgtol = min(eps_cg, np.sqrt(np.sqrt(z_dot_r)))
    max_cg_iter = max(n_w, 5)
    q_old = 0.0
    cg_iter = 0
    while cg_iter < max_cg_iter:
        cg_iter += 1
        d_hd = hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, d, Hd)
        if d_hd <= 1.0e-16:
            return cg_iter, 1
        alpha = z_dot_r / d_hd
        s_dot_r = 0.0
        s_dot_g = 0.0
        z_dot_r_new = 0.0
        for j in range(n_w):
            s[j] += alpha * d[j]
            r[j] -= alpha * Hd[j]
            s_dot_r += s[j] * r[j]
            s_dot_g += s[j] * g[j]
            z_dot_r_new += r[j] * r[j] / M[j]
        # the quadratic model q(s) = g's + 1/2 s'Hs = -1/2 (s'r - s'g) since Hs = -g - r
        q_new = -0.5 * (s_dot_r - s_dot_g)
        q_diff = q_new - q_old
        if q_new <= 0.0 and q_diff <= 0.0:
            if cg_iter * q_diff >= cgtol * q_new:
                return cg_iter, 0
        else:
            return cg_iter, 2
        q_old = q_new
        beta = z_dot_r_new / z_dot_r
        for j in range(n_w):
            d[j] = r[j] / M[j] + beta * d[j]
        z_dot_r = z_dot_r_new
    return cg_iter, 3


@njit(cache=True, nogil=True)
def line_search_and_update(
    indptr,
    indices,
    data,
    bias,
    y,
    C,
    rows,
    loss,
    reg_bias,
    w,
    margins,
    step_margins,
    s,
    g,
    f_old,
    init_step,
):
    """Backtracking line search along s from ``init_step``; on success update w and margins.

    Accepts the first step a (halving up to MAX_LINE_SEARCH times) with
    P(w + a s) - P(w) <= ARMIJO_ETA a g's. Returns (a, P at the new w), or (0, f_old) with
    w and margins unchanged when no step is accepted.
    """
    n_w = w.shape[0]
    last = n_w - 1
    s_s = 0.0
    w_s = 0.0
    w_w = 0.0
    g_s = 0.0
    for j in range(n_w):
        s_s += s[j] * s[j]
        w_s += w[j] * s[j]
        w_w += w[j] * w[j]
        g_s += g[j] * s[j]
    if not reg_bias:
        s_s -= s[last] * s[last]
        w_s -= w[last] * s[last]
        w_w -= w[last] * w[last]
    for p in range(rows.shape[0]):
        i = rows[p]
        t = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            t += s[np.uint64(indices[k])] * data[k]
        if bias >= 0.0:
            t += s[last] * bias
        step_margins[i] = y[i] * t
    a = init_step
    for _ in range(MAX_LINE_SEARCH):
        total = 0.0
        for p in range(rows.shape[0]):
            i = rows[p]
            total += C[i] * loss_value(loss, margins[i] + a * step_margins[i])
        f = total + 0.5 * (a * a * s_s + w_w) + a * w_s
        if f - f_old <= ARMIJO_ETA * a * g_s:
            for p in range(rows.shape[0]):
                i = rows[p]
                margins[i] += a * step_margins[i]
            for j in range(n_w):
                w[j] += a * s[j]
            return a, f
        a *= 0.5
    return 0.0, f_old


# ----------------------------------------------------------------------------- driver


@dataclass
class PrimalSolution:
    """What the primal Newton solver returns for one binary sub-problem."""

    w: np.ndarray  # (n [+1],) float64
    n_iter: int  # Newton iterations completed (LIBLINEAR's "iter" lines)
    converged: bool  # ||g|| <= eps ||g(0)|| reached
    grad_norm: float  # ||g|| at the returned w
    grad_norm0: float  # ||g|| at w = 0
    n_cg_iter: int  # CG steps over all iterations
    objective: float = float("nan")  # P(w) at the returned w (bias excluded from 1/2 w'w if -R)
    stop_reason: str = ""  # "converged", "max_iter", "line_search_failed", "small_reduction"
    # per Newton iteration: (iteration, P(w), ||g||, CG steps, step size)
    history: list[tuple[int, float, float, int, float]] = field(default_factory=list)


def solve_primal_newton(
    X,
    y: np.ndarray,
    C: np.ndarray,
    loss: int,
    bias: float,
    eps: float,
    max_iter: int = DEFAULT_MAX_ITER,
    *,
    w0: np.ndarray | None = None,
    regularize_bias: bool = True,
    verbose: bool = False,
    on_iteration=None,
) -> PrimalSolution:
    """Minimise 1/2 w'w + sum_i C_i xi(y_i w'x_i) by LIBLINEAR's line-search Newton method.

    X: CSR (l, n), float32/float64 values, int32/int64 indices; y: (l,) float64 of +1/-1;
    C: (l,) float64 per-row cost (0 drops the row); loss: LOSS_LOGISTIC (-s 0) or
    LOSS_SQUARED_HINGE (-s 2); bias: LIBLINEAR's -B (an implicit last feature when >= 0);
    eps: the relative gradient-norm tolerance as the NEWTON class gets it (for LIBLINEAR's
    meaning of -e pass ``primal_tolerance(e, y)``); max_iter: cap on Newton iterations;
    w0: initial w (default 0); regularize_bias=False: LIBLINEAR's -R (needs bias >= 0);
    verbose: LIBLINEAR's progress lines on stderr; ``on_iteration(iteration, w, progress)`` is
    called after each Newton iteration when given, with progress = ||g(w)|| / ||g(0)|| (w is
    the solver's own array: copy it to keep it).
    """
    if loss not in (LOSS_LOGISTIC, LOSS_SQUARED_HINGE):
        raise ValueError(f"the primal Newton solver handles losses 1 and 2, not {loss}")
    bias = float(bias)
    if not regularize_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    eps = float(eps)
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    max_iter = int(max_iter)
    n_rows, n_features = X.shape
    n_w = n_features + (1 if bias >= 0 else 0)
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    rows = np.flatnonzero(C > 0).astype(index_dtype)
    reg_bias = bool(regularize_bias)

    margins = np.zeros(n_rows)
    step_margins = np.zeros(n_rows)
    sel = np.empty(max(rows.shape[0], 1), dtype=index_dtype)
    dsel = np.empty(max(rows.shape[0], 1))
    g, M, s, r, d, Hd = (np.empty(n_w) for _ in range(6))
    w = np.zeros(n_w)

    def evaluate(compute_margins: bool, want_value: bool):
        return value_grad(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias,
            w, margins, compute_margins, want_value, g, M, sel, dsel,
        )  # fmt: skip

    def regulariser() -> float:
        ww = sq_norm(w)
        if not reg_bias:
            ww -= w[-1] * w[-1]
        return 0.5 * ww

    # ||g|| at w = 0 (margins 0) for the stopping rule, as NEWTON::newton.
    loss_sum, n_sel, grad_norm0 = evaluate(False, True)
    if w0 is None:
        grad_norm = grad_norm0
    else:
        w0 = np.asarray(w0, dtype=np.float64)
        if w0.shape != (n_w,):
            raise InvalidInputError(f"w0 must have shape ({n_w},), got {w0.shape}")
        w[:] = w0
        loss_sum, n_sel, grad_norm = evaluate(True, True)
    f = loss_sum + regulariser()
    if verbose:
        print(f"init f {f:5.3e} |g| {grad_norm:5.3e}", file=sys.stderr)

    history: list[tuple[int, float, float, int, float]] = []
    n_iter = 0
    n_cg_total = 0
    converged = grad_norm <= eps * grad_norm0
    stop_reason = "converged" if converged else "max_iter"
    while not converged and n_iter < max_iter:
        n_cg, _ = pcg(
            X.indptr, X.indices, X.data, bias, sel, dsel, n_sel, reg_bias, g, M, EPS_CG,
            s, r, d, Hd,
        )  # fmt: skip
        n_cg_total += n_cg
        f_old = f
        step, f = line_search_and_update(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias,
            w, margins, step_margins, s, g, f_old, INIT_STEP_SIZE,
        )  # fmt: skip
        if step == 0.0:
            stop_reason = "line_search_failed"
            if verbose:
                print("WARNING: line search fails", file=sys.stderr)
            break
        n_iter += 1
        _, n_sel, grad_norm = evaluate(False, False)
        history.append((n_iter, float(f), float(grad_norm), int(n_cg), float(step)))
        if verbose:
            print(
                f"iter {n_iter:2d} f {f:5.3e} |g| {grad_norm:5.3e} CG {n_cg:3d} "
                f"step_size {step:4.2e}",
                file=sys.stderr,
            )
        if on_iteration is not None:
            if grad_norm0 > 0:
                progress = grad_norm / grad_norm0
            else:  # g(0) = 0 (only with w0 given): 0 once g is 0 too
                progress = np.inf if grad_norm > 0 else 0.0
            on_iteration(n_iter, w, float(progress))
        if grad_norm <= eps * grad_norm0:
            converged = True
            stop_reason = "converged"
            break
        if abs(f_old - f) <= SMALL_REDUCTION * abs(f):
            stop_reason = "small_reduction"
            if verbose:
                print("WARNING: actred too small", file=sys.stderr)
            break
    if verbose and stop_reason == "max_iter":
        print("WARNING: reaching max number of Newton iterations", file=sys.stderr)
    return PrimalSolution(
        w=w,
        n_iter=n_iter,
        converged=bool(converged),
        grad_norm=float(grad_norm),
        grad_norm0=float(grad_norm0),
        n_cg_iter=n_cg_total,
        objective=float(f),
        stop_reason=stop_reason,
        history=history,
    )


__all__ = [
    "PrimalSolution",
    "solve_primal_newton",
    "primal_tolerance",
    "LOSS_LOGISTIC",
    "LOSS_SQUARED_HINGE",
]
