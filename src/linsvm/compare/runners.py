"""Running the race: one ``Subproblem``, every racer through the solver registry, P* per loss.

Each racer is ``linsvm.solvers.SOLVERS[racer.solver].solve(sub.but(eps=..., options=...),
recorder)``: the same entry point ``linsvm.train`` uses, called directly so that no fallback,
warning or validation is timed. Every snapshot is evaluated: P(w) by
``linsvm.objective.primal_value`` (the one definition; in the hook, off the clock, when the
racer is to stop past the last accuracy line) and the test accuracy (after the run). The same
racer is then run again without a hook for the same number of iterations (same seed: the same
trajectory) to show what recording cost.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba.core import event as numba_event

from ..data import as_csr, check_labels, group_labels
from ..errors import InvalidInputError
from ..objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value
from ..solvers import SOLVERS, Progress, Solution, Subproblem
from ..solvers._base import INTERRUPTED
from .lineup import DCD_EPS, DUAL_SOLVER, LINEUP, LOSS_KEYS, Racer, check_racer_names
from .recording import (
    CLOCKS,
    PROGRESS_LINE_SECONDS,
    PROGRESS_LINES,
    PROGRESS_LIVE,
    PROGRESS_NONE,
    PROGRESS_UPDATES_PER_SECOND,
    SNAPSHOT_SPACING,
    Recorder,
    progress_line,
    progress_text_line,
)
from .report import (
    TARGETS,
    ComparisonResult,
    Reference,
    SolverRun,
    fmt_pct,
    fmt_sci,
    fmt_seconds,
    line_name,
    write_outputs,
)

DEFAULT_MAX_TIME = 60.0
# A racer stops once certainly past the race's target, by default the table's last accuracy
# line: at the first snapshot with (P(w) - D)/D <= target, D the reference run's dual bound (so
# (P(w) - P*)/P* <= it too). ``compare(target=...)`` / ``--target`` takes another.
STOP_ACCURACY = TARGETS[-1]
# A racer after one of its loss has passed that line gets this many times the fastest time to
# it so far (at least MIN_RACE_BUDGET seconds, at most max_time): the table then says how much
# slower it is without every slow racer spending the whole budget.
RACE_FACTOR = 10.0
MIN_RACE_BUDGET = 2.0
# Below this CPU time / wall time a run is reported as disturbed by other processes.
CPU_SHARE_WARNING = 0.9
CPU_SHARE_MIN_SECONDS = 0.05  # (runs this short are not judged)
# The iteration cap of a recorded run: out of reach, the time budget stops a racer first.
UNLIMITED_ITER = 10**7
# The reference run for P*: DCD through these tolerances, each stage warm-started from the
# last alpha, until (P - D)/D certifies P* to a thousandth of the last accuracy line (finer
# buys nothing the table shows); the objectives are checked every PSTAR_CHECK_ITER outer
# iterations.
PSTAR_EPS_STAGES = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
PSTAR_GAP_FACTOR = 1e-3  # P* is certified to this fraction of the race's target
PSTAR_GAP_TARGET = PSTAR_GAP_FACTOR * TARGETS[-1]
PSTAR_CHECK_ITER = 50
# Rows of the warm-up problem (compiles or loads every kernel before anything is timed).
WARMUP_ROWS = 200
REFERENCE_SOURCE = "the reference DCD run"
STOP_TIME_BUDGET = "time budget"

STOP_LINE = line_name(STOP_ACCURACY)
STOP_PAST_LINE = f"past {STOP_LINE}"


def run_racer(racer: Racer, sub: Subproblem, hook=None, max_iter: int = UNLIMITED_ITER) -> Solution:
    """Racer ``racer`` on the problem ``sub``: its registered solver, its tolerance and options."""
    options = {**sub.options, **racer.options}
    return SOLVERS[racer.solver].solve(
        sub.but(eps=racer.eps, max_iter=max_iter, options=options), hook
    )


def primal_at(sub: Subproblem, w: np.ndarray, loss: int) -> float:
    X = sub.X
    return float(
        primal_value(X.indptr, X.indices, X.data, float(sub.bias), sub.y, sub.C,
                     np.ascontiguousarray(w, dtype=np.float64), loss)
    )  # fmt: skip


def accuracy_on(X_test: sp.csr_matrix, y_test: np.ndarray, w: np.ndarray, bias: float) -> float:
    """Share of test rows on the right side (LIBLINEAR: decision > 0 predicts the +1 class)."""
    if X_test.shape[0] == 0:
        return math.nan
    n = X_test.shape[1]
    scores = X_test @ w[:n]
    if bias >= 0:
        scores = scores + bias * w[n]
    predicted = np.where(scores > 0, 1.0, -1.0)
    return float(np.mean(predicted == y_test))


def reference_run(sub: Subproblem, loss: int, budget: float, ref: Reference,
                  show: str = PROGRESS_NONE,
                  gap_target: float = PSTAR_GAP_TARGET) -> None:  # fmt: skip
    """DCD warm-started through ``PSTAR_EPS_STAGES`` until its gap certifies P* to
    ``gap_target`` or time's up (every loss to the same certified accuracy, whichever
    stage's tolerance gets there).

    The hook checks the budget after every batch of iterations and offers the primal and dual
    values to ``ref`` every ``PSTAR_CHECK_ITER`` iterations; it stops the run when the gap is
    certified or the budget is spent. ``show``: how progress is shown (``recording``).
    """
    spec = SOLVERS[DUAL_SOLVER[loss]]
    start = time.perf_counter()
    key = LOSS_KEYS[loss]
    first = start + (PROGRESS_LINE_SECONDS if show == PROGRESS_LINES else 0.0)
    stage = {"eps": PSTAR_EPS_STAGES[0], "next_check": PSTAR_CHECK_ITER, "next_live": first}

    def finished() -> bool:
        return ref.certified_gap <= gap_target or time.perf_counter() - start > budget

    def hook(progress: Progress) -> bool:
        if progress.iteration >= stage["next_check"] and progress.objectives is not None:
            stage["next_check"] = progress.iteration + PSTAR_CHECK_ITER
            primal, dual = progress.objectives()
            ref.offer(primal, REFERENCE_SOURCE, dual)
        now = time.perf_counter()
        if show != PROGRESS_NONE and now >= stage["next_live"]:
            text = (
                f"P* ({key}): DCD eps {stage['eps']:g}, (P - D)/D {fmt_sci(ref.certified_gap)}, "
                f"{now - start:.2f} s"
            )
            if show == PROGRESS_LIVE:
                stage["next_live"] = now + 1.0 / PROGRESS_UPDATES_PER_SECOND
                progress_line(text)
            else:
                stage["next_live"] = now + PROGRESS_LINE_SECONDS
                progress_text_line(text)
        return not finished()

    hook.every_iteration = False  # batches of iterations are enough
    alpha = None
    for eps in PSTAR_EPS_STAGES:
        stage["eps"], stage["next_check"] = eps, PSTAR_CHECK_ITER
        sol = spec.solve(sub.but(eps=eps, max_iter=UNLIMITED_ITER, alpha0=alpha), hook)
        alpha = sol.alpha
        ref.offer(sol.primal, REFERENCE_SOURCE, sol.dual)
        if finished():
            break
    ref.seconds = time.perf_counter() - start


def warm_up(sub: Subproblem, names: Sequence[str]) -> None:
    """Run every racer (and the evaluation) on a few rows: compile or load the kernels."""
    X = sub.X
    k = min(WARMUP_ROWS, X.shape[0])
    end = int(X.indptr[k])
    Xs = sp.csr_matrix((X.data[:end], X.indices[:end], X.indptr[: k + 1]), shape=(k, X.shape[1]))
    y = sub.y[:k].copy()
    if k >= 2 and np.all(y == y[0]):
        y[0] = -y[0]
    small = sub.but(X=Xs, y=y, C=sub.C[:k].copy())
    for name in names:
        racer = LINEUP[name]
        run_racer(racer, small, lambda progress: None, 3)
        run_racer(racer, small, None, 3)
        primal_at(small, np.zeros(small.n_weights), racer.loss)
    for loss in {LINEUP[n].loss for n in names}:
        SOLVERS[DUAL_SOLVER[loss]].solve(small.but(eps=0.1, max_iter=3), None)


def _hooked_run(racer: Racer, sub: Subproblem, max_time: float, show: str, now, score,
                stop_below: float) -> tuple[Recorder, Solution, float, float]:  # fmt: skip
    """(the recorder, the solution, the solver seconds, CPU time / wall time) of one run with
    the recording hook."""
    rec = Recorder(racer, max_time, show, now, score, stop_below)
    gc.collect()
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    rec.begin(sub.n_weights)
    solution = run_racer(racer, sub, rec)
    seconds = rec.elapsed()
    return rec, solution, seconds, (time.thread_time() - cpu0) / (time.perf_counter() - wall0)


def record_run(racer: Racer, sub: Subproblem, X_test, y_test, max_time: float, show: str,
               check_overhead: bool, clock: str, stop_below: float = -math.inf,
               past_line: str = STOP_PAST_LINE) -> SolverRun:  # fmt: skip
    """The recorded run (run again when a kernel was compiled during it), the unhooked rerun,
    and the evaluation of every snapshot.

    max_time: the racer's budget of solver seconds; stop_below: it stops at the first snapshot
    with P(w) <= this (snapshots are then scored in the hook, that time taken off the clock),
    and its stop is then reported as ``past_line``.
    """
    now = CLOCKS[clock]
    live = show == PROGRESS_LIVE
    score = None
    if stop_below > -math.inf:
        def score(w: np.ndarray) -> float:
            return primal_at(sub, w, racer.loss)

    with numba_event.install_recorder("numba:compile") as compiles:
        rec, solution, seconds, cpu_share = _hooked_run(racer, sub, max_time, show, now, score,
                                                        stop_below)  # fmt: skip
    if compiles.buffer:
        # (a kernel the warm-up did not reach, e.g. a path of large C only, was compiled on the
        # clock: the run again, compiled)
        rec, solution, seconds, cpu_share = _hooked_run(racer, sub, max_time, show, now, score,
                                                        stop_below)  # fmt: skip
    n_iter = solution.n_iter
    if (rec.past_line or rec.out_of_time) and solution.stop_reason == INTERRUPTED:
        stop = past_line if rec.past_line else STOP_TIME_BUDGET
        seconds = rec.trace[-1][0]  # the objective values computed after the stop are not timed
    else:
        stop = solution.stop_reason
    rec.finish(solution, seconds)

    unhooked = cpu_share_unhooked = math.nan
    if check_overhead and n_iter > 0:
        if live:
            progress_line(f"{racer.name}: the same {n_iter} iterations without a hook")
        gc.collect()
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        t0 = now()
        run_racer(racer, sub, None, n_iter)
        unhooked = now() - t0
        cpu_share_unhooked = (time.thread_time() - cpu0) / (time.perf_counter() - wall0)

    snaps = rec.snapshots
    rec.snapshots = []
    times = np.array([s[0] for s in snaps])
    iterations = np.array([s[1] for s in snaps], dtype=np.int64)
    primal = np.empty(len(snaps))
    accuracy = np.empty(len(snaps))
    next_live = 0.0
    for k, (_, _, w, scored) in enumerate(snaps):
        if live and time.perf_counter() >= next_live:
            next_live = time.perf_counter() + 1.0 / PROGRESS_UPDATES_PER_SECOND
            progress_line(f"{racer.name}: evaluating snapshot {k + 1} of {len(snaps)}")
        primal[k] = scored if math.isfinite(scored) else primal_at(sub, w, racer.loss)
        accuracy[k] = accuracy_on(X_test, y_test, w, sub.bias)
    del snaps
    trace = np.array(rec.trace, dtype=np.float64).reshape(-1, 3)
    return SolverRun(
        racer.name, LOSS_KEYS[racer.loss], racer.label, racer.measure, times, iterations,
        primal, accuracy, trace, int(n_iter), stop, float(seconds), rec.hook_seconds, unhooked,
        cpu_share=cpu_share, cpu_share_unhooked=cpu_share_unhooked, budget=float(max_time),
    )  # fmt: skip


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


def match_columns(X: sp.csr_matrix, n_features: int) -> sp.csr_matrix:
    """X with exactly ``n_features`` columns (features unknown to training dropped)."""
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        return X[:, :n_features].tocsr()
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


@dataclass(frozen=True)
class _Race:
    """A comparison's checked settings, as each of its steps reads them."""

    C: float
    bias: float
    max_time: float
    pstar_time: float
    clock: str
    target: float
    stop_line: str  # the target's name in the tables ("no line" for none)
    gap_target: float  # P* is certified to (P* - D)/D <= this
    race_factor: float | None
    check_overhead: bool
    quiet: bool
    progress: str  # how progress is shown (``recording``'s PROGRESS_*)

    @property
    def live(self) -> bool:
        return self.progress == PROGRESS_LIVE

    def say(self, text: str) -> None:
        """A line on stderr (over the live progress line, when there is one); none if quiet."""
        if not self.quiet:
            sys.stderr.write(("\r" if self.live else "") + text.ljust(110 if self.live else 0)
                             + "\n")  # fmt: skip
            sys.stderr.flush()


def _race_settings(C, max_time, pstar_time, bias, clock, target, race_factor, check_overhead,
                   quiet) -> _Race:  # fmt: skip
    """``compare``'s settings checked (one InvalidInputError each), with the stop line, the
    certification target of P* and how progress is shown."""
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
    target = STOP_ACCURACY if target is None else float(target)
    if not (target < 1):  # also NaN
        raise InvalidInputError(f"target must be below 1, got {target:g}")
    if quiet:
        progress = PROGRESS_NONE
    else:
        progress = PROGRESS_LIVE if sys.stderr.isatty() else PROGRESS_LINES
    return _Race(
        C=C, bias=bias, max_time=max_time, pstar_time=pstar_time, clock=clock, target=target,
        stop_line=line_name(target) if target > 0 else "no line",
        # P* certified to a thousandth of the finest line the tables show
        gap_target=PSTAR_GAP_FACTOR * min([t for t in (target, *TARGETS) if t > 0]),
        race_factor=race_factor, check_overhead=check_overhead, quiet=quiet, progress=progress,
    )  # fmt: skip


def race_data(X_train, y_train, X_test, y_test):
    """(X_train and X_test as CSR, the training labels as +1/-1, the test labels as +1/-1/0):
    the data of a race checked (InvalidInputError), the test columns matched to training's."""
    X = as_csr(X_train, name="X_train")
    Xt = as_csr(X_test, name="X_test")
    if X.shape[0] == 0:
        raise InvalidInputError("no training rows")
    y_train = check_labels(y_train, X.shape[0])
    y_test = check_labels(y_test, Xt.shape[0])
    y, yt, _ = binary_pm1(y_train, y_test)
    return X, y, match_columns(Xt, X.shape[1]), yt


def _race_problem(X_train, y_train, X_test, y_test, race: _Race, seed: int):
    """(the training problem, X_train and X_test as CSR, the test labels as +1/-1/0)."""
    X, y, Xt, yt = race_data(X_train, y_train, X_test, y_test)
    # the one problem every racer solves; each gets its own eps, cap and options from it
    sub = Subproblem(
        X=X, y=y, C=np.full(X.shape[0], race.C), eps=DCD_EPS, max_iter=UNLIMITED_ITER,
        bias=race.bias, seed=int(seed),
    )  # fmt: skip
    return sub, X, Xt, yt


def _reference_runs(sub: Subproblem, names: Sequence[str], race: _Race) -> dict[str, Reference]:
    """P* of each loss some racer minimises, by its reference DCD run."""
    references: dict[str, Reference] = {}
    for loss in (LOSS_HINGE, LOSS_SQUARED_HINGE):
        if any(LINEUP[n].loss == loss for n in names):
            ref = Reference()
            if not race.live:
                race.say(f"P* ({LOSS_KEYS[loss]}): reference DCD run, up to {race.pstar_time:g} s")
            reference_run(sub, loss, race.pstar_time, ref, race.progress, race.gap_target)
            references[LOSS_KEYS[loss]] = ref
            race.say(
                f"P* ({LOSS_KEYS[loss]}) = {ref.primal:.10g}, (P* - D)/D = "
                f"{fmt_sci(ref.certified_gap)}, reference run {ref.seconds:.2f} s"
            )
    return references


def _racer_budget(race: _Race, fastest_to_line: float | None) -> float:
    """A racer's seconds: max_time, or race_factor times the fastest time of an earlier
    racer of its loss to the stop line (at least MIN_RACE_BUDGET, at most max_time)."""
    if race.race_factor is None or fastest_to_line is None:
        return race.max_time
    return min(race.max_time, max(MIN_RACE_BUDGET, race.race_factor * fastest_to_line))


def _run_racers(sub: Subproblem, names: Sequence[str], Xt, yt, references: dict[str, Reference],
                race: _Race) -> dict[str, SolverRun]:  # fmt: skip
    """Each racer's recorded run, in ``names``' order; each run's best P offered to its
    loss's reference."""
    runs: dict[str, SolverRun] = {}
    # per loss: the fastest time to the last accuracy line so far (the later racers' budget)
    line_seconds: dict[str, float] = {}
    for name in names:
        racer = LINEUP[name]
        key = LOSS_KEYS[racer.loss]
        budget = _racer_budget(race, line_seconds.get(key))
        dual = references[key].dual
        stop_below = -math.inf  # no dual bound: nothing certifies the line
        if math.isfinite(dual) and dual > 0:
            stop_below = dual * (1.0 + race.target)
        if not race.live:
            race.say(f"{name}: racing, up to {fmt_seconds(budget)} s")
        run = record_run(racer, sub, Xt, yt, budget, race.progress, race.check_overhead,
                         race.clock, stop_below, f"past {race.stop_line}")  # fmt: skip
        runs[name] = run
        past = np.flatnonzero(run.primal <= stop_below)
        if past.size:
            line_seconds[key] = min(line_seconds.get(key, math.inf), float(run.times[past[0]]))
        best = int(np.argmin(run.primal))
        references[run.loss].offer(run.primal[best], f"{name} at {fmt_seconds(run.times[best])} s")
        race.say(_run_summary(name, run, race.check_overhead))
    return runs


def _run_summary(name: str, run: SolverRun, check_overhead: bool) -> str:
    """The line that closes a racer's run: iterations, times, stop, final P and accuracy."""
    overhead = "" if not check_overhead else f", {fmt_seconds(run.unhooked_seconds)} s without hook"
    return (
        f"{name}: {run.n_iter} iterations in {fmt_seconds(run.seconds)} s ({run.stop}; "
        f"{fmt_seconds(run.hook_seconds)} s in the hook{overhead}), final P = "
        f"{run.primal[-1]:.10g}, test accuracy {fmt_pct(run.test_accuracy[-1])}"
    )


def _race_notes(race: _Race) -> list[str]:
    """The notes every comparison carries: how racers stop, how P* is certified, what the
    times and accuracies are."""
    budgets = f"{race.max_time:g} s"
    if race.race_factor is not None:
        budgets = (
            f"{race.max_time:g} s, or once a solver has passed that line, {race.race_factor:g} x "
            f"the fastest time to it so far for the later ones of its loss (at least "
            f"{MIN_RACE_BUDGET:g} s)"
        )
    stop_line = race.stop_line
    return [
        f"A solver stops at its own tolerance, once certainly past {stop_line} "
        f"((P(w) - D)/D <= {stop_line}, D the reference run's dual bound, checked at "
        f"each snapshot), or at its time budget: {budgets}. P* is certified for every loss to "
        f"(P* - D)/D <= {race.gap_target:.0e} where the reference run's budget allows; a line "
        "finer than the (P* - D)/D reached is not timed.",
        "Times are the solver's own: the time spent in the recording hook is taken off. Relative "
        "accuracy (P(w) - P*)/P*, P* the lowest primal value seen; a time to a target is that "
        f"of the first snapshot reaching it (snapshots every iteration early, then each "
        f"{100 * SNAPSHOT_SPACING:g}% of elapsed time). Relative accuracies below (P* - D)/D "
        "are distances to P*, which may itself lie that far above the optimum.",
    ]


def _disturbed_note(runs: dict[str, SolverRun], clock: str) -> str | None:
    """The note naming the runs other processes slowed (CPU share below CPU_SHARE_WARNING),
    or None."""
    disturbed = []
    for r in runs.values():
        if r.seconds < CPU_SHARE_MIN_SECONDS:
            continue  # (too short: the share is the clocks' resolution)
        shares = [x for x in (r.cpu_share, r.cpu_share_unhooked) if math.isfinite(x)]
        if shares and min(shares) < CPU_SHARE_WARNING:
            disturbed.append(f"{r.name} {100 * min(shares):.0f}%")
    if not disturbed:
        return None
    effect = (
        "their times are inflated"
        if clock == "wall"
        else "the CPU clock leaves the waits out, not the slowdown of shared caches and memory"
    )
    return (
        "Other processes took the CPU for part of some runs (CPU time / wall time of the "
        f"recorded or the unhooked run): {', '.join(disturbed)}; {effect}."
    )


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
    race_factor: float | None = RACE_FACTOR,
    target: float | None = None,
) -> ComparisonResult:
    """Race the SVM solvers on one problem; record primal value and test accuracy over time.

    X_train, X_test: sparse or dense (n_rows, n_features), converted to CSR; y_train: two
    classes (LIBLINEAR's order gives +1); y_test: the same labels. C: the cost of every row;
    solvers: names from ``LINEUP`` (default ``DEFAULT_LINEUP``); bias: LIBLINEAR's -B;
    max_time: each racer's largest budget of (corrected) seconds (a racer stops sooner once
    past the last accuracy line, see ``STOP_ACCURACY``, or at ``race_factor`` times the fastest
    time of an earlier racer of its loss to that line; None: every racer may take max_time,
    e.g. to see how long a slow one takes to 1e-2); pstar_time: budget of each loss's
    reference run (default 2 x max_time); check_overhead: run each racer again without a hook
    to measure what recording costs; clock: "wall" (perf_counter) or "cpu" (the thread's CPU
    time, for a machine other processes share); outdir: when given, write ``compare.md``,
    ``curves.json`` and the figures there; quiet: no progress on stderr; seed: the solvers'
    seed; dataset: the name in titles and tables; target: the relative accuracy a racer stops
    past (default ``STOP_ACCURACY``, 1e-3; smaller shows the curves further down, and the
    tables get a line for it; <= 0: no line, each racer runs to its tolerance or budget), P*
    certified to ``PSTAR_GAP_FACTOR`` x the finest line.
    """
    race = _race_settings(C, max_time, pstar_time, bias, clock, target, race_factor,
                          check_overhead, quiet)  # fmt: skip
    listed = check_racer_names(solvers)
    # a seed's racer that cannot run is listed in the tables, with why, and not raced
    unavailable = {n: LINEUP[n].unavailable for n in listed if LINEUP[n].unavailable}
    names = [n for n in listed if n not in unavailable]
    if not names:
        raise InvalidInputError("no racer can run: " + "; ".join(
            f"{n}: {why}" for n, why in unavailable.items()))  # fmt: skip
    sub, X, Xt, yt = _race_problem(X_train, y_train, X_test, y_test, race, seed)

    race.say(f"{dataset}: {X.shape[0]} rows, {X.shape[1]} features, {X.nnz} non-zeros; warming up")
    warm_up(sub, names)
    references = _reference_runs(sub, names, race)
    runs = _run_racers(sub, names, Xt, yt, references, race)
    for run in runs.values():
        pstar = references[run.loss].primal
        run.relative = (run.primal - pstar) / pstar

    target = race.target
    result = ComparisonResult(
        dataset, X.shape[0], X.shape[1], int(X.nnz), Xt.shape[0], race.C, race.bias,
        race.max_time, references, runs, clock=clock,
        targets=tuple(sorted(set(TARGETS) | ({target} if target > 0 else set()), reverse=True)),
        unavailable=unavailable,
    )  # fmt: skip
    result.notes.extend(_race_notes(race))
    disturbed = _disturbed_note(runs, clock)
    if disturbed is not None:
        result.notes.append(disturbed)
    if outdir is not None:
        write_outputs(result, outdir)
    return result
