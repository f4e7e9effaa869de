"""linsvm's warnings when it is called from several threads at once.

Where linsvm leaves its own warnings unsaid for what it calls (the estimators' convergence
warnings, which give way to scikit-learn's; the folds of a cross-validation), that holds on
the calling thread and the threads linsvm starts from it, not the process: the warning
filters of the process stay as they were, and another thread's warnings are issued.
"""

from __future__ import annotations

import sys
import threading
import warnings

import pytest
from conftest import make_sparse_problem

import linsvm
from linsvm.problems import silenced, warn
from linsvm.training import ConvergenceWarning


def test_what_one_thread_silences_another_still_says():
    entered, done = threading.Event(), threading.Event()

    def quiet_caller():
        with silenced(ConvergenceWarning):
            entered.set()
            done.wait(30)

    thread = threading.Thread(target=quiet_caller)
    thread.start()
    try:
        assert entered.wait(30)
        with pytest.warns(ConvergenceWarning, match="said"):
            warn("said", ConvergenceWarning)
    finally:
        done.set()
        thread.join()
    with silenced(ConvergenceWarning), warnings.catch_warnings():
        warnings.simplefilter("error")
        warn("unsaid", ConvergenceWarning)  # (an error if it were issued)


def test_folds_on_two_threads_leave_the_process_warnings_as_they_were():
    X, y = make_sparse_problem(n_rows=1500, n_features=40, seed=4)
    filters, show = list(warnings.filters), warnings.showwarning
    threads = [threading.Thread(target=linsvm.cross_validation, args=(X, y, 3),
                                kwargs={"solver": solver}) for solver in (1, 3)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert warnings.filters == filters and warnings.showwarning is show
    with pytest.warns(ConvergenceWarning):
        linsvm.train(X, y, solver=1, max_iter=1)


def test_a_warning_points_at_the_users_call():
    # (not at a line inside linsvm, however deep the call that warns)
    X, y = make_sparse_problem(n_rows=120, n_features=10, n_classes=3, seed=4)
    with pytest.warns(ConvergenceWarning) as caught:
        linsvm.train(X, y, solver=1, max_iter=1, n_jobs=1)
    assert {w.filename for w in caught} == {__file__}


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_warning_from_linsvms_threads_points_at_the_users_call(n_jobs):
    """The sub-problems on two threads warned at the thread machinery's line
    (concurrent/futures/thread.py), so a filter by the user's module stopped working."""
    X, y = make_sparse_problem(n_rows=120, n_features=10, n_classes=3, seed=4)
    with pytest.warns(ConvergenceWarning) as caught:
        line = sys._getframe().f_lineno + 1
        linsvm.train(X, y, solver=1, max_iter=1, n_jobs=n_jobs, fallback=False)
    assert {(w.filename, w.lineno) for w in caught} == {(__file__, line)} and len(caught) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=ConvergenceWarning, module=__name__)
        linsvm.train(X, y, solver=1, max_iter=1, n_jobs=n_jobs, fallback=False)
    assert not caught
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        linsvm.cross_validation(X, y, 3, solver=1, max_iter=1, n_jobs=n_jobs)
    assert {w.filename for w in caught} <= {__file__}


_CAPPED_ON_THREADS = """
import numpy as np, linsvm
rng = np.random.default_rng(0)
X = rng.standard_normal((90, 5))
y = np.repeat([1, 2, 3], 30)
model = linsvm.train(X, y, solver=3, max_iter=1, n_jobs=2)
print("trained", len(model.results_))
"""


@pytest.mark.parametrize("how", ["-c", "stdin"])
def test_a_warning_from_threads_under_python_c_or_stdin(how):
    """Code run by `python -c` or read from stdin has no source file: shown at the user's
    line from linsvm's threads, the warning asked the module's loader for its source and
    raised ImportError, losing the model."""
    import subprocess

    args, stdin = ([sys.executable, "-c", _CAPPED_ON_THREADS], None) if how == "-c" else (
        [sys.executable, "-"], _CAPPED_ON_THREADS)  # fmt: skip
    run = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout == "trained 3\n", run.stderr
    assert run.stderr.count("ConvergenceWarning: reaching max number of iterations") == 3
