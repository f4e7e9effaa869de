"""Threads within one SVR dual solve (-s 12, -s 13): time and epochs to a relative primal
accuracy of 1e-2 and 1e-3, linsvm on T threads against linsvm on one and LIBLINEAR.

Run from the repository root, on an otherwise idle machine::

    python -m benchmarks.bench_svr_threads [--quick] [--threads 1,2] [--repeats 5]
        [--datasets pypi-recent,synthetic-text] [--synthetic-rows 1000000]
        [--simulate 2,16,64] [--out benchmarks/RESULTS-svr-threads.md]

The problem: the SVR of width p = 0.1, C = 1, no bias, on each data set's +-1 labels taken as
targets (as ``bench_solvers`` does: no large regression set is at hand), -s 12 (L2 loss) and
-s 13 (L1 loss). The threaded solver is the SVM's rounds (``linsvm.solvers.dcd_threads``) with
the SVR's coordinate step.

**Time to accuracy.** For each tool, eps from loose to tight (1, 0.3, 0.1, ... 1e-4), one run a
setting until one reaches 1e-3; for each target the loosest setting that reached it is run
``--repeats`` times in all and its median taken. linsvm is ``linsvm.train(..., n_jobs=T)`` (T
threads where the data has 2 * ``THREAD_MIN_NNZ`` non-zeros and, beyond two threads, T *
``MANY_THREADS_MIN_NNZ``; the report gives the threads used); LIBLINEAR
(``liblinear-official``) runs on one thread: neither it nor multi-core LIBLINEAR has a
threaded SVR dual. A run is the training call alone (LIBLINEAR's ``problem`` built
beforehand); each w is scored afterwards by ``svr_primal_value`` against P*, the lowest
primal seen, first from a tight serial run whose duality gap certifies it.

**Epochs by simulated threads** (``--simulate``): ``dcd_threads.simulate`` runs the T-thread
arithmetic on one thread, bit for bit; a hook scores each epoch until 1e-3. The first data set
only.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .common import (
    SYNTHETIC,
    Dataset,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    report_header,
    write_report,
)

P = 0.1
C = 1.0
SOLVERS = (12, 13)
SOLVER_NAMES = {12: "L2-loss SVR (-s 12)", 13: "L1-loss SVR (-s 13)"}
TARGETS = (1e-2, 1e-3)
SWEEP = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4)
PSTAR_EPS = 1e-6
PSTAR_MAX_ITER = 5000
SIMULATOR_MAX_EPOCHS = 300
DEFAULT_DATASETS = ("pypi-recent", SYNTHETIC)
DEFAULT_SYNTHETIC_ROWS = 1_000_000
QUICK_SYNTHETIC_ROWS = 20_000


def primal(ds: Dataset, solver: int, w: np.ndarray) -> float:
    from linsvm.objective import SVR_LOSS_L1, SVR_LOSS_L2, svr_primal_value

    loss = SVR_LOSS_L2 if solver == 12 else SVR_LOSS_L1
    return float(svr_primal_value(ds.X, -1.0, ds.y, np.full(ds.X.shape[0], C), w, loss, P))


@dataclass
class Run:
    seconds: float
    primal: float
    epochs: int | None = None
    threads: int | None = None  # threads linsvm used


def fit_linsvm(ds: Dataset, solver: int, eps: float, n_jobs: int) -> Run:
    import linsvm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a loose eps may stop at the cap: scored all the same
        t0 = time.perf_counter()
        model = linsvm.train(ds.X, ds.y, solver=solver, C=C, p=P, eps=eps, n_jobs=n_jobs,
                             max_iter=PSTAR_MAX_ITER)  # fmt: skip
        seconds = time.perf_counter() - t0
    result = model.results_[0]
    w = np.asarray(model.coef_, dtype=np.float64).ravel()
    return Run(seconds, primal(ds, solver, w), result.n_iter,
               int(result.figures.get("n_threads", 1)))  # fmt: skip


class Liblinear:
    def __init__(self, ds: Dataset) -> None:
        from liblinear.liblinearutil import problem

        self.ds = ds
        self.prob = problem(ds.y, ds.X)

    def fit(self, solver: int, eps: float) -> Run:
        from liblinear.liblinearutil import parameter, train

        param = parameter(f"-s {solver} -c {C:g} -p {P:g} -e {eps:.17g} -q")
        t0 = time.perf_counter()
        model = train(self.prob, param)
        seconds = time.perf_counter() - t0
        n = model.get_nr_feature()
        w = np.zeros(self.ds.X.shape[1])
        w[:n] = np.ctypeslib.as_array(model.w, shape=(n,))[: self.ds.X.shape[1]]
        return Run(seconds, primal(self.ds, solver, w))


@dataclass
class ToolResult:
    name: str
    probes: list[tuple[float, Run]] = field(default_factory=list)  # (eps, run)
    best: dict[float, tuple[float, float, Run]] = field(default_factory=dict)  # target ->
    # (eps, median seconds, a run)


def time_to_targets(name: str, fit, pstar: float, repeats: int) -> ToolResult:
    res = ToolResult(name)
    for eps in SWEEP:
        run = fit(eps)
        res.probes.append((eps, run))
        relative = (run.primal - pstar) / pstar
        print(f"    {name} eps={eps:g}: {run.seconds:.3f} s, relative accuracy {relative:.1e}",
              file=sys.stderr, flush=True)  # fmt: skip
        if (run.primal - pstar) / pstar <= min(TARGETS):
            break
    for target in TARGETS:
        reached = [(eps, run) for eps, run in res.probes if (run.primal - pstar) / pstar <= target]
        if not reached:
            continue
        eps, run = reached[0]
        times = [run.seconds] + [fit(eps).seconds for _ in range(repeats - 1)]
        res.best[target] = (eps, median(times), run)
    return res


def reference(ds: Dataset, solver: int) -> tuple[float, float]:
    """(P*, its certified relative gap) from a tight serial run."""
    import linsvm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linsvm.train(ds.X, ds.y, solver=solver, C=C, p=P, eps=PSTAR_EPS,
                             max_iter=PSTAR_MAX_ITER, n_jobs=1)  # fmt: skip
    r = model.results_[0]
    return float(r.primal), float(r.gap / r.primal)


class EpochScorer:
    every_iteration = True

    def __init__(self, solver: int, pstar: float) -> None:
        self.solver = solver
        self.pstar = pstar
        self.primals: list[float] = []

    def __call__(self, progress) -> bool:
        if progress.solver != self.solver:
            return False
        value, _ = progress.objectives()
        self.primals.append(float(value))
        return (value - self.pstar) / self.pstar > min(TARGETS)

    def epochs_to(self, target: float) -> int | None:
        for epoch, value in enumerate(self.primals, start=1):
            if (value - self.pstar) / self.pstar <= target:
                return epoch
        return None


def simulated_epochs(ds: Dataset, solver: int, threads: int, pstar: float):
    import linsvm
    from linsvm.solvers.dcd_threads import simulate

    scorer = EpochScorer(solver, pstar)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if threads == 1:
            model = linsvm.train(ds.X, ds.y, solver=solver, C=C, p=P, eps=PSTAR_EPS,
                                 max_iter=SIMULATOR_MAX_EPOCHS, hook=scorer, n_jobs=1)
            figures = model.results_[0].figures
        else:
            figures = simulate(ds.X, ds.y, threads, solver=solver, C=C, p=P, eps=PSTAR_EPS,
                               max_iter=SIMULATOR_MAX_EPOCHS, hook=scorer).figures
    return scorer, figures


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small generated set, 1 repeat")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--datasets", default=",".join(DEFAULT_DATASETS))
    ap.add_argument("--synthetic-rows", type=int, default=DEFAULT_SYNTHETIC_ROWS)
    ap.add_argument("--simulate", default="2,16,64",
                    help="simulated thread counts on the first data set ('' for none)")
    ap.add_argument("--no-liblinear", action="store_true")
    ap.add_argument("--out", default="benchmarks/RESULTS-svr-threads.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats = 1
        args.datasets = SYNTHETIC
        args.synthetic_rows = QUICK_SYNTHETIC_ROWS
    args.threads = sorted({1} | {int(t) for t in args.threads.split(",") if t})
    args.simulate = [int(t) for t in args.simulate.split(",") if t]
    return args


def bench_problem(ds: Dataset, solver: int, liblinear: Liblinear | None, args,
                  simulate_counts: list[int]) -> list[str]:  # fmt: skip
    """The report's lines for one data set and solver."""
    print(f"{ds.describe()}, -s {solver}", file=sys.stderr, flush=True)
    pstar, gap = reference(ds, solver)
    tools = [(f"linsvm, {T} thread(s)", partial(fit_linsvm, ds, solver, n_jobs=T))
             for T in args.threads]  # fmt: skip
    if liblinear is not None:
        tools.append(("LIBLINEAR", partial(liblinear.fit, solver)))
    results = [time_to_targets(name, fit, pstar, args.repeats) for name, fit in tools]
    for r in results:  # P* stays the lowest primal seen
        pstar = min([pstar] + [run.primal for _, run in r.probes])
    one = results[0]
    rows = []
    for r in results:
        for target in TARGETS:
            if target not in r.best:
                rows.append([r.name, f"{target:g}", "not reached", "", "", "", ""])
                continue
            eps, seconds, run = r.best[target]
            base = one.best.get(target)
            rows.append([
                r.name, f"{target:g}", fmt_seconds(seconds), f"{eps:g}",
                "" if run.epochs is None else str(run.epochs),
                "" if run.threads is None else str(run.threads),
                fmt_ratio(base[1], seconds) if base else "n/a",
            ])  # fmt: skip
    lines = ["", f"**{ds.describe()}, {SOLVER_NAMES[solver]}**", "",
             f"P* = {pstar:.10g} (serial run at eps {PSTAR_EPS:g}: relative gap "
             f"{fmt_sci(gap)})", ""]  # fmt: skip
    lines += markdown_table(
        ["tool", "target", "seconds (median)", "eps", "epochs", "threads used",
         "speed-up over linsvm 1 thread"], rows)  # fmt: skip
    if not simulate_counts:
        return lines
    sim_rows = []
    serial_epochs = None
    for T in [1] + simulate_counts:
        scorer, figures = simulated_epochs(ds, solver, T, pstar)
        e2, e3 = scorer.epochs_to(1e-2), scorer.epochs_to(1e-3)
        if T == 1:
            serial_epochs = e2
        rounds = figures.get("rounds")
        sim_rows.append([
            "serial" if T == 1 else str(T), str(e2), str(e3),
            fmt_ratio(e2, serial_epochs) if T > 1 and e2 and serial_epochs else "",
            "" if rounds is None else f"{figures.get('shortened_rounds')} / {rounds}",
        ])  # fmt: skip
    lines += ["", f"Epochs to 1e-2 / 1e-3 by simulated threads ({SOLVER_NAMES[solver]}, "
                  f"{ds.name}):", ""]  # fmt: skip
    lines += markdown_table(["threads", "epochs to 1e-2", "epochs to 1e-3",
                             "1e-2 epochs / serial", "shortened rounds"], sim_rows)
    return lines


def main(argv=None) -> None:
    args = parse_args(argv)
    lines = report_header("SVR dual on threads (-s 12, -s 13)", "bench_svr_threads", [
        f"p = {P}, C = {C:g}, no bias; targets: each set's +-1 labels; median of "
        f"{args.repeats} runs at the loosest eps reaching each target",
    ])  # fmt: skip
    simulate_counts = args.simulate
    for name in args.datasets.split(","):
        ds = load_dataset(name, synthetic_rows=args.synthetic_rows)
        if ds is None:
            lines += ["", f"{name}: data not found, skipped"]
            continue
        liblinear = None if args.no_liblinear else Liblinear(ds)
        for solver in SOLVERS:
            lines += bench_problem(ds, solver, liblinear, args, simulate_counts)
        simulate_counts = []  # (the first data set only)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
