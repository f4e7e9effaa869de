"""Rows read a block at a time: the ``BlockSource`` protocol that training in blocks reads
through, over a binary cache (``CacheBlocks``) or arrays in memory (``ArrayBlocks``), or over
another source's rows with their used columns only (``UsedColumnBlocks``), the buffers a block
is read into, and the row gathering a block's solve needs (``stack_rows``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..checkpoint import fingerprint
from ..data import TRAINABLE_MAX, UsedColumns, all_finite, as_csr, check_labels
from ..errors import InvalidInputError
from .cache import CacheFormatError


class BlockSource(Protocol):
    """Rows read a range of stored blocks at a time (a binary cache, or arrays in memory)."""

    n_rows: int
    n_features: int
    n_blocks: int
    nnz: int  # (optional: where given, a width above twice it is trained on its used columns)


    def block_rows(self) -> np.ndarray: ...  # (n_blocks,) rows per stored block

    def block_nbytes(self) -> np.ndarray: ...  # (n_blocks,) bytes of each stored block

    def blocks(self, k0: int, k1: int) -> tuple[sp.csr_matrix, np.ndarray]: ...  # (X, y)

    # the stored blocks ``units`` one after another, copied (the caller may change them)
    def gather(self, units: np.ndarray, out=None) -> tuple[sp.csr_matrix, np.ndarray]: ...

    def labels(self) -> np.ndarray: ...  # (n_rows,) every row's label

    def check_stored(self) -> None: ...  # raise if the stored rows are damaged


class ArrayBlocks:
    """A ``BlockSource`` over (X, y) in memory, cut into ``n_blocks`` row ranges of about equal
    non-zeros: block minimisation on data that fits, for tests and comparisons."""

    def __init__(self, X, y, n_blocks: int) -> None:
        self.X = as_csr(X)
        self.y = check_labels(y, self.X.shape[0])
        self.n_rows, self.n_features = self.X.shape
        self.nnz = nnz = int(self.X.indptr[-1])
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

    def check_stored(self) -> None:
        """Nothing to check: the rows are the caller's arrays."""

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
        if (
            not have
            or have[0].shape[0] < n_rows
            or have[2].shape[0] < nnz
            or have[3].dtype != dtype
            or have[2].dtype != index_dtype
        ):
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
        self.n_rows, self.n_features, self.nnz = cache.n_rows, cache.n_features, int(cache.nnz)
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
            # each unit's first and end non-zero within its stored block
            spans = np.empty((len(units), 2), dtype=np.int64)
            indptr, held = None, -1
            for u, (k, r0, r1) in enumerate(units):
                if k != held:
                    indptr, held = cache.row_pointer(k), k
                spans[u] = indptr[r0], indptr[r1]
            self._first_nonzero, self._nnz = spans[:, 0], spans[:, 1] - spans[:, 0]
        # the units whose values were checked trainable (once: a read again is the same
        # bytes, or refused by the cache's checksum where the file changed)
        self._trainable = np.zeros(self.n_blocks, dtype=bool)

    def split(self, max_bytes: int) -> CacheBlocks:
        """The same rows in units of at most ``max_bytes`` (a row larger than that alone),
        cutting the stored blocks that exceed it."""
        units = []
        for k in range(self.cache.n_blocks):
            indptr = self.cache.row_pointer(k)
            n_rows = indptr.shape[0] - 1
            cost = np.cumsum(np.diff(indptr) * self._entry_bytes + 16)
            r0 = 0
            while r0 < n_rows:
                base = cost[r0 - 1] if r0 else 0
                r1 = max(int(np.searchsorted(cost, base + max_bytes, side="right")), r0 + 1)
                units.append((k, r0, min(r1, n_rows)))
                r0 = units[-1][2]
            del indptr
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
        """``_gather``, and its values checked to be trainable: a value of ``TRAINABLE_MAX``
        or more (a cache written without that check, as `write_cache` writes what it reads)
        would overflow the training's float64 sums, as the text reader and in-memory training
        refuse it. One pass of exponent compares over the values read, on a unit's first
        read."""
        X, y = self._gather(units, out)
        units = np.asarray(units, dtype=np.int64)
        if self._trainable[units].all():
            return X, y
        if not all_finite(X.data, 1, below=TRAINABLE_MAX):
            at = int(np.flatnonzero(np.abs(X.data) >= TRAINABLE_MAX)[0])
            local = int(np.searchsorted(X.indptr, at, side="right")) - 1
            pieces, row = self._pieces(), local
            for unit in units.tolist():
                k, r0, r1 = pieces[unit]
                if row < r1 - r0:
                    row += int(self.cache.row_starts[k]) + r0
                    break
                row -= r1 - r0
            raise InvalidInputError(
                f"{self.cache.path}: row {row + 1}, feature "
                f"{int(X.indices[at]) + (0 if self.cache.zero_based else 1)}: value "
                f"{float(X.data[at]):.3g}: values of magnitude 2^500 or more overflow float64 "
                "in training; scale the data down")
        self._trainable[units] = True
        return X, y

    def _gather(self, units: np.ndarray, out: BlockBuffer | None = None
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

    def check_stored(self) -> None:
        """Every stored block's checksum (a read of the whole file)."""
        for k in range(self.cache.n_blocks):
            self.cache.check_block(k)

    def identity(self) -> list:
        """What a checkpoint must match: sizes and the checksum of the block table (which
        holds every block's checksum)."""
        cache = self.cache
        return [self.n_rows, self.n_features, int(cache.nnz), cache.n_blocks, cache.checksum]


def used_columns_of(source: BlockSource) -> UsedColumns | None:
    """The columns of ``source``'s rows that hold a value, where fewer than half do (else
    None): one pass over its units, one at a time into one buffer."""
    seen = np.zeros(source.n_features, dtype=np.bool_)
    buffer = BlockBuffer()
    for k in range(source.n_blocks):
        X, _ = source.gather(np.array([k]), out=buffer)
        _mark_columns(X.indices, seen)
        del X
    used = np.flatnonzero(seen)
    return UsedColumns(used, source.n_features) if 2 * used.shape[0] < seen.shape[0] else None


@njit(cache=True, nogil=True)
def _mark_columns(indices, seen) -> None:
    for j in indices:
        seen[j] = True


class UsedColumnBlocks:
    """A ``BlockSource`` over another's rows with their columns renumbered to the used ones
    (``data.UsedColumns``; the order kept, so rows stay sorted). Block minimisation keeps w,
    its copy at each outer iteration's start and the objectives' sums over its columns: over
    a width mostly unused (features hashed before they were written) those cost O(width) an
    outer iteration, which dwarfed the blocks' work (a9a spread over 2^24 columns, -s 3:
    9.7 s against 1.15 s at its natural width). The renumbering is a pass over a block's
    indices in the reader's thread, through ``UsedColumns.places``."""

    def __init__(self, source: BlockSource, used: UsedColumns) -> None:
        self.source = source
        self.used = used
        self.n_rows, self.n_blocks, self.nnz = source.n_rows, source.n_blocks, source.nnz
        self.n_features = int(used.columns.shape[0])
        index_dtype = np.int32 if self.n_features < 2**31 else np.int64
        self.place = used.places(index_dtype)

    def block_rows(self) -> np.ndarray:
        return self.source.block_rows()

    def block_nbytes(self) -> np.ndarray:
        return self.source.block_nbytes()

    def blocks(self, k0: int, k1: int) -> tuple[sp.csr_matrix, np.ndarray]:
        return self._renumbered(*self.source.blocks(k0, k1), own=False)

    def gather(self, units: np.ndarray, out: BlockBuffer | None = None
               ) -> tuple[sp.csr_matrix, np.ndarray]:  # fmt: skip
        return self._renumbered(*self.source.gather(units, out), own=True)

    def _renumbered(self, X: sp.csr_matrix, y: np.ndarray, own: bool):
        """X over the used columns: its indices renumbered in place where they are a copy of
        the stored rows (``gather``), else into a new array."""
        indices = X.indices if own else np.empty_like(X.indices)
        _renumber(X.indices, self.place, indices)
        renumbered = _csr_over(X.data, indices, X.indptr, (X.shape[0], self.n_features))
        renumbered.has_canonical_format = True
        return renumbered, y

    def labels(self) -> np.ndarray:
        return self.source.labels()

    def check_stored(self) -> None:
        self.source.check_stored()

    def will_need(self, units: np.ndarray) -> None:
        if hasattr(self.source, "will_need"):
            self.source.will_need(units)

    def identity(self) -> list:
        """What a checkpoint must match: the source's identity, and that w is over its used
        columns."""
        identity = getattr(self.source, "identity", None)
        of = identity() if identity is not None else [self.n_rows, self.used.n_features]
        return [*of, "used columns", self.n_features]


@njit(cache=True, nogil=True)
def _renumber(indices, place, out) -> None:
    for p in range(indices.shape[0]):
        out[p] = place[indices[p]]


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


def stack_rows(parts: list[tuple[sp.csr_matrix, np.ndarray | None]], n_cols: int):
    """One CSR matrix of the chosen rows of each part in turn (``None``: all of its rows),
    copied once into arrays of the final size: what ``vstack`` of fancy-indexed parts does
    with a copy less (on block minimisation's joins, a fifth of its time)."""
    lengths = [np.diff(X.indptr) if rows is None else np.diff(X.indptr)[rows] for X, rows in parts]
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


@contextmanager
def open_cache_blocks(path) -> Iterator[CacheBlocks]:
    """The cache file at ``path`` (``linsvm cache`` makes one) as a ``BlockSource``, open
    within the block; a width whose model could not fit in memory is refused first
    (DataFormatError at the line of the largest index, as ``read_libsvm(check_width=True)``
    reads text)."""
    from .cache import open_cache
    from .libsvm import _Options

    with open_cache(path) as cache:
        options = _Options.check(np.float64, None, bool(cache.zero_based), False,
                                 check_width=True)  # fmt: skip
        options.check_cache_width(os.fsdecode(os.fspath(path)), cache)
        yield CacheBlocks(cache)


__all__ = ["ArrayBlocks", "BlockBuffer", "BlockSource", "CacheBlocks", "UsedColumnBlocks",
    "open_cache_blocks", "stack_rows", "unit_rows", "used_columns_of"]
