"""The worker side of CoCoA+: one partition of the rows, its dual variables, its local solves.

A ``Partition`` lives in a Dask worker's memory for the whole run (``cocoa.py`` drives it): its
rows (CSR), their labels, and ``alpha`` of shape (n_subproblems, l), one row per one-vs-rest
sub-problem. Only the broadcast W comes in and only dW and a few numbers go out each round;
alpha leaves the worker only in the client's fault-tolerance snapshots (``alpha_snapshot``).

The partitions live outside Dask's store of task results, in a table of the worker process
(``_HELD``), and the client reaches them with ``Client.run`` (``serve``: ``hold``,
``setup_held``, ``round_held``, ``snapshot_held``, ``restore_held``, ``release_held``): a call
on one worker, no task graph. So Dask never moves, copies, steals or rebuilds a partition from
its lineage (a copy would train on a stale alpha); a lost worker shows as a failed call
(``OSError``) or a missing partition (``PartitionLost``), never as a task waiting for a worker
that is gone. Each call names, for every worker, the partitions it should hold; the compute
runs in the worker's threads, off its event loop, so the worker keeps answering the scheduler
during a long round. ``Partition.round`` guards the state: a round t runs only on a partition
that has done rounds 0..t-1.

**Leases.** The partitions belong to the client that made them, for as long as it runs: with
each worker's partitions the client keeps a lease, a small value it scattered to that worker
(a Dask future it holds; ``hold`` gets its key). Dask itself ends the lease when the client
goes: a client that releases its futures, closes, or dies (its connection to the scheduler
closes) no longer wants the key, and the scheduler has the worker forget it. While a worker
holds partitions it looks for each run's lease in its own store every ``LEASE_POLL_SECONDS``
(``_drop_orphans``, a task on the worker's event loop that ends once nothing is held) and drops
the partitions of a run whose lease has gone. So a client killed mid-run leaves nothing in the
workers' memory a moment after the scheduler sees its connection close, with no wall-clock
lease to outlast the longest round or a slow ``on_round`` hook.

One round on partition k (Ma et al., ICML 2015, CoCoA+ with adding, gamma = 1, sigma' = K):
for each sub-problem c, with w = W[c] = sum over ALL rows of y_i alpha_i x_i,

1. its parts of the objectives at w: the loss sum_{i in k} C_i xi(y_i w'x_i) (the primal's)
   and the alpha terms of the dual (``objective.svm_dual_alpha_terms``; LR's entropy terms),
   so the client has P(w) and D(alpha) of the round's start summed over partitions;
2. the local solve: the registered dual solver on these rows from (alpha, w) in partition
   mode with option ``sigma`` = sigma', for at most ``local_passes`` passes;
3. dW[c] = sum_{i in k} y_i (alpha_i_new - alpha_i) x_i, recomputed from the alphas (exact;
   not the local view's (u - w)/sigma', which cancels).

With the bias weight held by the client (-s 1, -s 7 with a bias; ``cocoa.py``, "The bias"),
W's last column is that weight: step 2 solves the rows without their bias feature, every
margin offset by B W[c, -1], and dW's last column is 0; the partition also reports sum_i y_i
alpha_i of its rows (the dual's own bias weight, over B), and between rounds
``bias_losses`` gives the client its share of the loss as a function of the held weight.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..data import as_csr, check_labels
from ..errors import InvalidInputError
from ..objective import (
    LOSS_HINGE,
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    add_rows,
    bias_loss_derivatives,
    loss_and_dual_point,
    loss_sum,
    lr_dual_alpha_terms,
    margins,
    primal_from_dual,
    svm_dual_alpha_terms,
)
from ..partitioned import PartResult
from ..problems import dual_alpha_terms, one_vs_rest
from ..solvers import SOLVERS, Subproblem
from ..solvers.dual_lr import INIT_CAP, INIT_FRACTION

# The loss of each solver CoCoA+ runs.
LOSSES = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE, 7: LOSS_LOGISTIC}

# The local solver's tolerance: the passes, not the tolerance, bound a round's work, and a
# loose local tolerance would stall the run once the local problems look solved.
LOCAL_EPS = 1e-12

# -s 7's inner Newton tolerance in a local solve: a round's one or two passes start from a warm
# alpha, where LIBLINEAR's first tolerance (1e-2) would leave every coordinate as it is.
LOCAL_INNER_EPS = 1e-8

# dW goes back as CSR when at most this fraction of its entries is non-zero (text data: a
# partition's rows touch a part of the features, and fewer the more partitions there are).
SPARSE_DW_DENSITY = 0.4


class PartitionLost(RuntimeError):
    """A task met a partition that is not in the state the client expects (rebuilt by Dask
    after a lost worker, or a stale copy): the client restores its last snapshot."""


@dataclass(frozen=True)
class Setup:
    """What every partition needs to know of the whole problem, once its labels are merged."""

    solver: int
    labels: np.ndarray  # all classes, LIBLINEAR's order
    weighted_C: np.ndarray  # C x class weight, in ``labels`` order
    C: float
    bias: float
    n_features: int
    n_subproblems: int
    seed: int


@dataclass(frozen=True)
class RoundTask:
    """One round's instructions (the broadcast W travels beside it)."""

    round: int
    local_passes: int  # 0: evaluate only, no solve
    sigma: float
    # True: W's last column is a bias weight the client holds (``cocoa.py``, "The bias"): the
    # local solves keep it fixed and dW's last column is 0
    held_bias: bool = False
    # True: the partition also sends its parts of the dual objective at the dual point of the
    # round's W (``run_round``; -s 1, -s 7), a second lower bound beside alpha's
    dual_point: bool = False


@dataclass
class RoundResult(PartResult):
    """What a partition sends back after a round (a local solve of the partitioned dual): its
    parts of the objectives at the W the round started from (``loss``: sum_{i in k} C_i
    xi(y_i W[c]'x_i); ``dual_terms``: the dual's terms of these rows' alpha), and its dW
    (dense (n_subproblems, n_weights), or CSR when sparse; None when the round only
    evaluated), ``net`` (sum_i y_i alpha_i of these rows at the round's start, per
    sub-problem); ``seconds``: the task's compute time on the worker."""

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays sent back (what the round moved from this worker)."""
        size = self.loss.nbytes + self.dual_terms.nbytes + self.net.nbytes
        if self.point_W is not None:
            size += self.point_W.nbytes + self.point_terms.nbytes
        if self.point_mix is not None:
            size += self.point_mix.nbytes
        if isinstance(self.dW, np.ndarray):
            size += self.dW.nbytes
        elif self.dW is not None:
            size += self.dW.data.nbytes + self.dW.indices.nbytes + self.dW.indptr.nbytes
        return size


class Partition:
    """Rows of the training data held by one worker, and their dual variables.

    X : CSR (l, n_features) with sorted indices; y : (l,) labels as read; after ``setup``:
    class_index (l,) int32 in the setup's labels, alpha (n_subproblems, l) float64, round: the
    round this partition expects next (-1 before setup).
    """

    def __init__(self, index: int, X, y, where: str = "") -> None:
        self.index = int(index)
        self.X = X
        self.y = y
        self.where = where  # what was read, for messages
        self.setup: Setup | None = None
        self.class_index: np.ndarray | None = None
        self.alpha: np.ndarray | None = None
        self.round = -1
        # the rows' w'x_i without the bias, (n_subproblems, l), for the client's bias steps
        # before ``round`` (``bias_losses``)
        self.margins: np.ndarray | None = None


# ----------------------------------------------------------------------------- one partition


def from_arrays(index: int, X, y) -> Partition:
    """A partition from rows X and labels y in memory (scattered to the worker)."""
    return Partition(index, X, y, where=f"rows of partition {index}")


def from_shard(index: int, shard, n_jobs: int = 1) -> Partition:
    """A partition read by the worker itself from a shard of files (``shards.load_shard``),
    parsed in ``n_jobs`` threads."""
    from .shards import load_shard

    data = load_shard(shard, n_jobs=n_jobs)
    return Partition(index, data.X, data.y, where=shard.describe())


def from_shard_data(index: int, data) -> Partition:
    """A partition from a ``shards.ShardData`` computed on the worker (dask collections)."""
    return Partition(index, data.X, data.y, where=f"chunks of partition {index}")


def describe(part: Partition) -> dict:
    """Rows, columns and the labels in order of first appearance: what the client merges."""
    y = np.asarray(part.y)
    if y.shape[0]:
        _, first = np.unique(y, return_index=True)
        labels = y[np.sort(first)]
    else:
        labels = y[:0]
    return {
        "n_rows": int(part.X.shape[0]),
        "n_features": int(part.X.shape[1]),
        "nnz": int(part.X.nnz),
        "labels": labels,
    }


def setup(part: Partition, config: Setup) -> np.ndarray | None:
    """Check the rows, fix the columns to the whole data's, index the classes and start alpha.

    Returns this partition's part of W = sum_i y_i alpha_i x_i at the start (None where alpha
    starts at 0: the SVMs), shape (n_subproblems, n_weights).
    """
    X = as_csr(part.X, check_finite=True, n_jobs=1, trainable=True)
    if X.shape[1] > config.n_features:
        raise InvalidInputError(
            f"{part.where}: {X.shape[1]} features, more than the {config.n_features} planned"
        )
    if X.shape[1] < config.n_features:  # the same arrays, wider
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], config.n_features))
        X.has_sorted_indices = True
    part.X = X
    y = check_labels(part.y, X.shape[0])
    sorter = np.argsort(config.labels, kind="stable")
    position = np.searchsorted(config.labels, y, sorter=sorter)
    position = np.minimum(position, config.labels.shape[0] - 1)
    class_index = sorter[position].astype(np.int32)
    if np.any(config.labels[class_index] != y):
        raise InvalidInputError(f"{part.where}: a label that the planned classes do not have")
    part.class_index = class_index
    part.setup = config
    n_rows = X.shape[0]
    part.alpha = np.zeros((config.n_subproblems, n_rows))
    part.round = 0
    if LOSSES[config.solver] != LOSS_LOGISTIC:
        return None
    # the LR dual starts inside (0, C): LIBLINEAR's initial point
    W = np.zeros((config.n_subproblems, _n_weights(config)))
    for c in range(config.n_subproblems):
        y_c, C_c = _targets(part, c)
        part.alpha[c] = np.where(C_c > 0, np.minimum(INIT_FRACTION * C_c, INIT_CAP), 0.0)
        W[c] = primal_from_dual(
            X.indptr, X.indices, X.data, config.bias, y_c, part.alpha[c], W.shape[1]
        )
    return W


def run_round(part: Partition, W: np.ndarray, task: RoundTask) -> RoundResult:
    """One CoCoA+ round on this partition (module docstring): the objectives' parts at W,
    then (``task.local_passes`` > 0) the local solves and dW. W: (n_subproblems, n_weights)."""
    _expect(part, task.round)
    start = time.perf_counter()
    # the last bias step's margins, of this W's weights (the round's start); memory back after
    kept, part.margins = part.margins, None
    config = part.setup
    X = part.X
    loss = LOSSES[config.solver]
    n_sub = config.n_subproblems
    losses = np.zeros(n_sub)
    terms = np.zeros(n_sub)
    net = np.zeros(n_sub)
    targets = [_targets(part, c) for c in range(n_sub)]
    held = task.held_bias and config.bias >= 0
    point = task.dual_point and loss != LOSS_HINGE
    point_W = np.zeros((n_sub, W.shape[1])) if point else None
    point_terms = np.zeros(n_sub) if point else None
    point_mix = np.zeros((n_sub, 3)) if point and loss == LOSS_SQUARED_HINGE else None
    for c, (y_c, C_c) in enumerate(targets):
        if point or held:
            if held:  # w'x_i without the bias (the bias step's, or afresh) and B b added
                m = kept[c] if kept is not None else _margins(X, -1.0, W[c, :-1])
                m = m + config.bias * W[c, -1]
            else:
                m = _margins(X, config.bias, W[c])
            losses[c] = _loss_and_point(X, config.bias, y_c, C_c, m, loss, point_W, point_terms,
                                        c, part.alpha[c], point_mix)  # fmt: skip
        else:
            losses[c] = loss_sum(X.indptr, X.indices, X.data, config.bias, y_c, C_c, W[c], loss)
        terms[c] = float(dual_alpha_terms(C_c, part.alpha[c], loss))
        net[c] = float(y_c @ part.alpha[c])
    if task.local_passes == 0:
        return RoundResult(
            part.index, loss=losses, dual_terms=terms, net=net, point_W=point_W,
            point_terms=point_terms, point_mix=point_mix, seconds=time.perf_counter() - start,
        )  # fmt: skip
    spec = SOLVERS[config.solver]
    alpha_new = np.empty_like(part.alpha)
    dW = np.zeros((n_sub, W.shape[1]))
    n_iter = 0
    # a held bias: the rows without their bias feature, the held weight's share of every
    # margin an offset (the local problem is the dual of the primal with that weight fixed)
    bias = -1.0 if held else config.bias
    n_solved = W.shape[1] - 1 if held else W.shape[1]
    for c, (y_c, C_c) in enumerate(targets):
        options = _local_options(config.solver, task.sigma)
        if held:
            options["margin_offset"] = config.bias * float(W[c, -1])
        sub = Subproblem(
            X, y_c, C_c, eps=LOCAL_EPS, max_iter=task.local_passes, bias=bias,
            seed=round_seed(config.seed, task.round, part.index, c), alpha0=part.alpha[c],
            w0=W[c, :n_solved], options=options, index=c,
        )  # fmt: skip
        sol = spec.solve(sub, None)
        alpha_new[c] = sol.alpha
        n_iter = max(n_iter, sol.n_iter)
        dW[c, :n_solved] = primal_from_dual(
            X.indptr, X.indices, X.data, bias, y_c, sol.alpha - part.alpha[c], n_solved
        )
    # the state moves only once every sub-problem's solve is done
    part.alpha = alpha_new
    part.round = task.round + 1
    nonzero = np.count_nonzero(dW)
    sent = sp.csr_matrix(dW) if nonzero <= SPARSE_DW_DENSITY * dW.size else dW
    return RoundResult(
        part.index, loss=losses, dual_terms=terms, dW=sent, net=net, point_W=point_W,
        point_terms=point_terms, point_mix=point_mix, seconds=time.perf_counter() - start,
        figures={"local_passes": n_iter},
    )  # fmt: skip


def _margins(X, bias: float, w: np.ndarray) -> np.ndarray:
    out = np.empty(X.shape[0])
    margins(X.indptr, X.indices, X.data, bias, w, out)
    return out


def _loss_and_point(X, bias, y, C, m, loss, point_W, point_terms, c, alpha, point_mix) -> float:
    """This partition's loss at the rows' margins m (w'x_i, the bias's share included), and,
    where ``point_W`` is given, its parts of the dual objective at the dual point a of w
    (``objective.loss_and_dual_point``): sum_i y_i a_i x_i added to point_W[c] and the a_i's
    dual terms put in point_terms[c]. For the squared hinge, whose dual terms are quadratic,
    also point_mix[c] = (sum_i alpha_i, sum_i a_i, sum_i alpha_i a_i / (4 C_i)) with alpha
    the partition's own: with them the client finds the best dual point on the segment
    between the two (``partitioned.OuterSums.objectives``)."""
    n_rows = y.shape[0]
    a, a_c = np.empty(n_rows), np.empty(n_rows)
    total = loss_and_dual_point(m, y, C, loss, a, a_c)
    if point_W is None:
        return total
    add_rows(X.indptr, X.indices, X.data, bias, y * a, point_W[c])
    if loss == LOSS_LOGISTIC:
        point_terms[c] = lr_dual_alpha_terms(C, a, a_c)
    else:
        point_terms[c] = svm_dual_alpha_terms(C, a, loss)
    if point_mix is not None:
        costed = C > 0.0
        point_mix[c] = (alpha.sum(), a.sum(),
                        0.25 * float(np.sum(alpha[costed] * (a[costed] / C[costed]))))  # fmt: skip
    return total


def bias_losses(part: Partition, W: np.ndarray | None, b: np.ndarray, round: int) -> np.ndarray:
    """This partition's share of the loss as a function of the held bias weights: rows
    (L_c(b_c), L_c'(b_c), L_c''(b_c)) of shape (n_subproblems, 3), at the weights W[c, :-1]
    (their margins computed and kept; None: the margins kept by the last call, of the same
    round) and bias weights b (n_subproblems,). The client's Newton steps on b
    (``cocoa._Run._bias_step``) sum them over the partitions."""
    _expect(part, round)
    config = part.setup
    X = part.X
    n_sub = config.n_subproblems
    if W is not None:
        part.margins = np.empty((n_sub, X.shape[0]))
        for c in range(n_sub):
            margins(X.indptr, X.indices, X.data, -1.0, W[c, :-1], part.margins[c])
    elif part.margins is None:
        raise PartitionLost(f"partition {part.index} has no margins for a bias step")
    out = np.empty((n_sub, 3))
    for c in range(n_sub):
        y_c, C_c = _targets(part, c)
        out[c] = bias_loss_derivatives(
            part.margins[c], y_c, C_c, config.bias, float(b[c]), LOSSES[config.solver]
        )
    return out


def alpha_snapshot(part: Partition, round: int) -> np.ndarray:
    """A copy of alpha (n_subproblems, l) as it stands before ``round``."""
    _expect(part, round)
    return part.alpha.copy()


def restore(part: Partition, alpha: np.ndarray | None, round: int, config: Setup) -> bool:
    """Put a partition back to a snapshot: alpha (None: the start's) before ``round``."""
    if alpha is None or part.round < 0:
        setup(part, config)
    if alpha is not None:
        if alpha.shape != part.alpha.shape:
            raise PartitionLost(
                f"partition {part.index}: the snapshot's alpha is {alpha.shape}, the rows "
                f"{part.alpha.shape}"
            )
        part.alpha = np.array(alpha, dtype=np.float64, copy=True)
    part.round = int(round)
    part.margins = None
    return True


# ----------------------------------------------------------------------------- on a worker
#
# The calls the client makes with ``Client.run`` through ``serve`` (module docstring). Each
# takes the run's name and ``plan``: {worker address: what that worker does}, the same message
# for every worker called; a worker acts on its own entry. ``dask_worker`` is filled in by Dask.

# The partitions this process holds: {(worker address, run name): {partition index: Partition}}.
_HELD: dict[tuple[str, str], dict[int, Partition]] = {}

# The key of each run's lease in the worker's store: {(worker address, run name): key}.
_LEASES: dict[tuple[str, str], Any] = {}

# The task of each worker that drops the partitions of runs whose lease has gone.
_WATCHERS: dict[str, asyncio.Task] = {}

# How often a worker that holds partitions looks for their runs' leases.
LEASE_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class DataKey:
    """Rows already in the worker's Dask store, under ``key``: a (X, y) pair scattered by the
    client or a ``shards.ShardData`` computed from dask collections."""

    key: Any


async def hold(run: str, plan: dict, leases: dict, dask_worker=None) -> dict[int, dict]:
    """Build this worker's partitions: plan[address] = {index: a ``shards.Shard`` to read or a
    ``DataKey``}, held while leases[address] (a key in the worker's store) is there (module
    docstring). Returns {index: ``describe``} of each."""
    from .shards import Shard

    sources = plan[dask_worker.address]
    n_threads = max(1, int(dask_worker.state.nthreads))

    def build(index: int, source) -> Partition:
        if isinstance(source, Shard):
            return from_shard(index, source, n_jobs=n_threads)
        data = dask_worker.data[source.key]
        if isinstance(data, Failed):  # (the chunks' error, made where they were)
            raise data.error
        if isinstance(data, tuple):
            return from_arrays(index, *data)
        return from_shard_data(index, data)

    built = {}
    for index, source in sources.items():  # one at a time: each reads in all the threads
        built[index] = await _off_loop(dask_worker, build, index, source)
    _HELD.setdefault((dask_worker.address, run), {}).update(built)
    _LEASES[(dask_worker.address, run)] = leases[dask_worker.address]
    _watch_leases(dask_worker)
    return {index: describe(part) for index, part in built.items()}


async def setup_held(run: str, plan: dict, config: Setup, dask_worker=None) -> dict:
    """``setup`` on this worker's partitions plan[address] (a list of indices)."""
    parts = _claim(dask_worker, run, plan[dask_worker.address])
    return await _each(dask_worker, parts, lambda part: setup(part, config))


async def round_held(
    run: str, plan: dict, W: np.ndarray, task: RoundTask, dask_worker=None
) -> dict[int, RoundResult]:
    """``run_round`` on this worker's partitions plan[address], side by side in its threads."""
    parts = _claim(dask_worker, run, plan[dask_worker.address])
    return await _each(dask_worker, parts, lambda part: run_round(part, W, task))


async def bias_held(
    run: str, plan: dict, W: np.ndarray | None, b: np.ndarray, round: int, dask_worker=None
) -> dict[int, np.ndarray]:
    """``bias_losses`` on this worker's partitions plan[address]."""
    parts = _claim(dask_worker, run, plan[dask_worker.address])
    return await _each(dask_worker, parts, lambda part: bias_losses(part, W, b, round))


async def snapshot_held(run: str, plan: dict, round: int, dask_worker=None) -> dict:
    """``alpha_snapshot`` of this worker's partitions plan[address]."""
    parts = _claim(dask_worker, run, plan[dask_worker.address])
    return {part.index: alpha_snapshot(part, round) for part in parts}


async def restore_held(run: str, plan: dict, round: int, config: Setup, dask_worker=None) -> dict:
    """``restore`` this worker's partitions: plan[address] = {index: alpha or None}."""
    alphas = plan[dask_worker.address]
    parts = _claim(dask_worker, run, list(alphas))
    return await _each(
        dask_worker, parts, lambda part: restore(part, alphas[part.index], round, config)
    )


async def release_held(run: str, dask_worker=None) -> int:
    """Drop the run's partitions from this worker; returns how many it held."""
    return _drop(dask_worker.address, run)


def _drop(address: str, run: str) -> int:
    _LEASES.pop((address, run), None)
    return len(_HELD.pop((address, run), {}))


def _watch_leases(dask_worker) -> None:
    """Start this worker's ``_drop_orphans`` unless it runs (called on the event loop)."""
    watcher = _WATCHERS.get(dask_worker.address)
    if watcher is None or watcher.done():
        loop = asyncio.get_running_loop()
        _WATCHERS[dask_worker.address] = loop.create_task(_drop_orphans(dask_worker))


async def _drop_orphans(dask_worker) -> None:
    """Every ``LEASE_POLL_SECONDS``, drop the partitions of each run whose lease has left
    this worker's store (its client is gone); end once the worker holds none. Runs on the
    worker's event loop, as ``hold`` does: nothing comes between the last look at ``_HELD``
    and the end, so a ``hold`` never finds a watcher about to end."""
    address = dask_worker.address
    while True:
        runs = [run for held_by, run in _HELD if held_by == address]
        if not runs:
            break
        closing = dask_worker.status.name in ("closing", "closed", "failed")
        for run in runs:
            key = _LEASES.get((address, run))
            if closing or key is None or key not in dask_worker.data:
                _drop(address, run)
        await asyncio.sleep(LEASE_POLL_SECONDS)
    _WATCHERS.pop(address, None)


def held_counts() -> dict[str, int]:
    """{run name: partitions} this process holds (what tests and benchmarks count)."""
    counts: dict[str, int] = {}
    for (_, run), parts in _HELD.items():
        counts[run] = counts.get(run, 0) + len(parts)
    return counts


@dataclass(frozen=True)
class Failed:
    """A worker call's own error, sent back as a value: raised, it would also be logged by
    the worker with a traceback on its console (the client raises it, in one line)."""

    error: BaseException


# What ``serve`` does, by name.
ACTIONS = {
    "hold": hold,
    "setup": setup_held,
    "round": round_held,
    "bias": bias_held,
    "snapshot": snapshot_held,
    "restore": restore_held,
    "release": release_held,
}


async def serve(action: str, *args, dask_worker=None):
    """The one function the client runs on the workers: ``ACTIONS[action](*args)``; its
    error comes back as ``Failed``."""
    try:
        return await ACTIONS[action](*args, dask_worker=dask_worker)
    except Exception as exc:  # noqa: BLE001 - every error goes back to the client
        return Failed(exc)


def _claim(dask_worker, run: str, indices) -> list[Partition]:
    held = _HELD.get((dask_worker.address, run), {})
    missing = [index for index in indices if index not in held]
    if missing:
        raise PartitionLost(
            f"worker {dask_worker.address} does not hold partitions {missing} (restarted?)"
        )
    return [held[index] for index in indices]


async def _each(dask_worker, parts: list[Partition], func) -> dict:
    """{part.index: func(part)} with the parts side by side in the worker's threads."""
    results = await asyncio.gather(*(_off_loop(dask_worker, func, part) for part in parts))
    return {part.index: result for part, result in zip(parts, results, strict=True)}


async def _off_loop(dask_worker, func, *args):
    """func(*args) in the worker's thread pool: the event loop stays free to answer the
    scheduler's heartbeats while the Numba kernels (which release the GIL) run."""
    executor = dask_worker.executors.get("default")
    return await asyncio.get_running_loop().run_in_executor(executor, func, *args)


# ----------------------------------------------------------------------------- helpers


def round_seed(seed: int, round: int, partition: int, subproblem: int) -> int:
    """The local solve's seed: a function of (round, partition, sub-problem) only, so that a
    run resumed from a snapshot replays the same rounds whatever worker holds a partition."""
    return int(seed) + 7919 * int(round) + 104729 * int(partition) + 1299709 * int(subproblem)


def _local_options(solver: int, sigma: float) -> dict:
    options = {"sigma": sigma, "objectives": False}
    if LOSSES[solver] == LOSS_LOGISTIC:
        options["inner_eps"] = LOCAL_INNER_EPS
    return options


def _expect(part: Partition, round: int) -> None:
    if part.round != round:
        raise PartitionLost(
            f"partition {part.index} is at round {part.round}, round {round} was expected "
            "(rebuilt after a lost worker, or a stale copy)"
        )


def _n_weights(config: Setup) -> int:
    return config.n_features + (1 if config.bias >= 0 else 0)


def _targets(part: Partition, c: int) -> tuple[np.ndarray, np.ndarray]:
    """(+1/-1 targets, per-row costs) of sub-problem c on these rows (LIBLINEAR's
    one-vs-rest, ``problems.one_vs_rest``)."""
    config = part.setup
    return one_vs_rest(part.class_index, c, config.weighted_C, config.C, None)
