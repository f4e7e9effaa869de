"""Progress lines of long runs: a line on stderr every few seconds once a run has taken a few
seconds (train in memory, -v, --memory, cache), none with -q, none for a short run, and
stdout as it always was (LIBLINEAR's output).

A run "takes long" here because the progress clock is replaced (``linsvm._progress.clock``):
one that moves 10 s at every reading makes every tick due; one that stands still makes none
due, however slow the machine. No test depends on the wall clock.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

import linsvm
from linsvm import _progress
from linsvm.cli import main

# "[20 s] fold 1 of 2: class 3: iter    4  active  ..."
LINE = re.compile(r"^\[\d+ s\] ")
ITERATION = re.compile(r"^\[\d+ s\] (?:class \d+: )?iter +\d+ +active +\d+ +PG max-min \d")


@pytest.fixture()
def long_runs(monkeypatch):
    """Every reading of the progress clock 10 s after the one before."""
    readings = itertools.count(0.0, 10.0)
    monkeypatch.setattr(_progress, "clock", lambda: next(readings))


@pytest.fixture()
def short_runs(monkeypatch):
    """A progress clock that never moves: every run is shorter than the quiet seconds."""
    monkeypatch.setattr(_progress, "clock", lambda: 0.0)


def _data(path: Path, n_classes: int = 2, n_rows: int = 300) -> Path:
    """Overlapping classes, so that -s 3 -e 0.001 takes some outer iterations."""
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(n_rows):
        label = int(rng.integers(1, n_classes + 1))
        values = rng.normal(size=6) + 0.7 * label * np.array([1, -0.5, 0.3, 0, 0, 0])
        lines.append(f"{label} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(values)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture()
def data(tmp_path) -> Path:
    return _data(tmp_path / "train.txt")


def _progress_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if LINE.match(line)]


def _without_times(out: str) -> str:
    """stdout with its measured seconds masked (they differ from run to run)."""
    return re.sub(r"\d+\.\d+ s\b", "<t> s", out)


def test_long_training_prints_progress_on_stderr_and_leaves_stdout_alone(
    data, tmp_path, capsys, monkeypatch
):
    argv = ["train", "-s", "3", "-e", "0.001", str(data), str(tmp_path / "m")]
    monkeypatch.setattr(_progress, "clock", lambda: 0.0)
    assert main(argv) == 0
    short = capsys.readouterr()
    readings = itertools.count(0.0, 10.0)
    monkeypatch.setattr(_progress, "clock", lambda: next(readings))
    assert main(argv) == 0
    long = capsys.readouterr()
    lines = _progress_lines(long.err)
    assert lines and all(ITERATION.match(line) for line in lines), long.err
    # the first line only once the quiet seconds have passed, then one a reading apart
    assert lines[0].startswith("[10 s] ")
    assert _without_times(long.out) == _without_times(short.out)
    assert not _progress_lines(short.err)
    # the rest of stderr (the warnings) is what a short run prints
    assert [x for x in long.err.splitlines() if not LINE.match(x)] == short.err.splitlines()


def test_quiet_prints_no_progress(data, tmp_path, capsys, long_runs):
    assert main(["train", "-q", "-s", "3", "-e", "0.001", str(data), str(tmp_path / "m")]) == 0
    assert capsys.readouterr() == ("", "")


def test_verbose_keeps_its_own_lines(data, tmp_path, capsys, long_runs):
    argv = ["train", "--verbose", "-s", "3", "-e", "0.001", str(data), str(tmp_path / "m")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert not _progress_lines(err)
    assert re.search(r"^iter +1 +active", err, re.MULTILINE)


def test_one_vs_rest_lines_name_the_class(tmp_path, capsys, long_runs):
    data = _data(tmp_path / "three.txt", n_classes=3)
    assert main(["train", "-s", "3", "-e", "0.001", str(data), str(tmp_path / "m")]) == 0
    lines = _progress_lines(capsys.readouterr().err)
    assert {re.match(r"^\[\d+ s\] class (\d+): ", line)[1] for line in lines} == {"1", "2", "3"}


def test_primal_newton_lines_are_liblinears(data, tmp_path, capsys, long_runs):
    assert main(["train", "-s", "2", str(data), str(tmp_path / "m")]) == 0
    lines = _progress_lines(capsys.readouterr().err)
    assert lines and all(re.match(r"^\[\d+ s\] (init f|iter +\d+ f) ", x) for x in lines), lines


def test_cross_validation_reports_folds(data, capsys, long_runs):
    assert main(["train", "-v", "3", "-s", "3", "-e", "0.001", str(data)]) == 0
    captured = capsys.readouterr()
    lines = _progress_lines(captured.err)
    assert any(re.match(r"^\[\d+ s\] fold [123] of 3: iter ", x) for x in lines), lines
    assert any(re.match(r"^\[\d+ s\] cross-validation: [123] of 3 folds done$", x)
               for x in lines), lines  # fmt: skip
    assert captured.out.splitlines()[-1].startswith("Cross Validation Accuracy = ")
    assert main(["train", "-q", "-v", "3", "-s", "3", "-e", "0.001", str(data)]) == 0
    assert not _progress_lines(capsys.readouterr().err)


def test_cache_reports_rows_converted(data, tmp_path, capsys, long_runs):
    assert main(["cache", "--block-size", "0.001", str(data), str(tmp_path / "c")]) == 0
    captured = capsys.readouterr()
    lines = _progress_lines(captured.err)
    assert lines and all(re.match(r"^\[\d+ s\] \d+ rows, [\d.]+ MB of text converted$", x)
                         for x in lines), lines  # fmt: skip
    assert captured.out.startswith(f"{tmp_path / 'c'}: 300 rows")
    assert main(["cache", "-q", str(data), str(tmp_path / "c")]) == 0
    assert capsys.readouterr() == ("", "")


def test_block_minimisation_reports_blocks(data, tmp_path, capsys, long_runs):
    cache = tmp_path / "c"
    assert main(["cache", "-q", "--block-size", "0.002", str(data), str(cache)]) == 0
    argv = ["train", "--memory", "1G", "-s", "3", str(cache), str(tmp_path / "m")]
    assert main(argv) == 0
    lines = _progress_lines(capsys.readouterr().err)
    assert any(re.match(r"^\[\d+ s\] outer 1: \d+ of \d+ blocks, \d+ MB read$", x)
               for x in lines), lines  # fmt: skip
    assert main(["train", "-v", "2", *argv[1:-1]]) == 0
    lines = _progress_lines(capsys.readouterr().err)
    assert any(x.endswith("cross-validation: 1 of 2 folds done") for x in lines), lines
    assert main(["train", "-q", *argv[1:]]) == 0
    assert capsys.readouterr() == ("", "")


def test_short_runs_print_no_progress(data, tmp_path, capsys, short_runs):
    cache = tmp_path / "c"
    for argv in (
        ["train", "-s", "3", "-e", "0.001", str(data), str(tmp_path / "m")],
        ["train", "-v", "3", "-s", "3", str(data)],
        ["cache", str(data), str(cache)],
        ["train", "--memory", "1G", "-s", "3", str(cache), str(tmp_path / "m")],
    ):
        assert main(argv) == 0
        assert not _progress_lines(capsys.readouterr().err), argv


def test_train_progress_in_the_library(data, capsys, long_runs):
    X, y = linsvm.read_libsvm(data)
    linsvm.train(X, y, solver=3, progress=True)
    assert _progress_lines(capsys.readouterr().err)
    linsvm.train(X, y, solver=3)  # off by default
    assert not _progress_lines(capsys.readouterr().err)


def test_timer_reads_the_clock_once_a_tick_and_describes_only_when_due(monkeypatch):
    readings = iter([0.0, 1.0, 2.9, 3.0, 7.9, 8.0, 9.0])
    monkeypatch.setattr(_progress, "clock", lambda: next(readings))
    timer = _progress.ProgressTimer()  # reads 0.0
    described = []
    for _ in range(6):
        timer.tick(lambda: described.append(1) or "line")
    # due at 3.0 (quiet seconds), then at 8.0 (3.0 + every 5 s)
    assert len(described) == 2
