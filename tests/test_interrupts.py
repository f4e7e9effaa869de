"""Ctrl-C, SIGTERM, hooks that stop, checkpoints and resuming, through ``linsvm.train``.

- a SIGINT or SIGTERM during training stops every solver at the end of its current outer
  iteration: ``train`` returns the current iterate, marked interrupted and not converged, with
  a duality gap that is still a true bound (>= 0), and warns;
- a hook returning False does the same;
- a checkpoint written when the run was stopped resumes to the very model of an uninterrupted
  run (same seed), for the dual solvers, the primal ones, a fallback in progress, one-vs-rest
  with threads and with some sub-problems already finished; a checkpoint of another problem
  or of other options is refused with a one-line error, and so is a damaged file;
- the signal handlers in place before ``train`` are back after it.

The signal is raised from inside a hook at a chosen iteration (``os.kill`` on the process
itself), so the tests are deterministic: Python runs the handler right after ``os.kill``
returns, and the solver stops at that same return to Python.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import linsvm
from linsvm.errors import InvalidInputError
from linsvm.training import ConvergenceWarning, TrainingInterrupted


@pytest.fixture(scope="module")
def problem():
    """A binary problem that takes dozens of outer iterations at a tight tolerance."""
    rng = np.random.default_rng(7)
    import scipy.sparse as sp

    X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
    y = np.where(X @ rng.standard_normal(40) + 0.3 * rng.standard_normal(600) > 0, 1, -1)
    return X, y


@pytest.fixture(scope="module")
def multiclass():
    rng = np.random.default_rng(11)
    import scipy.sparse as sp

    X = sp.random(500, 30, density=0.25, format="csr", random_state=rng)
    y = np.argmax(X @ rng.standard_normal((30, 4)) + 0.2 * rng.standard_normal((500, 4)), 1)
    return X, y


def signal_at(iteration: int, signum: int = signal.SIGINT, index: int | None = None,
              settle: float = 0.0):  # fmt: skip
    """A hook that sends ``signum`` to this process when a solver reaches ``iteration``.
    ``settle``: seconds the hook then sleeps (a hook run in a worker thread: the main thread
    runs the signal's handler when it gets the GIL, and a tiny sub-problem may otherwise end
    first on a busy machine)."""
    sent = []

    def hook(progress):
        if progress.iteration >= iteration and not sent and index in (None, progress.index):
            sent.append(progress.iteration)
            os.kill(os.getpid(), signum)
            time.sleep(settle)

    hook.sent = sent
    return hook


def quiet_train(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", TrainingInterrupted)
        return linsvm.train(*args, **kwargs)


@pytest.mark.parametrize("solver", [1, 3, 2])
def test_signal_returns_the_current_iterate(problem, solver):
    X, y = problem
    signum = signal.SIGINT  # (SIGTERM is passed on after the stop: a subprocess's test below)
    hook = signal_at(3, signum)
    with pytest.warns(TrainingInterrupted, match=signal.Signals(signum).name):
        model = linsvm.train(X, y, solver=solver, eps=1e-10, max_iter=10_000, hook=hook)
    assert hook.sent == [3]
    (result,) = model.results_
    assert model.interrupted
    assert result.stop_reason == "interrupted" and not result.converged
    assert result.n_iter == 3  # stopped at the end of the iteration the signal came in
    full = quiet_train(X, y, solver=solver, eps=1e-10, max_iter=10_000)
    assert not full.interrupted
    # a true bound: the interrupted run's gap is >= 0 and its primal is above the optimum
    assert result.gap >= 0 or np.isnan(result.gap)
    assert result.primal >= full.results_[0].primal * (1 - 1e-12)


_SIGTERM_SCRIPT = """
import os, signal, sys, warnings
import numpy as np, scipy.sparse as sp
import linsvm
rng = np.random.default_rng(7)
X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
y = np.where(X @ rng.standard_normal(40) > 0, 1, -1)
def hook(progress):
    if progress.iteration == 3:
        os.kill(os.getpid(), signal.SIGTERM)
warnings.simplefilter("ignore")
if sys.argv[2] == "own handler":
    signal.signal(signal.SIGTERM, lambda signum, frame: print("own handler", flush=True))
model = linsvm.train(X, y, eps=1e-10, max_iter=10_000, hook=hook, checkpoint=sys.argv[1])
print("returned", model.results_[0].n_iter, model.interrupted, flush=True)
"""


@pytest.mark.parametrize("handler", ["default", "own handler"])
def test_sigterm_ends_the_process_once_the_state_is_saved(tmp_path, handler):
    """A SIGTERM with its default action stops the solver, the checkpoint is written, and the
    process then ends by the signal, as it would without linsvm; a program's own SIGTERM
    handler is left alone (called, and training goes on)."""
    checkpoint = tmp_path / "run.ckpt"
    run = subprocess.run([sys.executable, "-c", _SIGTERM_SCRIPT, str(checkpoint), handler],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    if handler == "default":
        assert run.returncode == -signal.SIGTERM and run.stdout == "", run.stderr
        assert checkpoint.exists()
    else:
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert lines[0] == "own handler" and lines[-1].endswith("False")


def test_handlers_are_restored(problem):
    X, y = problem
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    quiet_train(X, y, solver=3, hook=signal_at(2))
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_hook_returning_false_stops(problem):
    X, y = problem
    seen = []

    def hook(progress):
        seen.append(progress.iteration)
        return progress.iteration < 4

    with pytest.warns(TrainingInterrupted, match="hook"):
        model = linsvm.train(X, y, solver=1, eps=1e-10, hook=hook)
    assert seen == [1, 2, 3, 4] and model.results_[0].n_iter == 4 and model.interrupted


def same_model(a: linsvm.Model, b: linsvm.Model) -> None:
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.bias_weights_, b.bias_weights_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    for ra, rb in zip(a.results_, b.results_, strict=True):
        assert ra.solver == rb.solver and ra.n_iter == rb.n_iter
        assert ra.converged == rb.converged
        if ra.alpha is not None or rb.alpha is not None:
            np.testing.assert_array_equal(ra.alpha, rb.alpha)


@pytest.mark.parametrize(
    "solver, options",
    [
        (1, {}),
        (3, {"bias": 1.0}),
        (3, {"shrinking": False, "bucket_size": 4}),
        (2, {}),
        (0, {"bias": 1.0}),
        (7, {}),
    ],
)
def test_resume_gives_the_uninterrupted_model(problem, tmp_path, solver, options):
    X, y = problem
    path = tmp_path / "run.ckpt"
    options = dict(options, solver=solver, eps=1e-6, seed=5)
    stopped = quiet_train(X, y, checkpoint=path, hook=signal_at(2), **options)
    assert stopped.interrupted and path.exists()
    resumed = quiet_train(X, y, resume=path, **options)
    full = quiet_train(X, y, **options)
    assert not resumed.interrupted
    same_model(resumed, full)


def test_a_hook_that_stops_the_run_saves_its_state(problem, tmp_path):
    """A hook returning False stops the run as a signal does: the checkpoint holds the
    state, and the resumed run is the uninterrupted one."""
    X, y = problem
    path = tmp_path / "run.ckpt"
    options = dict(solver=1, eps=1e-6, seed=5)
    stopped = quiet_train(X, y, checkpoint=path, hook=lambda p: p.iteration < 3, **options)
    assert stopped.interrupted and stopped.results_[0].n_iter == 3
    iterations = []
    resumed = quiet_train(X, y, resume=path, hook=lambda p: iterations.append(p.iteration),
                          **options)  # fmt: skip
    assert iterations[0] == 4
    same_model(resumed, quiet_train(X, y, **options))


def test_resume_during_the_fallback(problem, tmp_path):
    """-s 1 reaches its cap, -s 2 takes over, the run is stopped inside -s 2 and resumed."""
    X, y = problem
    path = tmp_path / "run.ckpt"
    options = dict(solver=1, eps=1e-8, max_iter=3, C=50.0)
    hook = signal_at(5)  # the dual stops at its cap of 3: the signal comes in the fallback
    stopped = quiet_train(X, y, checkpoint=path, hook=hook, **options)
    assert stopped.results_[0].solver == 2 and stopped.interrupted
    resumed = quiet_train(X, y, resume=path, **options)
    full = quiet_train(X, y, **options)
    assert full.results_[0].solver == 2
    same_model(resumed, full)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_resume_one_vs_rest(multiclass, tmp_path, n_jobs):
    X, y = multiclass
    path = tmp_path / "run.ckpt"
    options = dict(solver=3, eps=1e-6, n_jobs=n_jobs, seed=3)
    # the signal comes in sub-problem 2: one at a time, 0 and 1 are finished and saved as
    # they are; in threads, whatever runs then stops and is saved with its state
    hook = signal_at(2, index=2, settle=0.3 if n_jobs > 1 else 0.0)
    stopped = quiet_train(X, y, checkpoint=path, hook=hook, **options)
    assert stopped.interrupted
    if n_jobs == 1:
        assert [r.stop_reason != "interrupted" for r in stopped.results_] == [1, 1, 0, 0]
    resumed = quiet_train(X, y, resume=path, **options)
    same_model(resumed, quiet_train(X, y, **options))


def test_periodic_checkpoint_without_interrupt(problem, tmp_path):
    X, y = problem
    path = tmp_path / "run.ckpt"
    model = quiet_train(X, y, solver=3, eps=1e-6, checkpoint=path, checkpoint_every=1e-9)
    assert path.exists()  # written as it went and at the end; resuming the end is the model
    same_model(quiet_train(X, y, solver=3, eps=1e-6, resume=path), model)


def test_a_checkpoint_path_that_cannot_be_written_is_refused_before_training(problem,
                                                                            tmp_path):  # fmt: skip
    X, y = problem
    with pytest.raises(InvalidInputError, match=r"checkpoint .*missing.*: No such file"):
        linsvm.train(X, y, checkpoint=tmp_path / "missing" / "run.ckpt",
                     hook=lambda p: pytest.fail("trained before the path was checked"))


def test_a_threaded_runs_checkpoint_resumes_on_its_thread_count_only(tmp_path):
    """The threads decide a threaded dual solve's path: a resume on another count would give
    neither run's model, and is refused."""
    from conftest import make_sparse_problem

    X, y = make_sparse_problem(n_rows=90_000, n_features=2000, seed=3, density=0.0235)
    assert X.nnz >= 4_000_000  # (two threads from 2M non-zeros a thread)
    path = tmp_path / "run.ckpt"
    quiet_train(X, y, solver=3, n_jobs=2, thread_scheme="rounds", max_iter=2, checkpoint=path)
    with pytest.raises(InvalidInputError, match=r"differs in: -m \(n_jobs\)"):
        quiet_train(X, y, solver=3, n_jobs=1, thread_scheme="rounds", max_iter=2, resume=path)


def test_a_larger_max_iter_resumes_a_run_below_its_cap(problem, multiclass, tmp_path):
    """A run stopped below its cap resumes with a larger --max-iter to the model of an
    uninterrupted run with that cap; one whose sub-problem reached the old cap (or handed
    over to the fallback there) does not, nor does a smaller cap, nor linsvm's SGD solvers."""
    X, y = problem
    path = tmp_path / "run.ckpt"
    for solver in (3, 1):
        options = dict(solver=solver, eps=1e-8, C=50.0)
        quiet_train(X, y, checkpoint=path, hook=signal_at(2), max_iter=5, **options)
        resumed = quiet_train(X, y, resume=path, max_iter=40, **options)
        full = quiet_train(X, y, max_iter=40, **options)
        assert resumed.results_[0].n_iter == full.results_[0].n_iter > 5
        same_model(resumed, full)
        with pytest.raises(InvalidInputError, match=r"differs in: --max-iter"):
            quiet_train(X, y, resume=path, max_iter=4, **options)
    # finished at the cap of 3 (one-vs-rest: the first sub-problem done, the run stopped in
    # the second), or the dual handed over to -s 2 at its cap: refused, saying why
    Xm, ym = multiclass
    quiet_train(Xm, ym, solver=3, eps=1e-8, max_iter=3, checkpoint=path, hook=signal_at(2, index=1))
    with pytest.raises(InvalidInputError, match=r"sub-problem 0 reached the checkpoint's "
                                                r"--max-iter 3; a larger one resumes only"):
        quiet_train(Xm, ym, solver=3, eps=1e-8, max_iter=10, resume=path)
    quiet_train(X, y, solver=1, eps=1e-8, C=50.0, max_iter=3, checkpoint=path, hook=signal_at(5))
    with pytest.raises(InvalidInputError, match=r"sub-problem 0 reached"):
        quiet_train(X, y, solver=1, eps=1e-8, C=50.0, max_iter=10, resume=path)
    quiet_train(X, y, solver="pegasos", max_iter=5, checkpoint=path, hook=signal_at(2))
    with pytest.raises(InvalidInputError, match=r"differs in: --max-iter"):
        quiet_train(X, y, solver="pegasos", max_iter=10, resume=path)


def test_checkpoint_of_another_problem_is_refused(problem, tmp_path):
    X, y = problem
    path = tmp_path / "run.ckpt"
    quiet_train(X, y, solver=3, eps=1e-6, checkpoint=path, hook=signal_at(2))
    with pytest.raises(InvalidInputError, match=r"differs in: -c \(C\)"):
        linsvm.train(X, y, solver=3, eps=1e-6, C=2.0, resume=path)
    with pytest.raises(InvalidInputError, match=r"differs in: the data"):
        linsvm.train(X[:-1], y[:-1], solver=3, eps=1e-6, resume=path)
    with pytest.raises(InvalidInputError, match=r"differs in: -s \(solver\)"):
        linsvm.train(X, y, solver=1, eps=1e-6, resume=path)


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"PK\x03\x04broken zip"])
def test_damaged_checkpoint_is_refused(problem, tmp_path, content):
    X, y = problem
    path = tmp_path / "bad.ckpt"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match="bad.ckpt"):
        linsvm.train(X, y, solver=3, resume=path)


def test_truncated_checkpoint_is_refused(problem, tmp_path):
    X, y = problem
    path = tmp_path / "run.ckpt"
    quiet_train(X, y, solver=3, eps=1e-6, checkpoint=path, hook=signal_at(2))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidInputError, match="run.ckpt"):
        linsvm.train(X, y, solver=3, eps=1e-6, resume=path)


@pytest.mark.parametrize("search", ["cross_validation", "find_parameter_C"])
def test_sigterm_ends_a_run_of_trainings_as_sigterm(problem, search):
    """Under the command line (which ends the process itself), a SIGTERM during -v or -C
    ends the run with an interrupt that names it: the command exits 143, not Ctrl-C's 130."""
    from linsvm.interrupts import caller_ends_on_sigterm, interrupting_signal
    from linsvm.model_selection import find_parameter_C

    X, y = problem
    hook = signal_at(2, signal.SIGTERM)
    run = linsvm.cross_validation if search == "cross_validation" else find_parameter_C
    with caller_ends_on_sigterm(), pytest.raises(KeyboardInterrupt) as info:
        if search == "cross_validation":
            run(X, y, 5, solver=3, eps=1e-12, max_iter=1_000_000, hook=hook)
        else:
            run(X, y, solver=0, n_folds=5, verbose=False, eps=1e-12, max_iter=1_000_000,
                hook=hook)
    assert hook.sent
    assert interrupting_signal(info.value) == signal.SIGTERM


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_ends_the_whole_cross_validation(problem, n_jobs):
    X, y = problem
    hook = signal_at(2)
    before = signal.getsignal(signal.SIGINT)  # (SIG_IGN where the suite runs in background)
    with pytest.raises(KeyboardInterrupt):
        linsvm.cross_validation(
            X, y, 5, solver=3, eps=1e-12, max_iter=1_000_000, n_jobs=n_jobs, hook=hook
        )
    assert hook.sent  # the signal came during a fold
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored


@pytest.mark.parametrize("search", ["cross_validation", "find_parameter_C"])
def test_folds_queued_when_ctrl_c_comes_never_start(problem, search, monkeypatch):
    """Folds side by side (two threads): a Ctrl-C in the first ends the run, and the folds
    still queued behind it are not trained (each would run an outer iteration first)."""
    from linsvm import model_selection, training

    X, y = problem
    started, train = [], training.train

    def counted_train(*args, **kwargs):
        started.append(1)
        return train(*args, **kwargs)

    module = training if search == "cross_validation" else model_selection
    monkeypatch.setattr(module, "train", counted_train)
    hook = signal_at(2, settle=0.3)
    with pytest.raises(KeyboardInterrupt):
        if search == "cross_validation":
            training.cross_validation(X, y, 40, solver=3, eps=1e-12, max_iter=1_000_000,
                                      n_jobs=2, hook=hook)  # fmt: skip
        else:
            model_selection.find_parameter_C(X, y, solver=0, n_folds=40, verbose=False,
                                             eps=1e-12, max_iter=1_000_000, n_jobs=2,
                                             hook=hook)  # fmt: skip
    assert hook.sent
    # (the folds running, and those the other thread started before the main thread ran the
    # handler: a few, more on a busy machine; all 40 were trained before)
    assert len(started) <= 20


COMMAND_LOADING = """
import os, signal, sys, time
sys.argv[0] = sys.argv[1]  # (the console script's name, or a program's)
import linsvm
os.kill(os.getpid(), signal.SIGINT)  # while the command would still be loading
time.sleep(5)
print("not interrupted")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_while_the_command_loads_is_one_line_and_a_program_keeps_its_own():
    run = subprocess.run([sys.executable, "-c", COMMAND_LOADING, "/usr/bin/linsvm"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (run.returncode, run.stdout, run.stderr) == (130, "", "linsvm: interrupted\n")
    run = subprocess.run([sys.executable, "-c", COMMAND_LOADING, "program.py"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    # (Python's own way: a KeyboardInterrupt, the process ended by the signal)
    assert run.returncode == -signal.SIGINT and "KeyboardInterrupt" in run.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_program_run_with_python_m_keeps_its_ctrl_c(tmp_path):
    # sys.argv[0] is "-m" while any module run with -m is found: only linsvm's is the command
    package = tmp_path / "program"
    package.mkdir()
    (package / "__init__.py").write_text("import linsvm\n")
    (package / "__main__.py").write_text(
        "import os, signal, sys\n"
        "try:\n    os.kill(os.getpid(), signal.SIGINT)\n    import time; time.sleep(5)\n"
        "except KeyboardInterrupt:\n    print('cleaned up'); sys.exit(3)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    run = subprocess.run([sys.executable, "-m", "program"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (run.returncode, run.stdout) == (3, "cleaned up\n"), run.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_ignored_sigint_stays_ignored_while_training(problem):
    # (a job a script starts in the background is kept from the terminal's Ctrl-C so)
    X, y = problem
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        seen = []

        def hook(progress):
            seen.append(signal.getsignal(signal.SIGINT))
            if progress.iteration == 2:
                os.kill(os.getpid(), signal.SIGINT)
            return True

        model = linsvm.train(X, y, solver=1, eps=1e-3, hook=hook)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen and all(handler is signal.SIG_IGN for handler in seen)
    assert not model.interrupted and model.stop_signal is None


def test_a_programs_own_sigint_handler_keeps_its_ctrl_c(problem):
    """A handler of the program's (an asyncio loop's, a server's shutdown flag) was replaced
    while training: its Ctrl-C stopped the run and never reached the program. Like SIGTERM's,
    it is left alone: called, and training goes on."""
    X, y = problem
    called = []

    def own(signum, frame) -> None:
        called.append(signum)

    previous = signal.signal(signal.SIGINT, own)
    try:
        model = linsvm.train(X, y, solver=1, eps=1e-3, hook=signal_at(2))
        assert signal.getsignal(signal.SIGINT) is own and called == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not model.interrupted and model.stop_signal is None


def test_a_handler_set_by_c_code_is_left_as_it_is(problem, monkeypatch):
    """An embedding host's C handler reads as None from signal.getsignal: it was saved, and
    putting None back raised a TypeError after every training, the host's handler lost."""
    X, y = problem
    getsignal = signal.getsignal
    monkeypatch.setattr(signal, "getsignal",
                        lambda sig: None if sig == signal.SIGINT else getsignal(sig))
    installed = []
    setsignal = signal.signal
    monkeypatch.setattr(signal, "signal",
                        lambda sig, handler: installed.append(sig) or setsignal(sig, handler))
    model = linsvm.train(X, y, solver=1, eps=1e-3)
    assert model.results_[0].converged and signal.SIGINT not in installed


@pytest.mark.parametrize("solver", [2, 11])
def test_a_threaded_newton_runs_checkpoint_resumes_on_its_thread_count_only(tmp_path, solver):
    """The primal Newton solvers' sums in row chunks decide their last bits (-s 11's
    iterations too): a resume on another thread count was accepted and gave neither run's
    model."""
    from conftest import make_sparse_problem

    from linsvm.solvers.newton import THREAD_MIN_NNZ

    X, y = make_sparse_problem(n_rows=5000, n_features=400, seed=3, density=0.25)
    assert X.nnz >= 2 * THREAD_MIN_NNZ
    path = tmp_path / "run.ckpt"
    quiet_train(X, y, solver=solver, n_jobs=2, max_iter=2, checkpoint=path)
    with pytest.raises(InvalidInputError, match=r"differs in: -m \(n_jobs\)"):
        quiet_train(X, y, solver=solver, n_jobs=1, max_iter=2, resume=path)
    quiet_train(X, y, solver=solver, n_jobs=2, max_iter=2, resume=path)


_SIGTERM_IN_BLOCKS_SCRIPT = """
import os, signal, sys, warnings
import numpy as np, scipy.sparse as sp
import linsvm
rng = np.random.default_rng(7)
X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
y = np.where(X @ rng.standard_normal(40) > 0, 1, -1)
linsvm.write_libsvm(X, y, sys.argv[1])
class Timer:  # (the progress timer's calls; SIGTERM at the third outer iteration's tick)
    ticks = 0
    def labelled(self, label): return self
    def postpone(self): pass
    def tick(self, describe):
        if describe().startswith("outer 3"):
            os.kill(os.getpid(), signal.SIGTERM)
warnings.simplefilter("ignore")
linsvm.train(sys.argv[1], solver=3, eps=1e-12, max_iter=10_000, memory="2G", progress=Timer())
print("returned", flush=True)
"""


def _run_with_tmpdir(scratch, script: str, *args) -> subprocess.CompletedProcess:
    """``script`` run in a fresh interpreter with $TMPDIR at ``scratch`` (what a run leaves
    there is looked at after)."""
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
        timeout=300, env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip


def test_sigterm_in_blocks_from_a_text_file_leaves_no_temporary_cache(tmp_path):
    """Block training converts a text file to a temporary cache; a SIGTERM passed on when
    training stopped ended the process inside that cache's block: a copy of the data left in
    the temporary folder at every such end. It is passed on once the cache is removed."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = _run_with_tmpdir(scratch, _SIGTERM_IN_BLOCKS_SCRIPT, tmp_path / "data.txt")
    assert run.returncode == -signal.SIGTERM and run.stdout == "", run.stderr
    assert list(scratch.iterdir()) == []


_SIGTERM_WHILE_CONVERTING_SCRIPT = """
import os, signal, sys, warnings
import numpy as np, scipy.sparse as sp
import linsvm
from linsvm.interrupts import caller_ends_on_sigterm, interrupting_signal
rng = np.random.default_rng(7)
X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
y = np.where(X @ rng.standard_normal(40) > 0, 1, -1)
linsvm.write_libsvm(X, y, sys.argv[1])
class Timer:  # (the progress timer's calls; SIGTERM at the conversion's first tick)
    def labelled(self, label): return self
    def postpone(self): pass
    def tick(self, describe):
        if "rows" in describe():
            os.kill(os.getpid(), signal.SIGTERM)
warnings.simplefilter("ignore")
if sys.argv[2] == "command":  # (as the command line: it ends the process itself)
    with caller_ends_on_sigterm():
        try:
            linsvm.train(sys.argv[1], solver=3, memory="2G", progress=Timer())
        except KeyboardInterrupt as exc:
            print("interrupted by", int(interrupting_signal(exc)), flush=True)
else:
    linsvm.train(sys.argv[1], solver=3, memory="2G", progress=Timer())
    print("returned", flush=True)
"""


@pytest.mark.parametrize("caller", ["program", "command"])
def test_sigterm_while_text_is_converted_leaves_no_temporary_folder(tmp_path, caller):
    """A SIGTERM while block training converts a text file to its temporary cache ended the
    process at once (SIGTERM's default action), the temporary folder left behind. It is held
    to the next block of the text, where it raises: the folder is removed, then the process
    ends as SIGTERM ends it, or the command line says so (status 143)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = _run_with_tmpdir(scratch, _SIGTERM_WHILE_CONVERTING_SCRIPT, tmp_path / "data.txt",
                           caller)
    if caller == "program":
        assert run.returncode == -signal.SIGTERM and run.stdout == "", run.stderr
    else:
        assert run.returncode == 0 and run.stdout == f"interrupted by {int(signal.SIGTERM)}\n"
    assert list(scratch.iterdir()) == []


_CTRL_C_WHILE_READING_SCRIPT = """
import os, signal, sys, threading, time
import linsvm
path = sys.argv[1]
with open(path, "wb") as f:  # about 40 MB of text: five of the reader's blocks
    f.write(b"1 1:0.5 7:2 30:1.25 4000:3\\n-1 2:1 9:0.75 31:2.5 5000:1\\n" * 700_000)
linsvm.read_libsvm(path + ".small", n_jobs=1)  # the parser's kernel loaded
start = time.perf_counter()
linsvm.read_libsvm(path, n_jobs=1)
delay = (time.perf_counter() - start) / 5  # (within the first blocks, on any machine)
for attempt in range(3):
    threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        linsvm.read_libsvm(path, n_jobs=1)
        print("read", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    time.sleep(0.1)
"""


def test_ctrl_c_while_text_is_read_raises_between_blocks(tmp_path):
    """Ctrl-C while the parser's kernel ran crashed the process (SIGSEGV): Numba hands its
    result back by calling into Python, where the pending signal's KeyboardInterrupt was
    raised. The reader holds Ctrl-C to the boundaries of its blocks, where it raises."""
    path = tmp_path / "big.txt"
    (tmp_path / "big.txt.small").write_text("1 1:1\n-1 2:1\n")
    run = subprocess.run([sys.executable, "-c", _CTRL_C_WHILE_READING_SCRIPT, str(path)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == "interrupted\n" * 3, run.stdout


def test_a_signal_that_stops_the_overhead_measure_stops_the_run(monkeypatch):
    """``measured_overhead`` trains four rows to load the compiled code; a signal that stopped
    that run was lost with its model (held before it, a Ctrl-C then let the real run train)."""
    import linsvm.interrupts as interrupts
    from linsvm.outofcore import measured_overhead

    monkeypatch.setattr(interrupts, "_held_signal", signal.SIGINT)
    with pytest.raises(interrupts.RunInterrupted) as stopped:
        measured_overhead(3)
    assert stopped.value.signum == signal.SIGINT


_READER_PAUSED_SCRIPT = """
import os, signal, sys, threading, time
import linsvm.interrupts as interrupts
from linsvm.io.stream import iter_libsvm
path = sys.argv[1]
with open(path, "w") as f:
    f.write("1 1:0.5\\n-1 2:1\\n" * 50)
try:  # a Ctrl-C while the caller's loop works on a chunk
    for X, y in iter_libsvm(path, n_jobs=1):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        break
    print("not raised")
except KeyboardInterrupt:
    print("raised in the loop", interrupts._held_signal)
it = iter_libsvm(path, n_jobs=1)
next(it)  # a reader paused between chunks, closed from another thread
closing = threading.Thread(target=it.close)
closing.start()
closing.join()
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_a_reader_paused_between_its_chunks_leaves_ctrl_c_to_its_caller(tmp_path):
    """The reader held Ctrl-C across its yields: a Ctrl-C while the caller worked on a chunk
    was swallowed, and then stopped the next, unrelated training at once (left held when
    the reader was closed); closed from another thread, the reader raised there and left
    its handler installed. It holds Ctrl-C only while it parses, never across a yield."""
    run = subprocess.run([sys.executable, "-c", _READER_PAUSED_SCRIPT, str(tmp_path / "d.txt")],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.stdout == "raised in the loop None\nTrue\n", run.stdout + run.stderr
    assert "Traceback" not in run.stderr


_KILLED_WHILE_CONVERTING_SCRIPT = """
import os, signal, sys
import numpy as np, scipy.sparse as sp
import linsvm
rng = np.random.default_rng(7)
X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
linsvm.write_libsvm(X, np.where(rng.random(600) < 0.5, 1, -1), sys.argv[1])
class Timer:  # (kill -9 at the conversion's first tick, as the OOM killer would)
    def labelled(self, label): return self
    def postpone(self): pass
    def tick(self, describe):
        os.kill(os.getpid(), signal.SIGKILL)
linsvm.train(sys.argv[1], solver=3, memory="2G", progress=Timer())
"""


def test_a_killed_runs_temporary_cache_is_removed_by_the_next(tmp_path, monkeypatch):
    """kill -9 (the OOM killer, likelier near a memory budget) while a text was converted for
    training in blocks left its temporary folder, a copy of the data, for good. The next
    conversion removes it; a folder whose process lives is kept."""
    import tempfile

    from linsvm.io._atomic import temporary_folder
    from linsvm.io.cache import TEMPORARY_PREFIX

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = _run_with_tmpdir(scratch, _KILLED_WHILE_CONVERTING_SCRIPT, tmp_path / "data.txt")
    assert run.returncode == -signal.SIGKILL, run.stderr
    left = list(scratch.iterdir())
    assert len(left) == 1 and left[0].name.startswith(TEMPORARY_PREFIX)
    (scratch / "linsvm-numba-cache-0").mkdir()  # (another folder of the prefix's start: kept)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with temporary_folder(TEMPORARY_PREFIX) as live:
        assert not left[0].exists()
        with temporary_folder(TEMPORARY_PREFIX) as other:
            assert os.path.isdir(live) and other != live
    assert sorted(p.name for p in scratch.iterdir()) == ["linsvm-numba-cache-0"]


def test_a_resumed_runs_checkpoint_keeps_what_the_run_before_finished(multiclass, tmp_path):
    """Stopped in sub-problem 2 (0 and 1 finished), resumed with the same checkpoint and
    stopped in sub-problem 3: the checkpoint held 2 and 3 only, 0 and 1 lost (a third run
    did them again). It keeps them; each resume continues from there."""
    from linsvm.checkpoint import Resume

    X, y = multiclass
    path = tmp_path / "run.ckpt"
    options = dict(solver=3, eps=1e-6, seed=3)
    quiet_train(X, y, checkpoint=path, hook=signal_at(2, index=2), **options)
    assert sorted(Resume(path).finished) == [0, 1]
    quiet_train(X, y, checkpoint=path, resume=path, hook=signal_at(2, index=3), **options)
    assert sorted(Resume(path).finished) == [0, 1, 2]
    iterations = {}
    resumed = quiet_train(X, y, resume=path, **options,
                          hook=lambda p: iterations.setdefault(p.index, p.iteration))
    assert set(iterations) == {3}  # (only 3 trains: 0, 1 and 2 come from the checkpoint)
    same_model(resumed, quiet_train(X, y, **options))


def test_checkpoints_of_many_classes_are_written_every_so_often(multiclass, tmp_path,
                                                               monkeypatch):
    """A write at each sub-problem's end wrote every finished one again: 2.8 GB of writes for
    a checkpoint of 52 MB (105 classes). Ends write only when the interval has passed; the
    end of the run writes the whole."""
    import linsvm.checkpoint as checkpoint_module
    from linsvm.checkpoint import Resume

    writes = []
    write = checkpoint_module.write_checkpoint
    monkeypatch.setattr(checkpoint_module, "write_checkpoint",
                        lambda *a, **k: writes.append(1) or write(*a, **k))
    X, y = multiclass
    path = tmp_path / "run.ckpt"
    model = quiet_train(X, y, solver=3, eps=1e-6, checkpoint=path, checkpoint_every=3600)
    assert len(writes) == 1 and sorted(Resume(path).finished) == [0, 1, 2, 3]
    same_model(quiet_train(X, y, solver=3, eps=1e-6, resume=path), model)


@pytest.mark.parametrize("solver", [37, 39])
def test_crafted_sgd_states_and_slots_are_refused(problem, tmp_path, solver):
    """A NaN step count in an SGD state (fstate allows NaN for the solvers where it means
    "not measured yet") and a slot numbered with a non-ASCII digit ("²".isdigit()) were
    tracebacks."""
    from linsvm.checkpoint import read_checkpoint, write_checkpoint

    X, y = problem
    path = tmp_path / "run.ckpt"
    options = dict(solver=solver, max_iter=20, seed=5)
    quiet_train(X, y, checkpoint=path, hook=signal_at(2), **options)
    meta, arrays = read_checkpoint(str(path), "memory")
    crafted = tmp_path / "crafted.ckpt"
    fstate = arrays["0/state/fstate"].copy()
    fstate[0] = np.nan
    write_checkpoint(str(crafted), "memory", meta, dict(arrays, **{"0/state/fstate": fstate}))
    with pytest.raises(InvalidInputError, match="damaged: 'fstate'"):
        quiet_train(X, y, resume=crafted, **options)
    slots = {"\u00b2": meta["slots"]["0"]}
    write_checkpoint(str(crafted), "memory", dict(meta, slots=slots),
                     {key.replace("0/", "\u00b2/", 1): value for key, value in arrays.items()})
    with pytest.raises(InvalidInputError, match="damaged"):
        quiet_train(X, y, resume=crafted, **options)


def test_the_checkpoint_and_the_model_cannot_be_one_file(tmp_path, capsys):
    """The model replaced the last checkpoint; with --save-on-interrupt the message said the
    state was saved in a file that then held the model."""
    from linsvm.cli import main

    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n-1 2:1\n1 1:2\n")
    for model in (tmp_path / "m", tmp_path / "sub" / ".." / "m"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        assert main(["train", "--checkpoint", str(tmp_path / "m"), str(data), str(model)]) == 1
        assert "the checkpoint and the model would be one file" in capsys.readouterr().err


def test_sub_problems_finished_before_an_error_are_checkpointed(multiclass, tmp_path):
    """An end writes only when the interval has passed: a run that then raised lost the
    sub-problems finished since the last write. They are written on the way out."""
    from linsvm.checkpoint import Resume

    X, y = multiclass
    path = tmp_path / "run.ckpt"

    def hook(progress):
        if progress.index == 2:
            raise RuntimeError("a failure in sub-problem 2")

    with pytest.raises(RuntimeError, match="a failure"):
        quiet_train(X, y, solver=3, checkpoint=path, checkpoint_every=3600, hook=hook)
    assert sorted(Resume(path).finished) == [0, 1]


def test_a_temporary_folder_without_locks(tmp_path, monkeypatch):
    """Where flock fails (some FUSE or NFS mounts), a conversion's folder is made and removed
    without a lock (it raised, and the conversion with it)."""
    import fcntl
    import tempfile

    from linsvm.io._atomic import temporary_folder

    def no_locks(*args):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(fcntl, "flock", no_locks)
    with temporary_folder("linsvm-cache-") as folder:
        assert os.listdir(folder) == []
    assert list(tmp_path.iterdir()) == []
