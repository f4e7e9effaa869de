"""The recording hook: snapshots of w on the solver's own clock.

The hook stops the clock: it reads the clock on entry and on exit, and the time spent inside it
is taken off the solver's elapsed time, so the solver's time at an iteration is its own work
only. Inside the hook ``w`` is copied (a snapshot) when the solver's time has grown by at
least ``SNAPSHOT_SPACING`` since the last snapshot: every early iteration is kept and a
log-spaced sample later. Given a ``score`` (P(w)), the hook also scores each snapshot, so that
the race can stop a solver once it is certainly past the table's last accuracy line
(``stop_below``). When the time budget is spent or the line is passed the hook returns False,
and the solver returns its current iterate (``stop_reason`` "interrupted").
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

import numpy as np

from ..solvers import Progress, Solution
from .lineup import Racer

# A snapshot of w is kept when the solver's time has grown by this fraction since the last one.
SNAPSHOT_SPACING = 0.05
# The solver clocks: wall time (the default), or the thread's CPU time, which other processes
# on a busy machine do not inflate (every solver runs in the calling thread).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
# Live progress line: at most this many updates per second.
PROGRESS_UPDATES_PER_SECOND = 4.0
# Progress written as lines (stderr not a terminal): one every this many seconds of a phase.
PROGRESS_LINE_SECONDS = 10.0
# How progress is shown: overwriting one terminal line, as plain lines now and then, or not.
PROGRESS_LIVE, PROGRESS_LINES, PROGRESS_NONE = "live", "lines", "none"


class Recorder:
    """The hook of a recorded run (a ``linsvm.solvers.Hook``): trace, snapshots, time budget,
    and the stop past the last accuracy line.

    ``trace`` holds (solver seconds, iteration, measure) for every call; ``snapshots`` holds
    (solver seconds, iteration, copy of w, P(w) or NaN where not scored), starting with w = 0
    at time 0. ``score``: P(w) of a snapshot, or None (nothing scored in the hook);
    ``stop_below``: the run stops at the first scored snapshot with P(w) <= it (``past_line``).
    ``show``: how progress is shown, ``PROGRESS_LIVE``, ``PROGRESS_LINES`` or ``PROGRESS_NONE``.
    """

    def __init__(self, racer: Racer, max_time: float, show: str, clock: Callable[[], float],
                 score: Callable[[np.ndarray], float] | None = None,
                 stop_below: float = -math.inf) -> None:  # fmt: skip
        self.racer = racer
        self.clock = clock
        self.max_time = max_time
        self.show = show
        self.score = score
        self.stop_below = stop_below
        self.start = 0.0
        self.hook_seconds = 0.0
        self.out_of_time = False
        self.past_line = False
        self.trace: list[tuple[float, int, float]] = []
        self.snapshots: list[tuple[float, int, np.ndarray, float]] = []
        self._last_snapshot = 0.0
        self._next_progress = 0.0

    def begin(self, n_weights: int) -> None:
        self.snapshots.append((0.0, 0, np.zeros(n_weights), math.nan))
        self.start = self.clock()
        self._next_progress = time.perf_counter() + (
            PROGRESS_LINE_SECONDS if self.show == PROGRESS_LINES else 0.0
        )

    def elapsed(self) -> float:
        """The solver's time so far: clock time since the start minus the time in the hook."""
        return self.clock() - self.start - self.hook_seconds

    def __call__(self, progress: Progress) -> bool:
        entered = self.clock()
        t = entered - self.start - self.hook_seconds
        iteration = int(progress.iteration)
        self.trace.append((t, iteration, float(progress.measure)))
        self.out_of_time = t >= self.max_time
        # a solver may report its starting point (iteration 0) or a batch that did nothing:
        # a snapshot is kept only of an iterate the last one did not hold
        later = iteration > self.snapshots[-1][1]
        if later and (self.out_of_time or t - self._last_snapshot >= SNAPSHOT_SPACING * t):
            w = np.array(progress.w, dtype=np.float64, copy=True)
            primal = math.nan if self.score is None else self.score(w)
            self.snapshots.append((t, iteration, w, primal))
            self._last_snapshot = t
            self.past_line = primal <= self.stop_below
        now = time.perf_counter()
        if self.show != PROGRESS_NONE and now >= self._next_progress:
            m = progress.measure
            shown = f", {self.racer.measure} {m:.3g}" if math.isfinite(m) else ""
            text = f"{self.racer.name}: iteration {iteration}{shown}, {t:.2f} s"
            if self.show == PROGRESS_LIVE:
                self._next_progress = now + 1.0 / PROGRESS_UPDATES_PER_SECOND
                progress_line(text)
            else:
                self._next_progress = now + PROGRESS_LINE_SECONDS
                progress_text_line(text)
        self.hook_seconds += self.clock() - entered
        return not (self.out_of_time or self.past_line)

    def finish(self, solution: Solution, seconds: float) -> None:
        """Keep the final w if the last snapshot is not it."""
        _, last_iter, last_w, _ = self.snapshots[-1]
        if self.trace and last_iter == solution.n_iter and np.array_equal(last_w, solution.w):
            return  # the last hook call saw the final w already
        # the time of the last hook call when it saw the final iteration (the solver's closing
        # work, such as computing its objective values, is no part of reaching that w)
        t = self.trace[-1][0] if self.trace and self.trace[-1][1] == solution.n_iter else seconds
        if t <= self.snapshots[-1][0]:  # w changed after the last hook call
            t = seconds
        w = np.array(solution.w, dtype=np.float64)
        self.snapshots.append((t, solution.n_iter, w, math.nan))


def progress_line(text: str) -> None:
    """Overwrite the terminal's current line with ``text``."""
    sys.stderr.write("\r" + text[:110].ljust(110))
    sys.stderr.flush()


def progress_text_line(text: str) -> None:
    """``text`` as a line of its own (stderr is not a terminal: a log)."""
    sys.stderr.write("  " + text + "\n")
    sys.stderr.flush()
