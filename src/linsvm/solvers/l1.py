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

``solve_l1r_l2_svc`` (Yuan, Chang, Hsieh, Lin, JMLR 2010; Fan et al. 2008, appendix): primal
coordinate descent over the features in a fresh random order each outer iteration. For feature
j, with b_i = 1 - y_i w'x_i kept up to date, G = -2 sum_{b_i > 0} C_i y_i x_ij b_i and
H = max(2 sum_{b_i > 0} C_i x_ij^2, 1e-12); the Newton direction of the one-variable problem
(with the |w_j| term) is taken, then an Armijo line search (sigma = 0.01, halving, at most 20
trials) that first tries the cheap sufficient-decrease bound sum_i C_i x_ij^2 d^2 + G d + ... <= 0
and only then evaluates the loss change on the column. Shrinking: a feature at w_j = 0 with
-1 + M/l < G < 1 - M/l (M the largest violation of the previous outer iteration, l the number
of rows) leaves the active set. Stop when the violation's 1-norm over the outer iteration is
<= eps times that of the first outer iteration; when the active set was shrunk, reactivate all
features and continue instead. At most ``max_iter`` = 1000 outer iterations.

``solve_l1r_lr`` (newGLMNET: Yuan, Ho, Lin, JMLR 2012): each Newton iteration computes the
gradient and the Hessian diagonal (+ nu = 1e-12) over the features not shrunk (outer shrinking,
same rule as above), stops when the violation's 1-norm is <= eps times the first one, else
minimises the quadratic model + ||w||_1 by coordinate descent over the active features (inner
shrinking with the inner iteration's own extremes, steps clipped to [-10, 10], at most
``max_inner_iter`` = 1000 CD cycles, inner stop at inner_eps times the first outer 1-norm with
inner_eps starting at 1 and divided by 4 whenever a QP took a single cycle), then a line
search on the full step (Armijo, sigma = 0.01, halving, at most 20 trials). At most
``max_iter`` = 100 Newton iterations.

Tolerance: LIBLINEAR's ``-e`` (default 0.01 for both) is scaled in ``train_one`` as
eps * max(min(pos, neg), 1) / l; the solvers take the scaled value (``primal_tolerance``).
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

Layout: the training matrix is transposed once (as LIBLINEAR does) into CSC arrays holding
y_i x_ij (float64), rows renumbered over the rows with C_i > 0. The bias column (value
``bias * y_i`` in every row) is appended to these transposed arrays during the same pass: it is
part of that one copy, l more entries, rather than a copy of X with a column appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..data import as_csr
from ..errors import InvalidInputError
from ..objective import (  # noqa: F401  (l1_primal_value re-exported from objective)
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    l1_primal_value,
    loss_value,
    row_dot,
)
from ._random import new_state, shuffle
from .newton import primal_tolerance

__all__ = [
    "DEFAULT_EPS",
    "L1Solution",
    "l1_primal_value",
    "primal_tolerance",
    "solve_l1r_l2_svc",
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


# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _transpose_signed(indptr, indices, data, rows, y, n_features, bias, colptr, rowpos, vals):
    """CSC arrays of y_i x_ij over the rows ``rows`` (renumbered 0..len-1), bias column last.

    colptr must have n_features (+1 with a bias) + 1 zeroed entries; rowpos / vals the total
    number of entries. Rows come out ascending within each column.
    """
    n_rows = rows.shape[0]
    for r in range(n_rows):
        i = rows[r]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            colptr[np.uint64(indices[k]) + np.uint64(1)] += 1
    if bias >= 0.0:
        colptr[n_features + 1] = n_rows
    for j in range(colptr.shape[0] - 1):
        colptr[j + 1] += colptr[j]
    fill = colptr[:-1].copy()
    for r in range(n_rows):
        i = rows[r]
        yi = y[i]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[k])
            p = np.uint64(fill[j])
            rowpos[p] = r
            vals[p] = yi * data[k]
            fill[j] += 1
        if bias >= 0.0:
            p = np.uint64(fill[n_features])
            rowpos[p] = r
            vals[p] = yi * bias
            fill[n_features] += 1


@njit(cache=True, nogil=True)
def _margins(colptr, rowpos, vals, w, z) -> None:
    """z_i = y_i w'x_i from the signed columns."""
    z[:] = 0.0
    for j in range(w.shape[0]):
        wj = w[j]
        if wj != 0.0:
            for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
                z[np.uint64(rowpos[k])] += wj * vals[k]


@njit(cache=True, nogil=True, inline="always")
def _violation(g, wj, free) -> float:
    """|minimum-norm subgradient| of |w_j| + (loss) at w_j with loss gradient g."""
    if free:
        return abs(g)
    if wj > 0.0:
        return abs(g + 1.0)
    if wj < 0.0:
        return abs(g - 1.0)
    if g + 1.0 < 0.0:
        return -(g + 1.0)
    if g - 1.0 > 0.0:
        return g - 1.0
    return 0.0


@njit(cache=True, nogil=True)
def l1_optimality(colptr, rowpos, vals, C, w, loss, reg_bias, has_bias):
    """(1-norm, max) of the violation over all features at w, computed afresh.

    Same measure as the solvers' stopping rule, but at one point (the solvers accumulate it
    while w moves during a sweep).
    """
    n_rows = C.shape[0]
    z = np.empty(n_rows)
    _margins(colptr, rowpos, vals, w, z)
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
        v = _violation(g, w[j], has_bias and (not reg_bias) and j == n_w - 1)
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
def l1r_l2_svc_kernel(
    colptr, rowpos, vals, C, free_last, eps, max_iter, rng, w, b, history, gnorm1_ref
):
    """Coordinate descent for min ||w||_1 + sum C_i max(0, b_i)^2, b = 1 - z.

    w (n_w,) and b (l,) are updated in place (start: 0 and 1, or a warm start w and its
    b = 1 - z). ``free_last``: the last weight (the bias) is not penalised. ``history`` (length
    max_iter or 0): P(w) after each outer iteration. ``gnorm1_ref``: the stopping rule's
    reference when >= 0; < 0: the first outer iteration's 1-norm (LIBLINEAR). Returns (outer
    iterations, converged, last 1-norm, reference 1-norm, line-search failures).
    """
    n_rows = C.shape[0]
    n_w = w.shape[0]
    record = history.shape[0] >= max_iter
    l_f = float(max(n_rows, 1))
    # C_i is read as C[i * c_step]: with one C for every row (no class or sample weights, the
    # usual case) c_step = 0 and the column loops make one random access a non-zero (b_i), not
    # two; on pypi-recent C alone is 5 MB.
    c_step = np.uint64(1)
    if n_rows > 0 and np.all(C == C[0]):
        c_step = np.uint64(0)

    xj_sq = np.zeros(n_w)  # sum_i C_i x_ij^2: bounds the loss's curvature along feature j
    for j in range(n_w):
        s2 = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            v = vals[k]
            s2 += C[np.uint64(rowpos[k])] * v * v
        xj_sq[j] = s2
    index = np.arange(n_w)
    active = n_w
    gmax_old = np.inf
    gnorm1_init = gnorm1_ref
    gnorm1_new = 0.0
    n_iter = 0
    converged = False
    n_failures = 0

    while n_iter < max_iter:
        gmax_new = 0.0
        gnorm1_new = 0.0
        shuffle(index, 0, active, rng)
        s = 0
        while s < active:
            j = index[s]
            k0 = np.uint64(colptr[j])
            k1 = np.uint64(colptr[j + 1])
            g_loss = 0.0
            h = 0.0
            for k in range(k0, k1):
                # Only rows with b_i > 0 count. A 0/1 factor, not an if: the sign of b_i is
                # unpredictable and LLVM keeps an if (even a conditional expression) as a
                # branch; the mispredictions made this loop 6x slower (6.5 vs 1 ns a non-zero).
                i = np.uint64(rowpos[k])
                bi = b[i]
                t = C[i * c_step] * vals[k] * np.float64(bi > 0.0)
                g_loss -= t * bi
                h += t * vals[k]
            g_loss *= 2.0
            g = g_loss
            h = max(2.0 * h, MIN_CURVATURE)
            free = free_last and j == n_w - 1
            wj = w[j]
            gp = g + 1.0
            gn = g - 1.0
            if free:
                violation = abs(g)
            elif wj == 0.0:
                if gp < 0.0:
                    violation = -gp
                elif gn > 0.0:
                    violation = gn
                elif gp > gmax_old / l_f and gn < -gmax_old / l_f:
                    active -= 1
                    index[s] = index[active]
                    index[active] = j
                    continue
                else:
                    violation = 0.0
            elif wj > 0.0:
                violation = abs(gp)
            else:
                violation = abs(gn)
            s += 1
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation

            # Newton direction of the one-variable problem
            if free:
                d = -g / h
            elif gp < h * wj:
                d = -gp / h
            elif gn > h * wj:
                d = -gn / h
            else:
                d = -wj
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
                n_failures += 1
                _margins(colptr, rowpos, vals, w, b)
                for i in range(n_rows):
                    b[i] = 1.0 - b[i]

        if n_iter == 0 and gnorm1_ref < 0.0:
            gnorm1_init = gnorm1_new
        if record:
            history[n_iter] = _l2svc_objective(w, b, C, free_last)
        n_iter += 1
        if gnorm1_new <= eps * gnorm1_init:
            if active == n_w:
                converged = True
                break
            active = n_w
            gmax_old = np.inf
            continue
        gmax_old = gmax_new

    return n_iter, converged, gnorm1_new, gnorm1_init, n_failures


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
def l1r_lr_kernel(
    colptr, rowpos, vals, C, free_last, eps, max_newton_iter, max_inner_iter, rng, w, history,
    gnorm1_ref,
):  # fmt: skip
    """newGLMNET for min ||w||_1 + sum C_i log(1 + exp(-z_i)), z_i = y_i w'x_i, from w given.

    w (n_w,) is updated in place (0 for LIBLINEAR's start, or a warm start). ``history``
    (length >= max_newton_iter + 1): P(w) at the start and after each Newton iteration.
    ``gnorm1_ref``: the reference of the stopping rule (and of the inner QPs' tolerance) when
    >= 0; < 0: the first Newton iteration's 1-norm (LIBLINEAR). Returns (Newton iterations,
    converged, last 1-norm, reference 1-norm, total CD cycles, line-search failures, max inner
    cycles of one QP).
    """
    n_rows = C.shape[0]
    n_w = w.shape[0]
    l_f = float(max(n_rows, 1))

    z = np.zeros(n_rows)
    e = np.empty(n_rows)
    tail = np.empty(n_rows)
    tau = np.empty(n_rows)
    D = np.empty(n_rows)
    e_new = np.empty(n_rows)
    tail_new = np.empty(n_rows)
    xtd = np.zeros(n_rows)
    hdiag = np.zeros(n_w)
    grad = np.zeros(n_w)
    _margins(colptr, rowpos, vals, w, z)
    wpd = w.copy()
    w_norm = 0.0
    for j in range(n_w):
        w_norm += abs(w[j])
    if free_last:
        w_norm -= abs(w[n_w - 1])
    loss_sum = _logistic_state(z, C, e, tail, tau, D)
    history[0] = w_norm + loss_sum

    index = np.arange(n_w)
    gmax_old = np.inf
    gnorm1_init = gnorm1_ref
    gnorm1_new = 0.0
    inner_eps = LR_INNER_EPS0
    newton_iter = 0
    total_inner = 0
    max_inner_seen = 0
    n_failures = 0
    converged = False

    while newton_iter < max_newton_iter:
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
            if not (free_last and j == n_w - 1):
                if (
                    w[j] == 0.0
                    and g + 1.0 >= 0.0
                    and g - 1.0 <= 0.0
                    and g + 1.0 > gmax_old / l_f
                    and g - 1.0 < -gmax_old / l_f
                ):
                    # outer-level shrinking
                    active -= 1
                    index[s] = index[active]
                    index[active] = j
                    continue
            s += 1
            violation = _violation(g, w[j], free_last and j == n_w - 1)
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation

        if newton_iter == 0 and gnorm1_ref < 0.0:
            gnorm1_init = gnorm1_new
        if gnorm1_new <= eps * gnorm1_init:
            converged = True
            break

        # minimise the quadratic model + ||.||_1 over wpd by CD on the active features
        n_inner = 0
        qp_gmax_old = np.inf
        qp_active = active
        xtd[:] = 0.0
        while n_inner < max_inner_iter:
            qp_gmax_new = 0.0
            qp_gnorm1_new = 0.0
            shuffle(index, 0, qp_active, rng)
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
                if free_last and j == n_w - 1:
                    violation = abs(g)
                    step = -g / h
                else:
                    gp = g + 1.0
                    gn = g - 1.0
                    if wj == 0.0:
                        if gp < 0.0:
                            violation = -gp
                        elif gn > 0.0:
                            violation = gn
                        elif gp > qp_gmax_old / l_f and gn < -qp_gmax_old / l_f:
                            # inner-level shrinking
                            qp_active -= 1
                            index[s] = index[qp_active]
                            index[qp_active] = j
                            continue
                        else:
                            violation = 0.0
                    elif wj > 0.0:
                        violation = abs(gp)
                    else:
                        violation = abs(gn)
                    if gp < h * wj:
                        step = -gp / h
                    elif gn > h * wj:
                        step = -gn / h
                    else:
                        step = -wj
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
            if qp_gnorm1_new <= inner_eps * gnorm1_init:
                if qp_active == active:
                    break
                qp_active = active  # reactivate and go on
                qp_gmax_old = np.inf
                continue
            qp_gmax_old = qp_gmax_new
        total_inner += n_inner
        max_inner_seen = max(max_inner_seen, n_inner)

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
            w[:] = wpd
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
            n_failures += 1
            wpd[:] = w
            _margins(colptr, rowpos, vals, w, z)
            loss_sum = _logistic_state(z, C, e, tail, tau, D)

        if n_inner == 1:
            inner_eps *= LR_INNER_EPS_SHRINK
        newton_iter += 1
        gmax_old = gmax_new
        history[newton_iter] = w_norm + loss_sum

    return (
        newton_iter,
        converged,
        gnorm1_new,
        gnorm1_init,
        total_inner,
        n_failures,
        max_inner_seen,
    )


# ----------------------------------------------------------------------------- driver


@dataclass
class L1Solution:
    """What an L1-regularised solver returns for one binary sub-problem."""

    w: np.ndarray  # (n [+1],) float64, bias weight last
    n_iter: int  # outer iterations (-s 5) / Newton iterations (-s 6), LIBLINEAR's "#iter"
    converged: bool  # the stopping rule was met (False: iteration cap)
    objective: float  # P(w) at the returned w (bias weight out of ||w||_1 with -R)
    stop_measure: float  # violation 1-norm the rule was last applied to (LIBLINEAR's Gnorm1_new)
    # the rule's reference: violation 1-norm of the first iteration, from w = 0 (Gnorm1_init);
    # after a warm start the 1-norm at w = 0 (see solve_l1r_l2_svc / solve_l1r_lr)
    stop_measure0: float
    nnz_w: int  # non-zeros of w (the bias weight included)
    eps: float = float("nan")  # the tolerance used: converged <=> stop_measure <= eps * measure0
    final_violation: float = float("nan")  # violation 1-norm recomputed at the returned w
    final_max_violation: float = float("nan")  # its largest term
    n_inner_iter: int = 0  # -s 6: CD cycles over all QPs
    n_line_search_failures: int = 0
    history: np.ndarray = field(default_factory=lambda: np.zeros(0))  # P(w) per iteration


def _prepare(X, y, C, bias, eps, regularize_bias):
    X = as_csr(X)
    bias = float(bias)
    if not regularize_bias and bias < 0:
        raise InvalidInputError("an unregularised bias (-R) needs a bias term (bias >= 0)")
    eps = float(eps)
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    n_rows, n_features = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    if y.shape != (n_rows,) or C.shape != (n_rows,):
        raise InvalidInputError(f"y and C must have shape ({n_rows},)")
    if not (np.all(np.isfinite(C)) and np.all(C >= 0)):
        raise InvalidInputError("C must be finite and >= 0 (0 drops the row)")
    ysign = np.where(y > 0, 1.0, -1.0)  # the columns carry y_i x_ij: the sign, whatever y holds
    rows = np.flatnonzero(C > 0)
    n_w = n_features + (1 if bias >= 0 else 0)
    nnz = int(X.indptr[rows + 1].sum() - X.indptr[rows].sum()) if rows.size else 0
    if bias >= 0:
        nnz += rows.size
    pos_dtype = np.int32 if rows.size < 2**31 - 1 else np.int64
    colptr = np.zeros(n_w + 1, dtype=np.int64)
    rowpos = np.empty(nnz, dtype=pos_dtype)
    vals = np.empty(nnz, dtype=np.float64)
    _transpose_signed(
        X.indptr, X.indices, X.data, rows, ysign, n_features, bias, colptr, rowpos, vals
    )
    return X, bias, eps, ysign, C, rows, n_w, colptr, rowpos, vals


def _check_w0(w0, n_w: int) -> np.ndarray:
    """A float64 copy of the warm start w0, checked: shape (n_w,), finite."""
    w0 = np.array(w0, dtype=np.float64)
    if w0.shape != (n_w,):
        raise InvalidInputError(f"w0 must have shape ({n_w},), got {w0.shape}")
    if not np.all(np.isfinite(w0)):
        raise InvalidInputError("w0 must be finite")
    return w0


def _finish(X, bias, ysign, C, w, loss, reg_bias, colptr, rowpos, vals, Cr, **kw) -> L1Solution:
    objective = l1_primal_value(X.indptr, X.indices, X.data, bias, ysign, C, w, loss, reg_bias)
    viol1, violmax = l1_optimality(colptr, rowpos, vals, Cr, w, loss, reg_bias, bias >= 0)
    return L1Solution(
        w=w,
        objective=float(objective),
        nnz_w=int(np.count_nonzero(w)),
        final_violation=float(viol1),
        final_max_violation=float(violmax),
        **kw,
    )


def solve_l1r_l2_svc(
    X,
    y: np.ndarray,
    C: np.ndarray,
    bias: float,
    eps: float,
    max_iter: int = L2SVC_MAX_ITER,
    *,
    regularize_bias: bool = True,
    seed: int = 1,
    record_history: bool = False,
    w0: np.ndarray | None = None,
) -> L1Solution:
    """Minimise ||w||_1 + sum_i C_i max(0, 1 - y_i w'x_i)^2 as LIBLINEAR's -s 5.

    X: CSR (l, n) (anything ``as_csr`` takes); y: (l,) +1/-1 (y > 0 is positive); C: (l,)
    per-row cost (0 drops the row); bias: LIBLINEAR's -B (implicit last feature when >= 0);
    eps: the tolerance as the solver gets it (for LIBLINEAR's -e pass
    ``primal_tolerance(e, y, C)``); max_iter: cap on outer iterations (1000 in LIBLINEAR);
    regularize_bias=False: LIBLINEAR's -R; seed: the random order's seed;
    record_history: keep P(w) after each outer iteration in ``history``;
    w0: (n_w,) = (n [+1],) a warm start (e.g. the w of an earlier solution at another C).

    Stopping rule: the violation 1-norm of an outer iteration <= eps times a reference, the
    first outer iteration's 1-norm (LIBLINEAR). After a warm start that would already be small
    and demand a far tighter tolerance, so the cold start's reference is kept. It is measured
    while w moves during the first sweep, so the cold start's first outer iteration is run
    (from w = 0, same seed) and discarded: one extra sweep, not counted in ``n_iter``, after
    which the warm start stops exactly where a cold start's rule would. (The 1-norm evaluated
    at w = 0 alone can be several times larger.) If the reference is 0, w = 0 is optimal and
    w0 is ignored. Without w0 nothing changes.
    """
    X, bias, eps, ysign, C, rows, n_w, colptr, rowpos, vals = _prepare(
        X, y, C, bias, eps, regularize_bias
    )
    max_iter = int(max_iter)
    free_last = bias >= 0 and not regularize_bias
    Cr = np.ascontiguousarray(C[rows])
    w = np.zeros(n_w)
    b = np.ones(rows.size)
    gnorm1_ref = -1.0  # cold: the kernel takes its first outer iteration's 1-norm
    if w0 is not None:
        w0 = _check_w0(w0, n_w)
        # the cold start's first outer iteration (same seed), run for its 1-norm and discarded
        _, _, _, gnorm1_ref, _ = l1r_l2_svc_kernel(
            colptr, rowpos, vals, Cr, free_last, eps, 1, new_state(seed), w, b, np.zeros(0),
            -1.0,
        )  # fmt: skip
        if gnorm1_ref > 0.0:
            w[:] = w0
            _margins(colptr, rowpos, vals, w, b)  # b = 1 - y_i w'x_i
            np.subtract(1.0, b, out=b)
        else:  # w = 0 is optimal: start there, as a cold start
            gnorm1_ref = -1.0
            w[:] = 0.0
            b[:] = 1.0
    history = np.zeros(max_iter if record_history else 0)
    n_iter, converged, gnorm1, gnorm1_0, n_fail = l1r_l2_svc_kernel(
        colptr, rowpos, vals, Cr, free_last, eps, max_iter, new_state(seed), w, b, history,
        gnorm1_ref,
    )  # fmt: skip
    return _finish(
        X, bias, ysign, C, w, LOSS_SQUARED_HINGE, not free_last, colptr, rowpos, vals, Cr,
        n_iter=int(n_iter), converged=bool(converged), stop_measure=float(gnorm1),
        stop_measure0=float(gnorm1_0), eps=eps, n_line_search_failures=int(n_fail),
        history=history[:n_iter],
    )  # fmt: skip


def solve_l1r_lr(
    X,
    y: np.ndarray,
    C: np.ndarray,
    bias: float,
    eps: float,
    max_iter: int = LR_MAX_NEWTON_ITER,
    *,
    max_inner_iter: int = LR_MAX_INNER_ITER,
    regularize_bias: bool = True,
    seed: int = 1,
    w0: np.ndarray | None = None,
) -> L1Solution:
    """Minimise ||w||_1 + sum_i C_i log(1 + exp(-y_i w'x_i)) as LIBLINEAR's -s 6 (newGLMNET).

    Arguments as ``solve_l1r_l2_svc``; max_iter caps the Newton iterations (100 in LIBLINEAR),
    max_inner_iter the CD cycles of each QP (1000). ``history`` holds P(w) at the start (w = 0,
    or w0) and after each Newton iteration.

    w0: (n_w,) a warm start. The stopping rule (and the inner QPs' tolerance) is relative to
    the violation 1-norm of the first Newton iteration, i.e. at the starting point; after a
    warm start the cold start's is used instead, the 1-norm at w = 0 (for this solver exactly
    the reference a cold start computes). If that is 0, w = 0 is optimal and w0 is ignored.
    Without w0 nothing changes.
    """
    X, bias, eps, ysign, C, rows, n_w, colptr, rowpos, vals = _prepare(
        X, y, C, bias, eps, regularize_bias
    )
    max_iter = int(max_iter)
    free_last = bias >= 0 and not regularize_bias
    Cr = np.ascontiguousarray(C[rows])
    w = np.zeros(n_w)
    gnorm1_ref = -1.0  # cold: the kernel takes its first Newton iteration's 1-norm
    if w0 is not None:
        w0 = _check_w0(w0, n_w)
        # the cold start's reference: the 1-norm at w = 0, as l1r_lr_kernel computes it
        gnorm1_ref, _ = l1_optimality(
            colptr, rowpos, vals, Cr, w, LOSS_LOGISTIC, not free_last, bias >= 0
        )
        if gnorm1_ref > 0.0:
            w[:] = w0
        else:  # w = 0 is optimal: start there, as a cold start
            gnorm1_ref = -1.0
    history = np.zeros(max_iter + 1)
    n_iter, converged, gnorm1, gnorm1_0, n_inner, n_fail, _ = l1r_lr_kernel(
        colptr, rowpos, vals, Cr, free_last, eps, max_iter, int(max_inner_iter),
        new_state(seed), w, history, gnorm1_ref,
    )  # fmt: skip
    return _finish(
        X, bias, ysign, C, w, LOSS_LOGISTIC, not free_last, colptr, rowpos, vals, Cr,
        n_iter=int(n_iter), converged=bool(converged), stop_measure=float(gnorm1),
        stop_measure0=float(gnorm1_0), eps=eps, n_inner_iter=int(n_inner),
        n_line_search_failures=int(n_fail), history=history[: n_iter + 1],
    )  # fmt: skip
