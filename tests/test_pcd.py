"""Primal coordinate descent for the L2-loss SVM (``linsvm.solvers.pcd``).

- optimum: P(w) within REL_TOL of linsvm's -s 2 (primal Newton at eps 1e-6) on generated
  problems (hypothesis over shapes, densities, C, bias), of liblinear-official's -s 2 on fixed
  ones, and of -s 2 on heart_scale and a subset of a9a (skipped when the shared data is absent);
- the duality gap from ``linsvm.objective`` is >= 0 and small at convergence, also with per-row
  C (zeros included); rows with C_i = 0 are dropped exactly (same w as without them);
- the kernel takes bit for bit the steps of a plain transcription of the paper's algorithm
  that always evaluates the one-variable objective (the cheap sufficient-decrease test is
  exact), also on badly scaled problems where the line search backtracks often; the test's
  bound holds on random one-variable problems; on badly scaled problems P(w) >= P* >= dual;
- equal seeds give equal w (with or without a hook); P(w) never increases over outer
  iterations; the stopping rule holds at the end; warm starts; bad input -> InvalidInputError;
- the solver interface: a hook (every iteration or batches) changes nothing; stopped at
  iteration k and resumed from ``Progress.state()``, the run ends bit for bit where an
  uninterrupted one does (also after a warm start); stop reasons.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_train, liblinear_weights, make_sparse_problem, primal_of
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_SQUARED_HINGE
from linsvm.solvers import Solution, Subproblem
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from linsvm.solvers._random import new_state, shuffle
from linsvm.solvers.newton import solve_l2svc_primal
from linsvm.solvers.pcd import BETA, DEFAULT_EPS, DEFAULT_MAX_ITER, SIGMA
from linsvm.solvers.pcd import solve_pcd as _solve_pcd

TIGHT_EPS = 1e-8  # PCD's relative tolerance in the optimum tests
REL_TOL = 1e-6  # on P(w), relative to P* (observed: below 1e-9 on these problems)


def solve_pcd(X, y, C, bias=-1.0, eps=DEFAULT_EPS, max_iter=DEFAULT_MAX_ITER, *, seed=1,
              w0=None, hook=None, resume=None) -> Solution:  # fmt: skip
    """PCD on one binary problem (X as given: the solver checks it)."""
    sub = Subproblem(X, y, C, eps, max_iter, bias=bias, seed=seed, w0=w0, resume=resume)
    return _solve_pcd(sub, hook)


def newton_reference(X, y, C, bias: float, eps: float) -> Solution:
    """linsvm's -s 2 (primal Newton) on the same sub-problem, at ``eps`` as given."""
    return solve_l2svc_primal(Subproblem(linsvm.data.as_csr(X), y, C, eps, 1000, bias=bias))


def p_of(X, bias, y, C, w) -> float:
    return primal_of(X, bias, y, C, w, LOSS_SQUARED_HINGE)


def newton_primal(X, y, C: float, bias: float) -> float:
    """P* from linsvm's -s 2 (primal Newton) at eps 1e-6; y is +1/-1 (+1 the positive class)."""
    model = linsvm.train(X, y, solver=2, C=C, eps=1e-6, bias=bias)
    (r,) = model.results_
    return r.primal


def check_converged(sol: Solution, eps: float = TIGHT_EPS) -> None:
    assert sol.converged and sol.stop_reason == CONVERGED, sol
    assert sol.solver == 34 and sol.alpha is not None
    assert sol.figures["stop_measure"] <= eps * sol.figures["stop_measure0"]  # the trigger
    # the rule, at the returned w
    assert sol.figures["grad_norm"] <= eps * sol.figures["stop_measure0"]
    assert sol.figures["n_gradient_checks"] >= 1
    assert sol.gap >= -1e-10 * sol.primal, sol
    assert sol.dual <= sol.primal + 1e-10 * sol.primal


# ----------------------------------------------------------------------------- the optimum


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_rows=st.integers(10, 150),
    n_features=st.integers(1, 30),
    density=st.sampled_from([0.1, 0.3, 1.0]),
    C=st.sampled_from([0.05, 1.0, 8.0]),
    bias=st.sampled_from([-1.0, 1.0, 0.5]),
)
def test_matches_newton(seed, n_rows, n_features, density, C, bias):
    X, y = make_sparse_problem(n_rows, n_features, density=density, seed=seed)
    sol = solve_pcd(X, y, np.full(n_rows, C), bias, TIGHT_EPS, 5000)
    check_converged(sol)
    assert sol.w.shape == (n_features + (1 if bias >= 0 else 0),)
    assert sol.primal == pytest.approx(p_of(X, bias, y, np.full(n_rows, C), sol.w), rel=1e-12)
    p_star = newton_primal(X, y, C, bias)
    assert abs(sol.primal - p_star) <= REL_TOL * p_star, (sol.primal, p_star)
    assert sol.gap <= 1e-5 * sol.primal, sol


@pytest.mark.parametrize("seed, C, bias", [(0, 1.0, -1.0), (1, 4.0, 1.0), (2, 0.3, 1.0)])
def test_matches_liblinear(seed, C, bias):
    pytest.importorskip("liblinear.liblinearutil")
    X, y = make_sparse_problem(300, 60, density=0.1, seed=seed)
    model, iterations = liblinear_train(y, X, f"-s 2 -c {C:.17g} -e 1e-6", bias)
    assert model.get_labels()[0] == 1  # +1 is LIBLINEAR's positive class here
    w_ll = liblinear_weights(model)[0]
    p_ll = p_of(X, bias, y, np.full(y.shape[0], C), w_ll)
    sol = solve_pcd(X, y, np.full(y.shape[0], C), bias, TIGHT_EPS)
    check_converged(sol)
    assert abs(sol.primal - p_ll) <= REL_TOL * p_ll, (sol.primal, p_ll)
    np.testing.assert_allclose(sol.w, w_ll, atol=1e-4 * np.abs(w_ll).max())


# PCD is slow on a9a (123 correlated binary features and the bias): about 600 outer
# iterations at C = 0.03 for eps 1e-6, 2500 at C = 0.5 for 1e-5
@pytest.mark.parametrize("name, rows, C, bias", [("heart_scale", None, 1.0, 1.0),
                                                 ("a9a", 3000, 0.03, 1.0)])  # fmt: skip
def test_real_data(load_shared, name, rows, C, bias):
    X, y = load_shared(name)
    if rows is not None:
        X, y = X[:rows], y[:rows]
    y = np.where(y > 0, 1.0, -1.0)
    sol = solve_pcd(X, y, np.full(y.shape[0], C), bias, 1e-6)
    check_converged(sol, 1e-6)
    p_star = newton_primal(X, y, C, bias)
    assert abs(sol.primal - p_star) <= 1e-5 * p_star, (sol.primal, p_star)
    assert sol.gap <= 1e-3 * sol.primal


def test_default_eps_is_close():
    X, y = make_sparse_problem(400, 50, density=0.1, seed=4)
    C = np.ones(y.shape[0])
    sol = solve_pcd(X, y, C)  # DEFAULT_EPS
    assert sol.converged
    p_star = newton_primal(X, y, 1.0, -1.0)
    assert 0.0 <= (sol.primal - p_star) / p_star <= 1e-2


# ----------------------------------------------------------------------------- per-row C


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), zero_share=st.sampled_from([0.0, 0.3, 0.9]))
def test_per_row_costs(seed, zero_share):
    X, y = make_sparse_problem(120, 15, density=0.3, seed=seed)
    rng = np.random.default_rng(seed)
    C = rng.uniform(0.1, 5.0, size=y.shape[0])
    C[rng.random(y.shape[0]) < zero_share] = 0.0
    sol = solve_pcd(X, y, C, 1.0, TIGHT_EPS, 5000)
    check_converged(sol)
    # the gap closes on the objective's own definition with these C_i
    assert sol.gap <= 1e-6 * max(sol.primal, 1.0)
    assert sol.primal == pytest.approx(p_of(X, 1.0, y, C, sol.w), rel=1e-12)
    ref = newton_reference(X, y, C, 1.0, 1e-10)
    assert abs(sol.primal - ref.primal) <= REL_TOL * max(ref.primal, 1e-12)
    # rows with C_i = 0 are not part of the problem: the same run without them, same w
    keep = C > 0
    sub = solve_pcd(X[keep], y[keep], C[keep], 1.0, TIGHT_EPS, 5000)
    np.testing.assert_array_equal(sol.w, sub.w)


def test_all_costs_zero():
    X, y = make_sparse_problem(50, 8, seed=1)
    sol = solve_pcd(X, y, np.zeros(50), 1.0)
    assert sol.converged and sol.n_iter == 0
    assert not sol.w.any()
    assert sol.primal == 0.0 and sol.gap == 0.0


# ----------------------------------------------------------------------------- the algorithm


def reference_pcd(X, y, C, bias, n_outer, seed):
    """The paper's algorithm in plain Python, always evaluating D_j (no cheap test).

    Sums run over each column's rows in ascending order, as in the kernel, so that both
    round alike. Returns (w, backtracking steps).
    """
    A = sp.csc_matrix(sp.diags(y) @ X)
    if bias >= 0:
        A = sp.hstack([A, sp.csc_matrix(bias * y[:, None])], format="csc")
    keep = C > 0
    A, C = sp.csc_matrix(A[keep]), C[keep]
    A.sort_indices()
    n_w = A.shape[1]
    w = np.zeros(n_w)
    b = np.ones(A.shape[0])
    index = np.arange(n_w)
    rng = new_state(seed)
    n_backtrack = 0
    for _ in range(n_outer):
        shuffle(index, 0, n_w, rng)
        for j in index:
            rows = A.indices[A.indptr[j] : A.indptr[j + 1]]
            col = A.data[A.indptr[j] : A.indptr[j + 1]]
            g = h = 0.0
            for i, v in zip(rows, col, strict=True):
                if b[i] > 0.0:
                    g += C[i] * v * b[i]
                    h += C[i] * v * v
            g = w[j] - 2.0 * g
            h = 1.0 + 2.0 * h
            d = -g / h
            if w[j] + d == w[j]:
                continue
            lam = 1.0
            while True:
                z = lam * d
                bn = b[rows] - z * col
                # D_j(z) + sigma z^2, with max(0, bn)^2 - max(0, bo)^2 free of cancellation
                change = w[j] * z + (0.5 + SIGMA) * z * z
                for i, v, new in zip(rows, col, bn, strict=True):
                    old = b[i]
                    if old > 0.0 and new > 0.0:
                        change -= C[i] * z * v * (new + old)
                    elif old > 0.0 or new > 0.0:
                        change += C[i] * (max(new, 0.0) ** 2 - max(old, 0.0) ** 2)
                if change <= 0.0:  # D_j(z) <= -sigma z^2
                    break
                lam *= BETA
                n_backtrack += 1
            w[j] += z
            b[rows] = bn
    return w, n_backtrack


def heavy_tailed_problem(seed: int, n_rows: int = 12, n_features: int = 4):
    """Few rows, values spread over orders of magnitude: Newton steps often overshoot here
    (a step re-activates rows of much larger curvature), so the line search backtracks."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_rows, n_features)) * rng.lognormal(0.0, 2.5, (n_rows, n_features))
    A *= rng.random((n_rows, n_features)) < 0.6
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.1, 10.0, size=n_rows)
    return sp.csr_matrix(A), y, C


# The cheap test is exact in exact arithmetic. In floating point the two differ once a
# coordinate is optimal to rounding: its D_j'(0) is then noise, and the evaluated D_j(z) of a
# noise step can come out > -sigma z^2 at every z (the plain transcription then halves ~1000
# times, down to z = 0; the cheap test accepts a noise-sized step after a few). These cases
# stop before that regime; the runs match bit for bit.


@pytest.mark.parametrize("seed, C, bias", [(0, 1.0, -1.0), (3, 20.0, 1.0), (5, 0.2, 2.0)])
def test_same_steps_as_plain_transcription(seed, C, bias):
    X, y = make_sparse_problem(60, 12, density=0.4, seed=seed)
    Cr = np.random.default_rng(seed).uniform(0.5, 2.0, size=60) * C
    Cr[::7] = 0.0
    for n_outer in (1, 4):
        sol = solve_pcd(X, y, Cr, bias, 1e-300, n_outer, seed=seed + 11)
        w_ref, n_backtrack = reference_pcd(X, y, Cr, bias, n_outer, seed + 11)
        np.testing.assert_array_equal(sol.w, w_ref)
        assert sol.figures["n_line_search_steps"] == n_backtrack


@pytest.mark.parametrize("seed", [28, 50, 6, 4])
def test_same_steps_when_backtracking(seed):
    X, y, C = heavy_tailed_problem(seed)
    sol = solve_pcd(X, y, C, 1.0, 1e-300, 10, seed=seed)
    w_ref, n_backtrack = reference_pcd(X, y, C, 1.0, 10, seed)
    assert n_backtrack > 0  # the line search is exercised
    assert sol.figures["n_line_search_steps"] == n_backtrack
    np.testing.assert_array_equal(sol.w, w_ref)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(3, 30), n_features=st.integers(1, 6))
def test_heavy_tailed_bounds(seed, n_rows, n_features):
    """Badly scaled problems: PCD may need far more sweeps (a row with huge values couples the
    features: condition numbers ~1e6), but P(w) stays above P* and the dual below, and a
    converged run is at the optimum with a small gap."""
    X, y, C = heavy_tailed_problem(seed, n_rows, n_features)
    sol = solve_pcd(X, y, C, 1.0, TIGHT_EPS, 2000)
    ref = newton_reference(X, y, C, 1.0, 1e-10)
    assert sol.gap >= -1e-12 * sol.primal
    if ref.converged:  # the Newton solver's line search can fail on such data
        p_star = ref.primal
        assert sol.primal >= p_star * (1.0 - 1e-12)
        assert sol.dual <= p_star * (1.0 + 1e-12)
        if sol.converged:
            assert abs(sol.primal - p_star) <= REL_TOL * p_star, (sol, p_star)
    if sol.converged:
        check_converged(sol)
        assert sol.gap <= 1e-6 * sol.primal, sol


def test_sweep_measure_alone_would_stop_early():
    """A badly conditioned case (found by hypothesis) where the sweep measure falls below the
    tolerance long before the gradient does: the exact test keeps the run going."""
    X, y, C = heavy_tailed_problem(1416, 16, 5)
    sol = solve_pcd(X, y, C, 1.0, TIGHT_EPS, 20_000)
    check_converged(sol)
    assert sol.figures["n_gradient_checks"] > 1  # at least one trigger was refused
    assert sol.gap <= 1e-6 * sol.primal


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    wj=st.floats(-5, 5),
    scale=st.sampled_from([0.1, 1.0, 30.0]),
)
def test_cheap_test_is_a_sufficient_condition(seed, n, wj, scale):
    """lam <= D''(0) / (H/2 + sigma) implies D(lam d) <= -sigma (lam d)^2."""
    rng = np.random.default_rng(seed)
    col = rng.normal(size=n) * scale
    b = rng.normal(size=n) * 2.0
    C = rng.uniform(0.0, 3.0, size=n)

    def D(z):
        bn = b - z * col
        return wj * z + 0.5 * z * z + np.sum(C * (np.maximum(bn, 0) ** 2 - np.maximum(b, 0) ** 2))

    act = b > 0
    g = wj - 2.0 * np.sum(C[act] * col[act] * b[act])
    h = 1.0 + 2.0 * np.sum(C[act] * col[act] ** 2)
    H = 1.0 + 2.0 * np.sum(C * col**2)
    d = -g / h
    lam_ok = h / (0.5 * H + SIGMA)
    lam = 1.0
    while lam > lam_ok:
        lam *= BETA
    z = lam * d
    assert D(z) <= -SIGMA * z * z + 1e-9 * (1.0 + abs(wj * z) + np.sum(C * b**2))


def test_objective_never_increases_and_hook():
    X, y = make_sparse_problem(200, 30, density=0.2, seed=9)
    C = np.random.default_rng(0).uniform(0.0, 4.0, size=200)
    seen = []

    def record(progress):
        w = progress.w
        seen.append((progress.iteration, p_of(X, 1.0, y, C, w), progress.measure, w.copy()))

    sol = solve_pcd(X, y, C, 1.0, 1e-7, hook=record)
    f = sol.figures
    check_converged(sol, 1e-7)
    assert [s[0] for s in seen] == list(range(1, sol.n_iter + 1))
    values = [p_of(X, 1.0, y, C, np.zeros(31))] + [s[1] for s in seen]
    assert all(b <= a * (1 + 1e-13) for a, b in zip(values[:-1], values[1:], strict=True)), values
    assert seen[-1][2] == pytest.approx(f["stop_measure"] / f["stop_measure0"], rel=1e-15)
    assert seen[-1][2] <= 1e-7  # the sweep measure triggers the exact test
    assert sum(s[2] <= 1e-7 for s in seen) == f["n_gradient_checks"]
    np.testing.assert_array_equal(seen[-1][3], sol.w)
    # the same run without the hook (one compiled call) takes the same steps
    plain = solve_pcd(X, y, C, 1.0, 1e-7)
    np.testing.assert_array_equal(plain.w, sol.w)
    assert (plain.n_iter, plain.figures["n_line_search_steps"]) == (
        sol.n_iter,
        f["n_line_search_steps"],
    )


def test_seeds():
    X, y = make_sparse_problem(150, 25, density=0.2, seed=2)
    C = np.ones(150)
    a = solve_pcd(X, y, C, 1.0, 1e-3, seed=5)
    b = solve_pcd(X, y, C, 1.0, 1e-3, seed=5)
    c = solve_pcd(X, y, C, 1.0, 1e-3, seed=6)
    np.testing.assert_array_equal(a.w, b.w)
    assert not np.array_equal(a.w, c.w)  # another order, other iterates
    tight = [solve_pcd(X, y, C, 1.0, TIGHT_EPS, seed=s).primal for s in (5, 6)]
    assert tight[0] == pytest.approx(tight[1], rel=1e-9)


def test_max_iter_cap_and_stop_measure():
    X, y = make_sparse_problem(200, 30, density=0.2, seed=3)
    C = np.full(200, 10.0)
    none = solve_pcd(X, y, C, 1.0, max_iter=0)
    assert none.n_iter == 0 and not none.converged and not none.w.any()
    assert (
        none.figures["stop_measure"] == none.figures["stop_measure0"] == none.figures["grad_norm"]
    )
    sol = solve_pcd(X, y, C, 1.0, 1e-12, max_iter=3)
    assert sol.n_iter == 3 and not sol.converged and sol.stop_reason == MAX_ITER
    assert sol.figures["stop_measure"] > 1e-12 * sol.figures["stop_measure0"]
    assert sol.gap > 0.0
    # stop_measure0 is ||grad P(0)|| = ||-2 sum_i C_i y_i x_i (with the bias feature)||
    g0 = -2.0 * (sp.hstack([X, np.ones((200, 1))]).T @ (C * y))
    assert sol.figures["stop_measure0"] == pytest.approx(np.linalg.norm(g0), rel=1e-12)
    # the final gradient norm is computed at the returned w
    full = solve_pcd(X, y, C, 1.0, 1e-9)
    assert full.figures["grad_norm"] <= 1e-6 * full.figures["stop_measure0"]


def test_warm_start():
    X, y = make_sparse_problem(200, 30, density=0.2, seed=6)
    C = np.ones(200)
    cold = solve_pcd(X, y, C, 1.0, TIGHT_EPS)
    again = solve_pcd(X, y, C, 1.0, TIGHT_EPS, w0=cold.w)
    # the reference stays ||grad P(0)||
    assert again.figures["stop_measure0"] == cold.figures["stop_measure0"]
    assert again.n_iter <= 2
    assert again.primal == pytest.approx(cold.primal, rel=1e-10)
    other = solve_pcd(X, y, C, 1.0, TIGHT_EPS, w0=np.random.default_rng(1).normal(size=31))
    check_converged(other)
    assert other.primal == pytest.approx(cold.primal, rel=REL_TOL)


def test_float32_and_dense_input():
    X, y = make_sparse_problem(100, 20, density=0.3, seed=8)
    C = np.ones(100)
    ref = solve_pcd(X, y, C, 1.0, TIGHT_EPS)
    dense = solve_pcd(X.toarray(), y, C, 1.0, TIGHT_EPS)
    np.testing.assert_array_equal(ref.w, dense.w)
    X32 = X.astype(np.float32)
    f32 = solve_pcd(X32, y, C, 1.0, TIGHT_EPS)
    check_converged(f32)
    p64 = p_of(X32.astype(np.float64), 1.0, y, C, f32.w)
    assert f32.primal == pytest.approx(p64, rel=1e-12)
    # labels other than +1/-1: y > 0 is positive
    relabelled = solve_pcd(X, np.where(y > 0, 3.0, 0.0), C, 1.0, TIGHT_EPS)
    np.testing.assert_array_equal(ref.w, relabelled.w)


# ----------------------------------------------------------------------------- bad input


def test_bad_input():
    X, y = make_sparse_problem(30, 5, seed=0)
    C = np.ones(30)
    bad_X = X.toarray()
    bad_X[0, 0] = np.nan
    cases = [
        lambda: solve_pcd(bad_X, y, C),
        lambda: solve_pcd(np.ones(5), y, C),
        lambda: solve_pcd(X, y[:-1], C),
        lambda: solve_pcd(X, np.full(30, np.nan), C),
        lambda: solve_pcd(X, np.array(["a"] * 30), C),
        lambda: solve_pcd(X, y, C[:-1]),
        lambda: solve_pcd(X, y, -C),
        lambda: solve_pcd(X, y, np.full(30, np.inf)),
        lambda: solve_pcd(X, y, C, eps=-1.0),  # (0: no stopping rule, accepted)
        lambda: solve_pcd(X, y, C, eps=np.nan),
        lambda: solve_pcd(X, y, C, bias=np.nan),
        lambda: solve_pcd(X, y, C, max_iter=-1),
        lambda: solve_pcd(X, y, C, max_iter=2.5),
        lambda: solve_pcd(X, y, C, eps="tight"),
        lambda: solve_pcd(X, y, C, seed=1.5),
        lambda: solve_pcd(X, y, C, bias="one"),
        lambda: solve_pcd(X, y, C, w0=np.zeros(4)),
        lambda: solve_pcd(X, y, C, 1.0, w0=np.zeros(5)),
        lambda: solve_pcd(X, y, C, w0=np.full(5, np.inf)),
    ]
    for case in cases:
        with pytest.raises(InvalidInputError) as info:
            case()
        assert "\n" not in str(info.value)


PCD_OVERFLOW = """
import numpy as np, scipy.sparse as sp
import linsvm
from linsvm.solvers import Subproblem
from linsvm.solvers.pcd import solve_pcd
X = sp.csr_matrix(np.array([[1.0], [-1.0]]))
y = np.array([1.0, -1.0])
try:
    linsvm.train(X, y, solver=34, C=1e308)
except linsvm.InvalidInputError as refused:
    print(refused)
# from a start (the rule's scale infinite: the start is the result), a step of NaN skipped
sol = solve_pcd(Subproblem(X, y, np.full(2, 1e308), 0.01, 5, w0=np.array([0.5])))
print(sol.w[0], sol.converged)
"""


def test_a_gradient_past_float64_is_refused_and_never_loops():
    """C = 1e308 on two rows: the gradient at w = 0 overflows, the step -g/h was NaN, and the
    backtracking looped forever inside the compiled kernel (no Ctrl-C or SIGTERM stopped
    it). Refused at w = 0 now, as -s 2 and -s 40 refuse it; from a start, the NaN step is
    skipped."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", PCD_OVERFLOW], capture_output=True,
                         text=True, timeout=180)  # fmt: skip
    assert run.returncode == 0, run.stderr
    refusal, start = run.stdout.splitlines()
    assert refusal.startswith("the gradient at w = 0 overflows float64")
    assert start == "0.5 True"


# ----------------------------------------------------------------------------- the interface


class Recorder:
    """A hook keeping (iteration, measure, w) of each call; at iteration ``stop_at`` it
    captures the state and asks to stop. ``every=False``: batches of iterations are enough."""

    def __init__(self, stop_at=None, every=True):
        self.seen = []
        self.state = None
        self.objectives = None
        self.stop_at = stop_at
        if not every:
            self.every_iteration = False

    def __call__(self, progress):
        self.seen.append((progress.iteration, progress.measure, progress.w.copy()))
        if self.objectives is None:
            self.objectives = (progress.w.copy(), progress.objectives())
        if self.stop_at is not None and progress.iteration >= self.stop_at:
            self.state = progress.state()
            return False
        return None


def _same(a: Solution, b: Solution) -> None:
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
    assert (a.primal, a.dual, a.gap) == (b.primal, b.dual, b.gap)
    for name in ("stop_measure", "stop_measure0", "grad_norm", "stop_ratio",
                 "n_line_search_steps", "n_evaluations", "n_gradient_checks"):  # fmt: skip
        assert a.figures[name] == b.figures[name], name


def test_batched_hook_changes_nothing():
    X, y = make_sparse_problem(300, 40, density=0.15, seed=12)
    C = np.random.default_rng(1).uniform(0.0, 3.0, size=300)
    plain = solve_pcd(X, y, C, 1.0, 1e-6, seed=4)
    assert plain.n_iter >= 5
    assert (
        plain.figures["stop_ratio"] == plain.figures["grad_norm"] / plain.figures["stop_measure0"]
    )
    for every in (True, False):
        hook = Recorder(every=every)
        _same(solve_pcd(X, y, C, 1.0, 1e-6, seed=4, hook=hook), plain)
        assert hook.seen[-1][0] == plain.n_iter
        np.testing.assert_array_equal(hook.seen[-1][2], plain.w)
        # the hook's objectives: P(w) and the dual at w's dual point, as the Solution's
        w, (primal, dual) = hook.objectives
        assert primal == pytest.approx(p_of(X, 1.0, y, C, w), rel=1e-12)
        assert dual <= primal


@pytest.mark.parametrize("warm", [False, True])
def test_interrupt_and_resume_is_exact(warm):
    X, y = make_sparse_problem(300, 40, density=0.15, seed=13)
    C = np.random.default_rng(2).uniform(0.0, 3.0, size=300)
    w0 = solve_pcd(X, y, 0.3 * C, 1.0, 1e-3).w if warm else None
    full = solve_pcd(X, y, C, 1.0, 1e-7, seed=8, w0=w0)
    assert full.converged and full.n_iter >= 4
    for k in (1, 2, full.n_iter - 1):
        hook = Recorder(stop_at=k)
        part = solve_pcd(X, y, C, 1.0, 1e-7, seed=8, w0=w0, hook=hook)
        assert part.n_iter == k and not part.converged and part.stop_reason == INTERRUPTED
        np.testing.assert_array_equal(part.w, hook.seen[-1][2])
        assert part.gap >= 0.0 and part.primal == pytest.approx(p_of(X, 1.0, y, C, part.w))
        resumed = solve_pcd(X, y, C, 1.0, 1e-7, seed=8, w0=w0, resume=hook.state)
        _same(resumed, full)
    state = dict(hook.state)
    state["b"] = state["b"][:-1]
    with pytest.raises(InvalidInputError):
        solve_pcd(X, y, C, 1.0, 1e-7, seed=8, resume=state)
