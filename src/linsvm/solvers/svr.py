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
``newton.cpp``), here with the CG solver of ``newton.py`` reused as is: the generalised Hessian
is I + 2 X_I' diag(C_I) X_I over the rows I outside the tube (|w'x_i - y_i| > p), the same form
as the L2-loss SVM's, so ``newton.pcg``/``newton.hessian_vector`` serve it unchanged. Only the
pass that computes value, gradient and selection, and the line search, are SVR-specific (kept
here: newton.py is untouched). The stopping rule is NEWTON's: ||g(w)|| <= eps ||g(0)|| (for
regression LIBLINEAR passes -e as is, default 0.0001), line-search failure, tiny reduction, or
1000 iterations. An unregularised bias (-R) is supported as in LIBLINEAR.

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
start, ``beta0``, keeps the cold start's reference: see ``solve_svr_dual``). When
-s 12 reaches the cap, LIBLINEAR 2.50 switches to -s 11 from the dual's w with tolerance
eps * 0.001 (``solve_svr`` does the same). -s 13 only warns ("-s 11 may be faster").

Different from LIBLINEAR: the coordinate order is dcd.py's (``choose_order``: bucketed random
order on large data, a plain random permutation on small or neighbour-correlated data) with
the repo's own generator; LIBLINEAR's dual supports one C only (per-row C_i are supported here:
sample weights). The bias is the implicit last feature of value ``bias`` (when >= 0), as in
LIBLINEAR regularised in the dual solvers (-R is rejected there, as LIBLINEAR does).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import (  # noqa: F401  (the SVR objectives live in objective; re-exported)
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    _loss_code,
    _svr_dual_point,
    _svr_dual_value,
    _svr_primal_value,
    _svr_weights_from_dual,
    row_axpy,
    row_dot,
    row_sq_norm,
    sq_norm,
    svr_dual_point,
    svr_dual_value,
    svr_loss_value,
    svr_objectives,
    svr_primal_value,
    svr_weights_from_dual,
)
from ._dual import (
    cache_resident,
    choose_order,
    prefetch_ahead,
    reset_active,
    rows_with_cost,
    visiting_order,
)
from ._random import new_state
from .newton import (
    ARMIJO_ETA,
    DEFAULT_MAX_ITER,
    EPS_CG,
    INIT_STEP_SIZE,
    MAX_LINE_SEARCH,
    PRECONDITIONER_MIX,
    SMALL_REDUCTION,
    pcg,
)

SOLVER_LOSS = {11: SVR_LOSS_L2, 12: SVR_LOSS_L2, 13: SVR_LOSS_L1}

# LIBLINEAR 2.50's defaults (train.c / linear.cpp).
DEFAULT_P = 0.1  # -p
DEFAULT_EPS = {11: 1.0e-4, 12: 0.1, 13: 0.1}  # -e per solver
DUAL_MAX_ITER = 300  # dual_solver_max_iter in train_one
FALLBACK_TOL_FACTOR = 1.0e-3  # -s 12 -> -s 11: primal_solver_tol *= 0.001

# Per-row record of the dual kernel (one cache line per visit, as in dcd.py).
_BETA, _H, _Y, _LAMBDA_OR_BOUND = 0, 1, 2, 3
# Small state arrays carried between kernel calls.
_F_GMAX_OLD, _F_GNORM1_INIT, _F_GMAX_NEW, _F_GNORM1_NEW = 0, 1, 2, 3
_I_ACTIVE, _I_ITER, _I_CONVERGED, _I_REF_GIVEN = 0, 1, 2, 3


# ----------------------------------------------------------------------------- -s 11 kernels


@njit(cache=True, nogil=True)
def svr_value_grad(
    indptr,
    indices,
    data,
    bias,
    y,
    C,
    rows,
    p,
    reg_bias,
    w,
    resid,
    compute_resid,
    want_value,
    g,
    M,
    sel,
    dsel,
):
    """One pass: L2-loss SVR value, gradient, Hessian selection (rows outside the tube), M.

    With ``compute_resid`` the residuals w'x_i - y_i are computed into ``resid`` first.
    Returns (sum_i C_i xi(resid_i) if want_value else 0, number selected, ||g||).
    """
    n_w = w.shape[0]
    last = n_w - 1
    for j in range(n_w):
        g[j] = w[j]
        M[j] = 1.0
    if not reg_bias:
        g[last] = 0.0
        M[last] = 0.0
    has_bias = bias >= 0.0
    loss_sum = 0.0
    n_sel = 0
    for q in range(rows.shape[0]):
        i = rows[q]
        k0 = np.uint64(indptr[i])
        k1 = np.uint64(indptr[i + 1])
        if compute_resid:
            t = 0.0
            for k in range(k0, k1):
                t += w[np.uint64(indices[k])] * data[k]
            if has_bias:
                t += w[last] * bias
            resid[i] = t - y[i]
        d = resid[i]
        if d > p:
            r = d - p
        elif d < -p:
            r = d + p
        else:
            continue
        ci = C[i]
        if want_value:
            loss_sum += ci * r * r
        coef = 2.0 * ci * r
        dii = 2.0 * ci
        for k in range(k0, k1):
            j = np.uint64(indices[k])
            v = np.float64(data[k])
            g[j] += coef * v
            M[j] += dii * v * v
        if has_bias:
            g[last] += coef * bias
            M[last] += dii * bias * bias
        sel[n_sel] = i
        dsel[n_sel] = dii
        n_sel += 1
    gg = 0.0
    for j in range(n_w):
        gg += g[j] * g[j]
        M[j] = (1.0 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * M[j]
    return loss_sum, n_sel, np.sqrt(gg)


@njit(cache=True, nogil=True)
def svr_line_search_and_update(
    indptr, indices, data, bias, y, C, rows, p, reg_bias, w, resid, step_resid, s, g, f_old,
    init_step,
):  # fmt: skip
    """Backtracking (Armijo) line search along s, as newton.line_search_and_update."""
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
    for q in range(rows.shape[0]):
        i = rows[q]
        t = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            t += s[np.uint64(indices[k])] * data[k]
        if bias >= 0.0:
            t += s[last] * bias
        step_resid[i] = t
    a = init_step
    for _ in range(MAX_LINE_SEARCH):
        total = 0.0
        for q in range(rows.shape[0]):
            i = rows[q]
            e = abs(resid[i] + a * step_resid[i]) - p
            if e > 0.0:
                total += C[i] * e * e
        f = total + 0.5 * (a * a * s_s + w_w) + a * w_s
        if f - f_old <= ARMIJO_ETA * a * g_s:
            for q in range(rows.shape[0]):
                i = rows[q]
                resid[i] += a * step_resid[i]
            for j in range(n_w):
                w[j] += a * s[j]
            return a, f
        a *= 0.5
    return 0.0, f_old


# ----------------------------------------------------------------------------- -s 11 driver


@dataclass
class SVRPrimalSolution:
    """What the -s 11 solver returns."""

    w: np.ndarray  # (n [+1],) float64
    n_iter: int  # Newton iterations
    converged: bool  # ||g|| <= eps ||g(0)||
    primal: float  # P(w) (bias weight out of 1/2 w'w with -R)
    dual: float  # -f(beta(w)), beta(w) the dual point of w; NaN with -R
    gap: float  # primal - dual (>= 0 up to rounding); NaN with -R
    grad_norm: float
    grad_norm0: float  # ||g(0)||
    n_cg_iter: int = 0
    stop_reason: str = ""  # "converged", "max_iter", "line_search_failed", "small_reduction"
    history: list[tuple[int, float, float, int, float]] = field(default_factory=list)


def _check_common(X, y, C, p, bias, eps):
    bias = float(bias)
    p = float(p)
    eps = float(eps)
    if not (np.isfinite(p) and p >= 0):
        raise InvalidInputError(f"p must be >= 0, got {p}")
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    n_rows = X.shape[0]
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    if y.shape != (n_rows,) or C.shape != (n_rows,):
        raise InvalidInputError(f"y and C must have shape ({n_rows},)")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("regression targets must be finite")
    return y, C, p, bias, eps


def solve_svr_primal(
    X,
    y: np.ndarray,
    C: np.ndarray,
    p: float,
    bias: float,
    eps: float,
    max_iter: int = DEFAULT_MAX_ITER,
    *,
    w0: np.ndarray | None = None,
    regularize_bias: bool = True,
    verbose: bool = False,
) -> SVRPrimalSolution:
    """-s 11: minimise 1/2 w'w + sum_i C_i max(0, |w'x_i - y_i| - p)^2 by Newton's method.

    X: CSR (l, n); y: (l,) real targets; C: (l,) per-row cost (0 drops the row); p: the tube's
    half width (-p); bias: -B (implicit last feature when >= 0); eps: relative gradient-norm
    tolerance (LIBLINEAR passes -e unscaled for regression; default 1e-4); w0: initial w (the
    -s 12 fallback starts from the dual's w); regularize_bias=False: -R.
    """
    y, C, p, bias, eps = _check_common(X, y, C, p, bias, eps)
    if not regularize_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    reg_bias = bool(regularize_bias)
    max_iter = int(max_iter)
    n_rows, n_features = X.shape
    n_w = n_features + (1 if bias >= 0 else 0)
    index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    rows = np.flatnonzero(C > 0).astype(index_dtype)
    resid = -y  # residuals at w = 0
    step_resid = np.zeros(n_rows)
    sel = np.empty(max(rows.shape[0], 1), dtype=index_dtype)
    dsel = np.empty(max(rows.shape[0], 1))
    g, M, s, r, d, Hd = (np.empty(n_w) for _ in range(6))
    w = np.zeros(n_w)

    def evaluate(compute_resid: bool, want_value: bool):
        return svr_value_grad(
            X.indptr, X.indices, X.data, bias, y, C, rows, p, reg_bias,
            w, resid, compute_resid, want_value, g, M, sel, dsel,
        )  # fmt: skip

    def regulariser() -> float:
        ww = sq_norm(w)
        if not reg_bias:
            ww -= w[-1] * w[-1]
        return 0.5 * ww

    loss_sum, n_sel, grad_norm0 = evaluate(False, True)  # at w = 0, as NEWTON::newton
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
        step, f = svr_line_search_and_update(
            X.indptr, X.indices, X.data, bias, y, C, rows, p, reg_bias,
            w, resid, step_resid, s, g, f_old, INIT_STEP_SIZE,
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

    primal = svr_primal_value(X, bias, y, C, w, SVR_LOSS_L2, p, regularize_bias=reg_bias)
    if reg_bias:
        beta = svr_dual_point(X, bias, y, C, w, p)
        dual = svr_dual_value(X, bias, y, C, beta, SVR_LOSS_L2, p)
        gap = primal - dual
    else:
        dual = gap = float("nan")
    return SVRPrimalSolution(
        w=w,
        n_iter=n_iter,
        converged=bool(converged),
        primal=primal,
        dual=dual,
        gap=gap,
        grad_norm=float(grad_norm),
        grad_norm0=float(grad_norm0),
        n_cg_iter=n_cg_total,
        stop_reason=stop_reason,
        history=history,
    )


# ----------------------------------------------------------------------------- -s 12/13 kernel


@njit(cache=True, nogil=True)
def dcd_svr_kernel(
    indptr,
    indices,
    data,
    bias,
    loss,
    p,
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
    """Run up to ``n_epochs`` outer iterations of the SVR dual CD; update the state in place.

    rec: (l, 4) records (beta, H_ii = ||x_i||^2 + lambda_i, y_i, lambda_i (L2) or U_i (L1)).
    """
    inf = np.inf
    l2 = loss == SVR_LOSS_L2
    rec_flat = rec.reshape(rec.size)
    n_all = trainable_rows.shape[0]
    removed = np.zeros(rec.shape[0], dtype=np.uint8)
    bucket_order = np.empty(max(1, (n_all + bucket_size - 1) // bucket_size), dtype=active.dtype)
    order = np.empty(max(n_all, 1), dtype=active.dtype)

    for _ in range(n_epochs):
        n_active = istate[_I_ACTIVE]
        gmax_old = fstate[_F_GMAX_OLD]
        gmax_new = 0.0
        gnorm1_new = 0.0
        visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)

        for s in range(n_active):
            i = order[s]
            if use_prefetch:
                prefetch_ahead(order, s, n_active, indptr, indices, data, rec_flat, 4)
            b = rec[i, _BETA]
            h = rec[i, _H]
            if l2:
                lam = rec[i, _LAMBDA_OR_BOUND]
                u = inf
            else:
                lam = 0.0
                u = rec[i, _LAMBDA_OR_BOUND]
            g = row_dot(indptr, indices, data, bias, i, w) - rec[i, _Y] + lam * b
            gp = g + p
            gn = g - p
            # violation: distance of 0 from the subdifferential in the feasible directions
            violation = 0.0
            if b == 0.0:
                if gp < 0.0:
                    violation = -gp
                elif gn > 0.0:
                    violation = gn
                elif shrinking and gp > gmax_old and gn < -gmax_old:
                    removed[i] = 1
                    continue
            elif b >= u:
                if gp > 0.0:
                    violation = gp
                elif shrinking and gp < -gmax_old:
                    removed[i] = 1
                    continue
            elif b <= -u:
                if gn < 0.0:
                    violation = -gn
                elif shrinking and gn > gmax_old:
                    removed[i] = 1
                    continue
            elif b > 0.0:
                violation = abs(gp)
            else:
                violation = abs(gn)
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation

            # exact minimiser of 1/2 h d^2 + g d + p |b + d|, then clipped to [-u, u]
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
                continue
            b_new = min(max(b + step, -u), u)
            if b_new != b:
                rec[i, _BETA] = b_new
                row_axpy(indptr, indices, data, bias, i, b_new - b, w)

        kept = 0
        for s in range(n_active):
            i = active[s]
            if removed[i]:
                removed[i] = 0
            else:
                active[kept] = i
                kept += 1
        n_active = kept

        if istate[_I_ITER] == 0 and istate[_I_REF_GIVEN] == 0:
            fstate[_F_GNORM1_INIT] = gnorm1_new
        istate[_I_ITER] += 1
        fstate[_F_GMAX_NEW] = gmax_new
        fstate[_F_GNORM1_NEW] = gnorm1_new
        if gnorm1_new <= eps * fstate[_F_GNORM1_INIT]:
            if n_active == n_all:
                istate[_I_ACTIVE] = n_active
                istate[_I_CONVERGED] = 1
                return
            istate[_I_ACTIVE] = reset_active(active, trainable_rows)
            fstate[_F_GMAX_OLD] = inf
            continue
        istate[_I_ACTIVE] = n_active
        fstate[_F_GMAX_OLD] = gmax_new


@njit(cache=True, nogil=True)
def _prepare_svr(
    indptr, indices, data, bias, y, C, loss, rec, row_index_dtype, beta0, use_beta0, w
):
    """Fill the (l, 4) records; return the rows with C_i > 0.

    Cold (``use_beta0`` False): beta = 0 and w (zeros) is left alone. Warm: beta_i = beta0_i
    projected into the feasible set (clipped to [-C_i, C_i] for the L1 loss, as is for the L2
    loss, 0 where C_i = 0) and w += beta_i x_i, so that w = w(beta) on return.
    """
    for i in range(y.shape[0]):
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
        if b != 0.0:
            row_axpy(indptr, indices, data, bias, i, b, w)
    return rows_with_cost(C, row_index_dtype)


@dataclass
class SVRDualSolution:
    """What the -s 12 / -s 13 solver returns."""

    w: np.ndarray  # (n [+1],) float64, the running w = sum_i beta_i x_i
    beta: np.ndarray  # (l,) float64
    n_iter: int  # outer iterations (LIBLINEAR's #iter)
    converged: bool
    primal: float  # P(w)
    dual: float  # -f(beta) (w(beta) recomputed)
    gap: float  # primal - dual
    gnorm1: float  # 1-norm of the violations in the last outer iteration
    # the stopping rule's reference: the first outer iteration's violation 1-norm (after a
    # warm start, beta0, that of the cold start's first outer iteration: see solve_svr_dual)
    gnorm1_init: float
    bucket_size: int
    buckets_per_group: int


def solve_svr_dual(
    X,
    y: np.ndarray,
    C: np.ndarray,
    p: float,
    loss,
    bias: float,
    eps: float,
    max_iter: int = DUAL_MAX_ITER,
    *,
    shrinking: bool = True,
    seed: int = 1,
    bucket_size: int | None = None,
    buckets_per_group: int | None = None,
    on_iteration=None,
    beta0: np.ndarray | None = None,
) -> SVRDualSolution:
    """-s 12 (loss 'l2') / -s 13 (loss 'l1'): the SVR dual by coordinate descent.

    X: CSR (l, n); y: (l,) real targets; C: (l,) per-row cost (0 drops the row); p: -p;
    loss: 'l1'/'l2' (or SVR_LOSS_L1/SVR_LOSS_L2, or 13/12); bias: -B; eps: -e (relative to the
    first outer iteration's violation 1-norm, default 0.1); max_iter: outer iterations (300).
    ``on_iteration(iteration, n_active, gnorm1, w, beta)`` after each outer iteration if given.

    beta0: (l,) a warm start, e.g. the ``beta`` of an earlier SVRDualSolution at another C or
    with other sample weights; it is projected into the current feasible set (-s 13:
    clipped to |beta_i| <= C_i; -s 12: unbounded; 0 where C_i = 0) and w starts as w(beta).
    The stopping rule then keeps the cold start's reference, not the 1-norm of the warm
    start's first outer iteration (already small: it would demand a far tighter tolerance than
    a cold start). That reference is measured during the first outer iteration while beta
    moves, so it is obtained by running the cold start's first outer iteration (from beta = 0,
    same seed) and discarding it: one extra pass over the data, not counted in ``n_iter``,
    after which the warm start stops exactly where a cold start's rule would. (The 1-norm
    evaluated at beta = 0 alone, sum_i max(0, |y_i| - p), can be several times larger.) If
    the reference is 0, beta = 0 is optimal and beta0 is ignored. Without beta0 nothing
    changes.
    """
    y, C, p, bias, eps = _check_common(X, y, C, p, bias, eps)
    loss = _loss_code(loss)
    n_rows = X.shape[0]
    if beta0 is not None:
        beta0 = np.ascontiguousarray(beta0, dtype=np.float64)
        if beta0.shape != (n_rows,):
            raise InvalidInputError(f"beta0 must have shape ({n_rows},), got {beta0.shape}")
        if not np.all(np.isfinite(beta0)):
            raise InvalidInputError("beta0 must be finite")
    bucket_size, buckets_per_group = choose_order(
        X, np.ones(X.shape[0]), bucket_size, buckets_per_group, seed
    )
    n_w = X.shape[1] + (1 if bias >= 0 else 0)
    w = np.zeros(n_w)
    rec = np.empty((n_rows, 4))
    row_index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    no_beta0 = np.zeros(0)
    trainable = _prepare_svr(
        X.indptr, X.indices, X.data, bias, y, C, loss, rec, row_index_dtype, no_beta0, False, w
    )
    active = np.empty(max(n_rows, 1), dtype=row_index_dtype)
    fstate = np.array([np.inf, 0.0, 0.0, 0.0])
    istate = np.array([reset_active(active, trainable), 0, 0, 0], dtype=np.int64)
    rng = new_state(seed)
    use_prefetch = not cache_resident(X, rec.itemsize * rec.shape[1])

    def run(n_epochs: int) -> None:
        dcd_svr_kernel(
            X.indptr, X.indices, X.data, bias, loss, p, rec, w, active, trainable, fstate,
            istate, rng, eps, n_epochs, bool(shrinking), int(bucket_size),
            int(buckets_per_group), use_prefetch,
        )  # fmt: skip

    if beta0 is not None:
        # The cold start's reference: its first outer iteration, run from beta = 0 with the
        # same seed (so the same value a cold start gets) and then discarded.
        run(1)
        gnorm1_ref = float(fstate[_F_GNORM1_INIT])
        use_beta0 = gnorm1_ref > 0.0  # else beta = 0 is optimal: restart cold, ignore beta0
        w[:] = 0.0
        _prepare_svr(
            X.indptr, X.indices, X.data, bias, y, C, loss, rec, row_index_dtype,
            beta0 if use_beta0 else no_beta0, use_beta0, w,
        )  # fmt: skip
        fstate[:] = (np.inf, gnorm1_ref if use_beta0 else 0.0, 0.0, 0.0)
        istate[:] = (reset_active(active, trainable), 0, 0, int(use_beta0))
        rng[:] = new_state(seed)

    if on_iteration is None:
        run(int(max_iter))
    else:
        while istate[_I_ITER] < max_iter and not istate[_I_CONVERGED]:
            run(1)
            on_iteration(
                int(istate[_I_ITER]),
                int(istate[_I_ACTIVE]),
                float(fstate[_F_GNORM1_NEW]),
                w,
                np.ascontiguousarray(rec[:, _BETA]),
            )
    beta = np.ascontiguousarray(rec[:, _BETA])
    primal = svr_primal_value(X, bias, y, C, w, loss, p)
    dual = svr_dual_value(X, bias, y, C, beta, loss, p)
    return SVRDualSolution(
        w=w,
        beta=beta,
        n_iter=int(istate[_I_ITER]),
        converged=bool(istate[_I_CONVERGED]),
        primal=primal,
        dual=dual,
        gap=primal - dual,
        gnorm1=float(fstate[_F_GNORM1_NEW]),
        gnorm1_init=float(fstate[_F_GNORM1_INIT]),
        bucket_size=bucket_size,
        buckets_per_group=buckets_per_group,
    )


# ----------------------------------------------------------------------------- LIBLINEAR's -s


def solve_svr(
    solver: int,
    X,
    y: np.ndarray,
    C: np.ndarray,
    p: float = DEFAULT_P,
    bias: float = -1.0,
    eps: float | None = None,
    *,
    regularize_bias: bool = True,
    shrinking: bool = True,
    seed: int = 1,
    bucket_size: int | None = None,
    buckets_per_group: int | None = None,
    dual_max_iter: int = DUAL_MAX_ITER,
    verbose: bool = False,
    beta0: np.ndarray | None = None,
):
    """LIBLINEAR 2.50's train_one for -s 11/12/13, including the -s 12 -> -s 11 fallback.

    eps None: LIBLINEAR's default for the solver. -R only with -s 11 (as LIBLINEAR).
    dual_max_iter: LIBLINEAR's cap of 300 outer iterations (changeable for tests). Returns
    the SVRPrimalSolution (-s 11, or -s 12 after the fallback) or the SVRDualSolution.
    beta0: (l,) warm start of the dual solvers (-s 12/13; see ``solve_svr_dual``); the -s 12
    fallback to -s 11 starts from the dual's w as without it. -s 11 takes a warm start as
    ``solve_svr_primal(w0=...)``; beta0 with -s 11 is an error.
    """
    if solver not in SOLVER_LOSS:
        raise ValueError(f"SVR solvers are 11, 12 and 13, not {solver}")
    if eps is None:
        eps = DEFAULT_EPS[solver]
    if not regularize_bias and solver != 11:
        raise InvalidInputError("-R (unregularised bias) is supported by -s 11 only")
    if beta0 is not None and solver == 11:
        raise InvalidInputError("beta0 is a dual warm start (-s 12/13); -s 11 takes w0")
    if solver == 11:
        return solve_svr_primal(
            X, y, C, p, bias, eps, regularize_bias=regularize_bias, verbose=verbose
        )
    sol = solve_svr_dual(
        X, y, C, p, SOLVER_LOSS[solver], bias, eps, dual_max_iter, shrinking=shrinking,
        seed=seed, bucket_size=bucket_size, buckets_per_group=buckets_per_group, beta0=beta0,
    )  # fmt: skip
    if sol.n_iter >= dual_max_iter:
        if solver == 12:
            if verbose:
                print(
                    "\nWARNING: reaching max number of iterations\nSwitching to use -s 11\n",
                    file=sys.stderr,
                )
            return solve_svr_primal(
                X, y, C, p, bias, eps * FALLBACK_TOL_FACTOR, w0=sol.w, verbose=verbose
            )
        if verbose:
            print(
                "\nWARNING: reaching max number of iterations\nUsing -s 11 may be faster\n",
                file=sys.stderr,
            )
    return sol


__all__ = [
    "SVRPrimalSolution",
    "SVRDualSolution",
    "solve_svr_primal",
    "solve_svr_dual",
    "solve_svr",
    "svr_loss_value",
    "svr_primal_value",
    "svr_dual_value",
    "svr_dual_point",
    "svr_weights_from_dual",
    "svr_objectives",
    "SVR_LOSS_L1",
    "SVR_LOSS_L2",
    "DEFAULT_P",
    "DEFAULT_EPS",
]
