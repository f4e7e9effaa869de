"""``benchmarks/harness.py``'s sweep: repeats draw other orders (seed k for repeat k), and a
setting that reached the tightest target on its probe but not on every repeat does not end
the sweep."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import harness  # noqa: E402
from benchmarks.peers import FitResult, Setting, Tool  # noqa: E402


class _Tool(Tool):
    """Relative accuracy by eps and seed: eps 1 reaches 1e-3 with seed 1 only."""

    name = "fake"

    def default_setting(self, loss):
        return Setting("default", (("eps", 0.1),))

    def sweep(self, loss):
        return [Setting(f"eps={eps:g}", (("eps", eps),)) for eps in (10.0, 1.0, 0.3, 0.1)]

    def fit(self, loss, setting):
        eps = setting.get("eps")
        rel = {10.0: 1e-1, 1.0: 5e-4 if self.seed == 1 else 2e-3, 0.3: 5e-4, 0.1: 1e-5}[eps]
        self.seeds.append(self.seed)
        return FitResult(1.0 / eps, np.array([rel]))


def test_the_sweep_goes_on_past_a_setting_that_fails_its_repeats(monkeypatch):
    monkeypatch.setattr(harness, "score", lambda ds, w, loss, cost: 1.0 + float(w[0]))
    monkeypatch.setattr(harness, "test_accuracy", lambda ds, w: 1.0)
    tool = _Tool()
    tool.seeds = []
    ds = type("Data", (), {"X": np.zeros((3, 1)), "X_test": None})()
    ref = harness.Reference(primal=1.0, dual=1.0)
    bench = harness.ToolBench(tool, ds, 1, ref, repeats=3, max_run_seconds=60.0)
    bench.sweep(bench.default())
    reached = {label for label, m in bench.runs.items()
               if bench.rel(m) <= 1e-3 and len(m.times) == 3}  # fmt: skip
    # eps=1 passed its probe (seed 1) and failed its repeats (seeds 2, 3): eps=0.3 was tried
    assert "eps=0.3" in reached and "eps=1" not in reached
    assert tool.seeds[:3] == [1, 2, 3]  # (the default's repeats: a seed each)
