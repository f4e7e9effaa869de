"""The LR dual coordinate descent solver (-s 7) and the LR dual objective / duality gap.

- against liblinear-official 2.50 ``-s 7 -e 1e-6`` (every configuration here converges within
  LIBLINEAR's 300 outer iterations; asserted) and ``-s 0 -e 1e-8`` (the same primal problem by
  Newton): primal values within 1e-6 relative, predictions equal on >= 99.9% of rows; generated
  sparse data, heart_scale, a9a, breast_cancer standardised; bias -1 and 1; class weights;
- the duality gap: >= 0 (up to rounding), shrinking with eps, ~0 at LIBLINEAR's optimum via
  ``lr_dual_point``; weak duality for random feasible points, 0 log 0 = 0 at the bounds;
- properties (hypothesis): the dual objective never increases over an outer iteration,
  0 < alpha < C, alpha + (C - alpha) = C, the running w equals w(alpha);
- the solver interface: a hook changes nothing; a solve interrupted at iteration k and resumed
  from the state its hook captured ends bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import (
    liblinear_predict,
    liblinear_primal,
    liblinear_train,
    make_sparse_problem,
    rel_diff,
    subproblems,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.objective import (
    LOSS_LOGISTIC,
    lr_dual_point,
    lr_dual_value,
    lr_objectives,
    primal_from_dual,
    primal_value,
)
from linsvm.solvers import SOLVERS
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, Subproblem
from linsvm.solvers.dual_lr import solve_lr_dual as solve

TIGHT_EPS = 1e-6
REL_TOL = 1e-6
AGREEMENT = 0.999
GAP_ROUNDING = 1e-9  # relative


def solve_lr_dual(X, y, C, bias, eps=0.1, max_iter=300, *, seed=1, alpha0=None, hook=None, **opt):
    """-s 7 on the sub-problem these arguments make (LIBLINEAR's default eps and cap)."""
    sub = Subproblem(
        X=X, y=np.asarray(y, dtype=np.float64), C=np.asarray(C, dtype=np.float64), eps=eps,
        max_iter=max_iter, bias=bias, seed=seed, alpha0=alpha0, options=opt,
    )  # fmt: skip
    return solve(sub, hook)


def _complement(sol):
    return sol.figures["alpha_complement"]


def _primal(X, bias, y, C, w) -> float:
    return float(primal_value(X.indptr, X.indices, X.data, float(bias), y, C, w, LOSS_LOGISTIC))


def _weight_options(class_weight) -> str:
    return "".join(f" -w{int(lab)} {wt:.17g}" for lab, wt in (class_weight or {}).items())


def compare_with_liblinear(X, y, C: float, bias: float, class_weight=None):
    """Solve as LIBLINEAR -s 7 would and compare with -s 7 and -s 0 at tight tolerances."""
    X = sp.csr_matrix(X, dtype=np.float64)
    opts = f"-c {C:.17g}{_weight_options(class_weight)}"
    ref7, iters = liblinear_train(y, X, f"-s 7 -e {TIGHT_EPS} {opts}", bias)
    assert iters and max(iters) < 300, f"LIBLINEAR -s 7 hit its cap: {iters}"
    ref0, _ = liblinear_train(y, X, f"-s 0 -e 1e-8 {opts}", bias)
    labels = ref7.get_labels()
    [(y_pm1, c_rows)] = subproblems(y, labels, C, class_weight)
    sol = solve_lr_dual(X, y_pm1, c_rows, bias, TIGHT_EPS, 1000)
    assert sol.converged
    primal, dual, gap = lr_objectives(X, bias, y_pm1, c_rows, sol.w, sol.alpha, _complement(sol))
    assert (sol.primal, sol.dual, sol.gap) == (primal, dual, gap)
    assert sol.stop_reason == CONVERGED and sol.solver == 7
    assert gap >= -GAP_ROUNDING * abs(primal)
    assert gap <= 1e-7 * abs(primal)
    for ref in (ref7, ref0):
        [p_ref] = liblinear_primal(ref, X, y, C, LOSS_LOGISTIC, class_weight)
        assert rel_diff(primal, p_ref) <= REL_TOL, (primal, p_ref)
        assert dual <= p_ref * (1 + GAP_ROUNDING)  # the dual bounds P* from below
    ref_pred, ref_dec = liblinear_predict(ref7, X)
    dec = X @ sol.w[: X.shape[1]] + (sol.w[-1] * bias if bias >= 0 else 0.0)
    pred = np.where(dec > 0, labels[0], labels[1])
    counted = np.abs(ref_dec[:, 0]) > 1e-9
    assert np.mean(pred[counted] == ref_pred[counted]) >= AGREEMENT
    return sol


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize(
    ("C", "class_weight", "seed"),
    [(1.0, None, 0), (0.05, None, 1), (8.0, None, 2), (2.0, {1: 3.0, -1: 0.5}, 3)],
)
def test_generated_matches_liblinear(bias, C, class_weight, seed):
    X, y = make_sparse_problem(400, 50, seed=seed, noise=0.5)
    compare_with_liblinear(X, y, C, bias, class_weight)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("name", ["heart_scale", "a9a"])
def test_shared_data_matches_liblinear(load_shared, name, bias):
    X, y = load_shared(name)
    if name == "a9a":  # a cut: keep the test quick (the full set is in the timing note)
        X, y = X[:8000], y[:8000]
    compare_with_liblinear(X, y, 1.0, bias)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_breast_cancer_standardised(bias):
    datasets = pytest.importorskip("sklearn.datasets")
    data = datasets.load_breast_cancer()
    Z = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    y = np.where(data.target == 1, 1.0, -1.0)
    compare_with_liblinear(sp.csr_matrix(Z), y, 1.0, bias, {1: 2.0})


def test_gap_shrinks_with_eps():
    X, y = make_sparse_problem(600, 80, seed=5, noise=0.5)
    C = np.full(len(y), 4.0)
    gaps = []
    for eps in (1.0, 1e-1, 1e-3, 1e-6):
        sol = solve_lr_dual(X, y, C, 1.0, eps)
        primal, _, gap = lr_objectives(X, 1.0, y, C, sol.w, sol.alpha, _complement(sol))
        assert gap >= -GAP_ROUNDING * primal
        gaps.append(max(gap, 0.0))
    assert gaps == sorted(gaps, reverse=True), gaps
    assert gaps[0] > gaps[-1]
    assert gaps[-1] <= 1e-8 * primal


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_dual_point_of_primal_optimum_closes_gap(bias):
    X, y = make_sparse_problem(300, 40, seed=7, noise=0.3)
    ref0, _ = liblinear_train(y, X, "-s 0 -e 1e-10 -c 2", bias)
    labels = ref0.get_labels()
    [(y_pm1, c_rows)] = subproblems(y, labels, 2.0)
    w = np.array([ref0.w[i] for i in range(X.shape[1] + (1 if bias >= 0 else 0))])
    alpha, alpha_c = lr_dual_point(X, bias, y_pm1, c_rows, w, with_complement=True)
    assert np.all(alpha > 0) and np.all(alpha < c_rows)
    np.testing.assert_allclose(alpha + alpha_c, c_rows, rtol=1e-15)
    primal, _, gap = lr_objectives(X, bias, y_pm1, c_rows, w, alpha, alpha_c)
    assert -GAP_ROUNDING * primal <= gap <= 1e-8 * primal
    # without the complement (C - alpha computed) the gap is the same up to rounding
    _, _, gap2 = lr_objectives(X, bias, y_pm1, c_rows, w, alpha)
    assert abs(gap2 - gap) <= 1e-10 * primal
    # a poor w gives a feasible dual point and a clearly positive gap
    _, _, gap_far = lr_objectives(
        X, bias, y_pm1, c_rows, 0.3 * w, lr_dual_point(X, bias, y_pm1, c_rows, 0.3 * w)
    )
    assert gap_far > 1e-3 * primal


def test_dual_value_at_the_bounds():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    y = np.array([1.0, -1.0, 1.0])
    C = np.array([1.0, 2.0, 0.0])
    for alpha in ([0.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.0, 2.0, 0.0]):
        alpha = np.array(alpha)
        w = primal_from_dual(X.indptr, X.indices, X.data, -1.0, y, alpha, 2)
        # entropy terms vanish at the bounds: -f = -1/2 ||w||^2
        assert lr_dual_value(X, -1.0, y, C, alpha) == pytest.approx(-0.5 * w @ w)
    # the optimum of a single row: alpha = C sigma(-w'x) with w = alpha x
    X1 = sp.csr_matrix(np.array([[1.0]]))
    sol = solve_lr_dual(X1, np.array([1.0]), np.array([3.0]), -1.0, 1e-12, 1000)
    p, d, gap = lr_objectives(X1, -1.0, np.array([1.0]), np.array([3.0]), sol.w, sol.alpha)
    assert abs(gap) <= 1e-12 * p


def test_weighted_row_equals_duplicated_row():
    X, y = make_sparse_problem(200, 30, seed=11, noise=0.5)
    C = np.full(len(y), 1.5)
    C2 = C.copy()
    C2[:20] *= 2.0
    C2[20:30] = 0.0  # dropped rows
    a = solve_lr_dual(X, y, C2, 1.0, 1e-8, 1000)
    keep = np.r_[np.arange(20), np.arange(30, len(y)), np.arange(20)]
    b = solve_lr_dual(X[keep], y[keep], C[keep], 1.0, 1e-8, 1000)
    assert np.all(a.alpha[20:30] == 0.0)
    pa = _primal(X, 1.0, y, C2, a.w)
    pb = _primal(X[keep], 1.0, y[keep], C[keep], b.w)
    assert rel_diff(pa, pb) <= 1e-9
    np.testing.assert_allclose(a.w, b.w, atol=1e-6)


def test_orders_seeds_and_warm_start():
    X, y = make_sparse_problem(500, 40, seed=13, noise=0.5)
    C = np.full(len(y), 2.0)
    ref = solve_lr_dual(X, y, C, 1.0, 1e-8, 1000)
    again = solve_lr_dual(X, y, C, 1.0, 1e-8, 1000)
    np.testing.assert_array_equal(ref.w, again.w)  # reproducible from the seed
    assert ref.figures["bucket_size"] >= 1
    p_ref = _primal(X, 1.0, y, C, ref.w)
    for kw in ({"bucket_size": 1}, {"bucket_size": 64, "buckets_per_group": 2}, {"seed": 99}):
        other = solve_lr_dual(X, y, C, 1.0, 1e-8, 1000, **kw)
        assert other.converged
        assert rel_diff(_primal(X, 1.0, y, C, other.w), p_ref) <= 1e-10
    warm = solve_lr_dual(X, y, C, 1.0, 1e-3, 1000, alpha0=ref.alpha)
    assert warm.n_iter <= 2
    # a warm start outside (0, C) is moved inside
    out = solve_lr_dual(X, y, C, 1.0, 1e-3, 0, alpha0=np.r_[np.zeros(250), np.full(250, 5.0)])
    assert np.all(out.alpha > 0) and np.all(out.alpha < C)
    # max_iter reached: not converged
    short = solve_lr_dual(X, y, C, 1.0, 1e-12, 3)
    assert short.n_iter == 3 and not short.converged and short.stop_reason == MAX_ITER
    assert short.figures["gmax"] >= 1e-12 and short.figures["inner_eps"] > 0
    with pytest.raises(InvalidInputError, match="alpha0"):
        solve_lr_dual(X, y, C, 1.0, 1e-3, 10, alpha0=np.ones(3))


@settings(max_examples=25, deadline=None)
@given(
    n_rows=st.integers(1, 60),
    n_features=st.integers(1, 12),
    density=st.floats(0.05, 1.0),
    log_c=st.floats(-3.0, 3.0),
    bias=st.sampled_from([-1.0, 1.0]),
    weighted=st.booleans(),
    bucket_size=st.sampled_from([None, 1, 4]),
    seed=st.integers(0, 2**16),
)
def test_dual_descent_properties(
    n_rows, n_features, density, log_c, bias, weighted, bucket_size, seed
):
    rng = np.random.default_rng(seed)
    X = sp.random(
        n_rows,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.normal(0.0, 2.0, k),
    )
    X.sort_indices()
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    C = np.full(n_rows, 10.0**log_c)
    if weighted:
        C *= rng.choice([0.0, 0.5, 1.0, 3.0], n_rows)
    trained = C > 0
    values = []
    allowed = []  # the increase of f that the inexact inner Newton solves permit
    n_weights = n_features + (1 if bias >= 0 else 0)

    def check(progress):
        inner_eps, w = progress.figures["inner_eps"], progress.w
        alpha = np.ascontiguousarray(progress.alpha)
        alpha_c = np.ascontiguousarray(progress.figures["alpha_complement"])
        assert progress.measure == progress.figures["gmax"]
        allowed.append(inner_eps**2 * C.sum() / 4.0)
        assert np.all(alpha[trained] > 0) and np.all(alpha[trained] < C[trained])
        assert np.all(alpha_c[trained] > 0)
        assert np.all(alpha[~trained] == 0)
        np.testing.assert_allclose(alpha + alpha_c, C, rtol=1e-12)
        w_fresh = primal_from_dual(X.indptr, X.indices, X.data, bias, y, alpha, n_weights)
        np.testing.assert_allclose(w, w_fresh, atol=1e-9 * (1 + np.abs(w_fresh).max()))
        values.append(lr_dual_value(X, bias, y, C, alpha, alpha_c))
        primal = _primal(X, bias, y, C, w_fresh)
        assert primal - values[-1] >= -GAP_ROUNDING * max(abs(primal), 1.0)
        assert progress.objectives() == (_primal(X, bias, y, C, w), values[-1])

    start = solve_lr_dual(X, y, C, bias, 1e-8, 0)
    values.append(lr_dual_value(X, bias, y, C, start.alpha, _complement(start)))
    solve_lr_dual(X, y, C, bias, 1e-8, 50, bucket_size=bucket_size, seed=seed, hook=check)
    scale = max(1.0, abs(values[0]), float(C.sum()))
    # f never increases over an outer iteration by more than the inner solves' tolerance
    # permits: a sub-problem stopped at |g'| < innereps is within innereps^2 C_i / 4 of its
    # minimum (LIBLINEAR's inexact Newton; a strict decrease is not guaranteed)
    for a, b, slack in zip(values[:-1], values[1:], allowed, strict=True):
        assert b >= a - slack - 1e-12 * scale, (values, allowed)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), bias=st.sampled_from([-1.0, 1.0]))
def test_weak_duality_random_points(seed, bias):
    rng = np.random.default_rng(seed)
    X = sp.random(25, 6, density=0.4, format="csr", random_state=rng)
    y = np.where(rng.random(25) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.1, 5.0, 25)
    alpha = C * rng.random(25)
    w = rng.normal(size=6 + (1 if bias >= 0 else 0))
    assert lr_dual_value(X, bias, y, C, alpha) <= _primal(X, bias, y, C, w) + 1e-12


def test_float32_data_and_int64_indices():
    X, y = make_sparse_problem(300, 30, seed=17, noise=0.5)
    C = np.full(len(y), 1.0)
    ref = solve_lr_dual(X, y, C, 1.0, 1e-8, 1000)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X32.indices = X32.indices.astype(np.int64)
    X32.indptr = X32.indptr.astype(np.int64)
    sol = solve_lr_dual(X32, y, C, 1.0, 1e-8, 1000)
    p32 = _primal(X32, 1.0, y, C, sol.w)
    assert rel_diff(p32, _primal(X32, 1.0, y, C, ref.w)) <= 1e-6
    _, _, gap = lr_objectives(X32, 1.0, y, C, sol.w, sol.alpha, _complement(sol))
    assert -GAP_ROUNDING * p32 <= gap <= 1e-8 * p32


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    where=st.floats(0.0, 1.0),
    bias=st.sampled_from([-1.0, 1.0]),
    order=st.sampled_from([(1, 1), (4, 2), (None, None)]),
    warm=st.booleans(),
)
def test_hook_and_resume_change_nothing(seed, where, bias, order, warm):
    """With a hook (every iteration, or batches) the result is the same as without; stopped at
    iteration k and resumed from the state its hook kept, the solve ends bit-identical."""
    rng = np.random.default_rng(seed)
    X = sp.random(80, 10, density=0.3, format="csr", random_state=rng)
    y = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.1, 5.0, 80)
    C[:5] = 0.0
    alpha0 = C * rng.random(80) if warm else None
    opt = dict(bucket_size=order[0], buckets_per_group=order[1], seed=seed, alpha0=alpha0)
    whole = solve_lr_dual(X, y, C, bias, 1e-6, 40, **opt)

    def batches(progress):
        return None

    batches.every_iteration = False
    for hook in (lambda progress: None, batches):
        again = solve_lr_dual(X, y, C, bias, 1e-6, 40, hook=hook, **opt)
        assert np.array_equal(again.w, whole.w) and np.array_equal(again.alpha, whole.alpha)
        np.testing.assert_array_equal(_complement(again), _complement(whole))
        assert (again.n_iter, again.stop_reason) == (whole.n_iter, whole.stop_reason)

    if whole.n_iter < 2:
        return
    stop_at = 1 + int(where * (whole.n_iter - 2))
    kept = {}

    def stop(progress):
        if progress.iteration == stop_at:
            kept.update(progress.state())
            return False
        return None

    cut = solve_lr_dual(X, y, C, bias, 1e-6, 40, hook=stop, **opt)
    assert cut.n_iter == stop_at and not cut.converged and cut.stop_reason == INTERRUPTED
    np.testing.assert_array_equal(cut.w, kept["w"])
    assert (cut.primal, cut.dual, cut.gap) == lr_objectives(
        X, bias, y, C, cut.w, cut.alpha, _complement(cut)
    )
    assert {"rec", "w", "fstate", "istate", "rng", "bucket_size", "buckets_per_group"} <= set(kept)
    sub = Subproblem(
        X=X, y=y, C=C, eps=1e-6, max_iter=40, bias=bias, seed=seed, alpha0=alpha0,
        options=dict(bucket_size=order[0], buckets_per_group=order[1]), resume=kept,
    )  # fmt: skip
    resumed = solve(sub)
    assert np.array_equal(resumed.w, whole.w) and np.array_equal(resumed.alpha, whole.alpha)
    np.testing.assert_array_equal(_complement(resumed), _complement(whole))
    assert (resumed.n_iter, resumed.stop_reason) == (whole.n_iter, whole.stop_reason)
    assert resumed.figures["gmax"] == whole.figures["gmax"]
    # a state of another problem's size is refused in one line
    with pytest.raises(InvalidInputError, match="rec"):
        solve(sub.but(X=X[:50], y=y[:50], C=C[:50], alpha0=None))


def test_registered_as_solver_7():
    assert SOLVERS[7].solve is solve
