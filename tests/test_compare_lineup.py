"""``linsvm compare`` in the seeds' shapes: named lineups, several data sets, the seeds' table;
and what its outputs must not make a reader believe.

- every racer of every named lineup is a registered solver of the loss it is drawn with;
- ``--lineup`` picks a seed's racers, ``--solvers`` others (not both); unknown names and bad
  ``-d`` / ``--test-fraction`` values are one-line errors;
- several data sets (``-d train,test``, or ``-d train`` split with a seeded share held out) give
  one folder each and one row each in ``lineup.md`` and ``lineup.csv``, whose figures are the
  runs' own (seconds and iterations to each line, read back from ``curves.json``);
- a racer stopped by its budget is reported as such with the accuracy it reached; a given
  ``--max-time`` is every racer's budget; ``--target`` moves the stop line (and P*'s
  certification with it, the same for both losses); the time axis stays readable when it spans
  less than a decade.
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from conftest import make_sparse_problem

import linsvm
from linsvm.compare import (
    DEFAULT_LINEUP,
    LINEUP,
    LINEUPS,
    RACE_FACTOR,
    ComparisonResult,
    check_lineup,
    compare,
    lineup_csv,
    lineup_tables,
    parse_compare_args,
)
from linsvm.compare.command import split_rows
from linsvm.compare.lineup import LOSS_KEYS
from linsvm.compare.report import TARGETS, fmt_seconds
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, model_file_solver


def test_lineups_are_registered_solvers_of_their_loss():
    assert DEFAULT_LINEUP == LINEUPS["dcd2008"]
    assert LINEUPS["dcd2008"] == ("dcd-l1", "pegasos", "svmperf", "dcd-l2", "pcd", "tron")
    for lineup in LINEUPS.values():
        for name in lineup:
            racer = LINEUP[name]
            if racer.unavailable:  # listed with the reason, not raced
                assert racer.solver not in SOLVERS and "not available" in racer.unavailable
                continue
            spec = SOLVERS[racer.solver]
            # the racer's loss is the problem its solver's models solve: -s 3 or -s 1/2
            solved = model_file_solver(racer.solver).number
            expected = {LOSS_HINGE: {3}, LOSS_SQUARED_HINGE: {1, 2}}[racer.loss]
            assert solved in expected, (name, spec.name)
    assert {LINEUP[n].solver for n in LINEUPS["sgd2013"]} >= {35, 36, 37, 39, 3, 30, 31, 32, 33}


def test_a_racer_not_available_is_listed_with_the_reason(files_small):
    X, y = files_small
    result = compare(X, y, X, y, solvers=["dcd-l1", "mpu"], max_time=1.0, quiet=True,
                     check_overhead=False)  # fmt: skip
    assert list(result.runs) == ["dcd-l1"] and set(result.unavailable) == {"mpu"}
    assert LINEUP["mpu"].unavailable in "\n".join(result.markdown())
    table = "\n".join(lineup_tables([result], ["dcd-l1", "mpu"]))
    assert "| not available |" in table and LINEUP["mpu"].unavailable in table
    rows = list(csv.DictReader(io.StringIO(lineup_csv([result], ["dcd-l1", "mpu"]))))
    assert [r["stopped_by"] for r in rows if r["racer"] == "mpu"] == ["not available"]
    again = ComparisonResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.unavailable == result.unavailable


def test_lineup_options(tmp_path):
    opts = parse_compare_args(["--lineup", "sgd2013", "a", "b"])
    assert opts.racers == list(LINEUPS["sgd2013"]) and opts.datasets == [("a", "b")]
    assert parse_compare_args(["a", "b"]).racers == list(DEFAULT_LINEUP)
    opts = parse_compare_args(["-d", "x.xz", "--dataset", "y,y.t", "--test-fraction", "0.3"])
    assert opts.datasets == [("x.xz", ""), ("y", "y.t")] and opts.test_fraction == 0.3
    assert opts.outdir == "compare-lineup"
    assert parse_compare_args(["-d", "data/x.xz"]).outdir == "compare-x"
    for argv, words in [
        (["--lineup", "dcd2009", "a", "b"], "unknown lineup 'dcd2009'; valid: dcd2008"),
        (["--lineup", "sgd2013", "--solvers", "dcd-l1", "a", "b"], "either --lineup or --solvers"),
        (["-d", "a", "b", "c"], "either as training_set_file test_set_file or with -d"),
        (["-d", ",t"], "option -d needs train[,test]"),
        (["--test-fraction", "1", "a", "b"], "between 0 and 1"),
    ]:
        with pytest.raises(InvalidInputError, match=re.escape(words)):
            parse_compare_args(argv)
    with pytest.raises(InvalidInputError, match="unknown lineup"):
        check_lineup("")


def test_split_is_seeded_and_disjoint():
    X, y = make_sparse_problem(n_rows=50, n_features=4, seed=2)
    X = X.tocsr()
    Xa, ya, Xt, yt = split_rows(X, y, 0.2, seed=7)
    Xb, _, _, _ = split_rows(X, y, 0.2, seed=7)
    assert Xa.shape[0] == 40 and Xt.shape[0] == 10 and ya.shape == (40,) and yt.shape == (10,)
    assert (Xa != Xb).nnz == 0
    assert sorted(map(tuple, np.vstack([Xa.toarray(), Xt.toarray()]))) == sorted(
        map(tuple, X.toarray())
    )
    with pytest.raises(InvalidInputError, match="cannot hold out"):
        split_rows(X[:3], y[:3], 0.1, seed=1)
    # any integer seed, as the solvers take (a negative one was a NumPy traceback)
    assert split_rows(X, y, 0.2, seed=-1)[2].shape[0] == 10


def test_several_data_sets_one_row_each(tmp_path, capsys):
    from linsvm.cli import main

    paths = []
    for k, n_rows in enumerate((240, 300)):
        X, y = make_sparse_problem(n_rows=n_rows, n_features=12, seed=10 + k)
        path = tmp_path / f"set{k}"
        linsvm.write_libsvm(X, y, path)
        paths.append(path)
    X, y = make_sparse_problem(n_rows=80, n_features=12, seed=20)
    linsvm.write_libsvm(X, y, tmp_path / "set1.t")
    out = tmp_path / "out"
    names = ["dcd-l1", "pegasos", "dcd-l2"]
    rc = main(["compare", "-q", "--max-time", "0.2", "--no-overhead-run", "--solvers",
               ",".join(names), "-o", str(out), "-d", str(paths[0]),
               "-d", f"{paths[1]},{tmp_path / 'set1.t'}"])  # fmt: skip
    printed = capsys.readouterr().out
    assert rc == 0
    table = (out / "lineup.md").read_text()
    assert table.rstrip() in printed
    for target in ("1%", "0.1%"):
        assert f"to {target} of the optimal primal value" in table
    for name in names:
        assert LINEUP[name].label in table
    results = {}
    for k in (0, 1):
        data = json.loads((out / f"set{k}" / "curves.json").read_text())
        results[k] = ComparisonResult.from_json(data)
        assert f"| set{k} |" in table
    assert results[0].n_rows == 240 - 48 and results[0].n_test == 48  # the split: 20% held out
    assert results[1].n_rows == 300 and results[1].n_test == 80
    rows = list(csv.DictReader(io.StringIO((out / "lineup.csv").read_text())))
    assert len(rows) == 2 * len(names) * len(TARGETS)
    for row in rows:
        run = results[int(row["dataset"].removeprefix("set"))].runs[row["racer"]]
        target = float(row["target"])
        assert row["loss"] == run.loss and int(row["solver"]) == LINEUP[row["racer"]].solver
        t = run.time_to(target)
        assert row["reached"] == str(int(t is not None))
        if t is not None:
            assert float(row["seconds"]) == pytest.approx(t, rel=1e-5)
            assert int(row["iterations"]) == run.iterations_to(target)
            # the table's cell says the same
            assert f"({run.iterations_to(target)})" in table
    again = list(csv.DictReader(io.StringIO(lineup_csv(list(results.values()), names))))
    assert [(r["dataset"], r["racer"], r["target"], r["reached"]) for r in again] == [
        (r["dataset"], r["racer"], r["target"], r["reached"]) for r in rows
    ]
    assert LOSS_KEYS[LOSS_HINGE] == "l1"
    assert np.isfinite([r.runs["dcd-l1"].relative[-1] for r in results.values()]).all()


# ---- what a user read wrongly in the race's outputs -------------------------------------------


def test_a_budget_stop_is_not_reported_as_a_time(files_small, monkeypatch):
    """A racer cut by its time budget: the table says so and how far it got, not "not reached
    in 2.01" as if that were a measurement."""
    import linsvm.compare.runners as runners

    monkeypatch.setattr(runners, "STOP_ACCURACY", 1e-9)  # out of Pegasos' reach
    X, y = files_small
    result = compare(X, y, X, y, solvers=["pegasos"], max_time=0.05, quiet=True,
                     check_overhead=False, pstar_time=0.5)  # fmt: skip
    run = result.runs["pegasos"]
    assert run.stop == "time budget"
    _, rows = result.table("l1")
    best = f"{float(run.relative.min()):.2e}"
    assert rows[0][3] == f"stopped by the {fmt_seconds(run.budget)} s budget at {best}"
    assert not any("not reached in" in c for c in rows[0])


def test_max_time_given_is_every_racers_budget(tmp_path, monkeypatch):
    """--max-time widens the budget of the racers after a fast one (no race factor)."""
    import linsvm.compare.command as command

    seen = []
    monkeypatch.setattr(command, "compare", lambda *a, **k: seen.append(k) or _raise())
    X, y = make_sparse_problem(n_rows=60, n_features=5, seed=1)
    path = tmp_path / "d"
    linsvm.write_libsvm(X, y, path)
    for argv, factor in (([], RACE_FACTOR), (["--max-time", "90"], None)):
        with pytest.raises(_Stop):
            command.run_compare(["-q", *argv, str(path), str(path)])
        assert seen[-1]["race_factor"] == factor


class _Stop(Exception):
    pass


def _raise():
    raise _Stop


def test_target_moves_the_stop_line_and_the_reference_certifies_it(files_small):
    X, y = files_small
    result = compare(X, y, X, y, solvers=["dcd-l1", "dcd-l2"], max_time=5.0, quiet=True,
                     check_overhead=False, target=1e-5)  # fmt: skip
    assert result.targets == (1e-2, 1e-3, 1e-5)
    header, _ = result.table("l1")
    assert "time to 1e-5 (s)" in header
    for name, loss in (("dcd-l1", "l1"), ("dcd-l2", "l2")):
        run = result.runs[name]
        assert run.stop == "past 1e-5" and run.time_to(1e-5) is not None
        ref = result.references[loss]
        # one certified accuracy for both losses, and the text says it, not a tolerance
        assert ref.certified_gap <= 1e-8 and ref.source == "the reference DCD run"
    text = "\n".join(result.markdown())
    assert "eps 0.0" not in text and "(P* - D)/D <= 1e-08" in text
    with pytest.raises(InvalidInputError, match="target must be below 1"):
        compare(X, y, X, y, solvers=["dcd-l1"], quiet=True, target=2.0)
    with pytest.raises(InvalidInputError, match="--target needs a relative accuracy"):
        parse_compare_args(["--target", "0", "a", "b"])
    assert parse_compare_args(["--target", "1e-4", "a", "b"]).target == 1e-4


@pytest.mark.parametrize("span", [(0.21, 0.88), (0.5, 0.9), (0.085, 0.7), (1.1, 9.9)])
def test_time_axis_labels_within_a_decade(span):
    """On a time axis of less than a decade matplotlib labels its minor ticks too, as
    "2 x 10^-1, 3 x 10^-1, ...", crowded: the figures label plain numbers (1, 2, 5 x 10^k),
    at least two, none over another."""
    pytest.importorskip("matplotlib")
    from linsvm.compare.figures import draw
    from linsvm.compare.report import Reference, SolverRun

    times = np.concatenate([[0.0], np.geomspace(*span, 6)])
    k = times.size
    run = SolverRun("dcd-l2", "l2", "DCD-L2", "PG", times, np.arange(k), np.linspace(2, 1, k),
                    np.full(k, 0.8), np.zeros((0, 3)), k - 1, "converged", 0.9, 0.0, 0.9,
                    relative=np.geomspace(1, 1e-4, k))  # fmt: skip
    result = ComparisonResult("d", 10, 3, 30, 5, 1.0, -1.0, 1.0, {"l2": Reference(1.0, 0.9)},
                              {"dcd-l2": run})  # fmt: skip
    for kind in ("objective", "accuracy"):
        fig = draw(result, "l2", kind)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        lo, hi = ax.get_xlim()
        labels = [
            (tick.label1.get_text(), tick.label1.get_window_extent(renderer))
            for tick in ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()
            if tick.label1.get_visible() and tick.label1.get_text() and lo <= tick.get_loc() <= hi
        ]
        assert len(labels) >= 2, kind  # something to read the axis by
        for text, _ in labels:
            float(text)  # a plain number, not math text
        boxes = sorted((box for _, box in labels), key=lambda b: b.x0)
        for a, b in zip(boxes, boxes[1:], strict=False):
            assert a.x1 <= b.x0, kind


@pytest.fixture(scope="module")
def files_small():
    X, y = make_sparse_problem(n_rows=300, n_features=30, seed=3)
    return X, y
