"""``train``: from (X, y) and LIBLINEAR's parameters to a Model, for every solver.

The steps, each done once:

1. check the parameters against the registry (``solvers.check_parameter``);
2. cut the problem into sub-problems (``solvers._base.Subproblem``): one-vs-rest with
   LIBLINEAR's class order and costs for the binary classifiers (for two classes the
   sub-problem's positive class is ``labels_[0]`` with C_p = C * weight[labels_[0]] and
   C_n = C * weight[labels_[1]]; for k > 2 classes, sub-problem j has C_p = C *
   weight[labels_[j]] and the rest keeps plain C; sample weights multiply each row's C), one
   problem over all classes for Crammer-Singer, one on real targets for regression, one that
   ignores y for the one-class SVM; per-row C and the solver's tolerance computed here;
3. solve each through the registry (``spec.solve(sub, hook)``), with LIBLINEAR 2.50's
   fallbacks at the dual's cap (the registry's ``fallback``: 1 -> 2, 7 -> 0, 12 -> 11) and
   one warning for a solver that stopped short;
4. assemble the Model.

A feature map (``feature_map``: the degree-2 map, hashing) is bound to X's width here. Solvers
that can form it row by row (the registry's ``implicit_map``) get the input rows and the map;
the others get phi(X), materialised once. Either way the Model keeps the map, so predicting
maps new rows the same way.

The hook a solver gets is built here from what the caller asked for: progress lines
(``verbose``: every outer iteration; ``progress``: every few seconds of a long run), the
caller's own hook, checkpoints, and the stop request of Ctrl-C / SIGTERM
(``interrupts``), which every run has. An interrupted run returns the current iterate of each
sub-problem, marked ``stop_reason="interrupted"`` and not converged, with its gap.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from . import _memory, solvers
from ._progress import ProgressTimer
from .checkpoint import DEFAULT_EVERY_SECONDS, Checkpointer, Resume, fingerprint
from .data import (
    FLOAT32_OVERFLOW,
    TRAINABLE_MAX,
    UsedColumns,
    as_csr,
    check_labels,
    check_sample_weight,
    check_trainable,
    is_integer,
    real_values,
)
from .errors import InvalidInputError
from .features import FeatureMap
from .interrupts import RunInterrupted, StopRequest, sigterm_passed_on_after, stop_on_signals
from .model import Model
from .parallel import effective_n_jobs
from .problems import (
    ConvergenceWarning,
    TrainingInterrupted,
    check_row_costs,
    class_costs,
    classes,
    cv_folds,
    one_vs_rest,
    refuse_infinite_costs,
    show_label,
    silenced,
    single_class,
    submit,
    warn,
    warn_at_cap,
    warn_interrupted,
    weighted_fit_rows,
)
from .solvers import MAP_MODES, SOLVERS, Hook, Progress, Solution, SolverSpec, Subproblem
from .solvers._base import (
    asks_to_stop,
    chain_hooks,
    wants_every_iteration,
    without_dual_variables,
)
from .solvers._columns import check_seed
from .solvers._dual import SharedRows
from .solvers._dual_threads import check_scheme, planned_threads
from .solvers.newton import planned_threads as newton_threads
from .solvers.svr import check_p

# How often the main thread looks for signals while worker threads train.
SIGNAL_POLL_SECONDS = 0.1
# A stalled solve whose relative gap is at most this is at float64's rounding already: its
# tolerance was the unreachable part (heart_scale, -s 35 -e 1e-14: 1.0e-13).
STALLED_AT_ROUNDING = 1.0e-11





def train(
    X,
    y=None,
    solver: int | str = 1,
    C: float = 1.0,
    eps: float | None = None,
    bias: float = -1.0,
    class_weight: Mapping | None = None,
    sample_weight=None,
    max_iter: int | None = None,
    regularize_bias: bool = True,
    init_sol=None,
    warm_start: Model | None = None,
    p: float = 0.1,
    nu: float = 0.5,
    shrinking: bool = True,
    bucket_size: int | None = None,
    buckets_per_group: int | None = None,
    seed: int = 1,
    verbose: bool = False,
    progress: bool | ProgressTimer | None = False,
    hook: Hook | None = None,
    n_jobs: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float = DEFAULT_EVERY_SECONDS,
    resume: str | os.PathLike | None = None,
    feature_map: FeatureMap | None = None,
    map_mode: str = "auto",
    device: str = "cpu",
    thread_scheme: str = "auto",
    objectives: bool = True,
    dual_variables: bool = True,
    fallback: bool = True,
    memory: str | int | None = None,
    client=None,
    place_options: Mapping | None = None,
) -> Model:
    """Train a linear model with one of LIBLINEAR's solvers (numbers and defaults as its ``-s``).

    Where the rows live is chosen by ``X``, ``memory`` and ``client``: in this process's
    memory (the default), read from disk a block at a time (``memory``), or spread over a
    Dask cluster's workers (``client``).

    Parameters
    ----------
    X : sparse matrix or array of shape (n_samples, n_features), float32 or float64, or a path
        CSR with sorted indices is used without a copy. A path (str or PathLike) names a
        LIBSVM text file (plain or gz/bz2/xz) or a binary cache (``linsvm cache``), whose
        labels are the targets (``y`` then None): read into memory, or trained from it with
        ``memory`` or ``client``.
    y : array of shape (n_samples,), or None with a path
        Class labels (any integers, reals or strings; at least two classes), or real targets
        for regression; ignored by the one-class SVM.
    solver : int or str
        0: L2-regularized logistic regression (primal Newton), 1: L2-regularized L2-loss SVM
        (dual; falls back to 2 at its iteration cap, as LIBLINEAR 2.50), 2: L2-regularized
        L2-loss SVM (primal Newton), 3: L2-regularized L1-loss SVM (dual), 4: Crammer-Singer
        multi-class SVM (dual), 5: L1-regularized L2-loss SVM (primal CD), 6: L1-regularized
        logistic regression (newGLMNET), 7: L2-regularized logistic regression (dual; falls
        back to 0 at its cap); regression: 11: L2-loss SVR (primal Newton), 12: L2-loss SVR
        (dual; falls back to 11 at its cap), 13: L1-loss SVR (dual); 21: one-class SVM
        (y is ignored; no bias). linsvm's own, by number or name: 30 "pegasos", 31 "sgd-r",
        32 "sgd-s", 33 "sgd-m" (the L1-loss SVM by primal SGD: eps is SGD-S/M's relative
        accuracy delta, max_iter the epochs; one C for all rows, so no class or sample
        weights), 34 "pcd" (the L2-loss SVM by primal coordinate descent; eps as -s 2),
        35 "svmperf" and 36 "ocas" (the L1-loss SVM by cutting planes), 37 "svmsgd", 38
        "asgd" and 39 "sgd-qn" (Bottou's SGD programs; max_iter the epochs), 40 "tron" (the
        L2-loss SVM by LIBLINEAR's older trust-region Newton). 35-39 take one C for all rows
        too.
    C : float
        Cost of errors (> 0).
    eps : float or None
        Stopping tolerance; None takes LIBLINEAR's default for the solver (0.1 for 1, 3, 7,
        0.01 for 0 and 2, where it bounds the gradient norm relative to its value at w = 0,
        scaled as LIBLINEAR does by min(#pos, #neg) / l). 0: no stopping rule: every solver
        runs ``max_iter`` outer iterations, without a warning at the cap and without the
        fallback to the primal (-s 1, 7, 12), ending earlier only where another iteration
        could not move w (optimality conditions met exactly, or a Newton step that no
        longer decreases the objective).
    bias : float
        LIBLINEAR's ``-B``: if >= 0, each row gets an implicit extra feature of this value.
    class_weight : mapping label -> weight, optional
        LIBLINEAR's ``-wi``: that class's C is multiplied by the weight. Refused by the
        solvers of one C (21, 30-33, 35-39).
    sample_weight : array of shape (n_samples,), optional
        Per-row weights multiplying C (LIBLINEAR's instance-weight variant's ``-W``). Refused
        by the solvers of one C (21, 30-33, 35-39).
    max_iter : int or None
        Cap on outer iterations (None: LIBLINEAR's: 300 for the dual solvers, 1000 Newton
        iterations for the primal ones; epochs for the SGD solvers). 0: no iteration, the
        solver's start point: w = 0, or the warm start (``init_sol``, ``warm_start``); -s 7's
        interior start alpha_i = min(0.001 C_i, 1e-8) gives a w of about 1e-8 per unit of
        row norm, and -s 21's start (the first nu l rows at alpha_i = 1, as LIBLINEAR) its
        w = sum_i alpha_i x_i and rho; Crammer-Singer (-s 4) starts at alpha = 0, so W = 0.
        No fallback follows 0 iterations.
    regularize_bias : bool
        False is LIBLINEAR's ``-R``: the bias weight is left out of the regulariser (-s 0, 2,
        5, 6, 11, 37, 38, 40; needs ``bias == 1`` as LIBLINEAR requires).
    init_sol : array of shape (n_weight_vectors, n_features [+1]), optional
        Starting weights for -s 0, 2, 11 and 40 (LIBLINEAR's ``init_sol``), e.g. the ``coef_``
        (with the bias weight appended when ``bias >= 0``) of a model at a smaller C.
    warm_start : Model, optional
        A model trained before on the same rows (same labels, same number of features), e.g.
        at a smaller C: the dual solvers restart from its dual variables (``results_[k].alpha``,
        projected into the new problem's bounds), the primal ones from its weights. A part it
        cannot supply starts cold. The stopping rules keep their cold-start reference, so the
        result is as accurate as a cold start's. Not with ``init_sol``; not for -s 21 and the
        SGD solvers.
    p : float
        The width of the epsilon-insensitive tube of the regression solvers (LIBLINEAR's -p).
    nu : float
        The one-class SVM's nu in (0, 1] (LIBLINEAR's -n): about the fraction of outliers.
    shrinking : bool
        LIBLINEAR's shrinking of coordinates stuck at a bound.
    bucket_size, buckets_per_group : int or None
        The coordinate order of the dual solvers: rows are cut into buckets of ``bucket_size``
        neighbours, and each outer iteration visits random groups of ``buckets_per_group``
        buckets, rows shuffled within a group. 1 and 1 give a plain random permutation
        (LIBLINEAR's order). None (default): 16 and 16, unless the rows fit in a core's cache
        or neighbouring rows are markedly more alike than random pairs (a sampled check).
    seed : int
        Seed of the solver's own random generator: equal seeds give equal models.
    verbose : bool
        Print one line per outer iteration on stderr (dual: iteration, active set, PG gap,
        primal, dual; primal Newton: LIBLINEAR's lines).
    progress : bool, linsvm._progress.ProgressTimer or None
        True: once the run has taken a few seconds (``_progress.QUIET_SECONDS``), a line on
        stderr every few seconds (``EVERY_SECONDS``): the iteration, the active set and the
        stopping measure of a sub-problem; a short run prints nothing. A ``ProgressTimer``
        started earlier (the command line's, at its start) counts from its own start.
        Ignored with ``verbose``, whose lines come every iteration.
    hook : callable, optional
        ``hook(progress)`` after each outer iteration of each sub-problem, with a
        ``linsvm.solvers.Progress`` (sub-problem index, iteration, the live ``w`` and
        ``alpha``, the solver's figures); returning False stops that solver at its current
        iterate. With ``n_jobs`` > 1 it is called from the threads solving the sub-problems,
        possibly at the same time.
    n_jobs : int or None
        Threads, by joblib's convention: None or 1 one, -1 all cores, -2 all but one, and so
        on. They go first to the one-vs-rest sub-problems of a multi-class problem, side by
        side (the kernels release the GIL; the model is the same whatever the number), then
        what is left, ``n_jobs // sub-problems``, to each sub-problem's solver where it has a
        threaded form (the registry's ``threads``): the dual CD of -s 1, 3, 12 and 13 (at
        most one thread per ``solvers._dual_threads.THREAD_MIN_NNZ`` non-zeros up to two,
        beyond them one per ``MANY_THREADS_MIN_NNZ`` but for the rounds; the scheme is
        ``thread_scheme``'s), the primal Newton solvers -s 0, 2, 11 their passes over the rows
        in row chunks (a result equal to the serial one up to the order of sums, the same bits
        for the same number). Never more busy threads than ``n_jobs`` (on a GPU the host's
        passes over the rows, at the start and the end, use every core). One thread is the
        serial algorithm, bit for bit.
    thread_scheme : {"auto", "async", "replicas", "rounds"}
        How the threads of one dual CD solve (-s 1, 3, 12, 13) share it. "async": every
        thread steps its own rows against one shared w, its changes added atomically, no
        thread waiting for another (``solvers.dcd_async``). "replicas": every thread steps
        its rows against its own copy of w and replays the other threads' steps every few
        rows (no atomics, no cache line written by two cores; each thread still touches the
        weights of every changed row, so it pays on 2 threads, not beyond). Both measure as
        the solve goes whether the threads beat one thread on this machine and data, and run
        the faster (trying the other now and then); w is recomputed from the dual variables
        at the end. The optimum is the serial one's to the tolerance, but two runs differ in
        their last bits. "rounds": rounds of rows stepped side by side and merged in a fixed
        order with an exact line search (``solvers.dcd_threads``): the same model for the
        same seed and thread count, bit for bit, usually slower. "auto" (default): "replicas"
        on 2 threads, "async" on more.
    objectives : bool
        True (default): each result's ``primal``, ``dual`` and ``gap`` (the dual solvers
        compute them in a pass over the rows at the end: w'x_i of every row, about a quarter of
        an epoch of -s 1/3, whose dual takes the running w(alpha); threads, partitions and
        feature maps form w(alpha) afresh in the same pass). False: the dual solvers skip
        that pass and report NaN, for callers that time fits or score the model their own
        way.
    dual_variables : bool
        True (default): each result keeps its dual variables (``results_[k].alpha``), what
        ``warm_start`` resumes from: 8 bytes a row and sub-problem. False: each one-vs-rest
        sub-problem's are dropped as it ends (``n_sv`` stays), so that thousands of classes
        over many rows do not hold them all (the command line, which never resumes from a
        model, trains so). -s 4's single solve keeps its own.
    fallback : bool
        True (default): a dual solver that reaches ``max_iter`` before its tolerance hands on
        to the primal solver of the same loss (-s 1 -> 2, 7 -> 0, 12 -> 11), as LIBLINEAR
        2.50 does, and its result counts both solvers' iterations. False: it stops at the cap
        with a ConvergenceWarning, as scikit-learn's liblinear does (its estimators' choice).
    checkpoint : path, optional
        Save the run's state there (atomically) every ``checkpoint_every`` seconds (a
        sub-problem's end included, when that long has passed), at the end and when the run
        is interrupted.
    resume : path, optional
        Continue from a checkpoint written for the same data and options: the model is the one
        the uninterrupted run would have given.
    feature_map : linsvm.features.FeatureMap, optional
        Train on phi(X) instead of X: the degree-2 polynomial map and/or feature hashing. It
        is bound to X's width (features beyond it are ignored when predicting); the model's
        ``coef_`` is in the mapped space and its predictions map their rows the same way.
    map_mode : "auto", "implicit" or "materialise"
        How the map reaches the solver: "materialise" forms phi(X) once as a sparse matrix
        (every solver); "implicit" lets the solver form each phi(x_i) when it visits the row,
        storing nothing (the dual SVM solvers -s 1 and -s 3; 1.2-4x slower); "auto"
        materialises unless phi(X) would take more than a quarter of the machine's memory and
        the solver can form it implicitly.
    device : "cpu" or "cuda"
        "cuda" runs -s 1, 3, 12 and 13 on an NVIDIA GPU (``solvers.dcd_cuda``; needs the extra
        ``linsvm[cuda]``): the same stopping rule and exact final w, rows copied to the GPU
        once (float32 values; a one-line error before any copy when they do not fit its
        memory), sub-problems one after another, feature maps materialised.
    memory : str or int, optional
        Train -s 1, 3 or 7 by block minimisation over the file ``X`` in about this much
        memory ("2G", "500M", or bytes), as ``linsvm train --memory``: the budget counts this
        process as measured when training starts, w and alpha come on top (README: "Data
        larger than memory"). A text file is converted to a temporary cache first (in
        $TMPDIR). ``max_iter`` caps the outer iterations (default the solver's in-memory cap,
        300: an outer iteration is one of its epochs); ``checkpoint`` and ``resume`` as in
        memory. ``linsvm.outofcore.train_cache`` is this with a fixed
        overhead instead of a measured one.
    client : dask.distributed.Client or "local:N", optional
        Train -s 1, 3 or 7 by CoCoA+ on the cluster's workers (``distributed.train_cocoa``;
        needs the extra ``linsvm[distributed]``): ``X`` an array or sparse matrix (scattered
        once), a path every worker can read, a list of paths or a dask collection with ``y``.
        "local:N" starts N local worker processes for this call. ``eps`` is there the relative
        duality gap to stop at (default 1e-3), ``max_iter`` the rounds.
    place_options : mapping, optional
        Options of the place itself, passed on: with ``memory``, ``runner.train_blocks``'s
        (``inner_iter``, ``selective``, ``max_block_bytes``, ``on_outer``, ``held_out``,
        ``labels_check``); with ``client``, ``distributed.train_cocoa``'s (``n_partitions``,
        ``local_passes``, ``snapshot_every``, ``on_round``, ``labels_check``,
        ``width_check``, ``hold_bias``). Others are refused (the rounds or outer iterations are
        ``max_iter``).

    Returns
    -------
    Model
        ``model.interrupted`` tells whether a signal or the hook stopped it early. Ctrl-C
        (SIGINT) stops the solvers at the end of their outer iteration and returns that
        iterate; a SIGTERM stops them likewise, then (the checkpoint written) is passed on to
        the handler it had, ending the process by default (``linsvm.interrupts``).
    """
    seed = check_seed(seed)  # (a NumPy integer too: the generators take a Python int)
    if place_options is not None and not isinstance(place_options, Mapping):
        raise InvalidInputError("place_options must be a mapping of option names to values, "
                                f"got {type(place_options).__name__}")  # fmt: skip
    if memory is not None or client is not None or _is_path(X) or place_options:
        options = {k: v for k, v in locals().items()
                   if k not in ("X", "y", "memory", "client", "place_options")}  # fmt: skip
        return _train_elsewhere(X, y, memory, client, options, dict(place_options or {}))
    params = solvers.check_parameter(solver, C, eps, bias, max_iter, regularize_bias)
    spec = params.spec
    if feature_map is None and map_mode != "auto" and map_mode in MAP_MODES:
        # (as the command line refuses --map-mode without a map: it was ignored)
        raise InvalidInputError(f"map_mode={map_mode!r} needs a feature_map")
    device = solvers.check_device(spec, device)
    if device == "cuda":
        from .solvers.dcd_cuda import check_available

        given = [name for name, value in (("thread_scheme", thread_scheme != "auto"),
                                          ("bucket_size", bucket_size is not None),
                                          ("buckets_per_group", buckets_per_group is not None))
                 if value]  # fmt: skip
        if given:
            # (the GPU's order is its own, and no CPU threads share its solve)
            raise InvalidInputError(f"device='cuda' does not take {', '.join(given)}")
        check_available()
        if map_mode == "auto":
            map_mode = "materialise"
    n_threads = effective_n_jobs(n_jobs)
    X = as_csr(X, n_jobs=n_threads, trainable=True)
    if X.shape[0] == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    X, feature_map, implicit_map = _map_rows(X, feature_map, map_mode, spec, n_threads)
    # the solvers see the used columns only where fewer than half are used (hashed features);
    # not for an implicit map (the solver maps the columns itself) nor on a GPU
    used = UsedColumns.of(X) if implicit_map is None and device != "cuda" else None
    if used is not None:
        X = used.take(X)
    if device == "cuda":
        # (the GPU's copy of the rows is float32: a larger value would be infinite there)
        check_trainable(X, FLOAT32_OVERFLOW, "the GPU's float32 copy of the rows",
                        "phi(X), the mapped rows," if feature_map is not None else "X",
                        n_jobs=n_threads, exact=True)  # fmt: skip
    _check_starts_and_weights(spec, warm_start, init_sol, sample_weight, class_weight)
    if spec.kind == solvers.ONECLASS:
        y = sw = None
    else:
        y = check_labels(y, X.shape[0])
        sw = check_sample_weight(sample_weight, X.shape[0])
    options = {
        "shrinking": bool(shrinking),
        "bucket_size": bucket_size,
        "buckets_per_group": buckets_per_group,
        "thread_scheme": check_scheme(thread_scheme),
    }
    # (only then options: checkpoints of default runs stay as they were)
    if not objectives:
        options["objectives"] = False
    if not fallback:
        options["fallback"] = False
    # as_csr checked X's values above; a materialised map's phi(X) is left to the solvers
    checked = feature_map is None or implicit_map is not None
    if spec.kind == solvers.ONECLASS:
        options["nu"] = nu
        problem = _oneclass_problem(X, params, seed, options, checked)
    elif spec.kind == solvers.REGRESSION:
        problem = _regression_problem(X, y, params, sw, class_weight, p, seed, options, checked)
    else:
        problem = _classification_problem(X, y, params, sw, class_weight, seed, options, checked)
    problem.feature_map = feature_map
    problem.implicit_map = implicit_map
    problem.used = used
    # (Crammer-Singer: a weight vector a class, two included; else one a sub-problem)
    n_vectors = problem.labels.shape[0] if spec.multiclass else problem.n_subproblems
    _memory.check_weights_fit(n_vectors, problem.n_features + (1 if problem.bias >= 0 else 0))
    problem.apply_starts(warm_start, init_sol)
    if used is not None and hook is not None:
        hook = _hook_over_every_column(hook, used)

    meta = None
    if checkpoint is not None or resume is not None:
        # what identifies the run (a pass over the data: only when checkpoints are used)
        meta = _checkpoint_meta(problem, params, seed, class_weight, warm_start is not None
                                or init_sol is not None, X, y, sw, device, n_threads)  # fmt: skip
    resumed = _resumed(resume, meta, problem, spec)
    with stop_on_signals() as stop, _rows_on(device, X):
        checkpointer = Checkpointer(checkpoint, checkpoint_every, meta) if checkpoint else None
        if checkpointer is not None and resumed is not None:
            checkpointer.resume_from(resumed)
        runner = _Runner(spec, params, problem, stop, hook, verbose, checkpointer, resumed,
                         device, keep_dual=bool(dual_variables))  # fmt: skip
        if progress and not verbose:
            runner.timer = progress if isinstance(progress, ProgressTimer) else ProgressTimer()
        solutions = runner.run_all(n_threads)
    model = problem.model(solutions)
    model.stop_signal = stop.signal
    if model.interrupted:
        warn_interrupted(f" by {stop.name}" if stop.requested else " by the hook")
    return model


def _hook_over_every_column(hook: Hook, used: UsedColumns) -> Hook:
    """The caller's hook, shown ``w`` over every column where the solvers see the used ones."""

    def over_every_column(progress: Progress):
        return hook(replace(progress, w=used.expand_w(progress.w)))

    if hasattr(hook, "every_iteration"):
        over_every_column.every_iteration = hook.every_iteration
    return over_every_column


def _map_rows(X, feature_map, map_mode: str, spec: SolverSpec, n_threads: int):
    """(the rows the solver trains on, the map, the map left to the solver or None): phi(X)
    formed here unless the solver forms each phi(x_i) itself (``map_mode``)."""
    implicit_map = None
    if feature_map is not None:
        feature_map, implicit = _place_map(feature_map, map_mode, spec, X)
        if implicit:
            implicit_map = feature_map
        else:
            X = feature_map.transform(X, n_jobs=n_threads)
    elif map_mode not in MAP_MODES:
        raise InvalidInputError(f"map_mode must be one of {MAP_MODES}, got {map_mode!r}")
    return X, feature_map, implicit_map


def _check_starts_and_weights(spec: SolverSpec, warm_start, init_sol, sample_weight,
                              class_weight) -> None:  # fmt: skip
    """Refuse starts and weights the solver does not take."""
    if warm_start is not None:
        if init_sol is not None:
            raise InvalidInputError("give init_sol or warm_start, not both")
        if not isinstance(warm_start, Model):
            raise InvalidInputError(
                f"warm_start must be a linsvm.Model, got {type(warm_start).__name__}"
            )
        if not spec.warm_start:
            raise InvalidInputError(
                f"warm_start is not supported by {spec.named}"
            )
    if not spec.weights and (
        sample_weight is not None or any(float(v) != 1.0 for v in (class_weight or {}).values())
    ):
        raise InvalidInputError(
            f"{spec.named} takes one C for all rows: class and sample "
            "weights are not supported"
            + (" (use -s 3 for a weighted L1-loss SVM)" if spec.model_type == 3 else "")
        )
    if init_sol is not None and not spec.init_sol:
        raise InvalidInputError(
            "init_sol is supported only for "
            + solvers.list_where(lambda s: s.init_sol and s.kind == spec.kind)
            + f" ({spec.kind})"
        )


def _checkpoint_meta(problem: _Problem, params, seed: int, class_weight, warm: bool, X, y, sw,
                     device: str, n_threads: int = 1) -> dict:  # fmt: skip
    """What identifies a run, for its checkpoints: the options that decide the result and
    the data's fingerprint; the threads of a threaded dual solve (their count decides its
    path: a resume on another count would give neither run's model)."""
    feature_map, implicit_map = problem.feature_map, problem.implicit_map
    meta = {
        "solver": params.spec.number,
        "C": params.C,
        "eps": params.eps,
        "bias": params.bias,
        "max_iter": params.max_iter,
        "regularize_bias": params.regularize_bias,
        "seed": int(seed),
        "options": problem.options,
        "feature_map": None if feature_map is None else feature_map.header(),
        "implicit_map": implicit_map is not None,
        "class_weight": sorted((repr(k), float(v)) for k, v in (class_weight or {}).items()),
        "warm_start": warm,
        "data": fingerprint(X, y if y is not None else np.zeros(0), sw),
    }
    if device != "cpu":  # its state is the GPU solver's
        meta["device"] = device
        return meta
    within = max(1, n_threads // problem.n_subproblems)
    if params.spec.threads and params.spec.dual:
        planned = planned_threads(within, int(X.indptr[-1]),
                                  problem.options.get("thread_scheme") or "auto")  # fmt: skip
        if planned > 1:  # (only then: checkpoints of serial runs stay as they were)
            meta["threads"] = planned
    # the primal Newton solvers' sums in row chunks (-s 0, 2, 11, and the dual solvers'
    # fallback to them): the chunks decide the last bits
    newton = params.spec.number if not params.spec.dual else params.spec.fallback
    if newton is not None and solvers.get_solver(newton).threads:
        planned = newton_threads(int(X.indptr[-1]), X.shape[0], within)
        if planned > 1:
            meta["newton_threads"] = planned
    return meta


def _resumed(resume, meta, problem: _Problem, spec: SolverSpec) -> Resume | None:
    """The checkpoint to resume from, checked against the run (None: a fresh run)."""
    if resume is None:
        return None
    resumed = Resume(resume)
    resumed.check(meta)
    n_weights = problem.solved_features + (1 if problem.bias >= 0 else 0)
    resumed.check_slots(
        problem.n_subproblems,
        tuple(s for s in (spec.number, spec.fallback) if s is not None),
        (len(problem.labels), n_weights) if spec.multiclass else (n_weights,),
        ("rho",) if spec.kind == solvers.ONECLASS else (),
    )
    return resumed

# What each place other than this process's memory takes of train's options (the rest must
# keep their defaults there): blocks read from disk (outofcore) and a Dask cluster (CoCoA+).
_PLACE_OPTIONS = ("solver", "C", "eps", "bias", "class_weight", "max_iter", "seed", "verbose")
_BLOCK_OPTIONS = (*_PLACE_OPTIONS, "progress", "checkpoint", "checkpoint_every", "resume",
                  "n_jobs")  # fmt: skip
# The places' own options (``place_options``): their runners' parameters that train does not
# set itself.
_BLOCK_PLACE_OPTIONS = ("inner_iter", "selective", "max_block_bytes", "on_outer", "held_out",
                        "labels_check")  # fmt: skip
_CLUSTER_PLACE_OPTIONS = ("n_partitions", "local_passes", "snapshot_every", "on_round",
                          "labels_check", "width_check", "hold_bias")  # fmt: skip


def _is_path(X) -> bool:
    return isinstance(X, str | os.PathLike)


def _refuse_labels_with_a_path(X, y) -> None:
    if y is not None and _is_path(X):
        raise InvalidInputError(
            f"y is given with the path {os.fspath(X)!r}: the file's labels are the targets"
        )


def read_if_path(X, y) -> tuple:
    """(X, y) as given, or read from the LIBSVM file that X names (then y must be None: the
    file's labels are the targets)."""
    if not _is_path(X):
        return X, y
    _refuse_labels_with_a_path(X, y)
    from .io import read_libsvm

    return read_libsvm(X)


def _train_elsewhere(X, y, memory, client, options: dict, place_options: dict) -> Model:
    """``train`` where the rows are not given in memory: a path read into memory, blocks of a
    file under ``memory``, or a Dask cluster (``client``). ``options``: train's other
    arguments as given; ``place_options``: the place's own."""
    if memory is not None and client is not None:
        raise InvalidInputError(
            "give memory= (blocks read from disk) or client= (a Dask cluster), not both"
        )
    if place_options and memory is None and client is None:
        raise InvalidInputError("place_options are for memory= or client=")
    _refuse_labels_with_a_path(X, y)
    if memory is None and client is None:  # a path, read into memory
        return train(*read_if_path(X, y), **options)
    place, taken, own = (("memory=", _BLOCK_OPTIONS, _BLOCK_PLACE_OPTIONS) if memory is not None
                         else ("client=", _PLACE_OPTIONS, _CLUSTER_PLACE_OPTIONS))  # fmt: skip
    defaults = {k: v.default for k, v in inspect.signature(train).parameters.items()}
    unknown = [str(k) for k in place_options if k not in own]
    if unknown:
        # (the runners' parameters that train sets: given to train as its own, e.g. max_iter
        # for the rounds or outer iterations)
        raise InvalidInputError(
            f"place_options with {place} are {', '.join(own)}; not {', '.join(unknown)} "
            "(train's own options, max_iter among them, are train's arguments)"
        )
    changed = [k for k, v in options.items() if k not in taken and not _is_default(v, defaults[k])]
    if changed:
        where = "block minimisation over a file" if memory is not None else "CoCoA+ on Dask"
        raise InvalidInputError(
            f"{place} trains by {where}, which takes {', '.join(taken)}; not "
            f"{', '.join(changed)}"
        )
    spec = solvers.get_solver(options["solver"])
    if memory is not None:
        return _train_in_blocks(X, memory, spec.number, options, place_options)
    return _train_on_cluster(X, y, client, spec.number, options, place_options)


def _is_default(value, default) -> bool:
    if value is default:
        return True
    scalar = (bool, int, float, str)
    return isinstance(value, scalar) and isinstance(default, scalar) and value == default


def _train_in_blocks(path, memory, solver: int, options: dict, place_options: dict) -> Model:
    """Block minimisation over the file at ``path`` (text converted to a temporary cache,
    said on stderr with ``verbose``) in ``memory``, with the overhead this process holds
    measured as the command measures it."""
    from .io.cache import as_cache
    from .outofcore import measured_overhead, parse_memory
    from .runner import train_cache

    if not _is_path(path):
        raise InvalidInputError(
            "memory= trains from a file (LIBSVM text or a linsvm cache) a block at a time; "
            "the data given is already in memory: train without memory="
        )
    budget = parse_memory(memory)
    progress = options["progress"]
    timer = ProgressTimer() if progress is True else (progress or None)
    max_iter = options["max_iter"]
    params = {k: options[k] for k in ("C", "eps", "bias", "class_weight", "seed", "verbose",
                                      "checkpoint", "checkpoint_every", "resume")}  # fmt: skip
    # (a SIGTERM ends the process after the temporary cache of a text file is removed)
    with sigterm_passed_on_after(), as_cache(path, options["n_jobs"], timer,
                                             announce=options["verbose"],
                                             memory=budget) as cache:  # fmt: skip
        return train_cache(
            cache, memory=budget, solver=solver, progress=timer,
            max_outer=max_iter,
            overhead_bytes=measured_overhead(solver), **params, **place_options,
        )  # fmt: skip


def _train_on_cluster(X, y, client, solver: int, options: dict, place_options: dict) -> Model:
    """CoCoA+ on the workers of ``client`` (or of a LocalCluster that "local:N" starts for the
    call and closes after it)."""
    from .distributed import client_for, train_cocoa

    # (a client this call connects, to an address or a LocalCluster it starts, it closes)
    max_iter = options["max_iter"]
    if max_iter is not None and (not is_integer(max_iter) or max_iter < 1):
        raise InvalidInputError(f"max_iter (the cap on the cluster's rounds) must be an integer "
                                f">= 1, got {max_iter!r}")  # fmt: skip
    given = client
    client, cluster = client_for(client) if isinstance(client, str) else (client, None)
    try:
        return train_cocoa(
            os.path.abspath(X) if _is_path(X) else X, y, client=client, solver=solver,
            C=options["C"], eps=options["eps"], bias=options["bias"],
            class_weight=options["class_weight"], seed=options["seed"],
            verbose=options["verbose"], **({} if max_iter is None else {"max_rounds": max_iter}),
            **place_options,
        )  # fmt: skip
    finally:
        if client is not given:
            client.close()
        if cluster is not None:
            cluster.close()


def _rows_on(device: str, X):
    """A GPU run's context: one copy of X's rows on the GPU for all its sub-problems."""
    if device != "cuda":
        return contextlib.nullcontext()
    from .solvers.dcd_cuda import rows_kept_on_device

    return rows_kept_on_device(X)


class _Problem:
    """The sub-problems of one training run and how their solutions become a Model.

    ``make(slot)`` builds sub-problem ``slot`` when it is solved: one-vs-rest's targets and
    costs (two arrays of l floats each) then exist only for the sub-problems in progress,
    not for every class at once.
    """

    def __init__(self, spec: SolverSpec, X, n_subproblems: int, make, labels, bias, options,
                 **model) -> None:  # fmt: skip
        self.spec = spec
        self.X = X
        self.n_subproblems = n_subproblems
        self.make = make
        self.labels = labels  # the data's labels in LIBLINEAR's order (None: no classes)
        self.bias = bias
        self.options = options  # the options every sub-problem gets
        self.model_args = model
        self.alpha0: dict[int, np.ndarray] = {}  # warm starts by slot
        self.w0: dict[int, np.ndarray] = {}
        self.feature_map: FeatureMap | None = None  # the model's map, bound
        self.implicit_map: FeatureMap | None = None  # the same, when solvers form it
        self.used: UsedColumns | None = None  # X's used columns, where X holds only those
        self._phi = None  # phi(X), once a fallback has needed it
        self._lock = threading.Lock()

    @property
    def n_features(self) -> int:
        """Features of the model: X's columns (all of them, where X holds the used ones), or
        the implicit map's."""
        if self.used is not None:
            return self.used.n_features
        return self.solved_features

    @property
    def solved_features(self) -> int:
        """Features the solvers see: X's columns, or the implicit map's."""
        if self.implicit_map is not None:
            return self.implicit_map.n_output
        return self.X.shape[1]

    def materialised(self):
        """phi(X) of the implicit map, formed once (under a lock: sub-problems run in
        threads) when a solver without the implicit form needs it."""
        with self._lock:
            if self._phi is None:
                self._phi = self.implicit_map.transform(self.X, n_jobs=1)
            return self._phi

    def subproblem(self, slot: int) -> Subproblem:
        return self.make(slot).but(
            alpha0=self.alpha0.get(slot), w0=self.w0.get(slot), feature_map=self.implicit_map
        )

    def apply_starts(self, warm_start: Model | None, init_sol) -> None:
        """Warm starts from a previous model (dual variables or weights), or ``init_sol``."""
        n_subs = self.n_subproblems
        n_rows, n_features = self.X.shape[0], self.n_features
        if init_sol is not None:
            init_sol = real_values(init_sol, "init_sol")
            if not (np.abs(init_sol) < TRAINABLE_MAX).all():  # (also NaN)
                # (NaN was blamed on C; 1e155 gave a garbage model)
                raise InvalidInputError("init_sol must be finite and below 2^"
                                        f"{math.log2(TRAINABLE_MAX):.0f} in magnitude")  # fmt: skip
            expected = (n_subs, n_features + (1 if self.bias >= 0 else 0))
            if self.spec.kind == solvers.REGRESSION:
                init_sol = init_sol.reshape(1, -1)
            if init_sol.shape != expected:
                raise InvalidInputError(
                    f"init_sol must have shape {expected}, got {init_sol.shape}"
                )
            self.w0 = dict(enumerate(self._solved_w(init_sol)))
            return
        if warm_start is None:
            return
        model = warm_start
        kind = self.spec.kind
        if model.kind != kind:
            raise InvalidInputError(
                f"warm_start: the model is a {model.kind} model, this is a {kind} problem"
            )
        if self.labels is not None and (
            model.labels_.shape != self.labels.shape or np.any(model.labels_ != self.labels)
        ):
            raise InvalidInputError(
                f"warm_start: the model's labels {model.labels_.tolist()} are not the data's "
                f"{self.labels.tolist()} (in order of first appearance)"
            )
        if model.n_features != n_features:
            raise InvalidInputError(
                f"warm_start: the model has {model.n_features} features, X has {n_features}"
            )
        results = model.results_
        for k in range(n_subs):
            if self.spec.dual:
                alpha = results[k].alpha if len(results) == n_subs else None
                if alpha is not None and alpha.shape[0] != n_rows:
                    raise InvalidInputError(
                        f"warm_start: the model's dual variables are for {alpha.shape[0]} "
                        f"rows, X has {n_rows}"
                    )
                if alpha is not None and (alpha.ndim == 2) == self.spec.multiclass:
                    self.alpha0[k] = alpha
            elif model.coef_.shape[0] == n_subs and (model.bias >= 0) == (self.bias >= 0):
                w0 = model.coef_[k]
                if self.bias >= 0:
                    w0 = np.append(w0, model.bias_weights_[k])
                self.w0[k] = self._solved_w(w0)

    def _solved_w(self, w: np.ndarray) -> np.ndarray:
        """Starting weights over every column -> over the columns the solvers see."""
        return w if self.used is None else self.used.take_w(w)

    def model(self, solutions: list[Solution]) -> Model:
        """The model of the solutions, whose ``w`` become views of its stacked weights W
        (over every column where the solvers saw the used ones): the weights held once
        (one-vs-rest over a wide hashed space: hundreds of MiB a copy)."""
        # (one weight vector: a view of it, not a copy; w may be gigabytes wide)
        W = (np.atleast_2d(solutions[0].w) if len(solutions) == 1
             else np.vstack([np.atleast_2d(sol.w) for sol in solutions]))  # fmt: skip
        if self.used is not None:
            W = self.used.expand_w(W)
        for k, sol in enumerate(solutions):
            sol.w = W[k] if np.ndim(sol.w) == 1 else W  # (Crammer-Singer: one 2-D w)
        labels = self.labels if self.labels is not None else np.array([])
        extra = dict(self.model_args)
        if self.spec.kind == solvers.ONECLASS:
            extra["rho"] = solutions[0].figures["rho"]
        return Model.from_weights(self.spec.number, labels, W, self.n_features, self.bias,
                                  solutions, feature_map=self.feature_map, **extra)  # fmt: skip


def map_once(X, solver: int | str, params: dict, n_jobs: int | None) -> tuple:
    """For runs of many trainings on rows of one X (-v, -C): phi(X) formed once here when the
    solver would materialise it anyway (then ``params`` lose ``feature_map`` and ``map_mode``
    and the models of the run see mapped rows); else X and params as they are, the map bound.
    X: canonical CSR. Returns (X, params)."""
    fmap = params.get("feature_map")
    if fmap is None:
        return X, params
    params = dict(params)
    spec = solvers.get_solver(solver)
    fmap, implicit = _place_map(fmap, params.get("map_mode", "auto"), spec, X)
    if implicit:
        params["feature_map"] = fmap
        return X, params
    del params["feature_map"]
    params.pop("map_mode", None)
    return fmap.transform(X, n_jobs=n_jobs), params


def _place_map(
    feature_map: FeatureMap, map_mode: str, spec: SolverSpec, X
) -> tuple[FeatureMap, bool]:
    """The map bound to the data's width (a map bound before keeps its width), and whether
    the solver forms it implicitly. X's values are checked for what the map makes of them
    (X holds none of ``TRAINABLE_MAX`` or more; phi(X) squares them)."""
    if not isinstance(feature_map, FeatureMap):
        raise InvalidInputError(
            f"feature_map must be a linsvm.features.FeatureMap, got {type(feature_map).__name__}"
        )
    if map_mode not in MAP_MODES:
        raise InvalidInputError(f"map_mode must be one of {MAP_MODES}, got {map_mode!r}")
    if feature_map.n_input is None:
        feature_map = feature_map.bind(X.shape[1])
    check_trainable(X, feature_map.largest_input(TRAINABLE_MAX),
                    "float64 in training once the feature map squares them")  # fmt: skip
    if map_mode == "implicit" and not spec.implicit_map:
        raise InvalidInputError(
            f"{spec.label} cannot form the feature map implicitly; "
            + solvers.list_where(lambda s: s.implicit_map)
            + " can (or use map_mode='materialise')"
        )
    if map_mode == "auto":
        # Materialised phi(X) trains 1.2-1.8x faster than the implicit map when exact, 2-4x
        # when hashed (benchmarks/RESULTS-poly2.md): implicit only when phi(X) would not fit.
        return feature_map, spec.implicit_map and feature_map.nbytes(X) > materialise_budget()
    return feature_map, map_mode == "implicit"


def materialise_budget() -> int:
    """Bytes phi(X) may take before ``map_mode="auto"`` forms it implicitly: a quarter of the
    machine's memory (4 GiB where that is unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def _classification_problem(
    X, y, params: solvers.Parameters, sw, class_weight, seed, options, values_checked=False
):
    spec = params.spec
    labels, class_index = classes(y)
    weighted_C = class_costs(labels, params.C, class_weight)
    check_row_costs(labels, class_index, weighted_C, params.C, sw)
    n_classes = labels.shape[0]
    common = dict(
        max_iter=params.max_iter,
        bias=params.bias,
        regularize_bias=params.regularize_bias,
        values_checked=values_checked,
    )
    if spec.multiclass:
        cost = weighted_C[class_index]
        sub = Subproblem(
            X,
            class_index.astype(np.float64),
            cost if sw is None else cost * sw,
            eps=params.eps,
            seed=seed,
            options=dict(options, n_classes=n_classes),
            **common,
        )
        return _Problem(spec, X, 1, lambda slot: sub, labels, params.bias, options)

    n_subproblems = 1 if n_classes == 2 else n_classes
    # (what the dual solvers compute of the rows alone: once for all classes)
    shared = SharedRows(X, seed) if n_subproblems > 1 else None

    def make(k: int) -> Subproblem:
        """Class k against the rest (for two classes, k = 0 only)."""
        y_sign, cost = one_vs_rest(class_index, k, weighted_C, params.C, sw)
        return Subproblem(
            X,
            y_sign,
            cost,
            eps=solvers.solver_tolerance(spec, params.eps, y_sign),
            seed=seed + k,
            options=options,
            index=k,
            label=labels[k],
            shared_rows=shared,
            **common,
        )

    return _Problem(spec, X, n_subproblems, make, labels, params.bias, options)


def check_regression_targets(y: np.ndarray, path: str | None = None) -> None:
    """Refuse regression targets that are not numbers, or of ``TRAINABLE_MAX`` or more in
    magnitude (they enter the losses' squares as the features do: -s 11 returned w = 0 and
    -s 12 a w of 1e198 as converged). Checked on the caller's whole y, before any folds, so
    that the row named is the caller's: y's index, or with ``path`` (the command's data
    file) the instance counted from 1."""
    if y.dtype.kind not in "iuf":
        raise InvalidInputError(f"regression targets must be numbers, got dtype {y.dtype}")
    if y.shape[0] and np.abs(y).max() >= TRAINABLE_MAX:
        row = int(np.flatnonzero(np.abs(y) >= TRAINABLE_MAX)[0])
        where = f"{path}: regression target {y[row]:.3g} of instance {row + 1}" if path \
            else f"regression target {y[row]:.3g} (row {row})"  # fmt: skip
        raise InvalidInputError(f"{where}: targets of magnitude "
                                f"2^{math.log2(TRAINABLE_MAX):.0f} or more overflow the "
                                "solvers; scale them")  # fmt: skip


def _regression_problem(
    X, y, params: solvers.Parameters, sw, class_weight, p, seed, options, values_checked=False
):
    if class_weight:
        raise InvalidInputError("class weights (-wi) apply to classification, not regression")
    check_regression_targets(y)
    p = check_p(p)
    cost = np.full(X.shape[0], params.C) if sw is None else params.C * sw
    if sw is not None:
        refuse_infinite_costs(cost, params.C, sw)
    sub = Subproblem(
        X,
        np.asarray(y, dtype=np.float64),
        cost,
        eps=params.eps,
        max_iter=params.max_iter,
        bias=params.bias,
        regularize_bias=params.regularize_bias,
        seed=seed,
        options=dict(options, p=p),
        values_checked=values_checked,
    )
    return _Problem(params.spec, X, 1, lambda slot: sub, None, params.bias, sub.options, p=p)


def _oneclass_problem(X, params: solvers.Parameters, seed, options, values_checked=False):
    sub = Subproblem(
        X,
        np.zeros(X.shape[0]),
        np.ones(X.shape[0]),
        eps=params.eps,
        max_iter=params.max_iter,
        bias=params.bias,
        seed=seed,
        options=options,
        values_checked=values_checked,
    )
    return _Problem(params.spec, X, 1, lambda slot: sub, None, -1.0, options)


@dataclass
class _Runner:
    """Solves the sub-problems of one run: hooks, resume, fallbacks, warnings, checkpoints."""

    spec: SolverSpec
    params: solvers.Parameters
    problem: _Problem
    stop: StopRequest
    user_hook: Hook | None
    verbose: bool
    checkpointer: Checkpointer | None
    resumed: Resume | None
    device: str = "cpu"  # where the solver runs (the fallback runs on the CPU)
    keep_dual: bool = True  # False: each sub-problem's dual variables dropped as it ends
    threads_within: int = 1  # threads each sub-problem's solver may use
    timer: ProgressTimer | None = None  # timed progress lines (not with verbose)

    def hook(self, slot: int, solver: int, iterations_before: int) -> Hook:
        user_hook, saving = self.user_hook, None
        if self.checkpointer is not None:
            user_hook, user_stopped = _stop_noted(self.user_hook)
            saving = self.checkpointer.hook(
                slot, solver, iterations_before,
                lambda: self.stop.requested or user_stopped(),
            )  # fmt: skip
        lines = _print_progress if self.verbose else None
        if self.timer is not None:
            lines = self._timed_lines(slot, solver, iterations_before)
        # saving comes after the user's hook and before the stop request, so that the last
        # state of a run either stops is saved
        return chain_hooks(lines, user_hook, saving, self.stop.hook)

    def _timed_lines(self, slot: int, solver: int, iterations_before: int) -> Hook:
        """A hook printing a progress line when the timer says one is due: the sub-problem's
        class where there are several, and the fallback solver after the one asked for."""
        timer = self.timer
        if self.problem.n_subproblems > 1:
            timer = timer.labelled(f"class {show_label(self.problem.labels[slot])}")
        if solver != self.spec.number:
            timer = timer.labelled(f"-s {solver} after {iterations_before} iterations of "
                                   f"-s {self.spec.number}")

        def lines(progress: Progress) -> None:
            # no objectives: they cost a pass over the rows
            timer.tick(lambda: _progress_line(progress, objectives=False))

        lines.every_iteration = False  # (the clock is read once per batch of iterations)
        return lines

    def run_all(self, n_threads: int) -> list[Solution]:
        """Every sub-problem's Solution, in order. Threads go first to sub-problems side by
        side, the rest to each sub-problem's own threaded solver: never more busy threads
        than ``n_threads``."""
        n_subproblems = self.problem.n_subproblems
        self.threads_within = max(1, n_threads // n_subproblems)
        n_threads = min(n_threads, n_subproblems)
        if self.verbose or self.device == "cuda":  # (one GPU: its sub-problems in turn)
            n_threads = 1  # progress lines in sub-problem order
        try:
            if n_threads == 1:
                solutions = [self.run(slot) for slot in range(n_subproblems)]
            else:
                with ThreadPoolExecutor(max_workers=n_threads) as pool:
                    futures = [submit(pool, self.run, slot) for slot in range(n_subproblems)]
                    # Wake up now and then: a signal delivered to a worker thread is handled
                    # only when the main thread runs Python code.
                    while futures_wait(futures, timeout=SIGNAL_POLL_SECONDS).not_done:
                        pass
                    solutions = [future.result() for future in futures]
        finally:
            # (also when a sub-problem raised: the ones finished since the last write, which
            # their ends no longer write at once, are kept)
            if self.checkpointer is not None:
                self.checkpointer.write()
        return solutions

    def run(self, slot: int) -> Solution:
        if self.resumed is not None and slot in self.resumed.finished:
            return self.resumed.finished[slot]
        sub = self.problem.subproblem(slot).but(n_threads=self.threads_within)
        spec = self.spec
        iterations_before = 0
        if self.resumed is not None and slot in self.resumed.running:
            running, iterations_before, state = self.resumed.running[slot]
            try:
                if running != spec.number:  # the fallback was running
                    sol = self._fallback(slot, sub, None, iterations_before, state)
                    return self._finish(slot, sub, sol)
                sol = spec.solve_on(self.device)(
                    sub.but(resume=state), self.hook(slot, spec.number, 0)
                )
            except ArithmeticError as error:
                # the kernels divide only by what the data and options keep away from zero
                # (checked at the edge): a state that makes them divide by zero is damaged
                raise InvalidInputError(
                    f"{spec.label}{_where(sub)}: the state resumed from {self.resumed.path} is "
                    f"damaged ({type(error).__name__})"
                ) from None
            return self._after_solve(slot, sub, spec, sol)
        if sub.max_iter == 0 and not spec.runs_zero_iterations:
            return self._finish(slot, sub, _zero_iterations(spec, sub))
        sol = spec.solve_on(self.device)(sub, self.hook(slot, spec.number, 0))
        return self._after_solve(slot, sub, spec, sol)

    def _after_solve(self, slot: int, sub: Subproblem, spec: SolverSpec, sol: Solution):
        sol.solver = spec.number
        # no fallback after 0 iterations (the start point was asked for) nor without a
        # stopping rule (eps = 0: max_iter iterations were asked for, not a converged model)
        if (
            sol.stop_reason == solvers.MAX_ITER
            and spec.fallback is not None
            and sub.option("fallback", True)
            and sub.max_iter > 0
            and self.params.eps > 0
        ):
            _warn(sub, spec, sol, f"switching to -s {spec.fallback} (the same loss, in the primal)")
            sol = self._fallback(slot, sub, sol, sol.n_iter, None)
        return self._finish(slot, sub, sol)

    def _fallback(self, slot, sub, dual: Solution | None, iterations_before, state) -> Solution:
        """LIBLINEAR 2.50: continue with the primal solver from the dual's w (or from a
        checkpointed ``state`` of it), with a tighter tolerance than the one derived from the
        user's -e (which may be too loose)."""
        fallback = SOLVERS[self.spec.fallback]
        factor = self.spec.fallback_tol_factor
        if sub.feature_map is not None and not fallback.implicit_map:
            # the fallback needs phi(X) itself: formed when a first fallback needs it, then
            # shared by the sub-problems (one-vs-rest: the same rows)
            sub = sub.but(X=self.problem.materialised(), feature_map=None, values_checked=False)
        fb_sub = sub.but(
            eps=factor * solvers.solver_tolerance(fallback, self.params.eps, sub.y),
            max_iter=fallback.max_iter,
            alpha0=None,
            w0=None if dual is None else dual.w,
            resume=state,
        )
        sol = fallback.solve(fb_sub, self.hook(slot, fallback.number, iterations_before))
        sol.solver = fallback.number
        # the dual's part, for LIBLINEAR's lines (its #iter, objective and nSV are the dual's)
        sol.figures["dual_n_iter"] = iterations_before
        if dual is not None:
            sol.figures.update(dual_objective=dual.dual, dual_n_sv=dual.n_sv)
        sol.n_iter += iterations_before
        return sol

    def _finish(self, slot: int, sub: Subproblem, sol: Solution) -> Solution:
        spec = SOLVERS[sol.solver]
        if not _finite(np.ascontiguousarray(sol.w, dtype=np.float64).ravel()):
            # the data's values are bounded (as_csr): a state resumed from a damaged or
            # crafted checkpoint gets here, or a C past what a solver computes in float64
            # (-s 7 from about 1e100, where LIBLINEAR's weights are NaN too): an error, never
            # a NaN model
            why = (f" (resumed from {self.resumed.path}: damaged?)" if self.resumed
                   else ": the solver overflowed float64; lower C")  # fmt: skip
            raise InvalidInputError(f"{spec.label}{_where(sub)}: the weights became NaN or "
                                    f"infinite{why}")
        stopped_short = sol.stop_reason not in (solvers.CONVERGED, solvers.INTERRUPTED)
        # eps = 0 (or fixed epochs) sets no tolerance to fall short of: those runs end as
        # asked, unwarned
        missed = stopped_short and spec.stops_on_tolerance and self.params.eps > 0
        if missed:
            if sol.stop_reason == solvers.MAX_ITER:
                _warn(sub, spec, sol, spec.advice_at_cap(sub.X.shape[0], sub.n_features))
            elif sol.stop_reason == solvers.STALLED:
                warn(f"{spec.label} stalled{_where(sub)} before reaching the tolerance: "
                     f"{_why_stalled(sol)}", ConvergenceWarning, stacklevel=4)  # fmt: skip
            else:
                warn(
                    f"{spec.label} stopped ({sol.stop_reason.replace('_', ' ')}){_where(sub)} "
                    "before reaching the tolerance",
                    ConvergenceWarning,
                    stacklevel=4,
                )
        if self.verbose and missed:
            print(f"WARNING: {sol.stop_reason.replace('_', ' ')}", file=sys.stderr)
        if self.checkpointer is not None and sol.stop_reason != solvers.INTERRUPTED:
            self.checkpointer.finish(slot, sol)
        if not self.keep_dual and np.ndim(sol.alpha) == 1:
            sol = without_dual_variables(sol)
        return sol


@njit(cache=True, nogil=True)
def _finite(values) -> bool:
    """Whether no value is NaN or infinite: one pass, no temporary (w may be gigabytes)."""
    for v in values:
        if not np.isfinite(v):
            return False
    return True


def _stop_noted(hook: Hook | None) -> tuple[Hook | None, Callable[[], bool]]:
    """``hook`` and a function saying whether it has asked to stop (returned False)."""
    if hook is None:
        return None, lambda: False
    asked = [False]

    def noted(progress: Progress):
        go_on = hook(progress)
        asked[0] = asked[0] or asks_to_stop(go_on)
        return go_on

    noted.every_iteration = wants_every_iteration(hook)
    return noted, lambda: asked[0]


def _zero_iterations(spec: SolverSpec, sub: Subproblem) -> Solution:
    """What 0 iterations of a solver starting from w = 0 give (``runs_zero_iterations``
    False: a classifier without warm starts): w = 0 and P(0), each row's loss at margin 0."""
    loss_at_zero = np.log(2.0) if solvers.model_file_solver(spec.number).probability else 1.0
    return Solution(
        w=np.zeros(sub.n_weights),
        n_iter=0,
        converged=False,
        stop_reason=solvers.MAX_ITER,
        primal=float(np.sum(sub.C)) * loss_at_zero,
        solver=spec.number,
    )


def _where(sub: Subproblem) -> str:
    if sub.label is None:
        return ""
    return f" in sub-problem {sub.index} (class {show_label(sub.label)})"


def _why_stalled(sol: Solution) -> str:
    """What a stalled solve's warning says: its gap at rounding already (a tolerance below
    what float64 can certify), or the rounding of a large C |x|^2 in its way."""
    relative = sol.gap / abs(sol.primal) if sol.primal else 0.0
    if relative <= STALLED_AT_ROUNDING:
        return (f"its relative gap ({relative:.1e}) is at rounding: a tolerance that small "
                "cannot be certified (raise eps)")
    return ("its objective and its lower bound stopped improving, at the rounding of C times "
            "the rows' squared norms (scale the features or lower C)")


def _warn(sub: Subproblem, spec: SolverSpec, sol: Solution, advice: str) -> None:
    warn_at_cap(sub.max_iter, spec.label, _where(sub), advice, stacklevel=7)


def _print_progress(progress: Progress) -> None:
    """One progress line on stderr: LIBLINEAR's for the Newton solvers, else the iteration,
    the solver's figures and (where the solver can compute them) the primal and dual values."""
    print(_progress_line(progress), file=sys.stderr)


def _progress_line(progress: Progress, objectives: bool = True) -> str:
    """``_print_progress``'s line; ``objectives=False`` leaves out the primal and dual values
    (a pass over the rows)."""
    fig = progress.figures
    if "grad_norm" in fig and "f" in fig:
        if progress.iteration == 0:
            line = f"init f {fig['f']:5.3e} |g| {fig['grad_norm']:5.3e}"
        else:
            line = (
                f"iter {progress.iteration:2d} f {fig['f']:5.3e} |g| {fig['grad_norm']:5.3e} "
                f"CG {fig.get('n_cg', 0):3d} step_size {fig.get('step', 0.0):4.2e}"
            )
    else:
        parts = [f"iter {progress.iteration:4d}"]
        if "n_active" in fig:
            parts.append(f"active {fig['n_active']:9d}")
        if "pg_max" in fig and "pg_min" in fig:
            parts.append(f"PG max-min {fig['pg_max'] - fig['pg_min']:.3e}")
        elif np.isfinite(progress.measure):
            parts.append(f"measure {progress.measure:.3e}")
        if objectives and progress.objectives is not None:
            primal, dual = progress.objectives()
            parts.append(f"primal {primal:.10e}  dual {dual:.10e}")
        if "threads_now" in fig:
            parts.append(f"threads {fig['threads_now']} ({fig['thread_scheme']})")
        line = "  ".join(parts)
    return line


# train's parameters that a run of many trainings (-v, -C) cannot pass on to each: a start,
# another place to train, or one file for the state of every fold
_RUN_OPTIONS = ("init_sol", "warm_start", "memory", "client", "checkpoint", "resume")


def refuse_run_options(params: dict, run: str) -> None:
    """Refuse, in one line, ``train``'s parameters that ``run`` (a cross-validation, the C
    search) cannot give each of its trainings (they reached every fold's ``train``: a
    TypeError, an error about options the caller never gave, or one checkpoint file that
    every fold overwrote)."""
    given = [name for name in _RUN_OPTIONS if params.get(name) is not None]
    if given:
        raise InvalidInputError(f"{run} does not take {', '.join(given)}: it trains in memory "
                                "(no memory, client), from starts of its own (no init_sol, "
                                "warm_start), and keeps no checkpoint")


def cross_validation(
    X, y, n_folds: int, seed: int = 1, n_jobs: int | None = None,
    on_fold: Callable[[int, Model | None], object] | None = None, **params,
) -> np.ndarray:  # fmt: skip
    """Predicted label (or value) of each row by a model trained on the other folds (``-v``).

    X, y as for ``train``: rows and labels, or the path of a LIBSVM file and y None.
    ``params`` go to ``train`` (but for ``init_sol``, ``warm_start``, ``memory``, ``client``,
    ``checkpoint`` and ``resume``, refused). ``n_jobs``: with more than one thread the folds
    are trained side by side, each on one thread (never more busy threads than ``n_jobs``; on
    a GPU, in turn); with one, folds are trained in turn and ``n_jobs`` goes to each ``train``
    (one-vs-rest threads). Every fold has the same seed, so the predictions do not depend on
    ``n_jobs``. Ctrl-C ends the whole cross-validation (KeyboardInterrupt), not one of its
    folds. ``progress`` (as ``train``'s): the folds done and the solvers' lines, each naming
    its fold. ``on_fold(f, model)`` is called with each fold's number and model once it is
    trained (on the fold's thread; None for a fold of one class, which trains no model).
    """
    refuse_run_options(params, "cross_validation")
    seed = check_seed(seed)
    X, y = read_if_path(X, y)
    X = as_csr(X, n_jobs=n_jobs, trainable=True)
    X, params = map_once(X, params.get("solver", 1), params, n_jobs)
    n_rows = X.shape[0]
    kind = solvers.get_solver(params.get("solver", 1)).kind
    # (the one-class SVM ignores y, as train does: it may be None)
    y = np.ones(n_rows) if y is None and kind == solvers.ONECLASS else check_labels(y, n_rows)
    if kind == solvers.REGRESSION:
        check_regression_targets(y)
    sw = check_sample_weight(params.pop("sample_weight", None), n_rows)
    folds = cv_folds(n_rows, n_folds, seed)
    n_threads = min(effective_n_jobs(n_jobs), len(folds))
    if params.get("device") == "cuda":  # (one GPU: its folds in turn, as its sub-problems)
        n_threads = 1
    classifier = kind == solvers.CLASSIFICATION
    # (a regression's predictions are real numbers whatever y's type; one-class's are +-1)
    predicted = np.empty(n_rows, dtype=y.dtype if classifier else np.float64)
    timer = params.pop("progress", False)
    if timer and not params.get("verbose"):
        timer = timer if isinstance(timer, ProgressTimer) else ProgressTimer()
    else:
        timer = None
    folds_done = []  # (list.append is atomic: folds may end side by side)
    with stop_on_signals() as stop, silenced(ConvergenceWarning, TrainingInterrupted):
        hook = chain_hooks(params.pop("hook", None), stop.hook)

        def fold(f: int) -> None:
            if stop.requested:  # (a fold still queued when Ctrl-C came never starts)
                raise RunInterrupted(stop.signal)
            fit, test = folds[f]  # built now: one fold's rows per busy thread at a time
            if classifier:
                fit = weighted_fit_rows(fit, y, sw)
            single = single_class(y[fit]) if classifier else None
            if single is not None:  # (LIBLINEAR's model of one class predicts it)
                predicted[test] = single
                if on_fold is not None:
                    on_fold(f, None)
                folds_done.append(f)
                return
            model = train(
                X[fit], y[fit], sample_weight=None if sw is None else sw[fit], seed=seed,
                n_jobs=1 if n_threads > 1 else n_jobs, hook=hook,
                progress=timer.labelled(f"fold {f + 1} of {len(folds)}") if timer else False,
                **params,
            )  # fmt: skip
            # A stop request ends the whole cross-validation, also one that train's own
            # handler took as the fold's solve was finishing anyway (not interrupted then)
            if model.interrupted or model.stop_signal is not None:
                raise RunInterrupted(model.stop_signal or stop.signal)
            predicted[test] = model.predict(X[test], n_jobs=1 if n_threads > 1 else -1)
            if on_fold is not None:
                on_fold(f, model)
            folds_done.append(f)
            if timer is not None:
                timer.tick(lambda: f"cross-validation: {len(folds_done)} of {len(folds)} folds "
                                   "done")

        if n_threads == 1:
            for f in range(len(folds)):
                fold(f)
        else:
            pool = ThreadPoolExecutor(max_workers=n_threads)
            try:
                futures = [submit(pool, fold, f) for f in range(len(folds))]
                while futures_wait(futures, timeout=SIGNAL_POLL_SECONDS).not_done:
                    pass
                for future in futures:
                    future.result()
            finally:  # (a second Ctrl-C: the queued folds are dropped, not waited for)
                pool.shutdown(cancel_futures=True)
    if stop.requested:
        raise RunInterrupted(stop.signal)
    return predicted


__all__ = ["ConvergenceWarning", "TrainingInterrupted", "cross_validation", "train"]
