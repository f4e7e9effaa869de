"""Block minimisation: the dual solvers (-s 1, -s 3, -s 7) on data larger than memory.

Yu, Hsieh, Chang and Lin (KDD 2010, "Large linear classification when data cannot fit in
memory"): the rows are split into blocks that fit a memory budget; ``w`` and every row's
``alpha`` stay in memory; an outer iteration visits the blocks in turn, each time running the
dual coordinate descent solver on that block's rows alone, warm-started from their ``alpha``
and from the shared ``w`` (the solver interface's partition mode: ``Subproblem(alpha0=, w0=)``,
docs/architecture.md, "One partitioned dual"), while the next block is read in the background.

Two ways to visit the blocks:

- **Epochs (the SVM duals' default).** An outer iteration is one epoch of the in-memory
  solver (``dcd.py``) a block at a time: its own pass (``dcd.svm_pass``, over per-row
  records made as the block streams by) over each training block in the bucketed order,
  shrinking against the previous epoch's extremes with the marks kept across blocks and
  epochs, and the training blocks drawn afresh every epoch from small units of the data
  (``_Plan``: with fixed blocks visited in turn, one pass a visit converges several times
  slower per epoch than the in-memory order, whatever the rows' order in the file).
- **Classic** (``selective=True`` or ``inner_iter > 1``; -s 7 always): fixed blocks, each
  solved for ``inner_iter`` passes, with the support vectors of the other blocks joined.

What is certified, and when:

- **Stopping rule, on all of alpha.** The extremes of the projected gradients over an outer
  iteration's sweep are LIBLINEAR's measure (in epochs over the rows not shrunk, as the
  in-memory solver; classic: the first pass of each block, nothing shrunk). When it falls
  below eps, a verification pass recomputes it over every row at the final ``w`` (with the
  primal value; in epochs also LIBLINEAR's re-check of the shrunk rows, whose marks are then
  cleared); only if that holds does the run stop.
- **Duality gap, every outer iteration.** The dual value needs only ``w`` and ``alpha``, both
  in memory. The primal needs the data, so each outer iteration also sums the loss of each
  block at the ``w`` it started from, before the block trains: at the end of the iteration
  P(w_t) - D(alpha_t) is the exact gap of the iterate the iteration started from.

Multi-class problems are one-vs-rest, all classes sharing each read of a block.
"""

from __future__ import annotations

import ctypes
import io
import json
import math
import os
import sys
import time
import warnings
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import solvers
from ._memory import format_bytes
from ._progress import ProgressTimer
from .checkpoint import DEFAULT_EVERY_SECONDS, fingerprint
from .data import as_csr, check_labels, group_labels
from .errors import InvalidInputError
from .interrupts import stop_on_signals
from .io._atomic import atomic_write_bytes
from .io.cache import CacheFormatError
from .model import Model
from .objective import (
    LOSS_HINGE,
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    loss_sum,
    loss_value,
    lr_dual_alpha_terms,
    svm_dual_alpha_terms,
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
from .problems import TrainingInterrupted, class_costs, cv_folds, one_vs_rest
from .solvers import Solution, Subproblem
from .solvers._base import CONVERGED, INTERRUPTED, MAX_ITER, Progress
from .solvers._dual import (
    cache_resident,
    choose_order,
    order_buffers,
    visiting_order,
)
from .solvers._random import new_state
from .solvers.dcd import ALPHA_COLUMN, fill_record, svm_coordinate, svm_pass
from .solvers.dual_lr import INIT_CAP, INIT_FRACTION
from .sparse_rows import row_axpy, row_dot, row_dot_sq_norm, sq_norm

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
# measured: under half of this on a 166k-row cache whose blocks are 1.5 MB.
RUN_SLACK_BYTES = 1 << 20
# The smallest training block a budget must leave room for (smaller blocks train, but a
# pass then reads the data in thousands of pieces); less when the whole data is smaller.
MIN_BLOCK_BYTES = 1 << 20
# Blocks' worth of memory selective block minimisation holds at its peak (see train_blocks).
SELECTIVE_SHARES = 7
# Units (pieces of stored blocks) a training block is drawn from in the epoch mode (_Plan).
UNITS_PER_BLOCK = 8

_LOSSES = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE, 7: LOSS_LOGISTIC}


class BlockSource(Protocol):
    """Rows read a range of stored blocks at a time (a binary cache, or arrays in memory)."""

    n_rows: int
    n_features: int
    n_blocks: int

    def block_rows(self) -> np.ndarray: ...  # (n_blocks,) rows per stored block

    def block_nbytes(self) -> np.ndarray: ...  # (n_blocks,) bytes of each stored block

    def blocks(self, k0: int, k1: int) -> tuple[sp.csr_matrix, np.ndarray]: ...  # (X, y)

    def gather(self, units: np.ndarray, out=None) -> tuple[sp.csr_matrix, np.ndarray]: ...

    def labels(self) -> np.ndarray: ...  # (n_rows,) every row's label


class ArrayBlocks:
    """A ``BlockSource`` over (X, y) in memory, cut into ``n_blocks`` row ranges of about equal
    non-zeros: block minimisation on data that fits, for tests and comparisons."""

    def __init__(self, X, y, n_blocks: int) -> None:
        self.X = as_csr(X)
        self.y = check_labels(y, self.X.shape[0])
        self.n_rows, self.n_features = self.X.shape
        nnz = self.X.indptr[-1]
        targets = (np.arange(1, n_blocks) * nnz) // max(n_blocks, 1)
        cuts = np.searchsorted(self.X.indptr[:-1], targets, side="left")
        self.bounds = np.unique(np.concatenate(([0], cuts, [self.n_rows])))
        self.n_blocks = self.bounds.shape[0] - 1

    def block_rows(self) -> np.ndarray:
        return np.diff(self.bounds)

    def block_nbytes(self) -> np.ndarray:
        ptr = self.X.indptr[self.bounds]
        per_nnz = self.X.indices.itemsize + self.X.data.itemsize
        return np.diff(ptr) * per_nnz + np.diff(self.bounds) * 16

    def blocks(self, k0: int, k1: int) -> tuple[sp.csr_matrix, np.ndarray]:
        r0, r1 = self.bounds[k0], self.bounds[k1]
        return self.X[r0:r1], self.y[r0:r1]

    def gather(self, units: np.ndarray, out=None) -> tuple[sp.csr_matrix, np.ndarray]:
        """The stored blocks ``units`` (any order) one after another (``out``: unused)."""
        rows = unit_rows(self.bounds, units)
        return self.X[rows], self.y[rows]

    def labels(self) -> np.ndarray:
        return self.y

    def identity(self) -> list:
        """What a checkpoint must match: the data's fingerprint and the blocks."""
        return [fingerprint(self.X, self.y, None), self.bounds.tolist()]


class BlockBuffer:
    """Arrays a block is read into, kept and reused by the next read (grown when a block is
    larger): y, indptr, indices and data."""

    def __init__(self) -> None:
        self._arrays: tuple = ()

    def arrays(self, n_rows: int, nnz: int, dtype, index_dtype) -> tuple[np.ndarray, ...]:
        """Views of exactly (n_rows,), (n_rows + 1,), (nnz,), (nnz,) elements."""
        have = self._arrays
        if (not have or have[0].shape[0] < n_rows or have[2].shape[0] < nnz
                or have[3].dtype != dtype or have[2].dtype != index_dtype):
            self._arrays = have = ()  # the old arrays freed before the new are made
            self._arrays = have = (
                np.empty(n_rows), np.empty(n_rows + 1, dtype=index_dtype),
                np.empty(nnz, dtype=index_dtype), np.empty(nnz, dtype=dtype),
            )  # fmt: skip
        y, indptr, indices, data = have
        return y[:n_rows], indptr[: n_rows + 1], indices[:nnz], data[:nnz]


def _csr_over(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
              shape: tuple[int, int]) -> sp.csr_matrix:  # fmt: skip
    """A CSR matrix over these arrays, not copied. scipy's constructor copies an array that
    is a view of one more than twice its size (its ``prune``), which a reused read buffer is
    whenever a block is smaller than the largest before it (measured: 8 MB of copies at the
    peak of a run budgeted for 40 MB of blocks)."""
    X = sp.csr_matrix(shape, dtype=data.dtype)
    X.data, X.indices, X.indptr = data, indices, indptr
    return X


class CacheBlocks:
    """A ``BlockSource`` over a binary cache (``linsvm cache``): its stored blocks, or
    (``split``) row ranges of them when a stored block is larger than a training block may be,
    copied into memory a range at a time and unmapped once copied."""

    def __init__(self, cache, units: list[tuple[int, int, int]] | None = None) -> None:
        self.cache = cache
        self.n_rows, self.n_features = cache.n_rows, cache.n_features
        # the copy of a range takes int32 indices when they fit, as Cache.blocks makes it
        self._index_dtype = np.int32 if max(cache.nnz, cache.n_features) < 2**31 else np.int64
        self._entry_bytes = np.dtype(cache.dtype).itemsize + np.dtype(self._index_dtype).itemsize
        # units: (stored block, first row, end row) within it; None: the stored blocks whole
        self.units = units
        if units is None:
            self.n_blocks = cache.n_blocks
            self._rows = cache.block_rows
            self._nnz = cache.block_nnz
            self._first_nonzero = np.zeros(cache.n_blocks, dtype=np.int64)
        else:
            self.n_blocks = len(units)
            self._rows = np.array([r1 - r0 for _, r0, r1 in units], dtype=np.int64)
            spans = np.array([self._unit_span(u) for u in units], dtype=np.int64)
            self._first_nonzero, self._nnz = spans[:, 0], spans[:, 1] - spans[:, 0]

    def _unit_span(self, unit: tuple[int, int, int]) -> tuple[int, int]:
        """Positions of a unit's first and end non-zero within its stored block."""
        k, r0, r1 = unit
        indptr = self.cache.block(k, verify=False)[0].indptr
        return int(indptr[r0]), int(indptr[r1])

    def split(self, max_bytes: int) -> CacheBlocks:
        """The same rows in units of at most ``max_bytes`` (a row larger than that alone),
        cutting the stored blocks that exceed it."""
        units = []
        for k in range(self.cache.n_blocks):
            X, _ = self.cache.block(k, verify=False)
            cost = np.cumsum(np.diff(X.indptr) * self._entry_bytes + 16)
            r0 = 0
            while r0 < X.shape[0]:
                base = cost[r0 - 1] if r0 else 0
                r1 = max(int(np.searchsorted(cost, base + max_bytes, side="right")), r0 + 1)
                units.append((k, r0, min(r1, X.shape[0])))
                r0 = units[-1][2]
            del X
            self.cache.release(k)
        return CacheBlocks(self.cache, units)

    @property
    def pieces_from_mapping(self) -> bool:
        """Whether pieces of a stored block are copied from the file's mapping, the stored
        block's pages resident until its last piece is copied (the copy changes the index
        dtype), rather than read from the file (``Cache.read_rows``: nothing resident)."""
        return self.cache.index_dtype != self._index_dtype

    def block_rows(self) -> np.ndarray:
        return self._rows

    def block_nbytes(self) -> np.ndarray:
        return self._nnz * self._entry_bytes + self._rows * 16

    def blocks(self, k0: int, k1: int) -> tuple[sp.csr_matrix, np.ndarray]:
        if self.units is None:
            return self.cache.blocks(k0, k1, n_jobs=1)
        return self.gather(np.arange(k0, k1))

    def gather(self, units: np.ndarray, out: BlockBuffer | None = None
               ) -> tuple[sp.csr_matrix, np.ndarray]:  # fmt: skip
        """The units ``units`` (any order) one after another, copied (into ``out``'s arrays
        when given: a reader's buffers reused block after block, no fresh pages to fault in).
        Read from the file (``Cache.read_rows``) where the cache's index dtype is the copy's;
        else copied from the mapping, a stored block's mapped pages handed back once a unit of
        it is copied (the units of a stored block may come in any order, so its pages must not
        pile up until its last one)."""
        units = np.asarray(units, dtype=np.int64)
        pieces = self._pieces()
        n_rows, nnz = int(self._rows[units].sum()), int(self._nnz[units].sum())
        if self.cache.index_dtype == self._index_dtype:
            if out is None:
                out = BlockBuffer()
            y, indptr, indices, data = out.arrays(n_rows, nnz, self.cache.dtype,
                                                  self._index_dtype)  # fmt: skip
            indptr[0] = 0
            self.will_need(units)
            row, pos = 0, 0
            for unit in units.tolist():
                k, r0, r1 = pieces[unit]
                pos = self.cache.read_rows(k, r0, r1, y[row:], indptr[row:], indices, data, pos)
                row += r1 - r0
            if pos != nnz:
                raise CacheFormatError(self.cache.path, "block rows changed while in use")
            X = _csr_over(data, indices, indptr, (n_rows, self.n_features))
            X.has_canonical_format = True  # the cache's rows are (checked as read)
            return X, y
        if self.units is None and units.size and np.all(np.diff(units) == 1):
            return self.cache.blocks(int(units[0]), int(units[-1]) + 1, n_jobs=1)
        data = np.empty(nnz, dtype=self.cache.dtype)
        indices = np.empty(nnz, dtype=self._index_dtype)
        indptr = np.zeros(n_rows + 1, dtype=self._index_dtype)
        y = np.empty(n_rows)
        row, pos = 0, 0
        for unit in units.tolist():
            k, r0, r1 = pieces[unit]
            X, labels = self.cache.block(k)  # checked once per stored block
            p0, p1 = int(X.indptr[r0]), int(X.indptr[r1])
            data[pos : pos + p1 - p0] = X.data[p0:p1]
            indices[pos : pos + p1 - p0] = X.indices[p0:p1]
            indptr[row + 1 : row + 1 + r1 - r0] = X.indptr[r0 + 1 : r1 + 1] - p0 + pos
            y[row : row + r1 - r0] = labels[r0:r1]
            row, pos = row + r1 - r0, pos + p1 - p0
            del X, labels
            self.cache.release(k)
        X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, self.n_features), copy=False)
        X.has_canonical_format = True  # the cache's rows are (checked when a block is read)
        return X, y

    def _pieces(self) -> list[tuple[int, int, int]]:
        """Each unit as (stored block, first row, end row)."""
        if self.units is not None:
            return self.units
        return [(k, 0, int(self.cache.block_rows[k])) for k in range(self.n_blocks)]

    def will_need(self, units: np.ndarray) -> None:
        """Ask the disk for every piece of these units at once (reads in flight together,
        where one ``pread`` after another would wait for each: from a cold cache a pass took
        0.15-0.18 s on pypi-recent that way, 0.10 s with this, its sequential read 0.06 s)."""
        pieces = self._pieces()
        for unit in np.asarray(units, dtype=np.int64).tolist():
            k, r0, r1 = pieces[unit]
            p0 = int(self._first_nonzero[unit])
            self.cache.will_need(k, r0, r1, p0, p0 + int(self._nnz[unit]))

    def labels(self) -> np.ndarray:
        return self.cache.labels()

    def identity(self) -> list:
        """What a checkpoint must match: sizes and the checksum of the block table (which
        holds every block's checksum)."""
        cache = self.cache
        return [self.n_rows, self.n_features, int(cache.nnz), cache.n_blocks, cache.checksum]


def train_cache(path, memory: str | int = "2G", **params) -> Model:
    """``train_blocks`` over the cache file at ``path`` (``linsvm cache`` makes one); a
    width whose model could not fit in memory is refused first (DataFormatError)."""
    from .io.cache import open_cache

    with open_cache(path) as cache:
        _check_width(path, cache)
        return train_blocks(CacheBlocks(cache), memory=memory, **params)


def cross_validate_cache(
    path, n_folds: int, memory: str | int = "2G", seed: int = 1, **params
) -> tuple[int, int]:
    """``cross_validate_blocks`` over the cache file at ``path``: (rows right, rows)."""
    from .io.cache import open_cache

    with open_cache(path) as cache:
        _check_width(path, cache)
        return cross_validate_blocks(CacheBlocks(cache), n_folds, seed, memory=memory, **params)


def _check_width(path, cache) -> None:
    """DataFormatError at the line of the cache's largest index when a model over its
    features could not fit in memory (as `read_libsvm(check_width=True)` reads text)."""
    from .io.libsvm import _Options

    options = _Options.check(np.float64, None, bool(cache.zero_based), False, check_width=True)
    options.check_cache_width(os.fsdecode(os.fspath(path)), cache)


def cross_validate_blocks(
    source: BlockSource, n_folds: int, seed: int = 1, **params
) -> tuple[int, int]:
    """LIBLINEAR's ``-v n_folds`` by block minimisation: (rows predicted right, rows).

    The folds are ``problems.cv_folds``' (the in-memory cross-validation's, for the same
    ``seed``), held as one fold number a row. Each fold trains ``train_blocks(source,
    held_out=<its rows>, seed=seed, **params)`` on the other folds' rows (a held-out row costs
    0 and takes no part), then one pass over the blocks scores its held-out rows. Memory is
    ``train_blocks``' plus two bytes a row. Ctrl-C ends the whole cross-validation
    (KeyboardInterrupt). ``progress`` (a ``ProgressTimer``): the folds done, and each fold's
    blocks, when a line is due.
    """
    timer: ProgressTimer | None = params.pop("progress", None)
    n_rows = source.n_rows
    folds = cv_folds(n_rows, n_folds, seed)
    fold_of = np.empty(n_rows, dtype=np.min_scalar_type(len(folds)))
    for f in range(len(folds)):
        fold_of[folds.held_out(f)] = f
    n_folds = len(folds)
    del folds
    correct = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingInterrupted)
        for f in range(int(fold_of.max(initial=0)) + 1):
            held_out = fold_of == f
            model = train_blocks(
                source, held_out=held_out, seed=seed,
                progress=timer.labelled(f"fold {f + 1} of {n_folds}") if timer else None,
                **params,
            )  # fmt: skip
            if model.interrupted or model.stop_signal is not None:
                raise KeyboardInterrupt
            r0 = 0
            for k in range(source.n_blocks):
                X_b, y_b = source.blocks(k, k + 1)
                r1 = r0 + X_b.shape[0]
                mine = held_out[r0:r1]
                if mine.any():
                    predicted = model.predict(as_csr(X_b, check_finite=False)[mine], n_jobs=1)
                    correct += int(np.count_nonzero(predicted == y_b[mine]))
                del X_b, y_b
                r0 = r1
            if timer is not None:
                timer.tick(lambda done=f + 1: f"cross-validation: {done} of {n_folds} folds done")
    return correct, n_rows


def parse_memory(text: str | int) -> int:
    """Bytes from "2G", "512M", "1.5g", "800k" or a plain number of bytes."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        value = int(text)
    else:
        units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
        raw = str(text).strip().lower().removesuffix("b").removesuffix("i")
        scale = units.get(raw[-1:], 1)
        number = raw[:-1] if raw[-1:] in units else raw
        try:
            value = int(float(number) * scale)
        except ValueError:
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


def unit_rows(starts: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The row numbers of stored blocks (units) ``units`` one after another, the unit k
    holding rows ``starts[k]:starts[k + 1]``. Shape (their rows,), int64."""
    units = np.asarray(units, dtype=np.int64)
    rows = np.empty(int((starts[units + 1] - starts[units]).sum()), dtype=np.int64)
    _fill_unit_rows(np.asarray(starts, dtype=np.int64), units, rows)
    return rows


@njit(cache=True, nogil=True)
def _fill_unit_rows(starts, units, rows) -> None:
    j = 0
    for u in units:
        for r in range(starts[u], starts[u + 1]):
            rows[j] = r
            j += 1


class _Plan:
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
    0.12%)."""

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
        rng = np.random.default_rng([self.seed, round_])
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


def measured_overhead(solver: int = 1) -> int | None:
    """Bytes this process holds before a run in blocks, measured: its resident memory once
    the compiled code such a run uses is loaded (a run of ``solver`` on four rows in memory)
    and the memory freed so far is handed back to the system. ``None`` where the resident
    memory cannot be read (not Linux); ``train_blocks(overhead_bytes=None)`` then plans the
    constant ``FIXED_OVERHEAD_BYTES``.

    ``train --memory`` counts this in its budget: the command's process holds nothing else.
    """
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not converged in two outer iterations: no matter
        train_blocks(ArrayBlocks(X, np.array([1, -1, 1, -1]), 2), solver=solver,
                     memory=1 << 40, max_outer=2)  # fmt: skip
    _return_freed_arrays_to_the_system()
    return _resident_bytes()


def _resident_bytes() -> int | None:
    """This process's resident memory (Linux: /proc/self/statm), or None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@njit(cache=True, nogil=True)
def _check_block(indptr, indices, data, bias, y, C, alpha, w, loss):
    """Over a block's rows at fixed w: (sum_i C_i xi(y_i w'x_i), max g, min g), g the
    stopping rule's per-row quantity: for the SVM duals the projected gradient (LIBLINEAR's
    measure), as the solver's own coordinate step computes it; for the LR dual the gradient
    y_i w'x_i + log(alpha_i / (C_i - alpha_i)) (-inf at alpha_i = 0)."""
    squared = loss == LOSS_SQUARED_HINGE
    total = 0.0
    g_max = -np.inf
    g_min = np.inf
    for i in range(y.shape[0]):
        if C[i] <= 0.0:
            continue
        dot = row_dot(indptr, indices, data, bias, i, w)
        total += C[i] * loss_value(loss, y[i] * dot)
        if loss == LOSS_LOGISTIC:
            a = alpha[i]
            g = -np.inf if a <= 0.0 else y[i] * dot + np.log(a / (C[i] - a))
        else:
            bound_or_diag = 0.5 / C[i] if squared else C[i]
            # no shrinking: the step's PG only (its Qbar and new alpha are not used)
            _, g, _ = svm_coordinate(
                alpha[i], y[i], dot, bound_or_diag, 1.0, squared, False, np.inf, -np.inf
            )
        g_max = max(g_max, g)
        g_min = min(g_min, g)
    return total, g_max, g_min


@njit(cache=True, nogil=True)
def _enter_interior(indptr, indices, data, bias, y, C, alpha, w) -> None:
    """The LR dual lives in 0 < alpha_i < C_i: move each trainable row's alpha inside as the
    solver's own start does (LIBLINEAR's min(1e-3 C_i, 1e-8) from a bound), and w with it, so
    that w = sum_i y_i alpha_i x_i stays exact when the block's solve takes them as given."""
    for i in range(y.shape[0]):
        c = C[i]
        if c <= 0.0:
            continue
        lo = min(INIT_FRACTION * c, INIT_CAP)
        a = alpha[i]
        if a <= 0.0:
            a = lo
        elif c - a <= 0.0:
            a = c - lo
        if a != alpha[i]:
            row_axpy(indptr, indices, data, bias, i, y[i] * (a - alpha[i]), w)
            alpha[i] = a


@njit(cache=True, nogil=True)
def _svm_block_epoch(indptr, indices, data, bias, rows, class_index, k, c_pos, c_neg,
                     held_out, squared, alpha, w, w_start, shrunk, pgmax_old, pgmin_old,
                     bucket_size, buckets_per_group, use_prefetch, rng, rec, removed, active,
                     order, bucket_order):  # fmt: skip
    """One block's share of an epoch of the SVM dual (-s 1, -s 3): the in-memory solver's
    pass (``svm_pass``) over the block's active rows in its bucketed order, shrinking against
    the whole previous epoch's extremes.

    The block's row i is row ``rows[i]`` of the whole data, whose arrays ``class_index``,
    ``held_out`` (a mask, or empty: none), ``alpha`` and ``shrunk`` are given whole.

    First, in storage order (streaming): the block's parts of the exact objectives at the
    epoch's start, its loss at ``w_start`` and its alpha terms of the dual (sum of 1/2 D_ii
    alpha_i^2 - alpha_i: its rows' alpha are still the epoch's first), and the in-memory
    solver's record of every active row (trainable, not ``shrunk``): alpha, Qbar_ii, y_i,
    U_i or D_ii, so that a visit in random order touches one cache line of state. Then the
    pass, and the records' alpha and shrink marks written back (a row shrunk now is skipped
    until the caller clears its mark).
    The targets and costs come from the class index (``_Targets``): y_i = +1 for class
    ``k``, else -1; C_i = ``c_pos`` or ``c_neg`` accordingly, 0 where held out.

    Shapes: indptr (l + 1,), rows (l,); class_index, held_out, alpha, shrunk (uint8) (n,);
    work arrays rec (at least (l, 4)), removed (uint8, at least l, all zero), active (at
    least l), order and bucket_order (``order_buffers(l, bucket_size)``). Returns (loss at
    w_start, alpha terms at the start, the projected gradients' max and min over the rows
    visited, rows visited).
    """
    n_rows = rows.shape[0]
    loss = LOSS_SQUARED_HINGE if squared else LOSS_HINGE
    loss_total = 0.0
    alpha_terms = 0.0
    n_active = 0
    for i in range(n_rows):
        r = rows[i]
        positive = class_index[r] == k
        yi = 1.0 if positive else -1.0
        ci = c_pos if positive else c_neg
        if held_out.shape[0] and held_out[r]:
            ci = 0.0
        if ci <= 0.0:
            continue
        dot, sq = row_dot_sq_norm(indptr, indices, data, bias, i, w_start)
        loss_total += ci * loss_value(loss, yi * dot)
        a = alpha[r]
        if a != 0.0:
            alpha_terms += (0.5 * a * a * (0.5 / ci) if squared else 0.0) - a
        if shrunk[r] == 0:
            fill_record(rec, i, a, yi, ci, sq, squared, 1.0)
            active[n_active] = i
            n_active += 1
    visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)
    pg_max, pg_min = svm_pass(indptr, indices, data, bias, squared, rec, w, order, n_active,
                              True, pgmax_old, pgmin_old, use_prefetch, removed, None, 1.0)
    for s in range(n_active):
        i = active[s]
        alpha[rows[i]] = rec[i, ALPHA_COLUMN]
        if removed[i]:
            shrunk[rows[i]] = 1
            removed[i] = 0
    return loss_total, alpha_terms, pg_max, pg_min, n_active


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
    max_outer: int = DEFAULT_MAX_OUTER,
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
) -> Model:
    """Train -s 1, -s 3 or -s 7 by block minimisation over ``source``, in about ``memory``
    bytes. Returns the Model, with one Solution per binary sub-problem (alpha, primal, dual
    and gap at the returned w).

    ``memory`` bounds what the run holds besides w and alpha (8 bytes a weight and a row per
    binary sub-problem, which come on top): an overhead for the interpreter, libraries and
    compiled code (``overhead_bytes``, e.g. ``measured_overhead()``; by default the constant
    ``FIXED_OVERHEAD_BYTES``, 256 MiB), the rows' class index, and the blocks. The rows are
    grouped into training blocks (consecutive stored blocks) so that two of them (the one
    training and the one being read) and, with ``selective``, the kept rows and working
    copies fit what is left; ``max_block_bytes`` caps a training block lower (less memory,
    more outer iterations). A budget that leaves less than ``MIN_BLOCK_BYTES`` for a block
    (less if the whole data is smaller) is refused, with the smallest budget that trains.

    Each outer iteration runs the dual solver on each block for at most ``inner_iter``
    passes; the run stops when LIBLINEAR's stopping rule holds on every row (verified at the
    final w), or after ``max_outer`` outer iterations. ``verbose`` prints a line per outer
    iteration on stderr; ``on_outer`` gets the same as an ``OuterProgress``. ``progress``: a
    line within a long outer iteration (the blocks done) when the timer says one is due.

    ``selective`` (Chang and Roth, KDD 2011; the default for the SVMs): rows of other blocks
    with alpha > 0, up to a block's worth of memory, join every block's solve (see
    ``_SupportCache``). The LR dual (-s 7) has every alpha_i > 0, so no rows to select: it
    trains the blocks alone, and its rule is LIBLINEAR's max_i |g_i| < eps over all rows (g
    the dual's gradient).

    Ctrl-C stops after the current block (a second one at once) and returns the current model
    (``model.interrupted``; its primal and gap NaN: no pass over the data is made for them).
    ``checkpoint``: the run's state (w, alpha, the outer iteration's sums, the kept support
    vectors) is saved there atomically after a block when ``checkpoint_every`` seconds have
    passed, on Ctrl-C, and at the end; ``resume`` from it continues to the model the
    uninterrupted run gives (the same data, options and memory, else a one-line error).
    ``held_out``: a boolean mask of the rows that take no part (cost 0; cross-validation
    trains on the other folds).
    """
    spec = solvers.get_solver(solver)
    if spec.number not in _LOSSES:
        raise InvalidInputError(
            f"block minimisation trains the duals -s 1, -s 3 and -s 7, not {spec.label}"
        )
    params = solvers.check_parameter(spec.number, C, eps, bias, None, True)
    loss = _LOSSES[spec.number]
    if selective and loss == LOSS_LOGISTIC:
        raise InvalidInputError(
            "selective block minimisation keeps the rows with alpha > 0, which in the LR dual "
            "(-s 7) are all rows: train -s 7 with selective=False"
        )
    # the SVM duals' default: epochs of the in-memory solver, a block at a time
    epochs = loss != LOSS_LOGISTIC and not selective and inner_iter in (None, 1)
    selective = bool(selective)
    if inner_iter is None:
        inner_iter = 1 if epochs else DEFAULT_INNER_ITER
    budget = parse_memory(memory)
    if inner_iter < 1 or max_outer < 1:
        raise InvalidInputError("inner_iter and max_outer must be >= 1")
    y_all = source.labels()
    n_rows = source.n_rows
    if n_rows == 0:
        raise InvalidInputError("no training data: 0 rows")
    labels, class_index = group_labels(y_all)
    if labels.shape[0] < 2:
        raise InvalidInputError(
            f"training data has only one class ({labels[0]}); at least two are needed"
        )
    weighted_C = class_costs(labels, params.C, class_weight)
    n_vectors = 1 if labels.shape[0] == 2 else labels.shape[0]
    n_weights = source.n_features + (1 if params.bias >= 0 else 0)
    targets = _Targets(class_index, weighted_C, params.C, held_out)
    del y_all, class_index
    _return_freed_arrays_to_the_system()

    W = np.zeros((n_vectors, n_weights))
    alpha = np.zeros((n_vectors, n_rows))
    shrinking = _Shrinking.fresh(n_vectors, n_rows if epochs else 0)
    # The budget holds everything but w and alpha (which grow with the data's columns and
    # rows whatever the budget): the fixed overhead, the per-row targets, and shares of the
    # rest: the block training and the one being read; with ``selective`` also the kept
    # support vectors, the solved copy of block + support vectors (two shares), the support
    # vectors' next version while it is made, and one for the solvers' per-row state and the
    # allocator's slack (measured: tests/test_outofcore.py).
    shares = SELECTIVE_SHARES if selective else 2
    if resume is not None and overhead_bytes is not None:
        # the blocks follow the overhead, and a measure varies from process to process: a
        # resumed run plans with the interrupted run's
        overhead_bytes = _stored_overhead(resume, overhead_bytes)
    overhead = FIXED_OVERHEAD_BYTES if overhead_bytes is None else int(overhead_bytes)
    # w at the outer iteration's start (the exact objectives there) is a second w: only w
    # and alpha themselves come on top of the budget
    fixed = (overhead + targets.nbytes + shrinking.shrunk.nbytes + W.nbytes
             + _Targets.CHUNK_BYTES + RUN_SLACK_BYTES)  # fmt: skip
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
    if max_block_bytes is not None:
        block_budget = min(block_budget, int(max_block_bytes))
    # the units training blocks are made of: the stored blocks, cut where larger than a
    # training block (fixed plan) or than a share of one (epochs: blocks drawn afresh)
    unit_budget = block_budget // UNITS_PER_BLOCK if epochs else block_budget
    if hasattr(source, "split") and source.block_nbytes().max(initial=0) > unit_budget:
        source = source.split(max(unit_budget, 1))
    cost = _training_bytes(source.block_rows(), source.block_nbytes(), n_vectors)
    plan = _Plan(source.block_rows(), cost, block_budget, epochs, seed)
    groups = plan.groups(0)
    # the kept support vectors take at most a training block's worth of memory
    nbytes = source.block_nbytes()
    largest = max(int(nbytes[g].sum()) for g in groups)
    support = _SupportCache(min(support_budget, largest) if len(groups) > 1 else 0, seed)
    tolerance = [
        solvers.solver_tolerance(spec, params.eps, targets.signs(k)) for k in range(n_vectors)
    ]
    eps_all = max(tolerance)

    results: list[Solution | None] = [None] * n_vectors
    run = _PassState.fresh(W, alpha, targets, loss, not epochs)
    first_outer, first_group, reader_at = 1, 0, (0, 0)
    meta = None
    if checkpoint is not None or resume is not None:
        meta = _run_meta(source, spec.number, params, class_weight, inner_iter, seed, selective,
                         groups, support.capacity, epochs)  # fmt: skip
        if overhead_bytes is not None:
            meta["overhead"] = overhead
    if resume is not None:
        first_outer, first_group, reader_at = _restore(resume, meta, W, alpha, run, support,
                                                       shrinking)  # fmt: skip
    saver = _BlockCheckpoints(checkpoint, checkpoint_every, meta)
    iterations = first_outer - 1
    verified = False
    interrupted = False
    reader = _Reader(source, plan, *reader_at)
    with stop_on_signals() as stop, reader:
        if epochs:
            place = _EpochPlace(reader, targets, alpha, shrinking, params.bias, loss, seed)
        else:
            place = _BlockPlace(
                reader, support, targets, alpha, spec.solve, params.bias, loss, tolerance, seed
            )
        driver = PartitionedDual(place, IN_TURN, W)

        def after_block(g: int, done: list[PartResult]) -> bool:
            """Between blocks: the read counted, a checkpoint when due, the stop request."""
            nonlocal interrupted
            run.mb += done[0].figures["mb"]
            if progress is not None:
                progress.tick(lambda: f"outer {outer}: {g + 1} of {place.n_partitions} blocks, "
                                      f"{run.mb:.0f} MB read")
            interrupted = stop.requested
            if saver.due() or (interrupted and saver.path is not None):
                saver.save(outer, g + 1, W, alpha, run, support, shrinking, reader.at())
            return not interrupted

        for outer in range(first_outer, max_outer + 1):
            if first_group == 0:
                run = None  # its copy of w goes before the next is made: two w, not three
                run = _PassState.fresh(W, alpha, targets, loss, not epochs)
            # no stop hook within a block's solve: it is short, and a stop between blocks
            # leaves a state a checkpoint resumes exactly
            driver.outer(LocalTask(outer, inner_iter), first_group, after_block, run.sums)
            first_group = 0
            if interrupted:
                break
            iterations = outer
            measure = pg_measure(run.sums, loss == LOSS_LOGISTIC)
            primal_start, dual_start = run.sums.objectives()
            if not epochs:  # the blocks' solves report no dual terms: D computed at the start
                dual_start = run.dual_start
            report = OuterProgress(
                outer, place.n_partitions, measure, primal_start.tolist(), list(dual_start),
                time.perf_counter() - run.started, run.mb,
            )  # fmt: skip
            if verbose:
                _print_outer(report)
                if progress is not None:
                    progress.postpone()
            if on_outer is not None:
                on_outer(report)
            if epochs:
                shrinking.next_epoch(run.sums.pg_max, run.sums.pg_min)
            if measure <= eps_all:
                # verification pass at the final w: the rule on every row, and P(w) (in
                # epochs, LIBLINEAR's re-check of the shrunk rows, without steps)
                final_measure, final_loss = _verify(reader, W, alpha, targets, params.bias, loss)
                if epochs:
                    shrinking.clear()
                if final_measure <= eps_all:
                    verified = True
                    results = [
                        _solution(spec.number, W[k], alpha[k], final_loss[k], targets, k,
                                  loss, outer, CONVERGED)
                        for k in range(n_vectors)
                    ]  # fmt: skip
                    break
        if not verified and not interrupted:
            reader.restart()
            final_loss = _verify(reader, W, alpha, targets, params.bias, loss)[1]
    if saver.path is not None and not interrupted:
        run = None
        saver.save(iterations + 1, 0, W, alpha,
                   _PassState.fresh(W, alpha, targets, loss, not epochs),
                   support, shrinking, reader.at(next_round=True))  # fmt: skip
    if not verified:
        reason = INTERRUPTED if interrupted else MAX_ITER
        # interrupted: no pass over the data for P(w) (a stop should be prompt); the dual
        # needs none
        losses = np.full(n_vectors, np.nan) if interrupted else final_loss
        results = [
            _solution(spec.number, W[k], alpha[k], losses[k], targets, k, loss,
                      iterations, reason)
            for k in range(n_vectors)
        ]  # fmt: skip
        if interrupted:
            warnings.warn(
                "training interrupted: the model holds the current iterate, not converged",
                TrainingInterrupted,
                stacklevel=2,
            )
    model = Model(
        spec.number,
        labels,
        W[:, : source.n_features],
        params.bias,
        W[:, source.n_features] if params.bias >= 0 else None,
        results=results,
    )
    model.stop_signal = stop.signal
    return model


class _SupportCache:
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
        self.rng = np.random.default_rng(seed)
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


def stack_rows(parts: list[tuple[sp.csr_matrix, np.ndarray | None]], n_cols: int):
    """One CSR matrix of the chosen rows of each part in turn (``None``: all of its rows),
    copied once into arrays of the final size: what ``vstack`` of fancy-indexed parts does
    with a copy less (on block minimisation's joins, a fifth of its time)."""
    lengths = [
        np.diff(X.indptr) if rows is None else np.diff(X.indptr)[rows] for X, rows in parts
    ]
    n_rows = sum(int(n.shape[0]) for n in lengths)
    nnz = sum(int(n.sum()) for n in lengths)
    index_dtype = np.int32 if max(nnz, n_cols) < 2**31 else np.int64
    indptr = np.empty(n_rows + 1, dtype=index_dtype)
    indptr[0] = 0
    np.cumsum(np.concatenate(lengths), out=indptr[1:])
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=np.result_type(*[X.data.dtype for X, _ in parts]))
    row = 0
    for (X, rows), n in zip(parts, lengths, strict=True):
        if rows is None:
            p0, q0, q1 = indptr[row], X.indptr[0], X.indptr[-1]
            indices[p0 : p0 + q1 - q0] = X.indices[q0:q1]
            data[p0 : p0 + q1 - q0] = X.data[q0:q1]
        else:
            _copy_rows(X.indptr, X.indices, X.data, rows, indptr[row:], indices, data)
        row += n.shape[0]
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols), copy=False)
    X.has_sorted_indices = True
    return X


@njit(cache=True, nogil=True)
def _copy_rows(indptr, indices, data, rows, out_indptr, out_indices, out_data) -> None:
    """Rows ``rows`` of a CSR matrix to out_indices/out_data at the positions out_indptr
    gives (out_indptr[j] the start of the j-th copied row)."""
    for j in range(rows.shape[0]):
        p0, p1 = indptr[rows[j]], indptr[rows[j] + 1]
        q = out_indptr[j]
        for p in range(p0, p1):
            out_indices[q] = indices[p]
            out_data[q] = data[p]
            q += 1


def _too_small(budget: int, measured: bool, overhead: int, state: int, shares: int,
               whole: int, stored: int) -> str:
    """The refusal of a budget too small, with the smallest that trains (and the one that
    takes the data in one block), as --memory takes them: "208M". ``state``: the run's bytes
    besides the overhead and the blocks (labels, shrink marks, w at an iteration's start);
    ``stored``: the largest stored block's bytes, resident on top when stored blocks are cut
    (0: never cut)."""

    def size(n_bytes: int) -> str:
        # rounded up to 8 MiB, with 4 MiB to spare: a measured overhead varies by a few MiB
        # from one process to the next
        return f"{-(-(n_bytes + (4 << 20)) // (8 << 20)) * 8}M"

    what = ("this process holds {} MiB before training (measured: interpreter, libraries, "
            "compiled code)" if measured else "the fixed overhead (interpreter, libraries, "
            "compiled code) takes {} MiB").format(-(-overhead // 2**20))  # fmt: skip
    block = min(MIN_BLOCK_BYTES, whole)
    smallest = overhead + state + shares * block + (stored if stored > block else 0)
    return (
        f"memory {format_bytes(budget)} is too small: {what} and the run's labels and state "
        f"take {-(-state // 2**20)} MiB; the smallest budget that trains is {size(smallest)} "
        f"({size(overhead + state + shares * whole)} trains the data in one block)"
    )


def _return_freed_arrays_to_the_system() -> None:
    """Make glibc's malloc serve every allocation over 128 KiB by mmap, so that a freed block
    goes back to the system at once. By default glibc raises that threshold after the first
    large frees, and the blocks read and dropped in turn then stay in its heap: measured, a
    run budgeted for 40 MB of blocks grew by 65 MB, and by 33 MB with this. What is free in
    its heaps now (every thread's) goes back too (malloc_trim). Elsewhere (not glibc) a
    no-op."""
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
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
class _PassState:
    """An outer iteration in progress (saved in checkpoints): the partitions' sums so far
    (w at the iteration's start, the loss there of the blocks done, their first passes'
    projected-gradient extremes), D(alpha) at the start, the megabytes read."""

    sums: OuterSums
    dual_start: np.ndarray  # (n_vectors,)
    mb: float = 0.0
    started: float = 0.0

    @classmethod
    def fresh(cls, W, alpha, targets, loss, dual: bool = True) -> _PassState:
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


class _BlockPlace:
    """Blocks of the rows as partitions of one partitioned dual (``partitioned.py``), solved
    in turn: each read from the source while the one before trains (``_CyclicReader``), joined
    with the kept support vectors of the other blocks (``_SupportCache``), and solved by the
    registered dual solver from its rows' alpha and the shared W for the task's passes, every
    one-vs-rest sub-problem on the same read."""

    def __init__(self, reader, support, targets, alpha, solve, bias, loss, tolerance,
                 seed) -> None:  # fmt: skip
        self.reader = reader
        self.support = support
        self.targets = targets
        self.alpha = alpha
        self.solve_sub = solve
        self.bias = bias
        self.loss = loss
        self.tolerance = tolerance
        self.seed = seed
        self.n_partitions = reader.n_groups

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
                _enter_interior(X_solve.indptr, X_solve.indices, X_solve.data, bias, y_s, c_s,
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


@dataclass
class _Shrinking:
    """The epoch mode's shrinking state, across blocks and epochs (saved in checkpoints): a
    mark a row and sub-problem (1: shrunk, skipped until the marks are cleared), and the
    thresholds an epoch shrinks against, the previous epoch's projected-gradient extremes
    (LIBLINEAR's M-bar and m-bar; +-inf: shrink nothing)."""

    shrunk: np.ndarray  # (n_vectors, n_rows) uint8
    pg_max_old: np.ndarray  # (n_vectors,)
    pg_min_old: np.ndarray  # (n_vectors,)

    @classmethod
    def fresh(cls, n_vectors: int, n_rows: int) -> _Shrinking:
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


class _EpochPlace:
    """Blocks of the rows as partitions solved in turn, one pass each: the SVM duals' epoch
    mode. An outer iteration is one epoch of the in-memory solver over every row, visited a
    block at a time (``_svm_block_epoch``): the bucketed order within the block, shrinking
    state kept across blocks and epochs (``_Shrinking``). Nothing is copied but the block as
    read; no rows join it (with rows shuffled into blocks when the cache was written, a
    block's pass is as random as the in-memory solver's; docs: "Blocks")."""

    def __init__(self, reader, targets, alpha, shrinking, bias, loss, seed) -> None:
        self.reader = reader
        self.targets = targets
        self.alpha = alpha
        self.shrinking = shrinking
        self.bias = bias
        self.squared = loss == LOSS_SQUARED_HINGE
        self.seed = seed
        self.n_partitions = reader.n_groups
        self.order: tuple[int, int, bool] | None = None  # chosen on the first block
        self._none = np.zeros(0, dtype=bool)
        self._work: tuple = ()

    def _buffers(self, n_rows: int, bucket_size: int) -> tuple:
        """The kernel's per-row work arrays (records, removed marks, active rows, order,
        bucket order), kept from block to block and grown when a block has more rows."""
        if not self._work or self._work[0].shape[0] < n_rows:
            index_dtype = np.int32 if n_rows < 2**31 - 1 else np.int64
            order, bucket_order = order_buffers(n_rows, bucket_size, index_dtype)
            self._work = (np.empty((n_rows, 4)), np.zeros(n_rows, dtype=np.uint8),
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
        shrinking, targets = self.shrinking, self.targets
        if isinstance(rows, slice):
            rows = np.arange(rows.start, rows.stop)
        if self.order is None:
            # the in-memory solver's choice (buckets unless the rows are few, fit a core's
            # cache or neighbours are alike), made once, on the first block
            signs = np.where(targets.class_index[rows] == 0, 1.0, -1.0)
            bucket_size, buckets_per_group = choose_order(X_b, signs, None, None, self.seed)
            self.order = bucket_size, buckets_per_group, not cache_resident(X_b, 32)
        bucket_size, buckets_per_group, use_prefetch = self.order
        rec, removed, active, order, bucket_order = self._buffers(n_rows, bucket_size)
        held_out = self._none if targets.held_out is None else targets.held_out
        for k in range(n_vectors):
            rng = new_state(self.seed + task.outer * 7919 + g * 131 + k)
            block_loss[k], alpha_terms[k], pg_max[k], pg_min[k], _ = _svm_block_epoch(
                X_b.indptr, X_b.indices, X_b.data, self.bias, rows, targets.class_index, k,
                *targets.costs(k), held_out, self.squared, self.alpha[k], W[k],
                task.W_start[k], shrinking.shrunk[k], shrinking.pg_max_old[k],
                shrinking.pg_min_old[k], bucket_size, buckets_per_group, use_prefetch, rng,
                rec, removed, active, order, bucket_order,
            )  # fmt: skip
        del X_b
        return [PartResult(g, loss=block_loss, dual_terms=alpha_terms, pg_max=pg_max,
                           pg_min=pg_min, seconds=time.perf_counter() - started,
                           figures={"mb": megabytes})]  # fmt: skip


def _run_meta(source, solver, params, class_weight, inner_iter, seed, selective, groups,
              support_capacity, epochs) -> dict:  # fmt: skip
    """What a checkpoint must match to be resumed: the data and everything that decides the
    path (the blocks' grouping follows the memory budget)."""
    identity = getattr(source, "identity", None)
    return {
        "format": "linsvm-blocks-checkpoint",
        "version": 2,
        "data": identity() if identity else [source.n_rows, source.n_features],
        "solver": solver,
        "C": params.C,
        "eps": params.eps,
        "bias": params.bias,
        "class_weight": sorted((repr(k), float(v)) for k, v in (class_weight or {}).items()),
        "inner_iter": inner_iter,
        "seed": seed,
        "selective": selective,
        "groups": [list(map(int, g)) for g in groups],
        "units": source.block_rows().tolist(),
        "support_capacity": int(support_capacity),
        "epochs": bool(epochs),
    }


class _BlockCheckpoints:
    """Atomic .npz checkpoints of a block run (plain arrays, JSON meta, no pickle)."""

    def __init__(self, path, every: float, meta: dict | None) -> None:
        self.path = None if path is None else os.fspath(path)
        self.every = float(every)
        self.meta = meta
        self.last = time.perf_counter()

    def due(self) -> bool:
        return self.path is not None and time.perf_counter() - self.last >= self.every

    def save(self, outer: int, group: int, W, alpha, run: _PassState, support,
             shrinking: _Shrinking, reader_at: tuple[int, int]) -> None:
        meta = dict(self.meta, outer=outer, group=group, reader=list(reader_at), mb=run.mb,
                    rng=support.rng.bit_generator.state)  # fmt: skip
        arrays = run.arrays()
        arrays.update(W=W, alpha=alpha, support_rows=support.rows, shrunk=shrinking.shrunk,
                      pg_max_old=shrinking.pg_max_old, pg_min_old=shrinking.pg_min_old)
        if support.X is not None:
            arrays.update(support_data=support.X.data, support_indices=support.X.indices,
                          support_indptr=support.X.indptr)  # fmt: skip
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                 **arrays)  # fmt: skip
        atomic_write_bytes(self.path, buffer.getvalue())
        self.last = time.perf_counter()


def _stored_overhead(path, default: int) -> int:
    """The measured overhead a block checkpoint's run planned with (``default`` if it has
    none or cannot be read: ``_restore`` then says what is wrong with it)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            stored = json.loads(saved["meta"].tobytes().decode())
        return int(stored.get("overhead", default))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile):
        return default


def _restore(path, meta: dict, W, alpha, run: _PassState, support,
             shrinking: _Shrinking) -> tuple[int, int, tuple[int, int]]:
    """Load a checkpoint into the run's arrays; (outer iteration, block, the reader's round
    and block) to continue from."""
    name = os.fsdecode(os.fspath(path))
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {key: saved[key] for key in saved.files}
        stored = json.loads(arrays.pop("meta").tobytes().decode())
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise InvalidInputError(f"{name}: not a readable block checkpoint ({exc})") from None
    if stored.get("format") != meta["format"]:
        raise InvalidInputError(f"{name}: not a checkpoint of block minimisation")
    for key, value in meta.items():
        if json.loads(json.dumps(value)) != stored.get(key):
            raise InvalidInputError(
                f"{name}: the checkpoint is of another run ({key} differs); resume with the "
                "same data, options and --memory"
            )
    W[:] = arrays["W"]
    alpha[:] = arrays["alpha"]
    shrinking.shrunk[:] = arrays["shrunk"]
    shrinking.pg_max_old[:] = arrays["pg_max_old"]
    shrinking.pg_min_old[:] = arrays["pg_min_old"]
    run.load(arrays)
    run.mb, run.started = float(stored["mb"]), time.perf_counter()
    support.rows = arrays["support_rows"]
    if "support_data" in arrays:
        n_cols = W.shape[1] - (1 if meta["bias"] >= 0 else 0)
        support.X = sp.csr_matrix(
            (arrays["support_data"], arrays["support_indices"], arrays["support_indptr"]),
            shape=(support.rows.shape[0], n_cols),
        )
    support.rng.bit_generator.state = stored["rng"]
    round_, position = stored["reader"]
    return int(stored["outer"]), int(stored["group"]), (int(round_), int(position))


class _Targets:
    """Every row's one-vs-rest target and cost, made a block of rows at a time from the class
    index (one byte a row up to 255 classes) instead of kept as two float64 arrays a class:
    on 20M rows that is 20 MB, not 320 MB a class, out of the budget."""

    # rows a time, where a pass over all rows needs their costs: the chunk's temporaries
    # (CHUNK_BYTES) count in the budget
    CHUNK = 1 << 16
    CHUNK_BYTES = CHUNK * (8 + 8 + 8 + 1)

    def __init__(self, class_index, weighted_C, C: float, held_out=None) -> None:
        self.class_index = class_index.astype(np.min_scalar_type(max(len(weighted_C) - 1, 0)))
        self.weighted_C, self.C = weighted_C, C
        self.n_rows = class_index.shape[0]
        # rows left out of training (cross-validation): cost 0, no part in the solve
        self.held_out = None
        if held_out is not None:
            self.held_out = np.asarray(held_out, dtype=bool)
            if self.held_out.shape != (self.n_rows,):
                raise InvalidInputError(
                    f"held_out must be a mask of the {self.n_rows} rows, "
                    f"got shape {self.held_out.shape}"
                )

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
            if loss == LOSS_LOGISTIC:
                f = lr_dual_alpha_terms(cost, alpha[part], np.maximum(cost - alpha[part], 0.0), f)
            else:
                f = svm_dual_alpha_terms(cost, alpha[part], loss, f)
        return -f


class _Reader:
    """The training blocks of one round after another (``_Plan``), each read in a background
    thread while the one before it is used: at most two blocks in memory."""

    def __init__(self, source: BlockSource, plan: _Plan, round_: int = 0, start: int = 0):
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

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        self.pending[0].cancel()
        self.pool.shutdown(wait=True)


def _verify(reader: _Reader, W, alpha, targets: _Targets, bias, loss):
    """(the stopping measure over every row at W, per-class loss sums at W): one round of
    the reader, from its first block (where it stands after a complete outer iteration)."""
    pg_max = np.full(W.shape[0], -np.inf)
    pg_min = np.full(W.shape[0], np.inf)
    losses = np.zeros(W.shape[0])
    for _ in range(reader.n_groups):
        X_b, rows, _ = reader.next()
        for k in range(W.shape[0]):
            y_b, c_b = targets.rows(k, rows)
            total, hi, lo = _check_block(
                X_b.indptr, X_b.indices, X_b.data, bias, y_b, c_b,
                np.ascontiguousarray(alpha[k, rows]), W[k], loss,
            )  # fmt: skip
            losses[k] += total
            pg_max[k] = max(pg_max[k], hi)
            pg_min[k] = min(pg_min[k], lo)
    logistic = loss == LOSS_LOGISTIC
    measure = max(stopping_measure(pg_max[k], pg_min[k], logistic) for k in range(W.shape[0]))
    return measure, losses


def _solution(solver, w, alpha, loss_total, targets: _Targets, k, loss, n_iter, reason):
    """Sub-problem k's Solution over views of the run's W and alpha (the run is over: no
    copy, which would take a third w and a second alpha past the budget)."""
    primal = 0.5 * sq_norm(w) + float(loss_total)
    dual = targets.dual_value(k, w, alpha, loss)
    return Solution(
        w=w, n_iter=n_iter, converged=reason == CONVERGED, stop_reason=reason,
        primal=primal, dual=dual, gap=primal - dual, alpha=alpha, solver=solver,
    )  # fmt: skip


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


__all__ = [
    "ArrayBlocks",
    "BlockSource",
    "CacheBlocks",
    "cross_validate_blocks",
    "cross_validate_cache",
    "OuterProgress",
    "parse_memory",
    "train_blocks",
    "train_cache",
]
