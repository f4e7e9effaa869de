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
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _same_model(narrow, wide, places, width: int = WIDTH) -> None:
    assert wide.coef_.shape == (narrow.coef_.shape[0], width)
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


@settings(max_examples=60, deadline=None)
@given(n_features=st.integers(0, 40), nnz=st.integers(0, 60), seed=st.integers(0, 2**31 - 1),
       wide=st.booleans())  # fmt: skip
def test_used_columns_are_those_counted(n_features, nnz, seed, wide):
    # The scan that stops once half the columns are seen: the columns holding a value
    # (ascending, as counting every index finds them) where they are fewer than half.
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, max(n_features, 1), size=nnz if n_features else 0)
    indices = indices.astype(np.int64 if wide else np.int32)
    X = sp.csr_matrix((np.ones(indices.shape[0]), indices, [0, indices.shape[0]]),
                      shape=(1, n_features))  # fmt: skip
    counted = np.flatnonzero(np.bincount(indices, minlength=n_features))
    used = UsedColumns.of(X)
    if 2 * counted.shape[0] >= n_features:
        assert used is None
    else:
        assert used.columns.dtype == np.int64 and used.columns.tolist() == counted.tolist()


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


# Block minimisation (``memory=``): w, its copy at each outer iteration's start and the
# objectives' sums are kept over the used columns, found by a pass over the blocks.


def _blocks_model(X, y, n_blocks=3, **options):
    from linsvm.outofcore import ArrayBlocks, train_blocks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_blocks(ArrayBlocks(X, y, n_blocks), max_block_bytes=1, **options)


@pytest.mark.parametrize("solver, selective", [(1, False), (3, False), (3, True), (7, False)])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_blocks_over_a_wide_width_give_the_narrow_model(monkeypatch, solver, selective,
                                                        n_classes, bias):  # fmt: skip
    import linsvm.runner as runner

    X, y = _problem(n_classes)
    wide, places = _spread(X)
    options = dict(solver=solver, bias=bias, selective=selective, max_outer=40, eps=1e-4)
    narrow_model = _blocks_model(X, y, **options)
    widths = []
    real = runner.PartitionedDual

    def recorded(place, merge, W):
        widths.append(W.shape[1])
        return real(place, merge, W)

    monkeypatch.setattr(runner, "PartitionedDual", recorded)
    wide_model = _blocks_model(wide, y, **options)
    assert widths == [X.shape[1] + (bias >= 0)]  # the run's w over the used columns
    _same_model(narrow_model, wide_model, places)
    for k, solution in enumerate(wide_model.results_):
        np.testing.assert_array_equal(solution.alpha, narrow_model.results_[k].alpha)
        if bias < 0:  # (with a bias column, coef_ is a contiguous copy, as in memory)
            assert np.shares_memory(solution.w, wide_model.coef_)  # the weights held once
    np.testing.assert_array_equal(wide_model.predict(wide[:20]), narrow_model.predict(X[:20]))


def test_blocks_keep_every_column_where_half_are_used(monkeypatch):
    """At most half the columns can be used only where the width exceeds twice the
    non-zeros: only then is a pass made for them, else w is over every column."""
    import linsvm.runner as runner

    X, y = _problem()
    passes = []
    real = runner.used_columns_of
    monkeypatch.setattr(runner, "used_columns_of", lambda source: passes.append(1) or real(source))
    for width, made in ((2 * X.nnz, False), (2 * X.nnz + 1, True)):
        passes.clear()
        wider = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
        model = _blocks_model(wider, y, solver=3, max_outer=5)
        assert model.coef_.shape == (1, width)
        assert bool(passes) == made


def test_blocks_from_a_wide_cache_and_their_checkpoints(tmp_path, monkeypatch):
    """A cache's blocks are renumbered as they are read into the reader's buffers; a run
    stopped and resumed from its checkpoint ends with the undisturbed run's model; a
    checkpoint over every column is refused as another run's."""
    from test_outofcore import stopped_at_checkpoint

    from linsvm.io.cache import write_cache
    from linsvm.outofcore import train_cache

    X, y = _problem()
    wide, places = _spread(X)
    for name, rows in (("narrow", X), ("wide", wide)):
        linsvm.write_libsvm(rows, y, tmp_path / f"{name}.txt")
        write_cache(tmp_path / f"{name}.txt", tmp_path / f"{name}.cache", block_bytes=2000)
    options = dict(memory="400M", solver=3, eps=1e-4, max_outer=60, max_block_bytes=1500)
    narrow_model = train_cache(tmp_path / "narrow.cache", **options)
    wide_model = train_cache(tmp_path / "wide.cache", **options)
    # (a text file's width is its largest index)
    _same_model(narrow_model, wide_model, places, width=int(places[-1]) + 1)

    path = tmp_path / "run.ckpt"
    with stopped_at_checkpoint(monkeypatch, 3):
        train_cache(tmp_path / "wide.cache", checkpoint=path, **options)
    resumed = train_cache(tmp_path / "wide.cache", resume=path, **options)
    np.testing.assert_array_equal(resumed.coef_, wide_model.coef_)
    assert resumed.results_[0].n_iter == wide_model.results_[0].n_iter

    import linsvm.runner as runner

    with monkeypatch.context() as patch:
        patch.setattr(runner, "used_columns_of", lambda source: None)
        with pytest.raises(linsvm.errors.InvalidInputError, match="differs in: the data"):
            train_cache(tmp_path / "wide.cache", resume=path, **options)
        # a run over every column (as before training on the used columns) and its checkpoint
        full = train_cache(tmp_path / "wide.cache", **options)
        old = tmp_path / "old.ckpt"
        with stopped_at_checkpoint(patch, 3):
            train_cache(tmp_path / "wide.cache", checkpoint=old, **options)
    # resumed as it ran: over every column
    resumed = train_cache(tmp_path / "wide.cache", resume=old, **options)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)


def test_cross_validation_in_blocks_over_a_wide_width(tmp_path):
    from linsvm.outofcore import ArrayBlocks, cross_validate_blocks

    X, y = _problem()
    wide, _ = _spread(X)
    options = dict(solver=1, max_block_bytes=1, max_outer=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert (cross_validate_blocks(ArrayBlocks(wide, y, 3), 3, **options)
                == cross_validate_blocks(ArrayBlocks(X, y, 3), 3, **options))  # fmt: skip
