"""n_jobs: one-vs-rest sub-problems in threads give the same model as one at a time."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import main as cli_main
from linsvm.errors import InvalidInputError
from linsvm.io import write_libsvm
from linsvm.parallel import effective_n_jobs, usable_cores


def _four_classes(seed: int = 0, n_rows: int = 240, n_features: int = 12):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(4, n_features))
    y = rng.integers(0, 4, n_rows)
    X = centres[y] + rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.3] = 0.0
    return sp.csr_matrix(X), np.array(["a", "b", "c", "d"])[y]


@pytest.mark.parametrize("solver", [0, 1, 2, 3, 5, 6, 7, "sgd-s", "pcd"])
def test_threads_give_the_same_model(solver):
    X, y = _four_classes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = linsvm.train(X, y, solver=solver, bias=1.0, seed=7)
        two = linsvm.train(X, y, solver=solver, bias=1.0, seed=7, n_jobs=2)
        every = linsvm.train(X, y, solver=solver, bias=1.0, seed=7, n_jobs=-1)
    for other in (two, every):
        np.testing.assert_array_equal(other.labels_, one.labels_)
        np.testing.assert_array_equal(other.coef_, one.coef_)
        np.testing.assert_array_equal(other.intercept_, one.intercept_)
        assert [r.n_iter for r in other.results_] == [r.n_iter for r in one.results_]
        assert [r.primal for r in other.results_] == [r.primal for r in one.results_]


def test_warnings_of_threaded_sub_problems_reach_the_caller():
    X, y = _four_classes()
    with pytest.warns(linsvm.ConvergenceWarning):
        linsvm.train(X, y, solver=3, max_iter=1, n_jobs=2)


@pytest.mark.parametrize(
    "n_jobs, expected",
    [(None, 1), (1, 1), (3, 3), (np.int64(2), 2), (-1, usable_cores())],
)
def test_effective_n_jobs(n_jobs, expected):
    assert effective_n_jobs(n_jobs) == expected


def test_all_cores_are_those_the_process_may_use(monkeypatch):
    """-1 counts the cores of the process's affinity (taskset, a container's cpuset), as
    joblib does, not the machine's."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert effective_n_jobs(-1) == 1 and effective_n_jobs(-2) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert effective_n_jobs(-1) == 4 and effective_n_jobs(-2) == 3


def test_effective_n_jobs_never_below_one():
    assert effective_n_jobs(-1000) == 1


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_bad_n_jobs_is_a_clear_error(bad):
    X, y = _four_classes()
    with pytest.raises(InvalidInputError, match="n_jobs"):
        linsvm.train(X, y, n_jobs=bad)


@pytest.mark.parametrize(
    "make",
    [
        lambda n: linsvm.LinearSVC(n_jobs=n, random_state=0),
        lambda n: linsvm.LinearSVC(loss="hinge", n_jobs=n, random_state=0),
        lambda n: linsvm.LogisticRegression(n_jobs=n, random_state=0),
        lambda n: linsvm.LogisticRegression(dual=True, n_jobs=n, random_state=0),
    ],
)
def test_estimators_use_n_jobs_without_changing_the_fit(make):
    X, y = _four_classes(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = make(None).fit(X, y)
        two = make(2).fit(X, y)
    np.testing.assert_array_equal(two.coef_, one.coef_)
    np.testing.assert_array_equal(two.intercept_, one.intercept_)
    np.testing.assert_array_equal(two.predict(X), one.predict(X))
    if hasattr(one, "predict_proba"):
        np.testing.assert_array_equal(two.predict_proba(X), one.predict_proba(X))


def test_cli_m_threads_write_the_same_model(tmp_path):
    X, y = _four_classes(seed=5)
    labels = np.searchsorted(np.unique(y), y) + 1
    data = tmp_path / "train.txt"
    write_libsvm(X, labels, data)
    assert cli_main(["train", "-q", "-s", "3", str(data), str(tmp_path / "one.model")]) == 0
    threaded = ["train", "-q", "-s", "3", "-m", "2", str(data), str(tmp_path / "m2.model")]
    assert cli_main(threaded) == 0
    assert (tmp_path / "one.model").read_text() == (tmp_path / "m2.model").read_text()
    model = linsvm.load_model(tmp_path / "m2.model")
    assert model.coef_.shape == (4, X.shape[1])


@pytest.mark.parametrize("value", ["0", "two"])
def test_cli_bad_m_is_a_one_line_error(tmp_path, capsys, value):
    X, y = _four_classes()
    data = tmp_path / "train.txt"
    write_libsvm(X, np.searchsorted(np.unique(y), y) + 1, data)
    code = cli_main(["train", "-m", value, str(data), str(tmp_path / "x.model")])
    assert code != 0
    err = capsys.readouterr().err.strip()
    assert "-m" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "n_classes, n_jobs, within",
    [(2, 2, 2), (2, 1, 1), (2, None, 1), (4, 2, 1), (4, 8, 2), (3, 4, 1), (3, 7, 2)],
)
def test_threads_go_to_sub_problems_then_within_them(monkeypatch, n_classes, n_jobs, within):
    """n_jobs threads: first one-vs-rest sub-problems side by side, then what is left over to
    each sub-problem's solver; never more busy threads than n_jobs."""
    import threading

    import linsvm.solvers.newton as newton

    serial_solve = newton.solve_lr_primal
    seen, running, busiest = [], [0], [0]
    lock = threading.Lock()

    def recording_solve(sub, hook=None):
        with lock:
            seen.append(sub.n_threads)
            running[0] += 1
            busiest[0] = max(busiest[0], running[0] * sub.n_threads)
        try:
            return serial_solve(sub, hook)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(newton, "solve_lr_primal", recording_solve)
    X, y = _four_classes()
    keep = np.isin(y, np.array(["a", "b", "c", "d"])[:n_classes])
    linsvm.train(X[keep], y[keep], solver=0, n_jobs=n_jobs)
    assert seen == [within] * (1 if n_classes == 2 else n_classes)
    assert busiest[0] <= effective_n_jobs(n_jobs)
