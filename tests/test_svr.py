"""Support vector regression (-s 11 primal Newton, -s 12 / -s 13 dual CD) against oracles.

- liblinear-official 2.50 at a tight -e: the primal value of our w is within 1e-6 relative of
  LIBLINEAR's (1e-4 for the L1-loss dual, whose CD converges slowly), both scored with
  ``svr_primal_value``; predictions w'x agree; bias -1 and 1; generated data, heart_scale (its
  +-1 labels as targets) and scikit-learn's standardised diabetes; -s 11 with -R.
- the duality gap is >= 0 and shrinks as eps does; -s 11 reports a gap through beta(w).
- per-row C: C_i = 0 drops the row, C_i = 2 is the row twice (-s 11, exact in the primal).
- LIBLINEAR's defaults, and the pieces of its -s 12 -> -s 11 fallback at the iteration cap
  (the solvers stop with MAX_ITER; training switches, from the dual's w).
- properties (hypothesis): the dual objective never decreases over an outer iteration and the
  running w equals sum_i beta_i x_i recomputed; |beta_i| <= C_i for the L1 loss.
- the interface: interrupting and resuming from ``Progress.state()`` gives exactly the
  uninterrupted result (-s 11, 12, 13, warm starts included); a hook that never stops changes
  nothing.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_train
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.objective import (
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    svr_dual_point,
    svr_dual_value,
    svr_primal_value,
    svr_weights_from_dual,
)
from linsvm.solvers import SOLVERS, check_parameter
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, Solution, Subproblem
from linsvm.solvers.svr import (
    DEFAULT_P,
    solve_l1svr_dual,
    solve_l2svr_dual,
    solve_svr_dual,
    solve_svr_primal,
)

ll = pytest.importorskip("liblinear.liblinearutil")

TIGHT_EPS = {11: 1e-8, 12: 1e-8, 13: 1e-6}
REL_TOL = {11: 1e-6, 12: 1e-6, 13: 1e-4}
SOLVER_LOSS = {11: SVR_LOSS_L2, 12: SVR_LOSS_L2, 13: SVR_LOSS_L1}
SOLVE = {11: solve_svr_primal, 12: solve_l2svr_dual, 13: solve_l1svr_dual}


def svr(solver, X, y, c_rows, p, bias, eps, max_iter=None, *, hook=None, **fields) -> Solution:
    """Solve with -s ``solver``; ``fields``: other Subproblem fields (w0, alpha0, seed,
    regularize_bias) or options (shrinking)."""
    options = {"p": p}
    if "shrinking" in fields:
        options["shrinking"] = fields.pop("shrinking")
    if max_iter is None:
        max_iter = 1000 if solver == 11 else 300
    sub = Subproblem(
        X, np.asarray(y, dtype=np.float64), np.asarray(c_rows, dtype=np.float64), eps, max_iter,
        bias=bias, options=options, **fields,
    )  # fmt: skip
    return SOLVE[solver](sub, hook)


def make_regression(n_rows=300, n_features=30, density=0.2, noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(
        n_rows,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.uniform(-1.0, 1.0, k),
    )
    X.sort_indices()
    X = sp.csr_matrix(X, dtype=np.float64)
    y = X @ rng.normal(size=n_features) + 0.5 + noise * rng.normal(size=n_rows)
    return X, y


def diabetes():
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = (y - y.mean()) / y.std()
    return sp.csr_matrix(X), y


def liblinear_svr(X, y, solver, C, p, eps, bias, extra=""):
    """LIBLINEAR's w (bias weight last) for an SVR problem; its dual must have converged."""
    m, iterations = liblinear_train(
        y, X, f"-s {solver} -c {C:.17g} -p {p:.17g} -e {eps:.17g} {extra}", bias
    )
    assert m.get_nr_class() == 2
    if solver != 11:
        assert iterations and iterations[0] < 300, "the oracle hit LIBLINEAR's cap"
    n_w = X.shape[1] + (1 if bias >= 0 else 0)
    return np.array([m.w[i] for i in range(n_w)])


def predictions(X, w, bias):
    out = X @ w[: X.shape[1]]
    if bias >= 0:
        out = out + w[-1] * bias
    return out


def run(solver, X, y, C, p, bias, eps, **kw):
    c_rows = np.full(X.shape[0], float(C))
    return svr(solver, X, y, c_rows, p, bias, eps, 1000 if solver == 11 else 5000, **kw)


def check_against_liblinear(X, y, solver, C, p, bias, extra=""):
    eps = TIGHT_EPS[solver]
    w_ll = liblinear_svr(X, y, solver, C, p, eps, bias, extra)
    reg_bias = "-R" not in extra
    sol = run(solver, X, y, C, p, bias, eps, **({} if reg_bias else {"regularize_bias": False}))
    assert sol.converged and sol.stop_reason == CONVERGED and sol.solver == solver
    c_rows = np.full(X.shape[0], float(C))
    loss = SOLVER_LOSS[solver]
    ours = svr_primal_value(X, bias, y, c_rows, sol.w, loss, p, regularize_bias=reg_bias)
    theirs = svr_primal_value(X, bias, y, c_rows, w_ll, loss, p, regularize_bias=reg_bias)
    assert ours == pytest.approx(sol.primal, rel=1e-12)
    # ours may be better than LIBLINEAR's (its L1-loss dual often stops at 300 iterations)
    assert ours <= theirs * (1 + REL_TOL[solver])
    assert ours >= theirs * (1 - REL_TOL[solver])
    pred_ours, pred_ll = predictions(X, sol.w, bias), predictions(X, w_ll, bias)
    scale = max(1.0, float(np.abs(y).max()))
    tol = 1e-4 if solver != 13 else 5e-2
    assert np.max(np.abs(pred_ours - pred_ll)) <= tol * scale
    if reg_bias:
        assert sol.gap >= -1e-9 * max(1.0, abs(sol.primal))
        assert sol.gap <= 10 * REL_TOL[solver] * abs(sol.primal)
    return sol


# ----------------------------------------------------------------------------- oracle


@pytest.mark.parametrize("solver", [11, 12, 13])
@pytest.mark.parametrize("bias", [-1, 1])
def test_generated_matches_liblinear(solver, bias):
    X, y = make_regression(seed=solver + bias)
    C = 0.05 if solver == 13 else 1.0  # LIBLINEAR's L1-loss dual: 300 iterations otherwise
    check_against_liblinear(X, y, solver, C, 0.1, bias)


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_diabetes_matches_liblinear(solver):
    X, y = diabetes()
    check_against_liblinear(X, y, solver, 0.01 if solver == 13 else 0.1, 0.1, 1)


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_heart_scale_matches_liblinear(load_shared, solver):
    X, y = load_shared("heart_scale")
    C = 0.01 if solver == 13 else 0.05
    check_against_liblinear(sp.csr_matrix(X, dtype=np.float64), y, solver, C, 0.1, 1)


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_primal_unregularised_bias_matches_liblinear(p):
    X, y = make_regression(seed=7)
    y = y + 3.0  # a large offset: the bias matters
    sol = check_against_liblinear(X, y, 11, 1.0, p, 1, extra="-R")
    assert np.isnan(sol.gap) and np.isnan(sol.dual) and sol.alpha is None
    assert sol.figures["grad_norm"] <= TIGHT_EPS[11] * sol.figures["grad_norm0"]


def liblinear_newton_trace(X, y, options, bias):
    """(Newton iteration, CG steps) from LIBLINEAR's ``iter N f .. |g| .. CG k`` lines."""
    ll_util = pytest.importorskip("liblinear.liblinearutil")
    prob = ll_util.problem(np.asarray(y, dtype=np.float64), sp.csr_matrix(X, dtype=np.float64))
    param = ll_util.parameter(f"{options} -B {bias}")
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            ll_util.train(prob, param)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode(errors="replace")
    return [(int(a), int(b)) for a, b in re.findall(r"iter\s+(\d+) f .*?CG\s+(\d+)", out)]


@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-6])
@pytest.mark.parametrize("reg", ["", "-R"])
def test_primal_newton_trace_matches_liblinear(eps, reg):
    """Same algorithm, no randomness: the same Newton iterations and CG steps as LIBLINEAR."""
    for X, y in (make_regression(seed=1), diabetes()):
        trace = liblinear_newton_trace(X, y, f"-s 11 -c 1 -p 0.1 -e {eps} {reg}", 1)
        sol = svr(11, X, y, np.ones(X.shape[0]), 0.1, 1, eps, regularize_bias=reg != "-R")
        assert trace and [(h[0], h[3]) for h in sol.figures["history"]] == trace


def test_wide_p_gives_zero_w():
    X, y = make_regression(seed=3)
    p = float(np.abs(y).max()) + 1.0
    for solver in (11, 12, 13):
        sol = run(solver, X, y, 1.0, p, 1, 0.1)
        assert np.all(sol.w == 0.0)
        assert sol.primal == 0.0


# ----------------------------------------------------------------------------- gap


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_gap_nonnegative_and_decreasing_with_eps(solver):
    X, y = make_regression(n_rows=400, seed=11)
    gaps = []
    for eps in (1e-1, 1e-2, 1e-3, 1e-5):
        sol = run(solver, X, y, 0.5, 0.1, 1, eps)
        assert sol.gap >= -1e-10 * abs(sol.primal)
        gaps.append(sol.gap)
    assert gaps[-1] <= gaps[0]
    assert gaps[-1] <= 1e-4 * abs(sol.primal)
    # monotone up to a small slack (the gap is not what the solvers' stopping rules measure)
    for a, b in zip(gaps, gaps[1:], strict=False):
        assert b <= a * 1.5 + 1e-12


def test_primal_dual_point_is_optimal_dual():
    X, y = make_regression(seed=5)
    c_rows = np.full(X.shape[0], 2.0)
    primal = svr(11, X, y, c_rows, 0.1, 1, 1e-10)
    dual = svr(12, X, y, c_rows, 0.1, 1, 1e-10, 5000)
    beta = svr_dual_point(X, 1, y, c_rows, primal.w, 0.1)
    assert np.array_equal(primal.alpha, beta)  # -s 11's alpha: the dual point of its w
    assert primal.figures["n_sv"] == np.count_nonzero(beta)
    assert np.allclose(beta, dual.alpha, atol=1e-6)
    assert np.allclose(svr_weights_from_dual(X, 1, beta), primal.w, atol=1e-6)
    assert primal.dual == pytest.approx(dual.dual, rel=1e-9)


# ----------------------------------------------------------------------------- per-row C


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_zero_cost_rows_are_dropped(solver):
    X, y = make_regression(seed=9)
    keep = np.arange(X.shape[0]) % 3 != 0
    c_rows = np.where(keep, 0.7, 0.0)
    y_bad = np.where(keep, y, 1e6)  # dropped rows must not matter
    max_iter = 1000 if solver == 11 else 5000
    full = svr(solver, X, y_bad, c_rows, 0.1, 1, 1e-8, max_iter)
    sub = svr(solver, X[keep], y[keep], c_rows[keep], 0.1, 1, 1e-8, max_iter)
    assert np.all(full.alpha[~keep] == 0.0)
    assert full.primal == pytest.approx(sub.primal, rel=1e-6)


@pytest.mark.parametrize("solver", [11, 12])
def test_weight_two_is_a_duplicated_row(solver):
    X, y = make_regression(n_rows=100, seed=4)
    c_rows = np.ones(100)
    c_rows[:20] = 2.0
    X2 = sp.vstack([X, X[:20]], format="csr")
    y2 = np.concatenate([y, y[:20]])
    max_iter = 1000 if solver == 11 else 5000
    a = svr(solver, X, y, c_rows, 0.1, 1, 1e-10, max_iter)
    b = svr(solver, X2, y2, np.ones(120), 0.1, 1, 1e-10, max_iter)
    assert a.primal == pytest.approx(b.primal, rel=1e-8)
    assert np.allclose(a.w, b.w, atol=1e-5)


# ----------------------------------------------------------------------------- train_one


def test_defaults_and_the_pieces_of_the_fallback():
    X, y = make_regression(seed=2)
    c_rows = np.ones(X.shape[0])
    assert {k: SOLVERS[k].default_eps for k in (11, 12, 13)} == {11: 1e-4, 12: 0.1, 13: 0.1}
    assert DEFAULT_P == 0.1 and {SOLVERS[k].max_iter for k in (12, 13)} == {300}
    for solver in (11, 12, 13):
        sub = Subproblem(X, y, c_rows, SOLVERS[solver].default_eps, SOLVERS[solver].max_iter)
        sol = SOLVE[solver](sub)  # p defaults to 0.1
        assert sol.solver == solver and sol.converged
        assert sol.w.shape == (X.shape[1],)
        assert np.array_equal(sol.w, svr(solver, X, y, c_rows, 0.1, -1.0, sub.eps).w)
        assert (sol.alpha is not None) and sol.alpha.shape == y.shape
    # -s 12 at the cap stops there; training switches to -s 11 from the dual's w with a
    # tighter tolerance (LIBLINEAR 2.50: eps * 0.001)
    assert SOLVERS[12].fallback == 11 and SOLVERS[12].fallback_tol_factor == 0.001
    dual = svr(12, X, y, c_rows, 0.1, -1, 1e-3, 2)
    assert dual.stop_reason == MAX_ITER and not dual.converged and dual.n_iter == 2
    sol = svr(11, X, y, c_rows, 0.1, -1, 1e-3 * 0.001, w0=dual.w)
    assert sol.converged and sol.solver == 11
    assert sol.figures["grad_norm"] <= 1e-6 * sol.figures["grad_norm0"]
    # -s 13 at the cap only stops (training's warning names -s 11 as the squared loss's)
    assert SOLVERS[13].fallback is None and "-s 11" in SOLVERS[13].advice_at_cap(100, 5)
    sol13 = svr(13, X, y, c_rows, 0.1, -1, 1e-9, 2)
    assert sol13.stop_reason == MAX_ITER and sol13.n_iter == 2 and sol13.solver == 13
    # -R only with -s 11
    with pytest.raises(InvalidInputError):
        check_parameter(12, 1.0, None, 1.0, None, regularize_bias=False)
    check_parameter(11, 1.0, None, 1.0, None, regularize_bias=False)
    for solver in (12, 13):
        with pytest.raises(InvalidInputError):
            svr(solver, X, y, c_rows, 0.1, 1, 0.1, regularize_bias=False)


def test_invalid_input():
    X, y = make_regression(n_rows=20, seed=1)
    c_rows = np.ones(20)
    with pytest.raises(InvalidInputError):
        svr(11, X, y, c_rows, -0.1, 1, 0.1)
    with pytest.raises(InvalidInputError):
        svr(12, X, y, c_rows, float("nan"), 1, 0.1)
    with pytest.raises(InvalidInputError):
        svr(11, X, y, c_rows, 0.1, -1, 0.1, regularize_bias=False)
    with pytest.raises(InvalidInputError):
        svr(13, X, y, c_rows, 0.1, 1, -0.01)  # (0: no stopping rule, accepted)
    with pytest.raises(InvalidInputError):
        svr(11, X, np.r_[y[:-1], np.inf], c_rows, 0.1, 1, 0.1)
    with pytest.raises(InvalidInputError):
        svr(12, X, y, c_rows, 0.1, 1, 0.1, alpha0=np.zeros(3))
    with pytest.raises(InvalidInputError):  # -s 11 warm-starts from w0, not from a dual point
        svr(11, X, y, c_rows, 0.1, 1, 0.1, alpha0=np.zeros(20))
    with pytest.raises(ValueError):
        solve_svr_dual(Subproblem(X, y, c_rows, 0.1, 10, options={"p": 0.1}), None, 7)


def test_float32_and_int64_indices_agree():
    X, y = make_regression(seed=6)
    c_rows = np.ones(X.shape[0])
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X64 = X32.copy()
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    for solver in (11, 12):
        max_iter = 1000 if solver == 11 else 5000
        a = svr(solver, X32, y, c_rows, 0.1, 1, 1e-8, max_iter)
        b = svr(solver, X64, y, c_rows, 0.1, 1, 1e-8, max_iter)
        assert np.allclose(a.w, b.w, atol=1e-9)


# ----------------------------------------------------------------------------- properties


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(["l1", "l2"]),
    bias=st.sampled_from([-1.0, 1.0]),
    C=st.floats(0.05, 20.0),
    p=st.floats(0.0, 1.0),
    shrinking=st.booleans(),
)
def test_dual_monotone_and_w_consistent(seed, loss, bias, C, p, shrinking):
    X, y = make_regression(n_rows=60, n_features=12, density=0.3, seed=seed)
    rng = np.random.default_rng(seed)
    c_rows = C * rng.uniform(0.2, 1.0, X.shape[0])
    c_rows[rng.random(X.shape[0]) < 0.1] = 0.0
    code = SVR_LOSS_L1 if loss == "l1" else SVR_LOSS_L2
    duals = [svr_dual_value(X, bias, y, c_rows, np.zeros(X.shape[0]), code, p)]

    def record(progress):
        beta, w = progress.alpha, progress.w
        duals.append(svr_dual_value(X, bias, y, c_rows, beta, code, p))
        assert np.allclose(svr_weights_from_dual(X, bias, beta), w, atol=1e-9)
        if code == SVR_LOSS_L1:
            assert np.all(np.abs(beta) <= c_rows * (1 + 1e-15))
        assert np.all(beta[c_rows == 0] == 0.0)
        assert progress.iteration == len(duals) - 1
        fig = progress.figures
        assert 0 <= fig["n_active"] <= X.shape[0] and 0.0 <= fig["gmax"] <= fig["gnorm1"]
        assert progress.objectives()[1] == pytest.approx(duals[-1], rel=1e-12, abs=1e-12)

    solver = 13 if loss == "l1" else 12
    sol = svr(solver, X, y, c_rows, p, bias, 1e-3, 200, shrinking=shrinking, seed=seed, hook=record)
    scale = max(1.0, abs(duals[-1]))
    for a, b in zip(duals, duals[1:], strict=False):
        assert b >= a - 1e-10 * scale
    assert sol.gap >= -1e-9 * scale
    assert sol.dual == pytest.approx(duals[-1], rel=1e-12, abs=1e-12)


def test_tiny_problem_closed_form_and_empty_inputs():
    # separable coordinates: w_j minimises 1/2 w_j^2 + C xi(x_ij w_j - y_i) on its own row;
    # row 0 is empty (no bias): it changes nothing but must not break the L1 dual (H_ii = 0)
    X = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]))
    y = np.array([3.0, 1.0, -1.0])
    c_rows = np.ones(3)
    l1 = svr(13, X, y, c_rows, 0.1, -1, 1e-8, 1000)
    assert np.allclose(l1.w, [0.9, -0.45], atol=1e-7)
    # L2 loss: w1 = 2 (1 - p - w1) -> w1 = 0.6; w2 = -4 (2 w2 + 1 - p) -> w2 = -0.4
    l2 = svr(12, X, y, c_rows, 0.1, -1, 1e-10, 1000)
    primal = svr(11, X, y, c_rows, 0.1, -1, 1e-10)
    assert np.allclose(l2.w, [0.6, -0.4], atol=1e-7)
    assert np.allclose(primal.w, [0.6, -0.4], atol=1e-9)
    # no rows, or every row dropped: w = 0, converged
    for Xe, ye, ce in ((sp.csr_matrix((0, 3)), np.zeros(0), np.zeros(0)), (X, y, np.zeros(3))):
        assert svr(11, Xe, ye, ce, 0.1, 1, 0.1).converged
        for solver in (13, 12):
            sol = svr(solver, Xe, ye, ce, 0.1, 1, 0.1)
            assert sol.converged and not np.any(sol.w)


# ----------------------------------------------------------------------------- the interface


def _stop_at(k, captured):
    """A hook that keeps the state of iteration k and asks to stop there."""

    def hook(progress):
        if progress.iteration == k:
            captured["state"] = progress.state()
            captured["w"] = progress.w.copy()
            return False
        return None

    return hook


def _same_solution(a: Solution, b: Solution) -> None:
    assert np.array_equal(a.w, b.w)
    assert (a.n_iter, a.converged, a.stop_reason, a.solver) == (
        b.n_iter, b.converged, b.stop_reason, b.solver,
    )  # fmt: skip
    assert (a.alpha is None) == (b.alpha is None)
    if a.alpha is not None:
        assert np.array_equal(a.alpha, b.alpha)
    assert np.array_equal([a.primal, a.dual, a.gap], [b.primal, b.dual, b.gap], equal_nan=True)
    assert a.figures.keys() == b.figures.keys()
    for key, value in a.figures.items():
        assert value == b.figures[key], key


@pytest.mark.parametrize(
    "solver, fields",
    [
        (11, {}),
        (11, {"regularize_bias": False}),
        (11, {"w0": "random"}),
        (12, {}),
        (12, {"shrinking": False}),
        (12, {"alpha0": "random", "bucket_size": 4}),
        (13, {"bucket_size": 4}),
        (13, {"alpha0": "random"}),
    ],
)
def test_interrupt_and_resume_is_exact(solver, fields):
    X, y = make_regression(n_rows=400, seed=12)
    rng = np.random.default_rng(0)
    c_rows = rng.uniform(0.2, 1.0, X.shape[0]) * (0.1 if solver == 13 else 1.0)
    c_rows[rng.random(X.shape[0]) < 0.1] = 0.0
    options = {"p": 0.1}
    fields = dict(fields)
    for name in ("shrinking", "bucket_size"):
        if name in fields:
            options[name] = fields.pop(name)
    if fields.get("w0") == "random":
        fields["w0"] = rng.normal(size=X.shape[1] + 1) * 0.1
    if fields.get("alpha0") == "random":
        fields["alpha0"] = rng.normal(size=X.shape[0]) * 0.1
    eps = 1e-8 if solver == 11 else 1e-4
    sub = Subproblem(X, y, c_rows, eps, 1000, bias=1.0, seed=7, options=options, **fields)
    solve = SOLVE[solver]
    full = solve(sub)
    assert full.converged and full.n_iter >= 3
    # a hook that never stops changes nothing
    calls = []
    _same_solution(solve(sub, lambda p: calls.append(p.iteration)), full)
    first = 0 if solver == 11 else 1  # -s 11 also shows its start (iteration 0)
    assert calls == list(range(first, full.n_iter + 1))
    for k in (first, first + 1, full.n_iter - 1):
        captured = {}
        part = solve(sub, _stop_at(k, captured))
        assert part.stop_reason == INTERRUPTED and not part.converged
        assert part.n_iter == k and np.array_equal(part.w, captured["w"])
        assert part.primal == svr_primal_value(
            X, 1.0, y, c_rows, part.w, SOLVER_LOSS[solver], 0.1,
            regularize_bias=sub.regularize_bias,
        )  # fmt: skip
        # resumed from the state (the warm starts no longer matter): the uninterrupted run
        rest = solve(sub.but(resume=captured["state"], w0=None, alpha0=None))
        _same_solution(rest, full)


def test_dual_progress_measure():
    X, y = make_regression(seed=13)
    seen = []
    sol = svr(12, X, y, np.ones(X.shape[0]), 0.1, 1, 0.01, hook=seen.append)
    for p in seen:
        fig = p.figures
        assert p.solver == 12 and p.measure == fig["gnorm1"] / fig["gnorm1_init"]
        assert fig["gnorm1_init"] == sol.figures["gnorm1_init"]
    assert sol.converged and seen[-1].measure <= 0.01
    assert [p.iteration for p in seen] == list(range(1, sol.n_iter + 1))
    assert sol.figures["gnorm1"] == seen[-1].figures["gnorm1"]
    assert sol.figures["n_sv"] == np.count_nonzero(sol.alpha)
