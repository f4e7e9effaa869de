"""The defaults of the primal stochastic solvers (linsvm.solvers.sgd), chosen by measurement.

Run from the repository root::

    python -m benchmarks.bench_sgd_defaults [--quick] [--datasets a9a,w8a,reuters,pypi-100k]
        [--repeats 3] [--out benchmarks/RESULTS-sgd-defaults.md]

On a9a, w8a, reuters (reuters.trn) and a 100,000-row sample of pypi-recent (rows drawn with
numpy's default_rng(0), file order kept), no bias, C in {1, 0.1} (``--quick``: a9a and
reuters):

- P*: linsvm's DCD (L1 loss) at eps 1e-6, its relative duality gap reported as the
  certificate; accuracies are (P(w) - P*)/P*.
- (a) round trips: SGD-S for a fixed number of epochs (no stop) in one kernel call
  (no hook) vs one call per epoch (a no-op hook), a9a.
- (b) comparison coefficient f: SGD-S at delta 1e-2 for f in 1 ... 3 and inf (the exact primal
  at every epoch end): epochs, exact primal evaluations, time, accuracy reached. Chosen: the
  lowest geometric mean over the rows of time / the row's best time (a run stopped at its
  epoch cap is left out of its column's mean: its time is only a lower bound).
- (c) multiplicity mu: SGD-M at delta 1e-2 with the code's default f, mu in 1 ... 10 (mu = 1
  is SGD-S). Chosen: the same rule among mu > 1.
- (d) delta: SGD-S at the code's default f for delta in 0.1 ... 0.003: epochs, time, accuracy
  reached, test accuracy (beside that of DCD's optimum). Chosen: the largest delta whose
  accuracy reached is <= 1e-2 on every row.
- (e) epochs to a relative accuracy, without stopping test: SGD-S, SGD-M (default mu), SGD-R
  and Pegasos (k = 1, projection) for ``CURVE_EPOCHS`` epochs (equivalents) with a snapshot of
  w after each, P(w) computed afterwards: the first epoch with accuracy <= 1e-2 and <= 1e-3,
  the accuracy at a few epoch counts, time per epoch of that same run (its per-epoch hook
  calls included, see (a)). This chooses the budgets of SGD-R (T_max) and Pegasos, which
  have no stopping test.

Times are CPU seconds of the benchmark's process (``time.process_time``; every run is
single-threaded, and the 2-core machine is shared, which makes wall times swing by 2x):
median of ``--repeats`` runs, runs over 2 s once (the trajectories are seeded, so every repeat
does the same work); Numba kernels compiled beforehand. Epochs and exact evaluations are exact
counts. SGD-S/M runs stop at ``MAX_EPOCHS`` epochs (shown as ">N").
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time

import numpy as np
import scipy.sparse as sp

from linsvm.objective import LOSS_HINGE, primal_value
from linsvm.solvers import Hook, Progress, Solution, Subproblem, sgd
from linsvm.solvers.dcd import solve_l1svc_dual
from linsvm.solvers.sgd import solve_pegasos, solve_sgd_m, solve_sgd_r, solve_sgd_s

from .common import (
    BENCH_DIR,
    Dataset,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    report_header,
    write_report,
)

FULL_DATASETS = ("a9a", "w8a", "reuters", "pypi-100k")
QUICK_DATASETS = ("a9a", "reuters")
C_VALUES = (1.0, 0.1)
PYPI_SAMPLE_ROWS = 100_000
PSTAR_EPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # warm-started until the gap certifies P*
PSTAR_GAP = 1e-7  # relative duality gap that ends the chain
MAX_EPOCHS = 2000
COMPARISONS = (1.0, 1.5, 2.0, 3.0, math.inf)  # inf: the exact primal at every epoch end
MULTIPLICITIES = (1, 2, 5, 10)
DELTAS = (0.1, 0.03, 0.01, 0.003)
TARGETS = (1e-2, 1e-3)
CURVE_EPOCHS = 200  # (e): epochs (equivalents) per curve
CURVE_MARKS = (10, 20, 50, 100)
ROUND_TRIP_EPOCHS = 200
SLOW_RUN = 2.0  # seconds: such runs are timed once


_T0 = time.perf_counter()


def log(message: str) -> None:
    """Progress on stderr, with the wall time since the start."""
    print(f"[{time.perf_counter() - _T0:6.0f} s] {message}", file=sys.stderr, flush=True)


def load(name: str) -> Dataset | None:
    """A benchmark dataset; "pypi-100k" is a fixed 100,000-row sample of pypi-recent."""
    if name != "pypi-100k":
        return load_dataset(name)
    ds = load_dataset("pypi-recent")
    if ds is None:
        return None
    rows = np.sort(np.random.default_rng(0).choice(ds.X.shape[0], PYPI_SAMPLE_ROWS, False))
    X = sp.csr_matrix(ds.X[rows])
    return Dataset(
        name,
        X,
        ds.y[rows].copy(),
        ds.X_test,
        ds.y_test,
        note=f"{PYPI_SAMPLE_ROWS} rows of pypi-recent (default_rng(0)), full test split",
    )


def warm_up() -> None:
    """Compile / load the kernels outside the timings."""
    rng = np.random.default_rng(0)
    X = sp.random(60, 8, density=0.4, format="csr", random_state=rng)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    C = np.ones(60)
    solve_sgd_s(Subproblem(X, y, C, eps=sgd.DEFAULT_DELTA, max_iter=3))
    solve_sgd_m(Subproblem(X, y, C, eps=sgd.DEFAULT_DELTA, max_iter=3, options={"multiplicity": 3}))
    solve_sgd_r(Subproblem(X, y, C, eps=sgd.DEFAULT_DELTA, max_iter=3))
    solve_pegasos(Subproblem(X, y, C, eps=sgd.DEFAULT_DELTA, max_iter=3))
    solve_l1svc_dual(Subproblem(X=X, y=y, C=C, eps=0.1, max_iter=10))


def clock() -> float:
    """The process's CPU time: the machine is shared, and the runs are single-threaded."""
    return time.process_time()


def timed(fn, repeats: int):
    """(median CPU seconds, last result); slow runs once."""
    times = []
    out = None
    for _ in range(repeats):
        gc.collect()
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
        if times[-1] > SLOW_RUN:
            break
    return median(times), out


class Problem:
    def __init__(self, ds: Dataset, C: float):
        self.ds, self.C = ds, C
        self.X, self.y = ds.X, ds.y
        self.c_rows = np.full(self.X.shape[0], C)
        t0 = clock()
        alpha = None
        for eps in PSTAR_EPS:
            sol = solve_l1svc_dual(
                Subproblem(
                    X=self.X, y=self.y, C=self.c_rows, eps=eps, max_iter=1_000_000, alpha0=alpha
                )
            )
            alpha = sol.alpha
            p, gap = sol.primal, sol.gap
            if gap <= PSTAR_GAP * p:
                break
        self.dcd_seconds = clock() - t0
        self.p_star, self.certificate, self.pstar_eps = p, gap / p, eps
        self.test_acc_star = self.test_accuracy(sol.w)

    def primal(self, w) -> float:
        X = self.X
        return float(
            primal_value(X.indptr, X.indices, X.data, -1.0, self.y, self.c_rows, w, LOSS_HINGE)
        )

    def rel(self, primal: float) -> float:
        return (primal - self.p_star) / self.p_star

    def test_accuracy(self, w) -> float:
        if self.ds.X_test is None:
            return math.nan
        return float(np.mean(np.where(self.ds.X_test @ w >= 0, 1.0, -1.0) == self.ds.y_test))


def fmt_pct(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{100 * x:.2f}"


def geomean(values) -> float:
    values = [v for v in values if np.isfinite(v) and v > 0]
    return float(np.exp(np.mean(np.log(values)))) if values else math.nan


def subproblem(pb: Problem, delta: float, epochs: int, **options) -> Subproblem:
    """The benchmark's problem for an SGD solver: one cost C, no bias, seed 1; ``delta`` is
    SGD-S/M's stopping threshold (unused by SGD-R and Pegasos), ``epochs`` the epoch cap
    (SGD-R, Pegasos: the budget in epoch equivalents)."""
    return Subproblem(
        pb.X, pb.y, pb.c_rows, eps=delta, max_iter=epochs, bias=-1.0, seed=1, options=options
    )


def run_sm(pb: Problem, repeats: int, delta: float, comparison: float, multiplicity: int = 1):
    """SGD-S (multiplicity 1) or SGD-M, capped at MAX_EPOCHS: (median CPU s, Solution)."""
    if multiplicity == 1:
        sub = subproblem(pb, delta, MAX_EPOCHS, comparison=comparison)
        return timed(lambda: solve_sgd_s(sub), repeats)
    sub = subproblem(pb, delta, MAX_EPOCHS, comparison=comparison, multiplicity=multiplicity)
    return timed(lambda: solve_sgd_m(sub), repeats)


def epochs_cell(sol: Solution):
    """Epochs run, ">N" when the cap stopped the run."""
    return sol.n_iter if sol.converged else f">{sol.n_iter}"


def section_round_trips(problems, repeats) -> list[str]:
    rows = []
    for pb in problems:
        if pb.ds.name != "a9a":
            continue
        one, per = [], []
        sub = subproblem(pb, 0.0, ROUND_TRIP_EPOCHS, comparison=1e-300)

        def no_op(progress: Progress) -> None:  # wants every epoch: one kernel call each
            return None

        for _ in range(max(repeats, 5)):  # interleaved, so that load changes hit both alike
            for out, hook in ((one, None), (per, no_op)):
                gc.collect()
                t0 = clock()
                solve_sgd_s(sub, hook)
                out.append(clock() - t0)
        a, b = median(one), median(per)
        rows.append(
            [
                pb.ds.name,
                f"{pb.C:g}",
                ROUND_TRIP_EPOCHS,
                fmt_seconds(a),
                fmt_seconds(b),
                f"{1e3 * (b - a) / ROUND_TRIP_EPOCHS:.3f}",
                f"{b / a:.3f}",
            ]
        )
    if not rows:
        return []
    return [
        "## (a) Round trips: one kernel call vs one call per epoch",
        "",
        f"SGD-S, {ROUND_TRIP_EPOCHS} epochs without the stopping test (delta 0, no exact "
        "primal), median of interleaved runs.",
        "",
        *markdown_table(
            ["data", "C", "epochs", "one call s", "per epoch s", "ms per epoch added", "ratio"],
            rows,
        ),
        "",
    ]


def section_comparison(problems, repeats) -> tuple[list[str], float]:
    rows, rel_times = [], {f: [] for f in COMPARISONS}
    for pb in problems:
        log(f"(b) {pb.ds.name} C={pb.C:g}")
        results = {}
        for f in COMPARISONS:
            t, sol = run_sm(pb, repeats, delta=1e-2, comparison=f)
            results[f] = (t, sol)
        best = min(t for t, s in results.values() if s.converged)
        for f, (t, sol) in results.items():
            rel_times[f].append(t / best if sol.converged else math.nan)
            rows.append(
                [
                    pb.ds.name,
                    f"{pb.C:g}",
                    f"{f:g}",
                    epochs_cell(sol),
                    sol.figures["primal_evaluations"],
                    fmt_seconds(t),
                    f"{t / best:.2f}",
                    fmt_sci(pb.rel(sol.primal)),
                ]
            )
    summary = {f: geomean(v) for f, v in rel_times.items()}
    chosen = min(summary, key=lambda f: summary[f])
    lines = [
        "## (b) Comparison coefficient f (SGD-S, delta 1e-2)",
        "",
        "The primal is computed exactly at an epoch end only when the estimated bound is "
        "<= f x delta. evals: exact primal computations; acc: (P - P*)/P* at the stop.",
        "",
        *markdown_table(["data", "C", "f", "epochs", "evals", "CPU s", "/ best", "acc"], rows),
        "",
        "- time relative to the best f of each row, geometric mean (runs at the epoch cap "
        "left out): "
        + ", ".join(f"f {f:g}: {summary[f]:.2f}" for f in COMPARISONS),
        f"- lowest: f = {chosen:g}",
        "",
    ]
    return lines, chosen


def section_multiplicity(problems, repeats, comparison) -> tuple[list[str], int]:
    rows, rel_times = [], {m: [] for m in MULTIPLICITIES}
    for pb in problems:
        log(f"(c) {pb.ds.name} C={pb.C:g}")
        results = {}
        for mu in MULTIPLICITIES:
            results[mu] = run_sm(pb, repeats, delta=1e-2, comparison=comparison, multiplicity=mu)
        best = min(t for t, s in results.values() if s.converged)
        for mu, (t, sol) in results.items():
            rel_times[mu].append(t / best if sol.converged else math.nan)
            rows.append(
                [
                    pb.ds.name,
                    f"{pb.C:g}",
                    mu,
                    epochs_cell(sol),
                    sol.figures["primal_evaluations"],
                    fmt_seconds(t),
                    f"{t / best:.2f}",
                    fmt_sci(pb.rel(sol.primal)),
                ]
            )
    summary = {m: geomean(v) for m, v in rel_times.items()}
    chosen = min((m for m in MULTIPLICITIES if m > 1), key=lambda m: summary[m])
    lines = [
        f"## (c) Multiplicity mu (SGD-M, delta 1e-2, f {comparison:g})",
        "",
        "mu = 1 is SGD-S. An epoch presents every row mu times in a row (mu l steps).",
        "",
        *markdown_table(["data", "C", "mu", "epochs", "evals", "CPU s", "/ best", "acc"], rows),
        "",
        "- time relative to the best mu of each row, geometric mean (runs at the epoch cap "
        "left out): "
        + ", ".join(f"mu {m}: {summary[m]:.2f}" for m in MULTIPLICITIES),
        f"- lowest with mu > 1: mu = {chosen}",
        "",
    ]
    return lines, chosen


def section_delta(problems, repeats, comparison) -> tuple[list[str], float]:
    rows, worst = [], {d: 0.0 for d in DELTAS}
    for pb in problems:
        log(f"(d) {pb.ds.name} C={pb.C:g}")
        for delta in DELTAS:
            t, sol = run_sm(pb, repeats, delta=delta, comparison=comparison)
            acc = pb.rel(sol.primal)
            worst[delta] = max(worst[delta], acc)
            rows.append(
                [
                    pb.ds.name,
                    f"{pb.C:g}",
                    f"{delta:g}",
                    epochs_cell(sol),
                    fmt_seconds(t),
                    fmt_sci(sol.figures["stop_measure"]),
                    fmt_sci(acc),
                    fmt_pct(pb.test_accuracy(sol.w)),
                    fmt_pct(pb.test_acc_star),
                ]
            )
    chosen = max((d for d in DELTAS if worst[d] <= 1e-2), default=min(DELTAS))
    lines = [
        f"## (d) Stopping threshold delta (SGD-S, f {comparison:g})",
        "",
        "bound: the (P - D)/D at the stop; acc: (P - P*)/P* reached; test %: accuracy on "
        "the test split (P*: of DCD's optimum).",
        "",
        *markdown_table(
            ["data", "C", "delta", "epochs", "CPU s", "bound", "acc", "test %", "P* test %"], rows
        ),
        "",
        "- worst acc over the rows: "
        + ", ".join(f"delta {d:g}: {fmt_sci(worst[d])}" for d in DELTAS),
        f"- largest delta with every acc <= 1e-2: {chosen:g}",
        "",
    ]
    return lines, chosen


def _curve(pb: Problem, method: str, multiplicity: int):
    """Relative accuracy after each epoch (equivalent), and seconds per epoch."""
    snaps = []

    def keep(progress: Progress) -> None:  # after every epoch (equivalent)
        snaps.append(progress.w.copy())  # the solver's live w

    n = CURVE_EPOCHS

    def call(hook: Hook) -> Solution:
        if method == "pegasos":  # k = 1, with the projection
            return solve_pegasos(subproblem(pb, 0.0, n, batch_size=1, projection=True), hook)
        if method == "r":
            return solve_sgd_r(subproblem(pb, 0.0, n), hook)
        # delta 0 and no exact primal: no stop before n epochs
        if method == "m":
            return solve_sgd_m(
                subproblem(pb, 0.0, n, comparison=1e-300, multiplicity=multiplicity), hook
            )
        return solve_sgd_s(subproblem(pb, 0.0, n, comparison=1e-300), hook)

    t, _ = timed(lambda: call(keep), 1)
    return [pb.rel(pb.primal(w)) for w in snaps], t / n


BUDGET_SHARE = 0.75  # (e): a budget must reach 1e-2 on at least this share of the rows


def section_curves(problems, multiplicity) -> tuple[list[str], dict[str, int]]:
    rows = []
    at_mark = {"r": {k: [] for k in CURVE_MARKS}, "pegasos": {k: [] for k in CURVE_MARKS}}
    for pb in problems:
        log(f"(e) {pb.ds.name} C={pb.C:g}")
        for method in ("s", "m", "r", "pegasos"):
            accs, per_epoch = _curve(pb, method, multiplicity)
            if method in at_mark:
                for k in CURVE_MARKS:
                    at_mark[method][k].append(accs[k - 1] <= 1e-2)
            cells = []
            for tgt in TARGETS:
                hit = next((k + 1 for k, a in enumerate(accs) if a <= tgt), None)
                cells += [
                    hit if hit else f">{len(accs)}",
                    fmt_seconds(hit * per_epoch) if hit else "n/a",
                ]
            marks = [fmt_sci(accs[k - 1]) for k in CURVE_MARKS if k <= len(accs)]
            name = {
                "s": "SGD-S",
                "m": f"SGD-M mu {multiplicity}",
                "r": "SGD-R",
                "pegasos": "Pegasos",
            }[method]
            rows.append(
                [
                    pb.ds.name,
                    f"{pb.C:g}",
                    name,
                    f"{1e3 * per_epoch:.2f}",
                    *cells,
                    *marks,
                    fmt_sci(max(accs[len(accs) // 2 :])),
                ]
            )
    shares = {m: {k: float(np.mean(v)) for k, v in marks.items()} for m, marks in at_mark.items()}
    budgets = {
        m: next((k for k in CURVE_MARKS if shares[m][k] >= BUDGET_SHARE), CURVE_MARKS[-1])
        for m in shares
    }
    summary = [
        f"- {name}: share of rows with accuracy <= 1e-2 after "
        + ", ".join(f"{k} epochs: {shares[m][k]:.2f}" for k in CURVE_MARKS)
        + f"; smallest budget reaching {BUDGET_SHARE:g}: {budgets[m]} epochs"
        for m, name in (("r", "SGD-R"), ("pegasos", "Pegasos"))
    ]
    lines = [
        "## (e) Epochs to a relative accuracy (no stopping test)",
        "",
        f"Each method for {CURVE_EPOCHS} epochs (SGD-R, Pegasos: epoch equivalents of l "
        "rows), w snapshot after each; P(w) computed afterwards. ms/epoch: CPU time of that run "
        "(it includes the per-epoch calls, see (a)). 'to 1e-2': first epoch with "
        "(P - P*)/P* <= 1e-2 (time = epochs x ms/epoch). 'worst 2nd half': the largest "
        "accuracy over the last half of the run (SGD's iterates are not monotone).",
        "",
        *markdown_table(
            [
                "data",
                "C",
                "method",
                "ms/epoch",
                "to 1e-2",
                "s",
                "to 1e-3",
                "s",
                *[f"@{k}" for k in CURVE_MARKS],
                "worst 2nd half",
            ],
            rows,
        ),
        "",
        *summary,
        "",
    ]
    return lines, budgets


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(BENCH_DIR / "RESULTS-sgd-defaults.md"))
    args = ap.parse_args(argv)
    names = (
        args.datasets.split(",")
        if args.datasets
        else QUICK_DATASETS
        if args.quick
        else FULL_DATASETS
    )
    t_start = time.perf_counter()
    try:  # BLAS single-threaded (objective's np.dot): its idle threads would count as CPU time
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
    except ImportError:
        pass
    warm_up()
    datasets, problems, notes = [], [], []
    for name in names:
        ds = load(name)
        if ds is None:
            notes.append(f"{name}: data missing, skipped")
            continue
        datasets.append(ds)
        for C in C_VALUES:
            log(f"P* {name} C={C:g}")
            problems.append(Problem(ds, C))
    pstar_rows = [
        [
            pb.ds.name,
            f"{pb.C:g}",
            f"{pb.p_star:.8g}",
            f"{pb.pstar_eps:g}",
            fmt_sci(pb.certificate),
            fmt_seconds(pb.dcd_seconds),
            fmt_pct(pb.test_acc_star),
        ]
        for pb in problems
    ]

    body = []
    log("(a) round trips")
    body += section_round_trips(problems, args.repeats)
    lines, f_best = section_comparison(problems, args.repeats)
    body += lines
    lines, mu_best = section_multiplicity(problems, args.repeats, sgd.DEFAULT_COMPARISON)
    body += lines
    lines, delta_best = section_delta(problems, args.repeats, sgd.DEFAULT_COMPARISON)
    body += lines
    lines, budgets = section_curves(problems, sgd.DEFAULT_MULTIPLICITY)
    body += lines

    extra = [
        "datasets: "
        + "; ".join(ds.describe() + (f" ({ds.note})" if ds.note else "") for ds in datasets),
        "problem: L1-loss SVM, no bias, C in {"
        + ", ".join(f"{c:g}" for c in C_VALUES)
        + "}; P*: linsvm DCD warm-started through eps 1e-2, 1e-3, ... until its relative "
        f"duality gap (cert) is <= {PSTAR_GAP:g}",
        f"timed: CPU time of the process (time.process_time), median of {args.repeats} runs "
        f"(runs over {SLOW_RUN:g} s: once), one thread, kernels compiled beforehand; SGD-S/M "
        f"capped at {MAX_EPOCHS} epochs; seed 1",
        f"defaults in the code at this run: delta {sgd.DEFAULT_DELTA:g}, f "
        f"{sgd.DEFAULT_COMPARISON:g}, mu {sgd.DEFAULT_MULTIPLICITY}, SGD-R "
        f"{sgd.DEFAULT_RANDOM_EPOCHS} epochs, Pegasos {sgd.DEFAULT_PEGASOS_EPOCHS} epochs",
        f"this run's choices: f {f_best:g}, mu {mu_best}, delta {delta_best:g}, SGD-R "
        f"{budgets['r']} epochs, Pegasos {budgets['pegasos']} epochs "
        "(rules in each section)",
        *notes,
    ]
    lines = report_header("SGD solvers: measured defaults", "bench_sgd_defaults", extra)
    lines += [
        "## P*",
        "",
        *markdown_table(["data", "C", "P*", "DCD eps", "cert", "DCD CPU s", "test %"], pstar_rows),
        "",
    ]
    lines += body
    lines.append(f"Total benchmark time: {time.perf_counter() - t_start:.0f} s.")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
