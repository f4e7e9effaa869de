"""The primal Newton solver (-s 0 logistic regression, -s 2 L2-loss SVM) against oracles.

- liblinear-official 2.50 (whose ``newton.cpp`` the solver follows): at -e 1e-6 the primal value
  is within 1e-6 relative of LIBLINEAR's (both weight vectors scored with
  ``linsvm.objective.primal_value``) and the predictions agree on >= 99.9% of rows, on
  generated sparse data, shared real data and scikit-learn's standardised breast_cancer; with
  the bias unregularised (-R -B 1) too; with class weights (per-row C).
- at LIBLINEAR's default -e 0.01 the Newton iteration count is close to LIBLINEAR's (parsed
  from its ``iter N`` progress lines).
- float32 and float64 input, int32 and int64 indices agree; rows with C_i = 0 are dropped.
- properties (hypothesis): the objective never increases across Newton iterations, the
  reported gradient norm is the true one, the stopping rule ||g|| <= eps ||g(0)|| holds at
  the end and not before.
- the interface: the dual point and bound of the Solution, the hook (iteration 0, then every
  Newton iteration; LIBLINEAR's progress lines from its figures), interrupting and resuming
  from ``Progress.state()`` to exactly the uninterrupted result, a hook that never stops
  changing nothing.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_primal, liblinear_weights, make_sparse_problem, primal_of, rel_diff
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.objective import (
    LOSS_HINGE,
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    lr_dual_point,
    lr_objectives,
    squared_hinge_dual_point,
    svm_objectives,
)
from linsvm.solvers import SOLVERS, solver_tolerance
from linsvm.solvers._base import (
    CONVERGED,
    INTERRUPTED,
    LINE_SEARCH_FAILED,
    MAX_ITER,
    SMALL_REDUCTION,
    Solution,
    Subproblem,
)
from linsvm.solvers.newton import run_newton, solve_l2svc_primal, solve_lr_primal

ll = pytest.importorskip("liblinear.liblinearutil")

LOSS_OF_SOLVER = {0: LOSS_LOGISTIC, 2: LOSS_SQUARED_HINGE}
SOLVE_OF_LOSS = {LOSS_LOGISTIC: solve_lr_primal, LOSS_SQUARED_HINGE: solve_l2svc_primal}
TIGHT_EPS = 1e-6
REL_TOL = 1e-6
AGREEMENT = 0.999


# ----------------------------------------------------------------------------- helpers


def newton(
    X, y, C, loss, bias, eps, max_iter=1000, *, w0=None, regularize_bias=True, hook=None
) -> Solution:
    """Solve one sub-problem with the solver of ``loss`` (-s 0 or -s 2)."""
    sub = Subproblem(
        X, y, np.asarray(C, dtype=np.float64), eps, max_iter, bias=bias,
        regularize_bias=regularize_bias, w0=w0,
    )  # fmt: skip
    return SOLVE_OF_LOSS[loss](sub, hook)


def class_balance_eps(eps, y):
    """-e as the -s 0/2 solvers read it (LIBLINEAR's class-balance scaling)."""
    return solver_tolerance(SOLVERS[2], eps, y)


def liblinear_newton(X, y, options: str, bias: float):
    """Train liblinear-official; return (model, Newton iterations, CG steps per iteration).

    The progress lines of its Newton solver (``iter N f ... CG k ...``) go to the C stdout and
    are captured at the file-descriptor level.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    prob = ll.problem(np.asarray(y, dtype=np.float64), X)
    param = ll.parameter(f"{options} -B {bias:.17g}")
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            model = ll.train(prob, param)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode(errors="replace")
    iters = re.findall(r"^iter\s+(\d+).*?CG\s+(\d+)", out, flags=re.MULTILINE)
    return model, len(iters), [int(cg) for _, cg in iters]


def binary_problem(model, y, C: float = 1.0, class_weight=None):
    """(y as +1/-1 with LIBLINEAR's first label positive, per-row C)."""
    labels = model.get_labels()
    positive = np.asarray(y) == labels[0]
    y_pm1 = np.where(positive, 1.0, -1.0)
    cw = class_weight or {}
    c_rows = np.where(positive, C * cw.get(labels[0], 1.0), C * cw.get(labels[1], 1.0))
    return y_pm1, c_rows


def decision(X, w, bias):
    X = sp.csr_matrix(X)
    dec = X @ w[: X.shape[1]]
    if bias >= 0:
        dec = dec + bias * w[-1]
    return dec


def unregularised_bias_primal(X, y_pm1, c_rows, w, loss) -> float:
    """P(w) with the bias weight left out of 1/2 w'w (LIBLINEAR's -R)."""
    return primal_of(X, 1.0, y_pm1, c_rows, w, loss) - 0.5 * w[-1] ** 2


def compare_with_liblinear(
    X,
    y,
    solver: int,
    bias: float,
    C: float = 1.0,
    *,
    eps: float = TIGHT_EPS,
    regularize_bias: bool = True,
    class_weight=None,
) -> Solution:
    loss = LOSS_OF_SOLVER[solver]
    options = f"-s {solver} -c {C:.17g} -e {eps:.17g}"
    if not regularize_bias:
        options += " -R"
    for label, weight in (class_weight or {}).items():
        options += f" -w{label:g} {weight:.17g}"
    model, _, _ = liblinear_newton(X, y, options, bias)
    y_pm1, c_rows = binary_problem(model, y, C, class_weight)
    sol = newton(
        X, y_pm1, c_rows, loss, bias, class_balance_eps(eps, y_pm1), regularize_bias=regularize_bias
    )
    assert sol.converged, sol.stop_reason
    assert sol.solver == solver
    w_ll = liblinear_weights(model)[0]
    if regularize_bias:
        p_ours = primal_of(X, bias, y_pm1, c_rows, sol.w, loss)
        p_ref = liblinear_primal(model, X, y, C, loss, class_weight=class_weight)[0]
    else:
        p_ours = unregularised_bias_primal(X, y_pm1, c_rows, sol.w, loss)
        p_ref = unregularised_bias_primal(X, y_pm1, c_rows, w_ll, loss)
    assert rel_diff(p_ours, p_ref) <= REL_TOL, (p_ours, p_ref)
    assert sol.figures["f"] == pytest.approx(p_ours, rel=1e-9)
    assert sol.primal == pytest.approx(p_ours, rel=1e-9)
    agree = np.mean((decision(X, sol.w, bias) > 0) == (decision(X, w_ll, bias) > 0))
    assert agree >= AGREEMENT
    return sol


def _breast_cancer():
    datasets = pytest.importorskip("sklearn.datasets")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X, y = datasets.load_breast_cancer(return_X_y=True)
    X = preprocessing.StandardScaler().fit_transform(X)
    return sp.csr_matrix(X), np.where(y == 1, 1.0, -1.0)


# ----------------------------------------------------------------------------- against LIBLINEAR


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 10.0)])
def test_generated_sparse(solver, bias, seed, C):
    X, y = make_sparse_problem(n_rows=400, n_features=60, seed=seed, noise=0.3)
    compare_with_liblinear(X, y, solver, bias, C)


@pytest.mark.parametrize("solver", [0, 2])
def test_generated_with_empty_rows_and_columns(solver):
    X, y = make_sparse_problem(n_rows=300, n_features=50, seed=3)
    X = X.tolil()
    X[::7, :] = 0.0
    X[:, ::5] = 0.0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    for bias in (-1.0, 1.0):
        compare_with_liblinear(X, y, solver, bias)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("name", ["heart_scale", "splice", "mushrooms"])
def test_shared_data(load_shared, name, solver, bias):
    X, y = load_shared(name)
    compare_with_liblinear(X, y, solver, bias)


@pytest.mark.parametrize("solver, bias", [(0, -1.0), (2, 1.0)])
def test_shared_a9a(load_shared, solver, bias):
    X, y = load_shared("a9a")
    compare_with_liblinear(X, y, solver, bias)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_sklearn_breast_cancer(solver, bias):
    X, y = _breast_cancer()
    compare_with_liblinear(X, y, solver, bias)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("dataset", ["generated", "breast_cancer", "heart_scale"])
def test_unregularised_bias(load_shared, solver, dataset):
    if dataset == "generated":
        X, y = make_sparse_problem(n_rows=400, n_features=60, seed=5, noise=0.3)
    elif dataset == "breast_cancer":
        X, y = _breast_cancer()
    else:
        X, y = load_shared(dataset)
    sol = compare_with_liblinear(X, y, solver, 1.0, regularize_bias=False)
    # -R changes the problem: the regularised-bias solution is another one
    y_pm1 = np.where(y == y[0], 1.0, -1.0)
    regularised = newton(
        X, y_pm1, np.ones(len(y)), LOSS_OF_SOLVER[solver], 1.0, class_balance_eps(TIGHT_EPS, y_pm1)
    )
    assert abs(abs(regularised.w[-1]) - abs(sol.w[-1])) > 1e-6


@pytest.mark.parametrize("solver", [0, 2])
def test_class_weights(solver):
    X, y = make_sparse_problem(n_rows=400, n_features=60, seed=7, noise=0.3)
    compare_with_liblinear(X, y, solver, 1.0, C=2.0, class_weight={1.0: 3.0, -1.0: 0.5})


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("dataset", ["generated", "breast_cancer", "a9a"])
def test_iteration_count_at_default_eps(load_shared, solver, bias, dataset):
    if dataset == "generated":
        X, y = make_sparse_problem(n_rows=400, n_features=60, seed=2, noise=0.3)
    elif dataset == "breast_cancer":
        X, y = _breast_cancer()
    else:
        X, y = load_shared(dataset)
    model, ll_iter, ll_cg = liblinear_newton(X, y, f"-s {solver} -c 1 -e 0.01", bias)
    assert ll_iter >= 1
    y_pm1, c_rows = binary_problem(model, y)
    sol = newton(X, y_pm1, c_rows, LOSS_OF_SOLVER[solver], bias, class_balance_eps(0.01, y_pm1))
    assert sol.converged
    assert sol.n_iter <= 2 * ll_iter + 2 and ll_iter <= 2 * sol.n_iter + 2, (sol.n_iter, ll_iter)
    n_cg = sol.figures["n_cg_iter"]
    assert n_cg <= 2 * sum(ll_cg) + 5, (n_cg, sum(ll_cg))
    # the same algorithm: the same number of iterations in practice
    assert abs(sol.n_iter - ll_iter) <= 1


def liblinear_lines(progresses) -> list[str]:
    """LIBLINEAR's progress lines of the Newton solver, from the hook's figures (as training
    prints them): "init f" from iteration 0, then one "iter" line per Newton iteration."""
    lines = []
    for p in progresses:
        fig = p.figures
        if p.iteration == 0:
            lines.append(f"init f {fig['f']:5.3e} |g| {fig['grad_norm']:5.3e}")
        else:
            lines.append(
                f"iter {p.iteration:2d} f {fig['f']:5.3e} |g| {fig['grad_norm']:5.3e} "
                f"CG {fig['n_cg']:3d} step_size {fig['step']:4.2e}"
            )
    return lines


def test_verbose_lines_follow_liblinear():
    X, y = make_sparse_problem(n_rows=200, n_features=30, seed=4)
    seen = []
    sol = newton(X, y, np.ones(len(y)), LOSS_LOGISTIC, 1.0, 1e-3, hook=seen.append)
    err = "\n".join(liblinear_lines(seen))
    assert err.startswith("init f ")
    assert len(re.findall(r"^iter\s+\d+ f .* \|g\| .* CG\s+\d+ step_size", err, re.M)) == sol.n_iter
    # the figures are those of the history
    assert [p.iteration for p in seen] == list(range(sol.n_iter + 1))
    assert [
        (p.iteration, p.figures["f"], p.figures["grad_norm"], p.figures["n_cg"], p.figures["step"])
        for p in seen[1:]
    ] == sol.figures["history"]
    assert seen[0].figures["grad_norm"] == sol.figures["grad_norm0"]  # w0 = 0
    assert all(p.solver == 0 and p.alpha is None for p in seen)


# ----------------------------------------------------------------------------- input forms


@pytest.mark.parametrize("loss", [LOSS_LOGISTIC, LOSS_SQUARED_HINGE])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_float32_int64_inputs_agree(loss, bias):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=8)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X64 = sp.csr_matrix(X32, dtype=np.float64)  # the same values, exactly
    X64_i64 = sp.csr_matrix(
        (X64.data, X64.indices.astype(np.int64), X64.indptr.astype(np.int64)), shape=X64.shape
    )
    C = np.ones(len(y))
    sols = [newton(Z, y, C, loss, bias, 1e-5) for Z in (X32, X64, X64_i64)]
    for s in sols[1:]:
        assert s.n_iter == sols[0].n_iter
        np.testing.assert_allclose(s.w, sols[0].w, rtol=1e-10, atol=1e-12)
    # float32 data of any precision: float64 accumulation keeps the optimum of the same problem
    assert sols[0].w.dtype == np.float64


@pytest.mark.parametrize("loss", [LOSS_LOGISTIC, LOSS_SQUARED_HINGE])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_zero_cost_rows_are_dropped(loss, bias):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=9, noise=0.5)
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 2.0, len(y))
    C[rng.random(len(y)) < 0.3] = 0.0
    keep = C > 0
    eps = class_balance_eps(1e-4, y[keep])
    full = newton(X, y, C, loss, bias, eps)
    sub = newton(X[keep], y[keep], C[keep], loss, bias, eps)
    assert full.n_iter == sub.n_iter
    np.testing.assert_allclose(full.w, sub.w, rtol=1e-9, atol=1e-12)
    # the dropped rows may be anything: relabelling them changes nothing
    y2 = y.copy()
    y2[~keep] *= -1
    again = newton(X, y2, C, loss, bias, eps)
    np.testing.assert_allclose(again.w, full.w, rtol=1e-9, atol=1e-12)
    # their dual variables are 0
    assert np.all(full.alpha[~keep] == 0.0)


def test_all_costs_zero():
    X, y = make_sparse_problem(n_rows=50, n_features=10, seed=1)
    sol = newton(X, y, np.zeros(len(y)), LOSS_LOGISTIC, 1.0, 0.01)
    assert sol.converged and sol.n_iter == 0 and not sol.w.any()
    assert sol.stop_reason == CONVERGED and sol.figures["stop_ratio"] == 0.0


def test_class_balance_tolerance():
    y = np.array([1.0] * 30 + [-1.0] * 70)
    for solver in (0, 2):
        spec = SOLVERS[solver]
        assert solver_tolerance(spec, 0.01, y) == pytest.approx(0.01 * 30 / 100)
        assert solver_tolerance(spec, 0.01, np.ones(10)) == pytest.approx(0.01 / 10)
        C = np.r_[np.zeros(20), np.ones(80)]  # drops 20 positives
        assert solver_tolerance(spec, 0.01, y[C != 0]) == pytest.approx(0.01 * 10 / 80)


@pytest.mark.parametrize("loss", [LOSS_LOGISTIC, LOSS_SQUARED_HINGE])
def test_warm_start(loss):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=10, noise=0.3)
    C = np.ones(len(y))
    cold = newton(X, y, C, loss, 1.0, 1e-8)
    assert cold.converged and cold.n_iter > 0
    # from the optimum: nothing to do, and the stopping rule still uses ||g(0)||
    again = newton(X, y, C, loss, 1.0, 1e-6, w0=cold.w)
    assert again.n_iter == 0 and again.converged
    assert again.figures["grad_norm0"] == pytest.approx(cold.figures["grad_norm0"])
    # from elsewhere: the same optimum
    w0 = np.random.default_rng(1).normal(size=cold.w.shape)
    warm = newton(X, y, C, loss, 1.0, 1e-8, w0=w0)
    assert warm.converged
    assert rel_diff(warm.figures["f"], cold.figures["f"]) <= 1e-10
    assert rel_diff(warm.primal, cold.primal) <= 1e-10
    with pytest.raises(InvalidInputError):
        newton(X, y, C, loss, 1.0, 1e-6, w0=np.zeros(3))
    with pytest.raises(InvalidInputError):  # a dual warm start is not for a primal solver
        SOLVE_OF_LOSS[loss](Subproblem(X, y, C, 1e-6, 10, bias=1.0, alpha0=np.zeros(len(y))))


def test_bad_arguments():
    X, y = make_sparse_problem(n_rows=50, n_features=10, seed=1)
    C = np.ones(len(y))
    with pytest.raises(ValueError):
        run_newton(Subproblem(X, y, C, 0.01, 10, bias=1.0), None, LOSS_HINGE, 3, lambda w, f: f)
    with pytest.raises(InvalidInputError):
        newton(X, y, C, LOSS_LOGISTIC, -1.0, 0.01, regularize_bias=False)
    with pytest.raises(InvalidInputError):
        newton(X, y, C, LOSS_LOGISTIC, 1.0, -0.01)  # (0: no stopping rule, accepted)


def test_max_iter_caps_newton_iterations():
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=11, noise=0.3)
    sol = newton(X, y, np.full(len(y), 100.0), LOSS_LOGISTIC, 1.0, 1e-12, max_iter=2)
    assert sol.n_iter == 2 and not sol.converged and sol.stop_reason == MAX_ITER == "max_iter"


# ----------------------------------------------------------------------------- properties


def _gradient(X, y, C, w, loss, bias, regularize_bias):
    """grad P(w) in NumPy, independently of the kernels."""
    Xb = sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr() if bias >= 0 else X
    z = y * (Xb @ w)
    if loss == LOSS_LOGISTIC:
        dxi = -1.0 / (1.0 + np.exp(z))
    else:
        dxi = np.where(z < 1.0, 2.0 * (z - 1.0), 0.0)
    g = w + Xb.T @ (C * dxi * y)
    if not regularize_bias:
        g[-1] -= w[-1]
    return g


@st.composite
def problems(draw):
    n_rows = draw(st.integers(2, 60))
    n_features = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.1, 0.4, 1.0]))
    scale = draw(st.sampled_from([0.1, 1.0, 10.0]))
    X = sp.random(
        n_rows,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.normal(size=k) * scale,
    )
    X.sort_indices()
    y = np.where(rng.random(n_rows) < draw(st.sampled_from([0.1, 0.5])), 1.0, -1.0)
    C = rng.uniform(0.0, 1.0, n_rows) * draw(st.sampled_from([0.01, 1.0, 100.0]))
    C[rng.random(n_rows) < 0.1] = 0.0
    return X, y, C


@settings(max_examples=40, deadline=None)
@given(
    problem=problems(),
    loss=st.sampled_from([LOSS_LOGISTIC, LOSS_SQUARED_HINGE]),
    bias=st.sampled_from([-1.0, 1.0, 3.0]),
    regularize_bias=st.booleans(),
    eps=st.sampled_from([0.5, 1e-2, 1e-6]),
    max_iter=st.integers(1, 50),
)
def test_objective_decreases_and_stopping_rule_holds(
    problem, loss, bias, regularize_bias, eps, max_iter
):
    X, y, C = problem
    if bias < 0:
        regularize_bias = True
    sol = newton(X, y, C, loss, bias, eps, max_iter, regularize_bias=regularize_bias)
    fig = sol.figures
    n_w = X.shape[1] + (bias >= 0)
    assert sol.w.shape == (n_w,) and np.all(np.isfinite(sol.w))
    assert len(fig["history"]) == sol.n_iter <= max_iter
    # the objective never increases (Armijo's rule accepts only decreasing steps)
    f_start = float(np.sum(C) * (np.log(2.0) if loss == LOSS_LOGISTIC else 1.0))
    values = [f_start] + [f for _, f, _, _, _ in fig["history"]]
    assert all(b <= a + 1e-12 * abs(a) for a, b in zip(values, values[1:], strict=False))
    # the reported objective and gradient norms are the true ones
    p = primal_of(X, bias, y, C, sol.w, loss)
    if not regularize_bias:
        p -= 0.5 * sol.w[-1] ** 2
    assert fig["f"] == pytest.approx(p, rel=1e-9, abs=1e-12)
    assert sol.primal == pytest.approx(p, rel=1e-9, abs=1e-12)
    g0 = _gradient(X, y, C, np.zeros(n_w), loss, bias, regularize_bias)
    assert fig["grad_norm0"] == pytest.approx(np.linalg.norm(g0), rel=1e-9, abs=1e-12)
    # near the optimum ||g|| is a difference of terms of the size of ||g(0)||: rounding
    g = _gradient(X, y, C, sol.w, loss, bias, regularize_bias)
    assert fig["grad_norm"] == pytest.approx(
        np.linalg.norm(g), rel=1e-7, abs=1e-12 * max(fig["grad_norm0"], 1.0)
    )
    # the stopping rule: met at the end when converged, and not at any earlier iteration
    threshold = eps * fig["grad_norm0"]
    if sol.converged:
        assert fig["grad_norm"] <= threshold
        assert sol.stop_reason == CONVERGED
    else:
        assert fig["grad_norm"] > threshold
        assert sol.stop_reason in (MAX_ITER, SMALL_REDUCTION, LINE_SEARCH_FAILED)
    assert all(gn > threshold for _, _, gn, _, _ in fig["history"][:-1])
    if sol.stop_reason == MAX_ITER:
        assert sol.n_iter == max_iter
    # the dual bound: a feasible dual point, -f(alpha) <= P* <= P(w) (none with -R)
    if regularize_bias:
        assert sol.alpha.shape == y.shape and np.all(sol.alpha >= 0.0)
        assert sol.gap >= -1e-9 * max(1.0, abs(sol.primal))
        assert sol.gap == pytest.approx(sol.primal - sol.dual, rel=1e-12, abs=1e-12)
    else:
        assert sol.alpha is None and np.isnan(sol.dual) and np.isnan(sol.gap)


# ----------------------------------------------------------------------------- the interface


@pytest.mark.parametrize("solver", [0, 2])
def test_solution_dual_point_and_bound(solver):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=12, noise=0.3)
    C = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    loss = LOSS_OF_SOLVER[solver]
    sol = newton(X, y, C, loss, 1.0, 1e-6)
    assert sol.solver == solver and sol.converged
    if solver == 2:
        alpha = squared_hinge_dual_point(X, 1.0, y, C, sol.w)
        expected = svm_objectives(X, 1.0, y, C, sol.w, alpha, loss)
    else:
        alpha, alpha_c = lr_dual_point(X, 1.0, y, C, sol.w, with_complement=True)
        expected = lr_objectives(X, 1.0, y, C, sol.w, alpha, alpha_c)
    assert np.array_equal(sol.alpha, alpha)
    assert (sol.primal, sol.dual, sol.gap) == expected
    assert 0.0 <= sol.gap <= 1e-6 * sol.primal
    assert sol.figures["n_sv"] == np.count_nonzero(alpha)
    fig = sol.figures
    assert fig["stop_ratio"] == fig["grad_norm"] / fig["grad_norm0"] <= 1e-6
    assert fig["n_cg_iter"] == sum(h[3] for h in fig["history"])
    # -R: no dual (its equality constraint is met only at the optimum)
    unreg = newton(X, y, C, loss, 1.0, 1e-6, regularize_bias=False)
    assert unreg.alpha is None and np.isnan(unreg.dual) and np.isnan(unreg.gap)
    assert unreg.figures["n_sv"] == -1
    assert unreg.primal == unreg.figures["f"]


def _stop_at(k, captured):
    """A hook that keeps the state of iteration k and asks to stop there."""

    def hook(progress):
        if progress.iteration == k:
            captured["state"] = progress.state()
            captured["w"] = progress.w.copy()
            captured["objectives"] = progress.objectives()
            return False
        return None

    return hook


def _same_solution(a: Solution, b: Solution) -> None:
    assert np.array_equal(a.w, b.w)
    assert a.n_iter == b.n_iter and a.stop_reason == b.stop_reason
    assert a.converged == b.converged
    assert a.figures["history"] == b.figures["history"]
    for key in ("f", "grad_norm", "grad_norm0", "n_cg_iter", "stop_ratio"):
        assert a.figures[key] == b.figures[key], key
    if a.alpha is None:
        assert b.alpha is None
    else:
        assert np.array_equal(a.alpha, b.alpha)
    assert np.array_equal([a.primal, a.dual, a.gap], [b.primal, b.dual, b.gap], equal_nan=True)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("regularize_bias, warm", [(True, False), (False, False), (True, True)])
def test_interrupt_and_resume_is_exact(solver, regularize_bias, warm):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=13, noise=0.3)
    C = np.full(len(y), 5.0)
    w0 = np.random.default_rng(3).normal(size=41) * 0.1 if warm else None
    sub = Subproblem(X, y, C, 1e-8, 1000, bias=1.0, regularize_bias=regularize_bias, w0=w0)
    solve = SOLVE_OF_LOSS[LOSS_OF_SOLVER[solver]]
    full = solve(sub)
    assert full.n_iter >= 3
    # a hook that never stops changes nothing
    calls = []
    _same_solution(solve(sub, lambda p: calls.append(p.iteration)), full)
    assert calls == list(range(full.n_iter + 1))
    for k in (0, 1, full.n_iter - 1):
        captured = {}
        part = solve(sub, _stop_at(k, captured))
        assert part.stop_reason == INTERRUPTED and not part.converged
        assert part.n_iter == k and np.array_equal(part.w, captured["w"])
        assert part.figures["history"] == full.figures["history"][:k]
        assert captured["objectives"][0] == part.primal
        np.testing.assert_equal(captured["objectives"][1], part.dual)
        # resumed from the state (w0 no longer matters): exactly the uninterrupted run
        seen = []
        rest = solve(sub.but(resume=captured["state"], w0=None), seen.append)
        _same_solution(rest, full)
        assert [p.iteration for p in seen] == list(range(k + 1, full.n_iter + 1))


def test_stop_asked_at_the_last_iteration_keeps_the_rule():
    X, y = make_sparse_problem(n_rows=200, n_features=30, seed=14)
    sub = Subproblem(X, y, np.ones(len(y)), 1e-6, 1000, bias=1.0)
    full = solve_l2svc_primal(sub)
    captured = {}
    last = solve_l2svc_primal(sub, _stop_at(full.n_iter, captured))
    _same_solution(last, full)
    assert last.stop_reason == CONVERGED
    # resuming a finished state does nothing more
    _same_solution(solve_l2svc_primal(sub.but(resume=captured["state"])), full)
    # at the cap the run is complete (the uninterrupted run's result): the cap's reason
    capped = solve_l2svc_primal(sub.but(max_iter=2), _stop_at(2, {}))
    assert capped.stop_reason == MAX_ITER and capped.n_iter == 2
    # before the cap the stop is the hook's
    stopped = solve_l2svc_primal(sub.but(max_iter=3), _stop_at(2, {}))
    assert stopped.stop_reason == INTERRUPTED and stopped.n_iter == 2


def test_progress_measure_is_relative_gradient_norm():
    X, y = make_sparse_problem(n_rows=200, n_features=30, seed=15)
    seen = []
    sol = solve_lr_primal(Subproblem(X, y, np.ones(len(y)), 1e-4, 1000, bias=1.0), seen.append)
    g0 = sol.figures["grad_norm0"]
    for p in seen:
        assert p.measure == p.figures["grad_norm"] / g0
        assert p.figures["grad_norm0"] == g0
    assert seen[0].measure == 1.0 and seen[0].figures["n_cg"] == 0
    assert seen[-1].measure == sol.figures["stop_ratio"] <= 1e-4
