"""``linsvm compare``: the solvers of the linear SVM raced on one problem, as in the ICML 2008 seed.

    linsvm compare [options] training_set_file test_set_file

Each solver of the table ``SOLVERS`` (dual coordinate descent with and without shrinking for
both losses, Pegasos and the SGD variants for the L1 loss, primal coordinate descent and the
primal Newton method for the L2 loss) is called directly, not through ``linsvm.train``, on the
same problem (one C, the bias as given), with a per-iteration hook. The outcome:

- per loss, a table: the time each solver needs to bring the relative primal accuracy
  (P(w) - P*)/P* to 1e-2 and to 1e-3, where it ends (relative and test accuracy), its
  iterations, and what recording it cost;
- figures: relative primal difference (log scale) and test accuracy against training time,
  one curve per solver, for each loss (``plot`` extra: matplotlib);
- the raw curves as JSON, so that the figures can be redrawn (``ComparisonResult.from_json``,
  ``plot_figures``).

Measuring without distorting the measured (DESIGN.md section 4):

- The hook stops the clock: it reads the clock on entry and on exit, and the time spent inside
  it is taken off the solver's elapsed time. The solver's time at an iteration is thus its own
  work only. The clock is ``perf_counter`` (wall time), or with ``clock="cpu"`` the thread's
  CPU time, which other processes on a shared machine do not inflate; either way the report
  notes runs that did not have the CPU to themselves (CPU time / wall time < 0.9).
- Inside the hook nothing is evaluated: ``w`` is copied (a snapshot) when the solver time has
  grown by at least ``SNAPSHOT_SPACING`` (5%) since the last snapshot, which keeps every early
  iteration and a log-spaced sample later, and the final ``w`` is always kept. Every snapshot is
  evaluated after the run: P(w) by ``linsvm.objective.primal_value`` (the one definition) and
  the accuracy on the test set.
- The overhead is reported: the total time spent in the hook, and the same solver run again
  without a hook for the same number of iterations (same seed: the same trajectory) against
  the recorded run's corrected time.
- Every solver is first run on a few rows so that Numba's compilation or cache loading is not
  timed. A solver stops at its own tight tolerance or when its corrected time reaches
  ``max_time`` (the hook raises to end it).

P* per loss is the lowest primal value seen: the solvers' snapshots and a tight reference run
(DCD warm-started through shrinking tolerances for up to ``pstar_time`` seconds), whose dual value
D certifies it: the optimum lies in [D, P*], reported as (P* - D)/D.

Labels: two classes, LIBLINEAR's order (the first label seen is +1, except that -1/+1 data
keeps +1 positive: ``linsvm.data.group_labels``).
"""

from __future__ import annotations

import gc
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .cli import UsageError, _number
from .data import as_csr, check_labels, group_labels
from .errors import InvalidInputError
from .objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value, svm_objectives

# ----------------------------------------------------------------------------- settings

TARGETS = (1e-2, 1e-3)
DEFAULT_MAX_TIME = 60.0
# A snapshot of w is kept when the solver's time has grown by this fraction since the last one.
SNAPSHOT_SPACING = 0.05
# The solver clocks: wall time (the default), or the thread's CPU time, which other processes
# on a busy machine do not inflate (every solver runs in the calling thread).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
# Below this CPU time / wall time a run is reported as disturbed by other processes.
CPU_SHARE_WARNING = 0.9
# curves.json keeps at most this many hook calls of each run (log-spaced: the early ones all).
TRACE_POINTS_JSON = 400
# Live progress line: at most this many updates per second.
PROGRESS_UPDATES_PER_SECOND = 4.0
# The compared solvers' tolerances: tight, so that the curves go well below 1e-3 (the time
# budget ends those that would take too long).
DCD_EPS = 1e-5
NEWTON_EPS = 1e-10
PCD_EPS = 1e-8
SGD_DELTA = 1e-6
# The iteration cap of a recorded run: out of reach, the time budget stops a solver first.
UNLIMITED_ITER = 10**7
# The reference run for P*: DCD through these tolerances, each stage warm-started.
PSTAR_EPS_STAGES = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
PSTAR_GAP_TARGET = 1e-9
PSTAR_CHUNK_ITER = 50
# Rows of the warm-up problem (compiles or loads every kernel before anything is timed).
WARMUP_ROWS = 200

LOSS_KEYS = {LOSS_HINGE: "l1", LOSS_SQUARED_HINGE: "l2"}
LOSS_TITLES = {"l1": "L1-loss SVM (hinge)", "l2": "L2-loss SVM (squared hinge)"}


class _OutOfTime(Exception):
    """Raised by the recording hook when a solver's time budget is spent."""


# ----------------------------------------------------------------------------- the problem


@dataclass
class Problem:
    """One binary problem as every solver gets it: CSR X, y in {-1, +1}, one C, the bias."""

    X: sp.csr_matrix
    y: np.ndarray  # (l,) float64, +1/-1
    C: float
    bias: float

    def __post_init__(self) -> None:
        self.C_rows = np.full(self.X.shape[0], float(self.C))

    @property
    def n_weights(self) -> int:
        return self.X.shape[1] + (1 if self.bias >= 0 else 0)


# The hook every solver gets (after adaptation): hook(iteration, w, progress).
Hook = Callable[[int, np.ndarray, float], None]


@dataclass
class RunOutcome:
    """What a solver returns to the comparison: final w, iterations done, why it stopped."""

    w: np.ndarray
    n_iter: int
    stop: str


@dataclass(frozen=True)
class SolverEntry:
    """One comparable solver: its loss, how it is labelled, and how to run it.

    ``run(problem, hook, max_iter, seed)`` runs it from w = 0 for at most ``max_iter``
    iterations (outer iterations, Newton iterations or epochs: the unit of its hook calls),
    calling ``hook(iteration, w, progress)`` after each when the hook is not None.
    """

    name: str
    loss: int
    label: str
    progress_name: str  # what the progress value of its hook measures
    run: Callable[[Problem, Hook | None, int, int], RunOutcome]
    color: str
    marker: str
    linestyle: str = "-"


def _dcd(loss: int, shrinking: bool):
    def run(p: Problem, hook: Hook | None, max_iter: int, seed: int) -> RunOutcome:
        from .solvers.dcd import solve_svm_dual

        def on_iteration(k, n_active, pg_max, pg_min, w, alpha):
            hook(k, w, pg_max - pg_min)

        sol = solve_svm_dual(
            p.X, p.y, p.C_rows, loss, p.bias, DCD_EPS, max_iter, shrinking=shrinking,
            seed=seed, on_iteration=None if hook is None else on_iteration,
        )  # fmt: skip
        return RunOutcome(sol.w, sol.n_iter, "converged" if sol.converged else "max_iter")

    return run


def _newton(p: Problem, hook: Hook | None, max_iter: int, seed: int) -> RunOutcome:
    from .solvers.newton import solve_primal_newton

    sol = solve_primal_newton(
        p.X, p.y, p.C_rows, LOSS_SQUARED_HINGE, p.bias, NEWTON_EPS, max_iter, on_iteration=hook
    )
    return RunOutcome(sol.w, sol.n_iter, sol.stop_reason)


def _pegasos(p: Problem, hook: Hook | None, max_iter: int, seed: int) -> RunOutcome:
    from .solvers.sgd import solve_pegasos

    sol = solve_pegasos(p.X, p.y, p.C, p.bias, max_epochs=max_iter, seed=seed, on_iteration=hook)
    return RunOutcome(sol.w, sol.n_epochs, "converged" if sol.converged else "max_iter")


def _sgd(variant: str):
    def run(p: Problem, hook: Hook | None, max_iter: int, seed: int) -> RunOutcome:
        from .solvers.sgd import solve_sgd

        sol = solve_sgd(
            p.X, p.y, p.C, p.bias, variant=variant, delta=SGD_DELTA, max_epochs=max_iter,
            seed=seed, on_iteration=hook,
        )  # fmt: skip
        return RunOutcome(sol.w, sol.n_epochs, "converged" if sol.converged else "max_iter")

    return run


def _pcd(p: Problem, hook: Hook | None, max_iter: int, seed: int) -> RunOutcome:
    from .solvers.pcd import solve_pcd

    sol = solve_pcd(p.X, p.y, p.C_rows, p.bias, PCD_EPS, max_iter, seed=seed, on_iteration=hook)
    return RunOutcome(sol.w, sol.n_iter, "converged" if sol.converged else "max_iter")


# The solver table: adding a solver is one line.
SOLVERS: dict[str, SolverEntry] = {
    e.name: e
    for e in [
        SolverEntry("dcd-l1", LOSS_HINGE, "DCD-L1 (shrinking)", "PG gap", _dcd(LOSS_HINGE, True), "tab:blue", "o"),  # noqa: E501
        SolverEntry("dcd-l1-noshrink", LOSS_HINGE, "DCD-L1 (no shrinking)", "PG gap", _dcd(LOSS_HINGE, False), "tab:cyan", "s", "--"),  # noqa: E501
        SolverEntry("pegasos", LOSS_HINGE, "Pegasos", "(no measure)", _pegasos, "tab:red", "^"),  # noqa: E501
        SolverEntry("sgd-s", LOSS_HINGE, "SGD-S", "rel. acc. bound", _sgd("s"), "tab:orange", "v"),  # noqa: E501
        SolverEntry("sgd-m", LOSS_HINGE, "SGD-M", "rel. acc. bound", _sgd("m"), "tab:brown", "D"),  # noqa: E501
        SolverEntry("sgd-r", LOSS_HINGE, "SGD-R", "(no measure)", _sgd("r"), "tab:pink", "P"),  # noqa: E501
        SolverEntry("dcd-l2", LOSS_SQUARED_HINGE, "DCD-L2 (shrinking)", "PG gap", _dcd(LOSS_SQUARED_HINGE, True), "tab:blue", "o"),  # noqa: E501
        SolverEntry("dcd-l2-noshrink", LOSS_SQUARED_HINGE, "DCD-L2 (no shrinking)", "PG gap", _dcd(LOSS_SQUARED_HINGE, False), "tab:cyan", "s", "--"),  # noqa: E501
        SolverEntry("pcd", LOSS_SQUARED_HINGE, "PCD (primal CD)", "sweep |g|/|g0|", _pcd, "tab:green", "^"),  # noqa: E501
        SolverEntry("newton-l2", LOSS_SQUARED_HINGE, "Newton (primal)", "|g|/|g0|", _newton, "tab:purple", "D"),  # noqa: E501
    ]
}  # fmt: skip
# The solvers a comparison runs by default: the seed's lineup (SGD-R only on request).
DEFAULT_SOLVERS = (
    "dcd-l1", "dcd-l1-noshrink", "pegasos", "sgd-s", "sgd-m",
    "dcd-l2", "dcd-l2-noshrink", "pcd", "newton-l2",
)  # fmt: skip
# The module each solver lives in (those still missing are left out of the defaults).
_MODULES = {"pegasos": "sgd", "sgd-s": "sgd", "sgd-m": "sgd", "sgd-r": "sgd", "pcd": "pcd"}


def solver_available(name: str) -> bool:
    """Whether the module of solver ``name`` exists in this installation."""
    import importlib.util

    module = _MODULES.get(name)
    return module is None or importlib.util.find_spec(f"linsvm.solvers.{module}") is not None


def check_solver_names(solvers: Sequence[str] | None) -> list[str]:
    """The solvers to run, validated (default: ``DEFAULT_SOLVERS`` that are installed)."""
    if solvers is None:
        return [s for s in DEFAULT_SOLVERS if solver_available(s)]
    names = list(solvers)
    if not names:
        raise InvalidInputError("no solver given")
    unknown = [s for s in names if s not in SOLVERS]
    if unknown:
        raise InvalidInputError(f"unknown solver {unknown[0]!r}; valid: {', '.join(SOLVERS)}")
    missing = [s for s in names if not solver_available(s)]
    if missing:
        raise InvalidInputError(
            f"solver {missing[0]!r} is not available (module linsvm.solvers."
            f"{_MODULES[missing[0]]} is missing)"
        )
    if len(set(names)) != len(names):
        raise InvalidInputError(f"a solver is listed twice: {', '.join(names)}")
    return names


# ----------------------------------------------------------------------------- recording


class _Recorder:
    """The hook of a recorded run: pauses the clock, keeps the trace and snapshots of w."""

    def __init__(
        self, entry: SolverEntry, max_time: float, live: bool, clock: Callable[[], float]
    ) -> None:
        self.entry = entry
        self.clock = clock
        self.max_time = max_time
        self.live = live
        self.start = 0.0
        self.hook_seconds = 0.0
        self.trace: list[tuple[float, int, float]] = []  # (solver time, iteration, progress)
        self.snapshots: list[tuple[float, int, np.ndarray]] = []
        self._last_snapshot = 0.0
        self._next_live = 0.0

    def begin(self, n_weights: int) -> None:
        self.snapshots.append((0.0, 0, np.zeros(n_weights)))
        self.start = self.clock()

    def elapsed(self) -> float:
        """The solver's time so far: clock time since the start minus the time in the hook."""
        return self.clock() - self.start - self.hook_seconds

    def __call__(self, iteration: int, w: np.ndarray, progress: float) -> None:
        entered = self.clock()
        t = entered - self.start - self.hook_seconds
        self.trace.append((t, int(iteration), float(progress)))
        out_of_time = t >= self.max_time
        if out_of_time or t - self._last_snapshot >= SNAPSHOT_SPACING * t:
            self.snapshots.append((t, int(iteration), np.array(w, dtype=np.float64, copy=True)))
            self._last_snapshot = t
        if self.live and entered >= self._next_live:
            self._next_live = entered + 1.0 / PROGRESS_UPDATES_PER_SECOND
            measure = (
                f", {self.entry.progress_name} {progress:.3g}" if math.isfinite(progress) else ""
            )
            _progress_line(f"{self.entry.name}: iteration {iteration}{measure}, {t:.2f} s")
        self.hook_seconds += self.clock() - entered
        if out_of_time:
            raise _OutOfTime

    def finish(self, outcome: RunOutcome | None, seconds: float) -> None:
        """Keep the final w (``outcome`` None: the budget ended the run inside the hook)."""
        if outcome is None:
            return
        _, last_iter, last_w = self.snapshots[-1]
        if self.trace and last_iter == outcome.n_iter and np.array_equal(last_w, outcome.w):
            return  # the last hook call saw the final w already
        # the time of the last hook call when it saw the final iteration (the solver's closing
        # work, such as computing its own objective values, is no part of reaching that w)
        t = self.trace[-1][0] if self.trace and self.trace[-1][1] == outcome.n_iter else seconds
        if t <= self.snapshots[-1][0]:  # w changed after the last hook call
            t = seconds
        self.snapshots.append((t, outcome.n_iter, np.array(outcome.w, copy=True)))


def _progress_line(text: str) -> None:
    sys.stderr.write("\r" + text[:110].ljust(110))
    sys.stderr.flush()


# ----------------------------------------------------------------------------- results


@dataclass
class Reference:
    """What is known of the optimum of one loss: P* (lowest primal seen) >= optimum >= dual."""

    primal: float = math.inf
    dual: float = -math.inf
    source: str = ""
    seconds: float = 0.0  # time of the tight reference run

    def offer(self, primal: float, source: str, dual: float | None = None) -> None:
        if primal < self.primal:
            self.primal = float(primal)
            self.source = source
        if dual is not None and dual > self.dual:
            self.dual = float(dual)

    @property
    def certified_gap(self) -> float:
        """(P* - D)/D: how far P* may lie above the true optimum, relatively."""
        if not (math.isfinite(self.dual) and self.dual > 0):
            return math.inf
        return (self.primal - self.dual) / self.dual


@dataclass
class SolverRun:
    """One solver's recorded run, evaluated: its curves and its overhead figures."""

    name: str
    loss: str  # "l1" or "l2"
    label: str
    progress_name: str
    times: np.ndarray  # solver seconds at each snapshot (0 for the initial w = 0)
    iterations: np.ndarray
    primal: np.ndarray  # P(w) at each snapshot
    test_accuracy: np.ndarray  # fraction of test rows right at each snapshot
    trace: np.ndarray  # (k, 3): solver seconds, iteration, progress at every hook call
    n_iter: int
    stop: str  # "converged", "max_iter", "time budget", ...
    seconds: float  # the recorded run's solver time (hook time taken off)
    hook_seconds: float  # time spent in the hook (snapshots, progress line)
    unhooked_seconds: float  # the same iterations run again without a hook (NaN: not run)
    relative: np.ndarray = field(default_factory=lambda: np.empty(0))  # (P - P*)/P*
    # CPU time / wall time of the recorded and of the unhooked run: below 1, other processes
    # took the CPU for a while and the times are inflated.
    cpu_share: float = math.nan
    cpu_share_unhooked: float = math.nan

    def time_to(self, target: float) -> float | None:
        """Solver time of the first snapshot at relative accuracy <= target (None: never)."""
        hits = np.flatnonzero(self.relative <= target)
        return float(self.times[hits[0]]) if hits.size else None

    def to_json(self) -> dict:
        """The run as JSON-ready lists; the hook trace thinned to ``TRACE_POINTS_JSON``."""
        k = self.trace.shape[0]
        keep = np.unique(np.round(np.geomspace(1, k, min(k, TRACE_POINTS_JSON))).astype(int) - 1)
        trace = self.trace[keep] if k else self.trace
        return {
            "loss": self.loss, "label": self.label, "progress_name": self.progress_name,
            "times": _list(self.times, 7), "iterations": self.iterations.tolist(),
            "primal": _list(self.primal), "relative": _list(self.relative, 7),
            "test_accuracy": _list(self.test_accuracy, 7),
            "trace": {"times": _list(trace[:, 0], 7),
                      "iterations": trace[:, 1].astype(np.int64).tolist(),
                      "progress": _list(trace[:, 2], 4)},
            "n_iter": self.n_iter, "stop": self.stop, "seconds": _num(self.seconds),
            "hook_seconds": _num(self.hook_seconds),
            "unhooked_seconds": _num(self.unhooked_seconds),
            "cpu_share": _num(self.cpu_share),
            "cpu_share_unhooked": _num(self.cpu_share_unhooked),
        }  # fmt: skip

    @classmethod
    def from_json(cls, name: str, d: dict) -> SolverRun:
        tr = d["trace"]
        trace = np.column_stack([_arr(tr["times"]), _arr(tr["iterations"]), _arr(tr["progress"])])
        return cls(
            name, d["loss"], d["label"], d["progress_name"], _arr(d["times"]),
            np.asarray(d["iterations"], dtype=np.int64), _arr(d["primal"]),
            _arr(d["test_accuracy"]), trace.reshape(-1, 3), int(d["n_iter"]), d["stop"],
            _float(d["seconds"]), _float(d["hook_seconds"]), _float(d["unhooked_seconds"]),
            _arr(d["relative"]), _float(d.get("cpu_share")),
            _float(d.get("cpu_share_unhooked")),
        )  # fmt: skip


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _list(a: np.ndarray, digits: int | None = None) -> list:
    """Floats as a JSON list (None for NaN/inf), rounded to ``digits`` significant digits."""
    values = [_num(v) for v in np.asarray(a, dtype=np.float64).tolist()]
    if digits is None:
        return values
    return [None if v is None else float(f"{v:.{digits}g}") for v in values]


def _float(x) -> float:
    return math.nan if x is None else float(x)


def _arr(values) -> np.ndarray:
    return np.array([_float(v) for v in values], dtype=np.float64)


@dataclass
class ComparisonResult:
    """Everything a comparison measured: the problem, P* per loss, every solver's run."""

    dataset: str
    n_rows: int
    n_features: int
    nnz: int
    n_test: int
    C: float
    bias: float
    max_time: float
    references: dict[str, Reference]  # "l1" / "l2" -> P*
    runs: dict[str, SolverRun]  # solver name -> run, in the order run
    notes: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    clock: str = "wall"  # the solver clock: "wall" or "cpu" (see CLOCKS)

    def losses(self) -> list[str]:
        return [k for k in ("l1", "l2") if any(r.loss == k for r in self.runs.values())]

    def table(self, loss: str) -> tuple[list[str], list[list[str]]]:
        """(header, rows) of the per-loss table."""
        header = [
            "solver", "time to 1e-2 (s)", "time to 1e-3 (s)", "final rel. acc.",
            "final test acc.", "iterations", "stopped by", "recorded run (s)",
            "same run, no hook (s)", "time in hook (s)",
        ]  # fmt: skip
        rows = []
        for r in self.runs.values():
            if r.loss != loss:
                continue
            reach = []
            for target in TARGETS:
                t = r.time_to(target)
                reach.append(_fmt_s(t) if t is not None else f"not reached in {_fmt_s(r.seconds)}")
            rows.append([
                r.label, *reach, _fmt_e(r.relative[-1]), _fmt_pct(r.test_accuracy[-1]),
                str(r.n_iter), r.stop, _fmt_s(r.seconds), _fmt_s(r.unhooked_seconds),
                f"{_fmt_s(r.hook_seconds)} ({len(r.times) - 1} snapshots)",
            ])  # fmt: skip
        return header, rows

    def markdown(self, figure_prefix: str | None = "") -> list[str]:
        """The report: problem, P* per loss, one table per loss, figure links.

        Figures are linked as ``figure_prefix + file name`` (None: no links).
        """
        bias = "none" if self.bias < 0 else f"{self.bias:g}"
        lines = [
            f"**{self.dataset}**: {self.n_rows:,} training rows, {self.n_features:,} features, "
            f"{self.nnz:,} non-zeros; {self.n_test:,} test rows; C = {self.C:g}, bias {bias}; "
            f"time budget {self.max_time:g} s per solver; times are "
            f"{'wall-clock' if self.clock == 'wall' else 'CPU'} seconds.",
            "",
        ]
        for loss in self.losses():
            ref = self.references[loss]
            lines += [
                f"{LOSS_TITLES[loss]}: P* = {ref.primal:.10g} (from {ref.source}); dual bound "
                f"D = {ref.dual:.10g}, (P* - D)/D = {_fmt_e(ref.certified_gap)} (reference run "
                f"{_fmt_s(ref.seconds)} s).",
                "",
            ]
            header, rows = self.table(loss)
            lines += _markdown_table(header, rows)
            lines.append("")
            if figure_prefix is not None:
                for fig in self.figures:
                    if fig.name.startswith(loss + "-"):
                        kind = "objective" if "objective" in fig.name else "test accuracy"
                        alt = f"{self.dataset} {loss.upper()} {kind}"
                        lines.append(f"![{alt}]({figure_prefix}{fig.name})")
                if any(f.name.startswith(loss + "-") for f in self.figures):
                    lines.append("")
        lines += [f"- {n}" for n in self.notes]
        return lines

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset, "n_rows": self.n_rows, "n_features": self.n_features,
            "nnz": self.nnz, "n_test": self.n_test, "C": self.C, "bias": self.bias,
            "max_time": self.max_time, "clock": self.clock,
            "references": {k: {"primal": _num(v.primal), "dual": _num(v.dual),
                               "source": v.source, "seconds": v.seconds}
                           for k, v in self.references.items()},
            "solvers": {k: r.to_json() for k, r in self.runs.items()},
            "notes": self.notes,
        }  # fmt: skip

    @classmethod
    def from_json(cls, d: dict) -> ComparisonResult:
        """A result back from ``curves.json`` (e.g. to redraw the figures)."""
        refs = {
            k: Reference(
                _float(v["primal"]),
                _float(v["dual"]) if v["dual"] is not None else -math.inf,
                v["source"],
                v["seconds"],
            )
            for k, v in d["references"].items()
        }
        runs = {k: SolverRun.from_json(k, v) for k, v in d["solvers"].items()}
        return cls(
            d["dataset"], d["n_rows"], d["n_features"], d["nnz"], d["n_test"], d["C"],
            d["bias"], d["max_time"], refs, runs, list(d.get("notes", [])),
            clock=d.get("clock", "wall"),
        )  # fmt: skip


def _fmt_s(t: float | None) -> str:
    if t is None or not math.isfinite(t):
        return "n/a"
    if t >= 100:
        return f"{t:.0f}"
    if t >= 10:
        return f"{t:.1f}"
    if t >= 0.1:
        return f"{t:.2f}"
    return f"{t:.3f}"


def _fmt_e(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return "0" if x <= 0 else f"{x:.1e}"


def _fmt_pct(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:.2f}%"


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    align = [":---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


# ----------------------------------------------------------------------------- evaluation


def _test_accuracy(X_test: sp.csr_matrix, y_test: np.ndarray, w: np.ndarray, bias: float) -> float:
    """Share of test rows on the right side (LIBLINEAR: decision > 0 predicts the +1 class)."""
    if X_test.shape[0] == 0:
        return math.nan
    n = X_test.shape[1]
    scores = X_test @ w[:n]
    if bias >= 0:
        scores = scores + bias * w[n]
    predicted = np.where(scores > 0, 1.0, -1.0)
    return float(np.mean(predicted == y_test))


def _primal(p: Problem, w: np.ndarray, loss: int) -> float:
    X = p.X
    return float(
        primal_value(X.indptr, X.indices, X.data, float(p.bias), p.y, p.C_rows,
                     np.ascontiguousarray(w, dtype=np.float64), loss)
    )  # fmt: skip


def _reference_run(p: Problem, loss: int, budget: float, seed: int, ref: Reference,
                   live: bool) -> None:  # fmt: skip
    """DCD warm-started through ``PSTAR_EPS_STAGES`` until its gap certifies P* or time's up."""
    from .solvers.dcd import solve_svm_dual

    start = time.perf_counter()
    alpha = None
    key = LOSS_KEYS[loss]
    done = False
    next_live = start
    for eps in PSTAR_EPS_STAGES:
        # in chunks of outer iterations, each warm-started from the last alpha, so that the
        # budget is checked regularly
        while not done:
            sol = solve_svm_dual(
                p.X, p.y, p.C_rows, loss, p.bias, eps, PSTAR_CHUNK_ITER, seed=seed, alpha0=alpha
            )
            alpha = sol.alpha
            primal, dual, _ = svm_objectives(p.X, p.bias, p.y, p.C_rows, sol.w, sol.alpha, loss)
            ref.offer(primal, f"reference DCD run, eps {eps:g}", dual)
            elapsed = time.perf_counter() - start
            if live and start + elapsed >= next_live:
                next_live = start + elapsed + 1.0 / PROGRESS_UPDATES_PER_SECOND
                _progress_line(
                    f"P* ({key}): DCD eps {eps:g}, (P - D)/D {_fmt_e(ref.certified_gap)}, "
                    f"{elapsed:.2f} s"
                )
            done = ref.certified_gap <= PSTAR_GAP_TARGET or elapsed > budget
            if sol.converged:
                break
        if done:
            break
    ref.seconds = time.perf_counter() - start


def _warm_up(p: Problem, names: Sequence[str], seed: int) -> None:
    """Run every solver (and the evaluation) on a few rows: compile or load the kernels."""
    X = p.X
    k = min(WARMUP_ROWS, X.shape[0])
    end = int(X.indptr[k])
    Xs = sp.csr_matrix((X.data[:end], X.indices[:end], X.indptr[: k + 1]), shape=(k, X.shape[1]))
    y = p.y[:k].copy()
    if k >= 2 and np.all(y == y[0]):
        y[0] = -y[0]
    small = Problem(Xs, y, p.C, p.bias)
    for name in names:
        entry = SOLVERS[name]
        entry.run(small, lambda it, w, progress: None, 3, seed)
        entry.run(small, None, 3, seed)
        _primal(small, np.zeros(small.n_weights), entry.loss)
    for loss in {SOLVERS[n].loss for n in names}:
        from .solvers.dcd import solve_svm_dual

        sol = solve_svm_dual(Xs, y, small.C_rows, loss, p.bias, 0.1, 3, seed=seed)
        svm_objectives(Xs, p.bias, y, small.C_rows, sol.w, sol.alpha, loss)


def _run_solver(entry: SolverEntry, p: Problem, X_test, y_test, max_time: float, seed: int,
                live: bool, check_overhead: bool, clock: str) -> SolverRun:  # fmt: skip
    """The recorded run, the unhooked rerun, and the evaluation of every snapshot."""
    now = CLOCKS[clock]
    rec = _Recorder(entry, max_time, live, now)
    gc.collect()
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    rec.begin(p.n_weights)
    try:
        outcome = entry.run(p, rec, UNLIMITED_ITER, seed)
        seconds = rec.elapsed()
        stop = outcome.stop
        n_iter = outcome.n_iter
    except _OutOfTime:
        outcome = None
        seconds = rec.trace[-1][0]
        stop = "time budget"
        n_iter = rec.trace[-1][1]
    cpu_share = (time.thread_time() - cpu0) / (time.perf_counter() - wall0)
    rec.finish(outcome, seconds)

    unhooked = cpu_share_unhooked = math.nan
    if check_overhead and n_iter > 0:
        if live:
            _progress_line(f"{entry.name}: the same {n_iter} iterations without a hook")
        gc.collect()
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        t0 = now()
        entry.run(p, None, n_iter, seed)
        unhooked = now() - t0
        cpu_share_unhooked = (time.thread_time() - cpu0) / (time.perf_counter() - wall0)

    snaps = rec.snapshots
    rec.snapshots = []
    times = np.array([s[0] for s in snaps])
    iterations = np.array([s[1] for s in snaps], dtype=np.int64)
    primal = np.empty(len(snaps))
    accuracy = np.empty(len(snaps))
    next_live = 0.0
    for k, (_, _, w) in enumerate(snaps):
        if live and time.perf_counter() >= next_live:
            next_live = time.perf_counter() + 1.0 / PROGRESS_UPDATES_PER_SECOND
            _progress_line(f"{entry.name}: evaluating snapshot {k + 1} of {len(snaps)}")
        primal[k] = _primal(p, w, entry.loss)
        accuracy[k] = _test_accuracy(X_test, y_test, w, p.bias)
    del snaps
    trace = np.array(rec.trace, dtype=np.float64).reshape(-1, 3)
    return SolverRun(
        entry.name, LOSS_KEYS[entry.loss], entry.label, entry.progress_name, times, iterations,
        primal, accuracy, trace, int(n_iter), stop, float(seconds), rec.hook_seconds, unhooked,
        cpu_share=cpu_share, cpu_share_unhooked=cpu_share_unhooked,
    )  # fmt: skip


# ----------------------------------------------------------------------------- the comparison


def binary_pm1(y_train, y_test) -> tuple[np.ndarray, np.ndarray, object]:
    """Labels as float64 +1/-1 in LIBLINEAR's order; test labels of neither class become 0.

    Returns (y_train, y_test, the label mapped to +1). Anything but two training classes is an
    InvalidInputError.
    """
    labels, cls = group_labels(y_train)
    if labels.shape[0] != 2:
        raise InvalidInputError(
            f"compare needs two classes, the training labels have {labels.shape[0]}"
            + (f" ({', '.join(f'{v:g}' for v in labels[:5].tolist())}"
               f"{', ...' if labels.shape[0] > 5 else ''})" if labels.dtype.kind in "iuf" else "")
        )  # fmt: skip
    y = np.where(cls == 0, 1.0, -1.0)
    y_test = np.asarray(y_test)
    yt = np.where(y_test == labels[0], 1.0, np.where(y_test == labels[1], -1.0, 0.0))
    return y, yt, labels[0]


def _match_columns(X: sp.csr_matrix, n_features: int) -> sp.csr_matrix:
    """X with exactly ``n_features`` columns (features unknown to training dropped)."""
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        return X[:, :n_features].tocsr()
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def compare(
    X_train,
    y_train,
    X_test,
    y_test,
    C: float = 1.0,
    solvers: Sequence[str] | None = None,
    *,
    bias: float = -1.0,
    max_time: float = DEFAULT_MAX_TIME,
    outdir: str | os.PathLike | None = None,
    quiet: bool = False,
    seed: int = 1,
    dataset: str = "data",
    pstar_time: float | None = None,
    check_overhead: bool = True,
    clock: str = "wall",
) -> ComparisonResult:
    """Race the SVM solvers on one problem; record primal value and test accuracy over time.

    X_train, X_test: sparse or dense (n_rows, n_features), converted to CSR; y_train: two
    classes (LIBLINEAR's order gives +1); y_test: the same labels. C: the cost of every row;
    solvers: names from ``SOLVERS`` (default ``DEFAULT_SOLVERS``); bias: LIBLINEAR's -B;
    max_time: each solver's budget of (corrected) seconds; pstar_time: budget of each loss's
    reference run (default 2 x max_time); check_overhead: run each solver again without a hook to
    measure what recording costs; clock: "wall" (perf_counter) or "cpu" (the thread's CPU
    time, for a machine other processes share); outdir: when given, write ``compare.md``,
    ``curves.json`` and the figures there; quiet: no progress on stderr; dataset: the name in
    titles and tables.
    """
    C = float(C)
    if not (math.isfinite(C) and C > 0):
        raise InvalidInputError(f"C must be > 0, got {C:g}")
    max_time = float(max_time)
    if not (max_time > 0):  # also NaN
        raise InvalidInputError(f"max_time must be > 0, got {max_time:g}")
    pstar_time = 2.0 * max_time if pstar_time is None else float(pstar_time)
    if not (pstar_time > 0):
        raise InvalidInputError(f"pstar_time must be > 0, got {pstar_time:g}")
    bias = float(bias)
    if not math.isfinite(bias):
        raise InvalidInputError(f"bias must be a number, got {bias}")
    if clock not in CLOCKS:
        raise InvalidInputError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    names = check_solver_names(solvers)
    X = as_csr(X_train, name="X_train")
    Xt = as_csr(X_test, name="X_test")
    if X.shape[0] == 0:
        raise InvalidInputError("no training rows")
    y_train = check_labels(y_train, X.shape[0])
    y_test = check_labels(y_test, Xt.shape[0])
    y, yt, _ = binary_pm1(y_train, y_test)
    Xt = _match_columns(Xt, X.shape[1])
    p = Problem(X, y, C, bias)
    live = not quiet and sys.stderr.isatty()

    def say(text: str) -> None:
        if not quiet:
            sys.stderr.write(("\r" if live else "") + text.ljust(110 if live else 0) + "\n")
            sys.stderr.flush()

    say(f"{dataset}: {X.shape[0]} rows, {X.shape[1]} features, {X.nnz} non-zeros; warming up")
    _warm_up(p, names, seed)

    references: dict[str, Reference] = {}
    for loss in (LOSS_HINGE, LOSS_SQUARED_HINGE):
        if any(SOLVERS[n].loss == loss for n in names):
            ref = Reference()
            _reference_run(p, loss, pstar_time, seed, ref, live)
            references[LOSS_KEYS[loss]] = ref
            say(
                f"P* ({LOSS_KEYS[loss]}) = {ref.primal:.10g}, (P* - D)/D = "
                f"{_fmt_e(ref.certified_gap)}, reference run {ref.seconds:.2f} s"
            )

    runs: dict[str, SolverRun] = {}
    for name in names:
        entry = SOLVERS[name]
        run = _run_solver(entry, p, Xt, yt, max_time, seed, live, check_overhead, clock)
        runs[name] = run
        best = int(np.argmin(run.primal))
        references[run.loss].offer(run.primal[best], f"{name} at {_fmt_s(run.times[best])} s")
        overhead = "" if not check_overhead else f", {_fmt_s(run.unhooked_seconds)} s without hook"
        say(
            f"{name}: {run.n_iter} iterations in {_fmt_s(run.seconds)} s ({run.stop}; "
            f"{_fmt_s(run.hook_seconds)} s in the hook{overhead}), final P = "
            f"{run.primal[-1]:.10g}, test accuracy {_fmt_pct(run.test_accuracy[-1])}"
        )
    for run in runs.values():
        pstar = references[run.loss].primal
        run.relative = (run.primal - pstar) / pstar

    result = ComparisonResult(
        dataset, X.shape[0], X.shape[1], int(X.nnz), Xt.shape[0], C, bias, max_time,
        references, runs, clock=clock,
    )  # fmt: skip
    result.notes.append(
        "Times are the solver's own: the time spent in the recording hook is taken off. Relative "
        "accuracy (P(w) - P*)/P*, P* the lowest primal value seen; a time to a target is that "
        f"of the first snapshot reaching it (snapshots every iteration early, then each "
        f"{100 * SNAPSHOT_SPACING:g}% of elapsed time). Relative accuracies below (P* - D)/D "
        "are distances to P*, which may itself lie that far above the optimum."
    )
    disturbed = []
    for r in runs.values():
        shares = [x for x in (r.cpu_share, r.cpu_share_unhooked) if math.isfinite(x)]
        if shares and min(shares) < CPU_SHARE_WARNING:
            disturbed.append(f"{r.name} {100 * min(shares):.0f}%")
    if disturbed:
        effect = (
            "their times are inflated"
            if clock == "wall"
            else "the CPU clock leaves the waits out, not the slowdown of shared caches and memory"
        )
        result.notes.append(
            "Other processes took the CPU for part of some runs (CPU time / wall time of the "
            f"recorded or the unhooked run): {', '.join(disturbed)}; {effect}."
        )
    if outdir is not None:
        write_outputs(result, outdir)
    return result


def write_outputs(result: ComparisonResult, outdir: str | os.PathLike) -> list[Path]:
    """Write the figures, ``compare.md`` and ``curves.json`` into ``outdir``; return the files."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    result.figures = plot_figures(result, out)
    if not result.figures:
        result.notes.append("no figures: matplotlib is missing (pip install 'linsvm[plot]')")
    (out / "compare.md").write_text("\n".join(result.markdown()).rstrip() + "\n")
    with open(out / "curves.json", "w") as f:
        json.dump(result.to_json(), f, allow_nan=False, separators=(",", ":"))
        f.write("\n")
    return [out / "compare.md", out / "curves.json", *result.figures]


# ----------------------------------------------------------------------------- figures


def plot_figures(result: ComparisonResult, outdir: str | os.PathLike, dpi: int = 100) -> list[Path]:
    """``<loss>-objective.png`` and ``<loss>-accuracy.png`` per loss; [] without matplotlib.

    Uses matplotlib's object interface on its Agg canvas (no pyplot, no global backend).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return []
    out = Path(outdir)
    files = []
    for loss in result.losses():
        runs = [r for r in result.runs.values() if r.loss == loss]
        what = f"{result.dataset}, {LOSS_TITLES[loss]}, C = {result.C:g}, {result.n_rows:,} rows"
        for kind in ("objective", "accuracy"):
            fig = Figure(figsize=(7.5, 4.6))
            FigureCanvasAgg(fig)
            ax = fig.add_subplot()
            for r in runs:
                _plot_run(ax, r, kind)
            ax.set_xscale("log")
            ax.set_xlabel(
                "training time (s, log scale)" if result.clock == "wall"
                else "training time (CPU s, log scale)"
            )  # fmt: skip
            ax.grid(True, which="major", alpha=0.3)
            if kind == "objective":
                ax.set_yscale("log")
                ax.set_ylabel("(P(w) - P*) / P*")
                for target, text in ((1e-2, "1%"), (1e-3, "0.1%")):
                    ax.axhline(target, color="0.4", linestyle=":", linewidth=1)
                    ax.annotate(text, (1.0, target), xycoords=("axes fraction", "data"),
                                xytext=(3, 0), textcoords="offset points", va="center",
                                fontsize=8, color="0.3")  # fmt: skip
                ax.set_title(f"Relative primal difference\n{what}", fontsize=10)
            else:
                ax.set_ylabel("test accuracy (%)")
                _accuracy_limits(ax, runs)
                ax.set_title(f"Test accuracy\n{what}", fontsize=10)
            ax.legend(fontsize=8, loc="lower left" if kind == "objective" else "lower right")
            fig.tight_layout()
            path = out / f"{loss}-{kind}.png"
            fig.savefig(path, dpi=dpi)
            files.append(path)
    return files


def _plot_run(ax, r: SolverRun, kind: str) -> None:
    entry = SOLVERS.get(r.name)
    style = (
        dict(color=entry.color, marker=entry.marker, linestyle=entry.linestyle)
        if entry is not None
        else {}
    )
    keep = r.times > 0  # the log time axis has no room for w = 0 at t = 0
    t = r.times[keep]
    if kind == "objective":
        v = r.relative[keep]
        floor = 1e-12
        v = np.where(v > floor, v, floor)
    else:
        v = 100.0 * r.test_accuracy[keep]
    if t.size == 0:
        return
    ax.plot(t, v, label=r.label, markevery=max(1, t.size // 8), markersize=5, linewidth=1.4,
            **style)  # fmt: skip


def _accuracy_limits(ax, runs: Sequence[SolverRun]) -> None:
    """Focus on the range the solvers end in (not the first iterations' accuracy)."""
    finals = [100.0 * r.test_accuracy[-1] for r in runs if np.isfinite(r.test_accuracy[-1])]
    if not finals:
        return
    best = max(100.0 * np.nanmax(r.test_accuracy) for r in runs)
    low = min(finals)
    span = max(best - low, 0.5)
    ax.set_ylim(low - 1.5 * span, best + 0.3 * span)


# ----------------------------------------------------------------------------- command line

USAGE = f"""\
Usage: linsvm compare [options] training_set_file test_set_file
Race the linear-SVM solvers on one problem: time to 1% and 0.1% relative primal accuracy,
tables and figures of the primal objective and test accuracy against training time.
options:
-c cost : set the parameter C (default 1)
-B bias : if bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1)
-o dir : output folder for compare.md, curves.json and the figures
    (default ./compare-<training file name>)
--solvers a,b,... : the solvers to run, among
    {", ".join(SOLVERS)}
    (default: all but {", ".join(s for s in SOLVERS if s not in DEFAULT_SOLVERS)})
--max-time S : time budget of each solver, seconds (default {DEFAULT_MAX_TIME:g})
--pstar-time S : time budget of the reference run for P* per loss (default: 2 x max-time)
--no-overhead-run : skip running each solver again without the hook
--clock wall|cpu : the solvers' clock: wall time (default) or this thread's CPU time (for a
    machine shared with other processes)
--seed N : seed of the solvers' random orders (default 1)
-q : quiet mode (no progress)
"""


@dataclass
class CompareOptions:
    C: float = 1.0
    bias: float = -1.0
    outdir: str | None = None
    solvers: list[str] | None = None
    max_time: float = DEFAULT_MAX_TIME
    pstar_time: float | None = None
    check_overhead: bool = True
    seed: int = 1
    clock: str = "wall"
    quiet: bool = False
    training_file: str = ""
    test_file: str = ""


def parse_compare_args(argv: Sequence[str]) -> CompareOptions:
    """Parse ``linsvm compare`` arguments (options, then the two files); UsageError if bad."""
    opts = CompareOptions()
    argv = list(argv)
    i = 0
    with_value = {"-c", "-B", "-o", "--solvers", "--max-time", "--pstar-time", "--seed", "--clock"}
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        arg = argv[i]
        if arg in with_value:
            if i + 1 >= len(argv):
                raise UsageError(f"option {arg} needs a value")
            value = argv[i + 1]
            i += 2
            if arg == "-c":
                opts.C = _number(value, float, arg)
                if not (math.isfinite(opts.C) and opts.C > 0):
                    raise UsageError(f"C must be > 0, got {value}")
            elif arg == "-B":
                opts.bias = _number(value, float, arg)
                if not math.isfinite(opts.bias):
                    raise UsageError(f"option -B needs a finite number, got {value}")
            elif arg == "-o":
                opts.outdir = value
            elif arg == "--clock":
                if value not in CLOCKS:
                    raise UsageError(
                        f"option --clock needs one of {', '.join(CLOCKS)}, got {value}"
                    )
                opts.clock = value
            elif arg == "--solvers":
                names = [s.strip() for s in value.split(",") if s.strip()]
                try:
                    opts.solvers = check_solver_names(names)
                except InvalidInputError as exc:
                    raise UsageError(str(exc)) from None
            elif arg in ("--max-time", "--pstar-time"):
                seconds = _number(value, float, arg)
                if not (math.isfinite(seconds) and seconds > 0):
                    raise UsageError(f"option {arg} needs a number of seconds > 0, got {value}")
                if arg == "--max-time":
                    opts.max_time = seconds
                else:
                    opts.pstar_time = seconds
            else:
                opts.seed = _number(value, int, arg)
        elif arg == "-q":
            opts.quiet = True
            i += 1
        elif arg == "--no-overhead-run":
            opts.check_overhead = False
            i += 1
        else:
            raise UsageError(f"unknown option: {arg}")
    files = argv[i:]
    if len(files) < 2:
        raise UsageError("expected training_set_file test_set_file")
    if len(files) > 2:
        raise UsageError(f"too many arguments: {' '.join(files[2:])}")
    opts.training_file, opts.test_file = files
    if opts.outdir is None:
        name = Path(opts.training_file).name
        for suffix in (".xz", ".gz", ".bz2"):
            name = name.removesuffix(suffix)
        opts.outdir = f"compare-{name}"
    return opts


def run_compare(argv: Sequence[str]) -> int:
    """``linsvm compare``: read the two files, compare, print the report; the exit status."""
    import linsvm

    if not argv:
        print(USAGE, end="")
        return 1
    opts = parse_compare_args(argv)
    X, y = linsvm.read_libsvm(opts.training_file)
    Xt, yt = linsvm.read_libsvm(opts.test_file)
    result = compare(
        X, y, Xt, yt, opts.C, opts.solvers, bias=opts.bias, max_time=opts.max_time,
        outdir=opts.outdir, quiet=opts.quiet, seed=opts.seed,
        dataset=Path(opts.training_file).name, pstar_time=opts.pstar_time,
        check_overhead=opts.check_overhead, clock=opts.clock,
    )  # fmt: skip
    print("\n".join(result.markdown()).rstrip())
    if not opts.quiet:
        print(f"written to {opts.outdir}/: compare.md, curves.json"
              + "".join(f", {f.name}" for f in result.figures), file=sys.stderr)  # fmt: skip
    return 0


__all__ = [
    "ComparisonResult",
    "DEFAULT_SOLVERS",
    "Problem",
    "Reference",
    "SOLVERS",
    "SolverEntry",
    "SolverRun",
    "compare",
    "plot_figures",
    "run_compare",
    "write_outputs",
]
