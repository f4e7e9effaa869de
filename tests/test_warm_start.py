"""Warm starts through linsvm.train(warm_start=model) and the estimators' warm_start=True.

The solver-level restarts are tested in test_warm_start_solvers.py; here: every solver family
takes a previous model, a restart at the same C has next to nothing left to do, a path over
growing C gives a cold start's answer with fewer iterations, and mismatched models are refused
with one-line errors (train) or ignored (estimators, as scikit-learn's warm_start).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

from linsvm import InvalidInputError, train
from linsvm.training import ConvergenceWarning

CLASSIFICATION_SOLVERS = [0, 1, 2, 3, 4, 5, 6, 7]
REGRESSION_SOLVERS = [11, 12, 13]


def _regression_problem(seed=0, n_rows=300, n_features=20):
    X, _ = make_sparse_problem(n_rows=n_rows, n_features=n_features, seed=seed)
    rng = np.random.default_rng(seed)
    y = X @ rng.normal(size=n_features) + 0.3 * rng.normal(size=n_rows)
    return X, y


def _problem(solver, seed=0):
    if solver in REGRESSION_SOLVERS:
        return _regression_problem(seed)
    n_classes = 3 if solver == 4 else 2
    return make_sparse_problem(n_rows=300, n_features=20, n_classes=n_classes, seed=seed)


def _fit(X, y, solver, C, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return train(X, y, solver=solver, C=C, bias=1.0, eps=1e-3, **kwargs)


@pytest.mark.parametrize("solver", CLASSIFICATION_SOLVERS + REGRESSION_SOLVERS)
def test_restart_at_the_same_C_has_little_left_to_do(solver):
    X, y = _problem(solver, seed=1)
    cold = _fit(X, y, solver, 1.0)
    warm = _fit(X, y, solver, 1.0, warm_start=cold)
    for c, w in zip(cold.results_, warm.results_, strict=True):
        assert w.n_iter <= max(3, c.n_iter // 3), (c.n_iter, w.n_iter)
        assert w.primal <= c.primal * (1 + 1e-3) + 1e-12
    np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("solver", CLASSIFICATION_SOLVERS + REGRESSION_SOLVERS)
def test_path_over_growing_C_matches_cold_starts(solver):
    X, y = _problem(solver, seed=2)
    previous = None
    warm_iterations = cold_iterations = 0
    for C in (0.05, 0.2, 0.8, 3.2):
        cold = _fit(X, y, solver, C)
        warm = _fit(X, y, solver, C, warm_start=previous)
        previous = warm
        for c, w in zip(cold.results_, warm.results_, strict=True):
            # both stop at the same tolerance: the primal values agree to that accuracy
            assert w.primal == pytest.approx(c.primal, rel=2e-2)
            if np.isfinite(w.gap):
                assert w.gap >= -1e-9 * abs(w.primal)
            warm_iterations += w.n_iter
            cold_iterations += c.n_iter
    # the sum over the path, in iterations (not time): restarts from a smaller C save work for
    # the smooth problems and barely change it for the hinge-type losses (-s 3, 4, 13), which
    # may take a few more iterations than a cold start: never many more
    assert warm_iterations <= 1.2 * cold_iterations


def test_dual_restart_projects_onto_new_bounds():
    # hinge loss: alpha in [0, C]; from C = 4 to C = 0.1 every alpha above 0.1 is clipped
    X, y = make_sparse_problem(n_rows=300, n_features=20, seed=3)
    big = _fit(X, y, 3, 4.0)
    small = _fit(X, y, 3, 0.1, warm_start=big)
    alpha = small.results_[0].alpha
    assert alpha.min() >= 0 and alpha.max() <= 0.1 + 1e-15
    cold = _fit(X, y, 3, 0.1)
    assert small.results_[0].primal == pytest.approx(cold.results_[0].primal, rel=1e-2)


def test_warm_start_from_another_solver_of_the_family():
    X, y = make_sparse_problem(n_rows=300, n_features=20, seed=4)
    primal = _fit(X, y, 2, 1.0)  # its result carries the feasible dual point of its w
    dual = _fit(X, y, 1, 1.0, warm_start=primal)
    assert dual.results_[0].n_iter <= _fit(X, y, 1, 1.0).results_[0].n_iter / 2
    l1 = _fit(X, y, 5, 1.0)  # no dual variables: the dual solver starts cold
    assert _fit(X, y, 1, 1.0, warm_start=l1).results_[0].converged


def test_mismatched_models_are_refused():
    X, y = make_sparse_problem(n_rows=100, n_features=10, seed=5)
    model = _fit(X, y, 1, 1.0)
    with pytest.raises(InvalidInputError, match="dual variables are for 100 rows, X has 60"):
        _fit(X[:60], y[:60], 1, 1.0, warm_start=model)
    with pytest.raises(InvalidInputError, match="the model has 10 features, X has 12"):
        _fit(sp.hstack([X, X[:, :2]]).tocsr(), y, 1, 1.0, warm_start=model)
    with pytest.raises(InvalidInputError, match="labels"):
        _fit(X, np.where(y > 0, 7, 8), 1, 1.0, warm_start=model)
    with pytest.raises(InvalidInputError, match="not both"):
        _fit(X, y, 2, 1.0, warm_start=model, init_sol=np.zeros((1, 11)))
    with pytest.raises(InvalidInputError, match="must be a linsvm.Model"):
        _fit(X, y, 1, 1.0, warm_start=model.coef_)
    with pytest.raises(InvalidInputError, match="one-class"):
        _fit(X, y, 21, 1.0, warm_start=model)
    Xr, yr = _regression_problem(n_rows=100, n_features=10)
    with pytest.raises(InvalidInputError, match="classification model"):
        _fit(Xr, yr, 11, 1.0, warm_start=model)


sklearn = pytest.importorskip("sklearn")


@pytest.mark.parametrize(
    "make",
    [
        lambda: __import__("linsvm").LinearSVC(dual=True, tol=1e-3, max_iter=10000),
        lambda: __import__("linsvm").LinearSVC(dual=True, loss="hinge", tol=1e-3, max_iter=10000),
        lambda: __import__("linsvm").LogisticRegression(dual=True, tol=1e-3, max_iter=10000),
        lambda: __import__("linsvm").LogisticRegression(tol=1e-3),
        lambda: __import__("linsvm").LinearSVR(tol=1e-3, max_iter=10000),
    ],
)
def test_estimator_warm_path(make):
    from sklearn.base import is_regressor

    est = make()
    if is_regressor(est):
        X, y = _regression_problem(seed=6)
    else:
        X, y = make_sparse_problem(n_rows=300, n_features=20, n_classes=3, seed=6)
    path = make().set_params(warm_start=True)
    for C in (0.1, 0.4, 1.6):
        cold = make().set_params(C=C).fit(X, y)
        path.set_params(C=C).fit(X, y)
        np.testing.assert_allclose(path.objective_, cold.objective_, rtol=2e-2)
        assert np.mean(path.predict(X) == cold.predict(X)) > 0.95 or is_regressor(est)
    # other rows: scikit-learn's warm_start semantics, the previous solution is dropped
    fresh = make().set_params(C=1.6, random_state=0).fit(X[:200], y[:200])
    again = path.set_params(random_state=0).fit(X[:200], y[:200])
    np.testing.assert_array_equal(again.coef_, fresh.coef_)
