"""A binary cache of LIBSVM data: converted once from the text, read back by memory mapping.

`write_cache` parses LIBSVM text (plain, .gz, .bz2, .xz) with the streaming reader of
`linsvm.io.libsvm` and writes its rows as they come, block after block, in bounded memory
(about 1.3 x `block_bytes` of parsed rows plus the reader's buffers, whatever the file's
size). `open_cache` maps the file and hands out one block as a CSR matrix over the mapped bytes
(no copy), a range of blocks or the whole data as one CSR (copied, in threads). `read_libsvm`
recognises a cache by its first bytes, whatever its name, so every command and estimator that
reads a data file reads a cache too.
Loading never runs code: the arrays are read with np.frombuffer from the mapping.

The format, version 1
---------------------
All integers are little-endian, of the width given. Offsets are from the start of the file.

Header, 128 bytes at offset 0::

    0    16s  magic b"\\x89linsvm cache\\r\\n\\x1a"  (\\x89 is not text; \\r\\n and \\x1a catch
              line-ending translation and truncated transfers, as in PNG)
    16   u32  format version (1). The magic and this field never move in later versions.
    20   u32  header size (128)
    24   4s   dtype of the values, NumPy's text of it padded with NULs: b"<f4\\0" or b"<f8\\0"
    28   4s   dtype of indptr and indices: b"<i4\\0" (when n_features and every block's nnz
              fit in int32) or b"<i8\\0"
    32   4s   dtype of the labels: b"<f8\\0"
    36   u32  flags: bit 0 set when the text's indices were 0-based (the columns stored are
              0-based either way)
    40   i64  n_rows
    48   i64  n_features: the largest column + 1 over the whole file (0 without non-zeros)
    56   i64  nnz
    64   i64  n_blocks
    72   i64  offset of the block table
    80   i64  size of the whole file in bytes
    88   i64  line of the text where the largest index first occurs (0 without non-zeros)
    96   u32  CRC-32 of the block table
    100  u32  alignment of blocks and of the arrays within them (64)
    104  20s  reserved, zero
    124  u32  CRC-32 (zlib.crc32) of bytes 0-123 of the header

Blocks, from offset 128, one after another, each starting at a multiple of 64 and holding a
run of consecutive rows (at least one). Within a block at offset `o`, with `r` rows, `z`
non-zeros, index size `i` and value size `v` bytes, `align(n)` rounding n up to a multiple
of 64::

    o                                   y        r labels (float64)
    o + align(8r)                       indptr   r + 1 (index dtype), from 0 to z
    o + align(align(8r) + i(r+1))       indices  z columns, 0-based, ascending within a row
    ... + align(... + i z)              data     z values

with zero bytes in the gaps. The block's length runs from `o` to the end of its data (so an
array starts on a 64-byte boundary and can be mapped without a copy). indptr has the dtype of
the indices: SciPy and linsvm's kernels take one index dtype for both, and would copy a mixed
pair.

Block table, at the offset in the header (a multiple of 64), one 40-byte entry per block::

    i64 offset, i64 n_rows, i64 nnz, i64 length, u32 CRC-32 of the block's `length` bytes,
    u32 reserved (zero)

and nothing after it: the file ends with the table (the header's file size says where).

The header is written last, once the whole text has been read (n_features is known only then),
and the file is renamed over the target only when complete: a cache is either whole or absent.
A truncated, foreign or newer file, or a damaged header or table, is refused
(`CacheFormatError`) when it is opened; a block's checksum and structure (indptr from 0 to nnz
without decreasing, columns ascending within a row and below n_features, labels and values
finite) are checked before its rows are first served, and again when they are served after the
block was released (each outer iteration of block minimisation). Rows read in pieces
(`Cache.read_rows`) have each piece's structure checked as it is read, and a block's checksum
again whenever the file's size or change times moved: a file changed while it is in use is
refused at the next read of a changed block, one truncated at the next read of any block (not
a SIGBUS).
The checksums catch damage, not forgery; the structure check is what keeps a crafted file
from making a kernel read outside its arrays.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import struct
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._progress import ProgressTimer
from ..data import all_finite, is_integer
from ..errors import DataFormatError, InvalidInputError
from ..parallel import effective_n_jobs
from . import libsvm as _libsvm
from ._atomic import TempFile, temporary_folder

__all__ = ["MAGIC", "Cache", "CacheFormatError", "CacheSummary", "open_cache", "write_cache"]

MAGIC = b"\x89linsvm cache\r\n\x1a"
VERSION = 1
HEADER_SIZE = 128
ALIGN = 64

# magic, version, header size, 3 dtypes, flags, n_rows, n_features, nnz, n_blocks,
# table offset, file size, max index line, table CRC, alignment, reserved; then the CRC.
_HEADER = struct.Struct("<16sII4s4s4sI7qII20s")
_HEADER_CRC = struct.Struct("<I")
_ENTRY = np.dtype([("offset", "<i8"), ("n_rows", "<i8"), ("nnz", "<i8"), ("length", "<i8"),
                   ("crc", "<u4"), ("reserved", "<u4")])
assert _HEADER.size + _HEADER_CRC.size == HEADER_SIZE and _ENTRY.itemsize == 40

_FLAG_ZERO_BASED = 1
_VALUE_DTYPES = {b"<f4\0": np.dtype("<f4"), b"<f8\0": np.dtype("<f8")}
_INDEX_DTYPES = {b"<i4\0": np.dtype("<i4"), b"<i8\0": np.dtype("<i8")}
_LABEL_DTYPES = {b"<f8\0": np.dtype("<f8")}
_INT32_MAX = np.iinfo(np.int32).max


class CacheFormatError(DataFormatError):
    """A cache file is truncated, corrupt, of another program or of a newer format version.

    The message is ``"<path>: <what>"`` (there is no line to name); ``line`` is 0.
    """

    def __init__(self, path: str, what: str) -> None:
        self.path = path
        self.line = 0
        self.what = what
        Exception.__init__(self, f"{path}: {what}")

    def __reduce__(self):
        return type(self), (self.path, self.what)


@dataclass(frozen=True)
class CacheSummary:
    """What `write_cache` wrote."""

    n_rows: int
    n_features: int
    nnz: int
    n_blocks: int
    text_bytes: int  # of text parsed (after decompression)
    cache_bytes: int
    seconds: float


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _layout(n_rows: int, nnz: int, index_size: int, value_size: int) -> tuple[int, ...]:
    """Offsets of y, indptr, indices and data within a block, and the block's length."""
    indptr = _align(8 * n_rows)
    indices = _align(indptr + index_size * (n_rows + 1))
    data = _align(indices + index_size * nnz)
    return 0, indptr, indices, data, data + value_size * nnz


def _dtype_field(dtype: np.dtype) -> bytes:
    return dtype.str.encode("ascii").ljust(4, b"\0")


# ----------------------------------------------------------------------------- writing


# bytes of arrays a block of a cache holds, by default
DEFAULT_BLOCK_BYTES = 64 << 20


def write_cache(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    dtype=np.float64,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    n_jobs: int | None = -1,
    zero_based: bool | str = False,
    check_width: bool = False,
    progress: ProgressTimer | None = None,
) -> CacheSummary:
    """Convert the LIBSVM text file `source` into the cache file `target`, in a stream.

    The text is parsed as `read_libsvm` parses it (in blocks, in ``n_jobs`` threads; qid is
    ignored) and the rows are written in blocks of about `block_bytes` bytes of arrays, so
    memory does not grow with the file: a block's rows are held as the parser gives them (16
    bytes a non-zero, against 12 in a float64 cache with int32 indices), so about 1.3 x
    `block_bytes`, plus the reader's buffers (about 40 MB). The file is written to a
    temporary file beside `target` and renamed over it at the end; on any error `target` is
    left as it was and the temporary file is removed.

    Parameters
    ----------
    source : str or os.PathLike
        LIBSVM text; ``.gz``, ``.bz2`` and ``.xz`` files are decompressed as they are read.
    target : str or os.PathLike
    dtype : float32 or float64
        dtype of the stored values (labels are float64).
    block_bytes : int
        Target size of a block's arrays (a block holds at least one row).
    n_jobs : int or None
        Threads that parse, as in `read_libsvm`.
    zero_based : bool or "auto"
        The text's indices, as in `read_libsvm`; the cache stores 0-based columns.
    check_width : bool
        As in `read_libsvm`: refuse an index whose model could not fit in memory (data
        converted to be trained on).
    progress : linsvm._progress.ProgressTimer, optional
        A line on stderr (rows and text converted so far) whenever the timer says one is due.

    Returns
    -------
    CacheSummary

    Raises
    ------
    DataFormatError
        The text is malformed (``"<path>:<line>: <what>"``, as `read_libsvm`).
    InvalidInputError (a ValueError)
        Bad options.
    """
    options = _libsvm._Options.check(dtype, None, zero_based, False, check_width)
    if not is_integer(block_bytes) or block_bytes <= 0:
        raise InvalidInputError(f"block_bytes must be a positive int, got {block_bytes!r}")
    n_threads = effective_n_jobs(n_jobs)
    name = os.fsdecode(os.fspath(source))
    start = time.perf_counter()
    with open(source, "rb") as raw:
        if _libsvm.starts_as_cache(raw, name):
            raise CacheFormatError(name, "already a linsvm cache, not LIBSVM text")
        writer = _Writer(os.fspath(target), options, int(block_bytes))
        try:
            pieces = _libsvm._text_pieces(raw, name, options, n_threads)
            with contextlib.closing(pieces) as parsed:
                for block_pieces, _ in parsed:
                    for piece in block_pieces:
                        writer.add(piece)
                    if progress is not None:
                        progress.tick(lambda: f"{writer.n_rows + writer.part_rows} rows, "
                                              f"{writer.text_bytes / 2**20:.1f} MB of text "
                                              "converted")
            return writer.finish(time.perf_counter() - start)
        except BaseException:
            writer.discard()
            raise


class _Writer:
    """Rows appended piece after piece, written in blocks to a temporary file.

    A block is written once its rows reach `block_bytes`; rows are taken from the parsed
    pieces without copying them first (a piece may spread over several blocks). Until the
    end it is not known whether the index dtype must be int64 or, with zero_based="auto",
    whether the text is 0-based: blocks are written for int32 and 1-based text, and in the
    rare file that proves otherwise the blocks already written are rewritten (once for each).
    """

    def __init__(self, target: str, options, block_bytes: int) -> None:
        self.target = target
        self.options = options
        self.block_bytes = block_bytes
        self.value_dtype = np.dtype(options.dtype).newbyteorder("<")
        self.index_dtype = np.dtype("<i4")
        # Subtracted from the indices as written; "auto" starts as 1-based.
        self.shift = 0 if options.zero_based is True else 1
        self.min_index = np.iinfo(np.int64).max
        self.max_index = -1
        self.max_index_line = 0
        self.n_rows = 0
        self.nnz = 0
        self.text_bytes = 0
        self.table: list[tuple[int, ...]] = []  # rows of the block table
        self.parts: list[tuple[_libsvm._Piece, int, int]] = []  # (piece, first row, end row)
        self.part_rows = 0
        self.part_nnz = 0
        self.tmp: TempFile | None = None
        self.file = None
        self.file, self.tmp = self._create()
        self.file.write(bytes(HEADER_SIZE))  # the header is written last
        self.pos = HEADER_SIZE

    def _create(self):
        # its errors (a full disk, the file size limit) name the target, not the temporary
        tmp = TempFile(self.target, "w+b")
        return tmp.file, tmp

    # -- rows in

    def add(self, piece) -> None:
        self.text_bytes += piece.n_bytes
        if piece.nnz:
            if piece.max_index > self.max_index:
                self.max_index = piece.max_index
                self.max_index_line = piece.first_line + piece.max_index_line
            self.min_index = min(self.min_index, piece.min_index)
        if piece.n_rows == 0:
            return
        isz, vsz = self.index_dtype.itemsize, self.value_dtype.itemsize
        indptr = piece.indptr[: piece.n_rows + 1]
        # bytes of the rows 0..r of the piece, the way a block stores them
        cost = np.cumsum(8 + isz + np.diff(indptr) * (isz + vsz))
        row = 0
        while row < piece.n_rows:
            used = self._part_bytes()
            base = cost[row - 1] if row else 0
            end = int(np.searchsorted(cost, base + self.block_bytes - used, side="right"))
            if end <= row:
                if self.parts:
                    self._flush()
                    continue
                end = row + 1  # a row larger than a block is a block of its own
            end = min(end, piece.n_rows)
            self.parts.append((piece, row, end))
            self.part_rows += end - row
            self.part_nnz += int(indptr[end] - indptr[row])
            row = end
            if self._part_bytes() >= self.block_bytes:
                self._flush()

    def _part_bytes(self) -> int:
        isz = self.index_dtype.itemsize
        return (8 + isz) * self.part_rows + (isz + self.value_dtype.itemsize) * self.part_nnz

    # -- blocks out

    def _flush(self) -> None:
        """Write the pending rows as one block."""
        self._settle(self.part_nnz)
        parts, n_rows, nnz = self.parts, self.part_rows, self.part_nnz
        self.parts, self.part_rows, self.part_nnz = [], 0, 0
        idx, shift = self.index_dtype, self.shift

        def labels():
            for p, a, b in parts:
                yield p.labels[a:b].astype("<f8", copy=False)

        def indptr():
            yield np.zeros(1, dtype=idx)
            offset = 0
            for p, a, b in parts:
                start = p.indptr[a]
                yield (p.indptr[a + 1 : b + 1] - (start - offset)).astype(idx)
                offset += int(p.indptr[b] - start)

        def indices():
            for p, a, b in parts:
                column = p.indices[p.indptr[a] : p.indptr[b]] - shift
                yield column.astype(idx)

        def values():
            for p, a, b in parts:
                yield p.data[p.indptr[a] : p.indptr[b]].astype(self.value_dtype)

        self._write_block(n_rows, nnz, labels(), indptr(), indices(), values())
        self.n_rows += n_rows
        self.nnz += nnz

    def _settle(self, block_nnz: int) -> None:
        """Before a block is written: rewrite the blocks so far if what has been read shows
        that their index dtype or 1-based guess was wrong."""
        zero = self.shift == 1 and self.options.zero_based == "auto" and self.min_index == 0
        shift = 0 if zero else self.shift
        n_features = self.max_index - shift + 1 if self.max_index >= 0 else 0
        was_wide = self.index_dtype == np.dtype("<i8")
        wide = was_wide or max(n_features, block_nnz) > _INT32_MAX
        if wide == was_wide and not zero:
            return
        index_dtype = np.dtype("<i8") if wide else self.index_dtype
        if self.table:
            self._rewrite(index_dtype, shift)
        else:
            self.index_dtype, self.shift = index_dtype, shift

    def _rewrite(self, index_dtype: np.dtype, shift: int) -> None:
        """Copy the blocks written so far to a new temporary file with `index_dtype` and the
        indices shifted by `shift` instead of `self.shift`; one block in memory at a time."""
        old_file, old_tmp, old_table = self.file, self.tmp, self.table
        old_idx, add = self.index_dtype, self.shift - shift
        self.file, self.tmp = self._create()
        self.file.write(bytes(HEADER_SIZE))
        self.pos, self.table = HEADER_SIZE, []
        self.index_dtype, self.shift = index_dtype, shift
        try:
            for offset, n_rows, nnz, length, _, _ in old_table:
                old_file.seek(offset)
                buf = old_file.read(length)
                y, indptr, indices, data = _block_arrays(buf, 0, n_rows, nnz, old_idx,
                                                         self.value_dtype)
                self._write_block(n_rows, nnz, [y], [indptr.astype(index_dtype)],
                                  [indices.astype(index_dtype) + add], [data])
                del buf, y, indptr, indices, data
        finally:
            old_tmp.discard()

    def _write_block(self, n_rows: int, nnz: int, labels, indptr, indices, values) -> None:
        """Write one block at the next aligned offset, from iterables of array chunks."""
        isz, vsz = self.index_dtype.itemsize, self.value_dtype.itemsize
        offsets = _layout(n_rows, nnz, isz, vsz)
        start = _align(self.pos)
        f = self.file
        f.write(bytes(start - self.pos))
        crc = 0
        written = 0
        for at, chunks in zip(offsets[:4], (labels, indptr, indices, values), strict=True):
            gap = bytes(at - written)
            f.write(gap)
            crc = zlib.crc32(gap, crc)
            written = at
            for chunk in chunks:
                chunk = np.ascontiguousarray(chunk)
                f.write(chunk)
                crc = zlib.crc32(chunk, crc)
                written += chunk.nbytes
        if written != offsets[4]:  # the chunks disagree with the counts: a bug, not bad data
            raise AssertionError(f"block of {written} bytes, expected {offsets[4]}")
        self.table.append((start, n_rows, nnz, written, crc, 0))
        self.pos = start + written

    # -- the end

    def finish(self, seconds: float) -> CacheSummary:
        if self.parts:
            self._flush()
        self._settle(0)
        zero_based = self.shift == 0
        n_features = self.max_index + (1 if zero_based else 0) if self.max_index >= 0 else 0
        table = np.array(self.table, dtype=_ENTRY) if self.table else np.zeros(0, _ENTRY)
        table_offset = _align(self.pos)
        table_bytes = table.tobytes()
        f = self.file
        f.write(bytes(table_offset - self.pos))
        f.write(table_bytes)
        file_size = table_offset + len(table_bytes)
        header = _HEADER.pack(
            MAGIC, VERSION, HEADER_SIZE, _dtype_field(self.value_dtype),
            _dtype_field(self.index_dtype), _dtype_field(np.dtype("<f8")),
            _FLAG_ZERO_BASED if zero_based else 0, self.n_rows, n_features, self.nnz,
            len(self.table), table_offset, file_size, self.max_index_line,
            zlib.crc32(table_bytes), ALIGN, bytes(20),
        )
        f.seek(0)
        f.write(header + _HEADER_CRC.pack(zlib.crc32(header)))
        self.tmp.publish()
        self.file = self.tmp = None
        return CacheSummary(self.n_rows, n_features, self.nnz, len(self.table),
                            self.text_bytes, file_size, seconds)

    def discard(self) -> None:
        """Remove the temporary file (after an error)."""
        if self.tmp is not None:
            self.tmp.discard()
        self.file = self.tmp = None


def _block_arrays(buf, offset: int, n_rows: int, nnz: int, index_dtype, value_dtype):
    """y, indptr, indices and data of the block at `offset` of `buf`, as views (no copy)."""
    at = _layout(n_rows, nnz, index_dtype.itemsize, value_dtype.itemsize)
    y = np.frombuffer(buf, dtype="<f8", count=n_rows, offset=offset + at[0])
    indptr = np.frombuffer(buf, dtype=index_dtype, count=n_rows + 1, offset=offset + at[1])
    indices = np.frombuffer(buf, dtype=index_dtype, count=nnz, offset=offset + at[2])
    data = np.frombuffer(buf, dtype=value_dtype, count=nnz, offset=offset + at[3])
    return y, indptr, indices, data


# ----------------------------------------------------------------------------- reading


@njit(cache=True, nogil=True)
def _first_bad_row(indptr: np.ndarray, indices: np.ndarray, n_features: int) -> int:
    """-1 if indptr runs from 0 to len(indices) without decreasing and each row's indices
    ascend strictly within [0, n_features); else the first row (or -2 for indptr's ends)
    that does not. A cache whose checksums match but whose arrays break this (a crafted
    file, or one changed while in use) would make kernels read outside their arrays. One
    sweep, no temporaries: it runs on every piece of rows a training pass reads (pypi-recent's
    8.5M non-zeros: 15 ms, as NumPy's diff-and-compare took, without its 5 bytes a non-zero
    of temporaries, each one mapped and faulted in afresh under block minimisation's malloc
    settings)."""
    nnz = indices.shape[0]
    n_rows = indptr.shape[0] - 1
    if n_rows < 0 or indptr[0] != 0 or indptr[n_rows] != nnz:
        return -2
    for i in range(n_rows):
        start, stop = indptr[i], indptr[i + 1]
        if stop < start or stop > nnz:
            return i
        previous = -1
        for k in range(start, stop):
            j = indices[k]
            if j <= previous or j >= n_features:
                return i
            previous = j
    return -1


def _first_nonfinite_row(y: np.ndarray, indptr: np.ndarray, data: np.ndarray) -> int:
    """The first row (0-based in its block) whose label or a value is NaN or infinite, or -1.
    indptr already checked (``_first_bad_row``)."""
    if all_finite(y, 1) and all_finite(data, 1):
        return -1
    rows = np.flatnonzero(~np.isfinite(y))
    first = int(rows[0]) if rows.size else y.shape[0]
    values = np.flatnonzero(~np.isfinite(data))
    if values.size:
        first = min(first, int(np.searchsorted(indptr, values[0], side="right")) - 1)
    return first


class Cache:
    """An open cache file (see the module's docstring for the format).

    Attributes
    ----------
    path : str
    n_rows, n_features, nnz, n_blocks : int
    dtype : float32 or float64 dtype of the values
    index_dtype : int32 or int64 dtype of the blocks' indptr and indices
    block_rows : int64 array, shape (n_blocks,)
        Rows of each block; block k holds rows ``row_starts[k] : row_starts[k + 1]``.
    block_nnz : int64 array, shape (n_blocks,)
    row_starts : int64 array, shape (n_blocks + 1,)
    zero_based : bool
        Whether the text the cache was made from had 0-based indices.

    Methods: `block(k)` (one block over the mapping), `blocks(k0, k1)` and `read()` (copies),
    `labels()`, `prefetch(k)` and `release(k)` (advice to the OS about a block's pages).
    Use it as a context manager, or call `close`; matrices returned by `block` stay valid
    after `close` (the mapping lasts as long as they do).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = name = os.fsdecode(os.fspath(path))
        self._map = None
        self._fd = -1
        with open(path, "rb") as f:
            status = os.fstat(f.fileno())
            if not stat.S_ISREG(status.st_mode):
                # (a pipe's st_size is 0: it was called an empty file)
                raise CacheFormatError(name, "a linsvm cache is read from a regular file (it "
                                             "is memory-mapped): copy it to one first")  # fmt: skip
            size = status.st_size
            header = _check_header(name, f.read(HEADER_SIZE), size)
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._fd = os.dup(f.fileno())  # for read_rows
        try:
            self._read_table(header)
        except BaseException:
            self.close()
            raise

    def _read_table(self, header: tuple) -> None:
        name = self.path
        (_, _, _, value_field, index_field, _, flags, n_rows, n_features, nnz, n_blocks,
         table_offset, self._file_size, max_index_line, table_crc, _, _) = header
        self.dtype = _VALUE_DTYPES[value_field]
        self.index_dtype = _INDEX_DTYPES[index_field]
        self.n_rows, self.n_features, self.nnz, self.n_blocks = n_rows, n_features, nnz, n_blocks
        self.zero_based = bool(flags & _FLAG_ZERO_BASED)
        self.max_index_line = max_index_line
        table = self._map[table_offset : table_offset + n_blocks * _ENTRY.itemsize]
        if zlib.crc32(table) != table_crc:
            raise CacheFormatError(name, "corrupt block table (checksum mismatch)")
        self._table = np.frombuffer(table, dtype=_ENTRY).copy()
        self.block_rows = self._table["n_rows"].astype(np.int64)
        self.block_nnz = self._table["nnz"].astype(np.int64)
        self.row_starts = np.concatenate([[0], np.cumsum(self.block_rows)]).astype(np.int64)
        _check_table(name, self._table, self, table_offset)
        self._verified = np.zeros(n_blocks, dtype=bool)
        # read_rows' checks: the blocks whose checksum matched since the file last changed,
        # and the file's stamp then (``_stamp``)
        self._read_checked = np.zeros(n_blocks, dtype=bool)
        self._read_stamp = _stamp(os.fstat(self._fd))

    @property
    def checksum(self) -> int:
        """CRC-32 of the block table, which holds every block's own checksum: what identifies
        the data (e.g. for a checkpoint of a run over it)."""
        return zlib.crc32(np.ascontiguousarray(self._table).view(np.uint8))

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<linsvm cache {self.path!r}: {self.n_rows} rows, {self.n_features} features, "
                f"{self.nnz} non-zeros, {self.n_blocks} blocks>")

    def close(self) -> None:
        """Release the mapping (at once if no block's arrays are alive, else with them)."""
        if self._map is not None:
            with contextlib.suppress(BufferError):
                self._map.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _check_index(self, k: int) -> None:
        """Refuse a block number out of range (a negative one would index from the end)."""
        if not 0 <= k < self.n_blocks:
            raise IndexError(f"block {k} out of range (the cache has {self.n_blocks} blocks)")

    def _arrays(self, k: int, verify: bool):
        self._check_index(k)
        offset, n_rows, nnz, length, crc, _ = self._table[k].tolist()
        size = self._map.size()  # the file's size now: reading a page past its end is SIGBUS
        if size < self._file_size:
            raise CacheFormatError(self.path, f"truncated to {size} of {self._file_size} "
                                              "bytes while in use")
        if verify and not self._verified[k]:
            if zlib.crc32(memoryview(self._map)[offset : offset + length]) != crc:
                raise CacheFormatError(self.path, f"block {k} is corrupt (checksum mismatch)")
        arrays = _block_arrays(self._map, offset, n_rows, nnz, self.index_dtype, self.dtype)
        if verify and not self._verified[k]:
            bad = _first_bad_row(arrays[1], arrays[2], self.n_features)
            if bad != -1:
                where = "indptr" if bad == -2 else f"row {self.row_starts[k] + bad}"
                raise CacheFormatError(self.path, f"block {k} is invalid ({where})")
            # no text gives a NaN or infinite label or value (the text reader refuses them):
            # a block holding one was not written by write_cache
            bad = _first_nonfinite_row(arrays[0], arrays[1], arrays[3])
            if bad != -1:
                raise CacheFormatError(self.path, f"block {k} is invalid (row "
                                                  f"{self.row_starts[k] + bad}: NaN or infinity)")
            self._verified[k] = True
        return arrays

    def block(self, k: int, verify: bool = True) -> tuple[sp.csr_matrix, np.ndarray]:
        """Block `k` over the mapped file, without a copy (the arrays are read-only).

        With `verify` its checksum and structure are checked first, which reads the whole
        block: on its first read, and again after each `release` of it. Every read checks
        that the file was not truncated meanwhile.

        Returns
        -------
        X : csr_matrix, shape (block_rows[k], n_features), index dtype `index_dtype`
        y : float64 array, shape (block_rows[k],)
        """
        y, indptr, indices, data = self._arrays(k, verify)
        X = sp.csr_matrix((data, indices, indptr), shape=(len(y), self.n_features), copy=False)
        X.has_canonical_format = True  # checked when the cache was written (and by verify)
        return X, y

    def row_pointer(self, k: int) -> np.ndarray:
        """Block ``k``'s row offsets (int64, shape (block_rows[k] + 1,)) for planning how to
        cut it: from the mapping, without the checksum (that would read the whole block), but
        checked to run from 0 to the block's non-zeros without decreasing (a damaged one is a
        one-line error here, not a fault in what is planned from it)."""
        indptr = np.asarray(self._arrays(k, verify=False)[1], dtype=np.int64)
        if indptr[0] != 0 or indptr[-1] != int(self.block_nnz[k]) or (
                np.diff(indptr) < 0).any():  # fmt: skip
            self.check_block(k)  # (damage, the likelier cause, said as such)
            raise CacheFormatError(self.path, f"block {k} is invalid (indptr)")
        return indptr

    def labels(self) -> np.ndarray:
        """All the labels (float64, shape (n_rows,)), copied from every block without reading
        their other arrays (so without checking checksums: `block` checks them when the
        block's rows are used). For the classes of a problem before its blocks are read."""
        y = np.empty(self.n_rows, dtype=np.float64)
        for k in range(self.n_blocks):
            offset, n_rows = int(self._table["offset"][k]), int(self._table["n_rows"][k])
            y[self.row_starts[k] : self.row_starts[k + 1]] = np.frombuffer(
                self._map, dtype="<f8", count=n_rows, offset=offset)
            if hasattr(self._map, "madvise") and n_rows:
                # the mapped pages handed back once copied (else the labels count twice)
                start = offset - offset % mmap.PAGESIZE
                self._map.madvise(mmap.MADV_DONTNEED, start, offset + 8 * n_rows - start)
        return y

    def read_rows(self, k: int, r0: int, r1: int, y: np.ndarray, indptr: np.ndarray,
                  indices: np.ndarray, data: np.ndarray, pos: int) -> int:
        """Rows ``r0:r1`` of block ``k`` read from the file into the given arrays (no mapping:
        one read per array, the OS copying from its page cache). ``y[:r1 - r0]`` gets the
        labels, ``indptr[:r1 - r0 + 1]`` the row offsets from ``pos``, and the non-zeros go to
        ``indices``/``data`` from position ``pos``. The arrays must have the cache's dtypes
        (``index_dtype`` for indptr and indices). Returns the position after the last.

        Checks: the rows read, every time (structure, finite values: what keeps the kernels
        inside their arrays, whatever happened to the file); the block's checksum before its
        first rows are served (its bytes read in chunks, not mapped: nothing of it stays
        resident), and again whenever the file's stamp (size, times of change, inode) moved
        since: a change made to the file through the system while it is in use is refused at
        the next read of the changed block, within a pass over the data, without reading the
        file twice a pass. Truncation is refused at the next read of any block.
        """
        self._check_index(k)
        status = os.fstat(self._fd)
        if status.st_size < self._file_size:
            raise CacheFormatError(self.path, f"truncated to {status.st_size} of "
                                              f"{self._file_size} bytes while in use")
        if _stamp(status) != self._read_stamp:
            self._read_checked[:] = False
            self._read_stamp = _stamp(status)
        checked_before = bool(self._read_checked[k])
        if not checked_before:
            self.check_block(k)
            self._read_checked[k] = True
        offset, n_rows, nnz, _, _, _ = self._table[k].tolist()
        at = _layout(n_rows, nnz, self.index_dtype.itemsize, self.dtype.itemsize)
        isz, vsz = self.index_dtype.itemsize, self.dtype.itemsize
        n = r1 - r0
        fd = self._fd
        try:
            _pread_into(fd, y[:n], offset + at[0] + 8 * r0)
            _pread_into(fd, indptr[: n + 1], offset + at[1] + isz * r0)
            p0, p1 = int(indptr[0]), int(indptr[n])
            # (a block's first row starts at 0 and its last ends at nnz: else rows would take
            # non-zeros of no row, or leave some of the caller's arrays unwritten)
            if (not 0 <= p0 <= p1 <= nnz or (r0 == 0 and p0 != 0) or (r1 == n_rows and p1 != nnz)
                    or pos + p1 - p0 > min(indices.size, data.size)):  # fmt: skip
                raise CacheFormatError(self.path, f"block {k} is invalid (indptr)")
            indptr[: n + 1] -= p0
            _pread_into(fd, indices[pos : pos + p1 - p0], offset + at[2] + isz * p0)
            _pread_into(fd, data[pos : pos + p1 - p0], offset + at[3] + vsz * p0)
        except CacheFormatError:
            raise  # (a DataFormatError, so a ValueError: said as it is, not wrapped again)
        except (OSError, ValueError) as e:  # cut short
            raise CacheFormatError(self.path, f"block {k} could not be read: {e}") from None
        piece = (indptr[: n + 1], indices[pos : pos + p1 - p0], data[pos : pos + p1 - p0])
        bad, what = _first_bad_row(piece[0], piece[1], self.n_features), ""
        if bad == -1:
            bad, what = _first_nonfinite_row(y[:n], piece[0], piece[2]), ": NaN or infinity"
        if bad != -1:
            where = "indptr" if bad == -2 else f"row {self.row_starts[k] + r0 + bad}{what}"
            if checked_before:
                # (its checksum read sound before: one that fails now says the file changed
                # since; one that still holds, a block forged with its checksum)
                try:
                    self.check_block(k)
                except CacheFormatError:
                    where += ": changed while in use"
            raise CacheFormatError(self.path, f"block {k} is invalid ({where})")
        indptr[: n + 1] += pos
        return pos + p1 - p0

    def read_block(self, k: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """Block ``k`` read from the file (``read_rows``: a copy, checked), not mapped: a file
        cut short meanwhile is an error, where a mapped page past its end ends the process
        (SIGBUS). Returns X (block_rows[k], n_features), y as ``block``."""
        self._check_index(k)
        n_rows, nnz = int(self.block_rows[k]), int(self.block_nnz[k])
        y = np.empty(n_rows, dtype=np.float64)
        indptr = np.empty(n_rows + 1, dtype=self.index_dtype)
        indices = np.empty(nnz, dtype=self.index_dtype)
        data = np.empty(nnz, dtype=self.dtype)
        self.read_rows(k, 0, n_rows, y, indptr, indices, data, 0)
        X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, self.n_features), copy=False)
        X.has_canonical_format = True  # (read_rows checked the rows' structure)
        return X, y

    def check_block(self, k: int) -> None:
        """Block ``k``'s CRC-32 compared with the table's, its bytes read a chunk at a time
        (nothing of it stays mapped); a mismatch is a ``CacheFormatError``."""
        self._check_index(k)
        offset, _, _, length, expected, _ = self._table[k].tolist()
        # (a buffer of the call's own: blocks may be checked on several threads at once)
        buffer = np.empty(min(_CHECK_CHUNK, max(length, 1)), dtype=np.uint8)
        crc = 0
        for done in range(0, length, _CHECK_CHUNK):
            chunk = buffer[: min(_CHECK_CHUNK, length - done)]
            try:
                _pread_into(self._fd, chunk, offset + done)
            except OSError as e:
                raise CacheFormatError(self.path, f"block {k} could not be read: {e}") from None
            crc = zlib.crc32(chunk, crc)
        if crc != expected:
            raise CacheFormatError(self.path, f"block {k} is corrupt (checksum mismatch)")

    def will_need(self, k: int, r0: int, r1: int, p0: int, p1: int) -> None:
        """Ask the kernel to start reading rows ``r0:r1`` of block ``k`` (non-zeros ``p0:p1``)
        from disk (returns at once; a no-op where pages are cached or the system lacks it)."""
        if not hasattr(os, "posix_fadvise"):
            return
        offset, n_rows, nnz, _, _, _ = self._table[k].tolist()
        at = _layout(n_rows, nnz, self.index_dtype.itemsize, self.dtype.itemsize)
        isz, vsz = self.index_dtype.itemsize, self.dtype.itemsize
        for start, length in ((at[0] + 8 * r0, 8 * (r1 - r0)),
                              (at[1] + isz * r0, isz * (r1 - r0 + 1)),
                              (at[2] + isz * p0, isz * (p1 - p0)),
                              (at[3] + vsz * p0, vsz * (p1 - p0))):
            os.posix_fadvise(self._fd, offset + start, length, os.POSIX_FADV_WILLNEED)

    def prefetch(self, k: int) -> None:
        """Ask the kernel to start reading block `k` from disk (returns at once)."""
        self._check_index(k)
        self._advise(k, "MADV_WILLNEED")

    def release(self, k: int) -> None:
        """Unmap block `k`'s pages from this process (they stay in the OS page cache; arrays
        of the block still alive read them again if used). Mapped pages count in the
        process's RSS until then, though the OS can reclaim them under memory pressure.
        The block's next verified read checks it again: what it reads then may have been
        changed on disk since."""
        self._check_index(k)
        self._verified[k] = False
        self._advise(k, "MADV_DONTNEED")

    def _advise(self, k: int, advice: str) -> None:
        if not hasattr(self._map, "madvise") or not hasattr(mmap, advice):
            return
        offset, _, _, length, _, _ = self._table[k].tolist()
        start = offset - offset % mmap.PAGESIZE
        self._map.madvise(getattr(mmap, advice), start, offset + length - start)

    def blocks(
        self, k0: int, k1: int, n_jobs: int | None = -1
    ) -> tuple[sp.csr_matrix, np.ndarray]:
        """Blocks k0 to k1 - 1 as one CSR matrix and label array, read from the file
        (writable).

        Index arrays are int32 when their nnz and n_features fit in int32, else int64 (as
        `read_libsvm`). Blocks are read and checked as ``read_rows`` does, in ``n_jobs``
        threads.
        """
        if not 0 <= k0 <= k1 <= self.n_blocks:
            raise IndexError(f"blocks {k0}:{k1} out of range (the cache has {self.n_blocks})")
        return self._assemble(k0, k1, self.dtype, self.n_features, effective_n_jobs(n_jobs))

    def read(self, n_jobs: int | None = -1) -> tuple[sp.csr_matrix, np.ndarray]:
        """The whole data: the arrays `read_libsvm` gives for the text the cache was made
        from (with the cache's dtype)."""
        return self.blocks(0, self.n_blocks, n_jobs)

    def _assemble(self, k0: int, k1: int, dtype, n_cols: int,
                  n_threads: int) -> tuple[sp.csr_matrix, np.ndarray]:  # fmt: skip
        rows = self.row_starts[k0 : k1 + 1] - self.row_starts[k0]
        starts = np.concatenate([[0], np.cumsum(self.block_nnz[k0:k1])]).astype(np.int64)
        n_rows, nnz = int(rows[-1]), int(starts[-1])
        index_dtype = np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64
        data = np.empty(nnz, dtype=dtype)
        indices = np.empty(nnz, dtype=index_dtype)
        indptr = np.empty(n_rows + 1, dtype=index_dtype)
        indptr[0] = 0
        y = np.empty(n_rows, dtype=np.float64)

        def copy(k: int) -> None:
            # read, not mapped (``read_block``): a cut of the file while it is read is an
            # error, not SIGBUS; straight into the result where the dtypes are the cache's
            r, s = rows[k - k0], rows[k - k0 + 1]
            a, b = starts[k - k0], starts[k - k0 + 1]
            if data.dtype == self.dtype and indices.dtype == self.index_dtype:
                block_indptr = np.empty(s - r + 1, dtype=self.index_dtype)
                self.read_rows(k, 0, s - r, y[r:s], block_indptr, indices, data, int(a))
                indptr[r + 1 : s + 1] = block_indptr[1:]
                return
            X_k, y_k = self.read_block(k)
            check_value_range(self.path, X_k.data, X_k.indptr, X_k.indices,
                              int(self.row_starts[k]), dtype, self.zero_based)  # fmt: skip
            y[r:s] = y_k
            np.add(X_k.indptr[1:], a, out=indptr[r + 1 : s + 1], casting="unsafe")
            indices[a:b] = X_k.indices
            data[a:b] = X_k.data

        n_threads = min(n_threads, k1 - k0)
        if n_threads <= 1:
            for k in range(k0, k1):
                copy(k)
        else:
            with ThreadPoolExecutor(max_workers=n_threads) as pool:
                for future in [pool.submit(copy, k) for k in range(k0, k1)]:
                    future.result()  # the first failing block in order is reported
        X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols), copy=False)
        X.has_sorted_indices = True
        return X, y


# Bytes of a block read and checksummed at a time by ``Cache.check_block``.
_CHECK_CHUNK = 1 << 18


def _stamp(status: os.stat_result) -> tuple[int, ...]:
    """What changes when a file's contents are changed through the system: its size, the
    times of its last write and of its last change of any kind (which no program can set
    back), and its inode."""
    return status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev


def _pread_into(fd: int, out: np.ndarray, offset: int) -> None:
    """Fill the contiguous array ``out`` with the file's bytes from ``offset``."""
    view = memoryview(out).cast("B")
    done = 0
    while done < view.nbytes:
        if hasattr(os, "preadv"):
            n = os.preadv(fd, [view[done:]], offset + done)
        else:  # (not every system has them: Windows has neither)
            chunk = _pread(fd, view.nbytes - done, offset + done)
            view[done : done + len(chunk)] = chunk
            n = len(chunk)
        if n <= 0:
            raise OSError(f"unexpected end of file at byte {offset + done}")
        done += n


_SEEK_LOCK = threading.Lock()


def _pread(fd: int, size: int, offset: int) -> bytes:
    """os.pread where the system has it; else a seek and a read, one thread at a time (blocks
    are read on several threads, from one descriptor)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    with _SEEK_LOCK:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


def check_value_range(
    name: str,
    data: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    first_row: int,
    dtype,
    zero_based: bool,
) -> None:
    """InvalidInputError naming the first value of these rows that ``dtype`` cannot hold: a
    float64 cache read as float32 would turn it infinite (the text reader refuses it too).

    data, indices : (nnz,) and indptr : (n_rows + 1,) from 0, of rows ``first_row`` on (0-based
    rows of the cache; features 0-based, written as in the text).
    """
    if np.dtype(dtype) != np.dtype(np.float32) or data.dtype != np.float64 or data.size == 0:
        return
    if max(-float(data.min()), float(data.max())) < _libsvm.FLOAT32_OVERFLOW:
        return
    p = int(np.flatnonzero(np.abs(data) >= _libsvm.FLOAT32_OVERFLOW)[0])
    row = first_row + int(np.searchsorted(indptr, p, side="right")) - 1
    feature = int(indices[p]) + (0 if zero_based else 1)
    raise InvalidInputError(
        f"{name}: row {row + 1}: value {float(data[p])!r} is beyond the range of float32 "
        f"(feature {feature}); read the data as float64"
    )


def _check_header(name: str, head: bytes, size: int) -> tuple:
    """The unpacked header, or CacheFormatError saying what is wrong with it."""
    if size == 0:
        raise CacheFormatError(name, "empty file, not a linsvm cache")
    if head[: len(MAGIC)] != MAGIC:
        if MAGIC.startswith(head):
            raise CacheFormatError(name, f"truncated linsvm cache ({size} bytes)")
        raise CacheFormatError(name, "not a linsvm cache (its first bytes are not a cache's)")
    if len(head) >= 20:
        (version,) = struct.unpack_from("<I", head, 16)
        if version > VERSION:
            raise CacheFormatError(name, f"cache format version {version} is newer than this "
                                         f"linsvm reads (version {VERSION}); update linsvm")
    if len(head) < HEADER_SIZE:
        raise CacheFormatError(name, f"truncated linsvm cache ({size} bytes)")
    fields = _HEADER.unpack_from(head)
    (crc,) = _HEADER_CRC.unpack_from(head, _HEADER.size)
    if zlib.crc32(head[: _HEADER.size]) != crc:
        raise CacheFormatError(name, "corrupt cache header (checksum mismatch)")
    (_, version, header_size, value_field, index_field, label_field, _, n_rows, n_features,
     nnz, n_blocks, table_offset, file_size, _, _, alignment, _) = fields
    problem = None
    if version < 1 or header_size != HEADER_SIZE or alignment != ALIGN:
        problem = f"version {version}, header size {header_size}, alignment {alignment}"
    elif (value_field not in _VALUE_DTYPES or index_field not in _INDEX_DTYPES
          or label_field not in _LABEL_DTYPES):
        problem = f"dtypes {value_field!r}, {index_field!r}, {label_field!r}"
    elif min(n_rows, n_features, nnz, n_blocks) < 0 or n_blocks > n_rows:
        problem = f"{n_rows} rows, {n_features} features, {nnz} nnz, {n_blocks} blocks"
    elif (table_offset % ALIGN or table_offset < HEADER_SIZE
          or file_size != table_offset + n_blocks * _ENTRY.itemsize):
        problem = f"table at {table_offset}, file size {file_size}"
    elif _INDEX_DTYPES[index_field].itemsize == 4 and n_features > _INT32_MAX:
        problem = f"int32 indices for {n_features} features"
    if problem is not None:
        raise CacheFormatError(name, f"inconsistent cache header ({problem})")
    if size < file_size:
        raise CacheFormatError(name, f"truncated linsvm cache ({size} of {file_size} bytes)")
    if size > file_size:
        raise CacheFormatError(name, f"corrupt linsvm cache ({size - file_size} bytes after "
                                     f"its end at {file_size})")
    return fields


def _check_table(name: str, table: np.ndarray, cache: Cache, table_offset: int) -> None:
    """Blocks in order, aligned, within the file, of the lengths their counts imply, adding
    up to the header's totals."""
    isz, vsz = cache.index_dtype.itemsize, cache.dtype.itemsize
    end = HEADER_SIZE
    for k, (offset, n_rows, nnz, length, _, _) in enumerate(table.tolist()):
        if (offset % ALIGN or offset < end or n_rows < 1 or nnz < 0
                or length != _layout(n_rows, nnz, isz, vsz)[4]
                or (isz == 4 and nnz > _INT32_MAX)):
            raise CacheFormatError(name, f"inconsistent block table (block {k})")
        end = offset + length
    if end > table_offset or int(cache.block_rows.sum()) != cache.n_rows \
            or int(cache.block_nnz.sum()) != cache.nnz:
        raise CacheFormatError(name, "inconsistent block table (totals)")


def open_cache(path: str | os.PathLike) -> Cache:
    """Open the cache file at ``path`` written by `write_cache` (or `linsvm cache`): a
    `Cache` over a memory mapping of the file, whose blocks of rows are read on demand.

    Raises
    ------
    CacheFormatError
        The file is empty, truncated, corrupt (a checksum does not match), not a cache or of
        a newer format version; the message names the file.
    """
    return Cache(path)


# The temporary folders of text converted to a cache (``as_cache``), in $TMPDIR.
TEMPORARY_PREFIX = "linsvm-cache-"


@contextlib.contextmanager
def as_cache(path: str | os.PathLike, n_jobs: int | None = None,
             progress: ProgressTimer | None = None, announce: bool = False,
             memory: int | None = None):  # fmt: skip
    """The path of a cache of the file at ``path``: itself if it is one, else a temporary
    cache converted from its text (in $TMPDIR, removed when the block ends, or by the next
    conversion if the process is killed outright: ``_atomic.temporary_folder``; ``announce``
    says so on stderr). ``memory``: the bytes the conversion's blocks share with what the
    process holds already (a 32nd of it a block, at most write_cache's default)."""
    import sys

    from ..interrupts import held_to_safe_points

    if is_cache(path):
        yield path
        return
    # (signals held to safe points while the folder exists, its removal included: a
    # SIGTERM as training starts or as the folder goes would end the process with it left)
    with held_to_safe_points(), temporary_folder(TEMPORARY_PREFIX) as folder:
        if announce:
            print(f"converting {os.fspath(path)} to a temporary cache in {folder}",
                  file=sys.stderr)  # fmt: skip
        cache = os.path.join(folder, "data.lsvc")
        block_bytes = (DEFAULT_BLOCK_BYTES if memory is None
                       else min(DEFAULT_BLOCK_BYTES, max(1 << 20, memory // 32)))  # fmt: skip
        write_cache(path, cache, n_jobs=n_jobs, check_width=True, progress=progress,
                    block_bytes=block_bytes)  # fmt: skip
        yield cache


def is_cache(path: str | os.PathLike) -> bool:
    """Whether the file starts with a cache's magic bytes, or is the start of them cut short
    (opened as a cache, it is then refused as truncated; no text starts with the magic's
    first byte, 0x89). A pipe or a device is not read (what this read took from a pipe would
    be gone for the reader after it): not a cache."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return False
    with open(path, "rb") as f:
        head = f.read(len(MAGIC))
    return len(head) > 0 and MAGIC.startswith(head)


def read_cache_as_libsvm(
    path: str | os.PathLike, name: str, options, n_threads: int
) -> tuple[sp.csr_matrix, np.ndarray]:
    """`read_libsvm` on a cache: the arrays of the text it was made from.

    `dtype` casts the stored values (a float32 cache read as float64 gives the float32
    values); `n_features` sets the width as for text; `zero_based` does not apply (the
    columns were fixed when the cache was written); `query_id` is refused (no qid is kept).
    """
    if options.query_id:
        raise InvalidInputError(f"{name}: a linsvm cache keeps no qid; read the text file "
                                "with query_id=True")
    with open_cache(path) as cache:
        options.check_cache_width(name, cache)
        n_cols = cache.n_features if options.n_features is None else options.n_features
        if n_cols < cache.n_features:
            written = cache.n_features - (1 if cache.zero_based else 0)
            suffix = ", 0-based" if options.zero_based is True else ""
            raise DataFormatError(name, cache.max_index_line, f"feature index {written} too "
                                  f"large (n_features={n_cols}{suffix})")
        return cache._assemble(0, cache.n_blocks, options.dtype, n_cols, n_threads)
