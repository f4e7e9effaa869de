"""The primal stochastic solvers of linsvm.solvers.sgd: Pegasos, SGD-R, SGD-S, SGD-M.

- the SGD-M closed form (plus-steps among mu presentations in a row) equals presenting the
  pattern mu times one after the other (hypothesis, dyadic values so that both are exact);
- at every complete epoch of SGD-S and SGD-M the implied alpha lie in [0, C], w = w(alpha),
  and the dual value is below the exact primal and below P* (DCD at a tight tolerance);
- SGD-S and SGD-M stop with stop_measure <= delta and (P - P*)/P* <= delta;
- SGD-M with mu = 1 is SGD-S exactly; Pegasos with k = 1 and no projection is SGD-R (the same
  draws from the same seed) up to rounding: the perceptron form on u = lambda t w is the SGD;
- Pegasos and SGD-R approach P*; the projection keeps ||w|| <= 1/sqrt(lambda);
- equal seeds give equal w; the hook is called once per epoch (equivalent) and does not
  change the result, nor do batches of epochs; stopped at epoch k and resumed from
  ``Progress.state()``, a run ends bit for bit where an uninterrupted one does; bad input raises
  InvalidInputError with a one-line message.
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
from linsvm.solvers import Solution, Subproblem
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from linsvm.solvers.dcd import solve_l1svc_dual
from linsvm.solvers.sgd import (
    DEFAULT_DELTA,
    DEFAULT_MAX_EPOCHS,
    DEFAULT_PEGASOS_EPOCHS,
    DEFAULT_RANDOM_EPOCHS,
    plus_steps,
    solve_pegasos,
    solve_sgd_m,
    solve_sgd_r,
    solve_sgd_s,
)

ROUNDING = 1e-10  # relative
_SGD = {"r": solve_sgd_r, "s": solve_sgd_s, "m": solve_sgd_m}


def _subproblem(X, y, C, bias, eps, max_iter, seed, resume=None, **options) -> Subproblem:
    """C: one cost (a scalar, as a per-row array of equal entries) or the per-row array."""
    c_rows = np.full(np.shape(y)[0], C) if np.ndim(C) == 0 else C
    options = {k: v for k, v in options.items() if v is not None}
    return Subproblem(X, y, c_rows, eps, max_iter, bias=bias, seed=seed, resume=resume,
                      options=options)  # fmt: skip


def solve_sgd(X, y, C, bias=-1.0, *, variant="s", delta=DEFAULT_DELTA, max_epochs=None,
              max_steps=None, multiplicity=None, comparison=None, seed=1, hook=None,
              resume=None) -> Solution:  # fmt: skip
    """SGD-R/S/M (``variant``) on one binary problem, with the old driver's defaults."""
    if max_epochs is None:
        max_epochs = DEFAULT_RANDOM_EPOCHS if variant == "r" else DEFAULT_MAX_EPOCHS
    sub = _subproblem(X, y, C, bias, delta, max_epochs, seed, resume, max_steps=max_steps,
                      multiplicity=multiplicity, comparison=comparison)  # fmt: skip
    return _SGD[variant](sub, hook)


def pegasos(X, y, C, bias=-1.0, *, max_epochs=DEFAULT_PEGASOS_EPOCHS, batch_size=None,
            projection=None, seed=1, hook=None, resume=None) -> Solution:  # fmt: skip
    sub = _subproblem(X, y, C, bias, DEFAULT_DELTA, max_epochs, seed, resume,
                      batch_size=batch_size, projection=projection)  # fmt: skip
    return solve_pegasos(sub, hook)


def _optimum(X, y, C: float, bias: float = -1.0) -> tuple[float, float]:
    """(P*, certified relative gap) from DCD at a tight tolerance."""
    c_rows = np.full(X.shape[0], C)
    sol = solve_l1svc_dual(Subproblem(X, y, c_rows, 1e-9, 100_000, bias=bias))
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
    assert plus_steps(gf, qf, lam, mu) == _sequential_plus_steps(gf, qf, lam, mu)


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
        hook=lambda p: snapshots.append((p.iteration, p.w.copy(), p.measure)),
    )  # fmt: skip
    assert [it for it, _, _ in snapshots] == list(range(1, len(snapshots) + 1))
    for n_epochs, w_seen, _ in snapshots:
        # the run cut at n_epochs is the same trajectory (and the same w as reported)
        sol = solve_sgd(
            X, y, C, bias, variant=variant, multiplicity=mult, delta=0.0,
            max_epochs=n_epochs, seed=seed,
        )  # fmt: skip
        assert sol.n_iter == n_epochs
        assert sol.stop_reason == (CONVERGED if sol.converged else MAX_ITER)
        assert sol.figures["n_steps"] == n_epochs * n_rows * (mu if variant == "m" else 1)
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
    f = sol.figures
    assert sol.converged and sol.stop_reason == CONVERGED
    assert f["primal_evaluations"] >= 1
    assert f["stop_measure"] <= delta and f["stop_ratio"] == f["stop_measure"]
    # the measure the criterion used is the bound of the returned w and alpha
    assert f["stop_measure"] == pytest.approx(sol.gap / sol.dual, rel=1e-8, abs=1e-12)
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
    names = ("n_steps", "primal_evaluations", "stop_measure")
    assert (s.n_iter, *(s.figures[k] for k in names)) == (m.n_iter, *(m.figures[k] for k in names))


# ----------------------------------------------------------------------------- SGD-R, Pegasos


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_pegasos_without_projection_is_sgd_r(bias):
    # Both draw one row per step from the same generator: the same sequence of patterns. Pegasos
    # shrinks w explicitly, SGD-R keeps u = lambda t w: the same iterates up to rounding.
    X, y = _problem(120, 20, seed=4)
    steps = 5 * X.shape[0]
    r = solve_sgd(X, y, 2.0, bias, variant="r", max_steps=steps, seed=9)
    p = pegasos(X, y, 2.0, bias, max_epochs=5, projection=False, seed=9)
    assert r.figures["n_steps"] == p.figures["n_steps"] == steps
    np.testing.assert_allclose(p.w, r.w, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("C", [1.0, 0.1])
def test_pegasos_and_sgd_r_approach_optimum(C):
    X, y = _problem()
    p_star, _ = _optimum(X, y, C)
    r = solve_sgd(X, y, C, variant="r", max_epochs=300)
    p = pegasos(X, y, C, max_epochs=300)
    p8 = pegasos(X, y, C, max_epochs=300, batch_size=8)
    for sol in (r, p, p8):
        assert not sol.converged and sol.alpha is None and sol.stop_reason == MAX_ITER
        assert math.isnan(sol.dual) and math.isnan(sol.gap)
        assert math.isnan(sol.figures["stop_measure"]) and math.isnan(sol.figures["stop_ratio"])
        assert p_star * (1 - ROUNDING) <= sol.primal <= p_star * 1.03
        assert sol.primal == pytest.approx(_primal(X, y, C, sol.w), rel=ROUNDING)
    assert r.figures["n_steps"] == 300 * X.shape[0] and r.n_iter == 300
    assert p8.figures["n_steps"] == math.ceil(300 * X.shape[0] / 8) and p8.n_iter == 300


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
    sol = pegasos(
        X, y, C, max_epochs=4, batch_size=batch_size, seed=seed,
        hook=lambda p: norms.append(np.linalg.norm(p.w)),
    )  # fmt: skip
    norms.append(np.linalg.norm(sol.w))
    assert max(norms) <= radius * (1 + 1e-12)


def test_projection_is_active_on_a_large_first_step():
    # one iteration on all rows: w = C sum_{i} y_i x_i, far outside the ball for a large C
    X, y = _problem(50, 10, seed=5)
    C = 1000.0
    radius = math.sqrt(C * X.shape[0])
    free = pegasos(X, y, C, max_epochs=1, batch_size=200, projection=False)
    ball = pegasos(X, y, C, max_epochs=1, batch_size=200, projection=True)
    assert free.figures["n_steps"] == ball.figures["n_steps"] == 1
    assert np.linalg.norm(free.w) > 2 * radius
    assert np.linalg.norm(ball.w) == pytest.approx(radius, rel=1e-12)
    np.testing.assert_allclose(ball.w, free.w * radius / np.linalg.norm(free.w), rtol=1e-12)


# ----------------------------------------------------------------------------- common


def _run(method: str, X, y, seed: int, hook=None, resume=None) -> Solution:
    if method == "pegasos":
        return pegasos(X, y, 1.0, max_epochs=7, batch_size=3, seed=seed, hook=hook,
                       resume=resume)  # fmt: skip
    if method == "r":
        return solve_sgd(X, y, 1.0, variant="r", max_steps=7 * X.shape[0] + 5, seed=seed,
                         hook=hook, resume=resume)  # fmt: skip
    return solve_sgd(X, y, 1.0, variant=method, delta=1e-3, max_epochs=7, seed=seed, hook=hook,
                     resume=resume)  # fmt: skip


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

    def record(progress):
        w = progress.w
        assert isinstance(w, np.ndarray) and w.dtype == np.float64 and w.shape == a.w.shape
        calls.append((progress.iteration, progress.measure))
        w[:] = 1e6  # a hook scribbling on the live w must not change the result

    d = _run(method, X, y, 3, record)
    np.testing.assert_array_equal(a.w, d.w)
    assert a.n_iter == 7
    # one call per epoch (equivalent); SGD-R's budget of 7 l + 5 steps ends in a partial one
    n_calls = 8 if method == "r" else a.n_iter
    assert [it for it, _ in calls] == list(range(1, n_calls + 1))
    if method in ("s", "m"):
        assert all(math.isnan(p) or p > -1.0 for _, p in calls)
        assert any(not math.isnan(p) for _, p in calls)
    else:
        assert all(math.isnan(p) for _, p in calls)


class _Stop:
    """A hook that captures the state at iteration ``k`` and stops there; ``every=False``
    takes batches (and never stops)."""

    def __init__(self, k=None, every=True):
        self.k = k
        self.state = None
        self.iterations = []
        if not every:
            self.every_iteration = False

    def __call__(self, progress):
        self.iterations.append(progress.iteration)
        primal, _ = progress.objectives()
        assert primal == pytest.approx(
            float(
                primal_value(
                    *_X_ARRAYS, -1.0, _Y, np.full(_Y.shape[0], 1.0), progress.w, LOSS_HINGE
                )
            ),  # fmt: skip
            rel=1e-12,
        )
        if self.k is not None and progress.iteration >= self.k:
            self.state = progress.state()
            return False
        return None


_X, _Y = _problem(100, 20, seed=6)
_X_ARRAYS = (_X.indptr, _X.indices, _X.data)


def _same(a: Solution, b: Solution) -> None:
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.alpha is None) == (b.alpha is None)
    if a.alpha is not None:
        np.testing.assert_array_equal(a.alpha, b.alpha)
    assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
    assert a.primal == b.primal
    assert a.figures["n_steps"] == b.figures["n_steps"]
    assert a.figures["primal_evaluations"] == b.figures["primal_evaluations"]


@pytest.mark.parametrize("method", ["pegasos", "r", "s", "m"])
def test_batches_change_nothing(method):
    full = _run(method, _X, _Y, 3)
    hook = _Stop(every=False)
    _same(_run(method, _X, _Y, 3, hook), full)
    assert hook.iterations[-1] == (8 if method == "r" else 7)


@pytest.mark.parametrize("method", ["pegasos", "r", "s", "m"])
@pytest.mark.parametrize("k", [1, 4, 6])
def test_interrupt_and_resume_is_exact(method, k):
    full = _run(method, _X, _Y, 3)
    hook = _Stop(k)
    part = _run(method, _X, _Y, 3, hook)
    assert part.stop_reason == INTERRUPTED and not part.converged and part.n_iter == k
    assert part.primal == pytest.approx(_primal(_X, _Y, 1.0, part.w), rel=ROUNDING)
    if method in ("s", "m"):
        assert part.dual <= part.primal and np.all(part.alpha <= 1.0)
    _same(_run(method, _X, _Y, 3, resume=hook.state), full)
    state = dict(hook.state)
    state.pop("rng")
    with pytest.raises(InvalidInputError):
        _run(method, _X, _Y, 3, resume=state)


def _bad_calls(X, y):
    good_y = y
    unequal = np.linspace(0.5, 1.5, good_y.shape[0])
    return [
        lambda: solve_sgd(X, good_y, 0.0),
        lambda: solve_sgd(X, good_y, -1.0),
        lambda: solve_sgd(X, good_y, math.nan),
        lambda: solve_sgd(X, good_y, math.inf),
        lambda: solve_sgd(X, good_y, unequal),  # class or sample weights
        lambda: solve_sgd(X, good_y, "1"),
        lambda: solve_sgd(X, np.where(good_y > 0, 1.0, 0.0), 1.0),
        lambda: solve_sgd(X, good_y[:-1], 1.0),
        lambda: solve_sgd(X, good_y.astype(str), 1.0),
        lambda: solve_sgd(X, good_y, 1.0, math.nan),
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
        lambda: solve_sgd(X, good_y, 1.0, hook=3),
        lambda: solve_sgd(X[:0], good_y[:0], 1.0),
        lambda: solve_sgd(sp.csr_matrix(np.full((2, 2), np.nan)), np.array([1.0, -1.0]), 1.0),
        lambda: solve_sgd_s(
            Subproblem(X, good_y, np.ones(good_y.shape[0]), 0.01, 10, w0=np.zeros(X.shape[1]))
        ),  # fmt: skip
        lambda: pegasos(X, good_y, 0.0),
        lambda: pegasos(X, good_y, [1.0]),
        lambda: pegasos(X, good_y * 2, 1.0),
        lambda: pegasos(X, good_y, 1.0, batch_size=0),
        lambda: pegasos(X, good_y, 1.0, max_epochs=0),
        lambda: pegasos(X, good_y, 1.0, projection="yes"),
        lambda: pegasos(X, good_y, 1.0, bias=math.inf),
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


@pytest.mark.parametrize("method", ["pegasos", "r", "s", "m"])
def test_stop_at_the_end_is_not_an_interruption(method):
    full = _run(method, _X, _Y, 3)
    last = 8 if method == "r" else 7
    _same(_run(method, _X, _Y, 3, _Stop(last)), full)
