"""Progress lines for long runs: nothing for a run's first seconds, then a line on stderr every
few seconds, so that a long ``linsvm train`` is not silent (LIBLINEAR prints its dots) while a
short one prints exactly what it always did.

A ``ProgressTimer`` is started when a command starts. Whoever makes progress (a solver's hook
between outer iterations, a block, a fold, a block of converted rows) calls ``tick`` with a
function that describes it; the timer reads the clock, and only when a line is due calls the
function and prints. Reading the clock is all a tick costs, and ticks come between batches of
outer iterations (``solvers._base.drive``), never per row or non-zero.

One schedule may be shared by threads (one-vs-rest sub-problems side by side, folds) and by
several sources of lines (``labelled`` gives a timer that prefixes its lines and keeps the
same schedule): at most one line is printed per interval, by whichever tick finds it due.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

# A run prints nothing until it has taken this long ...
QUIET_SECONDS = 3.0
# ... then at most one line this often.
EVERY_SECONDS = 5.0

# The time source (seconds, any origin): tests replace it to make a small run "take long".
clock: Callable[[], float] = time.monotonic


class _Schedule:
    """When the next line is due, shared by the timers of one run."""

    def __init__(self) -> None:
        self.started = clock()
        self.next_at = self.started + QUIET_SECONDS
        self.lock = threading.Lock()

    def take(self) -> float | None:
        """The seconds since the start if a line is due now (and the next one scheduled),
        else None."""
        now = clock()
        if now < self.next_at:  # the usual case: one clock read, no lock
            return None
        with self.lock:
            if now < self.next_at:  # another thread printed meanwhile
                return None
            self.next_at = now + EVERY_SECONDS
        return now - self.started

    def postpone(self) -> None:
        """A line was printed by other means (a per-round line): the next is due later."""
        with self.lock:
            self.next_at = max(self.next_at, clock() + EVERY_SECONDS)


class ProgressTimer:
    """Prints ``describe()`` on stderr, prefixed with the seconds elapsed, when a tick finds a
    line due: the first after ``QUIET_SECONDS``, then every ``EVERY_SECONDS`` at most."""

    def __init__(self, prefix: str = "", schedule: _Schedule | None = None) -> None:
        self.prefix = prefix
        self.schedule = _Schedule() if schedule is None else schedule

    def labelled(self, label: str) -> ProgressTimer:
        """A timer on the same schedule whose lines start with ``label``."""
        return ProgressTimer(f"{self.prefix}{label}: ", self.schedule)

    def tick(self, describe: Callable[[], str]) -> None:
        """Print ``describe()`` if a line is due (``describe`` is called only then)."""
        elapsed = self.schedule.take()
        if elapsed is not None:
            # one write: lines of threads side by side do not mix
            sys.stderr.write(f"[{elapsed:.0f} s] {self.prefix}{describe()}\n")
            sys.stderr.flush()

    def postpone(self) -> None:
        """Push the next line back by ``EVERY_SECONDS``: a line was just printed otherwise."""
        self.schedule.postpone()


__all__ = ["EVERY_SECONDS", "QUIET_SECONDS", "ProgressTimer"]
