"""The L1-regularised solvers (-s 5, -s 6) against LIBLINEAR and on their own properties.

- liblinear-official 2.50 at -e 1e-6 (1e-5 for -s 5 on the real sets, where LIBLINEAR needs
  hundreds of outer iterations; its iteration caps are checked not to be hit) on generated
  sparse data, heart_scale, a subset of a9a, breast_cancer standardised; bias -1 and 1, -R,
  class weights as per-row C: P(w) within REL_TOL of LIBLINEAR's (both scored by
  ``l1_primal_value`` on the same sub-problem; the L1 optimum need not be unique, so weights
  and predictions are not compared), similar numbers of non-zeros.
- scikit-learn's bundled LIBLINEAR for per-sample weights (LIBLINEAR proper has none).
- properties (hypothesis, small problems): P(w) never increases over outer / Newton
  iterations, the stopping rule holds at the end, C_i = 0 drops the row, -R never raises P*.
- the solver interface: a hook that never stops (every iteration or batches) changes nothing;
  stopped at iteration k and resumed from ``Progress.state()``, the run ends bit for bit where
  an uninterrupted one does (also after a warm start and with -R); stop reasons and figures.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import (
    liblinear_train,
    liblinear_weights,
    make_sparse_problem,
    sklearn_l1_logistic,
    subproblems,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS as REGISTRY
from linsvm.solvers import Solution, Subproblem, solver_tolerance
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from linsvm.solvers.l1 import (
    L2SVC_MAX_ITER,
    LR_MAX_NEWTON_ITER,
    l1_primal_value,
    solve_l1r_l2svc,
    solve_l1r_lr,
)

TIGHT_EPS = 1e-6
# -s 5 on real data with a bias: LIBLINEAR needs hundreds of outer iterations at 1e-6 and hits
# its 1000 cap beyond; 1e-5 keeps it under the cap with a margin
L2SVC_REAL_EPS = 1e-5
REL_TOL = 1e-6  # on P(w), relative to |P*| (the brief asks 1e-4; observed: 5e-9 at worst)

SOLVERS = {5: (solve_l1r_l2svc, LOSS_SQUARED_HINGE, L2SVC_MAX_ITER),
           6: (solve_l1r_lr, LOSS_LOGISTIC, LR_MAX_NEWTON_ITER)}  # fmt: skip


def subproblem(X, y, C, bias, eps, max_iter, *, regularize_bias=True, seed=1, w0=None,
               resume=None, **options) -> Subproblem:  # fmt: skip
    return Subproblem(linsvm.data.as_csr(X), y, C, eps, max_iter, bias=bias,
                      regularize_bias=regularize_bias, seed=seed, w0=w0, resume=resume,
                      options=options)  # fmt: skip


def solve(solver, X, y, C, bias, eps, max_iter=None, *, hook=None, **kw) -> Solution:
    """Solver 5 or 6 on one binary problem (``kw``: regularize_bias, seed, w0, options)."""
    fn, _, cap = SOLVERS[solver]
    return fn(subproblem(X, y, C, bias, eps, cap if max_iter is None else max_iter, **kw), hook)


def l2svc(*args, **kw) -> Solution:
    return solve(5, *args, **kw)


def l1lr(*args, **kw) -> Solution:
    return solve(6, *args, **kw)


def primal_tolerance(eps, y) -> float:
    return solver_tolerance(REGISTRY[5], eps, y)


def l1_objective(X, bias, y_pm1, c_rows, w, loss, regularize_bias=True) -> float:
    X = linsvm.data.as_csr(X)
    return float(
        l1_primal_value(X.indptr, X.indices, X.data, float(bias),
                        np.asarray(y_pm1, dtype=np.float64), np.asarray(c_rows, dtype=np.float64),
                        np.ascontiguousarray(w, dtype=np.float64), loss, regularize_bias)
    )  # fmt: skip


def _weight_options(class_weight) -> str:
    return "".join(f" -w{int(lab)} {wt:.17g}" for lab, wt in (class_weight or {}).items())


def compare_with_liblinear(X, y, solver, C, bias, *, regularize_bias=True, class_weight=None,
                           eps=TIGHT_EPS, seed=1):  # fmt: skip
    """Solve the binary problem with both; assert equal optima. Returns (ours, P_liblinear)."""
    _, loss, cap = SOLVERS[solver]
    X = linsvm.data.as_csr(X)
    opts = f"-s {solver} -c {C:.17g} -e {eps:.17g}" + _weight_options(class_weight)
    if not regularize_bias:
        opts += " -R"
    model, iterations = liblinear_train(y, X, opts, bias)
    assert iterations and iterations[0] < cap, f"LIBLINEAR hit its cap: {iterations}"
    labels = model.get_labels()
    assert len(labels) == 2
    ((y_pm1, c_rows),) = subproblems(y, labels, C, class_weight)
    w_ll = np.zeros(X.shape[1] + (1 if bias >= 0 else 0))
    W = liblinear_weights(model)[0]
    m = min(model.nr_feature, X.shape[1])
    w_ll[:m] = W[:m]
    if bias >= 0:
        w_ll[-1] = W[-1]
    p_ll = l1_objective(X, bias, y_pm1, c_rows, w_ll, loss, regularize_bias)

    tol = primal_tolerance(eps, y_pm1)
    sol = solve(solver, X, y_pm1, c_rows, bias, tol, regularize_bias=regularize_bias, seed=seed)
    f = sol.figures
    assert sol.converged and sol.stop_reason == CONVERGED, sol
    assert f["stop_measure"] <= tol * f["stop_measure0"]
    assert f["stop_ratio"] == f["stop_measure"] / f["stop_measure0"]
    assert math.isnan(sol.dual) and sol.solver == solver
    p = l1_objective(X, bias, y_pm1, c_rows, sol.w, loss, regularize_bias)
    assert p == pytest.approx(sol.primal, rel=1e-12)
    assert abs(p - p_ll) <= REL_TOL * abs(p_ll), (p, p_ll)
    nnz_ll = int(np.count_nonzero(w_ll))
    assert abs(f["nnz_w"] - nnz_ll) <= max(2, 0.05 * nnz_ll), (f["nnz_w"], nnz_ll)
    return sol, p_ll


def _breast_cancer():
    datasets = pytest.importorskip("sklearn.datasets")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    data = datasets.load_breast_cancer()
    X = preprocessing.StandardScaler().fit_transform(data.data)
    return sp.csr_matrix(X), data.target.astype(np.float64)


# ----------------------------------------------------------------------------- LIBLINEAR oracle


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias, regularize_bias", [(-1.0, True), (1.0, True), (1.0, False)])
@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 4.0), (2, 0.5)])
def test_generated_sparse(solver, bias, regularize_bias, seed, C):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = make_sparse_problem(300, 80, density=0.1, seed=seed)
    compare_with_liblinear(X, y, solver, C, bias, regularize_bias=regularize_bias)


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias, regularize_bias", [(-1.0, True), (1.0, True), (1.0, False)])
def test_heart_scale(load_shared, solver, bias, regularize_bias):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = load_shared("heart_scale")
    compare_with_liblinear(X, y, solver, 1.0, bias, regularize_bias=regularize_bias)


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_heart_scale_class_weights(load_shared, solver, bias):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = load_shared("heart_scale")
    compare_with_liblinear(X, y, solver, 0.5, bias, class_weight={1: 2.0, -1: 0.5})
    compare_with_liblinear(X, y, solver, 0.5, bias, class_weight={-1: 3.0})


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias, regularize_bias", [(-1.0, True), (1.0, False)])
def test_breast_cancer_standardised(solver, bias, regularize_bias):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = _breast_cancer()
    # -s 5 converges slowly here: LIBLINEAR needs 350-600 outer iterations at C = 0.1
    compare_with_liblinear(
        X,
        y,
        solver,
        0.1,
        bias,
        regularize_bias=regularize_bias,
        eps=L2SVC_REAL_EPS if solver == 5 else TIGHT_EPS,
    )


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_a9a_subset(load_shared, solver, bias):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = load_shared("a9a")
    X, y = X[:4000], y[:4000]
    # at C >= 0.05 LIBLINEAR's -s 5 hits its 1000-iteration cap even at -e 1e-5
    compare_with_liblinear(
        X, y, solver, 0.03, bias, eps=L2SVC_REAL_EPS if solver == 5 else TIGHT_EPS
    )


@pytest.mark.parametrize("solver", [5, 6])
def test_default_eps_close_to_liblinear(load_shared, solver):
    """At LIBLINEAR's default eps (0.01) both stop early; the objectives still agree to ~1e-3."""
    pytest.importorskip("liblinear.liblinearutil")
    X, y = load_shared("heart_scale")
    _, loss, _ = SOLVERS[solver]
    model, _ = liblinear_train(y, X, f"-s {solver} -c 1 -e 0.01", 1.0)
    ((y_pm1, c_rows),) = subproblems(y, model.get_labels(), 1.0)
    p_ll = l1_objective(X, 1.0, y_pm1, c_rows, liblinear_weights(model)[0], loss)
    p_star = solve(solver, X, y_pm1, c_rows, 1.0, 1e-9).primal
    sol = solve(solver, X, y_pm1, c_rows, 1.0, primal_tolerance(0.01, y_pm1))
    assert sol.converged
    assert (sol.primal - p_star) <= max(10 * (p_ll - p_star), 1e-3 * p_star)


@pytest.mark.parametrize("solver", [5, 6])
def test_sample_weights_against_sklearn(solver):
    """Per-row C from sample weights, against scikit-learn's bundled LIBLINEAR (no bias)."""
    svm = pytest.importorskip("sklearn.svm")
    lm = pytest.importorskip("sklearn.linear_model")
    X, y = make_sparse_problem(200, 30, density=0.2, seed=7)
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=y.shape[0])
    C = 2.0
    if solver == 5:
        est = svm.LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C, tol=1e-8,
                            fit_intercept=False, max_iter=1000)  # fmt: skip
    else:
        est = lm.LogisticRegression(**sklearn_l1_logistic(), solver="liblinear", C=C, tol=1e-8,
                                    fit_intercept=False, max_iter=100)  # fmt: skip
    est.fit(X, y, sample_weight=sw)
    _, loss, _ = SOLVERS[solver]
    # scikit-learn's positive class is its classes_[1]
    y_pm1 = np.where(y == est.classes_[1], 1.0, -1.0)
    c_rows = C * sw
    w_sk = est.coef_.ravel()
    p_sk = l1_objective(X, -1.0, y_pm1, c_rows, w_sk, loss)
    sol = solve(solver, X, y_pm1, c_rows, -1.0, primal_tolerance(1e-8, y_pm1))
    assert sol.converged
    assert abs(sol.primal - p_sk) <= REL_TOL * p_sk, (sol.primal, p_sk)


# ----------------------------------------------------------------------------- behaviour


@pytest.mark.parametrize("solver", [5, 6])
def test_zero_cost_rows_are_dropped(solver):
    X, y = make_sparse_problem(120, 20, seed=4)
    y_pm1 = np.where(y > 0, 1.0, -1.0)
    C = np.full(y.shape[0], 1.5)
    C[::3] = 0.0
    keep = C > 0
    a = solve(solver, X, y_pm1, C, 1.0, 1e-9)
    b = solve(solver, X[keep], y_pm1[keep], C[keep], 1.0, 1e-9)
    assert a.primal == pytest.approx(b.primal, rel=1e-9)
    np.testing.assert_allclose(a.w, b.w, atol=1e-6)


@pytest.mark.parametrize("solver", [5, 6])
def test_tiny_cost_gives_zero_weights(solver):
    """When |grad| <= 1 at w = 0 for every feature, w = 0 is optimal and found at once."""
    X, y = make_sparse_problem(60, 10, seed=5)
    y_pm1 = np.where(y > 0, 1.0, -1.0)
    sol = solve(solver, X, y_pm1, np.full(y.shape[0], 1e-4), 1.0, 0.01)
    assert sol.converged and sol.figures["nnz_w"] == 0 and sol.figures["stop_measure0"] == 0.0
    assert sol.figures["stop_ratio"] == 0.0 and sol.stop_reason == CONVERGED


def test_logistic_large_margins_stay_finite():
    """exp(w'x) overflows in LIBLINEAR's formulation; the margins form here does not."""
    X, y = make_sparse_problem(150, 20, seed=6, noise=0.0)
    X = X * 1e3
    y_pm1 = np.where(y > 0, 1.0, -1.0)
    sol = l1lr(X, y_pm1, np.full(y.shape[0], 1e3), 1.0, 1e-6)
    history = sol.figures["history"]
    assert np.all(np.isfinite(sol.w)) and np.isfinite(sol.primal)
    assert np.all(np.diff(history) <= 1e-12 * np.abs(history[:-1]) + 1e-12)


def test_invalid_inputs():
    X, y = make_sparse_problem(20, 5, seed=0)
    C = np.ones(20)
    with pytest.raises(linsvm.errors.InvalidInputError):
        l1lr(X, y, C, -1.0, 0.01, regularize_bias=False)
    with pytest.raises(linsvm.errors.InvalidInputError):
        l2svc(X, y, C, 1.0, -0.01)  # (0: no stopping rule, accepted)
    for solver in (5, 6):
        with pytest.raises(linsvm.errors.InvalidInputError):
            solve(solver, X, y, C, 1.0, 0.01, w0=np.zeros(3))
        with pytest.raises(linsvm.errors.InvalidInputError):
            solve(solver, X, y, C, 1.0, 0.01, max_iter=-1)


# ----------------------------------------------------------------------------- properties


@st.composite
def small_problems(draw):
    n_rows = draw(st.integers(2, 60))
    n_features = draw(st.integers(1, 25))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.1, 0.3, 1.0]))
    scale = draw(st.sampled_from([0.3, 1.0, 5.0]))
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(0.0, scale, k))  # fmt: skip
    y = np.where(rng.random(n_rows) < draw(st.sampled_from([0.1, 0.5])), 1.0, -1.0)
    C = draw(st.sampled_from([0.01, 0.5, 3.0, 50.0])) * rng.uniform(0.1, 2.0, n_rows)
    C[rng.random(n_rows) < 0.1] = 0.0
    bias = draw(st.sampled_from([-1.0, 0.5, 1.0]))
    reg = draw(st.booleans()) if bias >= 0 else True
    return X, y, C, bias, reg, seed


@settings(deadline=None, max_examples=40)
@given(small_problems(), st.sampled_from([1e-2, 1e-4]))
def test_l2svc_monotone_and_stops(problem, eps):
    X, y, C, bias, reg, seed = problem
    sol = l2svc(X, y, C, bias, eps, regularize_bias=reg, seed=seed, record_history=True)
    f = sol.figures
    h = f["history"]
    assert h.shape[0] == sol.n_iter
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1]) + 1e-12), h
    p0 = float(np.sum(C))  # P(0): every b_i = 1
    assert sol.primal <= p0 * (1 + 1e-12) + 1e-12
    if sol.n_iter:
        assert h[-1] == pytest.approx(sol.primal, rel=1e-8, abs=1e-10)
    assert sol.converged == (f["stop_measure"] <= eps * f["stop_measure0"])
    assert sol.converged or (sol.n_iter == L2SVC_MAX_ITER and sol.stop_reason == MAX_ITER)


@settings(deadline=None, max_examples=40)
@given(small_problems(), st.sampled_from([1e-2, 1e-4]))
def test_l1r_lr_monotone_and_stops(problem, eps):
    X, y, C, bias, reg, seed = problem
    sol = l1lr(X, y, C, bias, eps, regularize_bias=reg, seed=seed)
    f = sol.figures
    h = f["history"]
    assert h.shape[0] == sol.n_iter + 1
    assert h[0] == pytest.approx(np.log(2.0) * np.sum(C), rel=1e-12)
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1]) + 1e-12), h
    assert h[-1] == pytest.approx(sol.primal, rel=1e-8, abs=1e-10)
    assert sol.converged == (f["stop_measure"] <= eps * f["stop_measure0"])
    assert sol.converged or (sol.n_iter == LR_MAX_NEWTON_ITER and sol.stop_reason == MAX_ITER)
    if sol.converged:
        # at the returned w (the Newton stop is checked at a fixed w): recomputed measure agrees
        assert f["final_violation"] <= eps * f["stop_measure0"] * (1 + 1e-6) + 1e-12


@settings(deadline=None, max_examples=15)
@given(small_problems())
def test_unregularised_bias_never_raises_the_optimum(problem):
    X, y, C, _, _, seed = problem
    for solver in (5, 6):
        # beyond LIBLINEAR's caps: -s 5 can need thousands of outer iterations at 1e-8 here
        reg = solve(solver, X, y, C, 1.0, 1e-8, 50_000, seed=seed)
        free = solve(solver, X, y, C, 1.0, 1e-8, 50_000, regularize_bias=False, seed=seed)
        assert free.primal <= reg.primal * (1 + 1e-5) + 1e-9


@pytest.mark.parametrize("solver", [5, 6])
def test_labels_other_than_plus_minus_one(solver):
    # y > 0 is positive, whatever the values (0/1, 1/2 ...): the same problem as +1/-1
    X, y = make_sparse_problem(n_rows=120, n_features=10, seed=21)
    C = np.ones(y.shape[0])
    ref = solve(solver, X, np.where(y > 0, 1.0, -1.0), C, 1.0, 0.01)
    for labels in ((1.0, 0.0), (2.0, -3.0)):
        sol = solve(solver, X, np.where(y > 0, *labels), C, 1.0, 0.01)
        np.testing.assert_array_equal(sol.w, ref.w)
        assert sol.primal == ref.primal
    with pytest.raises(linsvm.errors.InvalidInputError, match="C must be finite and >= 0"):
        solve(solver, X, y, -C, 1.0, 0.01)


# ----------------------------------------------------------------------------- the interface


class Recorder:
    """A hook keeping (iteration, measure, figures, w) of each call; at iteration ``stop_at``
    it captures the state and asks to stop. ``every=False``: batches of iterations are enough."""

    def __init__(self, stop_at=None, every=True):
        self.seen = []
        self.state = None
        self.objectives = None
        self.stop_at = stop_at
        if not every:
            self.every_iteration = False

    def __call__(self, progress):
        self.seen.append((progress.iteration, progress.measure, dict(progress.figures),
                          progress.w.copy()))  # fmt: skip
        if self.objectives is None:
            self.objectives = (progress.w.copy(), progress.objectives())
        if self.stop_at is not None and progress.iteration >= self.stop_at:
            self.state = progress.state()
            return False
        return None


def _interface_problem(seed=11):
    X, y = make_sparse_problem(250, 40, density=0.15, seed=seed)
    y = np.where(y > 0, 1.0, -1.0)
    C = np.random.default_rng(seed).uniform(0.5, 3.0, y.shape[0])
    C[::11] = 0.0
    return X, y, C


def _same_solution(a: Solution, b: Solution) -> None:
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
    assert a.primal == b.primal
    for name in ("stop_measure", "stop_measure0", "n_line_search_failures", "nnz_w"):
        assert a.figures[name] == b.figures[name], name
    if "history" in a.figures:
        np.testing.assert_array_equal(a.figures["history"], b.figures["history"])
    assert a.figures.get("n_inner_iter") == b.figures.get("n_inner_iter")


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias, reg", [(-1.0, True), (1.0, False)])
def test_hook_changes_nothing(solver, bias, reg):
    X, y, C = _interface_problem()
    kw = dict(regularize_bias=reg, seed=3, record_history=True)
    plain = solve(solver, X, y, C, bias, 1e-5, **kw)
    assert plain.converged and plain.n_iter >= 3
    for every in (True, False):
        hook = Recorder(every=every)
        sol = solve(solver, X, y, C, bias, 1e-5, hook=hook, **kw)
        _same_solution(sol, plain)
        iterations = [s[0] for s in hook.seen]
        assert iterations[-1] == plain.n_iter
        if every:
            assert iterations == list(range(1, plain.n_iter + 1))
        # the last report: the final w and the stopping rule's measure, relative to its start
        np.testing.assert_array_equal(hook.seen[-1][3], plain.w)
        assert hook.seen[-1][1] == plain.figures["stop_ratio"] <= 1e-5
        assert hook.seen[-1][2]["n_active"] >= 1
        w, (primal, dual) = hook.objectives
        _, loss, _ = SOLVERS[solver]
        assert primal == pytest.approx(l1_objective(X, bias, y, C, w, loss, reg), rel=1e-12)
        assert math.isnan(dual)


@pytest.mark.parametrize("solver", [5, 6])
@pytest.mark.parametrize("bias, reg, warm", [(-1.0, True, False), (1.0, False, False),
                                             (1.0, True, True)])  # fmt: skip
def test_interrupt_and_resume_is_exact(solver, bias, reg, warm):
    X, y, C = _interface_problem(12)
    w0 = None
    if warm:
        w0 = solve(solver, X, y, 0.3 * C, bias, 1e-3, regularize_bias=reg).w
    kw = dict(regularize_bias=reg, seed=5, w0=w0, record_history=True)
    full = solve(solver, X, y, C, bias, 1e-6, **kw)
    assert full.converged and full.n_iter >= 4
    for k in (1, 2, full.n_iter - 1):
        hook = Recorder(stop_at=k)
        part = solve(solver, X, y, C, bias, 1e-6, hook=hook, **kw)
        assert part.stop_reason == INTERRUPTED and not part.converged and part.n_iter == k
        np.testing.assert_array_equal(part.w, hook.seen[-1][3])
        assert part.primal == pytest.approx(
            l1_objective(X, bias, y, C, part.w, SOLVERS[solver][1], reg), rel=1e-12
        )
        assert all(isinstance(v, np.ndarray) for v in hook.state.values())
        resumed = solve(solver, X, y, C, bias, 1e-6, resume=hook.state, **kw)
        _same_solution(resumed, full)
    # a state cut short is a one-line error
    state = dict(hook.state)
    state.pop("w")
    with pytest.raises(linsvm.errors.InvalidInputError):
        solve(solver, X, y, C, bias, 1e-6, resume=state, **kw)


@pytest.mark.parametrize("solver", [5, 6])
def test_cap_is_max_iter(solver):
    X, y, C = _interface_problem(13)
    sol = solve(solver, X, y, C, 1.0, 1e-12, max_iter=2)
    assert sol.n_iter == 2 and not sol.converged and sol.stop_reason == MAX_ITER
    assert sol.figures["stop_ratio"] > 1e-12 and sol.solver == solver
    assert sol.alpha is None and math.isnan(sol.gap)
    # a stop asked at the cap, or once converged, leaves a complete run: not "interrupted"
    late = solve(solver, X, y, C, 1.0, 1e-12, max_iter=2, hook=Recorder(stop_at=2))
    assert late.stop_reason == MAX_ITER
    np.testing.assert_array_equal(late.w, sol.w)
    done = solve(solver, X, y, C, 1.0, 1e-3)
    late = solve(solver, X, y, C, 1.0, 1e-3, hook=Recorder(stop_at=done.n_iter))
    assert late.stop_reason == CONVERGED and late.converged
