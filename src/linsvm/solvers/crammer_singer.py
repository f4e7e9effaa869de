"""Crammer-Singer multi-class SVM by dual coordinate descent (LIBLINEAR's ``-s 4``).

The problem (Crammer & Singer 2001; LIBLINEAR's appendix, Fan et al. 2008), with K classes,
one weight vector w_m per class and y_i the class of row i::

    P(W) = 1/2 sum_m ||w_m||^2 + sum_i C_i max_m (e_i^m + w_m'x_i - w_{y_i}'x_i)     (primal)
    e_i^m = 1 - delta(m, y_i),   C_i = C_class[y_i] * sample_weight_i

and its dual, minimised over one block of K variables per row::

    f(a) = 1/2 sum_m ||w_m(a)||^2 + sum_i sum_m e_i^m a_i^m,    w_m(a) = sum_i a_i^m x_i
    s.t.  a_i^m <= C_i delta(m, y_i),   sum_m a_i^m = 0           (so 0 <= a_i^{y_i} <= C_i)

For every feasible a and every W, -f(a) <= P* <= P(W) (weak duality), so
gap = P(W) + f(a) >= 0 is the honest progress figure. LIBLINEAR prints f at the solution as its
"Objective value" (a negative number).

The solver follows LIBLINEAR 2.50's ``Solver_MCSVM_CS``: each outer iteration visits the active
rows in a fresh random order; for row i it computes the block gradient G_m = e_i^m + w_m'x_i
over the row's active classes, shrinks the classes stuck at their bound (a_i^m at 0, or C_i for
m = y_i) whose gradient is below ``minG`` (the smallest gradient among the classes that can
still move up), drops the row when at most one class is left, and otherwise solves the block
sub-problem exactly (a K-variable quadratic with one equality constraint, solved by sorting, as
in LIBLINEAR's ``solve_sub_problem``). The stopping figure of an outer iteration is the largest
``maxG - minG`` over the rows updated; when it falls below ``eps_shrink`` (initially
max(10 eps, 1)), the solver stops if it is also below ``eps`` and this iteration started from
every row and class, and otherwise re-activates everything and halves ``eps_shrink`` (never
below ``eps``). Defaults as LIBLINEAR: eps = 0.1, max_iter = 100000 (the registry's). The
rule is absolute, so a warm start (``alpha0``, made feasible for the current C) stops at a cold
start's tolerance.

The kernel keeps all its state in arrays (weights, dual variables, each row's class
permutation and active count, the active rows, the counters, the shrinking tolerance and the
generator), so ``solve_crammer_singer`` runs it through ``_dual.run_dual`` a batch of outer
iterations at a time: the result does not depend on the batching, Ctrl-C and checkpoints act
between batches, and ``Progress.state()`` resumes to the same model bit for bit.

Differences from LIBLINEAR, none of which changes the problem solved: rows with C_i = 0 are left
out; a row with x_i = 0 (no features and no bias) cannot move W, and its block is set to its
dual optimum (a_i^{y_i} = C_i, a_i^m = -C_i for one other class m) so that the reported dual
is tight (LIBLINEAR leaves it at zero, which costs C_i of duality gap); per-row sample
weights are allowed (LIBLINEAR 2.50 has only class weights for -s 4).

Layout: the weights are kept as LIBLINEAR does, W[j, m] for feature j and class m (the K
classes of one feature are neighbours: one cache line per feature for the gradient and update),
and returned as (K, n [+1]) with the bias weight last when bias >= 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..data import is_integer
from ..errors import InvalidInputError
from ..objective import (  # noqa: F401  (re-exported: the CS objectives live in objective)
    cs_dual_value,
    cs_objectives,
    cs_primal_value,
    cs_weights_from_dual,
)
from ..sparse_rows import row_sq_norm
from . import _dual
from ._base import Hook, Solution, Subproblem, check_eps
from ._dual import I_ACTIVE as _I_ACTIVE
from ._dual import I_CONVERGED as _I_CONVERGED
from ._dual import I_ITER as _I_ITER
from ._random import FIRST, new_state, shuffle

SOLVER = 4
# LIBLINEAR's thresholds: a block whose gradient spread is below this is left alone, and the
# first shrinking tolerance is max(EPS_SHRINK_FACTOR * eps, 1).
_SPREAD_SKIP = 1.0e-12
EPS_SHRINK_FACTOR = 10.0
# A change of alpha_i^m below this is kept in alpha but not added to W, as LIBLINEAR does: on
# features of 1e10 and more (A = ||x_i||^2 ~ 1e20+) a block's true step is below the rounding
# of its sorting solve, and such noise added to W through x_i made the model worse than W = 0.
# Kept in alpha, a tiny last step still puts alpha_i^m on its bound, where it is shrunk (left
# out of alpha too, such runs looped to the iteration cap). An absolute bound, as LIBLINEAR's:
# one relative to C_i (1e-12 C_i) left real steps out of W at large C (C_i >= 1e5), W and
# alpha drifted apart, and the solve ran to its cap with its dual below its start's.
_STEP_NOISE = 1.0e-12
_INSERTION_SORT_MAX = 24

# istate / fstate layouts (the counters and thresholds carried between kernel calls): istate
# starts as _dual's (I_ACTIVE, I_ITER, I_CONVERGED), then whether this outer iteration started
# from every row and class
_I_FROM_ALL = 3
_F_EPS_SHRINK, _F_STOPPING = 0, 1
# rows of the kernel's work arrays: fwork (5, K) float64, uwork (2, K) uint64
_W_G, _W_B, _W_D, _W_NEW, _W_DVAL = 0, 1, 2, 3, 4
_U_DIND, _U_PERM = 0, 1
# the arrays that make up the resumable state (Progress.state(), Subproblem.resume)
STATE_KEYS = ("Wt", "alpha", "alpha_index", "y_index", "n_act_row", "index", "istate", "fstate",
              "rng")  # fmt: skip


# ----------------------------------------------------------------------------- the solver


@njit(cache=True, nogil=True)
def _solve_block(A, yidx, Cy, n_act, B, D, out) -> None:
    """The block sub-problem over the n_act active classes (LIBLINEAR's sorting method).

    min_a sum_m (A/2 a_m^2 + B_m a_m)  s.t.  a_m <= Cy [m = yidx], sum_m a_m = const, with
    B_m = G_m - A a_m^old. The solution is a_m = min(bound_m, (beta - B_m)/A) for the beta found
    by scanning the shifted values D = B + A Cy e_yidx in decreasing order. ``yidx >= n_act``
    means the true class is shrunk at a_y = Cy, so the active classes sum to -Cy.
    """
    for m in range(n_act):
        D[m] = B[m]
    if yidx < n_act:
        D[yidx] += A * Cy
    if n_act <= _INSERTION_SORT_MAX:
        for a in range(1, n_act):  # insertion sort: fastest for the usual few classes
            v = D[a]
            b = a - 1
            while b >= 0 and D[b] > v:
                D[b + 1] = D[b]
                b -= 1
            D[b + 1] = v
        Ds = D
    else:
        Ds = D[:n_act]
        Ds.sort()
    # ascending: the r-th largest is Ds[n_act - 1 - r]
    beta = Ds[n_act - 1] - A * Cy
    r = 1
    while r < n_act and beta < r * Ds[n_act - 1 - r]:
        beta += Ds[n_act - 1 - r]
        r += 1
    beta /= r
    for m in range(n_act):
        v = (beta - B[m]) / A
        if m == yidx:
            out[m] = min(Cy, v)
        else:
            out[m] = min(0.0, v)


@njit(cache=True, nogil=True, inline="always")
def _shrinkable(alpha_v, m, yidx, Cy, g, minG) -> bool:
    bound = Cy if m == yidx else 0.0
    return alpha_v == bound and g < minG


@njit(cache=True, nogil=True)
def cs_kernel(
    indptr,
    indices,
    data,
    bias,
    QD,
    Crow,
    cls,
    Wt,
    alpha,
    alpha_index,
    y_index,
    n_act_row,
    index,
    istate,
    fstate,
    rng,
    fwork,
    uwork,
    eps,
    n_epochs,
    shrinking,
):
    """Run up to ``n_epochs`` outer iterations from the state given; update it in place.

    Returns early once converged (istate[_I_CONVERGED] set). Shapes: QD, Crow: (l,) x_i'x_i
    (+bias^2) and C_i; cls: (l,) class index; Wt: (w_size, K); alpha: (l, K); alpha_index:
    (l, K) each row's class permutation (active classes first); y_index: (l,) position of the
    true class in that permutation; n_act_row: (l,) active classes per row; index: (n_train,)
    the trainable rows, the first istate[_I_ACTIVE] active; istate (4,) int64, fstate (2,),
    rng (1,) uint64: see the layouts above. fwork (5, K) float64 and uwork (2, K) uint64 are
    scratch, allocated once by the caller.
    """
    K = Wt.shape[1]
    w_bias = np.uint64(Wt.shape[0] - 1)
    n_train = index.shape[0]
    G = fwork[_W_G]
    B = fwork[_W_B]
    D = fwork[_W_D]
    a_new = fwork[_W_NEW]
    d_val = fwork[_W_DVAL]
    d_ind = uwork[_U_DIND]
    pu = uwork[_U_PERM]
    uK = np.uint64(K)
    Wf = Wt.reshape(Wt.size)  # flat view: W[j, m] at j*K + m

    for _ in range(n_epochs):
        n_active = istate[_I_ACTIVE]
        stopping = -np.inf
        shuffle(index, FIRST, n_active, rng)
        s = 0
        while s < n_active:
            i = index[s]
            A = QD[i]
            Cy = Crow[i]
            n_act = n_act_row[i]
            yidx = y_index[i]
            perm = alpha_index[i]
            a_i = alpha[i]

            # block gradient G_m = e_i^m + w_m'x_i over the active classes
            for m in range(n_act):
                G[m] = 1.0
            if yidx < n_act:
                G[yidx] = 0.0
            for m in range(n_act):
                pu[m] = np.uint64(perm[m])
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                base = np.uint64(indices[k]) * uK
                v = np.float64(data[k])
                for m in range(n_act):
                    G[m] += Wf[base + pu[m]] * v
            if bias >= 0.0:
                base = w_bias * uK
                for m in range(n_act):
                    G[m] += Wf[base + pu[m]] * bias

            minG = np.inf
            maxG = -np.inf
            for m in range(n_act):
                g = G[m]
                if a_i[perm[m]] < 0.0 and g < minG:
                    minG = g
                if g > maxG:
                    maxG = g
            if yidx < n_act and a_i[cls[i]] < Cy and G[yidx] < minG:
                minG = G[yidx]

            if shrinking:
                m = 0
                while m < n_act:
                    if _shrinkable(a_i[perm[m]], m, yidx, Cy, G[m], minG):
                        last = n_act - 1
                        t = perm[m]
                        perm[m] = perm[last]
                        perm[last] = t
                        gt = G[m]
                        G[m] = G[last]
                        G[last] = gt
                        if yidx == last:
                            yidx = m
                        elif yidx == m:
                            yidx = last
                        n_act = last  # re-examine the class swapped into position m
                    else:
                        m += 1
                n_act_row[i] = n_act
                y_index[i] = yidx
                if n_act <= 1:
                    n_active -= 1
                    index[s] = index[n_active]
                    index[n_active] = i
                    continue

            if maxG - minG <= _SPREAD_SKIP:
                s += 1
                continue
            stopping = max(stopping, maxG - minG)

            for m in range(n_act):
                B[m] = G[m] - A * a_i[perm[m]]
            _solve_block(A, yidx, Cy, n_act, B, D, a_new)
            nz = 0
            for m in range(n_act):
                c = perm[m]
                d = a_new[m] - a_i[c]
                a_i[c] = a_new[m]  # (always: a bound reached by a tiny step is then held)
                if abs(d) >= _STEP_NOISE:
                    d_ind[nz] = np.uint64(c)
                    d_val[nz] = d
                    nz += 1
            if nz > 0:
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    base = np.uint64(indices[k]) * uK
                    v = np.float64(data[k])
                    for q in range(nz):
                        Wf[base + d_ind[q]] += d_val[q] * v
                if bias >= 0.0:
                    base = w_bias * uK
                    for q in range(nz):
                        Wf[base + d_ind[q]] += d_val[q] * bias
            s += 1

        istate[_I_ITER] += 1
        istate[_I_ACTIVE] = n_active
        fstate[_F_STOPPING] = stopping
        if not shrinking:
            if stopping < eps:
                istate[_I_CONVERGED] = 1
                return
            continue
        if stopping < fstate[_F_EPS_SHRINK]:
            if stopping < eps and istate[_I_FROM_ALL] == 1:
                istate[_I_CONVERGED] = 1
                return
            # re-activate every row and class, tighten the shrinking tolerance
            istate[_I_ACTIVE] = n_train
            for s2 in range(n_train):
                n_act_row[index[s2]] = K
            fstate[_F_EPS_SHRINK] = max(fstate[_F_EPS_SHRINK] / 2.0, eps)
            istate[_I_FROM_ALL] = 1
        else:
            istate[_I_FROM_ALL] = 0


@njit(cache=True, nogil=True)
def _project_block(a0, yi, Cy, out) -> None:
    """A feasible block from a0 (K,): a_m <= 0 (m != yi), a_yi = -sum_{m != yi} a_m <= Cy.

    Positive entries of the other classes become 0; the true class takes minus their sum; if
    that exceeds Cy the whole block is scaled by Cy / a_yi (so a_yi = Cy and the sum stays 0).
    A feasible block is kept (its true class's entry recomputed as minus the others' sum).
    """
    K = a0.shape[0]
    total = 0.0
    for m in range(K):
        if m != yi:
            v = min(a0[m], 0.0)
            out[m] = v
            total += v
    ay = -total
    if ay > Cy:
        scale = Cy / ay
        for m in range(K):
            out[m] *= scale
        ay = Cy
    out[yi] = ay


@njit(cache=True, nogil=True)
def _prepare(
    indptr, indices, data, bias, cls, Crow, K, QD, alpha, alpha_index, y_index, n_act, alpha0,
    use_alpha0,
):  # fmt: skip
    """Per-row constants and initial state; returns the trainable rows (C_i > 0, x_i != 0).

    With ``use_alpha0`` the trainable rows start from alpha0's blocks made feasible by
    ``_project_block`` (the others as without it: 0, or the dual optimum where x_i = 0).
    """
    l = cls.shape[0]
    n_train = 0
    for i in range(l):
        sq = row_sq_norm(indptr, data, bias, i)
        QD[i] = sq
        for m in range(K):
            alpha_index[i, m] = m
        y_index[i] = cls[i]
        n_act[i] = K
        if Crow[i] > 0.0:
            if sq > 0.0:
                n_train += 1
                if use_alpha0:
                    _project_block(alpha0[i], cls[i], Crow[i], alpha[i])
            elif K > 1:
                # x_i = 0: W cannot see this row; its block's dual optimum is at the bounds
                other = 1 if cls[i] == 0 else 0
                alpha[i, cls[i]] = Crow[i]
                alpha[i, other] = -Crow[i]
    rows = np.empty(n_train, dtype=np.int64)
    t = 0
    for i in range(l):
        if Crow[i] > 0.0 and QD[i] > 0.0:
            rows[t] = i
            t += 1
    return rows


def _class_index(y, n_rows: int, K: int) -> np.ndarray:
    """sub.y (float or int class indices) as int64, checked to be integers in 0..K-1."""
    y = np.asarray(y)
    if y.shape != (n_rows,):
        raise InvalidInputError(f"y must have shape ({n_rows},), got {y.shape}")
    cls = np.ascontiguousarray(y, dtype=np.int64)
    if y.dtype.kind == "f" and not np.array_equal(cls, y):
        raise InvalidInputError("y must hold class indices 0..K-1 for -s 4")
    if n_rows and (cls.min() < 0 or cls.max() >= K):
        raise InvalidInputError(f"y must hold class indices 0..{K - 1} for -s 4")
    return cls


def solve_crammer_singer(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Solve the Crammer-Singer multi-class SVM dual by block coordinate descent.

    What the Subproblem holds for -s 4 (one problem over all classes):

    X : CSR (l, n), any float dtype, int32/int64 indices, sorted indices.
    y : (l,) float64 or int, the class index 0..K-1 of each row (LIBLINEAR's label order).
    C : (l,) float64, the cost of each row, C_i = (C x weight of class y_i) x sample weight_i,
        as for every other solver (``weighted_C[y] * sample_weight``; without sample weights
        ``weighted_C[y]``). 0 drops the row.
    options["n_classes"] : K (required: a class may have no rows); options["shrinking"]
        (default True).
    eps, max_iter, bias (an implicit last feature when >= 0), seed.
    alpha0 : (l, K), a warm start in the layout of ``Solution.alpha`` (e.g. the solution at
        another C or with other weights). Each block is made feasible for the current C_i: the
        entries of the other classes clipped to <= 0, the true class's set to minus their sum,
        and the block scaled down when that exceeds C_i (a feasible block is kept); rows with
        C_i = 0 get 0, rows with x_i = 0 their dual optimum as without a warm start. W starts
        as W(alpha).
    resume : a dict from ``Progress.state()`` (keys ``STATE_KEYS``); continues exactly.

    Returns a Solution with w of shape (K, n [+1]) (bias weight last), alpha (l, K), primal
    P(W), dual -f(alpha), and figures ``stopping`` (the last outer iteration's largest gradient
    spread maxG - minG), ``n_active`` and ``n_sv`` (rows with a non-zero block). The hook sees
    w as a (K, n [+1]) view of the live weights, ``measure = stopping`` and figures
    ``n_active``, ``stopping``, ``eps_shrink``. LIBLINEAR caps -s 4 at 100000 outer
    iterations: with ``hook=None`` the kernel runs in one compiled call, which Ctrl-C cannot
    interrupt; a hook with ``every_iteration = False`` costs a few calls a second.
    """
    X = sub.X
    n_rows, n_features = X.shape
    K = sub.option("n_classes")
    if K is None or not is_integer(K) or K < 1:
        raise InvalidInputError(f"-s 4 needs options['n_classes'] >= 1, got {K!r}")
    K = int(K)
    cls = _class_index(sub.y, n_rows, K)
    Crow = np.ascontiguousarray(sub.C, dtype=np.float64)
    if Crow.shape != (n_rows,):
        raise InvalidInputError(f"C must have shape ({n_rows},), got {Crow.shape}")
    if np.any(~np.isfinite(Crow)) or np.any(Crow < 0.0):
        raise InvalidInputError("the per-row costs C_i must be finite and >= 0")
    eps = check_eps(sub.eps)
    shrinking = bool(sub.option("shrinking", True))
    alpha0 = _dual.warm_start(sub, (n_rows, K))
    use_alpha0 = alpha0 is not None
    if alpha0 is None:
        alpha0 = np.zeros((0, K))

    b = float(sub.bias)
    w_size = n_features + (1 if b >= 0.0 else 0)
    Wt = np.zeros((w_size, K))
    alpha = np.zeros((n_rows, K))
    QD = np.empty(n_rows)
    alpha_index = np.empty((n_rows, K), dtype=np.int64)
    y_index = np.empty(n_rows, dtype=np.int64)
    n_act_row = np.empty(n_rows, dtype=np.int64)
    index = _prepare(
        X.indptr, X.indices, X.data, b, cls, Crow, K, QD, alpha, alpha_index, y_index, n_act_row,
        alpha0, use_alpha0,
    )  # fmt: skip
    if use_alpha0:
        Wt = cs_weights_from_dual(X.indptr, X.indices, X.data, b, alpha, w_size)
    istate = np.array([index.shape[0], 0, 0, 1], dtype=np.int64)
    if K == 1:
        istate[_I_CONVERGED] = 1  # one class: W = 0 is optimal
    fstate = np.array([max(EPS_SHRINK_FACTOR * eps, 1.0), -np.inf])
    rng = new_state(sub.seed)
    state = {
        "Wt": Wt, "alpha": alpha, "alpha_index": alpha_index, "y_index": y_index,
        "n_act_row": n_act_row, "index": index, "istate": istate, "fstate": fstate, "rng": rng,
    }  # fmt: skip
    fwork = np.empty((5, K))
    uwork = np.empty((2, K), dtype=np.uint64)

    def advance(n_epochs: int) -> None:
        cs_kernel(
            X.indptr, X.indices, X.data, b, QD, Crow, cls, Wt, alpha, alpha_index, y_index,
            n_act_row, index, istate, fstate, rng, fwork, uwork, eps, int(n_epochs), shrinking,
        )  # fmt: skip

    def report() -> tuple[float, dict]:
        stopping = float(fstate[_F_STOPPING])
        return stopping, {
            "n_active": int(istate[_I_ACTIVE]),
            "stopping": stopping,
            "eps_shrink": float(fstate[_F_EPS_SHRINK]),
        }

    def values() -> tuple[float, float, float]:
        primal = float(cs_primal_value(X.indptr, X.indices, X.data, b, cls, Crow, Wt))
        dual = float(cs_dual_value(X.indptr, X.indices, X.data, b, cls, alpha, w_size))
        return primal, dual, primal - dual

    def figures() -> dict:
        return {
            "stopping": float(fstate[_F_STOPPING]),
            "n_active": int(istate[_I_ACTIVE]),
            "n_sv": int(np.count_nonzero(np.any(alpha != 0.0, axis=1))),
        }

    # (the hook's w: a (K, n [+1]) view of the solver's own array, the layout of Solution.w)
    return _dual.run_dual(
        sub, hook, SOLVER, advance, state, w=Wt.T, alpha=alpha, report=report, values=values,
        figures=figures,
    )  # fmt: skip


__all__ = [
    "EPS_SHRINK_FACTOR",
    "STATE_KEYS",
    "cs_dual_value",
    "cs_kernel",
    "cs_objectives",
    "cs_primal_value",
    "cs_weights_from_dual",
    "solve_crammer_singer",
]
