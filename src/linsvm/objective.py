"""Primal and dual objectives and the duality gap: one definition for every caller.

The problem (docs/architecture.md, "The problems"), for one binary sub-problem::

    P(w)  = 1/2 w'w + sum_i C_i xi(y_i w'x_i)                      (primal)
    f(a)  = 1/2 a'Qbar a - e'a,  Qbar = Q + D,  Q_ij = y_i y_j x_i'x_j   (dual, minimised)
    gap   = P(w) + f(a) >= 0                                         (for any feasible a and any w)

with the bias as LIBLINEAR's implicit extra feature: when ``bias >= 0`` every row gets one more
feature of value ``bias`` and ``w`` one more (last) weight, regularised like the others.

Kernels take the CSR arrays (``indptr``, ``indices``, ``data``) of the training matrix, the
bias value, ``y`` as +1/-1 (float64, shape (l,)) and ``C`` per row (float64, shape (l,)).
Rows with ``C_i == 0`` contribute nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .parallel import effective_n_jobs, for_chunks, row_chunks, sum_row_chunks, work_chunks
from .sparse_rows import row_axpy, row_dot, row_sq_norm, sq_norm  # noqa: F401

# Loss codes shared by the kernels (a small int rather than an object, so kernels stay cacheable).
LOSS_HINGE = 0  # L1-loss SVM: max(0, 1 - z)
LOSS_SQUARED_HINGE = 1  # L2-loss SVM: max(0, 1 - z)^2
LOSS_LOGISTIC = 2  # logistic regression: log(1 + exp(-z))


@njit(cache=True, nogil=True, inline="always")
def loss_value(loss: int, z: float) -> float:
    """xi(z) for the margin z = y w'x."""
    if loss == LOSS_HINGE:
        return max(0.0, 1.0 - z)
    if loss == LOSS_SQUARED_HINGE:
        d = max(0.0, 1.0 - z)
        return d * d
    # log(1 + exp(-z)) without overflow for either sign of z
    if z >= 0.0:
        return np.log1p(np.exp(-z))
    return -z + np.log1p(np.exp(z))


@njit(cache=True, nogil=True)
def loss_sum(indptr, indices, data, bias, y, C, w, loss, start=0.0) -> float:
    """start + sum_i C_i xi(y_i w'x_i): the primal's loss part, added to ``start`` in row
    order."""
    total = start
    for i in range(y.shape[0]):
        if C[i] != 0.0:
            total += C[i] * loss_value(loss, y[i] * row_dot(indptr, indices, data, bias, i, w))
    return total


@njit(cache=True, nogil=True)
def loss_and_dual_point(margin, y, C, loss, alpha, alpha_c) -> float:
    """sum_i C_i xi(y_i w'x_i) from the rows' margins w'x_i (``margin``, (l,)), and the dual
    point of w for the smooth losses, alpha_i = -C_i xi'(y_i w'x_i) (feasible, and alpha* at
    w*): the squared hinge's 2 C_i max(0, 1 - z_i), the logistic's C_i sigma(-z_i) with
    alpha_c_i = C_i sigma(z_i) = C_i - alpha_i to full accuracy. alpha, alpha_c: (l,),
    written."""
    total = 0.0
    for i in range(y.shape[0]):
        c = C[i]
        alpha[i] = 0.0
        alpha_c[i] = c
        if c == 0.0:
            continue
        z = y[i] * margin[i]
        total += c * loss_value(loss, z)
        if loss == LOSS_SQUARED_HINGE:
            alpha[i] = 2.0 * c * max(0.0, 1.0 - z)
        else:  # logistic: sigma(-z) and sigma(z), each without overflow
            e = np.exp(-abs(z))
            alpha[i] = c * (e if z >= 0.0 else 1.0) / (1.0 + e)
            alpha_c[i] = c * (1.0 if z >= 0.0 else e) / (1.0 + e)
    return total


@njit(cache=True, nogil=True)
def margins(indptr, indices, data, bias, w, out) -> None:
    """out_i = w'x_i for every row (with the bias feature when ``bias >= 0``)."""
    for i in range(out.shape[0]):
        out[i] = row_dot(indptr, indices, data, bias, i, w)


@njit(cache=True, nogil=True)
def bias_loss_derivatives(margin, y, C, bias, b, loss) -> tuple[float, float, float]:
    """The loss as a function of a bias weight b whose feature value is ``bias``, the other
    weights fixed: (L(b), L'(b), L''(b)) with L(b) = sum_i C_i xi(y_i (margin_i + bias b)),
    ``margin`` the rows' w'x_i without the bias. For the smooth losses (squared hinge: L''
    its generalised second derivative; logistic), what a Newton step on b needs."""
    value = 0.0
    first = 0.0
    second = 0.0
    for i in range(y.shape[0]):
        c = C[i]
        if c == 0.0:
            continue
        z = y[i] * (margin[i] + bias * b)
        value += c * loss_value(loss, z)
        if loss == LOSS_SQUARED_HINGE:
            slack = 1.0 - z
            if slack > 0.0:
                first -= 2.0 * c * slack * y[i] * bias
                second += 2.0 * c * bias * bias
        else:  # logistic: xi' = -sigma(-z), xi'' = sigma(z) sigma(-z)
            e = np.exp(-abs(z))
            s_neg = (e if z >= 0.0 else 1.0) / (1.0 + e)  # sigma(-z)
            first -= c * s_neg * y[i] * bias
            second += c * s_neg * (1.0 - s_neg) * bias * bias
    return value, first, second


@njit(cache=True, nogil=True)
def primal_value(indptr, indices, data, bias, y, C, w, loss) -> float:
    """P(w) = 1/2 w'w + sum_i C_i xi(y_i w'x_i)."""
    return loss_sum(indptr, indices, data, bias, y, C, w, loss, 0.5 * sq_norm(w))


@njit(cache=True, nogil=True)
def add_rows(indptr, indices, data, bias, coef, w) -> None:
    """w += sum_i coef_i x_i over the rows of ``indptr``, in order."""
    for i in range(coef.shape[0]):
        if coef[i] != 0.0:
            row_axpy(indptr, indices, data, bias, i, coef[i], w)


@njit(cache=True, nogil=True)
def primal_from_dual(indptr, indices, data, bias, y, alpha, n_weights):
    """w(alpha) = sum_i y_i alpha_i x_i, computed afresh (not the solver's running w)."""
    w = np.zeros(n_weights)
    add_rows(indptr, indices, data, bias, y * alpha, w)
    return w


# The most memory the threads of ``weights_from_dual`` may take for their own sums of w, all
# together: fewer threads sum when each w is larger.
PARTIAL_WEIGHTS_MAX_BYTES = 1 << 30


@njit(cache=True, nogil=True)
def _add_parts(parts, out, lo, hi) -> None:
    """out[lo:hi] = parts[0, lo:hi] + parts[1, lo:hi] + ..., added in that order."""
    for j in range(lo, hi):
        total = parts[0, j]
        for k in range(1, parts.shape[0]):
            total += parts[k, j]
        out[j] = total


def weights_from_dual(
    indptr, indices, data, bias: float, coef: np.ndarray, n_weights: int, n_threads: int = 1
) -> np.ndarray:
    """w = sum_i coef_i x_i, computed afresh (the SVM's coef_i = y_i alpha_i, the SVR's beta_i).

    On one thread the rows are added in order: ``primal_from_dual``'s bits. On ``n_threads``
    (as many as their own w fit in ``PARTIAL_WEIGHTS_MAX_BYTES``) each thread sums a chunk of
    the rows into its own w, then the threads add those up by ranges of weights, chunk after
    chunk: the same bits for the same chunks."""
    fit = max(1, PARTIAL_WEIGHTS_MAX_BYTES // (8 * max(int(n_weights), 1)))
    chunks = work_chunks(indptr, min(effective_n_jobs(n_threads), fit))
    w = np.zeros(n_weights)
    if len(chunks) == 1:
        add_rows(indptr, indices, data, bias, coef, w)
        return w
    parts = np.empty((len(chunks), n_weights))
    starts = {r0: k for k, (r0, _) in enumerate(chunks)}

    def rows(r0: int, r1: int) -> None:
        part = parts[starts[r0]]
        part[:] = 0.0  # (by the thread that fills it: its pages first touched there)
        add_rows(indptr[r0 : r1 + 1], indices, data, bias, coef[r0:r1], part)

    for_chunks(chunks, rows)
    for_chunks(row_chunks(np.arange(n_weights + 1), len(chunks)),
               lambda lo, hi: _add_parts(parts, w, lo, hi))  # fmt: skip
    return w


@njit(cache=True, nogil=True)
def svm_dual_value(indptr, indices, data, bias, y, C, alpha, loss, n_weights) -> float:
    """-f(alpha) for the L1-/L2-loss SVM dual: a lower bound on P* for any feasible alpha.

    f(alpha) = 1/2 ||w(alpha)||^2 + 1/2 sum_i D_ii alpha_i^2 - sum_i alpha_i,
    D_ii = 0 (L1 loss) or 1/(2 C_i) (L2 loss).
    """
    w = primal_from_dual(indptr, indices, data, bias, y, alpha, n_weights)
    return -svm_dual_alpha_terms(C, alpha, loss, 0.5 * sq_norm(w))


@njit(cache=True, nogil=True)
def svm_primal_dual(indptr, indices, data, bias, y, C, w, alpha, loss) -> tuple[float, float]:
    """(``primal_value``, ``svm_dual_value``) in one sweep of the rows: each row is read once
    for both its margin under w and its share of w(alpha); the same sums in the same order,
    so the same values, as the two functions'."""
    total = 0.5 * sq_norm(w)
    w_alpha = np.zeros(w.shape[0])
    for i in range(y.shape[0]):
        if C[i] != 0.0:
            total += C[i] * loss_value(loss, y[i] * row_dot(indptr, indices, data, bias, i, w))
        if alpha[i] != 0.0:
            row_axpy(indptr, indices, data, bias, i, y[i] * alpha[i], w_alpha)
    return total, -svm_dual_alpha_terms(C, alpha, loss, 0.5 * sq_norm(w_alpha))


@njit(cache=True, nogil=True)
def svm_dual_alpha_terms(C, alpha, loss, start=0.0) -> float:
    """start + 1/2 sum_i D_ii alpha_i^2 - sum_i alpha_i (f(alpha) with start = 1/2
    ||w(alpha)||^2), added in row order."""
    f = start
    for i in range(alpha.shape[0]):
        a = alpha[i]
        if a != 0.0:
            if loss == LOSS_SQUARED_HINGE:
                f += 0.25 * a * (a / C[i])  # a / C first: a * a underflows at tiny C
            f -= a
    return f


@njit(cache=True, nogil=True)
def _squared_hinge_dual_point(indptr, indices, data, bias, y, C, w):
    alpha = np.zeros(y.shape[0])
    for i in range(y.shape[0]):
        if C[i] > 0.0:
            alpha[i] = (
                2.0 * C[i] * max(0.0, 1.0 - y[i] * row_dot(indptr, indices, data, bias, i, w))
            )
    return alpha


def squared_hinge_dual_point(
    X, bias: float, y: np.ndarray, C: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """The L2-loss SVM dual point of a primal w: alpha_i = 2 C_i max(0, 1 - y_i w'x_i).

    At the optimum it is the dual solution; for any w it is feasible (alpha >= 0 is the L2
    loss's only constraint), so -f(alpha) bounds P* from below for a primal solver's answer.
    """
    return _squared_hinge_dual_point(X.indptr, X.indices, X.data, float(bias), y, C, w)


def svm_objectives(
    X,
    bias: float,
    y: np.ndarray,
    C: np.ndarray,
    w: np.ndarray,
    alpha: np.ndarray,
    loss: int,
    feature_map=None,
) -> tuple[float, float, float]:
    """(primal P(w), dual -f(alpha), gap P(w) + f(alpha)) for an SVM sub-problem.

    X is CSR of shape (l, n); w has n (+1 with a bias) entries; alpha, y, C have l entries.
    With ``feature_map`` (a bound ``linsvm.features.FeatureMap``) the rows are phi(x_i) and w
    has its n_output (+1) entries: phi is formed a bounded chunk of rows at a time.
    """
    b = float(bias)
    if feature_map is None:
        primal, dual = svm_primal_dual(X.indptr, X.indices, X.data, b, y, C, w, alpha, loss)
        return float(primal), float(dual), float(primal - dual)
    losses = 0.0
    w_alpha = np.zeros(w.shape[0])
    for r0, r1 in feature_map.chunks(X):
        Z = feature_map.transform(X[r0:r1], n_jobs=1)
        ys, Cs, alphas = y[r0:r1], C[r0:r1], alpha[r0:r1]
        losses += loss_sum(Z.indptr, Z.indices, Z.data, b, ys, Cs, w, loss)
        w_alpha += primal_from_dual(Z.indptr, Z.indices, Z.data, b, ys, alphas, w.shape[0])
    primal = 0.5 * sq_norm(w) + losses
    dual = -svm_dual_alpha_terms(C, alpha, loss, 0.5 * sq_norm(w_alpha))
    return float(primal), float(dual), float(primal - dual)


def _objectives_by_chunks(indptr, n_threads: int, half_sq: float, losses, dual_terms):
    """(P, D, P - D) of a maintained w: P = half_sq + the rows' losses, D = -(half_sq + the
    rows' dual terms), each summed over row chunks on ``n_threads`` (``sum_row_chunks``)."""
    primal = sum_row_chunks(indptr, n_threads, losses, half_sq)
    dual = -sum_row_chunks(indptr, n_threads, dual_terms, half_sq)
    return float(primal), float(dual), float(primal - dual)


def svm_objectives_maintained(
    X, bias: float, y: np.ndarray, C: np.ndarray, w: np.ndarray, alpha: np.ndarray, loss: int,
    n_threads: int = 1,
) -> tuple[float, float, float]:  # fmt: skip
    """``svm_objectives`` where w is a dual solver's maintained sum_i y_i alpha_i x_i over
    these same rows: the dual takes ||w||^2 instead of forming w(alpha) afresh, so one
    sweep of the rows (their margins) instead of two. The two differ by the rounding the
    running sum gathered (measured within 2e-16 relative on a9a and w8a, -s 1 and -s 3), far
    below any gap a tolerance asks for. ``n_threads`` > 1: the sweep on that many threads
    (``parallel.sum_row_chunks``: the same sums for the same count; one is the serial bits)."""
    b = float(bias)
    indptr, indices, data = X.indptr, X.indices, X.data
    half_sq = 0.5 * sq_norm(w)

    def losses(r0: int, r1: int, start: float) -> float:
        return loss_sum(indptr[r0:r1 + 1], indices, data, b, y[r0:r1], C[r0:r1], w, loss, start)

    def alpha_terms(r0: int, r1: int, start: float) -> float:
        return svm_dual_alpha_terms(C[r0:r1], alpha[r0:r1], loss, start)

    return _objectives_by_chunks(indptr, n_threads, half_sq, losses, alpha_terms)


# The logistic-regression dual (Yu, Huang, Lin 2011), 0 < alpha_i < C_i:
# f(a) = 1/2 ||w(a)||^2 + sum_i [a_i log(a_i / C_i) + (C_i - a_i) log((C_i - a_i) / C_i)].


@njit(cache=True, nogil=True, inline="always")
def _xlogx_rel(a, c):
    """a log(a/c), 0 at a = 0."""
    if a <= 0.0:
        return 0.0
    return a * np.log(a / c)


@njit(cache=True, nogil=True)
def lr_dual_alpha_terms(C, alpha, alpha_c, start=0.0) -> float:
    """start + sum_i [a_i log(a_i/C_i) + (C_i - a_i) log((C_i - a_i)/C_i)] (f(alpha) with
    start = 1/2 ||w(alpha)||^2), added in row order; ``alpha_c`` holds C - alpha."""
    f = start
    for i in range(alpha.shape[0]):
        c = C[i]
        if c > 0.0:
            f += _xlogx_rel(alpha[i], c) + _xlogx_rel(alpha_c[i], c)
    return f


@njit(cache=True, nogil=True)
def _lr_dual_value(indptr, indices, data, bias, y, C, alpha, alpha_c, n_weights) -> float:
    w = primal_from_dual(indptr, indices, data, bias, y, alpha, n_weights)
    return -lr_dual_alpha_terms(C, alpha, alpha_c, 0.5 * sq_norm(w))


def lr_dual_value(X, bias: float, y, C, alpha, alpha_complement=None) -> float:
    """-f(alpha) for the LR dual: a lower bound on P* for any 0 <= alpha_i <= C_i.

    f(a) = 1/2 ||w(a)||^2 + sum_i [a_i log(a_i/C_i) + (C_i - a_i) log((C_i - a_i)/C_i)], with
    w(a) computed afresh and 0 log 0 = 0. ``alpha_complement`` (C - alpha, as a solver keeps it)
    gives the second term full accuracy when alpha_i is near C_i; default C - alpha.
    """
    y = np.asarray(y, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    if alpha_complement is None:
        alpha_c = np.maximum(C - alpha, 0.0)
    else:
        alpha_c = np.ascontiguousarray(alpha_complement, dtype=np.float64)
    n_weights = X.shape[1] + (1 if bias >= 0 else 0)
    return float(
        _lr_dual_value(X.indptr, X.indices, X.data, float(bias), y, C, alpha, alpha_c, n_weights)
    )


@njit(cache=True, nogil=True)
def _lr_dual_point(indptr, indices, data, bias, y, C, w):
    alpha = np.zeros(y.shape[0])
    alpha_c = np.zeros(y.shape[0])
    for i in range(y.shape[0]):
        c = C[i]
        if c > 0.0:
            m = y[i] * row_dot(indptr, indices, data, bias, i, w)
            # sigma(-m) and sigma(m), each without overflow and with full relative accuracy
            if m >= 0.0:
                e = np.exp(-m)
                alpha[i] = c * e / (1.0 + e)
                alpha_c[i] = c / (1.0 + e)
            else:
                e = np.exp(m)
                alpha[i] = c / (1.0 + e)
                alpha_c[i] = c * e / (1.0 + e)
    return alpha, alpha_c


def lr_dual_point(X, bias: float, y, C, w, *, with_complement: bool = False):
    """The dual point of a primal w: alpha_i = C_i sigma(-y_i w'x_i) (feasible; optimal at w*).

    With ``with_complement`` also returns C_i - alpha_i = C_i sigma(y_i w'x_i), computed
    directly.
    """
    y = np.asarray(y, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    alpha, alpha_c = _lr_dual_point(X.indptr, X.indices, X.data, float(bias), y, C, w)
    return (alpha, alpha_c) if with_complement else alpha


def lr_objectives(X, bias: float, y, C, w, alpha, alpha_complement=None):
    """(primal P(w), dual -f(alpha), gap P(w) + f(alpha)) for an LR sub-problem."""
    y = np.asarray(y, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    primal = float(primal_value(X.indptr, X.indices, X.data, float(bias), y, C, w, LOSS_LOGISTIC))
    dual = lr_dual_value(X, bias, y, C, alpha, alpha_complement)
    return primal, dual, primal - dual


# ----------------------------------------------------------------------------- driver


# L1-regularised problems (-s 5, -s 6): P(w) = ||w||_1 + sum_i C_i xi(y_i w'x_i).


@njit(cache=True, nogil=True)
def l1_primal_value(indptr, indices, data, bias, y, C, w, loss, reg_bias) -> float:
    """P(w) = ||w||_1 + sum_i C_i xi(y_i w'x_i) over CSR arrays.

    With ``reg_bias`` False (and bias >= 0) the bias weight (last) is left out of ||w||_1.
    """
    total = 0.0
    n_w = w.shape[0]
    for j in range(n_w):
        total += abs(w[j])
    if bias >= 0.0 and not reg_bias:
        total -= abs(w[n_w - 1])
    for i in range(y.shape[0]):
        if C[i] != 0.0:
            total += C[i] * loss_value(loss, y[i] * row_dot(indptr, indices, data, bias, i, w))
    return total


# The Crammer-Singer multi-class SVM (-s 4), weights W of shape (K, n [+1]).


@njit(cache=True, nogil=True)
def _row_scores(indptr, indices, data, bias, i, Wt, out) -> None:
    """out[m] = w_m'x_i for the (w_size, K) weights Wt, bias feature last when bias >= 0."""
    K = out.shape[0]
    for m in range(K):
        out[m] = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        j = np.uint64(indices[k])
        v = np.float64(data[k])
        for m in range(K):
            out[m] += Wt[j, m] * v
    if bias >= 0.0:
        j = np.uint64(Wt.shape[0] - 1)
        for m in range(K):
            out[m] += Wt[j, m] * bias


@njit(cache=True, nogil=True)
def cs_primal_value(indptr, indices, data, bias, cls, C, Wt) -> float:
    """P(W) = 1/2 ||W||^2 + sum_i C_i max_m (e_i^m + w_m'x_i - w_{y_i}'x_i).

    Wt: (w_size, K), feature-major (the transpose of the public (K, w_size) layout); cls: (l,)
    class index of each row; C: (l,) per-row cost (0 drops the row).
    """
    K = Wt.shape[1]
    total = 0.0
    for j in range(Wt.shape[0]):
        for m in range(K):
            total += Wt[j, m] * Wt[j, m]
    total *= 0.5
    scores = np.empty(K)
    for i in range(cls.shape[0]):
        if C[i] == 0.0:
            continue
        _row_scores(indptr, indices, data, bias, i, Wt, scores)
        yi = cls[i]
        sy = scores[yi]
        worst = 0.0  # m = y_i
        for m in range(K):
            if m != yi:
                worst = max(worst, 1.0 + scores[m] - sy)
        total += C[i] * worst
    return total


@njit(cache=True, nogil=True)
def cs_weights_from_dual(indptr, indices, data, bias, alpha, w_size):
    """W(a) = sum_i x_i a_i as (w_size, K), computed afresh (not the solver's running W)."""
    K = alpha.shape[1]
    Wt = np.zeros((w_size, K))
    nz_m = np.empty(K, dtype=np.uint64)
    nz_a = np.empty(K)
    for i in range(alpha.shape[0]):
        nz = 0  # a block is mostly zeros when classes are many
        for m in range(K):
            if alpha[i, m] != 0.0:
                nz_m[nz] = m
                nz_a[nz] = alpha[i, m]
                nz += 1
        if nz == 0:
            continue
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[k])
            v = np.float64(data[k])
            for q in range(nz):
                Wt[j, nz_m[q]] += nz_a[q] * v
        if bias >= 0.0:
            for q in range(nz):
                Wt[w_size - 1, nz_m[q]] += nz_a[q] * bias
    return Wt


@njit(cache=True, nogil=True)
def cs_dual_value(indptr, indices, data, bias, cls, alpha, w_size) -> float:
    """-f(a) = -1/2 ||W(a)||^2 + sum_i a_i^{y_i}: a lower bound on P* for any feasible a.

    (sum_m e_i^m a_i^m = sum_{m != y_i} a_i^m = -a_i^{y_i} by the equality constraint.)
    """
    Wt = cs_weights_from_dual(indptr, indices, data, bias, alpha, w_size)
    f = 0.0
    for j in range(w_size):
        for m in range(Wt.shape[1]):
            f += Wt[j, m] * Wt[j, m]
    f *= 0.5
    for i in range(cls.shape[0]):
        f -= alpha[i, cls[i]]
    return -f


def cs_objectives(X, bias: float, class_index, C_rows, W, alpha) -> tuple[float, float, float]:
    """(primal P(W), dual -f(alpha), gap) for the Crammer-Singer problem.

    X: CSR (l, n); W: (K, n [+1]) with the bias weight last when bias >= 0; alpha: (l, K).
    """
    cls = np.ascontiguousarray(class_index, dtype=np.int64)
    C_rows = np.ascontiguousarray(C_rows, dtype=np.float64)
    Wt = np.ascontiguousarray(np.asarray(W, dtype=np.float64).T)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    b = float(bias)
    primal = cs_primal_value(X.indptr, X.indices, X.data, b, cls, C_rows, Wt)
    dual = cs_dual_value(X.indptr, X.indices, X.data, b, cls, alpha, Wt.shape[0])
    return float(primal), float(dual), float(primal - dual)


# Support vector regression (-s 11, 12, 13): residual d_i = w'x_i - y_i, tube width p,
# P(w) = 1/2 w'w + sum_i C_i max(0, |d_i| - p)^k with k = 1 (L1 loss) or 2 (L2 loss).
SVR_LOSS_L1 = 0  # max(0, |d| - p)
SVR_LOSS_L2 = 1  # max(0, |d| - p)^2


def _loss_code(loss) -> int:
    if loss in ("l1", "L1", SVR_LOSS_L1, 13):
        return SVR_LOSS_L1
    if loss in ("l2", "L2", SVR_LOSS_L2, 11, 12):
        return SVR_LOSS_L2
    raise ValueError(f"SVR loss must be 'l1' or 'l2' (or 0/1, or a solver 11/12/13), not {loss!r}")


# (to move into objective.py)


@njit(cache=True, nogil=True, inline="always")
def svr_loss_value(loss: int, d: float, p: float) -> float:
    """xi(d) for the residual d = w'x - y: max(0, |d| - p), squared for the L2 loss."""
    e = abs(d) - p
    if e <= 0.0:
        return 0.0
    if loss == SVR_LOSS_L2:
        return e * e
    return e


@njit(cache=True, nogil=True)
def _svr_primal_value(indptr, indices, data, bias, y, C, w, loss, p, reg_bias) -> float:
    ww = sq_norm(w)
    if not reg_bias:
        ww -= w[w.shape[0] - 1] * w[w.shape[0] - 1]
    return svr_loss_sum(indptr, indices, data, bias, y, C, w, loss, p, 0.5 * ww)


@njit(cache=True, nogil=True)
def svr_loss_sum(indptr, indices, data, bias, y, C, w, loss, p, start=0.0) -> float:
    """start + sum_i C_i xi(w'x_i - y_i): the SVR primal's loss part, added in row order."""
    total = start
    for i in range(y.shape[0]):
        if C[i] > 0.0:
            d = row_dot(indptr, indices, data, bias, i, w) - y[i]
            total += C[i] * svr_loss_value(loss, d, p)
    return total


@njit(cache=True, nogil=True)
def _svr_weights_from_dual(indptr, indices, data, bias, beta, n_weights):
    w = np.zeros(n_weights)
    add_rows(indptr, indices, data, bias, beta, w)
    return w


@njit(cache=True, nogil=True)
def svr_dual_beta_terms(y, C, beta, loss, p, start=0.0) -> float:
    """start + sum_i (lambda_i/2 beta_i^2 + p |beta_i| - y_i beta_i), lambda_i = 1/(2 C_i)
    for the L2 loss, 0 for the L1 loss (f(beta) with start = 1/2 ||w(beta)||^2), added in row
    order."""
    f = start
    for i in range(y.shape[0]):
        b = beta[i]
        if b != 0.0:
            if loss == SVR_LOSS_L2:
                f += 0.25 * b * (b / C[i])  # b / C first: b * b underflows at tiny C
            f += p * abs(b) - y[i] * b
    return f


@njit(cache=True, nogil=True)
def _svr_dual_value(indptr, indices, data, bias, y, C, beta, loss, p, n_weights) -> float:
    w = _svr_weights_from_dual(indptr, indices, data, bias, beta, n_weights)
    return -svr_dual_beta_terms(y, C, beta, loss, p, 0.5 * sq_norm(w))


@njit(cache=True, nogil=True)
def _svr_dual_point(indptr, indices, data, bias, y, C, w, p):
    beta = np.zeros(y.shape[0])
    for i in range(y.shape[0]):
        if C[i] > 0.0:
            d = row_dot(indptr, indices, data, bias, i, w) - y[i]
            if d > p:
                beta[i] = -2.0 * C[i] * (d - p)
            elif d < -p:
                beta[i] = -2.0 * C[i] * (d + p)
    return beta


def svr_primal_value(X, bias, y, C, w, loss, p, *, regularize_bias=True) -> float:
    """P(w) = 1/2 w'w (bias weight left out with -R) + sum_i C_i xi(w'x_i - y_i)."""
    return float(
        _svr_primal_value(
            X.indptr, X.indices, X.data, float(bias), np.asarray(y, np.float64),
            np.asarray(C, np.float64), np.asarray(w, np.float64), _loss_code(loss), float(p),
            bool(regularize_bias),
        )
    )  # fmt: skip


def svr_weights_from_dual(X, bias, beta) -> np.ndarray:
    """w(beta) = sum_i beta_i x_i, computed afresh."""
    n_weights = X.shape[1] + (1 if bias >= 0 else 0)
    return _svr_weights_from_dual(
        X.indptr, X.indices, X.data, float(bias), np.asarray(beta, np.float64), n_weights
    )


def svr_dual_value(X, bias, y, C, beta, loss, p) -> float:
    """-f(beta): a lower bound on P* for any feasible beta (|beta_i| <= C_i for the L1 loss).

    f(beta) = 1/2 ||w(beta)||^2 + sum_i (lambda_i/2 beta_i^2 + p |beta_i| - y_i beta_i).
    """
    n_weights = X.shape[1] + (1 if bias >= 0 else 0)
    return float(
        _svr_dual_value(
            X.indptr, X.indices, X.data, float(bias), np.asarray(y, np.float64),
            np.asarray(C, np.float64), np.asarray(beta, np.float64), _loss_code(loss), float(p),
            n_weights,
        )
    )  # fmt: skip


def svr_dual_point(X, bias, y, C, w, p) -> np.ndarray:
    """The L2-loss SVR dual point of a primal w: beta_i = -2 C_i sign(d_i) max(0, |d_i| - p)."""
    return _svr_dual_point(
        X.indptr, X.indices, X.data, float(bias), np.asarray(y, np.float64),
        np.asarray(C, np.float64), np.asarray(w, np.float64), float(p),
    )  # fmt: skip


def svr_objectives_maintained(
    X, bias: float, y: np.ndarray, C: np.ndarray, w: np.ndarray, beta: np.ndarray, loss: int,
    p: float, n_threads: int = 1,
) -> tuple[float, float, float]:  # fmt: skip
    """``svr_objectives`` where w is a dual solver's maintained sum_i beta_i x_i over these
    rows (``svm_objectives_maintained``'s SVR twin: one sweep of the rows, on ``n_threads``)."""
    b, code, p = float(bias), _loss_code(loss), float(p)
    indptr, indices, data = X.indptr, X.indices, X.data
    half_sq = 0.5 * sq_norm(w)

    def losses(r0: int, r1: int, start: float) -> float:
        return svr_loss_sum(indptr[r0:r1 + 1], indices, data, b, y[r0:r1], C[r0:r1], w, code, p,
                            start)  # fmt: skip

    def beta_terms(r0: int, r1: int, start: float) -> float:
        return svr_dual_beta_terms(y[r0:r1], C[r0:r1], beta[r0:r1], code, p, start)

    return _objectives_by_chunks(indptr, n_threads, half_sq, losses, beta_terms)


def svr_objectives(X, bias, y, C, w, beta, loss, p) -> tuple[float, float, float]:
    """(primal P(w), dual -f(beta), gap P(w) + f(beta)) for a regularised bias."""
    primal = svr_primal_value(X, bias, y, C, w, loss, p)
    dual = svr_dual_value(X, bias, y, C, beta, loss, p)
    return primal, dual, primal - dual


# The one-class SVM (-s 21), LIBLINEAR's scaling: min_a 1/2 a'Qa, Q_ij = x_i'x_j,
# 0 <= a_i <= 1, sum_i a_i = nu l; w = sum_i a_i x_i; decision w'x - rho.


# (to move to objective.py)


@njit(cache=True, nogil=True)
def oneclass_w_from_dual(indptr, indices, data, alpha, n_weights):
    """w(a) = sum_i a_i x_i, computed afresh."""
    w = np.zeros(n_weights)
    for i in range(alpha.shape[0]):
        if alpha[i] != 0.0:
            row_axpy(indptr, indices, data, -1.0, i, alpha[i], w)
    return w


@njit(cache=True, nogil=True)
def oneclass_dual_value(indptr, indices, data, alpha, n_weights) -> float:
    """f(a) = 1/2 a'Qa = 1/2 ||sum_i a_i x_i||^2 (the dual, minimised; LIBLINEAR's objective)."""
    w = oneclass_w_from_dual(indptr, indices, data, alpha, n_weights)
    return 0.5 * sq_norm(w)


@njit(cache=True, nogil=True)
def oneclass_primal_at(indptr, indices, data, w, nu, rho) -> float:
    """P(w, rho) = 1/2 w'w - nu l rho + sum_i max(0, rho - w'x_i)."""
    n_rows = indptr.shape[0] - 1
    total = 0.5 * sq_norm(w) - nu * n_rows * rho
    for i in range(n_rows):
        total += max(0.0, rho - row_dot(indptr, indices, data, -1.0, i, w))
    return total


@njit(cache=True, nogil=True)
def oneclass_best_rho(indptr, indices, data, w, nu) -> float:
    """argmin_rho P(w, rho): the ceil(nu l)-th smallest w'x_i."""
    n_rows = indptr.shape[0] - 1
    if n_rows == 0:
        return 0.0
    g = np.empty(n_rows)
    margins(indptr, indices, data, -1.0, w, g)
    k = int(np.ceil(nu * n_rows))
    k = min(max(k, 1), n_rows)
    return np.partition(g, k - 1)[k - 1]


@njit(cache=True, nogil=True)
def oneclass_primal_value(indptr, indices, data, w, nu) -> float:
    """P(w) = min_rho P(w, rho), an upper bound on P* = -1/2 ||w*||^2."""
    rho = oneclass_best_rho(indptr, indices, data, w, nu)
    return oneclass_primal_at(indptr, indices, data, w, nu, rho)


def oneclass_objectives(X, nu: float, alpha) -> tuple[float, float, float]:
    """(primal P(w(a)), dual -f(a), gap = P + f >= 0), with w(a) recomputed from ``alpha``."""
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    w = oneclass_w_from_dual(X.indptr, X.indices, X.data, alpha, X.shape[1])
    dual = -0.5 * float(sq_norm(w))
    primal = float(oneclass_primal_value(X.indptr, X.indices, X.data, w, float(nu)))
    return primal, dual, primal - dual


# The L1-loss SVM dual from quantities a primal solver already maintains (linsvm.solvers.sgd).


@njit(cache=True, nogil=True)
def hinge_dual_value_at(alpha_sum: float, ww: float) -> float:
    """-f(alpha) = e'alpha - 1/2 ||w(alpha)||^2 for the L1-loss SVM dual (D_ii = 0).

    The same value as ``svm_dual_value(..., LOSS_HINGE, ...)``, from sum_i alpha_i and
    ||w(alpha)||^2 of a w(alpha) = sum_i y_i alpha_i x_i that the caller keeps up to date
    (``svm_dual_value`` recomputes w(alpha), one pass over the data). A lower bound on P* when
    0 <= alpha_i <= C_i.
    """
    return alpha_sum - 0.5 * ww
