"""``linsvm compare``'s files: written whole or not at all, checked before the race, and no
note or figure that is not this run's own.

- every report, figure and lineup file is written atomically: a write that fails (here the
  file size limit) leaves the earlier run's file whole, and its one-line error names the file;
- a data file that cannot be read and an output folder or file that cannot be written are
  refused in one line before any race (the last ``-d`` too);
- the figures an earlier run drew for a loss this run does not race are removed;
- compare.md says matplotlib is missing only when it is; racers that cannot run only are refused.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import make_sparse_problem

import linsvm
from linsvm.compare import command

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

needs_matplotlib = pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed")
RACE = ["-q", "--max-time", "0.1", "--no-overhead-run"]


def main(argv: list[str]) -> int:
    from linsvm.cli import main as cli_main

    return cli_main(argv)


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    """A small binary training file (raced on itself: the test file is the same)."""
    path = tmp_path_factory.mktemp("outputs") / "small.train"
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=5, labels=np.array([1.0, -1.0]))
    linsvm.write_libsvm(X, y, path)
    return path


@pytest.fixture(scope="module")
def earlier_run(train, tmp_path_factory):
    """An earlier run's folder, both losses raced (copy it before writing over it)."""
    out = tmp_path_factory.mktemp("earlier") / "out"
    assert main(["compare", *RACE, "--solvers", "dcd-l1,dcd-l2", "-o", str(out),
                 str(train), str(train)]) == 0  # fmt: skip
    return out


def one_line_error(capsys, argv: list[str]) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and err.startswith("linsvm compare: error: "), err
    return err


@needs_matplotlib
def test_a_failed_write_leaves_the_earlier_file_whole_and_names_it(train, earlier_run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(earlier_run, out)
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    figure = out / "l1-objective.png"
    limit = 8192  # a figure is larger, compare.md and curves.json of one racer smaller
    assert len(before[figure.name]) > limit
    # the file size limit in a child process (Python ignores SIGXFSZ: writes fail with EFBIG)
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from linsvm.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["compare", *RACE, "--solvers", "dcd-l1", "-o", str(out), str(train), str(train)]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr == f"linsvm compare: error: {figure}: File too large\n"
    after = {f.name: f.read_bytes() for f in out.iterdir()}
    assert after == before  # nothing truncated, no temporary file left


@needs_matplotlib
def test_figures_of_a_loss_not_raced_are_removed(train, earlier_run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(earlier_run, out)
    assert (out / "l2-objective.png").exists()
    assert main(["compare", *RACE, "--solvers", "dcd-l1", "-o", str(out),
                 str(train), str(train)]) == 0  # fmt: skip
    pngs = sorted(f.name for f in out.glob("*.png"))
    assert pngs == ["l1-accuracy.png", "l1-objective.png"]


@pytest.fixture
def no_race(monkeypatch):
    """The race made to fail loudly: what these tests refuse must be refused before it."""

    def race(*args, **kwargs):
        raise AssertionError("raced before the inputs and outputs were checked")

    monkeypatch.setattr(command, "compare", race)


def test_a_later_data_file_is_checked_before_racing(capsys, train, tmp_path, no_race):
    typo = tmp_path / "typo.txt"
    err = one_line_error(capsys, ["compare", *RACE, "-d", str(train), "-d", str(typo),
                                  "-o", str(tmp_path / "out")])  # fmt: skip
    assert err.endswith(f": error: {typo}: No such file or directory\n")
    err = one_line_error(capsys, ["compare", *RACE, "-d", f"{train},{tmp_path}",
                                  "-o", str(tmp_path / "out")])  # fmt: skip
    assert err.endswith(f": error: {tmp_path}: Is a directory\n")


def test_the_output_folder_is_checked_before_racing(capsys, train, tmp_path, no_race):
    afile = tmp_path / "afile"
    afile.write_text("")
    err = one_line_error(capsys, ["compare", *RACE, "-o", str(afile / "sub"),
                                  str(train), str(train)])  # fmt: skip
    assert err.endswith(f": error: {afile / 'sub'}: Not a directory\n")
    # an output file that cannot be written: a folder in its place
    (tmp_path / "out" / "compare.md").mkdir(parents=True)
    err = one_line_error(capsys, ["compare", *RACE, "-o", str(tmp_path / "out"),
                                  str(train), str(train)])  # fmt: skip
    assert err.endswith(f": error: {tmp_path / 'out' / 'compare.md'}: Is a directory\n")


def test_nothing_to_race_is_refused(capsys, train, tmp_path):
    """Racers that cannot run only: an error (it wrote empty reports and exited 0)."""
    out = tmp_path / "out"
    err = one_line_error(capsys, ["compare", *RACE, "--solvers", "mpu", "-o", str(out),
                                  str(train), str(train)])  # fmt: skip
    assert ": error: no racer can run: mpu: not available" in err
    assert not (out / "compare.md").exists()


def test_missing_matplotlib_is_said_and_no_earlier_figure_stays(
    train, earlier_run, tmp_path, monkeypatch
):
    out = tmp_path / "out"
    shutil.copytree(earlier_run, out)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # (import matplotlib: ImportError)
    assert main(["compare", *RACE, "--solvers", "dcd-l1", "-o", str(out),
                 str(train), str(train)]) == 0  # fmt: skip
    text = (out / "compare.md").read_text()
    assert "no figures: matplotlib is missing (pip install 'linsvm[plot]')" in text
    assert not list(out.glob("*.png"))


def test_a_later_data_set_that_cannot_race_is_refused_before_the_first_race(capsys, train,
                                                                            tmp_path, no_race):
    """A second set of three classes (or a malformed line) was found after the first set's
    race, and the lineup's tables were lost."""
    three = tmp_path / "three.txt"
    three.write_text("1 1:1\n2 1:2\n3 2:1\n1 2:2\n")
    err = one_line_error(capsys, ["compare", *RACE, "-d", f"{train},{train}", "-d",
                                  f"{three},{three}", "-o", str(tmp_path / "out")])  # fmt: skip
    assert err.endswith(": error: data set three.txt: compare needs two classes, the training "
                        "labels have 3 (1, 2, 3)\n")  # fmt: skip
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1:1\n-1 1:x\n")
    err = one_line_error(capsys, ["compare", *RACE, "-d", f"{train},{train}", "-d", str(bad),
                                  "-o", str(tmp_path / "out")])  # fmt: skip
    assert f"{bad}:2" in err
