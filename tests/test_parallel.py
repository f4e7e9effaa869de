"""Work split over threads by rows gives exactly the serial result.

- ``row_chunks`` (hypothesis): contiguous, non-empty ranges covering every row once, in order,
  at most the number asked for;
- cross-validation predictions are the same for any number of threads (folds side by side);
- decision values, predictions and probabilities are bit-identical for any number of threads
  (binary, multi-class, regression and one-class models; empty rows; features beyond the
  model's), with the work forced into as many chunks as there are threads;
- sums over row chunks (``sum_row_chunks``, hypothesis): the chunks' parts added in row order
  to the start, the serial sum's bits on one chunk, the same bits at every call.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm import objective, parallel
from linsvm.errors import InvalidInputError


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 50), min_size=0, max_size=60),
    n_chunks=st.integers(1, 12),
    offset=st.integers(0, 5),
)
def test_row_chunks_cover_every_row_once(lengths, n_chunks, offset):
    indptr = offset + np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    chunks = parallel.row_chunks(indptr, n_chunks)
    n_rows = len(lengths)
    if n_rows == 0:
        assert chunks == []
        return
    assert 1 <= len(chunks) <= n_chunks
    assert chunks[0][0] == 0 and chunks[-1][1] == n_rows
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:], strict=False))  # contiguous
    assert all(r1 > r0 for r0, r1 in chunks)


def test_effective_n_jobs_rejects_zero():
    with pytest.raises(InvalidInputError):
        parallel.effective_n_jobs(0)


@pytest.fixture
def split_everything(monkeypatch):
    """Any amount of work is split into as many chunks as there are threads."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_NNZ", 1)


def _data(n_rows=997, n_features=40, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=0.1, format="csr", random_state=rng)
    X[::7] = 0.0  # empty rows, some at chunk boundaries
    X.eliminate_zeros()
    return X, rng


@pytest.mark.parametrize("solver, n_classes", [(1, 2), (0, 4), (4, 3), (12, 0), (21, 0)])
def test_decision_values_do_not_depend_on_threads(split_everything, solver, n_classes):
    X, rng = _data()
    if n_classes:
        y = rng.integers(0, n_classes, X.shape[0])
    else:
        y = X @ rng.standard_normal(X.shape[1])
    model = linsvm.train(X, y, solver=solver, bias=-1 if solver == 21 else 1.0)
    # the test rows have more features than the model: the extra ones are ignored
    T, _ = _data(n_rows=503, n_features=45, seed=1)
    serial = model.decision_function(T, n_jobs=1)
    for n_jobs in (2, 3, 7, -1):
        np.testing.assert_array_equal(model.decision_function(T, n_jobs=n_jobs), serial)
        np.testing.assert_array_equal(model.predict(T, n_jobs=n_jobs), model.predict(T, n_jobs=1))
    if model.is_probability_model:
        np.testing.assert_array_equal(
            model.predict_proba(T, n_jobs=3), model.predict_proba(T, n_jobs=1)
        )


def test_work_below_the_threshold_stays_on_the_calling_thread(monkeypatch):
    calls = []
    indptr = np.arange(11, dtype=np.int64) * 3  # 10 rows, 30 non-zeros
    parallel.for_row_chunks(indptr, -1, lambda r0, r1: calls.append((r0, r1)))
    assert calls == [(0, 10)]
    monkeypatch.setattr(parallel, "PARALLEL_MIN_NNZ", 10)
    calls.clear()
    parallel.for_row_chunks(indptr, 3, lambda r0, r1: calls.append((r0, r1)))
    assert sorted(calls) == [(0, 4), (4, 7), (7, 10)]  # balanced by non-zeros


@pytest.mark.parametrize("solver, n_classes", [(1, 2), (3, 4), (0, 3), (12, 0)])
def test_cross_validation_does_not_depend_on_threads(solver, n_classes):
    X, rng = _data(n_rows=400)
    if n_classes:
        y = rng.integers(0, n_classes, X.shape[0])
    else:
        y = X @ rng.standard_normal(X.shape[1])
    weights = rng.uniform(0.5, 2.0, X.shape[0])
    serial = linsvm.cross_validation(X, y, 5, solver=solver, sample_weight=weights, n_jobs=1)
    for n_jobs in (2, 3):
        threaded = linsvm.cross_validation(
            X, y, 5, solver=solver, sample_weight=weights, n_jobs=n_jobs
        )
        np.testing.assert_array_equal(threaded, serial)


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 30), min_size=0, max_size=40),
    n_jobs=st.integers(1, 6),
    start=st.floats(-1e3, 1e3),
    seed=st.integers(0, 2**31),
)
def test_sums_over_row_chunks(lengths, n_jobs, start, seed):
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = np.random.default_rng(seed).standard_normal(len(lengths))
    seen = []

    def part(r0: int, r1: int, s: float) -> float:
        seen.append((r0, r1, s))
        for v in values[r0:r1]:
            s += v
        return s

    serial = part(0, len(lengths), start)
    seen.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "PARALLEL_MIN_NNZ", 1)
        total = parallel.sum_row_chunks(indptr, n_jobs, part, start)
        chunks = sorted(seen)
        again = parallel.sum_row_chunks(indptr, n_jobs, part, start)
    assert total == again  # the same chunks, the same bits
    # the start goes to the first chunk only; every row is in one chunk
    assert [s for _, _, s in chunks] == [start] + [0.0] * (len(chunks) - 1)
    assert [r for r0, r1, _ in chunks for r in range(r0, r1)] == list(range(len(lengths)))
    if len(chunks) == 1:
        assert total == serial
    else:
        assert total == pytest.approx(serial, rel=1e-12, abs=1e-9)


def test_weights_from_dual_on_threads(monkeypatch):
    # w = sum_i coef_i x_i: on one thread the serial sum's bits; on several, each thread's rows
    # in its own w, added up by ranges of weights: the same bits at every call, as many
    # threads as their w fit the memory cap
    X, rng = _data()
    coef = rng.standard_normal(X.shape[0]) * (rng.random(X.shape[0]) < 0.7)
    ranges = []
    run = objective.for_chunks

    def counted(chunks, work):
        ranges.append(len(chunks))
        return run(chunks, work)

    monkeypatch.setattr(objective, "for_chunks", counted)
    for bias in (-1.0, 0.5):
        n_w = X.shape[1] + (bias >= 0)
        args = (X.indptr, X.indices, X.data, bias, coef, n_w)
        ones = np.ones(X.shape[0])
        serial = objective.primal_from_dual(X.indptr, X.indices, X.data, bias, ones, coef, n_w)
        np.testing.assert_array_equal(objective.weights_from_dual(*args, 3), serial)
        assert ranges == []  # (below the threshold: one thread)
        monkeypatch.setattr(parallel, "PARALLEL_MIN_NNZ", 1)
        three = objective.weights_from_dual(*args, 3)
        assert ranges == [3, 3]  # (the rows, then the weights)
        np.testing.assert_allclose(three, serial, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(objective.weights_from_dual(*args, 3), three)
        monkeypatch.setattr(objective, "PARTIAL_WEIGHTS_MAX_BYTES", 8 * n_w * 2)
        ranges.clear()
        np.testing.assert_allclose(objective.weights_from_dual(*args, 3), serial, rtol=1e-12,
                                   atol=1e-14)  # fmt: skip
        assert ranges == [2, 2]
        monkeypatch.undo()
        monkeypatch.setattr(objective, "for_chunks", counted)
        ranges.clear()


def test_cast_rows_on_threads(split_everything):
    X, _ = _data()
    for values, dtype in ((X.data, np.float32), (X.indices.astype(np.int64), np.int32)):
        for n_jobs in (1, 3):
            cast = parallel.cast_rows(X.indptr, values, dtype, n_jobs)
            assert cast.dtype == dtype
            np.testing.assert_array_equal(cast, values.astype(dtype))
    assert parallel.cast_rows(X.indptr, X.data, np.float64, 3) is X.data  # (nothing to do)
