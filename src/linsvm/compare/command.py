"""``linsvm compare [options] training_set_file test_set_file``: parse, race, print.

Several data sets race in one command with ``-d TRAIN[,TEST]`` (repeated; a set without its
test file is split): each gets its own report and figures in ``<outdir>/<data set>/``, and the
seeds' table, one row a data set, is written as ``lineup.md`` and ``lineup.csv``. Every data
file and output path is checked before the first race (``check_before_racing``), and every
file is written atomically (``linsvm.io._atomic``).

Usage errors are ``InvalidInputError``s (``LinsvmError``), which ``linsvm.cli.main`` prints
as one line, ``linsvm compare: error: ...``, with exit status 1. This module does not import
``linsvm.cli`` (``cli`` imports ``run_compare`` from here).
"""

from __future__ import annotations

import math
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DataFormatError, InvalidInputError
from ..io import read_libsvm
from ..io._atomic import check_writable
from ..solvers._random import numpy_generator
from .lineup import DEFAULT_LINEUP_NAME, LINEUP, LINEUPS, check_lineup, check_racer_names
from .recording import CLOCKS
from .report import ComparisonResult, output_paths, write_text
from .runners import (
    DEFAULT_MAX_TIME,
    RACE_FACTOR,
    STOP_ACCURACY,
    STOP_LINE,
    compare,
    race_data,
)
from .table import lineup_csv, lineup_tables

# The options that take a value (the rest are flags).
VALUE_OPTIONS = frozenset(
    {"-c", "-B", "-o", "--solvers", "--lineup", "-d", "--dataset", "--test-fraction",
     "--target", "--max-time", "--pstar-time", "--seed", "--clock"}
)  # fmt: skip
# A training set given without its test file is split: this share of its rows is tested on.
DEFAULT_TEST_FRACTION = 0.2


def number(text: str, kind, option: str):
    """``text`` as ``kind`` (int or float); a one-line error naming the option if it is not."""
    try:
        return kind(text)
    except ValueError:
        raise InvalidInputError(f"option {option} needs a number, got {text!r}") from None


def between_0_and_1(text: str, option: str, what: str) -> float:
    """``text`` as a number strictly between 0 and 1; else a one-line error saying the option
    needs ``what`` ("a relative accuracy") in that range."""
    value = number(text, float, option)
    if not 0 < value < 1:
        raise InvalidInputError(f"option {option} needs {what} between 0 and 1, got {text}")
    return value


USAGE = f"""\
Usage: linsvm compare [options] training_set_file test_set_file
       linsvm compare [options] -d train[,test] [-d train[,test] ...]
Race the linear-SVM solvers: time to 1% and 0.1% relative primal accuracy, tables and figures
of the primal objective and test accuracy against training time; with several data sets, the
seeds' table (one row a data set) as lineup.md and lineup.csv.
options:
-c cost : set the parameter C (default 1)
-B bias : if bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1)
-o dir : output folder for compare.md, curves.json, the figures, lineup.md and lineup.csv
    (default ./compare-<training file name>; several data sets: ./compare-lineup, one
    folder per data set in it)
-d, --dataset train[,test] : a data set to race on (repeat for several); without its test
    file, a seeded share of its rows is held out (--test-fraction)
--test-fraction F : the share held out for testing (default {DEFAULT_TEST_FRACTION:g})
--lineup NAME : the racers of a seed's table: {", ".join(
    f"{k} ({', '.join(v)})" for k, v in LINEUPS.items())}
    (default {DEFAULT_LINEUP_NAME})
--solvers a,b,... : the solvers to run instead, among
    {", ".join(LINEUP)}
--target T : a solver stops once certainly past this relative accuracy (default {STOP_LINE});
    the tables get a line for it, P* is certified to a thousandth of it
--max-time S : the most time a solver may take, seconds (default {DEFAULT_MAX_TIME:g}: then a
    solver also stops after {RACE_FACTOR:g} x the time an earlier solver of its loss took to
    the target; given, every solver may take S seconds)
--pstar-time S : time budget of the reference run for P* per loss (default: 2 x max-time)
--no-overhead-run : skip running each solver again without the hook
--clock wall|cpu : the solvers' clock: wall time (default) or this thread's CPU time (for a
    machine shared with other processes)
--seed N : seed of the solvers' random orders and of the rows held out of a set without its
    test file (default 1)
-q : quiet mode (no progress)
"""


@dataclass
class CompareOptions:
    C: float = 1.0
    bias: float = -1.0
    outdir: str | None = None
    solvers: list[str] | None = None
    lineup: str = ""
    max_time: float = DEFAULT_MAX_TIME
    max_time_given: bool = False  # then every racer gets it (no race factor)
    target: float = STOP_ACCURACY
    pstar_time: float | None = None
    check_overhead: bool = True
    seed: int = 1
    clock: str = "wall"
    quiet: bool = False
    test_fraction: float = DEFAULT_TEST_FRACTION
    # (training file, test file or "" for a split), in the order given
    datasets: list[tuple[str, str]] = field(default_factory=list)

    @property
    def racers(self) -> list[str]:
        if self.solvers is not None:
            return self.solvers
        return check_lineup(self.lineup or DEFAULT_LINEUP_NAME)


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
            elif arg == "--lineup":
                check_lineup(value)
                opts.lineup = value
            elif arg in ("-d", "--dataset"):
                train, _, test = value.partition(",")
                if not train:
                    raise InvalidInputError(f"option {arg} needs train[,test], got {value!r}")
                opts.datasets.append((train, test))
            elif arg == "--target":
                opts.target = between_0_and_1(value, arg, "a relative accuracy")
            elif arg == "--test-fraction":
                opts.test_fraction = between_0_and_1(value, arg, "a number")
            elif arg in ("--max-time", "--pstar-time"):
                seconds = number(value, float, arg)
                if not (math.isfinite(seconds) and seconds > 0):
                    raise InvalidInputError(
                        f"option {arg} needs a number of seconds > 0, got {value}"
                    )
                if arg == "--max-time":
                    opts.max_time, opts.max_time_given = seconds, True
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
    if opts.solvers is not None and opts.lineup:
        raise InvalidInputError("give either --lineup or --solvers, not both")
    if files and opts.datasets:
        raise InvalidInputError(
            "give the data sets either as training_set_file test_set_file or with -d, not both"
        )
    if not opts.datasets:
        if len(files) < 2:
            raise InvalidInputError("expected training_set_file test_set_file (or -d train[,test])")
        if len(files) > 2:
            raise InvalidInputError(f"too many arguments: {' '.join(files[2:])}")
        opts.datasets = [(files[0], files[1])]
    if opts.outdir is None:
        several = len(opts.datasets) > 1
        opts.outdir = "compare-lineup" if several else f"compare-{set_name(opts.datasets[0][0])}"
    return opts


def set_name(path: str) -> str:
    """A data set's name: its file name without a compression suffix."""
    name = Path(path).name
    for suffix in (".xz", ".gz", ".bz2"):
        name = name.removesuffix(suffix)
    return name


def split_rows(X, y: np.ndarray, test_fraction: float, seed: int):
    """(X_train, y_train, X_test, y_test): a seeded random ``test_fraction`` of the rows held
    out, the rest kept in their order."""
    n_rows = X.shape[0]
    n_test = int(round(test_fraction * n_rows))
    if n_test < 1 or n_test >= n_rows:
        raise InvalidInputError(
            f"cannot hold out {100 * test_fraction:g}% of {n_rows} rows for testing: give a test "
            "file or another --test-fraction"
        )
    held = np.zeros(n_rows, dtype=bool)
    rng = numpy_generator(seed)
    held[rng.choice(n_rows, size=n_test, replace=False)] = True
    return X[~held], y[~held], X[held], y[held]


def read_set(train: str, test: str, opts: CompareOptions):
    """The training and test rows of one data set (split when no test file is given)."""
    X, y = read_libsvm(train)
    if test:
        Xt, yt = read_libsvm(test)
        return X, y, Xt, yt
    return split_rows(X, y, opts.test_fraction, opts.seed)


@dataclass
class DataSet:
    """One data set of the command: its files and where its report goes."""

    train: str
    test: str  # "" : a share of the training rows is held out
    name: str  # in the tables, and its folder's name with several data sets
    outdir: Path


def data_sets(opts: CompareOptions) -> list[DataSet]:
    """The data sets given, each with its name and output folder."""
    several = len(opts.datasets) > 1
    sets = []
    taken: set[str] = set()
    for train, test in opts.datasets:
        name = set_name(train)
        while name in taken:  # two files of one name: the folders must differ
            name += "+"
        taken.add(name)
        outdir = Path(opts.outdir) / name if several else Path(opts.outdir)
        sets.append(DataSet(train, test, name, outdir))
    return sets


def check_readable(path: str) -> None:
    """Raise now the OSError (naming ``path``) that reading it would raise later: missing, a
    folder, not readable. A pipe or a device is left to the reader: opening it here could wait
    for a writer, or take what the reader needs."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        with open(path, "rb"):  # (a folder: IsADirectoryError, as the reader's open gives)
            pass


def check_before_racing(sets: Sequence[DataSet], outdir: str) -> None:
    """Refuse now what would fail after the races: a data file that cannot be read, an output
    folder that cannot be made, an output file that cannot be written. The folders are made
    here (a race would make them)."""
    for data in sets:
        for path in (data.train, data.test):
            if path:
                check_readable(path)
    for data in sets:
        data.outdir.mkdir(parents=True, exist_ok=True)
        for path in output_paths(data.outdir):
            check_writable(path)
    for path in lineup_paths(outdir):
        check_writable(path)


def check_every_set(sets: Sequence[DataSet], opts: CompareOptions) -> None:
    """Read and check each data set before the first race: a set that cannot race (one
    class, a malformed line) would otherwise be found after the races before it, and the
    lineup's tables lost. Each set is let go here and read again for its race, so that one
    set at a time is in memory."""
    for data in sets:
        try:
            race_data(*read_set(data.train, data.test, opts))
        except DataFormatError:
            raise  # (it names its file and line)
        except InvalidInputError as exc:
            raise InvalidInputError(f"data set {data.name}: {exc}") from None


def lineup_paths(outdir: str) -> tuple[Path, Path]:
    """(lineup.md, lineup.csv) in ``outdir``."""
    return Path(outdir) / "lineup.md", Path(outdir) / "lineup.csv"


def run_compare(argv: Sequence[str]) -> int:
    """``linsvm compare``: read the data sets, race on each, print the reports and the seeds'
    table; the exit status."""
    if not argv:
        print(USAGE, end="")
        return 1
    opts = parse_compare_args(argv)
    several = len(opts.datasets) > 1
    names = opts.racers
    sets = data_sets(opts)
    check_before_racing(sets, opts.outdir)
    if several:
        check_every_set(sets, opts)
    results: list[ComparisonResult] = []
    for data in sets:
        X, y, Xt, yt = read_set(data.train, data.test, opts)
        result = compare(
            X, y, Xt, yt, opts.C, names, bias=opts.bias, max_time=opts.max_time,
            outdir=data.outdir, quiet=opts.quiet, seed=opts.seed, dataset=data.name,
            pstar_time=opts.pstar_time, check_overhead=opts.check_overhead, clock=opts.clock,
            race_factor=None if opts.max_time_given else RACE_FACTOR, target=opts.target,
        )  # fmt: skip
        results.append(result)
        print("\n".join(result.markdown(f"{data.name}/" if several else "")).rstrip() + "\n")
    table = lineup_tables(results, names)
    lineup_md, lineup_csv_path = lineup_paths(opts.outdir)
    write_text(lineup_md, "\n".join(table).rstrip() + "\n")
    write_text(lineup_csv_path, lineup_csv(results, names))
    if several:
        print("\n".join(table).rstrip())
    if not opts.quiet:
        where = "compare.md, curves.json" if not several else "one folder per data set"
        figures = "".join(f", {f.name}" for f in results[0].figures) if not several else ""
        print(f"written to {opts.outdir}/: {where}{figures}, lineup.md, lineup.csv",
              file=sys.stderr)  # fmt: skip
    return 0
