"""Warm starts of -s 4, 5, 6, 7, 12, 13 from a solver's own output (``alpha0``, ``w0``).

- From the solver's own solution at the same C: a few outer iterations at most (none for -s 6,
  whose first Newton iteration finds the rule already met), the same primal value (relative
  1e-6; -s 4 and -s 13, whose duality gaps at the tolerance used are larger, move by at most
  that gap).
- From the solution at C/4, at 4C (an infeasible start for -s 4, 7 and 13, projected) or with
  other sample weights (some of them 0): the returned dual variables are feasible, and the
  primal value is the cold start's within what the two duality gaps allow (weak duality:
  |P_warm - P_cold| <= max(gap_warm, gap_cold)); for the primal-only L1 solvers within a relative
  1e-5 at a tight tolerance.
- The stopping rules relative to a first-iteration value keep the cold start's reference:
  exactly the cold start's value (-s 5, 12, 13: its first sweep, re-run; -s 6: the 1-norm at
  w = 0), and the warm start meets the rule against it.
- The projections (hypothesis, any real start, no iteration): feasible, a feasible start kept,
  w / W consistent with the dual variables; a reference of 0 (w = 0 optimal) drops the start.
- Bad shapes or non-finite starts: InvalidInputError with a one-line message.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem, rel_diff
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.objective import cs_weights_from_dual, svr_weights_from_dual
from linsvm.solvers import SOLVERS, Subproblem

N_ROWS, N_FEATURES, N_CLASSES = 300, 40, 4
BIAS = 1.0
P = 0.1  # the SVR tube's half width
DUAL = (4, 7, 12, 13)
ALL = (4, 5, 6, 7, 12, 13)
# tolerances at which each solver converges well within its iteration cap on these problems
TIGHT_EPS = {4: 1e-4, 5: 1e-6, 6: 1e-6, 7: 1e-5, 12: 1e-5, 13: 1e-4}
# the L1-loss SVR dual converges slowly: a smaller C keeps it well within its 300 iterations
C_SCALE = {13: 0.1}
# outer iterations of a warm start from the solver's own solution at the same C
SAME_C_ITERS = {4: 3, 5: 2, 6: 0, 7: 1, 12: 1, 13: 2}


def _problem(solver: int):
    """(X, targets): class indices for -s 4, +1/-1 for 5, 6, 7, real targets for 12, 13."""
    if solver == 4:
        X, y = make_sparse_problem(N_ROWS, N_FEATURES, n_classes=N_CLASSES, seed=2)
        return X, (y - 1).astype(np.int64)
    X, y = make_sparse_problem(N_ROWS, N_FEATURES, seed=1)
    if solver in (12, 13):
        rng = np.random.default_rng(5)
        y = X @ rng.normal(size=N_FEATURES) + 0.1 * rng.normal(size=N_ROWS)
    return X, y


class Run:
    """One solver run reduced to what the tests compare."""

    def __init__(self, solver, X, t, C, sol):
        self.solver = solver
        self.C = C
        self.sol = sol
        self.n_iter = sol.n_iter
        self.converged = sol.converged
        self.primal, self.gap = sol.primal, sol.gap
        self.ref = None  # the stopping rule's reference, where it has one
        if solver in DUAL:
            self.start = sol.alpha
        else:
            self.start = sol.w
        if solver in (12, 13):
            self.ref, self.measure = sol.figures["gnorm1_init"], sol.figures["gnorm1"]
        elif solver in (5, 6):
            self.ref, self.measure = sol.figures["stop_measure0"], sol.figures["stop_measure"]


def run(
    solver: int, X, t, C, eps: float, start=None, max_iter: int | None = None, bias=BIAS
) -> Run:
    """Solve through the registry with per-row costs C (-s 4: C_class = 1, so C per row is
    the sample weight), from ``start`` (dual variables or weights by the solver's kind)."""
    spec = SOLVERS[solver]
    sub = Subproblem(
        X,
        np.asarray(t, dtype=np.float64),
        np.asarray(C, dtype=np.float64),
        eps,
        spec.max_iter if max_iter is None else max_iter,
        bias=bias,
        options={"n_classes": N_CLASSES, "p": P},
    )
    if spec.dual:
        sub.alpha0 = start
    else:
        sub.w0 = start
    return Run(solver, X, t, C, spec.solve(sub))


def assert_feasible(r: Run, t) -> None:
    """The dual variables of a run lie in the feasible set of its own costs C."""
    C = r.C
    zero = C == 0
    if r.solver == 4:
        a = r.start
        own = a[np.arange(a.shape[0]), t]
        others = a.copy()
        others[np.arange(a.shape[0]), t] = 0.0
        assert np.all(others <= 0.0)
        # the block solver's a_y = -(sum of the others) is >= 0 up to rounding
        tol = 1e-12 * max(C.max(), 1.0)
        assert np.all(own >= -tol) and np.all(own <= C * (1 + 1e-12))
        assert np.allclose(a.sum(axis=1), 0.0, atol=1e-12 * N_CLASSES * max(C.max(), 1.0))
        assert np.all(a[zero] == 0.0)
    elif r.solver == 7:
        a = r.start
        assert np.all(a[~zero] > 0.0) and np.all(a[~zero] < C[~zero])
        assert np.all(a[zero] == 0.0)
    elif r.solver in (12, 13):
        b = r.start
        assert np.all(b[zero] == 0.0)
        if r.solver == 13:
            assert np.all(np.abs(b) <= C)


def assert_same_optimum(warm: Run, cold: Run) -> None:
    """Both runs reached the optimum to the accuracy their stopping rules certify."""
    if warm.solver in DUAL:
        # P* lies in [P - gap, P] for both runs
        slack = max(warm.gap, cold.gap) + 1e-9 * abs(cold.primal)
        assert abs(warm.primal - cold.primal) <= slack
    else:
        assert rel_diff(warm.primal, cold.primal) <= 1e-5


def assert_cold_reference(warm: Run, cold: Run, eps: float) -> None:
    """A relative stopping rule compares against the cold start's reference, and is met."""
    if warm.ref is None:
        return
    if warm.solver == 6:  # the 1-norm at w = 0, recomputed at that point
        assert rel_diff(warm.ref, cold.ref) <= 1e-12
    else:  # the cold start's first outer iteration, re-run with the same seed
        assert warm.ref == cold.ref
    assert warm.measure <= eps * warm.ref


# ----------------------------------------------------------------------------- from own solution


@pytest.mark.parametrize("solver", ALL)
def test_warm_start_from_own_solution_stops_at_once(solver):
    X, t = _problem(solver)
    C = np.full(N_ROWS, C_SCALE.get(solver, 1.0))
    eps = TIGHT_EPS[solver]
    cold = run(solver, X, t, C, eps)
    assert cold.converged
    warm = run(solver, X, t, C, eps, start=cold.start)
    assert warm.converged
    assert warm.n_iter <= SAME_C_ITERS[solver]
    assert_same_optimum(warm, cold)
    if solver not in (4, 13):
        assert rel_diff(warm.primal, cold.primal) <= 1e-6
    assert_cold_reference(warm, cold, eps)
    assert_feasible(warm, t)


# ----------------------------------------------------------------------------- from another C


@pytest.mark.parametrize("factor", [0.25, 4.0])
@pytest.mark.parametrize("solver", ALL)
def test_warm_start_from_another_C(solver, factor):
    X, t = _problem(solver)
    C = np.full(N_ROWS, C_SCALE.get(solver, 1.0))
    eps = TIGHT_EPS[solver]
    cold = run(solver, X, t, C, eps)
    other = run(solver, X, t, factor * C, eps)
    warm = run(solver, X, t, C, eps, start=other.start)
    assert warm.converged and cold.converged
    assert_feasible(warm, t)
    assert_same_optimum(warm, cold)
    assert_cold_reference(warm, cold, eps)


@pytest.mark.parametrize("solver", ALL)
def test_warm_start_with_other_sample_weights(solver):
    X, t = _problem(solver)
    rng = np.random.default_rng(7)
    scale = C_SCALE.get(solver, 1.0)
    C = scale * rng.uniform(0.3, 3.0, N_ROWS)
    C[rng.choice(N_ROWS, 20, replace=False)] = 0.0
    eps = TIGHT_EPS[solver]
    unweighted = run(solver, X, t, np.full(N_ROWS, scale), eps)
    cold = run(solver, X, t, C, eps)
    warm = run(solver, X, t, C, eps, start=unweighted.start)
    assert warm.converged and cold.converged
    assert_feasible(warm, t)
    assert_same_optimum(warm, cold)
    assert_cold_reference(warm, cold, eps)


@pytest.mark.parametrize("solver", [12, 13])
def test_dual_svr_passes_its_warm_start_on(solver):
    X, y = _problem(solver)
    C = np.ones(N_ROWS)
    cold = run(solver, X, y, C, SOLVERS[solver].default_eps)
    warm = run(solver, X, y, C, SOLVERS[solver].default_eps, start=cold.start)
    assert warm.n_iter <= SAME_C_ITERS[solver]
    with pytest.raises(InvalidInputError):  # the primal -s 11 takes no dual warm start
        sub = Subproblem(X, y, C, 0.1, 10, bias=BIAS, options={"p": P}, alpha0=cold.start)
        SOLVERS[11].solve(sub)


# ----------------------------------------------------------------------------- projections


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([0.01, 1.0, 100.0]))
def test_cs_projection_is_feasible_and_keeps_feasible_blocks(seed, scale):
    X, cls = _problem(4)
    X = sp.vstack([X, sp.csr_matrix((1, N_FEATURES))], format="csr")  # a row x_i = 0
    cls = np.append(cls, 1)
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    C = rng.uniform(0.5, 2.0, n)
    C[rng.choice(n, 10, replace=False)] = 0.0
    alpha0 = scale * rng.normal(size=(n, N_CLASSES))
    r = run(4, X, cls, C, 0.1, start=alpha0, max_iter=0, bias=-1.0)
    assert r.n_iter == 0
    assert_feasible(r, cls)
    Wt = cs_weights_from_dual(X.indptr, X.indices, X.data, -1.0, r.start, N_FEATURES)
    np.testing.assert_allclose(r.sol.w, Wt.T, rtol=1e-12, atol=1e-12 * scale)
    if C[-1] > 0:  # the empty row sits at its dual optimum, as without a warm start
        assert r.start[-1, 1] == C[-1] and r.start[-1].sum() == 0.0
    again = run(4, X, cls, C, 0.1, start=r.start, max_iter=0, bias=-1.0)  # feasible: kept
    np.testing.assert_allclose(again.start, r.start, rtol=1e-12, atol=1e-14 * scale)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), solver=st.sampled_from([12, 13]))
def test_svr_projection_is_feasible_and_w_consistent(seed, solver):
    X, y = _problem(solver)
    rng = np.random.default_rng(seed)
    C = rng.uniform(0.1, 2.0, N_ROWS)
    C[rng.choice(N_ROWS, 10, replace=False)] = 0.0
    beta0 = 3.0 * rng.normal(size=N_ROWS)
    r = run(solver, X, y, C, 0.1, start=beta0, max_iter=0)
    assert r.n_iter == 0
    assert_feasible(r, y)
    live = C > 0
    expected = np.clip(beta0, -C, C) if solver == 13 else beta0
    np.testing.assert_array_equal(r.start[live], expected[live])
    np.testing.assert_allclose(r.sol.w, svr_weights_from_dual(X, BIAS, r.start), atol=1e-12)


@pytest.mark.parametrize("solver", [5, 6])
def test_l1_warm_start_is_the_starting_point(solver):
    X, y = _problem(solver)
    w0 = np.random.default_rng(3).normal(size=N_FEATURES + 1)
    r = run(solver, X, y, np.ones(N_ROWS), 0.01, start=w0, max_iter=0)
    np.testing.assert_array_equal(r.start, w0)


def test_zero_reference_drops_the_warm_start():
    # every |y_i| <= p: beta = 0 (w = 0) is optimal, the rule's reference is 0
    X, y = _problem(12)
    y = 0.05 * np.clip(y, -1.0, 1.0)
    beta0 = np.random.default_rng(0).normal(size=N_ROWS)
    for solver in (13, 12):
        sol = run(solver, X, y, np.ones(N_ROWS), 0.1, start=beta0).sol
        assert sol.converged and sol.n_iter == 1
        assert np.all(sol.alpha == 0.0) and np.all(sol.w == 0.0)
    # tiny C: w = 0 is optimal for the L1-regularised problems
    X, y = _problem(5)
    w0 = np.random.default_rng(1).normal(size=N_FEATURES + 1)
    for solver in (5, 6):
        sol = run(solver, X, y, np.full(N_ROWS, 1e-4), 0.01, start=w0).sol
        assert sol.converged and np.all(sol.w == 0.0)


# ----------------------------------------------------------------------------- bad input


def _bad_starts(solver: int):
    n_w = N_FEATURES + 1
    if solver == 4:
        good = np.zeros((N_ROWS, N_CLASSES))
        return [good[:-1], good.T, good[:, :-1], np.zeros(N_ROWS)], good
    if solver in (5, 6):
        good = np.zeros(n_w)
        return [good[:-1], np.zeros(N_FEATURES + 2), good[None, :]], good
    good = np.zeros(N_ROWS)
    return [good[:-1], np.zeros(N_ROWS + 1), good[:, None]], good


@pytest.mark.parametrize("solver", ALL)
def test_bad_starts_raise_one_line_errors(solver):
    X, t = _problem(solver)
    C = np.ones(N_ROWS)
    bad, good = _bad_starts(solver)
    if solver != 7:  # -s 7 moves any real value into (0, C); NaN / inf included
        non_finite = good.copy()
        non_finite.flat[3] = np.nan
        bad.append(non_finite)
    for start in bad:
        with pytest.raises(InvalidInputError) as info:
            run(solver, X, t, C, 0.1, start=start)
        message = str(info.value)
        assert message and "\n" not in message
