"""The Crammer-Singer solver (-s 4): against liblinear-official, and its dual's invariants."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_predict, liblinear_train, liblinear_weights, make_sparse_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.solvers import SOLVERS, Subproblem
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from linsvm.solvers.crammer_singer import (
    STATE_KEYS,
    cs_dual_value,
    cs_objectives,
    cs_primal_value,
    cs_weights_from_dual,
    solve_crammer_singer,
)

LIBLINEAR_MAX_ITER = 100000  # Solver_MCSVM_CS's cap in LIBLINEAR 2.50


def cs_sub(
    X, cls, K, C_class, bias, eps=0.1, max_iter=LIBLINEAR_MAX_ITER, *, sample_weight=None,
    seed=1, shrinking=True, alpha0=None,
) -> Subproblem:  # fmt: skip
    """The Subproblem training builds for -s 4: y the class index, C_i = C_class[y_i] x sw_i."""
    C_class = np.asarray(C_class, dtype=np.float64)
    C = C_class[cls] if sample_weight is None else C_class[cls] * sample_weight
    return Subproblem(
        X, np.asarray(cls, dtype=np.float64), C, eps, max_iter, bias=bias, seed=seed,
        alpha0=alpha0, options={"n_classes": K, "shrinking": shrinking},
    )  # fmt: skip


def solve(X, cls, K, C_class, bias, eps=0.1, max_iter=LIBLINEAR_MAX_ITER, *, hook=None, **kw):
    return solve_crammer_singer(cs_sub(X, cls, K, C_class, bias, eps, max_iter, **kw), hook)


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
    sol = solve(X, cls, len(labels), C_class, bias, eps, seed=seed)
    assert sol.converged and sol.stop_reason == CONVERGED and sol.solver == 4
    assert sol.w.shape == (len(labels), X.shape[1] + (1 if bias >= 0 else 0))

    W_ll = liblinear_weights(model)
    p_ll, _, _ = cs_objectives(X, bias, cls, C_class[cls], W_ll, sol.alpha)
    assert abs(sol.primal - p_ll) <= 1e-4 * abs(p_ll), (sol.primal, p_ll)
    # weak duality, and a gap that the tight eps has closed
    assert sol.primal - sol.dual >= -1e-9 * abs(sol.primal)
    assert sol.primal - sol.dual <= 1e-4 * abs(sol.primal)
    assert sol.dual <= p_ll + 1e-9 * abs(p_ll)

    # Crammer-Singer optima often have exact ties between two wrong classes' scores (a kink of
    # the loss max_m), and such rows flip with rounding: they count as agreeing.
    ours = predict_cs(sol.w, X, bias, labels)
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
    np.testing.assert_allclose(sol.w.sum(axis=0), 0.0, atol=1e-10)


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
        sol = solve(X, cls, K, C_class, 1.0, eps)
        assert sol.converged and sol.gap >= -1e-9
        gaps.append(sol.gap)
    assert gaps[-1] < gaps[0]
    assert gaps[-1] <= 1e-3
    plain = solve(X, cls, K, C_class, 1.0, 1e-4, shrinking=False)
    assert plain.converged and plain.gap >= -1e-9
    assert abs(plain.primal - sol.primal) <= 1e-4 * sol.primal


def test_sample_weights_equal_repeated_rows():
    """Integer sample weights solve the same problem as repeating the rows."""
    X, cls, K = _problem(seed=5, rows=120)
    sw = np.random.default_rng(0).integers(0, 3, X.shape[0]).astype(np.float64)
    C_class = np.array([1.0, 0.7, 1.5])
    weighted = solve(X, cls, K, C_class, 1.0, 1e-6, sample_weight=sw)
    rep = np.repeat(np.arange(X.shape[0]), sw.astype(int))
    repeated = solve(X[rep], cls[rep], K, C_class, 1.0, 1e-6)
    assert abs(weighted.primal - repeated.primal) <= 1e-5 * repeated.primal
    # rows of weight zero never move
    assert np.all(weighted.alpha[sw == 0] == 0.0)


def test_empty_rows_and_one_class():
    X, cls, K = _problem(seed=9, rows=80)
    X = X.tolil()
    X[:5, :] = 0.0  # empty rows: without a bias, x_i = 0
    X = X.tocsr()
    sol = solve(X, cls, K, np.ones(K), -1.0, 1e-6)
    assert sol.converged and 0.0 <= sol.gap <= 1e-4 * sol.primal
    one = solve(X, np.zeros(X.shape[0], dtype=np.int64), 1, np.ones(1), 1.0, 0.1)
    assert one.converged and one.primal == 0.0 and not one.w.any()
    assert one.n_iter == 0 and one.w.shape == (1, X.shape[1] + 1)


def test_float32_data_and_seed_reproducible():
    X, cls, K = _problem(seed=4)
    a = solve(X, cls, K, np.ones(K), 1.0, 1e-3, seed=3)
    b = solve(X, cls, K, np.ones(K), 1.0, 1e-3, seed=3)
    np.testing.assert_array_equal(a.w, b.w)
    c = solve(X.astype(np.float32), cls, K, np.ones(K), 1.0, 1e-3, seed=3)
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

    def record(progress):
        alpha = progress.alpha.copy()
        duals.append(cs_dual_value(X.indptr, X.indices, X.data, bias, cls, alpha, w_size))

    sol = solve(X, cls, K, C_class, bias, 1e-3, 2000, sample_weight=sw, seed=seed, hook=record)
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
    np.testing.assert_allclose(sol.w, Wt.T, atol=1e-10 * scale * max(1.0, np.abs(Wt).max()))
    # block coordinate descent: the dual never decreases
    tol = 1e-10 * max(1.0, abs(sol.primal))
    assert np.all(np.diff(duals) >= -tol)
    if duals:
        assert abs(duals[-1] - sol.dual) <= tol
    # weak duality, with the module's primal kernel
    p = cs_primal_value(
        X.indptr, X.indices, X.data, bias, cls, C_rows, np.ascontiguousarray(sol.w.T)
    )
    assert p == pytest.approx(sol.primal)
    assert sol.primal >= sol.dual - tol


def test_progress_callback_does_not_change_the_result():
    X, cls, K = _problem(seed=6)
    calls = []
    a = solve(X, cls, K, np.ones(K), 1.0, 1e-3, seed=2)

    def hook(progress):
        assert progress.solver == 4 and progress.w.shape == (K, X.shape[1] + 1)
        assert progress.measure == progress.figures["stopping"]
        calls.append(progress.iteration)

    b = solve(X, cls, K, np.ones(K), 1.0, 1e-3, seed=2, hook=hook)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert a.n_iter == b.n_iter == len(calls) and calls == list(range(1, a.n_iter + 1))


def test_batched_hook_does_not_change_the_result():
    """A hook that does not want every iteration gets batches; the model is the same."""
    X, cls, K = _problem(seed=6)
    a = solve(X, cls, K, np.ones(K), 1.0, 1e-4, seed=2)
    calls = []

    def hook(progress):
        calls.append(progress.iteration)

    hook.every_iteration = False
    b = solve(X, cls, K, np.ones(K), 1.0, 1e-4, seed=2, hook=hook)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert a.n_iter == b.n_iter and 1 <= len(calls) <= a.n_iter and calls[-1] == a.n_iter


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("stop_at", [1, 7, 40])
def test_interrupt_and_resume_is_exact(shrinking, stop_at):
    """Stopped at iteration k (hook returns False) and resumed from the captured state: the
    same w and alpha, bit for bit, as an uninterrupted run with the same seed."""
    X, cls, K = _problem(n_classes=4, seed=8, rows=300)
    sw = np.random.default_rng(1).uniform(0.0, 2.0, X.shape[0])
    sub = cs_sub(X, cls, K, [1.0, 2.0, 0.5, 1.5], 1.0, 1e-5, sample_weight=sw, seed=4,
                 shrinking=shrinking)  # fmt: skip
    full = solve_crammer_singer(sub)
    assert full.converged and full.n_iter > stop_at
    saved = {}

    def stop(progress):
        if progress.iteration == stop_at:
            saved.update(progress.state())
            return False
        return None

    cut = solve_crammer_singer(sub, stop)
    assert cut.stop_reason == INTERRUPTED and not cut.converged and cut.n_iter == stop_at
    assert set(saved) == set(STATE_KEYS)
    # the interrupted iterate's objectives are its own
    p, d, g = cs_objectives(X, 1.0, cls, sub.C, cut.w, cut.alpha)
    assert (cut.primal, cut.dual) == (p, d) and cut.gap == pytest.approx(g)
    resumed = solve_crammer_singer(sub.but(resume=saved))
    assert resumed.stop_reason == CONVERGED and resumed.n_iter == full.n_iter
    np.testing.assert_array_equal(resumed.w, full.w)
    np.testing.assert_array_equal(resumed.alpha, full.alpha)
    assert resumed.primal == full.primal and resumed.dual == full.dual


def test_max_iter_and_figures():
    X, cls, K = _problem(seed=6)
    sol = solve(X, cls, K, np.full(K, 100.0), 1.0, 1e-8, max_iter=3)
    assert sol.n_iter == 3 and not sol.converged and sol.stop_reason == MAX_ITER
    assert sol.figures["stopping"] > 1e-8 and sol.figures["n_active"] > 0
    assert sol.figures["n_sv"] == np.count_nonzero(np.any(sol.alpha != 0, axis=1))
    assert SOLVERS[4].solve is solve_crammer_singer


def test_class_index_as_int_or_float_and_errors():
    X, cls, K = _problem(seed=6)
    sub = cs_sub(X, cls, K, np.ones(K), 1.0, 1e-3)
    a = solve_crammer_singer(sub)
    b = solve_crammer_singer(sub.but(y=cls.astype(np.int32)))
    np.testing.assert_array_equal(a.w, b.w)
    for bad in ({"n_classes": None}, {"n_classes": 0}):
        with pytest.raises(InvalidInputError, match="n_classes"):
            solve_crammer_singer(sub.but(options=bad))
    with pytest.raises(InvalidInputError, match="class indices"):
        solve_crammer_singer(sub.but(y=cls + 0.5))
    with pytest.raises(InvalidInputError, match="class indices"):
        solve_crammer_singer(sub.but(options={"n_classes": K - 1}))
    with pytest.raises(InvalidInputError, match="C_i"):
        solve_crammer_singer(sub.but(C=-sub.C))
    with pytest.raises(InvalidInputError, match="alpha0"):
        solve_crammer_singer(sub.but(alpha0=np.zeros((X.shape[0], K + 1))))


def test_a_feature_of_huge_values_gives_no_worse_than_zero():
    """Values of 1e10 and more make ||x_i||^2 so large that the block solve's answer is its
    rounding: such steps are left out of W, so W stays feasible (sum_m w_m = 0) and the model no
    worse than W = 0 (it was worse by a factor 17 at 1e10)."""
    import warnings

    import linsvm

    rng = np.random.default_rng(1)
    f = rng.normal(size=(40, 2))
    y = np.where(f[:, 0] + 0.5 * f[:, 1] > 0, 1.0, -1.0)
    for scale in (1e10, 1e30):
        X = sp.csr_matrix(np.c_[f[:, 0] * scale, f[:, 1]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = linsvm.train(X, y, solver=4, max_iter=2000)
        r = model.results_[0]
        assert np.abs(model.coef_.sum(axis=0)).max() <= 1e-12 * max(np.abs(model.coef_).max(), 1)
        assert r.primal <= 40.0 * (1 + 1e-12)  # P(0) = sum_i C_i = 40


@pytest.mark.parametrize("seed", range(4))
def test_a_tiny_last_step_puts_alpha_on_its_bound(seed):
    # the true class's alpha a rounding short of C_i: its last step (1e-16) must still be taken
    # in alpha, or the row is never shrunk, its gradient spread counted in every outer
    # iteration, and the solve ran to its 100000-iteration cap (LIBLINEAR: 61 iterations)
    import linsvm

    x = [0, 0, -0.5, 0, 0, 0, 0, 0, 0, 0, 0, -0.25, -0.25, -0.75, 0, 0, 0]
    y = [1, -1, 1, -1, -1, 1, 1, -1, -1, -1, 1, -1, 1, -1, 1, 1, -1]
    X = np.array(x).reshape(-1, 1)
    r = linsvm.train(X, np.array(y), solver=4, C=1.0, bias=1.0, seed=seed).results_[0]
    assert r.converged and r.n_iter < 1000
    # (LIBLINEAR's primal at the default eps: 16.2692; the stalled runs ended at 16.94)
    assert r.primal <= 16.2692 * 1.01 and r.gap <= 0.1 * r.primal


@pytest.mark.parametrize("C", [1e5, 1e6])
def test_large_c_keeps_w_and_alpha_together(C):
    # a change of alpha left out of W below 1e-12 C_i (not LIBLINEAR's 1e-12) dropped real
    # steps at large C: W and alpha drifted apart and the solve ran to its cap with a dual
    # below its start's (LIBLINEAR: 122 iterations to the optimum 0.25 on these two rows)
    import linsvm

    X, y = np.array([[1.0], [-1.0]]), np.array([1, -1])
    r = linsvm.train(X, y, solver=4, C=C, bias=5.0, eps=1e-6).results_[0]
    assert r.converged and r.n_iter < 1000
    assert abs(r.dual - 0.25) <= 1e-6
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(2, 5)) * 6.0
    k = rng.integers(0, 2, 60)
    X = centres[k] + rng.normal(size=(60, 5))
    r = linsvm.train(X, np.where(k == 0, 1, -1), solver=4, C=C, bias=1.0, eps=1e-4).results_[0]
    # (LIBLINEAR: 78 iterations to the dual 0.0647)
    assert r.converged and r.n_iter < 1000 and abs(r.dual - 0.0647) <= 1e-3
