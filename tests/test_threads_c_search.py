"""The C search (``train -C``) with its folds side by side (``n_jobs``).

- the path (every C and its CV score, to the bit), the best C (and p for -s 11) and whether
  the largest C was reached are those of the serial search, for -s 0, -s 2 and -s 11, two and
  three classes, with an early stop of the path;
- each fold keeps its own warm-start chain: a fold at C starts from that fold's model at C / 2
  (checked through the solves' initial objective);
- Ctrl-C during a threaded search ends the whole search with KeyboardInterrupt, soon, and
  restores the signal handlers.
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from conftest import make_sparse_problem

from linsvm import interrupts
from linsvm.model_selection import find_parameter_C, find_parameters


def same_search(a, b) -> None:
    assert a.path == b.path  # (C, score) pairs, exactly
    assert (a.best_C, a.best_rate, a.best_p) == (b.best_C, b.best_rate, b.best_p)
    assert a.reached_max_C == b.reached_max_C


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_threaded_search_walks_the_serial_path(solver, n_classes):
    X, y = make_sparse_problem(n_rows=240, n_features=20, n_classes=n_classes, seed=8)
    serial = find_parameter_C(X, y, solver=solver, n_folds=4, verbose=False, bias=1.0)
    for n_jobs in (2, 3, -1):
        threaded = find_parameter_C(
            X, y, solver=solver, n_folds=4, verbose=False, bias=1.0, n_jobs=n_jobs
        )
        same_search(threaded, serial)
    assert len(serial.path) >= 3


def test_threaded_search_stops_early_as_the_serial_one():
    # separable data with a bias: w stops changing long before MAX_C, the path stops early
    X, y = make_sparse_problem(n_rows=120, n_features=15, seed=2, noise=0.0)
    options = {"solver": 2, "n_folds": 3, "verbose": False, "eps": 0.1, "bias": 1.0}
    serial = find_parameter_C(X, y, **options)
    threaded = find_parameter_C(X, y, **options, n_jobs=2)
    assert not serial.reached_max_C  # (the early stop is what this test is about)
    same_search(threaded, serial)


def test_threaded_search_of_C_and_p_for_svr():
    X, _ = make_sparse_problem(n_rows=150, n_features=12, seed=3)
    rng = np.random.default_rng(3)
    y = X @ rng.normal(size=12) + 0.1 * rng.normal(size=150)
    top = 3 * np.max(np.abs(y)) / 20  # p on 4 grid points only, to keep the test short
    serial = find_parameters(X, y, solver=11, n_folds=3, initial_p=top, verbose=False)
    threaded = find_parameters(X, y, solver=11, n_folds=3, initial_p=top, verbose=False, n_jobs=2)
    same_search(threaded, serial)


def test_each_fold_keeps_its_warm_start_chain():
    X, y = make_sparse_problem(n_rows=200, n_features=15, seed=4)
    starts: dict[int, list[float]] = {}
    lock = threading.Lock()

    def hook(progress):
        if progress.iteration == 0:  # the start of a solve: P at its initial w
            with lock:
                starts.setdefault(threading.get_ident(), []).append(progress.figures["f"])

    serial_starts = []

    def serial_hook(progress):
        if progress.iteration == 0:
            serial_starts.append(progress.figures["f"])

    find_parameter_C(X, y, solver=0, n_folds=2, verbose=False, hook=serial_hook)
    find_parameter_C(X, y, solver=0, n_folds=2, verbose=False, hook=hook, n_jobs=2)
    # the serial search alternates fold 0, fold 1 at each C; the threaded one runs the same
    # solves from the same starts, in whatever thread
    threaded_starts = sorted(f for fs in starts.values() for f in fs)
    assert threaded_starts == sorted(serial_starts)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_ends_the_whole_threaded_search(n_jobs, monkeypatch):
    X, y = make_sparse_problem(n_rows=300, n_features=25, seed=5)
    calls = []
    sent = []
    taken = []  # how many hook calls had been made when the handler took the signal

    class RecordedStop(interrupts.StopRequest):
        # The handler runs in the main thread only when it next runs Python (with threads,
        # up to the search's poll interval later): count from there, not from the kill.
        def __setattr__(self, name, value):
            if name == "signal" and value is not None:
                taken.append(len(calls))
            super().__setattr__(name, value)

    monkeypatch.setattr(interrupts, "StopRequest", RecordedStop)

    def hook(progress):
        calls.append(progress.iteration)
        if len(calls) == 6 and not sent:
            sent.append(len(calls))
            os.kill(os.getpid(), signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)  # (SIG_IGN where the suite runs in background)
    with pytest.raises(KeyboardInterrupt):
        find_parameter_C(
            X, y, solver=2, n_folds=4, verbose=False, eps=1e-12, hook=hook, n_jobs=n_jobs
        )
    assert sent and taken
    # the search stopped at once: once the signal was taken, each of the C's four folds made
    # at most one more call (the solves running then, and those queued, stop at their next)
    assert len(calls) <= taken[0] + 4
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored
