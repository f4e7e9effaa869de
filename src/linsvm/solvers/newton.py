"""Primal Newton method: L2-regularised logistic regression (-s 0), L2-loss SVM (-s 2), and the
driver that -s 11 (L2-loss SVR, ``svr.py``) shares.

The problems (docs/architecture.md, "The problems"), for one sub-problem::

    min_w  P(w) = 1/2 w'w + sum_i C_i xi(z_i)
    logistic (-s 0):      z_i = y_i w'x_i,   xi(z) = log(1 + exp(-z)),
                          xi'' = sigma(z) (1 - sigma(z))
    squared hinge (-s 2): z_i = y_i w'x_i,   xi(z) = max(0, 1 - z)^2,
                          generalised xi'' = 2 on z < 1
    L2-loss SVR (-s 11):  z_i = w'x_i - y_i, xi(z) = max(0, |z| - p)^2,
                          generalised xi'' = 2 on |z| > p

LIBLINEAR 2.50's line-search Newton method (``newton.cpp``, the classes ``l2r_erm_fun``,
``l2r_lr_fun``, ``l2r_l2_svc_fun`` and ``l2r_l2_svr_fun`` of ``linear.cpp``), written afresh
over CSR arrays, once for the three losses (``run_newton``):

- each iteration solves H d = -g approximately by conjugate gradient preconditioned with
  M = (1 - a) I + a diag(H), a = 0.01, stopped by the quadratic-model rule of
  ``NEWTON::pcg``: with Q_k the model value after k CG steps, stop when
  k (Q_k - Q_{k-1}) >= cgtol Q_k, cgtol = min(eps_cg, sqrt(||g||_{M^-1})), eps_cg = 0.5; at
  most max(n, 5) CG steps;
- then a backtracking line search from step 1, halving up to 20 times, accepting the first
  step a with P(w + a d) - P(w) <= eta a g'd, eta = 0.01 (``l2r_erm_fun::
  linesearch_and_update``). The z_i along d are computed once per search, so each trial
  costs O(l), not O(nnz);
- stop when ||g(w)|| <= eps ||g(0)|| (the gradient norm at w = 0, whatever the initial w);
  also when the line search fails, when |P_old - P_new| <= 1e-12 |P_new|, or after
  ``max_iter`` (1000) Newton iterations (stop reasons LINE_SEARCH_FAILED, SMALL_REDUCTION,
  MAX_ITER: LIBLINEAR's "WARNING: line search fails", "actred too small", "reaching max
  number of Newton iterations").

What differs between the losses is only how z_i is read from w'x_i, and the value, gradient
coefficient and Hessian weight of a row at z_i (``datafit_*``: inline functions switched on a
loss code, as a datafit composes with a solver). The generalised Hessian is always
I + X_I' D_I X_I over the selected rows I (all rows with C_i > 0 for the logistic loss, those
with z_i < 1 for the squared hinge, those outside the tube for the SVR), so ``hessian_vector``
and ``pcg`` are shared as they are. The value, the gradient, the selection I with its D_i, and
the preconditioner come from one pass; the z_i are kept up to date by the line search.

The loop over Newton iterations is Python (each iteration's passes are compiled): the hook is
called before the first iteration and after each one. Its resumable state is w, the z_i (as
the line search updated them: recomputed from w they would round differently), P(w),
||g(0)||, the counters, the history and whether a stopping rule has been met; the gradient,
the selection and the preconditioner are recomputed from w and the z_i, exactly.

Threads (``sub.n_threads > 1``, at most one per ``THREAD_MIN_NNZ`` non-zeros): the passes over
the rows -- value and gradient, each Hessian-vector product, the line search -- run on row
chunks side by side (``RowPasses``), as multi-core LIBLINEAR does; each chunk accumulates its
X'(...) in a buffer of its own and the buffers are added in chunk order. The algorithm is the
serial one; only the order of those sums differs, so the result is the serial one up to
rounding, and the same bits for the same number of threads. One thread runs the serial
kernels, unchanged.

The bias is LIBLINEAR's implicit last feature of value ``bias`` (when ``bias >= 0``). It is
regularised like every weight unless ``regularize_bias=False`` (LIBLINEAR's ``-R``): then the
bias weight is left out of 1/2 w'w and out of its gradient, Hessian and preconditioner terms.

-s 0 and -s 2 report a dual bound from w: the dual points alpha_i = C_i sigma(-y_i w'x_i)
(logistic) and alpha_i = 2 C_i max(0, 1 - y_i w'x_i) (L2-loss SVM) are feasible for any w and
optimal at w*, so -f(alpha) is a lower bound on P* (not with -R, whose dual has an equality
constraint those points meet only at the optimum: the dual is NaN then).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import (
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    loss_value,
    lr_dual_point,
    lr_objectives,
    squared_hinge_dual_point,
    svm_objectives,
)
from ..parallel import PARALLEL_MIN_NNZ, row_chunks
from ..sparse_rows import row_axpy, row_dot_in_order, sq_norm
from . import _base
from ._base import Hook, Progress, Solution, Subproblem, ask, copy_state
from ._newton_common import (
    Bounds,
    check_gradient_at_zero,
    check_resume_keys,
    final_stop_reason,
    newton_progress,
    newton_solution,
    relative_gradient_norm,
    resume_values_damaged,
    rule_scale,
)

# Constants of LIBLINEAR 2.50's newton.cpp / newton.h.
EPS_CG = 0.5  # NEWTON(..., eps_cg = 0.5): cap on the CG relative tolerance
PRECONDITIONER_MIX = 0.01  # alpha_pcg in NEWTON::newton: M = (1 - a) + a diag(H)
ARMIJO_ETA = 0.01  # eta in linesearch_and_update
MAX_LINE_SEARCH = 20  # max_num_linesearch: halvings before the search fails
INIT_STEP_SIZE = 1.0  # init_step_size
SMALL_REDUCTION_RATIO = 1.0e-12  # stop when |f_old - f| <= 1e-12 |f|

# Threads within one solve: at most one per this many non-zeros (of the rows with C_i > 0);
# below that a chunk's pass is too short for the start and join of a task to pay.
THREAD_MIN_NNZ = PARALLEL_MIN_NNZ

# The Newton driver's loss codes: objective's LOSS_LOGISTIC and LOSS_SQUARED_HINGE on the
# margin y_i w'x_i, and the L2-loss SVR on the residual w'x_i - y_i (objective's SVR codes
# overlap the classification ones, hence a code of its own here).
LOSS_SVR_SQUARED = 3
NEWTON_LOSSES = (LOSS_LOGISTIC, LOSS_SQUARED_HINGE, LOSS_SVR_SQUARED)

# Why the loop stopped, as kept in a resumable state (0: it has not).
_RUNNING, _STOP_CONVERGED, _STOP_SMALL_REDUCTION = 0, 1, 2
_STOP_REASONS = {_STOP_CONVERGED: _base.CONVERGED, _STOP_SMALL_REDUCTION: _base.SMALL_REDUCTION}
# cg_advance's status while CG goes on (pcg's own statuses are 0-3)
_CG_GOING_ON = -1


# ----------------------------------------------------------------------------- the losses


@njit(cache=True, nogil=True, inline="always")
def datafit_z(loss, t, yi):
    """What the loss reads from t = w'x_i: the margin y_i t, or the residual t - y_i (SVR)."""
    if loss == LOSS_SVR_SQUARED:
        return t - yi
    return yi * t


@njit(cache=True, nogil=True, inline="always")
def datafit_dz(loss, t, yi):
    """How z_i moves along a direction s, from t = s'x_i: y_i t, or t (SVR)."""
    if loss == LOSS_SVR_SQUARED:
        return t
    return yi * t


@njit(cache=True, nogil=True, inline="always")
def datafit_value(loss, z, ci, p):
    """C_i xi(z): the row's term of P."""
    if loss == LOSS_SVR_SQUARED:
        e = abs(z) - p
        if e > 0.0:
            return ci * e * e
        return 0.0
    return ci * loss_value(loss, z)


@njit(cache=True, nogil=True, inline="always")
def datafit_terms(loss, z, ci, yi, p, want_value):
    """(C_i xi(z) if want_value else 0, coef, D_ii) of one row: the gradient gets coef x_i
    and the generalised Hessian D_ii x_i x_i'. coef = D_ii = 0 leaves the row out."""
    if loss == LOSS_SVR_SQUARED:
        if z > p:
            r = z - p
        elif z < -p:
            r = z + p
        else:
            return 0.0, 0.0, 0.0
        value = ci * r * r if want_value else 0.0
        return value, 2.0 * ci * r, 2.0 * ci
    value = ci * loss_value(loss, z) if want_value else 0.0
    if loss == LOSS_LOGISTIC:
        e = np.exp(-abs(z))
        if z >= 0.0:
            sig = 1.0 / (1.0 + e)
            one_minus_sig = e / (1.0 + e)
        else:
            sig = e / (1.0 + e)
            one_minus_sig = 1.0 / (1.0 + e)
        return value, -ci * one_minus_sig * yi, ci * sig * one_minus_sig
    if z >= 1.0:
        return value, 0.0, 0.0
    return value, 2.0 * ci * yi * (z - 1.0), 2.0 * ci


# ----------------------------------------------------------------------------- kernels

# The row loops are written out whole, over unsigned indices, once per pass (``_add_*_rows``,
# inlined into the serial kernel and its row-chunk twin). Measured on a9a: Numba wraps negative
# signed indices around (a compare-and-select per access), and calling a helper for x_i'v and
# for out += a x_i (even inlined) made the Hessian-vector product 2-2.5x slower.


@njit(cache=True, nogil=True, inline="always")
def _add_value_grad_rows(
    indptr, indices, data, bias, y, C, rows, q0, q1, loss, p, w, z, compute_z, want_value, g,
    h, sel, dsel,
):  # fmt: skip
    """The pass of ``newton_value_grad`` over rows[q0:q1]: g += sum_i coef_i x_i and
    h += sum_i D_ii x_i^2 (elementwise; g, h of shape (n_w,) as the caller started them), the
    selected rows and their D_ii in sel[q0:q0 + k] / dsel[q0:q0 + k]; with ``compute_z`` the
    z_i first. Returns (their sum of C_i xi(z_i) if want_value else 0, k)."""
    last = w.shape[0] - 1
    has_bias = bias >= 0.0
    loss_sum = 0.0
    n_sel = q0
    for q in range(q0, q1):
        i = rows[q]
        if compute_z:
            t = row_dot_in_order(indptr, indices, data, i, w)
            if has_bias:
                t += w[last] * bias
            z[i] = datafit_z(loss, t, y[i])
        value, coef, dii = datafit_terms(loss, z[i], C[i], y[i], p, want_value)
        loss_sum += value
        if coef == 0.0 and dii == 0.0:
            continue
        k = np.uint64(indptr[i])  # (a while loop: ``sparse_rows``' note)
        stop = np.uint64(indptr[i + 1])
        while k < stop:
            j = np.uint64(indices[k])
            v = np.float64(data[k])
            g[j] += coef * v
            h[j] += dii * v * v
            k += np.uint64(1)
        if has_bias:
            g[last] += coef * bias
            h[last] += dii * bias * bias
        if dii != 0.0:
            sel[n_sel] = i
            dsel[n_sel] = dii
            n_sel += 1
    return loss_sum, n_sel - q0


@njit(cache=True, nogil=True, inline="always")
def _add_hessian_rows(indptr, indices, data, bias, sel, dsel, k0_sel, k1_sel, v, out) -> float:
    """The pass of ``hessian_vector`` over the selected rows sel[k0_sel:k1_sel]:
    out += sum_i D_i (x_i'v) x_i (out of shape (n_w,) as the caller started it). Returns
    sum_i D_i (x_i'v)^2."""
    last = v.shape[0] - 1
    has_bias = bias >= 0.0
    quad = 0.0
    for q in range(k0_sel, k1_sel):
        i = sel[q]
        u = row_dot_in_order(indptr, indices, data, i, v)
        if has_bias:
            u += v[last] * bias
        du = dsel[q] * u
        quad += du * u
        row_axpy(indptr, indices, data, bias, i, du, out)
    return quad


@njit(cache=True, nogil=True)
def newton_value_grad(
    indptr, indices, data, bias, y, C, rows, loss, p, reg_bias, w, z, compute_z, want_value, g,
    M, sel, dsel,
):  # fmt: skip
    """One pass over the rows: loss value, gradient, Hessian selection and preconditioner.

    Rows visited: ``rows`` (those with C_i > 0). With ``compute_z`` the z_i (``datafit_z`` of
    w'x_i) are computed into ``z`` first; otherwise ``z`` holds them already. p: the SVR's
    tube half width (unused by the other losses). Writes g = grad P(w);
    M = (1 - a) + a diag(H) (LIBLINEAR's preconditioner); sel[:k] the rows entering the
    Hessian and dsel[:k] their D_i. Returns (sum_i C_i xi(z_i) if want_value else 0, k, ||g||).
    """
    n_w = w.shape[0]
    last = n_w - 1
    for j in range(n_w):
        g[j] = w[j]
        M[j] = 1.0
    if not reg_bias:
        g[last] = 0.0
        M[last] = 0.0
    loss_sum, n_sel = _add_value_grad_rows(
        indptr, indices, data, bias, y, C, rows, 0, rows.shape[0], loss, p, w, z, compute_z,
        want_value, g, M, sel, dsel,
    )  # fmt: skip
    gg = 0.0
    for j in range(n_w):
        gg += g[j] * g[j]
        M[j] = (1.0 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * M[j]
    return loss_sum, n_sel, norm_from_squares(g, gg)


@njit(cache=True, nogil=True)
def norm_from_squares(g, gg) -> float:
    """||g|| from gg, the sum of its squares as the caller added them; where that sum
    overflowed (entries past about 1e154: large C or features) or underflowed (entries below
    about 1e-140: C = 1e-300), from g scaled by its largest entry, as BLAS's dnrm2 computes
    it. (An infinite norm stopped the solver at w = 0 as converged, ||g|| <= eps ||g0||
    holding for inf <= inf; a norm of 0, for 0 <= 0.)"""
    if 1e-280 < gg < np.inf:
        return np.sqrt(gg)
    scale = 0.0
    for j in range(g.shape[0]):
        if not abs(g[j]) <= scale:  # (a NaN entry too)
            scale = abs(g[j])
    if not scale < np.inf:
        return np.inf  # an infinite or NaN entry: the gradient itself overflowed
    if scale == 0.0:
        return 0.0
    ss = 0.0
    for j in range(g.shape[0]):
        t = g[j] / scale
        ss += t * t
    return scale * np.sqrt(ss)


@njit(cache=True, nogil=True)
def value_grad(
    indptr, indices, data, bias, y, C, rows, loss, reg_bias, w, margins, compute_margins,
    want_value, g, M, sel, dsel,
):  # fmt: skip
    """``newton_value_grad`` for the classification losses (margins z_i = y_i w'x_i)."""
    return newton_value_grad(
        indptr, indices, data, bias, y, C, rows, loss, 0.0, reg_bias, w, margins,
        compute_margins, want_value, g, M, sel, dsel,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, v, out) -> float:
    """out = H v = v + X_I' D_I X_I v (bias weight unregularised if not reg_bias); returns v'Hv.

    One pass over the selected rows: u = x_i'v, then out += D_i u x_i. v'Hv is accumulated
    on the way as v'v + sum_i D_i u_i^2.
    """
    n_w = v.shape[0]
    last = n_w - 1
    vv = 0.0
    for j in range(n_w):
        out[j] = v[j]
        vv += v[j] * v[j]
    if not reg_bias:
        vv -= v[last] * v[last]
        out[last] = 0.0
    quad = _add_hessian_rows(indptr, indices, data, bias, sel, dsel, 0, n_sel, v, out)
    return vv + quad


# The pieces of pcg and of the line search, shared by the serial kernels and ``RowPasses``
# (which runs the passes over the rows, the ``*_part`` loops, on row chunks).


@njit(cache=True, nogil=True)
def cg_start(g, M, s, r, d) -> float:
    """pcg's start: s = 0, r = -g, d = M^-1 r; returns r'M^-1 r."""
    z_dot_r = 0.0
    for j in range(g.shape[0]):
        s[j] = 0.0
        r[j] = -g[j]
        d[j] = r[j] / M[j]
        z_dot_r += d[j] * r[j]
    return z_dot_r


@njit(cache=True, nogil=True)
def cg_step(alpha, g, M, s, r, d, Hd):
    """pcg's update s += alpha d, r -= alpha Hd; returns (s'r, s'g, r'M^-1 r)."""
    s_dot_r = 0.0
    s_dot_g = 0.0
    z_dot_r_new = 0.0
    for j in range(g.shape[0]):
        s[j] += alpha * d[j]
        r[j] -= alpha * Hd[j]
        s_dot_r += s[j] * r[j]
        s_dot_g += s[j] * g[j]
        # z = M^-1 r first, as LIBLINEAR forms it: r r overflows past 1e154 (large C)
        z_dot_r_new += (r[j] / M[j]) * r[j]
    return s_dot_r, s_dot_g, z_dot_r_new


@njit(cache=True, nogil=True)
def cg_direction(beta, M, r, d) -> None:
    """pcg's next direction d = M^-1 r + beta d."""
    for j in range(d.shape[0]):
        d[j] = r[j] / M[j] + beta * d[j]


@njit(cache=True, nogil=True)
def line_search_products(w, s, g, reg_bias):
    """(s's, w's, w'w, g's) for the line search (s's, w's, w'w without an unregularised bias)."""
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
    return s_s, w_s, w_w, g_s


@njit(cache=True, nogil=True, inline="always")
def direction_part(indptr, indices, data, bias, y, rows, q0, q1, loss, s, dz) -> None:
    """dz_i = how z_i moves along s (``datafit_dz`` of s'x_i), for the rows rows[q0:q1]."""
    last = s.shape[0] - 1
    for q in range(q0, q1):
        i = rows[q]
        t = row_dot_in_order(indptr, indices, data, i, s)
        if bias >= 0.0:
            t += s[last] * bias
        dz[i] = datafit_dz(loss, t, y[i])


@njit(cache=True, nogil=True, inline="always")
def trial_part(C, rows, q0, q1, loss, p, z, dz, a) -> float:
    """sum of C_i xi(z_i + a dz_i) over the rows rows[q0:q1]."""
    total = 0.0
    for q in range(q0, q1):
        i = rows[q]
        total += datafit_value(loss, z[i] + a * dz[i], C[i], p)
    return total


@njit(cache=True, nogil=True, inline="always")
def step_part(rows, q0, q1, z, dz, a) -> None:
    """z_i += a dz_i for the rows rows[q0:q1]."""
    for q in range(q0, q1):
        i = rows[q]
        z[i] += a * dz[i]


@njit(cache=True, nogil=True)
def axpy(a, x, y) -> None:
    """y += a x."""
    for j in range(y.shape[0]):
        y[j] += a * x[j]


@njit(cache=True, nogil=True)
def cg_advance(cg_iter, d_hd, z_dot_r, q_old, cgtol, g, M, s, r, d, Hd):
    """pcg's CG step cg_iter once Hd = H d (d'Hd = d_hd) is known: s += alpha d,
    r -= alpha Hd, NEWTON::pcg's quadratic-model test, then the next direction d.

    Returns (status, model value q(s), r'M^-1 r): status _CG_GOING_ON to take another step,
    else pcg's status (0 stopped by the rule, 1 d'Hd <= 1e-16, 2 the model value turned
    positive or increased), with s, r and d left as that step leaves them.
    """
    if d_hd <= 1.0e-16:
        return 1, q_old, z_dot_r
    alpha = z_dot_r / d_hd
    s_dot_r, s_dot_g, z_dot_r_new = cg_step(alpha, g, M, s, r, d, Hd)
    # the quadratic model q(s) = g's + 1/2 s'Hs = -1/2 (s'r - s'g) since Hs = -g - r
    q_new = -0.5 * (s_dot_r - s_dot_g)
    q_diff = q_new - q_old
    if q_new <= 0.0 and q_diff <= 0.0:
        if cg_iter * q_diff >= cgtol * q_new:
            return 0, q_new, z_dot_r_new
    else:
        return 2, q_new, z_dot_r_new
    cg_direction(z_dot_r_new / z_dot_r, M, r, d)
    return _CG_GOING_ON, q_new, z_dot_r_new


@njit(cache=True, nogil=True)
def pcg(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, g, M, eps_cg, s, r, d, Hd):
    """Preconditioned CG for H s = -g with LIBLINEAR's quadratic-model stopping rule.

    s, r, d, Hd: work arrays of length n_w (s the step and r the residual on return).
    Returns (CG steps, status): 0 stopped by the rule, 1 d'Hd <= 1e-16, 2 the model value
    turned positive or increased, 3 max(n_w, 5) steps reached.
    """
    z_dot_r = cg_start(g, M, s, r, d)
    cgtol = min(eps_cg, np.sqrt(np.sqrt(z_dot_r)))
    max_cg_iter = max(g.shape[0], 5)
    q_old = 0.0
    for cg_iter in range(1, max_cg_iter + 1):
        d_hd = hessian_vector(indptr, indices, data, bias, sel, dsel, n_sel, reg_bias, d, Hd)
        status, q_old, z_dot_r = cg_advance(cg_iter, d_hd, z_dot_r, q_old, cgtol, g, M, s, r, d, Hd)
        if status != _CG_GOING_ON:
            return cg_iter, status
    return max_cg_iter, 3


@njit(cache=True, nogil=True)
def line_search_and_update(
    indptr, indices, data, bias, y, C, rows, loss, p, reg_bias, w, z, dz, s, g, f_old, init_step,
):  # fmt: skip
    """Backtracking line search along s from ``init_step``; on success update w and z.

    Accepts the first step a (halving up to MAX_LINE_SEARCH times) with
    P(w + a s) - P(w) <= ARMIJO_ETA a g's; dz (length l) is work space for the z_i's rate of
    change along s. Returns (a, P at the new w), or (0, f_old) with w and z unchanged when no
    step is accepted.
    """
    n_rows = rows.shape[0]
    s_s, w_s, w_w, g_s = line_search_products(w, s, g, reg_bias)
    direction_part(indptr, indices, data, bias, y, rows, 0, n_rows, loss, s, dz)
    a = init_step
    for _ in range(MAX_LINE_SEARCH):
        total = trial_part(C, rows, 0, n_rows, loss, p, z, dz, a)
        f = total + 0.5 * (a * a * s_s + w_w) + a * w_s
        if f - f_old <= ARMIJO_ETA * a * g_s:
            step_part(rows, 0, n_rows, z, dz, a)
            axpy(a, s, w)
            return a, f
        a *= 0.5
    return 0.0, f_old


# ----------------------------------------------------------------------------- row chunks
#
# With Subproblem.n_threads > 1 the passes over the rows run on contiguous chunks of ``rows``
# side by side (the kernels release the GIL), as multi-core LIBLINEAR parallelises its Newton
# solvers: each chunk writes its X' part into its own length-n_w buffer, and the buffers are
# then added in chunk order, so a given number of threads always gives the same bits. Only the
# order of those sums differs from the serial kernels above, which n_threads = 1 runs as they
# are. A chunk's Hessian selection is kept in sel[q0:q0 + k] (its rows' own positions), so no
# chunk writes where another does.


@njit(cache=True, nogil=True)
def value_grad_part(
    indptr, indices, data, bias, y, C, rows, q0, q1, loss, p, w, z, compute_z, want_value, g,
    h, sel, dsel,
):  # fmt: skip
    """``newton_value_grad``'s pass over rows[q0:q1] alone: g = sum_i coef_i x_i and
    h = sum_i D_ii x_i^2 (elementwise) over those rows (g, h (n_w,) zeroed here), their
    selection in sel[q0:q0 + k] / dsel. Returns (their sum of C_i xi(z_i) if want_value, k)."""
    for j in range(w.shape[0]):
        g[j] = 0.0
        h[j] = 0.0
    return _add_value_grad_rows(
        indptr, indices, data, bias, y, C, rows, q0, q1, loss, p, w, z, compute_z, want_value,
        g, h, sel, dsel,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def value_grad_combine(w, reg_bias, g_parts, h_parts, g, M) -> float:
    """g = w + sum_t g_parts[t] and M = (1 - a) + a (1 + sum_t h_parts[t]), the parts added in
    order (bias weight unregularised: no w and no 1 in its entries). Returns ||g||."""
    n_w = w.shape[0]
    last = n_w - 1
    gg = 0.0
    for j in range(n_w):
        gj = w[j]
        hj = 1.0
        if j == last and not reg_bias:
            gj = 0.0
            hj = 0.0
        for t in range(g_parts.shape[0]):
            gj += g_parts[t, j]
            hj += h_parts[t, j]
        g[j] = gj
        M[j] = (1.0 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * hj
        gg += gj * gj
    return norm_from_squares(g, gg)


@njit(cache=True, nogil=True)
def hessian_vector_part(indptr, indices, data, bias, sel, dsel, k0_sel, k1_sel, v, out) -> float:
    """``hessian_vector``'s pass over the selected rows sel[k0_sel:k1_sel] alone:
    out = sum_i D_i (x_i'v) x_i over them (out (n_w,) zeroed here). Returns sum_i D_i (x_i'v)^2.
    """
    for j in range(v.shape[0]):
        out[j] = 0.0
    return _add_hessian_rows(indptr, indices, data, bias, sel, dsel, k0_sel, k1_sel, v, out)


@njit(cache=True, nogil=True)
def hessian_vector_combine(reg_bias, v, parts, out) -> float:
    """out = v + sum_t parts[t], in order (bias weight unregularised: no v in its entry).
    Returns v'v over the regularised weights."""
    n_w = v.shape[0]
    last = n_w - 1
    vv = 0.0
    for j in range(n_w):
        o = v[j]
        if j == last and not reg_bias:
            o = 0.0
        else:
            vv += v[j] * v[j]
        for t in range(parts.shape[0]):
            o += parts[t, j]
        out[j] = o
    return vv


class RowPasses:
    """The passes of one Newton solve over its rows, in row chunks run side by side.

    Chunks: contiguous ranges of positions in ``rows``, about equal in non-zeros
    (``parallel.row_chunks``); chunk 0 runs on the calling thread, the others on a pool that
    lives as long as the solve (``close``). Per chunk one pair of length-n_w buffers for its
    X' parts. Each method is the threaded twin of a serial kernel (same arguments, same
    result up to the order of the sums).
    """

    def __init__(self, X, bias, y, C, rows, loss, p, reg_bias, n_w, n_threads):
        self.n_threads = n_threads
        self.X, self.bias, self.y, self.C, self.rows = X, bias, y, C, rows
        self.loss, self.p, self.reg_bias = loss, p, reg_bias
        nnz = np.concatenate(([0], np.cumsum(X.indptr[rows + 1] - X.indptr[rows])))
        self.chunks = row_chunks(nnz, n_threads)
        n_chunks = len(self.chunks)
        self.g_parts = np.empty((n_chunks, n_w))
        self.h_parts = np.empty((n_chunks, n_w))
        self.n_sel = np.zeros(n_chunks, dtype=np.int64)
        self.pool = ThreadPoolExecutor(max_workers=n_chunks - 1) if n_chunks > 1 else None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def _each(self, work: Callable[..., object], *args) -> list:
        """[work(t, q0, q1, *args) for each chunk t], chunk 0 here and the rest in the pool."""
        futures = [
            self.pool.submit(work, t, q0, q1, *args)
            for t, (q0, q1) in enumerate(self.chunks)
            if t > 0
        ] if self.pool is not None else []  # fmt: skip
        q0, q1 = self.chunks[0]
        first = work(0, q0, q1, *args)
        return [first] + [future.result() for future in futures]

    def value_grad(self, w, z, compute_z, want_value, g, M, sel, dsel):
        """``newton_value_grad``: returns (loss sum, selected rows, ||g||)."""
        X = self.X

        def work(t, q0, q1):
            return value_grad_part(
                X.indptr, X.indices, X.data, self.bias, self.y, self.C, self.rows, q0, q1,
                self.loss, self.p, w, z, compute_z, want_value, self.g_parts[t],
                self.h_parts[t], sel, dsel,
            )  # fmt: skip

        loss_sum = 0.0
        for t, (value, k) in enumerate(self._each(work)):
            loss_sum += value
            self.n_sel[t] = k
        grad_norm = value_grad_combine(w, self.reg_bias, self.g_parts, self.h_parts, g, M)
        return loss_sum, int(self.n_sel.sum()), grad_norm

    def hessian_vector(self, sel, dsel, v, out) -> float:
        """``hessian_vector`` over the selection of the last ``value_grad``: returns v'Hv."""
        X = self.X

        def work(t, q0, q1):
            return hessian_vector_part(
                X.indptr, X.indices, X.data, self.bias, sel, dsel, q0, q0 + self.n_sel[t], v,
                self.g_parts[t],
            )  # fmt: skip

        quad = 0.0
        for part in self._each(work):
            quad += part
        return hessian_vector_combine(self.reg_bias, v, self.g_parts, out) + quad

    def pcg(self, sel, dsel, g, M, eps_cg, s, r, d, Hd) -> tuple[int, int]:
        """``pcg`` step for step, its Hessian-vector products in chunks."""
        z_dot_r = cg_start(g, M, s, r, d)
        cgtol = min(eps_cg, math.sqrt(math.sqrt(z_dot_r)))
        max_cg_iter = max(g.shape[0], 5)
        q_old = 0.0
        for cg_iter in range(1, max_cg_iter + 1):
            d_hd = self.hessian_vector(sel, dsel, d, Hd)
            status, q_old, z_dot_r = cg_advance(
                cg_iter, d_hd, z_dot_r, q_old, cgtol, g, M, s, r, d, Hd
            )
            if status != _CG_GOING_ON:
                return cg_iter, status
        return max_cg_iter, 3

    def line_search_and_update(self, w, z, dz, s, g, f_old, init_step) -> tuple[float, float]:
        """``line_search_and_update``, the passes over the rows in chunks."""
        X = self.X
        s_s, w_s, w_w, g_s = line_search_products(w, s, g, self.reg_bias)
        self._each(
            lambda t, q0, q1: direction_part(
                X.indptr, X.indices, X.data, self.bias, self.y, self.rows, q0, q1, self.loss,
                s, dz,
            )
        )  # fmt: skip

        def trial(t, q0, q1, a):
            return trial_part(self.C, self.rows, q0, q1, self.loss, self.p, z, dz, a)

        def step(t, q0, q1, a):
            step_part(self.rows, q0, q1, z, dz, a)

        a = init_step
        for _ in range(MAX_LINE_SEARCH):
            total = 0.0
            for part in self._each(trial, a):
                total += part
            f = total + 0.5 * (a * a * s_s + w_w) + a * w_s
            if f - f_old <= ARMIJO_ETA * a * g_s:
                self._each(step, a)
                axpy(a, s, w)
                return a, f
            a *= 0.5
        return 0.0, f_old


# ----------------------------------------------------------------------------- the driver


def run_newton(
    sub: Subproblem,
    hook: Hook | None,
    loss: int,
    solver: int,
    bounds: Bounds,
    p: float = 0.0,
) -> Solution:
    """Minimise 1/2 w'w + sum_i C_i xi(z_i) by LIBLINEAR's line-search Newton method.

    The one Newton loop of the family: ``loss`` (LOSS_LOGISTIC, LOSS_SQUARED_HINGE or
    LOSS_SVR_SQUARED with tube half width ``p``) selects the datafit, ``solver`` is the number
    reported, ``bounds`` computes the objectives and dual point at the returned w. sub.eps is
    the relative gradient-norm tolerance as NEWTON gets it (already class-balance scaled for
    -s 0/2); sub.w0 an initial w of shape (n_weights,) (default 0). The hook is called once
    before the first iteration (iteration 0: figures f and grad_norm of the initial w,
    LIBLINEAR's "init f" line) and after every Newton iteration; Progress.state() is resumable
    exactly (sub.resume).
    """
    if loss not in NEWTON_LOSSES:
        raise ValueError(f"the primal Newton solver handles losses {NEWTON_LOSSES}, not {loss}")
    X = sub.X
    bias = float(sub.bias)
    reg_bias = bool(sub.regularize_bias)
    if not reg_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    eps = _base.check_eps(sub.eps)
    if sub.alpha0 is not None:
        raise InvalidInputError("alpha0 is a dual warm start; the primal Newton solver takes w0")
    max_iter = int(sub.max_iter)
    n_rows = X.shape[0]
    n_w = sub.n_weights
    y = np.ascontiguousarray(sub.y, dtype=np.float64)
    C = np.ascontiguousarray(sub.C, dtype=np.float64)
    if y.shape != (n_rows,) or C.shape != (n_rows,):
        raise InvalidInputError(f"y and C must have shape ({n_rows},)")
    index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
    rows = np.flatnonzero(C > 0).astype(index_dtype)

    # z_i at w = 0: margins 0, residuals -y_i
    z = -y if loss == LOSS_SVR_SQUARED else np.zeros(n_rows)
    dz = np.zeros(n_rows)
    sel = np.empty(max(rows.shape[0], 1), dtype=index_dtype)
    dsel = np.empty(max(rows.shape[0], 1))
    g, M, s, r, d, Hd = (np.empty(n_w) for _ in range(6))
    w = np.zeros(n_w)
    passes = None  # serial: the kernels above as they are
    n_threads = thread_count(X.indptr, rows, sub.n_threads)
    if n_threads > 1:
        passes = RowPasses(X, bias, y, C, rows, loss, p, reg_bias, n_w, n_threads)
    try:
        return _newton_loop(
            sub, hook, loss, solver, bounds, p, passes, X, bias, reg_bias, eps, max_iter, y, C,
            rows, z, dz, sel, dsel, g, M, s, r, d, Hd, w,
        )  # fmt: skip
    finally:
        if passes is not None:
            passes.close()


def thread_count(indptr: np.ndarray, rows: np.ndarray, n_threads: int) -> int:
    """Threads for one solve over ``rows``: ``n_threads``, but at most one per
    ``THREAD_MIN_NNZ`` non-zeros of those rows (1: the serial kernels)."""
    if n_threads <= 1 or rows.shape[0] < 2:
        return 1
    return planned_threads(int(np.sum(indptr[rows + 1] - indptr[rows])), rows.shape[0],
                           n_threads)  # fmt: skip


def planned_threads(nnz: int, n_rows: int, n_threads: int) -> int:
    """``thread_count`` of a solve over ``n_rows`` rows holding ``nnz`` non-zeros."""
    if n_threads <= 1 or n_rows < 2:
        return 1
    return max(1, min(int(n_threads), nnz // max(THREAD_MIN_NNZ, 1), n_rows))


def _newton_loop(
    sub, hook, loss, solver, bounds, p, passes, X, bias, reg_bias, eps, max_iter, y, C, rows,
    z, dz, sel, dsel, g, M, s, r, d, Hd, w,
) -> Solution:  # fmt: skip
    """``run_newton`` from its arrays on: the Newton loop, its passes over the rows serial
    (``passes`` None) or in row chunks (a ``RowPasses``)."""
    n_w = w.shape[0]

    def evaluate(compute_z: bool, want_value: bool):
        if passes is not None:
            return passes.value_grad(w, z, compute_z, want_value, g, M, sel, dsel)
        return newton_value_grad(
            X.indptr, X.indices, X.data, bias, y, C, rows, loss, p, reg_bias,
            w, z, compute_z, want_value, g, M, sel, dsel,
        )  # fmt: skip

    # per Newton iteration: (iteration, P(w), ||g||, CG steps, step size)
    history: list[tuple[int, float, float, int, float]] = []
    if sub.resume is not None:
        state = sub.resume
        float_keys = ("w", "z", "f", "grad_norm0", "history")
        count_keys = ("n_iter", "n_cg_total", "stop")
        check_resume_keys(state, float_keys + count_keys)
        if np.shape(state["w"]) != w.shape or np.shape(state["z"]) != z.shape:
            raise InvalidInputError("the state to resume from does not fit this problem")
        numbers = [np.asarray(state[k]) for k in float_keys]
        counts = [np.asarray(state[k]) for k in count_keys]
        if (resume_values_damaged(numbers, counts)
                or numbers[2].shape != () or numbers[3].shape != ()
                or int(state["stop"]) not in (_RUNNING, *_STOP_REASONS)
                # one row of 5 per Newton iteration, at most max_iter of them
                or np.size(state["history"]) % 5 or np.size(state["history"]) > 5 * max_iter):
            # fmt: skip
            raise InvalidInputError("the state to resume from is damaged")
        w[:] = state["w"]
        z[:] = state["z"]
        f = float(state["f"])
        grad_norm0 = float(state["grad_norm0"])
        n_iter = int(state["n_iter"])
        n_cg_total = int(state["n_cg_total"])
        stop = int(state["stop"])
        history = [
            (int(k), float(f_k), float(gn), int(cg), float(a))
            for k, f_k, gn, cg, a in np.asarray(state["history"]).reshape(-1, 5)
        ]
        # the selection, gradient and preconditioner follow from w and z exactly
        _, n_sel, grad_norm = evaluate(False, False)
        fresh = False
    else:
        # ||g|| at w = 0 for the stopping rule, as NEWTON::newton
        loss_sum, n_sel, grad_norm0 = evaluate(False, True)
        check_gradient_at_zero(grad_norm0, sub.w0 is not None)
        if sub.w0 is None:
            grad_norm = grad_norm0
        else:
            w0 = np.asarray(sub.w0, dtype=np.float64)
            if w0.shape != (n_w,):
                raise InvalidInputError(f"w0 must have shape ({n_w},), got {w0.shape}")
            w[:] = w0
            loss_sum, n_sel, grad_norm = evaluate(True, True)
        ww = sq_norm(w)
        if not reg_bias:
            ww -= w[-1] * w[-1]
        f = loss_sum + 0.5 * ww
        n_iter = 0
        n_cg_total = 0
        stop = _STOP_CONVERGED if grad_norm <= eps * rule_scale(grad_norm0) else _RUNNING
        fresh = True
    n_cg = 0
    step = 0.0

    def state() -> dict[str, np.ndarray]:
        table = np.array(history, dtype=np.float64).reshape(-1, 5)
        scalars = {"f": f, "grad_norm0": grad_norm0, "n_iter": n_iter, "n_cg_total": n_cg_total}
        return copy_state(w=w, z=z, **scalars, stop=stop, history=table)

    def progress() -> Progress:
        return newton_progress(
            sub, solver, n_iter, w, f, grad_norm, grad_norm0, n_cg, step, state,
            objectives=lambda: bounds(w, f)[:2],
        )  # fmt: skip

    went_on = ask(hook, progress) if fresh else True
    line_search_failed = False
    while went_on and stop == _RUNNING and n_iter < max_iter:
        f_old = f
        if passes is not None:
            n_cg, _ = passes.pcg(sel, dsel, g, M, EPS_CG, s, r, d, Hd)
            step, f = passes.line_search_and_update(w, z, dz, s, g, f_old, INIT_STEP_SIZE)
        else:
            n_cg, _ = pcg(
                X.indptr, X.indices, X.data, bias, sel, dsel, n_sel, reg_bias, g, M, EPS_CG,
                s, r, d, Hd,
            )  # fmt: skip
            step, f = line_search_and_update(
                X.indptr, X.indices, X.data, bias, y, C, rows, loss, p, reg_bias,
                w, z, dz, s, g, f_old, INIT_STEP_SIZE,
            )  # fmt: skip
        n_cg_total += n_cg
        if step == 0.0:
            line_search_failed = True
            break
        n_iter += 1
        _, n_sel, grad_norm = evaluate(False, False)
        history.append((n_iter, float(f), float(grad_norm), int(n_cg), float(step)))
        if grad_norm <= eps * rule_scale(grad_norm0):
            stop = _STOP_CONVERGED
        elif abs(f_old - f) <= SMALL_REDUCTION_RATIO * abs(f):
            stop = _STOP_SMALL_REDUCTION
        went_on = ask(hook, progress)
    # the line search fails only while no rule has stopped the loop
    if line_search_failed:
        stop_reason = _base.LINE_SEARCH_FAILED
    else:
        stop_reason = final_stop_reason(stop, _STOP_REASONS, went_on, n_iter, max_iter)
    stop_ratio = relative_gradient_norm(grad_norm, grad_norm0)
    # (the summary's threads line: how many ran the passes)
    threaded = {} if passes is None else {"n_threads": passes.n_threads,
                                          "thread_scheme": "row chunks"}  # fmt: skip
    return newton_solution(
        solver, w, f, bounds, n_iter, stop_reason, grad_norm, grad_norm0, stop_ratio, n_cg_total,
        history, **threaded,
    )  # fmt: skip


# ----------------------------------------------------------------------------- -s 0, -s 2


def _svc_bounds(sub: Subproblem, loss: int) -> Bounds:
    """The objectives of -s 0 / -s 2 at w, with the dual point derived from w (none with -R:
    then P(w) is the driver's value, the bias weight left out of 1/2 w'w)."""
    X, bias = sub.X, float(sub.bias)
    y = np.ascontiguousarray(sub.y, dtype=np.float64)
    C = np.ascontiguousarray(sub.C, dtype=np.float64)

    def bounds(w: np.ndarray, f: float):
        if not sub.regularize_bias:
            return float(f), math.nan, math.nan, None
        if loss == LOSS_SQUARED_HINGE:
            alpha = squared_hinge_dual_point(X, bias, y, C, w)
            primal, dual, gap = svm_objectives(X, bias, y, C, w, alpha, loss)
        else:
            alpha, alpha_c = lr_dual_point(X, bias, y, C, w, with_complement=True)
            primal, dual, gap = lr_objectives(X, bias, y, C, w, alpha, alpha_c)
        return primal, dual, gap, alpha

    return bounds


def solve_lr_primal(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 0: L2-regularised logistic regression, 1/2 w'w + sum_i C_i log(1 + exp(-y_i w'x_i)),
    by the line-search Newton method (``run_newton``).

    sub.y: (l,) +1/-1; sub.eps: the relative gradient-norm tolerance (LIBLINEAR's -e scaled by
    the class balance, ``solver_tolerance``); sub.w0: initial w (LIBLINEAR's init_sol, or the
    -s 7 fallback's start). Solution.alpha: alpha_i = C_i sigma(-y_i w'x_i) (None with -R);
    figures: f, grad_norm, grad_norm0, stop_ratio, n_cg_iter, history, n_sv.
    """
    return run_newton(sub, hook, LOSS_LOGISTIC, 0, _svc_bounds(sub, LOSS_LOGISTIC))


def solve_l2svc_primal(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 2: L2-regularised L2-loss SVM, 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2, by the
    line-search Newton method (``run_newton``).

    As ``solve_lr_primal``; Solution.alpha: alpha_i = 2 C_i max(0, 1 - y_i w'x_i).
    """
    return run_newton(sub, hook, LOSS_SQUARED_HINGE, 2, _svc_bounds(sub, LOSS_SQUARED_HINGE))


__all__ = [
    "solve_lr_primal",
    "solve_l2svc_primal",
    "run_newton",
    "value_grad",
    "newton_value_grad",
    "hessian_vector",
    "pcg",
    "line_search_and_update",
    "LOSS_LOGISTIC",
    "LOSS_SQUARED_HINGE",
    "LOSS_SVR_SQUARED",
]
