"""LIBLINEAR's parameter search (``train -C``): cross-validation along a warm-started C path.

For the primal solvers (-s 0, -s 2), C runs over powers of two from a start small enough that
every model is nearly w = 0, up to 1024; each fold's solve starts from that fold's solution at
the previous C, so the whole path costs little more than one solve at the largest C. The
search stops early once w has stopped changing for five successive C (the data is then
separable enough that larger C change nothing), as LIBLINEAR 2.50's ``find_parameter_C``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

from .data import as_csr, check_labels
from .errors import InvalidInputError
from .training import train

MAX_C = 1024.0
_UNCHANGED_LIMIT = 5  # stop after w stayed the same for this many successive C


@dataclass
class ParameterSearch:
    """The outcome of a C search: the best C, its CV accuracy, and the path walked."""

    best_C: float
    best_rate: float  # cross-validation accuracy in [0, 1]
    path: list[tuple[float, float]] = field(default_factory=list)  # (C, CV accuracy)
    reached_max_C: bool = False


def start_C(X, solver: int, bias: float) -> float:
    """LIBLINEAR's calc_start_C: the power of two below 1/(l max x'x) (-s 2: 1/(2 l max x'x))."""
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    max_xx = float(sq.max()) + (bias * bias if bias >= 0 else 0.0) if sq.size else 0.0
    if max_xx <= 0:
        return 1.0
    n_rows = X.shape[0]
    min_C = 1.0 / (n_rows * max_xx) if solver == 0 else 1.0 / (2 * n_rows * max_xx)
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
    **params,
) -> ParameterSearch:
    """Cross-validation accuracy along a warm-started path of growing C (``train -C``).

    X, y as for ``train``; solver 0 or 2; ``initial_C`` (``-c`` with ``-C``) replaces the
    computed start; ``params`` go to ``train`` (bias, eps, class_weight, ...). Prints one
    line per C (``log2c= ... rate= ...``) when ``verbose``.
    """
    if solver not in (0, 2):
        raise InvalidInputError("the warm-started parameter search is for -s 0 and -s 2")
    X = as_csr(X)
    n_rows = X.shape[0]
    y = check_labels(y, n_rows)
    if n_rows == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    if n_folds < 2:
        raise InvalidInputError(f"n-fold cross validation: n must be >= 2, got {n_folds}")
    if n_folds > n_rows:
        print(
            "WARNING: # folds > # data. Will use # folds = # data instead "
            "(i.e., leave-one-out cross validation)",
            file=sys.stderr,
        )
        n_folds = n_rows
    bias = float(params.get("bias", -1.0))
    C = min(initial_C if initial_C and initial_C > 0 else start_C(X, solver, bias), MAX_C)

    perm = np.random.default_rng(seed).permutation(n_rows)
    bounds = [f * n_rows // n_folds for f in range(n_folds + 1)]
    folds = []
    for f in range(n_folds):
        test = perm[bounds[f] : bounds[f + 1]]
        fit = np.concatenate([perm[: bounds[f]], perm[bounds[f + 1] :]])
        folds.append((X[fit], y[fit], X[test], test))

    search = ParameterSearch(best_C=C, best_rate=0.0)
    previous: list[np.ndarray | None] = [None] * n_folds
    unchanged = 0
    predicted = np.empty(n_rows, dtype=y.dtype)
    while C <= MAX_C:
        for f, (X_fit, y_fit, X_test, test) in enumerate(folds):
            model = train(
                X_fit, y_fit, solver=solver, C=C, init_sol=previous[f], seed=seed, **params
            )
            w = _stacked_weights(model)
            if previous[f] is not None and unchanged >= 0:
                if np.linalg.norm(w - previous[f]) > 1e-15:
                    unchanged = -1
            previous[f] = w
            predicted[test] = model.predict(X_test)
        rate = float(np.mean(predicted == y))
        search.path.append((C, rate))
        if rate > search.best_rate:
            search.best_C, search.best_rate = C, rate
        if verbose:
            print(f"log2c={math.log2(C):7.2f}\trate={100.0 * rate:g}")
        unchanged += 1
        if unchanged == _UNCHANGED_LIMIT:
            break
        C *= 2.0
    if C > MAX_C:
        search.reached_max_C = True
        if verbose:
            print("WARNING: maximum C reached.")
    return search
