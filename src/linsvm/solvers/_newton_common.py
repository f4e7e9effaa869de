"""The Python-level pieces that the two Newton drivers share: the line-search Newton method of
``newton.py`` (-s 0, -s 2, -s 11) and the trust-region one of ``tron.py`` (-s 40). Both
report the same core figures to the hook and in the Solution (f, ||g||, ||g(0)||, CG steps),
keep the same kind of resumable state, and end the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from ..errors import InvalidInputError
from . import _base
from ._base import Progress, Solution, Subproblem

# (w, f) -> (primal, dual, gap, alpha): the loss's objectives and dual point at the final w;
# f is the driver's P(w), for a loss without a dual bound.
Bounds = Callable[[np.ndarray, float], tuple[float, float, float, "np.ndarray | None"]]


def relative_gradient_norm(grad_norm: float, grad_norm0: float) -> float:
    """||g(w)|| / ||g(0)||, the quantity the stopping rule compares with eps. g(0) = 0 happens
    only with a warm start: then 0 once g is 0 too, else infinity; NaN where ||g(0)||
    overflowed (a start past ``check_gradient_at_zero``: the rule has no scale)."""
    if not math.isfinite(grad_norm0):
        return math.nan
    if grad_norm0 > 0:
        return float(grad_norm / grad_norm0)
    return math.inf if grad_norm > 0 else 0.0


def rule_scale(grad_norm0: float) -> float:
    """The stopping rule's ||g(0)|| in ||g(w)|| <= eps ||g(0)||: NaN, which no ||g|| meets,
    where it overflowed. Only a run from a start gets there (``check_gradient_at_zero``),
    -s 1's w handed to -s 2 at C ~ 1e306: an infinite scale met the rule at once and the
    start came back "converged"; the iterations now end by small reduction, a failed line
    search or the cap, each with its warning."""
    return grad_norm0 if math.isfinite(grad_norm0) else math.nan


def check_gradient_at_zero(grad_norm0: float, has_start: bool) -> None:
    """Refuse a gradient at w = 0 that overflows float64, where the run starts there: its
    norm, the stopping rule's scale, is then infinite and every ||g|| would meet the rule.
    (From a start, e.g. a dual solve's w handed over at its cap, the run goes on without the
    rule: ``rule_scale``.)"""
    if not math.isfinite(grad_norm0) and not has_start:
        raise InvalidInputError(
            "the gradient at w = 0 overflows float64 (C times the features' sums past "
            "1e308): lower C or scale the features"
        )


def check_resume_keys(state: Mapping[str, Any], keys: Collection[str]) -> None:
    """A one-line InvalidInputError when the state to resume from lacks any of ``keys``."""
    missing = set(keys) - state.keys()
    if missing:
        raise InvalidInputError(f"the state to resume from has no {sorted(missing)}")


def resume_values_damaged(floats: list[np.ndarray], counts: list[np.ndarray]) -> bool:
    """Whether a state to resume from is damaged in the entries every Newton driver keeps:
    ``floats`` (arrays of any shape) not finite float arrays, or ``counts`` not scalar
    integers >= 0. A checkpoint is a file a user may be handed: what no run leaves there is
    refused (a negative count would run the loop almost without end)."""
    return any(a.dtype.kind != "f" or not np.isfinite(a).all() for a in floats) or any(
        a.shape != () or a.dtype.kind != "i" or a < 0 for a in counts
    )


def newton_progress(
    sub: Subproblem,
    solver: int,
    n_iter: int,
    w: np.ndarray,
    f: float,
    grad_norm: float,
    grad_norm0: float,
    n_cg: int,
    step: float,
    state: Callable[[], dict[str, np.ndarray]],
    objectives: Callable[[], tuple[float, float]],
    **figures: Any,
) -> Progress:
    """The hook's Progress of a Newton driver: w (n_w,) live, measure ||g|| / ||g(0)||,
    figures f, grad_norm, grad_norm0, n_cg and step, then the driver's own ``figures``."""
    return Progress(
        solver=solver,
        index=sub.index,
        iteration=n_iter,
        w=w,
        alpha=None,
        measure=relative_gradient_norm(grad_norm, grad_norm0),
        figures={
            "f": float(f),
            "grad_norm": float(grad_norm),
            "grad_norm0": float(grad_norm0),
            "n_cg": int(n_cg),
            "step": float(step),
            **figures,
        },
        state=state,
        objectives=objectives,
    )


def final_stop_reason(
    stop: int, stop_reasons: Mapping[int, str], went_on: bool, n_iter: int, max_iter: int
) -> str:
    """Why a Newton driver's loop ended: the rule's reason when a rule stopped it (``stop``,
    a key of ``stop_reasons``; also when the hook asked to stop at that same iteration), else
    the cap's or the hook's."""
    if stop in stop_reasons:
        return stop_reasons[stop]
    return _base.stop_reason(False, went_on, n_iter >= max_iter)


def newton_solution(
    solver: int,
    w: np.ndarray,
    f: float,
    bounds: Bounds,
    n_iter: int,
    reason: str,
    grad_norm: float,
    grad_norm0: float,
    stop_ratio: float,
    n_cg_total: int,
    history: list,
    **figures: Any,
) -> Solution:
    """The Solution of a Newton driver at w (n_w,) with P(w) = f: objectives and dual point
    from ``bounds``; figures f, grad_norm, grad_norm0, stop_ratio, n_cg_iter, the driver's own
    ``figures``, history and n_sv (-1 without a dual point)."""
    primal, dual, gap, alpha = bounds(w, f)
    return Solution(
        w=w, n_iter=n_iter, converged=reason == _base.CONVERGED, stop_reason=reason,
        primal=primal, dual=dual, gap=gap, alpha=alpha, solver=solver,
        figures={
            "f": float(f),
            "grad_norm": float(grad_norm),
            "grad_norm0": float(grad_norm0),
            "stop_ratio": float(stop_ratio),
            "n_cg_iter": n_cg_total,
            **figures,
            "history": history,
            "n_sv": int(np.count_nonzero(alpha)) if alpha is not None else -1,
        },
    )  # fmt: skip
