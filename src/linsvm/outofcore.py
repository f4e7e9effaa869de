"""Block minimisation's place: rows of a file larger than memory, a block at a time.

Yu, Hsieh, Chang and Lin (KDD 2010, "Large linear classification when data cannot fit in
memory"): the rows are split into blocks that fit a memory budget; ``w`` and every row's
``alpha`` stay in memory; an outer iteration visits the blocks in turn, each time running the
dual coordinate descent solver on that block's rows alone, warm-started from their ``alpha``
and from the shared ``w`` (the solver interface's partition mode: ``Subproblem(alpha0=, w0=)``,
docs/architecture.md, "One partitioned dual"), while the next block is read in the background.

This module owns where the rows live and how a block's solve reaches them: the plan of
training blocks under the budget (``plan_blocks``), the reader (``Reader``), the rows kept
across blocks (``SupportCache``) and the two places, each a partition's local solve for
``partitioned.PartitionedDual``:

- **Epochs (the duals' default, ``EpochPlace``).** An outer iteration is one epoch of the
  in-memory solver (``dcd.py``) a block at a time: its own pass (``dcd_blocks.svm_block_epoch``,
  over per-row records made as the block streams by) over each training block in the bucketed
  order, shrinking against the previous epoch's extremes with the marks kept across blocks
  and epochs (``Shrinking``), and the training blocks drawn afresh every epoch from small units
  of the data (``Plan``: with fixed blocks visited in turn, one pass a visit converges several
  times slower per epoch than the in-memory order, whatever the rows' order in the file).
  The LR dual (-s 7) goes by epochs too, its pass over a block the in-memory solver's
  (``dcd_blocks.lr_block_epoch``), with its own state across blocks and epochs
  (``LogisticEpochs``: every row's C_i - alpha_i, the inner Newton tolerance).
- **Classic (``BlockPlace``;** ``selective=True`` or ``inner_iter > 1``): fixed blocks, each
  solved for ``inner_iter`` passes, with the support vectors of the other blocks joined.

The run itself (the classes and targets, the outer loop, LIBLINEAR's stopping rule and its
check at the final w, Solutions, checkpoints) is ``runner.train_blocks``'s, which
``linsvm.train(path, memory=...)`` calls; ``train_blocks``, ``train_cache`` and the
cross-validations here are that function over a source or a cache file.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._memory import format_bytes
from .data import as_csr, is_integer
from .errors import InvalidInputError
from .interrupts import RunInterrupted
from .io.blocks import ArrayBlocks, BlockBuffer, BlockSource, CacheBlocks, stack_rows, unit_rows
from .model import Model
from .objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_sum
from .partitioned import LocalTask, PartResult
from .problems import ConvergenceWarning, RowTargets, TrainingInterrupted, silenced
from .solvers import Subproblem
from .solvers._base import Progress
from .solvers._dual import choose_order, order_buffers, prefetch_pays
from .solvers._random import new_state, numpy_generator
from .solvers.dcd_blocks import check_block, enter_interior, lr_block_epoch, svm_block_epoch
from .solvers.dual_lr import INNER_EPS_FLOOR, INNER_EPS_START

# Default passes of the dual solver over a block per visit (Yu et al. found a few passes per
# block best: more solves a block's sub-problem beyond what the stale rest of w justifies).
DEFAULT_INNER_ITER = 5
DEFAULT_MAX_OUTER = 100
# Bytes a training block costs per row beyond its CSR arrays: the label, the row pointer and
# the dual solver's per-row state (a 32-byte record, active set, order, shrink flags).
ROW_OVERHEAD_BYTES = 8 + 8 + 32 + 4 + 4 + 1 + 8
# Memory the run needs besides blocks, w and alpha (interpreter, libraries, compiled code)
# when the caller does not measure it (``measured_overhead``, as ``train --memory`` does).
FIXED_OVERHEAD_BYTES = 256 << 20
# What a run holds besides its arrays (the reader's thread, the objects made per block),
# measured: under 0.5 MiB on a 166k-row cache whose blocks are 1.5 MB; cross-validation of
# 10 classes at its smallest budget went up to 0.2 MiB past 1 MiB in clean clones.
RUN_SLACK_BYTES = 2 << 20
# The smallest training block a budget must leave room for (smaller blocks train, but a
# pass then reads the data in thousands of pieces); less when the whole data is smaller.
MIN_BLOCK_BYTES = 1 << 20
# The step a measured overhead is rounded up to (measured_overhead).
OVERHEAD_STEP_BYTES = 16 << 20
# Blocks' worth of memory selective block minimisation holds at its peak (see plan_blocks).
SELECTIVE_SHARES = 7
# Units (pieces of stored blocks) a training block is drawn from in the epoch mode (Plan).
UNITS_PER_BLOCK = 8

LOSSES = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE, 7: LOSS_LOGISTIC}


def train_blocks(source: BlockSource, **options) -> Model:
    """``runner.train_blocks``: block minimisation over ``source`` (``linsvm.train`` with
    ``memory=`` is the one way in for files)."""
    from .runner import train_blocks as run

    return run(source, **options)


def cross_validate_blocks(source: BlockSource, n_folds: int, seed: int = 1,
                          **options) -> tuple[int, int]:  # fmt: skip
    """``runner.cross_validate_blocks``: LIBLINEAR's ``-v`` over ``source`` in blocks."""
    from .runner import cross_validate_blocks as run

    return run(source, n_folds, seed, **options)


def train_cache(path, memory: str | int = "2G", **options) -> Model:
    """``runner.train_cache``: block minimisation over the cache file at ``path``, with the
    constant overhead unless ``overhead_bytes`` says otherwise (``linsvm.train(path,
    memory=...)`` measures it, as the command does)."""
    from .runner import train_cache as run

    return run(path, memory, **options)


def cross_validate_cache(
    path, n_folds: int, memory: str | int = "2G", seed: int = 1, **options
) -> tuple[int, int]:
    """``runner.cross_validate_cache``: LIBLINEAR's ``-v`` over the cache file at ``path``."""
    from .runner import cross_validate_cache as run

    return run(path, n_folds, memory, seed, **options)


def parse_memory(text: str | int) -> int:
    """Bytes from "2G", "512M", "1.5g", "800k" or a plain number of bytes."""
    if is_integer(text):
        value = int(text)
    else:
        units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
        raw = str(text).strip().lower().removesuffix("b").removesuffix("i")
        scale = units.get(raw[-1:], 1)
        number = raw[:-1] if raw[-1:] in units else raw
        try:
            value = int(float(number) * scale)  # (inf and nan: OverflowError, ValueError)
        except (ValueError, OverflowError):
            raise InvalidInputError(
                f"memory must be a size such as 2G, 512M or a number of bytes, got {text!r}"
            ) from None
    if value <= 0:
        raise InvalidInputError(f"memory must be positive, got {text!r}")
    return value


def group_blocks(
    rows: np.ndarray, nbytes: np.ndarray, budget: int, n_vectors: int
) -> list[tuple[int, int]]:
    """Consecutive stored blocks grouped into training blocks of at most ``budget`` bytes each
    (CSR bytes plus the per-row state of ``n_vectors`` sub-problems); a stored block larger
    than the budget is a group of its own (it cannot be split here)."""
    cost = _training_bytes(rows, nbytes, n_vectors)
    groups = []
    k0 = 0
    total = 0
    for k in range(rows.shape[0]):
        if k > k0 and total + cost[k] > budget:
            groups.append((k0, k))
            k0, total = k, 0
        total += cost[k]
    if rows.shape[0]:
        groups.append((k0, rows.shape[0]))
    return groups


class Plan:
    """Which units form each training block in each pass over the data (a *round*; every
    outer iteration and every verification pass is one). Fixed: consecutive units packed in
    storage order, the same every round (the classic block minimisation). Shuffled (the
    epoch mode): every round its own seeded permutation of the units, packed in that order,
    so that a training block is a fresh random set of units each epoch.

    Why shuffled: one pass a visit over blocks of fixed rows converges far slower per epoch
    than the in-memory solver's order over all rows, even with the rows shuffled in the file
    (measured on pypi-recent's first 200k rows, -s 3, 12 blocks: after 11 epochs P(w) 1.3%
    above the one-block order's, 1.4% with the rows shuffled; the blocks in a random order
    each epoch, 0.5%). Training blocks drawn afresh from several units converge as in memory
    (96 units, 8 a block: 0.01% above; 48 units, 4 a block: 0.01%; 96 units one a block,
    0.12%), on rows in no particular order: units are consecutive rows, and a file sorted by
    label with a rare class trains several times slower (w8a as distributed, -s 7, 6 blocks:
    237 epochs against 89 shuffled; 32 units a block did no better, 272)."""

    def __init__(self, rows: np.ndarray, cost: np.ndarray, budget: int, shuffled: bool,
                 seed: int) -> None:  # fmt: skip
        self.cost = cost
        self.budget = budget
        self.shuffled = shuffled
        self.seed = seed
        self.starts = np.concatenate(([0], np.cumsum(rows))).astype(np.int64)
        self.n_units = rows.shape[0]
        self._fixed = self._pack(np.arange(self.n_units))

    def _pack(self, order: np.ndarray) -> list[np.ndarray]:
        if not self.shuffled:
            groups = group_blocks(np.zeros(order.shape[0]), self.cost[order], self.budget, 1)
            return [order[k0:k1] for k0, k1 in groups]
        # as many units a block as any that many fit: the same number of blocks every round
        per_block = max(1, self.budget // max(int(self.cost.max(initial=1)), 1))
        return [order[k : k + per_block] for k in range(0, order.shape[0], per_block)]

    def groups(self, round_: int) -> list[np.ndarray]:
        """The training blocks of ``round_``: arrays of unit numbers."""
        if not self.shuffled:
            return self._fixed
        rng = numpy_generator(self.seed, round_)
        return self._pack(rng.permutation(self.n_units))

    def rows(self, units: np.ndarray) -> slice | np.ndarray:
        """The global row numbers of a training block: a slice where its units follow
        each other in storage order."""
        if units.shape[0] and np.all(np.diff(units) == 1):
            return slice(int(self.starts[units[0]]), int(self.starts[units[-1] + 1]))
        return unit_rows(self.starts, units)


def _training_bytes(rows: np.ndarray, nbytes: np.ndarray, n_vectors: int) -> np.ndarray:
    """What each stored block costs as part of a training block: its CSR bytes plus the
    per-row state of ``n_vectors`` sub-problems. Shapes (n_blocks,)."""
    return nbytes + rows * (ROW_OVERHEAD_BYTES + 8 * max(n_vectors - 1, 0))


@dataclass
class BlockLayout:
    """Where a run's rows live: the source (its units cut to the plan's size), the plan of
    training blocks, the kept support vectors' cache, and the overhead the budget counted."""

    source: BlockSource
    plan: Plan
    support: SupportCache
    overhead: int


def plan_blocks(source: BlockSource, budget: int, n_vectors: int, run_bytes: int,
                overhead_bytes: int | None, selective: bool, epochs: bool,
                max_block_bytes: int | None, seed: int) -> BlockLayout:  # fmt: skip
    """The training blocks of a run of ``n_vectors`` sub-problems in ``budget`` bytes.

    The budget holds everything but w and alpha (which grow with the data's columns and rows
    whatever the budget): the overhead (``overhead_bytes``, or ``FIXED_OVERHEAD_BYTES``), the
    run's own arrays (``run_bytes``: the per-row targets, shrink marks, w at an iteration's
    start, a chunk's temporaries) and ``RUN_SLACK_BYTES``, and shares of the rest: the block
    training and the one being read; with ``selective`` also the kept support vectors, the
    solved copy of block + support vectors (two shares), the support vectors' next version
    while it is made, and one for the solvers' per-row state and the allocator's slack
    (measured: tests/test_outofcore.py). A budget too small is refused with the smallest
    that trains.
    """
    shares = SELECTIVE_SHARES if selective else 2
    overhead = FIXED_OVERHEAD_BYTES if overhead_bytes is None else int(overhead_bytes)
    fixed = overhead + run_bytes + RUN_SLACK_BYTES
    # A stored block larger than a training block is cut into pieces. Copied from its
    # mapping, its pages stay resident until its last piece is copied (measured: a peak
    # 24 MiB past the budget on a cache of one 28 MB block): the largest counts on top then.
    # Read from the file (the usual case), nothing of it stays.
    stored = (int(source.block_nbytes().max(initial=0))
              if getattr(source, "pieces_from_mapping", False) else 0)  # fmt: skip
    block_budget = (budget - fixed) // shares
    if stored > block_budget:
        block_budget = (budget - fixed - stored) // shares
    whole = int(_training_bytes(source.block_rows(), source.block_nbytes(), n_vectors).sum())
    if block_budget < min(MIN_BLOCK_BYTES, whole):
        raise InvalidInputError(
            _too_small(budget, overhead_bytes is not None, overhead, fixed - overhead, shares,
                       whole, stored)
        )  # fmt: skip
    support_budget = block_budget if selective else 0
    uncapped_block_budget = block_budget  # (before max_block_bytes, a test knob, caps it)
    if max_block_bytes is not None:
        if not is_integer(max_block_bytes) or max_block_bytes < 1:
            raise InvalidInputError(f"max_block_bytes must be a number of bytes >= 1, got "
                                    f"{max_block_bytes!r}")  # fmt: skip
        block_budget = min(block_budget, int(max_block_bytes))
    # the units training blocks are made of: the stored blocks, cut where larger than a
    # training block (fixed plan) or than a share of one (epochs: blocks drawn afresh)
    unit_budget = block_budget // UNITS_PER_BLOCK if epochs else block_budget
    if hasattr(source, "split") and source.block_nbytes().max(initial=0) > unit_budget:
        source = source.split(max(unit_budget, 1))
    cost = _training_bytes(source.block_rows(), source.block_nbytes(), n_vectors)
    # Cut to the budget's size, a unit larger than a training block is a single row: it
    # trains as a block of its own, which the shares must hold.
    largest_row = int(cost.max(initial=0)) if hasattr(source, "split") else 0
    if largest_row > uncapped_block_budget:
        raise InvalidInputError(
            _too_small(budget, overhead_bytes is not None, overhead, fixed - overhead, shares,
                       whole, stored, largest_row)
        )  # fmt: skip
    plan = Plan(source.block_rows(), cost, block_budget, epochs, seed)
    groups = plan.groups(0)
    # the kept support vectors take at most a training block's worth of memory
    nbytes = source.block_nbytes()
    largest = max(int(nbytes[g].sum()) for g in groups)
    support = SupportCache(min(support_budget, largest) if len(groups) > 1 else 0, seed)
    return BlockLayout(source, plan, support, overhead)


def measured_overhead(solver: int = 1) -> int | None:
    """Bytes this process holds before a run in blocks, measured: its resident memory once
    the compiled code such a run uses is loaded (a run of ``solver`` on four rows in memory)
    and the memory freed so far is handed back to the system. ``None`` where the resident
    memory cannot be read (not Linux); ``train_blocks(overhead_bytes=None)`` then plans the
    constant ``FIXED_OVERHEAD_BYTES``.

    ``train --memory`` counts this in its budget: the command's process holds nothing else.
    Rounded up to ``OVERHEAD_STEP_BYTES``: the measure varies by a few MiB from run to run,
    and the blocks planned from it decide the model's last bits, so the same command gives
    the same model unless a measure crosses a step.
    """
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]]))
    with silenced(ConvergenceWarning, TrainingInterrupted):
        # (not converged in two outer iterations: no matter)
        model = train_blocks(ArrayBlocks(X, np.array([1, -1, 1, -1]), 2), solver=solver,
                             memory=1 << 40, max_outer=2)  # fmt: skip
    if model.stop_signal is not None:
        # a signal that stopped this run asked the run to be measured for to stop
        raise RunInterrupted(model.stop_signal)
    return_freed_arrays_to_the_system()
    resident = _resident_bytes()
    if resident is None:
        return None
    return -(-resident // OVERHEAD_STEP_BYTES) * OVERHEAD_STEP_BYTES


def _resident_bytes() -> int | None:
    """This process's resident memory (Linux: /proc/self/statm), or None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class SupportCache:
    """Selective block minimisation's memory: rows with alpha_i > 0 (support vectors, in any
    class) of the blocks trained so far, kept in memory up to ``capacity`` bytes, so that each
    block's solve also revisits the rows that decide the model (Chang and Roth, KDD 2011).

    Why: a block's coordinates updated all before any other block's converge far slower per
    pass over the data than one random order over all rows (measured on 100k pypi-recent
    rows, 4 blocks: the dual 1.8e-3 from its optimum after 12 passes, against 1.4e-5 in one
    order). Interleaving the other blocks' support vectors restores most of it: a random
    quarter of them, 9.4e-6; half, 5.5e-7 (docs/architecture.md, "Blocks"). Over capacity, a
    seeded random sample of the candidates is kept.
    """

    def __init__(self, capacity: int, seed: int) -> None:
        self.capacity = int(capacity)
        self.rng = numpy_generator(seed)
        self.rows = np.zeros(0, dtype=np.int64)  # global row numbers
        self.X: sp.csr_matrix | None = None

    def join(self, X_b: sp.csr_matrix, r0: int, r1: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """(rows to solve, their global numbers): the block's, then the kept rows outside it."""
        block_rows = np.arange(r0, r1)
        if self.X is None or self.rows.shape[0] == 0:
            return X_b, block_rows
        outside = np.flatnonzero((self.rows < r0) | (self.rows >= r1))
        if not outside.shape[0]:
            return X_b, block_rows
        X = stack_rows([(X_b, None), (self.X, outside)], X_b.shape[1])
        return X, np.concatenate([block_rows, self.rows[outside]])

    def update(self, X_b: sp.csr_matrix, r0: int, r1: int, alpha: np.ndarray) -> None:
        """After block [r0, r1) trained: its support vectors replace its old ones; the kept
        rows of other blocks stay while their alpha is non-zero. Rows are chosen first and
        copied once (the copies are what counts against the memory budget)."""
        if self.capacity <= 0:
            return
        supported = np.any(alpha > 0.0, axis=0)
        new = np.flatnonzero(supported[r0:r1])
        kept = np.zeros(0, dtype=np.int64)
        if self.X is not None and self.rows.shape[0]:
            kept = np.flatnonzero(((self.rows < r0) | (self.rows >= r1)) & supported[self.rows])
        row_bytes = X_b.data.itemsize + X_b.indices.itemsize
        lengths = np.concatenate([np.diff(X_b.indptr)[new], self._lengths()[kept]])
        cost = np.cumsum(lengths * row_bytes + 16)
        n_new, total = new.shape[0], new.shape[0] + kept.shape[0]
        if total and cost[-1] > self.capacity:
            # a seeded random sample of the candidates that fits
            fit = int(np.searchsorted(np.sort(lengths * row_bytes + 16).cumsum(), self.capacity))
            chosen = np.sort(self.rng.choice(total, fit, replace=False))
            new, kept = new[chosen[chosen < n_new]], kept[chosen[chosen >= n_new] - n_new]
        parts = [(X_b, new)] + ([(self.X, kept)] if kept.shape[0] else [])
        numbers = np.concatenate([new + r0, self.rows[kept]])
        self.X = stack_rows(parts, X_b.shape[1])
        self.rows = numbers

    def _lengths(self) -> np.ndarray:
        return np.diff(self.X.indptr) if self.X is not None else np.zeros(0, dtype=np.int64)


def _too_small(budget: int, measured: bool, overhead: int, state: int, shares: int,
               whole: int, stored: int, largest_row: int = 0) -> str:
    """The refusal of a budget too small, with the smallest that trains (and the one that
    takes the data in one block), as --memory takes them: "208M". ``state``: the run's bytes
    besides the overhead and the blocks (labels, shrink marks, w at an iteration's start);
    ``stored``: the largest stored block's bytes, resident on top when stored blocks are cut
    (0: never cut); ``largest_row``: the training bytes of the largest row, where it is
    larger than a training block (0 otherwise)."""

    def size(n_bytes: int) -> str:
        # rounded up to 8 MiB, with 4 MiB to spare: a measured overhead varies by a few MiB
        # from one process to the next
        return f"{-(-(n_bytes + (4 << 20)) // (8 << 20)) * 8}M"

    what = ("this process holds {} MiB before training (measured: interpreter, libraries, "
            "compiled code)" if measured else "the fixed overhead (interpreter, libraries, "
            "compiled code) takes {} MiB").format(-(-overhead // 2**20))  # fmt: skip
    block = max(min(MIN_BLOCK_BYTES, whole), largest_row)
    smallest = overhead + state + shares * block + (stored if stored > block else 0)
    row = (f"; a block holds at least one row, and the largest takes "
           f"{-(-largest_row // 2**20)} MiB" if largest_row else "")  # fmt: skip
    return (
        f"memory {format_bytes(budget)} is too small: {what} and the run's labels and state "
        f"take {-(-state // 2**20)} MiB{row}; the smallest budget that trains is "
        f"{size(smallest)} "
        f"({size(overhead + state + shares * whole)} trains the data in one block)"
    )


def return_freed_arrays_to_the_system() -> None:
    """Make glibc's malloc serve every allocation over 128 KiB by mmap, so that a freed block
    goes back to the system at once. By default glibc raises that threshold after the first
    large frees, and the blocks read and dropped in turn then stay in its heap: measured, a
    run budgeted for 40 MB of blocks grew by 65 MB, and by 33 MB with this. What is free in
    its heaps now (every thread's) goes back too (malloc_trim). Elsewhere (not glibc) a
    no-op."""
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError, TypeError):  # (Windows: CDLL(None) is a TypeError)
        return
    m_mmap_threshold = -3
    mallopt(m_mmap_threshold, 128 << 10)
    malloc_trim(0)


def _first_pass_hook(first: list, loss: int) -> Callable[[Progress], bool]:
    """A hook that records the first inner pass's extremes of the stopping rule's g: the
    projected gradient's (SVM duals), or +-max |g| (LR dual)."""

    def hook(progress: Progress) -> bool:
        if not first:
            if loss == LOSS_LOGISTIC:
                gmax = progress.figures["gmax"]
                first.append((gmax, -gmax))
            else:
                first.append((progress.figures["pg_max"], progress.figures["pg_min"]))
        return True

    hook.every_iteration = False
    return hook


@dataclass
class BlockPlace:
    """Blocks of the rows as partitions of one partitioned dual (``partitioned.py``), solved
    in turn: each read from the source while the one before trains (``Reader``), joined
    with the kept support vectors of the other blocks (``SupportCache``), and solved by the
    registered dual solver from its rows' alpha and the shared W for the task's passes, every
    one-vs-rest sub-problem on the same read."""

    reader: Reader
    support: SupportCache
    targets: RowTargets
    alpha: np.ndarray  # (n_vectors, n_rows): every row's, updated in place
    solve_sub: Callable  # the registered dual solver's solve(sub, hook)
    bias: float
    loss: int
    tolerance: list[float]  # per sub-problem
    seed: int

    @property
    def n_partitions(self) -> int:
        return self.reader.n_groups

    def solve(self, group, W, task: LocalTask) -> list[PartResult]:
        [g] = group
        started = time.perf_counter()
        alpha, targets, bias, loss = self.alpha, self.targets, self.bias, self.loss
        X_b, rows, megabytes = self.reader.next()
        r0, r1 = rows.start, rows.stop  # the fixed plan's blocks are row ranges
        # the block's rows, then the kept support vectors of the other blocks
        X_solve, rows = self.support.join(X_b, r0, r1)
        n_vectors = W.shape[0]
        block_loss = np.zeros(n_vectors)
        pg_max, pg_min = np.full(n_vectors, -np.inf), np.full(n_vectors, np.inf)
        for k in range(n_vectors):
            y_b, c_b = targets.rows(k, slice(r0, r1))
            y_s, c_s = targets.rows(k, rows)
            if loss == LOSS_LOGISTIC:
                a_s = alpha[k, rows]
                enter_interior(X_solve.indptr, X_solve.indices, X_solve.data, bias, y_s, c_s,
                                a_s, W[k])  # fmt: skip
                alpha[k, rows] = a_s
            block_loss[k] = loss_sum(
                X_b.indptr, X_b.indices, X_b.data, bias, y_b, c_b, task.W_start[k], loss
            )  # fmt: skip
            first: list[tuple[float, float]] = []
            sub = Subproblem(
                X_solve, y_s, c_s, eps=self.tolerance[k], max_iter=task.passes, bias=bias,
                seed=self.seed + task.outer * 7919 + g, alpha0=alpha[k, rows], w0=W[k],
                options={"shrinking": True, "objectives": False},
            )  # fmt: skip
            sol = self.solve_sub(sub, _first_pass_hook(first, loss))
            W[k] = sol.w
            alpha[k, rows] = sol.alpha
            if first:
                pg_max[k], pg_min[k] = first[0]
        del X_solve, rows
        self.support.update(X_b, r0, r1, alpha)
        del X_b
        return [PartResult(g, loss=block_loss, pg_max=pg_max, pg_min=pg_min,
                           seconds=time.perf_counter() - started,
                           figures={"mb": megabytes})]  # fmt: skip


class _EpochState:
    """What the epoch mode's states share: their checkpoint arrays (``arrays``, by the names
    stored) are loaded back in place."""

    def arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for name, array in self.arrays().items():
            array[:] = arrays[name]


@dataclass
class Shrinking(_EpochState):
    """The epoch mode's shrinking state, across blocks and epochs (saved in checkpoints): a
    mark a row and sub-problem (1: shrunk, skipped until the marks are cleared), and the
    thresholds an epoch shrinks against, the previous epoch's projected-gradient extremes
    (LIBLINEAR's M-bar and m-bar; +-inf: shrink nothing)."""

    shrunk: np.ndarray  # (n_vectors, n_rows) uint8
    pg_max_old: np.ndarray  # (n_vectors,)
    pg_min_old: np.ndarray  # (n_vectors,)

    @classmethod
    def fresh(cls, n_vectors: int, n_rows: int) -> Shrinking:
        shrinking = cls(np.zeros((n_vectors, n_rows), dtype=np.uint8), np.zeros(n_vectors),
                        np.zeros(n_vectors))  # fmt: skip
        shrinking.clear()
        return shrinking

    def clear(self) -> None:
        """Every row active again, nothing shrunk in the next epoch (LIBLINEAR's re-check)."""
        self.shrunk[:] = 0
        self.pg_max_old[:] = np.inf
        self.pg_min_old[:] = -np.inf

    def next_epoch(self, pg_max: np.ndarray, pg_min: np.ndarray) -> None:
        """The next epoch shrinks against this one's extremes (as ``end_iteration``)."""
        self.pg_max_old[:] = np.where(pg_max > 0.0, pg_max, np.inf)
        self.pg_min_old[:] = np.where(pg_min < 0.0, pg_min, -np.inf)

    @property
    def nbytes(self) -> int:
        return self.shrunk.nbytes

    def arrays(self) -> dict[str, np.ndarray]:
        """The checkpoint's arrays (names as stored)."""
        return {"shrunk": self.shrunk, "pg_max_old": self.pg_max_old,
                "pg_min_old": self.pg_min_old}  # fmt: skip


@dataclass
class LogisticEpochs(_EpochState):
    """The LR dual's epoch-mode state across blocks and epochs (saved in checkpoints): every
    row's C_i - alpha_i, kept apart from alpha_i as the solver keeps its pairs (alpha_i near
    C_i loses the difference's digits otherwise, and its gradient's log term with them); per
    sub-problem the inner Newton tolerance of the epoch, and the epoch's Newton steps and
    rows visited so far. As the in-memory solver after an outer iteration, the tolerance is
    divided by 10 (down to ``inner_eps_min``) after an epoch whose steps numbered at most a
    tenth of its rows."""

    alpha_complement: np.ndarray  # (n_vectors, n_rows)
    inner_eps: np.ndarray  # (n_vectors,)
    newton: np.ndarray  # (n_vectors,) int64
    visited: np.ndarray  # (n_vectors,) int64
    inner_eps_min: float

    @classmethod
    def fresh(cls, n_vectors: int, n_rows: int, eps: float) -> LogisticEpochs:
        # (the solver's floor: eps = 0 keeps 1e-8, else every inner loop runs to its cap)
        floor = min(INNER_EPS_FLOOR, eps) if eps > 0 else INNER_EPS_FLOOR
        return cls(np.zeros((n_vectors, n_rows)), np.full(n_vectors, INNER_EPS_START),
                   np.zeros(n_vectors, dtype=np.int64), np.zeros(n_vectors, dtype=np.int64),
                   floor)  # fmt: skip

    def clear(self) -> None:
        """Nothing to re-check: the LR dual shrinks no rows."""

    def next_epoch(self, pg_max: np.ndarray, pg_min: np.ndarray) -> None:
        """The next epoch's inner tolerance, from this one's Newton steps."""
        few = self.newton <= self.visited // 10
        self.inner_eps[few] = np.maximum(self.inner_eps_min, 0.1 * self.inner_eps[few])
        self.newton[:] = 0
        self.visited[:] = 0

    @property
    def nbytes(self) -> int:
        return self.alpha_complement.nbytes

    def arrays(self) -> dict[str, np.ndarray]:
        """The checkpoint's arrays (names as stored)."""
        return {"alpha_complement": self.alpha_complement, "inner_eps": self.inner_eps,
                "newton": self.newton, "visited": self.visited}  # fmt: skip


class EpochPlace:
    """Blocks of the rows as partitions solved in turn, one pass each: the dual solvers'
    epoch mode. An outer iteration is one epoch of the in-memory solver over every row,
    visited a block at a time (``svm_block_epoch``, ``lr_block_epoch``): the bucketed order
    within the block, the state kept across blocks and epochs (``Shrinking`` for the SVM
    duals, ``LogisticEpochs`` for the LR dual). Nothing is copied but the block as read; no
    rows join it (with rows shuffled into blocks when the cache was written, a block's pass is
    as random as the in-memory solver's; docs: "Blocks")."""

    def __init__(self, reader, targets, alpha, epoch_state, bias, loss, seed,
                 order: tuple[int, int, bool] | None = None) -> None:  # fmt: skip
        self.reader = reader
        self.targets = targets
        self.alpha = alpha
        self.epoch_state = epoch_state
        self.bias = bias
        self.logistic = loss == LOSS_LOGISTIC
        self.squared = loss == LOSS_SQUARED_HINGE
        self.seed = seed
        self.n_partitions = reader.n_groups
        # (bucket size, buckets a group, prefetch): chosen on the first block unless given
        # (a resumed run's, from its checkpoint)
        self.order = order
        self._none = np.zeros(0, dtype=bool)
        self._work: tuple = ()

    def _buffers(self, n_rows: int, bucket_size: int) -> tuple:
        """The kernel's per-row work arrays (records, removed marks, active rows, order,
        bucket order), kept from block to block and grown when a block has more rows."""
        if not self._work or self._work[0].shape[0] < n_rows:
            index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
            order, bucket_order = order_buffers(n_rows, bucket_size, index_dtype)
            record_width = 5 if self.logistic else 4
            self._work = (np.empty((n_rows, record_width)), np.zeros(n_rows, dtype=np.uint8),
                          np.empty(max(n_rows, 1), dtype=index_dtype), order, bucket_order)
        return self._work

    def solve(self, group, W, task: LocalTask) -> list[PartResult]:
        [g] = group
        started = time.perf_counter()
        X_b, rows, megabytes = self.reader.next()
        n_vectors = W.shape[0]
        n_rows = X_b.shape[0]
        block_loss, alpha_terms = np.zeros(n_vectors), np.zeros(n_vectors)
        pg_max, pg_min = np.full(n_vectors, -np.inf), np.full(n_vectors, np.inf)
        state, targets = self.epoch_state, self.targets
        if isinstance(rows, slice):
            rows = np.arange(rows.start, rows.stop)
        if self.order is None:
            # the in-memory solver's choice (buckets unless the rows are few, fit a core's
            # cache or neighbours are alike), made once, on the first block
            signs = np.where(targets.class_index[rows] == 0, 1.0, -1.0)
            bucket_size, buckets_per_group = choose_order(X_b, signs, None, None, self.seed)
            self.order = bucket_size, buckets_per_group, prefetch_pays(X_b, 32)
        bucket_size, buckets_per_group, use_prefetch = self.order
        rec, removed, active, order, bucket_order = self._buffers(n_rows, bucket_size)
        held_out = self._none if targets.held_out is None else targets.held_out
        for k in range(n_vectors):
            rng = new_state(self.seed + task.outer * 7919 + g * 131 + k)
            if self.logistic:
                block_loss[k], alpha_terms[k], gmax, newton, visited = lr_block_epoch(
                    X_b.indptr, X_b.indices, X_b.data, self.bias, rows, targets.class_index,
                    k, *targets.costs(k), held_out, self.alpha[k], state.alpha_complement[k],
                    W[k], task.W_start[k], state.inner_eps[k], bucket_size, buckets_per_group,
                    use_prefetch, rng, rec, active, order, bucket_order,
                )  # fmt: skip
                pg_max[k], pg_min[k] = gmax, -gmax
                state.newton[k] += newton
                state.visited[k] += visited
                continue
            block_loss[k], alpha_terms[k], pg_max[k], pg_min[k], _ = svm_block_epoch(
                X_b.indptr, X_b.indices, X_b.data, self.bias, rows, targets.class_index, k,
                *targets.costs(k), held_out, self.squared, self.alpha[k], W[k],
                task.W_start[k], state.shrunk[k], state.pg_max_old[k], state.pg_min_old[k],
                bucket_size, buckets_per_group, use_prefetch, rng, rec, removed, active, order,
                bucket_order,
            )  # fmt: skip
        del X_b
        return [PartResult(g, loss=block_loss, dual_terms=alpha_terms, pg_max=pg_max,
                           pg_min=pg_min, seconds=time.perf_counter() - started,
                           figures={"mb": megabytes})]  # fmt: skip


class Reader:
    """The training blocks of one round after another (``Plan``), each read in a background
    thread while the one before it is used: at most two blocks in memory."""

    def __init__(self, source: BlockSource, plan: Plan, round_: int = 0, start: int = 0):
        self.source = source
        self.plan = plan
        self.mib = source.block_nbytes() / 2**20
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.round, self.position = round_, start
        self._groups = plan.groups(round_)
        # two blocks' arrays in turn: one being used while the other is read into (a block
        # given out is used only until the next is asked for)
        self.buffers = [BlockBuffer(), BlockBuffer()]
        self.reads = 0
        self.pending = self._read()

    @property
    def n_groups(self) -> int:
        """Training blocks in the round being read."""
        return len(self._groups)

    def _read(self):
        units = self._groups[self.position]
        after = (self._groups[self.position + 1] if self.position + 1 < len(self._groups)
                 else self.plan.groups(self.round + 1)[0])  # fmt: skip
        out = self.buffers[self.reads % 2]
        self.reads += 1
        return self.pool.submit(self._gather, units, out, after), units

    def _gather(self, units: np.ndarray, out: BlockBuffer, after: np.ndarray):
        """(the block's rows, labels, global row numbers): all made in the reader's thread;
        then the disk asked for the block after it, which it reads while this one trains."""
        X_b, y_b = self.source.gather(units, out)
        rows = self.plan.rows(units)
        if hasattr(self.source, "will_need"):
            self.source.will_need(after)
        return X_b, y_b, rows

    def next(self) -> tuple[sp.csr_matrix, slice | np.ndarray, float]:
        """The next block: its rows, their global numbers, and the megabytes read for it."""
        future, units = self.pending
        X_b, _, rows = future.result()
        self.pending = None  # the next read starts only once this block is taken
        self.position += 1
        if self.position == len(self._groups):
            self.round, self.position = self.round + 1, 0
            self._groups = self.plan.groups(self.round)
        self.pending = self._read()
        return as_csr(X_b, check_finite=False), rows, float(self.mib[units].sum())

    def at(self, next_round: bool = False) -> tuple[int, int]:
        """(round, block) the reader stands at; ``next_round``: where ``restart`` would."""
        if next_round and self.position:
            return self.round + 1, 0
        return self.round, self.position

    def restart(self) -> None:
        """Continue from the first block of the next round (after an interrupted pass)."""
        if self.position != 0:
            self.pending[0].cancel()
            self.round, self.position = self.round + 1, 0
            self._groups = self.plan.groups(self.round)
            self.pending = self._read()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc) -> None:
        self.pending[0].cancel()
        self.pool.shutdown(wait=True)


def check_pass(reader: Reader, W, alpha, targets: RowTargets, bias, loss, alpha_c=None):
    """Over every row at W, one round of the reader from its first block (where it stands
    after a complete outer iteration): per sub-problem the extremes of the stopping rule's
    per-row quantity (``dcd_blocks.check_block``) and the loss sums. Shapes (n_vectors,).
    ``alpha_c``: the LR dual's C_i - alpha_i as kept apart (``LogisticEpochs``), if any."""
    none = np.zeros(0)
    pg_max = np.full(W.shape[0], -np.inf)
    pg_min = np.full(W.shape[0], np.inf)
    losses = np.zeros(W.shape[0])
    for _ in range(reader.n_groups):
        X_b, rows, _ = reader.next()
        for k in range(W.shape[0]):
            y_b, c_b = targets.rows(k, rows)
            total, hi, lo = check_block(
                X_b.indptr, X_b.indices, X_b.data, bias, y_b, c_b,
                np.ascontiguousarray(alpha[k, rows]),
                none if alpha_c is None else np.ascontiguousarray(alpha_c[k, rows]), W[k], loss,
            )  # fmt: skip
            losses[k] += total
            pg_max[k] = max(pg_max[k], hi)
            pg_min[k] = min(pg_min[k], lo)
    return pg_max, pg_min, losses


__all__ = [
    "ArrayBlocks",
    "BlockBuffer",
    "BlockLayout",
    "BlockSource",
    "CacheBlocks",
    "LogisticEpochs",
    "cross_validate_blocks",
    "cross_validate_cache",
    "group_blocks",
    "measured_overhead",
    "parse_memory",
    "plan_blocks",
    "stack_rows",
    "train_blocks",
    "train_cache",
    "unit_rows",
]
