"""The pieces of ``benchmarks/bench_poly2.py`` on tiny generated data.

- the scikit-learn pipeline's scaled PolynomialFeatures columns are the kernel map: their Gram
  matrix is (gamma x'x' + coef0)^2, as linsvm's FeatureMap's;
- LIBSVM's predictor driven row by row gives svm_predict's labels;
- every method of a dataset's table runs and gives an accuracy, a model size and, for the
  hashed map, its collisions; the report's tables are formed from them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

pytest.importorskip("sklearn")

from benchmarks import bench_poly2 as bp  # noqa: E402
from linsvm.features.maps import FeatureMap  # noqa: E402

PRM = bp.Params(C=1.0, gamma=0.3, coef0=1.0, C_rbf=1.0, gamma_rbf=0.5)


def _problem(seed: int = 0, rows: int = 240, cols: int = 8, n_classes: int = 2) -> bp.Problem:
    rng = np.random.default_rng(seed)
    X = sp.random(rows, cols, density=0.5, format="csr", random_state=seed, dtype=np.float64)
    X.sort_indices()
    dense = X.toarray()
    score = dense[:, 0] * dense[:, 1] - dense[:, 2] ** 2 + 0.3 * dense[:, 3]
    if n_classes == 2:
        y = np.where(score > np.median(score), 1.0, -1.0)
    else:
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(np.float64) + 1.0
    y[rng.integers(0, rows, rows // 20)] = y[0]  # a little noise
    n_test = rows // 4
    spec = bp.DataSpec("tiny", "tiny.t", hash_bits=12, n_components=50)
    return bp.Problem("tiny", X[n_test:], y[n_test:], X[:n_test], y[:n_test], spec)


def test_split_rows_is_a_seeded_partition():
    a, b = bp.split_rows(101, 0.2, 0)
    assert len(b) == 20 and len(a) == 81
    assert np.array_equal(np.sort(np.concatenate([a, b])), np.arange(101))
    a2, b2 = bp.split_rows(101, 0.2, 0)
    assert np.array_equal(a, a2) and np.array_equal(b, b2)


def test_scaled_polynomial_features_are_the_kernel_map():
    from sklearn.preprocessing import PolynomialFeatures

    X = _problem().X[:30]
    gamma, coef0 = 0.3, 2.0
    poly = PolynomialFeatures(degree=2).fit(X)
    Z = sp.csr_matrix(poly.transform(X).multiply(bp.kernel_scales(poly.powers_, gamma, coef0)))
    kernel = (gamma * (X @ X.T).toarray() + coef0) ** 2
    np.testing.assert_allclose((Z @ Z.T).toarray(), kernel, rtol=1e-12, atol=1e-12)
    phi = FeatureMap(2, gamma=gamma, coef0=coef0).bind(X.shape[1]).transform(X)
    np.testing.assert_allclose((phi @ phi.T).toarray(), kernel, rtol=1e-12, atol=1e-12)
    # and the pipeline's own step does the same
    step = bp.make_sklearn_pipeline("poly2", bp.Params(1.0, gamma, coef0, 1.0, 1.0))[0]
    Z2 = step.fit(X).transform(X)
    np.testing.assert_allclose((Z2 @ Z2.T).toarray(), kernel, rtol=1e-12, atol=1e-12)


def test_fitted_nbytes_counts_the_arrays():
    p = _problem()
    pipe = bp.make_sklearn_pipeline("rbf-sampler", PRM, n_components=20).fit(p.X, p.y)
    expected = (pipe[0].random_weights_.nbytes + pipe[0].random_offset_.nbytes
                + pipe[1].coef_.nbytes + pipe[1].intercept_.nbytes)  # fmt: skip
    assert bp.fitted_nbytes(pipe) >= expected


def test_libsvm_predict_matches_svm_predict():
    pytest.importorskip("libsvm.svm")
    from libsvm.svmutil import svm_predict

    p = _problem(n_classes=3)
    model, prob = bp.libsvm_fit(p.X, p.y, bp.libsvm_options("poly2", 1.0, 0.3, 1.0))
    _, labels = bp.libsvm_predict(model, p.X_test)
    reference, _, _ = svm_predict(p.y_test, p.X_test, model, "-q")
    assert np.array_equal(labels, np.asarray(reference))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_method_runs_and_reports(n_classes):
    p = _problem(n_classes=n_classes)
    methods = set(bp.METHODS)
    if not bp.libsvm_available():
        methods -= {"libsvm-poly", "libsvm-rbf"}
    results, modes, notes = bp.bench_dataset(p, PRM, methods, repeats=1, libsvm_repeats=1)
    ran = [r for r in results if r.train_s is not None]
    assert len(ran) == len(results), [r.notes for r in results]
    for r in ran:
        assert 0.0 <= r.accuracy <= 100.0
        assert r.model_bytes > 0
        assert r.predict_row_s > 0
    hashed = [r for r in ran if "hashed" in r.method]
    assert hashed and all(r.columns == 2**12 and r.collisions is not None for r in hashed)
    distinct, occupied = hashed[0].collisions
    assert 0 < occupied <= distinct
    # the exact map, materialised or implicit, is the same model
    exact = {mode: modes[(3, "exact", mode)] for mode in ("materialise", "implicit")}
    assert exact["materialise"].accuracy == exact["implicit"].accuracy
    assert bp.reference_poly2(results) is exact["materialise"]
    lines = bp.dataset_lines(p, PRM, results, notes)
    assert any("**linsvm poly2 -s 3 materialised**" in line for line in lines)
    assert bp.targets(results)
    assert bp.mode_lines({"tiny": modes})


def test_too_wide_exact_map_leaves_hashing_only():
    p = _problem()
    wide = bp.Problem("wide", sp.csr_matrix(p.X, shape=(p.X.shape[0], 40000)), p.y,
                      sp.csr_matrix(p.X_test, shape=(p.X_test.shape[0], 40000)), p.y_test,
                      p.spec)  # fmt: skip
    exact, hashed, why = bp.poly2_maps(wide, PRM)
    assert exact is None and hashed.hash_bits == 12 and "too wide" in why
    results, _, notes = bp.bench_dataset(wide, PRM, {"poly2", "sk-poly2"}, 1, 1)
    assert [r.method for r in results if r.train_s is not None] == [
        "linsvm poly2 -s 3 hashed materialised (2^12)",
        "linsvm poly2 -s 3 hashed implicit (2^12)",
    ]
    assert bp.reference_poly2(results).method.startswith("linsvm poly2 -s 3 hashed")
    assert notes and "too wide" in notes[0]
