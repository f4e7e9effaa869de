"""``benchmarks/bench_svr_threads.py`` on tiny generated data, in-process: the report has a
timing table for each SVR solver with the 2-thread runs on 2 threads, LIBLINEAR beside them,
and the simulator's epochs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the benchmarks package at the repository root

from benchmarks import bench_svr_threads as bst  # noqa: E402
from benchmarks import common  # noqa: E402


def test_small_run(tmp_path, monkeypatch):
    pytest.importorskip("liblinear")
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path / "scratch"))
    # every problem is large enough for 2 threads
    monkeypatch.setattr("linsvm.solvers._dual_threads.THREAD_MIN_NNZ", 1)
    out = tmp_path / "report.md"
    bst.main(["--datasets", common.SYNTHETIC, "--synthetic-rows", "2000", "--repeats", "1",
              "--simulate", "16", "--out", str(out)])  # fmt: skip
    text = out.read_text()
    for solver in (12, 13):
        assert f"(-s {solver})**" in text
        assert f"Epochs to 1e-2 / 1e-3 by simulated threads (L{1 if solver == 13 else 2}" in text
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| linsvm")]
    assert len(rows) == 8  # 2 solvers x 2 thread counts x 2 targets
    for cells in rows:
        name, threads_used = cells[0].strip(), cells[5].strip()
        assert cells[2].strip() != "not reached"
        assert threads_used == ("2" if name.startswith("linsvm, 2") else "1")
    assert sum(line.startswith("| LIBLINEAR") for line in text.splitlines()) == 4
