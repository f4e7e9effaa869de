"""``benchmarks/bench_gpu.py --smoke``: the GPU benchmark end to end on tiny data (under
numba-cuda's simulator when the machine has no GPU, as conftest.py sets), so the script cannot
rot; and its clean exit when no GPU solve is possible."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import bench_gpu  # noqa: E402


@pytest.mark.skipif(not importlib.util.find_spec("numba_cuda"), reason="numba-cuda not installed")
def test_smoke_run_writes_a_report(tmp_path, monkeypatch, gpu_simulator):
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path))
    out = tmp_path / "report.md"
    before = sys.getswitchinterval()  # (the script sets its own)
    try:
        assert bench_gpu.main(["--smoke", "--out", str(out)]) == 0
    finally:
        sys.setswitchinterval(before)
    text = out.read_text()
    assert "Snap ML GPU skipped: --smoke" in text
    rows = [line for line in text.splitlines() if line.startswith("| linsvm ")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "linsvm GPU", "linsvm GPU hot views", "linsvm GPU hot block", "linsvm CPU 1t"
    ]
    # the GPU solver reaches every target, 1e-5 included, plain, with hot views, with the
    # hot block
    assert all("n/a" not in row for row in rows[:3])
    assert "rows in flight; smallest duality gap" in text
    assert "hot weights a block's view, flushed every 2 rounds" in text
    assert "8 weights in the block, Newton steps an epoch: 1," in text


def test_no_gpu_is_a_clean_exit(monkeypatch, capsys):
    monkeypatch.setattr(bench_gpu, "gpu_available", lambda: "device='cuda' needs a GPU")
    assert bench_gpu.main(["--out", "/nonexistent/report.md"]) == 1
    assert capsys.readouterr().err.strip() == "bench_gpu: cannot run: device='cuda' needs a GPU"
