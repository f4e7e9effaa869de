"""What every place that trains shares about the problem, below the places themselves
(``training``, ``runner``, ``outofcore``, ``distributed``): the classes and their costs, the
one-vs-rest targets and costs of each binary sub-problem (whole, or a block of rows at a time
from the class index: ``RowTargets``), LIBLINEAR's cross-validation folds, and the warnings a
run gives.
"""

from __future__ import annotations

import contextvars
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from types import FrameType

import numpy as np
from numba import njit

from .data import group_labels, is_integer
from .errors import InvalidInputError
from .objective import LOSS_LOGISTIC, lr_dual_alpha_terms, svm_dual_alpha_terms
from .solvers._base import CONVERGED, Solution
from .solvers._random import numpy_generator
from .sparse_rows import sq_norm


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap (or otherwise short) before meeting its tolerance."""


class LiblinearNotice(UserWarning):
    """What LIBLINEAR's train says on stderr and goes on (a class weight for an absent label,
    more folds than rows): the command line shows it even with -q, as LIBLINEAR does."""


class TrainingInterrupted(UserWarning):
    """Training was stopped by a signal (Ctrl-C, SIGTERM) or a hook: the model holds the
    current iterate of each sub-problem, not converged."""


# The categories of linsvm's own warnings that a caller has silenced, for what it calls
# (``silenced``). Not warnings.catch_warnings: that sets the process's filters, and two callers
# on two threads (an estimator's fits in a threaded grid search) restored each other's and
# left every later warning of the program silenced.
_SILENCED: contextvars.ContextVar[tuple[type[Warning], ...]] = contextvars.ContextVar(
    "linsvm_silenced_warnings", default=()
)


@contextmanager
def silenced(*categories: type[Warning]) -> Iterator[None]:
    """Within the block, linsvm's warnings of ``categories`` are not issued: on this thread,
    and on the threads linsvm gives its work to from it (``submit``)."""
    token = _SILENCED.set(_SILENCED.get() + categories)
    try:
        yield
    finally:
        _SILENCED.reset(token)


# linsvm's own source folder: its warnings point at the first frame outside it
_PACKAGE_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep


# The user's frame that handed work to linsvm's threads (``submit``): a worker thread's own
# stack ends in the thread machinery, not in the user's code.
_CALLER: contextvars.ContextVar[FrameType | None] = contextvars.ContextVar(
    "linsvm_caller", default=None
)


def _first_frame_outside(frame: FrameType | None) -> tuple[FrameType | None, int]:
    """(the first frame from ``frame`` up that is not linsvm's, frames passed + 1)."""
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_FOLDER):
        level, frame = level + 1, frame.f_back
    return frame, level


def warn(message: str, category: type[Warning], stacklevel: int = 2) -> None:
    """``warnings.warn`` unless ``category`` is silenced, shown at the line of the user's code
    that called into linsvm (the first frame outside the package; on linsvm's worker threads,
    the one that handed them the work); ``stacklevel``, counted from the caller as there,
    where there is neither."""
    if issubclass(category, _SILENCED.get()):
        return
    caller = _CALLER.get()
    if caller is not None:
        # (as warnings.warn does for a frame: its module's name and registry; not its
        # globals, whose loader warn_explicit would ask for the source line: code run by
        # `python -c` or from stdin has none, and that raised ImportError)
        module_globals = caller.f_globals
        warnings.warn_explicit(message, category, caller.f_code.co_filename, caller.f_lineno,
                               module=module_globals.get("__name__", "<string>"),
                               registry=module_globals.setdefault("__warningregistry__", {}))
        return
    frame, level = _first_frame_outside(sys._getframe(1))
    warnings.warn(message, category, stacklevel=level + 1 if frame is not None else stacklevel + 1)


def submit(pool: Executor, fn: Callable, *args) -> Future:
    """``pool.submit(fn, *args)``, run with what this thread has silenced and with its
    user's frame, where linsvm's warnings from that thread are shown."""
    context = contextvars.copy_context()
    if _CALLER.get() is None:
        frame, _ = _first_frame_outside(sys._getframe(1))
        context.run(_CALLER.set, frame)
    return pool.submit(context.run, fn, *args)


def warn_interrupted(why: str = "", iterate: str = "the current iterate",
                     stacklevel: int = 3) -> None:  # fmt: skip
    """The warning of a run stopped early (``why``: " by SIGINT", " by the hook", or "")."""
    warn(
        f"training interrupted{why}: the model holds {iterate}, not converged",
        TrainingInterrupted,
        stacklevel=stacklevel,
    )


def partition_solutions(W: np.ndarray, primal, dual, n_iter: int, reason: str, solver: int,
                        alpha: np.ndarray | None = None, figures: dict | None = None
                        ) -> list[Solution]:  # fmt: skip
    """The Solution of each sub-problem of a run on partitions (blocks, workers): row c of
    W (n_weight_vectors, n_weights) with its P and D (``primal``, ``dual``: one a row) and
    the rows' alpha (None where it stays with the partitions), over views of W and alpha
    (no copy: a run in blocks counts its memory)."""
    return [
        Solution(
            w=W[c], n_iter=n_iter, converged=reason == CONVERGED, stop_reason=reason,
            primal=float(primal[c]), dual=float(dual[c]), gap=float(primal[c] - dual[c]),
            alpha=None if alpha is None else alpha[c], solver=solver,
            figures=dict(figures or {}),
        )
        for c in range(W.shape[0])
    ]  # fmt: skip


def warn_at_cap(cap: int, label: str, where: str = "", advice: str = "",
                stacklevel: int = 3) -> None:  # fmt: skip
    """The warning of a solver stopped by its iteration cap before its tolerance."""
    warn(
        f"reaching max number of iterations ({cap}) of {label}{where}"
        + (f"; {advice}" if advice else ""),
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


def show_label(label) -> str:
    """A label as the user wrote it: 1, not np.int64(1)."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def check_classes(labels: np.ndarray) -> None:
    """Refuse training data of fewer than two classes (``labels``: the classes found)."""
    if labels.shape[0] < 2:
        raise InvalidInputError(
            f"training data has only one class ({show_label(labels[0])}); at least two are "
            "needed"
        )


def single_class(y: np.ndarray):
    """The one class of ``y`` when it holds exactly one, else None: a cross-validation fold's
    training rows on small or sorted data, where LIBLINEAR trains a model of that class, which
    predicts it for every row."""
    if y.shape[0] == 0:
        return None
    first = y[0]
    return first if bool(np.all(y == first)) else None


def classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels in LIBLINEAR's order, class index per row) of classification targets, at
    least two classes."""
    labels, class_index = group_labels(y)
    check_classes(labels)
    return labels, class_index


def n_weight_vectors(n_classes: int) -> int:
    """One-vs-rest's weight vectors: one for two classes, one a class for more."""
    return 1 if n_classes == 2 else n_classes


def class_costs(labels: np.ndarray, C: float, class_weight: Mapping | None) -> np.ndarray:
    """C * weight per class, in ``labels`` order (LIBLINEAR's ``weighted_C``)."""
    if class_weight is not None and not isinstance(class_weight, Mapping):
        raise InvalidInputError(f"class_weight must be a mapping label -> weight (the "
                                f"estimators take 'balanced'), got {class_weight!r}")
    weighted = np.full(labels.shape[0], float(C))
    for label, weight in (class_weight or {}).items():
        if np.ndim(label) != 0:
            # (a tuple was broadcast against the labels: (1, 7) weighted class 1)
            raise InvalidInputError(f"class_weight keys must be labels, got {label!r}")
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise InvalidInputError(f"class weight for {show_label(label)} must be a number, "
                                    f"got {weight!r}") from None  # fmt: skip
        check_class_weight(label, weight)
        hits = np.flatnonzero(labels == label)
        if hits.size == 0:
            # (LIBLINEAR's words; the command line shows linsvm's warnings as "WARNING: ...")
            warn(f"class label {label} specified in weight is not found", LiblinearNotice)
            continue
        weighted[hits[0]] *= weight
    # (a solver would return NaN or refuse it in its own words)
    for k in np.flatnonzero(~np.isfinite(weighted)):
        raise InvalidInputError(f"C ({C:g}) times the class weight of {show_label(labels[k])} "
                                "overflows: lower C or the weight")  # fmt: skip
    return weighted


def check_class_weight(label, weight: float, hint: str = "") -> None:
    """Refuse a class weight that is negative or not finite, naming the class (``hint``: what
    made it so, where the caller knows)."""
    if not (np.isfinite(weight) and weight >= 0):
        raise InvalidInputError(f"class weight for {show_label(label)} must be finite and >= 0, "
                                f"got {weight}{hint}")  # fmt: skip


def check_weighted_classes(labels: np.ndarray, class_index: np.ndarray,
                           sw: np.ndarray | None) -> None:  # fmt: skip
    """Refuse a class whose every row has sample weight 0 (it would stay in the model, never
    predicted, and still shape a Crammer-Singer solution; LIBLINEAR's instance-weight variant
    drops zero-weight rows before it counts the classes). ``labels`` name the classes in
    messages: the estimators pass their users' labels, ``train`` its own."""
    if sw is None:
        return
    totals = np.bincount(class_index, weights=sw, minlength=labels.shape[0])
    for k in np.flatnonzero(totals == 0):
        raise InvalidInputError(f"every row of class {show_label(labels[k])} has sample weight 0: "
                                "remove its rows (a class without weight cannot be trained)")


def check_row_costs(labels: np.ndarray, class_index: np.ndarray, weighted_C: np.ndarray,
                    C: float, sw: np.ndarray | None) -> None:
    """Refuse, in one line, what no solver can train with sample weights ``sw``: a class
    without weight (``check_weighted_classes``) and a per-row cost (C times the class weight,
    ``weighted_C``, times sw) that overflows."""
    if sw is None:
        return
    check_weighted_classes(labels, class_index, sw)
    # (every per-row cost is its class's, or plain C for the rest of one-vs-rest, times sw:
    # formed only when the largest overflows)
    largest = max(float(weighted_C.max()), float(C))
    if not np.isfinite(largest * float(sw.max(initial=0.0))):
        refuse_infinite_costs(np.maximum(weighted_C[class_index], C) * sw, C, sw)


def refuse_infinite_costs(cost: np.ndarray, C: float, sw: np.ndarray) -> None:
    """Refuse per-row costs ``cost`` (C times the row's weights ``sw``) that overflow, naming
    the first such row."""
    infinite = ~np.isfinite(cost)
    if infinite.any():
        row = int(np.argmax(infinite))
        raise InvalidInputError(f"the cost of row {row + 1} overflows: C ({C:g}) times its "
                                f"weights ({sw[row]:g}) is not finite; lower C or the weights")


def weighted_fit_rows(fit: np.ndarray, y: np.ndarray, sw: np.ndarray | None) -> np.ndarray:
    """A cross-validation fold's training rows ``fit`` without the rows of the classes that
    have no weight there (every row of theirs at sample weight 0, the weighted ones held out):
    ``check_row_costs`` would refuse the fold, and LIBLINEAR's instance-weight variant drops
    zero-weight rows before it counts the classes. All of them when every class would go."""
    if sw is None:
        return fit
    labels, inverse = np.unique(y[fit], return_inverse=True)
    weightless = np.bincount(inverse, weights=sw[fit], minlength=labels.shape[0]) == 0
    if not weightless.any() or weightless.all():
        return fit
    return fit[~weightless[inverse]]


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


class RowTargets:
    """Every row's one-vs-rest target and cost, made a block of rows at a time from the class
    index (one byte a row up to 255 classes) instead of kept as two float64 arrays a class:
    on 20M rows that is 20 MB, not 320 MB a class, out of a memory budget. Rows ``held_out``
    (a mask; cross-validation) cost 0 and take no part."""

    # rows a time, where a pass over all rows needs their costs: the chunk's temporaries
    # (CHUNK_BYTES) count in a budget
    CHUNK = 1 << 16
    CHUNK_BYTES = CHUNK * (8 + 8 + 8 + 1)

    def __init__(self, class_index, weighted_C, C: float, held_out=None) -> None:
        self.class_index = class_index.astype(np.min_scalar_type(max(len(weighted_C) - 1, 0)))
        self.weighted_C, self.C = weighted_C, C
        self.n_rows = class_index.shape[0]
        self.held_out = None if held_out is None else held_out_mask(held_out, self.n_rows)

    @property
    def nbytes(self) -> int:
        return self.class_index.nbytes + (0 if self.held_out is None else self.held_out.nbytes)

    def rows(self, k: int, rows) -> tuple[np.ndarray, np.ndarray]:
        """(+1/-1 targets, costs) of sub-problem k at ``rows`` (a slice or row numbers)."""
        y, cost = one_vs_rest(self.class_index[rows], k, self.weighted_C, self.C, None)
        if self.held_out is not None:
            cost[self.held_out[rows]] = 0.0
        return y, cost

    def costs(self, k: int) -> tuple[float, float]:
        """Sub-problem k's costs of its class's rows and of the others' (``one_vs_rest``)."""
        if self.weighted_C.shape[0] == 2:
            return float(self.weighted_C[0]), float(self.weighted_C[1])
        return float(self.weighted_C[k]), float(self.C)

    def signs(self, k: int) -> np.ndarray:
        """Sub-problem k's +1/-1 targets over the rows that train (for its tolerance)."""
        y = np.where(self.class_index == k, 1.0, -1.0)
        return y if self.held_out is None else y[~self.held_out]

    def dual_value(self, k: int, w: np.ndarray, alpha: np.ndarray, loss: int) -> float:
        """-f(alpha) of sub-problem k from the maintained w = sum_i y_i alpha_i x_i: no pass
        over the data; the costs made a chunk of rows at a time, summed in row order."""
        f = 0.5 * sq_norm(w)
        c_pos, c_neg = self.costs(k)
        for r0 in range(0, self.n_rows, self.CHUNK):
            part = slice(r0, min(r0 + self.CHUNK, self.n_rows))
            cost = np.where(self.class_index[part] == k, c_pos, c_neg)
            if self.held_out is not None:
                cost[self.held_out[part]] = 0.0
            f = dual_alpha_terms(cost, alpha[part], loss, f)
        return -f


def dual_alpha_terms(cost: np.ndarray, alpha: np.ndarray, loss: int, start: float = 0.0):
    """``start`` plus the dual f(alpha)'s terms of these rows besides 1/2 ||w(alpha)||^2: the
    SVMs' 1/2 D_ii alpha_i^2 - alpha_i, LR's alpha_i log(alpha_i/C_i) + (C_i - alpha_i)
    log((C_i - alpha_i)/C_i)."""
    if loss == LOSS_LOGISTIC:
        return lr_dual_alpha_terms(cost, alpha, np.maximum(cost - alpha, 0.0), start)
    return svm_dual_alpha_terms(cost, alpha, loss, start)


class CVFolds(Sequence):
    """Cross-validation folds as LIBLINEAR cuts them, fold ``f`` being (training rows,
    held-out rows).

    Rows are shuffled with ``seed`` (NumPy's generator: not LIBLINEAR's ``rand()``, so the
    split is not LIBLINEAR's) and cut into ``len(self)`` consecutive parts. Only the
    permutation is kept (8 bytes a row): a fold's index arrays are built when it is asked for,
    so that walking the folds in turn needs memory of one fold, not of folds x rows (with as
    many folds as rows that would be rows squared).
    """

    def __init__(self, n_rows: int, n_folds: int, seed: int) -> None:
        self.permutation = numpy_generator(seed).permutation(n_rows)
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


def held_out_mask(held_out, n_rows: int) -> np.ndarray:
    """``held_out`` as a boolean mask of the ``n_rows`` rows (InvalidInputError if it is
    not one)."""
    mask = np.asarray(held_out, dtype=bool)
    if mask.shape != (n_rows,):
        raise InvalidInputError(f"held_out must be a mask of the {n_rows} rows, got shape "
                                f"{mask.shape}")  # fmt: skip
    return mask


def cv_folds(n_rows: int, n_folds: int, seed: int) -> CVFolds:
    """Cross-validation folds (``CVFolds``); with more folds than rows it is
    leave-one-out, with LIBLINEAR's warning."""
    if not is_integer(n_folds):
        raise InvalidInputError(f"n-fold cross validation: n must be an integer, got {n_folds!r}")
    if n_folds < 2:
        raise InvalidInputError(f"n-fold cross validation: n must be >= 2, got {n_folds}")
    if n_rows == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    if n_rows == 1:  # (its one fold would train on nothing)
        raise InvalidInputError("cross validation needs at least 2 rows, got 1")
    if n_folds > n_rows:
        warn("# folds > # data. Will use # folds = # data instead (i.e., leave-one-out cross "
             "validation)", LiblinearNotice)  # fmt: skip
        n_folds = n_rows
    return CVFolds(n_rows, n_folds, seed)


__all__ = [
    "CVFolds",
    "ConvergenceWarning",
    "RowTargets",
    "TrainingInterrupted",
    "check_classes",
    "class_costs",
    "classes",
    "cv_folds",
    "dual_alpha_terms",
    "held_out_mask",
    "n_weight_vectors",
    "one_vs_rest",
    "partition_solutions",
    "show_label",
    "warn_at_cap",
    "warn_interrupted",
]
