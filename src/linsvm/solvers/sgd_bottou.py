"""Bottou's sgd 2.0 programs for the L1-loss SVM: svmsgd (-s 37), svmasgd (-s 38), SGD-QN (-s 39).

The problem is LIBLINEAR's -s 3, one cost C for every row, written as sgd's cost J::

    P(w) = 1/2 w'w + C sum_i max(0, 1 - y_i w'x_i),        lambda = 1/(C l)
    J(w) = lambda P(w) = lambda/2 w'w + 1/l sum_i max(0, 1 - y_i w'x_i)

With ``bias >= 0`` and the default regularised bias, the bias is LIBLINEAR's extra feature of
value ``bias`` (last weight, regularised and updated like the others). With
``regularize_bias=False`` (-B 1 -R; svmsgd and ASGD only) it is sgd's own bias b: the margin is
y (w'x + b), b is left out of the regulariser (P = 1/2 w'w + C sum hinge) and it moves with the
step 0.01 eta (sgd's ``-DBIAS=1 -DREGULARIZED_BIAS=0``, its default build). The hinge's
subgradient at y s = 1 is -y (sgd's HingeLoss: a step unless y s > 1).

svmsgd (sgd 2.0, svm/svmsgd.cpp). Presentation t = 0, 1, ... of row i, step
eta_t = eta0 / (1 + lambda eta0 t)::

    s = w'x_i + b;   w <- (1 - eta_t lambda) w;   if y_i s <= 1:  w <- w + eta_t y_i x_i,
                                                                   b <- b + 0.01 eta_t y_i

w is kept as v / divisor, so the shrink is ``divisor /= 1 - eta_t lambda`` (O(1)), the loss step
adds eta_t y_i divisor x_i to v, and v is divided out (v /= divisor, divisor = 1) once divisor
exceeds 1e5. eta0 is calibrated before training on a sample, the first 1001 rows visited
(rows 0..min(1000, l - 1) of the file in sgd): ``_evaluate_eta(eta)`` runs one pass of the steps
above over the sample from w = 0, b = 0 with the fixed step eta and returns J on the sample
(the bias left out of the norm); starting from eta = 1 and 2, eta is halved while halving
lowers that cost, or else doubled while doubling lowers it, and eta0 is the last accepted
(``_determine_eta0``). A trial eta with eta lambda >= 1 counts as cost +inf (the shrink factor
would be <= 0; sgd would divide by zero or flip signs there).

svmasgd (ASGD, svm/svmasgd.cpp): the same steps with eta_t = eta0 / (1 + lambda eta0 t)^0.75,
and the average a of the iterates, returned as the model::

    mu_t = 1 if t <= t_start else 1 / (1 + t - t_start),     t_start = avgstart x l
    a <- (1 - mu_t) a + mu_t w,    a_b <- (1 - mu_t) a_b + mu_t b     (after the step t)

kept as a = (A + f v) / a_divisor so that each step costs one more sparse update: the loss step
adds -f (its change to v) to A, then a_divisor /= 1 - mu_t and f += mu_t a_divisor / divisor;
while mu_t = 1, a = w (A cleared lazily, f = 1, a_divisor = divisor). Both are folded out
(A <- a, v <- w) when a divisor exceeds 1e5 and at every epoch end (as sgd does). eta0 is
calibrated as for svmsgd (with mu = 1, so on w). ``avgstart`` is in epochs (default 1; sgd
2.0 reads it into an integer, so only whole epochs reproduce it).

SGD-QN (Bordes, Bottou, Gallinari, JMLR 10, 2009, and their erratum "SGDQN is less careful than
expected", JMLR 11, 2010), as sgd 2.0's svm/old/svmsgdqn.cpp: a diagonal rescaling B (one step
size per weight) with the regulariser applied every ``skip`` steps::

    z = y_i w'x_i;  t <- t + 1
    if update_B (the step after a regularisation step):
        if the loss slope differs at w and at w_prev (hinge: 1[y_i w'x_i < 1] vs at w_prev):
            r_j = lambda + y_i (l'(w) - l'(w_prev)) x_ij / (w_prev - w)_j   for x_ij != 0,
                  clipped to [0.1 lambda, 100 lambda]  (100 lambda where (w_prev - w)_j = 0)
            r_j = lambda                                                    for x_ij = 0
            B_jj <- 1 / (1/B_jj + (t - t_B) r_j)  for every j;   t_B <- t
        update_B <- false
    every skip-th step:  w_prev <- w;  w <- w - skip lambda B w;  update_B <- true
    if z < 1:  w <- w + y_i B x_i

B starts at 1/(lambda t0). 1/B_jj thus accumulates lambda t0 plus the measured curvature of
every step: the step sizes decrease like 1/(lambda (t0 + t)) where the curvature is lambda, and
faster along weights of larger curvature. This is the corrected form of the erratum (B
accumulated harmonically with the elapsed steps, no separate 1/(t + t0) factor on the step);
the 2009 paper's algorithm instead averaged the ratios into B with weights 2/r and multiplied
the step by 1/(t + t0). sgd 2.0's program (of October 2009 in Bottou's history, "new version
with bugs worked out") already has the corrected form, B_jj <- B_jj / (1 + dt B_jj r_j) with
dt the steps since the last update of B (skip when the loss slope changes at every update), and
this module follows that program. (The erratum's text was not at hand here: that the program
is its corrected algorithm is our reading of both, to be checked against the erratum.)
Deliberate deviations: where (w_prev - w)_j = 0 and x_ij != 0, the program writes
lambda + 100 lambda into the curvature slot of another weight (an index slip) and leaves j's
slot at its previous value (initially 0); here r_j = 100 lambda (the clip's top, the most
careful step). sgd's weights are float32; here float64. Measured (``restart_count=True``, the
program's counter; below): with the same t0 and skip the primal after 10 epochs equals the
program's within 1e-6 (a9a, file order).

skip = floor(16 l' d / nnz') with l' rows, nnz' stored non-zeros (one more per row for the
bias feature) of the rows it is computed on and d = n_weights + 1: sgd 2.0 counts each row twice
in ``calibrate``, hence 16 = 2 x its 8, and its d counts the unused feature index 0. Where
fewer than half the columns hold a value, n_weights counts only those (``_skip_width``). The step
counter (and update_B) runs on across epochs, as in sgd 2.1's svmsgdqn.cpp; the old program
restarts it at each epoch (its ``train``), so the last l mod skip steps of every epoch go
unregularised, and where skip exceeds l (news20: skip 48k over 20k rows) the regulariser is
never applied: the model of no SVM (24 rows, 100 epochs: 7-24% above the optimum, under 1%
counting on); option ``restart_count=True`` restarts it as the old program does, for
comparisons with it. t0 is chosen by ``_determine_t0``:
for t0 = 1, 10, ..., 1e10, a fresh SGD-QN (skip computed on the sample) runs ``max_iter``
epochs on the sample of the first (l - 1) // 10 + 1 rows visited, and the t0 of the lowest J
on the sample is kept.

Row order. The originals visit the file in its order and assume it was shuffled. Here each
epoch visits a fresh seeded permutation by default, and the calibration samples are the head of
a first seeded permutation; option ``shuffle=False`` visits the file order exactly as the
originals do (samples: the file's first rows), for comparisons with them on a shuffled file.

Correspondence to the originals' flags: ``-lambda`` = 1/(C l); ``-epochs`` = max_iter (default
BOTTOU_EPOCHS = 5); ``-avgstart`` = option ``avgstart``; SGD-QN's ``-t0`` = option ``t0``.
The originals normalise every row to unit norm unless ``-dontnormalize``: these solvers take X
as given (normalise the rows beforehand to reproduce the default). Options also settable here:
``eta0`` (svmsgd, ASGD: skip the calibration), ``skip`` (SGD-QN).

Each solver is ``solve_xxx(sub, hook) -> Solution`` through ``_base.drive``: an outer iteration
is an epoch; no stopping rule (the run is max_iter epochs, ``converged`` False, the hook's
``measure`` NaN). The kernels keep all state in arrays (vectors, divisors, counters, the order
and the generator; eta0/t0 and skip once calibrated), so batching epochs does not change the
result and a checkpoint resumes exactly. The result's ``primal`` is ``objective.primal_value``
(less 1/2 b^2 for the unregularised bias); ``figures``: eta0 (t0 and skip for SGD-QN), n_steps,
calibration_evaluations.

Accuracy, (P - P*)/P* with P* from DCD at eps 1e-6 (shuffled order, seed 1, C = 1, no bias;
tests/test_sgd_bottou.py), svmsgd / ASGD / SGD-QN:

    a9a (32561 x 123)        10 epochs: 3.5e-2 / 4.0e-3 / 8.8e-3   100: 1.2e-2 / 2.0e-3 / 1.6e-3
    reuters (7770 x 8315)    10 epochs: 3.7e-2 / 5.7e-2 / 8.1e-2   100: 3.4e-3 / 1.2e-2 / 8.5e-3
    generated (3000 x 200)   50 epochs: 2.0e-2 / 1.3e-2 / 4.5e-2   100: 1.0e-2 / 9.3e-3 / 1.2e-2

They are fast to a few per cent and slow beyond (the hinge's subgradient noise, and calibrations
tuned on small samples: svmsgd's eta0 = 1/64 on a9a; SGD-QN's t0 = 1e4 on reuters and on the
generated set, whose first epochs overshoot, up to 1.2 at 10 epochs on the generated set).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..data import UsedColumns
from ..errors import InvalidInputError
from ..sparse_rows import row_axpy, row_dot
from ._base import Hook, Solution, Subproblem, restore_state
from ._columns import run_primal
from ._random import FIRST, new_state, shuffle
from .sgd import _check_int, _check_real, _Problem, budget_callbacks

SAMPLE_ROWS = 1001  # svmsgd/ASGD: eta0 is calibrated on this many rows (sgd: rows 0..1000)
ETA_FACTOR = 2.0  # the calibration's doubling / halving factor
MAX_ETA_TRIALS = 200  # a bound on each search direction (never reached on finite costs)
RENORM_ABOVE = 1.0e5  # fold the divisors into the vectors above this
BIAS_STEP = 0.01  # the unregularised bias moves with 0.01 eta
ASGD_POWER = 0.75  # ASGD: eta_t = eta0 / (1 + lambda eta0 t)^0.75
DEFAULT_AVGSTART = 1.0  # ASGD: averaging starts after this many epochs
QN_CURVATURE_MIN = 0.1  # SGD-QN: curvature ratios clipped to [0.1 lambda, 100 lambda]
QN_CURVATURE_MAX = 100.0
QN_SKIP_FACTOR = 16.0  # SGD-QN: skip = 16 l d / nnz
QN_T0_CANDIDATES = tuple(10.0**k for k in range(11))  # SGD-QN: t0 tried on the sample

# istate / fstate positions. svmsgd: fstate [t, divisor, b, eta0];
_F_T, _F_DIV, _F_BIAS, _F_ETA0 = 0, 1, 2, 3
# ASGD adds [a_divisor, f, a_b, t_start]
_F_ADIV, _F_FRAC, _F_ABIAS, _F_TSTART = 4, 5, 6, 7
_I_EPOCHS, _I_CLEAR = 0, 1  # ASGD: A is still to be cleared (a = w so far)
# SGD-QN: fstate [t, t_B, t0], istate [epochs, skip, steps to the next regularisation step,
# update_B]
_FQ_T, _FQ_TB, _FQ_T0 = 0, 1, 2
_IQ_EPOCHS, _IQ_SKIP, _IQ_COUNT, _IQ_UPDATE_B = 0, 1, 2, 3
_IQ_SIZE = 4


# ----------------------------------------------------------------------------- svmsgd / ASGD


@njit(cache=True, nogil=True, inline="always")
def _hinge_slope(s, yi):
    """sgd's -dloss/ds of the hinge: y where y s <= 1, else 0."""
    return yi if s * yi <= 1.0 else 0.0


@njit(cache=True, nogil=True)
def _scale(v, factor) -> None:
    for j in range(v.shape[0]):
        v[j] *= factor


@njit(cache=True, nogil=True, inline="always")
def _sgd_step(indptr, indices, data, fbias, i, yi, eta, lam, free_bias, v, div, b, renorm_first):
    """One svmsgd step on row i with step eta; returns (divisor, b). ``renorm_first``: fold the
    divisor before the step (ASGD's order) rather than after the shrink (svmsgd's)."""
    if renorm_first and div > RENORM_ABOVE:
        _scale(v, 1.0 / div)
        div = 1.0
    s = row_dot(indptr, indices, data, fbias, i, v) / div + b
    div = div / (1.0 - eta * lam)
    if not renorm_first and div > RENORM_ABOVE:
        _scale(v, 1.0 / div)
        div = 1.0
    d = _hinge_slope(s, yi)
    if d != 0.0:
        row_axpy(indptr, indices, data, fbias, i, eta * d * div, v)
    if free_bias:
        b += BIAS_STEP * eta * d
    return div, b


@njit(cache=True, nogil=True)
def _evaluate_eta(indptr, indices, data, fbias, y, sample, eta, lam, free_bias, v, renorm_first):
    """J on the sample after one pass of fixed-step svmsgd from w = 0 (v: scratch, (n_v,))."""
    if eta * lam >= 1.0:
        return np.inf
    v[:] = 0.0
    div = 1.0
    b = 0.0
    for k in range(sample.shape[0]):
        i = sample[k]
        div, b = _sgd_step(
            indptr, indices, data, fbias, i, y[i], eta, lam, free_bias, v, div, b, renorm_first
        )
    loss = 0.0
    for k in range(sample.shape[0]):
        i = sample[k]
        s = row_dot(indptr, indices, data, fbias, i, v) / div + b
        loss += max(0.0, 1.0 - y[i] * s)
    vv = 0.0
    for j in range(v.shape[0]):
        vv += v[j] * v[j]
    return loss / sample.shape[0] + 0.5 * lam * vv / div / div


@njit(cache=True, nogil=True)
def _determine_eta0(indptr, indices, data, fbias, y, sample, lam, free_bias, v, renorm_first):
    """(eta0, cost evaluations): sgd's search from eta = 1, 2 (module docstring); from the
    largest power of 2 below 1/lam when lam >= 1 (a small C l), where every eta >= 1 shrinks
    w by 1 - eta lam <= 0 (cost +inf) and the search could not tell 1 from 2."""
    lo_eta = 1.0
    while lo_eta * lam >= 1.0:
        lo_eta /= ETA_FACTOR
    lo_cost = _evaluate_eta(indptr, indices, data, fbias, y, sample, lo_eta, lam, free_bias, v,
                            renorm_first)  # fmt: skip
    hi_eta = lo_eta * ETA_FACTOR
    hi_cost = _evaluate_eta(indptr, indices, data, fbias, y, sample, hi_eta, lam, free_bias, v,
                            renorm_first)  # fmt: skip
    n_eval = 2
    if lo_cost < hi_cost:
        while lo_cost < hi_cost and n_eval < MAX_ETA_TRIALS:
            hi_eta, hi_cost = lo_eta, lo_cost
            lo_eta = hi_eta / ETA_FACTOR
            lo_cost = _evaluate_eta(indptr, indices, data, fbias, y, sample, lo_eta, lam,
                                    free_bias, v, renorm_first)  # fmt: skip
            n_eval += 1
    elif hi_cost < lo_cost:
        while hi_cost < lo_cost and n_eval < MAX_ETA_TRIALS:
            lo_eta, lo_cost = hi_eta, hi_cost
            hi_eta = lo_eta * ETA_FACTOR
            hi_cost = _evaluate_eta(indptr, indices, data, fbias, y, sample, hi_eta, lam,
                                    free_bias, v, renorm_first)  # fmt: skip
            n_eval += 1
    return lo_eta, n_eval


@njit(cache=True, nogil=True)
def _svmsgd_epochs(indptr, indices, data, fbias, y, order, rng, shuffle_rows, lam, free_bias, v,
                   fstate, istate, w, n_epochs) -> None:  # fmt: skip
    """``n_epochs`` svmsgd epochs. v: (n_v,) the unscaled vector; fstate [t, divisor, b, eta0];
    istate[_I_EPOCHS]; order: (l,) the visiting order (reshuffled per epoch if shuffle_rows).
    w: (n_w,) receives v / divisor (and b last when free_bias)."""
    n_rows = y.shape[0]
    t = fstate[_F_T]
    div = fstate[_F_DIV]
    b = fstate[_F_BIAS]
    eta0 = fstate[_F_ETA0]
    for _ in range(n_epochs):
        if shuffle_rows:
            shuffle(order, FIRST, n_rows, rng)
        for k in range(n_rows):
            i = order[k]
            yi = y[i]
            eta = eta0 / (1.0 + lam * eta0 * t)
            # the step of _sgd_step, written out: here it runs 2x faster than the call
            s = row_dot(indptr, indices, data, fbias, i, v) / div + b
            div = div / (1.0 - eta * lam)
            if div > RENORM_ABOVE:
                _scale(v, 1.0 / div)
                div = 1.0
            if s * yi <= 1.0:
                row_axpy(indptr, indices, data, fbias, i, eta * yi * div, v)
                if free_bias:
                    b += BIAS_STEP * eta * yi
            t += 1.0
        istate[_I_EPOCHS] += 1
    fstate[_F_T] = t
    fstate[_F_DIV] = div
    fstate[_F_BIAS] = b
    _write_w(v, div, b, free_bias, w)


@njit(cache=True, nogil=True)
def _write_w(v, div, b, free_bias, w) -> None:
    inv = 1.0 / div
    for j in range(v.shape[0]):
        w[j] = v[j] * inv
    if free_bias:
        w[w.shape[0] - 1] = b


@njit(cache=True, nogil=True)
def _asgd_fold(v, a, fstate, istate) -> None:
    """a <- (A + f v) / a_divisor into A, v <- v / divisor; divisors 1, f 0 (sgd's renorm)."""
    div = fstate[_F_DIV]
    adiv = fstate[_F_ADIV]
    frac = fstate[_F_FRAC]
    if div == 1.0 and adiv == 1.0 and frac == 0.0:
        return
    keep = 0.0 if istate[_I_CLEAR] else 1.0 / adiv
    from_w = frac / adiv
    for j in range(v.shape[0]):
        a[j] = a[j] * keep + v[j] * from_w
        v[j] = v[j] * (1.0 / div)
    istate[_I_CLEAR] = 0
    fstate[_F_DIV] = 1.0
    fstate[_F_ADIV] = 1.0
    fstate[_F_FRAC] = 0.0


@njit(cache=True, nogil=True)
def _asgd_epochs(indptr, indices, data, fbias, y, order, rng, shuffle_rows, lam, free_bias, v,
                 a, fstate, istate, w, n_epochs) -> None:  # fmt: skip
    """``n_epochs`` ASGD epochs. v, a: (n_v,); fstate [t, divisor, b, eta0, a_divisor, f, a_b,
    t_start]; istate [epochs, A still to clear]. The vectors are folded at each epoch end and
    w: (n_w,) receives a (and a_b last when free_bias)."""
    n_rows = y.shape[0]
    eta0 = fstate[_F_ETA0]
    t_start = fstate[_F_TSTART]
    for _ in range(n_epochs):
        if shuffle_rows:
            shuffle(order, FIRST, n_rows, rng)
        t = fstate[_F_T]
        div = fstate[_F_DIV]
        adiv = fstate[_F_ADIV]
        frac = fstate[_F_FRAC]
        b = fstate[_F_BIAS]
        ab = fstate[_F_ABIAS]
        clear = istate[_I_CLEAR]
        for k in range(n_rows):
            i = order[k]
            yi = y[i]
            eta = eta0 / (1.0 + lam * eta0 * t) ** ASGD_POWER
            mu = 1.0 if t <= t_start else 1.0 / (1.0 + (t - t_start))
            if adiv > RENORM_ABOVE or div > RENORM_ABOVE:
                fstate[_F_DIV] = div
                fstate[_F_ADIV] = adiv
                fstate[_F_FRAC] = frac
                istate[_I_CLEAR] = clear
                _asgd_fold(v, a, fstate, istate)
                div, adiv, frac, clear = 1.0, 1.0, 0.0, istate[_I_CLEAR]
            s = row_dot(indptr, indices, data, fbias, i, v) / div + b
            div = div / (1.0 - eta * lam)
            d = _hinge_slope(s, yi)
            etd = eta * d * div
            if etd != 0.0:
                row_axpy(indptr, indices, data, fbias, i, etd, v)
            if mu >= 1.0:
                clear = 1  # a = w: A is cleared when averaging starts
                adiv = div
                frac = 1.0
            elif mu > 0.0:
                if clear:
                    a[:] = 0.0
                    clear = 0
                if etd != 0.0:
                    row_axpy(indptr, indices, data, fbias, i, -frac * etd, a)
                adiv = adiv / (1.0 - mu)
                frac = frac + mu * adiv / div
            if free_bias:
                b += BIAS_STEP * eta * d
            ab += mu * (b - ab)
            t += 1.0
        fstate[_F_T] = t
        fstate[_F_DIV] = div
        fstate[_F_ADIV] = adiv
        fstate[_F_FRAC] = frac
        fstate[_F_BIAS] = b
        fstate[_F_ABIAS] = ab
        istate[_I_CLEAR] = clear
        _asgd_fold(v, a, fstate, istate)
        istate[_I_EPOCHS] += 1
    _write_w(a, 1.0, fstate[_F_ABIAS], free_bias, w)


# ----------------------------------------------------------------------------- SGD-QN


def _skip_width(X, fbias: float) -> int:
    """The weights skip's d counts: sgd 2.0's, all of them, unless fewer than half the columns
    hold a value (hashed features, a wide declared width), where it counts the used ones: d
    sets how many steps pass between the regulariser's updates, and over 2^20 hashed columns
    of a9a's 123 that was 1.2M, more than an epoch's 32,561 steps (the counter restarts each
    epoch), so w was never regularised."""
    used = UsedColumns.of(X)
    width = X.shape[1] if used is None else used.columns.shape[0]
    return width + (1 if fbias >= 0.0 else 0)


@njit(cache=True, nogil=True)
def _qn_skip(indptr, data, fbias, rows, n_weights) -> int:
    """floor(16 l' d / nnz') over the rows ``rows`` (at least 1), d = n_weights + 1
    (``n_weights``: ``_skip_width``); nnz' counts the values that are not zero (zeros stored
    in a CSR matrix are no data)."""
    nnz = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        nnz += 1 if fbias >= 0.0 else 0
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] != 0.0:
                nnz += 1
    if nnz == 0.0:
        return 1
    return max(1, int(QN_SKIP_FACTOR * rows.shape[0] * (n_weights + 1) / nnz))


@njit(cache=True, nogil=True)
def _qn_epoch(indptr, indices, data, fbias, y, order, lam, w, w_prev, B, curv, fstate, istate):
    """One SGD-QN epoch over ``order`` (module docstring). w, w_prev, B, curv: (n_w,); curv is
    scratch holding lambda everywhere between calls; fstate [t, t_B, t0]; istate [epochs,
    skip, count, update_B]."""
    n_rows = order.shape[0]
    n_w = w.shape[0]
    skip = istate[_IQ_SKIP]
    t = fstate[_FQ_T]
    t_b = fstate[_FQ_TB]
    count = istate[_IQ_COUNT]
    update_b = istate[_IQ_UPDATE_B] != 0
    c_min = QN_CURVATURE_MIN * lam
    c_max = QN_CURVATURE_MAX * lam
    for k in range(n_rows):
        i = order[k]
        yi = y[i]
        z = yi * row_dot(indptr, indices, data, fbias, i, w)
        slope = 1.0 if z < 1.0 else 0.0
        t += 1.0
        if update_b:
            slope_prev = 1.0 if yi * row_dot(indptr, indices, data, fbias, i, w_prev) < 1.0 else 0.0
            dslope = slope - slope_prev
            if dslope != 0.0:
                # curvature ratios on the row's weights; lambda (curv's resting value) elsewhere
                g = yi * dslope
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    curv[j] = _qn_ratio(g, data[p], w_prev[j] - w[j], lam, c_min, c_max)
                if fbias >= 0.0:
                    curv[n_w - 1] = _qn_ratio(g, fbias, w_prev[n_w - 1] - w[n_w - 1], lam,
                                              c_min, c_max)  # fmt: skip
                dt = t - t_b
                for j in range(n_w):
                    B[j] = 1.0 / (1.0 / B[j] + dt * curv[j])
                for p in range(indptr[i], indptr[i + 1]):
                    curv[indices[p]] = lam
                curv[n_w - 1] = lam
                t_b = t
            update_b = False
        count -= 1
        if count <= 0:
            shrink = -skip * lam
            for j in range(n_w):
                w_prev[j] = w[j]
                w[j] = w[j] + shrink * B[j] * w[j]
            update_b = True
            count = skip
        if z < 1.0:
            # w += y B x
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                w[j] += yi * B[j] * data[p]
            if fbias >= 0.0:
                w[n_w - 1] += yi * B[n_w - 1] * fbias
    fstate[_FQ_T] = t
    fstate[_FQ_TB] = t_b
    istate[_IQ_COUNT] = count
    istate[_IQ_UPDATE_B] = 1 if update_b else 0
    istate[_IQ_EPOCHS] += 1


@njit(cache=True, nogil=True, inline="always")
def _qn_ratio(g, xj, dw, lam, c_min, c_max):
    """lambda + g x_j / dw clipped (g = y (l'(w) - l'(w_prev)), dw = (w_prev - w)_j)."""
    if dw != 0.0:
        r = lam + g * xj / dw
        return min(max(r, c_min), c_max)
    if xj != 0.0:
        return c_max
    return lam


@njit(cache=True, nogil=True)
def _qn_epochs(indptr, indices, data, fbias, y, order, rng, shuffle_rows, lam, w, w_prev, B,
               curv, fstate, istate, n_epochs, restart_count) -> None:  # fmt: skip
    n_rows = order.shape[0]
    for _ in range(n_epochs):
        if shuffle_rows:
            shuffle(order, FIRST, n_rows, rng)
        if restart_count:
            _qn_restart_count(istate)
        _qn_epoch(indptr, indices, data, fbias, y, order, lam, w, w_prev, B, curv, fstate, istate)


@njit(cache=True, nogil=True)
def _qn_restart_count(istate) -> None:
    """A run's start, and the old program's every epoch: the step counter at skip, update_B
    false."""
    istate[_IQ_COUNT] = istate[_IQ_SKIP]
    istate[_IQ_UPDATE_B] = 0


@njit(cache=True, nogil=True)
def _qn_sample_cost(indptr, indices, data, fbias, y, rows, lam, w) -> float:
    loss = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        loss += max(0.0, 1.0 - y[i] * row_dot(indptr, indices, data, fbias, i, w))
    ww = 0.0
    for j in range(w.shape[0]):
        ww += w[j] * w[j]
    return loss / rows.shape[0] + 0.5 * lam * ww


def _with_count(saved: dict) -> dict:
    """A state saved before the step counter ran on across epochs ([epochs, skip]): at its
    epoch's end, where the old program's counter restarts at skip with update_B false."""
    istate = np.asarray(saved.get("istate", ()))
    if istate.shape == (2,) and istate.dtype == np.int64:
        skip = istate[_IQ_SKIP]
        return {**saved, "istate": np.array([istate[_IQ_EPOCHS], skip, skip, 0], dtype=np.int64)}
    return saved


@njit(cache=True, nogil=True)
def _determine_t0(indptr, indices, data, fbias, y, sample, lam, n_w, skip_width, n_epochs,
                  candidates, restart_count):  # fmt: skip
    """t0 of the lowest J on the sample after ``n_epochs`` SGD-QN epochs on it (NaN skipped);
    ``skip_width``: the weights ``_qn_skip`` counts; ``restart_count``: as the old program."""
    best_t0 = 1.0
    best_cost = np.inf
    w = np.zeros(n_w)
    w_prev = np.zeros(n_w)
    B = np.empty(n_w)
    curv = np.full(n_w, lam)
    fstate = np.zeros(3)
    istate = np.zeros(_IQ_SIZE, dtype=np.int64)
    for t0 in candidates:
        w[:] = 0.0
        w_prev[:] = 0.0
        B[:] = 1.0 / (lam * t0)
        fstate[:] = 0.0
        istate[_IQ_EPOCHS] = 0
        istate[_IQ_SKIP] = _qn_skip(indptr, data, fbias, sample, skip_width)
        _qn_restart_count(istate)
        for _ in range(n_epochs):
            if restart_count:
                _qn_restart_count(istate)
            _qn_epoch(indptr, indices, data, fbias, y, sample, lam, w, w_prev, B, curv, fstate,
                      istate)  # fmt: skip
        cost = _qn_sample_cost(indptr, indices, data, fbias, y, sample, lam, w)
        if cost < best_cost:  # (False for NaN)
            best_cost = cost
            best_t0 = t0
    return best_t0


# ----------------------------------------------------------------------------- drivers


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InvalidInputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


class _Setup:
    """What the three solvers share: the checked problem, the bias handling, the options
    common to all, the visiting order and its generator."""

    def __init__(self, sub: Subproblem, hook: Hook | None, allow_free_bias: bool):
        pb = _Problem(sub, hook)
        self.pb = pb
        reg_bias = _check_flag("regularize_bias", sub.regularize_bias)
        if not reg_bias and pb.bias < 0:
            raise InvalidInputError("regularize_bias=False needs a bias (bias >= 0)")
        if not reg_bias and not allow_free_bias:
            raise InvalidInputError("SGD-QN has no unregularised bias (regularize_bias=False)")
        self.free_bias = not reg_bias and pb.bias >= 0
        # the bias as a feature of the vector, or kept apart (fbias -1: the rows alone)
        self.fbias = -1.0 if self.free_bias else pb.bias
        self.n_v = pb.X.shape[1] + (1 if self.fbias >= 0 else 0)
        self.shuffle = _check_flag("shuffle", sub.option("shuffle", True))
        n_rows = pb.n_rows
        self.order = np.arange(n_rows, dtype=np.int32 if n_rows < 2**31 - 1 else np.int64)
        self.rng = new_state(pb.seed)

    def sample(self, n_sample: int) -> np.ndarray:
        """The calibration sample: the first rows of a seeded permutation (or of the file)."""
        if self.shuffle:
            shuffle(self.order, FIRST, self.pb.n_rows, self.rng)
        return self.order[:n_sample].copy()

    def primal(self, w: np.ndarray) -> float:
        value = self.pb.primal(w)
        if self.free_bias:
            value -= 0.5 * float(w[-1]) ** 2  # the bias is not regularised
        return value


def _eta0_option(sub: Subproblem) -> float | None:
    eta0 = sub.option("eta0")
    return None if eta0 is None else _check_real("eta0", eta0, positive=True)


def _calibrated_eta0(setup: _Setup, renorm_first: bool) -> tuple[float, int]:
    X, pb = setup.pb.X, setup.pb
    sample = setup.sample(min(SAMPLE_ROWS, pb.n_rows))
    scratch = np.zeros(setup.n_v)
    eta0, n_eval = _determine_eta0(X.indptr, X.indices, X.data, setup.fbias, pb.y, sample,
                                   pb.lam, setup.free_bias, scratch, renorm_first)  # fmt: skip
    return float(eta0), int(n_eval)


def _check_eta0_lambda(eta0: float, lam: float) -> None:
    if eta0 * lam >= 1.0:
        raise InvalidInputError(
            f"eta0 x lambda = {eta0 * lam:.3g} >= 1 (lambda = 1/(C l)): the shrink factor "
            "1 - eta lambda would be <= 0; use a larger C or a smaller eta0"
        )


def _run(sub, hook, setup, solver, advance, w, istate, arrays, figures) -> Solution:
    """Drive ``advance`` for max_iter epochs (no stopping rule) and return the Solution."""
    pb = setup.pb

    def result() -> tuple[np.ndarray, int, dict]:
        extra = {"stop_measure": math.nan, "stop_ratio": math.nan}
        return w.copy(), int(istate[_I_EPOCHS]), {**figures(), **extra}

    return run_primal(
        sub, hook, solver, pb.max_epochs, advance,
        status=lambda: (int(istate[_I_EPOCHS]), bool(istate[_I_EPOCHS] >= pb.max_epochs)),
        **budget_callbacks(
            live=lambda: (w, figures()),
            primal=setup.primal,
            state_arrays=arrays,
            result=result,
        ),
    )  # fmt: skip


def _solve_sgd(sub: Subproblem, hook: Hook | None, solver: int, averaged: bool) -> Solution:
    setup = _Setup(sub, hook, allow_free_bias=True)
    pb = setup.pb
    X, y, lam, fbias, free_bias = pb.X, pb.y, pb.lam, setup.fbias, setup.free_bias
    eta0 = _eta0_option(sub)
    avgstart = DEFAULT_AVGSTART
    if averaged:
        avgstart = _check_real("avgstart", sub.option("avgstart", DEFAULT_AVGSTART),
                               positive=False)  # fmt: skip
        if avgstart < 0.0:
            raise InvalidInputError(f"avgstart must be >= 0, got {avgstart}")
    elif sub.option("avgstart") is not None:
        raise InvalidInputError("avgstart applies to -s 38 (asgd) only")
    v = np.zeros(setup.n_v)
    a = np.zeros(setup.n_v)
    w = np.zeros(pb.n_weights)
    # [t, divisor, b, eta0, a_divisor, f, a_b, t_start]
    fstate = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, avgstart * pb.n_rows])
    istate = np.zeros(2, dtype=np.int64)
    arrays = {"v": v, "fstate": fstate, "istate": istate, "order": setup.order, "rng": setup.rng}
    if averaged:
        arrays["a"] = a
    n_eval = 0
    if sub.resume is not None:
        restore_state(arrays, sub.resume)
        # (every figure of these solvers' fstate is measured, none stands for "not yet": the
        # step count, the scale and eta0 must be numbers of their ranges)
        if (not np.isfinite(fstate).all() or fstate[_F_T] < 0 or fstate[_F_DIV] <= 0
                or fstate[_F_ETA0] < 0):  # fmt: skip
            raise InvalidInputError("the state to resume from is damaged: 'fstate'")
        if averaged:
            _write_w(a, 1.0, fstate[_F_ABIAS], free_bias, w)
        else:
            _write_w(v, fstate[_F_DIV], fstate[_F_BIAS], free_bias, w)
    else:
        if eta0 is None:
            eta0, n_eval = _calibrated_eta0(setup, renorm_first=averaged)
        fstate[_F_ETA0] = eta0
    _check_eta0_lambda(float(fstate[_F_ETA0]), lam)

    def advance(n_epochs: int) -> None:
        if averaged:
            _asgd_epochs(
                X.indptr, X.indices, X.data, fbias, y, setup.order, setup.rng, setup.shuffle,
                lam, free_bias, v, a, fstate, istate, w, n_epochs,
            )  # fmt: skip
        else:
            _svmsgd_epochs(
                X.indptr, X.indices, X.data, fbias, y, setup.order, setup.rng, setup.shuffle,
                lam, free_bias, v, fstate, istate, w, n_epochs,
            )  # fmt: skip

    def figures() -> dict:
        return {"eta0": float(fstate[_F_ETA0]), "n_steps": int(fstate[_F_T]),
                "calibration_evaluations": n_eval}  # fmt: skip

    return _run(sub, hook, setup, solver, advance, w, istate, arrays, figures)


def solve_svmsgd(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by Bottou's svmsgd (-s 37): eta_t = eta0/(1 + lambda eta0
    t), eta0 calibrated on a sample, w as vector / divisor (module docstring).

    ``sub``: X CSR (l, n); y (l,) of +1/-1; C (l,) one cost for every row; bias >= 0 adds the
    feature (w then has n + 1 entries, the bias weight last), with regularize_bias=False
    (bias 1) sgd's unregularised bias; max_iter: epochs (the run is exactly that many); seed;
    eps unused. Options: ``shuffle`` (default True: a fresh seeded permutation per epoch; False:
    the file order, as sgd), ``eta0`` (skip the calibration). No warm start.

    Returns a Solution (stop_reason MAX_ITER, converged False) with the primal; figures eta0,
    n_steps, calibration_evaluations. Raises InvalidInputError on bad input.
    """
    return _solve_sgd(sub, hook, 37, averaged=False)


def solve_asgd(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Averaged SGD, Bottou's svmasgd (-s 38): eta_t = eta0/(1 + lambda eta0 t)^0.75 and the
    average of the iterates after ``avgstart`` epochs (option, default 1) returned as w. As
    ``solve_svmsgd`` otherwise."""
    return _solve_sgd(sub, hook, 38, averaged=True)


def solve_sgdqn(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by SGD-QN (-s 39): a diagonal rescaling B learnt from
    curvature ratios every ``skip`` steps (module docstring; sgd 2.0's old/svmsgdqn.cpp with the
    erratum's corrected update).

    ``sub`` as for ``solve_svmsgd`` except that the bias (bias >= 0) is always the regularised
    feature. Options: ``shuffle``, ``t0`` (> 0; default: chosen among 1, 10, ..., 1e10 by
    ``t0_epochs`` epochs, default max_iter, on the first tenth of the rows), ``skip`` (int >= 1;
    default 16 l d / nnz), ``restart_count`` (default False: the step counter runs on across
    epochs; True restarts it each epoch, as sgd 2.0's old/svmsgdqn.cpp).
    Figures t0, skip, n_steps, calibration_epochs (sample epochs the t0 search ran).
    """
    setup = _Setup(sub, hook, allow_free_bias=False)
    pb = setup.pb
    X, y, lam, fbias, n_w = pb.X, pb.y, pb.lam, setup.fbias, pb.n_weights
    t0 = sub.option("t0")
    t0 = None if t0 is None else _check_real("t0", t0, positive=True)
    skip = sub.option("skip")
    skip = None if skip is None else _check_int("skip", skip, 1)
    # the original searches t0 with as many epochs as it trains; a run without an epoch count
    # of its own (a race that a time budget stops) gives the search its own
    t0_epochs = _check_int("t0_epochs", sub.option("t0_epochs", pb.max_epochs), 1)
    restart_count = _check_flag("restart_count", sub.option("restart_count", False))
    w = np.zeros(n_w)
    w_prev = np.zeros(n_w)
    B = np.zeros(n_w)
    curv = np.full(n_w, lam)
    fstate = np.zeros(3)  # [t, t_B, t0]
    istate = np.zeros(_IQ_SIZE, dtype=np.int64)  # [epochs, skip, count, update_B]
    arrays = {"w": w, "w_prev": w_prev, "B": B, "fstate": fstate, "istate": istate,
              "order": setup.order, "rng": setup.rng}  # fmt: skip
    n_calibration = 0
    if sub.resume is not None:
        restore_state(arrays, _with_count(sub.resume))
        if (istate.shape != (_IQ_SIZE,) or istate[_IQ_SKIP] < 1
                or not 1 <= istate[_IQ_COUNT] <= istate[_IQ_SKIP]
                or istate[_IQ_UPDATE_B] not in (0, 1) or not np.all(B > 0.0)):  # fmt: skip
            raise InvalidInputError("the state to resume from is damaged: 'istate' or 'B'")
        if not np.isfinite(fstate).all() or fstate[_FQ_T] < 0:
            raise InvalidInputError("the state to resume from is damaged: 'fstate'")
    else:
        skip_width = _skip_width(X, fbias)
        if t0 is None:
            n_sample = (pb.n_rows - 1) // 10 + 1
            sample = setup.sample(n_sample)
            candidates = np.array(QN_T0_CANDIDATES)
            t0 = _determine_t0(X.indptr, X.indices, X.data, fbias, y, sample, lam, n_w,
                               skip_width, t0_epochs, candidates, restart_count)  # fmt: skip
            n_calibration = len(candidates) * t0_epochs
        fstate[_FQ_T0] = t0
        B[:] = 1.0 / (lam * t0)
        all_rows = np.arange(pb.n_rows, dtype=setup.order.dtype)
        istate[_IQ_SKIP] = (skip if skip is not None
                            else _qn_skip(X.indptr, X.data, fbias, all_rows,
                                          skip_width))  # fmt: skip
        _qn_restart_count(istate)

    def advance(n_epochs: int) -> None:
        _qn_epochs(X.indptr, X.indices, X.data, fbias, y, setup.order, setup.rng, setup.shuffle,
                   lam, w, w_prev, B, curv, fstate, istate, n_epochs, restart_count)  # fmt: skip

    def figures() -> dict:
        return {"t0": float(fstate[_FQ_T0]), "skip": int(istate[_IQ_SKIP]),
                "n_steps": int(fstate[_FQ_T]), "calibration_epochs": n_calibration}  # fmt: skip

    return _run(sub, hook, setup, 39, advance, w, istate, arrays, figures)


__all__ = [
    "solve_svmsgd",
    "solve_asgd",
    "solve_sgdqn",
    "SAMPLE_ROWS",
    "DEFAULT_AVGSTART",
    "QN_T0_CANDIDATES",
]
