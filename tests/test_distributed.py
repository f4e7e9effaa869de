"""Distributed training by CoCoA+ on a LocalCluster of 2 worker processes, against linsvm.train.

The problems are small text-like data (rows of a few non-zeros over many more features, unit
norm), on which CoCoA+ converges in tens of rounds. A bias feature in the dual, shared by every
row, slows CoCoA+ down many times (every partition moves the same weight): -s 3 keeps it there,
and its bias tests use B = 0.1; -s 1 and -s 7 hold the bias weight on the client.
"""

from __future__ import annotations

import os
import signal
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm.errors import InvalidInputError
from linsvm.objective import (
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    loss_sum,
    lr_dual_point,
    lr_objectives,
    primal_from_dual,
    squared_hinge_dual_point,
    svm_objectives,
)
from linsvm.partitioned import OuterSums
from linsvm.training import TrainingInterrupted

distributed = pytest.importorskip("distributed")
dist = pytest.importorskip("linsvm.distributed")


def text_like(n_rows=1000, n_features=4000, nnz=20, n_classes=2, seed=0, noise=0.5):
    """Rows of ``nnz`` random features (unit norm) and labels from a random linear model."""
    rng = np.random.default_rng(seed)
    cols = rng.choice(n_features, size=(n_rows, nnz))
    indptr = np.arange(0, n_rows * nnz + 1, nnz)
    X = sp.csr_matrix(
        (rng.random(n_rows * nnz) + 0.5, cols.ravel(), indptr), shape=(n_rows, n_features)
    )
    X.sum_duplicates()
    X.sort_indices()
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    scores = X @ rng.standard_normal((n_features, n_classes))
    scores = scores + noise * rng.standard_normal((n_rows, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else np.where(scores[:, 0] > 0, 1, -1)
    return X, y


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def check_against_single_machine(model, ref, X, rounds):
    """Objectives within 1e-4 of the tight single-machine run, >= 99.9% of the predictions
    the same, and every reported gap a true bound: D(alpha) <= P* <= ref's primal."""
    assert model.solver == ref.solver or ref.results_[0].solver != ref.solver
    np.testing.assert_array_equal(model.labels_, ref.labels_)
    assert model.coef_.shape == ref.coef_.shape
    assert (model.bias_weights_ is None) == (ref.bias_weights_ is None)
    for r, r_ref in zip(model.results_, ref.results_, strict=True):
        assert r.converged
        assert abs(r.primal - r_ref.primal) <= 1e-4 * r_ref.primal
        assert r.dual <= r_ref.primal * (1 + 1e-12)
        assert r.primal - r_ref.primal <= r.gap + 1e-9 * r_ref.primal
    agree = np.mean(model.predict(X) == ref.predict(X))
    assert agree >= 0.999
    refs = [r.primal for r in ref.results_]
    for p in rounds:
        assert all(d <= pstar * (1 + 1e-12) for d, pstar in zip(p.dual, refs, strict=True))
        assert p.gap >= 0 or p.gap > -1e-9 * sum(refs)


@pytest.mark.parametrize("solver", [1, 3])
def test_binary_reaches_the_single_machine_optimum(client, solver):
    X, y = text_like(seed=1)
    ref = linsvm.train(X, y, solver=solver, C=1.0, eps=1e-8, max_iter=100_000)
    rounds = []
    model = dist.train(
        X, y, client=client, solver=solver, C=1.0, eps=1e-6, max_rounds=500,
        on_round=rounds.append,
    )  # fmt: skip
    check_against_single_machine(model, ref, X, rounds)
    assert rounds[-1].relative_gap <= 1e-6
    assert [p.round for p in rounds] == list(range(len(rounds)))
    assert all(p.bytes_sent > 0 and p.bytes_received > 0 for p in rounds)


@pytest.mark.parametrize("solver", [1, 3])
def test_multiclass_with_bias_and_class_weights(client, solver):
    X, y = text_like(n_classes=3, seed=2)
    labels = np.array(["b", "c", "a"])[y]
    weights = {"a": 2.0, "c": 0.5}
    ref = linsvm.train(
        X, labels, solver=solver, C=0.5, eps=1e-8, bias=0.1, class_weight=weights,
        max_iter=100_000,
    )  # fmt: skip
    rounds = []
    model = dist.train(
        X, labels, client=client, solver=solver, C=0.5, eps=1e-6, bias=0.1,
        class_weight=weights, max_rounds=500, on_round=rounds.append,
    )  # fmt: skip
    assert len(model.results_) == 3
    check_against_single_machine(model, ref, X, rounds)


@pytest.mark.parametrize("solver", [1, 7])
def test_a_bias_of_one_is_held_by_the_client(client, solver):
    """B = 1 is half of a unit-norm row: in the dual, 4 partitions took over 800 rounds to a
    gap of 1e-3 on such rows; with the bias weight held by the client (``hold_bias``), tens."""
    X, y = text_like(seed=7)
    ref = linsvm.train(X, y, solver=solver, C=1.0, eps=1e-10, bias=1.0, max_iter=100_000)
    rounds = []
    model = dist.train(
        X, y, client=client, solver=solver, C=1.0, eps=1e-6, bias=1.0, n_partitions=4,
        max_rounds=400, on_round=rounds.append, hold_bias=True,
    )  # fmt: skip
    check_against_single_machine(model, ref, X, rounds)
    (r,) = model.results_
    assert r.figures["bias_evaluations"] >= len(rounds) - 1
    assert abs(model.intercept_[0] - ref.intercept_[0]) <= 1e-2 * (1 + abs(ref.intercept_[0]))
    assert len(rounds) <= 200


@pytest.mark.parametrize("solver", [1, 7])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_the_dual_point_of_w_is_a_lower_bound_that_meets_p_star(solver, bias):
    """A partition's parts of the dual at the dual point of the round's W (a_i = -C_i
    xi'(y_i w'x_i)), summed over two partitions: the dual objective at that point as
    ``objective`` computes it over all rows, below P* for any W and equal to it at w*; the
    loss beside it is ``loss_sum``'s. The round's D is the best of alpha's, that point's and,
    for the squared hinge, the points between them (checked on a grid), W being w(alpha)."""
    from linsvm.distributed import _partition

    X, y = text_like(n_rows=400, n_classes=3, seed=11)
    weights = np.array([1.0, 2.0, 0.0])  # (class 2's rows of cost 0 in its sub-problem)
    ref = linsvm.train(X, y, solver=solver, C=0.5, eps=1e-10, bias=bias, max_iter=100_000,
                       class_weight=dict(enumerate(weights)))  # fmt: skip
    W_star = np.column_stack([ref.coef_, ref.bias_weights_]) if bias >= 0 else ref.coef_
    labels = ref.labels_  # (LIBLINEAR's order: coef_'s rows)
    config = _partition.Setup(solver, labels, 0.5 * weights[labels], 0.5, bias, X.shape[1], 3,
                              1)  # fmt: skip
    halves = [_partition.from_arrays(k, X[k::2], y[k::2]) for k in range(2)]
    loss = LOSS_LOGISTIC if solver == 7 else LOSS_SQUARED_HINGE
    whole = _partition.from_arrays(2, X, y)
    for part in (*halves, whole):
        _partition.setup(part, config)
    n = X.shape[1] + (bias >= 0)
    targets, costs = zip(*(_partition._targets(whole, c) for c in range(3)), strict=True)

    def dual_at(c, alpha):
        if solver == 7:
            return lr_objectives(X, bias, targets[c], costs[c], W_star[c], alpha)[1]
        return svm_objectives(X, bias, targets[c], costs[c], W_star[c], alpha, loss)[1]

    # the partitions' alpha: feasible, random; W = w(alpha) (the round's start) or w*
    rng = np.random.default_rng(5)
    alpha = [rng.uniform(0.05, 0.95, len(y)) * costs[c] for c in range(3)]
    for k, part in enumerate(halves):
        part.alpha = np.array([a[k::2] for a in alpha])
    W_alpha = np.array([primal_from_dual(X.indptr, X.indices, X.data, bias, targets[c], alpha[c],
                                         n) for c in range(3)])  # fmt: skip
    for W in (W_alpha, W_star):
        sums = OuterSums(W.copy(), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
        task = _partition.RoundTask(0, 0, 2.0, dual_point=True)
        sums.add([_partition.run_round(part, W, task) for part in halves])
        _, dual = sums.objectives()
        for c in range(3):
            point = -(0.5 * sums.point_W[c] @ sums.point_W[c] + sums.point_terms[c])
            if solver == 7:
                a = lr_dual_point(X, bias, targets[c], costs[c], W[c])
            else:
                a = squared_hinge_dual_point(X, bias, targets[c], costs[c], W[c])
            assert point == pytest.approx(dual_at(c, a), rel=1e-10, abs=1e-10)
            total = loss_sum(X.indptr, X.indices, X.data, bias, targets[c], costs[c], W[c], loss)
            assert sums.loss[c] == pytest.approx(total, rel=1e-12, abs=1e-12)
            p_star = ref.results_[c].primal
            assert point <= p_star * (1 + 1e-12) + 1e-12
            if W is W_star:  # (not w(alpha): the point only)
                assert point == pytest.approx(p_star, rel=1e-6, abs=1e-9)
                continue
            assert dual[c] <= p_star * (1 + 1e-12) + 1e-12
            own = dual_at(c, alpha[c])
            candidates = [own, point]
            if solver == 1:
                candidates += [dual_at(c, a + t * (alpha[c] - a)) for t in np.linspace(0, 1, 41)]
            assert dual[c] >= max(candidates) - 1e-9 * abs(p_star)
            if solver == 7:
                assert dual[c] == pytest.approx(max(own, point), rel=1e-12)
            else:  # the best on the segment: within the grid's step of its best
                assert dual[c] <= max(candidates) + 1e-3 * abs(max(candidates) - min(own, point))


@pytest.mark.parametrize("ratio, extrapolated", [(0.9, True), (0.5, True), (0.99, False),
                                                  (-0.5, False)])  # fmt: skip
def test_the_held_bias_steps_are_extrapolated_where_they_shrink_steadily(ratio, extrapolated):
    """Block descent whose bias steps shrink by a steady ratio r (the minimiser for the new w
    at b* + r (b - b*)): from the third round the step is extrapolated to the sum of its
    series, which lands on b*; a ratio at or above ``BIAS_RATIO_MAX`` or of changing sign is
    stepped as it comes."""
    from linsvm.distributed import cocoa

    run = object.__new__(cocoa._Run)
    run.bias_trend, run.bias_extrapolations = None, 0
    b_star = np.array([1.0, -2.0])
    run._bias_minimiser = lambda W, round: b_star + ratio * (W[:, -1] - b_star)
    W = np.zeros((2, 3))
    for t in range(3):
        run._bias_step(W, t + 1)
    if extrapolated:
        np.testing.assert_allclose(W[:, -1], b_star, rtol=1e-12)
        assert run.bias_extrapolations == 2
    else:
        np.testing.assert_allclose(W[:, -1], b_star * (1 - ratio**3), rtol=1e-12)
        assert run.bias_extrapolations == 0


def test_the_bias_stays_in_the_dual_unless_held_and_for_the_hinge(client):
    X, y = text_like(n_rows=300, seed=8)
    for solver, hold in ((1, False), (3, True)):
        model = dist.train(X, y, client=client, solver=solver, bias=0.1, eps=1e-3,
                           max_rounds=300, hold_bias=hold)  # fmt: skip
        assert model.results_[0].converged
        assert "bias_evaluations" not in model.results_[0].figures


def test_logistic_regression_dual(client):
    X, y = text_like(seed=3)
    ref = linsvm.train(X, y, solver=7, C=1.0, eps=1e-10, max_iter=100_000)
    rounds = []
    model = dist.train(
        X, y, client=client, solver=7, C=1.0, eps=1e-6, max_rounds=500, on_round=rounds.append
    )
    assert model.solver == 7
    check_against_single_machine(model, ref, X, rounds)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-3)


def test_loose_run_reports_a_true_gap(client):
    X, y = text_like(seed=4)
    ref = linsvm.train(X, y, solver=1, C=1.0, eps=1e-8, max_iter=100_000)
    rounds = []
    model = dist.train(X, y, client=client, solver=1, eps=1e-2, on_round=rounds.append)
    (r,), (r_ref,) = model.results_, ref.results_
    assert r.converged and r.gap <= 1e-2 * r.primal
    # P(w) - P* <= gap at every round, P* taken from the tight run
    for p in rounds:
        assert p.primal[0] - r_ref.primal <= p.gap + 1e-9 * r_ref.primal
    assert r.primal - r_ref.primal <= r.gap
    assert r.primal - r_ref.primal >= -1e-9 * r_ref.primal


def test_more_partitions_than_workers_and_the_model_file(client, tmp_path):
    X, y = text_like(seed=5)
    ref = linsvm.train(X, y, solver=1, C=1.0, eps=1e-8, bias=0.1, max_iter=100_000)
    model = dist.train(X, y, client=client, solver=1, eps=1e-6, bias=0.1, n_partitions=3)
    assert model.results_[0].figures["n_partitions"] == 3
    check_against_single_machine(model, ref, X, [])
    path = tmp_path / "model"
    model.save(path)
    loaded = linsvm.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_the_round_cap_warns_as_every_cap_does(client):
    X, y = text_like(seed=2)
    with pytest.warns(linsvm.ConvergenceWarning, match=r"\(3\) of -s 3 on the cluster"):
        model = dist.train(X, y, client=client, solver=3, max_rounds=3)
    assert model.results_[0].stop_reason == "max_iter"


def test_a_cluster_without_workers_yet_is_waited_for(monkeypatch):
    """Workers that have not joined yet (a cluster just started, a nanny restarting one):
    training waits for one, up to REPLACEMENT_WAIT_SECONDS, then refuses in one line."""
    from linsvm.distributed import cocoa

    X, y = text_like(n_rows=200, n_features=50, nnz=5, seed=3)
    monkeypatch.setattr(cocoa, "REPLACEMENT_WAIT_SECONDS", 20.0)
    cluster = distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as empty:
        threading.Timer(0.5, cluster.scale, (1,)).start()
        model = dist.train(X, y, client=empty, solver=1, eps=1e-3)
        assert model.results_[0].converged
    monkeypatch.setattr(cocoa, "REPLACEMENT_WAIT_SECONDS", 0.3)
    cluster = distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as empty:
        with pytest.raises(InvalidInputError, match=r"has no workers \(waited 0.3 s for one\)"):
            dist.train(X, y, client=empty, solver=1)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_a_killed_worker_does_not_change_the_model(client, bias):
    """(With a bias of 1 the client holds the bias weights: the snapshot's W has them, and
    the trend of their steps that extrapolates them: killed after round 9, the run replays
    from the snapshot of round 9, and the uninterrupted run extrapolated the step after it.)"""
    X, y = text_like(n_classes=3, seed=6)
    common = dict(client=client, solver=1, C=1.0, eps=1e-6, snapshot_every=3, max_rounds=500,
                  bias=bias, hold_bias=bias >= 0)  # fmt: skip
    uninterrupted = dist.train(X, y, **common)
    events = []
    killed = []

    def kill_one_worker(progress):
        events.extend(progress.events)
        if progress.round == 9 and not killed:
            pids = client.run(os.getpid)
            address, pid = sorted(pids.items())[0]
            killed.append(address)
            os.kill(pid, signal.SIGKILL)

    model = dist.train(X, y, on_round=kill_one_worker, **common)
    client.wait_for_workers(2, timeout=60)
    assert killed
    assert any("recovered" in e for e in events)
    np.testing.assert_allclose(model.coef_, uninterrupted.coef_, rtol=0, atol=1e-10)
    if bias >= 0:
        assert uninterrupted.results_[0].figures["bias_extrapolations"] > 0
    for r, r0 in zip(model.results_, uninterrupted.results_, strict=True):
        assert r.converged
        assert r.n_iter == r0.n_iter
        assert abs(r.primal - r0.primal) <= 1e-10 * r0.primal


def test_a_worker_killed_mid_round_on_file_shards(client, files):
    """Four shards of one file on two workers; a worker is killed while a round may be
    running (a timer, not the hook): its shards are read again on the worker left and the
    model is the uninterrupted run's."""
    common = dict(client=client, solver=1, C=1.0, eps=1e-6, snapshot_every=4,
                  n_partitions=4, max_rounds=500)  # fmt: skip
    client.wait_for_workers(2, timeout=60)  # (the test before killed one: its nanny restarts it)
    uninterrupted = dist.train(files["whole"], **common)
    events = []
    killed = []

    def kill_soon(progress):
        events.extend(progress.events)
        if progress.round == 5 and not killed:
            pids = client.run(os.getpid)
            address, pid = sorted(pids.items())[-1]
            killed.append(address)
            threading.Timer(0.01, os.kill, (pid, signal.SIGKILL)).start()

    model = dist.train(files["whole"], on_round=kill_soon, **common)
    client.wait_for_workers(2, timeout=60)
    assert killed
    assert any("recovered" in e for e in events)
    np.testing.assert_allclose(model.coef_, uninterrupted.coef_, rtol=0, atol=1e-10)
    assert model.results_[0].n_iter == uninterrupted.results_[0].n_iter


def test_a_worker_that_lost_its_partitions_is_used_again(client):
    """A worker that answers but no longer holds its partitions (as after a restart at the
    same address): they are built again and the model is unchanged."""
    from linsvm.distributed import _partition

    X, y = text_like(seed=12)
    common = dict(client=client, solver=3, C=1.0, eps=1e-6, snapshot_every=2, max_rounds=500)
    uninterrupted = dist.train(X, y, **common)
    events = []

    def forget(progress):
        events.extend(progress.events)
        if progress.round == 3:
            worker = sorted(client.scheduler_info(n_workers=-1)["workers"])[0]
            # a lambda (pickled by value); a bound method would clear a copy of the table
            client.run(lambda: _partition._HELD.clear(), workers=[worker])

    model = dist.train(X, y, on_round=forget, **common)
    assert any("PartitionLost" in e for e in events)
    np.testing.assert_allclose(model.coef_, uninterrupted.coef_, rtol=0, atol=1e-10)


def test_rows_sorted_by_label_are_spread_over_the_partitions(client):
    """In-memory rows go to the partitions at random: data sorted by label does not give
    partitions of one class (which CoCoA+ trains many times more slowly)."""
    from linsvm.distributed import _partition

    X, y = text_like(seed=13)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    seen = []

    def labels_held():
        return {k: sorted(set(part.y.tolist()))
                for held in _partition._HELD.values() for k, part in held.items()}  # fmt: skip

    def look(progress):
        if progress.round == 0:
            seen.append(client.run(lambda: labels_held()))

    ref = linsvm.train(X, y, solver=1, C=1.0, eps=1e-8, max_iter=100_000)
    model = dist.train(X, y, client=client, solver=1, eps=1e-6, n_partitions=4, on_round=look)
    held = {k: labels for per_worker in seen[0].values() for k, labels in per_worker.items()}
    assert sorted(held) == [0, 1, 2, 3]
    assert all(labels == [-1, 1] for labels in held.values())
    check_against_single_machine(model, ref, X, [])


def test_a_file_in_label_order_is_warned_about(client, tmp_path):
    """Files are split into consecutive rows: partitions of one class are said, not silent."""
    from linsvm.io.libsvm import write_libsvm

    X, y = text_like(n_rows=400, seed=14)
    order = np.argsort(y, kind="stable")
    path = tmp_path / "sorted.svm"
    write_libsvm(X[order], y[order], path)
    with pytest.warns(UserWarning, match="of 2 partitions hold rows of one class only"):
        dist.train(path, client=client, solver=1, eps=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist.train(X, y, client=client, solver=1, eps=1e-2)  # in memory: shuffled, no warning


def test_a_hook_stop_returns_the_last_evaluated_model(client):
    X, y = text_like(seed=7)
    rounds = []

    def stop_at_three(progress):
        rounds.append(progress)
        return progress.round < 3

    with pytest.warns(TrainingInterrupted):
        model = dist.train(X, y, client=client, solver=3, eps=1e-9, on_round=stop_at_three)
    assert model.interrupted
    (r,) = model.results_
    assert r.stop_reason == "interrupted" and r.n_iter == 3
    assert r.primal == pytest.approx(rounds[-1].primal[0], rel=1e-12)


def test_verbose_prints_a_line_per_round(client, capsys):
    X, y = text_like(n_rows=200, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist.train(X, y, client=client, solver=1, eps=1e-3, verbose=True)
    err = capsys.readouterr().err
    assert "round 0: gap" in err and "sent" in err and "received" in err


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(solver=2), "trains -s 1, -s 3 and -s 7, not -s 2"),
        (dict(solver=99), "unknown solver"),
        (dict(C=0), "C must be > 0"),
        (dict(eps=0), "eps must be a number > 0"),
        (dict(local_passes=0), "local_passes must be an integer >= 1"),
        (dict(max_rounds=1.5), "max_rounds must be an integer >= 1"),
        (dict(n_partitions=0), "n_partitions must be an integer >= 1"),
        (dict(snapshot_every=-1), "snapshot_every must be an integer >= 1"),
    ],
)
def test_bad_parameters(client, kwargs, message):
    X, y = text_like(n_rows=50, seed=9)
    with pytest.raises(InvalidInputError, match=message):
        dist.train(X, y, client=client, **kwargs)


def test_bad_data_and_client(client):
    X, y = text_like(n_rows=50, seed=10)
    with pytest.raises(InvalidInputError, match="only one class"):
        dist.train(X, np.ones(50), client=client)
    with pytest.raises(InvalidInputError, match="client must be a dask.distributed.Client"):
        dist.train(X, y, client=8786)  # (an address string is connected to, as train does)
    with pytest.raises(InvalidInputError, match="y must be 1-D"):
        dist.train(X, np.ones((50, 2)), client=client)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same rows as one LIBSVM file, as two files, and as a binary cache of small
    blocks; with the rows as read back (the text keeps every digit)."""
    from linsvm.io.cache import write_cache
    from linsvm.io.libsvm import read_libsvm, write_libsvm

    X, y = text_like(n_classes=3, seed=11)
    folder = tmp_path_factory.mktemp("distributed")
    whole = folder / "whole.svm"
    write_libsvm(X, y, whole)
    write_libsvm(X[:400], y[:400], folder / "first.svm")
    write_libsvm(X[400:], y[400:], folder / "second.svm")
    cache = folder / "whole.cache"
    write_cache(whole, cache, block_bytes=20_000)
    X_read, y_read = read_libsvm(whole)[:2]
    return {
        "whole": whole,
        "parts": [folder / "first.svm", folder / "second.svm"],
        "cache": cache,
        "X": X_read,
        "y": y_read,
    }


@pytest.fixture(scope="module")
def files_reference(files):
    return linsvm.train(files["X"], files["y"], solver=1, C=1.0, eps=1e-8, max_iter=100_000)


@pytest.mark.parametrize("source", ["whole", "parts", "cache"])
def test_workers_read_their_own_shards(client, files, files_reference, source):
    model = dist.train(files[source], client=client, solver=1, eps=1e-6, max_rounds=500)
    check_against_single_machine(model, files_reference, files["X"], [])


def test_dask_collections(client, files, files_reference):
    da = pytest.importorskip("dask.array")
    X, y = files["X"], files["y"]
    X_dask = da.from_array(X, chunks=(150, X.shape[1]), asarray=False)
    y_dask = da.from_array(y, chunks=150)
    model = dist.train(X_dask, y_dask, client=client, solver=1, eps=1e-6, max_rounds=500)
    check_against_single_machine(model, files_reference, X, [])


@pytest.mark.filterwarnings("ignore:reaching max number of iterations")
def test_dask_collections_keep_the_labels_type(client):
    """Their chunks' labels were cast to float64: booleans came back as 0.0 and 1.0, and two
    integers above 2^53 were one class."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 6))
    positive = X[:, 0] + 0.3 * rng.standard_normal(300) > 0
    for y in (positive, np.where(positive, 2**53 + 1, 2**53)):
        model = dist.train(da.from_array(X, chunks=(100, 6)), da.from_array(y, chunks=100),
                           client=client, max_rounds=5)  # fmt: skip
        assert model.labels_.dtype == y.dtype and set(model.labels_) == set(y)
        assert model.predict(X).dtype == y.dtype
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    two = dd.from_pandas(pd.DataFrame({"a": positive, "b": positive}), npartitions=3)
    with pytest.raises(InvalidInputError, match="y must be 1-D"):
        dist.train(dd.from_pandas(pd.DataFrame(X), npartitions=3), two, client=client)


def test_bad_values_are_named_by_their_row_in_the_data(client):
    """Values were checked per partition, which named a row of its own (row 131 for row 250
    of X in memory, row 150 for row 250 of a dask array); complex chunks trained on their
    real parts, a string column or a missing label raised from deep inside."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 12))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    huge = X.copy()
    huge[250, 10] = 1e300
    with pytest.raises(InvalidInputError, match=r"row 250, column 10"):
        dist.train(huge, y, client=client)
    nan = X.copy()
    nan[250, 10] = np.nan
    with pytest.raises(InvalidInputError, match=r"NaN or infinity \(row 250, column 10\)"):
        dist.train(da.from_array(nan, chunks=(100, 12)), da.from_array(y, chunks=100),
                   client=client)  # fmt: skip
    with pytest.raises(InvalidInputError, match="complex"):
        dist.train(da.from_array(X + 1j, chunks=(100, 12)), da.from_array(y, chunks=100),
                   client=client)  # fmt: skip
    labels = y.astype(object)
    labels[301] = None
    with pytest.raises(InvalidInputError, match=r"missing label \(row 301\)"):
        dist.train(da.from_array(X, chunks=(100, 12)), da.from_array(labels, chunks=100),
                   client=client)  # fmt: skip
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"]).assign(c="text")
    with pytest.raises(InvalidInputError, match="must be numeric"):
        dist.train(dd.from_pandas(frame, npartitions=2),
                   dd.from_pandas(pd.Series(y), npartitions=2), client=client)  # fmt: skip


def test_partitions_without_rows_do_not_slow_the_rounds(client, tmp_path):
    """A 4-line file cut into 8 byte ranges holds 4 partitions of no rows; CoCoA+'s
    sigma' = K counted them, halving every step (60 rounds against 31)."""
    tiny = tmp_path / "tiny.svm"
    tiny.write_text("1 1:0.5 2:1\n-1 1:-0.5 3:1\n1 2:0.2\n-1 3:0.7\n")
    options = dict(client=client, solver=1, eps=1e-6)
    from_file = linsvm.train(tiny, place_options={"n_partitions": 8}, **options)
    X, y = linsvm.read_libsvm(tiny)[:2]
    in_memory = linsvm.train(X, y, place_options={"n_partitions": 4}, **options)
    assert from_file.results_[0].figures["n_partitions"] == 8
    assert from_file.results_[0].n_iter == in_memory.results_[0].n_iter


def test_a_negative_seed_trains_as_in_memory(client):
    """seed=-1 trains in memory and from files; rows in memory were dealt to the partitions
    by NumPy's generator, which refused it."""
    X, y = text_like(n_rows=200, seed=5)
    a = linsvm.train(X, y, client=client, seed=-1, max_iter=5)
    b = linsvm.train(X, y, client=client, seed=-1, max_iter=5)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_a_bad_file_is_the_readers_error(client, tmp_path):
    from linsvm.errors import DataFormatError

    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n-1 2:x\n")
    with pytest.raises(DataFormatError, match="bad.svm:2"):
        dist.train(bad, client=client)
    with pytest.raises(InvalidInputError):
        dist.train(tmp_path / "missing.svm", client=client)


def test_a_local_cluster_leaves_ctrl_c_to_this_process():
    """The workers of local:N are this process's children: a Ctrl-C at the terminal reaches
    them too, and they died mid-round. They start with SIGINT ignored."""
    client, cluster = dist.client_for("local:1")
    try:
        handlers = client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN)
        assert list(handlers.values()) == [True]
    finally:
        client.close()
        cluster.close()
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # (this process's restored)


_CTRL_C_WHILE_WORKERS_START = """
import multiprocessing, os, signal, sys
import numpy as np
import distributed
import linsvm
real = distributed.LocalCluster.wait_for_workers
def ctrl_c_then_wait(self, *args, **kwargs):  # (the workers spawned, not yet started)
    os.kill(os.getpid(), signal.SIGINT)
    return real(self, *args, **kwargs)
distributed.LocalCluster.wait_for_workers = ctrl_c_then_wait
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 5))
y = np.where(X[:, 0] > 0, 1, -1)
try:
    linsvm.train(X, y, client="local:1", solver=3, eps=1e-9, max_iter=100_000)
    print("trained to the end")
except KeyboardInterrupt:
    print("interrupted;", len(multiprocessing.active_children()), "workers left")
"""


def test_a_ctrl_c_while_local_workers_start_stops_the_run():
    """This process ignored SIGINT while its workers started (1-2 s), so that they inherit
    it ignored: a Ctrl-C then was lost and the run trained to its end. It ignores it only
    until they are spawned; a Ctrl-C while they start ends the call, the cluster closed."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _CTRL_C_WHILE_WORKERS_START],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.stdout == "interrupted; 0 workers left\n", run.stderr[-3000:]


_NO_MAIN_GUARD = """
import multiprocessing
import numpy as np
import linsvm
from linsvm.distributed import cocoa
cocoa.LOCAL_WORKERS_START_SECONDS = 2.0
X = np.random.default_rng(0).standard_normal((100, 5))
y = np.where(X[:, 0] > 0, 1, -1)
try:
    linsvm.train(X, y, client="local:1", solver=1)
except linsvm.errors.InvalidInputError as error:
    print(error)
print(len(multiprocessing.active_children()), "workers left")
"""


def test_local_workers_that_cannot_start_are_a_one_line_error(tmp_path):
    """A script without the main guard: each worker imports it, starts a cluster of its own,
    fails, and its nanny starts it again; the run waited for them forever."""
    import subprocess
    import sys

    script = tmp_path / "no_guard.py"
    script.write_text(_NO_MAIN_GUARD)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)  # fmt: skip
    # (a worker that imported the script before it failed prints the same lines)
    lines = set(run.stdout.splitlines())
    assert len(lines) == 2 and "0 workers left" in lines, run.stderr[-3000:]
    error = (lines - {"0 workers left"}).pop()
    assert error.startswith("local:1: the workers did not start in 2 s")
    assert 'if __name__ == "__main__":' in error


def test_labels_width_and_weights_are_checked_before_any_round(client, monkeypatch):
    from linsvm import _memory

    X, y = text_like(n_rows=200, seed=4)

    def refuse(what):
        def check(value):
            raise InvalidInputError(f"refused {what} {value!r}")
        return check

    rounds = []
    train = dist.train_cocoa
    with pytest.raises(InvalidInputError, match="refused labels"):
        train(X, y, client=client, labels_check=refuse("labels"), on_round=rounds.append)
    with pytest.raises(InvalidInputError, match="refused width 4000"):
        train(X, y, client=client, width_check=refuse("width"), on_round=rounds.append)
    monkeypatch.setattr(_memory, "allocatable_memory", lambda: 1000)
    with pytest.raises(InvalidInputError, match="do not fit in this process"):
        train(X, y, client=client, on_round=rounds.append)
    assert rounds == []


def test_distributed_train_takes_local_n_as_linsvm_train_does():
    """Its docstring says it is linsvm.train(source, y, client=client, ...), which takes
    "local:N"; it refused the string."""
    X, y = make_sparse_problem(n_rows=80, n_features=5, seed=3, density=0.6)
    model = dist.train(X, y, client="local:1", max_rounds=3)
    assert model.coef_.shape == (1, 5)
    with pytest.raises(InvalidInputError, match="Client"):
        dist.train(X, y, client=None)


def test_place_options_are_the_places_own():
    """place_options went to the runner as they were: an unknown key, or one that train sets
    itself (eps, the rounds), was a TypeError from deep inside; refused before any cluster
    starts or file is read."""
    X, y = text_like(n_rows=50)
    for where, options in (({"client": "local:1"}, {"inner_iter": 3}),
                           ({"client": "local:1"}, {"max_rounds": 5}),
                           ({"memory": "1G"}, {"eps": 0.1})):  # fmt: skip
        with pytest.raises(InvalidInputError, match="place_options with .* are .*; not"):
            linsvm.train("no/such/file" if "memory" in where else X,
                         None if "memory" in where else y, place_options=options, **where)


def test_rounds_and_gap_options_are_checked_in_the_callers_words(client):
    """dist.train's max_iter or place_options were a TypeError (its own arguments stand for
    them); linsvm.train's max_iter=0 was refused as "max_rounds"; an eps of 1 or more
    stopped before the first round (the gap is 1 at alpha = 0) with w = 0 called
    converged."""
    X, y = text_like(n_rows=60)
    for options, match in (({"max_iter": 5}, "takes no max_iter: max_rounds is"),
                           ({"place_options": {}}, "takes no place_options"),
                           ({"max_rounds": 0}, "max_rounds must be an integer >= 1")):  # fmt: skip
        with pytest.raises(InvalidInputError, match=match):
            dist.train(X, y, client=client, **options)
    with pytest.raises(InvalidInputError, match=r"max_iter \(the cap on the cluster's rounds\)"):
        linsvm.train(X, y, client=client, max_iter=0)
    for eps in (1.0, 1.5):
        with pytest.raises(InvalidInputError, match="relative duality gap to stop at, must be < 1"):
            linsvm.train(X, y, client=client, eps=eps)


def test_classes_of_cost_zero_have_no_gap_to_close(client):
    """Every row's cost 0: P = D = 0, and the relative gap (P - D) / P was NaN every round
    (a RuntimeWarning each) until the rounds' cap."""
    import warnings

    X, y = text_like(n_rows=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = linsvm.train(X, y, client=client, class_weight={1: 0.0, -1: 0.0}, max_iter=50)
    result = model.results_[0]
    assert result.converged and result.n_iter <= 2 and not np.any(model.coef_)


@pytest.mark.filterwarnings("ignore:reaching max number of iterations")
def test_a_compressed_file_cut_into_fewer_partitions_says_so(client, tmp_path):
    """A compressed file is one shard whatever --partitions asks: the run used one worker
    and said nothing."""
    import gzip

    X, y = text_like(n_rows=80)
    plain = tmp_path / "d.svm"
    linsvm.write_libsvm(X, y, plain)
    packed = tmp_path / "d.svm.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.warns(UserWarning, match=r"1 partitions of the 4 asked: .* \(d.svm.gz\)"):
        dist.train(packed, client=client, n_partitions=4, max_rounds=3)
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".* partitions of the .* asked")
        warnings.filterwarnings("ignore", message="reaching max number of iterations")
        dist.train(plain, client=client, n_partitions=4, max_rounds=3)


@pytest.mark.filterwarnings("ignore:reaching max number of iterations")
def test_refused_chunks_come_back_as_values_and_pydata_sparse_chunks_train(client):
    """A chunk refused on a worker was raised there, and the worker printed its traceback
    ("Compute Failed") before the client's one-line error; pydata sparse chunks (Dask's own
    sparse arrays) were refused as not numeric."""
    da = pytest.importorskip("dask.array")
    from linsvm.distributed import shards
    from linsvm.distributed._partition import Failed

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 8))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    bad = X.copy()
    bad[250, 3] = np.nan
    made = shards._shard_or_error([bad[200:]], [y[200:]], 200)
    assert isinstance(made, Failed) and "row 250, column 3" in str(made.error)
    def failures_logged() -> int:
        return sum("Compute Failed" in message for lines in client.get_worker_logs().values()
                   for _, message in lines)  # fmt: skip

    before = failures_logged()
    with pytest.raises(InvalidInputError, match=r"NaN or infinity \(row 250, column 3\)"):
        dist.train(da.from_array(bad, chunks=(100, 8)), da.from_array(y, chunks=100),
                   client=client)  # fmt: skip
    assert failures_logged() == before
    sparse = pytest.importorskip("sparse")
    X[np.abs(X) < 0.8] = 0.0
    chunks = da.from_array(sparse.COO.from_numpy(X), chunks=(100, 8), asarray=False)
    model = dist.train(chunks, da.from_array(y, chunks=100), client=client, max_rounds=20)
    dense = dist.train(da.from_array(X, chunks=(100, 8)), da.from_array(y, chunks=100),
                       client=client, max_rounds=20)  # (the same partitions)  # fmt: skip
    np.testing.assert_array_equal(model.coef_, dense.coef_)
