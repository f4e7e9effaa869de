"""TRON (-s 40): the trust-region Newton method of LIBLINEAR 1.x for the L2-loss SVM.

The problem is -s 2's (docs/architecture.md, "The problems"), for one binary sub-problem::

    min_w  P(w) = 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2

solved by the trust-region Newton method of Lin, Weng and Keerthi ("Trust region Newton method
for large-scale logistic regression", JMLR 2008) as LIBLINEAR 1.x ran it (``tron.cpp`` and
``train_one``; 2.0-2.30 kept TRON with the changes listed below, 2.40 replaced it by the
line-search Newton method of ``newton.py``). Written afresh over CSR arrays; the function
value, gradient and Hessian selection (one pass over the rows) and the Hessian-vector products
are ``newton.py``'s kernels, shared as they are.

One trial at w, with gradient g and generalised Hessian H = I + X_I' D_I X_I:

- truncated conjugate gradient (Steihaug) for min_s q(s) = g's + 1/2 s'Hs within the trust
  region ||s|| <= delta, from s = 0 (``trust_region_cg``): it stops when ||r|| <= eps_cg ||g||
  (r = -g - Hs, eps_cg = 0.1), or, when a CG step would leave the region, at the point where
  the last direction crosses the boundary;
- the actual reduction actred = P(w) - P(w + s) against the predicted one prered = -q(s): the
  step is taken (w <- w + s, an accepted iteration) when actred > eta0 prered, eta0 = 1e-4;
- the radius: before the first accepted iteration delta <- min(delta, ||s||); then, with
  alpha = max(sigma1, -1/2 g's / (P(w+s) - P(w) - g's)) (sigma3 when that denominator is
  <= 0), eta1 = 0.25, eta2 = 0.75, sigma1 = 0.25, sigma2 = 0.5, sigma3 = 4::

      actred < eta0 prered:  delta = min(alpha ||s||, sigma2 delta)
      actred < eta1 prered:  delta = max(sigma1 delta, min(alpha ||s||, sigma2 delta))
      actred < eta2 prered:  delta = max(sigma1 delta, min(alpha ||s||, sigma3 delta))
      otherwise:             delta = max(delta, min(alpha ||s||, sigma3 delta))

- the initial radius is ||g(w0)||; stop when ||g(w)|| <= eps ||g(0)|| after an accepted
  iteration (eps: LIBLINEAR's -e times max(min(#pos, #neg), 1)/l, ``solver_tolerance``), or
  when actred = 0 and prered <= 0 (``NO_REDUCTION``), when |actred| and |prered| are both
  <= 1e-12 |P(w)| (``SMALL_REDUCTION``), when P(w) < -1e32 (never, for a loss >= 0), or after
  ``max_iter`` accepted iterations (1000).

The evidence is LIBLINEAR's git history (github.com/cjlin1/liblinear). Its first commit (June
2009) already passes eps * min(#pos, #neg)/l to TRON for -s 0 and -s 2, and its README
documents that rule; December 2011 made it max(min(#pos, #neg), 1)/l, which is
``solver_tolerance``'s. Through 1.x, ``TRON::tron`` starts from w = 0 and has no
preconditioner, no cap on CG steps and the radius rule above (constants unchanged since 2009).
2.0 (June 2015) added eps_cg (0.5 after an initial solution) and takes ||g(0)|| at w = 0
whatever the start. 2016-2018 removed the actred = 0 test (prered <= 0 stops alone),
enlarged the radius to sigma3 delta after a successful step that reached the boundary, added
the preconditioner M = (1 - a) I + a diag(H), a = 0.01 (norms in M: ||s||_M, ||r||_{M^-1};
2.20-2.30), applied the first-trial adjustment of delta once only and capped CG at max(n, 5)
steps. Built from that history (commit f944f28, July 2013), LIBLINEAR 1.x's ``train -s 2`` on
a9a prints per trial the same actred, prered, delta, f, ||g|| and CG steps as this solver's
hook, to the 4 digits printed, until rounding in long CG runs (tens of steps) parts them.

Beyond 1.x:

- ``options["preconditioned"] = True`` runs LIBLINEAR 2.20-2.30's variant: the preconditioner
  and all the 2.x rules just listed;
- ``sub.w0`` (init_sol) starts from w0 as 2.x does (||g(0)|| still at w = 0); eps_cg stays
  0.1 (``options["eps_cg"]`` sets it; 2.x used 0.5 after an initial solution);
- ``regularize_bias=False`` (-R, which LIBLINEAR added with 2.40's Newton method) leaves the
  bias weight out of 1/2 w'w as ``newton.py`` does;
- safety stops LIBLINEAR 1.x lacks: at most max(n_w, 5) CG steps per trial (2.x's cap; exact
  CG needs at most n_w), and ``RADIUS_VANISHED`` after ``MAX_REJECTIONS`` rejected trials in a
  row (the radius at least halves at each, so by then prered is far below 1e-12 |P|).

The hook is called once before the first trial (iteration 0, LIBLINEAR's starting point) and
after every trial (one CG solve and its ratio test, LIBLINEAR's "iter" line), accepted or not:
a trial is TRON's unit of work and a rejected one changes the state (the radius).
``Progress.iteration`` counts accepted iterations (LIBLINEAR's #iter), so it repeats after a
rejected trial; figures ``accepted`` and ``step`` (1 taken, 0 rejected) tell them apart.
``Progress.state()`` is resumable exactly: w, the margins y_i w'x_i as the trials updated them,
P(w), ||g(0)||, the radius, the counters, the history and the stop code; the gradient, the
Hessian selection and the preconditioner follow from w and the margins exactly.

The trial value P(w + s) costs one pass over the rows (the margins of s, kept); an accepted
trial costs one more (gradient and selection), a rejected one none. So a run costs about
(trials + accepted iterations + Hessian-vector products) passes over the data.

``solve_tron_lr`` runs the same method on the logistic loss (-s 0's problem); it is not a
registered solver (the benchmark compares it with -s 0).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..data import as_csr, check_bias
from ..errors import InvalidInputError
from ..objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_value
from ..sparse_rows import row_dot_in_order
from . import _base
from ._base import Hook, Progress, Solution, Subproblem, ask, copy_state
from ._columns import check_binary_targets, check_max_iter, check_w0
from ._newton_common import (
    check_gradient_at_zero,
    check_resume_keys,
    final_stop_reason,
    newton_progress,
    newton_solution,
    relative_gradient_norm,
    resume_values_damaged,
    rule_scale,
)
from .newton import _svc_bounds, hessian_vector, value_grad

# Constants of LIBLINEAR 1.x's TRON::tron and TRON::trcg (unchanged through 2.30).
ETA0 = 1.0e-4  # take the step when actred > eta0 prered
ETA1 = 0.25
ETA2 = 0.75
SIGMA1 = 0.25
SIGMA2 = 0.5
SIGMA3 = 4.0
EPS_CG = 0.1  # CG stops when ||r|| <= eps_cg ||g||
SMALL_REDUCTION_RATIO = 1.0e-12  # stop when |actred| and |prered| <= 1e-12 |P(w)|
F_LOWER_LIMIT = -1.0e32
PRECONDITIONER_MIX = 0.01  # the 2.20-2.30 variant: M = (1 - a) I + a diag(H)
# A safety stop LIBLINEAR does not have: rejected trials in a row.
MAX_REJECTIONS = 200

# Why the loop stopped, as kept in a resumable state (0: it has not).
_RUNNING, _CONVERGED, _SMALL, _NO_REDUCTION, _UNBOUNDED, _VANISHED = 0, 1, 2, 3, 4, 5
# stop reasons beyond _base's: LIBLINEAR's "actred and prered <= 0" (2.x: "prered <= 0"),
# "f < -1.0e+32", and the safety stop
NO_REDUCTION = "no_reduction"
F_UNBOUNDED = "f_unbounded"
RADIUS_VANISHED = "radius_vanished"
_STOP_REASONS = {
    _CONVERGED: _base.CONVERGED,
    _SMALL: _base.SMALL_REDUCTION,
    _NO_REDUCTION: NO_REDUCTION,
    _UNBOUNDED: F_UNBOUNDED,
    _VANISHED: RADIUS_VANISHED,
}
# one history row per trial: accepted iterations so far, P(w + s), ||g(w)||, CG steps,
# radius after the trial, accepted (1/0)
_HISTORY_COLUMNS = 6


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _m_dot(u, M, v) -> float:
    """u' diag(M) v."""
    t = 0.0
    for j in range(u.shape[0]):
        t += u[j] * M[j] * v[j]
    return t


@njit(cache=True, nogil=True)
def trust_region_cg(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, g, M, delta,
                    gamma, eps_cg, max_cg, s, r, d, Hd, z):  # fmt: skip
    """Truncated CG for H s = -g within ||s||_M <= delta, preconditioned by diag(M).

    M = 1 everywhere is LIBLINEAR 1.x's plain CG in the Euclidean norm. g, M: shape (n_w,);
    s, r, d, Hd, z: work arrays of length n_w; on return s is the step and r = -g - H s.
    H is ``hessian_vector``'s over the selection sel[:n_sel] with weights dsel.
    The iteration runs on g / gamma and delta / gamma, s scaled back at the end: with gamma
    a power of two near ||g|| every figure is the unscaled one's to the bit, but d'Hd (of
    order C ||X g||^2 unscaled) and r'z stay finite where C or the features are large
    (unpreconditioned, d'Hd overflowed from C = 1e101 on unit features: no step, w = 0).
    Returns (CG steps = Hessian-vector products, whether the step reached the boundary).
    """
    n_w = g.shape[0]
    delta = delta / gamma
    z_dot_r = 0.0
    for j in range(n_w):
        s[j] = 0.0
        r[j] = -g[j] / gamma
        z[j] = r[j] / M[j]
        d[j] = z[j]
        z_dot_r += z[j] * r[j]
    cg_tol = eps_cg * np.sqrt(z_dot_r)
    cg_iter = 0
    while cg_iter < max_cg:
        if np.sqrt(z_dot_r) <= cg_tol:
            break
        cg_iter += 1
        d_hd = hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, d, Hd)
        # d'Hd = 0 only along the unregularised bias with no row selected: H is singular
        # there and the model decreases without bound, so the step goes to the boundary
        alpha = z_dot_r / d_hd if d_hd > 0.0 else np.inf
        s_md = _m_dot(s, M, d)
        s_ms = _m_dot(s, M, s)
        d_md = _m_dot(d, M, d)
        # ||s + alpha d||_M^2 = s'Ms + 2 alpha s'Md + alpha^2 d'Md
        if not (d_hd > 0.0) or s_ms + alpha * (2.0 * s_md + alpha * d_md) > delta * delta:
            # the positive root tau of ||s + tau d||_M = delta, in the form that does not
            # cancel for either sign of s'Md
            dsq = delta * delta
            rad = np.sqrt(max(s_md * s_md + d_md * (dsq - s_ms), 0.0))
            if s_md >= 0.0:
                tau = (dsq - s_ms) / (s_md + rad)
            else:
                tau = (rad - s_md) / d_md
            for j in range(n_w):
                s[j] = (s[j] + tau * d[j]) * gamma
                r[j] = (r[j] - tau * Hd[j]) * gamma
            return cg_iter, True
        z_dot_r_new = 0.0
        for j in range(n_w):
            s[j] += alpha * d[j]
            r[j] -= alpha * Hd[j]
            z[j] = r[j] / M[j]
            z_dot_r_new += z[j] * r[j]
        beta = z_dot_r_new / z_dot_r
        for j in range(n_w):
            d[j] = z[j] + beta * d[j]
        z_dot_r = z_dot_r_new
    for j in range(n_w):
        s[j] *= gamma
        r[j] *= gamma
    return cg_iter, False


def _power_of_two_near(x: float) -> float:
    """2^e with x <= 2^e < 2x (1 for 0, an infinite or a NaN x): a scale that multiplies
    and divides exactly."""
    if not 0.0 < x < math.inf:
        return 1.0
    return math.ldexp(1.0, math.frexp(x)[1])


@njit(cache=True, nogil=True)
def trial_value(indptr, indices, data, bias, y, C, rows, loss, reg_bias, w, margins,
                step_margins, s) -> float:  # fmt: skip
    """P(w + s), filling step_margins[i] = y_i x_i's for the rows in ``rows`` (C_i > 0).

    margins[i] holds y_i x_i'w; the loss is taken at margins[i] + step_margins[i], so that an
    accepted step only adds the two (``accept_step``).
    """
    n_w = w.shape[0]
    last = n_w - 1
    has_bias = bias >= 0.0
    total = 0.0
    for p in range(rows.shape[0]):
        i = rows[p]
        t = row_dot_in_order(indptr, indices, data, i, s)
        if has_bias:
            t += s[last] * bias
        step_margins[i] = y[i] * t
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
def accept_step(rows, w, margins, step_margins, s) -> None:
    """w += s and margins += step_margins (over ``rows``)."""
    for p in range(rows.shape[0]):
        i = rows[p]
        margins[i] += step_margins[i]
    for j in range(w.shape[0]):
        w[j] += s[j]


# ----------------------------------------------------------------------------- the driver


def _checked(sub: Subproblem):
    """(X, y, C, bias, eps, max_iter, eps_cg, preconditioned) of a checked sub-problem, or a
    one-line InvalidInputError."""
    X = as_csr(sub.X, check_finite=not sub.values_checked)
    n_rows = X.shape[0]
    try:
        bias = float(sub.bias)
        eps = float(sub.eps)
        eps_cg = float(sub.option("eps_cg", EPS_CG))
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"bias, eps and eps_cg must be numbers, got {sub.bias!r}, {sub.eps!r}, "
            f"{sub.option('eps_cg')!r}"
        ) from None
    check_bias(bias)
    eps = _base.check_eps(eps)
    if not (0.0 < eps_cg < 1.0):
        raise InvalidInputError(f"eps_cg must be in (0, 1), got {eps_cg}")
    preconditioned = sub.option("preconditioned", False)
    if not isinstance(preconditioned, bool | np.bool_):
        raise InvalidInputError(f"preconditioned must be True or False, got {preconditioned!r}")
    if not sub.regularize_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    if sub.alpha0 is not None:
        raise InvalidInputError("alpha0 is a dual warm start; TRON (a primal solver) takes w0")
    if sub.feature_map is not None:
        raise InvalidInputError("TRON needs the mapped rows: materialise the feature map")
    y, C = check_binary_targets(sub.y, sub.C, n_rows)
    max_iter = check_max_iter(sub.max_iter)
    return X, y, C, bias, eps, max_iter, eps_cg, bool(preconditioned)


class _TronRun:
    """One TRON run on a checked sub-problem: its arrays, the work arrays of a trial, and the
    state the trials change (w, the margins, P(w), the radius, the counters, the history)."""

    def __init__(self, sub: Subproblem, loss: int, X, y, C, bias: float, eps: float,
                 eps_cg: float, preconditioned: bool) -> None:  # fmt: skip
        self.sub, self.loss, self.X, self.y, self.C, self.bias = sub, loss, X, y, C, bias
        self.eps, self.eps_cg, self.preconditioned = eps, eps_cg, preconditioned
        self.reg_bias = bool(sub.regularize_bias)
        n_rows = X.shape[0]
        n_w = X.shape[1] + (1 if bias >= 0 else 0)
        index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
        self.rows = np.flatnonzero(C > 0).astype(index_dtype)
        self.max_cg = max(n_w, 5)

        self.margins = np.zeros(n_rows)
        self.step_margins = np.zeros(n_rows)
        self.sel = np.empty(max(self.rows.shape[0], 1), dtype=index_dtype)
        self.dsel = np.empty(max(self.rows.shape[0], 1))
        self.g, self.M, self.s, self.r, self.d, self.Hd, self.z = (np.empty(n_w) for _ in range(7))
        self.w = np.zeros(n_w)
        self.history: list[tuple[int, float, float, int, float, int]] = []
        self.f = self.grad_norm0 = self.grad_norm = self.delta = math.nan
        self.n_sel = self.n_iter = self.n_trials = self.n_cg_total = self.rejections = 0
        self.stop = _RUNNING
        # the last trial's figures, for the hook
        self.last_n_cg, self.last_accepted = 0, False
        self.last_actred = self.last_prered = math.nan

    def evaluate(self, compute_margins: bool, want_value: bool) -> tuple[float, int, float]:
        """Loss sum, selected rows and ||g|| at w; g, the selection and M in place."""
        X = self.X
        loss_sum, n_selected, grad_norm = value_grad(
            X.indptr, X.indices, X.data, self.bias, self.y, self.C, self.rows, self.loss,
            self.reg_bias, self.w, self.margins, compute_margins, want_value, self.g, self.M,
            self.sel, self.dsel,
        )  # fmt: skip
        if not self.preconditioned:
            self.M[:] = 1.0  # value_grad computes 2.x's preconditioner; 1.x has none
        return float(loss_sum), int(n_selected), float(grad_norm)

    def regulariser(self) -> float:
        w = self.w
        ww = float(np.dot(w, w))
        if not self.reg_bias:
            ww -= w[-1] * w[-1]
        return 0.5 * ww

    def start(self, w0) -> None:
        """A fresh start from w = 0 or w0: P(w), ||g(0)|| (at w = 0 whatever the start), the
        first radius ||g(w0)|| and whether w0 already meets the rule."""
        # ||g|| at w = 0 for the stopping rule (the margins are 0 there)
        loss_sum, self.n_sel, self.grad_norm0 = self.evaluate(False, True)
        check_gradient_at_zero(self.grad_norm0, w0 is not None)
        self.grad_norm = self.grad_norm0
        if w0 is not None:
            self.w[:] = check_w0(w0, self.w.shape[0])
            loss_sum, self.n_sel, self.grad_norm = self.evaluate(True, True)
        self.f = loss_sum + self.regulariser()
        # ||g||_M, from g scaled (its squares overflow past ||g|| ~ 1e154)
        gamma = _power_of_two_near(self.grad_norm)
        scaled = self.g / gamma
        self.delta = gamma * math.sqrt(float(np.dot(scaled * self.M, scaled)))
        self.n_iter = self.n_trials = self.n_cg_total = self.rejections = 0
        met = self.grad_norm <= self.eps * rule_scale(self.grad_norm0)
        self.stop = _CONVERGED if met else _RUNNING

    def resume(self, saved: dict, max_iter: int) -> None:
        """Continue from ``Progress.state()``'s dict, checked first; the gradient, the
        selection and M follow from w and the margins."""
        _check_resume(saved, self.w.shape, self.margins.shape, max_iter)
        self.w[:] = saved["w"]
        self.margins[:] = saved["margins"]
        self.f = float(saved["f"])
        self.grad_norm0 = float(saved["grad_norm0"])
        self.delta = float(saved["delta"])
        self.n_iter = int(saved["n_iter"])
        self.n_trials = int(saved["n_trials"])
        self.n_cg_total = int(saved["n_cg_total"])
        self.rejections = int(saved["rejections"])
        self.stop = int(saved["stop"])
        self.history = [(int(k), float(fk), float(gn), int(cg), float(dk), int(acc))
                        for k, fk, gn, cg, dk, acc in np.asarray(saved["history"])]  # fmt: skip
        _, self.n_sel, self.grad_norm = self.evaluate(False, False)

    def trial(self) -> None:
        """One trial: the CG step within the radius, its ratio test, the new radius, the
        step taken when accepted, the history row and the stopping tests."""
        X = self.X
        n_cg, at_boundary = trust_region_cg(
            X.indptr, X.indices, X.data, self.bias, self.sel, self.dsel, self.n_sel,
            self.reg_bias, self.g, self.M, self.delta, _power_of_two_near(self.grad_norm),
            self.eps_cg, self.max_cg, self.s, self.r, self.d, self.Hd, self.z,
        )  # fmt: skip
        self.n_cg_total += n_cg
        self.n_trials += 1
        gs = float(np.dot(self.g, self.s))
        prered = -0.5 * (gs - float(np.dot(self.s, self.r)))
        f_new = float(trial_value(
            X.indptr, X.indices, X.data, self.bias, self.y, self.C, self.rows, self.loss,
            self.reg_bias, self.w, self.margins, self.step_margins, self.s,
        ))  # fmt: skip
        actred = self.f - f_new
        s_norm = math.sqrt(_m_dot(self.s, self.M, self.s))
        # 1.x adjusts the first radius at every trial before the first accepted iteration,
        # 2.20-2.30 at the first trial only
        if (self.n_trials == 1) if self.preconditioned else (self.n_iter == 0):
            self.delta = min(self.delta, s_norm)
        self.delta = _next_radius(self.delta, actred, prered, gs, f_new - self.f - gs, s_norm,
                                  self.preconditioned and at_boundary)  # fmt: skip
        accepted = actred > ETA0 * prered
        if accepted:
            self.n_iter += 1
            self.rejections = 0
            accept_step(self.rows, self.w, self.margins, self.step_margins, self.s)
            self.f = f_new
            _, self.n_sel, self.grad_norm = self.evaluate(False, False)
            if self.grad_norm <= self.eps * rule_scale(self.grad_norm0):
                self.stop = _CONVERGED
        else:
            self.rejections += 1
        self.history.append(
            (self.n_iter, f_new, self.grad_norm, int(n_cg), self.delta, int(accepted))
        )
        if self.stop == _RUNNING:
            self.stop = self._stop_after_trial(actred, prered)
        self.last_n_cg, self.last_accepted = n_cg, accepted
        self.last_actred, self.last_prered = actred, prered

    def _stop_after_trial(self, actred: float, prered: float) -> int:
        """The stop code after a trial that did not converge (_RUNNING: go on)."""
        f = self.f
        if f < F_LOWER_LIMIT:
            return _UNBOUNDED
        if prered <= 0 and (self.preconditioned or actred == 0):
            return _NO_REDUCTION
        if (abs(actred) <= SMALL_REDUCTION_RATIO * abs(f)
                and abs(prered) <= SMALL_REDUCTION_RATIO * abs(f)):  # fmt: skip
            return _SMALL
        if self.rejections >= MAX_REJECTIONS:
            return _VANISHED
        return _RUNNING

    def state(self) -> dict[str, np.ndarray]:
        table = np.array(self.history, dtype=np.float64).reshape(-1, _HISTORY_COLUMNS)
        return copy_state(
            w=self.w, margins=self.margins, f=self.f, grad_norm0=self.grad_norm0,
            delta=self.delta, n_iter=self.n_iter, n_trials=self.n_trials,
            n_cg_total=self.n_cg_total, rejections=self.rejections, stop=self.stop,
            history=table,
        )  # fmt: skip

    def progress(self, solver: int, bounds) -> Progress:
        return newton_progress(
            self.sub, solver, self.n_iter, self.w, self.f, self.grad_norm, self.grad_norm0,
            n_cg=self.last_n_cg, step=1.0 if self.last_accepted else 0.0, state=self.state,
            objectives=lambda: bounds(self.w, self.f)[:2],
            accepted=bool(self.last_accepted), actred=float(self.last_actred),
            prered=float(self.last_prered), delta=float(self.delta),
            n_trials=int(self.n_trials),
        )  # fmt: skip


def _next_radius(delta: float, actred: float, prered: float, gs: float, denom: float,
                 s_norm: float, boundary_success: bool) -> float:  # fmt: skip
    """The radius after a trial (module docstring); denom = P(w + s) - P(w) - g's;
    ``boundary_success``: the 2.20-2.30 variant's step reached the boundary."""
    alpha = SIGMA3 if denom <= 0 else max(SIGMA1, -0.5 * (gs / denom))
    if actred < ETA0 * prered:
        return min(alpha * s_norm, SIGMA2 * delta)
    if actred < ETA1 * prered:
        return max(SIGMA1 * delta, min(alpha * s_norm, SIGMA2 * delta))
    if actred < ETA2 * prered:
        return max(SIGMA1 * delta, min(alpha * s_norm, SIGMA3 * delta))
    if boundary_success:
        return SIGMA3 * delta
    return max(delta, min(alpha * s_norm, SIGMA3 * delta))


def _check_resume(saved: dict, w_shape: tuple, margins_shape: tuple, max_iter: int) -> None:
    """A one-line InvalidInputError unless ``saved`` is a state TRON could have left."""
    float_keys = ("w", "margins", "f", "grad_norm0", "delta", "history")
    count_keys = ("n_iter", "n_trials", "n_cg_total", "rejections", "stop")
    check_resume_keys(saved, float_keys + count_keys)
    floats = [np.asarray(saved[k]) for k in float_keys]
    counts = [np.asarray(saved[k]) for k in count_keys]
    table = np.asarray(saved["history"])
    if (floats[0].shape != w_shape or floats[1].shape != margins_shape
            or resume_values_damaged(floats, counts)
            or any(a.shape != () for a in floats[2:5])
            or int(saved["stop"]) not in (_RUNNING, *_STOP_REASONS)
            or int(saved["n_iter"]) > max_iter or float(saved["delta"]) < 0
            or table.ndim != 2 or table.shape[1] != _HISTORY_COLUMNS
            or table.shape[0] != int(saved["n_trials"])):  # fmt: skip
        raise InvalidInputError("the state to resume from is damaged")


def run_tron(sub: Subproblem, hook: Hook | None, loss: int, solver: int) -> Solution:
    """Minimise 1/2 w'w + sum_i C_i xi(y_i w'x_i) by LIBLINEAR's trust-region Newton method.

    ``loss``: LOSS_SQUARED_HINGE (-s 2's problem) or LOSS_LOGISTIC (-s 0's); ``solver`` the
    number reported. The objectives and the dual point at the returned w are -s 2's / -s 0's
    (``newton._svc_bounds``). sub.X: CSR (l, n), float32/float64; sub.y: (l,), y > 0
    positive; sub.C: (l,) per-row costs (C x class weight x sample weight; 0 drops the row);
    sub.eps: the relative gradient-norm tolerance (class-balance scaled, ``solver_tolerance``);
    sub.max_iter caps accepted iterations; sub.w0: initial w of shape (n_weights,);
    sub.options: ``preconditioned`` (False: LIBLINEAR 1.x; True: 2.20-2.30), ``eps_cg``
    (0.1). The hook is called before the first trial and after each one (module docstring).
    """
    if loss not in (LOSS_LOGISTIC, LOSS_SQUARED_HINGE):
        raise ValueError(f"TRON handles the losses {LOSS_SQUARED_HINGE} and {LOSS_LOGISTIC}, "
                         f"not {loss}")  # fmt: skip
    X, y, C, bias, eps, max_iter, eps_cg, preconditioned = _checked(sub)
    bounds = _svc_bounds(sub.but(X=X, y=y, C=C), loss)
    run = _TronRun(sub, loss, X, y, C, bias, eps, eps_cg, preconditioned)
    fresh = sub.resume is None
    if fresh:
        run.start(sub.w0)
    else:
        run.resume(sub.resume, max_iter)

    def progress() -> Progress:
        return run.progress(solver, bounds)

    went_on = ask(hook, progress) if fresh else True
    while went_on and run.stop == _RUNNING and run.n_iter < max_iter:
        run.trial()
        went_on = ask(hook, progress)
    reason = final_stop_reason(run.stop, _STOP_REASONS, went_on, run.n_iter, max_iter)
    return newton_solution(
        solver, run.w, run.f, bounds, run.n_iter, reason, run.grad_norm, run.grad_norm0,
        relative_gradient_norm(run.grad_norm, run.grad_norm0), run.n_cg_total, run.history,
        n_trials=run.n_trials, delta=float(run.delta),
    )  # fmt: skip


def solve_tron(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 40 (tron): the L2-loss SVM 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2 by LIBLINEAR
    1.x's trust-region Newton method (``run_tron``; -s 2's problem and model).

    Solution.alpha: alpha_i = 2 C_i max(0, 1 - y_i w'x_i), the dual point of w (None with -R);
    figures: f, grad_norm, grad_norm0, stop_ratio, n_cg_iter (Hessian-vector products),
    n_trials (CG solves, accepted or rejected), delta, history (per trial: accepted
    iterations so far, P(w + s), ||g(w)||, CG steps, radius after, accepted), n_sv.
    """
    return run_tron(sub, hook, LOSS_SQUARED_HINGE, 40)


def solve_tron_lr(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """TRON on -s 0's problem, 1/2 w'w + sum_i C_i log(1 + exp(-y_i w'x_i)) (not registered:
    for the benchmark against -s 0). As ``solve_tron``; alpha_i = C_i sigma(-y_i w'x_i)."""
    return run_tron(sub, hook, LOSS_LOGISTIC, 40)


__all__ = ["solve_tron", "solve_tron_lr", "run_tron", "trust_region_cg", "NO_REDUCTION",
           "F_UNBOUNDED", "RADIUS_VANISHED"]  # fmt: skip
