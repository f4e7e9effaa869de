"""What each Dask worker reads: the data cut into shards on the client, read on the workers.

The client never reads the data. `plan_shards` looks only at file sizes and headers and cuts the
source into `Shard` descriptions (small, frozen, picklable); each worker then reads its own
shard with `load_shard`, through the project's own reader (`linsvm.io.libsvm`: the same
parser, threads, checks and messages) or cache (`linsvm.io.cache`).

Sources, and how they are cut:

- LIBSVM text files (one path or a list). A plain file is cut into byte ranges. A range
  ``[start, stop)`` holds the lines that *start* in it: a line starting exactly at ``start``
  counts, the partial line before it belongs to the previous range, and the line straddling
  ``stop`` is read to its end. Ranges cut anywhere so give every line to exactly one shard.
  Compressed files (``.gz``, ``.bz2``, ``.xz``, by suffix as the reader decides) cannot be cut
  and are read whole by one shard.
- A binary cache (recognised by its first bytes, whatever its name; one path or a list): row
  ranges, preferably whole stored blocks; a block is cut at a row (found from its row offsets)
  when whole blocks cannot give a balanced split.
- Dask collections (`shards_from_collection`): a dask.array of scipy.sparse CSR (or dense)
  chunks, or a dask.dataframe, with labels as a dask.array or series; each shard is a
  `dask.delayed` of consecutive chunks, computed on a worker.

The parts of a source are balanced by weight (bytes of text, non-zeros of a cache): cut ``k``
of ``K`` aims at ``k / K`` of the total and moves to a file or block boundary only when that is
within `SNAP` of a share, so shards differ by at most about twice that (a CoCoA+ round lasts as
long as its slowest partition). Whole compressed files are placed by the same rule, snapped to
their nearer end, and weigh their compressed size (their text's is unknown without reading
them): mixing plain and compressed files balances poorly. A shard may span the end of one
file and the start of the next.

Rows, labels and errors are exactly the reader's: concatenating the shards' rows in shard order
gives `read_libsvm` of the files one after another, `merge_labels` gives LIBLINEAR's label
order over the whole data, and a malformed line raises `DataFormatError` naming the file and
its line in the whole file (the lines before a range are counted only when an error occurs).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..data import as_csr, check_labels, group_labels, is_integer
from ..errors import DataFormatError, InvalidInputError
from ..io import libsvm as _libsvm
from ..parallel import effective_n_jobs

__all__ = [
    "Shard",
    "ShardData",
    "ShardPart",
    "load_shard",
    "merge_labels",
    "plan_shards",
    "shards_from_collection",
]

# A cut moves to a file or stored-block boundary when it is within this fraction of a share
# of it: shards then stay within about 2 * SNAP of equal weight.
SNAP = 0.05
# Bytes read at a time while looking for the start of a range's first line, or counting the
# lines before a range for an error message.
_SCAN_SIZE = 1 << 16
_INT32_MAX = np.iinfo(np.int32).max


# ----------------------------------------------------------------------------- descriptions


@dataclass(frozen=True)
class ShardPart:
    """One contiguous piece of one file.

    kind: "text" (`start`, `stop` are byte offsets), "compressed" (the whole file: 0 and its
    size) or "cache" (`start`, `stop` are rows of the cache).
    """

    kind: str
    path: str
    start: int
    stop: int

    def describe(self) -> str:
        if self.kind == "text":
            return f"{self.path} bytes {self.start}-{self.stop}"
        if self.kind == "cache":
            return f"{self.path} rows {self.start}-{self.stop}"
        return f"{self.path} (whole, compressed)"


@dataclass(frozen=True)
class Shard:
    """What one worker reads: consecutive parts of the source, in order.

    Attributes
    ----------
    index : int
        Position of the shard in the plan (rows of shard k precede those of shard k + 1).
    parts : tuple of ShardPart
    weight : int
        What the plan balanced: bytes of text (compressed bytes for a compressed file) or
        non-zeros of a cache (estimated within a cut block).
    dtype : str
        dtype of the values read ("float64" or "float32").
    zero_based : bool
        Whether the text's indices are 0-based (a cache's columns are fixed already).
    """

    index: int
    parts: tuple[ShardPart, ...]
    weight: int
    dtype: str = "float64"
    zero_based: bool = False

    @property
    def kind(self) -> str:
        """"cache" or "text" (plain and compressed text files)."""
        return "cache" if self.parts[0].kind == "cache" else "text"

    def describe(self) -> str:
        """A one-line description for messages: ``shard 2: a.svm bytes 0-1000, ...``."""
        return f"shard {self.index}: " + ", ".join(part.describe() for part in self.parts)


@dataclass
class ShardData:
    """The rows of one shard, as a worker holds them.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
        Canonical (sorted, 0-based columns), values of the shard's dtype, int32 index arrays
        when nnz and the width fit in int32, else int64. Its width is `n_features_seen`, or
        the `n_features` given to `load_shard`.
    y : ndarray, shape (n_rows,)
        Labels as read (float64 from files).
    labels_in_order : ndarray
        The distinct labels in order of first appearance within the shard.
    n_features_seen : int
        Columns the shard's rows need: its largest column + 1 (0 without non-zeros). The data's
        width is the largest over the shards.
    n_rows : int
    """

    X: sp.csr_matrix
    y: np.ndarray
    labels_in_order: np.ndarray
    n_features_seen: int
    n_rows: int

    @property
    def nnz(self) -> int:
        return int(self.X.nnz)


# ----------------------------------------------------------------------------- planning


@dataclass
class _Unit:
    """A piece of the source as the planner weighs it: [lo, hi) in its own positions (bytes or
    rows), its weight, and whether a cut may fall inside it."""

    kind: str
    path: str
    lo: int
    hi: int
    weight: int
    splittable: bool
    block: int = -1  # the stored block, for a cache


def plan_shards(
    source: str | os.PathLike | Sequence[str | os.PathLike],
    n_partitions: int,
    *,
    dtype=np.float64,
    zero_based: bool = False,
) -> list[Shard]:
    """Cut `source` into at most `n_partitions` shards of about equal weight, reading only file
    sizes and headers.

    Parameters
    ----------
    source : path or list of paths
        LIBSVM text files (plain or .gz/.bz2/.xz), or binary caches (`linsvm.io.write_cache`),
        not both. Their rows, in the order given, make the data.
    n_partitions : int
        Shards wanted (>= 1).
    dtype : float64 or float32
        dtype of the values the workers read (a cache's values are cast to it).
    zero_based : bool
        Whether the text's indices are 0-based (not "auto": each shard would decide alone).

    Returns
    -------
    list of Shard, in data order, between 1 and `n_partitions` long: fewer when the source
    cannot be cut that finely (a compressed file is one shard; no shard is empty of bytes).
    A shard of text may still hold no rows, when its range lies within one long line.

    Raises
    ------
    InvalidInputError
        No files, a missing or unreadable file, text mixed with caches, or bad options.
    CacheFormatError
        A cache's header or block table is damaged.
    """
    if not is_integer(n_partitions) or n_partitions < 1:
        raise InvalidInputError(f"n_partitions must be a positive integer, got {n_partitions!r}")
    if not isinstance(zero_based, bool | np.bool_):
        raise InvalidInputError(
            f"zero_based must be True or False for sharded reading, got {zero_based!r}")
    # shards are read to be trained on: a width whose model cannot fit is refused
    options = _libsvm._Options.check(dtype, None, bool(zero_based), False, check_width=True)

    # absolute: the workers read them, in their own working folders
    if isinstance(source, str | bytes | os.PathLike):
        paths = [_absolute(source)]
    else:
        paths = [_absolute(p) for p in source]
    if not paths:
        raise InvalidInputError("no data files given")
    units: list[_Unit] = []
    kinds = set()
    for path in paths:
        is_cache, new = _units_of(path)
        kinds.add(is_cache)
        units.extend(u for u in new if u.weight > 0)
    if len(kinds) > 1:
        raise InvalidInputError("data files must be all LIBSVM text or all linsvm caches, not "
                                "a mix")
    if not units:  # only empty files: one shard reads them (and finds no rows)
        kind = "cache" if kinds == {True} else "text"
        parts = tuple(ShardPart(kind, p, 0, 0) for p in paths)
        return [Shard(0, parts, 0, options.dtype.name, bool(zero_based))]
    total = sum(u.weight for u in units)

    cuts = [(0, units[0].lo)]
    for k in range(1, int(n_partitions)):
        cuts.append(_cut(units, k * total / n_partitions, total / n_partitions))
    cuts.append((len(units) - 1, units[-1].hi))
    cuts = sorted(set(cuts))

    shards = []
    for (u0, p0), (u1, p1) in zip(cuts[:-1], cuts[1:], strict=True):
        parts, weight = _parts_between(units, u0, p0, u1, p1)
        if parts:
            shards.append(Shard(len(shards), tuple(parts), weight, options.dtype.name,
                                bool(zero_based)))
    return shards


def _units_of(path: str) -> tuple[bool, list[_Unit]]:
    """Whether the file is a cache, and the planner's units of it: the file itself (text), or
    its stored blocks (cache)."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            a_cache = _libsvm.starts_as_cache(f, path)
    except OSError as exc:
        raise InvalidInputError(f"cannot read data file {path}: {exc.strerror or exc}") from None
    if a_cache:  # (one cut short too: open_cache says it is truncated)
        from ..io.cache import open_cache

        with open_cache(path) as cache:
            starts = cache.row_starts.tolist()
            nnz = cache.block_nnz.tolist()
        # A block's weight is its non-zeros plus its rows (a row costs a label and an offset,
        # and keeps blocks of empty rows from weighing nothing).
        return True, [_Unit("cache", path, starts[k], starts[k + 1],
                            nnz[k] + starts[k + 1] - starts[k], True, k) for k in range(len(nnz))]
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _libsvm._STREAM_OPENERS:
        return False, [_Unit("compressed", path, 0, size, size, False)]
    return False, [_Unit("text", path, 0, size, size, True)]


def _cut(units: list[_Unit], target: float, share: float) -> tuple[int, int]:
    """Where the cut at cumulative weight `target` falls: (unit, position in its lo..hi)."""
    acc = 0.0
    for i, u in enumerate(units):
        if acc + u.weight >= target or i == len(units) - 1:
            before, after = target - acc, acc + u.weight - target
            if not u.splittable or min(before, after) <= SNAP * share:
                return (i, u.lo) if before <= after else (i, u.hi)
            if u.kind == "cache":
                return i, _row_at(u, before / u.weight)
            return i, u.lo + int(round(before / u.weight * (u.hi - u.lo)))
        acc += u.weight
    raise AssertionError("unreachable")


def _row_at(u: _Unit, fraction: float) -> int:
    """The row of cache block `u` before which `fraction` of its weight lies (from its row
    offsets alone: `load_shard` checks the whole block before using its rows)."""
    from ..io.cache import open_cache

    with open_cache(u.path) as cache:
        indptr = cache.row_pointer(u.block)
        rows = np.arange(indptr.shape[0], dtype=np.int64)
        weights = indptr + rows  # non-zeros plus rows before each row, as the block's weight
        local = int(np.searchsorted(weights, fraction * weights[-1], side="left"))
        del indptr
    return u.lo + min(max(local, 1), u.hi - u.lo - 1)


def _parts_between(units: list[_Unit], u0: int, p0: int, u1: int, p1: int):
    """The shard's parts from position p0 of unit u0 to position p1 of unit u1, merged into one
    part per file, and their weight."""
    parts: list[ShardPart] = []
    weight = 0.0
    for i in range(u0, u1 + 1):
        u = units[i]
        lo = p0 if i == u0 else u.lo
        hi = p1 if i == u1 else u.hi
        if hi <= lo:
            continue
        weight += u.weight * (hi - lo) / max(u.hi - u.lo, 1)
        last = parts[-1] if parts else None
        if last is not None and last.path == u.path and last.stop == lo:
            parts[-1] = ShardPart(last.kind, last.path, last.start, hi)
        else:
            parts.append(ShardPart(u.kind, u.path, lo, hi))
    return parts, int(round(weight))


# ----------------------------------------------------------------------------- reading


def _absolute(path) -> str:
    if not isinstance(path, str | bytes | os.PathLike):
        raise InvalidInputError(f"a data file must be a path, got {type(path).__name__}")
    return os.path.abspath(os.fsdecode(os.fspath(path)))


def load_shard(
    shard: Shard, n_features: int | None = None, n_jobs: int | None = -1
) -> ShardData:
    """Read one shard's rows (on a worker).

    Parameters
    ----------
    shard : Shard
        From `plan_shards`.
    n_features : int, optional
        Width of X; a column at or beyond it is a `DataFormatError`. Default: the shard's own
        `n_features_seen`.
    n_jobs : int or None
        Threads that parse text, as in `read_libsvm` (-1: all cores).

    Returns
    -------
    ShardData

    Raises
    ------
    DataFormatError
        A malformed line: ``"<path>:<line>: <what>"`` with the line of the whole file, as
        `read_libsvm` reports it (a damaged cache: `CacheFormatError`); without
        ``n_features``, also an index whose model could not fit in this process's memory
        (shards are read to be trained on: `read_libsvm` with ``check_width=True``).
    InvalidInputError
        A value of a float64 cache beyond the range of a float32 shard; a file this process
        cannot read (the worker's view of the files differs from the client's).
    """
    options = _libsvm._Options.check(shard.dtype, n_features, shard.zero_based, False,
                                     check_width=True)
    n_threads = effective_n_jobs(n_jobs)
    pieces = []
    for part in shard.parts:
        try:
            if part.kind == "cache":
                pieces.append(_read_cache_rows(part, options))
            else:
                pieces.append(_read_text(part, options, n_threads))
        except OSError as exc:
            # (the client could read it when it planned the shards)
            raise InvalidInputError(
                f"{part.path}: a worker cannot read it ({exc.strerror or exc}): every worker "
                "must see the data files at the same paths"
            ) from None
    X = pieces[0][0] if len(pieces) == 1 else _stack([p[0] for p in pieces])
    y = pieces[0][1] if len(pieces) == 1 else np.concatenate([p[1] for p in pieces])
    seen = max(p[2] for p in pieces)
    width = seen if n_features is None else int(n_features)
    if X.shape[1] != width:  # the width parts are read with, made the shard's
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width), copy=False)
    X.has_sorted_indices = True
    return ShardData(X, y, _first_appearance(y), seen, X.shape[0])


def merge_labels(per_shard_labels: Sequence[np.ndarray]) -> np.ndarray:
    """LIBLINEAR's label order over the whole data from each shard's `labels_in_order` (in
    shard order): order of first appearance, except that two classes -1 and +1 put +1 first
    (as `training` orders the labels of data held whole)."""
    arrays = [np.asarray(labels) for labels in per_shard_labels if len(labels)]
    if not arrays:
        return np.empty(0, dtype=np.float64)
    return group_labels(np.concatenate(arrays))[0]


def _first_appearance(y: np.ndarray) -> np.ndarray:
    if y.shape[0] == 0:
        return y[:0].copy()
    uniq, first = np.unique(y, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def _stack(matrices: list[sp.csr_matrix]) -> sp.csr_matrix:
    """Row-wise concatenation of canonical CSR matrices (the widest width), kept canonical."""
    width = max(m.shape[1] for m in matrices)
    nnz = sum(m.nnz for m in matrices)
    index_dtype = np.int32 if max(nnz, width) <= _INT32_MAX else np.int64
    indptr = [np.zeros(1, dtype=index_dtype)]
    offset = 0
    for m in matrices:
        indptr.append((m.indptr[1:] + offset).astype(index_dtype, copy=False))
        offset += m.nnz
    X = sp.csr_matrix(
        (np.concatenate([m.data for m in matrices]),
         np.concatenate([m.indices for m in matrices]).astype(index_dtype, copy=False),
         np.concatenate(indptr)),
        shape=(sum(m.shape[0] for m in matrices), width), copy=False,
    )  # fmt: skip
    X.has_sorted_indices = True
    return X


def _read_text(part: ShardPart, options, n_threads: int):
    """(X, y, columns needed) of the lines that start in the part's byte range (a compressed
    file: all its lines), parsed by the reader's blocks and pieces."""
    with open(part.path, "rb") as raw:
        if part.kind == "compressed":
            out = _libsvm._Output(part.path, options)
            with contextlib.closing(
                _libsvm._text_pieces(raw, part.path, options, n_threads)
            ) as parsed:
                for pieces, fraction in parsed:
                    out.add(pieces, fraction)
            X, y = out.result()
            return X, y, _width(out)

        begin = _first_line_start(raw, part.start, part.stop)
        out = _libsvm._Output(part.path, options)
        try:
            if begin < part.stop:
                stream = _RangeStream(raw, begin, part.stop)
                blocks = _libsvm._file_blocks(stream, stream, part.stop - begin,
                                              _libsvm.BLOCK_SIZE, compressed=False)
                with contextlib.closing(
                    _libsvm._parsed_blocks(blocks, part.path, options, n_threads, "")
                ) as parsed:
                    for pieces, fraction in parsed:
                        out.add(pieces, fraction)
            X, y = out.result()
        except DataFormatError as exc:
            # The reader counted lines from `begin`: make the line the whole file's.
            before = _count_newlines(raw, begin)
            raise type(exc)(exc.path, exc.line + before, exc.what) from None
        return X, y, _width(out)


def _width(out) -> int:
    """Columns the rows read need: the largest index as written, + 1 when 0-based."""
    if out.nnz == 0:
        return 0
    return int(out.max_index) + (1 if out.options.zero_based is True else 0)


def _first_line_start(raw, start: int, stop: int) -> int:
    """The offset of the first line that starts at or after `start` (`stop` or beyond when
    none starts before `stop`): just after the first newline at or after start - 1."""
    if start == 0:
        return 0
    raw.seek(start - 1)
    pos = start - 1
    while pos < stop:
        chunk = raw.read(min(_SCAN_SIZE, stop - pos))
        if not chunk:
            return stop
        found = chunk.find(b"\n")
        if found >= 0:
            return pos + found + 1
        pos += len(chunk)
    return stop


def _count_newlines(raw, end: int) -> int:
    raw.seek(0)
    count = 0
    pos = 0
    while pos < end:
        chunk = raw.read(min(_libsvm.BLOCK_SIZE, end - pos))
        if not chunk:
            break
        count += chunk.count(b"\n")
        pos += len(chunk)
    return count


class _RangeStream:
    """The bytes of an open file from `begin` to the end of the line that straddles `stop`
    (the first newline at or after stop - 1, or the end of the file), as a stream for the
    reader's `_file_blocks` (`readinto`, and `tell` for its progress fraction)."""

    def __init__(self, raw, begin: int, stop: int) -> None:
        raw.seek(begin)
        self.raw = raw
        self.begin = begin
        self.pos = begin
        self.stop = stop
        self.done = False

    def readinto(self, view) -> int:
        if self.done:
            return 0
        got = self.raw.readinto(view)
        if not got:
            self.done = True
            return 0
        end = self.pos + got
        if end >= self.stop:
            first = max(self.pos, self.stop - 1) - self.pos
            tail = np.frombuffer(view[first:got], dtype=np.uint8)
            newlines = np.flatnonzero(tail == 10)
            if newlines.shape[0]:
                got = first + int(newlines[0]) + 1
                self.done = True
        self.pos += got
        return got

    def tell(self) -> int:
        return self.pos - self.begin


def _read_cache_rows(part: ShardPart, options):
    """(X, y, columns needed) of rows start..stop of a cache, copied from its checked blocks,
    values cast to the shard's dtype."""
    from ..io.cache import check_value_range, open_cache

    with open_cache(part.path) as cache:
        options.check_cache_width(part.path, cache)
        starts = cache.row_starts
        k0 = int(np.searchsorted(starts, part.start, side="right")) - 1
        k1 = int(np.searchsorted(starts, part.stop, side="left"))
        spans = []  # (block, first row, end row) within each block
        for k in range(k0, k1):
            a = max(part.start, int(starts[k])) - int(starts[k])
            b = min(part.stop, int(starts[k + 1])) - int(starts[k])
            if b > a:
                spans.append((k, a, b))
        n_rows = sum(b - a for _, a, b in spans)
        nnz = 0
        blocks = []
        for k, a, b in spans:
            Xk, yk = cache.block(k)  # checked (checksum, structure) before use
            blocks.append((Xk, yk, a, b, int(starts[k])))
            nnz += int(Xk.indptr[b] - Xk.indptr[a])
        n_cols = cache.n_features
        if options.n_features is not None:
            n_cols = options.n_features
        index_dtype = np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64
        data = np.empty(nnz, dtype=options.dtype)
        indices = np.empty(nnz, dtype=index_dtype)
        indptr = np.zeros(n_rows + 1, dtype=index_dtype)
        y = np.empty(n_rows, dtype=np.float64)
        r = z = 0
        for Xk, yk, a, b, first_row in blocks:
            lo, hi = int(Xk.indptr[a]), int(Xk.indptr[b])
            check_value_range(part.path, Xk.data[lo:hi], Xk.indptr[a : b + 1] - lo,
                              Xk.indices[lo:hi], first_row + a, options.dtype,
                              cache.zero_based)
            y[r : r + b - a] = yk[a:b]
            np.add(Xk.indptr[a + 1 : b + 1], z - lo, out=indptr[r + 1 : r + b - a + 1],
                   casting="unsafe")
            indices[z : z + hi - lo] = Xk.indices[lo:hi]
            data[z : z + hi - lo] = Xk.data[lo:hi]
            r, z = r + b - a, z + hi - lo
        blocks.clear()
        for k, _, _ in spans:
            cache.release(k)  # copied: its pages need not stay mapped in this process
        seen = _columns_needed(indices, indptr)
        if options.n_features is not None and seen > options.n_features:
            written = seen - 1 if cache.zero_based else seen  # as the text wrote it
            raise DataFormatError(part.path, cache.max_index_line,
                                  f"feature index {written} too large "
                                  f"(n_features={options.n_features})")
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, max(n_cols, seen)), copy=False)
    X.has_sorted_indices = True
    return X, y, seen


def _columns_needed(indices: np.ndarray, indptr: np.ndarray) -> int:
    """Largest column + 1 of canonical CSR rows (each row's last index is its largest)."""
    if indices.shape[0] == 0:
        return 0
    ends = indptr[1:]
    nonempty = ends > indptr[:-1]
    return int(indices[ends[nonempty] - 1].max()) + 1


# ----------------------------------------------------------------------------- collections


def shards_from_collection(X, y, n_partitions: int | None = None,
                           errors_as_values: bool = False) -> list:  # fmt: skip
    """Shards of data held as Dask collections: one `dask.delayed` per shard that computes its
    `ShardData` where it runs (on a worker, with ``client.compute``), from consecutive chunks.

    Parameters
    ----------
    X : dask.array.Array, shape (n_rows, n_features), or dask.dataframe.DataFrame
        Chunked by rows (an array's column chunks are joined first). An array's chunks are
        scipy.sparse matrices (any format), pydata ``sparse`` arrays or dense arrays; a
        dataframe's partitions are pandas frames of numbers (sparse columns are kept sparse).
    y : dask.array.Array or dask.dataframe.Series, shape (n_rows,)
        Labels, chunked as X's rows (same number of chunks, same lengths).
    n_partitions : int, optional
        Shards wanted: consecutive chunks are grouped into at most this many shards of about
        equal rows (equal chunk counts when chunk lengths are unknown). Default: one shard a
        chunk.
    errors_as_values : bool
        Whether a shard whose chunks are refused computes to a ``_partition.Failed`` holding
        the error (which ``linsvm``'s own workers raise when they hold the shard) instead of
        raising it where it runs.

    Returns
    -------
    list of dask.delayed.Delayed, in row order, each computing a `ShardData` (labels of the
    chunks' own type). ``client.compute(shards)`` gives futures of the shards' data on the workers
    (the data goes from wherever the collections are to the workers, not through the client);
    a chunk of the wrong length or shape raises `InvalidInputError` there.
    """
    import dask

    x_chunks, x_rows = _row_chunks(X, "X")
    y_chunks, y_rows = _row_chunks(y, "y")
    known = not any(np.isnan(x_rows)) and not any(np.isnan(y_rows))
    if known and sum(x_rows) != sum(y_rows):  # (no chunking makes them alike)
        raise InvalidInputError(f"X has {int(sum(x_rows))} rows but y has {int(sum(y_rows))} "
                                "labels")  # fmt: skip
    if len(x_chunks) != len(y_chunks):
        raise InvalidInputError(f"X has {len(x_chunks)} row chunks and y {len(y_chunks)}; "
                                "chunk them alike")
    if not any(np.isnan(x_rows)) and not any(np.isnan(y_rows)) and x_rows != y_rows:
        raise InvalidInputError("X and y are chunked differently along the rows")
    n_chunks = len(x_chunks)
    if n_partitions is None:
        n_partitions = n_chunks
    if not is_integer(n_partitions) or n_partitions < 1:
        raise InvalidInputError(f"n_partitions must be a positive integer, got {n_partitions!r}")
    rows = x_rows if not any(np.isnan(x_rows)) else y_rows
    weights = [1.0] * n_chunks if any(np.isnan(rows)) else [float(r) for r in rows]
    groups = _group(weights, min(int(n_partitions), n_chunks))
    build = dask.delayed(_shard_or_error if errors_as_values else _shard_from_chunks, pure=True)
    known = not any(np.isnan(rows))
    starts = np.concatenate([[0], np.cumsum(rows)]) if known else None
    return [build(x_chunks[a:b], y_chunks[a:b], int(starts[a]) if known else None)
            for a, b in groups]  # fmt: skip


def _row_chunks(collection, what: str):
    """(list of one Delayed per row chunk, list of chunk lengths: NaN where unknown)."""
    import dask.array as da

    if isinstance(collection, da.Array):
        if collection.ndim != (2 if what == "X" else 1):
            raise InvalidInputError("X must be a 2-D dask array" if what == "X"
                                    else "y must be a 1-D dask array or series")
        if what == "X" and collection.numblocks[1] != 1:
            collection = collection.rechunk({1: -1})
        delayed = collection.to_delayed()
        chunks = list(delayed[:, 0] if collection.ndim == 2 else delayed)
        return chunks, [float(r) for r in collection.chunks[0]]
    to_delayed = getattr(collection, "to_delayed", None)
    if to_delayed is None or not hasattr(collection, "npartitions"):
        raise InvalidInputError(f"{what} must be a dask array or dataframe, got "
                                f"{type(collection).__name__}")
    return list(to_delayed()), [float("nan")] * collection.npartitions


def _group(weights: list[float], n_groups: int) -> list[tuple[int, int]]:
    """`n_groups` consecutive ranges of items (n_groups <= items), about equal in weight, none
    empty: each cut at the item boundary nearest its share of the total."""
    cum = np.cumsum([0.0, *weights])
    cuts = [0]
    for k in range(1, n_groups):
        cut = int(np.argmin(np.abs(cum - k * cum[-1] / n_groups)))
        cuts.append(min(max(cut, cuts[-1] + 1), len(weights) - (n_groups - k)))
    cuts.append(len(weights))
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _shard_from_chunks(x_chunks: list, y_chunks: list, first_row: int | None) -> ShardData:
    """One shard's ShardData from its chunks (runs where the chunks are), its values and
    labels checked here, where an error can name the row of the whole data (``first_row``:
    the shard's first, None where the chunks' sizes are not known)."""
    xs = [_chunk_csr(c) for c in x_chunks]
    ys = [_chunk_labels(c) for c in y_chunks]
    for k, (xc, yc) in enumerate(zip(xs, ys, strict=True)):
        if xc.shape[0] != yc.shape[0]:
            raise InvalidInputError(f"a chunk of X has {xc.shape[0]} rows and its chunk of y "
                                    f"{yc.shape[0]} labels (chunk {k} of the shard)")
    X = xs[0] if len(xs) == 1 else _stack(xs)
    y = ys[0] if len(ys) == 1 else np.concatenate(ys)
    try:
        X = as_csr(X, n_jobs=1, trainable=True, rows_from=first_row or 0)
        y = check_labels(y, X.shape[0], rows_from=first_row or 0)
    except InvalidInputError as exc:
        if first_row is None:
            raise InvalidInputError(
                f"{exc}; the row counted within a shard whose place in the data is unknown "
                "(compute the chunks' sizes for the row in the data)") from None
        raise
    seen = _columns_needed(X.indices, X.indptr)
    return ShardData(X, y, _first_appearance(y), max(seen, X.shape[1]), X.shape[0])


def _shard_or_error(x_chunks: list, y_chunks: list, first_row: int | None):
    """``_shard_from_chunks``, its error (of the data, not of the machine) returned as a
    ``_partition.Failed``: raised, the worker would also log it with a traceback on its
    console; the client raises it in one line when the shard is held."""
    from ._partition import Failed

    try:
        return _shard_from_chunks(x_chunks, y_chunks, first_row)
    except (InvalidInputError, DataFormatError) as exc:
        return Failed(exc)


def _chunk_csr(chunk) -> sp.csr_matrix:
    """A chunk of X as canonical CSR with float32/float64 values."""
    if hasattr(chunk, "to_scipy_sparse"):  # (pydata sparse: Dask's own sparse chunks)
        chunk = chunk.to_scipy_sparse()
    if hasattr(chunk, "sparse") and hasattr(chunk, "columns"):  # pandas with sparse columns
        try:
            chunk = chunk.sparse.to_coo()
        except (AttributeError, TypeError, ValueError):
            chunk = chunk.to_numpy()
    elif hasattr(chunk, "to_numpy"):
        chunk = chunk.to_numpy()
    # (complex and non-numeric values refused; NaN and the values' size checked per shard)
    return as_csr(chunk, check_finite=False, n_jobs=1)


def _chunk_labels(chunk) -> np.ndarray:
    """A chunk of y as a 1-D array of its own type (as labels held whole keep theirs: booleans
    stay booleans, integers beyond 2^53 stay apart)."""
    y = np.asarray(chunk.to_numpy() if hasattr(chunk, "to_numpy") else chunk)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise InvalidInputError(f"y must be 1-D, got a chunk of shape {y.shape}")
    return y
