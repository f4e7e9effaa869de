"""The seeds' whole lineup, ours and the original programs in the same run.

Run from the repository root::

    python -m benchmarks.bench_lineup [--datasets a9a,w8a,ijcnn1,reuters,pypi-recent,synthetic-text]
        [--synthetic-rows 3000000] [--repeats 3] [--max-time 60] [--no-originals]
        [--out benchmarks/RESULTS-lineup.md] [--figures benchmarks/figures]

Two questions, C = 1, no bias:

1. **The seeds' tables, reproduced.** Every racer of ``linsvm.compare.LINEUPS["dcd2008"]``
   (DCD-L1, Pegasos, SVMperf | DCD-L2, PCD, TRON: Hsieh et al., ICML 2008) and ``"sgd2013"``
   (SVMperf, OCAS, DCD, MPU, Pegasos, svmsgd, SGD-QN, SGD-R/S/M: Panagiotakopoulos and
   Tsampouka 2013) races by ``linsvm.compare.compare`` on each data set, ``--repeats`` times:
   seconds (median) and iterations to 1% and 0.1% relative primal accuracy, one row a data
   set. The ratios the first seed reports (DCD against SVMperf and TRON) are set beside ours.
2. **Ours against the originals.** Each solver whose original program is installed
   (``scripts/oracles/``: Debian's svmocas, Joachims' svm_perf, Bottou's svmsgd / svmasgd /
   SGD-QN, each built locally from its public source) runs the original on the same file at a
   ladder of tolerances (or epochs); its training time as the program reports it, its
   iterations, and the relative primal accuracy of the weights it writes (scored by
   ``linsvm.objective``, against the same P*) give its time per iteration and to 1% / 0.1%
   (the first rung that gets there; medians of ``--repeats`` runs of that rung). Ours: the
   same figures from the race. A program that is not installed is listed as such.

Originals are never part of the repository: ``benchmarks/originals_*.py`` only run them.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from linsvm.compare import LINEUP, LINEUPS, ComparisonResult, compare
from linsvm.compare.lineup import LOSS_KEYS
from linsvm.solvers import SOLVERS

from .common import (
    BENCH_DIR,
    DEFAULT_DATASETS,
    REAL_DATASETS,
    SYNTHETIC,
    find_data_file,
    fmt_seconds,
    load_dataset,
    markdown_table,
    report_header,
    scratch_dir,
    write_report,
)

TARGETS = (1e-2, 1e-3)
DEFAULT_ROWS = 3_000_000
DEFAULT_MAX_TIME = 60.0
# Hsieh et al. (ICML 2008), Table 2: seconds to within 1% of the optimal primal value, C = 1.
SEED_2008 = {
    "astro-physics": {"dcd-l1": 0.2, "pegasos": 2.8, "svmperf": 2.6, "dcd-l2": 0.2, "pcd": 0.5, "tron": 1.2},  # noqa: E501
    "real-sim": {"dcd-l1": 0.2, "pegasos": 2.4, "svmperf": 2.4, "dcd-l2": 0.1, "pcd": 0.2, "tron": 0.9},  # noqa: E501
    "news20": {"dcd-l1": 0.5, "pegasos": 10.3, "svmperf": 20.0, "dcd-l2": 0.2, "pcd": 2.4, "tron": 5.2},  # noqa: E501
    "yahoo-japan": {"dcd-l1": 1.1, "pegasos": 12.7, "svmperf": 69.4, "dcd-l2": 1.0, "pcd": 2.9, "tron": 38.2},  # noqa: E501
    "rcv1": {"dcd-l1": 2.6, "pegasos": 21.9, "svmperf": 72.0, "dcd-l2": 2.7, "pcd": 5.1, "tron": 18.6},  # noqa: E501
    "yahoo-korea": {"dcd-l1": 8.3, "pegasos": 79.7, "svmperf": 656.8, "dcd-l2": 7.1, "pcd": 18.4, "tron": 286.1},  # noqa: E501
}  # fmt: skip
# The ratios the first seed's table shows: (slower racer, faster racer).
SEED_RATIOS = (("svmperf", "dcd-l1"), ("pegasos", "dcd-l1"), ("tron", "dcd-l2"), ("pcd", "dcd-l2"))


@dataclass
class OriginalRun:
    """One run of an original program: its own training time, iterations and weights."""

    seconds: float  # training time as the program reports it (reading the file excluded)
    iterations: int  # its outer iterations (cutting-plane iterations, epochs)
    w: np.ndarray  # the weights it wrote, over the data set's features (no bias)


@dataclass(frozen=True)
class Original:
    """An original program, the racer of ours it is set against, and how to run it.

    ``run(train_file, n_features, C, setting)`` runs it once; ``ladder`` holds the settings
    tried in turn (tolerances from loose to tight, or epochs), until both lines are reached.
    ``available()`` says whether it is installed ("" if it is, else why not).
    """

    name: str
    racer: str
    run: Callable[[Path, int, float, float], OriginalRun]
    ladder: tuple[float, ...]
    setting: str  # what the ladder's values are ("TolRel", "epochs", ...)
    available: Callable[[], str]


ORIGINALS: list[Original] = []


@dataclass
class Reached:
    """Median seconds and iterations to each target (None: not reached)."""

    seconds: dict[float, float | None] = field(default_factory=dict)
    iterations: dict[float, int | None] = field(default_factory=dict)
    per_iteration: float = math.nan  # seconds per outer iteration
    final: float = math.nan  # relative accuracy at the end


def racers_of(lineups: Sequence[str]) -> list[str]:
    """The racers of the named lineups, in order, once each, those with a registered solver."""
    names: list[str] = []
    for lineup in lineups:
        for name in LINEUPS[lineup]:
            if name not in names and LINEUP[name].solver in SOLVERS:
                names.append(name)
    return names


def ours(results: Sequence[ComparisonResult], name: str) -> Reached:
    """Median over the repeats of a racer's time (and iterations) to each target."""
    out = Reached()
    runs = [r.runs[name] for r in results if name in r.runs]
    for target in TARGETS:
        times = [run.time_to(target) for run in runs]
        if runs and all(t is not None for t in times):
            out.seconds[target] = statistics.median(times)
            its = [run.iterations_to(target) for run in runs]
            out.iterations[target] = int(statistics.median(its))
        else:
            out.seconds[target] = out.iterations[target] = None
    per = [run.seconds / run.n_iter for run in runs if run.n_iter > 0]
    out.per_iteration = statistics.median(per) if per else math.nan
    out.final = statistics.median(float(run.relative[-1]) for run in runs) if runs else math.nan
    return out


def relative_accuracy(ds, w: np.ndarray, loss: int, pstar: float) -> float:
    from linsvm.objective import primal_value

    X = ds.X
    c_rows = np.ones(X.shape[0])
    primal = primal_value(X.indptr, X.indices, X.data, -1.0, ds.y, c_rows,
                          np.ascontiguousarray(w, dtype=np.float64), loss)  # fmt: skip
    return (float(primal) - pstar) / pstar


def originals_on(ds, path: Path, pstar: dict[str, float], repeats: int) -> dict[str, Reached]:
    """Each installed original on ``path``: its ladder until both lines are reached."""
    out: dict[str, Reached] = {}
    for original in ORIGINALS:
        if original.available():
            continue
        loss = LINEUP[original.racer].loss
        key = LOSS_KEYS[loss]
        reached = Reached()
        first_rung: dict[float, float] = {}
        last = None
        for setting in original.ladder:
            run = original.run(path, ds.X.shape[1], 1.0, setting)
            rel = relative_accuracy(ds, run.w, loss, pstar[key])
            last = (run, rel)
            print(f"  {original.name} {original.setting} {setting:g}: {run.seconds:.3g} s, "
                  f"{run.iterations} iterations, rel. acc. {rel:.2e}", file=sys.stderr)  # fmt: skip
            for target in TARGETS:
                if target not in first_rung and rel <= target:
                    first_rung[target] = setting
                    times = [run.seconds] + [
                        original.run(path, ds.X.shape[1], 1.0, setting).seconds
                        for _ in range(repeats - 1)
                    ]
                    reached.seconds[target] = statistics.median(times)
                    reached.iterations[target] = run.iterations
            if len(first_rung) == len(TARGETS):
                break
        for target in TARGETS:
            reached.seconds.setdefault(target, None)
            reached.iterations.setdefault(target, None)
        if last is not None:
            run, rel = last
            reached.per_iteration = run.seconds / max(run.iterations, 1)
            reached.final = rel
        out[original.name] = reached
    return out


def cell(r: Reached | None, target: float) -> str:
    if r is None:
        return "-"
    t = r.seconds.get(target)
    if t is None:
        return f"not reached (final {r.final:.1e})" if math.isfinite(r.final) else "not reached"
    return f"{fmt_seconds(t)} ({r.iterations[target]})"


def ratio(slow: float | None, fast: float | None) -> str:
    if slow is None or fast is None or fast <= 0:
        return "n/a"
    return f"{slow / fast:.1f}x"


def data_file(name: str, ds) -> Path:
    """A LIBSVM file of the training rows for the original programs (written once for the
    generated set)."""
    if name in REAL_DATASETS:
        return find_data_file(REAL_DATASETS[name][0])
    import linsvm

    path = scratch_dir() / f"{name}-{ds.X.shape[0]}.svm"
    if not path.is_file():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        linsvm.write_libsvm(ds.X, ds.y, tmp)
        os.replace(tmp, path)
    return path


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--datasets", default=",".join(DEFAULT_DATASETS))
    p.add_argument("--synthetic-rows", type=int, default=DEFAULT_ROWS)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME,
                   help="seconds per racer and repeat")  # fmt: skip
    p.add_argument("--lineups", default="dcd2008,sgd2013")
    p.add_argument("--no-originals", action="store_true")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-lineup.md"))
    p.add_argument("--figures", default=str(BENCH_DIR / "figures"))
    args = p.parse_args(argv)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    args.lineups = [x.strip() for x in args.lineups.split(",") if x.strip()]
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    names = racers_of(args.lineups)
    out = Path(args.out)
    started = time.perf_counter()
    header = report_header(
        "The seeds' lineup: their tables reproduced, and ours against the original programs",
        "bench_lineup",
        [
            f"C = 1, no bias; racers: {', '.join(names)}; {args.repeats} races per data set "
            f"(medians), a racer's budget {args.max_time:g} s per race (or 10 x the fastest "
            "time of its loss to 0.1%); wall-clock seconds, recording excluded",
            "originals: " + (", ".join(
                f"{o.name} ({'installed' if not o.available() else o.available()})"
                for o in ORIGINALS) or "none registered"),
        ],
    )  # fmt: skip
    table_rows: dict[float, list[list[str]]] = {t: [] for t in TARGETS}
    ratio_rows: list[list[str]] = []
    versus_rows: list[list[str]] = []
    sections: list[str] = []
    for name in args.datasets:
        ds = load_dataset(name, synthetic_rows=args.synthetic_rows)
        if ds is None:
            sections += [f"- {name}: skipped, data file not found"]
            continue
        label = f"{name} ({ds.X.shape[0]:,} rows)" if name == SYNTHETIC else name
        print(f"{ds.describe()}", file=sys.stderr)
        results = []
        for k in range(args.repeats):
            outdir = Path(args.figures) / f"lineup-{name}" if k == 0 else None
            results.append(compare(
                ds.X, ds.y, ds.X_test, ds.y_test, C=1.0, solvers=names, bias=-1.0,
                max_time=args.max_time, outdir=outdir, seed=1 + k, dataset=name,
                check_overhead=False, quiet=k > 0,
            ))  # fmt: skip
        reached = {n: ours(results, n) for n in names}
        for target in TARGETS:
            table_rows[target].append([label, *[cell(reached[n], target) for n in names]])
        t1 = {n: reached[n].seconds[1e-2] for n in names}
        ratio_rows.append([label, *[ratio(t1.get(a), t1.get(b)) for a, b in SEED_RATIOS]])
        if not args.no_originals and ORIGINALS:
            pstar = {k: v.primal for k, v in results[0].references.items()}
            theirs = originals_on(ds, data_file(name, ds), pstar, args.repeats)
            for original in ORIGINALS:
                mine = reached.get(original.racer)
                other = theirs.get(original.name)
                if other is None:
                    versus_rows.append([label, original.name, LINEUP[original.racer].label,
                                        original.available() or "-", "", "", "", "", ""])
                    continue
                versus_rows.append([
                    label, original.name, LINEUP[original.racer].label,
                    ratio(mine.per_iteration, other.per_iteration).replace("x", ""),
                    cell(other, 1e-2), cell(mine, 1e-2), cell(other, 1e-3), cell(mine, 1e-3),
                    ratio(mine.seconds[1e-3], other.seconds[1e-3]).replace("x", ""),
                ])  # fmt: skip
        del ds, results
        gc.collect()

    labels = [LINEUP[n].label for n in names]
    lines = list(header)
    for target in TARGETS:
        lines += [
            f"## Seconds (iterations) to {100 * target:g}% relative primal accuracy",
            "",
            *markdown_table(["data set", *labels], table_rows[target]),
            "",
        ]
    seed_ratios = [
        ["seed (ICML 2008), " + s, *[ratio(v[a], v[b]) for a, b in SEED_RATIOS]]
        for s, v in SEED_2008.items()
    ]
    lines += [
        "## The first seed's ratios: time to 1%, slower racer / faster racer",
        "",
        *markdown_table(
            ["data set", *[f"{LINEUP[a].label} / {LINEUP[b].label}" for a, b in SEED_RATIOS]],
            ratio_rows + seed_ratios,
        ),
        "",
    ]
    if versus_rows:
        lines += [
            "## Ours against the original programs",
            "",
            "Per iteration: our seconds per outer iteration / the original's. Cells: seconds "
            "(iterations) to the line; the last column: ours / theirs to 0.1%.",
            "",
            *markdown_table(
                ["data set", "original", "ours", "per iteration (ours/theirs)", "theirs to 1%",
                 "ours to 1%", "theirs to 0.1%", "ours to 0.1%", "to 0.1% (ours/theirs)"],
                versus_rows,
            ),  # fmt: skip
            "",
        ]
    lines += sections
    lines.append(f"- total benchmark time {time.perf_counter() - started:.0f} s")
    write_report(lines, out)


if __name__ == "__main__":
    main()
