"""The trust-region Newton solver (TRON, ``benchmarks/reference/tron.py``, kept for
``bench_newton_vs_tron``) against linsvm's line-search Newton solver.

- both reach the same optimum (objective within 1e-8 relative at eps 1e-8) on generated sparse
  data and a9a, for the logistic (-s 0) and squared hinge (-s 2) losses, bias -1 and 1, with
  and without the preconditioner, with the bias unregularised (-R), with per-row C (C_i = 0
  drops the row), warm-started;
- properties (hypothesis): the objective never increases across accepted steps, the
  accepted-iteration counter advances only on accepted steps, the reported objective and
  gradient norm are the true ones at the returned w, the stopping rule
  ||g|| <= eps ||g(0)|| holds at the end when the solver says it converged.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import make_sparse_problem, primal_of, rel_diff
from hypothesis import given, settings
from hypothesis import strategies as st

# TRON lives in the benchmarks package at the repository root, which ``python -m pytest`` puts
# on sys.path but a bare ``pytest`` does not
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference.tron import TronResult, solve_primal_tron  # noqa: E402
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, Subproblem, solver_tolerance

LOSSES = (LOSS_LOGISTIC, LOSS_SQUARED_HINGE)
TIGHT = 1e-8


def gradient(X, y, C, w, bias, loss, reg_bias=True):
    """grad P(w) in NumPy (independent of the Numba kernels)."""
    Xb = X.toarray()
    if bias >= 0:
        Xb = np.hstack([Xb, np.full((X.shape[0], 1), bias)])
    z = y * (Xb @ w)
    if loss == LOSS_LOGISTIC:
        coef = -C * y / (1.0 + np.exp(z))
    else:
        coef = np.where(z < 1.0, 2.0 * C * y * (z - 1.0), 0.0)
    g = w.copy()
    if not reg_bias:
        g[-1] = 0.0
    return g + Xb.T @ coef


NEWTON_SOLVER = {LOSS_LOGISTIC: 0, LOSS_SQUARED_HINGE: 2}


def solve_newton(X, y, C, loss, bias, eps, *, w0=None, regularize_bias=True):
    """linsvm's -s 0 / -s 2 (line-search Newton) at the solver's own tolerance ``eps``."""
    sub = Subproblem(
        X=X, y=y, C=C, eps=eps, max_iter=1000, bias=bias, regularize_bias=regularize_bias, w0=w0
    )
    return SOLVERS[NEWTON_SOLVER[loss]].solve(sub, None)


def newton_objective(sol) -> float:
    """P(w) as the Newton driver keeps it (bias left out of 1/2 w'w with -R), as TRON's."""
    return sol.figures["f"]


def check_same_optimum(X, y, C, loss, bias, **kwargs):
    newton = solve_newton(X, y, C, loss, bias, TIGHT, **kwargs)
    tron = solve_primal_tron(X, y, C, loss, bias, TIGHT, **kwargs)
    assert isinstance(tron, TronResult)
    # at eps 1e-8 the 1e-12 relative-reduction stop of LIBLINEAR can come first
    assert tron.stop_reason in ("converged", "small_reduction"), tron.stop_reason
    p_tron = primal_of(X, bias, y, C, tron.w, loss)
    p_newton = primal_of(X, bias, y, C, newton.w, loss)
    if kwargs.get("regularize_bias", True):
        assert rel_diff(p_tron, tron.objective) < 1e-12
    assert rel_diff(tron.objective, newton_objective(newton)) < 1e-8
    assert rel_diff(p_tron, p_newton) < 1e-8
    return newton, tron


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("C_value", [1.0, 50.0])
def test_same_optimum_generated(loss, bias, C_value):
    X, y = make_sparse_problem(n_rows=400, n_features=60, density=0.1, seed=3)
    C = np.full(y.shape[0], C_value)
    check_same_optimum(X, y, C, loss, bias)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_same_optimum_a9a(load_shared, loss, bias):
    X, labels = load_shared("a9a")
    y = np.where(labels == labels[0], 1.0, -1.0)
    C = np.ones(y.shape[0])
    check_same_optimum(X, y, C, loss, bias)


@pytest.mark.parametrize("loss", LOSSES)
def test_plain_tron_same_optimum(loss):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=5)
    C = np.full(y.shape[0], 4.0)
    ref = solve_newton(X, y, C, loss, 1.0, TIGHT)
    sol = solve_primal_tron(X, y, C, loss, 1.0, TIGHT, preconditioned=False)
    assert sol.stop_reason in ("converged", "small_reduction")
    assert rel_diff(sol.objective, newton_objective(ref)) < 1e-8


@pytest.mark.parametrize("loss", LOSSES)
def test_unregularised_bias_weights_and_warm_start(loss):
    X, y = make_sparse_problem(n_rows=300, n_features=30, seed=7)
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 3.0, y.shape[0])
    C[::10] = 0.0  # dropped rows
    newton, tron = check_same_optimum(X, y, C, loss, 1.0, regularize_bias=False)
    # warm start from the optimum: already converged (at a looser eps), w unchanged
    warm = solve_primal_tron(X, y, C, loss, 1.0, 1e-6, w0=tron.w, regularize_bias=False)
    assert warm.n_iter == 0 and warm.converged
    np.testing.assert_array_equal(warm.w, tron.w)
    # warm start from elsewhere reaches the same optimum
    warm = solve_primal_tron(X, y, C, loss, 1.0, TIGHT, w0=rng.normal(size=tron.w.shape[0]),
                             regularize_bias=False)  # fmt: skip
    assert rel_diff(warm.objective, newton_objective(newton)) < 1e-8


def test_default_tolerance_counts():
    X, y = make_sparse_problem(n_rows=500, n_features=50, seed=1)
    C = np.ones(y.shape[0])
    sol = solve_primal_tron(X, y, C, LOSS_LOGISTIC, -1.0, solver_tolerance(SOLVERS[0], 0.01, y))
    assert sol.converged and 1 <= sol.n_iter <= sol.n_trials
    assert sol.n_cg_iter == sum(h[3] for h in sol.history)
    assert sol.n_trials == len(sol.history)


def test_errors():
    X, y = make_sparse_problem(n_rows=20, n_features=5)
    C = np.ones(20)
    with pytest.raises(ValueError):
        solve_primal_tron(X, y, C, LOSS_HINGE, -1.0, 0.01)
    with pytest.raises(InvalidInputError):
        solve_primal_tron(X, y, C, LOSS_LOGISTIC, -1.0, 0.01, regularize_bias=False)
    with pytest.raises(InvalidInputError):
        solve_primal_tron(X, y, C, LOSS_LOGISTIC, -1.0, 0.0)
    with pytest.raises(InvalidInputError):
        solve_primal_tron(X, y, C, LOSS_LOGISTIC, -1.0, 0.01, w0=np.zeros(3))


@settings(deadline=None, max_examples=40)
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(LOSSES),
    bias=st.sampled_from([-1.0, 1.0]),
    log_c=st.floats(-2.0, 3.0),
    log_eps=st.floats(-8.0, -1.0),
    preconditioned=st.booleans(),
)
def test_properties(seed, loss, bias, log_c, log_eps, preconditioned):
    X, y = make_sparse_problem(n_rows=60, n_features=12, density=0.3, seed=seed)
    C = np.full(y.shape[0], 10.0**log_c)
    eps = 10.0**log_eps
    sol = solve_primal_tron(X, y, C, loss, bias, eps, preconditioned=preconditioned)
    n_w = X.shape[1] + (bias >= 0)
    f0 = primal_of(X, bias, y, C, np.zeros(n_w), loss)
    accepted = [h[1] for h in sol.history if h[5]]
    values = [f0] + accepted
    assert all(b <= a for a, b in zip(values, values[1:], strict=False))
    assert [h[0] for h in sol.history if h[5]] == list(range(1, sol.n_iter + 1))
    # reported gradient norm and objective are the true ones at the returned w
    g = gradient(X, y, C, sol.w, bias, loss)
    assert np.isclose(np.linalg.norm(g), sol.grad_norm, rtol=1e-8, atol=1e-12)
    assert rel_diff(primal_of(X, bias, y, C, sol.w, loss), sol.objective) < 1e-10
    g0 = gradient(X, y, C, np.zeros(n_w), bias, loss)
    assert np.isclose(np.linalg.norm(g0), sol.grad_norm0, rtol=1e-10)
    if sol.converged:
        assert sol.grad_norm <= eps * sol.grad_norm0
        # not before: every earlier accepted iterate had a larger gradient
        assert all(h[2] > eps * sol.grad_norm0 for h in sol.history[:-1] if h[5])
    else:
        assert sol.stop_reason in ("small_reduction", "prered_nonpositive", "max_iter")
