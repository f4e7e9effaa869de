"""Primal stochastic (sub)gradient solvers of the L1-loss SVM: Pegasos, SGD-R, SGD-S, SGD-M.

The problem (DESIGN.md sections 2 and 3), one cost C for every row::

    P(w) = 1/2 w'w + C sum_i max(0, 1 - y_i w'x_i),     lambda = 1/(C l)
    J(w) = lambda P(w) = lambda/2 w'w + 1/l sum_i max(0, 1 - y_i w'x_i)

with the bias as LIBLINEAR's: when ``bias >= 0`` every row gets one more feature of value
``bias`` and w one more (last) weight, regularised like the others. Its dual value is
D(a) = -f(a) = e'a - 1/2 ||w(a)||^2, 0 <= a_i <= C, w(a) = sum_i y_i a_i x_i.

SGD-R / SGD-S / SGD-M (Panagiotakopoulos & Tsampouka, "The stochastic gradient descent for the
primal L1-SVM optimization revisited", 2013). The stochastic subgradient step on J for the
pattern k presented at step t, with step 1/(lambda t), is::

    w_{t+1} = (1 - 1/t) w_t + [y_k w_t'x_k <= 1] y_k x_k / (lambda t)

(at the kink y w'x = 1 the subgradient -y x is chosen). Multiplied by lambda t, with the
unscaled vector u_t = lambda t w_{t+1} (u_0 = 0, w_1 = 0)::

    u_t = u_{t-1} + y_k x_k    if  y_k u_{t-1}'x_k <= lambda (t - 1)      (margin error)
    u_t = u_{t-1}              otherwise

a perceptron with a margin threshold growing linearly with the number of presentations t;
shrinking w costs nothing (t grows by one), and w = u/(lambda tau) after tau presentations.
(At t = 1 the test reads 0 <= 0: w_1 = 0 has margin 0 < 1, a margin error, as it should.)
Every presentation counts in t, whether it changes u or not.

Dual variables from margin-error counts: u_tau = sum_k I_k y_k x_k, I_k the number of margin
errors made on pattern k, so w = u/(lambda tau) = sum_k a_k y_k x_k with a_k = I_k/(lambda tau).
After N complete epochs in which every pattern is presented mu times (SGD-S: mu = 1),
tau = N mu l and I_k <= N mu, so a_k = C I_k/(N mu) lies in [0, C] automatically: D(a) is a
lower bound on P* = min P, and since D <= P* <= P(w), once D > 0::

    (P(w) - P*)/P* <= (P(w) - D(a))/D(a)        (the stopping criterion, <= delta)

D needs only sum_k I_k and ||u||^2. P(w) costs a pass over the data, so it is first estimated
from the inner products the epoch computed anyway: the loss of pattern k is taken at the
weight vector of its (first) presentation in the epoch, max(0, 1 - p_k/(lambda tau_k)) with
p_k = y_k u'x_k and tau_k the presentations before it (margin 0 at tau_k = 0). Only when the
estimated bound (P~ - D)/D is at most ``comparison`` x delta is P(w) computed exactly, and the
solver stops when the exact bound is <= delta.

SGD-M (multiple updates): each presentation of pattern k in an epoch is mu presentations in a
row, resolved in closed form with one inner product (``plus_steps``). With
g = y_k u'x_k - lambda tau (margin error iff g <= 0) and q = ||x_k||^2, a plus-step (margin
error) changes g by q - lambda, a minus-step (pure shrinking) by -lambda:

- q <= lambda: once g <= 0 it stays so (plus-steps only); from g > 0, ceil(g/lambda)
  minus-steps come first. So kappa+ = mu if g <= 0, else max(0, mu - ceil(g/lambda)).
- q > lambda: the interval (-lambda, q - lambda] is invariant (a plus-step from g in
  (-lambda, 0] lands in (q - 2 lambda, q - lambda], a minus-step from (0, q - lambda] lands in
  (-lambda, q - 2 lambda]) and is entered from any g (through minus-steps from above, through
  plus-steps from below). Inside it, after j steps of which kappa+ were plus-steps,
  g_j = g + kappa+ q - j lambda, and the interval has length q, so kappa+ is the unique
  integer with g_j in (-lambda, q - lambda]:  kappa+ = floor((j lambda - lambda - g)/q) + 1;
  clipped to [0, j] it also holds during the entry (where it is <= 0, resp. >= j + 1).

The first of the mu presentations is decided by the plain test (so mu = 1 is exactly SGD-S),
the other mu - 1 by the formula; then u += kappa+ y_k x_k, I_k += kappa+, tau += mu.

SGD-R draws every pattern uniformly at random (with replacement) and stops after T_max steps
(option ``max_steps``, default ``max_iter`` epochs x l): its counts give no feasible dual
point, so it has no bound and no criterion.

Pegasos (Shalev-Shwartz, Singer, Srebro, Cotter 2011): at iteration t a mini-batch A_t of k
rows drawn uniformly with replacement (k independent draws), A+ = {i in A_t: y_i w'x_i < 1}::

    w <- (1 - 1/t) w + 1/(lambda t k) sum_{i in A+} y_i x_i,
    w <- min(1, (1/sqrt(lambda))/||w||) w                              (optional projection)

with w = scale x v, so the shrink and the projection only change ``scale`` (O(1)); v is
rescaled (scale folded into it) when scale falls below 1e-9, and ||v||^2 is kept up to date
(refreshed exactly at every rescaling and kernel call). It has no dual point either: it stops at
its budget (``converged`` is always False; the last iterate is returned).

Each solver is ``solve_xxx(sub, hook) -> Solution`` and runs through ``_base.drive``; an
outer iteration is an epoch (SGD-S, SGD-M) or l presented rows (SGD-R, Pegasos: epoch
equivalents; SGD-R's last one may be partial when ``max_steps`` is not a multiple of l). The
kernels keep all their state in arrays (the vector, the counts, the order, the generator, the
counters), so batching does not change the result and a checkpoint resumes exactly. The hook's
``measure`` is the epoch's bound (P - D)/D (SGD-S/M: with P exact when the criterion computed
it, else the estimate P~; NaN while D <= 0) or NaN (SGD-R, Pegasos). Without a hook the whole
run is one kernel call; with one, one call per epoch, or batches of them for a hook that does
not want every iteration (``drive``).

Defaults, measured by ``benchmarks/bench_sgd_defaults.py`` (report
``benchmarks/RESULTS-sgd-defaults.md``: a9a, w8a, reuters and 100,000 rows of pypi-recent at
C = 1 and C = 0.1, no bias, P* from DCD with a certified relative gap <= 1e-7; times are CPU
seconds, compared within each of the 8 runs and summarised by the geometric mean of time /
the run's best):

- delta = 0.01: the largest of 0.1, 0.03, 0.01, 0.003 at which every run stopped within 1e-2
  of P* (worst (P - P*)/P* 6.3e-3; delta 0.03 gave up to 1.9e-2). The bound is loose: the
  accuracy reached is 1.6x to 33x below delta (3.0e-4 on a9a at C = 1), and the test accuracy
  is that of the optimum within 0.1 point.
- comparison f = 3: geometric mean 1.12 (f = 2: 1.15, 1.5: 1.32, 1: 1.67; the exact primal at
  every epoch end: 1.35). The estimate is pessimistic, up to about 3x the exact bound late in
  a run, so a small f postpones the stop (f = 1: 84 epochs instead of 32 on pypi-100k at
  C = 1), while an exact primal (one pass in file order) costs a fraction of an epoch.
- mu = 2: SGD-M was not faster than SGD-S (mu = 1, geometric mean 1.02) on any of these:
  mu = 2: 1.51, 5: 1.63, 10: 1.56. Its epochs cost about as much as SGD-S's, but it needs
  more of them (a9a, C = 1: 1802 against 1592); 2 is the best mu > 1.
- max_epochs = 2000 (SGD-S/M): the longest run at delta 0.01 took 1592 epochs (a9a, C = 1).
- SGD-R T_max = 100 l steps, Pegasos 100 epoch equivalents: the smallest of 10, 20, 50, 100
  epochs after which (P - P*)/P* <= 1e-2 in at least 3/4 of the runs (7 of 8 at 100; a9a at
  C = 1 is at 2e-2 there, and its iterates still swing up to 0.1).
- one kernel call without a hook: per-epoch calls add 0.28 ms per epoch on a9a, 10% of
  its 3 ms epochs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from .._intrinsics import prefetch
from ..data import as_csr, is_integer
from ..errors import InvalidInputError
from ..objective import LOSS_HINGE, hinge_dual_value_at, loss_value, primal_value, svm_objectives
from ..sparse_rows import row_axpy, row_dot, rows_sq_norms, sq_norm
from ._base import Hook, Solution, Subproblem, copy_state, restore_state
from ._columns import run_primal
from ._random import FIRST, new_state, rand_below, shuffle

# Defaults: measured, see the module docstring and benchmarks/RESULTS-sgd-defaults.md.
DEFAULT_DELTA = 0.01  # SGD-S/M stop when the bound (P - D)/D <= delta
DEFAULT_MAX_EPOCHS = 2000  # SGD-S/M: epoch cap (the criterion normally stops them first)
DEFAULT_RANDOM_EPOCHS = 100  # SGD-R: T_max = this many x l steps when max_steps is None
DEFAULT_PEGASOS_EPOCHS = 100  # Pegasos: this many x l rows
DEFAULT_MULTIPLICITY = 2  # SGD-M: mu
DEFAULT_COMPARISON = 3.0  # SGD-S/M: exact primal when the estimated bound <= this x delta
RESCALE_BELOW = 1.0e-9  # Pegasos: fold the scale into v below this

# Prefetch distances, in visits (a row's CSR offsets that far ahead, its data half as far).
_PREFETCH_ROW_AHEAD = 12
_PREFETCH_DATA_AHEAD = 6

# State of the SGD-S/M kernel, carried between calls.
_I_TAU, _I_EPOCHS, _I_CONVERGED, _I_EVALS, _I_ERRORS = 0, 1, 2, 3, 4
_F_MEASURE, _F_PRIMAL, _F_DUAL = 0, 1, 2
# ... of the Pegasos kernel.
_F_SCALE, _F_VV = 0, 1


@njit(cache=True, nogil=True)
def plus_steps(g, q, lam, mu):
    """kappa+: margin errors among mu presentations in a row of one pattern (closed form).

    g = y_k u'x_k - lambda tau before the first of them (margin error iff g <= 0),
    q = ||x_k||^2 (> = 0), lam = lambda > 0, mu >= 1. See the module docstring.
    """
    # the first presentation by the plain test: mu = 1 is exactly SGD-S
    if g <= 0.0:
        k = 1
        g = g + (q - lam)
    else:
        k = 0
        g = g - lam
    r = mu - 1
    if r <= 0:
        return k
    if q <= lam:
        if g <= 0.0:
            return k + r  # plus-steps keep g <= 0
        m = g / lam  # ceil(m) minus-steps until g <= 0; all r of them when ceil(m) >= r
        if m > r - 1:
            return k
        return k + r - np.int64(math.ceil(m))
    # q > lambda: kappa+ = floor((r lambda - lambda - g)/q) + 1, clipped to [0, r]
    x = (r * lam - lam - g) / q
    if x < 0.0:
        return k  # (floor(x) + 1 <= 0)
    if x >= r:
        return k + r
    return k + np.int64(math.floor(x)) + 1


@njit(cache=True, nogil=True, inline="always")
def _prefetch_rows(order, s, n, indptr, indices, data, y) -> None:
    if s + _PREFETCH_ROW_AHEAD < n:
        ahead = order[s + _PREFETCH_ROW_AHEAD]
        prefetch(indptr, ahead)
        prefetch(y, ahead)
    if s + _PREFETCH_DATA_AHEAD < n:
        ahead = order[s + _PREFETCH_DATA_AHEAD]
        start = indptr[ahead]
        prefetch(indices, start)
        prefetch(data, start)


@njit(cache=True, nogil=True)
def _sgd_epochs_kernel(
    indptr,
    indices,
    data,
    bias,
    y,
    sq,
    c_rows,
    cost,
    lam,
    mult,
    u,
    counts,
    order,
    rng,
    istate,
    fstate,
    w,
    n_epochs,
    delta,
    comparison,
) -> None:
    """Run up to ``n_epochs`` complete epochs of SGD-S (mult = 1) / SGD-M (mult = mu).

    Shapes: y, sq (x_i'x_i), c_rows (all ``cost``): (l,) float64; u, w: (n_w,) float64;
    counts: (l,) int64 margin-error counts I_k; order: (l,) a permutation of the rows, shuffled
    afresh each epoch. Updates u, counts, istate (tau, epochs, converged, exact primal
    evaluations, sum I_k) and fstate (last bound, last exact primal, last dual) in place; w
    holds u/(lambda tau) at the end of each epoch. Stops early when the bound is <= delta.
    """
    n_rows = y.shape[0]
    for _ in range(n_epochs):
        shuffle(order, FIRST, n_rows, rng)
        tau = istate[_I_TAU]
        errors = istate[_I_ERRORS]
        loss_estimate = 0.0
        for s in range(n_rows):
            _prefetch_rows(order, s, n_rows, indptr, indices, data, y)
            i = order[s]
            yi = y[i]
            p = yi * row_dot(indptr, indices, data, bias, i, u)
            threshold = lam * tau
            # hinge loss at this presentation's w = u/(lambda tau) (w = 0 before any step)
            if tau > 0:
                loss_estimate += loss_value(LOSS_HINGE, p / threshold)
            else:
                loss_estimate += 1.0
            kplus = plus_steps(p - threshold, sq[i], lam, mult)
            if kplus > 0:
                row_axpy(indptr, indices, data, bias, i, kplus * yi, u)
                counts[i] += kplus
                errors += kplus
            tau += mult
        istate[_I_TAU] = tau
        istate[_I_ERRORS] = errors
        istate[_I_EPOCHS] += 1

        # a_k = I_k/(lambda tau) = C I_k/(N mu) in [0, C];  w = u/(lambda tau) = (C/(N mu)) u
        factor = cost / (istate[_I_EPOCHS] * mult)
        ww = 0.0
        for j in range(u.shape[0]):
            wj = u[j] * factor
            w[j] = wj
            ww += wj * wj
        dual = hinge_dual_value_at(errors * factor, ww)
        fstate[_F_DUAL] = dual
        fstate[_F_PRIMAL] = np.nan
        measure = np.nan
        if dual > 0.0:
            measure = (0.5 * ww + cost * loss_estimate - dual) / dual  # estimated bound
            if measure <= comparison * delta:
                primal = primal_value(indptr, indices, data, bias, y, c_rows, w, LOSS_HINGE)
                istate[_I_EVALS] += 1
                fstate[_F_PRIMAL] = primal
                measure = (primal - dual) / dual
                if measure <= delta:
                    istate[_I_CONVERGED] = 1
                    fstate[_F_MEASURE] = measure
                    return
        fstate[_F_MEASURE] = measure


@njit(cache=True, nogil=True)
def _sgd_random_kernel(indptr, indices, data, bias, y, lam, u, rng, istate, n_steps) -> None:
    """SGD-R: ``n_steps`` presentations of rows drawn uniformly with replacement.

    u: (n_w,) float64, the unscaled vector lambda tau w; istate[_I_TAU] = tau, updated.
    """
    n_rows = y.shape[0]
    tau = istate[_I_TAU]
    for _ in range(n_steps):
        i = rand_below(rng, n_rows)
        yi = y[i]
        if yi * row_dot(indptr, indices, data, bias, i, u) <= lam * tau:
            row_axpy(indptr, indices, data, bias, i, yi, u)
        tau += 1
    istate[_I_TAU] = tau


@njit(cache=True, nogil=True)
def _pegasos_kernel(
    indptr, indices, data, bias, y, sq, lam, batch_size, projection, v, fstate, istate, rng,
    batch_rows, batch_dots, n_iterations,
) -> None:  # fmt: skip
    """``n_iterations`` Pegasos iterations on w = fstate[_F_SCALE] x v.

    v: (n_w,) float64; sq: (l,) x_i'x_i; batch_rows, batch_dots: (batch_size,) scratch;
    fstate[_F_VV] = ||v||^2 (refreshed exactly on return); istate[_I_TAU] = t, updated.
    """
    n_rows = y.shape[0]
    radius_sq = 1.0 / lam
    scale = fstate[_F_SCALE]
    vv = fstate[_F_VV]
    t = istate[_I_TAU]
    for _ in range(n_iterations):
        t += 1
        # margins at the current w for the whole batch first
        n_err = 0
        for _b in range(batch_size):
            i = rand_below(rng, n_rows)
            d = row_dot(indptr, indices, data, bias, i, v)
            if y[i] * scale * d < 1.0:
                batch_rows[n_err] = i
                batch_dots[n_err] = d
                n_err += 1
        # w <- (1 - 1/t) w (at t = 1, w = 0 already: the start)
        if t > 1:
            scale *= 1.0 - 1.0 / t
        # w += 1/(lambda t k) y_i x_i for each margin error, i.e. v += that / scale
        step = 1.0 / (lam * t * batch_size * scale)
        for e in range(n_err):
            i = batch_rows[e]
            a = y[i] * step
            d = batch_dots[e] if e == 0 else row_dot(indptr, indices, data, bias, i, v)
            vv += 2.0 * a * d + a * a * sq[i]
            row_axpy(indptr, indices, data, bias, i, a, v)
        if projection:
            ww = scale * scale * vv
            if ww > radius_sq:
                scale *= np.sqrt(radius_sq / ww)
        if scale < RESCALE_BELOW:
            for j in range(v.shape[0]):
                v[j] *= scale
            vv = sq_norm(v)
            scale = 1.0
    istate[_I_TAU] = t
    fstate[_F_SCALE] = scale
    fstate[_F_VV] = sq_norm(v)


# ----------------------------------------------------------------------------- validation


def _check_int(name: str, value, minimum: int) -> int:
    if not is_integer(value):
        raise InvalidInputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _real_scalar(name: str, value):
    """``value``, or the scalar a 0-d array holds, if it is a real number (a bool is not): the
    range checks' messages then show the scalar, not the array."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, int | float | np.integer | np.floating
    ):
        raise InvalidInputError(f"{name} must be a real number, got {value!r}")
    return value


def _check_real(name: str, value, *, positive: bool, allow_inf: bool = False) -> float:
    value = _real_scalar(name, value)
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise InvalidInputError(f"{name} must be finite, got {value!r}")
    if positive and not v > 0.0:
        raise InvalidInputError(f"{name} must be > 0, got {value!r}")
    return v


def check_one_cost_problem(sub: Subproblem, family: str) -> tuple:
    """X (CSR), y (l,) float64 +1/-1 and C (l,) of a binary sub-problem for solvers that take
    one cost for every row and no warm start (``family``, e.g. "the SGD solvers", names them
    in the one-line errors)."""
    X = as_csr(sub.X, check_finite=not sub.values_checked)
    n_rows = X.shape[0]
    if n_rows == 0:
        raise InvalidInputError("X has no rows")
    y = np.asarray(sub.y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise InvalidInputError(f"y must have shape ({n_rows},), got {y.shape}")
    if y.dtype.kind not in "biuf":
        raise InvalidInputError(f"y must be numeric +1/-1, got dtype {y.dtype}")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not np.all((y == 1.0) | (y == -1.0)):
        raise InvalidInputError("y must hold only +1 and -1")
    C = np.asarray(sub.C)
    if C.shape != (n_rows,):
        raise InvalidInputError(f"C must have shape ({n_rows},), got {C.shape}")
    if C.dtype.kind not in "biuf":
        raise InvalidInputError(f"C must be numeric, got dtype {C.dtype}")
    if np.any(C != C[0]):
        raise InvalidInputError(
            f"{family} take one cost for every row: no class or sample weights"
        )
    if sub.w0 is not None or sub.alpha0 is not None:
        raise InvalidInputError(f"{family} take no warm start")
    return X, y, C


class _Problem:
    """A sub-problem checked for the SGD solvers: X CSR, y (l,) +1/-1, one cost, bias, lambda,
    the epoch cap and the seed."""

    def __init__(self, sub: Subproblem, hook: Hook | None):
        X, y, C = check_one_cost_problem(sub, "the SGD solvers")
        n_rows = X.shape[0]
        if n_rows >= 2**32:
            raise InvalidInputError(f"the SGD solvers take fewer than 2**32 rows, got {n_rows}")
        if hook is not None and not callable(hook):
            raise InvalidInputError("the hook must be callable or None")
        self.X = X
        self.y = y
        self.cost = _check_real("C", C[0], positive=True)
        self.bias = _check_real("bias", sub.bias, positive=False)
        self.max_epochs = _check_int("max_iter", sub.max_iter, 1)
        self.seed = _check_int("seed", sub.seed, -(2**63))
        self.n_rows = n_rows
        self.n_weights = X.shape[1] + (1 if self.bias >= 0 else 0)
        self.lam = 1.0 / (self.cost * n_rows)
        if not 0.0 < self.lam < math.inf:  # (C l past float64, or C subnormal)
            raise InvalidInputError(
                f"C = {self.cost:g} with {n_rows} rows gives lambda = 1/(C l) = {self.lam:g}: "
                "the SGD solvers need 0 < lambda < inf; give a C nearer 1"
            )
        self.c_rows = np.full(n_rows, self.cost)

    def primal(self, w: np.ndarray) -> float:
        X = self.X
        return float(
            primal_value(X.indptr, X.indices, X.data, self.bias, self.y, self.c_rows, w, LOSS_HINGE)
        )


def budget_callbacks(
    live: Callable[[], tuple[np.ndarray, dict]],
    primal: Callable[[np.ndarray], float],
    state_arrays: dict[str, np.ndarray],
    result: Callable[[], tuple[np.ndarray, int, dict]],
) -> dict[str, Any]:
    """``run_primal``'s callbacks for a solver with no stopping rule and no dual point, which
    runs until its budget is spent: no stopping measure, no dual, never converged. ``live()``
    gives the hook's (w, figures), ``result()`` the Solution's (w, n_iter, figures);
    ``primal(w)`` is the objective, ``state_arrays`` the arrays a checkpoint copies."""

    def progress() -> tuple[np.ndarray, float, dict]:
        w, figures = live()
        return w, math.nan, figures

    def solution_fields() -> dict:
        w, n_iter, figures = result()
        return {"w": w, "n_iter": n_iter, "primal": primal(w), "figures": figures}

    return {
        "live": progress,
        "state": lambda: copy_state(**state_arrays),
        "objectives": lambda at: (primal(at), math.nan),
        "result": solution_fields,
        "converges": False,
    }


def _solve_budget(sub, hook, pb, solver, max_iter, advance, status, current_w, istate, arrays,
                  n_iter) -> Solution:  # fmt: skip
    """SGD-R and Pegasos, run to their budget: ``status()`` is (epoch equivalents, budget
    spent); ``current_w()`` is w as the kernel's state holds it, ``n_iter()`` the Solution's
    epoch count."""

    def result() -> tuple[np.ndarray, int, dict]:
        figures = {"stop_measure": math.nan, "stop_ratio": math.nan}
        figures.update(n_steps=int(istate[_I_TAU]), primal_evaluations=0)
        return current_w(), n_iter(), figures

    return run_primal(
        sub, hook, solver, max_iter, advance, status,
        **budget_callbacks(
            live=lambda: (current_w(), {"n_steps": int(istate[_I_TAU])}),
            primal=pb.primal,
            state_arrays=arrays,
            result=result,
        ),
    )  # fmt: skip


# ----------------------------------------------------------------------------- solvers


def _solve_epochs(sub: Subproblem, hook: Hook | None, solver: int, multiplicity: int) -> Solution:
    """SGD-S (multiplicity 1) and SGD-M: complete epochs, stopped by the bound (P - D)/D."""
    pb = _Problem(sub, hook)
    delta = _check_real("eps (delta)", sub.eps, positive=False)
    if delta < 0.0:
        raise InvalidInputError(f"eps (delta) must be >= 0, got {delta}")
    comparison = _check_real(
        "comparison", sub.option("comparison", DEFAULT_COMPARISON), positive=True, allow_inf=True
    )
    if sub.option("max_steps") is not None:
        raise InvalidInputError("max_steps applies to -s 31 (sgd-r) only (use max_iter)")
    X, y, bias, cost, lam, n_rows = pb.X, pb.y, pb.bias, pb.cost, pb.lam, pb.n_rows
    sq = rows_sq_norms(X.indptr, X.data, bias)
    rng = new_state(pb.seed)
    u = np.zeros(pb.n_weights)
    counts = np.zeros(n_rows, dtype=np.int64)
    order = np.arange(n_rows, dtype=np.int32 if n_rows < 2**31 - 1 else np.int64)
    istate = np.zeros(5, dtype=np.int64)
    fstate = np.full(3, np.nan)
    w = np.zeros(pb.n_weights)
    arrays = {"u": u, "counts": counts, "order": order, "rng": rng, "istate": istate,
              "fstate": fstate, "w": w}  # fmt: skip
    if sub.resume is not None:
        restore_state(arrays, sub.resume)

    def advance(n_epochs: int) -> None:
        _sgd_epochs_kernel(
            X.indptr, X.indices, X.data, bias, y, sq, pb.c_rows, cost, lam, multiplicity, u,
            counts, order, rng, istate, fstate, w, n_epochs, delta, comparison,
        )  # fmt: skip

    def result() -> dict:
        n_epochs = int(istate[_I_EPOCHS])
        factor = cost / (n_epochs * multiplicity)
        w_final = u * factor  # what the kernel wrote into w, but unaffected by what a hook did
        alpha = counts * factor  # C I_k/(N mu), in [0, C]
        primal, dual, gap = svm_objectives(X, bias, y, pb.c_rows, w_final, alpha, LOSS_HINGE)
        if istate[_I_CONVERGED]:
            stop_measure = float(fstate[_F_MEASURE])  # the exact bound the criterion accepted
        else:
            stop_measure = gap / dual if dual > 0.0 else math.nan
        return {
            "w": w_final,
            "primal": primal,
            "dual": dual,
            "gap": gap,
            "alpha": alpha,
            "figures": {
                "stop_measure": stop_measure,  # the relative accuracy bound (P - D)/D
                "stop_ratio": stop_measure,
                "n_steps": int(istate[_I_TAU]),  # presentations (SGD-M counts each of the mu)
                "primal_evaluations": int(istate[_I_EVALS]),  # exact primals of the criterion
            },
        }

    def live() -> tuple[np.ndarray, float, dict]:
        figures = {
            "dual": float(fstate[_F_DUAL]),
            "primal": float(fstate[_F_PRIMAL]),  # NaN unless the criterion computed it
            "n_steps": int(istate[_I_TAU]),
        }
        return w, float(fstate[_F_MEASURE]), figures

    return run_primal(
        sub, hook, solver, pb.max_epochs, advance,
        status=lambda: (int(istate[_I_EPOCHS]), bool(istate[_I_CONVERGED])),
        live=live,
        state=lambda: copy_state(**arrays),
        objectives=lambda at: (pb.primal(at), float(fstate[_F_DUAL])),
        result=result,
    )  # fmt: skip


def solve_sgd_s(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by SGD-S (-s 32): complete epochs in a fresh random
    order, step 1/(lambda t).

    ``sub``: X CSR (l, n); y (l,) of +1/-1; C (l,) one cost for every row (C[0]); bias >= 0
    adds the feature of that value (w then has n + 1 entries); eps: delta >= 0, stop when the
    bound (P - D)/D <= delta (checked at each epoch end, the primal estimated first and
    computed exactly only when the estimate is <= ``comparison`` x delta, option, default
    DEFAULT_COMPARISON); max_iter: the epoch cap; seed. No warm start.

    Returns a Solution with alpha (l,) in [0, C] (w = w(alpha)), primal, dual and gap; figures
    stop_measure (= stop_ratio, the bound of the returned w and alpha), n_steps,
    primal_evaluations. Raises InvalidInputError on bad input.
    """
    if sub.option("multiplicity") not in (None, 1):
        raise InvalidInputError("multiplicity applies to -s 33 (sgd-m) only")
    return _solve_epochs(sub, hook, 32, 1)


def solve_sgd_m(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """SGD-M (-s 33): SGD-S where each presentation is ``multiplicity`` presentations in a row
    (option, default DEFAULT_MULTIPLICITY; 1 is SGD-S exactly), in closed form. As
    ``solve_sgd_s`` otherwise."""
    multiplicity = _check_int("multiplicity", sub.option("multiplicity", DEFAULT_MULTIPLICITY), 1)
    return _solve_epochs(sub, hook, 33, multiplicity)


def solve_sgd_r(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by SGD-R (-s 31): rows drawn uniformly with replacement,
    step 1/(lambda t), for max_iter x l steps (or option ``max_steps``). No stopping criterion
    and no dual point: the run ends at its budget with stop_reason MAX_ITER (converged False).

    ``sub`` as for ``solve_sgd_s`` (eps unused). n_iter: complete epoch equivalents
    (steps // l); figures n_steps. The hook is called every l steps (and after a last partial
    epoch), iteration = ceil(steps / l).
    """
    pb = _Problem(sub, hook)
    max_steps = sub.option("max_steps")
    if max_steps is None:
        max_steps = pb.max_epochs * pb.n_rows
    max_steps = _check_int("max_steps", max_steps, 1)
    X, y, bias, lam, n_rows = pb.X, pb.y, pb.bias, pb.lam, pb.n_rows
    rng = new_state(pb.seed)
    u = np.zeros(pb.n_weights)
    istate = np.zeros(5, dtype=np.int64)
    arrays = {"u": u, "rng": rng, "istate": istate}
    if sub.resume is not None:
        restore_state(arrays, sub.resume)

    def epochs_begun() -> int:
        return -(-int(istate[_I_TAU]) // n_rows)

    def advance(n_epochs: int) -> None:
        upto = min((epochs_begun() + n_epochs) * n_rows, max_steps)
        n_steps = upto - int(istate[_I_TAU])
        _sgd_random_kernel(X.indptr, X.indices, X.data, bias, y, lam, u, rng, istate, n_steps)

    def current_w() -> np.ndarray:
        tau = int(istate[_I_TAU])
        return u / (lam * tau) if tau > 0 else np.zeros(pb.n_weights)

    return _solve_budget(
        sub, hook, pb, 31, -(-max_steps // n_rows), advance,
        lambda: (epochs_begun(), bool(istate[_I_TAU] >= max_steps)),
        current_w, istate, arrays,
        n_iter=lambda: int(istate[_I_TAU]) // n_rows,  # complete epoch equivalents
    )  # fmt: skip


def solve_pegasos(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by Pegasos (-s 30): step 1/(lambda t), mini-batches of
    ``batch_size`` rows (option, default 1) drawn uniformly with replacement, the projection
    onto ||w|| <= 1/sqrt(lambda) when option ``projection`` (default True).

    ``sub`` as for ``solve_sgd_s`` (eps unused). Runs ceil(max_iter x l / batch_size)
    iterations. No stopping criterion and no dual point: the run ends at its budget with
    stop_reason MAX_ITER (converged False). n_iter: epoch equivalents (iterations x batch_size
    // l); figures n_steps (iterations). The hook is called after every l rows presented.
    """
    pb = _Problem(sub, hook)
    batch_size = _check_int("batch_size", sub.option("batch_size", 1), 1)
    projection = sub.option("projection", True)
    if not isinstance(projection, bool | np.bool_):
        raise InvalidInputError(f"projection must be True or False, got {projection!r}")
    X, y, bias, lam, n_rows = pb.X, pb.y, pb.bias, pb.lam, pb.n_rows
    total = -(-pb.max_epochs * n_rows // batch_size)  # ceil
    rng = new_state(pb.seed)
    sq = rows_sq_norms(X.indptr, X.data, bias)
    v = np.zeros(pb.n_weights)
    fstate = np.array([1.0, 0.0])
    istate = np.zeros(1, dtype=np.int64)
    batch_rows = np.empty(batch_size, dtype=np.int64)
    batch_dots = np.empty(batch_size)
    arrays = {"v": v, "fstate": fstate, "istate": istate, "rng": rng}
    if sub.resume is not None:
        restore_state(arrays, sub.resume)

    def epochs_done() -> int:
        return int(istate[_I_TAU]) * batch_size // n_rows

    def advance(n_epochs: int) -> None:
        upto = min(-(-(epochs_done() + n_epochs) * n_rows // batch_size), total)
        _pegasos_kernel(
            X.indptr, X.indices, X.data, bias, y, sq, lam, batch_size, bool(projection), v,
            fstate, istate, rng, batch_rows, batch_dots, upto - int(istate[_I_TAU]),
        )  # fmt: skip

    return _solve_budget(
        sub, hook, pb, 30, pb.max_epochs, advance,
        lambda: (epochs_done(), bool(istate[_I_TAU] >= total)),
        lambda: v * fstate[_F_SCALE], istate, arrays, n_iter=epochs_done,
    )  # fmt: skip


__all__ = [
    "plus_steps",
    "solve_pegasos",
    "solve_sgd_r",
    "solve_sgd_s",
    "solve_sgd_m",
    "DEFAULT_DELTA",
    "DEFAULT_MAX_EPOCHS",
    "DEFAULT_RANDOM_EPOCHS",
    "DEFAULT_PEGASOS_EPOCHS",
    "DEFAULT_MULTIPLICITY",
    "DEFAULT_COMPARISON",
]
