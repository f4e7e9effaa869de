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
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from linsvm.compare import LINEUP, LINEUPS, RACE_FACTOR, ComparisonResult, compare
from linsvm.compare.lineup import LOSS_KEYS

from .common import (
    BENCH_DIR,
    DEFAULT_DATASETS,
    SYNTHETIC,
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
MAX_EPOCHS = 5000  # an SGD program's run: epochs that fit the budget, at most this many
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


# One point of an original program's run: (its own training seconds so far, its iterations so
# far, the primal value of its weights then).
Point = tuple[float, int, float]


@dataclass(frozen=True)
class Original:
    """An original program, the racer of ours it is set against, and how to run it.

    ``curve(train_file, n_rows, C, budget, p_star)`` runs it (once, or once per rung of a
    ladder of tolerances until past 0.1% of ``p_star``) and returns its points in the order of
    its time; ``available()`` says
    whether it is installed ("" if it is, else why not).
    """

    name: str
    racer: str
    curve: Callable[[Path, int, float, float, float], list[Point]]
    available: Callable[[], str]
    shuffled_file: bool = False  # it visits the file in order: give it a shuffled copy
    repeats: int | None = None  # runs per data set (None: --repeats), fewer for a slow ladder


def bottou_curve(runner: Callable[..., dict], **options) -> Callable:
    """The curve of one of Bottou's programs: one run of as many epochs as fit the budget
    (from a 2-epoch run's time per epoch), P after each epoch from what it prints."""

    def curve(path: Path, n_rows: int, C: float, budget: float, p_star: float) -> list[Point]:
        from .originals_bottou import lambda_of

        lam = lambda_of(C, n_rows)
        probe = runner(path, lam, 2, **options)
        per_epoch = max(probe["seconds"] / 2, 1e-6)
        epochs = int(min(MAX_EPOCHS, max(2, budget / per_epoch)))
        out = runner(path, lam, epochs, **options)
        seconds = np.cumsum(out["epoch_seconds"])
        return [(float(t), k + 1, float(p))
                for k, (t, p) in enumerate(zip(seconds, out["primals"], strict=True))]

    return curve


def sgdqn_curve(runner: Callable[..., dict]) -> Callable:
    """SGD-QN searches its t0 with as many epochs as it trains (its times leave the search
    out): t0 from a run of 5 epochs (what the race gives ours, whose times include it), then
    the long run with that t0."""
    def curve(path: Path, n_rows: int, C: float, budget: float, p_star: float) -> list[Point]:
        from .originals_bottou import lambda_of

        t0 = runner(path, lambda_of(C, n_rows), 5)["t0"]
        return bottou_curve(runner, t0=t0)(path, n_rows, C, budget, p_star)

    return curve


def bottou_available(name: str) -> Callable[[], str]:
    def available() -> str:
        from .originals_bottou import program

        return "" if program(name) else "not built (scripts/oracles/bottou_sgd.sh SRC)"

    return available


def originals() -> list[Original]:
    """The original programs of the lineup, those installed first tried by ``available``."""
    from .originals_bottou import run_svmasgd, run_svmsgd, run_svmsgdqn

    listed = [
        Original("svmsgd (sgd 2.0)", "svmsgd", bottou_curve(run_svmsgd, bias=False),
                 bottou_available("svmsgd-nobias"), shuffled_file=True),
        Original("svmasgd (sgd 2.0)", "asgd", bottou_curve(run_svmasgd, bias=False),
                 bottou_available("svmasgd-nobias"), shuffled_file=True),
        Original("svmsgdqn (sgd 2.0)", "sgd-qn", sgdqn_curve(run_svmsgdqn),
                 bottou_available("svmsgdqn"), shuffled_file=True),
    ]  # fmt: skip
    return listed + cutting_plane_originals()


# svmocas stops at (Q_P - Q_D) <= this x |Q_P|: Q_D <= P*, so its best point is then within
# this of the optimum, past the 0.1% line; its trace gives Q_P (the best point's P) each
# iteration, with its time so far.
OCAS_TOL_REL = 5e-4
# svm_perf prints no primal on the way: its runs at these -e (percent of the average hinge
# loss), loose to tight, until its w is past both lines.
SVM_PERF_LADDER = (10.0, 3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)


def ocas_curve(method: int) -> Callable:
    def curve(path: Path, n_rows: int, C: float, budget: float, p_star: float) -> list[Point]:
        from .originals_cutting_plane import pad_empty_rows, run_svmocas

        padded = path.with_name(path.name + ".padded")  # svmocas refuses a row of a label only
        if not padded.is_file():
            pad_empty_rows(path, padded)
        run = run_svmocas(padded, C, method=method, tol_rel=OCAS_TOL_REL, timeout=10 * budget)
        return [(t, k, qp) for k, t, qp, _ in run.trace]

    return curve


def svm_perf_curve(path: Path, n_rows: int, C: float, budget: float,
                   p_star: float) -> list[Point]:  # fmt: skip
    import linsvm

    from .originals_cutting_plane import run_svm_perf

    X, y = linsvm.read_libsvm(path)
    problem = (X, np.where(y > 0, 1.0, -1.0))
    points: list[Point] = []
    for eps in SVM_PERF_LADDER:
        try:
            run = run_svm_perf(path, C, eps=eps, timeout=4 * budget, problem=problem)
        except subprocess.TimeoutExpired:
            break  # this rung took over 4 budgets: the tighter ones take longer still
        points.append((run.seconds, run.iterations, run.primal))
        if run.seconds > budget or (run.primal - p_star) / p_star <= TARGETS[-1]:
            break
    return points


def cutting_plane_originals() -> list[Original]:
    from .originals_cutting_plane import find_svm_perf, find_svmocas

    def ocas_available() -> str:
        return "" if find_svmocas() else "not installed (scripts/oracles/libocas.sh)"

    def perf_available() -> str:
        return "" if find_svm_perf() else "not built (scripts/oracles/svm_perf.sh SRC)"

    return [
        Original("svmocas -m 1 (OCAS)", "ocas", ocas_curve(1), ocas_available),
        Original("svmocas -m 0 (cutting plane)", "svmperf", ocas_curve(0), ocas_available),
        # one run of its ladder: svm_perf takes minutes a rung on the larger sets
        Original("svm_perf -w 3", "svmperf", svm_perf_curve, perf_available, repeats=1),
    ]


@dataclass
class Reached:
    """Median seconds and iterations to each target (None: not reached)."""

    seconds: dict[float, float | None] = field(default_factory=dict)
    iterations: dict[float, int | None] = field(default_factory=dict)
    per_iteration: float = math.nan  # seconds per outer iteration
    final: float = math.nan  # relative accuracy at the end
    unavailable: str = ""  # a racer of the seeds' tables that cannot run: why
    # runs that reached each target, and runs: a median only where every run reached it
    hits: dict[float, tuple[int, int]] = field(default_factory=dict)


def racers_of(lineups: Sequence[str]) -> list[str]:
    """The racers of the named lineups, in order, once each."""
    names: list[str] = []
    for lineup in lineups:
        names += [n for n in LINEUPS[lineup] if n not in names]
    return names


def ours(results: Sequence[ComparisonResult], name: str) -> Reached:
    """Median over the repeats of a racer's time (and iterations) to each target."""
    out = Reached(unavailable=LINEUP[name].unavailable)
    runs = [r.runs[name] for r in results if name in r.runs]
    for target in TARGETS:
        times = [run.time_to(target) for run in runs]
        out.hits[target] = (sum(t is not None for t in times), len(times))
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


def originals_on(ds, installed: Sequence[Original], path: Path, pstar: dict[str, float],
                 repeats: int, budget: float) -> dict[str, Reached]:  # fmt: skip
    """Each installed original on ``path`` (``repeats`` runs): median seconds and iterations
    to each line, seconds per iteration, the last point's relative accuracy."""
    out: dict[str, Reached] = {}
    n_rows = ds.X.shape[0]
    for original in installed:
        p_star = pstar[LOSS_KEYS[LINEUP[original.racer].loss]]
        runs = []
        for _ in range(original.repeats or repeats):
            try:
                points = original.curve(path, n_rows, 1.0, budget, p_star)
            except (subprocess.TimeoutExpired, RuntimeError) as error:
                print(f"  {original.name}: {type(error).__name__}: {error}", file=sys.stderr)
                break
            runs.append([(t, k, (p - p_star) / p_star) for t, k, p in points])
        if not runs or not runs[0]:
            out[original.name] = Reached(seconds=dict.fromkeys(TARGETS),
                                         iterations=dict.fromkeys(TARGETS))  # fmt: skip
            continue
        last = runs[0][-1]
        print(f"  {original.name}: {last[1]} iterations in {last[0]:.3g} s, rel. acc. "
              f"{last[2]:.2e}", file=sys.stderr)  # fmt: skip
        reached = Reached()
        for target in TARGETS:
            hits = [next(((t, k) for t, k, r in run if r <= target), None) for run in runs]
            reached.hits[target] = (sum(h is not None for h in hits), len(hits))
            if all(h is not None for h in hits):
                reached.seconds[target] = statistics.median(h[0] for h in hits)
                reached.iterations[target] = int(statistics.median(h[1] for h in hits))
            else:
                reached.seconds[target] = reached.iterations[target] = None
        reached.per_iteration = statistics.median(run[-1][0] / max(run[-1][1], 1) for run in runs)
        reached.final = statistics.median(run[-1][2] for run in runs)
        out[original.name] = reached
    return out


def cell(r: Reached | None, target: float) -> str:
    if r is None:
        return "-"
    if r.unavailable:
        return "not available"
    t = r.seconds.get(target)
    if t is None:
        final = f" (final {r.final:.1e})" if math.isfinite(r.final) else ""
        k, n = r.hits.get(target, (0, 0))
        if 0 < k < n:  # the median final accuracy may then be past the target
            return f"reached in {k} of {n} runs{final.replace('(final', '(median final')}"
        return f"not reached{final}"
    return f"{fmt_seconds(t)} ({r.iterations[target]})"


def ratio(slow: float | None, fast: float | None) -> str:
    if slow is None or fast is None or fast <= 0:
        return "n/a"
    return f"{slow / fast:.1f}x"


def shuffled(ds, seed: int = 0):
    """The data set with its training rows in a seeded random order: Bottou's programs visit
    a file in its order and assume it shuffled; every racer races on the same rows."""
    perm = np.random.default_rng(seed).permutation(ds.X.shape[0])
    ds.X = ds.X[perm]
    ds.y = ds.y[perm]
    return ds


def data_file(name: str, ds) -> Path:
    """The (shuffled) training rows as a LIBSVM file for the original programs, written once
    into the scratch folder."""
    import linsvm

    path = scratch_dir() / f"lineup-{name}-{ds.X.shape[0]}-shuffled.svm"
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
    p.add_argument("--racers", default="", help="these racers instead of the lineups'")
    p.add_argument("--full-budget", action="store_true",
                   help="every racer may take --max-time (no race factor): to set ours "
                        "against an original that runs to the end")  # fmt: skip
    p.add_argument("--no-originals", action="store_true")
    p.add_argument("--skip-originals", default="",
                   help="names (prefixes) of original programs not to run, e.g. svm_perf")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-lineup.md"))
    p.add_argument("--figures", default=str(BENCH_DIR / "figures"))
    args = p.parse_args(argv)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    args.lineups = [x.strip() for x in args.lineups.split(",") if x.strip()]
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    names = racers_of(args.lineups) if not args.racers else args.racers.split(",")
    skip = [x.strip() for x in args.skip_originals.split(",") if x.strip()]
    listed = [] if args.no_originals else [
        o for o in originals() if not any(o.name.startswith(x) for x in skip)
    ]
    installed = [o for o in listed if not o.available()]
    # ours in the originals' order too, where an original visits the file in order
    for o in installed:
        in_order = f"{o.racer}-in-order" if o.shuffled_file else ""
        names += [r for r in (o.racer, in_order) if r in LINEUP and r not in names]
    out = Path(args.out)
    started = time.perf_counter()
    header = report_header(
        "The seeds' lineup: their tables reproduced, and ours against the original programs",
        "bench_lineup",
        [
            f"C = 1, no bias; racers: {', '.join(names)}; {args.repeats} races per data set "
            f"(medians), a racer's budget {args.max_time:g} s per race"
            + ("" if args.full_budget else " (or 10 x the fastest time of its loss to 0.1%)")
            + "; wall-clock seconds, recording excluded; every data "
            "set's training rows in one seeded random order (the originals read that file)",
            "originals: " + (", ".join(
                f"{o.name} ({'installed' if not o.available() else o.available()})"
                for o in listed) or "not run"),
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
        ds = shuffled(ds)
        label = f"{name} ({ds.X.shape[0]:,} rows)" if name == SYNTHETIC else name
        print(f"{ds.describe()}", file=sys.stderr)
        results = []
        # a set without a test split is scored on its training rows (the tables need none)
        X_test, y_test = (ds.X_test, ds.y_test) if ds.X_test is not None else (ds.X, ds.y)
        for k in range(args.repeats):
            outdir = Path(args.figures) / f"lineup-{name}" if k == 0 else None
            results.append(compare(
                ds.X, ds.y, X_test, y_test, C=1.0, solvers=names, bias=-1.0,
                max_time=args.max_time, outdir=outdir, seed=1 + k, dataset=name,
                check_overhead=False, quiet=k > 0,
                race_factor=None if args.full_budget else RACE_FACTOR,
            ))  # fmt: skip
        reached = {n: ours(results, n) for n in names}
        for target in TARGETS:
            table_rows[target].append([label, *[cell(reached[n], target) for n in names]])
        t1 = {n: reached[n].seconds[1e-2] for n in names}
        ratio_rows.append([label, *[ratio(t1.get(a), t1.get(b)) for a, b in SEED_RATIOS]])
        if installed:
            pstar = {k: v.primal for k, v in results[0].references.items()}
            theirs = originals_on(ds, installed, data_file(name, ds), pstar, args.repeats,
                                  args.max_time)  # fmt: skip
            for original in installed:
                other = theirs[original.name]
                for racer in (original.racer, f"{original.racer}-in-order"):
                    if racer not in reached:
                        continue
                    mine = reached[racer]
                    versus_rows.append([
                        label, original.name, LINEUP[racer].label,
                        ratio(mine.per_iteration, other.per_iteration).replace("x", ""),
                        cell(other, 1e-2), cell(mine, 1e-2), cell(other, 1e-3),
                        cell(mine, 1e-3),
                        ratio(mine.seconds[1e-3], other.seconds[1e-3]).replace("x", ""),
                    ])  # fmt: skip
        del ds, results
        gc.collect()
    for o in listed:
        if o.available():
            sections.append(f"- {o.name}: {o.available()}")

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
