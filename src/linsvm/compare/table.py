"""The seeds' table: one row a data set, one column a racer, the time to each accuracy line.

Hsieh et al. (ICML 2008) give, per data set, the seconds each solver needs to come within 1% of
the optimal primal value; Panagiotakopoulos and Tsampouka (2013) give seconds and epochs to a
relative accuracy. ``lineup_tables`` builds both shapes from the races of several data sets
(one ``ComparisonResult`` each): per accuracy line of ``TARGETS``, a table whose cells are
"seconds (iterations)", the iterations being the racer's outer iterations (epochs for the SGD
solvers, cutting-plane iterations, Newton iterations, coordinate descent passes) at the first
snapshot past the line. ``lineup_csv`` writes the same figures in long form, one line per data
set, racer and line, for other tools.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

from .lineup import LINEUP
from .lineup import LOSS_KEYS as LINEUP_LOSS
from .report import TARGETS, ComparisonResult, fmt_seconds, markdown_table

CSV_FIELDS = (
    "dataset", "rows", "features", "nonzeros", "C", "racer", "label", "solver", "loss",
    "target", "seconds", "iterations", "reached", "final_relative", "stopped_by",
    "run_seconds",
)  # fmt: skip


def target_name(target: float) -> str:
    """1e-2 -> "1%", 1e-3 -> "0.1%" (the seeds' wording)."""
    return f"{100 * target:g}%"


def cell(result: ComparisonResult, name: str, target: float) -> str:
    """"0.52 (7)": seconds and iterations to ``target``; "> 60 (900)" when never reached (the
    run's time and iterations); "-" when the racer did not run on this data set."""
    run = result.runs.get(name)
    if name in result.unavailable:
        return "not available"
    if run is None:
        return "-"
    t = run.time_to(target)
    if not result.certified(run, target):
        return result.reached(run, target)
    if t is None:
        return f"{run.not_reached()}, {run.n_iter} iterations"
    return f"{fmt_seconds(t)} ({run.iterations_to(target)})"


def targets_of(results: Sequence[ComparisonResult]) -> list[float]:
    """The accuracy lines of the races, from the loosest."""
    return sorted({t for r in results for t in r.targets} | set(TARGETS), reverse=True)


def lineup_tables(results: Sequence[ComparisonResult], names: Sequence[str]) -> list[str]:
    """Markdown: per accuracy line, a table with one row a data set and one column a racer."""
    lines: list[str] = []
    header = ["data set", *[LINEUP[n].label for n in names]]
    for target in targets_of(results):
        lines.append(
            f"Seconds (iterations) to {target_name(target)} of the optimal primal value, "
            "(P(w) - P*)/P* <= " + f"{target:g}:"
        )
        lines.append("")
        rows = [[r.dataset, *[cell(r, n, target) for n in names]] for r in results]
        lines += markdown_table(header, rows)
        lines.append("")
    settings = sorted({(r.C, r.bias, r.clock) for r in results})
    for C, bias, clock in settings:
        sets = ", ".join(r.dataset for r in results if (r.C, r.bias, r.clock) == (C, bias, clock))
        lines.append(
            f"- {sets}: C = {C:g}, bias {'none' if bias < 0 else f'{bias:g}'}, "
            f"{'wall-clock' if clock == 'wall' else 'CPU'} seconds; iterations are each "
            "racer's outer iterations (epochs, cutting-plane or Newton iterations, passes)."
        )
    missing = {n: why for r in results for n, why in r.unavailable.items() if n in names}
    lines += [f"- {LINEUP[n].label}: {why}" for n, why in missing.items()]
    return lines


def lineup_csv(results: Sequence[ComparisonResult], names: Sequence[str]) -> str:
    """The figures of ``lineup_tables`` in long form, with a header line (``CSV_FIELDS``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in results:
        for name in names:
            run = r.runs.get(name)
            if name in r.unavailable:
                writer.writerow([r.dataset, r.n_rows, r.n_features, r.nnz, f"{r.C:g}", name,
                                 LINEUP[name].label, "", LINEUP_LOSS[LINEUP[name].loss], "", "",
                                 "", 0, "", "not available", ""])  # fmt: skip
                continue
            if run is None:
                continue
            for target in targets_of([r]):
                # (a line P* is not certified to: neither reached nor missed, left empty)
                t = run.time_to(target) if r.certified(run, target) else None
                writer.writerow([
                    r.dataset, r.n_rows, r.n_features, r.nnz, f"{r.C:g}", name, run.label,
                    LINEUP[name].solver, run.loss, f"{target:g}",
                    "" if t is None else f"{t:.6g}",
                    "" if t is None else run.iterations_to(target),
                    int(t is not None) if r.certified(run, target) else "", _g(run.relative[-1]),
                    run.stop, f"{run.seconds:.6g}",
                ])  # fmt: skip
    return out.getvalue()


def _g(x: float) -> str:
    return f"{x:.6g}" if math.isfinite(x) else ""
