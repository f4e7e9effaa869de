"""The solver interface: one ``Subproblem`` in, one ``Solution`` out, one hook in between.

Every solver of the family is a function ``solve(sub: Subproblem, hook: Hook | None) ->
Solution`` (registered in ``solvers/__init__.py``). What differs between a thread, a block of
data larger than memory and a Dask worker is only which rows a sub-problem holds and where its
warm state comes from; the solver does not know (docs/architecture.md, "One partitioned dual").

The hook is called between outer iterations (dual coordinate descent: one pass over the active
rows; Newton: one Newton iteration; SGD: one epoch) with a ``Progress``; returning ``False``
stops the solver, which then returns its current iterate marked ``stop_reason="interrupted"``.
One hook signature serves progress lines, ``compare``'s snapshots, checkpoints and interrupts.

Kernels run in compiled code and return to Python only between calls, so a solver runs its
kernel for a bounded number of outer iterations per call (``drive``): one at a time when the
hook wants every iteration, otherwise as many as fit in about ``BATCH_SECONDS``, so that
Ctrl-C and checkpoints act promptly while the calls' overhead stays negligible. A resumable
kernel keeps all its state in arrays, so the result does not depend on how the iterations are
batched: the same seed gives the same model with or without a hook.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InvalidInputError

# A run of outer iterations between two returns to Python lasts about this long when nobody
# asks for every iteration: Ctrl-C and checkpoints act within it.
BATCH_SECONDS = 0.1

# Why a solver stopped.
CONVERGED = "converged"
MAX_ITER = "max_iter"
INTERRUPTED = "interrupted"
LINE_SEARCH_FAILED = "line_search_failed"
SMALL_REDUCTION = "small_reduction"
STALLED = "stalled"  # no progress at all in many iterations: rounding (the cutting planes)


@dataclass
class Subproblem:
    """One problem for one solver: the rows, their targets and costs, and where to start.

    X : CSR matrix of shape (l, n), float32 or float64 values, int32 or int64 indices, sorted
        indices. Rows with ``C[i] == 0`` take no part.
    y : ndarray of shape (l,), float64
        +1/-1 for the binary classifiers, real targets for regression (-s 11-13), the class
        index 0..K-1 for Crammer-Singer (-s 4); ignored by the one-class SVM (-s 21).
    C : ndarray of shape (l,), float64
        The cost of each row: C x class weight x sample weight.
    eps : float
        The solver's own stopping tolerance, as its rule reads it (``solver_tolerance`` turns
        LIBLINEAR's ``-e`` into it once, e.g. the class-balance scaling of the primal solvers).
    alpha0, w0 : optional warm starts
        Dual variables (dual solvers: shape (l,), or (l, K) for -s 4) or weights (primal
        solvers: shape (n [+1],)). Projected into the problem's bounds by the solver.
    resume : dict of arrays, optional
        A state captured by ``Progress.state()`` (a checkpoint): the solver continues from it
        exactly, to the model an uninterrupted run would have given.
    options : dict
        What only some solvers read: ``p`` (SVR tube), ``nu`` (one-class), ``shrinking``,
        ``bucket_size``, ``buckets_per_group``, ``n_classes`` (-s 4, whose ``y`` is the class
        index and ``C`` the per-row cost C x class weight x sample weight), ``objectives``
        (False: the dual solvers skip the final primal/dual pass and report NaN, for callers
        that compute them their own way).
    index, label : which sub-problem this is (one-vs-rest: the class index and label), for
        messages and hooks.
    n_threads : int
        Threads the solver may keep busy on this one sub-problem. 1 is the serial algorithm
        exactly; a solver without a threaded form ignores it (``SolverSpec.threads`` says
        which have one).
    feature_map : linsvm.features.FeatureMap, optional
        A bound map the solver forms implicitly, row by row: X then holds the input rows and
        w lives in the mapped space (``n_weights``). Only for solvers whose registry entry
        has ``implicit_map``; training materialises phi(X) for the others.
    values_checked : bool
        X's values passed ``as_csr(trainable=True)`` (no NaN, infinity or overflowing
        magnitude), as ``train`` checks them once: a solver's own ``as_csr`` then skips its
        pass over the values. False (direct calls): the solver checks them.
    shared_rows : ``_dual.SharedRows``, optional
        What the sub-problems of one run on the same X (one-vs-rest's) compute of the rows
        alone (the automatic order's sample of row pairs, the rows' norms), computed once;
        None: a dual solver computes its own.
    """

    X: Any
    y: np.ndarray
    C: np.ndarray
    eps: float
    max_iter: int
    bias: float = -1.0
    regularize_bias: bool = True
    seed: int = 1
    alpha0: np.ndarray | None = None
    w0: np.ndarray | None = None
    resume: dict[str, np.ndarray] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    label: Any = None
    n_threads: int = 1
    feature_map: Any = None
    values_checked: bool = False
    shared_rows: Any = None

    @property
    def n_features(self) -> int:
        """Features the model sees: X's columns, or the implicit map's."""
        return self.X.shape[1] if self.feature_map is None else self.feature_map.n_output

    @property
    def n_weights(self) -> int:
        """Length of w: the features, plus one for the bias weight when ``bias >= 0``."""
        return self.n_features + (1 if self.bias >= 0 else 0)

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    def but(self, **changes: Any) -> Subproblem:
        """A copy with some fields changed (e.g. another tolerance for a fallback)."""
        return replace(self, **changes)


@dataclass
class Solution:
    """What every solver returns.

    w : ndarray of shape (n [+1],), or (K, n [+1]) for Crammer-Singer; bias weight last.
    n_iter : outer iterations (dual CD passes, Newton iterations, epochs), LIBLINEAR's "#iter";
        after a fallback, the dual's and the primal solver's together.
    converged, stop_reason : whether the stopping rule was met, and why the solver stopped
        (``CONVERGED``, ``MAX_ITER``, ``INTERRUPTED``, ``LINE_SEARCH_FAILED``,
        ``SMALL_REDUCTION``, ``STALLED``).
    primal, dual, gap : P(w), a lower bound -f(alpha) on P* and their difference, from
        ``linsvm.objective`` (NaN where the solver has no dual).
    alpha : the dual variables (dual solvers, and the dual points the primal SVM/LR solvers
        derive from w), in the rows' order: what a warm start resumes from.
    solver : the solver that produced w (differs after a fallback, e.g. 2 after -s 1).
    figures : what only some solvers report, by name: ``stop_ratio`` (the primal solvers'
        stopping measure relative to its start), ``pg_max``/``pg_min`` (dual CD),
        ``nnz_w`` (L1), ``n_cg_iter`` (Newton), ``rho`` (one-class), ``n_sv``; after a
        fallback the dual's part: ``dual_n_iter``, ``dual_objective`` (its -f(alpha)),
        ``dual_n_sv``, ...
    """

    w: np.ndarray
    n_iter: int
    converged: bool
    stop_reason: str
    primal: float
    dual: float = math.nan
    gap: float = math.nan
    alpha: np.ndarray | None = None
    solver: int = -1
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def n_sv(self) -> int:
        """Rows with a non-zero dual variable (any of its K for -s 4); -1 without duals."""
        if self.alpha is None:
            return int(self.figures.get("n_sv", -1))
        nonzero = self.alpha != 0
        return int(np.count_nonzero(nonzero if nonzero.ndim == 1 else nonzero.any(axis=1)))

    @property
    def stop_ratio(self) -> float:
        """The primal solvers' stopping measure relative to its start (NaN for the others)."""
        return float(self.figures.get("stop_ratio", math.nan))

    @property
    def nnz_w(self) -> int:
        """Non-zero weights (reported by the L1-regularised solvers; -1 otherwise)."""
        return int(self.figures.get("nnz_w", -1))


def without_dual_variables(solution: Solution) -> Solution:
    """The solution without what it holds a row (the dual variables, -s 7's complements):
    what only a warm start resumes from, 8 bytes a row and sub-problem (one-vs-rest over
    thousands of classes: gigabytes). Its number of support vectors stays (``n_sv``), marked
    ``dual_dropped``."""
    if solution.alpha is None:
        return solution
    figures = {name: value for name, value in solution.figures.items()
               if name != "alpha_complement"}  # fmt: skip
    figures.update(n_sv=solution.n_sv, dual_dropped=True)
    return replace(solution, alpha=None, figures=figures)


@dataclass
class Progress:
    """What a hook sees after an outer iteration (or a batch of them).

    ``w`` and ``alpha`` are the solver's live arrays: copy them to keep them. ``figures`` are
    the solver's own measures of this iteration (e.g. ``n_active``, ``pg_max``, ``pg_min``;
    ``f``, ``grad_norm``, ``n_cg``, ``step``). ``measure`` is the quantity the stopping rule
    compares with the tolerance, in the solver's unit (NaN if it has none). ``state()`` returns
    a copy of everything the solver needs to continue exactly (for checkpoints); it costs a
    copy of the state, so call it only when it is needed; ``objectives()``, where given,
    computes the primal and dual values at the current iterate (a pass over the data).
    """

    solver: int
    index: int
    iteration: int
    w: np.ndarray
    alpha: np.ndarray | None
    measure: float
    figures: dict[str, Any]
    state: Callable[[], dict[str, np.ndarray]]
    # (P(w), D(alpha)) at the current iterate, computed on demand (None: not available)
    objectives: Callable[[], tuple[float, float]] | None = None


# hook(progress) -> False to stop; None or True to go on. A hook may carry an attribute
# ``every_iteration = False`` to say that batches of iterations are enough (see ``drive``).
Hook = Callable[[Progress], "bool | None"]


def check_number(
    value: Any, lowest: float, not_a_number: str, out_of_range: str, *, strict: bool = False
) -> float:
    """``value`` as a float, checked to be finite and >= ``lowest`` (> with ``strict``).

    The errors are one-line InvalidInputErrors: ``not_a_number`` when float() refuses the
    value, ``out_of_range`` otherwise, each formatted with ``value`` (as given) and, the
    second, ``number`` (the float)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(not_a_number.format(value=value)) from None
    in_range = number > lowest if strict else number >= lowest
    if not (math.isfinite(number) and in_range):
        raise InvalidInputError(out_of_range.format(value=value, number=number))
    return number


def check_eps(eps) -> float:
    """The stopping tolerance as a float: finite and >= 0, 0 meaning no stopping rule (the
    solver runs its ``max_iter`` outer iterations); a one-line error otherwise."""
    return check_number(
        eps, 0.0, "eps must be a number >= 0, got {value!r}", "eps must be >= 0, got {number}"
    )


def stop_reason(converged: bool, went_on: bool, finished: bool) -> str:
    """Why a run stopped. A run that converged or reached its cap (``finished``) is complete
    even if the hook then asked to stop: its result is the uninterrupted run's, so it is not
    reported as interrupted (and a fallback at the cap still follows)."""
    if converged:
        return CONVERGED
    return MAX_ITER if went_on or finished else INTERRUPTED


def wants_every_iteration(hook: Hook | None) -> bool:
    return hook is not None and getattr(hook, "every_iteration", True)


def asks_to_stop(answer: object) -> bool:
    """Whether a hook's answer is False: Python's or NumPy's (a comparison of the progress's
    arrays gives ``numpy.False_``); None, as any other answer, goes on."""
    return isinstance(answer, bool | np.bool_) and not answer


def ask(hook: Hook | None, progress: Callable[[], Progress]) -> bool:
    """Call the hook (if any) with the progress made; True if the solver should go on."""
    if hook is None:
        return True
    return not asks_to_stop(hook(progress()))


def drive(
    advance: Callable[[int], None],
    status: Callable[[], tuple[int, bool]],
    hook: Hook | None,
    max_iter: int,
    progress: Callable[[], Progress],
) -> bool:
    """Run a resumable kernel to its end, returning to Python between batches of iterations.

    ``advance(n)`` runs at most ``n`` more outer iterations (the kernel returns early once it
    has converged); ``status()`` is (outer iterations done, finished). Without a hook the
    kernel runs in one call. With a hook that wants every iteration, one iteration a call;
    otherwise batches sized to last about ``BATCH_SECONDS``. Returns False if the hook asked
    to stop, True otherwise.
    """
    done, finished = status()
    if hook is None:
        if not finished and done < max_iter:
            advance(max_iter - done)
        return True
    every = wants_every_iteration(hook)
    batch = 1
    while not finished and done < max_iter:
        start = time.perf_counter()
        advance(min(batch, max_iter - done))
        seconds = time.perf_counter() - start
        done, finished = status()
        if not ask(hook, progress):
            return False
        if not every:
            if seconds < 0.25 * BATCH_SECONDS:
                batch *= 2
            elif seconds > 2 * BATCH_SECONDS and batch > 1:
                batch //= 2
    return True


def chain_hooks(*hooks: Hook | None) -> Hook | None:
    """One hook calling each given hook in turn; stops when any of them asks to stop."""
    present = [h for h in hooks if h is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]

    def chained(progress: Progress) -> bool:
        go_on = True
        for h in present:
            if asks_to_stop(h(progress)):
                go_on = False
        return go_on

    chained.every_iteration = any(wants_every_iteration(h) for h in present)
    return chained


def copy_state(**arrays: Any) -> dict[str, np.ndarray]:
    """A checkpointable state: copies of arrays, and scalars as 0-d arrays."""
    return {name: np.array(value, copy=True) for name, value in arrays.items()}


# Integer arrays of the solvers' states that index other arrays, and the bound of their
# values taken from the live (fresh) state: the kernels do not check bounds, so a checkpoint's
# values are checked here (rows, features or classes).
_INDEX_BOUNDS: dict[str, Callable[[dict[str, np.ndarray]], int]] = {
    "active": lambda live: live["active"].shape[0],  # rows (dual solvers; length max(l, 1))
    "index": lambda live: live["index"].shape[0],  # rows (-s 4) or features (-s 5, 6, pcd)
    "order": lambda live: live["order"].shape[0],  # rows (SGD-S/M)
    "alpha_index": lambda live: live["alpha_index"].shape[1],  # classes (-s 4)
    "y_index": lambda live: live["alpha_index"].shape[1],
    "n_act_row": lambda live: live["alpha_index"].shape[1] + 1,
}


def restore_state(
    arrays: dict[str, np.ndarray],
    saved: dict[str, np.ndarray],
    counts: tuple[tuple[int, int], ...] = (),
) -> None:
    """Overwrite a fresh solve's state ``arrays`` with a checkpoint's (``saved``, as captured
    by ``Progress.state()``), checking that each is there with the same shape and dtype and
    holds what a solver could have left there: finite floats (``fstate`` aside, where NaN
    and infinity stand for "not measured yet" and "no bound yet"), integers >= 0 (counters,
    flags, positions; ``rng`` aside), positions within the arrays they index
    (``_INDEX_BOUNDS``) and, for ``counts`` ((position in istate, bound) pairs), counts of
    active coordinates within their arrays.
    A checkpoint is a file a user may be handed: this keeps a damaged or crafted one from
    making a kernel read or write outside its arrays, or loop without end."""
    for name, live in arrays.items():
        if name not in saved:
            raise InvalidInputError(f"the state to resume from has no {name!r}")
        value = np.asarray(saved[name])
        if value.shape != live.shape or value.dtype != live.dtype:
            raise InvalidInputError(
                f"the state to resume from does not fit this problem: {name!r} is "
                f"{value.dtype}{list(value.shape)}, expected {live.dtype}{list(live.shape)}"
            )
        if value.dtype.kind == "f":
            bad = name != "fstate" and not np.isfinite(value).all()
        elif value.dtype.kind == "i" and value.size:
            bound = _INDEX_BOUNDS[name](arrays) if name in _INDEX_BOUNDS else None
            if name == "active":
                # the dual solvers' active set: the trainable rows (counted by the fresh
                # istate[0]) fill its head; the rest of the array is never read
                value = value[: arrays["istate"][0]]
            bad = value.size and (value.min() < 0 or (bound is not None and value.max() >= bound))
        else:
            bad = False
        if bad:
            raise InvalidInputError(f"the state to resume from is damaged: {name!r} holds "
                                    "values no solver leaves there")
    for name, live in arrays.items():
        live[...] = np.asarray(saved[name])
    istate = arrays.get("istate")
    for position, bound in counts:
        if istate is not None and istate[position] > bound:
            raise InvalidInputError("the state to resume from is damaged: 'istate' counts "
                                    f"{istate[position]} active coordinates of {bound}")
