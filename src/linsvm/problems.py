"""What every place that trains shares about the problem, below the places themselves
(``training``, ``outofcore``, ``distributed``): the classes' costs, the one-vs-rest targets and
costs of each binary sub-problem, LIBLINEAR's cross-validation folds, and the warnings a run
gives.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np
from numba import njit

from .errors import InvalidInputError


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap (or otherwise short) before meeting its tolerance."""


class TrainingInterrupted(UserWarning):
    """Training was stopped by a signal (Ctrl-C, SIGTERM) or a hook: the model holds the
    current iterate of each sub-problem, not converged."""


def class_costs(labels: np.ndarray, C: float, class_weight: Mapping | None) -> np.ndarray:
    """C * weight per class, in ``labels`` order (LIBLINEAR's ``weighted_C``)."""
    weighted = np.full(labels.shape[0], float(C))
    for label, weight in (class_weight or {}).items():
        weight = float(weight)
        if not (np.isfinite(weight) and weight >= 0):
            raise InvalidInputError(f"class weight for {label!r} must be >= 0, got {weight}")
        hits = np.flatnonzero(labels == label)
        if hits.size == 0:
            print(f"WARNING: class label {label} specified in weight is not found", file=sys.stderr)
            continue
        weighted[hits[0]] *= weight
    return weighted


def one_vs_rest(
    class_index: np.ndarray, k: int, weighted_C: np.ndarray, C: float, sw: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """(+1/-1 targets, per-row costs) of class k against the rest, as LIBLINEAR: for two
    classes (k = 0 only) C_p = weighted_C[0] and C_n = weighted_C[1]; for more, class k's rows
    cost weighted_C[k] and the rest plain C; sample weights ``sw`` multiply the costs."""
    if weighted_C.shape[0] == 2:
        cost_in, cost_out = weighted_C[0], weighted_C[1]
    else:
        cost_in, cost_out = weighted_C[k], C
    y_sign = np.empty(class_index.shape[0])
    cost = np.empty(class_index.shape[0])
    _fill_one_vs_rest(class_index, k, float(cost_in), float(cost_out), sw, y_sign, cost)
    return y_sign, cost


@njit(cache=True, nogil=True)
def _fill_one_vs_rest(class_index, k, cost_in, cost_out, sw, y_sign, cost) -> None:
    """``one_vs_rest``'s two arrays in one pass (no temporaries)."""
    for i in range(class_index.shape[0]):
        inside = class_index[i] == k
        y_sign[i] = 1.0 if inside else -1.0
        c = cost_in if inside else cost_out
        cost[i] = c if sw is None else c * sw[i]


class CVFolds(Sequence):
    """LIBLINEAR's cross-validation folds, fold ``f`` being (training rows, held-out rows).

    Rows are shuffled with ``seed`` and cut into ``len(self)`` consecutive parts. Only the
    permutation is kept (8 bytes a row): a fold's index arrays are built when it is asked for,
    so that walking the folds in turn needs memory of one fold, not of folds x rows (with as
    many folds as rows that would be rows squared).
    """

    def __init__(self, n_rows: int, n_folds: int, seed: int) -> None:
        self.permutation = np.random.default_rng(seed).permutation(n_rows)
        self.bounds = [f * n_rows // n_folds for f in range(n_folds + 1)]

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def held_out(self, f: int) -> np.ndarray:
        """The held-out rows of fold ``f`` (a view of the permutation)."""
        return self.permutation[self.bounds[f] : self.bounds[f + 1]]

    def __getitem__(self, f: int) -> tuple[np.ndarray, np.ndarray]:
        if not -len(self) <= f < len(self):
            raise IndexError(f"fold {f} of {len(self)}")
        f %= len(self)
        perm, start, stop = self.permutation, self.bounds[f], self.bounds[f + 1]
        return np.concatenate([perm[:start], perm[stop:]]), perm[start:stop]


def cv_folds(n_rows: int, n_folds: int, seed: int) -> CVFolds:
    """LIBLINEAR's cross-validation folds (``CVFolds``); with more folds than rows it is
    leave-one-out, with LIBLINEAR's warning."""
    if n_folds < 2:
        raise InvalidInputError(f"n-fold cross validation: n must be >= 2, got {n_folds}")
    if n_rows == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    if n_folds > n_rows:
        print(
            "WARNING: # folds > # data. Will use # folds = # data instead "
            "(i.e., leave-one-out cross validation)",
            file=sys.stderr,
        )
        n_folds = n_rows
    return CVFolds(n_rows, n_folds, seed)


__all__ = [
    "CVFolds",
    "ConvergenceWarning",
    "TrainingInterrupted",
    "class_costs",
    "cv_folds",
    "one_vs_rest",
]
