"""Training where fewer than half the columns hold a value (hashed features, a wide declared
width): the solvers see the used columns only and the model comes back over every column.

The same rows spread over a million columns give the very model of the narrow rows (the
compressed matrix is the narrow one), zero weights elsewhere; hooks, starting weights, warm
starts, checkpoints and cross-validation see and take weights over every column.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm.data import UsedColumns

WIDTH = 10**6


def _spread(X: sp.csr_matrix, width: int = WIDTH, seed: int = 0):
    """X's columns moved to sorted random places among ``width``: (wide X, the places)."""
    places = np.sort(np.random.default_rng(seed).choice(width, X.shape[1], replace=False))
    return sp.csr_matrix((X.data, places[X.indices], X.indptr), shape=(X.shape[0], width)), places


def _problem(n_classes=2, seed=3):
    X, y = make_sparse_problem(n_rows=240, n_features=12, n_classes=n_classes, seed=seed,
                               density=0.5)  # fmt: skip
    assert np.unique(X.indices).shape[0] == X.shape[1]  # (every narrow column used)
    return X, y


def _same_model(narrow, wide, places) -> None:
    assert wide.coef_.shape == (narrow.coef_.shape[0], WIDTH)
    np.testing.assert_array_equal(wide.coef_[:, places], narrow.coef_)
    assert np.count_nonzero(wide.coef_) == np.count_nonzero(narrow.coef_)
    np.testing.assert_array_equal(wide.intercept_, narrow.intercept_)
    for a, b in zip(narrow.results_, wide.results_, strict=True):
        assert (a.primal, a.dual, a.n_iter, a.stop_reason) == (b.primal, b.dual, b.n_iter,
                                                               b.stop_reason)  # fmt: skip


@pytest.mark.parametrize("solver", [0, 1, 2, 3, 4, 5, 6, 7, 30, 32, 34, 36, 39, 40])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_a_wide_problem_gives_the_narrow_model(solver, bias):
    n_classes = 3 if solver == 4 else 2
    X, y = _problem(n_classes)
    wide, places = _spread(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        narrow_model = linsvm.train(X, y, solver=solver, bias=bias, max_iter=50)
        wide_model = linsvm.train(wide, y, solver=solver, bias=bias, max_iter=50)
    _same_model(narrow_model, wide_model, places)
    X_test = wide[:20]
    np.testing.assert_array_equal(wide_model.predict(X_test), narrow_model.predict(X[:20]))


@pytest.mark.parametrize("solver", [11, 12, 21])
def test_regression_and_one_class(solver):
    X, y = _problem()
    y = X @ np.linspace(-1, 1, X.shape[1]) if solver != 21 else y
    wide, places = _spread(X)
    narrow_model = linsvm.train(X, y, solver=solver)
    _same_model(narrow_model, linsvm.train(wide, y, solver=solver), places)


def test_multiclass_threads_hooks_and_starts():
    X, y = _problem(n_classes=4, seed=5)
    wide, places = _spread(X)
    narrow = linsvm.train(X, y, solver=2, n_jobs=2)
    seen = []

    def hook(progress):
        seen.append(progress.w.shape)

    wide_model = linsvm.train(wide, y, solver=2, n_jobs=2, hook=hook)
    _same_model(narrow, wide_model, places)
    assert seen and set(seen) == {(WIDTH,)}
    # starting weights over every column (init_sol, a warm start) go in as given
    init = np.zeros((4, WIDTH))
    init[:, places] = narrow.coef_
    started = linsvm.train(wide, y, solver=2, init_sol=init)
    assert all(r.n_iter <= 1 for r in started.results_)
    warm = linsvm.train(wide, y, solver=2, warm_start=wide_model)
    np.testing.assert_allclose(warm.coef_, wide_model.coef_, atol=1e-6)
    dual = linsvm.train(wide, y, solver=1)
    assert linsvm.train(wide, y, solver=1, warm_start=dual).results_[0].n_iter <= 2


def test_checkpoint_and_resume(tmp_path):
    X, y = _problem()
    wide, places = _spread(X)
    full = linsvm.train(wide, y, solver=3, eps=1e-3)
    stop_at = []

    def hook(progress):
        if progress.iteration >= 3:
            stop_at.append(progress.iteration)
            return False
        return None

    path = tmp_path / "run.ckpt"
    with pytest.warns(linsvm.TrainingInterrupted):
        part = linsvm.train(wide, y, solver=3, eps=1e-3, hook=hook, checkpoint=path)
    assert part.interrupted and part.coef_.shape == (1, WIDTH)
    resumed = linsvm.train(wide, y, solver=3, eps=1e-3, resume=path)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)


def test_cross_validation_and_the_search_for_C():
    X, y = _problem()
    wide, _ = _spread(X)
    np.testing.assert_array_equal(linsvm.cross_validation(wide, y, 3, solver=1),
                                  linsvm.cross_validation(X, y, 3, solver=1))  # fmt: skip
    from linsvm.model_selection import find_parameter_C

    a = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False)
    b = find_parameter_C(wide, y, solver=2, n_folds=3, verbose=False)
    assert (a.best_C, a.best_rate) == (b.best_C, b.best_rate)


def test_used_columns_round_trip():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]]))
    used = UsedColumns.of(X)
    assert used is not None and used.columns.tolist() == [0, 1]
    np.testing.assert_array_equal(used.take(X).toarray(), [[0.0, 2.0], [1.0, 0.0]])
    w = np.array([[1.0, 2.0, 7.0], [3.0, 4.0, 8.0]])  # two vectors, a bias weight each
    full = used.expand_w(w)
    np.testing.assert_array_equal(full, [[1, 2, 0, 0, 0, 7], [3, 4, 0, 0, 0, 8]])
    np.testing.assert_array_equal(used.take_w(full), w)
    # half the columns used or more (2 of 4): nothing to gain
    assert UsedColumns.of(sp.csr_matrix(np.array([[1.0, 1.0, 0.0, 0.0]]))) is None


def test_the_solvers_see_the_used_columns(monkeypatch):
    """What the change is for: a solver's dense per-weight work scales with the columns it
    sees (a9a hashed to 2^24: SGD-QN 58 s, SGD-S 47 s, PCD 17 s, against 0.03-3 s)."""
    import linsvm.solvers.pcd as pcd

    seen = []
    solve = pcd.solve_pcd

    def recording(sub, hook=None):
        seen.append(sub.X.shape[1])
        return solve(sub, hook)

    monkeypatch.setattr(pcd, "solve_pcd", recording)
    X, y = _problem()
    wide, _ = _spread(X)
    assert linsvm.train(wide, y, solver=34).coef_.shape == (1, WIDTH)
    assert seen == [X.shape[1]]


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_a_one_vs_rest_model_holds_its_weights_once(bias):
    """Each solution's w was a second copy beside the stacked W, and the bias weights a view
    that kept W alive beside ``coef_``'s contiguous copy: 2-3x the model's weights (letter
    hashed to 2^20: 419-627 MiB for a 208 MiB model)."""
    X, y = _problem(n_classes=4, seed=5)
    wide, _ = _spread(X)
    model = linsvm.train(wide, y, solver=1, bias=bias)
    bases = {id(r.w.base) for r in model.results_}
    assert len(bases) == 1 and all(r.w.base is not None for r in model.results_)
    assert model.bias_weights_.base is None or model.bias_weights_.base.size == 4
    if bias < 0:  # (coef_ is the stacked W itself)
        assert np.shares_memory(model.coef_, model.results_[2].w)
