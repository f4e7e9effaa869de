"""The Crammer-Singer solver (-s 4): against liblinear-official, and its dual's invariants."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_predict, liblinear_train, liblinear_weights, make_sparse_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.solvers.crammer_singer import (
    cs_dual_value,
    cs_objectives,
    cs_primal_value,
    cs_weights_from_dual,
    solve_crammer_singer,
)

LIBLINEAR_MAX_ITER = 100000  # Solver_MCSVM_CS's cap in LIBLINEAR 2.50


def label_order(y) -> np.ndarray:
    """LIBLINEAR's label order: first appearance in the training data."""
    _, first = np.unique(y, return_index=True)
    return np.asarray(y)[np.sort(first)]


def classes_of(y, labels) -> np.ndarray:
    lookup = {float(v): k for k, v in enumerate(labels)}
    return np.array([lookup[float(v)] for v in y], dtype=np.int64)


def predict_cs(W, X, bias, labels) -> np.ndarray:
    """LIBLINEAR's rule: 2 classes, labels[0] iff dec[0] > 0; else the first largest dec."""
    n = X.shape[1]
    dec = np.asarray(X @ W[:, :n].T)
    if bias >= 0:
        dec = dec + bias * W[:, -1]
    if W.shape[0] == 2:
        return np.where(dec[:, 0] > 0, labels[0], labels[1])
    return np.asarray(labels)[np.argmax(dec, axis=1)]


def compare_with_liblinear(X, y, C=1.0, bias=-1.0, eps=1e-5, class_weight=None, seed=1):
    """Train both; check objectives, gap and predictions; return our solution."""
    opts = f"-s 4 -c {C:.17g} -e {eps:.17g}"
    for lab, wt in (class_weight or {}).items():
        opts += f" -w{int(lab)} {wt:.17g}"
    model, iters = liblinear_train(y, X, opts, bias)
    assert iters and iters[0] < LIBLINEAR_MAX_ITER, "the LIBLINEAR reference did not converge"
    labels = np.asarray(model.get_labels(), dtype=np.float64)
    np.testing.assert_array_equal(labels, label_order(y))
    cls = classes_of(y, labels)
    C_class = np.array([C * (class_weight or {}).get(lab, 1.0) for lab in labels])
    sol = solve_crammer_singer(X, cls, len(labels), C_class, bias, eps, seed=seed)
    assert sol.converged
    assert sol.W.shape == (len(labels), X.shape[1] + (1 if bias >= 0 else 0))

    W_ll = liblinear_weights(model)
    p_ll, _, _ = cs_objectives(X, bias, cls, C_class[cls], W_ll, sol.alpha)
    assert abs(sol.primal - p_ll) <= 1e-4 * abs(p_ll), (sol.primal, p_ll)
    # weak duality, and a gap that the tight eps has closed
    assert sol.primal - sol.dual >= -1e-9 * abs(sol.primal)
    assert sol.primal - sol.dual <= 1e-4 * abs(sol.primal)
    assert sol.dual <= p_ll + 1e-9 * abs(p_ll)

    # Crammer-Singer optima often have exact ties between two wrong classes' scores (a kink of
    # the loss max_m), and such rows flip with rounding: they count as agreeing.
    ours = predict_cs(sol.W, X, bias, labels)
    theirs, dec = liblinear_predict(model, X)
    tol = 1e-3 * max(1.0, np.abs(dec).max())
    if dec.shape[1] <= 2:
        tied = np.abs(dec[:, 0]) <= tol
    else:
        top = np.sort(dec, axis=1)
        tied = top[:, -1] - top[:, -2] <= tol
    assert np.mean((ours == theirs) | tied) >= 0.999
    assert np.mean(ours == theirs) >= 0.97
    return sol, cls, C_class


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_generated_vs_liblinear(n_classes, bias):
    X, y = make_sparse_problem(300, 40, n_classes, seed=10 + n_classes)
    sol, _, _ = compare_with_liblinear(X, y, C=1.0, bias=bias)
    # sum_m alpha_i^m = 0 for every row, so the class weight vectors sum to zero
    np.testing.assert_allclose(sol.W.sum(axis=0), 0.0, atol=1e-10)


def test_class_weights_vs_liblinear():
    X, y = make_sparse_problem(400, 30, 3, seed=7)
    compare_with_liblinear(X, y, C=0.5, bias=1.0, class_weight={1.0: 3.0, 3.0: 0.5})


def test_dna_vs_liblinear(load_shared):
    X, y = load_shared("dna.scale")
    compare_with_liblinear(X, y, C=1.0, bias=1.0)


@pytest.mark.parametrize(
    "name,rows,scale", [("letter.scale", 1500, 1.0), ("pendigits", 1500, 0.01)]
)
def test_many_classes_vs_liblinear(load_shared, name, rows, scale):
    """letter (26 classes) and pendigits (10; its 0..100 features scaled to 0..1) subsets."""
    X, y = load_shared(name)
    X = sp.csr_matrix(X[:rows] * scale)
    compare_with_liblinear(X, y[:rows], C=1.0, bias=1.0)


def test_digits_standardised_vs_liblinear():
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    Z = digits.data[:800]
    Z = (Z - Z.mean(axis=0)) / np.where(Z.std(axis=0) > 0, Z.std(axis=0), 1.0)
    compare_with_liblinear(
        sp.csr_matrix(Z), digits.target[:800].astype(np.float64), C=0.1, bias=1.0
    )


def _problem(n_classes=3, seed=3, rows=250):
    X, y = make_sparse_problem(rows, 30, n_classes, seed=seed)
    labels = label_order(y)
    return X, classes_of(y, labels), n_classes


def test_gap_shrinks_with_eps_and_shrinking_is_exact():
    X, cls, K = _problem()
    C_class = np.array([1.0, 2.0, 0.5])
    gaps = []
    for eps in (0.5, 0.1, 1e-2, 1e-4):
        sol = solve_crammer_singer(X, cls, K, C_class, 1.0, eps)
        assert sol.converged and sol.gap >= -1e-9
        gaps.append(sol.gap)
    assert gaps[-1] < gaps[0]
    assert gaps[-1] <= 1e-3
    plain = solve_crammer_singer(X, cls, K, C_class, 1.0, 1e-4, shrinking=False)
    assert plain.converged and plain.gap >= -1e-9
    assert abs(plain.primal - sol.primal) <= 1e-4 * sol.primal


def test_sample_weights_equal_repeated_rows():
    """Integer sample weights solve the same problem as repeating the rows."""
    X, cls, K = _problem(seed=5, rows=120)
    sw = np.random.default_rng(0).integers(0, 3, X.shape[0]).astype(np.float64)
    C_class = np.array([1.0, 0.7, 1.5])
    weighted = solve_crammer_singer(X, cls, K, C_class, 1.0, 1e-6, sample_weight=sw)
    rep = np.repeat(np.arange(X.shape[0]), sw.astype(int))
    repeated = solve_crammer_singer(X[rep], cls[rep], K, C_class, 1.0, 1e-6)
    assert abs(weighted.primal - repeated.primal) <= 1e-5 * repeated.primal
    # rows of weight zero never move
    assert np.all(weighted.alpha[sw == 0] == 0.0)


def test_empty_rows_and_one_class():
    X, cls, K = _problem(seed=9, rows=80)
    X = X.tolil()
    X[:5, :] = 0.0  # empty rows: without a bias, x_i = 0
    X = X.tocsr()
    sol = solve_crammer_singer(X, cls, K, np.ones(K), -1.0, 1e-6)
    assert sol.converged and 0.0 <= sol.gap <= 1e-4 * sol.primal
    one = solve_crammer_singer(X, np.zeros(X.shape[0], dtype=np.int64), 1, np.ones(1), 1.0, 0.1)
    assert one.converged and one.primal == 0.0 and not one.W.any()


def test_float32_data_and_seed_reproducible():
    X, cls, K = _problem(seed=4)
    a = solve_crammer_singer(X, cls, K, np.ones(K), 1.0, 1e-3, seed=3)
    b = solve_crammer_singer(X, cls, K, np.ones(K), 1.0, 1e-3, seed=3)
    np.testing.assert_array_equal(a.W, b.W)
    c = solve_crammer_singer(X.astype(np.float32), cls, K, np.ones(K), 1.0, 1e-3, seed=3)
    assert abs(c.primal - a.primal) <= 1e-3 * a.primal


@st.composite
def small_problems(draw):
    K = draw(st.integers(2, 5))
    rows = draw(st.integers(K, 40))
    n = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = sp.random(
        rows,
        n,
        density=draw(st.sampled_from([0.3, 0.7, 1.0])),
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.normal(size=k),
    )
    cls = rng.integers(0, K, rows)
    C_class = rng.uniform(0.1, 5.0, K)
    sw = rng.uniform(0.0, 2.0, rows) * (rng.random(rows) > 0.2)
    bias = draw(st.sampled_from([-1.0, 1.0, 0.5]))
    return X, cls, K, C_class, sw, bias, seed


@settings(deadline=None, max_examples=40)
@given(small_problems())
def test_dual_invariants(problem):
    X, cls, K, C_class, sw, bias, seed = problem
    C_rows = C_class[cls] * sw
    w_size = X.shape[1] + (1 if bias >= 0 else 0)
    duals = []

    def record(iteration, n_active, stopping, Wt, alpha):
        duals.append(cs_dual_value(X.indptr, X.indices, X.data, bias, cls, alpha.copy(), w_size))

    sol = solve_crammer_singer(
        X, cls, K, C_class, bias, 1e-3, 2000, sample_weight=sw, seed=seed, on_iteration=record
    )
    a = sol.alpha
    scale = max(1.0, C_rows.max())
    # feasibility: sum_m a_i^m = 0, 0 <= a_i^{y_i} <= C_i, a_i^m <= 0 otherwise
    np.testing.assert_allclose(a.sum(axis=1), 0.0, atol=1e-12 * scale)
    rows = np.arange(X.shape[0])
    a_y = a[rows, cls]
    # (the block solution meets the bounds exactly; a_i^{y_i} = -sum of the others is exact up
    # to rounding, as in LIBLINEAR)
    assert np.all(a_y >= -1e-12 * scale) and np.all(a_y <= C_rows)
    others = a.copy()
    others[rows, cls] = 0.0
    assert np.all(others <= 0.0)
    # W is the running sum_i x_i a_i
    Wt = cs_weights_from_dual(X.indptr, X.indices, X.data, bias, a, w_size)
    np.testing.assert_allclose(sol.W, Wt.T, atol=1e-10 * scale * max(1.0, np.abs(Wt).max()))
    # block coordinate descent: the dual never decreases
    tol = 1e-10 * max(1.0, abs(sol.primal))
    assert np.all(np.diff(duals) >= -tol)
    if duals:
        assert abs(duals[-1] - sol.dual) <= tol
    # weak duality, with the module's primal kernel
    p = cs_primal_value(
        X.indptr, X.indices, X.data, bias, cls, C_rows, np.ascontiguousarray(sol.W.T)
    )
    assert p == pytest.approx(sol.primal)
    assert sol.primal >= sol.dual - tol


def test_progress_callback_does_not_change_the_result():
    X, cls, K = _problem(seed=6)
    calls = []
    a = solve_crammer_singer(X, cls, K, np.ones(K), 1.0, 1e-3, seed=2)
    b = solve_crammer_singer(
        X,
        cls,
        K,
        np.ones(K),
        1.0,
        1e-3,
        seed=2,
        on_iteration=lambda it, n, stop, W, alpha: calls.append(it),
    )
    np.testing.assert_array_equal(a.W, b.W)
    assert a.n_iter == b.n_iter == len(calls) and calls == list(range(1, a.n_iter + 1))
