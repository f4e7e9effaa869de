"""One-class SVM (-s 21) by LIBLINEAR 2.50's two-level coordinate descent.

The problem, in LIBLINEAR's scaling (Schölkopf's one-class SVM with its dual variables multiplied
by ``nu * l``, so that the bounds are 1 and ``w``, ``rho`` come out multiplied by ``nu * l``)::

    primal:  min_{w, rho}  P(w, rho) = 1/2 w'w - nu l rho + sum_i max(0, rho - w'x_i)
    dual:    min_a  f(a) = 1/2 a'Qa,  Q_ij = x_i'x_j,  s.t.  0 <= a_i <= 1,  sum_i a_i = nu l

Primal and dual meet at ``w = sum_i a_i x_i``; ``P* = -f(a*) = -1/2 ||w*||^2 <= 0`` (so the
optimal value is ``-1/2 w*'w*``; LIBLINEAR prints ``f = 1/2 w'w`` as "Objective value"). For any
feasible ``a`` and any ``w``, ``-f(a) <= P* <= P(w) := min_rho P(w, rho)``; the minimising
``rho`` is the ceil(nu l)-th smallest of the ``w'x_i``. ``gap = P(w(a)) + f(a) >= 0``.

The decision value of a point is ``w'x - rho`` and the prediction +1 when it is > 0, else -1
(the labels of the training file play no part). There is no bias: LIBLINEAR refuses ``-B >= 0``
for -s 21 ("prob->bias >=0, but this is ignored in ONECLASS_SVM"), see ``check_oneclass_bias``.

The method (LIBLINEAR's ``solve_oneclass_svm``; Chou, Lin, Yu, Lin, SDM 2020, supplement's
Algorithm 7):

- start: the first floor(nu l) rows at a_i = 1, the next one at nu l - floor(nu l), the others 0;
- outer iteration: G_i = w'x_i on the active rows; with I_up = {a_i < 1}, I_low = {a_i > 0},
  M = max_{I_up} -G_i and m = min_{I_low} -G_i. Stop when M - m < eps (default 0.01) on the
  active set, re-checked on every row (without counting an iteration) before returning. Then
  shrink the rows at a_i = 1 with -G_i > M and those at a_i = 0 with -G_i < m;
- inner level: k = min(max(active / 10, 1), |I_up|, |I_low|); pair the k largest -G_i of I_up
  (largest first; ties: larger row number first) with the k smallest of I_low (smallest first;
  ties: smaller row number first). For each pair (i, j) whose gradients (recomputed from the
  current w) still violate by more than 1e-12, the exact two-variable step keeping a_i + a_j
  fixed: d = (G_i - G_j) / (Q_ii + Q_jj - 2 Q_ij) (1e-12 when that is <= 0), a_i -= d,
  a_j += d, clipped to the box; w += d_actual (x_i - x_j);
- at most 1000 outer iterations (LIBLINEAR's cap, the registry's; it then returns
  MAX_ITER and training warns, as LIBLINEAR does);
- rho: the mean of w'x_i over the free rows (0 < a_i < 1); without free rows the midpoint of
  max{w'x_i : a_i = 1} and min{w'x_i : a_i = 0}.

The selection is deterministic (LIBLINEAR's quick-select draws random pivots but orders by
(value, row), a total order), so this solver follows LIBLINEAR's path; with
``liblinear_rounding`` (default: every w'x_i summed in row order, as LIBLINEAR's
``sparse_operator::dot``) it reproduces LIBLINEAR's iterations, w and rho bit for bit on every
set tested (x86-64; model files byte-identical). Different from LIBLINEAR: the active rows stay
in ascending order (only the set matters to the selection), and a selection over many rows first
keeps the candidates beyond a threshold estimated from a sample of 512 values (one pass of plain
comparisons), then quick-selects among them (same result, about a third of the cost).

The kernel keeps its state in arrays (alpha, w, the active rows, the counters and the last
gradient extremes), so ``solve_oneclass`` runs it through ``_dual.run_dual`` a batch of outer
iterations at a time; its O(l) scratch arrays are allocated once per solve.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..objective import (  # noqa: F401  (the one-class objectives live in objective)
    oneclass_best_rho,
    oneclass_dual_value,
    oneclass_objectives,
    oneclass_primal_at,
    oneclass_primal_value,
    oneclass_w_from_dual,
)
from ..sparse_rows import row_axpy, row_dot, row_sq_norm, rows_dot
from . import _dual
from ._base import Hook, Solution, Subproblem, check_eps, check_number
from ._dual import I_ACTIVE as _I_ACTIVE
from ._dual import I_CONVERGED as _I_CONVERGED
from ._dual import I_ITER as _I_ITER

SOLVER = 21
ONECLASS_DEFAULT_NU = 0.5
_VIOLATION_MARGIN = 1e-12  # a pair is updated only if its gradients differ by more than this
_MIN_QUAD = 1e-12  # curvature used when Q_ii + Q_jj - 2 Q_ij <= 0

# istate, carried between kernel calls, is _dual's: I_ACTIVE, I_ITER, I_CONVERGED
# fstate: the extremes of the last gradient pass (M = max over I_up of -G, m = min over I_low)
_F_NEG_G_MAX, _F_NEG_G_MIN = 0, 1
# rows of the kernel's scratch arrays: fwork (3, l) float64, iwork (5, l) int64
_W_UP_VALS, _W_LOW_VALS, _W_CAND_VALS = 0, 1, 2
_W_UP_ROWS, _W_LOW_ROWS, _W_CAND_ROWS, _W_PICK_UP, _W_PICK_LOW = 0, 1, 2, 3, 4
# the arrays that make up the resumable state (Progress.state(), Subproblem.resume)
STATE_KEYS = ("alpha", "w", "active", "istate", "fstate")

BIAS_ERROR = "prob->bias >=0, but this is ignored in ONECLASS_SVM"


def check_oneclass_bias(bias: float) -> None:
    """Raise LIBLINEAR's error for a bias with -s 21 (``bias >= 0``); ``bias < 0`` is fine."""
    if bias >= 0:
        raise InvalidInputError(
            f"the one-class SVM (-s 21) takes no bias term (got -B {bias:g}); "
            f"LIBLINEAR: {BIAS_ERROR}"
        )


def check_nu(nu: float) -> float:
    """nu must lie in (0, 1] (LIBLINEAR does not check; nu > 1 overruns its arrays)."""
    out_of_range = "nu must be in (0, 1] for the one-class SVM, got {number}"
    nu = check_number(nu, 0.0, "nu must be a number in (0, 1], got {value!r}", out_of_range,
                      strict=True)  # fmt: skip
    if nu > 1.0:
        raise InvalidInputError(out_of_range.format(number=nu))
    return nu


# ----------------------------------------------------------------------------- the solver


@njit(cache=True, nogil=True)
def _dot(indptr, indices, data, i, w, sequential) -> float:
    """w'x_i: one running sum in row order (LIBLINEAR's rounding) or sparse_rows.row_dot's four."""
    if not sequential:
        return row_dot(indptr, indices, data, -1.0, i, w)
    s = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        s += w[np.uint64(indices[k])] * data[k]
    return s


@njit(cache=True, nogil=True)
def _prepare(indptr, indices, data, nu, alpha, qd, w) -> None:
    """LIBLINEAR's start: a = (1, ..., 1, nu l - floor(nu l), 0, ..., 0); Q_ii; w = sum a_i x_i."""
    n_rows = alpha.shape[0]
    m = nu * n_rows
    n_full = int(m)
    for i in range(n_rows):
        if i < n_full:
            alpha[i] = 1.0
        elif i == n_full:
            alpha[i] = m - n_full
        else:
            alpha[i] = 0.0
        sq = row_sq_norm(indptr, data, -1.0, i)
        qd[i] = sq
        if alpha[i] != 0.0:
            row_axpy(indptr, indices, data, -1.0, i, alpha[i], w)


@njit(cache=True, nogil=True, inline="always")
def _before(va, ra, vb, rb) -> bool:
    """LIBLINEAR's order of (value, row) pairs: by value, ties by row. A total order."""
    return va < vb or (va == vb and ra < rb)


@njit(cache=True, nogil=True)
def _quickselect(vals, rows, lo, hi, k) -> None:
    """Reorder vals/rows[lo:hi+1] so that position k holds the pair of rank k (in place)."""
    while lo < hi:
        # median of three as pivot, moved to hi
        mid = (lo + hi) // 2
        if _before(vals[mid], rows[mid], vals[lo], rows[lo]):
            vals[mid], vals[lo] = vals[lo], vals[mid]
            rows[mid], rows[lo] = rows[lo], rows[mid]
        if _before(vals[hi], rows[hi], vals[lo], rows[lo]):
            vals[hi], vals[lo] = vals[lo], vals[hi]
            rows[hi], rows[lo] = rows[lo], rows[hi]
        if _before(vals[mid], rows[mid], vals[hi], rows[hi]):
            vals[mid], vals[hi] = vals[hi], vals[mid]
            rows[mid], rows[hi] = rows[hi], rows[mid]
        pv = vals[hi]
        pr = rows[hi]
        store = lo
        for s in range(lo, hi):
            if _before(vals[s], rows[s], pv, pr):
                vals[s], vals[store] = vals[store], vals[s]
                rows[s], rows[store] = rows[store], rows[s]
                store += 1
        vals[hi], vals[store] = vals[store], vals[hi]
        rows[hi], rows[store] = rows[store], rows[hi]
        if store == k:
            return
        if k < store:
            hi = store - 1
        else:
            lo = store + 1


@njit(cache=True, nogil=True)
def _sorted_pairs(vals, rows, k, largest, out_rows) -> None:
    """out_rows[:k] = rows[:k] ordered by (value, row): ascending, or descending if largest."""
    order = np.argsort(vals[:k])
    v = vals[:k][order]
    r = rows[:k][order]
    # runs of equal values: order them by row (LIBLINEAR's tie-break); rare, short
    s = 0
    while s < k:
        e = s + 1
        while e < k and v[e] == v[s]:
            e += 1
        if e - s > 1:
            r[s:e].sort()
        s = e
    for s in range(k):
        out_rows[s] = r[k - 1 - s] if largest else r[s]


# Selections over more than this many pairs first cut the candidates down with a threshold
# estimated from a sample (one pass of plain comparisons), then quick-select among them.
_SAMPLE_ABOVE = 2048
_SAMPLE_SIZE = 512
# ``_select``'s flag, typed: literal True / False would compile it (and what it calls) twice
_LARGEST, _SMALLEST = np.bool_(True), np.bool_(False)


@njit(cache=True, nogil=True)
def _extremes(vals, rows, n, k, largest, out_rows) -> None:
    """out_rows[:k]: the rows of the k extreme pairs of vals/rows[:n] by quick-select, in
    LIBLINEAR's order (see ``_select``). vals/rows[:n] may be reordered."""
    # (``largest`` and a typed 0 passed on, not literals: each literal would compile the
    # callee once more)
    if largest:
        if k < n:
            _quickselect(vals, rows, np.int64(0), n - 1, n - k)
        _sorted_pairs(vals[n - k : n], rows[n - k : n], k, largest, out_rows)
    else:
        if k < n:
            _quickselect(vals, rows, np.int64(0), n - 1, k - 1)
        _sorted_pairs(vals, rows, k, largest, out_rows)


@njit(cache=True, nogil=True)
def _select(vals, rows, n, k, largest, cand_vals, cand_rows, out_rows) -> None:
    """out_rows[:k]: the rows of the k extreme pairs of vals/rows[:n], in LIBLINEAR's order.

    largest: the k largest by (value, row), largest first; else the k smallest, smallest
    first. (LIBLINEAR: quick-select then qsort.) vals/rows[:n] may be reordered.
    """
    if n > _SAMPLE_ABOVE and k < n // 2:
        # a threshold t with (likely) a little more than k values beyond it
        sample = np.empty(_SAMPLE_SIZE)
        for s in range(_SAMPLE_SIZE):
            sample[s] = vals[(s * n) // _SAMPLE_SIZE]
        sample.sort()
        want = (k * _SAMPLE_SIZE) // n + 1
        want = want + want // 4 + 8  # slack so that the cut rarely falls short
        if want < _SAMPLE_SIZE:
            t = sample[_SAMPLE_SIZE - want] if largest else sample[want - 1]
            m = np.int64(0)
            for s in range(n):
                v = vals[s]
                if (v >= t) if largest else (v <= t):
                    cand_vals[m] = v
                    cand_rows[m] = rows[s]
                    m += 1
            # every pair beyond the k-th extreme is a candidate once there are >= k of them
            if m >= k:
                _extremes(cand_vals, cand_rows, m, k, largest, out_rows)
                return
    _extremes(vals, rows, n, k, largest, out_rows)


@njit(cache=True, nogil=True)
def oneclass_kernel(
    indptr,
    indices,
    data,
    alpha,
    qd,
    w,
    grad,
    active,
    istate,
    fstate,
    fwork,
    iwork,
    eps,
    n_iter,
    max_iter,
    sequential,
):
    """Run up to ``n_iter`` more outer iterations (at most ``max_iter`` in all); update in place.

    active: (l,) row numbers, the first istate[_I_ACTIVE] of them active (ascending);
    istate (3,) int64 and fstate (2,): see the layouts above. Sets istate[_I_CONVERGED] when
    done. Scratch, allocated once by the caller (each iteration writes before it reads):
    grad (l,), G_i = w'x_i of this iteration's gradient pass; fwork (3, l); iwork (5, l).
    """
    inf = np.inf
    n_rows = alpha.shape[0]
    up_vals = fwork[_W_UP_VALS]
    low_vals = fwork[_W_LOW_VALS]
    cand_vals = fwork[_W_CAND_VALS]
    up_rows = iwork[_W_UP_ROWS]
    low_rows = iwork[_W_LOW_ROWS]
    cand_rows = iwork[_W_CAND_ROWS]
    pick_up = iwork[_W_PICK_UP]
    pick_low = iwork[_W_PICK_LOW]
    target = istate[_I_ITER] + n_iter
    while istate[_I_ITER] < min(target, max_iter):
        n_active = istate[_I_ACTIVE]
        neg_g_max = -inf
        neg_g_min = inf
        for s in range(n_active):
            i = active[s]
            g = _dot(indptr, indices, data, i, w, sequential)
            grad[i] = g
            if alpha[i] < 1.0:
                neg_g_max = max(neg_g_max, -g)
            if alpha[i] > 0.0:
                neg_g_min = min(neg_g_min, -g)
        fstate[_F_NEG_G_MAX] = neg_g_max
        fstate[_F_NEG_G_MIN] = neg_g_min

        if neg_g_max - neg_g_min < eps:
            if n_active == n_rows:
                istate[_I_CONVERGED] = 1
                return
            # converged on the active set: re-check every row (not counted as an iteration)
            for s in range(n_rows):
                active[s] = s
            istate[_I_ACTIVE] = n_rows
            continue

        # shrink (keeping the active rows ascending), and split them into I_up and I_low
        kept = 0
        n_up = np.int64(0)  # (typed zeros: see _LARGEST)
        n_low = np.int64(0)
        for s in range(n_active):
            i = active[s]
            a = alpha[i]
            neg_g = -grad[i]
            if (a == 1.0 and neg_g > neg_g_max) or (a == 0.0 and neg_g < neg_g_min):
                continue
            active[kept] = i
            kept += 1
            if a < 1.0:
                up_rows[n_up] = i
                up_vals[n_up] = neg_g
                n_up += 1
            if a > 0.0:
                low_rows[n_low] = i
                low_vals[n_low] = neg_g
                n_low += 1
        istate[_I_ACTIVE] = kept

        n_pairs = min(max(kept // 10, 1), n_up, n_low)
        if n_pairs > 0:
            _select(up_vals, up_rows, n_up, n_pairs, _LARGEST, cand_vals, cand_rows, pick_up)
            _select(low_vals, low_rows, n_low, n_pairs, _SMALLEST, cand_vals, cand_rows,
                    pick_low)  # fmt: skip
        for s in range(n_pairs):
            i = pick_up[s]  # largest -G of I_up first
            j = pick_low[s]  # smallest -G of I_low first
            ai = alpha[i]
            aj = alpha[j]
            if (ai == 0.0 and aj == 0.0) or (ai == 1.0 and aj == 1.0):
                continue
            gi = _dot(indptr, indices, data, i, w, sequential)
            gj = _dot(indptr, indices, data, j, w, sequential)
            if not (
                (ai < 1.0 and aj > 0.0 and -gj + _VIOLATION_MARGIN < -gi)
                or (ai > 0.0 and aj < 1.0 and -gi + _VIOLATION_MARGIN < -gj)
            ):
                continue
            quad = qd[i] + qd[j] - 2.0 * rows_dot(indptr, indices, data, i, j)
            if quad <= 0.0:
                quad = _MIN_QUAD
            delta = (gi - gj) / quad
            total = ai + aj
            new_ai = ai - delta
            new_aj = aj + delta
            # clip to the box, keeping a_i + a_j = total
            if total > 1.0:
                if new_ai > 1.0:
                    new_ai = 1.0
                    new_aj = total - 1.0
                if new_aj > 1.0:
                    new_aj = 1.0
                    new_ai = total - 1.0
            else:
                if new_aj < 0.0:
                    new_aj = 0.0
                    new_ai = total
                if new_ai < 0.0:
                    new_ai = 0.0
                    new_aj = total
            alpha[i] = new_ai
            alpha[j] = new_aj
            step = new_ai - ai
            row_axpy(indptr, indices, data, -1.0, i, step, w)
            row_axpy(indptr, indices, data, -1.0, j, -step, w)
        istate[_I_ITER] += 1


@njit(cache=True, nogil=True)
def oneclass_rho(indptr, indices, data, alpha, w, sequential=True) -> float:
    """LIBLINEAR's rho: mean w'x_i over free rows, else the midpoint of the bounded rows' range."""
    n_free = 0
    sum_free = 0.0
    ub = np.inf
    lb = -np.inf
    for i in range(alpha.shape[0]):
        g = _dot(indptr, indices, data, i, w, sequential)
        if alpha[i] == 1.0:
            lb = max(lb, g)
        elif alpha[i] == 0.0:
            ub = min(ub, g)
        else:
            n_free += 1
            sum_free += g
    if n_free > 0:
        return sum_free / n_free
    return (ub + lb) / 2.0


def solve_oneclass(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Train LIBLINEAR's one-class SVM (-s 21) on the rows of ``sub.X``.

    What the Subproblem holds for -s 21: X, CSR (l, n), any float dtype, sorted indices;
    eps, max_iter; bias < 0 (none: ``check_oneclass_bias``); options["nu"] in (0, 1]
    (default 0.5) and options["liblinear_rounding"] (default True). y, C and seed play no part
    (the method is deterministic: LIBLINEAR's random pivots do not change the selection); no
    warm start (``alpha0``/``w0`` are refused). ``resume``: a dict from ``Progress.state()``.

    ``liblinear_rounding``: sum every w'x_i in row order as LIBLINEAR does. The selection
    compares gradients exactly, so rounding decides ties and near-ties; with this the path
    (iterations, w, rho) is LIBLINEAR's to the last bit on the sets tested (x86-64). False uses
    sparse_rows.row_dot's four partial sums: faster on long rows, an equally good but different
    path (e.g. ijcnn1, nu 0.5: 129 outer iterations instead of LIBLINEAR's 78).

    Returns a Solution in LIBLINEAR's scaling: w (n,) = sum_i alpha_i x_i, alpha (l,) in [0, 1]
    summing to nu l, primal P(w(alpha)) = min_rho P(w(alpha), rho), dual -f(alpha) =
    -1/2 alpha'Q alpha, and figures ``rho`` (the model's decision value is w'x - rho), ``n_sv``
    (rows with alpha_i > 0) and ``objective`` (LIBLINEAR's printed "Objective value",
    f(alpha) = 1/2 w'w). The hook sees ``measure`` = M - m (the largest violation) and
    figures ``n_active``, ``neg_g_max`` (M), ``neg_g_min`` (m).
    """
    nu = check_nu(sub.option("nu", ONECLASS_DEFAULT_NU))
    check_oneclass_bias(sub.bias)
    eps = check_eps(sub.eps)
    max_iter = int(sub.max_iter)
    if max_iter < 0:
        raise InvalidInputError(f"max_iter must be >= 0, got {max_iter}")
    if sub.alpha0 is not None or sub.w0 is not None:
        raise InvalidInputError("the one-class SVM (-s 21) takes no warm start")
    sequential = bool(sub.option("liblinear_rounding", True))
    X = sub.X
    n_rows, n_features = X.shape
    if n_rows == 0:
        raise InvalidInputError("the one-class SVM needs at least one row")
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    alpha = np.empty(n_rows)
    qd = np.empty(n_rows)
    w = np.zeros(n_features)
    _prepare(X.indptr, X.indices, X.data, nu, alpha, qd, w)
    active = np.arange(n_rows, dtype=np.int64)
    istate = np.array([n_rows, 0, 0], dtype=np.int64)
    fstate = np.array([np.inf, -np.inf])
    state = {"alpha": alpha, "w": w, "active": active, "istate": istate, "fstate": fstate}
    grad = np.zeros(n_rows)
    fwork = np.empty((3, n_rows))
    iwork = np.empty((5, n_rows), dtype=np.int64)

    def advance(n_iter: int) -> None:
        oneclass_kernel(
            X.indptr, X.indices, X.data, alpha, qd, w, grad, active, istate, fstate, fwork,
            iwork, eps, int(n_iter), max_iter, sequential,
        )  # fmt: skip

    def report() -> tuple[float, dict]:
        return float(fstate[_F_NEG_G_MAX] - fstate[_F_NEG_G_MIN]), {
            "n_active": int(istate[_I_ACTIVE]),
            "neg_g_max": float(fstate[_F_NEG_G_MAX]),
            "neg_g_min": float(fstate[_F_NEG_G_MIN]),
        }

    def figures() -> dict:
        return {
            "rho": float(oneclass_rho(X.indptr, X.indices, X.data, alpha, w, sequential)),
            "n_sv": int(np.count_nonzero(alpha > 0.0)),
            "n_active": int(istate[_I_ACTIVE]),
        }

    def values() -> tuple[float, float, float]:
        return oneclass_objectives(X, nu, alpha)

    solution = _dual.run_dual(
        sub, hook, SOLVER, advance, state, w=w, alpha=alpha, report=report, values=values,
        figures=figures,
    )  # fmt: skip
    solution.figures["objective"] = -solution.dual  # LIBLINEAR's "Objective value", 1/2 w'w
    return solution


__all__ = [
    "BIAS_ERROR",
    "ONECLASS_DEFAULT_NU",
    "STATE_KEYS",
    "check_nu",
    "check_oneclass_bias",
    "oneclass_best_rho",
    "oneclass_dual_value",
    "oneclass_kernel",
    "oneclass_objectives",
    "oneclass_primal_at",
    "oneclass_primal_value",
    "oneclass_rho",
    "oneclass_w_from_dual",
    "solve_oneclass",
]
