"""The dual coordinate descent on one GPU (``device="cuda"``): how fast does it reach a relative
primal accuracy of 1e-2, 1e-3 and 1e-5, against Snap ML's GPU solver and linsvm on the CPU?

Run from the repository root on a machine with an NVIDIA GPU, numba-cuda and (for the peer)
snapml installed; about 5 minutes on one H100 with 16 cores (benchmarks/README.md says how
to run it on a lent GPU machine)::

    python -m benchmarks.bench_gpu [--datasets pypi-recent,synthetic-text]
        [--synthetic-rows 3000000] [--losses 1,3] [--repeats 3] [--max-run-seconds 20]
        [--no-cpu] [--out benchmarks/RESULTS-gpu.md]
    python -m benchmarks.bench_gpu --smoke    # numba-cuda's simulator, tiny data, no peers

The problem: C = 1, no bias, the L2-loss SVM (``-s 1``) and the L1-loss SVM (``-s 3``). Tools:
linsvm on the GPU (``linsvm.train(..., device="cuda")``), Snap ML on the GPU
(``SupportVectorMachine(use_gpu=True)``, imported in this process only) and linsvm on one CPU
thread. Timing is ``benchmarks/harness.py``'s tolerance sweep (``ToolBench``) with the targets
1e-2, 1e-3 and 1e-5: each tool's tolerance from loose to tight, one probe a setting up to the
first reaching 1e-5, then ``--repeats`` runs of the settings within 1.5x of the fastest for a
target; the time to a target is the smallest median. A run is the training call on the CSR
matrix in host memory: linsvm's copy of the rows to the GPU, its final w recomputed on the
host and its primal/dual values included; Snap ML's conversion and copy inside ``fit``
included. The kernels are compiled before any timing (a warm-up fit). Every ``w`` is scored
afterwards by ``linsvm.objective.primal_value`` against P*, the lowest primal of the session,
first from a tight GPU run certified by its duality gap (cached in the scratch folder's
``pstar-gpu.json``), then lowered by any run. A tool that cannot run (no snapml) is named in
the report; without a GPU the script says so and exits.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and "--smoke" in sys.argv[1:]:
    # before anything imports numba: the kernels then run under numba-cuda's simulator
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import argparse
import time
import warnings
from contextlib import contextmanager

import numpy as np

from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE

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
    PSTAR_GAP_TARGET,
    Reference,
    ReferenceCache,
    ToolBench,
    best_for_target,
    dataset_key,
)
from .peers import (
    LINSVM_SWEEP_MAX_ITER,
    LOSS_NAMES,
    SNAP_SWEEP_MAX_ITER,
    LinsvmTool,
    Setting,
    SnapMLTool,
    Tool,
)

TARGETS = (1e-2, 1e-3, 1e-5)
DATASETS = ("pypi-recent", SYNTHETIC)
DEFAULT_SYNTHETIC_ROWS = 3_000_000
# linsvm's tolerances, loose to tight (GPU and CPU alike): down to what 1e-5 needs
EPS_GRID = (3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
SNAP_TOL_GRID = (0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
# P*: the GPU solver warm-started through these tolerances until its gap certifies it
PSTAR_EPS = (1e-3, 1e-5, 1e-7, 1e-9)
PSTAR_CACHE = "pstar-gpu.json"
LOSS_SHORT = {LOSS_SQUARED_HINGE: "-s 1", LOSS_HINGE: "-s 3"}
SMOKE = {"datasets": "smoke", "repeats": 1, "losses": "1"}
SMOKE_EPS_GRID = (0.1, 1e-3, 1e-6)
SMOKE_BLOCK = 8  # features in the hot block
# (the block's Newton steps are many launches, slow under the simulator: its eps = 1e-3
# already reaches 1e-5 on the smoke data)
SMOKE_BLOCK_EPS_GRID = (0.1, 1e-3)
SMOKE_SNAP_TOL_GRID = (1e-3,)


class LinsvmGPU(LinsvmTool):
    """``linsvm.train(..., device="cuda")``, its tolerance swept down to ``EPS_GRID``'s end."""

    name = "linsvm GPU"
    train_options = {"device": "cuda"}

    def __init__(self, eps_grid=EPS_GRID) -> None:
        self.eps_grid = eps_grid
        self.figures: dict[int, dict] = {}  # by loss: what the GPU runs reported

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"eps={eps:g}", (("eps", eps), ("max_iter", LINSVM_SWEEP_MAX_ITER)))
                for eps in self.eps_grid]

    def warm_up(self) -> None:
        """The kernels compiled (or loaded from numba-cuda's cache) on 32 rows, both losses."""
        import linsvm
        from linsvm.datasets import make_text_classification

        X, y = make_text_classification(32, n_features=100, nnz_per_row=4, random_state=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", linsvm.ConvergenceWarning)
            for solver in (1, 3):
                linsvm.train(X, y, solver=solver, device="cuda", max_iter=2)

    def weights(self, loss: int, setting: Setting, model, sign: float) -> np.ndarray:
        result = model.results_[0]
        seen = self.figures.setdefault(loss, {"min_gap": np.inf, "w_error": 0.0,
                                              "min_in_flight": np.inf, "max_halvings": 0})
        seen.update({k: result.figures[k] for k in ("device", "threads_per_row",
                                                    "rows_in_flight_start")})
        # the safeguard's work: the fewest rows in flight a run ended with, the most halvings
        seen["min_in_flight"] = min(seen["min_in_flight"], result.figures["rows_in_flight"])
        seen["max_halvings"] = max(seen["max_halvings"],
                                   result.figures["rows_in_flight_halvings"])
        if np.isfinite(result.gap):
            seen["min_gap"] = min(seen["min_gap"], float(result.gap))
        seen["w_error"] = max(seen["w_error"], float(result.figures["device_w_error"]))
        return sign * model.coef_[0]


class LinsvmGPUVariant(LinsvmGPU):
    """``LinsvmGPU`` with some of ``dcd_cuda``'s module defaults (``defaults``: name -> value)
    set for its fits alone: a variant to measure against it, whose result ``figures`` it
    keeps."""

    defaults: dict = {}
    figure_names: tuple[str, ...] = ()

    def __init__(self, eps_grid=EPS_GRID, **defaults) -> None:
        super().__init__(eps_grid)
        self.defaults = {**self.defaults, **defaults}

    @contextmanager
    def variant_on(self):
        from linsvm.solvers import dcd_cuda

        before = {name: getattr(dcd_cuda, name) for name in self.defaults}
        for name, value in self.defaults.items():
            setattr(dcd_cuda, name, value)
        try:
            yield
        finally:
            for name, value in before.items():
                setattr(dcd_cuda, name, value)

    def fit(self, loss: int, setting: Setting):
        with self.variant_on():
            return super().fit(loss, setting)

    def weights(self, loss: int, setting: Setting, model, sign: float) -> np.ndarray:
        w = super().weights(loss, setting, model, sign)
        for name in self.figure_names:
            self.figures[loss][name] = model.results_[0].figures[name]
        return w


class LinsvmGPUViews(LinsvmGPUVariant):
    """The blocks' hot views on (``dcd_cuda.HOT_VIEWS``, option ``hot_views``)."""

    name = "linsvm GPU hot views"
    defaults = {"HOT_VIEWS": True}
    figure_names = ("hot_views", "flush_rounds")


class LinsvmGPUBlock(LinsvmGPUVariant):
    """The hot block on (``dcd_cuda.HOT_BLOCK``, option ``hot_block``; -s 1 here): its rows in
    flight start at ``dcd_cuda.HOT_BLOCK_ROWS_IN_FLIGHT``, its block the features shared by
    more than a few of them (--smoke: a number of features, as its few rows in flight share
    none, and one Newton step an epoch, its launches being slow under the simulator)."""

    name = "linsvm GPU hot block"
    defaults = {"HOT_BLOCK": True}
    figure_names = ("hot_block", "hot_steps")

    def supports(self, loss: int) -> bool:
        return loss == LOSS_SQUARED_HINGE

    def warm_up(self) -> None:
        """The block's kernels compiled (or loaded from numba-cuda's cache), -s 1 on 32 rows."""
        import linsvm
        from linsvm.datasets import make_text_classification

        X, y = make_text_classification(32, n_features=100, nnz_per_row=4, random_state=2)
        with self.variant_on(), warnings.catch_warnings():
            warnings.simplefilter("ignore", linsvm.ConvergenceWarning)
            linsvm.train(X, y, solver=1, device="cuda", max_iter=2)


class LinsvmCPU(LinsvmTool):
    name = "linsvm CPU 1t"

    def __init__(self, eps_grid=EPS_GRID) -> None:
        self.eps_grid = eps_grid

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"eps={eps:g}", (("eps", eps), ("max_iter", LINSVM_SWEEP_MAX_ITER)))
                for eps in self.eps_grid]


class SnapGPU(SnapMLTool):
    def __init__(self, tol_grid=SNAP_TOL_GRID) -> None:
        super().__init__(use_gpu=True, name="Snap ML GPU")
        self.tol_grid = tol_grid

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"tol={tol:g}", (("tol", tol), ("max_iter", SNAP_SWEEP_MAX_ITER)))
                for tol in self.tol_grid]


def gpu_reference(ds, loss: int, budget: float) -> Reference:
    """P* from the GPU solver, warm-started through ``PSTAR_EPS`` until its duality gap
    certifies ``PSTAR_GAP_TARGET`` (or the budget runs out)."""
    from linsvm.solvers import SOLVERS, Subproblem

    solver = SOLVERS[1 if loss == LOSS_SQUARED_HINGE else 3]
    ref = Reference(budget=budget)
    cost = np.ones(ds.X.shape[0])
    alpha = None
    t0 = time.perf_counter()
    for eps in PSTAR_EPS:
        sub = Subproblem(ds.X, ds.y, cost, eps=eps, max_iter=10_000, alpha0=alpha)
        sol = solver.solve_on("cuda")(sub, None)
        alpha = sol.alpha
        ref.offer(sol.primal, sol.dual, f"linsvm GPU eps={eps:g}")
        if ref.certified_gap <= PSTAR_GAP_TARGET or time.perf_counter() - t0 > budget:
            break
    ref.seconds = time.perf_counter() - t0
    return ref


def smoke_dataset() -> Dataset:
    """80 text-like rows of about 6 non-zeros in 2000 features: seconds under the simulator."""
    from linsvm.datasets import make_text_classification

    X, y = make_text_classification(80, n_features=2000, nnz_per_row=6, random_state=1)
    return Dataset("smoke", X, np.where(y == y[0], 1.0, -1.0), note="make_text_classification")


def gpu_available() -> str:
    """"" when a GPU solve can run, else why not (one line)."""
    from linsvm.solvers.dcd_cuda import check_available

    try:
        check_available()
    except InvalidInputError as error:
        return str(error)
    return ""


def snapml_missing() -> str:
    try:
        import snapml  # noqa: F401
    except ImportError as error:
        return f"Snap ML GPU skipped: {error}"
    return ""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--synthetic-rows", type=int, default=DEFAULT_SYNTHETIC_ROWS)
    parser.add_argument("--losses", default="1,3", help="LIBLINEAR solver numbers: 1 and/or 3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-run-seconds", type=float, default=20.0)
    parser.add_argument("--pstar-budget", type=float, default=60.0)
    parser.add_argument("--no-cpu", action="store_true", help="leave out linsvm on the CPU")
    parser.add_argument("--no-views", action="store_true",
                        help="leave out linsvm GPU with hot views (option hot_views)")
    parser.add_argument("--no-block", action="store_true",
                        help="leave out linsvm GPU with the hot block (option hot_block, -s 1)")
    parser.add_argument("--smoke", action="store_true",
                        help="numba-cuda's simulator on tiny data, no Snap ML (checks the script)")
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-gpu.md"))
    args = parser.parse_args(argv)
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.smoke:
        # the simulator's block threads wait on each other at every syncthreads while its
        # manager polls them: a short GIL switch interval makes that 10x faster
        sys.setswitchinterval(1e-5)
    why_not = gpu_available()
    if why_not:
        print(f"bench_gpu: cannot run: {why_not}", file=sys.stderr)
        return 1
    losses = [LOSS_SQUARED_HINGE if s.strip() == "1" else LOSS_HINGE
              for s in args.losses.split(",")]
    gpu = LinsvmGPU(SMOKE_EPS_GRID if args.smoke else EPS_GRID)
    tools: list[Tool] = [gpu]
    if not args.no_views:
        tools.append(LinsvmGPUViews(SMOKE_EPS_GRID if args.smoke else EPS_GRID))
    if not args.no_block:
        tools.append(LinsvmGPUBlock(SMOKE_BLOCK_EPS_GRID, HOT_BLOCK=SMOKE_BLOCK,
                                    DEFAULT_HOT_STEPS=1) if args.smoke
                     else LinsvmGPUBlock(EPS_GRID))
    notes: list[str] = []
    missing = snapml_missing() if not args.smoke else "Snap ML GPU skipped: --smoke"
    if missing:
        notes.append(missing)
    else:
        tools.append(SnapGPU())
    if not args.no_cpu:
        tools.append(LinsvmCPU(SMOKE_EPS_GRID if args.smoke else EPS_GRID))
    for tool in tools:
        tool.warm_up()
    cache = ReferenceCache(scratch_dir() / PSTAR_CACHE)
    header = report_header(
        "The dual coordinate descent on one GPU: time to relative primal accuracy", "bench_gpu",
        [f"targets {', '.join(f'{t:g}' for t in TARGETS)}; C = 1, no bias; {args.repeats} "
         "repeats; times in seconds, from CSR in host memory (copy to the GPU included)"],
    )
    sections: list[str] = []
    for name in args.datasets.split(","):
        ds = smoke_dataset() if args.smoke else load_dataset(name, args.synthetic_rows)
        if ds is None:
            notes.append(f"{name} skipped: its data file is not there")
            continue
        key = dataset_key(name, args.synthetic_rows)
        for tool in tools:
            tool.prepare(ds.X, ds.y)
        for loss in losses:
            ref = cache.get(key, loss)
            if ref is None or ref.certified_gap > PSTAR_GAP_TARGET:
                ref = gpu_reference(ds, loss, args.pstar_budget)
                cache.put(key, loss, ref)
            rows = []
            for tool in tools:
                if not getattr(tool, "supports", lambda _: True)(loss):
                    continue
                bench = ToolBench(tool, ds, loss, ref, args.repeats, args.max_run_seconds,
                                  targets=TARGETS)
                bench.probe(None)
                bench.repeat_best()
                rows.append((tool, bench))
            # P* may have been lowered by a run: the accuracies are read after all runs
            sections += problem_section(ds, loss, ref, rows)
            # (after every problem: a run cut short by a lent machine's time keeps what it has)
            write_report(report(header, notes, tools, gpu, sections), args.out)
        for tool in tools:
            tool.release()
    write_report(report(header, notes, tools, gpu, sections), args.out)
    return 0


def report(header: list[str], notes: list[str], tools: list[Tool], gpu: LinsvmGPU,
           sections: list[str]) -> list[str]:
    """The report's lines: its header (``report_header``'s) with the notes, the problems
    measured so far, the GPU runs' figures."""
    header = header[:-1] + [f"- {note}" for note in notes] + [""]
    gpu_lines = [f"- linsvm GPU, {LOSS_SHORT[loss]}: {fig['device']}, {fig['threads_per_row']} "
                 f"threads a row, {fig['rows_in_flight_start']} rows in flight at the start; "
                 f"halvings (epochs undone): at most {fig['max_halvings']} in a run, "
                 f"leaving at least {fig['min_in_flight']} rows in flight; smallest duality gap "
                 f"{fmt_sci(fig['min_gap'])}, max |GPU's running w - w(alpha)| / max |w| "
                 f"{fmt_sci(fig['w_error'])}"
                 for loss, fig in sorted(gpu.figures.items())]
    for tool in tools:
        if isinstance(tool, LinsvmGPUBlock):
            gpu_lines += [f"- linsvm GPU hot block, {LOSS_SHORT[loss]}: {fig['hot_block']} "
                          f"weights in the block, Newton steps an epoch: {fig['hot_steps']}, "
                          f"{fig['rows_in_flight_start']} rows in flight at the start; "
                          f"halvings at most {fig['max_halvings']} in a run, leaving at least "
                          f"{fig['min_in_flight']} rows in flight; smallest duality gap "
                          f"{fmt_sci(fig['min_gap'])}, max |GPU's running w - returned w| / "
                          f"max |w| {fmt_sci(fig['w_error'])}"
                          for loss, fig in sorted(tool.figures.items())]
        if isinstance(tool, LinsvmGPUViews):
            gpu_lines += [f"- linsvm GPU hot views, {LOSS_SHORT[loss]}: {fig['hot_views']} hot "
                          f"weights a block's view, flushed every {fig['flush_rounds']} rounds; "
                          f"halvings at most {fig['max_halvings']} in a run, leaving at least "
                          f"{fig['min_in_flight']} rows in flight; max |GPU's running w - "
                          f"w(alpha)| / max |w| {fmt_sci(fig['w_error'])}"
                          for loss, fig in sorted(tool.figures.items())]
    return header + sections + ["## The GPU runs", ""] + gpu_lines


def problem_section(ds, loss: int, ref: Reference, rows) -> list[str]:
    """One (dataset, loss): each tool's time to each target (its setting and iterations), the
    best accuracy it reached, and its times over linsvm GPU's."""
    best = {tool.name: [best_for_target(bench.runs, ref, t) for t in TARGETS]
            for tool, bench in rows}
    gpu_times = [None if m is None else m.median_time for m in best["linsvm GPU"]]
    table = []
    for tool, bench in rows:
        cells = [tool.name]
        for m in best[tool.name]:
            cells.append("n/a" if m is None else
                         f"{fmt_seconds(m.median_time)} ({m.setting.label}, {m.n_iter} it)")
        reached = min(ref.relative_accuracy(m.primal) for m in bench.runs.values())
        cells.append(fmt_sci(reached))
        cells.append(" / ".join(fmt_ratio(None if m is None else m.median_time, g)
                                for m, g in zip(best[tool.name], gpu_times, strict=True)))
        table.append(cells)
    header = (["tool"] + [f"to {t:g}" for t in TARGETS]
              + ["best reached", "time / linsvm GPU's"])
    return [f"## {ds.describe()}, {LOSS_NAMES[loss]}", "",
            f"P* = {ref.primal:.10g} ({ref.source}; certified relative gap "
            f"{fmt_sci(ref.certified_gap)})", ""] + markdown_table(header, table) + [""]


if __name__ == "__main__":
    sys.exit(main())
