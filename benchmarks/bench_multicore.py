"""Multi-core training of the dual CD solvers (-s 1, -s 3): linsvm's threads vs the peers.

Run from the repository root (after ``bash scripts/bench_multicore_env.sh`` once)::

    python -m benchmarks.bench_multicore [--quick] [--datasets reuters,pypi-recent,synthetic-text]
        [--tools linsvm1,linsvm2,liblinear,mc1,mc2,snap1,snap2] [--repeats 5]
        [--synthetic-rows 750000] [--max-run-seconds 60] [--pstar-budget 120]
        [--out benchmarks/RESULTS-multicore.md]

For each dataset and loss (L2-loss SVM = ``-s 1``, L1-loss SVM = ``-s 3``), C = 1 and bias 1
(LIBLINEAR's ``-B 1``: every row gets a last feature 1 whose weight is regularised like the
others), the time to the relative primal accuracies ``(P(w) - P*)/P*`` of 1e-2 and 1e-3 of:

- linsvm, ``linsvm.train(..., n_jobs=1)`` and ``n_jobs=2`` (the threaded DCD within the one
  binary sub-problem);
- LIBLINEAR 2.50 (liblinear-official, serial);
- multi-core LIBLINEAR 2.50 (liblinear-multicore) with ``-m 1`` and ``-m 2``. Its ``-m`` covers
  ``-s 0, 1, 2, 3, 5, 6, 11, 21``; for ``-s 1`` / ``-s 3`` it is its own dual CD (the
  gradients of a block of up to 4096 candidate rows computed in parallel, then serial updates
  of the rows whose projected gradient is not small), run also by ``-m 1``, which is therefore
  not LIBLINEAR 2.50's serial algorithm. It installs the same module name as
  liblinear-official, so it runs in its own venv, in a worker subprocess
  (``benchmarks/multicore_worker.py``) that times ``train`` alone and hands back ``w``;
- Snap ML's ``SupportVectorMachine`` with ``n_jobs=1`` and ``n_jobs=2`` (``fit_intercept=True``,
  ``intercept_scaling=1``: its intercept is regularised, the same problem).

The measuring is ``benchmarks/harness.py``'s: P* from a tight linsvm DCD run (and LIBLINEAR
``-s 2 -e 1e-6`` for the L2 loss), lowered by any better run of the session and cached per
(dataset, loss) in ``pstar-bias1.json`` in the scratch folder; each tool's tolerance swept loose
to tight (one probe a setting, stopping at the first reaching 1e-3), the settings reaching a
target within 1.5x of the fastest probe then run ``--repeats`` times; the reported time is the
smallest median. Every ``w`` is scored outside the timing by ``linsvm.objective.primal_value``;
P and the test accuracy are computed on a copy of the data with the bias column written out.

Data: reuters, pypi-recent and ``synthetic-text`` (``linsvm.datasets.make_text_classification``,
cached in the scratch folder) of 750,000 training rows by default: about 30 M non-zeros, 3x
pypi-recent's. Its CSR arrays (360 MB) are far beyond any cache while w (2 MB) is the same at
any row count, so more rows would not change the per-epoch costs or what threads gain. Why not
several million: a (tool, loss) costs 7-28 timed runs (the default probe, the sweep's probes,
the repeats of every setting within 1.5x of the fastest), and the harness's runs at 2M rows
(RESULTS-train.md) add up, for this script's seven tools, to about 26 minutes on the
synthetic set alone and 6 on pypi-recent; at 750k rows the whole benchmark takes about 17
minutes on 2 cores, plus about 4 the first time P* is computed (pypi-recent's took 48 s for
the L2 loss and 89 s for the L1 loss here). ``--synthetic-rows`` changes it.

Also recorded for linsvm: its duality gap (must be >= 0) and ``max |w - sum_i y_i alpha_i x_i|``
over every timed run (w as returned, the sum computed afresh), and its cost per epoch at 1 and
2 threads, two ways: time / iterations of the timed runs above, and fixed-epoch runs of the
solver itself (``solvers.dcd`` with ``Subproblem.n_threads``, no shrinking, so every epoch
visits every row) at two epoch counts, whose difference gives the cost of one epoch apart from
the fixed cost of a call.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import select
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_from_dual
from linsvm.solvers import SOLVERS

from .bench_reader import two_thread_capacity
from .common import (
    BENCH_DIR,
    REPO_ROOT,
    SYNTHETIC,
    Dataset,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    package_version,
    report_header,
    scratch_dir,
    write_report,
)
from .harness import (
    LOSSES,
    TARGETS,
    ReferenceCache,
    ToolBench,
    best_for_target,
    compute_reference,
    dataset_key,
)
from .multicore_worker import liblinear_fit
from .peers import (
    LIBLINEAR_SOLVER,
    LOSS_NAMES,
    FitResult,
    LiblinearTool,
    LinsvmTool,
    Setting,
    SnapMLTool,
    Tool,
)

BIAS = 1.0
DATASETS = ("reuters", "pypi-recent", SYNTHETIC)
QUICK_DATASETS = ("reuters", SYNTHETIC)
DEFAULT_SYNTHETIC_ROWS = 750_000
QUICK_SYNTHETIC_ROWS = 50_000
PSTAR_CACHE_NAME = "pstar-bias1.json"
# fixed-epoch runs for the per-epoch cost: (fewer, more) epochs, no shrinking
EPOCH_COUNTS = (2, 10)
# targets of the task: linsvm 1 thread / 2 threads, and 2 threads / the best 2-thread peer
SPEEDUP_TARGET = 1.7
PEER_RATIO_TARGET = 0.6

LINSVM_1, LINSVM_2 = "linsvm 1t", "linsvm 2t"
LIBLINEAR_NAME = "LIBLINEAR"
MC_1, MC_2 = "MC -m 1", "MC -m 2"
SNAP_1, SNAP_2 = "Snap ML 1t", "Snap ML 2t"
# --tools keys
TOOL_KEYS = {"linsvm1": LINSVM_1, "linsvm2": LINSVM_2, "liblinear": LIBLINEAR_NAME, "mc1": MC_1,
             "mc2": MC_2, "snap1": SNAP_1, "snap2": SNAP_2}


def multicore_python() -> Path:
    """The python of the venv holding liblinear-multicore (scripts/bench_multicore_env.sh)."""
    venv = Path(os.environ.get("LINSVM_MULTICORE_VENV", REPO_ROOT / ".venv-multicore"))
    return venv / "bin" / "python"


def multicore_version() -> str | None:
    """liblinear-multicore's version in its venv; None where it is not installed."""
    python = multicore_python()
    if not python.is_file():
        return None
    probe = subprocess.run([str(python), "-c", "from importlib import metadata; "
                            "print(metadata.version('liblinear-multicore'))"],
                           capture_output=True, text=True)
    version = probe.stdout.strip() if probe.returncode == 0 else ""
    return version or None


# ---- data with the bias column -----------------------------------------------------------------

def with_bias_column(X: sp.csr_matrix, bias: float) -> sp.csr_matrix:
    """X with a last column of ``bias``: LIBLINEAR's ``-B``, written out (for scoring only)."""
    l, n = X.shape
    indptr = X.indptr.astype(np.int64) + np.arange(l + 1)
    last = indptr[1:] - 1  # each row's new last entry
    keep = np.ones(X.nnz + l, dtype=bool)
    keep[last] = False
    data = np.empty(X.nnz + l, dtype=X.data.dtype)
    indices = np.empty(X.nnz + l, dtype=np.int64 if n + 1 > np.iinfo(np.int32).max else np.int32)
    data[keep] = X.data
    indices[keep] = X.indices
    data[last] = bias
    indices[last] = n
    return sp.csr_matrix((data, indices, indptr), shape=(l, n + 1))


def scoring_view(ds: Dataset) -> Dataset:
    """The dataset as harness.ToolBench scores it: bias column in the training and test rows."""
    X_test = None if ds.X_test is None else with_bias_column(ds.X_test, BIAS)
    return Dataset(ds.name, with_bias_column(ds.X, BIAS), ds.y, X_test, ds.y_test, ds.note)


# ---- the tools, with bias and threads ----------------------------------------------------------

@dataclass
class LinsvmCheck:
    """The worst of linsvm's self-checks over its timed runs at one setting."""

    min_gap: float = np.inf
    max_w_diff: float = 0.0  # max |w - w(alpha)|, relative to max(1, max |w|)
    solvers: set[int] = field(default_factory=set)  # the solver that produced w (fallback: 2)


class LinsvmThreads(LinsvmTool):
    """``linsvm.train`` with bias 1 and ``n_jobs`` threads."""

    def __init__(self, n_jobs: int) -> None:
        self.n_jobs = n_jobs
        self.train_options = {"bias": BIAS, "n_jobs": n_jobs}
        self.name = LINSVM_1 if n_jobs == 1 else LINSVM_2
        self.checks: dict[tuple[int, str], LinsvmCheck] = {}

    def warm_up(self) -> None:
        """Compile / load the kernels on data large enough for the threaded paths."""
        from linsvm.datasets import make_text_classification

        X, y = make_text_classification(20_000, random_state=3)
        self.prepare(X, y)
        for loss in LOSSES:
            self.fit(loss, Setting("warm-up", (("eps", 1.0),)))
        self.release()
        self.checks.clear()

    def weights(self, loss: int, setting: Setting, model, sign: float) -> np.ndarray:
        """w with the bias weight last, after the untimed checks of the run."""
        self.check(loss, setting, sign, model.results_[0])
        return sign * np.append(model.coef_[0], model.intercept_[0] / BIAS)

    def check(self, loss: int, setting: Setting, sign: float, result) -> None:
        """Untimed: the gap's sign and w against sum_i y_i alpha_i x_i, computed afresh."""
        c = self.checks.setdefault((loss, setting.label), LinsvmCheck())
        c.solvers.add(int(result.solver))
        if np.isfinite(result.gap):
            c.min_gap = min(c.min_gap, float(result.gap))
        if result.alpha is not None and result.solver == LIBLINEAR_SOLVER[loss]:
            X = self.X
            w_alpha = primal_from_dual(X.indptr, X.indices, X.data, BIAS, sign * self.y,
                                       np.ascontiguousarray(result.alpha, dtype=np.float64),
                                       X.shape[1] + 1)
            diff = np.max(np.abs(result.w - w_alpha)) / max(1.0, np.max(np.abs(result.w)))
            c.max_w_diff = max(c.max_w_diff, float(diff))


class LiblinearBias(LiblinearTool):
    """liblinear-official with ``-B 1``; the problem (bias included) is built before timing."""

    name = LIBLINEAR_NAME

    def prepare(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        from liblinear.liblinearutil import problem

        self.n_features = X.shape[1]
        self.problem = problem(np.ascontiguousarray(y, dtype=np.float64),
                               sp.csr_matrix(X, dtype=np.float64), BIAS)

    def fit(self, loss: int, setting: Setting) -> FitResult:
        solver = LIBLINEAR_SOLVER[loss]
        out = liblinear_fit(self.problem, solver, setting.get("eps"), BIAS, self.n_features)
        return liblinear_result(out, solver)


def liblinear_result(out: dict, solver: int) -> FitResult:
    notes = []
    if out["capped"]:
        notes.append("hit the 300-iteration cap" + (", switched to -s 2" if solver == 1 else ""))
    return FitResult(out["seconds"], out["w"], out["n_iter"], not out["capped"], notes)


class MulticoreWorker:
    """A subprocess in the multi-core LIBLINEAR venv holding one dataset's problem.

    A fit that has not answered within its time limit is ended with its worker (which is then
    started afresh): OpenMP's barriers make ``-m 2`` crawl when another process holds a core,
    and a C call in a subprocess can be stopped where one in this process could not.
    """

    def __init__(self, python: Path, X: sp.csr_matrix, y: np.ndarray, key: str,
                 bias: float = BIAS) -> None:
        self.bias = bias
        self.folder = scratch_dir()
        self.data_path = self.folder / f"multicore-{key}.npz"
        if not self.data_path.is_file():
            tmp = self.data_path.with_name(f".{self.data_path.stem}.{os.getpid()}.tmp.npz")
            np.savez(tmp, data=X.data.astype(np.float64, copy=False), indices=X.indices,
                     indptr=X.indptr, shape=np.array(X.shape), y=y)
            os.replace(tmp, self.data_path)
        self.w_path = self.folder / f".multicore-w.{os.getpid()}.npy"
        self.python = python
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        worker = Path(__file__).resolve().with_name("multicore_worker.py")
        self.proc = subprocess.Popen(
            [str(self.python), str(worker), str(self.data_path), repr(self.bias)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.info = self._answer()

    def _answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"multi-core LIBLINEAR worker ended (exit {self.proc.poll()})")
        return json.loads(line)

    def fit(self, solver: int, eps: float, threads: int, limit: float) -> dict | None:
        """The worker's answer with ``w``; None if it took over ``limit`` seconds (ended)."""
        req = {"solver": solver, "eps": eps, "threads": threads, "w_out": str(self.w_path)}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        # one request, one answer line: nothing is left buffered between requests
        ready, _, _ = select.select([self.proc.stdout], [], [], limit)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.restarts += 1
            self._start()
            return None
        out = self._answer()
        out["w"] = np.load(self.w_path)
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        self.w_path.unlink(missing_ok=True)


class MulticoreTool(LiblinearTool):
    """multi-core LIBLINEAR ``-m threads`` through a ``MulticoreWorker`` (set per dataset, with
    the same ``bias``)."""

    def __init__(self, threads: int, version: str, name: str | None = None,
                 bias: float = BIAS) -> None:
        self.threads = threads
        self.name = name or (MC_1 if threads == 1 else MC_2)
        self.bias = bias
        self._version = version
        self.worker: MulticoreWorker | None = None
        self.limit = np.inf  # seconds a fit may take before its worker is ended

    def warm_up(self) -> None:
        pass  # the worker loads its library before it answers "ready"

    def prepare(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        pass

    def release(self) -> None:
        pass

    def fit(self, loss: int, setting: Setting) -> FitResult:
        solver = LIBLINEAR_SOLVER[loss]
        out = self.worker.fit(solver, setting.get("eps"), self.threads, self.limit)
        if out is None:  # counted as a run of `limit` seconds that reached nothing (w = 0)
            n_weights = self.worker.info["n_features"] + (1 if self.bias >= 0 else 0)
            return FitResult(self.limit, np.zeros(n_weights), None, False,
                             [f"ended after {self.limit:g} s"])
        return liblinear_result(out, solver)

    def version(self) -> str:
        return self._version


class SnapMLThreads(SnapMLTool):
    """Snap ML's SupportVectorMachine with ``n_jobs`` threads and a regularised intercept."""

    def __init__(self, n_jobs: int) -> None:
        self.n_jobs = n_jobs
        self.train_options = {"bias": BIAS, "n_jobs": n_jobs}
        self.name = SNAP_1 if n_jobs == 1 else SNAP_2

    def fit(self, loss: int, setting: Setting) -> FitResult:
        from snapml import SupportVectorMachine

        kwargs = dict(setting.params)
        if "max_iter" in kwargs:
            kwargs["max_iter"] = int(kwargs["max_iter"])
        max_iter = kwargs.get("max_iter", 1000)
        model = SupportVectorMachine(
            loss="hinge" if loss == LOSS_HINGE else "squared_hinge",
            regularizer=1.0,  # = 1 / C with C = 1
            n_jobs=self.n_jobs, fit_intercept=True, intercept_scaling=BIAS,
            random_state=self.seed,
            **kwargs,
        )
        t0 = time.perf_counter()
        model.fit(self.X, self.y)
        seconds = time.perf_counter() - t0
        if list(model.classes_) != [-1.0, 1.0]:
            raise RuntimeError(f"unexpected Snap ML classes {model.classes_}")
        w = np.append(np.asarray(model.coef_, dtype=np.float64).ravel(),
                      np.asarray(model.intercept_, dtype=np.float64).ravel()[0] / BIAS)
        n_iter = int(getattr(model, "n_iter_", -1))
        converged = n_iter < max_iter if n_iter >= 0 else None
        notes = [] if converged in (True, None) else [f"hit max_iter={max_iter}"]
        return FitResult(seconds, w, n_iter if n_iter >= 0 else None, converged, notes)


def make_tools(wanted: set[str]) -> tuple[list[Tool], list[str]]:
    """The tools named in ``wanted`` that can run here, and notes on those that cannot."""
    tools: list[Tool] = [LinsvmThreads(1), LinsvmThreads(2)]
    notes: list[str] = []
    try:
        import liblinear.liblinearutil  # noqa: F401

        tools.append(LiblinearBias())
    except ImportError as exc:
        notes.append(f"LIBLINEAR skipped: {exc}")
    python = multicore_python()
    version = multicore_version()
    if version:
        tools += [MulticoreTool(1, version), MulticoreTool(2, version)]
    else:
        notes.append(f"multi-core LIBLINEAR skipped: no liblinear-multicore at {python} "
                     "(run scripts/bench_multicore_env.sh)")
    try:
        import snapml  # noqa: F401

        tools += [SnapMLThreads(1), SnapMLThreads(2)]
    except ImportError as exc:
        notes.append(f"Snap ML skipped: {exc} (pip install snapml, the bench extra)")
    return [t for t in tools if t.name in wanted], notes


# ---- per-epoch cost ----------------------------------------------------------------------------

@dataclass
class EpochCost:
    """Fixed-epoch runs of linsvm's DCD: median seconds per epoch count."""

    loss: int
    threads: int
    seconds: dict[int, float]
    n_iter: dict[int, int]

    @property
    def per_epoch(self) -> float:
        (a, b) = EPOCH_COUNTS
        return (self.seconds[b] - self.seconds[a]) / (self.n_iter[b] - self.n_iter[a])

    @property
    def fixed(self) -> float:
        a = EPOCH_COUNTS[0]
        return self.seconds[a] - self.n_iter[a] * self.per_epoch


def epoch_costs(ds: Dataset, loss: int, threads: int, repeats: int) -> EpochCost:
    """linsvm's DCD solver called directly: no shrinking, a tolerance never met, so every
    call runs exactly its epochs over every row (no fallback: that is the training layer's)."""
    from linsvm.solvers import Subproblem
    from linsvm.solvers.dcd import solve_l1svc_dual, solve_l2svc_dual

    solve = solve_l1svc_dual if loss == LOSS_HINGE else solve_l2svc_dual
    cost = EpochCost(loss, threads, {}, {})
    for epochs in EPOCH_COUNTS:
        sub = Subproblem(X=ds.X, y=ds.y, C=np.ones(ds.X.shape[0]), eps=1e-12, max_iter=epochs,
                         bias=BIAS, options={"shrinking": False}, n_threads=threads)
        times = []
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            sol = solve(sub)
            times.append(time.perf_counter() - t0)
        cost.seconds[epochs] = median(times)
        cost.n_iter[epochs] = sol.n_iter
    return cost


# ---- driver ------------------------------------------------------------------------------------

@dataclass
class DatasetResult:
    name: str
    shape: str
    nnz: int  # non-zeros of the training rows, the bias column included
    references: dict = field(default_factory=dict)  # loss -> harness.Reference
    runs: dict = field(default_factory=dict)  # (loss, tool) -> {label: Measurement}
    notes: list[str] = field(default_factory=list)
    epochs: list[EpochCost] = field(default_factory=list)
    checks: dict = field(default_factory=dict)  # (loss, tool) -> {label: LinsvmCheck}


def bench_dataset(ds: Dataset, key: str, tools: list[Tool], cache: ReferenceCache,
                  args) -> DatasetResult:
    res = DatasetResult(ds.name, f"{ds.X.shape[0]:,} x {ds.X.shape[1]:,}, nnz {ds.X.nnz:,}",
                        ds.X.nnz + ds.X.shape[0])
    scored = scoring_view(ds)
    worker = None
    multicore = [t for t in tools if isinstance(t, MulticoreTool)]
    if multicore:
        t0 = time.perf_counter()
        worker = MulticoreWorker(multicore_python(), ds.X, ds.y, key)
        for t in multicore:
            t.worker = worker
            t.limit = args.kill_seconds
        print(f"  multi-core LIBLINEAR worker ready ({time.perf_counter() - t0:.1f} s)",
              file=sys.stderr, flush=True)
    for tool in tools:
        tool.prepare(ds.X, ds.y)
    try:
        for loss in LOSSES:
            ref = cache.get(key, loss)
            if ref is None or ref.budget < args.pstar_budget and ref.certified_gap > 1e-6:
                t0 = time.perf_counter()
                print(f"  computing P* ({LOSS_NAMES[loss]}) ...", file=sys.stderr, flush=True)
                ref = compute_reference(scored, loss, args.pstar_budget, use_liblinear=True)
                print(f"  P* = {ref.primal:.10g}, certified gap {ref.certified_gap:.1e} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
            res.references[loss] = ref
            for tool in tools:
                print(f"  {tool.name} {LOSS_NAMES[loss]} ...", file=sys.stderr, flush=True)
                bench = ToolBench(tool, scored, loss, ref, args.repeats, args.max_run_seconds)
                # one probe at the default, then the harness's sweep (no repeats of defaults)
                first = bench.run(tool.default_setting(loss), 1)
                bench.sweep(first)
                res.runs[(loss, tool.name)] = bench.runs
                res.notes += [f"{LOSS_SHORT[loss]} {tool.name}: {n}" for n in bench.notes]
                if isinstance(tool, LinsvmThreads):
                    res.checks[(loss, tool.name)] = {
                        label: c for (lo, label), c in tool.checks.items() if lo == loss}
            cache.put(key, loss, ref)
            for threads in (1, 2):
                if any(isinstance(t, LinsvmThreads) and t.n_jobs == threads for t in tools):
                    print(f"  linsvm epochs, {threads} thread(s) ...", file=sys.stderr,
                          flush=True)
                    res.epochs.append(epoch_costs(ds, loss, threads, args.epoch_repeats))
    finally:
        for tool in tools:
            tool.release()
            if isinstance(tool, LinsvmThreads):
                tool.checks.clear()
        if worker is not None:
            worker.close()
            if worker.restarts:
                res.notes.append(f"multi-core LIBLINEAR: {worker.restarts} fit(s) ended at the "
                                 f"--kill-seconds limit ({args.kill_seconds:g} s)")
    return res


# ---- report ------------------------------------------------------------------------------------

LOSS_SHORT = {LOSS_SQUARED_HINGE: "L2", LOSS_HINGE: "L1"}


def _acc(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _ratio_mark(value: str, ok: bool | None) -> str:
    return value if ok is None or value == "n/a" else value + (" ok" if ok else " **miss**")


def report(results: list[DatasetResult], tool_names: list[str], header: list[str],
           notes: list[str]) -> list[str]:
    lines = list(header)
    lines += [
        "Times are medians in seconds of the fastest setting reaching the target (setting in "
        "brackets; `1 run`: a probe that was not repeated); `rel acc` is (P(w) - P*)/P*, "
        "reached by every repeat. C = 1, bias 1 (`-B 1`, bias weight regularised). "
        f"`speed-up` = linsvm 1 thread / linsvm 2 threads (target >= {SPEEDUP_TARGET:g}); "
        f"`vs peers` = linsvm 2 threads / the fastest peer run, Snap ML or multi-core "
        f"LIBLINEAR on 1 or 2 threads (target <= {PEER_RATIO_TARGET:g}; the minimum over those "
        "that reached the target). "
        "`MC`: multi-core LIBLINEAR; its `-m` parallelises -s 1 and -s 3 itself (also -s 0, "
        "2, 5, 6, 11, 21): a dual CD of its own, the gradients of a block of candidate rows in "
        "parallel, then serial updates; `-m 1` runs that algorithm on one thread, so it is "
        "not LIBLINEAR 2.50's serial solver.",
        "",
    ]
    for loss in LOSSES:
        rows, acc_rows = [], []
        for res in results:
            ref = res.references.get(loss)
            if ref is None:
                continue
            for target in TARGETS:
                best = {}
                for t in tool_names:
                    runs = res.runs.get((loss, t))
                    best[t] = best_for_target(runs, ref, target) if runs else None
                row = [res.name, f"{target:g}"]
                for t in tool_names:
                    m = best[t]
                    row.append("not reached" if m is None else
                               f"{fmt_seconds(m.median_time)} ({m.setting.label.split(' (')[0]}"
                               f"{'' if len(m.times) > 1 else ', 1 run'})")
                t1, t2 = (best.get(n) for n in (LINSVM_1, LINSVM_2))
                speedup = fmt_ratio(t1.median_time if t1 else None,
                                    t2.median_time if t2 else None)
                # (each peer at its best thread count: Snap ML on one thread is often faster
                # than on two)
                peers = [best[p].median_time for p in (SNAP_1, SNAP_2, MC_1, MC_2)
                         if best.get(p)]  # fmt: skip
                vs = fmt_ratio(t2.median_time if t2 else None, min(peers) if peers else None)
                row.append(_ratio_mark(speedup, None if speedup == "n/a"
                                       else float(speedup) >= SPEEDUP_TARGET))
                row.append(_ratio_mark(vs, None if vs == "n/a"
                                       else float(vs) <= PEER_RATIO_TARGET))
                rows.append(row)
                acc_rows.append([res.name, f"{target:g}"] + [
                    "n/a" if best[t] is None else f"{_acc(best[t].test_accuracy)} "
                    f"({fmt_sci(ref.relative_accuracy(best[t].primal))})" for t in tool_names])
        if not rows:
            continue
        lines += [f"## {LOSS_NAMES[loss]}", "", "### Time to relative accuracy", ""]
        lines += markdown_table(["dataset", "target"] + [f"{t} s" for t in tool_names]
                                + ["speed-up", "vs peers"], rows,
                                align=["l", "r"] + ["r"] * (len(tool_names) + 2))
        lines += ["", "### Test accuracy % (rel acc) of those runs", ""]
        lines += markdown_table(["dataset", "target"] + tool_names, acc_rows,
                                align=["l", "r"] + ["r"] * len(tool_names))
        lines.append("")

    lines += ["## linsvm's checks", "",
              "Over every timed linsvm run: the smallest duality gap P(w) + f(alpha) reported "
              "(must be >= 0) and the largest max|w - sum_i y_i alpha_i x_i| / max(1, max|w|) "
              "(w as returned; the sum computed afresh by linsvm.objective.primal_from_dual; "
              "runs ending in the -s 2 fallback are not counted in that column).", ""]
    rows = []
    for res in results:
        for (loss, t), by_label in sorted(res.checks.items()):
            if not by_label:
                continue
            gap = min(c.min_gap for c in by_label.values())
            wd = max(c.max_w_diff for c in by_label.values())
            solvers = sorted(set().union(*(c.solvers for c in by_label.values())))
            rows.append([res.name, LOSS_SHORT[loss], t, f"{gap:.3g}" + (
                "" if gap >= 0 else " **negative**"), f"{wd:.1e}",
                ", ".join(f"-s {s}" for s in solvers)])
    lines += markdown_table(["dataset", "loss", "tool", "min gap", "max w diff",
                             "solver that gave w"], rows, align=["l", "l", "l", "r", "r", "l"])

    lines += ["", "## linsvm's cost per epoch", "",
              f"`fixed epochs`: the DCD solver itself (`Subproblem.n_threads`), no shrinking, "
              f"{EPOCH_COUNTS[0]} and {EPOCH_COUNTS[1]} epochs (medians): ms per epoch = the "
              f"difference over the extra epochs (in brackets: ns per non-zero, the bias "
              f"included); `fixed ms` = what a call costs besides its "
              f"epochs (set-up, objectives). `timed runs`: median time / iterations of the "
              f"runs above (with shrinking, so later epochs are cheaper; setting in brackets).",
              ""]
    rows = []
    for res in results:
        for loss in LOSSES:
            costs = {c.threads: c for c in res.epochs if c.loss == loss}
            if not costs:
                continue
            per = {k: c.per_epoch for k, c in costs.items()}
            timed = []
            for t in (LINSVM_1, LINSVM_2):
                runs = res.runs.get((loss, t), {})
                ref = res.references[loss]
                m = best_for_target(runs, ref, min(TARGETS)) if runs else None
                timed.append("n/a" if m is None or not m.n_iter else
                             f"{1e3 * m.median_time / m.n_iter:.1f} "
                             f"({m.n_iter} it, {m.setting.label.split(' (')[0]})")
            rows.append([res.name, LOSS_SHORT[loss]]
                        + [f"{1e3 * per[k]:.1f} ({1e9 * per[k] / res.nnz:.2f})" if k in per
                           else "n/a" for k in (1, 2)]
                        + [f"{1e3 * costs[k].fixed:.0f}" if k in costs else "n/a"
                           for k in (1, 2)]
                        + [fmt_ratio(per.get(1), per.get(2))] + timed)
    lines += markdown_table(["dataset", "loss", "ms/epoch 1t", "ms/epoch 2t", "fixed ms 1t",
                             "fixed ms 2t", "epoch speed-up", "timed runs ms/it 1t",
                             "timed runs ms/it 2t"], rows,
                            align=["l", "l"] + ["r"] * 7)

    lines += ["", "## P* (reference optimum, bias 1)", ""]
    rows = []
    for res in results:
        for loss, ref in res.references.items():
            rows.append([res.name, LOSS_SHORT[loss], res.shape, f"{ref.primal:.10g}",
                         f"{ref.dual:.10g}", fmt_sci(ref.certified_gap),
                         (ref.source or "n/a")
                         + (" (cached)" if ref.cached else f" ({fmt_seconds(ref.seconds)} s)")])
    lines += markdown_table(["dataset", "loss", "size", "P*", "dual bound", "(P*-D)/D",
                             "lowest P from"], rows, align=["l", "l", "l", "r", "r", "r", "l"])

    lines += ["", "## All settings run", "",
              "Each tool's default (one probe), then its sweep loose to tight, stopped at the "
              "first setting reaching 1e-3; `runs`: timed repeats.", ""]
    rows = []
    for res in results:
        for (loss, t), by_label in res.runs.items():
            seen = set()
            for m in by_label.values():
                if id(m) in seen:
                    continue
                seen.add(id(m))
                rows.append([res.name, LOSS_SHORT[loss], t, m.setting.label, len(m.times),
                             fmt_seconds(m.median_time),
                             fmt_sci(res.references[loss].relative_accuracy(m.primal)),
                             "n/a" if m.n_iter is None else m.n_iter, "; ".join(m.notes)])
    lines += markdown_table(["dataset", "loss", "tool", "setting", "runs", "median s",
                             "rel acc", "iters", "notes"], rows,
                            align=["l", "l", "l", "l", "r", "r", "r", "r", "l"])
    for res in results:
        notes += [f"{res.name} {n}" for n in res.notes]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return lines


def lscpu_head() -> list[str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ["lscpu: not available"]
    return out.splitlines()[:10]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="smoke run: reuters and a 50k-row synthetic set, 2 repeats")
    p.add_argument("--datasets", default=None,
                   help="comma-separated names among " + ", ".join(DATASETS))
    p.add_argument("--tools", default=",".join(TOOL_KEYS),
                   help="comma-separated among " + ", ".join(TOOL_KEYS))
    p.add_argument("--repeats", type=int, default=None, help="timed runs per setting (5)")
    p.add_argument("--synthetic-rows", type=int, default=None,
                   help=f"training rows of the synthetic data ({DEFAULT_SYNTHETIC_ROWS})")
    p.add_argument("--max-run-seconds", type=float, default=None,
                   help="stop a tool's tolerance sweep after a run slower than this (60)")
    p.add_argument("--kill-seconds", type=float, default=None,
                   help="end a multi-core LIBLINEAR fit (and its worker) after this long; it "
                        "then counts as a run of that time reaching nothing (2x "
                        "--max-run-seconds)")
    p.add_argument("--pstar-budget", type=float, default=None,
                   help="seconds for the tight linsvm run computing P* (120)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-multicore.md"))
    args = p.parse_args(argv)
    quick = args.quick
    names = args.datasets or ",".join(QUICK_DATASETS if quick else DATASETS)
    args.datasets = [d.strip() for d in names.split(",") if d.strip()]
    keys = [k.strip() for k in args.tools.split(",") if k.strip()]
    unknown = [k for k in keys if k not in TOOL_KEYS]
    if unknown:
        p.error(f"unknown tools {unknown}; known: {', '.join(TOOL_KEYS)}")
    args.tools = {TOOL_KEYS[k] for k in keys}
    args.repeats = args.repeats or (2 if quick else 5)
    args.epoch_repeats = 1 if quick else 3
    args.synthetic_rows = args.synthetic_rows or (
        QUICK_SYNTHETIC_ROWS if quick else DEFAULT_SYNTHETIC_ROWS)
    args.max_run_seconds = args.max_run_seconds or (10.0 if quick else 60.0)
    args.kill_seconds = args.kill_seconds or 2 * args.max_run_seconds
    args.pstar_budget = args.pstar_budget or (20.0 if quick else 120.0)
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    warnings.simplefilter("ignore", category=UserWarning)
    started = time.perf_counter()
    cache = ReferenceCache(scratch_dir() / PSTAR_CACHE_NAME)
    tools, notes = make_tools(args.tools)
    for tool in tools:
        t0 = time.perf_counter()
        tool.warm_up()
        print(f"warm-up {tool.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr,
              flush=True)
    header = report_header("Multi-core training of -s 1 / -s 3: linsvm threads vs the peers",
                           "bench_multicore", [
        f"repeats: {args.repeats} (median); sweep stops after a run over "
        f"{args.max_run_seconds:g} s; a multi-core LIBLINEAR fit is ended after "
        f"{args.kill_seconds:g} s; fixed-epoch runs: {args.epoch_repeats} each",
        "tools: " + ", ".join(f"{t.name} {t.version()}" for t in tools),
        f"multi-core LIBLINEAR: liblinear-multicore in {multicore_python().parent.parent} "
        f"(worker subprocess); Snap ML {package_version('snapml')}: regularizer = 1/C, "
        "fit_intercept, intercept_scaling 1",
        "linsvm's registry: SolverSpec.threads = "
        + ", ".join(f"{SOLVERS[k].threads} for -s {k}" for k in (1, 3))
        + " (linsvm.train passes n_jobs to the sub-problem's Subproblem.n_threads either way)",
        f"synthetic-text: {args.synthetic_rows:,} training rows",
    ])
    if args.quick:
        header.insert(-1, "- **smoke run** (`--quick`): small data, few repeats; the figures "
                          "show that the script works, not how fast anything is")
    results: list[DatasetResult] = []
    capacity = [("start", two_thread_capacity())]
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
        key = dataset_key(name, args.synthetic_rows)
        results.append(bench_dataset(ds, key, tools, cache, args))
        capacity.append((f"after {name}", two_thread_capacity()))
        del ds
        gc.collect()
    notes.append(f"total benchmark time {time.perf_counter() - started:.0f} s; load average "
                 "at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    header.insert(-1, "- two-thread capacity of the machine (bench_reader's compute kernel on 2 "
                      "threads vs 1: 2.00 on an idle 2-core machine, 1.00 when others hold a "
                      "core, and then every 2-thread figure here means nothing): "
                      + ", ".join(f"{c:.2f} {when}" for when, c in capacity))
    header += ["`lscpu | head`:", "", "```", *lscpu_head(), "```", ""]
    write_report(report(results, [t.name for t in tools], header, notes), args.out)


if __name__ == "__main__":
    main()
