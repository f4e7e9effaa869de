"""The race's results: P* per loss, each racer's evaluated run, the tables, ``curves.json``.

``ComparisonResult`` holds everything measured; ``markdown()`` is the report (``compare.md``),
``to_json``/``from_json`` the raw curves, from which the figures can be redrawn.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..io._atomic import atomic_write_bytes
from .figures import figure_paths, have_matplotlib, plot_figures, remove_other_figures
from .lineup import LINEUP, LOSS_TITLES

TARGETS = (1e-2, 1e-3)
# curves.json keeps at most this many hook calls of each run (log-spaced: the early ones all).
TRACE_POINTS_JSON = 400


@dataclass
class Reference:
    """What is known of the optimum of one loss: P* (lowest primal seen) >= optimum >= dual."""

    primal: float = math.inf
    dual: float = -math.inf
    source: str = ""
    seconds: float = 0.0  # time of the tight reference run

    def offer(self, primal: float, source: str, dual: float | None = None) -> None:
        if primal < self.primal:
            self.primal = float(primal)
            self.source = source
        if dual is not None and dual > self.dual:
            self.dual = float(dual)

    @property
    def certified_gap(self) -> float:
        """(P* - D)/D: how far P* may lie above the true optimum, relatively."""
        if not (math.isfinite(self.dual) and self.dual > 0):
            return math.inf
        return (self.primal - self.dual) / self.dual


@dataclass
class SolverRun:
    """One solver's recorded run, evaluated: its curves and its overhead figures."""

    name: str
    loss: str  # "l1" or "l2"
    label: str
    progress_name: str
    times: np.ndarray  # solver seconds at each snapshot (0 for the initial w = 0)
    iterations: np.ndarray
    primal: np.ndarray  # P(w) at each snapshot
    test_accuracy: np.ndarray  # fraction of test rows right at each snapshot
    trace: np.ndarray  # (k, 3): solver seconds, iteration, progress at every hook call
    n_iter: int
    stop: str  # "converged", "max_iter", "time budget", "past 1e-3", ...
    seconds: float  # the recorded run's solver time (hook time taken off)
    hook_seconds: float  # time spent in the hook (snapshots, progress line)
    unhooked_seconds: float  # the same iterations run again without a hook (NaN: not run)
    relative: np.ndarray = field(default_factory=lambda: np.empty(0))  # (P - P*)/P*
    # CPU time / wall time of the recorded and of the unhooked run: below 1, other processes
    # took the CPU for a while and the times are inflated.
    cpu_share: float = math.nan
    cpu_share_unhooked: float = math.nan
    budget: float = math.nan  # the racer's time budget (NaN: not known, an older curves.json)

    def time_to(self, target: float) -> float | None:
        """Solver time of the first snapshot at relative accuracy <= target (None: never)."""
        hits = np.flatnonzero(self.relative <= target)
        return float(self.times[hits[0]]) if hits.size else None

    def not_reached(self) -> str:
        """What a table says where the run never got to a line: how it ended and the best
        relative accuracy it reached, not its time as if that were a measurement."""
        # (three digits: 1.04e-02 "when it stopped" beside a line of 1e-2 is not a contradiction)
        best = fmt_sci(float(np.min(self.relative)), 3) if self.relative.size else "n/a"
        if self.stop == "time budget":
            return f"stopped by the {fmt_seconds(self.budget)} s budget at {best}"
        return f"not reached: {best} when it stopped ({self.stop})"

    def iterations_to(self, target: float) -> int | None:
        """Iterations done at that snapshot (None: never)."""
        hits = np.flatnonzero(self.relative <= target)
        return int(self.iterations[hits[0]]) if hits.size else None

    def to_json(self) -> dict:
        """The run as JSON-ready lists; the hook trace thinned to ``TRACE_POINTS_JSON``."""
        k = self.trace.shape[0]
        trace = self.trace
        if k:
            thinned = np.geomspace(1, k, min(k, TRACE_POINTS_JSON))
            trace = self.trace[np.unique(np.round(thinned).astype(int) - 1)]
        return {
            "loss": self.loss, "label": self.label, "progress_name": self.progress_name,
            "times": _list(self.times, 7), "iterations": self.iterations.tolist(),
            "primal": _list(self.primal), "relative": _list(self.relative, 7),
            "test_accuracy": _list(self.test_accuracy, 7),
            "trace": {"times": _list(trace[:, 0], 7),
                      "iterations": trace[:, 1].astype(np.int64).tolist(),
                      "progress": _list(trace[:, 2], 4)},
            "n_iter": self.n_iter, "stop": self.stop, "seconds": _num(self.seconds),
            "hook_seconds": _num(self.hook_seconds),
            "unhooked_seconds": _num(self.unhooked_seconds),
            "cpu_share": _num(self.cpu_share),
            "cpu_share_unhooked": _num(self.cpu_share_unhooked),
            "budget": _num(self.budget),
        }  # fmt: skip

    @classmethod
    def from_json(cls, name: str, d: dict) -> SolverRun:
        tr = d["trace"]
        trace = np.column_stack([_arr(tr["times"]), _arr(tr["iterations"]), _arr(tr["progress"])])
        return cls(
            name, d["loss"], d["label"], d["progress_name"], _arr(d["times"]),
            np.asarray(d["iterations"], dtype=np.int64), _arr(d["primal"]),
            _arr(d["test_accuracy"]), trace.reshape(-1, 3), int(d["n_iter"]), d["stop"],
            _float(d["seconds"]), _float(d["hook_seconds"]), _float(d["unhooked_seconds"]),
            _arr(d["relative"]), _float(d.get("cpu_share")),
            _float(d.get("cpu_share_unhooked")), _float(d.get("budget")),
        )  # fmt: skip


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _list(a: np.ndarray, digits: int | None = None) -> list:
    """Floats as a JSON list (None for NaN/inf), rounded to ``digits`` significant digits."""
    values = [_num(v) for v in np.asarray(a, dtype=np.float64).tolist()]
    if digits is None:
        return values
    return [None if v is None else float(f"{v:.{digits}g}") for v in values]


def _float(x) -> float:
    return math.nan if x is None else float(x)


def _arr(values) -> np.ndarray:
    return np.array([_float(v) for v in values], dtype=np.float64)


@dataclass
class ComparisonResult:
    """Everything a comparison measured: the problem, P* per loss, every solver's run."""

    dataset: str
    n_rows: int
    n_features: int
    nnz: int
    n_test: int
    C: float
    bias: float
    max_time: float
    references: dict[str, Reference]  # "l1" / "l2" -> P*
    runs: dict[str, SolverRun]  # solver name -> run, in the order run
    notes: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    clock: str = "wall"  # the solver clock: "wall" or "cpu" (see CLOCKS)
    targets: tuple[float, ...] = TARGETS  # the tables' accuracy lines (and the race's target)
    unavailable: dict[str, str] = field(default_factory=dict)  # racer -> why it did not run

    def reached(self, run: SolverRun, target: float) -> str:
        """A table's cell of ``run`` at the line ``target``: its time to it; how it ended when
        it never got there; or that P* is not known to within the line (the reference run
        ran out of time first: the race's times to it would not be measurements)."""
        if not self.certified(run, target):
            gap = self.references[run.loss].certified_gap
            return f"P* not certified to {line_name(target)} ((P* - D)/D = {fmt_sci(gap)})"
        t = run.time_to(target)
        return fmt_seconds(t) if t is not None else run.not_reached()

    def certified(self, run: SolverRun, target: float) -> bool:
        """Whether ``run``'s loss has P* known to within the line ``target`` (see ``reached``)."""
        return run.loss not in self.references or (
            self.references[run.loss].certified_gap <= target
        )

    def losses(self) -> list[str]:
        return [k for k in ("l1", "l2") if any(r.loss == k for r in self.runs.values())]

    def table(self, loss: str) -> tuple[list[str], list[list[str]]]:
        """(header, rows) of the per-loss table."""
        header = [
            "solver", *[f"time to {line_name(t)} (s)" for t in self.targets], "final rel. acc.",
            "final test acc.", "iterations", "stopped by", "recorded run (s)",
            "same run, no hook (s)", "time in hook (s)",
        ]  # fmt: skip
        rows = []
        for r in self.runs.values():
            if r.loss != loss:
                continue
            reach = [self.reached(r, target) for target in self.targets]
            stop = r.stop
            if stop == "time budget" and math.isfinite(r.budget):
                stop = f"time budget ({fmt_seconds(r.budget)} s)"
            rows.append([
                r.label, *reach, fmt_sci(r.relative[-1]), fmt_pct(r.test_accuracy[-1]),
                str(r.n_iter), stop, fmt_seconds(r.seconds), fmt_seconds(r.unhooked_seconds),
                f"{fmt_seconds(r.hook_seconds)} ({len(r.times) - 1} snapshots)",
            ])  # fmt: skip
        return header, rows

    def markdown(self, figure_prefix: str | None = "") -> list[str]:
        """The report: problem, P* per loss, one table per loss, figure links.

        Figures are linked as ``figure_prefix + file name`` (None: no links).
        """
        bias = "none" if self.bias < 0 else f"{self.bias:g}"
        lines = [
            f"**{self.dataset}**: {self.n_rows:,} training rows, {self.n_features:,} features, "
            f"{self.nnz:,} non-zeros; {self.n_test:,} test rows; C = {self.C:g}, bias {bias}; "
            f"time budget {self.max_time:g} s per solver; times are "
            f"{'wall-clock' if self.clock == 'wall' else 'CPU'} seconds.",
            "",
        ]
        for loss in self.losses():
            ref = self.references[loss]
            lines += [
                f"{LOSS_TITLES[loss]}: P* = {ref.primal:.10g} (from {ref.source}); dual bound "
                f"D = {ref.dual:.10g}, (P* - D)/D = {fmt_sci(ref.certified_gap)} (reference run "
                f"{fmt_seconds(ref.seconds)} s).",
                "",
            ]
            header, rows = self.table(loss)
            lines += markdown_table(header, rows)
            lines.append("")
            if figure_prefix is not None:
                for fig in self.figures:
                    if fig.name.startswith(loss + "-"):
                        kind = "objective" if "objective" in fig.name else "test accuracy"
                        alt = f"{self.dataset} {loss.upper()} {kind}"
                        lines.append(f"![{alt}]({figure_prefix}{fig.name})")
                if any(f.name.startswith(loss + "-") for f in self.figures):
                    lines.append("")
        lines += [f"- {n}" for n in self.notes]
        lines += [f"- {LINEUP[n].label if n in LINEUP else n}: {why}"
                  for n, why in self.unavailable.items()]  # fmt: skip
        return lines

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset, "n_rows": self.n_rows, "n_features": self.n_features,
            "nnz": self.nnz, "n_test": self.n_test, "C": self.C, "bias": self.bias,
            "max_time": self.max_time, "clock": self.clock, "targets": list(self.targets),
            "unavailable": self.unavailable,
            "references": {k: {"primal": _num(v.primal), "dual": _num(v.dual),
                               "source": v.source, "seconds": v.seconds}
                           for k, v in self.references.items()},
            "solvers": {k: r.to_json() for k, r in self.runs.items()},
            "notes": self.notes,
        }  # fmt: skip

    @classmethod
    def from_json(cls, d: dict) -> ComparisonResult:
        """A result back from ``curves.json`` (e.g. to redraw the figures)."""
        refs = {
            k: Reference(
                _float(v["primal"]),
                _float(v["dual"]) if v["dual"] is not None else -math.inf,
                v["source"],
                v["seconds"],
            )
            for k, v in d["references"].items()
        }
        runs = {k: SolverRun.from_json(k, v) for k, v in d["solvers"].items()}
        return cls(
            d["dataset"], d["n_rows"], d["n_features"], d["nnz"], d["n_test"], d["C"],
            d["bias"], d["max_time"], refs, runs, list(d.get("notes", [])),
            clock=d.get("clock", "wall"), targets=tuple(d.get("targets", TARGETS)),
            unavailable=dict(d.get("unavailable", {})),
        )  # fmt: skip


def line_name(target: float) -> str:
    """1e-3 -> "1e-3", 0.015 -> "1.5e-2": how the tables name an accuracy line."""
    mantissa, exponent = f"{target:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def fmt_seconds(t: float | None) -> str:
    if t is None or not math.isfinite(t):
        return "n/a"
    if t >= 100:
        return f"{t:.0f}"
    if t >= 10:
        return f"{t:.1f}"
    if t >= 0.1:
        return f"{t:.2f}"
    return f"{t:.3f}"


def fmt_sci(x: float, digits: int = 2) -> str:
    """x in scientific notation with ``digits`` significant digits."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return "0" if x <= 0 else f"{x:.{digits - 1}e}"


def fmt_pct(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:.2f}%"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    align = [":---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


REPORT_MD = "compare.md"
CURVES_JSON = "curves.json"


def output_paths(outdir: str | os.PathLike) -> list[Path]:
    """Every file `write_outputs` may write (or remove) in ``outdir``."""
    return [Path(outdir) / REPORT_MD, Path(outdir) / CURVES_JSON, *figure_paths(outdir)]


def write_outputs(result: ComparisonResult, outdir: str | os.PathLike) -> list[Path]:
    """Write the figures, ``compare.md`` and ``curves.json`` into ``outdir``; return the files.

    Each file is written atomically: a failed write leaves that file as it was and its error
    names it. The figures an earlier run left there for losses this run did not race are
    removed, once this run's report is written.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    result.figures = plot_figures(result, out)
    if not result.losses():
        result.notes.append("no figures: no solver ran")
    elif not have_matplotlib():
        result.notes.append("no figures: matplotlib is missing (pip install 'linsvm[plot]')")
    write_text(out / REPORT_MD, "\n".join(result.markdown()).rstrip() + "\n")
    curves = json.dumps(result.to_json(), allow_nan=False, separators=(",", ":"))
    write_text(out / CURVES_JSON, curves + "\n")
    remove_other_figures(out, result.figures)
    return [out / REPORT_MD, out / CURVES_JSON, *result.figures]


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; an OSError names ``path``."""
    atomic_write_bytes(path, text.encode("utf-8"))
