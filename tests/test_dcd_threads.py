"""The rounds, the deterministic threaded dual coordinate descent (-s 1, -s 3; the SVR's -s 12,
-s 13; ``thread_scheme="rounds"``): the serial optimum at any thread count, the same bits as
its simulator, a dual that never rises, exact w, determinism, resumption.

Real threads run oversubscribed here (up to 64 on a small machine): the scheme's correctness
does not depend on timing, and this is where a timing bug would show.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.datasets import make_text_classification
from linsvm.errors import InvalidInputError
from linsvm.objective import primal_from_dual, svm_dual_value, svr_dual_value
from linsvm.solvers import SOLVERS, Subproblem, _dual_threads
from linsvm.solvers._dual import drop_shrunk
from linsvm.solvers._dual_threads import threads_line
from linsvm.solvers.dcd_threads import _drop_shrunk_on_threads, simulate

THREADS = (2, 4, 16, 64)


def _text_with_hot_column(n_rows: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Generated text plus a column most rows share (a common word, strong in every row): a
    feature the rounds must take in sequence, as they take the bias."""
    X, y = make_text_classification(n_rows, random_state=seed)
    rng = np.random.default_rng(seed)
    common = (rng.random(n_rows) < 0.8) * 0.7
    X = sp.hstack([X, sp.csr_matrix(common[:, None])], format="csr")
    X.sort_indices()
    return X, np.where(y == np.unique(y)[-1], 1.0, -1.0)


@pytest.fixture(scope="module")
def problem():
    return _text_with_hot_column(1500, seed=3)


ROUNDS = {"thread_scheme": "rounds"}


def _sub(X, y, bias: float, eps: float = 1e-6, options=None, **kw) -> Subproblem:
    return Subproblem(X, y, np.ones(X.shape[0]), eps=eps, max_iter=2000, bias=bias,
                      options={**ROUNDS, **(options or {})}, **kw)  # fmt: skip


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_serial_optimum_at_every_thread_count(problem, solver, bias):
    X, y = problem
    serial = SOLVERS[solver].solve(_sub(X, y, bias), None)
    for T in THREADS:
        threaded = SOLVERS[solver].solve(
            _sub(X, y, bias, n_threads=T, options={"thread_min_nnz": 1}), None
        )
        assert threaded.figures["n_threads"] == T
        assert threaded.converged
        assert abs(threaded.primal - serial.primal) <= 1e-6 * serial.primal
        assert threaded.gap >= -1e-9 * abs(threaded.primal)
        w_exact = primal_from_dual(
            X.indptr, X.indices, X.data, bias, y, threaded.alpha, threaded.w.shape[0]
        )
        assert np.max(np.abs(threaded.w - w_exact)) <= 1e-10 * np.max(np.abs(w_exact))
        if bias >= 0:
            assert threaded.figures["hot_features"] >= 1  # the common column


@pytest.mark.parametrize("T", THREADS)
def test_threads_give_the_simulators_bits(problem, T):
    X, y = problem
    sub = _sub(X, y, 1.0, eps=1e-3)
    simulated = SOLVERS[1].solve(sub.but(options={**ROUNDS, "simulate_threads": T}), None)
    threads = {**ROUNDS, "thread_min_nnz": 1}
    threaded = SOLVERS[1].solve(sub.but(n_threads=T, options=threads), None)
    again = SOLVERS[1].solve(sub.but(n_threads=T, options=threads), None)
    assert np.array_equal(simulated.w, threaded.w)
    assert np.array_equal(simulated.alpha, threaded.alpha)
    assert simulated.n_iter == threaded.n_iter
    assert np.array_equal(threaded.w, again.w)  # the same run every time


def test_threads_taken_off_their_cores_hand_over_to_one_thread(problem):
    """When the threads are found off their cores (forced here: on_core_min above 1), the next
    outer iterations run on one thread, with the same bits as the threads would have made."""
    X, y = problem
    sub = _sub(X, y, 1.0, eps=1e-4)
    threaded = SOLVERS[1].solve(sub.but(n_threads=2, options={**ROUNDS, "thread_min_nnz": 1}), None)
    handed = SOLVERS[1].solve(
        sub.but(n_threads=2, options={**ROUNDS, "thread_min_nnz": 1,
                                      "thread_options": {"on_core_min": 2.0}}), None
    )  # fmt: skip
    assert handed.n_iter >= 3
    assert handed.figures["spells_on_one_thread"] >= 1
    # the summary says how many of its outer iterations ran on one thread
    on_one = handed.figures["epochs_on_one_thread"]
    assert 1 <= on_one < handed.n_iter
    assert threads_line(handed.figures).endswith(
        f", {on_one} outer iterations on one thread (the threads were found off their cores)"
    )
    # (the run above may have spells of its own on a busy machine: none, none said)
    assert "one thread" not in threads_line({**handed.figures, "epochs_on_one_thread": 0})
    assert np.array_equal(handed.w, threaded.w)
    assert np.array_equal(handed.alpha, threaded.alpha)
    assert handed.n_iter == threaded.n_iter


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("round_rows", [256, 4096])
def test_every_round_lowers_the_dual(problem, solver, round_rows):
    """Each merge's change of the dual f (computed from the merge's own sums) is never
    positive, and the changes add up to the dual's actual change (so they are the real
    ones). Rounds of every row, no hot feature in sequence: the line search must shorten
    some rounds."""
    X, y = problem
    bias = -1.0 if round_rows > X.shape[0] else 1.0
    T = 8
    sol = simulate(X, y, T, solver=solver, bias=bias, eps=1e-5, max_iter=60,
                   round_rows=round_rows, max_hot=0 if bias < 0 else 64,
                   keep_round_changes=10**6)  # fmt: skip
    changes = sol.figures["round_changes"]
    assert changes.shape[0] == sol.figures["rounds"] > 0
    scale = np.abs(changes).max()
    assert np.all(changes <= 1e-12 * scale)
    C = np.ones(X.shape[0])
    loss = 1 if solver == 1 else 0
    f_end = -svm_dual_value(X.indptr, X.indices, X.data, bias, y, C, sol.alpha, loss,
                            sol.w.shape[0])  # fmt: skip
    assert abs(changes.sum() - f_end) <= 1e-8 * abs(f_end)  # f(0) = 0
    if round_rows == 4096:
        assert sol.figures["shortened_rounds"] > 0


def test_one_thread_is_the_serial_solver(problem):
    X, y = problem
    serial = linsvm.train(X, y, solver=1, bias=1, eps=1e-4)
    # below the threshold of non-zeros a thread: the serial solver, bit for bit
    threaded = linsvm.train(X, y, solver=1, bias=1, eps=1e-4, n_jobs=2, thread_scheme="rounds")
    assert "n_threads" not in threaded.results_[0].figures
    assert np.array_equal(serial.coef_, threaded.coef_)


def test_train_uses_threads_for_a_binary_problem(problem, monkeypatch):
    X, y = problem
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)
    model = linsvm.train(X, y, solver=3, bias=1, eps=1e-4, n_jobs=4, thread_scheme="rounds")
    result = model.results_[0]
    assert result.figures["n_threads"] == 4
    serial = linsvm.train(X, y, solver=3, bias=1, eps=1e-6, max_iter=3000)
    tight = linsvm.train(
        X, y, solver=3, bias=1, eps=1e-6, max_iter=3000, n_jobs=4, thread_scheme="rounds"
    ).results_[0]
    assert abs(tight.primal - serial.results_[0].primal) <= 1e-6 * tight.primal
    # one-vs-rest: the threads go to the sub-problems first (never more busy than n_jobs)
    y3 = np.where(np.arange(X.shape[0]) % 3 == 0, 2.0, y)
    multi = linsvm.train(X, y3, solver=1, eps=1e-3, n_jobs=4, thread_scheme="rounds")
    assert all("n_threads" not in r.figures for r in multi.results_)
    pairs = linsvm.train(X, y3, solver=1, eps=1e-3, n_jobs=6, thread_scheme="rounds")
    assert all(r.figures["n_threads"] == 2 for r in pairs.results_)


def test_resumed_threaded_solve_is_the_uninterrupted_one(problem):
    X, y = problem
    sub = _sub(X, y, 1.0, eps=1e-5, n_threads=4, options={"thread_min_nnz": 1})
    whole = SOLVERS[1].solve(sub, None)
    saved = {}

    def stop_after_five(progress):
        if progress.iteration == 5:
            saved["state"] = progress.state()
            return False
        return True

    stop_after_five.every_iteration = True
    stopped = SOLVERS[1].solve(sub, stop_after_five)
    assert stopped.stop_reason == "interrupted"
    resumed = SOLVERS[1].solve(sub.but(resume=saved["state"]), None)
    assert np.array_equal(resumed.w, whole.w)
    assert resumed.n_iter == whole.n_iter


def test_simulator_errors(problem):
    X, y = problem
    with pytest.raises(InvalidInputError, match="-s 1, 3, 12 and 13"):
        simulate(X, y, 4, solver=2)
    with pytest.raises(InvalidInputError, match="regression targets must be numbers"):
        simulate(X, np.where(y > 0, "a", "b"), 4, solver=12)
    with pytest.raises(InvalidInputError, match="binary"):
        simulate(X, np.arange(X.shape[0]) % 3, 4)
    with pytest.raises(InvalidInputError, match="simulate_threads"):
        SOLVERS[1].solve(_sub(X, y, -1.0, options={"simulate_threads": 0}), None)


def test_empty_rows_and_a_row_of_everything():
    """Rows with no entries (only the bias, or nothing) and one row with every feature: the
    owners' ranges, the chunks and the merge still give the serial optimum."""
    X, y = make_text_classification(600, random_state=5)
    X = X.tolil()
    X[:20] = 0.0
    X[20] = 0.01
    X = X.tocsr()
    X.sort_indices()
    y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    for bias in (-1.0, 1.0):
        for solver in (1, 3):
            serial = SOLVERS[solver].solve(_sub(X, y, bias), None)
            for T in (3, 16):
                sim = SOLVERS[solver].solve(_sub(X, y, bias, options={"simulate_threads": T}), None)
                assert abs(sim.primal - serial.primal) <= 1e-6 * serial.primal


@pytest.mark.parametrize("solver", [1, 3])
def test_real_text_with_a_bias(load_shared, solver):
    """reuters (8k rows of news text, skewed classes) with LIBLINEAR's bias: 16 threads,
    simulated, reach the serial optimum."""
    X, y = load_shared("reuters.trn")
    y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    serial = SOLVERS[solver].solve(_sub(X, y, 1.0), None)
    threaded = SOLVERS[solver].solve(_sub(X, y, 1.0, options={"simulate_threads": 16}), None)
    assert threaded.converged
    assert abs(threaded.primal - serial.primal) <= 1e-6 * serial.primal
    assert threaded.gap >= -1e-9 * threaded.primal


# ----------------------------------------------------------------------------- the SVR dual


@pytest.fixture(scope="module")
def regression():
    """Real targets over the text with a common column: a linear signal plus noise."""
    X, _ = _text_with_hot_column(1500, seed=7)
    rng = np.random.default_rng(7)
    y = np.asarray(X @ rng.normal(size=X.shape[1])).ravel() + 0.1 * rng.normal(size=X.shape[0])
    return X, y


@pytest.mark.parametrize("solver", [12, 13])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_svr_serial_optimum_at_every_thread_count(regression, solver, bias):
    X, y = regression
    serial = SOLVERS[solver].solve(_sub(X, y, bias), None)
    for T in THREADS:
        sub = _sub(X, y, bias, n_threads=T, options={"thread_min_nnz": 1})
        if T == 64 and solver == 13 and bias >= 0:
            # -s 13 with the bias takes about 2,000 rounds of a few barriers each, which 64
            # threads on a busy 2-core machine pass slowly (40 s; 7 s on an idle one). The
            # simulator checks the 64-thread arithmetic (it gives real threads' bits, as the
            # other cases show); the other cases check 64 real threads meeting at barriers.
            simulated = SOLVERS[solver].solve(
                sub.but(n_threads=1, options={**ROUNDS, "simulate_threads": T}), None
            )
            assert simulated.converged
            assert abs(simulated.primal - serial.primal) <= 1e-6 * serial.primal
            continue
        threaded = SOLVERS[solver].solve(sub, None)
        assert threaded.figures["n_threads"] == T
        assert threaded.converged
        assert abs(threaded.primal - serial.primal) <= 1e-6 * serial.primal
        assert threaded.gap >= -1e-9 * abs(threaded.primal)
        ones = np.ones(X.shape[0])
        w_exact = primal_from_dual(
            X.indptr, X.indices, X.data, bias, ones, threaded.alpha, threaded.w.shape[0]
        )
        assert np.max(np.abs(threaded.w - w_exact)) <= 1e-10 * np.max(np.abs(w_exact))
        if solver == 13:
            assert np.all(np.abs(threaded.alpha) <= 1.0)
        if T not in (2, 64):
            continue
        simulated = SOLVERS[solver].solve(
            sub.but(n_threads=1, options={**ROUNDS, "simulate_threads": T}), None
        )
        assert np.array_equal(simulated.w, threaded.w)
        assert simulated.n_iter == threaded.n_iter


@pytest.mark.parametrize("solver", [12, 13])
@pytest.mark.parametrize("round_rows", [256, 4096])
def test_svr_every_round_lowers_the_dual(regression, solver, round_rows):
    """As for the SVM: each merged round's change of the dual (with the |beta| terms) is never
    positive and the changes add up to the dual's; rounds of every row make the line search
    shorten some, and the shortened ones lower the dual too."""
    X, y = regression
    bias = -1.0 if round_rows > X.shape[0] else 1.0
    sol = simulate(X, y, 8, solver=solver, bias=bias, eps=1e-5, max_iter=80,
                   round_rows=round_rows, max_hot=0 if bias < 0 else 64,
                   keep_round_changes=10**6)  # fmt: skip
    changes = sol.figures["round_changes"]
    assert changes.shape[0] == sol.figures["rounds"] > 0
    assert np.all(changes <= 1e-12 * np.abs(changes).max())
    C = np.ones(X.shape[0])
    loss = 1 if solver == 12 else 0
    f_end = -svr_dual_value(X, bias, y, C, sol.alpha, loss, 0.1)
    assert abs(changes.sum() - f_end) <= 1e-8 * abs(f_end)  # f(0) = 0
    if round_rows == 4096:
        assert sol.figures["shortened_rounds"] > 0


def test_train_gives_threads_to_the_svr(regression, monkeypatch):
    X, y = regression
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)
    model = linsvm.train(X, y, solver=12, eps=1e-4, n_jobs=4, thread_scheme="rounds")
    assert model.results_[0].figures["n_threads"] == 4
    again = linsvm.train(X, y, solver=12, eps=1e-4, n_jobs=4, thread_scheme="rounds")
    assert np.array_equal(model.coef_, again.coef_)  # the same model every run
    warm = linsvm.train(
        X, y, solver=13, eps=1e-4, n_jobs=4, warm_start=model, thread_scheme="rounds"
    )
    assert warm.results_[0].figures["n_threads"] == 4
    assert warm.results_[0].gap >= 0.0


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=200),
    st.integers(1, 9),
)
# (the first ranges dropping all their rows, or none, while the last keep theirs)
@example([(True, True)] * 6 + [(True, False)] * 6, 2)
@example([(True, False)] * 5 + [(False, False)] * 3 + [(True, True)] * 5, 3)
def test_threads_drop_the_shrunk_rows_as_the_serial_drop(rows, n_threads):
    """n_threads real threads (oversubscribed here) drop the shrunk rows of their ranges of
    the active set and join them: the active set and the cleared marks of
    ``_dual.drop_shrunk``, in order, with more threads than rows and ranges that keep nothing
    or everything."""
    active = np.array([i for i, (is_active, _) in enumerate(rows) if is_active], dtype=np.int32)
    removed = np.array([is_active and shrunk for is_active, shrunk in rows], dtype=np.uint8)
    n_active = active.shape[0]
    serial_active, serial_removed = active.copy(), removed.copy()
    n_serial = drop_shrunk(serial_active, n_active, serial_removed)
    kept = np.zeros((n_threads, 8))
    scratch = np.full(max(n_active, 1), -1, dtype=np.int32)
    sync = np.zeros(64, dtype=np.int64)  # (no spinning: the threads yield while they wait)
    with ThreadPoolExecutor(n_threads) as pool:
        counts = list(pool.map(lambda t: _drop_shrunk_on_threads(
            t, n_threads, active, n_active, removed, kept[:, 4], scratch, sync),
            range(n_threads)))  # fmt: skip
    assert counts == [n_serial] * n_threads
    assert np.array_equal(active[:n_serial], serial_active[:n_serial])
    assert not removed.any()
