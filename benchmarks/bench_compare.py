"""The seed's solver comparison (Hsieh et al., ICML 2008) on the text sets: ``linsvm.compare``.

Run from the repository root::

    python -m benchmarks.bench_compare [--quick] [--datasets reuters,pypi-recent,synthetic-text]
        [--synthetic-rows 2000000] [--max-time 60] [--clock wall|cpu] [--solvers ...]
        [--out benchmarks/RESULTS-compare.md] [--figures benchmarks/figures]

For each dataset, C = 1, no bias, every solver of ``linsvm.compare.LINEUPS["linsvm"]`` (DCD-L1
with and without shrinking, Pegasos, SGD-S, SGD-M; DCD-L2 with and without shrinking, PCD,
primal Newton) is run by ``linsvm.compare.compare`` with a per-solver time budget; the report
gives, like the seed's table, each solver's time to 1% (and 0.1%) relative primal accuracy,
and links the figures (relative primal difference and test accuracy against time, per loss)
written to ``--figures``/compare-<dataset>/ with the raw curves (``curves.json``).

The expected outcome, as in the seed: DCD reaches 1% well before Pegasos. The report checks it
per dataset (``DCD-L1 vs Pegasos`` line).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

from linsvm.compare import DEFAULT_MAX_TIME, LINEUPS, ComparisonResult, compare

from .common import (
    BENCH_DIR,
    SYNTHETIC,
    fmt_seconds,
    load_dataset,
    markdown_table,
    report_header,
    write_report,
)

DEFAULT_DATASETS = ("reuters", "pypi-recent", SYNTHETIC)
DEFAULT_ROWS = 2_000_000
# The seed's table: time to 1% per solver, L1 solvers then L2 solvers (name -> column).
SUMMARY_SOLVERS = {
    "dcd-l1": "DCD-L1", "pegasos": "Pegasos (L1)", "sgd-s": "SGD-S (L1)", "sgd-m": "SGD-M (L1)",
    "dcd-l2": "DCD-L2", "pcd": "PCD (L2)", "newton-l2": "Newton (L2)",
}  # fmt: skip


def reach(result: ComparisonResult, name: str, target: float) -> str:
    run = result.runs.get(name)
    if run is None:
        return "-"
    t = run.time_to(target)
    return fmt_seconds(t) if t is not None else f"> {fmt_seconds(run.seconds)}"


def verdict(result: ComparisonResult) -> str:
    """The seed's claim on this dataset: DCD-L1 reaches 1% well before Pegasos."""
    dcd, peg = result.runs.get("dcd-l1"), result.runs.get("pegasos")
    if dcd is None or peg is None:
        return "DCD-L1 vs Pegasos: not both run."
    t_dcd, t_peg = dcd.time_to(1e-2), peg.time_to(1e-2)
    if t_dcd is None:
        return "DCD-L1 vs Pegasos: **DCD-L1 did not reach 1%** (see the table)."
    if t_peg is None:
        return (
            f"DCD-L1 vs Pegasos: DCD-L1 reaches 1% in {fmt_seconds(t_dcd)} s; Pegasos does not "
            f"within its {fmt_seconds(peg.seconds)} s budget (over {peg.seconds / t_dcd:.0f}x)."
        )
    ratio = t_peg / t_dcd
    claim = "as in the seed" if ratio >= 3 else "**not** well before: see the notes"
    return (
        f"DCD-L1 vs Pegasos: 1% in {fmt_seconds(t_dcd)} s vs {fmt_seconds(t_peg)} s, Pegasos "
        f"{ratio:.1f}x slower ({claim})."
    )


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="reuters only, 5 s per solver")
    p.add_argument("--datasets", default=None, help=f"default {','.join(DEFAULT_DATASETS)}")
    p.add_argument("--synthetic-rows", type=int, default=DEFAULT_ROWS)
    p.add_argument("--max-time", type=float, default=None,
                   help=f"seconds per solver ({DEFAULT_MAX_TIME:g}; --quick 5)")  # fmt: skip
    p.add_argument("--solvers", default=",".join(LINEUPS["linsvm"]))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall",
        help="solver clock: wall time, or CPU time on a machine shared with others",
    )  # fmt: skip
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-compare.md"))
    p.add_argument("--figures", default=None,
                   help="folder of the figures (default: figures/ beside --out)")
    args = p.parse_args(argv)
    if args.figures is None:  # (a run elsewhere leaves the committed figures as they are)
        args.figures = str(Path(args.out).parent / "figures")
    if args.datasets is None:
        args.datasets = "reuters" if args.quick else ",".join(DEFAULT_DATASETS)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    args.max_time = args.max_time or (5.0 if args.quick else DEFAULT_MAX_TIME)
    args.solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    started = time.perf_counter()
    header = report_header(
        "The seed's solver comparison: DCD vs Pegasos, SGD, PCD, Newton",
        "bench_compare",
        [
            f"C = 1, no bias; solvers: {', '.join(args.solvers)}; time budget "
            f"{args.max_time:g} s per solver (its own time, recording excluded); seed "
            f"{args.seed}; clock: "
            + ("wall time (perf_counter)" if args.clock == "wall" else "the thread's CPU time"),
            "per solver: one recorded run (w snapshots taken in a paused hook, evaluated "
            "afterwards), then the same iterations again without a hook (overhead check)",
        ],
    )
    sections: list[str] = []
    summary_rows = []
    verdicts = []
    for name in args.datasets:
        t0 = time.perf_counter()
        ds = load_dataset(name, synthetic_rows=args.synthetic_rows)
        if ds is None:
            sections += [f"## {name}", "", "skipped: data file not found", ""]
            continue
        label = f"{name} ({ds.X.shape[0]:,} rows)" if name == SYNTHETIC else name
        print(f"{ds.describe()} (loaded in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        figdir = Path(args.figures) / f"compare-{name}"
        result = compare(
            ds.X, ds.y, ds.X_test, ds.y_test, C=1.0, solvers=args.solvers, bias=-1.0,
            max_time=args.max_time, outdir=figdir, seed=args.seed, dataset=name,
            clock=args.clock, race_factor=None,  # the seed's table: every solver its budget
        )  # fmt: skip
        prefix = os.path.relpath(figdir, out.parent).replace(os.sep, "/") + "/"
        sections += [f"## {label}", ""]
        if ds.note:
            sections += [f"Data: {ds.note}.", ""]
        sections += [verdict(result), ""]
        sections += result.markdown(figure_prefix=prefix)
        sections += ["", f"Raw curves: `{prefix}curves.json`.", ""]
        summary_rows.append(
            [label]
            + [reach(result, s, 1e-2) for s in SUMMARY_SOLVERS]
            + [reach(result, s, 1e-3) for s in ("dcd-l1", "pegasos", "dcd-l2", "newton-l2")]
        )
        verdicts.append(f"- {label}: {verdict(result)}")
        del ds, result
        gc.collect()

    summary = [
        "## Summary: time to 1% relative primal accuracy (seconds), as the seed's table",
        "",
        "Solver time only (recording excluded). `> t`: not reached within the t s the solver "
        "ran. The last four columns: time to 0.1%.",
        "",
        *markdown_table(
            ["dataset", *SUMMARY_SOLVERS.values(), "0.1%: DCD-L1", "Pegasos", "DCD-L2", "Newton"],
            summary_rows,
        ),  # fmt: skip
        "",
        *verdicts,
        "",
    ]
    notes = [f"total benchmark time {time.perf_counter() - started:.0f} s"]
    write_report(header + summary + sections + [f"- {n}" for n in notes], out)


if __name__ == "__main__":
    main()
