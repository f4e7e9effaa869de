"""Ctrl-C and SIGTERM during training: stop at the end of the current outer iteration.

While ``train`` runs, SIGINT and SIGTERM set a flag instead of ending the process; a hook
(``StopRequest.hook``) tells every running solver to stop when it next returns to Python,
which ``solvers/_base.drive`` makes happen at least every ``BATCH_SECONDS`` or so of work.
The solver returns its current iterate marked ``stop_reason="interrupted"``; ``train`` returns
the model with it (and the command line exits non-zero, after writing a checkpoint if asked).
A second Ctrl-C raises KeyboardInterrupt at once, for a user who does not want to wait.

A SIGTERM asks the process to end, not only the training: once the solvers have stopped (and
a checkpoint has been written, if asked), it is passed on to the handler it had before, so a
process left with SIGTERM's default action ends as it would have without linsvm. The command
line (`caller_ends_on_sigterm`) ends on its own terms instead: its line, exit status 143.
Where training runs inside something to tidy (a temporary cache), ``sigterm_passed_on_after``
passes it on only once that block has ended. Outside training, reading text holds Ctrl-C
(and such a SIGTERM) to the boundaries of its pieces (``held_to_safe_points``), where it
raises: a KeyboardInterrupt raised within Numba's return of arrays is not safe.

Signal handlers can only be installed from the main thread; elsewhere (training in a worker
thread of the caller's) signals keep their usual meaning.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .solvers._base import Progress

# Whether the caller ends the process itself after a SIGTERM (the command line); otherwise
# ``stop_on_signals`` passes the signal on when the block ends.
_caller_ends_on_sigterm = False
# Whether a SIGTERM stopped training inside ``sigterm_passed_on_after``, which passes it on.
_sigterm_held = False
# A signal held to the end of a hold (``held_to_safe_points``).
_held_signal: int | None = None


class RunInterrupted(KeyboardInterrupt):
    """A run of many trainings (cross-validation, the search for C) ended by a stop request.
    ``signum``: the signal that asked it (SIGINT or SIGTERM; None where unknown, taken as
    SIGINT), so that the command line ends as that signal asks (exit status 128 + it)."""

    def __init__(self, signum: int | None = None) -> None:
        super().__init__()
        self.signum = signum


def interrupting_signal(exc: KeyboardInterrupt) -> int:
    """The signal a KeyboardInterrupt stands for: a RunInterrupted's, else SIGINT."""
    return getattr(exc, "signum", None) or signal.SIGINT


class StopRequest:
    """Whether a signal asked training to stop, and which."""

    def __init__(self) -> None:
        self.signal: int | None = None

    @property
    def requested(self) -> bool:
        return self.signal is not None

    @property
    def name(self) -> str:
        return "" if self.signal is None else signal.Signals(self.signal).name

    def hook(self, progress: Progress) -> bool:
        """A solver hook: False (stop) once a signal has arrived."""
        return self.signal is None

    hook.every_iteration = False  # batches of iterations are enough


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Within the block, SIGINT and SIGTERM request a stop instead of ending the process.

    Each is taken over only where Python's own handling holds it (SIGINT's KeyboardInterrupt,
    a default action, or held for a safe point): a program that installed its own handler
    keeps it and sees its signals, and neither is taken where it is ignored. The previous
    handlers are restored on exit. A signal held for a safe point when the block starts is
    its stop request at once.
    """
    global _held_signal, _sigterm_held
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    # (a signal held for a safe point before training started stops it at once)
    request.signal, _held_signal = _held_signal, None

    def on_signal(signum, frame) -> None:
        if request.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: the user does not want to wait
        request.signal = signum

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(sig)
        # Taken over from Python's own handling only: not where ignored (a job started in
        # the background by a script, kept from the terminal's Ctrl-C, should stay so), nor
        # from a handler of the program's (its Ctrl-C was swallowed: an asyncio loop's, a
        # server's shutdown flag), nor from one installed by C code (None: an embedding
        # host's, which could not be put back)
        if current not in (signal.SIG_DFL, signal.default_int_handler, _hold):
            continue
        previous[sig] = current
        signal.signal(sig, on_signal)
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if request.signal == signal.SIGTERM and signal.SIGTERM in previous:
            if not _caller_ends_on_sigterm:
                signal.raise_signal(signal.SIGTERM)  # (its default action: the process ends)
            _sigterm_held = True  # (for sigterm_passed_on_after, if that is the caller)


@contextmanager
def sigterm_passed_on_after() -> Iterator[None]:
    """Within the block, a SIGTERM that stops training is passed on (SIGTERM's default
    action: the process ends) when the block ends, not when the training does: what the
    block holds (a temporary folder) is tidied first. Nothing changes under a caller that
    ends the process itself, off the main thread, or where SIGTERM has a handler."""
    global _caller_ends_on_sigterm, _sigterm_held
    if (_caller_ends_on_sigterm or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):  # fmt: skip
        yield
        return
    _caller_ends_on_sigterm, _sigterm_held = True, False
    try:
        yield
    finally:
        _caller_ends_on_sigterm = False
        if _sigterm_held:
            _sigterm_held = False
            signal.raise_signal(signal.SIGTERM)


@contextmanager
def held_to_safe_points() -> Iterator[None]:
    """Within the block, Ctrl-C (and a SIGTERM where the process is ended after: the command
    line, ``sigterm_passed_on_after``) is held until the block's end, and raised there as
    ``RunInterrupted(signal)``; a second Ctrl-C raises at once.

    Why: Numba hands a kernel's arrays back by calling into Python, which runs a pending
    signal's handler; a KeyboardInterrupt raised there came out as a SystemError, and crashed
    the process where a NamedTuple was handed back (SIGSEGV: Ctrl-C while a large text file
    was read). Training holds signals to its own stop points (``stop_on_signals``); code that
    runs kernels a piece at a time outside it (reading text, converting it to a cache) holds
    them to the pieces' boundaries with this. Only on the main thread, where Ctrl-C raises
    KeyboardInterrupt (Python's default); a block within another holds nothing more, but
    raises a held signal at its end too. A held signal is raised at the block's end however
    the block ends (never kept for code after it), so a generator holds each step between
    its yields, never across one: the hold would stay on while its caller works, and end in
    whatever thread closes it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        taken = [signal.SIGINT]
        if _caller_ends_on_sigterm and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            taken.append(signal.SIGTERM)
        previous = {sig: signal.signal(sig, _hold) for sig in taken}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _raise_held()


def _hold(signum, frame) -> None:
    """``held_to_safe_points``' handler."""
    global _held_signal
    if _held_signal is not None and signum == signal.SIGINT:
        raise KeyboardInterrupt  # a second Ctrl-C: the user does not want to wait
    _held_signal = signum


def _raise_held() -> None:
    """Raise ``RunInterrupted(signal)`` if a signal is held (``held_to_safe_points``); on
    the main thread only."""
    global _held_signal, _sigterm_held
    if _held_signal is None or threading.current_thread() is not threading.main_thread():
        return
    signum, _held_signal = _held_signal, None
    if signum == signal.SIGTERM:
        _sigterm_held = True  # (for sigterm_passed_on_after, which passes it on)
    raise RunInterrupted(signum)


@contextmanager
def caller_ends_on_sigterm() -> Iterator[None]:
    """Within the block, a SIGTERM stops training and is not passed on: the caller (the
    command line) reads ``model.stop_signal`` and ends the process itself."""
    global _caller_ends_on_sigterm
    saved = _caller_ends_on_sigterm
    _caller_ends_on_sigterm = True
    try:
        yield
    finally:
        _caller_ends_on_sigterm = saved
