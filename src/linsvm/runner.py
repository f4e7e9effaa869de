"""The runner of training by partitions in turn: what a run shares whatever holds its rows.

``linsvm.train`` picks where the rows live; with ``memory=`` they stay on disk and an outer
iteration visits them a block at a time (block minimisation, Yu, Hsieh, Chang and Lin, KDD
2010: ``w`` and every row's ``alpha`` in memory, each block's rows solved by the dual
coordinate descent kernel from their ``alpha`` and the shared ``w``). The place,
``outofcore``, owns where the rows live and how a local solve reaches them: the blocks planned
under the memory budget, the reader that brings the next block while one trains, the
support vectors kept across blocks, the shrink marks of the epoch mode. The driver,
``partitioned.PartitionedDual``, runs one outer iteration over the place's partitions. This
runner owns the rest, once:

- **the problem**: the classes, their costs and every row's one-vs-rest target and cost
  (``problems.RowTargets``), w and alpha of each sub-problem (all classes share each read of
  a block);
- **the stopping rule, on all of alpha.** The extremes of the projected gradients over an
  outer iteration's sweep are LIBLINEAR's measure (in epochs over the rows not shrunk, as the
  in-memory solver; classic: the first pass of each block, nothing shrunk). When it falls
  below eps, a check pass recomputes it over every row at the final ``w`` (with the primal
  value; in epochs also LIBLINEAR's re-check of the shrunk rows, whose marks are then
  cleared); only if that holds does the run stop;
- **the duality gap, every outer iteration.** The dual value needs only ``w`` and ``alpha``,
  both in memory. The primal needs the data, so each outer iteration also sums the loss of
  each block at the ``w`` it started from, before the block trains: at the end of the
  iteration P(w_t) - D(alpha_t) is the exact gap of the iterate the iteration started from;
- **the Solution of each sub-problem and the Model**, interrupts (Ctrl-C between blocks),
  the warnings, the progress lines, and the run's checkpoints (``checkpoint.py``'s one
  format, place "blocks").
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import _memory, solvers
from ._progress import ProgressTimer
from .checkpoint import (
    DEFAULT_EVERY_SECONDS,
    check_checkpoint_path,
    read_checkpoint,
    what_differs,
    write_checkpoint,
)
from .data import as_csr, group_labels, is_integer, table_resident_bytes
from .errors import InvalidInputError
from .interrupts import RunInterrupted, stop_on_signals
from .io.blocks import (
    BlockBuffer,
    BlockSource,
    UsedColumnBlocks,
    open_cache_blocks,
    used_columns_of,
)
from .io.cache import _first_bad_row
from .model import Model
from .objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from .outofcore import (
    DEFAULT_INNER_ITER,
    DEFAULT_MAX_OUTER,
    LOSSES,
    MIN_BLOCK_BYTES,
    BlockLayout,
    BlockPlace,
    EpochPlace,
    LogisticEpochs,
    Reader,
    Shrinking,
    check_pass,
    parse_memory,
    plan_blocks,
    return_freed_arrays_to_the_system,
)
from .partitioned import (
    IN_TURN,
    LocalTask,
    OuterSums,
    PartitionedDual,
    PartResult,
    pg_measure,
    stopping_measure,
)
from .problems import (
    RowTargets,
    TrainingInterrupted,
    class_costs,
    classes,
    cv_folds,
    held_out_mask,
    n_weight_vectors,
    partition_solutions,
    silenced,
    single_class,
    warn_at_cap,
    warn_interrupted,
)
from .solvers import Solution
from .solvers._base import CONVERGED, INTERRUPTED, MAX_ITER
from .sparse_rows import sq_norm


@dataclass
class OuterProgress:
    """One outer iteration of block minimisation, for progress lines and hooks."""

    iteration: int
    blocks: int
    measure: float  # the stopping rule's measure over all rows (max over classes)
    primal: list[float]  # per class: P(w) at the iteration's start
    dual: list[float]  # per class: D(alpha) at the iteration's start
    seconds: float
    mb_read: float


def train_blocks(
    source: BlockSource,
    solver: int = 1,
    C: float = 1.0,
    eps: float | None = None,
    bias: float = -1.0,
    memory: str | int = "2G",
    class_weight=None,
    inner_iter: int | None = None,
    max_outer: int | None = None,
    seed: int = 1,
    verbose: bool = False,
    progress: ProgressTimer | None = None,
    on_outer: Callable[[OuterProgress], None] | None = None,
    max_block_bytes: int | None = None,
    selective: bool | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float = DEFAULT_EVERY_SECONDS,
    resume: str | os.PathLike | None = None,
    held_out: np.ndarray | None = None,
    overhead_bytes: int | None = None,
    labels_check: Callable[[np.ndarray], object] | None = None,
    class_order: np.ndarray | None = None,
) -> Model:
    """Train -s 1, -s 3 or -s 7 by block minimisation over ``source``, in about ``memory``
    bytes. Returns the Model, with one Solution per binary sub-problem (alpha, primal, dual
    and gap at the returned w).

    ``memory`` bounds what the run holds besides w and alpha (8 bytes a weight and a row per
    binary sub-problem, which come on top): an overhead for the interpreter, libraries and
    compiled code (``overhead_bytes``, e.g. ``outofcore.measured_overhead()``; by default the
    constant ``FIXED_OVERHEAD_BYTES``, 256 MiB), the rows' class index, and the blocks
    (``outofcore.plan_blocks``: two training blocks, the one training and the one being read,
    and with ``selective`` the kept rows and working copies); ``max_block_bytes`` caps a
    training block lower (less memory, more outer iterations). A budget that leaves less
    than ``MIN_BLOCK_BYTES`` for a block (less if the whole data is smaller) is refused, with
    the smallest budget that trains.

    Each outer iteration runs the dual solver on each block for at most ``inner_iter``
    passes; the run stops when LIBLINEAR's stopping rule holds on every row (checked at the
    final w), or after ``max_outer`` outer iterations. ``verbose`` prints a line per outer
    iteration on stderr; ``on_outer`` gets the same as an ``OuterProgress``. ``progress``: a
    line within a long outer iteration (the blocks done) when the timer says one is due.

    ``selective`` (Chang and Roth, KDD 2011): rows of other blocks with alpha > 0, up to a
    block's worth of memory, join every block's solve (``outofcore.SupportCache``). The
    default (``inner_iter`` 1, not selective) is the epoch mode instead (``outofcore``: one
    epoch of the in-memory solver a block at a time). The LR dual (-s 7) has every
    alpha_i > 0, so no rows to select (selective is refused); its rule is LIBLINEAR's
    max_i |g_i| < eps over all rows (g the dual's gradient), and in epochs it keeps every
    row's C_i - alpha_i too (8 bytes a row and sub-problem, counted in the budget).

    Ctrl-C stops after the current block (a second one at once) and returns the current model
    (``model.interrupted``; its primal and gap NaN: no pass over the data is made for them).
    ``checkpoint``: the run's state (w, alpha, the outer iteration's sums, the kept support
    vectors) is saved there atomically after a block when ``checkpoint_every`` seconds have
    passed, on Ctrl-C, and at the end; ``resume`` from it continues to the model the
    uninterrupted run gives (the same data, options and memory, else a one-line error).
    ``held_out``: a boolean mask of the rows that take no part (cost 0; cross-validation
    trains on the other folds); their classes are those of the rows that train, in the order
    ``class_order`` gives (cross-validation: a fold's, as LIBLINEAR groups its subproblem),
    else in the rows' order. ``labels_check(labels)``, called with the rows' labels before
    any training, may refuse them by raising (the command line's model files hold integers).
    """
    spec, params, loss, epochs, selective, inner_iter, max_outer = _block_options(
        solver, C, eps, bias, selective, inner_iter, max_outer
    )
    budget = parse_memory(memory)
    if source.n_rows == 0:
        raise InvalidInputError("no training data: 0 rows")
    if labels_check is not None:
        try:
            labels_check(source.labels())
        except InvalidInputError:
            # a cache's labels are read before any checksum: a damaged block, the likelier
            # cause of a label refused there, is said as such
            source.check_stored()
            raise
    labels, class_index = _classes_trained(source.labels(), held_out, class_order)
    targets = RowTargets(class_index, class_costs(labels, params.C, class_weight), params.C,
                         held_out)  # fmt: skip
    del class_index
    return_freed_arrays_to_the_system()

    n_vectors = n_weight_vectors(labels.shape[0])
    n_bias = 1 if params.bias >= 0 else 0
    # (the model's W is over every column however the blocks hold it)
    _memory.check_weights_fit(n_vectors, source.n_features + n_bias)
    # Over a width of which at most half can hold a value (more columns than twice the
    # non-zeros: features hashed before they were written), w is kept over the used columns,
    # found by a pass over the rows: w's copy and sums each outer iteration are O(width)
    nnz = getattr(source, "nnz", None)  # (a source of the caller's may not say)
    narrow = nnz is not None and source.n_features > 2 * nnz
    if narrow and resume is not None and _stored_over_every_column(resume):
        narrow = False  # (a run that kept w over every column resumes as it ran)
    n_columns = min(source.n_features, nnz) if narrow else source.n_features
    # (the renumbering's table, one index a column, resident only in the pages that hold a
    # used column: at most one page a non-zero)
    index_bytes = 4 if n_columns < 2**31 else 8
    table_bytes = (table_resident_bytes(source.n_features, index_bytes, nnz) if narrow
                   else 0)  # fmt: skip
    alpha = np.zeros((n_vectors, source.n_rows))
    epoch_rows = source.n_rows if epochs else 0
    epoch_state = (LogisticEpochs.fresh(n_vectors, epoch_rows, params.eps)
                   if loss == LOSS_LOGISTIC else Shrinking.fresh(n_vectors, epoch_rows))
    if resume is not None and overhead_bytes is not None:
        # the blocks follow the overhead, and a measure varies from process to process: a
        # resumed run plans with the interrupted run's
        overhead_bytes = _stored_overhead(resume, overhead_bytes)
    # w at the outer iteration's start (the exact objectives there) is a second w: only w
    # and alpha themselves come on top of the budget
    w_bytes = 8 * n_vectors * (n_columns + n_bias)
    run_bytes = (targets.nbytes + epoch_state.nbytes + w_bytes + table_bytes
                 + RowTargets.CHUNK_BYTES)  # fmt: skip
    layout = plan_blocks(source, budget, n_vectors, run_bytes, overhead_bytes, selective,
                         epochs, max_block_bytes, seed)  # fmt: skip
    if narrow:
        used = used_columns_of(layout.source)
        if used is not None:
            layout.source = UsedColumnBlocks(layout.source, used)
    W = np.zeros((n_vectors, layout.source.n_features + n_bias))
    meta = None
    if checkpoint is not None or resume is not None:
        meta = _run_meta(layout, spec.number, params, class_weight, inner_iter, seed, selective,
                         epochs, None if overhead_bytes is None else layout.overhead,
                         max_outer)  # fmt: skip
    run = _BlocksRun(spec, params, loss, epochs, targets, layout, W, alpha, epoch_state, seed)
    run.verbose, run.progress, run.on_outer = verbose, progress, on_outer
    saver = _RunCheckpoints(checkpoint, checkpoint_every, meta)
    return run.train(labels, inner_iter, max_outer, saver, resume)


def _classes_trained(y: np.ndarray, held_out: np.ndarray | None,
                     order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(labels, class index a row) of the rows that train: without the held-out rows, as
    LIBLINEAR's cross-validation groups a fold's own rows (a class held out whole gets no
    weight vector), in ``order`` (the order decides ties of decision values) or the rows'.
    A held-out row gets class 0 (it costs 0, whatever its class)."""
    if held_out is None:
        return classes(y)
    held_out = held_out_mask(held_out, y.shape[0])
    if held_out.all():
        raise InvalidInputError("held_out holds every row: none is left to train on")
    labels, trained_index = classes(y[~held_out])
    if order is not None:
        if not np.array_equal(np.sort(order), np.sort(labels)):
            raise InvalidInputError("class_order must hold the training rows' labels, once each")
        place = np.array([int(np.flatnonzero(order == label)[0]) for label in labels.tolist()])
        labels, trained_index = np.asarray(order), place[trained_index]
    class_index = np.zeros(y.shape[0], dtype=trained_index.dtype)
    class_index[~held_out] = trained_index
    return labels, class_index


def train_cache(path, memory: str | int = "2G", **params) -> Model:
    """``train_blocks`` over the cache file at ``path`` (``linsvm cache`` makes one); a
    width whose model could not fit in memory is refused first (DataFormatError)."""
    with open_cache_blocks(path) as source:
        return train_blocks(source, memory=memory, **params)


def cross_validate_cache(
    path, n_folds: int, memory: str | int = "2G", seed: int = 1, **params
) -> tuple[int, int]:
    """``cross_validate_blocks`` over the cache file at ``path``: (rows right, rows)."""
    with open_cache_blocks(path) as source:
        return cross_validate_blocks(source, n_folds, seed, memory=memory, **params)


def _block_options(solver, C, eps, bias, selective, inner_iter, max_outer):
    """The solver's spec and parameters, its loss, whether the run goes by epochs, and the
    options' values once checked: (spec, params, loss, epochs, selective, inner_iter,
    max_outer). max_outer None: the in-memory solver's cap for the epochs (an outer iteration
    is one of its epochs), ``DEFAULT_MAX_OUTER`` for the classic mode."""
    spec = solvers.get_solver(solver)
    if spec.number not in LOSSES:
        raise InvalidInputError(
            f"block minimisation trains the duals -s 1, -s 3 and -s 7, not {spec.label}"
        )
    params = solvers.check_parameter(spec.number, C, eps, bias, None, True)
    loss = LOSSES[spec.number]
    if selective and loss == LOSS_LOGISTIC:
        raise InvalidInputError(
            "selective block minimisation keeps the rows with alpha > 0, which in the LR dual "
            "(-s 7) are all rows: train -s 7 with selective=False"
        )
    # the default: epochs of the in-memory solver, a block at a time
    epochs = not selective and inner_iter in (None, 1)
    if inner_iter is None:
        inner_iter = 1 if epochs else DEFAULT_INNER_ITER
    if max_outer is None:
        max_outer = spec.max_iter if epochs else DEFAULT_MAX_OUTER
    # (integers: a fractional count ran no iteration and waited for one forever)
    if not is_integer(max_outer) or max_outer < 1:
        # (the command line's --max-iter and train's max_iter are the outer iterations here)
        raise InvalidInputError(f"block minimisation runs at least one outer iteration: "
                                f"max_iter (max_outer) must be an integer >= 1, got "
                                f"{max_outer!r}")  # fmt: skip
    if not is_integer(inner_iter) or inner_iter < 1:
        raise InvalidInputError(f"inner_iter must be an integer >= 1, got {inner_iter!r}")
    return spec, params, loss, epochs, bool(selective), inner_iter, max_outer


@dataclass
class _OuterState:
    """An outer iteration in progress (saved in checkpoints): the partitions' sums so far
    (w at the iteration's start, the loss there of the blocks done, their first passes'
    projected-gradient extremes), D(alpha) at the start, the megabytes read."""

    sums: OuterSums
    dual_start: np.ndarray  # (n_vectors,)
    mb: float = 0.0
    started: float = 0.0

    @classmethod
    def fresh(cls, W, alpha, targets: RowTargets, loss, dual: bool = True) -> _OuterState:
        """The start of an outer iteration; ``dual=False``: D(alpha) left to the partitions'
        sums (NaN here)."""
        n = W.shape[0]
        dual = (np.array([targets.dual_value(k, W[k], alpha[k], loss) for k in range(n)])
                if dual else np.full(n, np.nan))  # fmt: skip
        sums = OuterSums(W.copy(), np.zeros(n), np.zeros(n), np.full(n, -np.inf),
                         np.full(n, np.inf))  # fmt: skip
        return cls(sums, dual, 0.0, time.perf_counter())

    def arrays(self) -> dict[str, np.ndarray]:
        """The checkpoint's arrays of the iteration (names as stored)."""
        sums = self.sums
        return {
            "w_start": sums.W_start, "dual_start": self.dual_start, "loss_at_start": sums.loss,
            "dual_terms": sums.dual_terms,
            "pg_max": sums.pg_max, "pg_min": sums.pg_min,
        }  # fmt: skip

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        sums = self.sums
        sums.W_start, sums.loss = arrays["w_start"], arrays["loss_at_start"]
        sums.pg_max, sums.pg_min = arrays["pg_max"], arrays["pg_min"]
        self.dual_start = arrays["dual_start"]
        sums.dual_terms = arrays["dual_terms"]


class _BlocksRun:
    """One run of block minimisation: its arrays, its place, and the outer loop over it."""

    def __init__(self, spec, params, loss, epochs, targets: RowTargets, layout: BlockLayout,
                 W, alpha, epoch_state: Shrinking | LogisticEpochs, seed: int) -> None:  # fmt: skip
        self.spec, self.params, self.loss, self.epochs = spec, params, loss, epochs
        self.targets, self.layout, self.seed = targets, layout, seed
        # the epoch mode's state across blocks and epochs (empty arrays in the classic mode)
        self.W, self.alpha, self.epoch_state = W, alpha, epoch_state
        # the epoch mode's order within a block (``EpochPlace.order``): chosen on the run's
        # first block and kept in checkpoints, so that a run resumed at another block visits
        # rows as the undisturbed run does
        self.epoch_order: tuple[int, int, bool] | None = None
        self.place: EpochPlace | BlockPlace | None = None
        self.tolerance = [solvers.solver_tolerance(spec, params.eps, targets.signs(k))
                          for k in range(W.shape[0])]  # fmt: skip
        self.verbose = False
        self.progress: ProgressTimer | None = None
        self.on_outer: Callable[[OuterProgress], None] | None = None
        # the outer iteration in progress: made at each iteration's start, or by a resume
        self.state: _OuterState | None = None
        self.interrupted = False

    def _fresh_state(self) -> _OuterState:
        return _OuterState.fresh(self.W, self.alpha, self.targets, self.loss, not self.epochs)

    def _place(self, reader: Reader):
        bias, loss = self.params.bias, self.loss
        if self.epochs:
            return EpochPlace(reader, self.targets, self.alpha, self.epoch_state, bias, loss,
                              self.seed, self.epoch_order)  # fmt: skip
        return BlockPlace(reader, self.layout.support, self.targets, self.alpha, self.spec.solve,
                          bias, loss, self.tolerance, self.seed)  # fmt: skip

    def train(self, labels, inner_iter: int, max_outer: int, saver: _RunCheckpoints,
              resume) -> Model:  # fmt: skip
        W, n_vectors = self.W, self.W.shape[0]
        first_outer, first_group, reader_at, finished = 1, 0, (0, 0), False
        if resume is not None:
            self.state = self._fresh_state()  # filled from the checkpoint
            first_outer, first_group, reader_at, finished = _restore(resume, saver.meta, self)
        iterations = first_outer - 1
        results: list[Solution] | None = None
        final_loss = np.full(n_vectors, np.nan)
        with stop_on_signals() as stop, Reader(self.layout.source, self.layout.plan,
                                               *reader_at) as reader:  # fmt: skip
            place = self.place = self._place(reader)
            driver = PartitionedDual(place, IN_TURN, W)
            if finished:  # the last checkpoint of a converged run: its model, no epoch more
                results = self._solutions(self._check(reader)[1], iterations, CONVERGED)
            for outer in range(first_outer, 0 if finished else max_outer + 1):
                if first_group == 0:
                    self.state = None  # its copy of w goes before the next is made: two w
                    self.state = self._fresh_state()
                # no stop hook within a block's solve: it is short, and a stop between blocks
                # leaves a state a checkpoint resumes exactly
                after_block = self._after_block(outer, place.n_partitions, stop, saver, reader)
                driver.outer(LocalTask(outer, inner_iter), first_group, after_block,
                             self.state.sums)  # fmt: skip
                first_group = 0
                if self.interrupted:
                    break
                iterations = outer
                if self._end_outer(outer, place.n_partitions):
                    # the rule at the final w, over every row, and P(w) (in epochs, also
                    # LIBLINEAR's re-check of the shrunk rows, without steps)
                    final_measure, final_loss = self._check(reader)
                    if self.epochs:
                        self.epoch_state.clear()
                    if final_measure <= max(self.tolerance):
                        results = self._solutions(final_loss, outer, CONVERGED)
                        break
            if results is None and not self.interrupted:
                reader.restart()
                final_loss = self._check(reader)[1]
        if saver.path is not None and not self.interrupted:
            self.state = None
            self.state = self._fresh_state()
            saver.save(iterations + 1, 0, self, reader.at(next_round=True),
                       converged=results is not None)  # fmt: skip
        if results is None:
            reason = INTERRUPTED if self.interrupted else MAX_ITER
            if self.interrupted:
                # no pass over the data for P(w) (a stop should be prompt); the dual needs none
                final_loss = np.full(n_vectors, np.nan)
                warn_interrupted(stacklevel=4)
            elif self.params.eps > 0:  # (eps = 0 sets no rule to fall short of)
                warn_at_cap(max_outer, self.spec.label, " in blocks",
                            "raise max_iter (outer iterations over the data) or eps",
                            stacklevel=4)  # fmt: skip
            results = self._solutions(final_loss, iterations, reason)
        if not np.isfinite(W).all():
            # the rows' values are checked as they are read, so only a state resumed from a
            # damaged or crafted checkpoint gets here: an error, never a NaN model
            where = f" (resumed from {os.fsdecode(os.fspath(resume))}: damaged?)" if resume else ""
            raise InvalidInputError(f"{self.spec.label} in blocks: the weights became NaN or "
                                    f"infinite{where}")
        n_features = self.layout.source.n_features
        if isinstance(self.layout.source, UsedColumnBlocks):
            # the model over every column (zero on the unused), the solutions' w views of it
            used = self.layout.source.used
            W, n_features = used.expand_w(W), used.n_features
            for k, solution in enumerate(results):
                solution.w = W[k]
        return Model.from_weights(self.spec.number, labels, W, n_features, self.params.bias,
                                  results, stop.signal)  # fmt: skip

    def _after_block(self, outer: int, n_blocks: int, stop, saver, reader):
        def after_block(g: int, done: list[PartResult]) -> bool:
            """Between blocks: the read counted, a checkpoint when due, the stop request."""
            self.state.mb += done[0].figures["mb"]
            if self.progress is not None:
                self.progress.tick(lambda: f"outer {outer}: {g + 1} of {n_blocks} blocks, "
                                           f"{self.state.mb:.0f} MB read")  # fmt: skip
            self.interrupted = stop.requested
            if saver.due() or (self.interrupted and saver.path is not None):
                saver.save(outer, g + 1, self, reader.at())
            return not self.interrupted

        return after_block

    def _end_outer(self, outer: int, n_blocks: int) -> bool:
        """The outer iteration's report; whether its measure meets the rule (to be checked
        at the final w)."""
        sums = self.state.sums
        measure = pg_measure(sums, self.loss == LOSS_LOGISTIC)
        primal_start, dual_start = sums.objectives()
        if not self.epochs:  # the blocks' solves report no dual terms: D computed at the start
            dual_start = self.state.dual_start
        report = OuterProgress(
            outer, n_blocks, measure, primal_start.tolist(), list(dual_start),
            time.perf_counter() - self.state.started, self.state.mb,
        )  # fmt: skip
        if self.verbose:
            _print_outer(report)
            if self.progress is not None:
                self.progress.postpone()
        if self.on_outer is not None:
            self.on_outer(report)
        if self.epochs:
            self.epoch_state.next_epoch(sums.pg_max, sums.pg_min)
        return measure <= max(self.tolerance)

    def _check(self, reader: Reader) -> tuple[float, np.ndarray]:
        """(LIBLINEAR's measure over every row at W, per-class loss sums at W): one round of
        the reader, from its first block (where it stands after a complete outer iteration)."""
        logistic = self.loss == LOSS_LOGISTIC
        alpha_c = self.epoch_state.alpha_complement if logistic and self.epochs else None
        pg_max, pg_min, losses = check_pass(reader, self.W, self.alpha, self.targets,
                                            self.params.bias, self.loss, alpha_c)  # fmt: skip
        measure = max(stopping_measure(pg_max[k], pg_min[k], logistic)
                      for k in range(self.W.shape[0]))  # fmt: skip
        return measure, losses

    def _solutions(self, loss_totals: np.ndarray, n_iter: int, reason: str) -> list[Solution]:
        """Each sub-problem's Solution over views of the run's W and alpha (the run is over:
        no copy, which would take a third w and a second alpha past the budget)."""
        W, alpha = self.W, self.alpha
        primal = [0.5 * sq_norm(W[k]) + float(loss_totals[k]) for k in range(W.shape[0])]
        dual = [self.targets.dual_value(k, W[k], alpha[k], self.loss) for k in range(W.shape[0])]
        return partition_solutions(W, primal, dual, n_iter, reason, self.spec.number, alpha)


def _run_meta(layout: BlockLayout, solver, params, class_weight, inner_iter, seed, selective,
              epochs, overhead: int | None, max_outer: int) -> dict:  # fmt: skip
    """What a checkpoint must match to be resumed: the data and everything that decides the
    path (the blocks' grouping follows the memory budget, and a measured overhead)."""
    source = layout.source
    identity = getattr(source, "identity", None)
    meta = {
        "data": identity() if identity else [source.n_rows, source.n_features],
        "solver": solver,
        "C": params.C,
        "eps": params.eps,
        "bias": params.bias,
        "class_weight": sorted((repr(k), float(v)) for k, v in (class_weight or {}).items()),
        "inner_iter": inner_iter,
        "seed": seed,
        "selective": selective,
        "groups": [list(map(int, g)) for g in layout.plan.groups(0)],
        "units": source.block_rows().tolist(),
        "support_capacity": int(layout.support.capacity),
        "epochs": bool(epochs),
        "max_outer": int(max_outer),
    }
    if overhead is not None:
        meta["overhead"] = overhead
    return meta


class _RunCheckpoints:
    """Atomic checkpoints of a run in blocks (``checkpoint.write_checkpoint``, place
    "blocks": plain arrays and JSON meta, no pickle)."""

    def __init__(self, path, every: float, meta: dict | None) -> None:
        if path is not None:
            check_checkpoint_path(path)
        self.path = None if path is None else os.fspath(path)
        self.every = float(every)
        self.meta = meta
        self.last = time.perf_counter()

    def due(self) -> bool:
        return self.path is not None and time.perf_counter() - self.last >= self.every

    def save(self, outer: int, group: int, run: _BlocksRun, reader_at: tuple[int, int],
             converged: bool = False) -> None:  # fmt: skip
        support, state = run.layout.support, run.state
        meta = dict(self.meta, outer=outer, group=group, reader=list(reader_at), mb=state.mb,
                    rng=support.rng.bit_generator.state)  # fmt: skip
        if converged:  # (resumed, it gives the model again instead of another epoch)
            meta["converged"] = True
        order = getattr(run.place, "order", None)
        if order is not None:
            meta["order"] = [int(order[0]), int(order[1]), bool(order[2])]
        arrays = state.arrays()
        arrays.update(W=run.W, alpha=run.alpha, support_rows=support.rows,
                      **run.epoch_state.arrays())  # fmt: skip
        if support.X is not None:
            arrays.update(support_data=support.X.data, support_indices=support.X.indices,
                          support_indptr=support.X.indptr)  # fmt: skip
        write_checkpoint(self.path, "blocks", meta, arrays)
        self.last = time.perf_counter()


def _stored_over_every_column(path) -> bool:
    """Whether a block checkpoint's run kept w over every column of a wide source (it
    predates training on the used columns; False if it cannot be read: ``_restore`` says
    what is wrong with it)."""
    try:
        stored, _ = read_checkpoint(os.fsdecode(os.fspath(path)), "blocks", meta_only=True)
    except (InvalidInputError, TypeError, ValueError):
        return False
    data = stored.get("data")
    return isinstance(data, list) and "used columns" not in data


def _stored_overhead(path, default: int) -> int:
    """The measured overhead a block checkpoint's run planned with (``default`` if it has
    none or cannot be read: ``_restore`` then says what is wrong with it)."""
    try:
        stored, _ = read_checkpoint(os.fsdecode(os.fspath(path)), "blocks", meta_only=True)
        return int(stored.get("overhead", default))
    except (InvalidInputError, TypeError, ValueError):
        return default


def _restore(path, meta: dict, run: _BlocksRun) -> tuple[int, int, tuple[int, int], bool]:
    """Load a checkpoint into the run's arrays; (outer iteration, block, the reader's round
    and block) to continue from, and whether the run had converged there."""
    name = os.fsdecode(os.fspath(path))
    stored, arrays = read_checkpoint(name, "blocks")
    differ = [key for key, value in meta.items()
              if json.loads(json.dumps(value)) != stored.get(key)]  # fmt: skip
    if differ:
        raise InvalidInputError(
            f"checkpoint {name} was written for another run (differs in: {what_differs(differ)});"
            " resume with the same data, options and --memory"
        )
    try:
        _check_stored_arrays(arrays, run)
        run.W[:] = arrays["W"]
        run.alpha[:] = arrays["alpha"]
        run.epoch_state.load(arrays)
        run.state.load(arrays)
        run.state.mb, run.state.started = float(stored["mb"]), time.perf_counter()
        support = run.layout.support
        support.rows = arrays["support_rows"]
        if "support_data" in arrays:
            n_cols = run.W.shape[1] - (1 if meta["bias"] >= 0 else 0)
            support.X = _stored_support(arrays, n_cols, run.alpha.shape[1])
        support.rng.bit_generator.state = stored["rng"]
        if "order" in stored:
            bucket_size, buckets_per_group, use_prefetch = stored["order"]
            for value in (bucket_size, buckets_per_group):  # (as _dual.start_order checks)
                if isinstance(value, bool) or not isinstance(value, int) or \
                        not 1 <= value < 2**31:  # fmt: skip
                    raise ValueError(f"order {stored['order']!r} out of range")
            run.epoch_order = bucket_size, buckets_per_group, bool(use_prefetch)
        round_, position = (int(v) for v in stored["reader"])
        outer, group = int(stored["outer"]), int(stored["group"])
        n_groups = len(run.layout.plan.groups(round_)) if 0 <= round_ < 2**62 else 0
        # (group: the outer iteration's next block, its count after the last)
        if not (0 <= position < n_groups and 0 <= group <= run.layout.plan.n_units
                and outer >= 1):  # fmt: skip
            raise ValueError(f"reader {stored['reader']!r}, group {group} or outer {outer} "
                             "out of the plan")
        return outer, group, (round_, position), stored.get("converged") is True
    except (KeyError, ValueError, TypeError, OverflowError) as error:  # (OverflowError: the
        # generator's state of integers beyond 64 or 128 bits)
        raise InvalidInputError(f"checkpoint {name}: damaged ({type(error).__name__}: "
                                f"{error})") from None  # fmt: skip


def _check_stored_arrays(arrays: dict[str, np.ndarray], run: _BlocksRun) -> None:
    """Every stored array of the run's state as the run's own (shape and kind: a kernel reads
    them without bounds checks), its values where they can be checked: w and alpha finite,
    alpha >= 0 and within its loss's bound. A ValueError names the first that is not."""
    live = {"W": run.W, "alpha": run.alpha, **run.epoch_state.arrays(), **run.state.arrays()}
    for key, own in live.items():
        array = arrays[key]
        if array.shape != own.shape or array.dtype.kind != own.dtype.kind:
            raise ValueError(f"{key!r} is {array.dtype}{list(array.shape)}, expected "
                             f"{own.dtype}{list(own.shape)}")  # fmt: skip
        if array.dtype.kind == "f" and np.isnan(array).any() and key not in _MAY_BE_NAN:
            raise ValueError(f"{key!r} holds NaN")
    for key in ("W", "alpha", "w_start"):
        if not np.isfinite(arrays[key]).all():
            raise ValueError(f"{key!r} holds an infinite value")
    alpha = arrays["alpha"]
    if alpha.size and alpha.min() < 0:
        raise ValueError("'alpha' holds a negative value")
    targets = run.targets
    largest_cost = max(float(np.max(targets.weighted_C, initial=0.0)), float(targets.C))
    if run.loss != LOSS_SQUARED_HINGE and alpha.size and alpha.max() > largest_cost:
        raise ValueError(f"'alpha' holds {alpha.max():g}, above the largest cost "
                         f"{largest_cost:g}")  # fmt: skip


# (the dual values of an iteration's start are NaN where the place computes none)
_MAY_BE_NAN = ("dual_start", "dual_terms")


def _stored_support(arrays: dict[str, np.ndarray], n_cols: int, n_rows: int) -> sp.csr_matrix:
    """The kept support vectors' rows of a checkpoint, checked as a cache's block is (row
    numbers unique and within the data, offsets from 0 not decreasing, columns in range,
    values finite): the kernels index with them."""
    rows = arrays["support_rows"]
    indptr, indices = arrays["support_indptr"], arrays["support_indices"]
    data = arrays["support_data"]
    if rows.dtype.kind not in "iu" or rows.ndim != 1 or (rows.size and (
            rows.min() < 0 or rows.max() >= n_rows or np.unique(rows).size != rows.size)):
        raise ValueError("'support_rows' are not distinct rows of the data")  # fmt: skip
    if (indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu"
            or indptr.shape != (rows.shape[0] + 1,) or indices.ndim != 1
            or data.shape != indices.shape or data.dtype.kind != "f"):  # fmt: skip
        raise ValueError("the support vectors' arrays do not make rows")
    if _first_bad_row(indptr, indices, n_cols) != -1 or int(indptr[-1]) != indices.shape[0]:
        raise ValueError("the support vectors' rows are invalid (indptr or indices)")
    if not np.isfinite(data).all():
        raise ValueError("the support vectors' values hold NaN or infinity")
    return sp.csr_matrix((data, indices, indptr), shape=(rows.shape[0], n_cols))


def _print_outer(p: OuterProgress) -> None:
    gaps = [pr - du for pr, du in zip(p.primal, p.dual, strict=True)]
    rate = p.mb_read / p.seconds if p.seconds > 0 else math.inf
    print(
        f"outer {p.iteration}: {p.blocks} blocks, stopping measure {p.measure:.3g}, "
        f"primal {sum(p.primal):.10g}, gap {max(gaps):.3g} (at the iteration's start), "
        f"{p.seconds:.2f} s, {rate:.0f} MB/s",
        file=sys.stderr,
        flush=True,
    )


# The share of the memory budget a piece of the data scored after each fold of -v takes.
SCORING_SHARE = 16

def _fold_class_order(labels: np.ndarray, class_index: np.ndarray, n_rows: int, n_folds: int,
                      seed: int, fold: int) -> np.ndarray:  # fmt: skip
    """The labels of fold ``fold``'s training rows in LIBLINEAR's order, ``group_labels``' of
    the rows of its subproblem, which are in the folds' permutation's order (the folds are
    made again, for the permutation only while this runs): as they first appear, +1 before
    -1."""
    fit, _ = cv_folds(n_rows, n_folds, seed)[fold]
    return group_labels(labels[class_index[fit]])[0]


def cross_validate_blocks(
    source: BlockSource, n_folds: int, seed: int = 1,
    on_fold: Callable[[int, Model | None], object] | None = None, **params,
) -> tuple[int, int]:  # fmt: skip
    """LIBLINEAR's ``-v n_folds`` by block minimisation: (rows predicted right, rows).

    The folds are ``problems.cv_folds``' (the in-memory cross-validation's, for the same
    ``seed``), held as one fold number a row. Each fold trains ``train_blocks(source,
    held_out=<its rows>, seed=seed, **params)`` on the other folds' rows (a held-out row costs
    0 and takes no part), then one pass over the blocks scores its held-out rows. Memory is
    ``train_blocks``' plus three bytes a row (fold, held-out mark, class; more for more than
    256 folds or classes). Ctrl-C ends the whole cross-validation
    (KeyboardInterrupt). ``progress`` (a ``ProgressTimer``): the folds done, and each fold's
    blocks, when a line is due. ``on_fold(f, model)``: each fold's number and model once it
    is trained (None for a fold whose training rows are of one class), as
    ``training.cross_validation``'s.
    """
    timer: ProgressTimer | None = params.pop("progress", None)
    n_rows = source.n_rows
    folds = cv_folds(n_rows, n_folds, seed)
    fold_of = np.empty(n_rows, dtype=np.min_scalar_type(len(folds)))
    for f in range(len(folds)):
        fold_of[folds.held_out(f)] = f
    n_folds = len(folds)
    del folds
    # the rows' classes as small integers: the labels themselves (8 bytes a row) were held
    # through every fold beside its training, past the memory budget
    labels, class_index = group_labels(source.labels())
    class_index = class_index.astype(np.min_scalar_type(int(class_index.max(initial=0))))
    # the held-out rows are scored a piece of a stored block at a time, read into one
    # buffer: a stored block copied whole (64 MB by default) took the run past its memory
    budget = parse_memory(params.get("memory", "2G"))
    scoring = (source.split(max(MIN_BLOCK_BYTES, budget // SCORING_SHARE))
               if hasattr(source, "split") else source)  # fmt: skip
    buffer = BlockBuffer()
    correct = 0
    with silenced(TrainingInterrupted):
        for f in range(int(fold_of.max(initial=0)) + 1):
            held_out = fold_of == f
            single = single_class(class_index[~held_out])
            if single is not None:  # (LIBLINEAR's model of one class predicts it, as in memory)
                correct += int(np.count_nonzero(class_index[held_out] == single))
                if on_fold is not None:
                    on_fold(f, None)
                continue
            model = train_blocks(
                source, held_out=held_out, seed=seed,
                class_order=_fold_class_order(labels, class_index, n_rows, n_folds, seed, f),
                progress=timer.labelled(f"fold {f + 1} of {n_folds}") if timer else None,
                **params,
            )  # fmt: skip
            if model.interrupted or model.stop_signal is not None:
                raise RunInterrupted(model.stop_signal)
            if on_fold is not None:
                on_fold(f, model)
            r0 = 0
            for k in range(scoring.n_blocks):
                X_b, y_b = scoring.gather(np.array([k]), out=buffer)
                r1 = r0 + X_b.shape[0]
                mine = held_out[r0:r1]
                if mine.any():
                    predicted = model.predict(as_csr(X_b, check_finite=False)[mine], n_jobs=1)
                    correct += int(np.count_nonzero(predicted == y_b[mine]))
                del X_b, y_b
                r0 = r1
            # (before the next fold trains: its solutions hold a fold's w and alpha)
            del model
            if timer is not None:
                timer.tick(lambda done=f + 1: f"cross-validation: {done} of {n_folds} folds done")
    return correct, n_rows


__all__ = [
    "OuterProgress",
    "cross_validate_blocks",
    "cross_validate_cache",
    "train_blocks",
    "train_cache",
]
