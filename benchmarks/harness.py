"""Training-time harness: linsvm vs LIBLINEAR vs Snap ML, time to a relative primal accuracy.

Run from the repository root::

    python -m benchmarks.harness [--quick] [--datasets a9a,w8a,...] [--repeats 5]
                                 [--synthetic-rows 4000000] [--out benchmarks/RESULTS-train.md]

For each dataset and each loss (L2-loss SVM = LIBLINEAR ``-s 1``, L1-loss SVM = ``-s 3``), C = 1,
no bias, every tool on the same loaded data in one process:

1. **P\\***: the optimum, from tight runs (linsvm's DCD warm-started through shrinking
   tolerances until its duality gap certifies 1e-6 relative accuracy or a time budget runs
   out; for the L2 loss also LIBLINEAR's primal Newton ``-s 2 -e 1e-6``). P* is the smallest
   primal value seen in any run of the session (each is an upper bound); the largest dual
   value seen is a certified lower bound. Cached per (dataset, loss) in the scratch folder.
2. **Default**: each tool at its default tolerance, ``--repeats`` timed runs, median time; the
   relative accuracy ``(P(w) - P*) / P*`` reached and the test accuracy.
3. **Targets 1e-2 and 1e-3**: each tool's tolerance is swept from loose to tight (one probe
   run per setting, stopping at the first setting that reaches the tightest target or when a
   probe exceeds ``--max-run-seconds``); the fastest settings reaching each target get
   ``--repeats`` runs in all; the reported time is the smallest median among them.

Every ``w`` is scored by ``linsvm.objective.primal_value`` on the float64 training data. Times
are ``time.perf_counter`` around the training call only (LIBLINEAR's ``problem`` is built
beforehand; Snap ML converts its input inside ``fit``, which is counted). linsvm and the peers
are warmed up on a tiny problem first, so Numba compilation / cache loading is not timed (see
``bench_startup.py`` for that cost).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value

from .common import (
    BENCH_DIR,
    DEFAULT_DATASETS,
    DEFAULT_SYNTHETIC_ROWS,
    SYNTHETIC,
    Dataset,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    report_header,
    scratch_dir,
    write_report,
)
from .peers import LOSS_NAMES, FitResult, Setting, Tool, available_tools

TARGETS = (1e-2, 1e-3)
LOSSES = (LOSS_SQUARED_HINGE, LOSS_HINGE)
PSTAR_CACHE_NAME = "pstar.json"
# The tight reference runs stop when (P - D) / D is below this (or their budget runs out).
PSTAR_GAP_TARGET = 1e-6
PSTAR_EPS_STAGES = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


# ---- data of one benchmark ---------------------------------------------------------------------

@dataclass
class Measurement:
    """All timed runs of one tool at one setting on one (dataset, loss)."""

    tool: str
    setting: Setting
    times: list[float] = field(default_factory=list)
    primals: list[float] = field(default_factory=list)
    n_iter: int | None = None
    converged: bool | None = None
    notes: list[str] = field(default_factory=list)
    test_accuracy: float | None = None

    @property
    def median_time(self) -> float:
        return median(self.times)

    @property
    def primal(self) -> float:
        """The worst (largest) primal over the runs: a setting reaches a target if all do."""
        return max(self.primals)

    def add(self, fit: FitResult, primal: float) -> None:
        self.times.append(fit.seconds)
        self.primals.append(primal)
        self.n_iter = fit.n_iter
        self.converged = fit.converged
        for note in fit.notes:
            if note not in self.notes:
                self.notes.append(note)


@dataclass
class Reference:
    """What is known of the optimum of one (dataset, loss): P* <= primal, >= dual."""

    primal: float = np.inf
    dual: float = -np.inf
    source: str = ""  # which run gave the lowest primal
    seconds: float = 0.0
    cached: bool = False
    budget: float = 0.0  # seconds allowed to the tight run that produced it

    def offer(self, primal: float | None = None, dual: float | None = None,
              source: str | None = None) -> None:
        if primal is not None and primal < self.primal:
            self.primal = float(primal)
            self.source = source or self.source
        if dual is not None and dual > self.dual:
            self.dual = float(dual)

    @property
    def certified_gap(self) -> float:
        """(P* - D) / D: how far the reported P* may be above the true optimum, relatively."""
        if not np.isfinite(self.dual) or self.dual <= 0:
            return np.inf
        return (self.primal - self.dual) / self.dual

    def relative_accuracy(self, primal: float) -> float:
        return (primal - self.primal) / self.primal

    def to_json(self) -> dict:
        return {"primal": self.primal, "dual": self.dual, "source": self.source,
                "seconds": self.seconds, "budget": self.budget}

    @classmethod
    def from_json(cls, d: dict) -> Reference:
        return cls(d["primal"], d["dual"], d.get("source", ""), d.get("seconds", 0.0), True,
                   d.get("budget", 0.0))


@dataclass
class ProblemResult:
    """Everything measured for one (dataset, loss)."""

    dataset: str
    loss: int
    n_rows: int
    n_features: int
    nnz: int
    reference: Reference
    runs: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # tool -> label -> m
    defaults: dict[str, str] = field(default_factory=dict)  # tool -> label of its default run
    sweep_notes: dict[str, list[str]] = field(default_factory=dict)


# ---- P* ----------------------------------------------------------------------------------------

class ReferenceCache:
    """P* and its dual bound per (dataset key, loss) in a JSON file in the scratch folder."""

    def __init__(self, path) -> None:
        self.path = path
        try:
            with open(path) as f:
                self.data = json.load(f)
        except (OSError, ValueError):
            self.data = {}

    @staticmethod
    def key(dataset_key: str, loss: int) -> str:
        return f"{dataset_key}|loss={loss}"

    def get(self, dataset_key: str, loss: int) -> Reference | None:
        d = self.data.get(self.key(dataset_key, loss))
        return Reference.from_json(d) if d else None

    def put(self, dataset_key: str, loss: int, ref: Reference) -> None:
        self.data[self.key(dataset_key, loss)] = ref.to_json()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def tight_linsvm(ds: Dataset, loss: int, budget: float, ref: Reference, n_threads: int = 1,
                 chunk_iter: int = 200) -> None:
    """linsvm's DCD, warm-started through shrinking eps until the gap certifies P*.

    Runs in chunks of at most ``chunk_iter`` outer iterations (each chunk warm-starts from the
    last alpha) so that the time budget is checked regularly; ``n_threads`` as
    ``Subproblem.n_threads``.
    """
    from linsvm.solvers import Subproblem
    from linsvm.solvers.dcd import solve_l1svc_dual, solve_l2svc_dual

    solve = solve_l1svc_dual if loss == LOSS_HINGE else solve_l2svc_dual
    cost = np.ones(ds.X.shape[0])
    alpha = None
    start = time.perf_counter()
    for eps in PSTAR_EPS_STAGES:
        while True:
            sub = Subproblem(X=ds.X, y=ds.y, C=cost, eps=eps, max_iter=chunk_iter, alpha0=alpha,
                             n_threads=n_threads)
            sol = solve(sub)
            alpha = sol.alpha
            ref.offer(sol.primal, sol.dual, f"linsvm DCD eps={eps:g}")
            out_of_time = time.perf_counter() - start > budget
            if sol.converged or out_of_time or ref.certified_gap <= PSTAR_GAP_TARGET:
                break
        if out_of_time or ref.certified_gap <= PSTAR_GAP_TARGET:
            break


def tight_liblinear_primal(ds: Dataset, ref: Reference, y_cost: np.ndarray) -> None:
    """LIBLINEAR's primal Newton solver for the L2 loss (-s 2 -e 1e-6)."""
    import scipy.sparse as sp
    from liblinear.liblinearutil import parameter, problem, train

    prob = problem(ds.y, sp.csr_matrix(ds.X, dtype=np.float64))
    model = train(prob, parameter("-s 2 -c 1 -e 1e-6 -q"))
    n = model.get_nr_feature()
    w = np.ctypeslib.as_array(model.w, shape=(n,)).astype(np.float64)
    if n < ds.X.shape[1]:
        w = np.concatenate([w, np.zeros(ds.X.shape[1] - n)])
    if model.get_labels()[0] != 1:
        w = -w
    ref.offer(score(ds, w, LOSS_SQUARED_HINGE, y_cost), None, "LIBLINEAR -s 2 -e 1e-6")


def score(ds: Dataset, w: np.ndarray, loss: int, cost: np.ndarray) -> float:
    """P(w) on the training data (the one definition in linsvm.objective)."""
    X = ds.X
    return float(primal_value(X.indptr, X.indices, X.data, -1.0, ds.y, cost,
                              np.ascontiguousarray(w, dtype=np.float64), loss))


def compute_reference(ds: Dataset, loss: int, budget: float, use_liblinear: bool,
                      n_threads: int = 1, chunk_iter: int = 200) -> Reference:
    ref = Reference()
    t0 = time.perf_counter()
    tight_linsvm(ds, loss, budget, ref, n_threads, chunk_iter)
    if use_liblinear and loss == LOSS_SQUARED_HINGE:
        try:
            tight_liblinear_primal(ds, ref, np.ones(ds.X.shape[0]))
        except ImportError:
            pass
    ref.seconds = time.perf_counter() - t0
    ref.budget = budget
    return ref


# ---- one tool on one problem -------------------------------------------------------------------

class ToolBench:
    """Runs one tool on one (dataset, loss), recording measurements by setting label."""

    def __init__(self, tool: Tool, ds: Dataset, loss: int, ref: Reference, repeats: int,
                 max_run_seconds: float, targets: tuple[float, ...] = TARGETS) -> None:
        self.tool = tool
        self.targets = targets
        self.ds = ds
        self.loss = loss
        self.ref = ref
        self.repeats = repeats
        self.max_run_seconds = max_run_seconds
        self.cost = np.ones(ds.X.shape[0])
        self.runs: dict[str, Measurement] = {}
        self.notes: list[str] = []

    def run(self, setting: Setting, n_runs: int) -> Measurement:
        """Bring the setting's measurement up to ``n_runs`` timed runs."""
        m = self.runs.setdefault(setting.label, Measurement(self.tool.name, setting))
        while len(m.times) < n_runs:
            gc.collect()
            self.tool.seed = len(m.times) + 1  # (repeat k: seed k, see Tool.seed)
            fit = self.tool.fit(self.loss, setting)
            primal = score(self.ds, fit.w, self.loss, self.cost)
            self.ref.offer(primal, None, f"{self.tool.name} {setting.label}")
            if m.test_accuracy is None and self.ds.X_test is not None:
                m.test_accuracy = test_accuracy(self.ds, fit.w)
            m.add(fit, primal)
        return m

    def rel(self, m: Measurement) -> float:
        return self.ref.relative_accuracy(m.primal)

    def default(self) -> Measurement:
        return self.run(self.tool.default_setting(self.loss), self.repeats)

    def sweep(self, default: Measurement) -> None:
        """Probe the settings loose to tight; then full repeats for the best per target. A
        setting that reached the tightest target on its probe may fall short once repeated
        (another order each repeat): the probing then goes on from the next setting (it
        stopped there, and the default was reported where a setting between was faster)."""
        settings = self.tool.sweep(self.loss)
        tightest = min(self.targets)
        # (the default run, given, is repeated anyway: it does not end the probing)
        own = self.tool.default_setting(self.loss).label if default is not None else None
        at = 0
        while at < len(settings):
            at, too_slow = self.probe(default, settings, at)
            self.repeat_best()
            if too_slow or any(self.rel(m) <= tightest and len(m.times) >= self.repeats
                               for label, m in self.runs.items() if label != own):  # fmt: skip
                break

    def probe(self, default: Measurement | None, settings: list[Setting] | None = None,
              start: int = 0) -> tuple[int, bool]:  # fmt: skip
        """One run per setting of ``settings[start:]`` (default: the tool's sweep), loose to
        tight, up to the first
        reaching the tightest target (or a run slower than ``max_run_seconds``: then True);
        a setting that is the ``default`` run (if given) reuses it. Returns (where the next
        probe would start, whether it stopped for time)."""
        tightest = min(self.targets)
        settings = self.tool.sweep(self.loss) if settings is None else settings
        for k in range(start, len(settings)):
            setting = settings[k]
            if default is not None and (setting.same_as_default == "always" or (
                    setting.same_as_default == "if_converged" and default.converged)):
                self.runs[setting.label] = default  # the very same computation
                m = default
            else:
                m = self.run(setting, 1)
            if self.rel(m) <= tightest:
                return k + 1, False
            if m.times[0] > self.max_run_seconds:
                self.notes.append(
                    f"sweep stopped after {setting.label}: one run took "
                    f"{fmt_seconds(m.times[0])} s (> --max-run-seconds {self.max_run_seconds:g})")
                return k + 1, True
        return len(settings), False

    def repeat_best(self) -> None:
        """``repeats`` runs of every setting reaching a target within 1.5x of the fastest."""
        for target in self.targets:
            reaching = [m for m in self.runs.values() if self.rel(m) <= target]
            if not reaching:
                continue
            best = min(m.median_time for m in reaching)
            for m in reaching:
                if m.median_time <= 1.5 * best:
                    self.run(m.setting, self.repeats)


def test_accuracy(ds: Dataset, w: np.ndarray) -> float:
    dec = ds.X_test @ w
    return float(np.mean(np.where(dec > 0, 1.0, -1.0) == ds.y_test))


def best_for_target(runs: dict[str, Measurement], ref: Reference,
                    target: float) -> Measurement | None:
    """The fastest (by median) setting whose worst primal reaches the target."""
    reaching = [m for m in runs.values() if ref.relative_accuracy(m.primal) <= target]
    if not reaching:
        return None
    most = max(len(m.times) for m in reaching)
    full = [m for m in reaching if len(m.times) == most]
    return min(full, key=lambda m: m.median_time)


# ---- driver ------------------------------------------------------------------------------------

def dataset_key(name: str, synthetic_rows: int) -> str:
    return f"{name}-{synthetic_rows}" if name == SYNTHETIC else name


def bench_dataset(ds: Dataset, key: str, tools: list[Tool], cache: ReferenceCache,
                  args) -> list[ProblemResult]:
    results = []
    for tool in tools:
        tool.prepare(ds.X, ds.y)
    try:
        for loss in LOSSES:
            ref = cache.get(key, loss)
            if ref is None or (ref.certified_gap > PSTAR_GAP_TARGET
                               and ref.budget < args.pstar_budget):
                t0 = time.perf_counter()
                print(f"  computing P* ({LOSS_NAMES[loss]}) ...", file=sys.stderr, flush=True)
                ref = compute_reference(ds, loss, args.pstar_budget, use_liblinear=True)
                print(f"  P* = {ref.primal:.10g}, certified gap {ref.certified_gap:.1e} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
            pr = ProblemResult(ds.name, loss, ds.X.shape[0], ds.X.shape[1], ds.X.nnz, ref)
            for tool in tools:
                if not tool.supports(loss):
                    continue
                print(f"  {tool.name} {LOSS_NAMES[loss]} ...", file=sys.stderr, flush=True)
                bench = ToolBench(tool, ds, loss, ref, args.repeats, args.max_run_seconds)
                default = bench.default()
                bench.sweep(default)
                pr.runs[tool.name] = bench.runs
                pr.defaults[tool.name] = default.setting.label
                pr.sweep_notes[tool.name] = bench.notes
            cache.put(key, loss, ref)
            results.append(pr)
    finally:
        for tool in tools:
            tool.release()
    return results


# ---- report ------------------------------------------------------------------------------------

def _acc(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def report(results: list[ProblemResult], tool_names: list[str], header: list[str],
           notes: list[str]) -> list[str]:
    lines = list(header)
    peers = [t for t in tool_names if t != "linsvm"]
    lines += ["Times are medians in seconds; `rel acc` is (P(w) - P*)/P*; ratios are "
              "linsvm time / peer time (below 1: linsvm faster). C = 1, no bias. "
              "A target is reached when every repeat's P(w) reaches it; linsvm and Snap ML "
              "run repeat k with seed k (another order each, as LIBLINEAR's repeats).", ""]
    for loss in LOSSES:
        rows_d = []
        rows_t = []
        for pr in (p for p in results if p.loss == loss):
            ref = pr.reference
            default = {t: pr.runs[t][pr.defaults[t]] for t in tool_names if t in pr.runs}
            row = [pr.dataset]
            row += [fmt_seconds(default[t].median_time) if t in default else "n/a"
                    for t in tool_names]
            lin = default.get("linsvm")
            row += [fmt_ratio(lin.median_time if lin else None,
                              default[p].median_time if p in default else None) for p in peers]
            row += ["/".join(fmt_sci(ref.relative_accuracy(default[t].primal))
                             if t in default else "n/a" for t in tool_names)]
            row += ["/".join(_acc(default[t].test_accuracy) if t in default else "n/a"
                             for t in tool_names)]
            rows_d.append(row)
            for target in TARGETS:
                best = {t: best_for_target(pr.runs[t], ref, target)
                        for t in tool_names if t in pr.runs}
                row = [pr.dataset, f"{target:g}"]
                for t in tool_names:
                    m = best.get(t)
                    row.append("not reached" if m is None else
                               f"{fmt_seconds(m.median_time)} ({m.setting.label.split(' (')[0]}"
                               f"{'' if len(m.times) > 1 else ', 1 run'})")
                lin = best.get("linsvm")
                row += [fmt_ratio(lin.median_time if lin else None,
                                  best[p].median_time if best.get(p) else None) for p in peers]
                rows_t.append(row)
        if not rows_d:
            continue
        lines += [f"## {LOSS_NAMES[loss]}", "", "### Default tolerances", ""]
        lines += markdown_table(
            ["dataset"] + [f"{t} s" for t in tool_names] + [f"linsvm/{p}" for p in peers]
            + ["rel acc (" + " / ".join(tool_names) + ")",
               "test acc % (" + " / ".join(tool_names) + ")"], rows_d)
        lines += ["", "### Time to relative accuracy (fastest setting reaching it)", ""]
        lines += markdown_table(["dataset", "target"] + [f"{t} s (setting)" for t in tool_names]
                                + [f"linsvm/{p}" for p in peers], rows_t,
                                align=["l", "r"] + ["r"] * (len(tool_names) + len(peers)))
        lines.append("")

    lines += ["## P* (reference optimum)", ""]
    rows = []
    for pr in results:
        ref = pr.reference
        rows.append([pr.dataset, "L2" if pr.loss == LOSS_SQUARED_HINGE else "L1",
                     f"{pr.n_rows} x {pr.n_features}, nnz {pr.nnz}", f"{ref.primal:.10g}",
                     f"{ref.dual:.10g}", fmt_sci(ref.certified_gap),
                     (ref.source or "n/a")
                     + (" (cached)" if ref.cached else f" ({fmt_seconds(ref.seconds)} s)")])
    lines += markdown_table(["dataset", "loss", "size", "P*", "dual bound", "(P*-D)/D",
                             "lowest P from"], rows, align=["l", "l", "l", "r", "r", "r", "l"])
    lines += ["", "## All settings run", "",
              "Each tool's default and its sweep (loose to tight, stopped at the first setting "
              "reaching 1e-3); `runs` is the number of timed repeats.", ""]
    rows = []
    for pr in results:
        for t in tool_names:
            if t not in pr.runs:
                continue
            seen = set()
            for m in pr.runs[t].values():
                if id(m) in seen:
                    continue
                seen.add(id(m))
                rows.append([pr.dataset, "L2" if pr.loss == LOSS_SQUARED_HINGE else "L1", t,
                             m.setting.label, len(m.times), fmt_seconds(m.median_time),
                             fmt_sci(pr.reference.relative_accuracy(m.primal)),
                             "n/a" if m.n_iter is None else m.n_iter, "; ".join(m.notes)])
    lines += markdown_table(["dataset", "loss", "tool", "setting", "runs", "median s",
                             "rel acc", "iters", "notes"], rows,
                            align=["l", "l", "l", "l", "r", "r", "r", "r", "l"])
    for pr in results:
        for t, tool_notes in pr.sweep_notes.items():
            notes += [f"{pr.dataset} {'L2' if pr.loss == LOSS_SQUARED_HINGE else 'L1'} {t}: {n}"
                      for n in tool_notes]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return lines


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="small data and 2 repeats, for a smoke test (default datasets a9a, "
                        "w8a, reuters, 50k-row synthetic)")
    p.add_argument("--datasets", default=None,
                   help="comma-separated names among " + ", ".join(DEFAULT_DATASETS))
    p.add_argument("--repeats", type=int, default=None, help="timed runs per setting (5)")
    p.add_argument("--synthetic-rows", type=int, default=None,
                   help=f"training rows of the synthetic data ({DEFAULT_SYNTHETIC_ROWS})")
    p.add_argument("--max-run-seconds", type=float, default=None,
                   help="stop a tool's tolerance sweep after a run slower than this (120)")
    p.add_argument("--pstar-budget", type=float, default=None,
                   help="seconds for the tight linsvm run computing P* (300)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-train.md"))
    args = p.parse_args(argv)
    quick = args.quick
    if args.datasets is None:
        args.datasets = "a9a,w8a,reuters," + SYNTHETIC if quick else ",".join(DEFAULT_DATASETS)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    args.repeats = args.repeats or (2 if quick else 5)
    args.synthetic_rows = args.synthetic_rows or (50_000 if quick else DEFAULT_SYNTHETIC_ROWS)
    args.max_run_seconds = args.max_run_seconds or (10.0 if quick else 120.0)
    args.pstar_budget = args.pstar_budget or (30.0 if quick else 300.0)
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    warnings.simplefilter("ignore", category=UserWarning)
    cache = ReferenceCache(scratch_dir() / PSTAR_CACHE_NAME)
    tools, notes = available_tools()
    started = time.perf_counter()
    for tool in tools:
        t0 = time.perf_counter()
        tool.warm_up()
        if tool.name == "linsvm":
            notes.append(f"linsvm warm-up (tiny problem, both solvers; Numba cache loading) "
                         f"took {time.perf_counter() - t0:.2f} s before any timing")
    header = report_header("linsvm training benchmark", "harness", [
        f"repeats: {args.repeats} (median reported); sweep stops after a run over "
        f"{args.max_run_seconds:g} s",
        "tools: " + ", ".join(f"{t.name} {t.version()}" for t in tools)
        + " (Snap ML: n_jobs=1, regularizer = 1/C)",
    ])
    results: list[ProblemResult] = []
    for name in args.datasets:
        t0 = time.perf_counter()
        ds = load_dataset(name, synthetic_rows=args.synthetic_rows)
        if ds is None:
            notes.append(f"{name}: skipped, data file not found")
            print(f"{name}: skipped (missing)", file=sys.stderr)
            continue
        print(f"{ds.describe()} (loaded in {time.perf_counter() - t0:.1f} s)", file=sys.stderr,
              flush=True)
        if ds.note:
            notes.append(f"{name}: {ds.note}")
        if name == SYNTHETIC or ds.X.nnz > 5_000_000:
            notes.append(f"{name}: Snap ML's per-fit input conversion (float32/uint32/uint64 "
                         f"copies of the CSR arrays) alone takes about "
                         f"{fmt_seconds(snap_conversion_seconds(ds))} s")
        results += bench_dataset(ds, dataset_key(name, args.synthetic_rows), tools, cache, args)
        del ds
        gc.collect()
    notes.append(f"total harness time {time.perf_counter() - started:.0f} s")
    lines = report(results, [t.name for t in tools], header, notes)
    write_report(lines, args.out)


def snap_conversion_seconds(ds: Dataset) -> float:
    """What Snap ML's fit spends copying the input to its dtypes (part of its measured time)."""
    t0 = time.perf_counter()
    a = ds.X.data.astype(np.float32)
    b = ds.X.indices.astype(np.uint32)
    c = ds.X.indptr.astype(np.uint64)
    seconds = time.perf_counter() - t0
    del a, b, c
    return seconds


if __name__ == "__main__":
    main()
