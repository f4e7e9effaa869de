"""The one-class SVM (-s 21) against liblinear-official 2.50 and its own optimality conditions.

Objective compared: LIBLINEAR's "Objective value", the dual f(a) = 1/2 a'Qa = 1/2 ||w||^2 (w from
each model), and the primal P(w) = min_rho 1/2 w'w - nu l rho + sum_i max(0, rho - w'x_i) of
each model's w, both within 1e-4 relative at a tight eps (LIBLINEAR checked to have converged
before its 1000-iteration cap). rho within the tolerance, predictions equal on >= 99.9% of the
rows whose decision value is farther than 10 eps from 0. With ``liblinear_rounding`` (default)
the solver also follows LIBLINEAR's path to the last bit (checked on x86-64 only).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_train, liblinear_weights, make_sparse_problem, rel_diff
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.errors import InvalidInputError
from linsvm.model import Model
from linsvm.solvers import ONECLASS_MAX_ITER, SOLVERS, Subproblem
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from linsvm.solvers.oneclass import (
    STATE_KEYS,
    check_nu,
    check_oneclass_bias,
    oneclass_dual_value,
    oneclass_objectives,
    oneclass_primal_at,
    oneclass_primal_value,
    oneclass_w_from_dual,
    solve_oneclass,
)

ll = pytest.importorskip("liblinear.liblinearutil")

TIGHT_EPS = 1e-6
REL_TOL = 1e-4
AGREEMENT = 0.999
X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def oc_sub(X, nu=0.5, eps=0.01, max_iter=ONECLASS_MAX_ITER, *, liblinear_rounding=True):
    """The Subproblem training builds for -s 21 (y and C play no part)."""
    ones = np.ones(X.shape[0])
    options = {"nu": nu, "liblinear_rounding": liblinear_rounding}
    return Subproblem(X, ones, ones, eps, max_iter, options=options)


def solve(X, nu=0.5, eps=0.01, max_iter=ONECLASS_MAX_ITER, *, hook=None, **kw):
    return solve_oneclass(oc_sub(X, nu, eps, max_iter, **kw), hook)


def _rounding(scale: float) -> float:
    return 1e-9 * max(1.0, abs(scale))


def _generated():
    """Sparse, non-negative values: the data lie away from the origin, as one-class data do
    (with values symmetric about 0 the optimum w is near 0 and every objective near 0)."""
    X, _ = make_sparse_problem(n_rows=400, n_features=30, density=0.2, seed=3)
    X.data = np.abs(X.data)
    return X


def _breast_cancer(standardise: bool = False):
    """scikit-learn's breast_cancer, columns scaled to [0, 1] (or standardised)."""
    datasets = pytest.importorskip("sklearn.datasets")
    X = datasets.load_breast_cancer().data
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    else:
        X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return sp.csr_matrix(X)


@pytest.fixture(params=["generated", "heart_scale", "breast_cancer"])
def data(request, load_shared):
    if request.param == "generated":
        return _generated()
    if request.param == "heart_scale":
        return linsvm.data.as_csr(load_shared("heart_scale")[0])
    return _breast_cancer()


def _liblinear(X, nu, eps, labels=None):
    """LIBLINEAR's (w, rho, #iter); labels are arbitrary (one-class training ignores them)."""
    y = np.ones(X.shape[0]) if labels is None else labels
    model, iters = liblinear_train(y, X, f"-s 21 -n {nu:.17g} -e {eps:.17g}")
    return model, liblinear_weights(model)[0], float(model.rho), iters[0]


def _w_full(w, n):
    out = np.zeros(n)
    out[: min(n, w.shape[0])] = w[:n]
    return out


@pytest.mark.parametrize("nu", [0.1, 0.5])
@pytest.mark.parametrize("liblinear_rounding", [True, False])
def test_matches_liblinear(data, nu, liblinear_rounding):
    X = data
    model, w_ll, rho_ll, iters = _liblinear(X, nu, TIGHT_EPS)
    assert iters < ONECLASS_MAX_ITER  # the reference converged
    sol = solve(X, nu, TIGHT_EPS, liblinear_rounding=liblinear_rounding)
    assert sol.converged
    w_ll = _w_full(w_ll, X.shape[1])

    # dual objective f = 1/2 ||w||^2 (LIBLINEAR's "Objective value") and the primal P(w)
    assert rel_diff(0.5 * w_ll @ w_ll, 0.5 * sol.w @ sol.w) <= REL_TOL
    assert rel_diff(sol.figures["objective"], 0.5 * w_ll @ w_ll) <= REL_TOL
    p_ll = oneclass_primal_value(X.indptr, X.indices, X.data, w_ll, nu)
    p_ours = oneclass_primal_value(X.indptr, X.indices, X.data, sol.w, nu)
    assert rel_diff(p_ll, p_ours) <= REL_TOL
    # weak duality: P(w) >= -f(a)
    assert p_ours >= -sol.figures["objective"] - _rounding(p_ours)

    assert abs(sol.figures["rho"] - rho_ll) <= 1e-6 * max(1.0, abs(rho_ll)) + 10 * TIGHT_EPS
    assert 0.0 - _rounding(sol.primal) <= sol.gap <= 1e-4 * max(1.0, abs(sol.primal))

    # predictions: LIBLINEAR's own, our Model's
    ours = Model(21, np.array([]), sol.w[None, :], -1.0, rho=sol.figures["rho"])
    pred = ours.predict(X)
    ref_pred, _, ref_dec = ll.predict(np.zeros(X.shape[0]), X, model, "-q")
    ref_pred = np.asarray(ref_pred)
    ref_dec = np.asarray(ref_dec)[:, 0]
    assert set(np.unique(pred)) <= {-1.0, 1.0}
    np.testing.assert_allclose(ref_dec, X @ w_ll - rho_ll, atol=1e-9 * max(1.0, abs(rho_ll)))
    certain = np.abs(ref_dec) > 10 * TIGHT_EPS
    assert certain.mean() > 0.9
    assert np.mean(pred[certain] == ref_pred[certain]) >= AGREEMENT


@pytest.mark.skipif(not X86_64, reason="bit-for-bit agreement checked on x86-64 builds only")
@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_same_path_as_liblinear_and_same_model_file(data, nu, tmp_path):
    """Default eps: same #iter, same w and rho bit for bit, byte-identical model files."""
    X = data
    model, w_ll, rho_ll, iters = _liblinear(X, nu, 0.01)
    sol = solve(X, nu)
    assert sol.n_iter == iters
    np.testing.assert_array_equal(sol.w, _w_full(w_ll, X.shape[1]))
    assert sol.figures["rho"] == rho_ll
    ll.save_model(str(tmp_path / "ll.model"), model)
    ours = Model(21, np.array([]), sol.w[None, :], -1.0, rho=sol.figures["rho"])
    ours.save(tmp_path / "ours.model")
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "ll.model").read_bytes()


@pytest.mark.skipif(not X86_64, reason="bit-for-bit agreement checked on x86-64 builds only")
def test_standardised_data_is_degenerate_for_both():
    """Standardised columns put the origin inside the data: the optimum is w* ~ 0 (no offset
    in this one-class SVM), the dual is ill-conditioned and LIBLINEAR stops at its cap of 1000
    iterations for any eps <= 1e-3. linsvm does the same, to the same w and rho."""
    X = _breast_cancer(standardise=True)
    _, w_ll, rho_ll, iters = _liblinear(X, 0.5, 1e-3)
    sol = solve(X, 0.5, 1e-3)
    assert iters == sol.n_iter == ONECLASS_MAX_ITER and not sol.converged
    np.testing.assert_array_equal(sol.w, w_ll)
    assert sol.figures["rho"] == rho_ll
    assert sol.figures["objective"] < 1e-2  # ~0 against ~4e4 for the [0, 1]-scaled columns
    assert sol.gap >= 0.0


def test_model_file_roundtrip_with_liblinear(tmp_path, load_shared):
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    nu = 0.3
    sol = solve(X, nu, 1e-4, liblinear_rounding=False)
    ours = Model(21, np.array([]), sol.w[None, :], -1.0, rho=sol.figures["rho"])
    path = tmp_path / "oc.model"
    ours.save(path)
    text = path.read_text()
    rho = sol.figures["rho"]
    assert "solver_type ONECLASS_SVM" in text and f"rho {rho:.17g}" in text
    # LIBLINEAR reads it and predicts as we do
    loaded = ll.load_model(str(path))
    assert float(loaded.rho) == sol.figures["rho"]
    ll_pred, _, ll_dec = ll.predict(np.zeros(X.shape[0]), X, loaded, "-q")
    np.testing.assert_allclose(np.asarray(ll_dec)[:, 0], ours.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(np.asarray(ll_pred), ours.predict(X))
    # and linsvm reads it back
    back = linsvm.load_model(path)
    assert back.kind == "oneclass" and back.rho == sol.figures["rho"]
    np.testing.assert_array_equal(back.predict(X), ours.predict(X))
    # a model LIBLINEAR trained and saved, read by linsvm
    model, _, _, _ = _liblinear(X, nu, 1e-4)
    ll.save_model(str(tmp_path / "ll.model"), model)
    from_ll = linsvm.load_model(tmp_path / "ll.model")
    ref_pred, _, _ = ll.predict(np.zeros(X.shape[0]), X, model, "-q")
    np.testing.assert_array_equal(from_ll.predict(X), np.asarray(ref_pred))


def test_labels_are_ignored_by_liblinear_too():
    X = _generated()
    rng = np.random.default_rng(0)
    _, w1, rho1, _ = _liblinear(X, 0.5, 0.01)
    _, w2, rho2, _ = _liblinear(X, 0.5, 0.01, labels=rng.integers(1, 5, X.shape[0]) * 1.0)
    np.testing.assert_array_equal(w1, w2)
    assert rho1 == rho2


def test_gap_shrinks_with_eps(load_shared):
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    gaps = []
    for eps in (1e-1, 1e-3, 1e-5, 1e-7):
        sol = solve(X, 0.2, eps)
        assert sol.converged
        assert sol.gap >= -_rounding(sol.primal)
        primal, dual, gap = oneclass_objectives(X, 0.2, sol.alpha)
        assert (primal, dual, gap) == (sol.primal, sol.dual, sol.gap)
        gaps.append(sol.gap)
    assert gaps[-1] <= 1e-6 * abs(gaps[0]) + _rounding(sol.primal) * 10
    assert gaps[-1] <= gaps[0]


def test_rho_is_the_primal_minimiser_at_optimum(load_shared):
    """At a tight eps LIBLINEAR's rho (mean over free rows) minimises P(w, .) up to eps."""
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    nu = 0.37
    sol = solve(X, nu, 1e-9)
    p_best = oneclass_primal_value(X.indptr, X.indices, X.data, sol.w, nu)
    p_rho = oneclass_primal_at(X.indptr, X.indices, X.data, sol.w, nu, sol.figures["rho"])
    assert p_best <= p_rho + _rounding(p_rho)
    assert p_rho - p_best <= 1e-6 * abs(p_best)
    assert abs(sol.primal - p_best) <= _rounding(p_best) * 100


def test_max_iter_and_float32(load_shared):
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    sol = solve(X, 0.5, 1e-12, max_iter=3)
    assert sol.n_iter == 3 and not sol.converged and sol.stop_reason == MAX_ITER
    assert sol.gap >= -_rounding(sol.primal)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    a = solve(X32, 0.5)
    b = solve(sp.csr_matrix(X32, dtype=np.float64), 0.5)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.figures["rho"] == b.figures["rho"]


def test_edge_cases_as_liblinear(tmp_path):
    X = _generated()
    # nu = 1: every alpha at its bound 1; no free row, no row at 0: LIBLINEAR's rho is +inf
    _, _, rho_ll, _ = _liblinear(X, 1.0, 0.01)
    sol = solve(X, 1.0)
    assert np.all(sol.alpha == 1.0) and sol.figures["rho"] == rho_ll == np.inf
    ours = Model(21, np.array([]), sol.w[None, :], -1.0, rho=sol.figures["rho"])
    assert np.all(ours.predict(X) == -1.0)
    # ... written "rho inf", as LIBLINEAR writes it, and read back (LIBLINEAR reads it too)
    from linsvm.errors import ModelFormatError

    path = tmp_path / "oneclass.model"
    ours.save(path)
    text = path.read_text()
    assert "\nrho inf\n" in text
    again = linsvm.load_model(path)
    assert again.rho == np.inf and np.all(again.predict(X) == -1.0)
    path.write_text(text.replace("rho inf", "rho nan"))
    with pytest.raises(ModelFormatError, match="bad rho 'nan'"):
        linsvm.load_model(path)
    # one row
    _, w1, rho1, _ = _liblinear(X[:1], 0.5, 0.01)
    sol = solve(X[:1], 0.5)
    np.testing.assert_allclose(sol.w, _w_full(w1, X.shape[1]))
    assert sol.figures["rho"] == pytest.approx(rho1)
    # empty rows and duplicate rows (zero curvature pairs)
    Xd = sp.vstack([X[:20], X[:20], sp.csr_matrix((5, X.shape[1]))]).tocsr()
    _, wd, rhod, _ = _liblinear(Xd, 0.3, TIGHT_EPS)
    sol = solve(Xd, 0.3, TIGHT_EPS)
    assert rel_diff(sol.figures["objective"], 0.5 * wd @ wd) <= REL_TOL
    assert sol.figures["rho"] == pytest.approx(rhod, rel=1e-5, abs=1e-5)


def test_errors():
    X = _generated()
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(InvalidInputError, match="nu"):
            solve(X, bad)
    with pytest.raises(InvalidInputError, match="eps"):
        solve(X, 0.5, -0.01)  # (0: no stopping rule, accepted)
    with pytest.raises(InvalidInputError, match="ONECLASS_SVM"):
        check_oneclass_bias(1.0)
    with pytest.raises(InvalidInputError, match="bias"):
        check_oneclass_bias(0.0)
    check_oneclass_bias(-1.0)
    assert check_nu(1) == 1.0
    # the solver checks its Subproblem too
    with pytest.raises(InvalidInputError, match="ONECLASS_SVM"):
        solve_oneclass(oc_sub(X).but(bias=1.0))
    with pytest.raises(InvalidInputError, match="warm start"):
        solve_oneclass(oc_sub(X).but(alpha0=np.zeros(X.shape[0])))
    with pytest.raises(InvalidInputError, match="at least one row"):
        solve(X[:0])
    # LIBLINEAR's own check, mirrored
    prob = ll.problem(np.ones(X.shape[0]), X)
    assert "ignored in ONECLASS_SVM" in prob_error(prob)


def prob_error(prob) -> str:
    from liblinear.liblinear import liblinear

    param = ll.parameter("-s 21 -B 1 -q")
    prob.set_bias(1.0)
    return liblinear.check_parameter(prob, param).decode()


@settings(deadline=None, max_examples=30)
@given(
    n_rows=st.integers(1, 40),
    n_features=st.integers(1, 8),
    density=st.sampled_from([0.1, 0.3, 0.8]),
    seed=st.integers(0, 10_000),
    nu=st.floats(0.01, 1.0),
    rounding=st.booleans(),
)
def test_every_iterate_feasible(n_rows, n_features, density, seed, nu, rounding):
    """At every outer iteration: 0 <= a_i <= 1, sum a = nu l, w = sum a_i x_i, f non-increasing,
    gap >= 0; at the end the same and, if converged, LIBLINEAR's stopping rule holds."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng)
    X.data = X.data - rng.uniform(0.0, 0.5)  # mostly positive, some negative values
    X.sort_indices()
    f_prev = [np.inf]

    def check(it, n_active, alpha, w):
        assert 0 < n_active <= n_rows
        assert np.all(alpha >= 0.0) and np.all(alpha <= 1.0), it
        assert abs(alpha.sum() - nu * n_rows) <= 1e-9 * max(1.0, nu * n_rows)
        w_fresh = oneclass_w_from_dual(X.indptr, X.indices, X.data, alpha, X.shape[1])
        np.testing.assert_allclose(w, w_fresh, atol=1e-9 * max(1.0, np.abs(w_fresh).max()))
        f = oneclass_dual_value(X.indptr, X.indices, X.data, alpha, X.shape[1])
        assert f <= f_prev[0] + _rounding(f)
        f_prev[0] = f
        primal, dual, gap = oneclass_objectives(X, nu, alpha)
        assert gap >= -_rounding(max(abs(primal), abs(dual)))

    eps = 1e-3
    def hook(progress):
        check(progress.iteration, progress.figures["n_active"], progress.alpha, progress.w)

    sol = solve(X, nu, eps, liblinear_rounding=rounding, hook=hook)
    plain = solve(X, nu, eps, liblinear_rounding=rounding)
    np.testing.assert_array_equal(sol.w, plain.w)  # the callback changes nothing
    rho, rho_plain = sol.figures["rho"], plain.figures["rho"]
    assert rho == rho_plain or (np.isinf(rho) and np.isinf(rho_plain))
    check(sol.n_iter, n_rows, sol.alpha, sol.w)
    if sol.converged:
        g = X @ sol.w
        up = sol.alpha < 1.0
        low = sol.alpha > 0.0
        if up.any() and low.any():
            assert (-g[up]).max() - (-g[low]).min() < eps + _rounding(np.abs(g).max())


def test_interface_figures_and_hooks(load_shared):
    """The registry's solve is this one; figures as training reads them; a hook that returns
    None, every iteration or in batches, changes nothing."""
    assert SOLVERS[21].solve is solve_oneclass
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    plain = solve(X, 0.3, 1e-6)
    assert plain.converged and plain.stop_reason == CONVERGED and plain.solver == 21
    assert plain.figures["n_sv"] == np.count_nonzero(plain.alpha > 0)
    assert plain.figures["objective"] == -plain.dual
    for every in (True, False):
        seen = []

        def hook(progress, seen=seen):
            assert progress.solver == 21 and progress.w.shape == (X.shape[1],)
            f = progress.figures
            assert progress.measure == f["neg_g_max"] - f["neg_g_min"]
            seen.append(progress.iteration)

        hook.every_iteration = every
        sol = solve(X, 0.3, 1e-6, hook=hook)
        np.testing.assert_array_equal(sol.w, plain.w)
        np.testing.assert_array_equal(sol.alpha, plain.alpha)
        assert sol.figures == plain.figures and sol.n_iter == plain.n_iter
        assert seen[-1] == plain.n_iter
        if every:
            # each outer iteration, then the converging pass (which counts no iteration)
            assert seen[:-1] == list(range(1, plain.n_iter + 1))


@pytest.mark.parametrize("liblinear_rounding", [True, False])
@pytest.mark.parametrize("stop_at", [1, 5, 30])
def test_interrupt_and_resume_is_exact(load_shared, liblinear_rounding, stop_at):
    """Stopped at iteration k (hook returns False) and resumed from the captured state: the
    same w, alpha and rho, bit for bit, as an uninterrupted run."""
    X = linsvm.data.as_csr(load_shared("heart_scale")[0])
    sub = oc_sub(X, 0.3, 1e-7, liblinear_rounding=liblinear_rounding)
    full = solve_oneclass(sub)
    assert full.converged and full.n_iter > stop_at
    saved = {}

    def stop(progress):
        if progress.iteration == stop_at:
            saved.update(progress.state())
            return False
        return None

    cut = solve_oneclass(sub, stop)
    assert cut.stop_reason == INTERRUPTED and not cut.converged and cut.n_iter == stop_at
    assert set(saved) == set(STATE_KEYS)
    assert (cut.primal, cut.dual, cut.gap) == oneclass_objectives(X, 0.3, cut.alpha)
    resumed = solve_oneclass(sub.but(resume=saved))
    assert resumed.stop_reason == CONVERGED and resumed.n_iter == full.n_iter
    np.testing.assert_array_equal(resumed.w, full.w)
    np.testing.assert_array_equal(resumed.alpha, full.alpha)
    assert resumed.figures == full.figures
