"""``benchmarks/bench_model_save.py`` on a tiny model: both writers run, the report says the
files are the same bytes; both readers load the file to the same weights."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import bench_model_save  # noqa: E402


def test_tiny_run_writes_a_report_of_identical_files(tmp_path):
    out = tmp_path / "report.md"
    assert bench_model_save.main(["--classes", "2,3", "--hash-bits", "8", "--repeats", "1",
                                  "--folder", str(tmp_path), "--out", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines()
            if line.startswith("| ") and "2^8" in line]
    assert len(rows) == 4  # (two saved, two loaded)
    assert all(row.rstrip(" |").endswith("yes") for row in rows)
    assert not list(tmp_path.glob("bench-model-save-*"))
