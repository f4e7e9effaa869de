"""``linsvm compare`` in the seeds' shapes: named lineups, several data sets, the seeds' table.

- every racer of every named lineup is a registered solver of the loss it is drawn with;
- ``--lineup`` picks a seed's racers, ``--solvers`` others (not both); unknown names and bad
  ``-d`` / ``--test-fraction`` values are one-line errors;
- several data sets (``-d train,test``, or ``-d train`` split with a seeded share held out) give
  one folder each and one row each in ``lineup.md`` and ``lineup.csv``, whose figures are the
  runs' own (seconds and iterations to each line, read back from ``curves.json``).
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
    ComparisonResult,
    check_lineup,
    lineup_csv,
    parse_compare_args,
)
from linsvm.compare.command import split_rows
from linsvm.compare.lineup import LOSS_KEYS
from linsvm.compare.report import TARGETS
from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, model_file_solver


def test_lineups_are_registered_solvers_of_their_loss():
    assert DEFAULT_LINEUP == LINEUPS["dcd2008"]
    assert LINEUPS["dcd2008"] == ("dcd-l1", "pegasos", "svmperf", "dcd-l2", "pcd", "tron")
    for lineup in LINEUPS.values():
        for name in lineup:
            racer = LINEUP[name]
            spec = SOLVERS[racer.solver]
            # the racer's loss is the problem its solver's models solve: -s 3 or -s 1/2
            solved = model_file_solver(racer.solver).number
            expected = {LOSS_HINGE: {3}, LOSS_SQUARED_HINGE: {1, 2}}[racer.loss]
            assert solved in expected, (name, spec.name)
    assert {LINEUP[n].solver for n in LINEUPS["sgd2013"]} >= {35, 36, 37, 39, 3, 30, 31, 32, 33}


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
    assert lineup_csv(list(results.values()), names) == (out / "lineup.csv").read_text()
    assert LOSS_KEYS[LOSS_HINGE] == "l1"
    assert np.isfinite([r.runs["dcd-l1"].relative[-1] for r in results.values()]).all()
