"""The race's figures: relative primal difference and test accuracy against training time.

Per loss, ``<loss>-objective.png`` (log-log) and ``<loss>-accuracy.png``, one curve per racer.
matplotlib (the ``plot`` extra) is optional: without it no figure is drawn. Each file is written
atomically (``linsvm.io._atomic``): a failed write leaves the earlier run's figure whole.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..io._atomic import atomic_writer
from .lineup import LINEUP, LOSS_TITLES

if TYPE_CHECKING:
    from .report import ComparisonResult, SolverRun

FIGURE_KINDS = ("objective", "accuracy")


def figure_path(outdir: str | os.PathLike, loss: str, kind: str) -> Path:
    """The file of one figure: ``<outdir>/<loss>-<kind>.png``."""
    return Path(outdir) / f"{loss}-{kind}.png"


def figure_paths(outdir: str | os.PathLike) -> list[Path]:
    """Every figure a race may draw in ``outdir``, of either loss."""
    return [figure_path(outdir, loss, kind) for loss in LOSS_TITLES for kind in FIGURE_KINDS]


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_figures(result: ComparisonResult, outdir: str | os.PathLike, dpi: int = 100) -> list[Path]:
    """``<loss>-objective.png`` and ``<loss>-accuracy.png`` per loss; [] without matplotlib.

    Uses matplotlib's object interface on its Agg canvas (no pyplot, no global backend).
    """
    if not have_matplotlib():
        return []
    files = []
    for loss in result.losses():
        for kind in FIGURE_KINDS:
            fig = draw(result, loss, kind)
            path = figure_path(outdir, loss, kind)
            with atomic_writer(path) as f:
                fig.savefig(f, format="png", dpi=dpi)
            files.append(path)
    return files


def remove_other_figures(outdir: str | os.PathLike, drawn: Sequence[Path]) -> None:
    """Remove the figures in ``outdir`` other than ``drawn``: an earlier run's, of a loss this
    run did not race (or of any loss, without matplotlib), which beside this run's report
    would pass for its own."""
    keep = {Path(p).name for p in drawn}
    for path in figure_paths(outdir):
        if path.name not in keep:
            path.unlink(missing_ok=True)


def draw(result: ComparisonResult, loss: str, kind: str):
    """One figure (a matplotlib ``Figure`` on an Agg canvas): ``kind`` "objective" or
    "accuracy" of the runs of ``loss`` against time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    runs = [r for r in result.runs.values() if r.loss == loss]
    what = f"{result.dataset}, {LOSS_TITLES[loss]}, C = {result.C:g}, {result.n_rows:,} rows"
    fig = Figure(figsize=(7.5, 4.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for r in runs:
        _plot_run(ax, r, kind)
    ax.set_xscale("log")
    _time_ticks(ax, [r.times[r.times > 0] for r in runs])
    ax.set_xlabel(
        "training time (s, log scale)" if result.clock == "wall"
        else "training time (CPU s, log scale)"
    )  # fmt: skip
    ax.grid(True, which="major", alpha=0.3)
    if kind == "objective":
        ax.set_yscale("log")
        ax.set_ylabel("(P(w) - P*) / P*")
        for target in result.targets:
            ax.axhline(target, color="0.4", linestyle=":", linewidth=1)
            ax.annotate(f"{100 * target:g}%", (1.0, target), xycoords=("axes fraction", "data"),
                        xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=8, color="0.3")  # fmt: skip
        ax.set_title(f"Relative primal difference\n{what}", fontsize=10)
    else:
        ax.set_ylabel("test accuracy (%)")
        _accuracy_limits(ax, runs)
        ax.set_title(f"Test accuracy\n{what}", fontsize=10)
    if ax.get_legend_handles_labels()[0]:  # (no curve drawn: no legend, nor matplotlib's warning)
        ax.legend(fontsize=8, loc="lower left" if kind == "objective" else "lower right")
    fig.tight_layout()
    return fig


def _time_ticks(ax, times: Sequence[np.ndarray]) -> None:
    """Readable ticks on the log time axis: below two decades matplotlib labels the minor
    ticks too (2, 3, ... 9 x 10^k, crowded into one another); label 1, 2 and 5 x 10^k as plain
    numbers instead, and leave the minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    spans = [t for t in times if t.size]
    if not spans:
        return
    low = min(float(t.min()) for t in spans)
    high = max(float(t.max()) for t in spans)
    if high / low >= 100.0:
        return  # matplotlib's decade labels are readable
    ax.xaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


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
