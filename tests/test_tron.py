"""TRON (-s 40, ``linsvm.solvers.tron``): LIBLINEAR 1.x's trust-region Newton method.

- optimum: the L2-loss SVM optimum of linsvm's -s 2 (line-search Newton) within 1e-8 relative
  at eps 1e-8 on generated sparse data and a9a (bias -1 and 1, C 1 and 50), plain (1.x) and
  preconditioned (2.20-2.30), with per-row C (C_i = 0 drops the row), the bias unregularised
  (-R), warm-started; liblinear-official's -s 2 optimum within 1e-6 on generated data and a9a;
  the logistic twin (``solve_tron_lr``, the benchmark's) reaches -s 0's optimum;
- LIBLINEAR 1.x's rules: the class-balance scaled tolerance, no preconditioner, the
  stopping rule ||g|| <= eps ||g(0)|| met at the end and not before;
- properties (hypothesis): the objective never increases across accepted steps, the
  accepted-iteration counter advances only on accepted steps, the reported objective and
  gradient norm are the true ones at the returned w;
- through ``linsvm.train(solver="tron")`` (class and sample weights, init_sol, -R), the CLI
  (``-s tron``), the model file (written as L2R_L2LOSS_SVC, read back by linsvm);
- the solver interface: a hook sees every trial; stopped at trial k and resumed from
  ``Progress.state()``, the run ends bit for bit where an uninterrupted one does; damaged
  states and bad input give one-line errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import (
    liblinear_train,
    liblinear_weights,
    make_sparse_problem,
    primal_of,
    rel_diff,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm import cli
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, Solution, Subproblem, get_solver, solver_tolerance
from linsvm.solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, SMALL_REDUCTION
from linsvm.solvers.tron import NO_REDUCTION, solve_tron, solve_tron_lr

LOSSES = (LOSS_LOGISTIC, LOSS_SQUARED_HINGE)
TIGHT = 1e-8
NEWTON_SOLVER = {LOSS_LOGISTIC: 0, LOSS_SQUARED_HINGE: 2}
TRON_SOLVER = {LOSS_LOGISTIC: solve_tron_lr, LOSS_SQUARED_HINGE: solve_tron}


def tron(X, y, C, loss=LOSS_SQUARED_HINGE, bias=-1.0, eps=TIGHT, max_iter=1000, *,
         preconditioned=False, w0=None, regularize_bias=True, hook=None, resume=None,
         **options) -> Solution:  # fmt: skip
    """TRON on one binary sub-problem at its own tolerance ``eps``."""
    sub = Subproblem(X, y, C, eps, max_iter, bias=bias, regularize_bias=regularize_bias,
                     w0=w0, resume=resume, options={"preconditioned": preconditioned,
                                                    **options})  # fmt: skip
    return TRON_SOLVER[loss](sub, hook)


def newton(X, y, C, loss, bias, eps, *, w0=None, regularize_bias=True) -> Solution:
    """linsvm's -s 0 / -s 2 (line-search Newton) at the solver's own tolerance ``eps``."""
    sub = Subproblem(X, y, C, eps, 1000, bias=bias, regularize_bias=regularize_bias, w0=w0)
    return SOLVERS[NEWTON_SOLVER[loss]].solve(sub, None)


def gradient(X, y, C, w, bias, loss, reg_bias=True):
    """grad P(w) in NumPy (independent of the Numba kernels)."""
    Xb = X.toarray()
    if bias >= 0:
        Xb = np.hstack([Xb, np.full((X.shape[0], 1), bias)])
    z = y * (Xb @ w)
    if loss == LOSS_LOGISTIC:
        coef = -C * y / (1.0 + np.exp(z))
    else:
        coef = np.where(z < 1.0, 2.0 * C * y * (z - 1.0), 0.0)
    g = w.copy()
    if not reg_bias:
        g[-1] = 0.0
    return g + Xb.T @ coef


def check_same_optimum(X, y, C, loss, bias, preconditioned=False, **kwargs):
    ref = newton(X, y, C, loss, bias, TIGHT, **kwargs)
    sol = tron(X, y, C, loss, bias, TIGHT, preconditioned=preconditioned, **kwargs)
    # at eps 1e-8 the 1e-12 relative-reduction stop of LIBLINEAR can come first
    assert sol.stop_reason in (CONVERGED, SMALL_REDUCTION), sol.stop_reason
    assert sol.solver == 40
    p_tron = primal_of(X, bias, y, C, sol.w, loss)
    if kwargs.get("regularize_bias", True):
        assert rel_diff(p_tron, sol.figures["f"]) < 1e-12
        assert rel_diff(p_tron, sol.primal) < 1e-12
        assert sol.dual <= sol.primal * (1 + 1e-12) and sol.gap < 1e-6 * sol.primal
    assert rel_diff(sol.figures["f"], ref.figures["f"]) < 1e-8
    assert rel_diff(p_tron, primal_of(X, bias, y, C, ref.w, loss)) < 1e-8
    return ref, sol


# ----------------------------------------------------------------------------- the optimum


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("C_value", [1.0, 50.0])
@pytest.mark.parametrize("preconditioned", [False, True])
def test_same_optimum_generated(loss, bias, C_value, preconditioned):
    X, y = make_sparse_problem(n_rows=400, n_features=60, density=0.1, seed=3)
    C = np.full(y.shape[0], C_value)
    check_same_optimum(X, y, C, loss, bias, preconditioned=preconditioned)


@pytest.mark.parametrize(
    "loss, bias",
    [(LOSS_SQUARED_HINGE, -1.0), (LOSS_SQUARED_HINGE, 1.0), (LOSS_LOGISTIC, 1.0)],
)
def test_same_optimum_a9a(load_shared, loss, bias):
    X, labels = load_shared("a9a")
    y = np.where(labels == labels[0], 1.0, -1.0)
    check_same_optimum(X, y, np.ones(y.shape[0]), loss, bias)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_liblinear_optimum_generated(bias):
    X, y = make_sparse_problem(n_rows=500, n_features=80, density=0.1, seed=21)
    model, _ = liblinear_train(y, X, "-s 2 -c 4 -e 1e-8", bias)
    # LIBLINEAR's positive class: its first label
    y_ll = np.where(y == model.get_labels()[0], 1.0, -1.0)
    C = np.full(y.shape[0], 4.0)
    p_ll = primal_of(X, bias, y_ll, C, liblinear_weights(model)[0], LOSS_SQUARED_HINGE)
    sol = tron(X, y_ll, C, bias=bias)
    assert rel_diff(sol.primal, p_ll) < 1e-6


def test_liblinear_optimum_a9a(load_shared):
    X, labels = load_shared("a9a")
    model, _ = liblinear_train(labels, X, "-s 2 -c 1 -e 1e-6", 1.0)
    y = np.where(labels == model.get_labels()[0], 1.0, -1.0)
    C = np.ones(y.shape[0])
    p_ll = primal_of(X, 1.0, y, C, liblinear_weights(model)[0], LOSS_SQUARED_HINGE)
    sol = tron(X, y, C, bias=1.0, eps=solver_tolerance(SOLVERS[40], 1e-6, y))
    assert sol.converged
    assert rel_diff(sol.primal, p_ll) < 1e-6


@pytest.mark.parametrize("loss", LOSSES)
def test_unregularised_bias_weights_and_warm_start(loss):
    X, y = make_sparse_problem(n_rows=300, n_features=30, seed=7)
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 3.0, y.shape[0])
    C[::10] = 0.0  # dropped rows
    ref, sol = check_same_optimum(X, y, C, loss, 1.0, regularize_bias=False)
    # warm start from the optimum: already converged (at a looser eps), w unchanged
    warm = tron(X, y, C, loss, 1.0, 1e-6, w0=sol.w, regularize_bias=False)
    assert warm.n_iter == 0 and warm.converged
    np.testing.assert_array_equal(warm.w, sol.w)
    # warm start from elsewhere reaches the same optimum
    warm = tron(X, y, C, loss, 1.0, TIGHT, w0=rng.normal(size=sol.w.shape[0]),
                regularize_bias=False)  # fmt: skip
    assert rel_diff(warm.figures["f"], ref.figures["f"]) < 1e-8
    # dropped rows count for nothing: the same w without them
    keep = C > 0
    alone = tron(X[keep], y[keep], C[keep], loss, 1.0, TIGHT, regularize_bias=False)
    np.testing.assert_allclose(alone.w, sol.w, rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------- LIBLINEAR 1.x


def test_registry_entry():
    spec = get_solver("tron")
    assert spec is SOLVERS[40] and spec.name == "TRON" and spec.model_type == 2
    assert spec.solve is solve_tron
    assert spec.default_eps == 0.01 and spec.max_iter == 1000
    assert spec.init_sol and spec.unregularized_bias and spec.weights
    # train_one's scaling: eps * max(min(#pos, #neg), 1) / l
    y = np.array([1.0] * 3 + [-1.0] * 7)
    assert solver_tolerance(spec, 0.01, y) == pytest.approx(0.01 * 3 / 10)


def test_default_tolerance_and_counts():
    X, y = make_sparse_problem(n_rows=500, n_features=50, seed=1)
    C = np.ones(y.shape[0])
    eps = solver_tolerance(SOLVERS[40], 0.01, y)
    sol = tron(X, y, C, eps=eps)
    history = sol.figures["history"]
    assert sol.converged and 1 <= sol.n_iter <= sol.figures["n_trials"] == len(history)
    assert sol.figures["n_cg_iter"] == sum(h[3] for h in history)
    assert sol.figures["grad_norm"] <= eps * sol.figures["grad_norm0"]
    # not before: every earlier accepted iterate had a larger gradient
    assert all(h[2] > eps * sol.figures["grad_norm0"] for h in history[:-1] if h[5])
    # the plain method and the preconditioned one differ (M = I vs the mixed diagonal)
    pcg = tron(X, y, C, eps=eps, preconditioned=True)
    assert pcg.converged and not np.array_equal(pcg.w, sol.w)


def test_max_iter_and_no_reduction_reasons():
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=2)
    C = np.full(300, 10.0)
    capped = tron(X, y, C, max_iter=2)
    assert capped.n_iter == 2 and capped.stop_reason == MAX_ITER and not capped.converged
    assert tron(X, y, C, max_iter=0).n_iter == 0
    # an all-zero problem: g(0) = w = 0 already meets the rule
    zero = tron(X, y, np.zeros(300))
    assert zero.converged and zero.n_iter == 0 and not zero.w.any()
    assert NO_REDUCTION == "no_reduction"


@settings(deadline=None, max_examples=40)
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(LOSSES),
    bias=st.sampled_from([-1.0, 1.0]),
    log_c=st.floats(-2.0, 3.0),
    log_eps=st.floats(-8.0, -1.0),
    preconditioned=st.booleans(),
)
def test_properties(seed, loss, bias, log_c, log_eps, preconditioned):
    X, y = make_sparse_problem(n_rows=60, n_features=12, density=0.3, seed=seed)
    C = np.full(y.shape[0], 10.0**log_c)
    eps = 10.0**log_eps
    sol = tron(X, y, C, loss, bias, eps, preconditioned=preconditioned)
    history = sol.figures["history"]
    n_w = X.shape[1] + (bias >= 0)
    f0 = primal_of(X, bias, y, C, np.zeros(n_w), loss)
    values = [f0] + [h[1] for h in history if h[5]]
    assert all(b <= a for a, b in zip(values, values[1:], strict=False))
    assert [h[0] for h in history if h[5]] == list(range(1, sol.n_iter + 1))
    # reported gradient norm and objective are the true ones at the returned w
    g = gradient(X, y, C, sol.w, bias, loss)
    assert np.isclose(np.linalg.norm(g), sol.figures["grad_norm"], rtol=1e-8, atol=1e-12)
    assert rel_diff(primal_of(X, bias, y, C, sol.w, loss), sol.figures["f"]) < 1e-10
    g0 = gradient(X, y, C, np.zeros(n_w), bias, loss)
    assert np.isclose(np.linalg.norm(g0), sol.figures["grad_norm0"], rtol=1e-10)
    if sol.converged:
        assert sol.figures["grad_norm"] <= eps * sol.figures["grad_norm0"]
    else:
        assert sol.stop_reason in (SMALL_REDUCTION, NO_REDUCTION, MAX_ITER)


# ----------------------------------------------------------------------------- train, CLI


def test_train_matches_s2_with_weights(tmp_path):
    X, y = make_sparse_problem(n_rows=300, n_features=25, seed=4, labels=[2, 7])
    sw = np.random.default_rng(3).uniform(0.0, 2.0, 300)
    kwargs = dict(C=3.0, eps=1e-7, bias=1.0, class_weight={7: 2.5}, sample_weight=sw)
    model = linsvm.train(X, y, solver="tron", **kwargs)
    ref = linsvm.train(X, y, solver=2, **kwargs)
    assert model.solver == 40 and model.results_[0].converged
    assert rel_diff(model.results_[0].primal, ref.results_[0].primal) < 1e-10
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-5, atol=1e-7)
    # warm starts: init_sol from -s 2's weights, and -R
    start = np.hstack([ref.coef_, ref.bias_weights_[:, None]])
    warm = linsvm.train(X, y, solver="tron", init_sol=start, **kwargs)
    assert warm.results_[0].n_iter <= 1
    free = linsvm.train(X, y, solver="tron", regularize_bias=False, **kwargs)
    free_ref = linsvm.train(X, y, solver=2, regularize_bias=False, **kwargs)
    assert rel_diff(free.results_[0].primal, free_ref.results_[0].primal) < 1e-10
    # the model file names LIBLINEAR's -s 2, and reads back to the same predictions
    path = tmp_path / "tron.model"
    model.save(path)
    assert path.read_text().splitlines()[0] == "solver_type L2R_L2LOSS_SVC"
    back = linsvm.load_model(path)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))


def test_cli_train(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=6)
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    out = tmp_path / "m"
    assert cli.main(["train", "-s", "tron", "-c", "2", "-e", "0.001", str(data), str(out)]) == 0
    assert out.read_text().splitlines()[0] == "solver_type L2R_L2LOSS_SVC"
    model = linsvm.train(X, y, solver=40, C=2.0, eps=0.001)
    ref = linsvm.train(X, y, solver=2, C=2.0, eps=1e-7)
    assert rel_diff(model.results_[0].primal, ref.results_[0].primal) < 1e-4
    # by number too; one-line errors for a bad -e
    assert cli.main(["train", "-s", "40", "-q", str(data), str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["train", "-s", "tron", "-e", "-1", str(data), str(out)]) != 0
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err


# ----------------------------------------------------------------------------- the interface


class Recorder:
    """A hook keeping (iteration, trials, w) of each call; at trial ``stop_at`` it captures
    the state and asks to stop."""

    def __init__(self, stop_at=None):
        self.seen = []
        self.state = None
        self.stop_at = stop_at

    def __call__(self, progress):
        trials = progress.figures["n_trials"]
        self.seen.append((progress.iteration, trials, progress.w.copy(), progress.figures))
        if self.stop_at is not None and trials >= self.stop_at:
            self.state = progress.state()
            return False
        return None


def _same(a: Solution, b: Solution) -> None:
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert (a.n_iter, a.converged, a.stop_reason) == (b.n_iter, b.converged, b.stop_reason)
    assert (a.primal, a.dual, a.gap) == (b.primal, b.dual, b.gap)
    for name in ("f", "grad_norm", "grad_norm0", "n_cg_iter", "n_trials", "delta", "history"):
        assert a.figures[name] == b.figures[name], name


def test_hook_sees_every_trial():
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=12)
    C = np.random.default_rng(1).uniform(0.0, 30.0, 300)
    plain = tron(X, y, C, bias=1.0, eps=1e-7)
    hook = Recorder()
    _same(tron(X, y, C, bias=1.0, eps=1e-7, hook=hook), plain)
    # once before the first trial, then once per trial (accepted or not)
    assert [t for _, t, _, _ in hook.seen] == list(range(plain.figures["n_trials"] + 1))
    assert hook.seen[0][0] == 0 and hook.seen[-1][0] == plain.n_iter
    np.testing.assert_array_equal(hook.seen[-1][2], plain.w)
    accepted = [fig["accepted"] for _, _, _, fig in hook.seen[1:]]
    assert accepted == [bool(h[5]) for h in plain.figures["history"]]


@pytest.mark.parametrize("preconditioned", [False, True])
@pytest.mark.parametrize("warm", [False, True])
def test_interrupt_and_resume_is_exact(preconditioned, warm):
    X, y = make_sparse_problem(n_rows=300, n_features=40, seed=13)
    C = np.random.default_rng(2).uniform(0.0, 30.0, 300)
    w0 = tron(X, y, 0.3 * C, bias=1.0, eps=1e-2).w if warm else None
    kwargs = dict(bias=1.0, eps=1e-7, w0=w0, preconditioned=preconditioned)
    full = tron(X, y, C, **kwargs)
    trials = full.figures["n_trials"]
    assert full.converged and trials >= 4
    for k in (1, 2, trials - 1):
        hook = Recorder(stop_at=k)
        part = tron(X, y, C, hook=hook, **kwargs)
        assert part.stop_reason == INTERRUPTED and not part.converged
        assert part.figures["n_trials"] == k
        np.testing.assert_array_equal(part.w, hook.seen[-1][2])
        assert part.primal == pytest.approx(primal_of(X, 1.0, y, C, part.w, LOSS_SQUARED_HINGE))
        _same(tron(X, y, C, resume=hook.state, **kwargs), full)
    # damaged or foreign states: one-line errors
    for name, value in (("margins", hook.state["margins"][:-1]), ("n_iter", np.array(-1)),
                        ("delta", np.array(math.nan)), ("stop", np.array(9)),
                        ("history", hook.state["history"][:-1])):  # fmt: skip
        with pytest.raises(InvalidInputError) as info:
            tron(X, y, C, resume={**hook.state, name: value}, **kwargs)
        assert "\n" not in str(info.value)
    with pytest.raises(InvalidInputError):
        tron(X, y, C, resume={"w": hook.state["w"]}, **kwargs)


def test_bad_input():
    X, y = make_sparse_problem(30, 5, seed=0)
    C = np.ones(30)
    bad_X = X.toarray()
    bad_X[0, 0] = np.nan
    cases = [
        lambda: tron(bad_X, y, C),
        lambda: tron(np.ones(5), y, C),
        lambda: tron(X, y[:-1], C),
        lambda: tron(X, np.full(30, np.nan), C),
        lambda: tron(X, np.array(["a"] * 30), C),
        lambda: tron(X, y, C[:-1]),
        lambda: tron(X, y, -C),
        lambda: tron(X, y, np.full(30, np.inf)),
        lambda: tron(X, y, C, eps=-1.0),  # (0: no stopping rule, accepted)
        lambda: tron(X, y, C, eps=np.nan),
        lambda: tron(X, y, C, eps="tight"),
        lambda: tron(X, y, C, bias=np.nan),
        lambda: tron(X, y, C, bias="one"),
        lambda: tron(X, y, C, max_iter=-1),
        lambda: tron(X, y, C, max_iter=2.5),
        lambda: tron(X, y, C, w0=np.zeros(4)),
        lambda: tron(X, y, C, bias=1.0, w0=np.zeros(5)),
        lambda: tron(X, y, C, w0=np.full(5, np.inf)),
        lambda: tron(X, y, C, regularize_bias=False),
        lambda: tron(X, y, C, preconditioned="yes"),
        lambda: tron(X, y, C, eps_cg=1.5),
        lambda: solve_tron(Subproblem(X, y, C, 0.01, 10, alpha0=np.zeros(30))),
        lambda: linsvm.train(X, y, solver="tron", eps=-1.0),
        lambda: linsvm.train(X, y, solver="tron", regularize_bias=False),
    ]
    for case in cases:
        with pytest.raises(InvalidInputError) as info:
            case()
        assert "\n" not in str(info.value)
