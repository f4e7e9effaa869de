"""Scores of predictions as LIBLINEAR reports them: accuracy, mean squared error and squared
correlation coefficient (its ``predict``, its ``-v``, and its Python interface's
``evaluations``).

The regression scores are taken from sums over the rows in row order, as LIBLINEAR's C code
takes them, so that they print LIBLINEAR's digits (the squared correlation's numerator
cancels: another order of additions changes its last digits).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .errors import InvalidInputError


@njit(cache=True)
def _add_regression_sums(predicted, target, sums) -> None:
    """Add to ``sums`` (6,) the sums of (v - t)^2, v, t, v t, v^2 and t^2 over the rows, in
    one pass in row order, as LIBLINEAR's predict and cross-validation take them: the squared
    correlation n vt - v t cancels, so only the same order of additions prints LIBLINEAR's
    digits, whatever pieces the rows come in (targets near the float64 limit overflow the
    sums to inf, as LIBLINEAR's do: the scores then print inf or nan)."""
    for i in range(predicted.shape[0]):
        v = predicted[i]
        t = target[i]
        sums[0] += (v - t) * (v - t)
        sums[1] += v
        sums[2] += t
        sums[3] += v * t
        sums[4] += v * v
        sums[5] += t * t


def _scores_from_sums(n: int, sums: np.ndarray) -> tuple[float, float]:
    """(mean squared error, squared correlation coefficient) from ``_add_regression_sums``."""
    sq, v, t, vt, vv, tt = (float(s) for s in sums)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num = np.float64(n * vt - v * t) * (n * vt - v * t)
        den = np.float64(n * vv - v * v) * (n * tt - t * t)
        return float(np.float64(sq) / n), float(num / den)


def regression_scores(predicted: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(mean squared error, squared correlation coefficient) as LIBLINEAR's predict reports."""
    n = y.shape[0]
    if n == 0:
        return 0.0, float("nan")
    sums = np.zeros(6)
    _add_regression_sums(predicted.astype(np.float64), y.astype(np.float64), sums)
    return _scores_from_sums(n, sums)


def evaluations(y_true, y_pred) -> tuple[float, float, float]:
    """(accuracy in percent, mean squared error, squared correlation coefficient) of the
    predictions ``y_pred`` (n,) of the targets ``y_true`` (n,): LIBLINEAR's Python
    ``evaluations(ty, pv)``, the scores its ``predict`` prints (accuracy for classifiers, the
    other two for regression). The correlation is NaN where either side is constant."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_true.ndim != 1 or y_true.shape != y_pred.shape:
        raise InvalidInputError(f"y_true and y_pred must be 1-D of one length, got shapes "
                                f"{y_true.shape} and {y_pred.shape}")  # fmt: skip
    if y_true.shape[0] == 0:
        raise InvalidInputError("no predictions to score")
    accuracy = 100.0 * float(np.mean(y_true == y_pred))
    mse, scc = regression_scores(y_pred, y_true)
    return accuracy, mse, scc


__all__ = ["evaluations", "regression_scores"]
