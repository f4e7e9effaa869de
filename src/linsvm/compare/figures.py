"""The race's figures: relative primal difference and test accuracy against training time.

Per loss, ``<loss>-objective.png`` (log-log) and ``<loss>-accuracy.png``, one curve per racer.
matplotlib (the ``plot`` extra) is optional: without it no figure is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .lineup import LINEUP, LOSS_TITLES

if TYPE_CHECKING:
    from .report import ComparisonResult, SolverRun


def plot_figures(result: ComparisonResult, outdir: str | os.PathLike, dpi: int = 100) -> list[Path]:
    """``<loss>-objective.png`` and ``<loss>-accuracy.png`` per loss; [] without matplotlib.

    Uses matplotlib's object interface on its Agg canvas (no pyplot, no global backend).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return []
    out = Path(outdir)
    files = []
    for loss in result.losses():
        runs = [r for r in result.runs.values() if r.loss == loss]
        what = f"{result.dataset}, {LOSS_TITLES[loss]}, C = {result.C:g}, {result.n_rows:,} rows"
        for kind in ("objective", "accuracy"):
            fig = Figure(figsize=(7.5, 4.6))
            FigureCanvasAgg(fig)
            ax = fig.add_subplot()
            for r in runs:
                _plot_run(ax, r, kind)
            ax.set_xscale("log")
            ax.set_xlabel(
                "training time (s, log scale)" if result.clock == "wall"
                else "training time (CPU s, log scale)"
            )  # fmt: skip
            ax.grid(True, which="major", alpha=0.3)
            if kind == "objective":
                ax.set_yscale("log")
                ax.set_ylabel("(P(w) - P*) / P*")
                for target, text in ((1e-2, "1%"), (1e-3, "0.1%")):
                    ax.axhline(target, color="0.4", linestyle=":", linewidth=1)
                    ax.annotate(text, (1.0, target), xycoords=("axes fraction", "data"),
                                xytext=(3, 0), textcoords="offset points", va="center",
                                fontsize=8, color="0.3")  # fmt: skip
                ax.set_title(f"Relative primal difference\n{what}", fontsize=10)
            else:
                ax.set_ylabel("test accuracy (%)")
                _accuracy_limits(ax, runs)
                ax.set_title(f"Test accuracy\n{what}", fontsize=10)
            ax.legend(fontsize=8, loc="lower left" if kind == "objective" else "lower right")
            fig.tight_layout()
            path = out / f"{loss}-{kind}.png"
            fig.savefig(path, dpi=dpi)
            files.append(path)
    return files


def _plot_run(ax, r: SolverRun, kind: str) -> None:
    racer = LINEUP.get(r.name)
    style = (
        dict(color=racer.color, marker=racer.marker, linestyle=racer.linestyle)
        if racer is not None
        else {}
    )
    keep = r.times > 0  # the log time axis has no room for w = 0 at t = 0
    t = r.times[keep]
    if kind == "objective":
        v = r.relative[keep]
        floor = 1e-12
        v = np.where(v > floor, v, floor)
    else:
        v = 100.0 * r.test_accuracy[keep]
    if t.size == 0:
        return
    ax.plot(t, v, label=r.label, markevery=max(1, t.size // 8), markersize=5, linewidth=1.4,
            **style)  # fmt: skip


def _accuracy_limits(ax, runs: Sequence[SolverRun]) -> None:
    """Focus on the range the solvers end in (not the first iterations' accuracy)."""
    finals = [100.0 * r.test_accuracy[-1] for r in runs if np.isfinite(r.test_accuracy[-1])]
    if not finals:
        return
    best = max(100.0 * np.nanmax(r.test_accuracy) for r in runs)
    low = min(finals)
    span = max(best - low, 0.5)
    ax.set_ylim(low - 1.5 * span, best + 0.3 * span)
