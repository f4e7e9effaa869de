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

from ..data import as_csr
from ..errors import InvalidInputError
from ..objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_value
from . import _base
from ._base import Hook, Progress, Solution, Subproblem, ask, copy_state
from ._columns import check_binary_targets, check_max_iter, check_w0
from ._newton_common import (
    check_resume_keys,
    final_stop_reason,
    newton_progress,
    newton_solution,
    relative_gradient_norm,
    resume_values_damaged,
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
                    eps_cg, max_cg, s, r, d, Hd, z):  # fmt: skip
    """Truncated CG for H s = -g within ||s||_M <= delta, preconditioned by diag(M).

    M = 1 everywhere is LIBLINEAR 1.x's plain CG in the Euclidean norm. g, M: shape (n_w,);
    s, r, d, Hd, z: work arrays of length n_w; on return s is the step and r = -g - H s.
    H is ``hessian_vector``'s over the selection sel[:n_sel] with weights dsel.
    Returns (CG steps = Hessian-vector products, whether the step reached the boundary).
    """
    n_w = g.shape[0]
    z_dot_r = 0.0
    for j in range(n_w):
        s[j] = 0.0
        r[j] = -g[j]
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
                s[j] += tau * d[j]
                r[j] -= tau * Hd[j]
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
    return cg_iter, False


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
        t = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            t += s[np.uint64(indices[k])] * data[k]
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
    if not math.isfinite(bias):
        raise InvalidInputError(f"bias must be finite, got {bias}")
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
    reg_bias = bool(sub.regularize_bias)
    n_rows = X.shape[0]
    n_w = X.shape[1] + (1 if bias >= 0 else 0)
    index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    rows = np.flatnonzero(C > 0).astype(index_dtype)
    max_cg = max(n_w, 5)

    margins = np.zeros(n_rows)
    step_margins = np.zeros(n_rows)
    sel = np.empty(max(rows.shape[0], 1), dtype=index_dtype)
    dsel = np.empty(max(rows.shape[0], 1))
    g, M, s, r, d, Hd, z = (np.empty(n_w) for _ in range(7))
    w = np.zeros(n_w)

    def evaluate(compute_margins: bool, want_value: bool) -> tuple[float, int, float]:
        """Loss sum, selected rows and ||g|| at w; g, the selection and M in place."""
        loss_sum, n_selected, grad_norm = value_grad(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias,
            w, margins, compute_margins, want_value, g, M, sel, dsel,
        )  # fmt: skip
        if not preconditioned:
            M[:] = 1.0  # value_grad computes 2.x's preconditioner; 1.x has none
        return float(loss_sum), int(n_selected), float(grad_norm)

    def regulariser() -> float:
        ww = float(np.dot(w, w))
        if not reg_bias:
            ww -= w[-1] * w[-1]
        return 0.5 * ww

    history: list[tuple[int, float, float, int, float, int]] = []
    if sub.resume is not None:
        saved = sub.resume
        float_keys = ("w", "margins", "f", "grad_norm0", "delta", "history")
        count_keys = ("n_iter", "n_trials", "n_cg_total", "rejections", "stop")
        check_resume_keys(saved, float_keys + count_keys)
        floats = [np.asarray(saved[k]) for k in float_keys]
        counts = [np.asarray(saved[k]) for k in count_keys]
        table = np.asarray(saved["history"])
        if (floats[0].shape != w.shape or floats[1].shape != margins.shape
                or resume_values_damaged(floats, counts)
                or any(a.shape != () for a in floats[2:5])
                or int(saved["stop"]) not in (_RUNNING, *_STOP_REASONS)
                or int(saved["n_iter"]) > max_iter or float(saved["delta"]) < 0
                or table.ndim != 2 or table.shape[1] != _HISTORY_COLUMNS
                or table.shape[0] != int(saved["n_trials"])):  # fmt: skip
            raise InvalidInputError("the state to resume from is damaged")
        w[:] = saved["w"]
        margins[:] = saved["margins"]
        f = float(saved["f"])
        grad_norm0 = float(saved["grad_norm0"])
        delta = float(saved["delta"])
        n_iter = int(saved["n_iter"])
        n_trials = int(saved["n_trials"])
        n_cg_total = int(saved["n_cg_total"])
        rejections = int(saved["rejections"])
        stop = int(saved["stop"])
        history = [(int(k), float(fk), float(gn), int(cg), float(dk), int(acc))
                   for k, fk, gn, cg, dk, acc in table]  # fmt: skip
        _, n_sel, grad_norm = evaluate(False, False)
        fresh = False
    else:
        # ||g|| at w = 0 for the stopping rule (the margins are 0 there)
        loss_sum, n_sel, grad_norm0 = evaluate(False, True)
        grad_norm = grad_norm0
        if sub.w0 is not None:
            w[:] = check_w0(sub.w0, n_w)
            loss_sum, n_sel, grad_norm = evaluate(True, True)
        f = loss_sum + regulariser()
        delta = math.sqrt(float(np.dot(g * M, g)))
        n_iter = n_trials = n_cg_total = rejections = 0
        stop = _CONVERGED if grad_norm <= eps * grad_norm0 else _RUNNING
        fresh = True
    last = {"n_cg": 0, "accepted": False, "actred": math.nan, "prered": math.nan}

    def state() -> dict[str, np.ndarray]:
        table = np.array(history, dtype=np.float64).reshape(-1, _HISTORY_COLUMNS)
        return copy_state(
            w=w, margins=margins, f=f, grad_norm0=grad_norm0, delta=delta, n_iter=n_iter,
            n_trials=n_trials, n_cg_total=n_cg_total, rejections=rejections, stop=stop,
            history=table,
        )  # fmt: skip

    def progress() -> Progress:
        return newton_progress(
            sub, solver, n_iter, w, f, grad_norm, grad_norm0, n_cg=last["n_cg"],
            step=1.0 if last["accepted"] else 0.0, state=state,
            objectives=lambda: bounds(w, f)[:2],
            accepted=bool(last["accepted"]), actred=float(last["actred"]),
            prered=float(last["prered"]), delta=float(delta), n_trials=int(n_trials),
        )  # fmt: skip

    went_on = ask(hook, progress) if fresh else True
    while went_on and stop == _RUNNING and n_iter < max_iter:
        n_cg, at_boundary = trust_region_cg(
            X.indptr, X.indices, X.data, bias, sel, dsel, n_sel, reg_bias, g, M, delta,
            eps_cg, max_cg, s, r, d, Hd, z,
        )  # fmt: skip
        n_cg_total += n_cg
        n_trials += 1
        gs = float(np.dot(g, s))
        prered = -0.5 * (gs - float(np.dot(s, r)))
        f_new = float(trial_value(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, reg_bias, w, margins,
            step_margins, s,
        ))  # fmt: skip
        actred = f - f_new
        s_norm = math.sqrt(_m_dot(s, M, s))
        # 1.x adjusts the first radius at every trial before the first accepted iteration,
        # 2.20-2.30 at the first trial only
        if (n_trials == 1) if preconditioned else (n_iter == 0):
            delta = min(delta, s_norm)
        denom = f_new - f - gs
        alpha = SIGMA3 if denom <= 0 else max(SIGMA1, -0.5 * (gs / denom))
        if actred < ETA0 * prered:
            delta = min(alpha * s_norm, SIGMA2 * delta)
        elif actred < ETA1 * prered:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA2 * delta))
        elif actred < ETA2 * prered:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA3 * delta))
        elif preconditioned and at_boundary:
            delta = SIGMA3 * delta
        else:
            delta = max(delta, min(alpha * s_norm, SIGMA3 * delta))
        accepted = actred > ETA0 * prered
        if accepted:
            n_iter += 1
            rejections = 0
            accept_step(rows, w, margins, step_margins, s)
            f = f_new
            _, n_sel, grad_norm = evaluate(False, False)
            if grad_norm <= eps * grad_norm0:
                stop = _CONVERGED
        else:
            rejections += 1
        history.append((n_iter, f_new, grad_norm, int(n_cg), delta, int(accepted)))
        if stop == _RUNNING:
            if f < F_LOWER_LIMIT:
                stop = _UNBOUNDED
            elif prered <= 0 and (preconditioned or actred == 0):
                stop = _NO_REDUCTION
            elif (abs(actred) <= SMALL_REDUCTION_RATIO * abs(f)
                  and abs(prered) <= SMALL_REDUCTION_RATIO * abs(f)):  # fmt: skip
                stop = _SMALL
            elif rejections >= MAX_REJECTIONS:
                stop = _VANISHED
        last.update(n_cg=n_cg, accepted=accepted, actred=actred, prered=prered)
        went_on = ask(hook, progress)
    reason = final_stop_reason(stop, _STOP_REASONS, went_on, n_iter, max_iter)
    return newton_solution(
        solver, w, f, bounds, n_iter, reason, grad_norm, grad_norm0,
        relative_gradient_norm(grad_norm, grad_norm0), n_cg_total, history,
        n_trials=n_trials, delta=float(delta),
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
