"""``benchmarks/bench_lineup.py`` end to end on a small set, so the script cannot rot: the
seeds' tables get one row per data set and a column per racer (MPU listed as not available),
and the originals' curves turn into times to each line as ours do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import bench_lineup, common  # noqa: E402
from benchmarks.common import find_data_file  # noqa: E402


def test_quick_run_writes_the_tables(tmp_path, monkeypatch):
    if find_data_file("heart_scale") is None:
        pytest.skip("heart_scale is not in the shared data folder")
    monkeypatch.setitem(common.REAL_DATASETS, "heart_scale", ("heart_scale", None))
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path))
    out = tmp_path / "report.md"
    bench_lineup.main(["--datasets", "heart_scale", "--repeats", "1", "--max-time", "0.5",
                       "--racers", "dcd-l1,ocas,svmsgd,mpu", "--no-originals", "--out",
                       str(out), "--figures", str(tmp_path / "figures")])  # fmt: skip
    text = out.read_text()
    for line in ("1%", "0.1%"):
        assert f"## Seconds (iterations) to {line} relative primal accuracy" in text
    rows = [r for r in text.splitlines() if r.startswith("| heart_scale |")]
    assert len(rows) == 3  # two lines and the ratios
    assert rows[0].count("|") == 6 and "not available" in rows[0]


def test_original_curves_become_times_to_the_lines(monkeypatch):
    """An original's points (seconds, iterations, P) give the first time past each line,
    median over repeats; one that never gets there says how far it got."""

    class Data:
        class X:
            shape = (10, 3)

    points = iter([
        [(1.0, 1, 1.5), (2.0, 2, 1.005), (3.0, 3, 1.0005)],
        [(1.2, 1, 1.5), (2.2, 2, 1.005), (3.4, 3, 1.0005)],
        [(1.1, 1, 1.5), (2.1, 2, 1.005), (3.2, 3, 1.0005)],
    ])  # fmt: skip
    fast = bench_lineup.Original("fast", "svmsgd", lambda *a: next(points), lambda: "")
    slow = bench_lineup.Original("slow", "svmsgd", lambda *a: [(5.0, 9, 1.02)], lambda: "")
    got = bench_lineup.originals_on(Data, [fast, slow], Path("x"), {"l1": 1.0}, 3, 1.0)
    assert got["fast"].seconds == {1e-2: 2.1, 1e-3: 3.2}
    assert got["fast"].iterations == {1e-2: 2, 1e-3: 3}
    assert got["slow"].seconds == {1e-2: None, 1e-3: None}
    assert bench_lineup.cell(got["slow"], 1e-2) == "not reached (final 2.0e-02)"
    assert bench_lineup.cell(got["fast"], 1e-3) == "3.20 (3)"


def test_a_cell_says_when_only_some_runs_reached_the_line():
    """A median is taken only where every run reached the line; where some did, the cell
    says how many (the median final accuracy may then lie past the line)."""
    some = bench_lineup.Reached(seconds={0.01: None}, iterations={0.01: None}, final=2.4e-4,
                                hits={0.01: (1, 3)})  # fmt: skip
    assert bench_lineup.cell(some, 0.01) == "reached in 1 of 3 runs (median final 2.4e-04)"
    none = bench_lineup.Reached(seconds={0.01: None}, iterations={0.01: None}, final=0.05,
                                hits={0.01: (0, 3)})  # fmt: skip
    assert bench_lineup.cell(none, 0.01) == "not reached (final 5.0e-02)"
    every = bench_lineup.Reached(seconds={0.01: 1.5}, iterations={0.01: 4}, hits={0.01: (3, 3)})
    assert bench_lineup.cell(every, 0.01) == "1.50 (4)"
