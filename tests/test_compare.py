"""``linsvm compare`` and ``linsvm.compare.compare``: the solver race's outputs are right.

- the command line writes the table (stdout and compare.md), curves.json and, with matplotlib,
  the four figures; every solver's curve is non-empty with increasing times; the relative
  accuracies are >= 0 (P* really is the lowest primal value seen); DCD reaches 1e-2;
- the primal values recorded are P(w) of the snapshots (one definition), P* is certified by
  the reference run's dual bound, the JSON round-trips;
- the hook: a time budget stops a racer (the hook returns False, the solver returns its
  current iterate as "interrupted"), and so does passing the table's last accuracy line
  (certified by the dual bound); a racer after one that passed it gets a budget of
  RACE_FACTOR x that time; the recording hook sees every Newton iteration and its
  ||g||/||g0|| without changing the result; snapshots are copies of the hook's w;
- every racer goes through the solver registry (no adapter): a solver registered in its place
  is what runs;
- bad options and data: exit status 1 and one line on stderr; -q prints no progress, and
  without a terminal progress comes as lines;
- ``linsvm.compare`` does not import ``linsvm.cli`` (no import cycle).

Correctness only: no timing bounds (docs/guarantees.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from conftest import make_sparse_problem, primal_of

import linsvm
from linsvm.compare import (
    DEFAULT_LINEUP,
    LINEUP,
    RACE_FACTOR,
    STOP_ACCURACY,
    STOP_PAST_LINE,
    ComparisonResult,
    binary_pm1,
    compare,
    plot_figures,
)
from linsvm.errors import InvalidInputError
from linsvm.solvers import SOLVERS, Progress, Solution, Subproblem

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


def main(argv: list[str]) -> int:
    """``linsvm`` on the command line (imported here: the tests of the API do not need it)."""
    from linsvm.cli import main as cli_main

    return cli_main(argv)


FIGURES = ("l1-objective.png", "l1-accuracy.png", "l2-objective.png", "l2-accuracy.png")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small binary problem as training and test files (labels 2/4: not -1/+1)."""
    d = tmp_path_factory.mktemp("compare")
    X, y = make_sparse_problem(n_rows=400, n_features=30, seed=3, labels=np.array([4.0, 2.0]))
    train, test = d / "small.train", d / "small.test"
    linsvm.write_libsvm(X[:300], y[:300], train)
    linsvm.write_libsvm(X[300:], y[300:], test)
    return train, test


@pytest.fixture(scope="module")
def cli_run(files, tmp_path_factory):
    """One CLI run with every default solver, quiet; (exit status, stdout, stderr, outdir)."""
    import contextlib
    import io

    train, test = files
    out = tmp_path_factory.mktemp("out") / "cmp"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main(["compare", "-q", "--max-time", "0.1", "-o", str(out), str(train), str(test)])
    return rc, stdout.getvalue(), stderr.getvalue(), out


def test_cli_writes_table_json_and_figures(cli_run):
    rc, stdout, stderr, out = cli_run
    assert rc == 0, stderr
    assert stderr == ""  # -q: no progress
    text = (out / "compare.md").read_text()
    for table in (stdout, text):
        assert "time to 1e-2 (s)" in table and "time to 1e-3 (s)" in table
        for name in DEFAULT_LINEUP:
            assert f"| {LINEUP[name].label} |" in table
    data = json.loads((out / "curves.json").read_text())
    assert set(data["solvers"]) == set(DEFAULT_LINEUP)
    if HAVE_MPL:
        for name in FIGURES:
            png = out / name
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"]({name})" in text
    else:
        assert "pip install 'linsvm[plot]'" in text


def test_curves_are_consistent(cli_run, files):
    _, _, _, out = cli_run
    data = json.loads((out / "curves.json").read_text())
    result = ComparisonResult.from_json(data)
    X, y = linsvm.read_libsvm(files[0])
    y_pm1, _, _ = binary_pm1(y, y)
    for name, run in result.runs.items():
        assert run.times.size >= 2, name  # w = 0 and at least one iterate
        assert run.times[0] == 0.0
        assert np.all(np.diff(run.times) > 0), name
        assert np.all(np.diff(run.iterations) > 0), name
        assert np.all(run.relative >= -1e-9), name
        assert np.all((run.test_accuracy >= 0) & (run.test_accuracy <= 1)), name
        trace = run.trace
        assert trace.shape[0] >= 1 and np.all(np.diff(trace[:, 0]) >= 0), name
        assert run.hook_seconds >= 0 and run.seconds > 0, name
        assert run.unhooked_seconds > 0, name
        pstar = result.references[run.loss].primal
        np.testing.assert_allclose(run.relative, (run.primal - pstar) / pstar, rtol=1e-6)
        # P(w = 0) = C l for both losses
        assert run.primal[0] == pytest.approx(float(X.shape[0]))
    for loss, ref in result.references.items():
        assert ref.dual <= ref.primal * (1 + 1e-12), loss
        assert ref.certified_gap <= 1e-6, loss
        lowest = min(r.primal.min() for r in result.runs.values() if r.loss == loss)
        assert ref.primal <= lowest
    for name in ("dcd-l1", "dcd-l2", "tron"):  # the default lineup's converging racers
        run = result.runs[name]
        assert run.time_to(1e-2) is not None, name
        # (snapshots are spaced in time: on a busy machine TRON can reach the optimum, and
        # stop there on its own, before a scored snapshot shows it past the line)
        at_optimum = run.stop == "small_reduction" and run.relative[-1] <= 1e-3
        assert run.stop in ("converged", STOP_PAST_LINE) or at_optimum, name


def test_api_primal_values_and_round_trip(files, tmp_path, monkeypatch):
    import linsvm.compare.runners as runners

    # no line to stop at: Newton runs to its own tolerance, as the model below
    monkeypatch.setattr(runners, "STOP_ACCURACY", -0.5)
    X, y = linsvm.read_libsvm(files[0])
    Xt, yt = linsvm.read_libsvm(files[1])
    result = compare(
        X, y, Xt, yt, C=0.5, solvers=["dcd-l2", "newton-l2"], bias=1.0, max_time=5.0,
        quiet=True, dataset="small",
    )  # fmt: skip
    assert result.losses() == ["l2"]
    assert list(result.runs) == ["dcd-l2", "newton-l2"]
    # the last snapshot's P(w) is the solver's own final primal (the one definition)
    y_pm1, yt_pm1, positive = binary_pm1(y, yt)
    assert positive == 4.0  # LIBLINEAR's order: the first label seen
    c_rows = np.full(X.shape[0], 0.5)
    sol = SOLVERS[2].solve(newton_subproblem(X, y_pm1, c_rows, 1.0, 1e-10), None)
    run = result.runs["newton-l2"]
    assert run.primal[-1] == pytest.approx(primal_of(X, 1.0, y_pm1, c_rows, sol.w, 1), rel=1e-12)
    # test accuracy as the model predicts it
    model = linsvm.train(X, y, solver=2, C=0.5, bias=1.0, eps=1e-8)
    assert run.test_accuracy[-1] == pytest.approx(np.mean(model.predict(Xt) == yt))
    # JSON round trip keeps the tables; figures redrawn from it
    again = ComparisonResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.table("l2") == result.table("l2")
    if HAVE_MPL:
        files_written = plot_figures(again, tmp_path)
        assert sorted(f.name for f in files_written) == ["l2-accuracy.png", "l2-objective.png"]


def test_time_budget_stops_a_solver(files, monkeypatch):
    import linsvm.compare.runners as runners

    # a line below the optimum: on these few rows Pegasos might pass 1e-3 within the budget
    monkeypatch.setattr(runners, "STOP_ACCURACY", -0.5)
    X, y = linsvm.read_libsvm(files[0])
    result = compare(X, y, X, y, solvers=["pegasos"], max_time=0.05, quiet=True)
    run = result.runs["pegasos"]
    assert run.stop == "time budget"
    assert run.seconds >= 0.05
    # the rerun without a hook did the same epochs
    assert run.iterations[-1] == run.n_iter
    assert math.isfinite(run.unhooked_seconds)


def test_cpu_clock(files):
    X, y = linsvm.read_libsvm(files[0])
    result = compare(X, y, X, y, solvers=["dcd-l2"], max_time=2.0, quiet=True, clock="cpu")
    run = result.runs["dcd-l2"]
    assert result.clock == "cpu" and run.time_to(1e-2) is not None
    assert np.all(np.diff(run.times) > 0)
    assert "CPU seconds" in "\n".join(result.markdown())


def test_progress_lines_without_q(files, capsys, monkeypatch):
    import linsvm.compare.recording as recording
    import linsvm.compare.runners as runners

    X, y = linsvm.read_libsvm(files[0])
    compare(X, y, X, y, solvers=["dcd-l1", "newton-l2"], max_time=2.0, check_overhead=False)
    err = capsys.readouterr().err
    assert "dcd-l1:" in err and "newton-l2:" in err and "P* (l1)" in err
    assert "P* (l1): reference DCD run, up to 4 s" in err
    assert "dcd-l1: racing, up to 2.00 s" in err
    assert "\r" not in err  # not a terminal: lines, no overwritten line
    # a phase longer than PROGRESS_LINE_SECONDS writes lines as it goes
    monkeypatch.setattr(recording, "PROGRESS_LINE_SECONDS", 0.0)
    monkeypatch.setattr(runners, "PROGRESS_LINE_SECONDS", 0.0)
    compare(X, y, X, y, solvers=["dcd-l1"], max_time=2.0, check_overhead=False)
    err = capsys.readouterr().err
    assert "  dcd-l1: iteration 1" in err and "  P* (l1): DCD eps" in err
    assert "\r" not in err


def test_racers_stop_past_the_last_line_and_slow_ones_get_a_budget(files, monkeypatch):
    import linsvm.compare.runners as runners

    monkeypatch.setattr(runners, "MIN_RACE_BUDGET", 0.05)
    X, y = linsvm.read_libsvm(files[0])
    result = compare(X, y, X, y, solvers=["dcd-l1", "pegasos"], max_time=30.0, quiet=True,
                     check_overhead=False)  # fmt: skip
    ref = result.references["l1"]
    dcd = result.runs["dcd-l1"]
    # DCD at its tolerance 1e-5 would go on: it stops at the first snapshot certainly past
    # the last line, against the dual bound, so against P* too
    assert dcd.stop == STOP_PAST_LINE
    certified = (dcd.primal - ref.dual) / ref.dual
    past = np.flatnonzero(certified <= STOP_ACCURACY)
    assert past.size and past[0] >= len(dcd.primal) - 2  # (the solver's returned w may follow)
    assert dcd.relative[-1] <= STOP_ACCURACY and dcd.time_to(STOP_ACCURACY) is not None
    # Pegasos, after it: RACE_FACTOR x DCD's time to the line, not the 30 s
    pegasos = result.runs["pegasos"]
    line_time = float(dcd.times[past[0]])
    assert pegasos.budget == pytest.approx(max(0.05, RACE_FACTOR * line_time))
    assert pegasos.budget < 30.0
    if pegasos.stop == "time budget":
        assert pegasos.seconds >= pegasos.budget
        assert "| time budget (" in "\n".join(result.markdown())
    else:
        assert pegasos.stop == STOP_PAST_LINE
    # race_factor=None: every racer may take max_time (the seed's table, benchmarks)
    full = compare(X, y, X, y, solvers=["dcd-l1", "pegasos"], max_time=0.3, quiet=True,
                   check_overhead=False, race_factor=None)  # fmt: skip
    assert full.runs["pegasos"].budget == 0.3


def newton_subproblem(X, y, c_rows, bias, eps):
    """The problem of -s 2 with the solver's own tolerance ``eps`` (as compare passes it)."""
    return Subproblem(X=linsvm.data.as_csr(X), y=y, C=c_rows, eps=eps, max_iter=1000, bias=bias)


def test_newton_hook_reports_iterations_and_changes_nothing():
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=5)
    c_rows = np.ones(X.shape[0])
    seen = []
    sub = newton_subproblem(X, y, c_rows, -1.0, 1e-6)
    plain = SOLVERS[2].solve(sub, None)
    hooked = SOLVERS[2].solve(
        sub, lambda progress: seen.append((progress.iteration, progress.w.copy(), progress))
    )
    np.testing.assert_array_equal(plain.w, hooked.w)
    # the starting point (iteration 0), then every Newton iteration
    assert [k for k, _, _ in seen] == list(range(0, hooked.n_iter + 1))
    history, grad_norm0 = hooked.figures["history"], hooked.figures["grad_norm0"]
    for (k, _, progress), (k2, _, grad_norm, _, _) in zip(seen[1:], history, strict=True):
        # the measure compare's progress line shows as |g|/|g0|
        assert k == k2 and progress.measure == pytest.approx(grad_norm / grad_norm0)
    np.testing.assert_array_equal(seen[-1][1], hooked.w)


FAKE_CALLS: list[tuple] = []


def fake_solve(sub: Subproblem, hook=None) -> Solution:
    """A registered solver for the test below: w = 0.001 k after iteration k, in place."""
    FAKE_CALLS.append((sub.eps, dict(sub.options), sub.max_iter, hook is not None))
    w = np.zeros(sub.n_weights)
    k = 0
    while k < sub.max_iter:
        k += 1
        w += 0.001  # the live array changes in place: snapshots must be copies
        progress = Progress(3, sub.index, k, w, None, 1.0 / k, {}, dict)
        if hook is not None and hook(progress) is False:
            return Solution(w, k, False, "interrupted", math.nan)
    return Solution(w, k, False, "max_iter", math.nan)


def test_racers_run_through_the_registry(monkeypatch, files):
    """The solver registered under a racer's number is what runs: the recorder gets its
    iterates and keeps copies, and its False (time budget spent) interrupts the solver."""
    monkeypatch.setitem(SOLVERS, 3, replace(SOLVERS[3], solve_path="test_compare:fake_solve"))
    FAKE_CALLS.clear()
    X, y = linsvm.read_libsvm(files[0])
    result = compare(X, y, X, y, solvers=["dcd-l1-noshrink"], max_time=0.02, quiet=True,
                     pstar_time=0.01)  # fmt: skip
    run = result.runs["dcd-l1-noshrink"]
    assert run.stop == "time budget" and run.n_iter == run.iterations[-1]
    recorded = [c for c in FAKE_CALLS if c[3] and c[0] == LINEUP["dcd-l1-noshrink"].eps]
    assert recorded and recorded[-1][1]["shrinking"] is False
    # every snapshot is the w of its iteration (a copy, not the live array)
    y_pm1 = binary_pm1(y, y)[0]
    for k, p in zip(run.iterations, run.primal, strict=True):
        w = np.full(X.shape[1], 0.001 * k)
        assert p == pytest.approx(primal_of(X, -1.0, y_pm1, np.ones(len(y)), w, 0), rel=1e-12)
    # the rerun without a hook did the same iterations
    assert FAKE_CALLS[-1] == (LINEUP["dcd-l1-noshrink"].eps, {"shrinking": False}, run.n_iter,
                              False)  # fmt: skip


def test_compare_does_not_import_cli():
    import subprocess
    import sys

    code = "import sys, linsvm.compare; sys.exit('linsvm.cli' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def one_line_error(capsys, argv) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and err.startswith("linsvm compare: error: "), err
    return err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--solvers", "dcd-l1,bogus"], "unknown solver 'bogus'; valid: dcd-l1, dcd-l1-noshrink"),
        (["-c", "0"], "C must be > 0"),
        (["-c", "abc"], "option -c needs a number"),
        (["--max-time", "-1"], "--max-time needs a number of seconds > 0"),
        (["--seed", "1.5"], "option --seed needs a number"),
        (["--frobnicate"], "unknown option: --frobnicate"),
        (["-o"], "option -o needs a value"),
        (["--clock", "gpu"], "option --clock needs one of wall, cpu"),
    ],
)
def test_bad_options(capsys, files, args, words):
    train, test = files
    argv = ["compare", *args] + ([] if args == ["-o"] else [str(train), str(test)])
    assert words in one_line_error(capsys, argv)


def test_bad_files_and_labels(capsys, tmp_path, files):
    train, test = files
    assert "expected training_set_file test_set_file (or -d train[,test])" in one_line_error(
        capsys, ["compare", str(train)]
    )
    assert "No such file" in one_line_error(capsys, ["compare", str(tmp_path / "no"), str(test)])
    X, y = make_sparse_problem(n_rows=60, n_features=8, n_classes=3, seed=1)
    multi = tmp_path / "multi"
    linsvm.write_libsvm(X, y, multi)
    assert "two classes" in one_line_error(capsys, ["compare", str(multi), str(test)])


def test_api_errors():
    X, y = make_sparse_problem(n_rows=50, n_features=5)
    with pytest.raises(InvalidInputError, match="unknown solver"):
        compare(X, y, X, y, solvers=["dcd"], quiet=True)
    with pytest.raises(InvalidInputError, match="C must be > 0"):
        compare(X, y, X, y, C=-1.0, quiet=True)
    with pytest.raises(InvalidInputError, match="two classes"):
        compare(X, np.ones(50), X, y, quiet=True)


def _result_with_gap(gap: float) -> ComparisonResult:
    """A race's result whose P* is certified to (P* - D)/D = gap, one run reaching 1e-4."""
    from linsvm.compare.report import Reference, SolverRun

    relative = np.array([1.0, 1e-1, 1e-2, 1e-4])
    run = SolverRun("dcd-l1", "l1", "DCD-L1", "gap", np.array([0.0, 1.0, 2.0, 3.0]),
                    np.arange(4), 10.0 * (1 + relative), np.full(4, 0.9), np.zeros((0, 3)), 3,
                    "converged", 3.0, 0.0, math.nan, relative)  # fmt: skip
    reference = Reference(primal=10.0, dual=10.0 / (1 + gap), source="test")
    return ComparisonResult("set", 10, 3, 20, 5, 1.0, -1.0, 5.0, {"l1": reference},
                            {"dcd-l1": run})  # fmt: skip


def test_a_line_finer_than_the_certified_pstar_is_not_timed():
    """With P* certified to 5e-3 only (the reference run's budget ran out), the time to 1e-3
    of the optimum is not known: the tables and the CSV said "reached" at 3 s."""
    import csv
    import io

    from linsvm.compare.table import lineup_csv, lineup_tables

    result = _result_with_gap(5e-3)
    header, rows = result.table("l1")
    cells = dict(zip(header, rows[0], strict=True))
    assert cells["time to 1e-2 (s)"] == "2.00"
    assert cells["time to 1e-3 (s)"] == "P* not certified to 1e-3 ((P* - D)/D = 5.0e-03)"
    table = "\n".join(lineup_tables([result], ["dcd-l1"]))
    assert "| 2.00 (2) |" in table and "P* not certified to 1e-3" in table
    rows = {r["target"]: r for r in csv.DictReader(io.StringIO(lineup_csv([result],
                                                                          ["dcd-l1"])))}
    assert (rows["0.01"]["reached"], rows["0.01"]["seconds"]) == ("1", "2")
    assert (rows["0.001"]["reached"], rows["0.001"]["seconds"]) == ("", "")
    certified = _result_with_gap(1e-7)
    assert dict(zip(*[certified.table("l1")[0], certified.table("l1")[1][0]],
                    strict=True))["time to 1e-3 (s)"] == "3.00"  # fmt: skip


@pytest.mark.parametrize("target, name", [(1e-3, "1e-3"), (1e-2, "1e-2"), (0.015, "1.5e-2"),
                                          (0.0015, "1.5e-3"), (0.99, "9.9e-1"), (0.5, "5e-1")])
def test_a_line_is_named_with_its_digits(target, name):
    """0.015 was named "1e-2", beside the real 1e-2 line (two columns of one name)."""
    from linsvm.compare.report import line_name

    assert line_name(target) == name


def test_a_run_without_hook_calls_is_written_to_json():
    """A run that returned before its first hook call (a trace of none) made np.geomspace
    fail, and the finished race was lost."""
    result = _result_with_gap(1e-7)
    again = ComparisonResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.runs["dcd-l1"].trace.shape == (0, 3)


def test_a_kernel_compiled_on_the_clock_runs_again(files, monkeypatch):
    """The warm-up runs each racer a few iterations on a few rows: a kernel of a path it does
    not reach (SVMperf's exact QP at large C) was compiled inside the timed run, and that
    time reported as the solver's. A run that compiled is run again."""
    import numba

    import linsvm.compare.runners as runners

    hooked_run, calls = runners._hooked_run, []

    def compiling_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            numba.njit(lambda x: x + 1)(1)  # (a compilation on the clock)
        return hooked_run(*args, **kwargs)

    monkeypatch.setattr(runners, "_hooked_run", compiling_once)
    X, y = linsvm.read_libsvm(files[0])
    compare(X, y, X, y, solvers=["dcd-l2"], max_time=1.0, quiet=True, check_overhead=False)
    assert len(calls) == 2
    calls.clear()
    monkeypatch.setattr(runners, "_hooked_run",
                        lambda *a, **k: calls.append(1) or hooked_run(*a, **k))
    compare(X, y, X, y, solvers=["dcd-l2"], max_time=1.0, quiet=True, check_overhead=False)
    assert len(calls) == 1


def test_only_racers_that_cannot_run_is_an_error(files):
    X, y = linsvm.read_libsvm(files[0])
    with pytest.raises(InvalidInputError, match="^no racer can run: mpu: not available"):
        compare(X, y, X, y, solvers=["mpu"], quiet=True)
