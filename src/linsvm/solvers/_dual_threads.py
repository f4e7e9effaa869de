"""Threads within one dual solve (-s 1, 3, 12, 13): how many, which scheme, and their start.

Three schemes share the solve's state arrays and its plumbing (``_dual.run_dual``: hooks,
checkpoints, interrupts), each a place of the partitioned dual (``partitioned.SHARED``):

- ``"async"`` (``dcd_async``): every thread steps its rows against the one shared w and adds
  its changes atomically, no waiting inside an outer iteration (PASSCoDe-Atomic), the hot
  features' changes gathered per thread; w recomputed from the dual variables at the end.
  Two runs differ in their last bits and path.
- ``"replicas"`` (``dcd_async`` too): every thread steps its rows against its own replica of
  w and replays the steps the other threads log, every few rows: no atomic add and no cache
  line written by two cores, but every thread touches the weights of every changed row.
  The faster on 2 threads; two runs differ in their last bits and path.
- ``"rounds"`` (``dcd_threads``): rounds of a few hundred rows stepped side by side from one
  w and merged in a fixed order with an exact line search. Deterministic: the same model for
  the same seed and thread count, bit for bit; the barriers of every round cost more than
  the work between them on most data.

``thread_plan`` picks the threads and the scheme: at most one thread per ``THREAD_MIN_NNZ``
non-zeros (below that the threads' meeting costs more than the work they share), and the
option ``thread_scheme``'s, "auto" being the replicas on 2 threads and async on more
(``REPLICAS_MAX_THREADS``).

Whether the threads pay depends on the machine as much as on the data: on a 2-core VM the
async scheme's two threads took 1.2-1.4x one thread's time an outer iteration (the shared
w's cache lines travel between the cores at every add, and an atomic add costs about ten
plain ones), the replicas' 0.8-1.1x (their replays cost as much memory traffic as the steps
they share), where a 16-core machine has the bandwidth to gain. So the async and replicas
solves measure it as they go (``ThreadSchedule``): its first outer iterations
alternate between the serial kernel and the threads (one thread, threads, one thread), the
faster a visited row goes on, and now and then the other is tried for one outer iteration
again. A solve on threads that do not pay thus costs about one outer iteration on them and
the threads' set-up more than the serial one. The rounds, the deterministic scheme, always
run on their threads (a choice made on timings would make the model depend on them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInputError
from ..partitioned import SHARED, LocalTask, PartitionedDual
from ._base import Subproblem
from ._dual import I_ACTIVE, I_CONVERGED, I_ITER

# A solve gets at most one thread per this many non-zeros. Measured on 2 cores (-s 1 and -s 3,
# default tolerance): two threads lost to one on every set up to 1.4M non-zeros (pypi-recent's
# first 100k rows: 0.61-0.68x; a9a, w8a, reuters: 0.24-0.59x), broke even near 4M (300k rows:
# 0.76-1.13x) and gained on all of pypi-recent (9.4M): small data sits in the cache, where the
# serial solver's step costs nanoseconds and the threads' meeting dominates.
THREAD_MIN_NNZ = 2_000_000

SCHEMES = ("auto", "async", "replicas", "rounds")
# "auto" takes the replicas at up to this many threads (while they take at most
# REPLICAS_MAX_BYTES), the shared w above. A replica replays every other thread's steps, so
# each thread still touches the weights of every changed row once an outer iteration: the
# threads overlap their waits on memory but do not divide them. On 2 cores (threads forced,
# medians of 2) the replicas took 0.81-0.85x one thread's time on 3M generated rows and
# 0.9-1.1x on pypi-recent, where the shared w took 1.4x; beyond two threads the shared w is
# the scheme whose memory traffic still divides. On 2 cores to 1e-2 / 1e-3, `linsvm.train`
# (benchmarks/RESULTS-dcd-threads.md): 3M generated rows -s 1 1.11x / 1.15x one thread with the
# replicas, 0.92x / 0.95x with the shared w; -s 3 1.20x / 1.28x against 0.97x / 1.04x.
REPLICAS_MAX_THREADS = 2
REPLICAS_MAX_BYTES = 1 << 30
# Outer iterations between two tries of the mode not chosen (threads or one thread); doubled
# while the loser is slower by more than CLEAR_MARGIN, up to MAX_PROBE_EVERY.
PROBE_EVERY = 8
MAX_PROBE_EVERY = 64
CLEAR_MARGIN = 1.15
# Runs in a row that may end with no outer iteration done (undone by the guard).
MAX_STALLED_RUNS = 64


@dataclass(frozen=True)
class ThreadPlan:
    """How a dual solve runs: ``n_threads`` (1: the serial kernel), ``scheme`` ("serial",
    "async" or "rounds"), and ``simulated`` (the scheme's arithmetic for n_threads threads run
    on the calling thread)."""

    n_threads: int
    scheme: str
    simulated: bool = False


def check_scheme(scheme) -> str:
    """A thread scheme as given (``SCHEMES``), or a one-line error."""
    if scheme not in SCHEMES:
        raise InvalidInputError(
            f"thread_scheme must be one of {', '.join(map(repr, SCHEMES))}, got {scheme!r}"
        )
    return str(scheme)


def _scheme(sub: Subproblem, n_threads: int, n_weights: int, simulated: bool) -> str:
    """The scheme of option ``thread_scheme``; "auto" (or none): the replicas up to
    ``REPLICAS_MAX_THREADS`` threads (their memory permitting), the async one above or
    simulated. Both measure whether their threads pay as the solve goes
    (``ThreadSchedule``)."""
    scheme = check_scheme(sub.option("thread_scheme") or "auto")
    if scheme == "replicas" and simulated:
        raise InvalidInputError("the replicas scheme runs on real threads only: "
                                "simulate_threads takes 'async' or 'rounds'")  # fmt: skip
    if scheme != "auto":
        return scheme
    fits = n_threads * n_weights * 8 <= REPLICAS_MAX_BYTES
    return "replicas" if not simulated and n_threads <= REPLICAS_MAX_THREADS and fits else "async"


def thread_plan(sub: Subproblem, X, serial_only: bool) -> ThreadPlan:
    """The plan of a solve: ``sub.n_threads`` real threads, at most one per
    ``THREAD_MIN_NNZ`` non-zeros; or option ``simulate_threads`` = T, the scheme's arithmetic
    for T threads run on this one. ``serial_only``: the solve cannot take threads (a feature
    map formed on the fly, CoCoA+'s local problems with sigma' > 1)."""
    simulated = sub.option("simulate_threads")
    if simulated is not None:
        if isinstance(simulated, bool) or not isinstance(simulated, int | np.integer):
            raise InvalidInputError(f"simulate_threads must be an integer >= 1, got {simulated!r}")
        if simulated < 1:
            raise InvalidInputError(f"simulate_threads must be an integer >= 1, got {simulated!r}")
        if serial_only:
            raise InvalidInputError(
                "the threaded schemes take neither an implicit feature map nor sigma > 1"
            )
        return ThreadPlan(int(simulated), _scheme(sub, int(simulated), X.shape[1], True), True)
    if serial_only or sub.n_threads <= 1:
        return ThreadPlan(1, "serial")
    min_nnz = int(sub.option("thread_min_nnz", THREAD_MIN_NNZ))
    n_threads = max(1, min(int(sub.n_threads), int(X.indptr[-1]) // max(min_nnz, 1)))
    if n_threads == 1:
        return ThreadPlan(1, "serial")
    return ThreadPlan(n_threads, _scheme(sub, n_threads, X.shape[1] + 1, False))


def start_threads(plan: ThreadPlan, sub: Subproblem, loss: int, rec, w, active, trainable,
                  fstate, istate, rng, eps: float, shrinking: bool, bucket_size: int,
                  buckets_per_group: int, use_prefetch: bool, removed, order, bucket_order,
                  p: float | None = None):  # fmt: skip
    """The threads of a plan that has more than one (``thread_plan``) on a solve's state
    arrays: (threads, driver, schedule), ``threads`` the scheme's object (``advance``,
    ``figures``, ``close``; the async one also ``exact_weights``, ``one_thread`` and
    ``rows_visited``), ``driver`` the partitioned dual whose place they are, and the
    ``ThreadSchedule`` of ``run_epochs``. ``p``: the SVR dual's width (None: the SVM's).
    Options: ``thread_options``, keyword arguments of the scheme's class; ``thread_choice``,
    "measure" (the async scheme's default: ``ThreadSchedule``) or "threads" (always)."""
    from .dcd_threads import ThreadedRounds, ThreadPlace

    options = dict(sub.option("thread_options", {}) or {})
    if plan.scheme in ("async", "replicas"):
        from .dcd_async import AsyncThreads as scheme_class

        options["replicas"] = plan.scheme == "replicas"
    else:
        scheme_class = ThreadedRounds
    threads = scheme_class(
        sub.X, float(sub.bias), loss, rec, w, active, trainable, fstate, istate, rng, eps,
        shrinking, bucket_size, buckets_per_group, use_prefetch, removed, order, bucket_order,
        plan.n_threads, simulate=plan.simulated, p=p, **options,
    )  # fmt: skip
    measure = plan.scheme != "rounds" and not plan.simulated
    choice = sub.option("thread_choice", "measure")
    if choice not in ("measure", "threads"):
        raise InvalidInputError(f"thread_choice must be 'measure' or 'threads', got {choice!r}")
    schedule = ThreadSchedule(measure and choice == "measure")
    return threads, PartitionedDual(ThreadPlace(threads), SHARED, w[np.newaxis]), schedule


def threaded_figures(threads, schedule: ThreadSchedule | None) -> dict:
    """A threaded solve's figures (the scheme's and the schedule's); none for a serial one."""
    if threads is None:
        return {}
    return {**threads.figures, **({} if schedule is None else schedule.figures)}


def live_figures(threads, schedule: ThreadSchedule | None) -> dict:
    """What a progress line says of a threaded solve: the threads that ran its last outer
    iteration (1 when the schedule or the guard gave it to one thread) and the scheme."""
    if threads is None:
        return {}
    on_threads = schedule is None or (
        schedule.last_on_threads and not getattr(threads, "one_thread", False)
    )
    return {"threads_now": threads.n_threads if on_threads else 1,
            "thread_scheme": threads.scheme}  # fmt: skip


def threads_line(figures: dict) -> str | None:
    """The summary of a threaded solve's figures in words (None: it ran on one thread): the
    threads asked for, the scheme, and for the async scheme how many outer iterations ran on
    them, whether the guard handed the solve to one thread and what it undid."""
    n_threads = figures.get("n_threads")
    if not n_threads:
        return None
    scheme = figures.get("thread_scheme", "rounds")
    line = f"{n_threads} threads, {scheme} scheme"
    if scheme in ("async", "replicas"):
        line += f", {figures.get('epochs_on_threads', 0)} outer iterations on the threads"
        if figures.get("handed_to_one_thread"):
            line += ", then handed to one thread (the dual objective rose)"
        elif not figures.get("on_threads_at_end", True):
            line += " (one thread was faster)"
        if figures.get("undone_epochs"):
            line += f", {figures['undone_epochs']} undone"
    return line


def exact_weights(threads, schedule: ThreadSchedule | None = None) -> None:
    """w recomputed from the dual variables where the scheme keeps it up to rounding and
    timing only (``"async"``), when the solve's last outer iteration ran on its threads (after
    one on one thread, w is the serial kernel's running sum, as a serial solve's); nothing for
    the rounds, whose w is their merged sum."""
    if threads is None or not hasattr(threads, "exact_weights"):
        return
    if schedule is None or (schedule.last_on_threads and not threads.one_thread):
        threads.exact_weights()


class ThreadSchedule:
    """Which of the threads and the serial kernel runs the next outer iterations of a solve,
    from their measured seconds a visited row (the module's note). ``measure`` False: always
    the threads (the rounds; option ``thread_choice="threads"``).

    The first three outer iterations run one thread, the threads, one thread (the threaded
    one judged against the mean of the two around it: the first outer iterations change
    most rows, later ones fewer), and the faster goes on. Every ``interval`` outer
    iterations the other is tried for one, then the chosen one runs one more, and the tried
    one's rate is judged against the mean of the chosen one's around it. The interval starts
    at ``PROBE_EVERY`` and doubles (up to ``MAX_PROBE_EVERY``) while the loser is clearly
    slower (``CLEAR_MARGIN``): a machine where the threads do not pay costs about one outer
    iteration on them in a run of 8-20."""

    def __init__(self, measure: bool) -> None:
        self.measure = measure
        self.on_threads = True  # the mode chosen
        self.epochs = 0  # outer iterations run through the schedule
        self.epochs_on_threads = 0
        self.last_on_threads = True  # where the last run ran
        self.switches = 0
        self.interval = PROBE_EVERY
        self.next_try = 3  # (the first three are the opening)
        self.trying: bool | None = None  # the mode tried, until the run after it is in
        self.before = 0.0  # the chosen mode's rate before the try
        self.rate = {True: [], False: []}  # seconds a row, by mode, latest last

    def next(self, n_epochs: int, handed_over: bool) -> tuple[bool, int]:
        """(on the threads, outer iterations) of the next run, at most ``n_epochs``."""
        if handed_over:
            return False, n_epochs
        if not self.measure:
            return True, n_epochs
        if self.epochs < 3:  # one thread, threads, one thread
            return self.epochs == 1, 1
        if self.trying is not None:  # the run after a try: the chosen mode, for one
            return self.on_threads, 1
        if self.epochs >= self.next_try:
            self.trying = not self.on_threads
            self.before = self.rate[self.on_threads][-1] if self.rate[self.on_threads] else 0.0
            return self.trying, 1
        # (one thread runs an outer iteration a call: its rows are counted a call)
        left = self.next_try - self.epochs
        return self.on_threads, min(n_epochs, left) if self.on_threads else 1

    def record(self, on_threads: bool, epochs: int, seconds: float, rows: int) -> None:
        """A run's outer iterations, seconds and visited rows; at the end of the opening and
        of each try, the faster mode is chosen."""
        self.epochs += epochs
        self.last_on_threads = on_threads
        if on_threads:
            self.epochs_on_threads += epochs
        if not self.measure or epochs <= 0:
            return
        if rows > 0 and seconds > 0.0:
            self.rate[on_threads].append(seconds / rows)
        if self.epochs == 3 and self.trying is None:  # the end of the opening
            self._choose(self.rate[True][-1:], self.rate[False][-2:])
        elif self.trying is not None and on_threads != self.trying:  # the end of a try
            tried = self.rate[self.trying][-1:]
            chosen = [r for r in (self.before, *self.rate[on_threads][-1:]) if r > 0.0]
            if self.trying:
                self._choose(tried, chosen)
            else:
                self._choose(chosen, tried)
            self.trying = None

    def _choose(self, threads: list[float], serial: list[float]) -> None:
        """The mode of the lower mean rate (none measured: as before); the next try's time."""
        if threads and serial:
            t, s = float(np.mean(threads)), float(np.mean(serial))
            choice = t <= s
            self.switches += int(choice != self.on_threads and self.epochs > 3)
            clear = max(t, s) > CLEAR_MARGIN * min(t, s)
            if choice != self.on_threads or not clear:
                self.interval = PROBE_EVERY
            else:
                self.interval = min(2 * self.interval, MAX_PROBE_EVERY)
            self.on_threads = choice
        self.next_try = self.epochs + self.interval

    @property
    def figures(self) -> dict:
        """Where the outer iterations ran, and ``thread_speedup``: one thread's seconds a
        visited row over the threads' (medians of the solve's runs; NaN until both ran)."""
        threads, serial = self.rate[True], self.rate[False]
        speedup = float(np.median(serial) / np.median(threads)) if threads and serial else np.nan
        return {
            "epochs_on_threads": self.epochs_on_threads,
            "thread_choice_switches": self.switches,
            "on_threads_at_end": self.on_threads,
            "thread_speedup": speedup,
        }


def run_epochs(
    n_epochs: int, threads, driver: PartitionedDual, serial: Callable[[int], None], istate,
    schedule: ThreadSchedule,
) -> None:  # fmt: skip
    """Up to ``n_epochs`` outer iterations of a threaded solve, each run on the threads
    (``driver``) or by ``serial(k)`` (the serial kernel, k outer iterations) as ``schedule``
    says; also after the async scheme's guard has handed the solve over to one thread."""
    stalled = 0
    while n_epochs > 0 and not istate[I_CONVERGED]:
        handed_over = bool(getattr(threads, "one_thread", False))
        on_threads, k = schedule.next(n_epochs, handed_over)
        done = int(istate[I_ITER])
        rows = int(istate[I_ACTIVE])
        started = time.perf_counter()
        if on_threads:
            driver.outer(LocalTask(done, k), keep_start=False)
            rows = getattr(threads, "rows_visited", 0)
        else:
            serial(k)
        ran = int(istate[I_ITER]) - done
        schedule.record(on_threads, ran, time.perf_counter() - started, rows if k == 1 or
                        on_threads else 0)  # fmt: skip
        if ran > 0:
            stalled = 0
            n_epochs -= ran
            continue
        # (outer iterations undone by the async scheme's guard: each halves its delay, and
        # the last hands over to one thread; the cap only guards against a loop)
        stalled += 1
        if stalled > MAX_STALLED_RUNS:
            return
