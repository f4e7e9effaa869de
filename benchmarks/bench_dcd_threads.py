"""Threads within one DCD solve (-s 1, -s 3): how fast does linsvm's threaded solver reach a
relative primal accuracy of 1e-2 and 1e-3, against linsvm on one thread, Snap ML and multi-core
LIBLINEAR at the same thread count?

Run from the repository root, on an otherwise idle machine (multi-core LIBLINEAR needs
``bash scripts/bench_multicore_env.sh`` once; without it its column says "not installed")::

    python -m benchmarks.bench_dcd_threads [--quick] [--threads 1,2]
        [--datasets pypi-recent,reuters,synthetic-text] [--repeats 5]
        [--synthetic-rows 3000000] [--no-peers] [--gpu] [--no-simulator]
        [--max-minutes M] [--out benchmarks/RESULTS-dcd-threads.md]
    python -m benchmarks.bench_dcd_threads --big-machine    # a 16-core machine, about 5 minutes

The problem: C = 1, no bias, the L2-loss SVM (``-s 1``) and the L1-loss SVM (``-s 3``).

**Time to accuracy (real threads).** For each thread count T of ``--threads``: linsvm
(``linsvm.train(..., n_jobs=T)``: T threads within the one binary sub-problem, where the data
has at least 2 * ``linsvm.solvers._dual_threads.THREAD_MIN_NNZ`` non-zeros and, beyond two
threads, T * ``MANY_THREADS_MIN_NNZ`` (T * ``THREAD_MIN_NNZ`` for the rounds), fewer
otherwise: the report gives the threads used; its default scheme ("auto": the replicas at 2
threads, the shared w's async scheme above), measured against one thread as the solve goes,
and each scheme named in ``--schemes`` (default ``auto,async,rounds``) as a column of its
own), Snap ML (``SupportVectorMachine(n_jobs=T, fit_intercept=False, regularizer=1/C)``;
with ``--gpu`` also on the GPU) and multi-core LIBLINEAR (``-m T``, in its own venv, driven by
``benchmarks/multicore_worker.py``). linsvm on one thread is measured
whatever ``--threads`` says: it is the speed-up's reference. Timing is ``benchmarks/harness.py``'s
tolerance sweep: each tool's tolerance from loose to tight (linsvm's and multi-core LIBLINEAR's
eps 10, 3, then the harness's 1 ... 1e-4; Snap ML's tol 0.1 ... 1e-6), one probe a setting up
to the first reaching 1e-3, then ``--repeats`` runs of the settings reaching a target within
1.5x of the fastest probe; the time to a target is the smallest median among them, and its
epochs the outer iterations of that setting's run (the run stopped by its tolerance, so at or
after the epoch that first reached the target: the simulator counts that one). No run at the
default tolerance: the report gives only times to the targets. A run is the training call
alone on the CSR matrix in memory (LIBLINEAR's ``problem`` built beforehand; Snap ML's input
conversion inside ``fit`` counted; linsvm's ``train`` including its final primal/dual
values); every ``w`` is scored afterwards, outside the clock, by
``linsvm.objective.primal_value`` against P*. P* is the lowest primal value of the session,
first from a tight linsvm run (the most threads, warm-started through shrinking tolerances
until the duality gap certifies 1e-6), cached in the scratch folder's ``pstar.json`` with the
harness's (the same problems). For linsvm's threaded runs the report also gives the duality
gap (>= 0), max |w - sum_i y_i alpha_i x_i| / max |w| (the sum computed afresh) and the rounds
that the line search shortened.

**Epochs by simulated threads.** ``linsvm.solvers.dcd_threads.simulate`` runs the T-thread
arithmetic on one thread, bit for bit: a hook scores every epoch's w (``objectives()``) until
1e-3 is reached, giving the epochs to 1e-2 and 1e-3 at 1 (plain ``linsvm.train``), 2, 4, 16, 32
and 64 threads, the fraction of shortened rounds, and whether the epochs to 1e-2 at 16 threads
stay within 2.5x the serial epochs. Fewer synthetic rows than the timed part by default
(``--simulator-rows``): a simulated epoch costs a serial one, and each is scored.

``--max-minutes`` bounds the whole run: each (dataset, loss) gets an equal share of what is
left, each tool an equal share of its problem's (unused time passes on), a run is not started
when the setting's last run (or twice the tool's slowest so far) would not end in its share,
and multi-core LIBLINEAR's fits are ended at it; what was skipped is named in the report.
``--big-machine``: threads 1,4,8,16, pypi-recent and 3M-row synthetic-text, 3 repeats, the
default scheme (async there), the replicas and Snap ML (no rounds, no multi-core LIBLINEAR),
no simulator, 5 minutes.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_from_dual

from .bench_multicore import MulticoreTool, MulticoreWorker, multicore_python, multicore_version
from .bench_reader import lscpu_head, two_thread_capacity
from .common import (
    BENCH_DIR,
    SYNTHETIC,
    Dataset,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    report_header,
    scratch_dir,
    write_report,
)
from .harness import (
    LOSSES,
    PSTAR_CACHE_NAME,
    PSTAR_GAP_TARGET,
    TARGETS,
    Measurement,
    Reference,
    ReferenceCache,
    ToolBench,
    best_for_target,
    compute_reference,
    dataset_key,
)
from .peers import (
    LIBLINEAR_SOLVER,
    LINSVM_SWEEP_MAX_ITER,
    LOSS_NAMES,
    FitResult,
    LinsvmTool,
    Setting,
    SnapMLTool,
    Tool,
)

DATASETS = ("pypi-recent", "reuters", SYNTHETIC)
DEFAULT_THREADS = "1,2"
DEFAULT_SYNTHETIC_ROWS = 3_000_000
QUICK_DATASETS = ("reuters", SYNTHETIC)
QUICK_SYNTHETIC_ROWS = 20_000
# The simulator scores every epoch at the cost of a serial one: a third of the synthetic rows
# keeps its part of a 2-core run to minutes.
DEFAULT_SIMULATOR_ROWS = 1_000_000
SIMULATOR_DATASETS = ("pypi-recent", SYNTHETIC)
# the deterministic rounds (their bits are the real threads'), then the async scheme's
# lockstep schedule (its delays at their bound: a real run's are at most these)
SIMULATOR_SCHEMES = ("rounds", "async")
SIMULATOR_THREADS = "2,4,16,32,64"
# eps never met before 1e-3 (the hook stops the run there), and a cap on the epochs
SIMULATOR_EPS = 1e-6
SIMULATOR_MAX_EPOCHS = 500
# the simulator's target: epochs to 1e-2 at 16 threads within this factor of the serial ones
EPOCH_TARGET_THREADS = 16
EPOCH_TARGET_RATIO = 2.5
BIG_MACHINE = {"threads": "1,4,8,16", "datasets": f"pypi-recent,{SYNTHETIC}", "repeats": 3,
               "synthetic_rows": DEFAULT_SYNTHETIC_ROWS, "max_minutes": 5.0,
               "max_run_seconds": 30.0, "schemes": "auto,replicas", "multicore": False}
# share of a --max-minutes budget kept for the simulator when it runs
SIMULATOR_SHARE = 0.3
# seconds kept at the end of a budget for the last capacity check and the report
RESERVE_SECONDS = 5.0
# a relative certified gap of P* above this is flagged: it blurs the 1e-3 target
PSTAR_GAP_WARN = 1e-4
BIAS = -1.0
# Tolerances looser than the harness's grid, probed first by linsvm and multi-core LIBLINEAR:
# on 200k synthetic rows eps = 1 takes -s 1 to 5e-4 in 8 epochs where eps = 3 reaches 2e-3
# in 6, so without them the time to 1e-2 is overstated (Snap ML's tol = 0.1 stops at 4).
LOOSE_EPS = (10.0, 3.0)

LOSS_SHORT = {LOSS_SQUARED_HINGE: "-s 1", LOSS_HINGE: "-s 3"}
LINSVM, SNAP, SNAP_GPU, MC = "linsvm", "Snap ML", "Snap ML GPU", "multi-core LIBLINEAR"
# linsvm's schemes named by --schemes (``thread_scheme=...``), a column each; LINSVM is the
# default ("auto": the replicas at 2 threads, the async scheme above, measured against one
# thread as it goes)
SCHEMES = ("async", "replicas", "rounds")
SCHEME_FAMILY = {scheme: f"linsvm {scheme}" for scheme in SCHEMES}
ROUNDS = SCHEME_FAMILY["rounds"]
DEFAULT_SCHEMES = "auto,async,rounds"


def tool_name(family: str, threads: int | None) -> str:
    if family == LINSVM:
        return f"linsvm {threads}t"
    if family in SCHEME_FAMILY.values():
        return f"linsvm {threads}t {family.split()[-1]}"
    if family == SNAP:
        return f"Snap ML {threads}t"
    if family == MC:
        return f"MC -m {threads}"
    return family


# ---- the tools ---------------------------------------------------------------------------------

@dataclass
class LinsvmCheck:
    """What linsvm's runs of one loss reported, over every timed run."""

    runs: int = 0
    min_gap: float = np.inf
    max_w_error: float = 0.0  # max |w - w(alpha)| / max |w|; threaded runs only
    threads_used: set[int] = field(default_factory=set)
    threads_chosen: set[int] = field(default_factory=set)  # async: the counts measured fastest
    schemes: set[str] = field(default_factory=set)  # the schemes the threaded solves ran
    hot_features: set[int] = field(default_factory=set)
    chunk_rows: set[int] = field(default_factory=set)
    rounds: int = 0
    shortened: int = 0
    epochs: int = 0  # async: outer iterations run, of them on the threads, undone
    epochs_on_threads: int = 0
    speedups: list[float] = field(default_factory=list)  # async: measured in each solve
    undone: int = 0
    handed_over: int = 0  # runs the guard handed to one thread
    fewer: int = 0  # runs the guard left on fewer threads than they began with
    solvers: set[int] = field(default_factory=set)  # the solver that produced w (fallback: 2)


class LinsvmThreads(LinsvmTool):
    """``linsvm.train(..., n_jobs=T)``; with ``thread_min_nnz`` (smoke runs on tiny data) the
    solver itself with that threshold instead, so that tiny data gets its T threads."""

    def __init__(self, n_jobs: int, thread_min_nnz: int | None = None,
                 scheme: str = "auto") -> None:
        self.n_jobs = n_jobs
        self.scheme = scheme
        self.name = tool_name(SCHEME_FAMILY.get(scheme, LINSVM), n_jobs)
        self.train_options = {"n_jobs": n_jobs, "bias": BIAS, "thread_scheme": scheme}
        self.thread_min_nnz = thread_min_nnz
        self.checks: dict[int, LinsvmCheck] = {}

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"eps={eps:g}", (("eps", eps), ("max_iter", LINSVM_SWEEP_MAX_ITER)))
                for eps in LOOSE_EPS] + super().sweep(loss)

    def warm_up(self) -> None:
        """The serial kernels through ``train``, then the threaded ones on data made large
        enough for them (compiled or loaded from Numba's cache before any timing)."""
        super().warm_up()
        if self.n_jobs > 1:
            from linsvm.datasets import make_text_classification
            from linsvm.solvers import SOLVERS, Subproblem

            X, y = make_text_classification(5_000, random_state=3)
            y = np.where(y == y[0], 1.0, -1.0)
            for loss in LOSSES:
                sub = Subproblem(X, y, np.ones(X.shape[0]), eps=1.0, max_iter=5, bias=BIAS,
                                 n_threads=self.n_jobs,
                                 options={"thread_min_nnz": 1, "thread_scheme": self.scheme})
                SOLVERS[LIBLINEAR_SOLVER[loss]].solve(sub)
        self.checks.clear()

    def fit(self, loss: int, setting: Setting) -> FitResult:
        if self.thread_min_nnz is None:
            return super().fit(loss, setting)
        from linsvm.solvers import DUAL_SOLVER_MAX_ITER, SOLVERS, Subproblem

        solver = LIBLINEAR_SOLVER[loss]
        max_iter = int(setting.get("max_iter", DUAL_SOLVER_MAX_ITER))
        sub = Subproblem(self.X, self.y, np.ones(self.X.shape[0]), eps=setting.get("eps", 0.1),
                         max_iter=max_iter, bias=BIAS, n_threads=self.n_jobs, seed=self.seed,
                         options={"thread_min_nnz": self.thread_min_nnz,
                                  "thread_scheme": self.scheme})
        t0 = time.perf_counter()
        sol = SOLVERS[solver].solve(sub)
        seconds = time.perf_counter() - t0
        self.record(loss, sol, self.y)
        notes = [] if sol.converged else [f"hit max_iter={max_iter}"]
        return FitResult(seconds, sol.w.copy(), sol.n_iter, sol.converged, notes)

    def weights(self, loss: int, setting: Setting, model, sign: float) -> np.ndarray:
        self.record(loss, model.results_[0], sign * self.y)
        return sign * model.coef_[0]

    def record(self, loss: int, result, y_sub: np.ndarray) -> None:
        """Untimed: the gap, the threads' figures, and w against sum_i y_i alpha_i x_i."""
        c = self.checks.setdefault(loss, LinsvmCheck())
        c.runs += 1
        c.solvers.add(int(result.solver))
        if np.isfinite(result.gap):
            c.min_gap = min(c.min_gap, float(result.gap))
        fig = result.figures
        c.threads_used.add(int(fig.get("n_threads", 1)))
        if "thread_scheme" in fig:
            c.schemes.add(str(fig["thread_scheme"]))
        if "rounds" in fig:
            c.rounds += int(fig["rounds"])
            c.shortened += int(fig["shortened_rounds"])
        if "hot_features" in fig:
            c.hot_features.add(int(fig["hot_features"]))
            c.chunk_rows.add(int(fig["chunk_rows"]))
        if "threads_chosen" in fig:
            c.threads_chosen.add(int(fig["threads_chosen"]))
        if "epochs_on_threads" in fig:
            c.epochs += int(result.n_iter)
            c.epochs_on_threads += int(fig["epochs_on_threads"])
            c.undone += int(fig.get("undone_epochs", 0))
            if np.isfinite(fig.get("thread_speedup", np.nan)):
                c.speedups.append(float(fig["thread_speedup"]))
            c.handed_over += int(bool(fig.get("handed_to_one_thread")))
            c.fewer += int(fig.get("threads_allowed", 1) < fig.get("n_threads", 1)
                           and not fig.get("handed_to_one_thread"))  # fmt: skip
        if self.n_jobs > 1 and result.alpha is not None and result.solver == LIBLINEAR_SOLVER[loss]:
            X = self.X
            w_alpha = primal_from_dual(X.indptr, X.indices, X.data, BIAS,
                                       np.ascontiguousarray(y_sub, dtype=np.float64),
                                       np.ascontiguousarray(result.alpha, dtype=np.float64),
                                       X.shape[1])
            scale = np.max(np.abs(result.w))
            if scale > 0:
                error = float(np.max(np.abs(result.w - w_alpha)) / scale)
                c.max_w_error = max(c.max_w_error, error)


class MulticoreThreads(MulticoreTool):
    """multi-core LIBLINEAR ``-m T`` without bias, its sweep starting at ``LOOSE_EPS``."""

    def __init__(self, threads: int, version: str) -> None:
        super().__init__(threads, version, name=tool_name(MC, threads), bias=BIAS)

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"-e {eps:g}", (("eps", eps),)) for eps in LOOSE_EPS] + super().sweep(loss)


@dataclass
class Lineup:
    """The tools in the order they run (most wanted first: a budget cuts the last), and why a
    family has no tools ("not installed", ...)."""

    tools: list[Tool]
    absent: dict[str, str]
    families: list[str]  # the table's columns


def make_lineup(threads: list[int], peers: bool, gpu: bool, thread_min_nnz: int | None,
                schemes: list[str], multicore: bool = True) -> tuple[Lineup, list[str]]:
    notes: list[str] = []
    absent: dict[str, str] = {}
    families = [LINSVM] + [SCHEME_FAMILY[x] for x in SCHEMES if x in schemes]
    snap_ok = mc_version = None
    if peers:
        families += [SNAP] + ([MC] if multicore else [])
        try:
            import snapml  # noqa: F401

            snap_ok = True
        except ImportError as exc:
            absent[SNAP] = "not installed"
            notes.append(f"Snap ML not installed ({exc}): pip install snapml (the bench extra)")
        mc_version = multicore_version() if multicore else None
        if multicore and mc_version is None:
            absent[MC] = "not installed"
            notes.append(f"multi-core LIBLINEAR not installed: no liblinear-multicore at "
                         f"{multicore_python()} (bash scripts/bench_multicore_env.sh)")
        if gpu:
            families.append(SNAP_GPU)
            if not snap_ok:
                absent[SNAP_GPU] = "not installed"

    def group(T: int) -> list[Tool]:
        out: list[Tool] = [LinsvmThreads(T, thread_min_nnz)]
        out += [LinsvmThreads(T, thread_min_nnz, scheme=x)
                for x in SCHEMES if x in schemes and T > 1]
        if snap_ok:
            out.append(SnapMLTool(n_jobs=T, name=tool_name(SNAP, T)))
        if mc_version:
            out.append(MulticoreThreads(T, mc_version))
        return out

    # the most threads first, then linsvm's one-thread reference (and the GPU), then the
    # other thread counts; the peers on one thread last
    tools: list[Tool] = []
    many = sorted((T for T in threads if T > 1), reverse=True)
    for i, T in enumerate(many):
        tools += group(T)
        if i == 0:
            tools.append(LinsvmThreads(1, thread_min_nnz))
            if gpu and snap_ok:
                tools.append(SnapMLTool(use_gpu=True, name=SNAP_GPU))
    if not many:
        tools.append(LinsvmThreads(1, thread_min_nnz))
    if 1 in threads:
        tools += group(1)[1:]
    return Lineup(tools, absent, families), notes


# ---- time budget -------------------------------------------------------------------------------

class Budget:
    """A wall-clock end (``time.perf_counter``), infinitely far without ``--max-minutes``."""

    def __init__(self, minutes: float | None) -> None:
        self.start = time.perf_counter()
        self.end = np.inf if minutes is None else self.start + 60.0 * minutes - RESERVE_SECONDS

    @property
    def limited(self) -> bool:
        return bool(np.isfinite(self.end))

    def share(self, parts: int, end: float | None = None) -> float:
        """The end of an equal share among ``parts`` of what is left before ``end``."""
        now = time.perf_counter()
        end = self.end if end is None else end
        return now + max(end - now, 0.0) / max(parts, 1)


class OutOfTime(Exception):
    """A setting's first run would not end within its share of the budget."""


class BudgetedBench(ToolBench):
    """The harness's sweep, starting no run that would not end by ``deadline``."""

    def __init__(self, tool: Tool, ds: Dataset, loss: int, ref: Reference, repeats: int,
                 max_run_seconds: float, deadline: float, kill_seconds: float) -> None:
        super().__init__(tool, ds, loss, ref, repeats, max_run_seconds)
        self.deadline = deadline
        self.kill_seconds = kill_seconds
        self.cut = False  # the budget stopped the sweep before the tightest target

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def expected(self, setting: Setting) -> float:
        """The setting's last run; for a new one (tighter than those run) twice the slowest
        so far; 0 for the tool's first run."""
        m = self.runs.get(setting.label)
        if m is not None and m.times:
            return m.times[-1]
        done = [t for m in self.runs.values() for t in m.times]
        return 2.0 * max(done) if done else 0.0

    def run(self, setting: Setting, n_runs: int) -> Measurement:
        m = self.runs.get(setting.label)
        have = len(m.times) if m is not None else 0
        while have < n_runs:
            left = self.deadline - time.perf_counter()
            if left <= 0 or self.expected(setting) > left:
                if have == 0:
                    raise OutOfTime(setting.label)
                self.note(f"{setting.label}: {have} of {n_runs} runs (time budget)")
                break
            if isinstance(self.tool, MulticoreTool):
                self.tool.limit = max(1.0, min(self.kill_seconds, left))
            m = super().run(setting, have + 1)
            have += 1
        return m

    def sweep(self, default: Measurement | None = None) -> None:
        """The harness's sweep (on past a setting whose probe reached the tightest target but
        a repeat did not), without a run at the default tolerance first: the report gives only
        the times to the targets."""
        try:
            super().sweep(default)
        except OutOfTime as exc:
            self.cut = True
            if self.runs:
                self.note(f"sweep stopped before {exc}: time budget")
            self.repeat_best()


# ---- time to accuracy --------------------------------------------------------------------------

@dataclass
class Problem:
    """Everything measured on one (dataset, loss)."""

    dataset: str
    key: str  # the P* cache's
    loss: int
    shape: str
    ref: Reference
    runs: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # tool -> label -> m
    cut: set[str] = field(default_factory=set)  # tools whose sweep the budget stopped
    # linsvm tool -> (threads asked, its check)
    checks: dict[str, tuple[int, LinsvmCheck]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def reference(ds: Dataset, key: str, loss: int, cache: ReferenceCache, budget_s: float,
              n_threads: int, notes: list[str]) -> Reference:
    """P* for (dataset, loss): the cache's unless it is uncertain and more time is allowed."""
    ref = cache.get(key, loss)
    if ref is not None and (ref.certified_gap <= PSTAR_GAP_TARGET or ref.budget >= budget_s):
        return ref
    t0 = time.perf_counter()
    print(f"  computing P* ({LOSS_NAMES[loss]}, {n_threads} threads, up to {budget_s:.0f} s) ...",
          file=sys.stderr, flush=True)
    # short chunks: the budget is checked between them
    fresh = compute_reference(ds, loss, budget_s, use_liblinear=False, n_threads=n_threads,
                              chunk_iter=20)
    if ref is not None:  # keep the better bounds of both
        fresh.offer(ref.primal, ref.dual, ref.source)
    print(f"  P* = {fresh.primal:.10g}, certified gap {fresh.certified_gap:.1e} "
          f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    if fresh.certified_gap > PSTAR_GAP_WARN:
        notes.append(f"{LOSS_SHORT[loss]}: P* certified only to {fresh.certified_gap:.1e} "
                     f"(budget {budget_s:.0f} s): accuracies near 1e-3 are uncertain")
    cache.put(key, loss, fresh)
    return fresh


def bench_dataset(ds: Dataset, key: str, lineup: Lineup, cache: ReferenceCache, args,
                  budget: Budget, timed_end: float, problems_left: int) -> list[Problem]:
    problems: list[Problem] = []
    scored = Dataset(ds.name, ds.X, ds.y)  # no test split: only P(w) is reported
    shape = f"{ds.X.shape[0]:,} x {ds.X.shape[1]:,}, nnz {ds.X.nnz:,}"
    tools = list(lineup.tools)
    dataset_notes: list[str] = []
    worker = None
    multicore = [t for t in tools if isinstance(t, MulticoreTool)]
    if multicore:
        t0 = time.perf_counter()
        try:
            worker = MulticoreWorker(multicore_python(), ds.X, ds.y, key, bias=BIAS)
        except (OSError, RuntimeError) as exc:
            dataset_notes.append(f"multi-core LIBLINEAR worker failed to start: {exc}")
            tools = [t for t in tools if not isinstance(t, MulticoreTool)]
        else:
            for t in multicore:
                t.worker = worker
            print(f"  multi-core LIBLINEAR worker ready ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    for tool in tools:
        tool.prepare(ds.X, ds.y)
    try:
        for i, loss in enumerate(LOSSES):
            problem_end = budget.share(problems_left - i, timed_end)
            notes: list[str] = list(dataset_notes) if i == 0 else []
            pstar_budget = args.pstar_budget
            if budget.limited:
                pstar_budget = min(pstar_budget,
                                   max(5.0, 0.3 * (problem_end - time.perf_counter())))
            ref = reference(scored, key, loss, cache, pstar_budget, max(args.threads), notes)
            pr = Problem(ds.name, key, loss, shape, ref, notes=notes)
            for j, tool in enumerate(tools):
                tool_end = budget.share(len(tools) - j, problem_end)
                print(f"  {tool.name} {LOSS_NAMES[loss]} ...", file=sys.stderr, flush=True)
                bench = BudgetedBench(tool, scored, loss, ref, args.repeats,
                                      args.max_run_seconds, tool_end, args.kill_seconds)
                bench.sweep()
                if not bench.runs:
                    pr.notes.append(f"{LOSS_SHORT[loss]} {tool.name}: not run (time budget)")
                    continue
                pr.runs[tool.name] = bench.runs
                if bench.cut:
                    pr.cut.add(tool.name)
                if bench.notes:
                    pr.notes.append(f"{LOSS_SHORT[loss]} {tool.name}: " + "; ".join(bench.notes))
                if isinstance(tool, LinsvmThreads) and loss in tool.checks:
                    pr.checks[tool.name] = (tool.n_jobs, tool.checks.pop(loss))
            cache.put(key, loss, ref)  # lowered by any run of the session
            problems.append(pr)
    finally:
        for tool in tools:
            tool.release()
        if worker is not None:
            worker.close()
            if worker.restarts and problems:
                problems[-1].notes.append(
                    f"multi-core LIBLINEAR: {worker.restarts} fit(s) ended at their time limit")
    return problems


# ---- epochs by simulated threads ---------------------------------------------------------------

class EpochScorer:
    """A hook scoring every epoch (P and D at the iterate; untimed) until the tightest target
    is reached or ``deadline`` passes."""

    every_iteration = True

    def __init__(self, solver: int, ref: Reference, deadline: float, source: str) -> None:
        self.solver = solver
        self.ref = ref
        self.deadline = deadline
        self.source = source
        self.primals: list[float] = []
        self.out_of_time = False

    def __call__(self, progress) -> bool:
        if progress.solver != self.solver:  # -s 1's fallback to -s 2 at the cap: not epochs
            return False
        primal, dual = progress.objectives()
        self.ref.offer(primal, dual, self.source)
        self.primals.append(float(primal))
        if self.ref.relative_accuracy(primal) <= min(TARGETS):
            return False
        if time.perf_counter() > self.deadline:
            self.out_of_time = True
            return False
        return True


@dataclass
class EpochTrace:
    threads: int  # 1: plain linsvm.train
    scheme: str  # "rounds" or "async" ("serial" for plain linsvm.train)
    primals: list[float]
    rounds: int | None
    shortened: int | None
    hot_features: int | None
    chunk_rows: int | None
    seconds: float
    out_of_time: bool

    def epochs_to(self, ref: Reference, target: float) -> int | None:
        for epoch, primal in enumerate(self.primals, start=1):
            if ref.relative_accuracy(primal) <= target:
                return epoch
        return None


def trace_epochs(ds: Dataset, loss: int, threads: int, ref: Reference,
                 deadline: float, scheme: str = "rounds") -> EpochTrace:
    import linsvm
    from linsvm.solvers.dcd_threads import simulate

    solver = LIBLINEAR_SOLVER[loss]
    scorer = EpochScorer(solver, ref, deadline, f"epoch trace, {threads} thread(s)")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # interrupted by the hook
        if threads == 1:
            model = linsvm.train(ds.X, ds.y, solver=solver, C=1.0, bias=BIAS, eps=SIMULATOR_EPS,
                                 max_iter=SIMULATOR_MAX_EPOCHS, hook=scorer, n_jobs=1)
            fig = model.results_[0].figures
        else:
            fig = simulate(ds.X, ds.y, threads, solver=solver, C=1.0, bias=BIAS,
                           eps=SIMULATOR_EPS, max_iter=SIMULATOR_MAX_EPOCHS, hook=scorer,
                           scheme=scheme).figures
    return EpochTrace(threads, "serial" if threads == 1 else scheme, scorer.primals,
                      fig.get("rounds"), fig.get("shortened_rounds"),
                      fig.get("hot_features"), fig.get("chunk_rows"),
                      time.perf_counter() - t0, scorer.out_of_time)


@dataclass
class SimulatedSet:
    dataset: str
    key: str  # the P* cache's
    shape: str
    refs: dict[int, Reference] = field(default_factory=dict)
    traces: dict[int, list[EpochTrace]] = field(default_factory=dict)  # loss -> by threads
    notes: list[str] = field(default_factory=list)


def simulate_dataset(ds: Dataset, key: str, thread_counts: list[int], cache: ReferenceCache,
                     args, budget: Budget, sets_left: int) -> SimulatedSet:
    """The serial run and each simulated thread count, both losses. With a budget, a run is
    started only if the last one's time fits its share, and may go on to the end of its
    loss's share (a trace cut short answers nothing)."""
    res = SimulatedSet(ds.name, key, f"{ds.X.shape[0]:,} x {ds.X.shape[1]:,}, nnz {ds.X.nnz:,}")
    runs = [(1, "serial")] + [(T, scheme) for scheme in SIMULATOR_SCHEMES
                              for T in thread_counts if T > 1]
    set_end = budget.share(sets_left)
    for i, loss in enumerate(LOSSES):
        loss_end = budget.share(len(LOSSES) - i, set_end)
        pstar_budget = args.pstar_budget
        if budget.limited:
            pstar_budget = min(pstar_budget, max(5.0, 0.3 * (loss_end - time.perf_counter())))
        ref = reference(ds, key, loss, cache, pstar_budget, max(args.threads), res.notes)
        res.refs[loss] = ref
        res.traces[loss] = []
        last = 0.0
        for j, (T, scheme) in enumerate(runs):
            run_end = budget.share(len(runs) - j, loss_end)
            if time.perf_counter() + last > run_end:
                left = ", ".join(f"{T} {scheme}" for T, scheme in runs[j:])
                res.notes.append(f"{LOSS_SHORT[loss]}: {left} not run (time budget)")
                break
            print(f"  simulated {T} thread(s) {scheme}, {LOSS_NAMES[loss]} ...",
                  file=sys.stderr, flush=True)
            trace = trace_epochs(ds, loss, T, ref, loss_end, scheme)
            last = trace.seconds
            if trace.out_of_time:
                res.notes.append(f"{LOSS_SHORT[loss]}, {T} thread(s): stopped after "
                                 f"{len(trace.primals)} epochs (time budget)")
            res.traces[loss].append(trace)
        cache.put(key, loss, ref)
    return res


# ---- report ------------------------------------------------------------------------------------

def _label(m: Measurement) -> str:
    return m.setting.label.split(" (")[0]


def _cell(m: Measurement | None, status: str | None) -> str:
    if status:
        return status
    if m is None:
        return "not reached"
    runs = "" if len(m.times) > 1 else ", 1 run"
    epochs = "?" if m.n_iter is None else m.n_iter
    return f"{fmt_seconds(m.median_time)} ({epochs}; {_label(m)}{runs})"


def _best(pr: Problem, lineup: Lineup, family: str, T: int | None,
          target: float) -> tuple[Measurement | None, str | None]:
    """(fastest run reaching the target or None, why there are no runs or None)."""
    if family in lineup.absent:
        return None, lineup.absent[family]
    name = tool_name(family, T)
    runs = pr.runs.get(name)
    if runs is None:
        return None, "not run"
    best = best_for_target(runs, pr.ref, target)
    if best is None and name in pr.cut:
        return None, "not reached (sweep cut: time budget)"
    return best, None


PEER_SHORT = {**{SCHEME_FAMILY[x]: x for x in SCHEMES}, SNAP: "Snap ML", MC: "MC"}


def _threads_used(c: LinsvmCheck) -> str:
    """The threads a tool's solves ran: those asked for, for the async schemes the counts
    measured fastest when they differ, and the share of outer iterations on more than one
    (the rest on one thread: measured faster, or handed over)."""
    used = ", ".join(map(str, sorted(c.threads_used)))
    if c.threads_chosen and c.threads_chosen != c.threads_used:
        used += f" (fastest: {', '.join(map(str, sorted(c.threads_chosen)))})"
    if c.epochs:
        used += f" ({c.epochs_on_threads} of {c.epochs} epochs)"
    return used


def time_tables(problems: list[Problem], lineup: Lineup, threads: list[int]) -> list[str]:
    lines: list[str] = []
    peers = [f for f in lineup.families if f in PEER_SHORT]
    for pr in problems:
        ref = pr.ref
        lines += [f"### {pr.dataset} ({pr.shape}), {LOSS_NAMES[pr.loss]}", "",
                  f"P* = {ref.primal:.10g} (certified to {fmt_sci(ref.certified_gap)})", ""]

        rows = []
        for target in TARGETS:
            base, _ = _best(pr, lineup, LINSVM, 1, target)
            for T in threads:
                lin, lin_status = _best(pr, lineup, LINSVM, T, target)
                used = pr.checks.get(tool_name(LINSVM, T))
                used = _threads_used(used[1]) if used else "n/a"
                row = [f"{target:g}", str(T), _cell(lin, lin_status), used]
                found = {}
                for family in peers:
                    found[family], status = _best(pr, lineup, family, T, target)
                    row.append(_cell(found[family], status))
                lin_t = lin.median_time if lin else None
                row.append(fmt_ratio(base.median_time if base else None, lin_t)
                           if T > 1 else "1")
                row += [fmt_ratio(lin_t, found[f].median_time if found[f] else None)
                        for f in peers]
                rows.append(row)
            if SNAP_GPU in lineup.families:
                top = max(threads)
                lin, _ = _best(pr, lineup, LINSVM, top, target)
                gpu, status = _best(pr, lineup, SNAP_GPU, None, target)
                rows.append([f"{target:g}", "GPU", f"(ratio: linsvm {top}t)", "",
                             _cell(gpu, status)] + [""] * (len(peers) - 1) + [""]
                            + [fmt_ratio(lin.median_time if lin else None,
                                         gpu.median_time if gpu else None)]
                            + [""] * (len(peers) - 1))
        header = (["target", "threads", "linsvm s (epochs; setting)", "threads used"]
                  + [f"{f} s (epochs; setting)" for f in peers]
                  + ["speed-up: linsvm 1t / linsvm Tt"]
                  + [f"linsvm / {PEER_SHORT[f]}" for f in peers])
        lines += markdown_table(header, rows, align=["r"] * len(header))
        lines.append("")
    return lines


def checks_table(problems: list[Problem]) -> list[str]:
    rows = []
    for pr in problems:
        for name, (T, c) in sorted(pr.checks.items(), key=lambda item: (item[1][0], item[0])):
            if T == 1 or not c.runs:
                continue
            shortened = (f"{c.shortened:,} of {c.rounds:,} ({100 * c.shortened / c.rounds:.1f}%)"
                         if c.rounds else "n/a")
            undone = (f"{c.undone} undone, {c.handed_over} runs handed to one thread"
                      + (f", {c.fewer} left on fewer threads" if c.fewer else "")
                      if c.epochs else "n/a")
            measured = (f"{np.median(c.speedups):.2f} ({min(c.speedups):.2f}-"
                        f"{max(c.speedups):.2f})" if c.speedups else "n/a")
            gap = f"{c.min_gap:.3g}" + ("" if c.min_gap >= 0 else " **negative**")
            rows.append([pr.dataset, LOSS_SHORT[pr.loss], name, _threads_used(c),
                         ", ".join(sorted(c.schemes)) or "n/a",
                         ", ".join(map(str, sorted(c.hot_features))) or "n/a",
                         ", ".join(map(str, sorted(c.chunk_rows))) or "n/a",
                         shortened, undone, measured, str(c.runs), gap, fmt_sci(c.max_w_error),
                         ", ".join(f"-s {s}" for s in sorted(c.solvers))])
    if not rows:
        return []
    lines = ["### linsvm's threaded runs", "",
             "Over every timed run of each tool (all settings): the threads the solve asked "
             "for and its scheme (async, replicas: the thread counts their ladders measured "
             "fastest where they differ, and on how many outer iterations more than one thread "
             "ran; the others ran on one thread, measured faster there or handed over by the "
             "guard), its hot features and rows a "
             "thread's chunk, the rounds the line search shortened (rounds), the outer "
             "iterations the guard undid (async), the speed-up a visited row of the count chosen "
             "over one thread at the solve's last ladder (median, range), the smallest duality gap "
             "P(w) - D(alpha) "
             "reported (must be >= 0), and the largest max|w - sum_i y_i alpha_i x_i| / max|w| "
             "(w as returned, the sum computed afresh by `linsvm.objective.primal_from_dual`).",
             ""]
    lines += markdown_table(["dataset", "loss", "tool", "threads used", "scheme", "hot features",
                             "chunk rows", "shortened rounds", "guard",
                             "threads' speed-up a row", "runs", "min gap", "max w error",
                             "solver that gave w"], rows,
                            align=["l", "l", "l", "r", "l"] + ["r"] * 8 + ["l"])
    lines.append("")
    return lines


def simulator_section(sims: list[SimulatedSet], args) -> list[str]:
    lines = ["## Epochs by simulated threads", "",
             "`linsvm.solvers.dcd_threads.simulate`: T threads' arithmetic run on one thread; "
             "threads 1 is plain `linsvm.train`. rounds: the real threads' bits; async: the "
             "lockstep schedule, every read missing the other threads' rows in flight and the "
             "hot weights flushed every 256/T rows of each (the delays at their bound). eps "
             f"{SIMULATOR_EPS:g} (never met first), every epoch's P(w) scored by a hook until "
             f"1e-3 is reached (at most {SIMULATOR_MAX_EPOCHS} epochs). `x serial`: epochs / "
             "the serial epochs; `shortened`: rounds whose step the line search shortened, "
             "of all rounds run.", ""]
    if SYNTHETIC in args.simulator_datasets and args.simulator_rows != args.synthetic_rows:
        lines += [f"synthetic-text here has {args.simulator_rows:,} training rows (the timed "
                  f"part {args.synthetic_rows:,}): each simulated epoch costs a serial epoch "
                  "and a scoring pass.", ""]
    verdicts = []
    for res in sims:
        rows = []
        for loss, traces in res.traces.items():
            if not traces:
                continue
            ref = res.refs[loss]
            serial = {t: traces[0].epochs_to(ref, t) for t in TARGETS}
            for tr in traces:
                row = [LOSS_SHORT[loss], str(tr.threads), tr.scheme]
                for target in TARGETS:
                    e = tr.epochs_to(ref, target)
                    missing = (f"cut at {len(tr.primals)} (time budget)" if tr.out_of_time
                               else f"not in {len(tr.primals)}")
                    row += [missing if e is None else str(e),
                            fmt_ratio(e, serial[target]) if e and serial[target] else "n/a"]
                row.append("n/a" if not tr.rounds else
                           f"{tr.shortened:,} of {tr.rounds:,} "
                           f"({100 * tr.shortened / tr.rounds:.1f}%)")
                row += ["n/a" if tr.hot_features is None else str(tr.hot_features),
                        "n/a" if tr.chunk_rows is None else str(tr.chunk_rows),
                        fmt_seconds(tr.seconds)]
                rows.append(row)
            for at in (tr for tr in traces if tr.threads == EPOCH_TARGET_THREADS):
                e, s = at.epochs_to(ref, 1e-2), serial[1e-2]
                ratio = fmt_ratio(e, s) if e and s else "n/a"
                holds = ("n/a" if ratio == "n/a" else
                         "holds" if e <= EPOCH_TARGET_RATIO * s else "**does not hold**")
                verdicts.append(f"- {res.dataset} {LOSS_SHORT[loss]} {at.scheme}: epochs to "
                                f"1e-2 at {EPOCH_TARGET_THREADS} threads {e or 'n/a'}, serial "
                                f"{s or 'n/a'}: ratio {ratio} (target <= "
                                f"{EPOCH_TARGET_RATIO:g}): {holds}")
        lines += [f"### {res.dataset} ({res.shape})", ""]
        lines += markdown_table(["loss", "threads", "scheme", "epochs to 1e-2", "x serial",
                                 "epochs to 1e-3", "x serial", "shortened rounds",
                                 "hot features", "chunk rows", "run s (scoring included)"],
                                rows, align=["l", "r", "l"] + ["r"] * 8)
        lines.append("")
    if verdicts:
        lines += [f"Target: epochs to 1e-2 at {EPOCH_TARGET_THREADS} threads <= "
                  f"{EPOCH_TARGET_RATIO:g}x the serial epochs.", ""] + verdicts + [""]
    return lines


def report(problems: list[Problem], sims: list[SimulatedSet], lineup: Lineup, args,
           header: list[str], notes: list[str]) -> list[str]:
    lines = list(header)
    lines += [
        "C = 1, no bias. A cell is the median time in seconds to the relative primal accuracy "
        "(P(w) - P*)/P* of the target, of the fastest tolerance setting whose every repeat "
        "reached it; in brackets the outer iterations (epochs) of that setting's run and the "
        "setting (`1 run`: a probe not repeated). `linsvm`: `linsvm.train(..., n_jobs=T)` "
        "with its default scheme (the replicas at 2 threads, async above; measured against one "
        "thread as the solve goes: the time is what a user gets); `async`, `replicas`, "
        "`rounds`: `thread_scheme=` that scheme (`rounds`: the deterministic one). "
        "`threads used`: the threads linsvm's solve "
        "ran (`linsvm.train` gives a solve one thread per "
        "`linsvm.solvers._dual_threads.THREAD_MIN_NNZ` non-zeros at most up to two, one per "
        "`MANY_THREADS_MIN_NNZ` beyond, the rounds excepted). Ratios are of those "
        "times: the speed-up is linsvm on 1 thread over linsvm on T (above 1: the threads "
        "gain); `linsvm / peer` is linsvm on T threads over the peer on T (below 1: linsvm "
        "faster). "
        "`MC`: multi-core LIBLINEAR `-m T`, whose -s 1 / -s 3 are its own parallel dual CD "
        "(`-m 1` runs that algorithm on one thread). `not run`: skipped by the time budget.",
        "",
    ]
    if problems:
        lines += ["## Time to accuracy, real threads", ""]
        lines += time_tables(problems, lineup, args.threads)
        lines += checks_table(problems)
    if sims:
        lines += simulator_section(sims, args)
    refs = [(pr.dataset, pr.loss, pr.shape, pr.ref) for pr in problems]
    timed = {(pr.key, pr.loss) for pr in problems}
    refs += [(s.dataset + " (simulator)", loss, s.shape, ref) for s in sims
             for loss, ref in s.refs.items() if (s.key, loss) not in timed]
    if refs:
        lines += ["## P* (reference optimum)", ""]
        rows = [[name, LOSS_SHORT[loss], shape, f"{ref.primal:.10g}", f"{ref.dual:.10g}",
                 fmt_sci(ref.certified_gap),
                 (ref.source or "n/a")
                 + (" (cached)" if ref.cached else f" ({fmt_seconds(ref.seconds)} s)")]
                for name, loss, shape, ref in refs]
        lines += markdown_table(["dataset", "loss", "size", "P*", "dual bound", "(P*-D)/D",
                                 "lowest P from"], rows,
                                align=["l", "l", "l", "r", "r", "r", "l"])
        lines.append("")
    if problems:
        lines += ["## All settings run", "",
                  "Each tool's sweep, loose to tight, stopped at the first setting reaching "
                  "1e-3; `runs`: timed repeats.", ""]
        rows = []
        for pr in problems:
            for t, by_label in pr.runs.items():
                seen = set()
                for m in by_label.values():
                    if id(m) in seen:
                        continue
                    seen.add(id(m))
                    rows.append([pr.dataset, LOSS_SHORT[pr.loss], t, m.setting.label,
                                 len(m.times), fmt_seconds(m.median_time),
                                 fmt_sci(pr.ref.relative_accuracy(m.primal)),
                                 "n/a" if m.n_iter is None else m.n_iter, "; ".join(m.notes)])
        lines += markdown_table(["dataset", "loss", "tool", "setting", "runs", "median s",
                                 "rel acc", "epochs", "notes"], rows,
                                align=["l", "l", "l", "l", "r", "r", "r", "r", "l"])
        lines.append("")
    notes = list(notes)
    notes += [f"{pr.dataset}: {n}" for pr in problems for n in pr.notes]
    notes += [f"{s.dataset} (simulator): {n}" for s in sims for n in s.notes]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes]
    return lines


# ---- driver ------------------------------------------------------------------------------------

def _int_list(text: str) -> list[int]:
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help=f"smoke run: reuters and a {QUICK_SYNTHETIC_ROWS:,}-row synthetic set, "
                        "1 repeat, linsvm's threads engaged whatever the data's size")
    p.add_argument("--big-machine", action="store_true",
                   help="a 16-core machine in 5 minutes: threads 1,4,8,16, pypi-recent and "
                        "3M-row synthetic-text, 3 repeats, peers, no simulator (options given "
                        "override)")
    p.add_argument("--threads", default=None, help=f"thread counts ({DEFAULT_THREADS}); linsvm "
                                                   "on 1 thread is always measured")
    p.add_argument("--datasets", default=None,
                   help="comma-separated among " + ", ".join(DATASETS))
    p.add_argument("--repeats", type=int, default=None, help="timed runs per setting (5)")
    p.add_argument("--synthetic-rows", type=int, default=None,
                   help=f"training rows of synthetic-text ({DEFAULT_SYNTHETIC_ROWS:,})")
    p.add_argument("--no-peers", action="store_true", help="linsvm alone")
    p.add_argument("--schemes", default=None,
                   help=f"linsvm's thread schemes ({DEFAULT_SCHEMES}; auto is always run)")
    p.add_argument("--no-multicore", action="store_true",
                   help="leave multi-core LIBLINEAR out (the big machine's preset)")
    p.add_argument("--gpu", action="store_true", help="Snap ML on the GPU too")
    p.add_argument("--no-simulator", action="store_true", help="skip the simulated threads")
    p.add_argument("--simulator-threads", default=SIMULATOR_THREADS,
                   help=f"simulated thread counts besides the serial run ({SIMULATOR_THREADS})")
    p.add_argument("--simulator-datasets", default=None,
                   help="datasets of the simulator part (" + ",".join(SIMULATOR_DATASETS) + ")")
    p.add_argument("--simulator-rows", type=int, default=None,
                   help="training rows of synthetic-text in the simulator part "
                        f"(min(--synthetic-rows, {DEFAULT_SIMULATOR_ROWS:,}))")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="wall-clock budget of the whole run; what does not fit is skipped "
                        "and named (none)")
    p.add_argument("--max-run-seconds", type=float, default=None,
                   help="stop a tool's tolerance sweep after a run slower than this (120)")
    p.add_argument("--kill-seconds", type=float, default=None,
                   help="end a multi-core LIBLINEAR fit after this long (2x --max-run-seconds)")
    p.add_argument("--pstar-budget", type=float, default=None,
                   help="seconds for the tight linsvm run computing P*, per problem (300)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-dcd-threads.md"))
    args = p.parse_args(argv)
    preset = BIG_MACHINE if args.big_machine else {}
    if args.big_machine:
        args.no_simulator = True

    def pick(name, quick_value, default):
        given = getattr(args, name)
        if given is not None:
            return given
        if name in preset:
            return preset[name]
        return quick_value if args.quick else default

    args.threads = _int_list(pick("threads", DEFAULT_THREADS, DEFAULT_THREADS))
    schemes = pick("schemes", DEFAULT_SCHEMES, DEFAULT_SCHEMES)
    args.schemes = ["auto"] + [x.strip() for x in schemes.split(",") if x.strip() in SCHEMES]
    args.multicore = not args.no_multicore and preset.get("multicore", True)
    names = pick("datasets", ",".join(QUICK_DATASETS), ",".join(DATASETS))
    args.datasets = [d.strip() for d in names.split(",") if d.strip()]
    args.repeats = pick("repeats", 1, 5)
    args.synthetic_rows = pick("synthetic_rows", QUICK_SYNTHETIC_ROWS, DEFAULT_SYNTHETIC_ROWS)
    args.max_minutes = pick("max_minutes", None, None)
    args.max_run_seconds = pick("max_run_seconds", 10.0, 120.0)
    args.kill_seconds = args.kill_seconds or 2 * args.max_run_seconds
    args.pstar_budget = pick("pstar_budget", 20.0, 300.0)
    sim = args.simulator_datasets or (SYNTHETIC if args.quick else ",".join(SIMULATOR_DATASETS))
    args.simulator_datasets = [d.strip() for d in sim.split(",") if d.strip()]
    args.simulator_threads = _int_list(args.simulator_threads)
    args.simulator_rows = args.simulator_rows or min(args.synthetic_rows, DEFAULT_SIMULATOR_ROWS)
    # tiny smoke data would not reach THREAD_MIN_NNZ: the solver's own threshold, lowered
    args.thread_min_nnz = 1 if args.quick else None
    return args


def main(argv=None) -> None:
    from linsvm.solvers._dual_threads import MANY_THREADS_MIN_NNZ, THREAD_MIN_NNZ

    args = parse_args(argv)
    warnings.simplefilter("ignore", category=UserWarning)
    budget = Budget(args.max_minutes)
    simulator = not args.no_simulator and bool(args.simulator_datasets)
    timed_end = budget.end
    if budget.limited and simulator:
        timed_end = budget.start + (1 - SIMULATOR_SHARE) * (budget.end - budget.start)
    cache = ReferenceCache(scratch_dir() / PSTAR_CACHE_NAME)
    lineup, notes = make_lineup(args.threads, not args.no_peers, args.gpu, args.thread_min_nnz,
                                args.schemes, args.multicore)
    for tool in list(lineup.tools):
        t0 = time.perf_counter()
        try:
            tool.warm_up()
        except Exception as exc:  # e.g. no GPU for Snap ML: the tool is left out, named
            lineup.tools.remove(tool)
            if tool.name == SNAP_GPU:
                lineup.absent[SNAP_GPU] = "failed"
            notes.append(f"{tool.name}: warm-up failed ({type(exc).__name__}: {exc}); left out")
            continue
        print(f"warm-up {tool.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr,
              flush=True)
    cores = os.cpu_count() or 1
    extra = [
        f"threads: {', '.join(map(str, args.threads))} ({cores} logical cores here"
        + ("; more threads than cores: oversubscribed" if max(args.threads) > cores else "")
        + f"); repeats: {args.repeats} (median); a sweep stops after a run over "
        f"{args.max_run_seconds:g} s; a multi-core LIBLINEAR fit is ended after "
        f"{args.kill_seconds:g} s",
        f"linsvm.solvers._dual_threads.THREAD_MIN_NNZ = {THREAD_MIN_NNZ:,} non-zeros a thread "
        f"up to two threads, MANY_THREADS_MIN_NNZ = {MANY_THREADS_MIN_NNZ:,} beyond (not the "
        "rounds)"
        + (" (smoke run: the solver called with thread_min_nnz=1 instead of linsvm.train)"
           if args.thread_min_nnz else ""),
        "tools run: " + ", ".join(t.name for t in lineup.tools),
        f"multi-core LIBLINEAR: liblinear-multicore {multicore_version() or 'not installed'} "
        f"in {multicore_python().parent.parent} (worker subprocess); Snap ML: regularizer = "
        "1/C, fit_intercept=False",
        f"synthetic-text: {args.synthetic_rows:,} training rows; "
        + (f"simulator on {', '.join(args.simulator_datasets)} (synthetic-text: "
           f"{args.simulator_rows:,} rows), simulated threads "
           f"{', '.join(map(str, args.simulator_threads))}" if simulator else "no simulator"),
        f"time budget: {args.max_minutes:g} minutes" if budget.limited else "time budget: none",
    ]
    header = report_header("Threads within one DCD solve: time to accuracy against the peers",
                           "bench_dcd_threads", extra)
    if args.quick:
        header.insert(-1, "- **smoke run** (`--quick`): tiny data, 1 repeat; the figures show "
                          "that the script works, not how fast anything is")
    capacity = [("start", two_thread_capacity())]

    problems: list[Problem] = []
    for k, name in enumerate(args.datasets):
        if time.perf_counter() > timed_end:
            notes.append(f"{name}: not run (time budget)")
            continue
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
        problems_left = len(LOSSES) * (len(args.datasets) - k)
        problems += bench_dataset(ds, dataset_key(name, args.synthetic_rows), lineup, cache,
                                  args, budget, timed_end, problems_left)
        del ds
        gc.collect()

    sims: list[SimulatedSet] = []
    if simulator:
        for k, name in enumerate(args.simulator_datasets):
            if time.perf_counter() > budget.end:
                notes.append(f"{name} (simulator): not run (time budget)")
                continue
            ds = load_dataset(name, synthetic_rows=args.simulator_rows)
            if ds is None:
                notes.append(f"{name} (simulator): skipped, data file not found")
                continue
            print(f"{ds.describe()} (simulator)", file=sys.stderr, flush=True)
            sims.append(simulate_dataset(ds, dataset_key(name, args.simulator_rows),
                                         args.simulator_threads, cache, args, budget,
                                         len(args.simulator_datasets) - k))
            del ds
            gc.collect()

    capacity.append(("end", two_thread_capacity()))
    elapsed = time.perf_counter() - budget.start
    notes.append(f"total time {elapsed:.0f} s; load average at the end: "
                 + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    header.insert(-1, "- two-thread capacity of the machine (bench_reader's compute kernel on 2 "
                      "threads vs 1: about 2.00 when two cores are free, 1.00 when others hold "
                      "all but one): " + ", ".join(f"{c:.2f} at the {when}"
                                                   for when, c in capacity))
    header += ["`lscpu | head`:", "", "```", *lscpu_head(), "```", ""]
    write_report(report(problems, sims, lineup, args, header, notes), args.out)


if __name__ == "__main__":
    main()
