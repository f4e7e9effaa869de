"""``benchmarks/bench_dcd_threads.py`` on tiny generated data: its ``--quick`` path end to end,
its presets, and its time budget.

- the smoke run (no shared data, multi-core LIBLINEAR's venv pointed at nothing) writes a
  report whose linsvm 2-thread runs did run on 2 threads, with a duality gap >= 0 and
  w = sum_i y_i alpha_i x_i up to rounding, names the missing peer, and has the simulator's
  section with its verdict at 16 threads;
- ``--big-machine`` sets the 16-core preset and options given beside it win;
- a tool whose share of the budget is already spent is not run, and says so.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(REPO))

# Looked up, not imported: snapml's library is built with -ffast-math, and loading it turns on
# flush-to-zero for the whole process, which breaks hypothesis's float strategies in later tests.
needs_snapml = pytest.mark.skipif(importlib.util.find_spec("snapml") is None,
                                  reason="snapml is not installed")  # fmt: skip

from benchmarks import bench_dcd_threads as bdt  # noqa: E402
from benchmarks.common import Dataset  # noqa: E402
from benchmarks.harness import Reference  # noqa: E402
from benchmarks.peers import FitResult, Setting, Tool  # noqa: E402


def _table_rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first markdown table after ``heading``, as lists of cells."""
    lines = text[text.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


@needs_snapml
def test_quick_run(tmp_path):
    out = tmp_path / "report.md"
    env = dict(os.environ, LINSVM_BENCH_SCRATCH=str(tmp_path / "scratch"),
               LINSVM_SHARED_DATA=str(tmp_path / "no-data"),
               LINSVM_MULTICORE_VENV=str(tmp_path / "no-venv"))
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_dcd_threads", "--quick", "--datasets",
         "synthetic-text", "--synthetic-rows", "5000", "--simulator-threads", "2,16",
         "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "--quick" in text and "smoke run" in text
    # the timed tables: every target and thread count, Snap ML measured, MC not installed
    for loss in ("L2-loss (squared hinge), -s 1", "L1-loss (hinge), -s 3"):
        heading = next(line for line in text.splitlines()
                       if line.startswith("### synthetic-text (5,000 x ") and line.endswith(loss))
        rows = _table_rows(text, heading)
        assert [(r[0], r[1]) for r in rows] == [("0.01", "1"), ("0.01", "2"), ("0.001", "1"),
                                                ("0.001", "2")]
        # (columns: linsvm, threads used, async, rounds, Snap ML, multi-core LIBLINEAR)
        assert all(r[7] == "not installed" for r in rows)
        assert all(r[6] not in ("not installed", "not run") for r in rows)
        assert all(r[c] not in ("not installed", "not run") for r in rows if r[1] == "2"
                   for c in (4, 5))
    # linsvm's threaded runs, every scheme: 2 threads used, gap >= 0, w = sum y alpha x; the
    # default scheme at 2 threads is the replicas
    checks = _table_rows(text, "### linsvm's threaded runs")
    assert {(r[1], r[2], r[3].split()[0], r[4]) for r in checks} == {
        (loss, tool, "2", scheme) for loss in ("-s 1", "-s 3")
        for tool, scheme in (("linsvm 2t", "replicas"), ("linsvm 2t async", "async"),
                             ("linsvm 2t rounds", "rounds"))
    }
    for r in checks:
        assert float(r[11]) >= 0
        assert float(r[12]) < 1e-10
    assert "**negative**" not in text
    # the simulator: serial, 2 and 16 threads for both losses, and the verdict at 16
    sim = _table_rows(text, "## Epochs by simulated threads")
    assert [(r[0], r[1], r[2]) for r in sim] == [
        (s, t, scheme) for s in ("-s 1", "-s 3")
        for t, scheme in (("1", "serial"), ("2", "rounds"), ("16", "rounds"), ("2", "async"),
                          ("16", "async"))
    ]
    assert all(r[3].isdigit() and r[5].isdigit() for r in sim)
    verdicts = [line for line in text.splitlines()
                if line.startswith("- synthetic-text -s ") and "at 16 threads" in line]
    assert len(verdicts) == 4
    assert all(v.endswith(": holds") or v.endswith("**does not hold**") for v in verdicts)
    assert "multi-core LIBLINEAR not installed" in text


def test_presets():
    big = bdt.parse_args(["--big-machine"])
    assert big.threads == [1, 4, 8, 16] and big.repeats == 3 and big.no_simulator
    assert big.datasets == ["pypi-recent", "synthetic-text"]
    assert big.synthetic_rows == 3_000_000 and big.max_minutes == 5.0
    assert big.schemes == ["auto", "replicas"]
    assert bdt.parse_args(["--big-machine", "--repeats", "5"]).repeats == 5
    default = bdt.parse_args([])
    assert default.threads == [1, 2] and default.synthetic_rows == 3_000_000
    assert default.max_minutes is None and default.thread_min_nnz is None
    assert default.schemes == ["auto", "async", "rounds"]
    assert bdt.parse_args(["--quick"]).thread_min_nnz == 1


class _CountingTool(Tool):
    name = "counting"

    def __init__(self) -> None:
        self.fits = 0

    def sweep(self, loss):
        return [Setting(f"eps={e:g}", (("eps", e),)) for e in (1.0, 0.1)]

    def fit(self, loss, setting):
        self.fits += 1
        return FitResult(0.0, np.zeros(self.X.shape[1]), 1, True)


def test_spent_budget_runs_nothing():
    import scipy.sparse as sp

    X = sp.random(20, 5, density=0.5, format="csr", random_state=0)
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    tool = _CountingTool()
    tool.prepare(X, y)
    ref = Reference(primal=1.0, dual=1.0)
    spent = bdt.BudgetedBench(tool, Dataset("tiny", X, y), 2, ref, repeats=3,
                              max_run_seconds=10.0, deadline=time.perf_counter() - 1.0,
                              kill_seconds=10.0)
    spent.sweep()
    assert tool.fits == 0 and not spent.runs and spent.cut
    ample = bdt.BudgetedBench(tool, Dataset("tiny", X, y), 2, ref, repeats=3,
                              max_run_seconds=10.0, deadline=np.inf, kill_seconds=10.0)
    ample.sweep()
    assert tool.fits > 0 and ample.runs and not ample.cut
