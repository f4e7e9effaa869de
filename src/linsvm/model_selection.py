"""LIBLINEAR's parameter search (``train -C``): cross-validation along a warm-started C path.

For the primal solvers (-s 0, -s 2, -s 11), C runs over powers of two from a start small
enough that every model is nearly w = 0, up to 1024 (2**20 for -s 11); each fold's solve starts
from that fold's solution at the previous C, so the whole path costs little more than one solve
at the largest C. The search stops early once w has stopped changing for five successive C
(larger C would change nothing), as LIBLINEAR 2.50's ``find_parameter_C``. For -s 11 the search
also runs over p = i max|y| / 20, i = 19 ... 0, and scores by cross-validated mean squared error.

With ``n_jobs`` the folds of each C are trained side by side, one thread each; each fold
keeps its own warm-start chain and the scores are taken in fold order, so the path and the
best C are those of the serial search.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, field

import numpy as np

from .data import UsedColumns, as_csr, check_labels, check_sample_weight
from .errors import InvalidInputError
from .interrupts import RunInterrupted, StopRequest, stop_on_signals
from .parallel import effective_n_jobs
from .problems import silenced, single_class, submit, weighted_fit_rows
from .solvers import REGRESSION, SOLVERS, get_solver, list_where
from .solvers._base import chain_hooks
from .solvers._columns import check_seed
from .solvers.svr import check_p
from .training import (
    SIGNAL_POLL_SECONDS,
    ConvergenceWarning,
    TrainingInterrupted,
    check_regression_targets,
    cv_folds,
    map_once,
    read_if_path,
    refuse_run_options,
    train,
)

MAX_C = 1024.0
MAX_C_REGRESSION = 1048576.0
P_STEPS = 20
_UNCHANGED_LIMIT = 5  # stop after w stayed the same for this many successive C


@dataclass
class ParameterSearch:
    """The outcome of a search: the best C (and p), its CV score, and the path walked."""

    best_C: float
    best_rate: float  # classification: CV accuracy in [0, 1]; regression: CV mean squared error
    path: list[tuple[float, float]] = field(default_factory=list)  # (C, score)
    reached_max_C: bool = False
    best_p: float = -1.0  # regression: the p of best_C; classification: -1


def start_C(X, solver: int, bias: float, y=None, p: float = 0.0) -> float:
    """LIBLINEAR's calc_start_C: the power of two below a C for which w is nearly 0.

    -s 0: 1/(l max x'x); -s 2: 1/(2 l max x'x); -s 11: 0.01 sum_i max(|y_i| - p, 0)^2 /
    (8 (sum_i |y_i|)^2 max x'x); infinite when every row is zero (then the search, as
    LIBLINEAR's, starts and ends at its largest C) or no target lies outside the tube.
    """
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    max_xx = float(sq.max()) + (bias * bias if bias >= 0 else 0.0) if sq.size else 0.0
    if max_xx <= 0:
        return math.inf
    n_rows = X.shape[0]
    search = SOLVERS[solver].c_search
    if search == "svr":
        y_abs = np.abs(np.asarray(y, dtype=np.float64))
        loss = float(np.sum(np.maximum(y_abs - p, 0.0) ** 2))
        if loss <= 0:
            return math.inf
        scale = 8 * np.float64(y_abs.sum()) ** 2 * max_xx  # (float64: inf past 1e154)
        if not np.isfinite(scale):
            raise InvalidInputError("the C search's start overflows: the targets' (sum |y_i|)^2 "
                                    "is past the float range; scale the targets down")
        min_C = 0.1 * 0.1 * loss / scale
        if min_C <= 0:  # (underflow: nothing to search from)
            raise InvalidInputError("the C search's start underflows: scale the targets or the "
                                    "features")
    else:
        min_C = 1.0 / (n_rows * max_xx) if search == "logistic" else 1.0 / (2 * n_rows * max_xx)
    if not math.isfinite(min_C):  # (subnormal x'x: LIBLINEAR's start is its largest C too)
        return math.inf
    return 2.0 ** math.floor(math.log2(min_C))


def _stacked_weights(model) -> np.ndarray:
    """The model's weights as LIBLINEAR's init_sol wants them: (n_w, n [+1]), bias last."""
    if model.bias >= 0:
        return np.hstack([model.coef_, model.bias_weights_[:, None]])
    return model.coef_.copy()


def find_parameter_C(
    X,
    y,
    solver: int = 2,
    n_folds: int = 5,
    initial_C: float | None = None,
    seed: int = 1,
    verbose: bool = True,
    n_jobs: int | None = None,
    **params,
) -> ParameterSearch:
    """Cross-validated score along a warm-started path of growing C (``train -C``).

    X, y as for ``train`` (rows and labels, or a LIBSVM file's path and y None); solver 0, 2
    (accuracy) or 11 (mean squared error, for the ``p`` in ``params``); ``n_folds`` folds
    (``-v``), shuffled by ``seed`` as ``cross_validation``'s, the same folds for every C;
    ``initial_C`` (``-c`` with ``-C``) replaces the computed start; ``params`` go to ``train``
    (bias, eps, class_weight, p, hook, ...; not init_sol, warm_start, memory, client,
    checkpoint, resume: refused). Prints one
    line per C when ``verbose``. The solves' ConvergenceWarnings are silenced, as LIBLINEAR
    prints none in its search. ``n_jobs``: with more than one thread the folds of each C are
    trained side by side, each on one thread (never more busy threads than ``n_jobs``); with
    one, in turn, and ``n_jobs`` goes to each ``train``. The path and best C do not depend on
    ``n_jobs``. Ctrl-C ends the whole search (KeyboardInterrupt), not one of its solves.
    """
    spec = get_solver(solver)
    if not spec.c_search:
        raise InvalidInputError(
            "warm-start parameter search only available for "
            + list_where(lambda spec: bool(spec.c_search), flags=True)
        )
    if "C" in params:
        raise InvalidInputError("the search walks C: give its start as initial_C, not C")
    refuse_run_options(params, "the C search")
    solver = spec.number
    seed = check_seed(seed)
    X, y = read_if_path(X, y)
    X = as_csr(X, n_jobs=n_jobs, trainable=True)
    X, params = map_once(X, solver, params, n_jobs)  # C's start is computed on phi(X)
    # The folds' weights are kept from one C to the next: over the used columns only (a
    # hashed map's 2^31 columns made them 16 GB a fold), as train's solvers see them
    used = UsedColumns.of(X) if "feature_map" not in params else None
    if used is not None:
        X = used.take(X)
    n_rows = X.shape[0]
    y = check_labels(y, n_rows)
    regression = spec.kind == REGRESSION
    if regression:
        check_regression_targets(y)
    splits = cv_folds(n_rows, n_folds, seed)
    bias = float(params.get("bias", -1.0))
    max_C = MAX_C_REGRESSION if regression else MAX_C
    p = float(params.get("p", 0.1))
    if initial_C and initial_C > 0:
        C = min(initial_C, max_C)
    else:
        C = min(start_C(X, solver, bias, y, p), max_C)

    # per-row weights (-W) go with their rows into each fold's training part
    row_weights = check_sample_weight(params.pop("sample_weight", None), n_rows)
    n_threads = min(effective_n_jobs(n_jobs), len(splits))
    # as LIBLINEAR's -C: the path's solves at large C often hit the iteration cap, and the
    # search only compares their CV scores
    with stop_on_signals() as stop, silenced(ConvergenceWarning, TrainingInterrupted):
        hook = chain_hooks(params.pop("hook", None), stop.hook)
        pool = ThreadPoolExecutor(max_workers=n_threads) if n_threads > 1 else None
        try:
            search = _walk_C(
                X, y, row_weights, splits, solver, C, max_C, regression, seed, n_threads, n_jobs,
                hook, stop, pool, verbose, p, params,
            )  # fmt: skip
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
    if stop.requested:
        raise RunInterrupted(stop.signal)
    return search


def _walk_C(
    X, y, row_weights, splits, solver, C, max_C, regression, seed, n_threads, n_jobs, hook,
    stop: StopRequest, pool, verbose, p, params,
) -> ParameterSearch:  # fmt: skip
    """``find_parameter_C``'s loop over C, the folds of each C in turn or in ``pool``."""
    n_folds = len(splits)
    search = ParameterSearch(best_C=C, best_rate=math.inf if regression else 0.0,
                             best_p=p if regression else -1.0)  # fmt: skip
    previous: list[np.ndarray | None] = [None] * n_folds
    trained = [False] * n_folds  # (whether a fold has weights of an earlier C to compare)
    unchanged = 0
    predicted = np.empty(y.shape[0], dtype=np.float64 if regression else y.dtype)

    def fold(f: int, C: float) -> np.ndarray | None:
        if stop.requested:  # (a fold still queued when Ctrl-C came never starts)
            raise RunInterrupted(stop.signal)
        # a fold's rows are gathered when it trains (LIBLINEAR points at them): every fold's
        # copy held through the walk would be (folds - 1) times X
        fit, test = splits[f]
        if not regression:
            fit = weighted_fit_rows(fit, y, row_weights)
        single = None if regression else single_class(y[fit])
        if single is not None:  # (as cross_validation: LIBLINEAR's one-class model)
            predicted[test] = single
            return None
        model = train(
            X[fit], y[fit], solver=solver, C=C, init_sol=previous[f], seed=seed, hook=hook,
            n_jobs=1 if n_threads > 1 else n_jobs,
            sample_weight=None if row_weights is None else row_weights[fit], **params,
        )  # fmt: skip
        # A stop request ends the whole search, not one of its solves; train's own signal
        # handler (serial search) may have taken it when its solve was finishing anyway.
        if model.interrupted or model.stop_signal is not None:
            raise RunInterrupted(model.stop_signal or stop.signal)
        predicted[test] = model.predict(X[test], n_jobs=1 if n_threads > 1 else -1)
        return _stacked_weights(model)

    while C <= max_C:
        if pool is None:
            weights = [fold(f, C) for f in range(n_folds)]
        else:
            futures = [submit(pool, fold, f, C) for f in range(n_folds)]
            # Wake up now and then: a signal is handled only when the main thread runs Python.
            while futures_wait(futures, timeout=SIGNAL_POLL_SECONDS).not_done:
                pass
            weights = [future.result() for future in futures]
        for f, w in enumerate(weights):  # in fold order, as the serial search
            # (a fold of one class: LIBLINEAR trains its one vector, all rows +1, whose w
            # moves with C: the walk goes on to the largest C, as LIBLINEAR's does)
            if trained[f] and unchanged >= 0:
                if w is None or np.linalg.norm(w - previous[f]) > 1e-15:
                    unchanged = -1
            previous[f], trained[f] = w, True
        if regression:
            score = float(np.mean((predicted - y) ** 2))
            better = score < search.best_rate
        else:
            score = float(np.mean(predicted == y))
            better = score > search.best_rate
        search.path.append((C, score))
        if better:
            search.best_C, search.best_rate = C, score
        if verbose and regression:
            print(f"log2c={math.log2(C):7.2f}\tp={p:7.2f}\tMean squared error={score:g}")
        elif verbose:
            print(f"log2c={math.log2(C):7.2f}\trate={100.0 * score:g}")
        unchanged += 1
        if unchanged == _UNCHANGED_LIMIT:
            break
        C *= 2.0
    if C > max_C:
        search.reached_max_C = True
        if verbose:
            print("WARNING: maximum C reached.")
    return search


def find_parameters(
    X,
    y,
    solver: int = 2,
    n_folds: int = 5,
    initial_C: float | None = None,
    initial_p: float | None = None,
    seed: int = 1,
    verbose: bool = True,
    n_jobs: int | None = None,
    **params,
) -> ParameterSearch:
    """``train -C``: the C search for -s 0 / -s 2; for -s 11 a C search for each p on a grid.

    For -s 11, p runs over i max|y| / 20 for i = 19 down to 0 (from ``initial_p`` down when
    given, LIBLINEAR's ``-p`` with ``-C``); the (C, p) of lowest CV mean squared error wins.
    ``n_jobs`` as for ``find_parameter_C`` (the folds of each C side by side).
    """
    params["n_jobs"] = n_jobs
    spec = get_solver(solver)
    if spec.kind == REGRESSION and spec.c_search != "svr":  # (as find_parameter_C refuses)
        raise InvalidInputError(
            "warm-start parameter search only available for "
            + list_where(lambda spec: bool(spec.c_search), flags=True)
        )
    if spec.kind != REGRESSION:
        return find_parameter_C(X, y, solver, n_folds, initial_C, seed, verbose, **params)
    if "p" in params:
        raise InvalidInputError("the search walks p: give its start as initial_p, not p")
    seed = check_seed(seed)
    X, y = read_if_path(X, y)  # (read once, not once a p)
    if initial_p is not None:
        initial_p = check_p(initial_p)
    y = check_labels(y, np.shape(y)[0] if np.ndim(y) else 0)  # (X's rows: checked later)
    check_regression_targets(y)
    if 2 <= len(y) < n_folds:  # (LIBLINEAR's leave-one-out warning once, not once a p)
        n_folds = len(cv_folds(len(y), n_folds, seed))
    y_abs_max = float(np.max(np.abs(y.astype(np.float64)))) if len(y) else 0.0
    top = P_STEPS - 1
    step = y_abs_max / P_STEPS  # (0 where the targets are subnormal: every p from the top)
    if initial_p is not None and initial_p > 0 and step > 0 and initial_p / step < top:
        top = int(initial_p / step)
    best = ParameterSearch(best_C=math.nan, best_rate=math.inf)
    for i in range(top, -1, -1):
        params["p"] = i * y_abs_max / P_STEPS
        search = find_parameter_C(X, y, 11, n_folds, initial_C, seed, verbose, **params)
        if search.best_rate < best.best_rate:
            best = search
            best.best_p = params["p"]
    return best
