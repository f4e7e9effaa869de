"""A Ctrl-C while the ``linsvm`` command is still loading its libraries: one line, exit 130.

Importing linsvm (NumPy, SciPy, Numba, the compiled kernels) takes about half a second to a
second, before ``cli.main`` can catch anything; Python's own handler would end the command
there with a traceback from inside whichever import was running. Where the process is the
command (the console script ``linsvm``, or ``python -m linsvm``) and SIGINT has Python's
default handler (not ignored, not the program's own), this module, imported first by
``linsvm/__init__.py``, puts in a handler that ends the process at once with the command's
line; ``cli.main`` puts Python's back when it starts. A program that imports linsvm as a
library is left as it is.
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def interrupted_while_starting(signum, frame) -> None:
    os.write(2, b"linsvm: interrupted\n")
    os._exit(128 + signum)


def started_as_command() -> bool:
    """Whether this process is the ``linsvm`` command: its console script, or ``python -m
    linsvm`` (sys.argv[0] is "-m" while the module named there and its packages are imported,
    whichever it is: the interpreter's own arguments say which)."""
    argv = getattr(sys, "argv", None) or [""]
    if os.path.basename(argv[0]) == "linsvm":
        return True
    if argv[0] != "-m":
        return False
    arguments = list(getattr(sys, "orig_argv", []))
    for i, argument in enumerate(arguments[1:], start=1):
        if argument == "-m":
            return arguments[i + 1 : i + 2] == ["linsvm"]
        if argument.startswith("-m"):
            return argument == "-mlinsvm"
    return False


def command_started() -> None:
    """The command can catch a Ctrl-C itself now: Python's handler back (``cli.main``)."""
    if signal.getsignal(signal.SIGINT) is interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if (
    started_as_command()
    and threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
):
    signal.signal(signal.SIGINT, interrupted_while_starting)
