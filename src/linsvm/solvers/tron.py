"""Trust-region Newton method (TRON) for -s 0 (logistic) and -s 2 (L2-loss SVM): a reference.

Not part of linsvm: kept for ``benchmarks/bench_newton_vs_tron.py``, which compares it with the
line-search Newton method linsvm uses (``linsvm.solvers.newton``). The same problem
(docs/architecture.md, "objective")::

    min_w  P(w) = 1/2 w'w + sum_i C_i xi(y_i w'x_i)

solved by the trust-region Newton method of Lin, Weng and Keerthi (2008) as LIBLINEAR 1.x-2.30
ran it (``tron.cpp``; LIBLINEAR 2.40 replaced it by the line-search Newton of ``newton.py``).
Written afresh over CSR arrays, reusing ``newton.py``'s kernels (function value, gradient,
Hessian selection and diagonal preconditioner in one pass; Hessian-vector products).

Each iteration, at w with gradient g and (generalised) Hessian H:

- Steihaug's truncated conjugate gradient for min_s q(s) = g's + 1/2 s'Hs within the trust
  region ||s||_M <= delta (``TRON::trpcg``): CG from s = 0, stopped when the residual
  satisfies ||r||_{M^-1} <= eps_cg ||g||_{M^-1} (eps_cg = 0.1, LIBLINEAR's ``train_one``),
  or, when a CG step leaves the region, by moving along the last direction to the boundary.
  ``preconditioned=True`` (LIBLINEAR 2.20-2.30, Hsia, Chiang and Lin 2018) uses
  M = (1 - a) I + a diag(H), a = 0.01, recomputed at every accepted w; ``False`` uses M = I
  (LIBLINEAR <= 2.11's plain TRON).
- the ratio test of the actual reduction actred = P(w) - P(w + s) against the predicted one
  prered = -q(s): the step is accepted when actred > eta0 prered, eta0 = 1e-4;
- the radius update with eta1 = 0.25, eta2 = 0.75, sigma1 = 0.25, sigma2 = 0.5, sigma3 = 4
  and the interpolated step factor alpha = max(sigma1, -1/2 g's / (P(w+s) - P(w) - g's))
  (sigma3 when the denominator is <= 0): actred < eta0 prered -> delta = min(alpha ||s||,
  sigma2 delta); < eta1 prered -> max(sigma1 delta, min(alpha ||s||, sigma2 delta));
  < eta2 prered -> max(sigma1 delta, min(alpha ||s||, sigma3 delta)); otherwise sigma3 delta
  when CG reached the boundary, else max(delta, min(alpha ||s||, sigma3 delta));
- initial radius ||g(w0)||_M, then after the first CG solve delta = min(delta, ||s||_M);
- stop when ||g|| <= eps ||g(0)|| (gradient norm at w = 0, as LIBLINEAR); also when
  prered <= 0, when |actred| and |prered| are both <= 1e-12 |P|, when P < -1e32, or after
  ``max_iter`` accepted iterations (1000, TRON's default).

The trial value P(w + s) costs one pass over the rows for the margins y_i x_i's; the margins
are kept, so an accepted step needs one more pass (gradient, selection, preconditioner) and a
rejected one none.

Counted as LIBLINEAR counts: ``n_iter`` accepted iterations; ``n_trials`` CG solves (accepted
+ rejected); ``n_cg_iter`` Hessian-vector products.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_value
from linsvm.solvers.newton import hessian_vector, value_grad

# Constants of LIBLINEAR 2.20-2.30's tron.cpp (TRON::tron) and train_one (eps_cg).
ETA0 = 1.0e-4  # accept the step when actred > eta0 prered
ETA1 = 0.25
ETA2 = 0.75
SIGMA1 = 0.25
SIGMA2 = 0.5
SIGMA3 = 4.0
EPS_CG = 0.1  # train_one: eps_cg = 0.1 (0.5 when warm-started with -i init_sol)
EPS_CG_WARM = 0.5
SMALL_REDUCTION = 1.0e-12  # stop when |actred| and |prered| <= 1e-12 |f|
F_LOWER_LIMIT = -1.0e32
DEFAULT_MAX_ITER = 1000
# Safety caps that LIBLINEAR does not have: CG steps per solve (n_w + 5) and rejected steps in
# a row (the radius shrinks by >= 2x per rejection, so 200 of them mean a zero radius).
MAX_REJECTIONS = 200


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _m_dot(u, M, v):
    t = 0.0
    for j in range(u.shape[0]):
        t += u[j] * M[j] * v[j]
    return t


@njit(cache=True, nogil=True)
def trpcg(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, g, M, delta, eps_cg,
          s, r, d, Hd, z):  # fmt: skip
    """Steihaug CG for H s = -g within ||s||_M <= delta, preconditioned by diag(M).

    s, r, d, Hd, z: work arrays of length n_w; on return s is the step and r = -g - H s.
    Returns (CG steps = Hessian-vector products, reached the boundary).
    """
    n_w = g.shape[0]
    for j in range(n_w):
        s[j] = 0.0
        r[j] = -g[j]
        z[j] = r[j] / M[j]
        d[j] = z[j]
    z_dot_r = 0.0
    for j in range(n_w):
        z_dot_r += z[j] * r[j]
    cgtol = eps_cg * np.sqrt(z_dot_r)
    max_cg = n_w + 5
    cg_iter = 0
    while cg_iter < max_cg:
        if np.sqrt(z_dot_r) <= cgtol:
            break
        cg_iter += 1
        d_hd = hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, d, Hd)
        if d_hd <= 1.0e-300:
            # H is singular along d (possible only with an unregularised bias): go to the
            # boundary along the descent direction d.
            d_hd = 0.0
        alpha = z_dot_r / d_hd if d_hd > 0.0 else np.inf
        # would s + alpha d leave the region? ||s + a d||_M^2 = sMs + 2a sMd + a^2 dMd
        s_md = _m_dot(s, M, d)
        s_ms = _m_dot(s, M, s)
        d_md = _m_dot(d, M, d)
        if d_hd == 0.0 or s_ms + alpha * (2.0 * s_md + alpha * d_md) > delta * delta:
            dsq = delta * delta
            rad = np.sqrt(max(s_md * s_md + d_md * (dsq - s_ms), 0.0))
            if s_md >= 0.0:
                tau = (dsq - s_ms) / (s_md + rad)
            else:
                tau = (rad - s_md) / d_md
            for j in range(n_w):
                s[j] += tau * d[j]
                r[j] -= tau * Hd[j]
            return cg_iter, True
        for j in range(n_w):
            s[j] += alpha * d[j]
            r[j] -= alpha * Hd[j]
            z[j] = r[j] / M[j]
        z_dot_r_new = 0.0
        for j in range(n_w):
            z_dot_r_new += z[j] * r[j]
        beta = z_dot_r_new / z_dot_r
        for j in range(n_w):
            d[j] = z[j] + beta * d[j]
        z_dot_r = z_dot_r_new
    return cg_iter, False


@njit(cache=True, nogil=True)
def trial_value(indptr, indices, data, bias, y, C, rows, loss, reg_bias, w, margins,
                step_margins, s):  # fmt: skip
    """P(w + s), filling step_margins[i] = y_i x_i's for the rows in ``rows``."""
    n_w = w.shape[0]
    last = n_w - 1
    for p in range(rows.shape[0]):
        i = rows[p]
        t = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            t += s[np.uint64(indices[k])] * data[k]
        if bias >= 0.0:
            t += s[last] * bias
        step_margins[i] = y[i] * t
    total = 0.0
    for p in range(rows.shape[0]):
        i = rows[p]
        total += C[i] * loss_value(loss, margins[i] + step_margins[i])
    reg = 0.0
    for j in range(n_w):
        v = w[j] + s[j]
        reg += v * v
    if not reg_bias:
        v = w[last] + s[last]
        reg -= v * v
    return total + 0.5 * reg


@njit(cache=True, nogil=True)
def accept_step(rows, w, margins, step_margins, s):
    """w += s and margins += step_margins."""
    for p in range(rows.shape[0]):
        i = rows[p]
        margins[i] += step_margins[i]
    for j in range(w.shape[0]):
        w[j] += s[j]


# ----------------------------------------------------------------------------- driver


@dataclass
class TronResult:
    """What the trust-region Newton method returns."""

    w: np.ndarray  # (n [+1],) float64
    n_iter: int  # accepted iterations
    converged: bool  # ||g|| <= eps ||g(0)|| reached
    grad_norm: float  # ||g|| at the returned w
    grad_norm0: float  # ||g|| at w = 0
    n_cg_iter: int  # CG steps (Hessian-vector products) over all CG solves
    objective: float  # P(w) at the returned w (bias left out of 1/2 w'w with -R)
    stop_reason: str  # "converged", "max_iter", "small_reduction", "prered_nonpositive", ...
    n_trials: int = 0  # CG solves, accepted or rejected
    # per CG solve: (accepted iterations so far, P(w) after the trial, ||g||, CG steps, delta,
    # accepted)
    history: list[tuple] = field(default_factory=list)


def solve_primal_tron(
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
    preconditioned: bool = True,
    eps_cg: float | None = None,
    verbose: bool = False,
) -> TronResult:
    """Minimise 1/2 w'w + sum_i C_i xi(y_i w'x_i) by LIBLINEAR's trust-region Newton method.

    X: CSR (l, n), float32/float64 values, int32/int64 indices; y: (l,) float64 of +1/-1;
    C: (l,) float64 per-row cost (0 drops the row); loss: LOSS_LOGISTIC (-s 0) or
    LOSS_SQUARED_HINGE (-s 2); bias: LIBLINEAR's -B; eps: the relative gradient-norm tolerance
    (for LIBLINEAR's -e pass ``linsvm.solvers.solver_tolerance(SOLVERS[s], e, y)``); w0: an
    initial w; regularize_bias=False: LIBLINEAR's -R; max_iter caps accepted iterations;
    preconditioned: LIBLINEAR 2.20-2.30's diagonal preconditioner (False: LIBLINEAR <= 2.11);
    eps_cg: CG relative tolerance (default 0.1, or 0.5 with ``w0`` as LIBLINEAR's -i).
    verbose: TRON's progress lines on stderr.
    """
    if loss not in (LOSS_LOGISTIC, LOSS_SQUARED_HINGE):
        raise ValueError(f"the trust-region Newton solver handles losses 1 and 2, not {loss}")
    bias = float(bias)
    if not regularize_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    eps = float(eps)
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    if eps_cg is None:
        eps_cg = EPS_CG if w0 is None else EPS_CG_WARM
    eps_cg = float(eps_cg)
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
    g, M, s, r, d, Hd, z = (np.empty(n_w) for _ in range(7))
    w = np.zeros(n_w)

    def evaluate(compute_margins: bool, want_value: bool):
        out = value_grad(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias,
            w, margins, compute_margins, want_value, g, M, sel, dsel,
        )  # fmt: skip
        if not preconditioned:
            M[:] = 1.0
        return out

    def regulariser() -> float:
        ww = float(np.dot(w, w))
        if not reg_bias:
            ww -= w[-1] * w[-1]
        return 0.5 * ww

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

    history: list[tuple] = []
    n_iter = 0
    n_trials = 0
    n_cg_total = 0
    rejections = 0
    converged = grad_norm <= eps * grad_norm0
    stop_reason = "converged" if converged else "max_iter"
    delta = float(np.sqrt(_m_dot(g, M, g)))
    while not converged and n_iter < max_iter:
        n_cg, at_boundary = trpcg(
            X.indptr, X.indices, X.data, bias, sel, dsel, n_sel, reg_bias, g, M, delta,
            eps_cg, s, r, d, Hd, z,
        )  # fmt: skip
        n_cg_total += n_cg
        n_trials += 1
        gs = float(np.dot(g, s))
        prered = -0.5 * (gs - float(np.dot(s, r)))
        f_new = trial_value(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias, w, margins,
            step_margins, s,
        )  # fmt: skip
        actred = f - f_new
        s_norm = float(np.sqrt(_m_dot(s, M, s)))
        if n_trials == 1:
            delta = min(delta, s_norm)
        denom = f_new - f - gs
        alpha = SIGMA3 if denom <= 0 else max(SIGMA1, -0.5 * (gs / denom))
        if actred < ETA0 * prered:
            delta = min(alpha * s_norm, SIGMA2 * delta)
        elif actred < ETA1 * prered:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA2 * delta))
        elif actred < ETA2 * prered:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA3 * delta))
        elif at_boundary:
            delta = SIGMA3 * delta
        else:
            delta = max(delta, min(alpha * s_norm, SIGMA3 * delta))
        accepted = actred > ETA0 * prered
        if verbose:
            print(
                f"iter {n_iter + 1:2d} act {actred:5.3e} pre {prered:5.3e} delta {delta:5.3e} "
                f"f {f:5.3e} |g| {grad_norm:5.3e} CG {n_cg:3d}",
                file=sys.stderr,
            )
        if accepted:
            rejections = 0
            n_iter += 1
            accept_step(rows, w, margins, step_margins, s)
            f = f_new
            _, n_sel, grad_norm = evaluate(False, False)
            history.append((n_iter, float(f), float(grad_norm), int(n_cg), delta, True))
            if grad_norm <= eps * grad_norm0:
                converged = True
                stop_reason = "converged"
                break
        else:
            rejections += 1
            history.append((n_iter, float(f_new), float(grad_norm), int(n_cg), delta, False))
        if f < F_LOWER_LIMIT:
            stop_reason = "f_unbounded"
            break
        if prered <= 0:
            stop_reason = "prered_nonpositive"
            break
        if abs(actred) <= SMALL_REDUCTION * abs(f) and abs(prered) <= SMALL_REDUCTION * abs(f):
            stop_reason = "small_reduction"
            break
        if rejections >= MAX_REJECTIONS:
            stop_reason = "radius_vanished"
            break
    if verbose and stop_reason not in ("converged",):
        print(f"WARNING: TRON stopped: {stop_reason}", file=sys.stderr)
    return TronResult(
        w=w,
        n_iter=n_iter,
        converged=bool(converged),
        grad_norm=float(grad_norm),
        grad_norm0=float(grad_norm0),
        n_cg_iter=n_cg_total,
        objective=float(f),
        stop_reason=stop_reason,
        history=history,
        n_trials=n_trials,
    )


__all__ = ["TronResult", "solve_primal_tron"]
