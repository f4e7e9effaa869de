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
non-zeros (below that two threads lost to one), beyond two threads one per
``MANY_THREADS_MIN_NNZ`` (but the rounds), and the option ``thread_scheme``'s, "auto" being
the replicas on 2 threads and async on more (``REPLICAS_MAX_THREADS``).

Whether the threads pay depends on the machine as much as on the data: on a 2-core VM the
async scheme's two threads took 1.2-1.4x one thread's time an outer iteration (the shared
w's cache lines travel between the cores at every add, and an atomic add costs about ten
plain ones), the replicas' 0.8-1.1x (their replays cost as much memory traffic as the steps
they share), where a 16-core machine has the bandwidth to gain, though maybe not with every
core. So the async and replicas solves measure how many threads pay as they go
(``ThreadSchedule``): a *ladder* outer iteration steps a quarter of its chunks on one thread
(by the serial solver's pass: the serial kernel's rate) and on half the threads, shared in
proportion to the threads, the rest on all, timing each phase; the count with the lowest
seconds a row runs the next outer iterations (one: the serial kernel), and later ladders
check the choice. Measured inside one outer iteration, the counts compare on the same state
and no outer iteration is spent on a loser; only a close call (the threads less than
``TRUST_SPEEDUP`` ahead, as on 2 cores) is settled on whole outer iterations, one of them on
one thread. Alternating whole outer iterations from the start would spend two of a short
solve's 5-8 on one thread: on 16 threads 6x faster a row, 2 + 4/6 outer iterations' time
for 6, under 3x. The rounds, the deterministic scheme, always run on all their threads (a
choice made on timings would make the model depend on them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _intrinsics
from ..data import is_integer
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
# Beyond two threads (on data that pays two), the schemes that never wait inside an outer
# iteration (async, replicas) take one thread per this many non-zeros: pypi-recent's 9.4M
# all 16 threads of a 16-core machine, where THREAD_MIN_NNZ allowed 4 (and 4x one thread there
# then needed every thread to be as fast as the serial solver). What a thread's share must
# outweigh is an outer iteration's fixed cost: a few barriers and the copies and sums the
# threads divide among them (pypi-recent, on one thread: alpha and w kept for the guard
# 1.1 ms, the shrunk rows dropped 0.7-3 ms, w'w 0.2 ms), against about 6 ms of steps for
# 500k non-zeros (at the async kernel's 0.55x the serial kernel's speed a thread). The
# schedule's ladder still measures whether they pay (one thread, half, all) and keeps the
# fastest. The rounds keep THREAD_MIN_NNZ: they meet every few hundred rows.
MANY_THREADS_MIN_NNZ = 500_000

SCHEMES = ("auto", "async", "replicas", "rounds")
# "auto" takes the replicas at up to this many threads (while they take at most
# REPLICAS_MAX_BYTES), the shared w above. A replica replays every other thread's steps, so
# each thread still touches the weights of every changed row once an outer iteration: the
# threads overlap their waits on memory but do not divide them. On 2 cores (threads forced,
# medians of 2) the replicas took 0.81-0.85x one thread's time on 3M generated rows and
# 0.9-1.1x on pypi-recent, where the shared w took 1.4x; beyond two threads the shared w is
# the scheme whose memory traffic still divides. On 2 cores to 1e-2 / 1e-3, `linsvm.train`
# (benchmarks/RESULTS-dcd-threads.md, 3M generated rows, at one thread's tolerance settings):
# -s 1 1.24x / 1.21x one thread with the replicas, 1.06x / 0.95x with the shared w; -s 3 to
# 1e-3 1.34x against 1.14x.
REPLICAS_MAX_THREADS = 2
REPLICAS_MAX_BYTES = 1 << 30
# Outer iterations between two tries of the mode not chosen (threads or one thread); doubled
# while the loser is slower by more than CLEAR_MARGIN, up to MAX_PROBE_EVERY.
PROBE_EVERY = 8
MAX_PROBE_EVERY = 64
CLEAR_MARGIN = 1.15
# The outer iterations of the first two ladders. Not the solve's first: its first phase, the
# very start of the solve, read the serial pass at 1.3-2.7x the seconds a row it takes in the
# outer iterations after (pypi-recent, 2 threads), while the threads' phase after it in the
# same outer iteration read as theirs do later.
FIRST_LADDER = 1
SECOND_LADDER = 3
# A ladder whose count of threads beats one thread by less than this is tried on whole outer
# iterations (``ThreadSchedule``). On a 2-core VM (pypi-recent -s 1, six solves) the ladders
# of the second outer iteration put two threads 1.25-1.44x ahead of one, where the whole
# outer iterations that followed measured 1.01-1.51x: a few milliseconds on one core are
# easily stretched by whatever else the machine does.
TRUST_SPEEDUP = 1.5
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
    ``THREAD_MIN_NNZ`` non-zeros (option ``thread_min_nnz``), and beyond two, for the schemes
    but the rounds, one per ``MANY_THREADS_MIN_NNZ`` (or the option's, if smaller); or option
    ``simulate_threads`` = T, the scheme's arithmetic for T threads run on this one.
    ``serial_only``: the solve cannot take threads (a feature map formed on the fly, CoCoA+'s
    local problems with sigma' > 1)."""
    simulated = sub.option("simulate_threads")
    if simulated is not None:
        if not is_integer(simulated):
            raise InvalidInputError(f"simulate_threads must be an integer >= 1, got {simulated!r}")
        if simulated < 1:
            raise InvalidInputError(f"simulate_threads must be an integer >= 1, got {simulated!r}")
        if serial_only:
            raise InvalidInputError(
                "the threaded schemes take neither an implicit feature map nor sigma > 1"
            )
        if not _intrinsics.THREAD_CALLS:
            raise InvalidInputError("simulate_threads: the threaded schemes' kernels need "
                                    "sched_yield and clock_gettime, which this system lacks")
        return ThreadPlan(int(simulated), _scheme(sub, int(simulated), X.shape[1], True), True)
    if serial_only:
        return ThreadPlan(1, "serial")
    n_threads = planned_threads(int(sub.n_threads), int(X.indptr[-1]),
                                sub.option("thread_scheme") or "auto",
                                int(sub.option("thread_min_nnz", THREAD_MIN_NNZ)))  # fmt: skip
    if n_threads == 1:
        return ThreadPlan(1, "serial")
    return ThreadPlan(n_threads, _scheme(sub, n_threads, X.shape[1] + 1, False))


def planned_threads(n_threads: int, nnz: int, scheme: str = "auto",
                    min_nnz: int = THREAD_MIN_NNZ) -> int:  # fmt: skip
    """The real threads a solve of ``nnz`` non-zeros is given out of ``n_threads``: at most one
    per ``min_nnz``, and beyond two, for the schemes but the rounds, one per
    ``MANY_THREADS_MIN_NNZ`` (or ``min_nnz``, if smaller). One where the threaded kernels
    cannot run (``_intrinsics.THREAD_CALLS``: Windows)."""
    if n_threads <= 1 or not _intrinsics.THREAD_CALLS:
        return 1
    min_nnz = max(min_nnz, 1)
    planned = max(1, min(n_threads, nnz // min_nnz))
    if planned > 1 and check_scheme(scheme) != "rounds":
        planned = max(planned, min(n_threads, nnz // min(min_nnz, MANY_THREADS_MIN_NNZ)))
    return planned


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
    "measure" (the async schemes' default: ``ThreadSchedule``) or "threads" (all of them,
    always)."""
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
    schedule = ThreadSchedule(plan.n_threads, measure and choice == "measure")
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
    if getattr(threads, "one_thread", False) or getattr(threads, "last_on_one_thread", False):
        now = 1  # (the async guard's hand-over; a spell of the rounds off their cores)
    else:
        now = threads.n_threads if schedule is None else schedule.last_count
    return {"threads_now": now,
            "thread_scheme": threads.scheme}  # fmt: skip


def threads_line(figures: dict) -> str | None:
    """The summary of a threaded solve's figures in words (None: it ran on one thread): the
    threads asked for (and the count measured fastest when fewer ran), the scheme, and for
    the async schemes how many outer iterations ran on them, whether the guard handed the
    solve to one thread and what it undid."""
    n_threads = figures.get("n_threads")
    if not n_threads:
        return None
    scheme = figures.get("thread_scheme", "rounds")
    if scheme == "row chunks":  # (the Newton solvers: each pass's sums over chunks of rows)
        return f"{n_threads} threads (each pass over the rows in chunks)"
    line = f"{n_threads} threads, {scheme} scheme"
    chosen = figures.get("threads_chosen", n_threads)
    allowed = figures.get("threads_allowed", n_threads)  # (by the async guard)
    if 1 < chosen < min(n_threads, allowed):
        line = f"{chosen} of {n_threads} threads (the fastest count measured), {scheme} scheme"
    if scheme in ("async", "replicas"):
        line += f", {figures.get('epochs_on_threads', 0)} outer iterations on the threads"
        if figures.get("handed_to_one_thread"):
            line += ", then handed to one thread (the dual objective rose)"
        elif allowed < n_threads:
            line += f", then on at most {allowed} (more raised the dual objective)"
        elif not figures.get("on_threads_at_end", True):
            line += " (one thread was faster)"
        if figures.get("undone_epochs"):
            line += f", {figures['undone_epochs']} undone"
    elif figures.get("epochs_on_one_thread"):  # (the rounds: same arithmetic, one thread)
        line += (f", {figures['epochs_on_one_thread']} outer iterations on one thread (the "
                 "threads were found off their cores)")  # fmt: skip
    return line


def exact_weights(threads, schedule: ThreadSchedule | None = None) -> None:
    """w recomputed from the dual variables where the scheme keeps it up to rounding and
    timing only (``"async"``), when the solve's last outer iteration ran on its threads (after
    one on one thread, w is the serial kernel's running sum, as a serial solve's); nothing for
    the rounds, whose w is their merged sum."""
    if threads is None or not hasattr(threads, "exact_weights"):
        return
    if schedule is None or (schedule.last_count > 1 and not threads.one_thread):
        threads.exact_weights()


class ThreadSchedule:
    """How many threads run the next outer iterations of a solve (1: the serial kernel), from
    their seconds a row as measured on the solve itself (the module's note). ``measure``
    False: always all of them (the rounds; option ``thread_choice="threads"``).

    A *ladder* outer iteration runs its first chunks on one thread, the next on half the
    ladder's top count, the rest on the top count (``AsyncThreads.set_run``), each phase
    timed on the same state. The first outer iteration runs on all the threads, the second
    is a ladder on all of them. A ladder that puts a count ``TRUST_SPEEDUP`` times ahead of
    one thread, or one thread ahead of all, is taken at its word; a closer one is tried on
    whole outer iterations (the count, one thread, the count: one thread judged against the
    mean of the two around it, the first outer iterations changing the most rows), since
    its phase of one lasts milliseconds, which whatever else the machine does may stretch.
    The count chosen runs until the next check, a ladder, ``interval`` outer iterations on
    (a first choice made by a ladder is checked by another at ``SECOND_LADDER``). The
    interval starts at ``PROBE_EVERY`` and doubles (up to ``MAX_PROBE_EVERY``) while the
    choice stands and wins clearly (``CLEAR_MARGIN``). The ladder's top is the count
    chosen, or twice it (at most all) when the top won, so that a count given up is tried
    again."""

    def __init__(self, n_threads: int, measure: bool) -> None:
        self.n_threads = int(n_threads)
        self.measure = measure
        self.count = self.n_threads  # the threads chosen (1: the serial kernel)
        self.top = self.n_threads  # the next ladder's top count
        self.epochs = 0  # outer iterations run through the schedule
        self.epochs_on_threads = 0
        self.last_count = self.n_threads  # the threads of the last run
        self.switches = 0
        self.ladders = 0
        self.trials = 0
        self.decisions = 0
        self.interval = PROBE_EVERY
        self.next_check = FIRST_LADDER
        self.rates: dict[int, float] = {}  # the last ladder's seconds a row, by count
        self.speedup = np.nan  # one thread's seconds a row over the chosen count's, last seen
        self.trial: list[int] = []  # the whole outer iterations of a trial left to run
        self.trial_rates: list[tuple[int, float]] = []

    def limit(self, max_threads: int) -> None:
        """At most ``max_threads`` threads from now on (the async guard's, once more threads
        raised the dual objective): the count, the ladder's top and a trial's runs cut to it."""
        if max_threads >= self.n_threads:
            return
        self.n_threads = max(1, int(max_threads))
        self.count = min(self.count, self.n_threads)
        self.top = min(self.top, self.n_threads)
        self.trial = [min(k, self.n_threads) for k in self.trial]

    def ladder(self) -> tuple[int, ...]:
        """The thread counts of the next ladder: one, half the top, the top."""
        return tuple(sorted({1, max(1, self.top // 2), self.top}))

    def next(self, n_epochs: int, handed_over: bool) -> tuple[int, tuple[int, ...], int]:
        """(threads, ladder, outer iterations) of the next run, at most ``n_epochs``: one
        thread is the serial kernel; a run with a ladder, or of a trial, is one outer
        iteration."""
        if handed_over:
            return 1, (), n_epochs
        if not self.measure:
            return self.n_threads, (), n_epochs
        if self.trial:
            return self.trial[0], (), 1
        if self.epochs >= self.next_check:
            return self.top, self.ladder(), 1
        return self.count, (), min(n_epochs, self.next_check - self.epochs)

    def record(self, n_threads: int, epochs: int, rates: dict[int, float] | None = None,
               seconds: float = 0.0, rows: int = 0) -> None:  # fmt: skip
        """A run's threads, outer iterations done and seconds, rows visited; a ladder's
        rates (seconds a row by thread count; None: the run had no ladder). Decides the
        count at the end of a ladder or of a trial."""
        self.epochs += epochs
        self.last_count = n_threads
        if n_threads > 1:
            self.epochs_on_threads += epochs
        if not self.measure or epochs <= 0:
            return
        if self.trial:
            if rows > 0 and seconds > 0.0:
                self.trial_rates.append((n_threads, seconds / rows))
            self.trial.pop(0)
            if not self.trial:
                self._end_trial()
            return
        if rates is None:
            return
        if len(rates) < 2 or 1 not in rates:
            # a ladder on too few rows (no chunk for a phase of one): whole outer iterations
            # decide instead, as for a close ladder; threads never measured were kept however
            # slow (3,000 dense rows: 2-4x one thread's time)
            self.trial = [self.top, 1, self.top]
            self.trial_rates = []
            return
        self.ladders += 1
        self.rates = dict(rates)
        best = min(rates, key=lambda k: (rates[k], k))
        self.top = min(self.n_threads, 2 * best) if best == max(rates) else max(best, 2)
        speedup = rates[1] / rates[best]
        if best > 1 and speedup < TRUST_SPEEDUP:
            self.trial = [best, 1, best]
            self.trial_rates = []
            return
        runner_up = min(r for k, r in rates.items() if k != best)
        self._choose(best, speedup, runner_up > CLEAR_MARGIN * rates[best])
        if self.decisions == 1:
            self.next_check = max(SECOND_LADDER, self.epochs)

    def _end_trial(self) -> None:
        """The choice from a trial's whole outer iterations: one thread against the mean of
        the threaded ones around it (none measured: as before)."""
        self.trials += 1
        threads = [r for k, r in self.trial_rates if k > 1]
        serial = [r for k, r in self.trial_rates if k == 1]
        counts = [k for k, _ in self.trial_rates if k > 1]
        if not threads or not serial:
            self.next_check = self.epochs + self.interval
            return
        t, s = float(np.mean(threads)), float(np.mean(serial))
        self._choose(counts[0] if t <= s else 1, s / t, max(t, s) > CLEAR_MARGIN * min(t, s))

    def _choose(self, count: int, speedup: float, clear: bool) -> None:
        """Run ``count`` threads until the next check (``speedup``: one thread's seconds a
        row over theirs), which comes sooner when the choice changed or was close."""
        stands = self.decisions > 0 and count == self.count  # (the first is no switch)
        self.switches += int(self.decisions > 0 and count != self.count)
        self.decisions += 1
        self.count = count
        self.speedup = speedup
        if not (stands and clear):
            self.interval = PROBE_EVERY
        self.next_check = self.epochs + self.interval
        if stands and clear:
            self.interval = min(2 * self.interval, MAX_PROBE_EVERY)

    @property
    def figures(self) -> dict:
        """Where the outer iterations ran, the threads chosen, the last ladder's rates and
        ``thread_speedup``: one thread's seconds a row over the chosen count's, as last
        measured (by a ladder or a trial; NaN: none)."""
        return {
            "epochs_on_threads": self.epochs_on_threads,
            "thread_choice_switches": self.switches,
            "on_threads_at_end": self.last_count > 1,
            "threads_chosen": self.count,
            "thread_ladders": self.ladders,
            "thread_trials": self.trials,
            "thread_rates": {k: float(v) for k, v in sorted(self.rates.items())},
            "thread_speedup": float(self.speedup),
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
        schedule.limit(getattr(threads, "max_threads", schedule.n_threads))
        n_threads, ladder, k = schedule.next(n_epochs, handed_over)
        done = int(istate[I_ITER])
        rates = None
        rows = int(istate[I_ACTIVE])
        started = time.perf_counter()
        if n_threads > 1:
            if schedule.measure:
                threads.set_run(n_threads, ladder)
            driver.outer(LocalTask(done, k), keep_start=False)
            rows = getattr(threads, "rows_visited", 0)
            if ladder:
                rates = threads.phase_rates
        else:
            serial(k)
        ran = int(istate[I_ITER]) - done
        # (one thread's rows are counted for a run of one outer iteration only)
        schedule.record(n_threads, ran, rates, time.perf_counter() - started,
                        rows if k == 1 or n_threads > 1 else 0)  # fmt: skip
        if ran > 0:
            stalled = 0
            n_epochs -= ran
            continue
        # (outer iterations undone by the async scheme's guard: each halves its delay, and
        # the last hands over to one thread; the cap only guards against a loop)
        stalled += 1
        if stalled > MAX_STALLED_RUNS:
            return
