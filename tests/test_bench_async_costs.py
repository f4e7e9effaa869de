"""``benchmarks/bench_async_costs.py`` on tiny generated data: every variant runs on the
threads asked for and the report has its row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # (the benchmarks package at the repository root)

from benchmarks import bench_async_costs  # noqa: E402


@pytest.mark.parametrize("bias", ["-1", "1"])
def test_smoke_run(tmp_path, monkeypatch, bias):
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path / "scratch"))
    out = tmp_path / "report.md"
    bench_async_costs.main([
        "--data", "synthetic-text", "--synthetic-rows", "3000", "--threads", "2",
        "--solvers", "3", "--repeats", "1", "--thread-min-nnz", "1", "--bias", bias,
        "--out", str(out),
    ])
    text = out.read_text()
    assert "## -s 3" in text
    assert ("C = 1, no bias;" if bias == "-1" else "C = 1, bias 1;") in text
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ")]
    cells = {row[0].strip(): [c.strip() for c in row[1:]] for row in rows[1:]}
    assert cells["serial"][0] == "1"
    names = ["async", "async, flushes / 4", "async, no views", "replicas"]
    with_bias = ["async, bias damped 1/2", "async, bias flushed every row",
                 "async, bias not discounted"]  # fmt: skip
    assert all((name in cells) == (bias == "1") for name in with_bias)
    for name in names + (with_bias if bias == "1" else []):
        threads, seconds, guard_end = cells[name][0], cells[name][1], cells[name][5]
        # (two threads: the guard halves no further, so all of them or one)
        assert threads == "2" and seconds != "n/a" and guard_end in ("all threads", "one thread")
