"""One partitioned dual: the outer loop of training on partitions of the rows.

Threads, blocks of data larger than memory and Dask workers are one idea at three scales. The
rows are split into partitions; each partition owns its rows and their dual variables alpha_k;
W (one row per one-vs-rest sub-problem, W[c] = sum over all rows of y_i alpha_i x_i) is the
only thing they share. An outer iteration visits every partition: a *place* (where the
partitions live) runs a *local solve* of some of them from W, the same dual coordinate descent
kernel on their rows only, warm from alpha_k, for a few passes; a *merge rule* says how their
changes of W meet:

- ``IN_TURN``: one partition at a time, each from the W the one before left (block
  minimisation, ``outofcore.py``): every local solve is an exact block step of the dual.
- ``added(sigma)``: every partition from the same W, their changes dW_k added in partition
  order (CoCoA+, ``distributed/``): safe when each local problem charges sigma' >= K times
  its quadratic term, which the place's local solver does (``LocalTask.sigma``).
- ``SHARED``: every partition at once in one address space, the place merging the changes
  itself as they come (threads, ``solvers/dcd_threads.py``: rounds of a few hundred rows,
  merged in a fixed order with an exact line search; a round lasts microseconds, so they run
  in compiled code and the place reports W already merged).

A place is a small class with ``n_partitions`` and ``solve(group, W, task)``; a new scale is a
new place. ``PartitionedDual.outer`` runs one outer iteration and returns the partitions' sums:
each local solve also reports its partition's parts of the objectives at the iteration's start
(the loss sum_{i in k} C_i xi(y_i W_start[c]'x_i) and the dual's terms of alpha_k), whose sums
give P(W_start) and D(alpha_start), the duality gap of the iterate the iteration started from
(``objectives``); and the first pass's projected-gradient extremes, whose extremes over all
partitions are LIBLINEAR's stopping measure over every row (``pg_measure``). The callers keep
what differs legitimately: blocks check LIBLINEAR's rule and verify it at the final W, CoCoA+
stops on the relative gap (the measure its workers can sum cheaply), threads run inside a
registered solver with its hooks and checkpoints. ``snapshot`` / ``restore`` (W and every
partition's alpha) serve checkpoints and the recovery from a lost worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from .sparse_rows import sq_norm


@dataclass(frozen=True)
class LocalTask:
    """What every local solve of an outer iteration is asked: ``passes`` over its rows (0:
    only report the objectives' parts), the local problem's ``sigma`` (CoCoA+'s sigma'; 1.0 is
    the exact problem), ``outer`` (the iteration, for seeds), and ``W_start``, the W the
    iteration started from (the one the objectives' parts are computed at; None: not asked)."""

    outer: int
    passes: int
    sigma: float = 1.0
    W_start: np.ndarray | None = None


@dataclass
class PartResult:
    """One partition's local solve: its parts of the objectives at the iteration's start
    (``loss``, ``dual_terms``: (n_subproblems,), or None when not computed), its change of W
    (``dW``: dense (n_subproblems, n_weights) or CSR, for ``added``; None when the place
    updated W itself), the first pass's projected-gradient extremes (``pg_max``, ``pg_min``:
    (n_subproblems,), or None), sum_i y_i alpha_i over its rows at the iteration's start
    (``net``: (n_subproblems,), or None: for a bias weight held apart from W(alpha), see
    ``OuterSums.objectives``), the parts of a second dual point's objective, that of the
    primal's weights at the iteration's start (``point_W``: sum_{i in k} y_i a_i x_i over its
    rows, (n_subproblems, n_weights); ``point_terms``: the dual's terms of those a_i,
    (n_subproblems,); both None when not computed), and the seconds it took where it ran."""

    partition: int
    loss: np.ndarray | None = None
    dual_terms: np.ndarray | None = None
    dW: np.ndarray | sp.csr_matrix | None = None
    net: np.ndarray | None = None
    pg_max: np.ndarray | None = None
    pg_min: np.ndarray | None = None
    point_W: np.ndarray | None = None
    point_terms: np.ndarray | None = None
    point_mix: np.ndarray | None = None
    seconds: float = 0.0
    figures: dict = field(default_factory=dict)


class Place(Protocol):
    """Where the partitions live: memory shared by threads, blocks on disk, Dask workers."""

    n_partitions: int

    def solve(self, group: Sequence[int], W: np.ndarray, task: LocalTask) -> list[PartResult]:
        """Local solves of the partitions in ``group`` from W (n_subproblems, n_weights), one
        result each, in ``group``'s order. A place that merges itself (``SHARED``, or a block
        solved ``IN_TURN``) leaves the new W in ``W``."""
        ...


@dataclass(frozen=True)
class MergeRule:
    """How the partitions' changes of W meet (module docstring)."""

    name: str
    sigma: float = 1.0  # the local problems' sigma'
    one_at_a_time: bool = False  # each partition from the W the one before left
    adds: bool = False  # W += sum of the partitions' dW

    def groups(self, n_partitions: int) -> list[list[int]]:
        """The partitions of an outer iteration, in the order the local solves run."""
        if self.one_at_a_time:
            return [[k] for k in range(n_partitions)]
        return [list(range(n_partitions))]

    def combine(self, W: np.ndarray, results: Sequence[PartResult]) -> None:
        if not self.adds:
            return
        for result in results:  # in partition order: the same sum on every run
            if result.dW is None:
                continue
            W += result.dW.toarray() if sp.issparse(result.dW) else result.dW


IN_TURN = MergeRule("in turn", one_at_a_time=True)
SHARED = MergeRule("shared")


def added(sigma: float) -> MergeRule:
    """CoCoA+'s adding rule with the local problems' sigma' (K partitions: K is safe)."""
    return MergeRule("added", sigma=float(sigma), adds=True)


@dataclass
class OuterSums:
    """What an outer iteration's local solves add up to (per sub-problem): the loss at W_start
    and the dual's alpha terms of the iteration's start (NaN where a place computes none), the
    extremes of the first passes' projected gradients, the slowest local solve's seconds, the
    iteration's wall time, and the results themselves. ``stopped``: the caller's
    ``after_group`` asked to stop before the last partition."""

    W_start: np.ndarray | None
    loss: np.ndarray
    dual_terms: np.ndarray
    pg_max: np.ndarray
    pg_min: np.ndarray
    net: np.ndarray | None = None
    point_W: np.ndarray | None = None
    point_terms: np.ndarray | None = None
    point_mix: np.ndarray | None = None
    slowest: float = 0.0
    seconds: float = 0.0
    results: list[PartResult] = field(default_factory=list)
    stopped: bool = False
    groups_done: int = 0

    def add(self, results: Sequence[PartResult]) -> None:
        for r in results:
            if r.loss is not None:
                self.loss += r.loss
            if r.dual_terms is not None:
                self.dual_terms += r.dual_terms
            if r.net is not None:
                self.net = r.net.copy() if self.net is None else self.net + r.net
            if r.point_W is not None:
                if self.point_W is None:
                    self.point_W, self.point_terms = r.point_W.copy(), r.point_terms.copy()
                else:
                    self.point_W += r.point_W
                    self.point_terms += r.point_terms
            if r.point_mix is not None:
                self.point_mix = r.point_mix.copy() if self.point_mix is None else (
                    self.point_mix + r.point_mix)  # fmt: skip
            if r.pg_max is not None:
                np.maximum(self.pg_max, r.pg_max, out=self.pg_max)
                np.minimum(self.pg_min, r.pg_min, out=self.pg_min)
            self.slowest = max(self.slowest, r.seconds)
        self.results.extend(results)

    def objectives(self, held_bias: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(P(W_start), D(alpha_start)) per sub-problem: 1/2 ||W_start[c]||^2 plus the summed
        loss, and minus 1/2 ||W_start[c]||^2 plus the summed alpha terms (those are computed by
        the partitions at the iteration's start, W_start = sum_i y_i alpha_i x_i then).

        ``held_bias``: the bias feature's value when W_start's last column is a bias weight
        held apart from alpha (CoCoA+'s client, ``distributed/cocoa.py``): P is as above, at
        that weight; D's bias weight is alpha's own, bias times the summed ``net``, so that D
        is still the dual of the whole problem and P - D >= 0 bounds P's distance to P*.

        With the partitions' parts of the primal's dual point (``point_W``, ``point_terms``),
        D is the larger of alpha's dual and that point's, each a lower bound on P*."""
        W = self.W_start
        n_sub = W.shape[0]
        half = np.array([0.5 * sq_norm(W[c]) for c in range(n_sub)])
        if held_bias is None:
            dual = -(half + self.dual_terms)
        else:
            bias_of_alpha = held_bias * self.net
            half_dual = np.array([0.5 * (sq_norm(W[c, :-1]) + bias_of_alpha[c] ** 2)
                                  for c in range(n_sub)])  # fmt: skip
            dual = -(half_dual + self.dual_terms)
        if self.point_W is not None:
            point = np.array([-(0.5 * sq_norm(self.point_W[c]) + self.point_terms[c])
                              for c in range(n_sub)])  # fmt: skip
            dual = np.maximum(dual, point)
            if self.point_mix is not None:
                dual = np.maximum(dual, [self._best_on_segment(c, held_bias)
                                         for c in range(n_sub)])  # fmt: skip
        return half + self.loss, dual

    def _best_on_segment(self, c: int, held_bias: float | None) -> float:
        """max over t in [0, 1] of D(a + t (alpha - a)), a the dual point of W_start[c] and
        alpha the partitions' own, for the squared hinge: with f's terms quadratic,
        f(a + t d) = g0 + g1 t + g2 t^2 from the sums the partitions sent (``point_mix``:
        sum alpha, sum a, sum alpha a / (4C); ``dual_terms``, ``point_terms``: sum x^2 / (4C)
        - sum x of alpha and of a) and the two w's, W(alpha) (with its own bias weight when
        the client holds one) and ``point_W``."""
        W = self.W_start[c]
        w_alpha = W.copy()
        if held_bias is not None:
            w_alpha[-1] = held_bias * self.net[c]
        u = self.point_W[c]
        d = w_alpha - u
        sum_alpha, sum_a, cross = self.point_mix[c]
        q_alpha = self.dual_terms[c] + sum_alpha  # sum alpha^2 / (4C)
        q_a = self.point_terms[c] + sum_a  # sum a^2 / (4C)
        g0 = 0.5 * float(u @ u) + self.point_terms[c]
        g1 = float(u @ d) + 2.0 * (cross - q_a) - (sum_alpha - sum_a)
        g2 = 0.5 * float(d @ d) + (q_alpha - 2.0 * cross + q_a)
        t = min(max(-g1 / (2.0 * g2), 0.0), 1.0) if g2 > 0.0 else 0.0
        return -(g0 + t * (g1 + t * g2))


class PartitionedDual:
    """W and the outer iteration over a place's partitions by a merge rule."""

    def __init__(self, place: Place, merge: MergeRule, W: np.ndarray) -> None:
        self.place = place
        self.merge = merge
        self.W = W

    def outer(
        self,
        task: LocalTask,
        first_group: int = 0,
        after_group: Callable[[int, list[PartResult]], bool | None] | None = None,
        start: OuterSums | None = None,
        keep_start: bool = True,
    ) -> OuterSums:
        """One outer iteration: the merge rule's groups of partitions from ``first_group`` on,
        each solved by the place and merged into W; the local solves get ``task`` with the
        merge rule's sigma and W_start, a copy of W as the iteration found it. ``start``: the
        sums of a resumed iteration so far (its W_start among them), continued.
        ``after_group(g, results)`` after each group (checkpoints, interrupts): False stops
        the iteration there (``stopped``). ``keep_start=False``: no copy of W (a place that
        computes no objectives' parts; W_start is then None)."""
        started = time.perf_counter()
        if start is None:
            n = self.W.shape[0]
            start = OuterSums(
                self.W.copy() if keep_start else None, np.zeros(n), np.zeros(n),
                np.full(n, -np.inf), np.full(n, np.inf),
            )  # fmt: skip
        sums = start
        task = LocalTask(task.outer, task.passes, self.merge.sigma, sums.W_start)
        groups = self.merge.groups(self.place.n_partitions)
        for g in range(first_group, len(groups)):
            results = self.place.solve(groups[g], self.W, task)
            self.merge.combine(self.W, results)
            sums.add(results)
            sums.groups_done = g + 1
            if after_group is not None and after_group(g, results) is False:
                sums.stopped = g + 1 < len(groups)
                break
        sums.seconds = time.perf_counter() - started
        return sums

    def snapshot(self, alphas: Any) -> tuple[np.ndarray, Any]:
        """W with the partitions' alphas (as the place gave them): what a checkpoint or a
        recovery restores."""
        return self.W.copy(), alphas

    def restore(self, snapshot: tuple[np.ndarray, Any]) -> Any:
        """W back to a snapshot's; returns its alphas for the place to put back."""
        W, alphas = snapshot
        self.W[...] = W
        return alphas


def relative_gap(primal: np.ndarray, dual: np.ndarray) -> float:
    """The largest (P_c - D_c) / P_c over the sub-problems: CoCoA+'s stopping measure. A
    sub-problem with P_c = 0 (every row's cost 0: w = 0 is its optimum) has none to close."""
    gaps = np.divide(primal - dual, primal, out=np.zeros(np.shape(primal)), where=primal != 0)
    return float(np.max(gaps))


def stopping_measure(pg_max: float, pg_min: float, logistic: bool = False) -> float:
    """LIBLINEAR's stopping measure from the extremes of the rows' g over some rows: for the
    SVM duals (g the projected gradient) max(pg_max - pg_min, |pg_max|, |pg_min|), what the
    rule compares with eps; for the LR dual (g its gradient, -inf at alpha_i = 0) the
    largest |g|. 0 where no row was visited."""
    if logistic:
        return max(pg_max, -pg_min, 0.0)
    if pg_max < pg_min:
        return 0.0
    return max(pg_max - pg_min, abs(pg_max), abs(pg_min))


def pg_measure(sums: OuterSums, logistic: bool = False) -> float:
    """``stopping_measure`` over every row from the first passes' extremes (the largest over
    the sub-problems)."""
    return max(
        (
            stopping_measure(sums.pg_max[c], sums.pg_min[c], logistic)
            for c in range(sums.pg_max.shape[0])
        ),
        default=0.0,
    )


__all__ = [
    "IN_TURN",
    "SHARED",
    "LocalTask",
    "MergeRule",
    "OuterSums",
    "PartResult",
    "PartitionedDual",
    "Place",
    "added",
    "pg_measure",
    "relative_gap",
    "stopping_measure",
]
