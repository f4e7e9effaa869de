"""Bottou's sgd 2.0 solvers: svmsgd (-s 37), ASGD (-s 38), SGD-QN (-s 39).

- Each solver's steps equal a plain dense re-statement of the method (no divisors, no lazy
  averaging), visiting the file order (shuffle=False), including runs where the divisors pass
  RENORM_ABOVE and are folded into the vectors.
- eta0's search follows sgd's rule on the calibration costs; t0's picks the best candidate.
- Seeds, shuffle=False, hooks, interrupt and resume (exact), bad input, train(), the CLI.
- Accuracy, (P - P*)/P* with P* from DCD at eps 1e-6, shuffled order, seed 1, C = 1, no bias,
  measured (svmsgd / ASGD / SGD-QN): generated 3000 x 200 after 50 epochs 2.0e-2 / 1.3e-2 /
  4.5e-2 (after 100: 1.0e-2 / 9.3e-3 / 1.2e-2); a9a after 10 epochs 3.5e-2 / 4.0e-3 / 8.8e-3
  (after 100: 1.2e-2 / 2.0e-3 / 1.6e-3). The tests assert those with some room.
- Oracles: sgd 2.0's programs (scripts/oracles/bottou_sgd.sh; skipped when not built) on the
  same shuffled file give the same primal after 10 epochs (asserted within 1%; measured 1e-8
  for svmsgd, 5e-5 for svmasgd whose printed norm has 6 digits, 5e-8 for svmsgdqn).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm import cli
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, primal_value
from linsvm.solvers import SOLVERS, Subproblem
from linsvm.solvers._base import INTERRUPTED, MAX_ITER
from linsvm.solvers.sgd_bottou import (
    QN_T0_CANDIDATES,
    SAMPLE_ROWS,
    _determine_eta0,
    _evaluate_eta,
    solve_asgd,
    solve_sgdqn,
    solve_svmsgd,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import originals_bottou as originals  # noqa: E402

_SOLVE = {37: solve_svmsgd, 38: solve_asgd, 39: solve_sgdqn}


def _sub(X, y, C=1.0, max_iter=5, bias=-1.0, seed=1, resume=None, reg_bias=True, **options):
    return Subproblem(X, y, np.full(np.shape(y)[0], C), 0.01, max_iter, bias=bias,
                      regularize_bias=reg_bias, seed=seed, resume=resume,
                      options=options)  # fmt: skip


def _primal(X, y, C, w, bias=-1.0, reg_bias=True) -> float:
    c_rows = np.full(X.shape[0], C)
    value = float(primal_value(X.indptr, X.indices, X.data, bias, y, c_rows, w, LOSS_HINGE))
    return value - (0.5 * w[-1] ** 2 if not reg_bias else 0.0)


def _problem(n_rows=200, n_features=30, seed=0):
    X, y = make_sparse_problem(n_rows, n_features, seed=seed)
    return X, y.astype(np.float64)


_OPTIMA: dict[tuple[str, float], float] = {}


def _optimum(X, y, name: str, C=1.0) -> float:
    """P* from DCD at eps 1e-6 (cached per problem name)."""
    if (name, C) not in _OPTIMA:
        sub = Subproblem(X, y, np.full(X.shape[0], C), 1e-6, 1_000_000)
        _OPTIMA[name, C] = SOLVERS[3].solve(sub).primal
    return _OPTIMA[name, C]


# ----------------------------------------------------------------------------- dense references


def _rows(X):
    return X.toarray()


def _with_bias(D, bias, reg_bias):
    """The rows with the regularised bias feature appended (the free bias is kept apart)."""
    if bias >= 0 and reg_bias:
        return np.hstack([D, np.full((D.shape[0], 1), bias)])
    return D


def _dense_sgd(X, y, C, epochs, eta0, bias=-1.0, reg_bias=True, averaged=False, avgstart=1.0):
    """svmsgd / ASGD, step by step on an explicit w (and a), in file order."""
    D = _with_bias(_rows(X), bias, reg_bias)
    free = bias >= 0 and not reg_bias
    n = D.shape[0]
    lam = 1.0 / (C * n)
    w = np.zeros(D.shape[1])
    a = np.zeros_like(w)
    b = ab = 0.0
    t = 0
    max_divisor = 1.0
    divisor = 1.0
    for _ in range(epochs):
        for i in range(n):
            if averaged:
                eta = eta0 / (1.0 + lam * eta0 * t) ** 0.75
            else:
                eta = eta0 / (1.0 + lam * eta0 * t)
            s = D[i] @ w + b
            w = w * (1.0 - eta * lam)
            divisor /= 1.0 - eta * lam
            max_divisor = max(max_divisor, divisor)
            if y[i] * s <= 1.0:
                w = w + eta * y[i] * D[i]
                if free:
                    b += 0.01 * eta * y[i]
            mu = 1.0 if t <= avgstart * n else 1.0 / (1.0 + t - avgstart * n)
            a = (1.0 - mu) * a + mu * w
            ab = (1.0 - mu) * ab + mu * b
            t += 1
    model = a if averaged else w
    model_b = ab if averaged else b
    return (np.append(model, model_b) if free else model), max_divisor


def _dense_sgdqn(X, y, C, epochs, t0, skip, bias=-1.0, restart_count=False):
    """SGD-QN step by step (module docstring), in file order; ``restart_count``: the step
    counter restarted each epoch, as sgd 2.0's old program."""
    D = _with_bias(_rows(X), bias, True)
    n, d = D.shape
    lam = 1.0 / (C * n)
    w = np.zeros(d)
    w_prev = np.zeros(d)
    B = np.full(d, 1.0 / (lam * t0))
    t = t_b = 0
    count, update_b = skip, False  # (both run on across epochs)
    for _ in range(epochs):
        if restart_count:
            count, update_b = skip, False
        for i in range(n):
            x = D[i]
            z = y[i] * (x @ w)
            slope = float(z < 1.0)
            t += 1
            if update_b:
                dslope = slope - float(y[i] * (x @ w_prev) < 1.0)
                if dslope != 0.0:
                    r = np.full(d, lam)
                    dw = w_prev - w
                    for j in np.flatnonzero(x):
                        ratio = lam + y[i] * dslope * x[j] / dw[j] if dw[j] != 0.0 else np.inf
                        r[j] = min(max(ratio, 0.1 * lam), 100 * lam)
                    B = 1.0 / (1.0 / B + (t - t_b) * r)
                    t_b = t
                update_b = False
            count -= 1
            if count <= 0:
                w_prev = w.copy()
                w = w - skip * lam * B * w
                update_b, count = True, skip
            if z < 1.0:
                w = w + y[i] * B * x
    return w


@pytest.mark.parametrize("bias, reg_bias", [(-1.0, True), (1.0, True), (1.0, False)])
@pytest.mark.parametrize("averaged", [False, True])
def test_steps_equal_the_dense_statement(bias, reg_bias, averaged):
    X, y = _problem(120, 12, seed=1)
    solve = solve_asgd if averaged else solve_svmsgd
    options = {"shuffle": False, "eta0": 0.5}
    if averaged:
        options["avgstart"] = 1.5  # averaging starts within epoch 2
    sol = solve(_sub(X, y, 1.0, 3, bias, reg_bias=reg_bias, **options))
    expected, _ = _dense_sgd(X, y, 1.0, 3, 0.5, bias, reg_bias, averaged, 1.5)
    np.testing.assert_allclose(sol.w, expected, rtol=1e-9, atol=1e-12)
    assert sol.primal == pytest.approx(_primal(X, y, 1.0, sol.w, bias, reg_bias), rel=1e-12)
    assert sol.stop_reason == MAX_ITER and not sol.converged and sol.n_iter == 3
    assert sol.figures["eta0"] == 0.5 and sol.figures["n_steps"] == 3 * 120


@pytest.mark.parametrize("averaged", [False, True])
def test_divisors_are_folded_exactly(averaged):
    """lambda eta0 near 1: the divisor passes RENORM_ABOVE (1e5) within the run."""
    X, y = _problem(40, 6, seed=2)
    C = 1.0 / (40 * 9.0)  # lambda = 9
    eta0 = 0.11  # lambda eta0 = 0.99
    options = {"avgstart": 1.0} if averaged else {}
    solve = solve_asgd if averaged else solve_svmsgd
    sol = solve(_sub(X, y, C, 60, shuffle=False, eta0=eta0, **options))
    expected, max_divisor = _dense_sgd(X, y, C, 60, eta0, averaged=averaged)
    if not averaged:
        assert max_divisor > 1e5  # the folding took place
    np.testing.assert_allclose(sol.w, expected, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("restart_count", [False, True])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_sgdqn_steps_equal_the_dense_statement(bias, restart_count):
    X, y = _problem(150, 10, seed=4)
    sol = solve_sgdqn(_sub(X, y, 1.0, 3, bias, shuffle=False, t0=100.0, skip=7,
                           restart_count=restart_count))  # fmt: skip
    expected = _dense_sgdqn(X, y, 1.0, 3, 100.0, 7, bias, restart_count)
    np.testing.assert_allclose(sol.w, expected, rtol=1e-9, atol=1e-12)
    assert sol.figures["t0"] == 100.0 and sol.figures["skip"] == 7


def test_sgdqn_default_skip_and_t0_search():
    X, y = _problem(200, 30, seed=5)
    sol = solve_sgdqn(_sub(X, y, 1.0, 2, shuffle=False))
    assert sol.figures["skip"] == int(16 * 200 * 31 / X.nnz)  # d counts index 0, as sgd's
    assert sol.figures["t0"] in QN_T0_CANDIDATES
    assert sol.figures["calibration_epochs"] == len(QN_T0_CANDIDATES) * 2
    # the chosen t0 has the lowest cost on the first tenth of the rows
    sample = np.arange(20)
    Xs, ys = X[sample], y[sample]
    skip_s = int(16 * 20 * 31 / Xs.nnz)
    costs = []
    for t0 in QN_T0_CANDIDATES:
        lam = 1.0 / 200  # the whole problem's
        w = _dense_sgdqn(Xs, ys, 1.0 / (lam * 20), 2, t0, skip_s)
        costs.append(np.mean(np.maximum(0, 1 - ys * (Xs @ w))) + 0.5 * lam * w @ w)
    assert sol.figures["t0"] == QN_T0_CANDIDATES[int(np.nanargmin(costs))]


def test_sgdqn_skip_counts_the_used_columns_of_a_wide_problem():
    """skip's d was the declared width: over 10^6 hashed-like columns of 25 used, skip
    exceeded an epoch's steps (the counter restarts each epoch) and w was never regularised.
    Where fewer than half the columns are used, d counts those: the same skip and model as the
    narrow problem, w zero elsewhere."""
    X, y = _problem(400, 25, seed=6)
    assert np.unique(X.indices).shape[0] == 25
    width = 10**6
    spread = np.sort(np.random.default_rng(0).choice(width, 25, replace=False))
    wide = sp.csr_matrix((X.data, spread[X.indices], X.indptr), shape=(400, width))
    narrow = linsvm.train(X, y, solver="sgd-qn", max_iter=20).results_[0]
    full = linsvm.train(wide, y, solver="sgd-qn", max_iter=20).results_[0]
    assert full.figures["skip"] == narrow.figures["skip"] < 400
    np.testing.assert_array_equal(full.w[spread], narrow.w)
    assert np.count_nonzero(full.w) == np.count_nonzero(narrow.w)


def test_sgdqn_counts_stored_zeros_as_no_data():
    # the same values with zeros stored in the CSR arrays: the same skip, the same model
    import linsvm

    X, y = _problem(60, 8, seed=5)
    stored = X.copy()
    stored.data[::3] = 0.0
    plain = stored.copy()
    plain.eliminate_zeros()
    a = linsvm.train(stored, y, solver="sgd-qn", seed=1).results_[0]
    b = linsvm.train(plain, y, solver="sgd-qn", seed=1).results_[0]
    assert a.figures["skip"] == b.figures["skip"] == int(16 * 60 * 9 / plain.nnz)
    np.testing.assert_array_equal(a.w, b.w)


@pytest.mark.parametrize("bias, reg_bias", [(-1.0, True), (1.0, False)])
def test_eta0_search_follows_sgds_rule(bias, reg_bias):
    X, y = _problem(1500, 20, seed=6)
    n = X.shape[0]
    sol = solve_svmsgd(_sub(X, y, 1.0, 1, bias, reg_bias=reg_bias, shuffle=False))
    sample = np.arange(min(SAMPLE_ROWS, n), dtype=np.int32)
    free = bias >= 0 and not reg_bias
    lam = 1.0 / n
    scratch = np.zeros(X.shape[1])

    def cost(eta):
        return _evaluate_eta(X.indptr, X.indices, X.data, -1.0, y, sample, eta, lam, free,
                             scratch, False)  # fmt: skip

    # sgd's rule: from 1 and 2, halve while halving helps (ending one past the best), else
    # double while doubling helps
    lo, hi = 1.0, 2.0
    if cost(lo) < cost(hi):
        while cost(lo) < cost(hi):
            hi, lo = lo, lo / 2
    else:
        while cost(hi) < cost(lo):
            lo, hi = hi, hi * 2
    assert sol.figures["eta0"] == lo
    assert _determine_eta0(X.indptr, X.indices, X.data, -1.0, y, sample, lam, free, scratch,
                           False)[0] == lo  # fmt: skip
    assert cost(1e6) == math.inf  # eta lambda >= 1: never chosen


def test_evaluate_eta_is_j_after_one_fixed_step_pass():
    X, y = _problem(300, 15, seed=7)
    sample = np.arange(300, dtype=np.int32)
    lam = 1.0 / 300
    eta = 0.3
    got = _evaluate_eta(X.indptr, X.indices, X.data, -1.0, y, sample, eta, lam, False,
                        np.zeros(15), False)  # fmt: skip
    D = X.toarray()
    w = np.zeros(15)
    for i in range(300):
        s = D[i] @ w
        w = w * (1 - eta * lam)
        if y[i] * s <= 1:
            w = w + eta * y[i] * D[i]
    expected = np.mean(np.maximum(0, 1 - y * (D @ w))) + 0.5 * lam * w @ w
    assert got == pytest.approx(expected, rel=1e-10)


# ----------------------------------------------------------------------------- accuracy


@pytest.mark.parametrize("k, bound", [(37, 3e-2), (38, 2e-2), (39, 7e-2)])
def test_reaches_the_optimum_on_a_generated_problem(k, bound):
    X, y = make_sparse_problem(3000, 200, seed=3)
    y = y.astype(np.float64)
    p_star = _optimum(X, y, "generated")
    sol = _SOLVE[k](_sub(X, y, 1.0, 50))
    assert p_star <= sol.primal <= p_star * (1 + bound)


@pytest.mark.parametrize("k, bound", [(37, 5e-2), (38, 8e-3), (39, 1.5e-2)])
def test_reaches_the_optimum_on_a9a(load_shared, k, bound):
    X, y = load_shared("a9a")
    y = np.asarray(y, dtype=np.float64)
    p_star = _optimum(X, y, "a9a")
    sol = _SOLVE[k](_sub(X, y, 1.0, 10))
    assert p_star <= sol.primal <= p_star * (1 + bound)


# ----------------------------------------------------------------------------- order, seeds, hooks


@pytest.mark.parametrize("k", [37, 38, 39])
def test_seeds_and_file_order(k):
    X, y = _problem(300, 20, seed=8)
    solve = _SOLVE[k]
    a = solve(_sub(X, y, 1.0, 3, seed=1))
    np.testing.assert_array_equal(a.w, solve(_sub(X, y, 1.0, 3, seed=1)).w)
    assert not np.array_equal(a.w, solve(_sub(X, y, 1.0, 3, seed=2)).w)
    # shuffle=False: the file order, whatever the seed; a permuted file gives another run
    f1 = solve(_sub(X, y, 1.0, 3, seed=1, shuffle=False))
    np.testing.assert_array_equal(f1.w, solve(_sub(X, y, 1.0, 3, seed=9, shuffle=False)).w)
    perm = np.random.default_rng(0).permutation(300)
    assert not np.array_equal(f1.w, solve(_sub(X[perm], y[perm], 1.0, 3, shuffle=False)).w)


class _Stop:
    """Records each Progress; stops after ``at`` epochs (keeping the state there)."""

    def __init__(self, at=None, every=True):
        self.at, self.iterations, self.state = at, [], None
        self.every_iteration = every

    def __call__(self, progress):
        self.iterations.append(progress.iteration)
        assert math.isnan(progress.measure)
        assert progress.figures["n_steps"] == progress.iteration * 150
        if progress.iteration == self.at:
            self.state = progress.state()
            return False
        return True


@pytest.mark.parametrize("k", [37, 38, 39])
def test_hooks_interrupt_and_resume_exactly(k):
    X, y = _problem(150, 12, seed=9)
    bias, reg = 1.0, k == 39  # svmsgd/ASGD with sgd's free bias, SGD-QN with the feature
    solve = _SOLVE[k]
    full = solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg))
    every = _Stop()
    np.testing.assert_array_equal(solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg), every).w, full.w)
    assert every.iterations == [1, 2, 3, 4, 5]
    batched = _Stop(every=False)
    np.testing.assert_array_equal(solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg), batched).w, full.w)
    stop = _Stop(at=2)
    part = solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg), stop)
    assert part.stop_reason == INTERRUPTED and part.n_iter == 2
    assert part.primal == pytest.approx(_primal(X, y, 1.0, part.w, bias, reg), rel=1e-12)
    resumed = solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg, resume=stop.state))
    np.testing.assert_array_equal(resumed.w, full.w)
    assert resumed.primal == full.primal and resumed.n_iter == 5
    damaged = dict(stop.state)
    damaged.pop("rng")
    with pytest.raises(InvalidInputError):
        solve(_sub(X, y, 1.0, 5, bias, reg_bias=reg, resume=damaged))


def _bad_calls(X, y):
    n = y.shape[0]
    return [
        lambda: solve_svmsgd(_sub(X, y, 0.0)),
        lambda: solve_svmsgd(Subproblem(X, y, np.linspace(0.5, 1.5, n), 0.01, 5)),
        lambda: solve_svmsgd(_sub(X, y * 2)),
        lambda: solve_svmsgd(_sub(X, y, max_iter=0)),
        lambda: solve_svmsgd(_sub(X, y, shuffle="yes")),
        lambda: solve_svmsgd(_sub(X, y, eta0=-1.0)),
        lambda: solve_svmsgd(_sub(X, y, eta0=math.nan)),
        lambda: solve_svmsgd(_sub(X, y, C=1e-4, eta0=1.0)),  # lambda eta0 >= 1
        lambda: solve_svmsgd(_sub(X, y, avgstart=1.0)),
        lambda: solve_svmsgd(_sub(X, y, reg_bias=False)),  # no bias to leave unregularised
        lambda: solve_asgd(_sub(X, y, avgstart=-1.0)),
        lambda: solve_asgd(_sub(X, y, avgstart="1")),
        lambda: solve_sgdqn(_sub(X, y, t0=0.0)),
        lambda: solve_sgdqn(_sub(X, y, skip=0)),
        lambda: solve_sgdqn(_sub(X, y, skip=2.5)),
        lambda: solve_sgdqn(_sub(X, y, bias=1.0, reg_bias=False)),
        lambda: solve_sgdqn(Subproblem(X, y, np.ones(n), 0.01, 5, w0=np.zeros(X.shape[1]))),
        lambda: solve_asgd(_sub(X[:0], y[:0])),
        lambda: solve_asgd(_sub(X, y), hook=3),
    ]


@pytest.mark.parametrize("k", range(len(_bad_calls(sp.csr_matrix((3, 2)), np.ones(3)))))
def test_bad_input_raises_one_line_error(k):
    X, y = _problem(20, 5, seed=10)
    with pytest.raises(InvalidInputError) as info:
        _bad_calls(X, y)[k]()
    assert "\n" not in str(info.value) and str(info.value)


# ----------------------------------------------------------------------------- API, CLI


@pytest.mark.parametrize("solver", ["svmsgd", "asgd", "sgd-qn", 37])
def test_train_and_predict(solver):
    X, y = _problem(400, 20, seed=11)
    model = linsvm.train(X, y, solver=solver, C=1.0, bias=1.0)
    assert np.mean(model.predict(X) == y) > 0.85
    if solver != "sgd-qn":
        free = linsvm.train(X, y, solver=solver, C=1.0, bias=1.0, regularize_bias=False)
        assert np.mean(free.predict(X) == y) > 0.85


def test_cli_train_writes_a_model(tmp_path):
    X, y = _problem(300, 20, seed=12)
    data = originals.write_svmlight(X, y, tmp_path / "train.txt")
    model_file = tmp_path / "m"
    assert cli.main(["train", "-s", "sgd-qn", "-c", "2", str(data), str(model_file)]) == 0
    text = model_file.read_text()
    assert "L2R_L1LOSS_SVC_DUAL" in text or "solver_type" in text
    model = linsvm.load_model(model_file)
    assert np.mean(model.predict(X) == y) > 0.85
    assert cli.main(["train", "-s", "svmsgd", "-B", "1", "-R", str(data), str(model_file)]) == 0


# ----------------------------------------------------------------------------- oracles


_ORACLE_DATA: dict[str, tuple] = {}


def _shuffled_file(tmp_path_factory, load_shared, dataset: str):
    """(X, y, path): the data set in a fixed shuffled order, written once for all programs."""
    if dataset not in _ORACLE_DATA:
        if dataset == "a9a":
            X, y = load_shared("a9a")
            y = np.asarray(y, dtype=np.float64)
        else:
            X, y = make_sparse_problem(4000, 300, seed=13)
            y = y.astype(np.float64)
        perm = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[perm], y[perm]
        path = tmp_path_factory.mktemp("bottou") / f"{dataset}.txt"
        _ORACLE_DATA[dataset] = (X, y, originals.write_svmlight(X, y, path))
    return _ORACLE_DATA[dataset]


@pytest.mark.parametrize(
    "k, program, bias",
    [(37, "svmsgd-nobias", False), (37, "svmsgd", True), (38, "svmasgd-nobias", False),
     (38, "svmasgd", True), (39, "svmsgdqn", False)],
)  # fmt: skip
@pytest.mark.parametrize("dataset", ["generated", "a9a"])
def test_same_primal_as_sgd_2_0(tmp_path_factory, load_shared, k, program, bias, dataset):
    if originals.program(program) is None:
        pytest.skip(f"{program} not built (scripts/oracles/bottou_sgd.sh SRC)")
    X, y, path = _shuffled_file(tmp_path_factory, load_shared, dataset)
    lam = originals.lambda_of(1.0, X.shape[0])
    # (SGD-QN as the old program: its step counter restarted each epoch)
    options = {"restart_count": True} if k == 39 else {}
    if k == 39:
        ref = originals.run_svmsgdqn(path, lam, 10)
    else:
        ref = originals.run_svmsgd(path, lam, 10, bias=bias, averaged=k == 38)
    ours = _SOLVE[k](_sub(X, y, 1.0, 10, 1.0 if bias else -1.0, reg_bias=not bias,
                          shuffle=False, **options))  # fmt: skip
    assert ours.primal == pytest.approx(ref["primal"], rel=1e-2)
    if k == 39:
        assert ours.figures["t0"] == ref["t0"]
    else:
        assert ours.figures["eta0"] == ref["eta0"]


@pytest.mark.parametrize("solve", [solve_svmsgd, solve_asgd])
def test_a_small_C_l_trains(solve):
    """C l <= 1 (lambda >= 1): every eta >= 1 is refused by the cost (+inf), and the search
    starts below 1/lambda instead of stopping at 1 (which refused a valid C)."""
    X, y = _problem(270, 13, seed=2)
    C = 0.003  # C l = 0.81
    sol = solve(_sub(X, y, C, 3, -1.0, shuffle=False))
    lam = 1.0 / (C * X.shape[0])
    assert 0.0 < sol.figures["eta0"] * lam < 1.0
    assert np.isfinite(sol.w).all()


def test_sgdqn_regularises_where_skip_exceeds_the_rows():
    """The step counter runs on across epochs: with skip above the rows (wide sparse data,
    few rows: news20's skip is 48k over 20k rows), the old program's counter, restarted each
    epoch, never reached 0 and never applied the regulariser."""
    X, y = _problem(40, 8, seed=3)
    p_star = _optimum(X, y, "skip-above-rows")
    skip = X.shape[0] + 5
    on = solve_sgdqn(_sub(X, y, 1.0, 200, shuffle=False, t0=10.0, skip=skip))
    restarted = solve_sgdqn(_sub(X, y, 1.0, 200, shuffle=False, t0=10.0, skip=skip,
                                 restart_count=True))  # fmt: skip
    assert (on.primal - p_star) / p_star < 0.02
    assert (restarted.primal - p_star) / p_star > 0.05  # (what the old program gives)


def test_sgdqn_resumes_a_state_saved_before_its_counter_ran_on():
    """States saved when the counter restarted each epoch hold [epochs, skip]: at that
    epoch's end the counter stands at skip with update_B false, which is what they resume
    from (they were refused as damaged). With restart_count, the old run's very model."""
    X, y = _problem(150, 12, seed=9)
    options = dict(shuffle=False, t0=100.0, skip=7, restart_count=True)
    full = solve_sgdqn(_sub(X, y, 1.0, 5, **options))
    stop = _Stop(at=2)
    solve_sgdqn(_sub(X, y, 1.0, 5, **options), stop)
    old = dict(stop.state)
    old["istate"] = np.asarray(old["istate"])[:2].copy()  # [epochs, skip]
    resumed = solve_sgdqn(_sub(X, y, 1.0, 5, resume=old, **options))
    np.testing.assert_array_equal(resumed.w, full.w)
