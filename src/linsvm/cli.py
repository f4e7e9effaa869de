"""``linsvm train`` and ``linsvm predict``: LIBLINEAR's command line, option for option.

    linsvm train [options] training_set_file [model_file]
    linsvm predict [options] test_file model_file output_file
    linsvm compare training_set_file test_set_file [options]
    linsvm cache [-q] [--block-size MB] data_file cache_file

Options take LIBLINEAR's letters and meanings (``-s -c -e -B -wi -W -v -q``; ``-b`` for
predict), plus long options of linsvm's own (``--seed``, ``--verbose``, ``--bucket-size``,
``--buckets-per-group``). ``train`` and ``predict`` take LIBLINEAR's order (options, then
files); linsvm's own ``compare`` takes its options anywhere. ``-h`` / ``--help`` prints a
command's usage, ``linsvm --version`` the version. Every user error is one line on stderr and
exit status 1; an output file that cannot be written (the model, a checkpoint, predict's
output, a cache) is one before any data is read.

stdout is LIBLINEAR's. A run that takes more than a few seconds prints progress lines on
stderr every few seconds (``linsvm._progress``), unless ``-q``; ``--verbose`` prints its own
line every outer iteration instead.
"""

from __future__ import annotations

import math
import os
import signal
import stat
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import numpy as np

from ._command_start import command_started
from ._progress import ProgressTimer
from .checkpoint import DEFAULT_EVERY_SECONDS
from .errors import (
    DataFormatError,
    InvalidInputError,
    LinsvmError,
    ZeroIndexError,
    import_extra,
)
from .evaluation import _add_regression_sums, _scores_from_sums, regression_scores
from .interrupts import caller_ends_on_sigterm, interrupting_signal
from .io._atomic import check_writable
from .solvers import (
    CLASSIFICATION,
    MAP_MODES,
    ONECLASS,
    REGRESSION,
    SOLVERS,
    available_solvers,
    check_parameter,
    list_where,
    solver_number,
)
from .solvers._base import MAX_ITER
from .solvers._dual_threads import SCHEMES, threads_line

TRAIN_USAGE = """\
Usage: linsvm train [options] training_set_file [model_file]
options:
-s type : set type of solver (default 1)
  for multi-class classification
     0 -- L2-regularized logistic regression (primal)
     1 -- L2-regularized L2-loss support vector classification (dual)
     2 -- L2-regularized L2-loss support vector classification (primal)
     3 -- L2-regularized L1-loss support vector classification (dual)
     4 -- support vector classification by Crammer and Singer
     5 -- L1-regularized L2-loss support vector classification
     6 -- L1-regularized logistic regression
     7 -- L2-regularized logistic regression (dual)
  for regression
    11 -- L2-regularized L2-loss support vector regression (primal)
    12 -- L2-regularized L2-loss support vector regression (dual)
    13 -- L2-regularized L1-loss support vector regression (dual)
  for outlier detection
    21 -- one-class support vector machine (dual)
  linsvm's own (two-class problems one-vs-rest; number or name):
    30 pegasos -- L1-loss SVC by Pegasos (primal SGD; -e unused, --max-iter epochs, default 100)
    31 sgd-r -- L1-loss SVC by SGD-R (random patterns; --max-iter epochs, default 100)
    32 sgd-s -- L1-loss SVC by SGD-S (epochs; stops at -e relative accuracy, default 0.01)
    33 sgd-m -- L1-loss SVC by SGD-M (SGD-S with multiple updates; -e as sgd-s)
    34 pcd -- L2-regularized L2-loss SVC by primal coordinate descent (-e as -s 2)
    35 svmperf -- L1-loss SVC by SVMperf's 1-slack cutting plane (-e its slack tolerance,
       default 0.1 in svm_perf's units)
    36 ocas -- L1-loss SVC by OCAS (stops at (P - lower bound) <= eps P, default 0.01)
    37 svmsgd, 38 asgd -- L1-loss SVC by Bottou's svmsgd / averaged SGD (--max-iter epochs,
       default 5; -B 1 -R: sgd's unregularized bias)
    39 sgd-qn -- L1-loss SVC by SGD-QN (--max-iter epochs, default 5)
    40 tron -- L2-regularized L2-loss SVC by trust-region Newton, LIBLINEAR 1.x (-e as -s 2)
  (30-33 and 35-39 take one C: no -wi, -W; models are saved as -s 3 / -s 2 models)
-c cost : set the parameter C (default 1)
-p epsilon : set the epsilon in loss function of SVR (default 0.1)
-n nu : set the parameter nu of one-class SVM (default 0.5)
-e epsilon : set tolerance of termination criterion
    -s 0 and 2: |f'(w)|_2 <= eps*min(pos,neg)/l*|f'(w0)|_2 (default 0.01)
    -s 5 and 6: |f'(w)|_1 <= eps*min(pos,neg)/l*|f'(w0)|_1 (default 0.01)
    -s 4: max dual block gradient spread <= eps (default 0.1)
    -s 11: |f'(w)|_2 <= eps*|f'(w0)|_2 (default 0.0001)
    -s 12 and 13: |f'(alpha)|_1 <= eps |f'(alpha0)| (default 0.1)
    -s 21: max violation of the dual's optimality <= eps (default 0.01)
    -s 1 and 3: max PG - min PG <= eps and both within eps of zero (default 0.1)
    -s 7: max |dual sub-gradient| <= eps (default 0.1)
-B bias : if bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1)
-R : not regularize the bias; must with -B 1 to have the bias (-s 0, 2, 5, 6, 11, 37, 38, 40)
-wi weight : weights adjust the parameter C of different classes (e.g. -w1 2 -w-1 0.5)
-W file : per-instance weights, one number per line (C of row i becomes C * W_i)
-v n : n-fold cross validation mode
-C : find parameters (C for -s 0 and 2; C and p for -s 11)
-q : quiet mode (no outputs)
-m nr_thread : threads (default 1; -1: all cores): the one-vs-rest sub-problems side by
    side, then within each the dual CD of -s 1, 3, 12, 13 (as --thread-scheme says) or the
    passes of the Newton solvers (-s 0, 2, 11: the same model up to rounding); with -v the
    folds, with -C the folds of each C; with --memory only the conversion of a text file
    to its temporary cache (training in blocks runs on one thread)
--thread-scheme auto|async|replicas|rounds : how threads share one dual CD solve (-s 1, 3,
    12, 13): async
    (every thread against one shared w), replicas (every thread against its own copy of w,
    replaying the others' steps), both measured as they go against one thread, the faster
    kept (runs differ in their last bits); or rounds (merged in a fixed order: the same
    model for the same -m and seed, bit for bit); auto (default): replicas at 2 threads,
    async above
--seed N : seed of the random coordinate order and of -v/-C's folds (default 1)
--max-iter N : cap on outer iterations (default as LIBLINEAR: 300 for the dual solvers,
    1000 Newton iterations for the primal ones; -s 4 100000, -s 5 and -s 21 1000, -s 6 100;
    -s 1 continues with -s 2 at its cap, but in blocks and on a cluster, which warn)
--bucket-size N, --buckets-per-group N : the coordinate order of the dual CD (-s 1, 3, 7,
    12, 13; default 16 and 16; 1 and 1 give a plain random permutation, as LIBLINEAR)
--no-shrinking : turn shrinking off (-s 1, 3, 4, 12, 13)
--gpu : train -s 1, 3, 12 or 13 on an NVIDIA GPU (needs pip install 'linsvm[cuda]')
--verbose : one line per outer iteration: iteration, active set, PG gap, primal, dual
    (without it, a run that takes more than 3 s prints a progress line on stderr every
    5 s: iteration, active set, stopping measure; -q: none; with --memory a line per outer
    iteration either way)
--checkpoint file : save the solver's state there, atomically, every --every seconds
    (default 60), at the end and when the run is interrupted
--resume file : continue from a checkpoint of the same data and options, to the model an
    uninterrupted run gives (a larger --max-iter too, when nothing had reached the old cap:
    -s 0-7, 11-13, 21)
--save-on-interrupt : on Ctrl-C or SIGTERM write the current (not converged) model anyway;
    without it an interrupted run writes no model (the exit status is non-zero either way)
Data larger than memory (-s 1, 3 and 7):
--memory size : train by block minimisation in about this much memory (e.g. 2G, 512M; a
    number without a unit is bytes):
    the data (a cache from "linsvm cache", or text converted to a temporary one) is read a
    block at a time; w and alpha (8 bytes a row) come on top; --max-iter caps the outer
    iterations (default 300, as in memory: one is an epoch of the in-memory solver);
    Ctrl-C stops after the current block; --checkpoint / --resume as for the other
    solvers; -v n cross-validates in the same memory. The size
    counts the process itself (interpreter, libraries, compiled code: 160-220 MB,
    measured at the start) and the labels (1 byte a row); a size that leaves less than
    1 MB a block is refused, with the smallest that trains
Distributed training on Dask (-s 1, 3 and 7; CoCoA+):
--dask address : train on the Dask cluster whose scheduler is at this address (e.g.
    tcp://10.0.0.5:8786), or "local:N" for N worker processes on this machine; the
    workers read the training file (text or cache) themselves, so it must be at a
    path they all see; -e is then the relative duality gap to stop at (default 0.001),
    --max-iter caps the rounds (default 200); a progress line per round
--partitions k : partitions of the rows (default: one per worker)
--local-passes n : passes of each worker's solver over its rows per round (default 1)
--hold-bias : with -B and -s 1 or 7, the client holds the bias weight (far fewer rounds
    where the bias is a large part of rows unlike a constant, more where a feature is
    nearly one; see the README)
Feature maps (the model file then starts with a feature_map line; predict applies it):
--poly2 : train on the degree-2 map: x, the squares and all pairwise products
--gamma g, --coef0 r : scale it as the polynomial kernel (g x'x' + r)^2 (default g = 1/n,
    r = 0 when only the other is given)
--hash-bits b : hash the (mapped) features into 2^b signed columns (without --poly2: the
    raw feature indices)
--map-mode m : implicit (-s 1 and 3 form each mapped row as they visit it, storing nothing;
    slower), materialise (the mapped matrix is formed once; every solver) or auto (default:
    materialise unless it would take more than a quarter of the memory)
"""

PREDICT_USAGE = """\
Usage: linsvm predict [options] test_file model_file output_file
options:
-b probability_estimates : whether to output probability estimates, 0 or 1 (default 0;
    any non-zero integer is 1, as LIBLINEAR); only for logistic regression models
-q : quiet mode (no outputs)
"""

CACHE_USAGE = """\
Usage: linsvm cache [options] data_file cache_file
Convert a LIBSVM data file (plain, .gz, .bz2 or .xz) into a binary cache, which every command
reads in its place, faster, and which is read block by block by memory mapping.
options:
--block-size MB : about MB megabytes of rows per block (default 64)
-q : quiet mode (no outputs; else a conversion that takes more than 3 s prints the rows
    converted so far on stderr every 5 s)
"""

SCALE_USAGE = """\
Usage: linsvm scale [options] data_filename
Scale each feature linearly onto [lower, upper] (LIBSVM's svm-scale, which LIBLINEAR ships);
the scaled rows go to the standard output, as svm-scale writes them.
options:
-l lower : x scaling lower limit (default -1; 0 keeps non-negative sparse data sparse)
-u upper : x scaling upper limit (default +1)
-y y_lower y_upper : y scaling limits (default: no y scaling)
-s save_filename : save scaling parameters to save_filename
-r restore_filename : restore scaling parameters from restore_filename (its limits are the
    ones used: -l, -u and -y, if given, must agree with them)
"""

MAIN_USAGE = """\
Usage: linsvm {train,predict,compare,cache,scale} ...
  linsvm train [options] training_set_file [model_file]
  linsvm predict [options] test_file model_file output_file
  linsvm compare [options] training_set_file test_set_file   (the SVM solvers raced)
  linsvm cache [options] data_file cache_file   (a binary cache that any command reads)
  linsvm scale [options] data_filename   (svm-scale: features onto [-1, 1] or [lower, upper])
  linsvm --version
Run "linsvm COMMAND --help" for a command's options.
"""

HELP_FLAGS = ("-h", "--help")

# compare's options that take a value; its options may come before, between or after the files
COMPARE_VALUE_OPTIONS = frozenset(
    {"-c", "-B", "-o", "--solvers", "--lineup", "-d", "--dataset", "--test-fraction",
     "--target", "--max-time", "--pstar-time", "--seed", "--clock"}
)  # fmt: skip

# LIBLINEAR's train and predict number features from 1 and have no option for 0-based files
ZERO_INDEX_ADVICE = (
    "feature index 0: LIBSVM data files number features from 1 "
    "(a 0-based file needs every index increased by 1)"
)


class UsageError(LinsvmError):
    """Bad command-line options."""


@dataclass
class TrainOptions:
    solver: int = 1
    C: float = 1.0
    eps: float | None = None
    bias: float = -1.0
    class_weight: dict = field(default_factory=dict)
    weight_file: str | None = None
    n_folds: int = 0
    quiet: bool = False
    seed: int = 1
    n_jobs: int = 1
    max_iter: int | None = None
    bucket_size: int | None = None
    buckets_per_group: int | None = None
    shrinking: bool = True
    thread_scheme: str = "auto"
    regularize_bias: bool = True
    p: float = 0.1
    p_given: bool = False
    nu: float = 0.5
    find_C: bool = False
    C_given: bool = False
    every_given: bool = False
    solver_given: bool = False
    verbose: bool = False
    checkpoint: str | None = None
    checkpoint_every: float = DEFAULT_EVERY_SECONDS
    resume: str | None = None
    save_on_interrupt: bool = False
    poly2: bool = False
    gamma: float | None = None
    coef0: float | None = None
    hash_bits: int | None = None
    map_mode: str = "auto"
    memory: str | None = None
    dask: str | None = None
    partitions: int | None = None
    local_passes: int | None = None
    hold_bias: bool = False
    device: str = "cpu"
    training_file: str = ""
    model_file: str = ""


def _number(text: str, kind, option: str):
    try:
        if not _plain_number(text):
            raise ValueError(text)
        return kind(text)
    except ValueError:
        wanted = "an integer" if kind is int else "a number"
        raise UsageError(f"option {option} needs {wanted}, got {text!r}") from None


def _plain_number(text: str) -> bool:
    """Whether ``text`` is written as C's atof/atoi read numbers: Python also takes digit
    groups ("1_0" is 10, where LIBLINEAR reads 1), surrounding blanks and other scripts'
    digits."""
    return text.isascii() and "_" not in text and text == text.strip()


def _choice(text: str, choices, option: str) -> str:
    if text not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)}, got {text}")
    return text


# train's options without a value: the field each sets, and to what
_TRAIN_FLAGS: dict[str, tuple[str, object]] = {
    "-q": ("quiet", True),
    "--verbose": ("verbose", True),
    "--no-shrinking": ("shrinking", False),
    "--gpu": ("device", "cuda"),
    "--save-on-interrupt": ("save_on_interrupt", True),
    "-R": ("regularize_bias", False),
    "-C": ("find_C", True),
    "--poly2": ("poly2", True),
    "--hold-bias": ("hold_bias", True),
}

# train's options that set one field from their value: the field, and the value's type (str:
# the text as given); -s, -wi, --thread-scheme and --map-mode are parsed on their own
_TRAIN_VALUES: dict[str, tuple[str, type]] = {
    "-c": ("C", float), "-e": ("eps", float), "-B": ("bias", float), "-p": ("p", float),
    "-n": ("nu", float), "--every": ("checkpoint_every", float), "--gamma": ("gamma", float),
    "--coef0": ("coef0", float),
    "-v": ("n_folds", int), "-m": ("n_jobs", int), "--seed": ("seed", int),
    "--max-iter": ("max_iter", int), "--bucket-size": ("bucket_size", int),
    "--buckets-per-group": ("buckets_per_group", int), "--hash-bits": ("hash_bits", int),
    "--partitions": ("partitions", int), "--local-passes": ("local_passes", int),
    "-W": ("weight_file", str), "--checkpoint": ("checkpoint", str), "--resume": ("resume", str),
    "--memory": ("memory", str), "--dask": ("dask", str),
}  # fmt: skip


def _set_train_value(opts: TrainOptions, option: str, value: str) -> None:
    """Set the field of one of ``_TRAIN_VALUES``'s options, with its own range check."""
    name, kind = _TRAIN_VALUES[option]
    setattr(opts, name, value if kind is str else _number(value, kind, option))
    if option == "-c":
        opts.C_given = True
    elif option == "-p":
        opts.p_given = True
    elif option == "-v" and opts.n_folds < 2:
        raise UsageError("n-fold cross validation: n must >= 2")
    elif option == "-m" and opts.n_jobs == 0:
        raise UsageError("-m nr_thread: the number of threads must not be 0")
    elif option == "--every":
        if not opts.checkpoint_every > 0:
            raise UsageError(f"--every needs a number of seconds > 0, got {value}")
        opts.every_given = True


def _refuse_clashes(option: str, others: tuple[tuple[str, object], ...]) -> None:
    """A UsageError naming each of ``others`` (flag, given) that is given with ``option``."""
    clashes = [flag for flag, given in others if given]
    if clashes:
        raise UsageError(f"{option} does not go with {', '.join(clashes)}")


# The options of the dual coordinate descent's loops, and the solvers whose loops read them
# (dcd, svr, crammer_singer and dual_lr; the threads of dcd_threads and dcd_async): another
# solver would ignore them
_DUAL_LOOP_OPTIONS = {
    "--no-shrinking": (1, 3, 4, 12, 13),
    "--bucket-size": (1, 3, 7, 12, 13),
    "--buckets-per-group": (1, 3, 7, 12, 13),
    "--thread-scheme": (1, 3, 12, 13),
}


def _refuse_for_the_solver(opts: TrainOptions) -> None:
    """A UsageError for an option of the dual loops given to a solver that would ignore it."""
    given = {"--no-shrinking": not opts.shrinking, "--bucket-size": opts.bucket_size is not None,
             "--buckets-per-group": opts.buckets_per_group is not None,
             "--thread-scheme": opts.thread_scheme != "auto"}  # fmt: skip
    for option, solvers in _DUAL_LOOP_OPTIONS.items():
        if given[option] and opts.solver not in solvers:
            listed = ", ".join(map(str, solvers[:-1])) + f" and {solvers[-1]}"
            raise UsageError(f"{option} applies to -s {listed}, not -s {opts.solver}")


def parse_train_args(argv: list[str]) -> TrainOptions:
    """Parse ``linsvm train`` arguments as LIBLINEAR's ``train`` does (options, then files)."""
    opts = TrainOptions()
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        arg = argv[i]
        if arg in _TRAIN_FLAGS:
            setattr(opts, *_TRAIN_FLAGS[arg])
            i += 1
            continue
        if i + 1 >= len(argv):
            raise UsageError(f"option {arg} needs a value")
        value = argv[i + 1]
        if arg == "-s":
            opts.solver = solver_number(value)
            if opts.solver < 0:
                raise UsageError(
                    f"unknown solver type -s {value}; available: {available_solvers()}"
                )
            opts.solver_given = True
        elif arg in _TRAIN_VALUES:
            _set_train_value(opts, arg, value)
        elif arg.startswith("-w") and len(arg) > 2:
            label = _number(arg[2:], int, "-w<label>")
            # (as LIBLINEAR: a label given twice has its C multiplied by both weights)
            weight = _number(value, float, arg)
            opts.class_weight[label] = opts.class_weight.get(label, 1.0) * weight
        elif arg == "--thread-scheme":
            opts.thread_scheme = _choice(value, SCHEMES, arg)
        elif arg == "--map-mode":
            opts.map_mode = _choice(value, MAP_MODES, arg)
        else:
            raise UsageError(f"unknown option: {arg}")
        i += 2
    files = argv[i:]
    if not files:
        raise UsageError("missing training_set_file")
    if len(files) > 2:
        raise UsageError(f"too many arguments: {' '.join(files[2:])}")
    opts.training_file = files[0]
    opts.model_file = files[1] if len(files) == 2 else os.path.basename(files[0]) + ".model"
    if opts.find_C:
        # LIBLINEAR: -C searches with 5 folds unless -v says otherwise, and -s 2 by default
        opts.n_folds = opts.n_folds or 5
        if not opts.solver_given:
            print("Solver not specified. Using -s 2", file=sys.stderr)  # (LIBLINEAR's, -q too)
            opts.solver = 2
        if not SOLVERS[opts.solver].c_search:
            raise UsageError(
                "warm-start parameter search only available for "
                + list_where(lambda spec: bool(spec.c_search), flags=True)
            )
    if opts.solver not in SOLVERS:
        raise UsageError(f"unknown solver type -s {opts.solver}")
    if not opts.poly2 and (opts.gamma is not None or opts.coef0 is not None):
        raise UsageError("--gamma and --coef0 scale the degree-2 map: give --poly2 too")
    if opts.every_given and not opts.checkpoint:
        raise UsageError("--every sets how often --checkpoint writes: give --checkpoint too")
    if opts.map_mode != "auto" and not (opts.poly2 or opts.hash_bits is not None):
        raise UsageError("--map-mode needs a feature map (--poly2 or --hash-bits)")
    if opts.hash_bits == 31 and opts.n_folds == 0:  # (more bits: the map's own range error)
        # (the model's 2^31 columns: nr_feature is a C int in the model file)
        raise UsageError("--hash-bits 31: a model file holds at most 2^31 - 1 features; "
                         "use at most 30 bits")  # fmt: skip
    _refuse_for_the_solver(opts)
    if opts.memory is not None:
        if opts.solver not in (1, 3, 7):
            raise UsageError("--memory: block minimisation trains -s 1, -s 3 and -s 7")
        # (block minimisation has its own order, shrinking and one thread a block)
        _refuse_clashes("--memory", (
            ("-C", opts.find_C), ("-W", opts.weight_file),
            ("--poly2/--hash-bits", opts.poly2 or opts.hash_bits is not None),
            ("--no-shrinking", not opts.shrinking),
            ("--bucket-size", opts.bucket_size is not None),
            ("--buckets-per-group", opts.buckets_per_group is not None),
            ("--thread-scheme", opts.thread_scheme != "auto"),
        ))  # fmt: skip
    if opts.n_folds:
        # (-v and -C write no model: nothing to save or continue; they print the folds'
        # LIBLINEAR lines, not each iteration)
        _refuse_clashes("-C" if opts.find_C else "-v", (
            ("--checkpoint/--resume", opts.checkpoint or opts.resume),
            ("--save-on-interrupt", opts.save_on_interrupt), ("--verbose", opts.verbose),
        ))  # fmt: skip
    if opts.dask is not None:
        if opts.solver not in (1, 3, 7):
            raise UsageError("--dask: distributed training (CoCoA+) trains -s 1, -s 3 and -s 7")
        _refuse_clashes("--dask", (
            ("-v", opts.n_folds > 0), ("-C", opts.find_C), ("-W", opts.weight_file),
            ("--memory", opts.memory is not None),
            ("--poly2/--hash-bits", opts.poly2 or opts.hash_bits is not None),
            ("--checkpoint/--resume", opts.checkpoint or opts.resume),
            ("-R", not opts.regularize_bias),
            # (each worker's solver has its own order, shrinking and one thread)
            ("--no-shrinking", not opts.shrinking),
            ("--bucket-size", opts.bucket_size is not None),
            ("--buckets-per-group", opts.buckets_per_group is not None),
            ("--thread-scheme", opts.thread_scheme != "auto"),
            ("-m", opts.n_jobs != 1),
        ))  # fmt: skip
        # (checked before a cluster is started)
        if opts.eps is not None and not 0 < opts.eps < 1:  # (1 is the gap at alpha = 0)
            raise UsageError(f"--dask: -e (the relative duality gap to stop at) must be > 0 "
                             f"and < 1, got {opts.eps:g}")  # fmt: skip
        for name, value in (("--max-iter", opts.max_iter), ("--partitions", opts.partitions),
                            ("--local-passes", opts.local_passes)):  # fmt: skip
            if value is not None and value < 1:
                raise UsageError(f"--dask: {name} must be >= 1, got {value}")
    elif opts.partitions is not None or opts.local_passes is not None or opts.hold_bias:
        raise UsageError("--partitions, --local-passes and --hold-bias go with --dask")
    if opts.device == "cuda":
        # (the GPU's order is its own, and no CPU threads share its solve)
        _refuse_clashes("--gpu", (
            ("--memory", opts.memory is not None), ("--dask", opts.dask is not None),
            ("--thread-scheme", opts.thread_scheme != "auto"),
            ("--bucket-size", opts.bucket_size is not None),
            ("--buckets-per-group", opts.buckets_per_group is not None),
            ("--map-mode implicit", opts.map_mode == "implicit"),  # (it trains phi(X)'s rows)
        ))  # fmt: skip
    if opts.map_mode == "implicit" and not SOLVERS[opts.solver].implicit_map:
        raise UsageError(
            f"--map-mode implicit: -s {opts.solver} cannot form the map implicitly; "
            + list_where(lambda spec: spec.implicit_map, flags=True)
            + " can"
        )
    return opts


def feature_map_of(opts: TrainOptions):
    """The FeatureMap the options ask for, or None."""
    if not opts.poly2 and opts.hash_bits is None:
        return None
    from .features import FeatureMap

    return FeatureMap(
        degree=2 if opts.poly2 else 1, gamma=opts.gamma, coef0=opts.coef0,
        hash_bits=opts.hash_bits,
    )  # fmt: skip


def wants_help(argv: list[str]) -> bool:
    """``-h`` or ``--help`` among the arguments (no option takes either as its value)."""
    return any(arg in HELP_FLAGS for arg in argv)


def options_first(argv: list[str], value_options: frozenset[str]) -> list[str]:
    """The arguments with every option (and its value) moved before the operands, order kept
    otherwise: lets a command whose parser wants options first take them anywhere."""
    options: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-") and len(arg) > 1:
            takes_value = arg in value_options
            if takes_value and i + 1 == len(argv):
                # (moved before the operands alone, it would take the first of them as its
                # value: "compare A B C -o" would race B and C and write into A)
                raise UsageError(f"option {arg} needs a value")
            options.extend(argv[i : i + 2] if takes_value else [arg])
            i += 2 if takes_value else 1
        else:
            operands.append(arg)
            i += 1
    return options + operands


def read_weight_file(path: str, n_rows: int) -> np.ndarray:
    """One non-negative number per line (LIBLINEAR's instance-weights ``-W`` file), blank
    lines skipped; read by a compiled loop (a file has a line per training row)."""
    from .errors import DataFormatError
    from .io import _parse

    with open(path, "rb") as f:
        buf = np.frombuffer(f.read(), dtype=np.uint8)
    # at most a number a line end, and one after the last
    weights = np.empty(int(np.count_nonzero(buf == 10) + np.count_nonzero(buf == 13)) + 1)
    found, line, start = 0, 0, 0
    while True:
        found, status, text_start, text_end, line, start = _parse.parse_number_lines(
            buf, start, weights, found, line
        )
        if status == _parse.WORDS_DONE:
            break
        text = buf[text_start:text_end].tobytes().decode("ascii", errors="replace").strip()
        value = float(text) if status == _parse.WORDS_FALLBACK else None
        if status == _parse.WORDS_BAD:
            raise DataFormatError(path, line, f"bad weight {text[:40]!r}")
        if value is not None and np.isfinite(value) and value >= 0:
            weights[found] = value
            found += 1
            continue
        raise DataFormatError(path, line, f"weight must be finite and >= 0, got {text}")
    if found != n_rows:
        raise InvalidInputError(f"{path}: {found} weights for {n_rows} training instances")
    return weights[:found].copy()


def _model_file_width(width: int, path: str) -> None:
    """Refuse a width LIBLINEAR's model file cannot hold (nr_feature is a C int)."""
    from .io.model_file import MAX_NR_FEATURE

    if width >= MAX_NR_FEATURE:
        raise InvalidInputError(
            f"{path}: feature index {width}: LIBLINEAR's model files hold at most "
            f"{MAX_NR_FEATURE - 1} features (nr_feature is a C int)"
        )


def integer_labels(y: np.ndarray, path: str) -> np.ndarray:
    """Class labels as int64; a label that is not an integer, or not one of LIBLINEAR's
    (a C int, as its model files hold them), is an error before any training."""
    bad = np.flatnonzero(y != np.round(y))
    if bad.size:
        raise InvalidInputError(
            f"{path}: class label {y[bad[0]]:g} of instance {bad[0] + 1} is not an integer "
            "(LIBLINEAR classifiers need integer labels)"
        )
    bad = np.flatnonzero((y < -(2.0**31)) | (y >= 2.0**31))
    if bad.size:
        raise InvalidInputError(
            f"{path}: class label {y[bad[0]]:.17g} of instance {bad[0] + 1} is out of the "
            "range of LIBLINEAR's labels (-2^31 to 2^31 - 1)"
        )
    return y.astype(np.int64)


def printf_g(value: float) -> str:
    """``value`` as C's printf("%g") writes it with glibc: Python's "g", except a NaN whose
    sign bit is set (0/0 on x86, a constant prediction's r^2) is "-nan"."""
    if math.isnan(value):
        return "-nan" if np.signbit(value) else "nan"
    return f"{value:g}"


@contextmanager
def _naming(path: str):
    """Errors from training (one class, bad weights for the labels, ...) name the file; those
    that name a file of their own (the checkpoint's) are left as they are."""
    try:
        yield
    except InvalidInputError as exc:
        message = str(exc)
        # ("data.txt bytes 0-99: ..." too)
        if message.startswith((f"{path}:", f"{path} ", "checkpoint ")):
            raise
        raise InvalidInputError(f"{path}: {message}") from exc


@contextmanager
def _as_given(absolute: str, given: str):
    """Errors that name the file by ``absolute`` (the path the Dask workers read) reworded
    with ``given``, the user's name for it, as the other modes print it."""
    try:
        yield
    except DataFormatError as exc:  # rebuilt from its fields (path, line, what)
        cls, args = exc.__reduce__()[:2]
        if absolute not in args:
            raise
        raise cls(*(given if a == absolute else a for a in args)) from None
    except OSError as exc:
        if exc.filename != absolute:
            raise
        raise type(exc)(exc.errno, exc.strerror, given) from None
    except LinsvmError as exc:
        message = str(exc)
        if absolute not in message:
            raise
        try:
            reworded = type(exc)(message.replace(absolute, given))
        except TypeError:  # an error built from other fields than its message
            reworded = InvalidInputError(message.replace(absolute, given))
        raise reworded from None


def _print_warnings(caught, quiet: bool) -> None:
    """The warnings training gave, as LIBLINEAR's "WARNING: ..." lines on stderr; with -q only
    those LIBLINEAR prints whatever -q says (``LiblinearNotice``)."""
    from .problems import LiblinearNotice

    for w in caught:
        if not quiet or issubclass(w.category, LiblinearNotice):
            print(f"WARNING: {w.message}", file=sys.stderr)


@contextmanager
def _notices_at_once(caught: list) -> Iterator[None]:
    """Within: LIBLINEAR's notices (``LiblinearNotice``: leave-one-out folds, a weight of an
    absent class) printed as they come, before a long -v or -C run's lines as LIBLINEAR
    prints them; the other warnings recorded in ``caught``, printed after."""
    from .problems import LiblinearNotice

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, LiblinearNotice):
            print(f"WARNING: {message}", file=sys.stderr, flush=True)
        else:
            caught.append(warnings.WarningMessage(message, category, filename, lineno, file,
                                                  line))  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def _progress_timer(quiet: bool) -> ProgressTimer | None:
    """The timer of a command's progress lines: none with -q."""
    return None if quiet else ProgressTimer()


def run_train(argv: list[str]) -> int:
    import linsvm

    if not argv or wants_help(argv):
        print(TRAIN_USAGE, end="")
        return 0 if argv else 1
    opts = parse_train_args(argv)
    _check_before_reading(opts)
    feature_map = feature_map_of(opts)
    timer = _progress_timer(opts.quiet)
    if opts.memory is not None:
        return _train_in_blocks(opts, timer)
    if opts.dask is not None:
        return _train_distributed(opts)
    X, y, read_seconds = _read_training_set(opts, feature_map)
    params = _train_params(opts, feature_map, X.shape[0])
    with warnings.catch_warnings(record=True) as caught, _naming(opts.training_file):
        warnings.simplefilter("always")
        if opts.find_C:
            return _find_parameters(opts, X, y, params, caught)
        if opts.n_folds:
            return _cross_validate(opts, X, y, params, timer, caught)
        start = time.perf_counter()
        model = linsvm.train(
            X,
            y,
            verbose=opts.verbose and not opts.quiet,
            progress=timer,
            checkpoint=opts.checkpoint,
            checkpoint_every=opts.checkpoint_every,
            resume=opts.resume,
            dual_variables=False,  # (only a warm start needs them; K classes hold K x l)
            **params,
        )
        train_seconds = time.perf_counter() - start
    if model.interrupted:
        return _interrupted(model, opts)
    save_seconds = _save_model(model, opts, caught)
    if not opts.quiet:
        _print_train_summary(model, opts, X, read_seconds, train_seconds, save_seconds)
    return 0


def refuse_replacing(output: str, what: str, inputs: list[tuple[str, str]]) -> None:
    """Refuse an output path that names one of the command's inputs (also through a link):
    writing it would replace what the command reads, silently (LIBLINEAR's programs do). A
    terminal or a device (/dev/stdout, /dev/null) is written in place, replacing nothing."""
    with suppress(OSError):
        if not stat.S_ISREG(os.stat(output).st_mode):
            return
    for name, path in inputs:
        with suppress(OSError):  # (a missing input is the reader's to report)
            if os.path.samefile(path, output):
                raise UsageError(f"{output}: the {what} would replace the {name}")


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file, existing or not (also through links)."""
    with suppress(OSError):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def _check_before_reading(opts: TrainOptions) -> None:
    """What can be refused before the data are read: the options, the device, the extra
    --dask needs, the output paths."""
    # option errors first, before reading the data, and without the file's name
    check_parameter(opts.solver, opts.C, opts.eps, opts.bias, opts.max_iter, opts.regularize_bias)
    if opts.device == "cuda":  # before reading the data: no GPU, no wait
        from .solvers import check_device
        from .solvers.dcd_cuda import check_available

        check_device(SOLVERS[opts.solver], opts.device)
        check_available()
    if opts.dask is not None:  # likewise: without the distributed extra, one line naming it
        import_extra(
            "distributed", "distributed", "--dask", package="dask.distributed", provides=("dask",)
        )
    # the outputs too: a path that cannot be written is found now, not after training
    inputs = [("training file", opts.training_file)]
    if opts.weight_file is not None:
        inputs.append(("weight file", opts.weight_file))
    if not (opts.n_folds or opts.find_C):
        check_writable(opts.model_file)
        resumed = [] if opts.resume is None else [("checkpoint", opts.resume)]
        refuse_replacing(opts.model_file, "model", inputs + resumed)
    if opts.checkpoint is not None:  # (it may be the checkpoint resumed from: it is replaced)
        check_writable(opts.checkpoint)
        refuse_replacing(opts.checkpoint, "checkpoint", inputs)
        if not (opts.n_folds or opts.find_C) and _same_file(opts.checkpoint, opts.model_file):
            # (the model replaced the last checkpoint: "state saved" named a model file)
            raise UsageError(f"{opts.checkpoint}: the checkpoint and the model would be one "
                             "file")  # fmt: skip


def _read_training_set(opts: TrainOptions, feature_map) -> tuple[object, np.ndarray, float]:
    """(X, y, seconds the reading took) of the training file; a classifier's labels checked
    as integers."""
    import linsvm


    start = time.perf_counter()
    # a width whose weights cannot fit is refused at its line, unless hashing narrows it
    hashed = feature_map is not None and feature_map.hash_bits is not None
    X, y = linsvm.read_libsvm(opts.training_file, check_width=not hashed)
    read_seconds = time.perf_counter() - start
    if X.shape[0] == 0:
        raise InvalidInputError(f"{opts.training_file}: no training instances")
    if not hashed:
        _model_file_width(X.shape[1], opts.training_file)
    if SOLVERS[opts.solver].kind == CLASSIFICATION:
        y = integer_labels(y, opts.training_file)
    elif SOLVERS[opts.solver].kind == REGRESSION:
        from .training import check_regression_targets

        check_regression_targets(y, opts.training_file)
    return X, y, read_seconds


def _train_params(opts: TrainOptions, feature_map, n_rows: int) -> dict:
    """The keyword arguments of ``linsvm.train`` (and of -v and -C) the options give; an
    option left at its default is not passed where the solver would not take it."""
    params: dict = dict(
        solver=opts.solver,
        C=opts.C,
        eps=opts.eps,
        bias=opts.bias,
        class_weight=opts.class_weight or None,
        max_iter=opts.max_iter,
        shrinking=opts.shrinking,
        regularize_bias=opts.regularize_bias,
        seed=opts.seed,
        n_jobs=opts.n_jobs,
    )
    if opts.thread_scheme != "auto":
        params["thread_scheme"] = opts.thread_scheme
    if opts.device != "cpu":
        params["device"] = opts.device
    if SOLVERS[opts.solver].kind == REGRESSION:
        params["p"] = opts.p
    if SOLVERS[opts.solver].kind == ONECLASS:
        params["nu"] = opts.nu
    if opts.bucket_size is not None:
        params["bucket_size"] = opts.bucket_size
    if opts.buckets_per_group is not None:
        params["buckets_per_group"] = opts.buckets_per_group
    if opts.weight_file is not None:
        params["sample_weight"] = read_weight_file(opts.weight_file, n_rows)
    if feature_map is not None:
        params["feature_map"] = feature_map
        params["map_mode"] = opts.map_mode
    return params


def _find_parameters(opts: TrainOptions, X, y, params: dict, caught) -> int:
    """``train -C``: the parameter search's best C (and p), LIBLINEAR's line."""
    from .model_selection import find_parameters

    regression = SOLVERS[opts.solver].kind == REGRESSION
    del params["C"]
    params.pop("p", None)  # (the search walks p from -p, its initial_p)
    if regression and opts.p_given:  # (refused before the search's first line, as LIBLINEAR)
        from .solvers.svr import check_p

        check_p(opts.p)
    print(f"Doing parameter search with {opts.n_folds}-fold cross validation.", flush=True)
    with _notices_at_once(caught):
        search = find_parameters(
            X,
            y,
            n_folds=opts.n_folds,
            initial_C=opts.C if opts.C_given else None,
            initial_p=opts.p if opts.p_given and regression else None,
            verbose=not opts.quiet,
            **params,
        )
    _print_warnings(caught, opts.quiet)
    if regression:
        print(
            f"Best C = {search.best_C:g} Best p = {search.best_p:g}  CV MSE = {search.best_rate:g}"
        )
    else:
        print(f"Best C = {search.best_C:g}  CV accuracy = {100.0 * search.best_rate:g}%")
    return 0


def _cross_validate(opts: TrainOptions, X, y, params: dict, timer, caught) -> int:
    """``train -v``: LIBLINEAR's cross-validation lines (accuracy, or MSE and r^2)."""
    import linsvm

    with _notices_at_once(caught):
        predicted = linsvm.cross_validation(X, y, opts.n_folds, progress=timer,
                                            on_fold=None if opts.quiet else _FoldLines(opts),
                                            **params)  # fmt: skip
    _print_warnings(caught, opts.quiet)
    if SOLVERS[opts.solver].kind == REGRESSION:
        mse, r2 = regression_scores(predicted, y)
        print(f"Cross Validation Mean squared error = {printf_g(mse)}")
        print(f"Cross Validation Squared correlation coefficient = {printf_g(r2)}")
    else:
        # (LIBLINEAR's order, 100 * correct first: 100 * (403/640) prints 62.9687, not 62.9688)
        accuracy = 100.0 * np.count_nonzero(predicted == y) / y.shape[0]
        print(f"Cross Validation Accuracy = {accuracy:g}%")
    return 0


class _FoldLines:
    """``cross_validation``'s ``on_fold`` for ``-v``: each fold's LIBLINEAR lines (as its train
    prints them for every fold, cap warnings included), printed in fold order as soon as the
    folds before are printed, whatever order folds trained side by side end in."""

    def __init__(self, opts: TrainOptions) -> None:
        self.opts = opts
        self.ready: dict[int, list[str]] = {}
        self.next = 0
        self.lock = threading.Lock()

    def __call__(self, fold: int, model) -> None:
        lines = [] if model is None else [  # (a fold of one class: no model, no lines)
            line for r in model.results_ for line in _liblinear_lines(r, model, self.opts)]
        with self.lock:
            self.ready[fold] = lines
            while self.next in self.ready:
                for line in self.ready.pop(self.next):
                    print(line, flush=True)
                self.next += 1


def _print_train_summary(
    model, opts: TrainOptions, X, read_seconds: float, train_seconds: float, save_seconds: float
) -> None:
    """The lines after training: per sub-problem LIBLINEAR's lines as its train prints them
    (iterations, objective value, non-zeros, support vectors, rho: no prefix, for the
    scripts that parse them), then linsvm's (threads, the objective figures, with the class
    as a prefix where there are several); the feature map; the times (read, train, save)."""
    for head, r in _by_class(model):
        spec = _spec_of(r, opts)
        handed_over = "dual_n_iter" in r.figures
        for line in _liblinear_lines(r, model, opts):
            print(line)
        threads = threads_line(r.figures)
        if threads is not None:
            print(f"{head}threads: {threads}")
        line = f"{head}primal = {r.primal:.10g}{_gap_figures(r, spec)}"
        if "lower_bound" in r.figures and np.isfinite(r.dual):
            # (the cutting planes' certified bound: their rules are not all on the gap)
            relative = max(r.gap, 0.0) / abs(r.primal) if r.primal else 0.0
            line += f"  lower bound = {r.dual:.10g}  relative gap = {relative:.3g}"
        elif np.isfinite(r.stop_ratio):
            line += f"  stop measure / initial = {r.stop_ratio:.3g}"
        if r.nnz_w >= 0:
            line += f"  nnz(w) = {r.nnz_w}"
        if handed_over:
            line += f"  #iter of -s {r.solver} = {r.n_iter - r.figures['dual_n_iter']}"
        elif spec.number in _NEWTON_SOLVERS:  # (LIBLINEAR's lines do not say them)
            line += f"  #iter = {r.n_iter}"
        print(line)
    if model.feature_map is not None:
        print(f"feature map: {model.feature_map.describe()}{_collision_note(model, X)}")
    print(
        f"read {read_seconds:.3f} s, train {train_seconds:.3f} s, "
        f"save {save_seconds:.3f} s "
        f"({X.shape[0]} instances, {X.shape[1]} features, {X.nnz} non-zeros); "
        f"model written to {opts.model_file}"
    )


def _train_in_blocks(opts: TrainOptions, timer: ProgressTimer | None) -> int:
    """``train --memory``: ``linsvm.train(path, memory=...)``, block minimisation over a cache
    (text is converted to a temporary cache first, in the folder of $TMPDIR), or ``-v``'s
    folds in the same memory; ``timer``: the progress lines of a long run."""
    import linsvm

    from .outofcore import parse_memory

    memory = parse_memory(opts.memory)
    params = dict(
        solver=opts.solver, C=opts.C, eps=opts.eps, bias=opts.bias,
        class_weight=opts.class_weight or None, seed=opts.seed, max_iter=opts.max_iter,
    )  # fmt: skip
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, _naming(opts.training_file):
        warnings.simplefilter("always")
        if opts.n_folds:
            correct, n_rows = _cross_validate_in_blocks(opts, timer, memory, params)
            _print_warnings(caught, opts.quiet)
            print(f"Cross Validation Accuracy = {100.0 * correct / n_rows:g}%")
            return 0
        model = linsvm.train(
            opts.training_file, memory=memory, verbose=not opts.quiet, progress=timer,
            checkpoint=opts.checkpoint, checkpoint_every=opts.checkpoint_every,
            resume=opts.resume, n_jobs=opts.n_jobs, **params,
            place_options={"labels_check": lambda y: integer_labels(y, opts.training_file)},
        )  # fmt: skip
    return _finish(model, opts, caught, time.perf_counter() - start, "outer iteration")


def _cross_validate_in_blocks(opts: TrainOptions, timer, memory: int, params: dict):
    """``-v`` with ``--memory``: (rows right, rows) over the cache (text converted first)."""
    from .io.cache import as_cache
    from .outofcore import measured_overhead
    from .runner import cross_validate_cache

    def fold_lines(fold: int, model) -> None:
        # (each fold's lines as train --memory ends with them; none for a fold of one class)
        for line in [] if model is None else _result_lines(model, opts, "outer iteration"):
            print(line, flush=True)

    max_iter = params.pop("max_iter")
    with as_cache(opts.training_file, opts.n_jobs, timer, announce=not opts.quiet,
                  memory=memory) as path:  # fmt: skip
        return cross_validate_cache(
            path, opts.n_folds, memory=memory, progress=timer,
            on_fold=None if opts.quiet else fold_lines,
            max_outer=max_iter,  # (None: the in-memory solver's cap, as train --memory)
            # --memory is the whole process's: what it holds before training is measured
            overhead_bytes=measured_overhead(opts.solver), **params,
        )  # fmt: skip


def _dask_client(target: str):
    """(client, cluster or None) for ``--dask`` (``distributed.client_for``: ``local:N``
    starts a LocalCluster closed with the client, anything else is a scheduler's address)."""
    from .distributed import client_for

    try:
        return client_for(target)
    except InvalidInputError as exc:
        raise UsageError(f"--dask {exc}") from None


def _train_distributed(opts: TrainOptions) -> int:
    """``train --dask``: CoCoA+ on a Dask cluster; the workers read the training file (a
    LIBSVM text or a cache, at a path they can all see) themselves."""
    import logging

    import linsvm

    # opened here first: a missing file, a folder or one not readable gives the OSError the
    # other modes give ("adir: Is a directory"), before a cluster is started
    with open(opts.training_file, "rb"):
        pass
    # the workers may run elsewhere in the file system: they get the absolute path, and
    # their errors are reworded with the name as given (_as_given)
    path = os.path.abspath(opts.training_file)
    # the cluster's own log lines (worker starts, closes) are not the user's business here
    logging.getLogger("distributed").setLevel(logging.ERROR)
    start = time.perf_counter()
    client, cluster = _dask_client(opts.dask)
    try:
        extra = {}
        if opts.partitions is not None:
            extra["n_partitions"] = opts.partitions
        if opts.local_passes is not None:
            extra["local_passes"] = opts.local_passes
        if opts.hold_bias:
            extra["hold_bias"] = True
        with (
            warnings.catch_warnings(record=True) as caught,
            _naming(opts.training_file),
            _as_given(path, opts.training_file),
        ):
            warnings.simplefilter("always")
            # (what a model file cannot hold, refused once the workers have read the data)
            extra["labels_check"] = lambda y: integer_labels(y, opts.training_file)
            extra["width_check"] = lambda width: _model_file_width(width, opts.training_file)
            model = linsvm.train(
                path, client=client, solver=opts.solver, C=opts.C, eps=opts.eps,
                bias=opts.bias, class_weight=opts.class_weight or None, seed=opts.seed,
                max_iter=opts.max_iter, verbose=not opts.quiet, place_options=extra,
            )  # fmt: skip
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return _finish(model, opts, caught, time.perf_counter() - start, "round")


def _finish(model, opts: TrainOptions, caught, seconds: float, unit: str) -> int:
    """The end of ``train --memory`` / ``--dask``: the interrupted-run exit, or the warnings,
    the model file and a line per sub-problem (``unit`` names what n_iter counts, as the
    progress lines do: "outer iteration", "round")."""
    if model.interrupted:  # (a signal during the last check pass: the run has ended anyway)
        return _interrupted(model, opts, unit)
    save_seconds = _save_model(model, opts, caught)
    if not opts.quiet:
        for line in _result_lines(model, opts, unit):
            print(line)
        print(f"trained in {seconds:.3f} s, saved in {save_seconds:.3f} s; model written to "
              f"{opts.model_file}")
    return 0


def _result_lines(model, opts: TrainOptions, unit: str) -> list[str]:
    """A line per sub-problem of a model trained in blocks or on a cluster: how it ended, the
    ``unit``s it took, its support vectors, primal and gap."""
    lines = []
    for head, r in _by_class(model):
        state = "optimization finished" if r.converged else "stopped at --max-iter"
        spec = _spec_of(r, opts)
        nsv = f", nSV = {r.n_sv}" if _shows_support_vectors(r, spec) else ""
        lines.append(f"{head}{state}, #{unit}s = {r.n_iter}{nsv}, primal = {r.primal:.10g}"
                     f"{_gap_figures(r, spec)}")  # fmt: skip
    return lines


def _save_model(model, opts: TrainOptions, caught) -> float:
    """The warnings training gave, then the model file; the seconds the saving took."""
    _print_warnings(caught, opts.quiet)
    start = time.perf_counter()
    model.save(opts.model_file)
    return time.perf_counter() - start


# LIBLINEAR's stdout lines at a dual solver's iteration cap (linear.cpp's train_one): what
# follows its WARNING line, by the solver asked for; a handover is "Switching to use -s N".
_CAP_ADVICE = {3: "Using -s 2 may be faster (also see FAQ)",
               13: "Using -s 11 may be faster (also see FAQ)"}  # fmt: skip
_NEWTON_SOLVERS = (0, 2, 11)
# The solvers whose LIBLINEAR routine says it reached the cap as it finishes, before its
# objective value (the others' train_one says it after their lines)
_WARNS_AS_IT_FINISHES = (4, 5, 6, 21)


def _liblinear_cap_warnings(asked: int, result) -> list[str]:
    """LIBLINEAR's WARNING lines for a sub-problem that reached the iteration cap, as its
    train prints them on stdout (linsvm's own, with its advice, go to stderr too); [] for
    linsvm's own solvers, which LIBLINEAR does not have."""
    if SOLVERS[asked].model_type is not None:
        return []
    lines = []
    capped = result.stop_reason == MAX_ITER
    if result.solver != asked:  # a dual solver's handover at its cap
        lines += ["WARNING: reaching max number of iterations",
                  f"Switching to use -s {result.solver}"]  # fmt: skip
    elif capped and asked not in _NEWTON_SOLVERS:
        lines.append("WARNING: reaching max number of iterations")
        if asked in _CAP_ADVICE:
            lines.append(_CAP_ADVICE[asked])
        return lines
    if capped and result.solver in _NEWTON_SOLVERS:
        lines.append("WARNING: reaching max number of Newton iterations")
    return lines


def _liblinear_lines(r, model, opts: TrainOptions) -> list[str]:
    """LIBLINEAR's lines of one sub-problem's result ``r``, as its train prints them (no class
    prefix, for the scripts that parse them): iterations, objective value, non-zeros,
    support vectors, rho, and the warnings of the iteration cap where LIBLINEAR puts them.
    Its Newton solvers print their iterations' lines, which linsvm does not, and neither
    "optimization finished" nor nSV."""
    spec = _spec_of(r, opts)
    handed_over = "dual_n_iter" in r.figures
    newton = spec.number in _NEWTON_SOLVERS and not handed_over
    cap_warnings = _liblinear_cap_warnings(opts.solver, r)
    lines = []
    if handed_over:  # LIBLINEAR's lines are the dual's, before its switch
        lines += _dual_lines_before_handover(r.figures, SOLVERS[opts.solver])
    elif not newton:
        lines.append(f"optimization finished, #iter = {r.n_iter}")
        if spec.number in _WARNS_AS_IT_FINISHES:
            lines += cap_warnings
            cap_warnings = []
        objective = _liblinear_objective(r, spec)
        if objective is not None:
            lines.append(f"Objective value = {objective:f}")
    if spec.number in _OBJECTIVE_IS_PRIMAL and r.nnz_w >= 0:  # (the L1 solvers)
        lines.append(f"#nonzeros/#features = {r.nnz_w}/{np.shape(r.w)[0]}")
    if _shows_support_vectors(r, spec) and not handed_over and not newton:
        # (-s 4: LIBLINEAR counts the non-zero alpha_i^m, a row's K apart)
        n_sv = np.count_nonzero(r.alpha) if np.ndim(r.alpha) == 2 else r.n_sv
        lines.append(f"nSV = {n_sv}")
    if spec.kind == ONECLASS:
        lines.append(f"rho = {model.rho:f}")
    return lines + cap_warnings


def _dual_lines_before_handover(figures: dict, dual_spec) -> list[str]:
    """LIBLINEAR's lines of a dual solver (``dual_spec``) that reached its cap and handed over
    to the primal one: its iterations, objective value and support vectors (not for the
    logistic loss, whose every row is one; the last two unknown after a resume that began in
    the primal solver)."""
    lines = [f"optimization finished, #iter = {figures['dual_n_iter']}"]
    if np.isfinite(figures.get("dual_objective", np.nan)):
        lines.append(f"Objective value = {-figures['dual_objective']:f}")
    if figures.get("dual_n_sv", -1) >= 0 and not dual_spec.probability:
        lines.append(f"nSV = {figures['dual_n_sv']}")
    return lines


def _by_class(model) -> Iterator[tuple[str, object]]:
    """(line prefix, result) of each sub-problem of a trained model: the prefix names the
    class, "[class 3] ", where there are several sub-problems, and is "" otherwise."""
    several = len(model.results_) > 1
    for k, result in enumerate(model.results_):
        # (the command line's labels are integers; a cache's are stored as floats)
        yield (f"[class {int(model.labels_[k])}] " if several else ""), result


def _spec_of(result, opts: TrainOptions):
    """The registry's entry of the solver that produced ``result`` (after a fallback at the
    cap, e.g. -s 2 after -s 1, not the one asked for)."""
    return SOLVERS.get(result.solver, SOLVERS[opts.solver])


# LIBLINEAR's "Objective value" line: the dual solvers print f(alpha), the dual objective
# they minimise (minus linsvm's dual value), the L1-regularised ones their primal value; its
# Newton solvers print iteration lines instead.
_OBJECTIVE_IS_DUAL = (1, 3, 4, 7, 12, 13, 21)
_OBJECTIVE_IS_PRIMAL = (5, 6)


def _liblinear_objective(result, spec) -> float | None:
    """The value LIBLINEAR prints as "Objective value" for this solver, or None."""
    if spec.number in _OBJECTIVE_IS_DUAL and np.isfinite(result.dual):
        return -result.dual
    if spec.number in _OBJECTIVE_IS_PRIMAL and np.isfinite(result.primal):
        return result.primal
    return None


def _shows_support_vectors(result, spec) -> bool:
    """Whether the summary counts support vectors (rows with a non-zero dual variable): not
    for the logistic loss (the models with probabilities), whose dual variables
    C sigma(-y w'x) are never zero, so that the count is the number of rows."""
    return ((result.alpha is not None or result.figures.get("dual_dropped", False))
            and not spec.probability)  # fmt: skip


def _gap_figures(result, spec) -> str:
    """"  dual = D  duality gap = G (relative G/|P|)" for the solvers whose dual variables are
    their iterates (the registry's ``dual``): their gap bounds P(w) - P* and is what their
    stopping rules close. "" for the others, whose stopping measure the summary reports
    instead: the primal Newton-type solvers' dual point is derived from w after the run, and
    its gap, though still a bound on P(w) - P*, is a loose one at their default tolerance
    (a9a, -s 0: 626 for an actual 9.3; -s 2: more than the primal itself), which reads as a
    failure for a converged run; linsvm's SGD and cutting-plane solvers stop on the relative
    gap itself, which is their stopping measure."""
    if not spec.dual or not np.isfinite(result.dual):
        return ""
    relative = result.gap / abs(result.primal) if result.primal != 0 else float("nan")
    return (
        f"  dual = {result.dual:.10g}  duality gap = {result.gap:.3g} "
        f"(relative {relative:.3g})"
    )


def _collision_note(model, X) -> str:
    """"; 123 of 4567 distinct mapped features land in a column already taken" for a hashed
    map ("" for an exact one): the features beyond the first of each column they occupy (two
    features in one column: 1), by a hashing pass over the training rows after training,
    counted on a sample of the columns when the rows map to many entries (the note then says
    so)."""
    if model.feature_map.hash_bits is None:
        return ""
    distinct, columns, share = model.feature_map.estimate_collisions(X)
    what = (f"{distinct - columns} of {distinct} distinct mapped features land in a column "
            "already taken")  # fmt: skip
    if share == 1:
        return f"; {what}"
    return f"; about {what} (counted on 1/{share} of the columns)"


def _interrupted(model, opts: TrainOptions, unit: str = "iteration") -> int:
    """One line for an interrupted run, counting in ``unit`` (what its progress lines count);
    the model only with --save-on-interrupt (an existing file at the model path is otherwise
    left as it was). Exit status 128 + the signal."""
    counts = [r.n_iter for r in model.results_]
    # one count where the sub-problems share it (the outer iterations of blocks)
    iterations = str(counts[0]) if len(set(counts)) == 1 else ", ".join(map(str, counts))
    gaps = [r.gap for r in model.results_ if np.isfinite(r.gap)]
    gap = f", duality gap {max(gaps):.3g}" if gaps else ""
    if opts.save_on_interrupt:
        model.save(opts.model_file)
        outcome = f"the current model (not converged) written to {opts.model_file}"
    else:
        outcome = "no model written (--save-on-interrupt writes the current one)"
    if opts.checkpoint:
        outcome += f"; state saved to {opts.checkpoint} (continue with --resume)"
    signum = model.stop_signal or signal.SIGINT
    print(
        f"linsvm train: interrupted by {signal.Signals(signum).name} after {iterations} "
        f"{unit}(s){gap}; {outcome}",
        file=sys.stderr,
    )
    return 128 + int(signum)


def run_predict(argv: list[str]) -> int:
    import linsvm

    if not argv or wants_help(argv):
        print(PREDICT_USAGE, end="")
        return 0 if argv else 1
    quiet = False
    probability = False
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        if argv[i] == "-q":
            quiet = True
            i += 1
        elif argv[i] == "-b":
            if i + 1 >= len(argv):
                raise UsageError("option -b needs a value")
            # LIBLINEAR's predict: flag_predict_probability = atoi(value), any non-zero is on
            probability = _number(argv[i + 1], int, "-b") != 0
            i += 2
        else:
            raise UsageError(f"unknown option: {argv[i]}")
    files = argv[i:]
    if len(files) != 3:
        raise UsageError("expected test_file model_file output_file")
    test_file, model_file, output_file = files
    check_writable(output_file)
    refuse_replacing(output_file, "predictions",
                     [("test file", test_file), ("model file", model_file)])  # fmt: skip
    model = linsvm.load_model(model_file)
    if probability and not model.is_probability_model:
        raise UsageError(
            f"{model_file}: probability output (-b 1) is only supported for logistic "
            f"regression (-s 0, 6, 7), not a {SOLVERS[model.solver].label} model"
        )
    start = time.perf_counter()
    from .io._atomic import atomic_writer
    from .io.stream import iter_libsvm

    # Chunk by chunk: the file is never held whole, whatever its size.
    score = _Scores()
    with atomic_writer(output_file) as out:
        if probability:  # LIBLINEAR's format: a header of labels, then label and p per class
            labels = " ".join(f"{int(v)}" for v in model.labels_.tolist())
            out.write(f"labels {labels}\n".encode("ascii"))
        for X, y in iter_libsvm(test_file, n_features=model.n_input_features):
            predicted = model.predict(X)
            proba = model.predict_proba(X) if probability else None
            for piece in prediction_text(predicted, proba):
                out.write(piece)
            score.add(predicted, y)
        if score.n == 0:
            raise InvalidInputError(f"{test_file}: no test instances")
    seconds = time.perf_counter() - start
    if not quiet:
        if model.kind == REGRESSION:
            mse, r2 = score.regression()
            print(f"Mean squared error = {printf_g(mse)} (regression)")
            print(f"Squared correlation coefficient = {printf_g(r2)} (regression)")
        else:
            # (LIBLINEAR's predict.c divides first: 100 * c / n rounds differently at a tie,
            # 87/640 gives 13.5937% there and 13.5938% so)
            accuracy = score.correct / score.n * 100
            print(f"Accuracy = {accuracy:g}% ({score.correct}/{score.n})")
        print(f"read + predict {seconds:.3f} s", file=sys.stderr)
    return 0


def prediction_text(predicted: np.ndarray, proba: np.ndarray | None = None,
                    chunk_bytes: int = 1 << 20):
    """predict's output lines, as LIBLINEAR's predict writes them, in pieces of about
    ``chunk_bytes`` (an iterator of bytes): each prediction as "%.17g", or with the
    probabilities (proba: (n_rows, n_classes)) as "%g" followed by each probability's " %g"."""
    from .io import _format

    first = np.ascontiguousarray(predicted, dtype=np.float64)
    if proba is None:
        rest, first_p, rest_p = np.empty((first.shape[0], 0)), 17, 6
    else:
        rest, first_p, rest_p = np.ascontiguousarray(proba, dtype=np.float64), 6, 6
    first_bits, rest_bits = first.view(np.uint64), rest.view(np.uint64)

    def write(row: int, at: int, out: np.ndarray, pos: int):
        return _format.format_prediction_rows(first_bits, first_p, rest_bits, rest_p, row, at,
                                              first.shape[0], out, pos)  # fmt: skip

    def fallback(row: int, at: int) -> str:  # a number the kernel leaves to Python
        if at < 0:
            return f"{float(first[row]):.{first_p}g}"
        return " " + printf_g(float(rest[row, at]))

    return _format.rows_text(write, fallback, max(int(chunk_bytes), 4 * _format.MAX_VALUE_BYTES))


class _Scores:
    """Accuracy or LIBLINEAR's regression scores, summed over chunks of rows."""

    def __init__(self) -> None:
        self.n = self.correct = 0
        self.sums = np.zeros(6)  # (v-t)^2, v, t, v t, v^2, t^2

    def add(self, predicted: np.ndarray, y: np.ndarray) -> None:
        self.n += y.shape[0]
        if predicted.dtype.kind in "iuf" and y.dtype.kind in "iuf":
            _add_regression_sums(predicted.astype(np.float64), y.astype(np.float64), self.sums)
        self.correct += int(np.sum(predicted == y))

    def regression(self) -> tuple[float, float]:
        """(mean squared error, squared correlation coefficient), as ``regression_scores``."""
        return _scores_from_sums(self.n, self.sums)


def run_compare(argv: list[str]) -> int:
    """``linsvm compare``: its options anywhere among the two files."""
    from .compare import run_compare as compare_command

    if wants_help(argv):
        compare_command([])  # prints its usage
        return 0
    return compare_command(options_first(argv, COMPARE_VALUE_OPTIONS))


def run_cache(argv: list[str]) -> int:
    """``linsvm cache``: LIBSVM text to a binary cache; options anywhere among the files."""
    from .io.cache import write_cache

    if not argv or wants_help(argv):
        print(CACHE_USAGE, end="")
        return 0 if argv else 1
    quiet = False
    block_mb = 64.0
    files = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-q":
            quiet = True
        elif arg == "--block-size":
            if i + 1 >= len(argv):
                raise UsageError("option --block-size needs a value")
            block_mb = _number(argv[i + 1], float, "--block-size")
            if not block_mb > 0 or block_mb * 2**20 > 2**62:
                raise UsageError(f"--block-size must be a positive number of MB, got {argv[i + 1]}")
            i += 1
        elif arg.startswith("-") and len(arg) > 1:
            raise UsageError(f"unknown option: {arg}")
        else:
            files.append(arg)
        i += 1
    if len(files) != 2:
        raise UsageError("expected data_file cache_file")
    source, target = files
    check_writable(target, read_back=True)
    refuse_replacing(target, "cache", [("data file", source)])
    summary = write_cache(source, target, block_bytes=max(1, int(block_mb * 2**20)),
                          progress=_progress_timer(quiet))  # fmt: skip
    if not quiet:
        rate = summary.text_bytes / 2**20 / summary.seconds if summary.seconds > 0 else 0.0
        print(f"{target}: {summary.n_rows} rows, {summary.n_features} features, "
              f"{summary.nnz} non-zeros, {summary.n_blocks} blocks, "
              f"{summary.cache_bytes / 2**20:.1f} MB")
        print(f"converted in {summary.seconds:.3f} s ({rate:.1f} MB/s of text)")
    return 0


def run_scale(argv: list[str]) -> int:
    """``linsvm scale``: svm-scale's options and output (the scaled rows on stdout)."""
    import warnings

    from .io import read_libsvm
    from .scaling import (
        check_limits,
        check_ranges_fit,
        find_scaling,
        load_scaling,
        svm_scale_text,
    )

    if not argv or wants_help(argv):
        print(SCALE_USAGE, end="")
        return 0 if argv else 1
    limits: dict[str, float] = {}
    y_limits = save = restore = None
    i = 0
    while i < len(argv) - 1 and argv[i].startswith("-") and len(argv[i]) > 1:
        option = argv[i]
        count = 2 if option == "-y" else 1
        if option not in ("-l", "-u", "-y", "-s", "-r"):
            raise UsageError(f"unknown option: {option}")
        if i + count >= len(argv):
            raise UsageError(f"option {option} needs {'two values' if count == 2 else 'a value'}"
                             " before the data file")  # fmt: skip
        if option == "-y":
            y_limits = (_number(argv[i + 1], float, "-y"), _number(argv[i + 2], float, "-y"))
        elif option in ("-l", "-u"):
            limits[option] = _number(argv[i + 1], float, option)
        elif option == "-s":
            save = argv[i + 1]
        else:
            restore = argv[i + 1]
        i += 1 + count
    if len(argv) - i != 1:
        raise UsageError("expected the options, then one data_filename")
    data_file = argv[i]
    lower, upper = limits.get("-l", -1.0), limits.get("-u", 1.0)
    check_limits(lower, upper, "lower/upper")
    if y_limits is not None:
        check_limits(*y_limits, "y_lower/y_upper")
    if save is not None and restore is not None:
        raise UsageError("cannot use -r and -s simultaneously")
    if restore is not None:
        scaling = load_scaling(restore)
        _agree_with_range_file(scaling, limits, y_limits, restore)
    X, y = read_libsvm(data_file)
    # (here to name the file: the scaling's functions refuse the same widths without it)
    check_ranges_fit(X.shape[1], f"{data_file}: feature index {X.shape[1]}")
    if restore is None:
        scaling = find_scaling(X, y, lower, upper, y_limits)
    if save is not None:
        check_writable(save)
        refuse_replacing(save, "range file", [("data file", data_file)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaled = scaling.transform(X)
    for warning in caught:
        print(f"linsvm scale: warning: {warning.message}", file=sys.stderr)
    labels = scaling.transform_labels(y)
    if save is not None:
        scaling.save(save)
    out = sys.stdout.buffer
    for piece in svm_scale_text(scaled, labels):
        out.write(piece)
    out.flush()
    return 0


def _agree_with_range_file(scaling, limits: dict, y_limits, path: str) -> None:
    """-l, -u and -y given with -r must be the range file's own (svm-scale ignores them)."""
    given = {"-l": scaling.lower, "-u": scaling.upper}
    for option, value in limits.items():
        if value != given[option]:
            raise UsageError(f"{option} {value:g} differs from the range file {path}'s "
                             f"{given[option]:g}")  # fmt: skip
    if y_limits is not None and tuple(y_limits) != scaling.y_limits:
        held = ("no label scaling" if scaling.y_limits is None
                else "-y {:g} {:g}".format(*scaling.y_limits))  # fmt: skip
        raise UsageError(f"-y {y_limits[0]:g} {y_limits[1]:g} differs from the range file "
                         f"{path}'s {held}")  # fmt: skip


def _one_line(exc: BaseException) -> str:
    """The message of a user error, for the command line."""
    if isinstance(exc, ZeroIndexError):
        return str(DataFormatError(exc.path, exc.line, ZERO_INDEX_ADVICE))
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
    return str(exc)


def main(argv: list[str] | None = None) -> int:
    command_started()  # (from here a Ctrl-C is this function's to report)
    # a file name the output's encoding cannot hold (a legacy Windows code page) is printed
    # escaped, as stderr prints it, rather than failing after the work is done
    with suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="backslashreplace")
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in HELP_FLAGS:
        print(MAIN_USAGE, end="")
        return 0 if argv else 1
    if argv[0] == "--version":
        from . import __version__

        print(f"linsvm {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    commands = {
        "train": run_train, "predict": run_predict, "compare": run_compare, "cache": run_cache,
        "scale": run_scale,
    }
    if command not in commands:
        print(
            f"linsvm: error: unknown command {command!r} "
            "(expected train, predict, compare, cache or scale)",
            file=sys.stderr,
        )
        return 1
    try:
        with caller_ends_on_sigterm():  # (exit status 143 after its line: run_train)
            return commands[command](rest)
    except BrokenPipeError:
        # the reader of the output went away (`| head`): end quietly, as LIBLINEAR's programs
        # end (killed by SIGPIPE, which Python ignores); stdout, whose flush at exit would
        # fail again, goes to /dev/null
        with suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + getattr(signal, "SIGPIPE", 13)  # (13 on every POSIX; Windows has none)
    except (LinsvmError, OSError) as exc:
        print(f"linsvm {command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except MemoryError:
        # (outputs are written atomically: nothing half-written is left)
        hint = ("; --memory SIZE trains in blocks within SIZE" if command == "train"
                else "")  # fmt: skip
        print(f"linsvm {command}: error: out of memory{hint}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, SystemError) as exc:
        # Numba hands a kernel's arrays back by calling into Python, where a pending Ctrl-C
        # raises: that comes out as a SystemError caused by the KeyboardInterrupt
        interrupt = exc if isinstance(exc, KeyboardInterrupt) else exc.__cause__
        if not isinstance(interrupt, KeyboardInterrupt):
            raise
        # (128 + the signal, as a process it ended: 130 for Ctrl-C, 143 for a SIGTERM that
        # ended a cross-validation or a search for C)
        signum = interrupting_signal(interrupt)
        print(f"linsvm {command}: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main())
