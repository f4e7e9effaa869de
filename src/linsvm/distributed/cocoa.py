"""Distributed training on Dask by CoCoA+: the client side, the rounds.

CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtarik, Takac, ICML 2015, "Adding vs. averaging in
distributed primal-dual optimization") for the SVM duals (-s 1, -s 3) and the logistic
regression dual (-s 7). The rows are split into K partitions, each held by a Dask worker with
its dual variables (``_partition.Partition``). A round:

1. the client broadcasts W (n_subproblems, n_weights), W[c] = sum over all rows of
   y_i alpha_i x_i for one-vs-rest sub-problem c;
2. each partition computes its parts of P(W) and D(alpha) (the round's start), then runs the
   same dual coordinate descent kernel as ``linsvm.train`` on its rows only, from its alpha and
   W, with the local problem's quadratic term scaled by sigma' = K, for ``local_passes``
   passes, and returns dW_k (every sub-problem shares the round: one task, one read of the
   rows);
3. the client adds the dW_k (CoCoA+'s adding, gamma = 1: W += sum_k dW_k) and reports the
   round's gap.

Why sigma' = K: with the partitions' changes added, the whole dual changes by at most the sum
of the local problems' changes when each local problem charges sigma' >= K ||A_k dalpha||^2
(the paper's safe bound), so the dual improves every round and the added updates never
overshoot; averaging (gamma = 1/K) is safe too but K times slower.

**The bias.** With a bias feature (``bias`` >= 0, LIBLINEAR's -B: a feature of value B in
every row, its weight regularised as the others), the bias weight sum_i y_i alpha_i B is one
number every partition moves, and CoCoA+'s sigma' charges each partition K times its own share
of it: a move of the dual variables that leaves the bias weight as it is but shifts sum y alpha
from one partition to another costs each local problem as if the others moved theirs the same
way, and is made only slowly. On rows of unit norm, where a bias of 1 is half of every row, the
rounds went up 20-60 times (800 text rows, 4 partitions, -s 1 to a relative gap of 1e-3: 15
rounds without a bias, 847 with -B 1; 16 partitions: over 1,000; the partitions' rounds run
in one process, uncapped).

``hold_bias=True`` (-s 1, -s 7) has the client hold the bias weight b itself, as the
primal's: the partitions' local problems are the duals of the primal with b fixed (the rows
without their bias feature, every margin offset by B b; ``margin_offset`` of the dual
solvers), which no longer couple through it, and after each round's dW is added the client
sets b to the minimiser of P(w, b) over b for the new w (``_bias_step``: Newton steps on that
convex function of one variable, the partitions summing its loss part and two derivatives
from the margins they keep, one call each, 3-4 a round). This is block coordinate descent of
P over (w, b), w's block by the CoCoA+ round, and it converges to the optimum for a loss with a
continuous derivative; the hinge's blocks can both be optimal at a pair that is not (-s 3
keeps the bias in the dual). Measured (``benchmarks/bench_distributed_bias.py``, 2 workers,
rounds to a relative gap of 1e-3): the 800 rows above 18 rounds (16 partitions: 59) against
over 200, reuters -s 1 131 against over 200; -s 7 4 and 25 rounds against 137 and 57. But block
descent is slow where a feature is nearly constant over the rows, as the bias is: on
pypi-recent (4 partitions) -s 1 stood at a gap of 9e-3 after 200 rounds where the bias in the
dual reached 1e-3 in 197, and -s 7 took 94 rounds against 17. So it is an option, off by
default. The gap stays a certificate: P is evaluated at the held b, D at alpha with its own
bias weight B sum_i y_i alpha_i (the partitions report sum_i y_i alpha_i, ``net``), and D <=
P* for every alpha, so P - D >= P - P* whatever b is; it is looser than P - P* by about
(b - B sum_i y_i alpha_i)^2 / 2, which on pypi-recent kept the gap 45 times the relative
accuracy (9e-3 against 2e-4).

**Stopping rule.** The duality gap of the round's start, summed from the partitions' parts:
sub-problem c has P_c(W) = 1/2 ||W[c]||^2 + sum_k loss_k and D_c(alpha) = -(1/2 ||W[c]||^2 +
sum_k terms_k), and the run stops once every sub-problem has
``P_c - D_c <= eps * P_c``; since D_c <= P*_c, the model's relative primal accuracy
(P_c - P*_c) / P*_c is then at most eps / (1 - eps). That W, the one the gap certifies, is the
model returned. (Block minimisation, ``outofcore.py``, stops on LIBLINEAR's projected-gradient
measure over all rows and reports the same gap beside it; here the gap is the rule because it
is what the partitions can sum exactly and cheaply, and it means the same on every data set.)
After ``max_rounds`` solving rounds, one more round evaluates the last W without solving.

**Fault tolerance.** The partitions live in the workers' processes, outside Dask's task
graph, and the client reaches them with ``Client.run`` (``_partition``): Dask never copies one
to another worker or rebuilds one from its lineage, and a call on a lost worker fails at once
instead of waiting for that worker. Every ``snapshot_every`` rounds the client gathers alpha
from the partitions and keeps it with that round's W. When a call fails because a worker is
gone (its connection closed) or no longer holds its partitions (restarted), those partitions
are built again from their source on the workers left (shards read again, in-memory rows
scattered again, collections computed again), every partition's alpha is put back to the
snapshot, W to the snapshot's W, and the run continues from that round. The local solves'
seeds depend only on (round, partition, sub-problem) and dW is summed in partition order, so
the resumed run replays the same rounds: its model is the uninterrupted run's.

What counts as lost, and what the run does (``tests/test_distributed_faults.py``):

- a worker killed, or several at once: its connection closes, the call fails at once, and its
  partitions are rebuilt on the workers left, a few to each. A worker lost while a recovery
  sends it rows is one more lost worker of the same recovery (``MAX_REBUILDS`` attempts).
  When no worker is left, the recovery waits up to ``REPLACEMENT_WAIT_SECONDS`` for one (a
  nanny restarts a killed worker in seconds) and otherwise ends the run with a one-line
  ``DistributedError``; so does a run that would need more than ``MAX_RECOVERIES``.
- a worker paused or hung (SIGSTOP, a swapping machine): it still holds its connections, so
  no call fails until the scheduler gives up on it. That is Dask's heartbeat timeout, the
  scheduler's ``distributed.scheduler.worker-ttl`` (default 5 minutes; at least 10
  heartbeats), after which the scheduler has its nanny kill and restart it (or removes it)
  and the round's call fails as for a killed worker. linsvm keeps no second, shorter clock:
  a worker busy with a long round answers heartbeats (the solve runs off its event loop), so
  only a worker that has stopped answering is given up on; lower worker-ttl to give up sooner.
- the client killed (or disconnected) mid-run: the workers drop the run's partitions by
  themselves as soon as the scheduler sees the client go, through the run's leases
  (``_partition``, "Leases").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
import signal
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from distributed import wait

from .. import _memory, solvers
from ..data import as_csr, check_labels, group_labels, is_integer
from ..errors import InvalidInputError, LinsvmError
from ..interrupts import stop_on_signals
from ..model import Model
from ..objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from ..partitioned import LocalTask, PartitionedDual, added, relative_gap
from ..problems import (
    check_classes,
    class_costs,
    n_weight_vectors,
    partition_solutions,
    warn_at_cap,
    warn_interrupted,
)
from ..solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, asks_to_stop
from ..solvers._random import numpy_generator
from . import _partition
from ._partition import LOSSES, DataKey, PartitionLost, RoundTask, Setup

# The relative duality gap the run stops at (``eps``), by default.
DEFAULT_EPS = 1e-3
# Passes of the local solver over its rows per round.
DEFAULT_LOCAL_PASSES = 1
DEFAULT_MAX_ROUNDS = 200
# Rounds between two snapshots of alpha (each moves every alpha to the client once).
DEFAULT_SNAPSHOT_EVERY = 10
# Recoveries from lost workers allowed in one run before it gives up.
MAX_RECOVERIES = 10
# Attempts at rebuilding lost partitions in one recovery (workers may go on failing).
MAX_REBUILDS = 3
# Seconds a recovery waits for a worker to rebuild on when every worker was lost (a nanny
# restarts a killed worker in a few seconds; an autoscaler may take longer).
REPLACEMENT_WAIT_SECONDS = 30.0
# The client's bias steps (``_Run._bias_step``): calls at most a round, and how close to its
# minimiser, relative to 1 + |b|, the held bias weight is taken.
BIAS_MAX_EVALUATIONS = 50
BIAS_TOLERANCE = 1e-10
# The held bias weight's extrapolation (``_bias_step``): taken where the last two rounds' steps
# shrank by ratios below BIAS_RATIO_MAX that agree within BIAS_RATIO_AGREEMENT (relatively),
# the step multiplied by at most BIAS_EXTRAPOLATION_MAX.
BIAS_RATIO_MAX = 0.98
BIAS_RATIO_AGREEMENT = 0.1
BIAS_EXTRAPOLATION_MAX = 20.0
# Seconds a "local:N" cluster's workers have to start (1-3 s each, as a rule; a worker that
# fails as it starts is restarted by its nanny, and the wait never ended).
LOCAL_WORKERS_START_SECONDS = 60.0


class DistributedError(LinsvmError):
    """Distributed training could not go on (e.g. workers kept being lost)."""


@dataclass
class RoundProgress:
    """One round, for progress lines and the ``on_round`` hook.

    ``primal`` and ``dual`` are per sub-problem at the W the round started from (the W a stop
    would return); ``gap`` is their differences summed, ``relative_gap`` the stopping rule's
    measure (max over sub-problems of gap_c / P_c). ``seconds``: the round's wall time on the
    client; ``compute_seconds``: the slowest partition's task; ``bytes_sent`` /
    ``bytes_received``: what the round moved between the client and the workers (W broadcast
    to each worker; dW and the objectives' parts back; snapshots and rebuilds included).
    """

    round: int
    primal: list[float]
    dual: list[float]
    gap: float
    relative_gap: float
    seconds: float
    compute_seconds: float
    bytes_sent: int
    bytes_received: int
    n_partitions: int
    n_workers: int
    elapsed: float
    events: list[str] = field(default_factory=list)

    @property
    def objective(self) -> float:
        """The primal objective summed over the sub-problems."""
        return float(sum(self.primal))


def train_cocoa(
    source,
    y=None,
    *,
    client,
    solver: int | str = 1,
    C: float = 1.0,
    eps: float | None = None,
    bias: float = -1.0,
    class_weight: Mapping | None = None,
    n_partitions: int | None = None,
    local_passes: int = DEFAULT_LOCAL_PASSES,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    seed: int = 1,
    verbose: bool = False,
    on_round: Callable[[RoundProgress], bool | None] | None = None,
    labels_check: Callable[[np.ndarray], object] | None = None,
    width_check: Callable[[int], object] | None = None,
    hold_bias: bool = False,
) -> Model:
    """Train -s 1, -s 3 or -s 7 on a Dask cluster by CoCoA+ (module docstring).

    Parameters
    ----------
    source : the training data, one of
        - X, an array or sparse matrix of shape (n_samples, n_features), with ``y`` its labels
          (n_samples,): scattered to the workers once (it passes through the client), each
          partition a random (seeded) sample of the rows;
        - a path (str or PathLike) of a LIBSVM text file (plain or gz/bz2/xz) or of a binary
          cache (``linsvm cache``), or a list of such paths, with ``y=None``: split by
          ``shards.plan_shards`` on the client (file sizes only) and read by the workers;
        - a dask array / dataframe of rows with ``y`` a dask array / series of labels: each
          partition built from chunks on the workers (``shards.shards_from_collection``).
        Files and collections are split into consecutive rows: shuffle data sorted by label
        first (CoCoA+ needs many more rounds when a partition holds one class).
    client : dask.distributed.Client
    solver : 1 (L2-loss SVM dual), 3 (L1-loss SVM dual) or 7 (logistic regression dual).
    C, bias, class_weight : as ``linsvm.train`` (class_weight: {label: weight}).
    eps : the relative duality gap to stop at (default ``DEFAULT_EPS`` = 1e-3): every
        sub-problem's gap at most eps times its primal objective. Not LIBLINEAR's -e.
    n_partitions : partitions of the rows (default: the number of workers).
    local_passes : passes of the local solver over its rows per round.
    max_rounds : solving rounds at most.
    snapshot_every : rounds between snapshots of alpha for recovery from a lost worker.
    seed : seeds every local solve (with the round, partition and sub-problem).
    verbose : a progress line per round on stderr.
    on_round : called with a ``RoundProgress`` after each round; returning False stops.
    hold_bias : with a bias (bias >= 0) and -s 1 or -s 7: the client holds the bias weight
        and the partitions solve the dual with it fixed (module docstring, "The bias"): far
        fewer rounds where the bias is a large part of rows whose features are unlike a
        constant, far more where some feature is nearly one. False (default): the bias is a
        feature of the dual as the others. -s 3 keeps it there either way.
    labels_check, width_check : called with the data's labels (in LIBLINEAR's order) and its
        number of features once the workers have read it, before any round: either may
        refuse them by raising (the command line's model files hold integer labels and at
        most 2^31 - 1 features). Weights too large for this process's memory are refused
        then too.

    Returns
    -------
    Model: the same as ``linsvm.train`` gives (labels in LIBLINEAR's order, one weight vector
    for two classes, bias weights), with one ``Solution`` per sub-problem (primal, dual and
    gap at the returned W; ``n_iter`` the rounds; ``alpha`` None: it stays on the workers).
    Ctrl-C (or on_round returning False) stops after the current round and returns the last
    evaluated W with a ``TrainingInterrupted`` warning. The workers drop the run's rows and
    dual variables when it ends, however it ends; when the client process dies mid-run, they
    drop them a moment after the scheduler sees it go (the run's leases).
    """
    spec = solvers.get_solver(solver)
    if spec.number not in LOSSES:
        raise InvalidInputError(
            f"distributed training (CoCoA+) trains -s 1, -s 3 and -s 7, not {spec.label}"
        )
    params = solvers.check_parameter(spec.number, C, 1.0, bias, None)
    eps = _positive_float(DEFAULT_EPS if eps is None else eps, "eps")
    if eps >= 1.0:  # (the gap is 1 at alpha = 0: the run would stop before its first round)
        raise InvalidInputError(f"eps, the relative duality gap to stop at, must be < 1, "
                                f"got {eps:g}")  # fmt: skip
    local_passes = _count(local_passes, "local_passes")
    max_rounds = _count(max_rounds, "max_rounds")
    snapshot_every = _count(snapshot_every, "snapshot_every")
    check_client(client)
    n_workers = len(_workers_soon(client))
    if n_workers == 0:
        raise InvalidInputError(
            f"the Dask cluster has no workers (waited {REPLACEMENT_WAIT_SECONDS:g} s for one)"
        )
    if n_partitions is None:
        n_partitions = n_workers
    n_partitions = _count(n_partitions, "n_partitions")
    run = _Run(client, spec.number, params, class_weight, seed, verbose, on_round)
    run.labels_check, run.width_check = labels_check, width_check
    run.hold_bias = bool(hold_bias)
    try:
        run.plan(source, y, n_partitions)
        return run.train(eps, local_passes, max_rounds, snapshot_every)
    finally:
        run.release()


class _Run:
    """The state of one distributed run on the client: the partitions' futures, W, the last
    snapshot, and the counters of what was moved."""

    def __init__(self, client, solver: int, params, class_weight, seed, verbose, on_round):
        self.client = client
        self.solver = solver
        self.params = params
        self.class_weight = class_weight
        self.seed = int(seed)
        self.verbose = verbose
        self.on_round = on_round
        self.name = f"linsvm-{uuid.uuid4().hex[:8]}"
        self.sources: list[Callable[[str], tuple]] = []  # partition k's rows, for a worker
        self.home: list[str] = []  # the worker holding partition k
        self.leases: dict[str, Any] = {}  # each worker given partitions: the run's lease there
        self.dead: set[str] = set()  # workers that stopped answering
        self.config: Setup | None = None
        self.n_features: int | None = None  # known before reading: in-memory X's columns
        self.labels: np.ndarray | None = None  # likewise its labels, in LIBLINEAR's order
        self.sent = 0
        self.received = 0
        self.bias_evaluations = 0  # calls of the client's bias steps (``_bias_step``)
        # the last round's step of the held bias weights and its ratio to the one before
        # (``_bias_step``'s extrapolation; part of a snapshot)
        self.bias_trend: tuple[np.ndarray, np.ndarray] | None = None
        self.bias_extrapolations = 0
        self.hold_bias = False  # asked to hold the bias weight (``held_bias``: and can)
        self.labels_check: Callable[[np.ndarray], object] | None = None
        self.width_check: Callable[[int], object] | None = None

    # ------------------------------------------------------------------------- partitions

    def plan(self, source, y, n_partitions: int) -> None:
        """Decide how each partition is built (``sources``), build them on the workers, merge
        the labels and set every partition up."""
        import dask

        if dask.is_dask_collection(source):
            self._plan_collection(source, y, n_partitions)
        elif y is None:
            self._plan_files(source, n_partitions)
        else:
            self._plan_arrays(source, y, n_partitions)
        workers = _workers(self.client)
        self.home = [""] * len(self.sources)
        try:
            infos = self._build({k: workers[k % len(workers)] for k in range(len(self.sources))})
        except _WorkersLost as exc:
            raise DistributedError(f"lost workers while reading the data: {exc}") from exc
        infos = [infos[k] for k in range(len(self.sources))]
        n_rows = sum(info["n_rows"] for info in infos)
        if n_rows == 0:
            raise InvalidInputError("no training data: 0 rows")
        n_features = max(info["n_features"] for info in infos)
        if self.n_features is not None:
            n_features = self.n_features
        if self.labels is None:  # the order of first appearance over the partitions in order
            seen = [info["labels"] for info in infos if info["labels"].shape[0]]
            self.labels, _ = group_labels(np.concatenate(seen))
        labels = self.labels
        one_class = [k for k, info in enumerate(infos) if info["labels"].shape[0] == 1]
        if one_class and labels.shape[0] >= 2:
            warnings.warn(
                f"{len(one_class)} of {len(infos)} partitions hold rows of one class only (is "
                "the data in label order?): CoCoA+ needs many more rounds when a partition is "
                "unlike the whole data; shuffle the rows first",
                UserWarning,
                stacklevel=3,
            )
        check_classes(labels)
        if self.labels_check is not None:
            self.labels_check(labels)
        if self.width_check is not None:
            self.width_check(int(n_features))
        _memory.check_weights_fit(n_weight_vectors(labels.shape[0]),
                                  int(n_features) + (1 if self.params.bias >= 0 else 0),
                                  _W_COPIES, "a round")  # fmt: skip
        params = self.params
        self.config = Setup(
            solver=self.solver,
            labels=labels,
            weighted_C=class_costs(labels, params.C, self.class_weight),
            C=params.C,
            bias=params.bias,
            n_features=int(n_features),
            n_subproblems=n_weight_vectors(labels.shape[0]),
            seed=self.seed,
        )
        self.n_rows = n_rows
        self.n_nonzeros = sum(info["nnz"] for info in infos)
        # (a partition of no rows changes nothing: CoCoA+'s K counts the others)
        self.n_holding_rows = sum(1 for info in infos if info["n_rows"] > 0)
        try:
            parts_W = self._call("setup", self._by_worker(), self.config)
        except _WorkersLost as exc:
            raise DistributedError(f"lost workers while setting up: {exc}") from exc
        self.W0 = np.zeros((self.config.n_subproblems, self.n_weights))
        for k in range(len(self.sources)):  # in partition order: the same sum every run
            if parts_W[k] is not None:
                self.W0 += parts_W[k]
                self.received += parts_W[k].nbytes

    @property
    def n_weights(self) -> int:
        return self.config.n_features + (1 if self.config.bias >= 0 else 0)

    # Each source is a function of a worker's address that puts partition k's rows within
    # that worker's reach: it returns the worker that will hold them, what ``_partition.hold``
    # builds them from (a shard, or a key in the worker's Dask store) and the futures to
    # release once they are held.

    def _plan_arrays(self, X, y, n_partitions: int) -> None:
        # (every check here, where the rows are numbered as the caller's; a partition's
        # would name a row of its own)
        X = as_csr(X, trainable=True)
        y = check_labels(y, X.shape[0])
        self.n_features = X.shape[1]
        # Rows go to the partitions at random (seeded), each partition's in their order.
        # CoCoA+ is slow when a partition is unlike the whole: contiguous ranges of data
        # sorted by label give partitions of one class (w8a, -s 3, 2 partitions: about 1000
        # rounds to a relative gap of 1e-3, 146 with the rows shuffled).
        self.labels, _ = group_labels(y)  # of the rows as given, not as partitioned
        n_rows = X.shape[0]
        order = numpy_generator(self.seed).permutation(n_rows)
        pieces = np.array_split(order, max(1, min(n_partitions, n_rows)))

        def source(rows: np.ndarray) -> Callable[[str], tuple]:
            def scatter(worker: str) -> tuple:
                part = (X[rows], y[rows])
                self.sent += _nbytes(part[0]) + part[1].nbytes
                [future] = self.client.scatter([part], workers=[worker], hash=False)
                return worker, DataKey(future.key), [future]

            return scatter

        self.sources = [source(np.sort(rows)) for rows in pieces]

    def _plan_files(self, source, n_partitions: int) -> None:
        from .shards import plan_shards

        if isinstance(source, (str, os.PathLike)) or (
            isinstance(source, Sequence) and not isinstance(source, (str, bytes))
        ):
            shards = plan_shards(source, n_partitions)
            compressed = sorted({part.path for shard in shards for part in shard.parts
                                 if part.kind == "compressed"})  # fmt: skip
            if compressed and len(shards) < n_partitions:
                warnings.warn(
                    f"{len(shards)} partitions of the {n_partitions} asked: a compressed file "
                    f"is read whole by one worker ({os.path.basename(compressed[0])}"
                    f"{' and others' if len(compressed) > 1 else ''}); decompress it, or make "
                    "a cache of it (linsvm cache), for the rows to be cut into more",
                    UserWarning,
                    stacklevel=4,
                )
        else:
            raise InvalidInputError(
                "source must be X with y, a path or list of paths of LIBSVM files or of a "
                f"cache, or dask collections; got {type(source).__name__} without y"
            )
        self.sources = [lambda worker, shard=shard: (worker, shard, []) for shard in shards]

    def _plan_collection(self, X, y, n_partitions: int) -> None:
        from .shards import shards_from_collection

        if y is None:
            raise InvalidInputError("a dask collection of rows needs y, a dask collection too")
        shards = shards_from_collection(X, y, n_partitions, errors_as_values=True)

        def source(shard) -> Callable[[str], tuple]:
            def compute(worker: str) -> tuple:
                # the chunks go from wherever the collections are to the worker
                data = self.client.compute(shard, workers=[worker], allow_other_workers=True)
                wait([data])
                if data.status == "error":
                    data.result()  # raises the chunks' error
                holders = self.client.who_has([data])[data.key]
                return (worker if worker in holders else holders[0]), DataKey(data.key), [data]

            return compute

        self.sources = [source(shard) for shard in shards]

    def _build(self, assignment: Mapping[int, str]) -> dict[int, dict]:
        """Build partitions {k: worker} from their sources; returns {k: their description}.
        Raises ``_WorkersLost`` when a worker is lost before its rows reach it."""
        plan: dict[str, dict[int, Any]] = {}
        futures = []
        try:
            for k, worker in assignment.items():
                try:
                    worker, source, held = self.sources[k](worker)
                    futures.extend(held)
                    self._lease(worker)
                except Exception as exc:
                    # a scatter to a worker that died meanwhile fails in several ways (a
                    # closed connection, an unknown worker, no valid worker)
                    if not _is_lost(exc) and worker in _workers(self.client):
                        raise
                    raise _WorkersLost({worker: exc}) from exc
                plan.setdefault(worker, {})[k] = source
                self.home[k] = worker
            leases = {worker: self.leases[worker].key for worker in plan}
            return self._call("hold", plan, leases)
        finally:
            for future in futures:  # the partition holds the same arrays: no copy kept
                future.release()

    def _lease(self, worker: str) -> None:
        """Give ``worker`` the run's lease unless it has it: a small value scattered to it,
        whose future this client holds until ``release``. The worker drops the run's
        partitions once the value leaves its store, which Dask makes happen when this client
        releases it or disconnects (``_partition``, "Leases")."""
        lease = self.leases.get(worker)
        if lease is None or lease.status != "finished":  # lost with a restarted worker
            self.leases[worker] = self.client.scatter(self.name, workers=[worker], hash=False)

    def _by_worker(self) -> dict[str, list[int]]:
        plan: dict[str, list[int]] = {}
        for k, worker in enumerate(self.home):
            plan.setdefault(worker, []).append(k)
        return plan

    def _call(self, action: str, plan: Mapping[str, Any], *args) -> dict:
        """``_partition.ACTIONS[action](name, plan, *args)`` on the workers of ``plan``
        (``Client.run``: no task, so nothing of a partition is ever moved or copied by Dask);
        their replies merged. Raises ``_WorkersLost`` naming the workers that could not answer
        for their partitions, and a worker's own error (a bad file, say) as it is."""
        replies = self.client.run(
            _partition.serve, action, self.name, dict(plan), *args, workers=list(plan),
            on_error="return",
        )  # fmt: skip
        results: dict = {}
        lost: dict[str, BaseException] = {}
        for worker in plan:
            reply = replies.get(worker, PartitionLost(f"no reply from {worker}"))
            if isinstance(reply, _partition.Failed):
                reply = reply.error
            if isinstance(reply, BaseException):
                if not _is_lost(reply):
                    raise reply
                lost[worker] = reply
            else:
                results.update(reply)
        if lost:
            raise _WorkersLost(lost)
        return results

    # ------------------------------------------------------------------------- rounds

    def train(self, eps: float, local_passes: int, max_rounds: int, snapshot_every: int):
        config = self.config
        n_sub = config.n_subproblems
        # CoCoA+'s adding with the safe sigma' = gamma K, gamma = 1, K the partitions that
        # hold rows (empty ones, e.g. a small file cut in more byte ranges than it has lines,
        # made the steps smaller: 60 rounds against 31 with 4 of 8 partitions empty)
        driver = PartitionedDual(_WorkerPlace(self), added(float(self.n_holding_rows)),
                                 self.W0.copy())  # fmt: skip
        held_bias = config.bias if self.held_bias else None
        # (round, (W, alpha per partition; None: the start's))
        snapshot = (0, driver.snapshot(None), self.bias_trend)
        recoveries = 0
        events: list[str] = []
        started = time.perf_counter()
        primal = dual = np.full(n_sub, np.nan)
        W = driver.W
        reason = MAX_ITER
        t = 0
        with stop_on_signals() as stop:
            while True:
                solving = t < max_rounds
                round_start = time.perf_counter()
                sent0, received0 = self.sent, self.received
                try:
                    sums = driver.outer(LocalTask(t, local_passes if solving else 0))
                    if solving and self.held_bias:
                        self._bias_step(driver.W, t + 1)
                    gathered = None
                    if solving and (t + 1) % snapshot_every == 0:
                        gathered = self._gather_alpha(t + 1)
                except _WorkersLost as exc:
                    recoveries += 1
                    if recoveries > MAX_RECOVERIES:
                        raise DistributedError(
                            f"gave up after {MAX_RECOVERIES} recoveries from lost workers ({exc})"
                        ) from exc
                    lost_round, (t, state, self.bias_trend) = t, snapshot
                    self._recover(t, driver.restore(state), exc)
                    events.append(
                        f"recovered from lost workers at round {lost_round} ({exc}): "
                        f"resumed from the snapshot of round {t}"
                    )
                    continue
                # the round's start: the W its objectives are of, and the one a stop returns
                W = sums.W_start
                primal, dual = sums.objectives(held_bias)
                gaps = primal - dual
                relative = relative_gap(primal, dual)
                if relative <= eps:
                    reason = CONVERGED
                if gathered is not None and reason != CONVERGED:
                    snapshot = (t + 1, driver.snapshot(gathered), self.bias_trend)
                    events.append(f"snapshot of alpha before round {t + 1}")
                progress = RoundProgress(
                    round=t,
                    primal=primal.tolist(),
                    dual=dual.tolist(),
                    gap=float(gaps.sum()),
                    relative_gap=relative,
                    seconds=time.perf_counter() - round_start,
                    compute_seconds=sums.slowest,
                    bytes_sent=self.sent - sent0,
                    bytes_received=self.received - received0,
                    n_partitions=len(self.home),
                    n_workers=len(_workers(self.client)),
                    elapsed=time.perf_counter() - started,
                    events=events,
                )
                events = []
                if self.verbose:
                    _print_round(progress)
                go_on = self.on_round is None or not asks_to_stop(self.on_round(progress))
                if reason == CONVERGED or not solving:
                    break
                if stop.requested or not go_on:
                    reason = INTERRUPTED
                    break
                t += 1
        if reason == INTERRUPTED:
            warn_interrupted(iterate="the last evaluated iterate", stacklevel=4)
        elif reason == MAX_ITER:
            warn_at_cap(max_rounds, solvers.get_solver(self.solver).label, " on the cluster",
                        "raise max_iter (rounds) or eps", stacklevel=4)  # fmt: skip
        return self._model(W, primal, dual, t, reason, stop.signal)

    @property
    def held_bias(self) -> bool:
        """Whether the client holds the bias weight (module docstring, "The bias")."""
        return self.hold_bias and self.config.bias >= 0 and LOSSES[self.solver] != LOSS_HINGE

    @property
    def dual_point(self) -> bool:
        """Whether the partitions also sum the dual objective at the dual point of each
        round's W (module docstring, "Stopping rule"): for -s 7 always, for -s 1 with the
        bias held; -s 1's own alpha is as good a bound otherwise, -s 3's point is not one
        that converges."""
        loss = LOSSES[self.solver]
        return loss == LOSS_LOGISTIC or (loss == LOSS_SQUARED_HINGE and self.held_bias)

    def _bias_step(self, W: np.ndarray, round: int) -> None:
        """Set W's bias column (the held bias weights b, one a sub-problem) to the minimiser of
        phi(b) = b^2 / 2 + L(w, b) for W's other columns w (``_bias_minimiser``), or beyond
        it where the steps have shrunk steadily (below).

        Block descent over (w, b) moves b towards b* by steps that shrink geometrically
        where w and b are coupled (a combination of features nearly constant over the rows,
        which the bias then trades against): on pypi-recent by ratios of about 0.94 a round
        for a hundred rounds. Where the last two rounds' ratios r agree, the step is taken
        as the sum of its geometric series, 1 / (1 - r) times (Aitken's extrapolation, at
        most BIAS_EXTRAPOLATION_MAX times); the next rounds' w follows b, and a step that
        overshoots changes sign and ends the extrapolation. The trend it reads is kept in
        the run's snapshots, so a recovered run replays the same steps."""
        start = W[:, -1].copy()
        step = self._bias_minimiser(W, round) - start
        extrapolate = np.ones_like(step)
        ratio = np.full_like(step, np.nan)
        if self.bias_trend is not None:
            last_step, last_ratio = self.bias_trend
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = step / last_step
                steady = (ratio > 0.0) & (ratio < BIAS_RATIO_MAX) & (
                    np.abs(ratio - last_ratio)
                    <= BIAS_RATIO_AGREEMENT * np.maximum(ratio, last_ratio)
                )
                extrapolate = np.where(
                    steady, np.minimum(1.0 / (1.0 - ratio), BIAS_EXTRAPOLATION_MAX), 1.0
                )
            self.bias_extrapolations += int(np.count_nonzero(steady))
        W[:, -1] = start + extrapolate * step
        self.bias_trend = (step, ratio)

    def _bias_minimiser(self, W: np.ndarray, round: int) -> np.ndarray:
        """The minimiser of phi(b) = b^2 / 2 + L(w, b) for W's columns but the last, w:
        safeguarded Newton steps from W's last column on each sub-problem's phi, strongly
        convex, its loss part L and two derivatives summed from the partitions
        (``_partition.bias_losses``). The first call sends w, and the partitions keep its
        margins; each further call sends b only. A step outside the interval where phi'
        changes sign is replaced by the interval's midpoint."""
        plan = self._by_worker()
        n_sub = W.shape[0]
        b = W[:, -1].copy()
        low = np.full(n_sub, -np.inf)
        high = np.full(n_sub, np.inf)
        done = np.zeros(n_sub, dtype=bool)
        sent_W: np.ndarray | None = W
        for _ in range(BIAS_MAX_EVALUATIONS):
            self.sent += (b.nbytes + (0 if sent_W is None else sent_W.nbytes)) * len(plan)
            parts = self._call("bias", plan, sent_W, b, round)
            sent_W = None
            self.bias_evaluations += 1
            total = np.zeros((n_sub, 3))
            for k in range(len(self.home)):  # in partition order: the same sum every run
                total += parts[k]
                self.received += parts[k].nbytes
            slope = b + total[:, 1]
            curvature = 1.0 + total[:, 2]
            low = np.where(slope < 0.0, np.maximum(low, b), low)
            high = np.where(slope > 0.0, np.minimum(high, b), high)
            step = slope / curvature
            # converged: phi' is 0 to rounding (phi'' >= 1, so b is within |step| of its
            # minimiser), or the interval is too short to split
            done |= np.abs(step) <= BIAS_TOLERANCE * (1.0 + np.abs(b))
            done |= high - low <= BIAS_TOLERANCE * (1.0 + np.abs(b))
            if done.all():
                break
            newton = b - step
            midpoint = 0.5 * (low + high)
            inside = (newton > low) & (newton < high)
            b = np.where(done, b, np.where(inside | ~np.isfinite(midpoint), newton, midpoint))
        return b

    def _round(self, W: np.ndarray, task: RoundTask) -> list:
        """Send W to every worker, run the round on every partition, gather the results (in
        partition order)."""
        plan = self._by_worker()
        self.sent += W.nbytes * len(plan)
        results = self._call("round", plan, W, task)
        self.received += sum(r.nbytes for r in results.values())
        return [results[k] for k in range(len(self.home))]

    def _gather_alpha(self, round: int) -> list[np.ndarray]:
        alphas = self._call("snapshot", self._by_worker(), round)
        self.received += sum(a.nbytes for a in alphas.values())
        return [alphas[k] for k in range(len(self.home))]

    def _recover(self, round_: int, alphas, lost: _WorkersLost) -> None:
        """Build the partitions of the workers that could not answer again, on the workers
        left, and put every partition back to ``alphas`` (of the snapshot before ``round_``;
        None: the start's)."""
        missing: set[int] = set()
        for _ in range(MAX_REBUILDS):
            # a worker that answered without its partitions (restarted) is still usable
            self.dead.update(w for w, e in lost.workers.items() if not isinstance(e, PartitionLost))
            missing.update(k for k, w in enumerate(self.home) if w in lost.workers)
            workers = self._workers_left()
            if not workers:
                raise DistributedError(
                    f"no workers left to rebuild the lost partitions on (waited "
                    f"{REPLACEMENT_WAIT_SECONDS:g} s for one; lost: {lost})"
                )
            try:
                if missing:
                    load = {w: 0 for w in workers}
                    for k, w in enumerate(self.home):
                        if k not in missing and w in load:
                            load[w] += 1
                    assignment = {}
                    for k in sorted(missing):  # to the workers holding fewest partitions
                        worker = min(workers, key=lambda w: (load[w], w))
                        assignment[k] = worker
                        load[worker] += 1
                    self._build(assignment)
                    missing.clear()
                # alpha goes to its own worker only: one call a worker
                for worker, indices in self._by_worker().items():
                    plan = {worker: {k: None if alphas is None else alphas[k] for k in indices}}
                    if alphas is not None:
                        self.sent += sum(alphas[k].nbytes for k in indices)
                    self._call("restore", plan, round_, self.config)
                return
            except _WorkersLost as again:
                lost = again
        raise DistributedError(
            f"could not rebuild the partitions of lost workers in {MAX_REBUILDS} attempts ({lost})"
        )

    def _workers_left(self) -> list[str]:
        """The cluster's workers but those this run lost; when there are none, waits up to
        ``REPLACEMENT_WAIT_SECONDS`` for one (a nanny restarting a killed worker)."""
        deadline = time.monotonic() + REPLACEMENT_WAIT_SECONDS
        while True:
            workers = [w for w in _workers(self.client) if w not in self.dead]
            if workers or time.monotonic() >= deadline:
                return workers
            time.sleep(0.1)

    def _model(self, W, primal, dual, rounds: int, reason: str, signal) -> Model:
        config = self.config
        figures = {"rounds": rounds, "n_partitions": len(self.home)}
        if self.held_bias:
            figures["bias_evaluations"] = self.bias_evaluations
            figures["bias_extrapolations"] = self.bias_extrapolations
        results = partition_solutions(W, primal, dual, rounds, reason, self.solver,
                                      figures=figures)  # fmt: skip
        return Model.from_weights(self.solver, config.labels, W, config.n_features, config.bias,
                                  results, signal)  # fmt: skip

    def release(self) -> None:
        """Drop the run's partitions from its workers: at once on those still in the cluster,
        and by the end of the leases on any that could not be reached."""
        leases, self.leases = self.leases, {}
        self.home = []
        if not leases or self.client.status != "running":
            return
        try:
            holders = [w for w in _workers(self.client) if w in leases and w not in self.dead]
            if holders:
                self.client.run(
                    _partition.serve, "release", self.name, workers=holders, on_error="ignore"
                )
        except Exception:  # noqa: BLE001 - a failing cleanup must not hide the run's error
            pass
        finally:
            for lease in leases.values():
                lease.release()


class _WorkerPlace:
    """Dask workers as the place of a partitioned dual (``partitioned.py``): a round sends W
    to every worker and runs every partition's local solve there (``_Run._round``); the
    results come back in partition order."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.n_partitions = len(run.home)

    def solve(self, group, W: np.ndarray, task: LocalTask) -> list:
        run = self.run
        task = RoundTask(task.outer, task.passes, task.sigma, run.held_bias, run.dual_point)
        return self.run._round(W, task)


# ----------------------------------------------------------------------------- helpers


class _WorkersLost(Exception):
    """Workers that could not answer for their partitions: {address: what happened}."""

    def __init__(self, workers: Mapping[str, BaseException]) -> None:
        self.workers = dict(workers)
        super().__init__(
            "; ".join(f"{w}: {type(e).__name__}: {e}" for w, e in sorted(self.workers.items()))
        )


def _is_lost(exc: BaseException) -> bool:
    """Whether a worker's failed reply means it (or its partitions) is gone, rather than an
    error of the work itself: a closed connection or a timeout (plain ``OSError`` is how
    Dask says it could not connect; its subclasses such as ``FileNotFoundError`` are the
    work's own), a cancelled call, or a partition the worker no longer holds."""
    from distributed.comm.core import CommClosedError

    return (
        type(exc) is OSError
        or isinstance(
            exc,
            (
                CommClosedError, ConnectionError, TimeoutError, asyncio.TimeoutError,
                asyncio.CancelledError, concurrent.futures.CancelledError, PartitionLost,
            ),
        )
    )  # fmt: skip


def client_for(target: str):
    """(client, cluster or None) for a target given as text: "local:N" starts a LocalCluster
    of N worker processes (one thread each), which the caller closes with the client;
    anything else is a scheduler's address ("tcp://host:8786")."""
    from distributed import Client, LocalCluster

    if target.startswith("local:"):
        count = target.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise InvalidInputError(f"local:N needs a number of workers N >= 1, got {target!r}")
        # The workers are this process's children, in its process group: a Ctrl-C at the
        # terminal reaches them too, and they died mid-round while this process was stopping
        # the run (tracebacks, and a 30 s wait on them). Spawned with SIGINT ignored, they
        # keep ignoring it (an ignored signal stays so across exec, and Python leaves it);
        # this process ends them when it closes the cluster. It ignores SIGINT itself only
        # while they are spawned (until their processes exist: 0.4-0.5 s here, a Ctrl-C then
        # is lost), not while the scheduler or they start: a Ctrl-C was lost for 1-2 s, and
        # the run trained to its end.
        n_workers = int(count)
        cluster = None
        try:
            # (the scheduler starts here, in this process: SIGINT as usual meanwhile)
            cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                                   dashboard_address=":0")  # fmt: skip
            with _sigint_ignored():
                cluster.scale(n_workers)
                _wait_for_spawned(cluster, n_workers)
            try:
                cluster.wait_for_workers(n_workers, timeout=LOCAL_WORKERS_START_SECONDS)
            except TimeoutError:
                # (a worker that fails as it starts is restarted by its nanny, forever)
                raise InvalidInputError(
                    f"{target}: the workers did not start in {LOCAL_WORKERS_START_SECONDS:.0f} "
                    "s; a script that starts a local cluster must run it under "
                    "`if __name__ == \"__main__\":` (the workers import the script)"
                ) from None
            return Client(cluster), cluster
        except BaseException:
            if cluster is not None:
                cluster.close()
            raise
    _check_address(target)
    try:
        return Client(target, timeout="30s"), None
    except OSError as exc:
        raise InvalidInputError(f"{target}: cannot reach the scheduler ({exc})") from None
    except (TypeError, ValueError, ImportError) as exc:
        # (what the address check cannot foresee; such a Client can hang this process where
        # another Client runs, which _check_address keeps known cases from)
        raise InvalidInputError(f"{target}: cannot connect to it from here "
                                f"({type(exc).__name__}: {exc})") from None  # fmt: skip


def _check_address(target: str) -> None:
    """Refuse what is not a scheduler's address before a Client is made of it: a Client that
    fails in its constructor can hang its process where another Client runs (its __del__
    waits on the event loop they share)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(target)
        if scheme in ("tcp", "tls", "ws", "wss", "ucx") and not parse_host_port(location)[0]:
            raise ValueError("missing host")
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{target!r} is not a scheduler's address, e.g. "
                                f"tcp://host:8786 or local:4 ({exc})") from None  # fmt: skip
    if scheme not in ("tcp", "ws"):
        # (tls:// and wss:// need security settings, ucx:// its package, inproc:// the
        # scheduler's own process: a Client made of the text alone fails in its constructor)
        raise InvalidInputError(
            f"{target}: as text, a scheduler's address is tcp:// or ws://; for {scheme}://, "
            "pass a dask Client made with its settings (client=Client(...))"
        )


# Copies of W the client holds at once in a round (W, the round's start, the snapshot's, the
# sum of the partitions' changes).
_W_COPIES = 4


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored within the block (from the main thread; elsewhere as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_for_spawned(cluster, n_workers: int, timeout: float = 10.0) -> None:
    """Until the cluster's ``n_workers`` nannies have spawned their worker processes, or
    ``timeout`` seconds (a spawn that failed, or another distributed: waiting for the workers
    says so, with SIGINT no longer ignored meanwhile)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        nannies = list(cluster.workers.values())
        if len(nannies) >= n_workers and all(
            getattr(getattr(nanny, "process", None), "pid", None) for nanny in nannies
        ):
            return
        time.sleep(0.005)


def check_client(client) -> None:
    """Refuse what is not a running dask.distributed Client, in one line."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask is an extra
        raise InvalidInputError(
            "distributed training needs dask.distributed: pip install 'linsvm[distributed]'"
        ) from None
    if not isinstance(client, Client):
        raise InvalidInputError(
            f"client must be a dask.distributed.Client, got {type(client).__name__}"
        )
    if client.status != "running":
        raise InvalidInputError(f"the Dask client is not running (status {client.status!r})")


def _workers(client) -> list[str]:
    """The cluster's workers' addresses, sorted."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def _workers_soon(client) -> list[str]:
    """``_workers``; when there are none yet, waits up to ``REPLACEMENT_WAIT_SECONDS`` for one
    (a cluster just started, or a nanny restarting a worker killed a moment before)."""
    deadline = time.monotonic() + REPLACEMENT_WAIT_SECONDS
    while not (workers := _workers(client)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return workers


def _count(value, name: str) -> int:
    if not is_integer(value) or value < 1:
        raise InvalidInputError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _positive_float(value, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number > 0, got {value!r}") from None
    if not (math.isfinite(number) and number > 0):
        raise InvalidInputError(f"{name} must be a number > 0, got {value!r}")
    return number


def _nbytes(X) -> int:
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def _print_round(p: RoundProgress) -> None:
    for event in p.events:
        print(f"round {p.round}: {event}", file=sys.stderr, flush=True)
    print(
        f"round {p.round}: gap {p.gap:.3e} (relative {p.relative_gap:.3e}), primal "
        f"{p.objective:.10g}, {p.seconds:.2f} s (compute {p.compute_seconds:.2f} s), sent "
        f"{p.bytes_sent / 1e6:.2f} MB, received {p.bytes_received / 1e6:.2f} MB",
        file=sys.stderr,
        flush=True,
    )


__all__ = ["DistributedError", "RoundProgress", "check_client", "client_for", "train_cocoa"]
