"""Properties of the DCD solver on small random problems (hypothesis), and input invariances;
the solver interface (hook, interruption, resumption from a captured state).

The optimum comparisons use only weak duality, so they need no tolerance guess: for any
feasible alpha and any w, D(alpha) <= P* <= P(w), and P is 1-strongly convex, so
||w - w*||^2 <= 2 (P(w) - P*) <= 2 gap. Two runs that each report a small gap therefore have
primal values within max(gap) and weights within sqrt(2 gap_1) + sqrt(2 gap_2) of each other.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import LOSS_OF_SOLVER, make_sparse_problem
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.data import as_csr
from linsvm.errors import InvalidInputError
from linsvm.objective import (
    LOSS_HINGE,
    LOSS_SQUARED_HINGE,
    primal_from_dual,
    svm_dual_value,
    svm_objectives,
)
from linsvm.solvers import SOLVERS
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, Subproblem
from linsvm.solvers.dcd import solve_l1svc_dual, solve_l2svc_dual

SETTINGS = settings(deadline=None, max_examples=100)
FEW = settings(deadline=None, max_examples=40)


def _rounding(value: float) -> float:
    """Slack for comparing objective values that went through ~l*nnz additions."""
    return 1e-9 * max(1.0, abs(value))


# ----------------------------------------------------------------------------- strategies


@st.composite
def problems(draw, with_row_costs: bool = True):
    """A small sparse binary problem: (X csr float64, y +-1, C per row, loss, bias)."""
    n_rows = draw(st.integers(2, 40))
    n_features = draw(st.integers(1, 12))
    density = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]))
    scale = draw(st.sampled_from([0.1, 1.0, 5.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = sp.random(
        n_rows,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.normal(0.0, scale, k),
    )
    X.sort_indices()
    X = sp.csr_matrix(X, dtype=np.float64)
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    C = draw(st.sampled_from([0.01, 0.3, 1.0, 10.0]))
    c_rows = np.full(n_rows, C)
    if with_row_costs and draw(st.booleans()):
        c_rows = C * rng.uniform(0.1, 3.0, n_rows)
        c_rows[rng.random(n_rows) < 0.2] = 0.0  # rows of weight 0 are dropped
    loss = draw(st.sampled_from([LOSS_HINGE, LOSS_SQUARED_HINGE]))
    bias = draw(st.sampled_from([-1.0, 0.0, 0.5, 1.0]))
    return X, y, c_rows, loss, bias


SOLVE = {LOSS_HINGE: solve_l1svc_dual, LOSS_SQUARED_HINGE: solve_l2svc_dual}


def _subproblem(X, y, c_rows, bias, eps, max_iter, *, seed=1, alpha0=None, **options):
    return Subproblem(
        X=X, y=y, C=c_rows, eps=eps, max_iter=max_iter, bias=bias, seed=seed, alpha0=alpha0,
        options=options,
    )  # fmt: skip


def solve_svm_dual(X, y, c_rows, loss, bias, eps, max_iter, *, hook=None, **kw):
    """The solver of ``loss`` on the sub-problem these arguments make."""
    return SOLVE[loss](_subproblem(X, y, c_rows, bias, eps, max_iter, **kw), hook)


def _n_weights(X, bias):
    return X.shape[1] + (1 if bias >= 0 else 0)


def _objectives(X, y, c_rows, loss, bias, w, alpha):
    return svm_objectives(X, bias, y, c_rows, w, alpha, loss)


def _assert_reports(reported, objectives) -> None:
    """A solution's (primal, dual, gap) against ``_objectives``: the primal exactly; the
    dual (and so the gap) from the solver's running w(alpha), which differs from the one
    formed afresh there by its rounding."""
    assert reported[0] == objectives[0]
    for got, want in zip(reported[1:], objectives[1:], strict=True):
        assert abs(got - want) <= 1e-12 * max(1.0, abs(objectives[0])), (reported, objectives)


def _check_feasible(alpha, c_rows, loss):
    assert np.all(alpha >= 0.0)
    assert np.all(alpha[c_rows == 0.0] == 0.0)
    if loss == LOSS_HINGE:
        assert np.all(alpha <= c_rows)


# ----------------------------------------------------------------------------- solver properties


@SETTINGS
@given(
    problem=problems(),
    max_iter=st.integers(1, 60),
    eps=st.sampled_from([1e-1, 1e-3, 1e-6]),
    shrinking=st.booleans(),
    bucket=st.sampled_from([(1, 1), (4, 2), (16, 16)]),
    seed=st.integers(0, 5),
)
def test_every_iterate_feasible_gap_nonnegative_dual_monotone(
    problem, max_iter, eps, shrinking, bucket, seed
):
    """At every outer iteration: alpha feasible, w = sum y_i alpha_i x_i, gap >= 0, and the
    dual objective -f(alpha) never decreases (each step minimises f exactly along a coordinate;
    shrunk coordinates are only skipped)."""
    X, y, c_rows, loss, bias = problem
    n_w = _n_weights(X, bias)
    seen = []

    def on_iteration(progress):
        it, n_active, w = progress.iteration, progress.figures["n_active"], progress.w
        alpha = np.ascontiguousarray(progress.alpha)
        assert 0 <= n_active <= X.shape[0]
        _check_feasible(alpha, c_rows, loss)
        w_fresh = primal_from_dual(X.indptr, X.indices, X.data, bias, y, alpha, n_w)
        np.testing.assert_allclose(w, w_fresh, rtol=0, atol=1e-10 * max(1.0, np.abs(w).max()))
        primal, dual, gap = _objectives(X, y, c_rows, loss, bias, w, alpha)
        assert gap >= -_rounding(primal), (it, primal, dual)
        _assert_reports(progress.objectives(), (primal, dual))
        pg_max, pg_min = progress.figures["pg_max"], progress.figures["pg_min"]
        if pg_max >= pg_min:
            assert progress.measure == max(pg_max - pg_min, abs(pg_max), abs(pg_min))
        seen.append((it, dual))

    sol = solve_svm_dual(
        X,
        y,
        c_rows,
        loss,
        bias,
        eps,
        max_iter,
        shrinking=shrinking,
        bucket_size=bucket[0],
        buckets_per_group=bucket[1],
        seed=seed,
        hook=on_iteration,
    )
    assert [it for it, _ in seen] == list(range(1, sol.n_iter + 1))
    assert sol.n_iter <= max_iter
    assert sol.converged or sol.n_iter == max_iter
    assert sol.stop_reason == (CONVERGED if sol.converged else MAX_ITER)
    assert sol.solver == (3 if loss == LOSS_HINGE else 1)
    duals = [0.0] + [d for _, d in seen]  # alpha = 0 gives -f = 0
    for before, after in zip(duals, duals[1:], strict=False):
        assert after >= before - _rounding(before), duals
    # the final state is the last one reported
    assert sol.w.dtype == np.float64 and sol.alpha.dtype == np.float64
    _check_feasible(sol.alpha, c_rows, loss)
    if seen:
        assert seen[-1][1] == svm_dual_value(
            X.indptr, X.indices, X.data, bias, y, c_rows, sol.alpha, loss, n_w
        )
    # the Solution's objectives are those of its w and alpha
    objectives = _objectives(X, y, c_rows, loss, bias, sol.w, sol.alpha)
    _assert_reports((sol.primal, sol.dual, sol.gap), objectives)


@SETTINGS
@given(problem=problems(), max_iter=st.integers(1, 40), eps=st.sampled_from([0.5, 1e-2, 1e-5]))
def test_same_result_with_and_without_hook(problem, max_iter, eps):
    """Running one outer iteration at a time (for a hook), or in batches, changes nothing."""
    X, y, c_rows, loss, bias = problem
    a = solve_svm_dual(X, y, c_rows, loss, bias, eps, max_iter, seed=3)

    def batches(progress):
        return None

    batches.every_iteration = False
    for hook in (lambda progress: None, batches):
        b = solve_svm_dual(X, y, c_rows, loss, bias, eps, max_iter, seed=3, hook=hook)
        np.testing.assert_array_equal(a.w, b.w)
        np.testing.assert_array_equal(a.alpha, b.alpha)
        assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
        assert a.figures == b.figures


@SETTINGS
@given(
    problem=problems(),
    max_iter=st.integers(2, 60),
    where=st.floats(0.0, 1.0),
    eps=st.sampled_from([1e-1, 1e-3, 1e-6]),
    shrinking=st.booleans(),
    bucket=st.sampled_from([(1, 1), (4, 2), (None, None)]),
    seed=st.integers(0, 5),
)
def test_interrupted_and_resumed_equals_uninterrupted(
    problem, max_iter, where, eps, shrinking, bucket, seed
):
    """A hook stops the solve at iteration k and keeps its state; the solve resumed from that
    state ends bit-identical to an uninterrupted one."""
    X, y, c_rows, loss, bias = problem
    options = dict(shrinking=shrinking, bucket_size=bucket[0], buckets_per_group=bucket[1])
    sub = _subproblem(X, y, c_rows, bias, eps, max_iter, seed=seed, **options)
    whole = SOLVE[loss](sub)
    assume(whole.n_iter >= 2)
    stop_at = 1 + int(where * (whole.n_iter - 2))
    kept = {}

    def stop(progress):
        if progress.iteration == stop_at:
            kept["state"] = progress.state()
            assert kept["state"]["w"] is not progress.w  # a copy
            kept["w"] = progress.w.copy()
            return False
        return None

    cut = SOLVE[loss](sub, stop)
    assert cut.n_iter == stop_at and not cut.converged and cut.stop_reason == INTERRUPTED
    np.testing.assert_array_equal(cut.w, kept["w"])
    np.testing.assert_array_equal(cut.w, kept["state"]["w"])
    objectives = _objectives(X, y, c_rows, loss, bias, cut.w, cut.alpha)
    _assert_reports((cut.primal, cut.dual, cut.gap), objectives)
    state = kept["state"]
    assert {"rec", "w", "active", "fstate", "istate", "rng"} <= set(state)
    assert int(state["bucket_size"]) == whole.figures["bucket_size"]
    assert int(state["buckets_per_group"]) == whole.figures["buckets_per_group"]
    resumed = SOLVE[loss](sub.but(resume=state))
    assert np.array_equal(resumed.w, whole.w) and np.array_equal(resumed.alpha, whole.alpha)
    assert (resumed.n_iter, resumed.stop_reason) == (whole.n_iter, whole.stop_reason)
    assert resumed.figures == whole.figures
    # a resumed solve ignores alpha0 and the order options: the state has them
    changed = {**options, "bucket_size": 7, "buckets_per_group": 3}
    other = sub.but(resume=state, alpha0=np.ones(X.shape[0]), options=changed)
    assert np.array_equal(SOLVE[loss](other).w, whole.w)


def test_stop_after_the_last_iteration_still_converged():
    X, y = make_sparse_problem(n_rows=80, n_features=10, seed=3)
    c_rows = np.ones(len(y))
    whole = solve_svm_dual(X, y, c_rows, LOSS_HINGE, 1.0, 1e-3, 1000)
    assert whole.converged
    late = solve_svm_dual(
        X, y, c_rows, LOSS_HINGE, 1.0, 1e-3, 1000,
        hook=lambda p: p.iteration < whole.n_iter,
    )  # fmt: skip
    assert late.converged and late.stop_reason == CONVERGED
    np.testing.assert_array_equal(late.w, whole.w)
    capped = solve_svm_dual(X, y, c_rows, LOSS_HINGE, 1.0, 1e-12, 3)
    assert capped.n_iter == 3 and capped.stop_reason == MAX_ITER and not capped.converged


def test_bad_warm_start_or_state_is_a_one_line_error():
    X, y = make_sparse_problem(n_rows=50, n_features=6, seed=2)
    c_rows = np.ones(len(y))
    with pytest.raises(InvalidInputError, match="alpha0"):
        solve_svm_dual(X, y, c_rows, LOSS_HINGE, 1.0, 0.1, 10, alpha0=np.ones(3))
    kept = {}

    def stop(progress):
        kept.update(progress.state())
        return False

    solve_svm_dual(X, y, c_rows, LOSS_HINGE, 1.0, 0.1, 10, hook=stop)
    sub = _subproblem(X[:40], y[:40], c_rows[:40], 1.0, 0.1, 10)
    with pytest.raises(InvalidInputError, match="rec"):
        solve_l1svc_dual(sub.but(resume=kept))
    with pytest.raises(InvalidInputError, match="istate"):
        solve_l1svc_dual(
            _subproblem(X, y, c_rows, 1.0, 0.1, 10).but(
                resume={k: v for k, v in kept.items() if k != "istate"}
            )
        )


def test_registered_as_solvers_1_and_3():
    assert SOLVERS[1].solve is solve_l2svc_dual
    assert SOLVERS[3].solve is solve_l1svc_dual


@SETTINGS
@given(problem=problems())
def test_converged_solution_is_optimal(problem):
    """Converged at a tight eps: the KKT conditions hold and the gap is small."""
    X, y, c_rows, loss, bias = problem
    sol = solve_svm_dual(X, y, c_rows, loss, bias, 1e-8, 100000)
    assume(sol.converged)  # a rare slow case (few features, large C, L1 loss) proves nothing
    primal, dual, gap = _objectives(X, y, c_rows, loss, bias, sol.w, sol.alpha)
    assert gap >= -_rounding(primal)
    assert gap <= 1e-6 * max(1.0, primal)
    # KKT on every trainable row (the solver's stopping rule, re-checked here independently)
    n_w = _n_weights(X, bias)
    w = primal_from_dual(X.indptr, X.indices, X.data, bias, y, sol.alpha, n_w)
    margins = y * (X @ w[: X.shape[1]] + (w[-1] * bias if bias >= 0 else 0.0))
    trainable = c_rows > 0
    diag = np.where(trainable, 0.5 / np.where(trainable, c_rows, 1.0), 0.0)
    g = margins - 1.0 + (diag * sol.alpha if loss == LOSS_SQUARED_HINGE else 0.0)
    a = sol.alpha
    pg = np.where(a == 0.0, np.minimum(g, 0.0), g)
    if loss == LOSS_HINGE:
        pg = np.where((a == c_rows) & (a > 0), np.maximum(g, 0.0), pg)
    assert np.all(np.abs(pg[trainable]) <= 1e-6)


@SETTINGS
@given(problem=problems(), seed=st.integers(0, 2**31))
def test_seeds_same_and_different(problem, seed):
    X, y, c_rows, loss, bias = problem
    a = solve_svm_dual(X, y, c_rows, loss, bias, 1e-6, 20000, seed=seed)
    b = solve_svm_dual(X, y, c_rows, loss, bias, 1e-6, 20000, seed=seed)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert a.n_iter == b.n_iter
    c = solve_svm_dual(X, y, c_rows, loss, bias, 1e-6, 20000, seed=seed + 1)
    _assert_same_optimum(X, y, c_rows, loss, bias, a, c)


def _assert_same_optimum(X, y, c_rows, loss, bias, a, b):
    """Both within their own duality gaps of the one optimum (see the module docstring)."""
    pa, _, ga = _objectives(X, y, c_rows, loss, bias, a.w, a.alpha)
    pb, _, gb = _objectives(X, y, c_rows, loss, bias, b.w, b.alpha)
    ga, gb = max(ga, 0.0), max(gb, 0.0)
    slack = _rounding(pa)
    assert abs(pa - pb) <= max(ga, gb) + slack, (pa, pb, ga, gb)
    dist = np.linalg.norm(a.w - b.w)
    assert dist <= np.sqrt(2 * (ga + slack)) + np.sqrt(2 * (gb + slack)), (dist, ga, gb)


@SETTINGS
@given(problem=problems(), shrinking=st.booleans())
def test_plain_permutation_and_buckets_reach_the_same_optimum(problem, shrinking):
    X, y, c_rows, loss, bias = problem
    plain = solve_svm_dual(
        X,
        y,
        c_rows,
        loss,
        bias,
        1e-6,
        20000,
        shrinking=shrinking,
        bucket_size=1,
        buckets_per_group=1,
    )
    bucketed = solve_svm_dual(
        X,
        y,
        c_rows,
        loss,
        bias,
        1e-6,
        20000,
        shrinking=shrinking,
        bucket_size=16,
        buckets_per_group=16,
    )
    auto = solve_svm_dual(X, y, c_rows, loss, bias, 1e-6, 20000, shrinking=shrinking)
    odd = solve_svm_dual(
        X,
        y,
        c_rows,
        loss,
        bias,
        1e-6,
        20000,
        shrinking=shrinking,
        bucket_size=3,
        buckets_per_group=5,
    )
    # (no convergence required: with few features, a large C and the L1 loss DCD can need more
    # than 20000 iterations at eps 1e-6; the comparison holds within whatever gaps remain)
    _assert_same_optimum(X, y, c_rows, loss, bias, plain, bucketed)
    _assert_same_optimum(X, y, c_rows, loss, bias, plain, odd)
    _assert_same_optimum(X, y, c_rows, loss, bias, plain, auto)
    assert (plain.figures["bucket_size"], plain.figures["buckets_per_group"]) == (1, 1)
    assert (bucketed.figures["bucket_size"], bucketed.figures["buckets_per_group"]) == (16, 16)


@FEW
@given(problem=problems(with_row_costs=False))
def test_warm_start_at_the_optimum_stops_at_once(problem):
    X, y, c_rows, loss, bias = problem
    first = solve_svm_dual(X, y, c_rows, loss, bias, 1e-8, 100000)
    assume(first.converged)  # slow cases (few features, large C, L1 loss) prove nothing here
    again = solve_svm_dual(X, y, c_rows, loss, bias, 1e-4, 100000, alpha0=first.alpha)
    assert again.converged and again.n_iter <= 2
    # (steps on coordinates whose |PG| is below the first run's 1e-8 may still move w a little)
    np.testing.assert_allclose(
        again.w, first.w, rtol=0, atol=1e-6 * max(1.0, np.abs(first.w).max())
    )


# ----------------------------------------------------------------------------- input invariances


def _train(X, y, **kw):
    kw.setdefault("eps", 1e-4)
    kw.setdefault("max_iter", 20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linsvm.ConvergenceWarning)
        return linsvm.train(X, y, **kw)


def _assert_same_model(a, b, *, exact=True, rtol=1e-6):
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.bias == b.bias
    assert a.coef_.dtype == np.float64 and b.coef_.dtype == np.float64
    if exact:
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.bias_weights_, b.bias_weights_)
        for ra, rb in zip(a.results_, b.results_, strict=True):
            np.testing.assert_array_equal(ra.alpha, rb.alpha)
            assert ra.n_iter == rb.n_iter
    else:
        scale = max(1.0, np.abs(a.coef_).max())
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=rtol * scale)
        np.testing.assert_allclose(a.bias_weights_, b.bias_weights_, rtol=0, atol=rtol * scale)
        for ra, rb in zip(a.results_, b.results_, strict=True):
            assert abs(ra.primal - rb.primal) <= rtol * abs(ra.primal)


@pytest.fixture(scope="module")
def problem3():
    return make_sparse_problem(n_rows=200, n_features=30, n_classes=3, seed=21)


@pytest.mark.parametrize("solver", [1, 3])
def test_same_seed_same_model_through_train(problem3, solver):
    X, y = problem3
    a = _train(X, y, solver=solver, bias=1.0, seed=5)
    b = _train(X, y, solver=solver, bias=1.0, seed=5)
    _assert_same_model(a, b)
    c = _train(X, y, solver=solver, bias=1.0, seed=6, eps=1e-6)
    d = _train(X, y, solver=solver, bias=1.0, seed=5, eps=1e-6)
    for rc, rd in zip(c.results_, d.results_, strict=True):
        assert abs(rc.primal - rd.primal) <= max(rc.gap, rd.gap) + _rounding(rc.primal)


@pytest.mark.parametrize("solver", [1, 3])
def test_float32_same_model_without_copy(problem3, solver):
    X, y = problem3
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X64 = sp.csr_matrix(X32, dtype=np.float64)  # the same values
    assert as_csr(X32) is X32
    assert as_csr(X32).data is X32.data
    m32 = _train(X32, y, solver=solver, bias=1.0, eps=1e-6)
    m64 = _train(X64, y, solver=solver, bias=1.0, eps=1e-6)
    assert m32.coef_.dtype == np.float64
    assert all(r.alpha.dtype == np.float64 for r in m32.results_)
    _assert_same_model(m32, m64, exact=False, rtol=1e-5)
    np.testing.assert_array_equal(m32.predict(X32), m64.predict(X64))


@pytest.mark.parametrize("solver", [1, 3])
def test_int64_indices_same_as_int32(problem3, solver):
    X, y = problem3
    assert X.indices.dtype == np.int32
    X64 = X.copy()  # (scipy's constructor would downcast the index arrays again)
    X64.indices = X.indices.astype(np.int64)
    X64.indptr = X.indptr.astype(np.int64)
    assert X64.indices.dtype == np.int64 and X64.indptr.dtype == np.int64
    assert as_csr(X64) is X64
    _assert_same_model(
        _train(X, y, solver=solver, bias=1.0), _train(X64, y, solver=solver, bias=1.0)
    )


@pytest.mark.parametrize("solver", [1, 3])
def test_dense_and_other_sparse_formats_equal_csr(problem3, solver):
    X, y = problem3
    ref = _train(X, y, solver=solver, bias=1.0)
    _assert_same_model(ref, _train(X.toarray(), y, solver=solver, bias=1.0))
    _assert_same_model(ref, _train(X.toarray().tolist(), y, solver=solver, bias=1.0))
    _assert_same_model(ref, _train(X.tocsc(), y, solver=solver, bias=1.0))
    _assert_same_model(ref, _train(X.tocoo(), y, solver=solver, bias=1.0))
    _assert_same_model(ref, _train(sp.csr_array(X), y, solver=solver, bias=1.0))
    # unsorted column indices within rows: sorted once at the edge, same model
    Xu = X.copy()
    for r in range(Xu.shape[0]):
        lo, hi = Xu.indptr[r], Xu.indptr[r + 1]
        Xu.indices[lo:hi] = Xu.indices[lo:hi][::-1].copy()
        Xu.data[lo:hi] = Xu.data[lo:hi][::-1].copy()
    Xu.has_sorted_indices = False
    _assert_same_model(ref, _train(Xu, y, solver=solver, bias=1.0))


@pytest.mark.parametrize("solver", [1, 3])
def test_input_is_not_modified(problem3, solver):
    X, y = problem3
    copies = (X.data.copy(), X.indices.copy(), X.indptr.copy(), y.copy())
    _train(X, y, solver=solver, bias=1.0, sample_weight=np.full(X.shape[0], 0.5))
    for before, after in zip(copies, (X.data, X.indices, X.indptr, y), strict=True):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [0.5, 1.0, 3.0])
def test_bias_is_an_implicit_feature(problem3, solver, bias):
    """bias B equals an explicit last column of B's with no bias, and X is not copied."""
    X, y = problem3
    assert as_csr(X) is X
    implicit = _train(X, y, solver=solver, bias=bias)
    explicit_X = sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), bias))], format="csr")
    explicit = _train(explicit_X, y, solver=solver, bias=-1.0)
    assert implicit.coef_.shape == (3, X.shape[1])
    assert explicit.coef_.shape == (3, X.shape[1] + 1)
    # the same problem; the sums group the terms differently (row_dot adds four partial sums,
    # the implicit bias last), so the two runs differ by rounding, which can steer them along
    # slightly different paths to the same optimum
    close = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(implicit.coef_, explicit.coef_[:, :-1], **close)
    np.testing.assert_allclose(implicit.bias_weights_, explicit.coef_[:, -1], **close)
    np.testing.assert_allclose(implicit.intercept_, bias * explicit.coef_[:, -1], **close)
    np.testing.assert_allclose(
        implicit.decision_function(X), explicit.decision_function(explicit_X), **close
    )
    for ri, re_ in zip(implicit.results_, explicit.results_, strict=True):
        assert ri.primal == pytest.approx(re_.primal, rel=1e-10)


@pytest.mark.parametrize("solver", [1, 3])
def test_no_bias_means_zero_intercept(problem3, solver):
    X, y = problem3
    m = _train(X, y, solver=solver, bias=-1.0)
    assert np.all(m.bias_weights_ == 0.0) and np.all(m.intercept_ == 0.0)
    np.testing.assert_allclose(m.decision_function(X), X @ m.coef_.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("solver", [1, 3])
def test_rows_without_features(solver):
    """An empty row, no bias: its margin is 0, so alpha_i = C (L1) or 2C (L2: G = -1 + a/2C)."""
    X, y = make_sparse_problem(n_rows=120, n_features=15, seed=4)
    X = sp.lil_matrix(X)
    empty = np.arange(0, 120, 7)
    X[empty, :] = 0.0
    X = X.tocsr()
    X.eliminate_zeros()
    assert np.all(np.diff(X.indptr)[empty] == 0)
    C = 0.7
    m = _train(X, y, solver=solver, C=C, eps=1e-8)
    alpha = m.results_[0].alpha
    expected = C if solver == 3 else 2 * C
    np.testing.assert_allclose(alpha[empty], expected, rtol=1e-12)
    # and they do not move w: same model as without them, for the other rows' alphas
    keep = np.setdiff1d(np.arange(120), empty)
    sub = _train(X[keep], y[keep], solver=solver, C=C, eps=1e-8)
    np.testing.assert_allclose(m.coef_, sub.coef_, rtol=0, atol=1e-6)
    # with a bias they are ordinary rows: the bias feature is their only feature
    mb = _train(X, y, solver=solver, C=C, bias=1.0, eps=1e-8)
    assert mb.results_[0].gap <= 1e-6 * mb.results_[0].primal


@pytest.mark.parametrize("solver", [1, 3])
def test_all_rows_empty(solver):
    X = sp.csr_matrix((6, 4))
    y = np.array([1, -1, 1, -1, 1, 1])
    m = _train(X, y, solver=solver, C=1.0)
    assert np.all(m.coef_ == 0.0)
    assert m.results_[0].converged
    mb = _train(X, y, solver=solver, C=1.0, bias=1.0)
    # only the bias weight can be fitted: the majority class wins
    assert mb.bias_weights_[0] > 0
    np.testing.assert_array_equal(mb.predict(X), np.ones(6))


@pytest.mark.parametrize("solver", [1, 3])
def test_empty_columns_get_zero_weight(solver):
    X, y = make_sparse_problem(n_rows=100, n_features=10, seed=8)
    wide = sp.hstack([sp.csr_matrix((100, 5)), X, sp.csr_matrix((100, 7))], format="csr")
    m = _train(wide, y, solver=solver, bias=1.0)
    ref = _train(X, y, solver=solver, bias=1.0)
    assert m.coef_.shape == (1, 22)
    assert np.all(m.coef_[:, :5] == 0.0) and np.all(m.coef_[:, 15:] == 0.0)
    np.testing.assert_array_equal(m.coef_[:, 5:15], ref.coef_)
    np.testing.assert_array_equal(m.bias_weights_, ref.bias_weights_)


@pytest.mark.parametrize("solver", [1, 3])
def test_explicit_zeros_are_harmless(solver):
    """Stored zeros (as a LIBSVM file with "j:0" gives) change nothing but nnz."""
    X, y = make_sparse_problem(n_rows=100, n_features=10, seed=10)
    coo = X.tocoo()
    absent = [r for r in range(100) if 9 not in X.indices[X.indptr[r] : X.indptr[r + 1]]]
    Xz = sp.csr_matrix(
        (
            np.concatenate([coo.data, np.zeros(len(absent))]),
            (np.concatenate([coo.row, absent]), np.concatenate([coo.col, np.full(len(absent), 9)])),
        ),
        shape=X.shape,
    )
    Xz.sort_indices()
    assert Xz.nnz > X.nnz and Xz.has_canonical_format
    a = _train(X, y, solver=solver, eps=1e-8)
    b = _train(Xz, y, solver=solver, eps=1e-8)
    for ra, rb in zip(a.results_, b.results_, strict=True):
        assert abs(ra.primal - rb.primal) <= max(ra.gap, rb.gap) + _rounding(ra.primal)


@pytest.mark.parametrize("solver", [1, 3])
def test_label_types_and_order(solver):
    """Labels of any type; LIBLINEAR's order (first appearance; +1 first for -1/+1)."""
    X, y = make_sparse_problem(n_rows=120, n_features=12, n_classes=3, seed=12, labels=[0, 1, 2])
    as_str = np.array(["cat", "dog", "emu"])[y.astype(int)]
    m_int = _train(X, y.astype(np.int64), solver=solver)
    m_str = _train(X, as_str, solver=solver)
    first = list(dict.fromkeys(y.astype(int).tolist()))
    assert list(m_int.labels_) == first
    assert list(m_str.labels_) == [["cat", "dog", "emu"][i] for i in first]
    np.testing.assert_array_equal(m_int.coef_, m_str.coef_)
    pm = np.where(y[:60] == y[0], -1, 1)
    pm[0] = -1
    m_pm = _train(X[:60], pm, solver=solver)
    assert list(m_pm.labels_) == [1, -1]
    loss = LOSS_OF_SOLVER[solver]
    assert loss in (LOSS_HINGE, LOSS_SQUARED_HINGE)


def test_prefetching_is_judged_on_the_machines_last_level_cache(monkeypatch):
    """The kernels prefetch the rows ahead only for rows that do not fit in the last-level
    cache (in it, the hints cost each visit and gain nothing: a9a, w8a and ijcnn1 ran 2x
    slower with them on a 32 MiB L3), at the arrays' real bytes; CACHE_RESIDENT_BYTES where
    the system does not say. A hint only: the same model either way."""
    from linsvm.datasets import make_text_classification
    from linsvm.solvers import _dual

    llc = _dual.last_level_cache_bytes()
    assert llc is None or llc > 0
    X, y = make_text_classification(3000, random_state=2)
    nbytes = X.indptr.nbytes + X.indices.nbytes + X.data.nbytes + 32 * X.shape[0]
    for room, pays in ((nbytes - 1, True), (nbytes, False), (None, nbytes > 4 << 20)):
        monkeypatch.setattr(_dual, "CACHE_RESIDENT_BYTES", 1 if room is not None else 4 << 20)
        monkeypatch.setattr(_dual, "last_level_cache_bytes", lambda room=room: room)
        assert _dual.prefetch_pays(X, 32) is pays
    monkeypatch.setattr(_dual, "CACHE_RESIDENT_BYTES", 1)
    models = []
    for room in (1, 1 << 40):  # (prefetching, then not)
        monkeypatch.setattr(_dual, "last_level_cache_bytes", lambda room=room: room)
        models.append(linsvm.train(X, y, solver=3, eps=1e-3).coef_)
    assert np.array_equal(*models)


def test_the_coordinate_order_does_not_depend_on_how_x_is_stored():
    """The coordinate order (buckets, or one permutation where the rows fit a core's cache)
    was chosen from the arrays' bytes: the same rows with int64 indices (scikit-learn's
    load_svmlight_file) or float32 values crossed the cache bound and gave another model
    (letter.scale: w 6e-3 apart)."""
    from linsvm.solvers._dual import cache_resident, choose_order

    rng = np.random.default_rng(4)
    n_rows, n_features, nnz_per_row = 20_000, 500, 12
    # (12 distinct columns a row: steps of 41 from a random start, modulo 500)
    starts = rng.integers(0, n_features, size=(n_rows, 1))
    indices = np.sort((starts + 41 * np.arange(nnz_per_row)) % n_features, axis=1)
    data = rng.integers(1, 9, size=indices.shape) / 8.0
    indptr = np.arange(0, n_rows * nnz_per_row + 1, nnz_per_row)
    X = sp.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(n_rows, n_features))
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    wide = X.copy()
    wide.indices, wide.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    assert X.indices.dtype == np.int32 and cache_resident(X, 32)
    assert not cache_resident(wide, 32)  # (prefetching still judged on the real bytes)
    for A in (X, wide, X.astype(np.float32)):
        assert choose_order(A, y, None, None, seed=1) == (1, 1)


def _merged_dot(X, i, j) -> float:
    """x_i'x_j by the plain merge of the two sorted rows, a branch a step (the reference)."""
    p, p_end, q, q_end = X.indptr[i], X.indptr[i + 1], X.indptr[j], X.indptr[j + 1]
    total = 0.0
    while p < p_end and q < q_end:
        a, b = X.indices[p], X.indices[q]
        if a == b:
            total += float(X.data[p]) * float(X.data[q])
            p, q = p + 1, q + 1
        elif a < b:
            p += 1
        else:
            q += 1
    return total


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), density=st.floats(0.02, 0.6),
       dtype=st.sampled_from([np.float64, np.float32]))  # fmt: skip
def test_neighbour_correlation_is_the_merges_value(seed, density, dtype):
    """The neighbours' excess correlation (which picks the coordinate order, so the model's
    bits) and ``rows_dot`` under it (a merge whose steps take no branch): the values of the
    plain merge, bit for bit, signed values and empty rows included."""
    from linsvm.solvers._dual import neighbour_correlation_excess
    from linsvm.solvers._random import new_state, rand_below
    from linsvm.sparse_rows import rows_dot

    rng = np.random.default_rng(seed)
    X = sp.random(60, 40, density=density, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.standard_normal(n)).astype(dtype)  # fmt: skip
    X.sort_indices()
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    for i, j in rng.integers(0, 60, size=(20, 2)):
        assert rows_dot(X.indptr, X.indices, X.data, i, j) == _merged_dot(X, i, j)
    n_pairs = 50
    got = neighbour_correlation_excess(X.indptr, X.indices, X.data, y, n_pairs,
                                       new_state(seed))  # fmt: skip
    state = new_state(seed)  # (the same draws, in the same order)
    total = 0.0
    for _ in range(n_pairs):
        i = rand_below(state, 59)
        for j, sign in ((i + 1, 1.0), (rand_below(state, 60), -1.0)):
            norms = _merged_dot(X, i, i) * _merged_dot(X, j, j)
            if norms > 0.0:
                total += sign * y[i] * y[j] * _merged_dot(X, i, j) / np.sqrt(norms)
    assert got == total / n_pairs


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(3, 80),
       labels_seed=st.integers(0, 2**31 - 1))  # fmt: skip
def test_a_shared_neighbour_sample_gives_each_labelling_its_own_value(seed, n_rows, labels_seed):
    """One-vs-rest's classes share one draw of the order's pairs of rows
    (``SharedRows``): for any labels its value is the one a solve drawing the same pairs
    itself computes, bit for bit (so the run's first class chooses as before), and so after a
    pickle's round trip (sub-problems sent to workers)."""
    import pickle

    from linsvm.solvers._dual import (
        SharedRows,
        _order_sample_state,
        neighbour_correlation_excess,
    )

    rng = np.random.default_rng(labels_seed)
    X = sp.random(n_rows, 30, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.standard_normal(n))  # fmt: skip
    X.sort_indices()
    sample = SharedRows(X, seed)
    n_pairs = min(2000, n_rows)
    for _ in range(3):
        y = np.where(rng.random(n_rows) < rng.random(), 1.0, -1.0)
        own = neighbour_correlation_excess(X.indptr, X.indices, X.data, y, n_pairs,
                                           _order_sample_state(seed))  # fmt: skip
        assert sample.excess(y, n_pairs) == own
        assert pickle.loads(pickle.dumps(sample)).excess(y, n_pairs) == own


def test_one_vs_rest_computes_what_the_rows_alone_decide_once(monkeypatch):
    """One-vs-rest's dual solves share what depends on the rows alone (``SharedRows``): the
    automatic coordinate order's pairs of rows (on sector.scale a draw cost 3.3 ms, 105 times
    a third of a fit) and the rows' squared norms, each computed once for all the classes, and
    the model is the one of the classes' own solves where those would agree."""
    from linsvm.solvers import _dual

    rng = np.random.default_rng(7)
    n_rows, n_features, per_row = 6000, 2000, 60  # (past the order's cache-resident bound)
    indices = np.sort(np.stack([rng.choice(n_features, per_row, replace=False)
                                for _ in range(n_rows)]), axis=1)  # fmt: skip
    X = sp.csr_matrix((rng.random(n_rows * per_row), indices.ravel(),
                       np.arange(0, n_rows * per_row + 1, per_row)), shape=(n_rows, n_features))
    y = rng.integers(0, 3, n_rows).astype(np.float64)
    assert not _dual.cache_resident(X, 32, stored_widths=False)
    draws, norms = [], []
    real_pairs, real_norms = _dual.neighbour_pairs, _dual.rows_sq_norms

    def counted_pairs(*args):
        draws.append(args[4])
        return real_pairs(*args)

    def counted_norms(*args):
        norms.append(args[2])
        return real_norms(*args)

    monkeypatch.setattr(_dual, "neighbour_pairs", counted_pairs)
    monkeypatch.setattr(_dual, "rows_sq_norms", counted_norms)
    for solver in (1, 7):
        draws.clear()
        norms.clear()
        model = linsvm.train(X, y, solver=solver, eps=0.1, bias=1.0)
        assert draws == [2000] and norms == [1.0]  # (three classes, one of each)
        # the first class (LIBLINEAR's order: the first label seen) chose its order from the
        # pairs its own solve draws (the run's seed is its seed), its records hold the norms
        # its own solve computes: the same weights
        sub = Subproblem(X, np.where(y == y[0], 1.0, -1.0), np.ones(n_rows), eps=0.1,
                         max_iter=1000, bias=1.0, seed=1)  # fmt: skip
        assert np.array_equal(SOLVERS[solver].solve(sub, None).w, model.results_[0].w)
        assert len(draws) == 2 and len(norms) == 1
    # the classes on two threads: still one of each (the first class to need it), the same
    # model as one thread's
    draws.clear()
    norms.clear()
    threaded = linsvm.train(X, y, solver=7, eps=0.1, bias=1.0, n_jobs=2)
    assert len(draws) == 1 and len(norms) == 1
    for one, two in zip(model.results_, threaded.results_, strict=True):
        assert np.array_equal(one.w, two.w)
