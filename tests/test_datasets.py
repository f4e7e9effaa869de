"""Tests of the generated text-like data (linsvm.datasets.make_text_classification)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm.datasets import make_text_classification
from linsvm.errors import InvalidInputError


@pytest.fixture(scope="module")
def small():
    return make_text_classification(3000, n_features=5000, nnz_per_row=20, random_state=3)


def test_shapes_and_types(small):
    X, y = small
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (3000, 5000)
    assert y.shape == (3000,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_float32():
    X, y = make_text_classification(200, n_features=1000, dtype=np.float32, random_state=1)
    assert X.dtype == np.float32
    assert np.allclose(sp.linalg.norm(X, axis=1), 1.0, atol=1e-5)


def test_deterministic():
    a = make_text_classification(500, n_features=2000, random_state=7)
    b = make_text_classification(500, n_features=2000, random_state=7)
    c = make_text_classification(500, n_features=2000, random_state=8)
    for u, v in (
        (a[0].indptr, b[0].indptr),
        (a[0].indices, b[0].indices),
        (a[0].data, b[0].data),
        (a[1], b[1]),
    ):
        np.testing.assert_array_equal(u, v)
    assert not (a[0].nnz == c[0].nnz and np.array_equal(a[0].indices, c[0].indices))


def test_rows_normalised_and_positive(small):
    X, _ = small
    assert np.all(X.data > 0)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)


def test_sorted_unique_indices(small):
    X, _ = small
    row_lengths = np.diff(X.indptr)
    assert row_lengths.min() >= 1
    assert X.indices.min() >= 0 and X.indices.max() < X.shape[1]
    # strictly increasing within each row: every step not crossing a row boundary is positive
    steps = np.diff(X.indices.astype(np.int64))
    within = np.ones(steps.shape[0], dtype=bool)
    within[X.indptr[1:-1] - 1] = False  # step k goes from entry k to k + 1, a row's first
    assert np.all(steps[within] > 0)
    assert X.has_canonical_format


def test_row_lengths_mean_and_zipf_frequencies(small):
    X, _ = small
    assert abs(np.diff(X.indptr).mean() - 20) < 2.0
    df = np.bincount(X.indices, minlength=X.shape[1])
    top = np.sort(df)[::-1]
    # long tail: the 1% most frequent features hold a large share of all entries
    assert top[:50].sum() > 0.3 * X.nnz
    assert top[0] > 10 * np.median(top[top > 0])


def test_both_classes_roughly_balanced(small):
    _, y = small
    assert 0.4 < np.mean(y > 0) < 0.6


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_samples=20000, n_features=10000, nnz_per_row=1),
     dict(n_samples=2000, n_features=2, nnz_per_row=5),
     dict(n_samples=2001, n_features=50, nnz_per_row=1, informative=0.5, zipf_exponent=2)],
)  # fmt: skip
def test_classes_balanced_when_many_rows_tie_at_the_median(kwargs):
    """Short rows share scores (often 0): a coin on each tied row left 62% of one class."""
    _, y = make_text_classification(**kwargs, label_noise=0.0, random_state=0)
    assert np.count_nonzero(y == 1) == kwargs["n_samples"] // 2


def test_label_noise_rate():
    kw = dict(n_samples=20000, n_features=3000, nnz_per_row=15, random_state=5)
    X, y_clean = make_text_classification(label_noise=0.0, **kw)
    X2, y_noisy = make_text_classification(label_noise=0.1, **kw)
    np.testing.assert_array_equal(X.data, X2.data)
    rate = np.mean(y_clean != y_noisy)
    assert 0.09 < rate < 0.11


def test_labels_learnable():
    """Without noise, the planted direction separates most rows: a linear model can learn."""
    import linsvm

    X, y = make_text_classification(4000, n_features=2000, label_noise=0.0, random_state=2)
    model = linsvm.train(X[:3000], y[:3000], solver=1)
    assert np.mean(model.predict(X[3000:]) == y[3000:]) > 0.75


def test_small_vocabulary_rows_still_distinct():
    X, _ = make_text_classification(300, n_features=8, nnz_per_row=6, random_state=0)
    assert np.diff(X.indptr).max() <= 4
    assert X.has_canonical_format


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_samples=0),
        dict(n_samples=10, n_features=1),
        dict(n_samples=10, nnz_per_row=0.5),
        dict(n_samples=10, informative=0),
        dict(n_samples=10, label_noise=0.6),
        dict(n_samples=10, zipf_exponent=-1),
        dict(n_samples=10, dtype=np.int32),
        dict(n_samples=10, dtype="foo"),
        dict(n_samples=2.7),
        dict(n_samples=float("nan")),
        dict(n_samples=10, n_features=2.5),
        dict(n_samples=10, nnz_per_row="5"),
        dict(n_samples=10, informative="0.1"),
    ],
)
def test_invalid_arguments(kwargs):
    with pytest.raises(InvalidInputError):
        make_text_classification(**kwargs)
