"""Support vector regression (-s 11 primal Newton, -s 12 / -s 13 dual CD) against oracles.

- liblinear-official 2.50 at a tight -e: the primal value of our w is within 1e-6 relative of
  LIBLINEAR's (1e-4 for the L1-loss dual, whose CD converges slowly), both scored with
  ``svr_primal_value``; predictions w'x agree; bias -1 and 1; generated data, heart_scale (its
  +-1 labels as targets) and scikit-learn's standardised diabetes; -s 11 with -R.
- the duality gap is >= 0 and shrinks as eps does; -s 11 reports a gap through beta(w).
- per-row C: C_i = 0 drops the row, C_i = 2 is the row twice (-s 11, exact in the primal).
- LIBLINEAR's -s 12 -> -s 11 fallback at the iteration cap (``solve_svr``), default eps.
- properties (hypothesis): the dual objective never decreases over an outer iteration and the
  running w equals sum_i beta_i x_i recomputed; |beta_i| <= C_i for the L1 loss.
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
from linsvm.solvers.svr import (
    DEFAULT_EPS,
    SOLVER_LOSS,
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    SVRDualSolution,
    SVRPrimalSolution,
    solve_svr,
    solve_svr_dual,
    solve_svr_primal,
    svr_dual_point,
    svr_dual_value,
    svr_primal_value,
    svr_weights_from_dual,
)

ll = pytest.importorskip("liblinear.liblinearutil")

TIGHT_EPS = {11: 1e-8, 12: 1e-8, 13: 1e-6}
REL_TOL = {11: 1e-6, 12: 1e-6, 13: 1e-4}


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
    if solver == 11:
        return solve_svr_primal(X, y, c_rows, p, bias, eps, **kw)
    return solve_svr_dual(X, y, c_rows, p, SOLVER_LOSS[solver], bias, eps, 5000, **kw)


def check_against_liblinear(X, y, solver, C, p, bias, extra=""):
    eps = TIGHT_EPS[solver]
    w_ll = liblinear_svr(X, y, solver, C, p, eps, bias, extra)
    reg_bias = "-R" not in extra
    sol = run(solver, X, y, C, p, bias, eps, **({} if reg_bias else {"regularize_bias": False}))
    assert sol.converged
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
    assert np.isnan(sol.gap)
    assert sol.grad_norm <= TIGHT_EPS[11] * sol.grad_norm0


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
        sol = solve_svr_primal(X, y, np.ones(X.shape[0]), 0.1, 1, eps, regularize_bias=reg != "-R")
        assert trace and [(h[0], h[3]) for h in sol.history] == trace


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
    primal = solve_svr_primal(X, y, c_rows, 0.1, 1, 1e-10)
    dual = solve_svr_dual(X, y, c_rows, 0.1, "l2", 1, 1e-10, 5000)
    beta = svr_dual_point(X, 1, y, c_rows, primal.w, 0.1)
    assert np.allclose(beta, dual.beta, atol=1e-6)
    assert np.allclose(svr_weights_from_dual(X, 1, beta), primal.w, atol=1e-6)
    assert primal.dual == pytest.approx(dual.dual, rel=1e-9)


# ----------------------------------------------------------------------------- per-row C


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_zero_cost_rows_are_dropped(solver):
    X, y = make_regression(seed=9)
    keep = np.arange(X.shape[0]) % 3 != 0
    c_rows = np.where(keep, 0.7, 0.0)
    y_bad = np.where(keep, y, 1e6)  # dropped rows must not matter
    loss = SOLVER_LOSS[solver]
    if solver == 11:
        full = solve_svr_primal(X, y_bad, c_rows, 0.1, 1, 1e-8)
        sub = solve_svr_primal(X[keep], y[keep], c_rows[keep], 0.1, 1, 1e-8)
    else:
        full = solve_svr_dual(X, y_bad, c_rows, 0.1, loss, 1, 1e-8, 5000)
        sub = solve_svr_dual(X[keep], y[keep], c_rows[keep], 0.1, loss, 1, 1e-8, 5000)
        assert np.all(full.beta[~keep] == 0.0)
    assert full.primal == pytest.approx(sub.primal, rel=1e-6)


@pytest.mark.parametrize("solver", [11, 12])
def test_weight_two_is_a_duplicated_row(solver):
    X, y = make_regression(n_rows=100, seed=4)
    c_rows = np.ones(100)
    c_rows[:20] = 2.0
    X2 = sp.vstack([X, X[:20]], format="csr")
    y2 = np.concatenate([y, y[:20]])
    if solver == 11:
        a = solve_svr_primal(X, y, c_rows, 0.1, 1, 1e-10)
        b = solve_svr_primal(X2, y2, np.ones(120), 0.1, 1, 1e-10)
    else:
        a = solve_svr_dual(X, y, c_rows, 0.1, "l2", 1, 1e-10, 5000)
        b = solve_svr_dual(X2, y2, np.ones(120), 0.1, "l2", 1, 1e-10, 5000)
    assert a.primal == pytest.approx(b.primal, rel=1e-8)
    assert np.allclose(a.w, b.w, atol=1e-5)


# ----------------------------------------------------------------------------- train_one


def test_solve_svr_defaults_and_fallback():
    X, y = make_regression(seed=2)
    c_rows = np.ones(X.shape[0])
    assert DEFAULT_EPS == {11: 1e-4, 12: 0.1, 13: 0.1}
    assert isinstance(solve_svr(11, X, y, c_rows), SVRPrimalSolution)
    assert isinstance(solve_svr(12, X, y, c_rows), SVRDualSolution)
    assert isinstance(solve_svr(13, X, y, c_rows), SVRDualSolution)
    # -s 12 at the cap switches to -s 11 from the dual's w, tolerance eps * 0.001
    sol = solve_svr(12, X, y, c_rows, eps=1e-3, dual_max_iter=2)
    assert isinstance(sol, SVRPrimalSolution)
    assert sol.grad_norm <= 1e-6 * sol.grad_norm0
    # -s 13 at the cap only warns
    sol13 = solve_svr(13, X, y, c_rows, eps=1e-9, dual_max_iter=2)
    assert isinstance(sol13, SVRDualSolution) and sol13.n_iter == 2
    with pytest.raises(InvalidInputError):
        solve_svr(12, X, y, c_rows, bias=1, regularize_bias=False)


def test_invalid_input():
    X, y = make_regression(n_rows=20, seed=1)
    c_rows = np.ones(20)
    with pytest.raises(InvalidInputError):
        solve_svr_primal(X, y, c_rows, -0.1, 1, 0.1)
    with pytest.raises(InvalidInputError):
        solve_svr_primal(X, y, c_rows, 0.1, -1, 0.1, regularize_bias=False)
    with pytest.raises(InvalidInputError):
        solve_svr_dual(X, y, c_rows, 0.1, "l1", 1, 0.0)
    with pytest.raises(ValueError):
        solve_svr_dual(X, y, c_rows, 0.1, "hinge", 1, 0.1)


def test_float32_and_int64_indices_agree():
    X, y = make_regression(seed=6)
    c_rows = np.ones(X.shape[0])
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X64 = X32.copy()
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    for solver in (11, 12):
        if solver == 11:
            a = solve_svr_primal(X32, y, c_rows, 0.1, 1, 1e-8)
            b = solve_svr_primal(X64, y, c_rows, 0.1, 1, 1e-8)
        else:
            a = solve_svr_dual(X32, y, c_rows, 0.1, "l2", 1, 1e-8, 5000)
            b = solve_svr_dual(X64, y, c_rows, 0.1, "l2", 1, 1e-8, 5000)
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

    def record(iteration, n_active, gnorm1, w, beta):
        duals.append(svr_dual_value(X, bias, y, c_rows, beta, code, p))
        assert np.allclose(svr_weights_from_dual(X, bias, beta), w, atol=1e-9)
        if code == SVR_LOSS_L1:
            assert np.all(np.abs(beta) <= c_rows * (1 + 1e-15))
        assert np.all(beta[c_rows == 0] == 0.0)

    sol = solve_svr_dual(
        X, y, c_rows, p, loss, bias, 1e-3, 200, shrinking=shrinking, seed=seed,
        on_iteration=record,
    )  # fmt: skip
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
    l1 = solve_svr_dual(X, y, c_rows, 0.1, "l1", -1, 1e-8, 1000)
    assert np.allclose(l1.w, [0.9, -0.45], atol=1e-7)
    # L2 loss: w1 = 2 (1 - p - w1) -> w1 = 0.6; w2 = -4 (2 w2 + 1 - p) -> w2 = -0.4
    l2 = solve_svr_dual(X, y, c_rows, 0.1, "l2", -1, 1e-10, 1000)
    primal = solve_svr_primal(X, y, c_rows, 0.1, -1, 1e-10)
    assert np.allclose(l2.w, [0.6, -0.4], atol=1e-7)
    assert np.allclose(primal.w, [0.6, -0.4], atol=1e-9)
    # no rows, or every row dropped: w = 0, converged
    for Xe, ye, ce in ((sp.csr_matrix((0, 3)), np.zeros(0), np.zeros(0)), (X, y, np.zeros(3))):
        assert solve_svr_primal(Xe, ye, ce, 0.1, 1, 0.1).converged
        for loss in ("l1", "l2"):
            sol = solve_svr_dual(Xe, ye, ce, 0.1, loss, 1, 0.1)
            assert sol.converged and not np.any(sol.w)
