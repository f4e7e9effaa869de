"""The primal stochastic solvers of linsvm.solvers.sgd: Pegasos, SGD-R, SGD-S, SGD-M.

- the SGD-M closed form (plus-steps among mu presentations in a row) equals presenting the
  pattern mu times one after the other (hypothesis, dyadic values so that both are exact);
- at every complete epoch of SGD-S and SGD-M the implied alpha lie in [0, C], w = w(alpha),
  and the dual value is below the exact primal and below P* (DCD at a tight tolerance);
- SGD-S and SGD-M stop with stop_measure <= delta and (P - P*)/P* <= delta;
- SGD-M with mu = 1 is SGD-S exactly; Pegasos with k = 1 and no projection is SGD-R (the same
  draws from the same seed) up to rounding: the perceptron form on u = lambda t w is the SGD;
- Pegasos and SGD-R approach P*; the projection keeps ||w|| <= 1/sqrt(lambda);
- equal seeds give equal w; on_iteration is called once per epoch (equivalent) and does not
  change the result; bad input raises InvalidInputError with a one-line message.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, primal_from_dual, primal_value, svm_objectives
from linsvm.solvers.dcd import solve_svm_dual
from linsvm.solvers.sgd import SGDSolution, _plus_steps, solve_pegasos, solve_sgd

ROUNDING = 1e-10  # relative


def _optimum(X, y, C: float, bias: float = -1.0) -> tuple[float, float]:
    """(P*, certified relative gap) from DCD at a tight tolerance."""
    c_rows = np.full(X.shape[0], C)
    sol = solve_svm_dual(X, y, c_rows, LOSS_HINGE, bias, 1e-9, 100_000)
    primal, dual, gap = svm_objectives(X, bias, y, c_rows, sol.w, sol.alpha, LOSS_HINGE)
    assert gap <= 1e-7 * primal
    return primal, gap / primal


def _primal(X, y, C: float, w, bias: float = -1.0) -> float:
    c_rows = np.full(X.shape[0], C)
    return float(primal_value(X.indptr, X.indices, X.data, bias, y, c_rows, w, LOSS_HINGE))


def _problem(n_rows=300, n_features=40, seed=0):
    X, y = make_sparse_problem(n_rows, n_features, seed=seed)
    return X, y.astype(np.float64)


# ----------------------------------------------------------------------------- closed form


def _sequential_plus_steps(g: float, q: float, lam: float, mu: int) -> int:
    k = 0
    for _ in range(mu):
        if g <= 0.0:  # margin error: u += y x, the threshold grows by lambda
            k += 1
            g += q - lam
        else:  # pure shrinking
            g -= lam
    return k


@settings(max_examples=400)
@given(
    g=st.integers(-4000, 4000),
    q=st.integers(0, 512),
    lam_exp=st.integers(0, 7),
    mu=st.integers(1, 60),
)
def test_plus_steps_closed_form_matches_sequential(g, q, lam_exp, mu):
    # multiples of 1/64 and powers of two: every operation of both sides is exact
    gf, qf, lam = g / 64.0, q / 64.0, 2.0**-lam_exp
    assert _plus_steps(gf, qf, lam, mu) == _sequential_plus_steps(gf, qf, lam, mu)


# ----------------------------------------------------------------------------- SGD-S / SGD-M


@settings(max_examples=12)
@given(
    seed=st.integers(0, 2**31),
    data_seed=st.integers(0, 1000),
    n_rows=st.integers(5, 60),
    C=st.sampled_from([0.1, 1.0, 10.0]),
    variant=st.sampled_from(["s", "m"]),
    mu=st.integers(2, 6),
    bias=st.sampled_from([-1.0, 1.0]),
)
def test_epoch_ends_alpha_feasible_and_dual_below_primal(
    seed, data_seed, n_rows, C, variant, mu, bias
):
    X, y = _problem(n_rows, 8, data_seed)
    mult = mu if variant == "m" else None
    p_star, _ = _optimum(X, y, C, bias)
    snapshots = []
    solve_sgd(
        X, y, C, bias, variant=variant, multiplicity=mult, delta=0.0, max_epochs=6, seed=seed,
        on_iteration=lambda it, w, progress: snapshots.append((it, w, progress)),
    )  # fmt: skip
    assert [it for it, _, _ in snapshots] == list(range(1, len(snapshots) + 1))
    for n_epochs, w_seen, _ in snapshots:
        # the run cut at n_epochs is the same trajectory (and the same w as reported)
        sol = solve_sgd(
            X, y, C, bias, variant=variant, multiplicity=mult, delta=0.0,
            max_epochs=n_epochs, seed=seed,
        )  # fmt: skip
        assert sol.n_epochs == n_epochs
        assert sol.n_steps == n_epochs * n_rows * (mu if variant == "m" else 1)
        np.testing.assert_array_equal(sol.w, w_seen)
        assert sol.alpha.shape == (n_rows,)
        assert np.all(sol.alpha >= 0.0) and np.all(sol.alpha <= C)
        w_alpha = primal_from_dual(X.indptr, X.indices, X.data, bias, y, sol.alpha, sol.w.size)
        np.testing.assert_allclose(sol.w, w_alpha, rtol=1e-9, atol=1e-9 * C)
        assert sol.primal == pytest.approx(_primal(X, y, C, sol.w, bias), rel=ROUNDING)
        assert sol.dual <= sol.primal * (1 + ROUNDING) + ROUNDING
        assert sol.dual <= p_star * (1 + ROUNDING) + ROUNDING
        assert sol.gap == pytest.approx(sol.primal - sol.dual, rel=ROUNDING, abs=ROUNDING)


@pytest.mark.parametrize("C", [1.0, 0.1])
@pytest.mark.parametrize(("variant", "mu"), [("s", None), ("m", 3)])
@pytest.mark.parametrize("delta", [0.01, 0.003])
def test_stops_within_delta_of_optimum(C, variant, mu, delta):
    X, y = _problem()
    p_star, _ = _optimum(X, y, C)
    sol = solve_sgd(X, y, C, variant=variant, multiplicity=mu, delta=delta, comparison=2.0)
    assert sol.converged
    assert sol.primal_evaluations >= 1
    assert sol.stop_measure <= delta
    # the measure the criterion used is the bound of the returned w and alpha
    assert sol.stop_measure == pytest.approx(sol.gap / sol.dual, rel=1e-8, abs=1e-12)
    assert 0.0 < sol.dual <= p_star * (1 + ROUNDING)
    assert p_star * (1 - ROUNDING) <= sol.primal <= p_star * (1 + delta)


def test_bias_feature():
    X, y = _problem(seed=3)
    p_star, _ = _optimum(X, y, 1.0, bias=1.0)
    sol = solve_sgd(X, y, 1.0, 1.0, variant="s", delta=0.01)
    assert sol.w.shape == (X.shape[1] + 1,)
    assert sol.converged and sol.primal <= p_star * 1.01
    assert sol.primal == pytest.approx(_primal(X, y, 1.0, sol.w, 1.0), rel=ROUNDING)


@pytest.mark.parametrize("seed", [1, 7, 12345])
def test_m_with_multiplicity_one_is_s(seed):
    X, y = _problem(seed=2)
    s = solve_sgd(X, y, 0.5, variant="s", delta=0.01, seed=seed)
    m = solve_sgd(X, y, 0.5, variant="m", multiplicity=1, delta=0.01, seed=seed)
    np.testing.assert_array_equal(s.w, m.w)
    np.testing.assert_array_equal(s.alpha, m.alpha)
    assert (s.n_epochs, s.n_steps, s.primal_evaluations) == (
        m.n_epochs,
        m.n_steps,
        m.primal_evaluations,
    )
    assert s.stop_measure == m.stop_measure


# ----------------------------------------------------------------------------- SGD-R, Pegasos


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_pegasos_without_projection_is_sgd_r(bias):
    # Both draw one row per step from the same generator: the same sequence of patterns. Pegasos
    # shrinks w explicitly, SGD-R keeps u = lambda t w: the same iterates up to rounding.
    X, y = _problem(120, 20, seed=4)
    steps = 5 * X.shape[0]
    r = solve_sgd(X, y, 2.0, bias, variant="r", max_steps=steps, seed=9)
    p = solve_pegasos(X, y, 2.0, bias, max_epochs=5, projection=False, seed=9)
    assert r.n_steps == p.n_steps == steps
    np.testing.assert_allclose(p.w, r.w, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("C", [1.0, 0.1])
def test_pegasos_and_sgd_r_approach_optimum(C):
    X, y = _problem()
    p_star, _ = _optimum(X, y, C)
    r = solve_sgd(X, y, C, variant="r", max_epochs=300)
    p = solve_pegasos(X, y, C, max_epochs=300)
    p8 = solve_pegasos(X, y, C, max_epochs=300, batch_size=8)
    for sol in (r, p, p8):
        assert not sol.converged and sol.alpha is None
        assert math.isnan(sol.dual) and math.isnan(sol.gap) and math.isnan(sol.stop_measure)
        assert p_star * (1 - ROUNDING) <= sol.primal <= p_star * 1.03
        assert sol.primal == pytest.approx(_primal(X, y, C, sol.w), rel=ROUNDING)
    assert r.n_steps == 300 * X.shape[0] and r.n_epochs == 300
    assert p8.n_steps == math.ceil(300 * X.shape[0] / 8) and p8.n_epochs == 300


@settings(max_examples=10)
@given(
    seed=st.integers(0, 2**31),
    batch_size=st.integers(1, 70),
    C=st.sampled_from([0.5, 10.0, 1000.0]),
)
def test_projection_keeps_w_in_ball(seed, batch_size, C):
    X, y = _problem(50, 10, seed=5)
    radius = math.sqrt(C * X.shape[0])  # 1/sqrt(lambda), lambda = 1/(C l)
    norms = []
    sol = solve_pegasos(
        X, y, C, max_epochs=4, batch_size=batch_size, seed=seed,
        on_iteration=lambda it, w, progress: norms.append(np.linalg.norm(w)),
    )  # fmt: skip
    norms.append(np.linalg.norm(sol.w))
    assert max(norms) <= radius * (1 + 1e-12)


def test_projection_is_active_on_a_large_first_step():
    # one iteration on all rows: w = C sum_{i} y_i x_i, far outside the ball for a large C
    X, y = _problem(50, 10, seed=5)
    C = 1000.0
    radius = math.sqrt(C * X.shape[0])
    free = solve_pegasos(X, y, C, max_epochs=1, batch_size=200, projection=False)
    ball = solve_pegasos(X, y, C, max_epochs=1, batch_size=200, projection=True)
    assert free.n_steps == ball.n_steps == 1
    assert np.linalg.norm(free.w) > 2 * radius
    assert np.linalg.norm(ball.w) == pytest.approx(radius, rel=1e-12)
    np.testing.assert_allclose(ball.w, free.w * radius / np.linalg.norm(free.w), rtol=1e-12)


# ----------------------------------------------------------------------------- common


def _run(method: str, X, y, seed: int, on_iteration=None) -> SGDSolution:
    if method == "pegasos":
        return solve_pegasos(X, y, 1.0, max_epochs=7, batch_size=3, seed=seed,
                             on_iteration=on_iteration)  # fmt: skip
    if method == "r":
        return solve_sgd(X, y, 1.0, variant="r", max_steps=7 * X.shape[0] + 5, seed=seed,
                         on_iteration=on_iteration)  # fmt: skip
    return solve_sgd(X, y, 1.0, variant=method, delta=1e-3, max_epochs=7, seed=seed,
                     on_iteration=on_iteration)  # fmt: skip


@pytest.mark.parametrize("method", ["pegasos", "r", "s", "m"])
def test_seeds_and_progress_reports(method):
    X, y = _problem(100, 20, seed=6)
    a = _run(method, X, y, 3)
    b = _run(method, X, y, 3)
    c = _run(method, X, y, 4)
    np.testing.assert_array_equal(a.w, b.w)
    assert not np.array_equal(a.w, c.w)
    assert a.w.dtype == np.float64 and a.w.shape == (X.shape[1],)

    calls = []

    def record(iteration, w, progress):
        assert isinstance(w, np.ndarray) and w.dtype == np.float64 and w.shape == a.w.shape
        calls.append((iteration, progress))
        w[:] = 1e6  # the caller owns the array: the run must not be affected

    d = _run(method, X, y, 3, record)
    np.testing.assert_array_equal(a.w, d.w)
    assert [it for it, _ in calls] == list(range(1, a.n_epochs + 1))
    assert a.n_epochs == 7
    if method in ("s", "m"):
        assert all(math.isnan(p) or p > -1.0 for _, p in calls)
        assert any(not math.isnan(p) for _, p in calls)
    else:
        assert all(math.isnan(p) for _, p in calls)


def _bad_calls(X, y):
    good_y = y
    return [
        lambda: solve_sgd(X, good_y, 0.0),
        lambda: solve_sgd(X, good_y, -1.0),
        lambda: solve_sgd(X, good_y, math.nan),
        lambda: solve_sgd(X, good_y, math.inf),
        lambda: solve_sgd(X, good_y, np.ones(X.shape[0])),
        lambda: solve_sgd(X, good_y, "1"),
        lambda: solve_sgd(X, np.where(good_y > 0, 1.0, 0.0), 1.0),
        lambda: solve_sgd(X, good_y[:-1], 1.0),
        lambda: solve_sgd(X, good_y.astype(str), 1.0),
        lambda: solve_sgd(X, good_y, 1.0, math.nan),
        lambda: solve_sgd(X, good_y, 1.0, variant="q"),
        lambda: solve_sgd(X, good_y, 1.0, delta=-0.1),
        lambda: solve_sgd(X, good_y, 1.0, delta=math.nan),
        lambda: solve_sgd(X, good_y, 1.0, max_epochs=0),
        lambda: solve_sgd(X, good_y, 1.0, max_epochs=2.5),
        lambda: solve_sgd(X, good_y, 1.0, variant="r", max_steps=0),
        lambda: solve_sgd(X, good_y, 1.0, variant="s", max_steps=10),
        lambda: solve_sgd(X, good_y, 1.0, variant="m", multiplicity=0),
        lambda: solve_sgd(X, good_y, 1.0, variant="s", multiplicity=3),
        lambda: solve_sgd(X, good_y, 1.0, comparison=0.0),
        lambda: solve_sgd(X, good_y, 1.0, seed=1.5),
        lambda: solve_sgd(X, good_y, 1.0, on_iteration=3),
        lambda: solve_sgd(X[:0], good_y[:0], 1.0),
        lambda: solve_sgd(sp.csr_matrix(np.full((2, 2), np.nan)), np.array([1.0, -1.0]), 1.0),
        lambda: solve_pegasos(X, good_y, 0.0),
        lambda: solve_pegasos(X, good_y, [1.0]),
        lambda: solve_pegasos(X, good_y * 2, 1.0),
        lambda: solve_pegasos(X, good_y, 1.0, batch_size=0),
        lambda: solve_pegasos(X, good_y, 1.0, max_epochs=0),
        lambda: solve_pegasos(X, good_y, 1.0, projection="yes"),
        lambda: solve_pegasos(X, good_y, 1.0, bias=math.inf),
    ]


@pytest.mark.parametrize("k", range(len(_bad_calls(sp.csr_matrix((3, 2)), np.ones(3)))))
def test_bad_input_raises_one_line_error(k):
    X, y = _problem(20, 5, seed=7)
    with pytest.raises(InvalidInputError) as info:
        _bad_calls(X, y)[k]()
    assert "\n" not in str(info.value) and str(info.value)


def test_dense_input_and_labels_as_integers():
    X, y = _problem(60, 8, seed=8)
    a = solve_sgd(X, y, 1.0, delta=0.01, seed=2)
    b = solve_sgd(X.toarray(), y.astype(np.int64), 1.0, delta=0.01, seed=2)
    np.testing.assert_array_equal(a.w, b.w)
