"""L1-regularised solvers: L2-loss SVM (-s 5) and logistic regression (-s 6).

The problem, for one binary sub-problem (y_i = +1/-1, per-row cost C_i)::

    min_w  P(w) = ||w||_1 + sum_i C_i xi(y_i w'x_i)
    -s 5:  xi(z) = max(0, 1 - z)^2          (L2-loss SVM)
    -s 6:  xi(z) = log(1 + exp(-z))         (logistic regression)

with the bias as LIBLINEAR's extra last feature of value ``bias`` (when ``bias >= 0``),
penalised in ||w||_1 like every weight unless ``regularize_bias=False`` (LIBLINEAR's ``-R``).
There is no dual here: the solvers report the optimality measure they stop on, the 1-norm of
the minimum-norm subgradient ("violation") over all features, relative to its value at w = 0.

Both follow LIBLINEAR 2.50 (``linear.cpp``: ``solve_l1r_l2_svc``, ``solve_l1r_lr``,
``train_one``), written afresh over column (CSC) arrays:

``solve_l1r_l2svc`` (Yuan, Chang, Hsieh, Lin, JMLR 2010; Fan et al. 2008, appendix): primal
coordinate descent over the features in a fresh random order each outer iteration. For feature
j, with b_i = 1 - y_i w'x_i kept up to date, G = -2 sum_{b_i > 0} C_i y_i x_ij b_i and
H = max(2 sum_{b_i > 0} C_i x_ij^2, 1e-12); the Newton direction of the one-variable problem
(with the |w_j| term) is taken, then an Armijo line search (sigma = 0.01, halving, at most 20
trials) that first tries the cheap sufficient-decrease bound sum_i C_i x_ij^2 d^2 + G d + ... <= 0
and only then evaluates the loss change on the column. Shrinking: a feature at w_j = 0 with
-1 + M/l < G < 1 - M/l (M the largest violation of the previous outer iteration, l the number
of rows) leaves the active set. Stop when the violation's 1-norm over the outer iteration is
<= eps times that of the first outer iteration; when the active set was shrunk, reactivate all
features and continue instead. At most ``max_iter`` outer iterations (LIBLINEAR: 1000).

``solve_l1r_lr`` (newGLMNET: Yuan, Ho, Lin, JMLR 2012): each Newton iteration computes the
gradient and the Hessian diagonal (+ nu = 1e-12) over the features not shrunk (outer shrinking,
same rule as above), stops when the violation's 1-norm is <= eps times the first one, else
minimises the quadratic model + ||w||_1 by coordinate descent over the active features (inner
shrinking with the inner iteration's own extremes, steps clipped to [-10, 10], at most
``max_inner_iter`` = 1000 CD cycles, inner stop at inner_eps times the first outer 1-norm with
inner_eps starting at 1 and divided by 4 whenever a QP took a single cycle), then a line
search on the full step (Armijo, sigma = 0.01, halving, at most 20 trials). At most
``max_iter`` Newton iterations (LIBLINEAR: 100).

Both run through ``_base.drive``: one kernel call runs a number of outer iterations (-s 5: CD
passes; -s 6: Newton iterations) and keeps everything it needs to continue in arrays (w, the
margins and their caches, the feature order with the active set in front, the shrinking
thresholds, the inner tolerance, the generator, the counters), so the result does not depend
on how the iterations are batched, and a checkpoint (``Progress.state()``) resumes exactly.
The -s 6 kernel computes the gradient of the next Newton iteration at the end of the current
one (not at its start, as LIBLINEAR writes it), so that the stopping test falls inside the
call that makes the step; at the cap it is skipped, as LIBLINEAR's loop ends there.

Tolerance: LIBLINEAR's ``-e`` (default 0.01 for both) is scaled in ``train_one`` as
eps * max(min(pos, neg), 1) / l; ``sub.eps`` is that scaled value (``solver_tolerance``).
A warm start (``w0``) keeps the cold start's reference (-s 6: the 1-norm at w = 0; -s 5: that
of the cold start's first sweep, run and discarded), so that it stops at the tolerance a cold
start would, not at eps times its own, already small, first 1-norm.

Differences from LIBLINEAR, deliberate:
- Random order from ``_random`` (splitmix64, seeded), not the C library's ``rand()``: the
  iterates differ, the problem solved does not (objectives agree to the tolerance).
- The logistic solver keeps the margins z_i = y_i w'x_i (not exp(w'x_i)) and evaluates the loss
  changes of its line search as softplus differences in a cancellation-free form: no overflow of
  exp(w'x) for large margins.
- When the logistic line search fails (20 halvings), LIBLINEAR leaves the halved trial point in
  its QP iterate while resetting the QP's X d to 0; here the trial point is reset to w so that
  the next QP starts consistent. (Rare: it needs 20 failed halvings.)
- Rows with C_i = 0 are dropped before transposing, so "l" in the shrinking thresholds counts
  the rows with C_i > 0 (LIBLINEAR has no such rows unless a class weight is 0).

Layout: the column form of y_i x_ij over the rows with C_i > 0, bias column appended
(``_columns.signed_columns``), shared with PCD.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE, l1_primal_value
from . import _columns as cc
from ._base import Hook, Solution, Subproblem, copy_state, restore_state
from ._columns import column_curvature, margins, slacks, squared_hinge_column
from ._random import FIRST, new_state, shuffle

__all__ = [
    "DEFAULT_EPS",
    "L2SVC_MAX_ITER",
    "LR_MAX_NEWTON_ITER",
    "l1_optimality",
    "l1_primal_value",
    "solve_l1r_l2svc",
    "solve_l1r_lr",
]

# Constants of LIBLINEAR 2.50's linear.cpp.
DEFAULT_EPS = 0.01  # -e default of -s 5 and -s 6 (before train_one's scaling)
L2SVC_MAX_ITER = 1000  # solve_l1r_l2_svc: max_iter (outer iterations)
LR_MAX_NEWTON_ITER = 100  # solve_l1r_lr: max_newton_iter
LR_MAX_INNER_ITER = 1000  # solve_l1r_lr: max_iter (CD cycles per QP)
MAX_LINE_SEARCH = 20  # max_num_linesearch (both)
ARMIJO_SIGMA = 0.01  # sigma (both)
MIN_CURVATURE = 1.0e-12  # -s 5: H = max(H, 1e-12)
MIN_STEP = 1.0e-12  # both: a one-variable step below this is skipped
LR_NU = 1.0e-12  # -s 6: nu added to the Hessian diagonal
LR_MAX_STEP = 10.0  # -s 6: one-variable QP steps clipped to [-10, 10]
LR_INNER_EPS0 = 1.0  # -s 6: initial inner_eps
LR_INNER_EPS_SHRINK = 0.25  # -s 6: inner_eps *= 0.25 after a QP of a single CD cycle

# The kernels' scalar state, carried between calls in two small arrays (istate int64, fstate
# float64), by position.
# -s 5
SVC_ITER, SVC_ACTIVE, SVC_CONVERGED, SVC_FAILURES = 0, 1, 2, 3
SVC_GMAX_OLD, SVC_GNORM1_INIT, SVC_GNORM1_NEW, SVC_GMAX_NEW = 0, 1, 2, 3
# -s 6
LR_ITER, LR_CONVERGED, LR_ACTIVE, LR_TOTAL_INNER, LR_MAX_INNER_SEEN = 0, 1, 2, 3, 4
LR_FAILURES, LR_STARTED, LR_LAST_INNER = 5, 6, 7
LR_GMAX_OLD, LR_GMAX_NEW, LR_GNORM1_INIT, LR_GNORM1_NEW, LR_INNER_EPS, LR_W_NORM = range(6)


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True, inline="always")
def _violation(g, wj, free, shrink_above) -> float:
    """|minimum-norm subgradient| of |w_j| + (loss) at w_j with loss gradient g (of the loss
    alone when ``free``); -1 for a w_j = 0 whose g lies in (-1 + shrink_above,
    1 - shrink_above), well inside the kink: it leaves the active set (shrinking)."""
    if free:
        return abs(g)
    gp = g + 1.0
    gn = g - 1.0
    if wj > 0.0:
        return abs(gp)
    if wj < 0.0:
        return abs(gn)
    if gp < 0.0:
        return -gp
    if gn > 0.0:
        return gn
    if gp > shrink_above and gn < -shrink_above:
        return -1.0
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def _deactivate(index, s, active) -> int:
    """Shrinking: swap the feature index[s] behind the active ones index[:active]; returns the
    new number of active features."""
    active -= 1
    j = index[s]
    index[s] = index[active]
    index[active] = j
    return active


@njit(cache=True, nogil=True, inline="always")
def _newton_step(g, h, wj, free) -> float:
    """The minimiser d of g d + h d^2 / 2 + |w_j + d| (without the |.| term when ``free``)."""
    if free:
        return -g / h
    gp = g + 1.0
    gn = g - 1.0
    if gp < h * wj:
        return -gp / h
    if gn > h * wj:
        return -gn / h
    return -wj


@njit(cache=True, nogil=True)
def l1_optimality(colptr, rowpos, vals, C, w, loss, reg_bias, has_bias):
    """(1-norm, max) of the violation over all features at w, computed afresh.

    Same measure as the solvers' stopping rule, but at one point (the solvers accumulate it
    while w moves during a sweep).
    """
    n_rows = C.shape[0]
    z = np.empty(n_rows)
    margins(colptr, rowpos, vals, w, z)
    dloss = np.empty(n_rows)  # C_i xi'(z_i)
    for i in range(n_rows):
        if loss == LOSS_SQUARED_HINGE:
            dloss[i] = -2.0 * C[i] * max(0.0, 1.0 - z[i])
        else:
            dloss[i] = -C[i] / (1.0 + np.exp(z[i])) if z[i] < 700.0 else 0.0
    n_w = w.shape[0]
    norm1 = 0.0
    vmax = 0.0
    for j in range(n_w):
        g = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            g += vals[k] * dloss[np.uint64(rowpos[k])]
        v = _violation(g, w[j], has_bias and (not reg_bias) and j == n_w - 1, np.inf)
        norm1 += v
        vmax = max(vmax, v)
    return norm1, vmax


@njit(cache=True, nogil=True)
def _l2svc_objective(w, b, C, free_last) -> float:
    """P(w) from the maintained b_i = 1 - z_i."""
    total = 0.0
    n_w = w.shape[0]
    for j in range(n_w):
        total += abs(w[j])
    if free_last:
        total -= abs(w[n_w - 1])
    for i in range(b.shape[0]):
        if b[i] > 0.0:
            total += C[i] * b[i] * b[i]
    return total


@njit(cache=True, nogil=True)
def l1r_l2svc_kernel(
    colptr, rowpos, vals, C, c_step, xj_sq, free_last, eps, max_iter, n_outer, rng, w, b,
    index, istate, fstate, history,
):  # fmt: skip
    """Up to ``n_outer`` outer iterations of coordinate descent for
    min ||w||_1 + sum C_i max(0, b_i)^2, b = 1 - z, stopping at ``max_iter`` in all.

    w (n_w,) and b (l,) are updated in place (start: 0 and 1, or a warm start w and its
    b = 1 - z); ``index`` (n_w,): the feature order, active features first; ``rng``: the
    generator's state; istate / fstate: the counters and thresholds (SVC_* positions; start:
    0, n_w, 0, 0 and inf, reference, 0, 0). fstate[SVC_GNORM1_INIT] is the stopping rule's
    reference when >= 0; < 0: the first outer iteration's 1-norm (LIBLINEAR). ``free_last``:
    the last weight (the bias) is not penalised. ``c_step``: 0 when every C_i is C[0] (read
    C[0] only), else 1. ``xj_sq``: ``column_curvature``. ``history`` (length max_iter, or 0 to
    keep none): P(w) after each outer iteration.
    """
    n_rows = C.shape[0]
    n_w = w.shape[0]
    record = history.shape[0] > 0
    l_f = float(max(n_rows, 1))
    active = istate[SVC_ACTIVE]
    gmax_old = fstate[SVC_GMAX_OLD]
    gnorm1_init = fstate[SVC_GNORM1_INIT]
    stop = min(max_iter, istate[SVC_ITER] + n_outer)

    while istate[SVC_ITER] < stop and not istate[SVC_CONVERGED]:
        gmax_new = 0.0
        gnorm1_new = 0.0
        shuffle(index, FIRST, active, rng)
        s = 0
        while s < active:
            j = index[s]
            k0 = np.uint64(colptr[j])
            k1 = np.uint64(colptr[j + 1])
            gb, h = squared_hinge_column(colptr, rowpos, vals, C, c_step, b, j)
            g_loss = -2.0 * gb
            g = g_loss
            h = max(2.0 * h, MIN_CURVATURE)
            free = free_last and j == n_w - 1
            wj = w[j]
            violation = _violation(g, wj, free, gmax_old / l_f)
            if violation < 0.0:
                active = _deactivate(index, s, active)
                continue
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation
            s += 1

            # Newton direction of the one-variable problem
            d = _newton_step(g, h, wj, free)
            if abs(d) < MIN_STEP:
                continue

            # Armijo line search on F(w + d e_j) - F(w) <= sigma * delta
            if free:
                delta = g * d
            else:
                delta = abs(wj + d) - abs(wj) + g * d
            d_old = 0.0
            loss_old = 0.0
            n_ls = 0
            while n_ls < MAX_LINE_SEARCH:
                d_diff = d_old - d
                if free:
                    cond = -ARMIJO_SIGMA * delta
                else:
                    cond = abs(wj + d) - abs(wj) - ARMIJO_SIGMA * delta
                # cheap bound first: loss change <= xj_sq d^2 + G d
                if xj_sq[j] * d * d + g_loss * d + cond <= 0.0:
                    for k in range(k0, k1):
                        b[np.uint64(rowpos[k])] += d_diff * vals[k]
                    break
                loss_new = 0.0
                first = n_ls == 0
                for k in range(k0, k1):
                    i = np.uint64(rowpos[k])
                    bi = b[i]
                    ci = C[i * c_step]
                    if first:  # (the same on every k: predicted)
                        loss_old += ci * bi * bi * np.float64(bi > 0.0)
                    b_new = bi + d_diff * vals[k]
                    b[i] = b_new
                    loss_new += ci * b_new * b_new * np.float64(b_new > 0.0)
                cond += loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                n_ls += 1
            w[j] = wj + d
            if n_ls >= MAX_LINE_SEARCH:
                # b holds the last trial, not w: recompute it (as LIBLINEAR)
                istate[SVC_FAILURES] += 1
                slacks(colptr, rowpos, vals, w, b)

        fstate[SVC_GNORM1_NEW] = gnorm1_new
        fstate[SVC_GMAX_NEW] = gmax_new
        if gnorm1_init < 0.0:  # cold: the first outer iteration's 1-norm is the reference
            gnorm1_init = gnorm1_new
        if record:
            history[istate[SVC_ITER]] = _l2svc_objective(w, b, C, free_last)
        istate[SVC_ITER] += 1
        if gnorm1_new <= eps * gnorm1_init:
            if active == n_w:
                istate[SVC_CONVERGED] = 1
                break
            active = n_w
            gmax_old = np.inf
            continue
        gmax_old = gmax_new

    istate[SVC_ACTIVE] = active
    fstate[SVC_GMAX_OLD] = gmax_old
    fstate[SVC_GNORM1_INIT] = gnorm1_init


@njit(cache=True, nogil=True)
def _logistic_state(z, C, e, tail, tau, D) -> float:
    """From margins z: e = exp(-|z|), tail = log1p(e), tau = C sigma(-z), D = C sigma(z)sigma(-z).

    Returns sum_i C_i log(1 + exp(-z_i)).
    """
    total = 0.0
    for i in range(z.shape[0]):
        zi = z[i]
        ei = np.exp(-abs(zi))
        e[i] = ei
        ti = np.log1p(ei)
        tail[i] = ti
        inv = 1.0 / (1.0 + ei)
        tau[i] = C[i] * (ei * inv if zi >= 0.0 else inv)
        D[i] = C[i] * ei * inv * inv
        total += C[i] * (max(-zi, 0.0) + ti)
    return total


@njit(cache=True, nogil=True)
def _lr_gradient(colptr, rowpos, vals, free_last, w, tau, D, hdiag, grad, index, gmax_old, l_f):
    """The gradient and Hessian diagonal of the loss over the features not shrunk (outer
    shrinking against ``gmax_old``; shrunk features moved behind the active ones in
    ``index``). Returns (active, largest violation, violation 1-norm)."""
    n_w = w.shape[0]
    gmax_new = 0.0
    gnorm1_new = 0.0
    active = n_w
    s = 0
    while s < active:
        j = index[s]
        h = LR_NU
        t = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            i = np.uint64(rowpos[k])
            v = vals[k]
            h += v * v * D[i]
            t += v * tau[i]
        hdiag[j] = h
        g = -t
        grad[j] = g
        violation = _violation(g, w[j], free_last and j == n_w - 1, gmax_old / l_f)
        if violation < 0.0:  # outer-level shrinking
            active = _deactivate(index, s, active)
            continue
        s += 1
        gmax_new = max(gmax_new, violation)
        gnorm1_new += violation
    return active, gmax_new, gnorm1_new


@njit(cache=True, nogil=True)
def l1r_lr_kernel(
    colptr, rowpos, vals, C, free_last, eps, max_newton_iter, max_inner_iter, n_newton, rng,
    w, z, e, tail, tau, D, hdiag, grad, index, istate, fstate, history, wpd, xtd, e_new,
    tail_new,
):  # fmt: skip
    """Up to ``n_newton`` newGLMNET iterations for min ||w||_1 + sum C_i log(1 + exp(-z_i)),
    z_i = y_i w'x_i, stopping at ``max_newton_iter`` in all.

    State, updated in place: w (n_w,) (0 for LIBLINEAR's start, or a warm start); z, e =
    exp(-|z|), tail = log1p(e), tau = C sigma(-z), D = C sigma(z) sigma(-z) (l,) (set on the
    first call, istate[LR_STARTED] = 0); hdiag, grad (n_w,): the Hessian diagonal and gradient
    of the next Newton iteration; index (n_w,): the feature order, active features first;
    rng; istate / fstate (LR_* positions; start: zeros and fstate = inf, 0, reference, 0,
    LR_INNER_EPS0, 0, the reference being the rule's when >= 0, < 0: the first Newton
    iteration's 1-norm, LIBLINEAR's); history (max_newton_iter + 1,): P(w) at the start and
    after each Newton iteration. Scratch: wpd (n_w,), xtd, e_new, tail_new (l,).
    """
    n_rows = C.shape[0]
    n_w = w.shape[0]
    l_f = float(max(n_rows, 1))

    # the state read most, as locals (written back on return); the rest is used in place
    active = istate[LR_ACTIVE]
    gmax_new = fstate[LR_GMAX_NEW]
    gnorm1_init = fstate[LR_GNORM1_INIT]
    gnorm1_new = fstate[LR_GNORM1_NEW]
    w_norm = fstate[LR_W_NORM]
    for j in range(n_w):
        wpd[j] = w[j]

    if istate[LR_STARTED] == 0:
        istate[LR_STARTED] = 1
        margins(colptr, rowpos, vals, w, z)
        w_norm = 0.0
        for j in range(n_w):
            w_norm += abs(w[j])
        if free_last:
            w_norm -= abs(w[n_w - 1])
        loss_sum = _logistic_state(z, C, e, tail, tau, D)
        history[0] = w_norm + loss_sum
        if istate[LR_ITER] < max_newton_iter:
            active, gmax_new, gnorm1_new = _lr_gradient(
                colptr, rowpos, vals, free_last, w, tau, D, hdiag, grad, index,
                fstate[LR_GMAX_OLD], l_f,
            )  # fmt: skip
            if gnorm1_init < 0.0:  # cold: the first Newton iteration's 1-norm
                gnorm1_init = gnorm1_new
            istate[LR_CONVERGED] = gnorm1_new <= eps * gnorm1_init

    stop = min(max_newton_iter, istate[LR_ITER] + n_newton)
    while istate[LR_ITER] < stop and not istate[LR_CONVERGED]:
        # minimise the quadratic model + ||.||_1 over wpd by CD on the active features
        n_inner = 0
        qp_gmax_old = np.inf
        qp_active = active
        xtd[:] = 0.0
        while n_inner < max_inner_iter:
            qp_gmax_new = 0.0
            qp_gnorm1_new = 0.0
            shuffle(index, FIRST, qp_active, rng)
            s = 0
            while s < qp_active:
                j = index[s]
                h = hdiag[j]
                k0 = np.uint64(colptr[j])
                k1 = np.uint64(colptr[j + 1])
                # sum_i x_ij D_i (X d)_i in four partial sums: one running sum would make every
                # addition wait for the previous one (this loop is most of -s 6's time)
                g0 = 0.0
                g1 = 0.0
                g2 = 0.0
                g3 = 0.0
                k = k0
                while k + np.uint64(4) <= k1:
                    i0 = np.uint64(rowpos[k])
                    i1 = np.uint64(rowpos[k + np.uint64(1)])
                    i2 = np.uint64(rowpos[k + np.uint64(2)])
                    i3 = np.uint64(rowpos[k + np.uint64(3)])
                    g0 += vals[k] * D[i0] * xtd[i0]
                    g1 += vals[k + np.uint64(1)] * D[i1] * xtd[i1]
                    g2 += vals[k + np.uint64(2)] * D[i2] * xtd[i2]
                    g3 += vals[k + np.uint64(3)] * D[i3] * xtd[i3]
                    k += np.uint64(4)
                while k < k1:
                    i0 = np.uint64(rowpos[k])
                    g0 += vals[k] * D[i0] * xtd[i0]
                    k += np.uint64(1)
                g = grad[j] + (wpd[j] - w[j]) * LR_NU + ((g0 + g1) + (g2 + g3))
                wj = wpd[j]
                free = free_last and j == n_w - 1
                violation = _violation(g, wj, free, qp_gmax_old / l_f)
                if violation < 0.0:  # inner-level shrinking
                    qp_active = _deactivate(index, s, qp_active)
                    continue
                step = _newton_step(g, h, wj, free)
                s += 1
                qp_gmax_new = max(qp_gmax_new, violation)
                qp_gnorm1_new += violation
                if abs(step) < MIN_STEP:
                    continue
                step = min(max(step, -LR_MAX_STEP), LR_MAX_STEP)
                wpd[j] = wj + step
                for k in range(k0, k1):
                    xtd[np.uint64(rowpos[k])] += step * vals[k]
            n_inner += 1
            if qp_gnorm1_new <= fstate[LR_INNER_EPS] * gnorm1_init:
                if qp_active == active:
                    break
                qp_active = active  # reactivate and go on
                qp_gmax_old = np.inf
                continue
            qp_gmax_old = qp_gmax_new
        istate[LR_LAST_INNER] = n_inner
        istate[LR_TOTAL_INNER] += n_inner
        istate[LR_MAX_INNER_SEEN] = max(istate[LR_MAX_INNER_SEEN], n_inner)

        # line search on w + a (wpd - w), a = 1, 1/2, ...
        delta = 0.0
        w_norm_new = 0.0
        for j in range(n_w):
            delta += grad[j] * (wpd[j] - w[j])
            w_norm_new += abs(wpd[j])
        if free_last:
            w_norm_new -= abs(wpd[n_w - 1])
        delta += w_norm_new - w_norm
        n_ls = 0
        while n_ls < MAX_LINE_SEARCH:
            cond = w_norm_new - w_norm - ARMIJO_SIGMA * delta
            for i in range(n_rows):
                # C_i [softplus(-(z+t)) - softplus(-z)] without cancellation or overflow
                a_old = -z[i]
                a_new = -(z[i] + xtd[i])
                en = np.exp(-abs(a_new))
                tn = np.log1p(en)
                e_new[i] = en
                tail_new[i] = tn
                if a_old >= 0.0 and a_new >= 0.0:
                    lin = -xtd[i]
                elif a_old < 0.0 and a_new < 0.0:
                    lin = 0.0
                else:
                    lin = max(a_new, 0.0) - max(a_old, 0.0)
                cond += C[i] * (lin + tn - tail[i])
            if cond <= 0.0:
                break
            w_norm_new = 0.0
            for j in range(n_w):
                wpd[j] = 0.5 * (w[j] + wpd[j])
                w_norm_new += abs(wpd[j])
            if free_last:
                w_norm_new -= abs(wpd[n_w - 1])
            delta *= 0.5
            for i in range(n_rows):
                xtd[i] *= 0.5
            n_ls += 1

        if n_ls < MAX_LINE_SEARCH:
            for j in range(n_w):
                w[j] = wpd[j]
            w_norm = w_norm_new
            loss_sum = 0.0
            for i in range(n_rows):
                zi = z[i] + xtd[i]
                z[i] = zi
                ei = e_new[i]
                e[i] = ei
                tail[i] = tail_new[i]
                inv = 1.0 / (1.0 + ei)
                tau[i] = C[i] * (ei * inv if zi >= 0.0 else inv)
                D[i] = C[i] * ei * inv * inv
                loss_sum += C[i] * (max(-zi, 0.0) + tail_new[i])
        else:
            istate[LR_FAILURES] += 1
            for j in range(n_w):
                wpd[j] = w[j]
            margins(colptr, rowpos, vals, w, z)
            loss_sum = _logistic_state(z, C, e, tail, tau, D)

        if n_inner == 1:
            fstate[LR_INNER_EPS] *= LR_INNER_EPS_SHRINK
        istate[LR_ITER] += 1
        fstate[LR_GMAX_OLD] = gmax_new
        history[istate[LR_ITER]] = w_norm + loss_sum
        if istate[LR_ITER] < max_newton_iter:  # the next iteration's gradient and stopping test
            active, gmax_new, gnorm1_new = _lr_gradient(
                colptr, rowpos, vals, free_last, w, tau, D, hdiag, grad, index,
                fstate[LR_GMAX_OLD], l_f,
            )  # fmt: skip
            istate[LR_CONVERGED] = gnorm1_new <= eps * gnorm1_init

    istate[LR_ACTIVE] = active
    fstate[LR_GMAX_NEW] = gmax_new
    fstate[LR_GNORM1_INIT] = gnorm1_init
    fstate[LR_GNORM1_NEW] = gnorm1_new
    fstate[LR_W_NORM] = w_norm


# ----------------------------------------------------------------------------- drivers


def _l1_problem(sub: Subproblem) -> tuple[cc.SignedColumns, bool, int, int]:
    """The column form of ``sub``, whether the bias weight is free (-R), max_iter and seed."""
    if not sub.regularize_bias and sub.bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    cols = cc.signed_columns(sub.X, sub.y, sub.C, sub.bias, sub.eps, sub.values_checked)
    free_last = cols.bias >= 0 and not sub.regularize_bias
    return cols, free_last, cc.check_max_iter(sub.max_iter), cc.check_seed(sub.seed)


def _ratio(measure: float, reference: float) -> float:
    """The stopping measure relative to its reference (0 when the reference is 0: w = 0 is
    optimal)."""
    return float(measure / reference) if reference > 0 else 0.0


def _restore_with_history(state: dict, arrays: dict[str, np.ndarray], history: np.ndarray,
                          active: int):
    # istate[active] counts the features in the active set: at most those of index
    restore_state(arrays, state, counts=((active, arrays["index"].shape[0]),))
    if "history" in state:
        saved = np.asarray(state["history"])
        if saved.ndim != 1 or saved.dtype != history.dtype or not np.isfinite(saved).all():
            raise InvalidInputError("the state to resume from is damaged: 'history'")
        if saved.shape[0] > history.shape[0]:
            raise InvalidInputError("resume state has a longer history than max_iter allows")
        history[: saved.shape[0]] = saved


def _run_l1(
    sub, hook, cols, free_last, loss, max_iter, w, advance, status, state, gnorm1, figures,
    own_figures,
) -> Solution:  # fmt: skip
    """Drive an L1 kernel to its end (``_columns.run_primal``) and return its Solution.

    ``gnorm1()``: (the last violation 1-norm tested, its reference); ``figures()``: the
    hook's figures; ``own_figures()``: the solver's own figures of the Solution.
    """
    reg_bias = not free_last
    X = cols.X
    solver = 5 if loss == LOSS_SQUARED_HINGE else 6

    def primal(at: np.ndarray) -> float:
        return float(
            l1_primal_value(
                X.indptr, X.indices, X.data, cols.bias, cols.ysign, cols.C, at, loss, reg_bias
            )
        )

    def result() -> dict:
        measure, measure0 = gnorm1()
        viol1, violmax = l1_optimality(
            cols.colptr, cols.rowpos, cols.vals, cols.Cr, w, loss, reg_bias, cols.bias >= 0
        )
        return {
            "w": w,
            "primal": primal(w),
            "figures": {
                "stop_measure": float(measure),  # LIBLINEAR's Gnorm1_new, the last 1-norm tested
                "stop_measure0": float(measure0),  # its reference (Gnorm1_init)
                "stop_ratio": _ratio(measure, measure0),
                "eps": float(sub.eps),  # converged <=> stop_measure <= eps * stop_measure0
                "nnz_w": int(np.count_nonzero(w)),
                "final_violation": float(viol1),  # the 1-norm recomputed at the returned w
                "final_max_violation": float(violmax),
                **own_figures(),
            },
        }

    return cc.run_primal(
        sub, hook, solver, max_iter, advance, status,
        live=lambda: (w, _ratio(*gnorm1()), figures()),
        state=state,
        objectives=lambda at: (primal(at), math.nan),
        result=result,
    )  # fmt: skip


def solve_l1r_l2svc(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise ||w||_1 + sum_i C_i max(0, 1 - y_i w'x_i)^2 as LIBLINEAR's -s 5.

    ``sub``: X CSR (l, n); y (l,) (y > 0 is positive); C (l,) per-row cost (0 drops the row);
    eps the scaled tolerance; max_iter the cap on outer iterations (LIBLINEAR: 1000); bias,
    regularize_bias (-R), seed (the feature order); w0 (n [+1],) a warm start; option
    ``record_history``: keep P(w) after each outer iteration (``figures["history"]``).

    Stopping rule: the violation 1-norm of an outer iteration <= eps times a reference, the
    first outer iteration's 1-norm (LIBLINEAR). After a warm start that would already be small
    and demand a far tighter tolerance, so the cold start's reference is kept. It is measured
    while w moves during the first sweep, so the cold start's first outer iteration is run
    (from w = 0, same seed) and discarded: one extra sweep, not counted in ``n_iter``, after
    which the warm start stops exactly where a cold start's rule would. (The 1-norm evaluated
    at w = 0 alone can be several times larger.) If the reference is 0, w = 0 is optimal and
    w0 is ignored.

    Returns a Solution: primal P(w) (``objective.l1_primal_value``), dual NaN; figures
    stop_measure, stop_measure0, stop_ratio, eps, nnz_w, final_violation,
    final_max_violation, n_line_search_failures (and history).
    """
    cols, free_last, max_iter, seed = _l1_problem(sub)
    eps = float(sub.eps)
    n_w = cols.n_w
    colptr, rowpos, vals, Cr = cols.colptr, cols.rowpos, cols.vals, cols.Cr
    # C_i is read as C[i * c_step]: with one C for every row (no class or sample weights, the
    # usual case) c_step = 0 and the column loops make one random access a non-zero (b_i), not
    # two; on pypi-recent C alone is 5 MB.
    c_step = cc.cost_step(Cr)
    xj_sq = column_curvature(colptr, rowpos, vals, Cr)

    def fresh_state():
        istate = np.array([0, n_w, 0, 0], dtype=np.int64)
        fstate = np.array([np.inf, -1.0, 0.0, 0.0])
        return np.arange(n_w, dtype=np.int64), new_state(seed), istate, fstate

    def run(n_outer, w, b, index, rng, istate, fstate, history, cap=max_iter):
        l1r_l2svc_kernel(
            colptr, rowpos, vals, Cr, c_step, xj_sq, free_last, eps, cap, n_outer, rng,
            w, b, index, istate, fstate, history,
        )  # fmt: skip

    w = np.zeros(n_w)
    b = np.ones(Cr.size)
    index, rng, istate, fstate = fresh_state()
    history = np.zeros(max_iter if sub.option("record_history", False) else 0)
    if sub.resume is not None:
        _restore_with_history(
            sub.resume,
            {"w": w, "b": b, "index": index, "rng": rng, "istate": istate, "fstate": fstate},
            history,
            SVC_ACTIVE,
        )
    elif sub.w0 is not None:
        w0 = cc.check_w0(sub.w0, n_w)
        # the cold start's first outer iteration (same seed), run for its 1-norm and discarded
        p_index, p_rng, p_istate, p_fstate = fresh_state()
        # (its own cap of one: a warm start with max_iter=0 still gets its reference)
        run(1, w, b, p_index, p_rng, p_istate, p_fstate, np.zeros(0), cap=1)
        reference = p_fstate[SVC_GNORM1_INIT]
        if reference > 0.0:
            w[:] = w0
            slacks(colptr, rowpos, vals, w, b)
            fstate[SVC_GNORM1_INIT] = reference
        else:  # w = 0 is optimal: start there, as a cold start
            w[:] = 0.0
            b[:] = 1.0

    def own_figures() -> dict:
        n_iter = int(istate[SVC_ITER])
        figures = {"n_line_search_failures": int(istate[SVC_FAILURES])}
        if history.shape[0]:
            figures["history"] = history[:n_iter].copy()
        return figures

    return _run_l1(
        sub, hook, cols, free_last, LOSS_SQUARED_HINGE, max_iter, w,
        advance=lambda n: run(n, w, b, index, rng, istate, fstate, history),
        status=lambda: (int(istate[SVC_ITER]), bool(istate[SVC_CONVERGED])),
        state=lambda: copy_state(
            w=w, b=b, index=index, rng=rng, istate=istate, fstate=fstate,
            history=history[: istate[SVC_ITER]],
        ),
        gnorm1=lambda: (fstate[SVC_GNORM1_NEW], fstate[SVC_GNORM1_INIT]),
        figures=lambda: {
            "n_active": int(istate[SVC_ACTIVE]),
            "gnorm1": float(fstate[SVC_GNORM1_NEW]),
            "gmax": float(fstate[SVC_GMAX_NEW]),
        },
        own_figures=own_figures,
    )  # fmt: skip


def solve_l1r_lr(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise ||w||_1 + sum_i C_i log(1 + exp(-y_i w'x_i)) as LIBLINEAR's -s 6 (newGLMNET).

    ``sub`` as for ``solve_l1r_l2svc``; max_iter caps the Newton iterations (LIBLINEAR: 100),
    option ``max_inner_iter`` the CD cycles of each QP (1000).

    w0: (n [+1],) a warm start. The stopping rule (and the inner QPs' tolerance) is relative
    to the violation 1-norm of the first Newton iteration, i.e. at the starting point; after a
    warm start the cold start's is used instead, the 1-norm at w = 0 (for this solver exactly
    the reference a cold start computes). If that is 0, w = 0 is optimal and w0 is ignored.

    Returns a Solution as ``solve_l1r_l2svc``'s, with figures also n_inner_iter (CD cycles
    over all QPs) and history (P(w) at the start and after each Newton iteration).
    """
    cols, free_last, max_iter, seed = _l1_problem(sub)
    max_inner_iter = cc.check_max_iter(sub.option("max_inner_iter", LR_MAX_INNER_ITER))
    eps = float(sub.eps)
    n_w = cols.n_w
    colptr, rowpos, vals, Cr = cols.colptr, cols.rowpos, cols.vals, cols.Cr
    n_rows = Cr.size

    w = np.zeros(n_w)
    reference = -1.0  # cold: the kernel takes its first Newton iteration's 1-norm
    if sub.w0 is not None and sub.resume is None:
        w0 = cc.check_w0(sub.w0, n_w)
        # the cold start's reference: the 1-norm at w = 0, as l1r_lr_kernel computes it
        reference, _ = l1_optimality(
            colptr, rowpos, vals, Cr, w, LOSS_LOGISTIC, not free_last, cols.bias >= 0
        )
        if reference > 0.0:
            w[:] = w0
        else:  # w = 0 is optimal: start there, as a cold start
            reference = -1.0
    # state: the margins and their caches, the next iteration's gradient, order, counters
    z, e, tail, tau, D = (np.zeros(n_rows) for _ in range(5))
    hdiag = np.zeros(n_w)
    grad = np.zeros(n_w)
    index = np.arange(n_w, dtype=np.int64)
    rng = new_state(seed)
    istate = np.zeros(8, dtype=np.int64)
    fstate = np.array([np.inf, 0.0, reference, 0.0, LR_INNER_EPS0, 0.0])
    history = np.zeros(max_iter + 1)
    # scratch, allocated once
    wpd = np.empty(n_w)
    xtd = np.zeros(n_rows)
    e_new = np.empty(n_rows)
    tail_new = np.empty(n_rows)
    arrays = {
        "w": w, "z": z, "e": e, "tail": tail, "tau": tau, "D": D, "hdiag": hdiag,
        "grad": grad, "index": index, "rng": rng, "istate": istate, "fstate": fstate,
    }  # fmt: skip
    if sub.resume is not None:
        _restore_with_history(sub.resume, arrays, history, LR_ACTIVE)

    def advance(n_newton: int) -> None:
        l1r_lr_kernel(
            colptr, rowpos, vals, Cr, free_last, eps, max_iter, max_inner_iter, n_newton, rng,
            w, z, e, tail, tau, D, hdiag, grad, index, istate, fstate, history, wpd, xtd,
            e_new, tail_new,
        )  # fmt: skip

    advance(0)  # the start: margins, P(w), the first gradient and stopping test
    return _run_l1(
        sub, hook, cols, free_last, LOSS_LOGISTIC, max_iter, w, advance,
        status=lambda: (int(istate[LR_ITER]), bool(istate[LR_CONVERGED])),
        state=lambda: copy_state(**arrays, history=history[: istate[LR_ITER] + 1]),
        gnorm1=lambda: (fstate[LR_GNORM1_NEW], fstate[LR_GNORM1_INIT]),
        figures=lambda: {
            "n_active": int(istate[LR_ACTIVE]),
            "n_cd": int(istate[LR_LAST_INNER]),  # CD cycles of the last QP
            "gnorm1": float(fstate[LR_GNORM1_NEW]),
            "f": float(history[istate[LR_ITER]]),
        },
        own_figures=lambda: {
            "n_inner_iter": int(istate[LR_TOTAL_INNER]),
            "max_inner_iter": int(istate[LR_MAX_INNER_SEEN]),  # most CD cycles of one QP
            "n_line_search_failures": int(istate[LR_FAILURES]),
            "history": history[: istate[LR_ITER] + 1].copy(),
        },
    )  # fmt: skip
