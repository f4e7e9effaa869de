"""Benchmark runs write where they are told: a report at ``--out`` elsewhere takes its
figures with it, and the committed figures its report links to are left as they are."""

from __future__ import annotations

import sys
from pathlib import Path

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_compare  # noqa: E402


def test_compare_figures_go_beside_the_report(tmp_path):
    args = bench_compare.parse_args(["--quick", "--out", str(tmp_path / "r.md")])
    assert Path(args.figures) == tmp_path / "figures"
    default = bench_compare.parse_args([])
    assert Path(default.figures) == Path(bench_compare.BENCH_DIR) / "figures"
