"""The cutting-plane solvers of linsvm.solvers.cutting_plane: SVMperf's 1-slack algorithm
(-s 35, svmperf) and OCAS (-s 36, ocas).

- both reach the optimum (LIBLINEAR's -s 3 at a tight tolerance) within 1e-6 relative primal on
  a9a, reuters (with a bias) and a generated set, with a certified bound: dual <= P* <= primal;
- the reduced dual's bound is a lower bound at every iteration, the working set stays within
  its buffer (aggregation), the exact line search beats a grid;
- hook, batches, interrupt and resume give the uninterrupted run's model bit for bit; a
  damaged checkpoint and bad input give one-line errors;
- through ``linsvm.train``, the CLI and the model file;
- against the original programs (skipped when absent): svmocas -m 1 / -m 0 need about as
  many iterations to a 1% gap as OCAS and the plain cutting plane (within 20%) on a9a at
  C = 1; svm_perf's w at -e 0.1 scores P within its tolerance of ours, and its own iteration
  count is near ours.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm.cli import main
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, primal_value
from linsvm.solvers import SOLVERS, Solution, Subproblem, solver_number
from linsvm.solvers import cutting_plane as cp
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, STALLED

# the benchmarks package at the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import originals_cutting_plane as originals  # noqa: E402

SOLVE = {"svmperf": cp.solve_svmperf, "ocas": cp.solve_ocas}
OPTIMUM_CACHE: dict[tuple, float] = {}


def _sub(X, y, C=1.0, eps=None, max_iter=10000, bias=-1.0, resume=None, **options) -> Subproblem:
    c_rows = np.full(np.shape(y)[0], C) if np.ndim(C) == 0 else C
    return Subproblem(X, y, c_rows, eps, max_iter, bias=bias, resume=resume, options=options)


def run(method, X, y, C=1.0, eps=None, hook=None, **kw) -> Solution:
    if eps is None:
        eps = cp.DEFAULT_SVMPERF_EPS if method == "svmperf" else cp.DEFAULT_OCAS_TOL_REL
    return SOLVE[method](_sub(X, y, C, eps, **kw), hook)


def _primal(X, y, C, w, bias=-1.0) -> float:
    X = sp.csr_matrix(X)
    c_rows = np.full(X.shape[0], C)
    return float(primal_value(X.indptr, X.indices, X.data, bias, y, c_rows, w, LOSS_HINGE))


def optimum(key, X, y, C, bias=-1.0) -> float:
    """P* from LIBLINEAR's -s 3 (scikit-learn's LinearSVC, loss "hinge", its bundled LIBLINEAR
    with a cap we can raise) at tol 1e-10, or dual coordinate descent (-s 3) with a certified
    relative gap <= 1e-9 where scikit-learn is absent: compiled C, no Numba compilation."""
    if (key, C, bias) not in OPTIMUM_CACHE:
        try:
            from sklearn.svm import LinearSVC
        except ImportError:
            sol = SOLVERS[3].solve(_sub(X, y, C, 1e-9, 1_000_000, bias=bias))
            assert sol.gap <= 1e-9 * sol.primal
            OPTIMUM_CACHE[(key, C, bias)] = sol.primal
        else:
            svc = LinearSVC(
                loss="hinge",
                dual=True,
                C=C,
                tol=1e-10,
                max_iter=10**7,
                fit_intercept=bias > 0,
                intercept_scaling=bias if bias > 0 else 1.0,
            )
            svc.fit(X, y)
            w = svc.coef_.ravel()
            if bias > 0:  # its intercept is bias x the bias feature's weight
                w = np.append(w, svc.intercept_[0] / bias)
            OPTIMUM_CACHE[(key, C, bias)] = _primal(X, y, C, w, bias)
    return OPTIMUM_CACHE[(key, C, bias)]


@pytest.fixture(scope="module")
def a9a(load_shared):
    X, y = load_shared("a9a")
    return X, np.where(y > 0, 1.0, -1.0)


def _check_bound(sol: Solution, p_star: float) -> None:
    # p_star is LIBLINEAR's primal at tol 1e-10, above P* by up to ~1e-11 relative (an exact
    # reduced dual certifies the cutting planes' P within 2e-15 of its bound, below it)
    assert sol.dual <= p_star * (1 + 1e-12) and p_star <= sol.primal * (1 + 1e-10)
    assert sol.gap >= 0.0 and sol.gap == pytest.approx(sol.primal - sol.dual)


# ----------------------------------------------------------------------------- optimum


def _tight_eps(method: str, X, C: float, p_star: float) -> float:
    """A tolerance that stops within 5e-7 P* of the optimum: OCAS's relative gap, or the
    svm_perf rule's eps, at which P(w) - F_m(w) <= C l eps / 100 = 2.5e-7 P* (the QP's
    inexactness adds at most about as much)."""
    return 5e-7 if method == "ocas" else 100 * 2.5e-7 * p_star / (C * X.shape[0])


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
def test_reaches_optimum_on_a9a(a9a, method):
    X, y = a9a
    p_star = optimum("a9a", X, y, 1.0)
    sol = run(method, X, y, 1.0, eps=_tight_eps(method, X, 1.0, p_star))
    assert sol.stop_reason == CONVERGED
    assert (sol.primal - p_star) / p_star <= 1e-6
    _check_bound(sol, p_star)
    assert sol.primal == pytest.approx(_primal(X, y, 1.0, sol.w), rel=1e-12)
    assert sol.figures["n_cuts"] >= 1 and sol.figures["qp_iterations"] > 0


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
def test_reaches_optimum_on_reuters_with_bias(load_shared, method):
    X, y = load_shared("reuters.trn")
    y = np.where(y > 0, 1.0, -1.0)
    p_star = optimum("reuters", X, y, 1.0, bias=1.0)
    sol = run(method, X, y, 1.0, eps=_tight_eps(method, X, 1.0, p_star), bias=1.0)
    assert sol.converged and sol.w.shape == (X.shape[1] + 1,)
    assert (sol.primal - p_star) / p_star <= 1e-6
    _check_bound(sol, p_star)


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
@pytest.mark.parametrize("C", [0.05, 10.0])
def test_reaches_optimum_on_generated_data(method, C):
    X, y = make_sparse_problem(n_rows=400, n_features=30, seed=3, noise=0.3)
    p_star = optimum("generated", X, y, C)
    sol = run(method, X, y, C, eps=_tight_eps(method, X, C, p_star))
    assert sol.converged
    assert (sol.primal - p_star) / p_star <= 1e-6
    _check_bound(sol, p_star)


def test_svmperf_default_rule_is_svm_perfs():
    """At the stop 100/l (H(w) - xi) <= eps, and then P(w) - F_m(w) = C l eps / 100 at most:
    the relative gap follows."""
    X, y = make_sparse_problem(n_rows=500, n_features=25, seed=4, noise=0.3)
    sol = run("svmperf", X, y, 1.0)
    assert sol.converged and sol.figures["stop_measure"] <= cp.DEFAULT_SVMPERF_EPS
    p_star = optimum("generated-4", X, y, 1.0)
    _check_bound(sol, p_star)
    assert sol.primal - p_star <= 1.0 * X.shape[0] * cp.DEFAULT_SVMPERF_EPS / 100


def test_svmperf_stops_by_its_rule_only_after_a_solved_reduced_dual():
    """A reduced dual's solve can stop at its step cap: the rule on the cut's violation bounds
    P - P* only at a solved QP, so it waits for one (all-zero rows with a bias: P* = 4e7 + 1/2
    at w_bias = -1; it stopped at w = 0, P = 5e7, called converged). Without the cap the
    solves end exact."""
    X = sp.csr_matrix((50, 3))
    y = np.where(np.arange(50) < 20, 1.0, -1.0)
    capped = run("svmperf", X, y, 1e6, bias=1.0, qp_max_steps=10, max_iter=50)
    assert capped.figures["qp_capped"] >= 40 and not capped.converged
    sol = run("svmperf", X, y, 1e6, bias=1.0)
    assert sol.figures["qp_capped"] == 0 and sol.converged
    assert sol.primal - (4e7 + 0.5) <= 1e6 * 50 * cp.DEFAULT_SVMPERF_EPS / 100
    assert sol.w[-1] == pytest.approx(-1.0, abs=1e-6)


def _reduced_dual(cuts: np.ndarray, offsets: np.ndarray, C: float, alpha=None,
                  smo_steps: int = 0, max_steps: int = cp.QP_MAX_STEPS):  # fmt: skip
    """Solve max b'alpha - 1/2 alpha'G alpha, alpha >= 0, sum alpha <= C for the cuts' rows as
    the solver does (in a buffer two slots larger); returns (alpha, slack, steps, capped)."""
    m = cuts.shape[0]
    gram = np.zeros((m + 2, m + 2))
    gram[:m, :m] = cuts @ cuts.T
    b = np.zeros(m + 2)
    b[:m] = offsets
    a = np.zeros(m + 2)
    if alpha is not None:
        a[:m] = alpha
    grad = np.zeros(m + 2)
    slack = C - a.sum()
    steps, slack, capped = cp._solve_reduced_dual(
        gram, b, a, grad, m, slack, -1.0, 0.0, max_steps, smo_steps
    )
    assert np.allclose(grad[:m], offsets - gram[:m, :m] @ a[:m], rtol=1e-9, atol=1e-9 * C)
    return a[:m], slack, steps, capped


def _kkt_violation(cuts, offsets, C, alpha, slack) -> tuple[float, float]:
    """(the reduced dual's KKT violation max_j g_j - min_{alpha_j > 0} g_j with the slack's
    g = 0, its duality gap sum_j alpha_j (g_max - g_j)), for the solution given."""
    g = offsets - cuts @ (cuts.T @ alpha)
    g_max = max(0.0, g.max())
    active = g[alpha > 0]
    g_min = min(active.min() if active.size else g_max, 0.0 if slack > 0 else g_max)
    return g_max - g_min, float(alpha @ (g_max - g) + slack * g_max)


def _cut_sets(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Cuts of the shapes that make the reduced dual hard or degenerate: sums of many rows
    (nearly parallel at large C), fewer weights than cuts (a rank-deficient G), repeated and
    zero cuts, a single weight."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(300, 12))
    member = rng.random((40, 300)) < rng.uniform(0.3, 0.9, size=(40, 1))
    if kind == "sums":
        return member @ rows, member.sum(1).astype(float), 1e5
    if kind == "low_rank":
        cuts = member @ rows[:, :4]
        return cuts, member.sum(1).astype(float), 10.0
    if kind == "repeated":
        cuts = member[:20] @ rows
        cuts = np.vstack([cuts, cuts[:10], np.zeros((2, 12))])
        offsets = np.concatenate([member[:20].sum(1), member[:10].sum(1) + 3, [0, 5]])
        return cuts, offsets.astype(float), 100.0
    cuts = (member @ rows)[:, :1]
    return cuts, member.sum(1).astype(float), 1e6


@pytest.mark.parametrize("kind", ["sums", "low_rank", "repeated", "one_weight"])
@pytest.mark.parametrize("seed", range(4))
def test_reduced_dual_is_solved_exactly(kind, seed):
    """From zero, from a feasible point spread over every cut, and after a few SMO steps, the
    reduced dual ends feasible at its optimum: KKT violation and gap at rounding level, the
    same value each way, in far fewer steps than SMO (which the old solver capped)."""
    cuts, offsets, C = _cut_sets(kind, seed)
    m = cuts.shape[0]
    scale = C * float(np.abs(offsets).max() + (cuts @ cuts.T).max() * C)
    values = []
    starts = [(None, 0), (np.full(m, C / (2 * m)), 0), (None, 3 * m)]
    for alpha0, smo_steps in starts:
        alpha, slack, steps, capped = _reduced_dual(cuts, offsets, C, alpha0, smo_steps)
        assert not capped and steps < 20 * m + smo_steps
        assert np.all(alpha >= 0) and slack >= 0
        assert alpha.sum() + slack == pytest.approx(C, rel=1e-12)
        violation, gap = _kkt_violation(cuts, offsets, C, alpha, slack)
        assert gap <= 1e-10 * scale and gap >= -1e-12 * scale
        w = cuts.T @ alpha
        values.append(float(offsets @ alpha - 0.5 * w @ w))
    assert max(values) - min(values) <= 1e-9 * abs(max(values)) + 1e-12 * scale


def test_reduced_dual_rounding_and_duplicates():
    """A cut that enters at 0 and stays at exactly 0 (zero offsets, its gradient above the
    corral's by rounding) is a step of 0, not a division by zero; a cut that duplicates the
    corral's one point (here a zero cut, the origin's twin) takes its mass and the solve
    ends solved, not handed to SMO as a failure; a slack of -1e-11 from rounding is 0."""
    G = np.array([[0.6569324243541242, -0.22827772820357142, -1.466284235273064],
                  [-0.22827772820357142, 0.6698464681448834, 1.3981196699378937],
                  [-1.466284235273064, 1.3981196699378937, 4.609909529724729]])  # fmt: skip
    for C in (1e-8, 1.0):
        gram = np.zeros((5, 5))
        gram[:3, :3] = G
        alpha = np.array([0.0, 0.0, C, 0.0, 0.0])
        steps, slack, capped = cp._solve_reduced_dual(gram, np.zeros(5), alpha, np.zeros(5), 3,
                                                      0.0, -1.0, 0.0, 10**6, 0)  # fmt: skip
        assert not capped and np.all(alpha >= 0) and slack >= 0
        assert alpha.sum() + slack == pytest.approx(C, rel=1e-12)
    x = np.array([0.0, 1.0])  # the zero cut at 0, the slack holding C = 1
    steps, status = cp._active_set_dual(np.zeros((2, 2)), np.array([1.0, 0.0]), x, np.zeros(2),
                                        1.0, -1.0, 0.0, 100)  # fmt: skip
    assert status == 1 and x.tolist() == [1.0, 0.0]
    cuts, offsets, C = _cut_sets("sums", 1)
    alpha, slack, _, capped = _reduced_dual(cuts, offsets, C, np.full(cuts.shape[0], C / 40))
    assert slack >= 0 and not capped


def test_reduced_dual_step_cap_keeps_a_feasible_point():
    cuts, offsets, C = _cut_sets("sums", 0)
    alpha, slack, steps, capped = _reduced_dual(cuts, offsets, C, max_steps=3)
    assert capped and steps == 3
    assert np.all(alpha >= 0) and slack >= 0
    assert alpha.sum() + slack == pytest.approx(C, rel=1e-12)


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
@pytest.mark.parametrize("scaled", [False, True])
def test_large_C_reduced_duals_are_solved(method, scaled):
    """At large C the cuts are sums of nearly the same rows: every reduced dual is still
    solved (none stops at the step cap; SMO alone ran each to 1e6 steps, an hour for -s 35 on
    heart_scale at C = 1e5), and the bound certifies the stop. Features of scales up to 1e5
    (australian's) make the gradients' rounding exceed svm_perf's KKT tolerance, which then
    asks for 0: the solve stops at that floor (SMO alone: every solve at the cap, minutes)."""
    X, y = make_sparse_problem(n_rows=300, n_features=14, seed=8, noise=0.3)
    costs = (1e3, 1e5)
    if scaled:
        # (at C = 1e6 there C |x|^2 ~ 1e21, the reduced dual's gradients all rounding: OCAS
        # stalls at a 2% gap, svmocas no nearer after a minute; svm_perf's rule, trusted
        # alone, stopped at a 9% gap that its certificate puts at 0.5% at most: it stalls)
        X = sp.csr_matrix(X @ sp.diags(np.logspace(0, 5, 14)))
        costs = (1e4,) if method == "ocas" else (1e4, 1e6)
    for C in costs:
        sol = run(method, X, y, C)
        assert sol.figures["qp_capped"] == 0
        assert sol.converged if C < 1e6 else sol.stop_reason == STALLED
        assert sol.figures["qp_iterations"] < 100 * sol.n_iter * (sol.figures["n_cuts"] + 1)
        assert 0 <= sol.gap and sol.dual <= sol.primal


def test_a_stall_at_the_rounding_floor_stops_early():
    """OCAS at C = 1e6 on features up to 1e5 (C |x|^2 ~ 1e21): the reduced dual's gradients
    are all rounding and the same cut returns every iteration, a fixed point. It ran to
    max_iter (3,000 iterations here, 10,000 on the command line); it must stop once neither
    the bound nor the best primal value has improved in ``STALL_ITERATIONS`` iterations, says
    so, and keeps its certified bound."""
    X, y = make_sparse_problem(n_rows=300, n_features=14, seed=8, noise=0.3)
    X = sp.csr_matrix(X @ sp.diags(np.logspace(0, 5, 14)))
    sol = run("ocas", X, y, 1e6, max_iter=3000)
    assert sol.stop_reason == STALLED and not sol.converged
    assert cp.STALL_ITERATIONS < sol.n_iter < 3 * cp.STALL_ITERATIONS
    assert 0 <= sol.gap and sol.dual <= sol.primal
    with pytest.warns(linsvm.ConvergenceWarning, match="stalled .*scale the features"):
        model = linsvm.train(X, y, solver=36, C=1e6, max_iter=3000)
    assert model.results_[0].stop_reason == STALLED
    # a tolerance below rounding stalls too (heart_scale, -s 35 -e 1e-14), at a gap of
    # rounding: the advice is then eps, not C
    from linsvm.training import _why_stalled

    at_rounding = Solution(sol.w, 194, False, STALLED, 96.5, 96.5 - 1e-11, 1e-11)
    assert "(raise eps)" in _why_stalled(at_rounding)
    assert "scale the features" in _why_stalled(sol)


def test_svmperf_stops_on_its_rule_only_where_the_gap_it_promises_holds():
    """One feature scaled by 1e8 (|x|^2 ~ 1e17 in the reduced dual's Gram matrix): rounding
    made the reduced dual's slack xi larger than any cut's offset (10240 where 200 is the
    most), its dual -9732 below D(0) = 0, and so no violation: svm_perf's rule stopped at
    once, "converged" at the zero model (P = C l = 200, bound 2e-15) with no warning. It
    stops on the rule only where P - bound <= 1.5 C l eps / 100 (the module's certificate);
    here it stalls, and says so."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    y = np.sign(X @ rng.normal(size=10) + 0.5 * rng.normal(size=200))
    X[:, 0] *= 1e8
    X = sp.csr_matrix(X)
    sol = run("svmperf", X, y, 1.0, max_iter=300)
    if sol.converged:
        assert sol.primal - sol.figures["lower_bound"] <= 1.5 * 200 * cp.DEFAULT_SVMPERF_EPS / 100
    assert sol.stop_reason == STALLED
    with pytest.warns(linsvm.ConvergenceWarning, match="stalled"):
        linsvm.train(X, y, solver=35, max_iter=300)


@pytest.mark.parametrize("C", [1e2, 1e4, 1e6])
def test_svmperf_rule_bounds_the_gap_on_separable_data(C):
    """svm_perf's rule stops when the cut at w is violated by at most eps; that bounds
    P(w) - F_m(w), not the reduced dual's own gap, which its QP precision (half the smallest
    earlier violation) left large when the violation dropped to 0 at once: separable data at
    C = 1e4 stopped at -e 0.001 with P 5x P* and no warning. The stop now comes after a
    solve to half eps: P(w) - D <= 1.5 C l eps / 100."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 4))
    y = np.sign(X[:, 0])
    eps = 1e-3
    sol = run("svmperf", X, y, C, eps=eps)
    assert sol.converged and 0 <= sol.gap <= 1.5 * C * 100 * eps / 100
    p_star = run("ocas", X, y, C, eps=1e-9).primal
    assert sol.primal <= p_star + 1.5 * C * 100 * eps / 100 and sol.primal <= 1.01 * p_star


def test_bound_below_optimum_at_every_iteration_and_small_buffer():
    """Every iteration's reduced dual bounds P* from below; a two-cut buffer (aggregation
    every iteration) still converges."""
    X, y = make_sparse_problem(n_rows=300, n_features=20, seed=5, noise=0.3)
    p_star = optimum("generated-5", X, y, 1.0)
    seen = []

    def hook(progress):
        f = progress.figures
        seen.append((f["dual"], f["lower_bound"], f["primal"], f["n_cuts"]))

    for method in ("ocas", "svmperf"):
        seen.clear()
        sol = run(method, X, y, 1.0, eps=1e-3, hook=hook)
        assert sol.converged and len(seen) == sol.n_iter
        duals, bounds, primals, _ = map(np.array, zip(*seen, strict=True))
        assert np.all(duals <= p_star * (1 + 1e-12)) and np.all(primals >= p_star * (1 - 1e-12))
        assert np.all(np.diff(bounds) >= 0)
        stop = {"tol_rel": 1e-3} if method == "svmperf" else {}
        small = run(method, X, y, 1.0, eps=1e-3, max_cuts=2, **stop)
        assert small.figures["aggregations"] > 0 and small.figures["n_cuts"] <= 2
        _check_bound(small, p_star)
        assert small.converged and small.primal - p_star <= 2e-3 * p_star
    assert run("ocas", X, y, 1.0, cut_memory=1).converged  # the buffer's floor of 2 cuts


def test_line_search_is_exact():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = 50
        z_b, z_c = rng.normal(size=n), rng.normal(size=n) * 2
        aa, ab, cost = rng.uniform(0.1, 5), rng.normal(), rng.uniform(0.1, 3)

        def f(t, z_b=z_b, z_c=z_c, aa=aa, ab=ab, cost=cost):
            t = np.atleast_1d(t)[:, None]
            hinge = np.maximum(0, 1 - z_b - t * (z_c - z_b)).sum(axis=1)
            return 0.5 * aa * t[:, 0] ** 2 + ab * t[:, 0] + cost * hinge

        t = cp._line_search(z_b, z_c, aa, ab, cost, np.empty(n), np.empty(n))
        assert t >= 0 and f(t)[0] <= f(np.linspace(0, 5, 20001)).min() + 1e-9


# ----------------------------------------------------------------------------- hooks, resume


_X, _Y = make_sparse_problem(n_rows=200, n_features=25, seed=6, noise=0.3)


class _Stop:
    """Stops at iteration k (capturing the state there); every=False takes batches."""

    def __init__(self, k=None, every=True):
        self.k, self.state, self.iterations = k, None, []
        if not every:
            self.every_iteration = False

    def __call__(self, progress):
        self.iterations.append(progress.iteration)
        primal, bound = progress.objectives()
        assert primal == pytest.approx(_primal(_X, _Y, 1.0, progress.w), rel=1e-12)
        assert bound <= primal
        progress.w[:] = 1e6  # a hook scribbling on w changes nothing
        if self.k is not None and progress.iteration >= self.k:
            self.state = progress.state()
            return False
        return None


def _same(a: Solution, b: Solution) -> None:
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
    assert (a.primal, a.dual) == (b.primal, b.dual)
    assert a.figures == b.figures


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
def test_hook_and_batches_change_nothing(method):
    full = run(method, _X, _Y, 1.0, eps=1e-4)
    assert full.converged and full.n_iter >= 8
    every = _Stop()
    _same(run(method, _X, _Y, 1.0, eps=1e-4, hook=every), full)
    assert every.iterations == list(range(1, full.n_iter + 1))
    batches = _Stop(every=False)
    _same(run(method, _X, _Y, 1.0, eps=1e-4, hook=batches), full)
    assert batches.iterations[-1] == full.n_iter


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_interrupt_and_resume_is_exact(method, k):
    full = run(method, _X, _Y, 1.0, eps=1e-4, inactive_limit=3, max_cuts=6)
    hook = _Stop(k)
    part = run(method, _X, _Y, 1.0, eps=1e-4, hook=hook, inactive_limit=3, max_cuts=6)
    assert part.stop_reason == INTERRUPTED and not part.converged and part.n_iter == k
    assert part.dual <= part.primal
    _same(run(method, _X, _Y, 1.0, eps=1e-4, resume=hook.state, inactive_limit=3, max_cuts=6),
          full)  # fmt: skip
    # a stop at the last iteration is no interruption
    _same(run(method, _X, _Y, 1.0, eps=1e-4, hook=_Stop(full.n_iter), inactive_limit=3,
              max_cuts=6), full)  # fmt: skip
    # damaged checkpoints
    damaged = []
    for name, change in (("gram", lambda s: s.pop("gram")),
                         ("cuts", lambda s: s.__setitem__("cuts", s["cuts"][:-1])),
                         ("alpha", lambda s: s["alpha"].__setitem__(0, -1.0)),
                         # (outside the simplex sum alpha <= C: every reduced solve ran to
                         # its step cap)
                         ("alpha sum", lambda s: s["alpha"].__setitem__(0, 1e300)),
                         ("istate", lambda s: s["istate"].__setitem__(1, 10**6)),
                         ("w_b", lambda s: s["w_b"].__setitem__(0, math.nan))):  # fmt: skip
        state = {key: value.copy() for key, value in hook.state.items()}
        change(state)
        damaged.append((name, state))
    for name, state in damaged:
        with pytest.raises(InvalidInputError) as info:
            run(method, _X, _Y, 1.0, eps=1e-4, resume=state, inactive_limit=3, max_cuts=6)
        assert "\n" not in str(info.value), name


@pytest.mark.parametrize("method", ["ocas", "svmperf"])
def test_unused_columns_are_left_out_of_the_cuts(method):
    """The cuts are dense over the weights: 25 used columns spread over 10^6 (as hashed
    features are) once made each iteration cost O(10^6) per cut and capped the buffer at a
    few cuts. The solve now sees the used columns only: the same iterations and objective,
    w zero elsewhere, a hook's w and objectives over every feature, resume exact."""
    width = 10**6
    spread = np.sort(np.random.default_rng(0).choice(width, _X.shape[1], replace=False))
    wide = sp.csr_matrix((_X.data, spread[_X.indices], _X.indptr), shape=(_X.shape[0], width))
    narrow = run(method, _X, _Y, 1.0, eps=1e-4, bias=1.0)
    full = run(method, wide, _Y, 1.0, eps=1e-4, bias=1.0, cut_memory=2**24)
    assert full.w.shape == (width + 1,) and full.n_iter == narrow.n_iter
    np.testing.assert_array_equal(full.w[spread], narrow.w[:-1])
    assert full.w[-1] == narrow.w[-1] and np.count_nonzero(full.w[:-1]) <= _X.shape[1]
    assert full.primal == narrow.primal and full.dual == narrow.dual

    seen = []

    def hook(progress):
        w = progress.w.copy()
        seen.append(w.shape)
        primal, _ = progress.objectives()
        assert primal == pytest.approx(_primal(wide, _Y, 1.0, w, bias=1.0), rel=1e-12)
        if progress.iteration == 3:
            hook.state = progress.state()
            return False
        return None

    run(method, wide, _Y, 1.0, eps=1e-4, bias=1.0, hook=hook, cut_memory=2**24)
    assert seen == [(width + 1,)] * 3
    resumed = run(method, wide, _Y, 1.0, eps=1e-4, bias=1.0, resume=hook.state,
                  cut_memory=2**24)  # fmt: skip
    np.testing.assert_array_equal(resumed.w, full.w)
    # a state saved over every feature (as a run that kept the unused columns saved it)
    keep = np.append(spread, width)
    wide_state = dict(hook.state)
    for name in ("cuts", "w_c", "w_b", "last_cut"):
        value = hook.state[name]
        widened = np.zeros(value.shape[:-1] + (width + 1,))
        widened[..., keep] = value
        wide_state[name] = widened
    resumed = run(method, wide, _Y, 1.0, eps=1e-4, bias=1.0, resume=wide_state,
                  cut_memory=2**24)  # fmt: skip
    np.testing.assert_array_equal(resumed.w, full.w)


def test_max_iter_stops_unconverged():
    sol = run("svmperf", _X, _Y, 1.0, eps=1e-9, max_iter=3)
    assert sol.stop_reason == MAX_ITER and sol.n_iter == 3 and not sol.converged
    assert sol.dual <= sol.primal


def _bad_calls(X, y):
    n = y.shape[0]
    return [
        lambda: run("ocas", X, y, 0.0),
        lambda: run("ocas", X, y, -1.0),
        lambda: run("ocas", X, y, math.nan),
        lambda: run("svmperf", X, y, np.linspace(0.5, 1.5, n)),  # weights
        lambda: run("ocas", X, y, "1"),
        lambda: run("ocas", X, np.where(y > 0, 1.0, 0.0)),
        lambda: run("ocas", X, y[:-1]),
        lambda: run("ocas", X, y.astype(str)),
        lambda: run("ocas", X, y, eps=-0.1),
        lambda: run("svmperf", X, y, eps=math.inf),
        lambda: run("ocas", X, y, max_iter=0),
        lambda: run("ocas", X, y, max_iter=2.5),
        lambda: run("ocas", X, y, mu=0.0),
        lambda: run("ocas", X, y, mu=2.0),
        lambda: run("svmperf", X, y, mu=0.5),
        lambda: run("ocas", X, y, tol_rel=0.1),
        lambda: run("svmperf", X, y, tol_abs=0.1),
        lambda: run("ocas", X, y, tol_abs=-1.0),
        lambda: run("ocas", X, y, inactive_limit=-1),
        lambda: run("ocas", X, y, max_cuts=1),
        lambda: run("ocas", X, y, qp_tol_rel=math.nan),
        lambda: run("ocas", X, y, hook=3),
        lambda: run("ocas", X, y, bias=math.inf),
        lambda: run("ocas", X[:0], y[:0]),
        lambda: run("ocas", sp.csr_matrix(np.full((2, 2), np.nan)), np.array([1.0, -1.0])),
        lambda: cp.solve_ocas(Subproblem(X, y, np.ones(n), 0.01, 10, w0=np.zeros(X.shape[1]))),
        lambda: cp.solve_ocas(
            Subproblem(X, y, np.ones(n), 0.01, 10, bias=1.0, regularize_bias=False)
        ),  # fmt: skip
    ]


@pytest.mark.parametrize("k", range(len(_bad_calls(sp.csr_matrix((3, 2)), np.ones(3)))))
def test_bad_input_raises_one_line_error(k):
    X, y = make_sparse_problem(n_rows=20, n_features=5, seed=7)
    with pytest.raises(InvalidInputError) as info:
        _bad_calls(X, y)[k]()
    assert "\n" not in str(info.value) and str(info.value)


# ----------------------------------------------------------------------------- API, CLI, file


def test_train_cli_and_model_file(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=240, n_features=15, n_classes=3, seed=1)
    assert solver_number("svmperf") == 35 and solver_number("ocas") == 36
    for name in ("svmperf", "ocas"):
        model = linsvm.train(X, y, solver=name, C=0.5, eps=1e-4, bias=1.0)
        assert model.solver == solver_number(name) and model.coef_.shape == (3, 15)
        assert np.mean(model.predict(X) == y) > 0.8
        for r in model.results_:
            assert r.converged and r.gap >= 0 and r.dual <= r.primal
        path = tmp_path / f"{name}.model"
        model.save(path)
        assert "solver_type L2R_L1LOSS_SVC_DUAL" in path.read_text()
        again = linsvm.load_model(path)
        np.testing.assert_allclose(again.coef_, model.coef_, rtol=1e-15)
    data = tmp_path / "train.svm"
    Xb, yb = make_sparse_problem(n_rows=150, n_features=10, seed=2)
    linsvm.write_libsvm(Xb, yb, data)
    out = tmp_path / "cli.model"
    assert main(["train", "-q", "-s", "svmperf", "-c", "2", "-e", "0.01", str(data), str(out)]) == 0
    cli_model = linsvm.load_model(out)
    direct = run("svmperf", Xb, np.where(yb == cli_model.labels_[0], 1.0, -1.0), 2.0, eps=0.01)
    np.testing.assert_allclose(cli_model.coef_[0], direct.w, rtol=1e-12, atol=1e-12)
    assert main(["train", "-q", "-s", "36", str(data), str(tmp_path / "o.model")]) == 0
    assert main(["train", "-q", "-s", "ocas", "-W", str(data), str(data), str(out)]) != 0
    # the summary gives the certified bound and the relative gap (never below 0), not a
    # "stop measure" (svm_perf's rule stops on the cut's violation, not on the gap)
    capsys.readouterr()
    assert main(["train", "-s", "36", "-e", "1e-9", str(data), str(tmp_path / "o.model")]) == 0
    line = re.search(r"primal = (\S+)  lower bound = (\S+)  relative gap = (\S+)$",
                     capsys.readouterr().out, re.M)  # fmt: skip
    assert line and float(line.group(2)) <= float(line.group(1)) and float(line.group(3)) >= 0


# ----------------------------------------------------------------------------- the originals


def _gap_iterations(method, X, y, C, tol) -> int:
    """Iterations until (P - bound) / P <= tol, with svmocas's rule and QP precision."""
    if method == "ocas":
        return run("ocas", X, y, C, eps=tol).n_iter
    return run("svmperf", X, y, C, eps=1e-12, tol_rel=tol).n_iter


@pytest.mark.parametrize("method", [1, 0])
def test_iterations_match_svmocas(a9a, shared_dataset, method):
    if originals.find_svmocas() is None:
        pytest.skip("svmocas is not installed (scripts/oracles/libocas.sh)")
    X, y = a9a
    theirs = originals.run_svmocas(shared_dataset("a9a"), 1.0, method=method, tol_rel=0.01,
                                   problem=a9a)  # fmt: skip
    trace = np.array(theirs.trace)
    assert (trace[-1, 2] - trace[-1, 3]) <= 0.01 * trace[-1, 2]
    assert theirs.primal == pytest.approx(trace[-1, 2], rel=1e-6)  # the same problem
    ours = _gap_iterations("ocas" if method == 1 else "svmperf", X, y, 1.0, 0.01)
    assert abs(ours - theirs.iterations) <= 0.2 * theirs.iterations, (ours, theirs.iterations)


def test_svm_perf_agrees(load_shared, shared_dataset):
    """svm_perf (-w 3, the 1-slack dual algorithm) on svmguide3 (svm_perf takes 8 s on a9a
    at -e 0.1): its P and ours within its tolerance of P*, the same w up to what that
    tolerance allows (||w - w*||^2 <= 2 (P(w) - P*)), and about as many iterations."""
    if originals.find_svm_perf() is None:
        pytest.skip("svm_perf_learn is not built (scripts/oracles/svm_perf.sh SRC)")
    X, y = load_shared("svmguide3")
    y = np.where(y > 0, 1.0, -1.0)
    reference = run("ocas", X, y, 1.0, eps=1e-10)  # certified: dual <= P* <= primal
    assert reference.gap <= 1e-9 * reference.primal
    p_star = reference.dual
    for eps in (0.1, 1e-3):
        theirs = originals.run_svm_perf(shared_dataset("svmguide3"), 1.0, eps=eps,
                                        problem=(X, y))  # fmt: skip
        ours = run("svmperf", X, y, 1.0, eps=eps)
        # P(w) - F_m(w) <= C l eps / 100 at the stop, and F_m(w) - min F_m is the QP's
        # inexactness (its KKT precision half the smallest violation seen): twice that
        allowed = 2 * 1.0 * X.shape[0] * eps / 100
        over_theirs, over_ours = theirs.primal - p_star, ours.primal - p_star
        assert -1e-9 * p_star <= over_theirs <= allowed and -1e-9 * p_star <= over_ours <= allowed
        distance = np.linalg.norm(theirs.w - ours.w)
        assert distance <= math.sqrt(2 * max(over_theirs, 0)) + math.sqrt(2 * max(over_ours, 0))
        # svm_perf counts one iteration more (its first, at w = 0, solves no QP); it takes
        # up to a third more iterations (a9a at -e 0.1: 613 against our 461)
        assert ours.n_iter + 1 <= theirs.iterations <= 1.4 * (ours.n_iter + 1)
