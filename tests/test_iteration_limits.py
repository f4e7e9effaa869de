"""Iteration limits at their edges, for every registered solver and the estimators.

- ``max_iter=0``: no iteration, the solver's start point (w = 0 unless warm started; -s 7's
  interior start gives a w of order 1e-8, -s 21 LIBLINEAR's first feasible alpha), n_iter 0,
  no fallback to the primal solver, and the estimators' scikit-learn ConvergenceWarning;
- ``eps=0``: no stopping rule, exactly ``max_iter`` outer iterations, no fallback at the cap
  and no warning from ``train`` (the cap is what was asked for); negative and NaN eps keep
  their one-line errors (``test_api_errors``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_sparse_problem
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

import linsvm
from linsvm import solvers
from linsvm.estimators import LinearSVC, LinearSVR, LogisticRegression
from linsvm.solvers import MAX_ITER, SOLVERS, check_parameter
from linsvm.training import ConvergenceWarning

ALL_SOLVERS = sorted(SOLVERS)
# start points that are not w = 0: -s 7's interior alpha_i = min(0.001 C, 1e-8), -s 21's
# feasible alpha (its own test below)
NONZERO_START = {7, 21}


def _problem(spec, n_rows=240, seed=0):
    """Rows and targets fit for ``spec``: classes (three, so one-vs-rest and Crammer-Singer
    have several sub-problems), real targets, or labels the one-class SVM ignores."""
    X, y = make_sparse_problem(n_rows=n_rows, n_features=30, n_classes=3, seed=seed)
    if spec.kind == solvers.REGRESSION:
        rng = np.random.default_rng(seed)
        y = X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])
    return X, y


def _bias(spec) -> float:
    return -1.0 if spec.kind == solvers.ONECLASS else 1.0


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_max_iter_zero_is_the_start_point(solver):
    spec = SOLVERS[solver]
    X, y = _problem(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = linsvm.train(X, y, solver=solver, bias=_bias(spec), max_iter=0)
    for result in model.results_:
        assert result.n_iter == 0
        assert result.solver == solver  # no fallback after 0 iterations
        assert result.stop_reason == MAX_ITER and not result.converged
    if solver not in NONZERO_START:
        assert not model.coef_.any()
        assert model.bias_weights_ is None or not model.bias_weights_.any()
    elif solver == 7:
        assert 0 < np.abs(model.coef_).max() < 1e-6


def test_max_iter_zero_oneclass_is_liblinear_start():
    """-s 21 starts at the first floor(nu l) rows at alpha = 1 and the next one at the
    fraction left (LIBLINEAR's), so 0 iterations give w = sum_i alpha_i x_i."""
    X, _ = _problem(SOLVERS[21])
    nu = 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = linsvm.train(X, None, solver=21, nu=nu, max_iter=0)
    n_ones = int(np.floor(nu * X.shape[0]))
    alpha = np.zeros(X.shape[0])
    alpha[:n_ones] = 1.0
    alpha[n_ones] = nu * X.shape[0] - n_ones
    np.testing.assert_allclose(model.coef_[0], X.T @ alpha, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.results_[0].alpha, alpha)
    assert np.isfinite(model.rho)


def test_max_iter_zero_keeps_warm_starts():
    X, y = make_sparse_problem(n_rows=200, n_features=25)
    w0 = np.random.default_rng(3).normal(size=(1, X.shape[1] + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = linsvm.train(X, y, solver=2, bias=1.0, init_sol=w0, max_iter=0)
        first = linsvm.train(X, y, solver=3, max_iter=5)
        again = linsvm.train(X, y, solver=3, max_iter=0, warm_start=first)
    np.testing.assert_array_equal(np.append(model.coef_[0], model.bias_weights_), w0[0])
    np.testing.assert_allclose(again.coef_, first.coef_, rtol=1e-10, atol=1e-12)
    assert again.results_[0].n_iter == 0


def test_max_iter_zero_warns_unless_eps_is_zero():
    X, y = make_sparse_problem(n_rows=100, n_features=20)
    with pytest.warns(ConvergenceWarning, match=r"max number of iterations \(0\)"):
        linsvm.train(X, y, solver=3, max_iter=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        linsvm.train(X, y, solver=3, max_iter=0, eps=0.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LinearSVC(max_iter=0, dual=True),
        lambda: LinearSVC(max_iter=0, dual=False),
        lambda: LinearSVC(max_iter=0, loss="hinge"),
        lambda: LinearSVC(max_iter=0, penalty="l1", dual=False),
        lambda: LogisticRegression(max_iter=0),
        lambda: LogisticRegression(max_iter=0, l1_ratio=1.0),
        lambda: LinearSVR(max_iter=0),
        lambda: LinearSVR(max_iter=0, loss="squared_epsilon_insensitive", dual=False),
    ],
    ids=["svc-1", "svc-2", "svc-3", "svc-5", "lr-0", "lr-6", "svr-13", "svr-11"],
)
def test_estimators_max_iter_zero(make):
    X, y = make_sparse_problem(n_rows=150, n_features=20, n_classes=3)
    est = make()
    if isinstance(est, LinearSVR):
        y = X @ np.arange(X.shape[1], dtype=float)
    with pytest.warns(SklearnConvergenceWarning):
        est.fit(X, y)
    assert not np.any(est.coef_) and not np.any(est.intercept_)
    assert np.all(np.asarray(est.n_iter_) == 0)


def test_estimator_max_iter_zero_lr_dual_is_its_interior_start():
    X, y = make_sparse_problem(n_rows=150, n_features=20)
    with pytest.warns(SklearnConvergenceWarning):
        est = LogisticRegression(max_iter=0, dual=True).fit(X, y)
    assert 0 < np.abs(est.coef_).max() < 1e-6 and est.n_iter_[0] == 0
    assert est.model_.results_[0].solver == 7  # no fallback to -s 0


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_eps_zero_runs_exactly_max_iter(solver):
    spec = SOLVERS[solver]
    X, y = _problem(spec, n_rows=300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the cap was asked for
        model = linsvm.train(X, y, solver=solver, bias=_bias(spec), eps=0.0, max_iter=4)
    for result in model.results_:
        assert result.n_iter == 4, (result.n_iter, result.stop_reason)
        assert result.solver == solver  # no fallback at the cap (-s 1, 7, 12)
        assert result.stop_reason == MAX_ITER


@pytest.mark.parametrize("solver", [1, 3, 7, 12, 13, 32])
def test_eps_zero_many_iterations_no_stop_no_fallback(solver):
    """Dual CD and SGD-S with eps = 0 go on to the cap long after LIBLINEAR's default rule
    would have stopped them (and, for -s 1, 7, 12, then switched to the primal)."""
    spec = SOLVERS[solver]
    X, y = _problem(spec, n_rows=300, seed=2)
    if spec.kind != solvers.REGRESSION:
        y = np.where(y == y[0], 1, -1)
    default = linsvm.train(X, y, solver=solver, bias=1.0)
    cap = max(r.n_iter for r in default.results_) + 25
    model = linsvm.train(X, y, solver=solver, bias=1.0, eps=0.0, max_iter=cap)
    assert [r.n_iter for r in model.results_] == [cap] * len(model.results_)
    assert all(r.solver == solver for r in model.results_)


def test_eps_zero_keeps_the_lr_dual_inner_floor():
    """-s 7's inner tolerance divides by 10 each cheap outer iteration down to min(1e-8,
    eps): with eps = 0 it stops at 1e-8 instead of reaching 0 (every inner loop at its cap)."""
    X, y = make_sparse_problem(n_rows=200, n_features=20)
    model = linsvm.train(X, y, solver=7, eps=0.0, max_iter=40)
    assert model.results_[0].n_iter == 40
    assert model.results_[0].figures["inner_eps"] == pytest.approx(1e-8)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LinearSVC(tol=0.0, max_iter=6, dual=True),
        lambda: LinearSVC(tol=0.0, max_iter=6, loss="hinge"),
        lambda: LinearSVC(tol=0.0, max_iter=6, dual=False),
        lambda: LogisticRegression(tol=0.0, max_iter=6, dual=True),
        lambda: LinearSVR(tol=0.0, max_iter=6),
    ],
    ids=["svc-1", "svc-3", "svc-2", "lr-7", "svr-13"],
)
def test_estimators_tol_zero_runs_max_iter(make):
    X, y = make_sparse_problem(n_rows=200, n_features=20)
    est = make()
    if isinstance(est, LinearSVR):
        y = X @ np.arange(X.shape[1], dtype=float)
    with pytest.warns(SklearnConvergenceWarning):  # scikit-learn's rule: n_iter_ >= max_iter
        est.fit(X, y)
    assert int(np.max(est.n_iter_)) == 6
    assert all(r.solver == est.model_.solver for r in est.model_.results_)


def test_check_parameter_takes_zeros():
    """What ``linsvm train -e 0 --max-iter 0`` passes to the registry before reading data."""
    params = check_parameter(1, 1.0, 0.0, -1.0, 0)
    assert params.eps == 0.0 and params.max_iter == 0
    for bad, message in [(-1e-9, "eps must be >= 0"), (float("nan"), "eps must be >= 0")]:
        with pytest.raises(linsvm.InvalidInputError, match=message):
            check_parameter(1, 1.0, bad, -1.0, None)
    with pytest.raises(linsvm.InvalidInputError, match="max_iter must be >= 0"):
        check_parameter(1, 1.0, None, -1.0, -1)
