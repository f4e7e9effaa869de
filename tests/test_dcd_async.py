"""The asynchronous threaded dual coordinate descent (``solvers.dcd_async``; -s 1, 3, 12, 13),
its shared w (``thread_scheme="async"``) and its replicas (``"replicas"``): the serial optimum
at any thread count, w exact from the dual variables, the guard that undoes an outer
iteration raising the dual, the measured choice between the threads and one thread, the
simulator and the real kernel holding each other to the same bits, and the ways in (train,
the CLI).

Real threads run oversubscribed here (up to 64 on a small machine): a timing bug would show.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import cli, objective, parallel
from linsvm.datasets import make_text_classification
from linsvm.errors import InvalidInputError
from linsvm.objective import (
    LOSS_HINGE,
    LOSS_SQUARED_HINGE,
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    primal_from_dual,
    svm_objectives,
    svr_objectives,
)
from linsvm.solvers import SOLVERS, Subproblem, _dual_threads, dcd_async
from linsvm.solvers._dual import active_set, order_buffers
from linsvm.solvers._dual_threads import (
    PROBE_EVERY,
    TRUST_SPEEDUP,
    ThreadSchedule,
    threads_line,
)
from linsvm.solvers._random import new_state
from linsvm.solvers.dcd import _prepare, prepare_records
from linsvm.solvers.svr import prepare_svr_records

THREADS = (2, 4, 16, 64)
# the async scheme on its threads whatever they measure (the schedule is tested on its own)
ASYNC = {"thread_scheme": "async", "thread_min_nnz": 1, "thread_choice": "threads"}


def _text_with_hot_column(n_rows: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Generated text plus a column most rows share (a common word, strong in every row): a
    hot feature, kept in the threads' views."""
    X, y = make_text_classification(n_rows, random_state=seed)
    rng = np.random.default_rng(seed)
    common = (rng.random(n_rows) < 0.8) * 0.7
    X = sp.hstack([X, sp.csr_matrix(common[:, None])], format="csr")
    X.sort_indices()
    return X, np.where(y == np.unique(y)[-1], 1.0, -1.0)


@pytest.fixture(scope="module")
def problem():
    return _text_with_hot_column(1500, seed=3)


@pytest.fixture(scope="module")
def regression():
    X, y = _text_with_hot_column(1200, seed=5)
    targets = X @ np.random.default_rng(5).standard_normal(X.shape[1]) + 0.1 * y
    return X, targets


def _sub(X, y, bias: float, eps: float = 1e-6, options=None, **kw) -> Subproblem:
    return Subproblem(X, y, np.ones(X.shape[0]), eps=eps, max_iter=3000, bias=bias,
                      options={**ASYNC, **(options or {})}, **kw)  # fmt: skip


def _check_exact(X, y, bias, sol, regression=False):
    coef = sol.alpha if regression else y * sol.alpha
    w_exact = primal_from_dual(X.indptr, X.indices, X.data, bias, np.ones_like(coef), coef,
                               sol.w.shape[0])  # fmt: skip
    assert np.max(np.abs(sol.w - w_exact)) <= 1e-10 * max(np.max(np.abs(w_exact)), 1.0)


@pytest.mark.parametrize("scheme", ["async", "replicas"])
@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_serial_optimum_at_every_thread_count(problem, solver, bias, scheme):
    X, y = problem
    serial = SOLVERS[solver].solve(_sub(X, y, bias), None)
    for T in THREADS:
        threaded = SOLVERS[solver].solve(
            _sub(X, y, bias, n_threads=T, options={"thread_scheme": scheme}), None
        )
        fig = threaded.figures
        assert fig["n_threads"] == T and fig["thread_scheme"] == scheme
        # the common column in the shared w's views; the replicas keep none
        assert fig["hot_features"] >= 1 if scheme == "async" else fig["hot_features"] == 0
        assert threaded.converged
        assert abs(threaded.dual - serial.dual) <= 1e-6 * abs(serial.dual)
        assert abs(threaded.primal - serial.primal) <= 1e-6 * serial.primal
        assert threaded.gap >= -1e-9 * abs(threaded.primal)
        _check_exact(X, y, bias, threaded)


@pytest.mark.parametrize("scheme", ["async", "replicas"])
@pytest.mark.parametrize("solver", [12, 13])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_svr_serial_optimum_at_every_thread_count(regression, solver, bias, scheme):
    X, y = regression
    serial = SOLVERS[solver].solve(_sub(X, y, bias, options={"p": 0.1}), None)
    for T in THREADS:
        threaded = SOLVERS[solver].solve(
            _sub(X, y, bias, n_threads=T, options={"p": 0.1, "thread_scheme": scheme}), None
        )
        assert threaded.figures["n_threads"] == T
        assert threaded.figures["thread_scheme"] == scheme
        assert threaded.converged
        assert abs(threaded.dual - serial.dual) <= 1e-6 * abs(serial.dual)
        assert threaded.gap >= -1e-9 * abs(threaded.primal)
        _check_exact(X, y, bias, threaded, regression=True)
        if solver == 13:
            assert np.all(np.abs(threaded.alpha) <= 1.0 + 1e-12)


def _state(X, y, bias, max_hot=8, n_threads=2, simulate=True):
    """The arrays of an async solve of -s 1 at alpha = 0 and its AsyncThreads (T = 2 views)."""
    n_rows = X.shape[0]
    n_weights = X.shape[1] + (bias >= 0)
    rec = np.empty((n_rows, 4))
    w = np.zeros(n_weights)
    trainable = _prepare(
        X.indptr, X.indices, X.data, bias, y, np.ones(n_rows), LOSS_SQUARED_HINGE,
        np.zeros(n_rows), True, w, rec, np.int32, None, np.zeros(0, np.int64), np.zeros(0), 1.0,
    )  # fmt: skip
    active, removed = active_set(trainable, n_rows)
    fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
    istate = np.array([trainable.shape[0], 0, 0], dtype=np.int64)
    order, bucket_order = order_buffers(n_rows, 4, np.int32)
    threads = dcd_async.AsyncThreads(
        X, bias, LOSS_SQUARED_HINGE, rec, w, active, trainable, fstate, istate, new_state(7),
        0.0, True, 4, 2, True, removed, order, bucket_order, n_threads, simulate=simulate,
        max_hot=max_hot, hot_min_share=0.05, flush_rows=8,
    )  # fmt: skip
    threads._load()
    return threads


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_one_thread_gives_the_simulators_bits(problem, bias):
    # The real kernel (its steps written out in the row loop, adds atomic) on one thread and
    # the simulator of one thread (its steps as functions, adds plain): the same arithmetic.
    X, y = problem
    real, simulated = _state(X, y, bias), _state(X, y, bias)
    assert real.n_hot >= 1
    sync = np.zeros(dcd_async._SYNC_SIZE, dtype=np.int64)
    no_ladder = (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0))
    dcd_async.run_threads(0, 1, 3, *real.shared, *no_ladder, sync)
    dcd_async.run_simulated(1, 3, *simulated.shared, *no_ladder, np.zeros_like(sync))
    assert real._istate[1] == simulated._istate[1] == 3
    assert np.array_equal(real._rec, simulated._rec)
    assert np.array_equal(real.guard, simulated.guard)

    def weights_and_view(t):  # (each array's views start where its memory is aligned)
        start = t._view_start
        return t._wx[: t.w.shape[0]], t._wx[start : start + t.hot_weight.shape[0]]

    for a, b in zip(weights_and_view(real), weights_and_view(simulated), strict=True):
        assert np.array_equal(a, b)


def test_the_simulator_is_deterministic_and_reaches_the_optimum(problem):
    X, y = problem
    serial = SOLVERS[3].solve(_sub(X, y, -1.0), None)
    runs = [SOLVERS[3].solve(_sub(X, y, -1.0, options={"simulate_threads": 16}), None)
            for _ in range(2)]  # fmt: skip
    assert np.array_equal(runs[0].w, runs[1].w)
    assert runs[0].figures["flush_rows_start"] == dcd_async.STALE_ROWS // 16
    assert abs(runs[0].dual - serial.dual) <= 1e-6 * abs(serial.dual)


def _dual_recorder():
    """(the dual objective after every outer iteration, the hook that records it)"""
    duals = []

    def record(progress):
        duals.append(progress.objectives()[1])
        return True

    record.every_iteration = True
    return duals, record


def test_guard_undoes_every_rise_of_the_dual(problem):
    # 64 threads in lockstep, each missing the others' changes of the bias and of the common
    # column (in views flushed every 64 rows): outer iterations that raise the dual, which the
    # guard must undo, halving the delay, down to one thread if need be.
    X, y = problem
    duals, record = _dual_recorder()
    serial = SOLVERS[1].solve(_sub(X, y, 1.0), None)
    sol = SOLVERS[1].solve(
        _sub(X, y, 1.0, options={"simulate_threads": 64,
                                 "thread_options": {"flush_rows": 64}}), record
    )  # fmt: skip
    fig = sol.figures
    assert fig["undone_epochs"] >= 1
    # (with a bias the first rise has the bias weight flushed after every row)
    assert fig["bias_each_row"]
    assert fig["flush_rows"] < 64 or fig["threads_allowed"] < 64 or fig["handed_to_one_thread"]
    # the dual objective -f never falls (f never rises), and the optimum is the serial one
    assert np.all(np.diff(duals) >= -1e-9 * np.abs(duals[1:]))
    assert abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)


@pytest.mark.parametrize("shared_bias", [False, True])
def test_guard_steps_after_each_rise(shared_bias):
    # An outer iteration of 16 threads that raised f, again and again: each is undone (alpha
    # and w put back) and the next made safer, in the guard's order: the flushes halved down
    # to one row, half the threads down to two, one thread; the shared w with a bias: the
    # bias weight flushed after every row, then half the threads, then the flushes.
    n_rows, n_weights = 3, 2
    rec = np.zeros((n_rows, 4))
    wx = np.zeros(n_weights)
    kept = np.concatenate([np.full(n_rows, 0.25), [1.0, 2.0]])  # (alpha, then w)
    active, removed = np.arange(n_rows, dtype=np.int32), np.zeros(n_rows, dtype=np.int8)
    control = np.array([32, 0, 0, 4, 16, 0], dtype=np.int64)
    guard = np.array([0.0, -1.0, 0.0, 0.0])  # (f was -1; 1/2 w'w + terms is 0 now: a rise)
    acc = np.zeros((16, dcd_async._LINE))
    steps = []
    n_threads = 16
    for _ in range(16):
        rec[:, 0] = 0.5
        wx[:] = 3.0
        removed[:] = 1
        done = dcd_async._end_epoch(
            active, np.array([n_rows, 0, 0]), np.zeros(4), removed, active, acc, 0.1, False,
            guard, control, rec, wx, n_weights, kept, n_rows, n_threads, shared_bias,
        )  # fmt: skip
        assert np.all(rec[:, 0] == 0.25) and wx.tolist() == [1.0, 2.0] and not removed.any()
        n_threads = int(control[dcd_async._C_THREADS])
        steps.append((done, int(control[dcd_async._C_BIAS_EACH_ROW]), n_threads,
                      int(control[dcd_async._C_FLUSH_ROWS])))  # fmt: skip
        if done == dcd_async._HAND_OVER:
            break
    go, fewer, over = dcd_async._GO_ON, dcd_async._FEWER_THREADS, dcd_async._HAND_OVER
    after = [(go, 0, 16, 16), (go, 0, 16, 8), (go, 0, 16, 4), (go, 0, 16, 2), (go, 0, 16, 1),
             (fewer, 0, 8, 1), (fewer, 0, 4, 1), (fewer, 0, 2, 1), (over, 0, 2, 1)]
    if shared_bias:
        assert steps == [(go, 1, 16, 32), (fewer, 1, 8, 32), (fewer, 1, 4, 32),
                         (fewer, 1, 2, 32), (go, 1, 2, 16), (go, 1, 2, 8), (go, 1, 2, 4),
                         (go, 1, 2, 2), (go, 1, 2, 1), (over, 1, 2, 1)]  # fmt: skip
    else:
        assert steps == after
    assert control[dcd_async._C_UNDONE] == len(steps) and control[dcd_async._C_ONE_THREAD]


def test_real_threads_run_no_more_than_the_guard_allows(problem):
    # The guard's count (set here as a rise would set it) bounds the real threads of the next
    # outer iterations: the others step no row, and a run of more is refused.
    X, y = problem
    threads = _state(X, y, 1.0, n_threads=4, simulate=False)
    try:
        threads.control[dcd_async._C_THREADS] = 2
        threads.advance(2)
        rows = threads.acc[:, dcd_async._T_ROWS]
        # (which of the two took the chunks is the machine's timing: one may take them all)
        assert rows[0] + rows[1] > 0 and rows[2] == rows[3] == 0 and threads.running == 2
        assert threads.figures["threads_allowed"] == 2
        with pytest.raises(ValueError, match="on 2 allowed of 4"):
            threads.set_run(4)
        threads.set_run(2, (1, 2))  # (a ladder up to the count allowed)
    finally:
        threads.close()


def test_guard_halves_the_threads_of_a_biased_solve(problem, regression):
    # The simulator's 64 threads with a bias, flushing every 64 rows: what the guard did is in
    # the figures, in its order (the bias after every row, then fewer threads), and the
    # optimum is the serial one.
    X, y = problem
    serial = SOLVERS[1].solve(_sub(X, y, 1.0, eps=1e-3), None)
    sol = SOLVERS[1].solve(_sub(X, y, 1.0, eps=1e-3, options={
        "simulate_threads": 64, "thread_options": {"flush_rows": 64}}), None)
    fig = sol.figures
    assert fig["undone_epochs"] >= 1 and fig["bias_each_row"]
    assert fig["threads_allowed"] < 64 and not fig["handed_to_one_thread"]
    assert threads_line(fig).endswith(
        f"then on at most {fig['threads_allowed']} (more raised the dual objective), "
        f"{fig['undone_epochs']} undone"
    )
    assert abs(sol.dual - serial.dual) <= 1e-3 * abs(serial.dual)
    _check_exact(X, y, 1.0, sol)
    # the SVR's guard alike (its rows in flight push the bias too; here down to one thread)
    X_r, t_r = regression
    svr = {"p": 0.1, "simulate_threads": 16, "thread_options": {"flush_rows": 64}}
    serial = SOLVERS[12].solve(_sub(X_r, t_r, 1.0, eps=1e-4, options={"p": 0.1}), None)
    sol = SOLVERS[12].solve(_sub(X_r, t_r, 1.0, eps=1e-4, options=svr), None)
    assert sol.figures["bias_each_row"] and sol.figures["undone_epochs"] >= 2
    assert abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)
    _check_exact(X_r, t_r, 1.0, sol, regression=True)
    # (the bias after every row from the start, as asked; without a bias, nothing to flush)
    for bias in (1.0, -1.0):
        asked = SOLVERS[3].solve(_sub(X, y, bias, eps=1e-3, options={
            "simulate_threads": 2, "thread_options": {"bias_each_row": True}}), None)
        assert asked.figures["bias_each_row"] == (bias >= 0) and asked.converged


def test_replicas_guard_undoes_the_rises_of_stale_replicas(problem, monkeypatch):
    # Two threads whose replicas take the other's steps only at the end of an outer iteration
    # (small chunks, so that both step rows all along): each misses half an epoch of the
    # other's changes to the bias and the common column. The guard must undo the outer
    # iterations that raise the dual (11 of them on an idle 2-core machine) and shorten the
    # replays' interval. (How many rise depends on how the threads overlap: a busy machine
    # that runs them one after the other makes none rise, so no count is asserted.)
    X, y = problem
    monkeypatch.setattr(dcd_async, "CHUNK_ROWS", 16)
    duals, record = _dual_recorder()
    serial = SOLVERS[1].solve(_sub(X, y, 1.0), None)
    options = {"thread_scheme": "replicas", "bucket_size": 1,
               "thread_options": {"flush_rows": 10**6, "bias_rows": 10**6}}  # fmt: skip
    sol = SOLVERS[1].solve(_sub(X, y, 1.0, n_threads=2, options=options), record)
    fig = sol.figures
    assert fig["chunk_rows"] == 16
    if fig["undone_epochs"]:
        assert fig["flush_rows"] < 10**6 or fig["handed_to_one_thread"]
    assert np.all(np.diff(duals) >= -1e-9 * np.abs(duals[1:]))
    assert abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)
    _check_exact(X, y, 1.0, sol)


@pytest.mark.parametrize("discount", [0.0, 0.5])
def test_share_bias_loses_no_change(discount):
    # Two threads' replicas of a 3-weight w (the bias last), each changing its bias weight,
    # sharing in turn: the shared number holds every change once; each replica reads it back
    # less ``discount`` times the other's changes since it last read it.
    channel = dcd_async._cache_lines(1)
    base = dcd_async._cache_lines(2).reshape(2, 8)
    replicas = np.zeros((2, 3))
    channel[0] = replicas[:, 2] = 0.5
    base[:, :2] = 0.5

    def share(t):
        dcd_async._share_bias(t, replicas[t], 2, channel, base, discount)

    replicas[0, 2] += 0.25
    share(0)
    assert channel[0] == replicas[0, 2] == base[0, 0] == 0.75  # (no other change yet)
    replicas[1, 2] -= 1.0  # (its changes counted from 0.5: the 0.25 not yet seen)
    share(1)
    assert channel[0] == -0.25
    assert replicas[1, 2] == base[1, 0] == -0.25 - discount * 0.25
    replicas[1, 2] += 0.5  # (the other's 0.25 now seen: nothing more left out)
    share(1)
    assert channel[0] == 0.25 and replicas[1, 2] == 0.25 - discount * 0.0
    share(0)  # (nothing of its own: a read; the other's -1.0 + 0.5 since its last)
    assert channel[0] == 0.25 and replicas[0, 2] == 0.25 + discount * 0.5


@pytest.mark.parametrize("discount", [0.0, 0.5])
def test_flush_discounts_only_the_views_bias_weight(discount):
    # The shared w's scheme: two threads' views of two hot weights, the bias weight last.
    # Flushes add every change to w once; the view of the bias weight leaves out ``discount``
    # times the other's flushed changes since the thread last read it, the other weight none.
    hot_weight = np.array([0, 1], dtype=np.int64)
    stride, view_start = 8, 8
    wx = np.zeros(view_start + 2 * stride)
    base = dcd_async._cache_lines(2 * 2).reshape(2, stride + 8)
    wx[:2] = [1.0, 0.5]
    for t in range(2):
        dcd_async._refresh(t, wx, view_start, stride, base, hot_weight)

    def view(t):
        return wx[view_start + t * stride : view_start + t * stride + 2]

    view(0)[:] += [0.1, 0.25]
    dcd_async._flush(0, wx, view_start, stride, base, hot_weight, False, discount, 0)
    assert wx[:2].tolist() == [1.1, 0.75] and view(0).tolist() == [1.1, 0.75]
    view(1)[:] += [0.2, -1.0]
    dcd_async._flush(1, wx, view_start, stride, base, hot_weight, False, discount, 0)
    assert wx[:2].tolist() == pytest.approx([1.3, -0.25])
    assert view(1).tolist() == pytest.approx([1.3, -0.25 - discount * 0.25])
    dcd_async._flush(0, wx, view_start, stride, base, hot_weight, False, discount, 0)
    assert wx[:2].tolist() == pytest.approx([1.3, -0.25])  # (a read: nothing added)
    assert view(0).tolist() == pytest.approx([1.3, -0.25 + discount * 1.0])
    # the bias weight alone (from its slot, the last): the other weight's change stays in
    # the view, unshared, until the next whole flush
    view(1)[:] += [0.5, 0.125]
    dcd_async._flush(1, wx, view_start, stride, base, hot_weight, False, discount, 1)
    assert wx[:2].tolist() == pytest.approx([1.3, -0.125])
    assert view(1)[0] == pytest.approx(1.8) and base[1, 0] == pytest.approx(1.3)
    dcd_async._flush(1, wx, view_start, stride, base, hot_weight, False, discount, 0)
    assert wx[:2].tolist() == pytest.approx([1.8, -0.125])


@pytest.mark.parametrize("solver", [1, 3, 12])
def test_replicas_share_the_bias_weight_and_replay_the_rest(problem, regression, solver):
    # The bias weight goes through its own channel every BIAS_STALE_ROWS // T rows and the
    # replays leave it out: w, as the threads leave it after each outer iteration (before
    # it is recomputed), holds every step once, the bias's included.
    X, y = regression if solver == 12 else problem
    options = {"p": 0.1} if solver == 12 else {}
    for bias, T in ((1.0, 2), (1.0, 3), (-1.0, 2)):
        states = []

        def record(progress, states=states):
            states.append((progress.alpha.copy(), progress.w.copy()))
            return True

        record.every_iteration = True

        sol = SOLVERS[solver].solve(_sub(X, y, bias, n_threads=T, eps=1e-4, options={
            **options, "thread_scheme": "replicas", "thread_choice": "threads"}), record)
        fig = sol.figures
        if bias < 0:
            assert fig["bias_rows"] is None
        else:  # (halved with the replays' interval by each outer iteration the guard undoes)
            start = dcd_async.BIAS_STALE_ROWS // T
            assert fig["bias_rows"] in {max(start >> k, 1) for k in range(fig["undone_epochs"] + 1)}
        assert fig["epochs_on_threads"] >= 2 and sol.converged
        for alpha, w in states:
            coef = alpha if solver == 12 else y * alpha
            w_sum = primal_from_dual(X.indptr, X.indices, X.data, bias, np.ones_like(coef),
                                     coef, w.shape[0])  # fmt: skip
            assert np.max(np.abs(w - w_sum)) <= 1e-9 * max(np.max(np.abs(w_sum)), 1.0)
    fig = SOLVERS[solver].solve(_sub(X, y, 1.0, n_threads=2, options={
        **options, "thread_scheme": "replicas", "thread_options": {"bias_rows": 5}}),
        None).figures  # fmt: skip
    assert fig["bias_rows"] == 5 or fig["undone_epochs"]


@pytest.mark.parametrize("solver", [1, 3])
def test_bias_damping_keeps_the_optimum(problem, solver):
    # The shared w's steps with bias_damping (T' - 1) B^2 added to each row's curvature:
    # another path (the simulator's steps differ from the first outer iteration), the same
    # optimum, simulated and on real threads (oversubscribed here).
    X, y = problem
    serial = SOLVERS[solver].solve(_sub(X, y, 1.0), None)
    damped = {"thread_options": {"bias_damping": 0.5}}
    for kw in ({"n_threads": 1, "options": {"simulate_threads": 16, **damped}},
               {"n_threads": 4, "options": damped}):
        sol = SOLVERS[solver].solve(_sub(X, y, 1.0, **kw), None)
        assert sol.figures["bias_damping"] == 0.5 and sol.converged
        assert abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)
        assert sol.gap >= -1e-9 * abs(sol.primal)
        _check_exact(X, y, 1.0, sol)
    first = []
    for d in (0.0, 0.5):
        options = {**ASYNC, "simulate_threads": 4, "thread_options": {"bias_damping": d}}
        first.append(SOLVERS[solver].solve(Subproblem(  # (one outer iteration: the cap)
            X, y, np.ones(X.shape[0]), eps=1e-6, max_iter=1, bias=1.0, options=options),
            None).alpha)  # fmt: skip
    assert not np.array_equal(*first)
    # no bias: nothing to damp
    plain = SOLVERS[solver].solve(_sub(X, y, -1.0, n_threads=1, options={
        "simulate_threads": 4, **damped}), None)  # fmt: skip
    assert plain.figures["bias_damping"] == 0.0
    with pytest.raises(InvalidInputError, match="bias_damping must be a number >= 0"):
        SOLVERS[solver].solve(_sub(X, y, 1.0, n_threads=1, options={
            "simulate_threads": 4, "thread_options": {"bias_damping": -1.0}}), None)


@pytest.mark.parametrize("solver", [1, 3, 12])
def test_bias_discount_keeps_the_optimum(problem, regression, solver):
    # The views of the bias weight leave out part of the other threads' changes; w itself
    # holds every change: the serial optimum and w exact, simulated and on real threads
    # (oversubscribed here), in both schemes; another path than without the discount.
    X, y = regression if solver == 12 else problem
    extra = {"p": 0.1} if solver == 12 else {}
    serial = SOLVERS[solver].solve(_sub(X, y, 1.0, options=extra), None)
    for kw in ({"n_threads": 1, "options": {"simulate_threads": 2}},
               {"n_threads": 1, "options": {"simulate_threads": 16}},
               {"n_threads": 2, "options": {"thread_scheme": "replicas"}},
               {"n_threads": 4, "options": {"thread_scheme": "async"}}):
        kw["options"] = {**kw["options"], **extra, "thread_choice": "threads"}
        sol = SOLVERS[solver].solve(_sub(X, y, 1.0, **kw), None)
        assert sol.figures["bias_discount"] == dcd_async.BIAS_DISCOUNT == 0.5
        assert sol.converged and abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)
        assert sol.gap >= -1e-9 * abs(sol.primal)
        _check_exact(X, y, 1.0, sol, regression=solver == 12)
    first = []
    for discount in (0.0, 0.5):
        options = {**ASYNC, **extra, "simulate_threads": 2,
                   "thread_options": {"bias_discount": discount}}
        first.append(SOLVERS[solver].solve(Subproblem(  # (one outer iteration: the cap)
            X, y, np.ones(X.shape[0]), eps=1e-6, max_iter=1, bias=1.0, options=options),
            None).alpha)  # fmt: skip
    assert not np.array_equal(*first)
    plain = SOLVERS[solver].solve(_sub(X, y, -1.0, n_threads=1, options={
        **extra, "simulate_threads": 4}), None)  # fmt: skip
    assert plain.figures["bias_discount"] == 0.0  # (no bias: nothing to discount)
    for bad in (-0.1, 1.5, "half"):
        with pytest.raises(InvalidInputError, match="bias_discount must be a number in"):
            SOLVERS[solver].solve(_sub(X, y, 1.0, n_threads=1, options={
                **extra, "simulate_threads": 4, "thread_options": {"bias_discount": bad}}),
                None)  # fmt: skip


def test_which_scheme_auto_takes(problem, monkeypatch):
    X, y = problem
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)

    def plan(n_threads, **options):
        sub = Subproblem(X, y, np.ones(X.shape[0]), 0.1, 10, n_threads=n_threads, options=options)
        return _dual_threads.thread_plan(sub, X, False)

    assert plan(2) == _dual_threads.ThreadPlan(2, "replicas")
    assert plan(_dual_threads.REPLICAS_MAX_THREADS + 1).scheme == "async"
    assert plan(2, thread_scheme="async").scheme == "async"
    assert plan(8, thread_scheme="replicas").scheme == "replicas"
    # simulated: the shared w's lockstep schedule; the replicas run on real threads only
    assert plan(1, simulate_threads=2) == _dual_threads.ThreadPlan(2, "async", True)
    with pytest.raises(InvalidInputError, match="replicas"):
        plan(1, simulate_threads=2, thread_scheme="replicas")
    # replicas that would not fit their memory bound: the shared w
    monkeypatch.setattr(_dual_threads, "REPLICAS_MAX_BYTES", 8 * X.shape[1])
    assert plan(2).scheme == "async"


def test_how_many_threads_a_solve_takes(problem):
    # One per THREAD_MIN_NNZ non-zeros up to two; beyond, the schemes that never wait inside
    # an outer iteration one per MANY_THREADS_MIN_NNZ; the rounds keep the first share.
    X, y = problem
    min_nnz, many_min_nnz = _dual_threads.THREAD_MIN_NNZ, _dual_threads.MANY_THREADS_MIN_NNZ

    def plan(n_threads, nnz, **options):
        sub = Subproblem(X, y, np.ones(X.shape[0]), 0.1, 10, n_threads=n_threads, options=options)
        rows = SimpleNamespace(indptr=np.array([0, nnz]), shape=(1, 100))
        return _dual_threads.thread_plan(sub, rows, False)

    pypi_recent = 9_408_880
    assert plan(16, pypi_recent) == _dual_threads.ThreadPlan(16, "async")
    assert plan(16, pypi_recent, thread_scheme="rounds").n_threads == pypi_recent // min_nnz
    assert plan(64, pypi_recent).n_threads == pypi_recent // many_min_nnz
    assert plan(2, pypi_recent) == _dual_threads.ThreadPlan(2, "replicas")
    assert plan(16, 2 * min_nnz - 1).n_threads == 1  # (not enough for two)
    assert plan(16, 2 * min_nnz).n_threads == 2 * min_nnz // many_min_nnz
    assert plan(16, 10, thread_min_nnz=1).n_threads == 10  # (a smaller share: the option's)


def _feed(schedule, ladder_rate, epochs, whole_rate=None):
    """Run ``epochs`` outer iterations through the schedule: a ladder's phases measured at
    ``ladder_rate(threads)`` seconds a row, whole outer iterations at ``whole_rate(threads)``
    (the same by default), a row each. Returns the thread count of every outer iteration."""
    whole_rate = whole_rate or ladder_rate
    counts = []
    while schedule.epochs < epochs:
        n_threads, ladder, k = schedule.next(epochs - schedule.epochs, False)
        if ladder:  # (one, half the top, the top)
            assert len(ladder) == 1 + (n_threads > 1) + (n_threads > 3) and k == 1
            assert ladder[0] == 1 and ladder[-1] == n_threads
        rates = {c: ladder_rate(c) for c in ladder} if ladder else None
        schedule.record(n_threads, k, rates, whole_rate(n_threads) * k, k)
        counts += [n_threads] * k
    return counts


def test_schedule_runs_the_count_its_ladders_measure_fastest():
    # threads well ahead: all of them all along, checked by ladders at outer iterations 1,
    # 3, then 8, 16, 32, 64 apart while the choice stands; no whole outer iteration on one
    fast = ThreadSchedule(16, True)
    assert fast.next(100, False) == (16, (), 1)  # (the first: all threads, no ladder)
    fast.record(16, 1)
    assert fast.next(100, False) == (16, (1, 8, 16), 1)
    assert _feed(fast, lambda k: 1.0 / k**0.5, 200) == [16] * 199
    assert fast.ladders == 2 + 5 and fast.trials == 0 and fast.switches == 0
    assert fast.figures["thread_speedup"] == 4.0 and fast.figures["threads_chosen"] == 16

    # threads that lose: the serial kernel once a ladder says so, ladders only on threads
    slow = ThreadSchedule(2, True)
    counts = _feed(slow, lambda k: 1.0 + 0.5 * (k - 1), 40)
    assert counts[:3] == [2, 2, 1] and slow.count == 1 and slow.trials == 0
    assert slow.epochs_on_threads == counts.count(2) == 1 + slow.ladders <= 6
    assert not slow.figures["on_threads_at_end"]

    # a count between one and all: half of them, then the ladders around it
    middle = ThreadSchedule(16, True)
    rates = {1: 1.0, 4: 0.3, 8: 0.2, 16: 0.25}
    _feed(middle, rates.get, 2)
    assert middle.count == 8 and middle.ladder() == (1, 4, 8)
    _feed(middle, rates.get, 4)
    assert middle.count == 8 and middle.ladder() == (1, 8, 16)  # (the top won: above it too)
    assert threads_line({**middle.figures, "n_threads": 16, "thread_scheme": "async"}).startswith(
        "8 of 16 threads (the fastest count measured), async scheme"
    )

    # the async guard allows fewer threads: the count, the ladder's top and a trial cut
    capped = ThreadSchedule(16, True)
    _feed(capped, rates.get, 2)
    capped.trial = [8, 1, 8]
    capped.limit(4)
    assert capped.count == 4 and capped.ladder() == (1, 2, 4) and capped.trial == [4, 1, 4]
    capped.limit(8)  # (never more again)
    assert capped.n_threads == 4

    # the machine changes under a solve: the next ladder finds it
    changing = ThreadSchedule(2, True)
    _feed(changing, float, 3)
    assert changing.count == 1
    _feed(changing, lambda k: 0.4 / k, 3 + PROBE_EVERY + 2)
    assert changing.count == 2 and changing.switches == 1

    # a ladder on too few rows to time (no rates): whole outer iterations decide (the
    # count, one thread, the count), here for one thread
    few = ThreadSchedule(4, True)
    few.record(4, 1, {})
    assert few.ladders == 0 and few.next(5, False) == (4, (), 1)
    for n_threads, seconds in ((4, 2.0), (1, 1.0), (4, 2.0)):
        assert few.next(5, False) == (n_threads, (), 1)
        few.record(n_threads, 1, None, seconds, 1)
    assert few.trials == 1 and few.count == 1 and few.next(5, False) == (1, (), 5)

    always = ThreadSchedule(4, False)
    assert always.next(10, False) == (4, (), 10)
    assert always.next(10, True) == (1, (), 10)  # (handed over by the guard)


def test_schedule_tries_a_close_ladder_on_whole_outer_iterations():
    # a ladder less than TRUST_SPEEDUP ahead: the count, one thread, the count, whole
    close = ThreadSchedule(2, True)
    ahead = 1.0 / (0.9 * TRUST_SPEEDUP)  # (two threads' seconds a row in the ladder)
    counts = _feed(close, lambda k: 1.0 if k == 1 else ahead, 5)
    assert counts == [2, 2, 2, 1, 2] and close.trials == 1 and close.count == 2
    assert close.figures["thread_speedup"] == pytest.approx(1.0 / ahead)

    # ... where whole outer iterations show the threads losing: one thread goes on
    losing = ThreadSchedule(2, True)
    counts = _feed(losing, lambda k: 1.0 if k == 1 else ahead, 5 + PROBE_EVERY, float)
    assert counts == [2, 2, 2, 1, 2] + [1] * PROBE_EVERY and losing.count == 1
    # the next check: a ladder, close again, so another trial
    counts = _feed(losing, lambda k: 1.0 if k == 1 else ahead, 9 + PROBE_EVERY, float)
    assert counts == [2, 2, 1, 2] and losing.trials == 2 and losing.count == 1


def test_measured_solve_reaches_the_optimum(problem):
    X, y = problem
    serial = SOLVERS[1].solve(_sub(X, y, -1.0), None)
    sol = SOLVERS[1].solve(
        _sub(X, y, -1.0, n_threads=2, options={"thread_choice": "measure"}), None
    )
    fig = sol.figures
    assert fig["epochs_on_threads"] >= 2  # the first probes at least
    # 1,500 rows are two chunks, too few for a ladder's phases: whole outer iterations measure
    assert fig["thread_ladders"] == 0 and fig["thread_trials"] >= 1
    assert abs(sol.dual - serial.dual) <= 1e-6 * abs(serial.dual)
    _check_exact(X, y, -1.0, sol)


@pytest.mark.parametrize("scheme", ["async", "replicas"])
@pytest.mark.parametrize("solver", [1, 3, 13])
def test_ladders_at_every_outer_iteration_reach_the_serial_optimum(
    problem, regression, monkeypatch, solver, scheme
):
    # Every outer iteration a ladder (its phase of one by the serial pass on w or a replica,
    # logged for the replicas to replay; then half the threads, then all), on chunks of 32
    # rows so that the phases run: the serial optimum, w exact, the rates measured.
    monkeypatch.setattr(_dual_threads, "PROBE_EVERY", 1)
    monkeypatch.setattr(_dual_threads, "MAX_PROBE_EVERY", 1)
    monkeypatch.setattr(_dual_threads, "FIRST_LADDER", 0)
    monkeypatch.setattr(_dual_threads, "SECOND_LADDER", 1)
    X, y = regression if solver == 13 else problem
    options = {"p": 0.1} if solver == 13 else {}
    serial = SOLVERS[solver].solve(_sub(X, y, 1.0, options=options), None)
    for T in (2, 4):
        threaded = SOLVERS[solver].solve(
            _sub(X, y, 1.0, n_threads=T, options={
                **options, "thread_scheme": scheme, "thread_choice": "measure",
                "bucket_size": 4, "buckets_per_group": 2,
            }), None,
        )  # fmt: skip
        fig = threaded.figures
        assert 1 in fig["thread_rates"] and len(fig["thread_rates"]) >= 2
        assert fig["epochs_on_threads"] >= 1
        assert threaded.converged
        assert abs(threaded.dual - serial.dual) <= 1e-6 * abs(serial.dual)
        assert threaded.gap >= -1e-9 * abs(threaded.primal)
        _check_exact(X, y, 1.0, threaded, regression=solver == 13)


def test_hot_features_and_their_renumbering():
    rows = np.repeat(np.arange(100), 3)
    cols = np.concatenate([[0, 5, 9 + k % 40] for k in range(100)])
    cols[3 * np.arange(50) + 1] = 7  # column 7 in half the rows, 5 in the other half
    X = sp.csr_matrix((np.ones(300), (rows, cols)), shape=(100, 60))
    X.sort_indices()
    assert list(dcd_async.hot_features(X, max_hot=8, min_share=0.3)) == [0, 5, 7]
    assert list(dcd_async.hot_features(X, max_hot=1, min_share=0.3)) == [0]
    assert dcd_async.hot_features(X, max_hot=8, min_share=1.1).shape[0] == 0
    hot = np.array([0, 7])
    remapped = dcd_async.remapped_indices(X, hot, 64, np.int32)
    expected = np.where(X.indices == 0, 64, np.where(X.indices == 7, 65, X.indices))
    assert np.array_equal(remapped, expected)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "PARALLEL_MIN_NNZ", 1)  # (rows side by side on 3 threads)
        assert np.array_equal(dcd_async.remapped_indices(X, hot, 64, np.int32, 3), expected)
        # (the sample counted in parts on threads: the same features)
        patch.setattr(dcd_async, "PARALLEL_MIN_NNZ", 1)
        assert list(dcd_async.hot_features(X, max_hot=8, min_share=0.3, n_threads=3)) == [0, 5, 7]
        assert list(dcd_async.hot_features(X, max_hot=1, min_share=0.3, n_threads=7)) == [0]


@pytest.mark.parametrize("solver", [1, 3, 12, 13])
def test_set_up_and_objectives_on_the_threads(problem, regression, solver, monkeypatch):
    # A threaded solve fills its records and sums its primal and dual on its threads (rows
    # side by side): the records are the serial set-up's, bit for bit (a warm start's w
    # too), and the values those of the returned w and alpha (the SVR's beta).
    svr = solver in (12, 13)
    X, y = regression if svr else problem
    monkeypatch.setattr(parallel, "PARALLEL_MIN_NNZ", 1)
    n_rows = X.shape[0]
    C = np.random.default_rng(0).uniform(0.0, 2.0, n_rows) * (np.arange(n_rows) % 5 > 0)
    start = np.random.default_rng(1).uniform(-3.0, 3.0, n_rows)
    loss = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE, 12: SVR_LOSS_L2, 13: SVR_LOSS_L1}[solver]
    made = []
    for n_threads in (1, 3):
        rec, w = np.empty((n_rows, 4)), np.zeros(X.shape[1] + 1)
        if svr:
            rows = prepare_svr_records(X.indptr, X.indices, X.data, 1.0, y, C, loss, rec,
                                       np.int32, start, True, w, n_threads)  # fmt: skip
        else:
            rows = prepare_records(
                X.indptr, X.indices, X.data, 1.0, y, C, loss, start, True, w, rec, np.int32,
                None, np.zeros(0, np.int64), np.zeros(0), 1.0, n_threads,
            )  # fmt: skip
        made.append((rec, w, rows))
    for serial, threaded in zip(made[0], made[1], strict=True):
        np.testing.assert_array_equal(threaded, serial)
    for scheme in ("async", "replicas"):
        sol = SOLVERS[solver].solve(
            Subproblem(X, y, C, eps=1e-3, max_iter=3000, bias=1.0, n_threads=3,
                       options={**ASYNC, "thread_scheme": scheme, "p": 0.1}), None,
        )  # fmt: skip
        assert sol.figures["n_threads"] == 3
        if svr:
            primal, dual, gap = svr_objectives(X, 1.0, y, C, sol.w, sol.alpha, loss, 0.1)
        else:
            primal, dual, gap = svm_objectives(X, 1.0, y, C, sol.w, sol.alpha, loss)
        assert sol.primal == pytest.approx(primal, rel=1e-12)
        assert sol.dual == pytest.approx(dual, rel=1e-12)
        assert sol.gap == pytest.approx(gap, rel=1e-6, abs=1e-12 * abs(primal))


def test_shared_w_recomputed_on_fewer_threads_where_their_sums_would_not_fit(
    problem, monkeypatch
):
    # w from alpha at the end: each thread sums its rows into its own w, as many threads as
    # their w fit the cap (here one): exact all the same
    X, y = problem
    monkeypatch.setattr(objective, "PARTIAL_WEIGHTS_MAX_BYTES", 8 * (X.shape[1] + 1))
    serial = SOLVERS[1].solve(_sub(X, y, 1.0), None)
    threaded = SOLVERS[1].solve(_sub(X, y, 1.0, n_threads=4), None)
    assert threaded.figures["thread_scheme"] == "async" and threaded.converged
    assert abs(threaded.dual - serial.dual) <= 1e-6 * abs(serial.dual)
    _check_exact(X, y, 1.0, threaded)
def test_train_cli_and_options(problem, monkeypatch, tmp_path, capsys):
    X, y = problem
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)
    model = linsvm.train(X, y, solver=3, eps=1e-4, n_jobs=4)
    fig = model.results_[0].figures
    assert fig["n_threads"] == 4 and fig["thread_scheme"] == "async"
    assert threads_line(fig).startswith("4 threads, async scheme")
    rounds = linsvm.train(X, y, solver=3, eps=1e-4, n_jobs=4, thread_scheme="rounds")
    assert rounds.results_[0].figures["thread_scheme"] == "rounds"
    replicas = linsvm.train(X, y, solver=3, eps=1e-4, n_jobs=2)  # (auto, 2 threads)
    fig = replicas.results_[0].figures
    assert fig["thread_scheme"] == "replicas"
    assert threads_line(fig).startswith("2 threads, replicas scheme")
    svr = linsvm.LinearSVR(n_jobs=4, thread_scheme="replicas", random_state=0).fit(X, y)
    assert svr.model_.results_[0].figures["thread_scheme"] == "replicas"
    with pytest.raises(InvalidInputError, match="thread_scheme"):
        linsvm.train(X, y, solver=3, n_jobs=4, thread_scheme="fastest")
    svc = linsvm.LinearSVC(n_jobs=4, thread_scheme="rounds", random_state=0).fit(X, y)
    again = linsvm.LinearSVC(n_jobs=4, thread_scheme="rounds", random_state=0).fit(X, y)
    assert np.array_equal(svc.coef_, again.coef_)  # the deterministic scheme
    data = tmp_path / "d.svm"
    linsvm.write_libsvm(X, y, data)
    assert cli.main(["train", "-m", "4", "-s", "3", str(data), str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "threads: 4 threads, async scheme" in out
    assert cli.main(["train", "-m", "4", "-s", "3", "--thread-scheme", "replicas", str(data),
                     str(tmp_path / "m")]) == 0  # fmt: skip
    assert "threads: 4 threads, replicas scheme" in capsys.readouterr().out
    assert cli.main(["train", "-m", "4", "--thread-scheme", "fastest", str(data)]) != 0
    err = capsys.readouterr().err.strip()
    assert "--thread-scheme" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("scheme", ["async", "replicas"])
def test_resumed_async_solve_reaches_the_same_optimum(problem, scheme):
    X, y = problem
    sub = _sub(X, y, 1.0, eps=1e-6, n_threads=4, options={"thread_scheme": scheme})
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
    assert resumed.converged
    assert abs(resumed.dual - whole.dual) <= 1e-6 * abs(whole.dual)
    _check_exact(X, y, 1.0, resumed)


def test_warm_start_across_losses(problem, monkeypatch):
    X, y = problem
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)
    cold = linsvm.train(X, y, solver=1, eps=1e-3, n_jobs=4)
    warm = linsvm.train(X, y, solver=3, eps=1e-6, n_jobs=4, warm_start=cold, max_iter=3000)
    serial = linsvm.train(X, y, solver=3, eps=1e-6, max_iter=3000)
    assert warm.results_[0].figures["n_threads"] == 4
    assert abs(warm.results_[0].dual - serial.results_[0].dual) <= 1e-6 * abs(
        serial.results_[0].dual
    )


def test_solves_side_by_side_hold_cores_of_their_own(problem, monkeypatch):
    """One-vs-rest sub-problems solved side by side, each on threads: each solve pins its
    threads to processors no other running solve holds (all of them pinned to the first few
    would spin on each other's cores), and gives them back when it ends."""
    from linsvm.solvers import dcd_threads

    monkeypatch.setattr(dcd_threads, "_usable_cpus", lambda: list(range(8)))
    a, b = dcd_threads.claim_cpus(3), dcd_threads.claim_cpus(3)
    assert (a, b, dcd_threads.claim_cpus(3)) == ([0, 1, 2], [3, 4, 5], [])  # ([]: unpinned)
    dcd_threads.release_cpus(a)
    assert dcd_threads.claim_cpus(2) == [0, 1]
    dcd_threads.release_cpus([0, 1])
    dcd_threads.release_cpus(b)

    claims = []
    claim = dcd_threads.claim_cpus

    def recorded(n_threads):
        held = set(dcd_threads._held_cpus)
        cpus = claim(n_threads)
        claims.append((held, cpus))
        return cpus

    monkeypatch.setattr(dcd_threads, "claim_cpus", recorded)
    monkeypatch.setattr(dcd_async, "claim_cpus", recorded)
    monkeypatch.setattr(dcd_threads, "_pin_to", lambda cpu: None)
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)
    X, _ = problem
    labels = np.arange(X.shape[0]) % 4  # (four sub-problems side by side, two threads each)
    with pytest.warns(linsvm.ConvergenceWarning):  # (5 outer iterations: enough here)
        model = linsvm.train(X, labels, solver=3, max_iter=5, n_jobs=8, thread_scheme="async")
    assert [r.figures["n_threads"] for r in model.results_] == [2] * 4
    assert len(claims) == 4
    for held, cpus in claims:  # each solve's processors held by no other running then
        assert len(cpus) == 2 and not held & set(cpus)
    assert dcd_threads._held_cpus == set()  # all given back
