"""``linsvm compare [options] training_set_file test_set_file``: parse, race, print.

Usage errors are ``InvalidInputError``s (``LinsvmError``), which ``linsvm.cli.main`` prints
as one line, ``linsvm compare: error: ...``, with exit status 1. This module does not import
``linsvm.cli`` (``cli`` imports ``run_compare`` from here).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInputError
from ..io import read_libsvm
from .lineup import DEFAULT_LINEUP, LINEUP, check_racer_names
from .recording import CLOCKS
from .runners import DEFAULT_MAX_TIME, RACE_FACTOR, STOP_LINE, compare

# The options that take a value (the rest are flags).
VALUE_OPTIONS = frozenset(
    {"-c", "-B", "-o", "--solvers", "--max-time", "--pstar-time", "--seed", "--clock"}
)


def number(text: str, kind, option: str):
    """``text`` as ``kind`` (int or float); a one-line error naming the option if it is not."""
    try:
        return kind(text)
    except ValueError:
        raise InvalidInputError(f"option {option} needs a number, got {text!r}") from None


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
    {", ".join(LINEUP)}
    (default: all but {", ".join(s for s in LINEUP if s not in DEFAULT_LINEUP)})
--max-time S : the most time a solver may take, seconds (default {DEFAULT_MAX_TIME:g}); it stops
    sooner once certainly past {STOP_LINE} relative accuracy, or after {RACE_FACTOR:g} x the
    time an earlier solver of its loss took to get there
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
    """Parse ``linsvm compare`` arguments (options, then the two files); one-line errors."""
    opts = CompareOptions()
    argv = list(argv)
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        arg = argv[i]
        if arg in VALUE_OPTIONS:
            if i + 1 >= len(argv):
                raise InvalidInputError(f"option {arg} needs a value")
            value = argv[i + 1]
            i += 2
            if arg == "-c":
                opts.C = number(value, float, arg)
                if not (math.isfinite(opts.C) and opts.C > 0):
                    raise InvalidInputError(f"C must be > 0, got {value}")
            elif arg == "-B":
                opts.bias = number(value, float, arg)
                if not math.isfinite(opts.bias):
                    raise InvalidInputError(f"option -B needs a finite number, got {value}")
            elif arg == "-o":
                opts.outdir = value
            elif arg == "--clock":
                if value not in CLOCKS:
                    raise InvalidInputError(
                        f"option --clock needs one of {', '.join(CLOCKS)}, got {value}"
                    )
                opts.clock = value
            elif arg == "--solvers":
                names = [s.strip() for s in value.split(",") if s.strip()]
                opts.solvers = check_racer_names(names)
            elif arg in ("--max-time", "--pstar-time"):
                seconds = number(value, float, arg)
                if not (math.isfinite(seconds) and seconds > 0):
                    raise InvalidInputError(
                        f"option {arg} needs a number of seconds > 0, got {value}"
                    )
                if arg == "--max-time":
                    opts.max_time = seconds
                else:
                    opts.pstar_time = seconds
            else:
                opts.seed = number(value, int, arg)
        elif arg == "-q":
            opts.quiet = True
            i += 1
        elif arg == "--no-overhead-run":
            opts.check_overhead = False
            i += 1
        else:
            raise InvalidInputError(f"unknown option: {arg}")
    files = argv[i:]
    if len(files) < 2:
        raise InvalidInputError("expected training_set_file test_set_file")
    if len(files) > 2:
        raise InvalidInputError(f"too many arguments: {' '.join(files[2:])}")
    opts.training_file, opts.test_file = files
    if opts.outdir is None:
        name = Path(opts.training_file).name
        for suffix in (".xz", ".gz", ".bz2"):
            name = name.removesuffix(suffix)
        opts.outdir = f"compare-{name}"
    return opts


def run_compare(argv: Sequence[str]) -> int:
    """``linsvm compare``: read the two files, compare, print the report; the exit status."""
    if not argv:
        print(USAGE, end="")
        return 1
    opts = parse_compare_args(argv)
    X, y = read_libsvm(opts.training_file)
    Xt, yt = read_libsvm(opts.test_file)
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
