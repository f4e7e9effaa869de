"""Reading and writing data files in the LIBSVM / svmlight sparse text format.

Each non-empty line is one row::

    <label> [qid:<int>] <index>:<value> <index>:<value> ...   [# comment]

Indices are 1-based by default and must be strictly ascending within a row. Blank lines and
lines holding only a comment are skipped; CRLF line endings, tabs, leading/trailing blanks and
a missing final newline are accepted. A row may have no features at all. Where LIBLINEAR's
reader differs (as scikit-learn's does): a vertical tab, form feed or lone carriage return
separates features here (LIBLINEAR ends the row there, dropping what follows), and numbers
are decimal (C's strtod in LIBLINEAR also takes hexadecimal, 0x1p3) with the value right
after the colon (LIBLINEAR skips blanks there, "2: 0.5"): such lines are refused, at their
line.

Values written explicitly as 0 are kept as stored entries of the matrix (as LIBLINEAR does);
`write_libsvm` writes only the nonzeros.

How a file is read: the text (decompressed on the fly for .gz, .bz2, .xz) comes in blocks of
about `BLOCK_SIZE` bytes, each cut after its last newline (the partial line at its end moves
on to the next block). A block is cut again at line boundaries into up to n_jobs pieces, and
the pieces are parsed side by side by the Numba kernel `linsvm.io._parse.parse_buffer`
(which releases the GIL) in a thread pool, while the next block is read. The pieces' rows are
then copied, in file order, into the output arrays, which grow in place (so memory is the
result plus a few blocks, not the whole text and the result). Each piece counts its
newlines, so an error names the line of the whole file. The result is the same for any
number of threads and any block size. The parsed pieces, in file order, also feed the binary
cache's writer (`linsvm.io.cache`), and `read_libsvm` reads a cache in place of the text.
"""

from __future__ import annotations

import bz2
import collections
import contextlib
import gzip
import lzma
import math
import os
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import _memory
from ..data import FLOAT32_OVERFLOW, TRAINABLE_MAX, is_integer
from ..errors import DataFormatError, InvalidInputError, ZeroIndexError
from ..interrupts import held_to_safe_points
from ..parallel import effective_n_jobs
from . import _format, _parse
from ._atomic import atomic_writer

__all__ = ["parse_libsvm_bytes", "read_libsvm", "write_libsvm"]

# Without n_features, an index above this is rejected: a model over more features than this
# (2**40, about 1.1e12) could never be allocated, so such an index is a corrupt file. Readers
# for training (``check_width``) refuse, as early, any index whose model could not fit in
# this process's memory (`linsvm._memory`).
MAX_FEATURE_INDEX = 2**40

# Bytes of text read at a time. Module constants rather than options: the result does not
# depend on them (tests set them tiny so that lines straddle blocks and pieces). Measured on
# pypi-recent: blocks of 1 to 32 MB parse at the same rate; memory beyond the result grows with
# the block (about 3 blocks of text and 2 of parsed pieces are alive at once).
BLOCK_SIZE = 8 * 2**20
# A block is cut into at most n_jobs pieces, none smaller than this: a tiny file is parsed on
# the calling thread without starting a pool.
MIN_PIECE_SIZE = 2**20

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
_FRESH_BELOW = 8 * 2**20  # output arrays smaller than this grow by a new allocation

# Non-zeros formatted at a time by write_libsvm (its memory: about 300 bytes each).
WRITE_CHUNK_NNZ = 1 << 18
# Writers of a compressed stream onto the open temporary file (closing one leaves the file open).
_STREAM_WRITERS = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="wb"),
    ".bz2": lambda raw: bz2.BZ2File(raw, mode="wb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, mode="wb"),
}
# Readers of a compressed stream, given the open raw file.
_STREAM_OPENERS = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    ".bz2": lambda raw: bz2.BZ2File(raw, mode="rb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, mode="rb"),
}
_DECOMPRESSION_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)

# The first bytes of a binary cache (linsvm.io.cache.MAGIC), which read_libsvm also reads.
_CACHE_MAGIC_SIZE = 16


def _cache_magic() -> bytes:
    from .cache import MAGIC

    return MAGIC


def read_libsvm(
    path: str | os.PathLike,
    dtype=np.float64,
    n_features: int | None = None,
    zero_based: bool | str = False,
    query_id: bool = False,
    n_jobs: int | None = -1,
    *,
    check_width: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray] | tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Read a LIBSVM / svmlight file.

    Files ending in ``.gz``, ``.bz2`` or ``.xz`` are decompressed as they are read. The file
    is read in blocks and parsed in ``n_jobs`` threads; the result does not depend on
    ``n_jobs``.

    A binary cache (`linsvm.io.write_cache`) is recognised by its first bytes, whatever its
    name, and gives the arrays of the text it was made from: `dtype` casts its values (a
    float32 cache read as float64 gives the float32 values), `n_features` applies as for
    text, `zero_based` does not apply (the cache's columns were fixed when it was written)
    and ``query_id=True`` is refused (a cache keeps no qid).

    Parameters
    ----------
    path : str or os.PathLike
    dtype : float32 or float64
        dtype of the matrix values (labels are always float64). A value beyond float32's
        range is refused, not made infinite (DataFormatError at its line; in a float64
        cache, InvalidInputError naming its row).
    n_features : int, optional
        Number of columns of X. Default: the largest feature index seen (plus one when
        0-based). A feature index beyond it is an error.
    zero_based : bool or "auto"
        False: 1-based indices as in LIBSVM (index 0 is an error). True: 0-based.
        "auto": 0-based if any index 0 occurs, else 1-based.
    query_id : bool
        Also return the ``qid:`` of each row.
    n_jobs : int or None
        Threads that parse: -1 (default) all cores, None or 1 the calling thread only.
    check_width : bool
        Data to train on: without ``n_features``, refuse (DataFormatError at its line) a
        feature index whose model could not fit in memory, before allocating it: one
        float64 weight vector over that many features more than this process can allocate
        (physical memory, or what ``ulimit -v`` leaves).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
        Sorted, 0-based column indices; int32 index arrays when nnz and n_features fit in
        int32, else int64.
    y : float64 array, shape (n_rows,)
    qid : int64 array, shape (n_rows,)
        Only with ``query_id=True``; 0 for rows without a qid.

    Raises
    ------
    DataFormatError
        The file is malformed; the message is ``"<path>:<line>: <what>"`` (line 0 when the
        compressed stream itself is corrupt). The first fault in the file is reported.
    InvalidInputError (a ValueError)
        Bad options (dtype, n_features, zero_based, n_jobs).
    """
    options = _Options.check(dtype, n_features, zero_based, query_id, check_width)
    n_threads = effective_n_jobs(n_jobs)
    if not isinstance(path, str | bytes | os.PathLike):
        what = "a file object" if hasattr(path, "read") else type(path).__name__
        raise InvalidInputError(f"read_libsvm takes a file's path, got {what}; for text in "
                                "memory, linsvm.io.parse_libsvm_bytes(f.read())")  # fmt: skip
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as raw:
        # a binary cache is recognised by its first bytes, whatever the file's name
        if starts_as_cache(raw, name):
            from .cache import read_cache_as_libsvm

            return read_cache_as_libsvm(path, name, options, n_threads)
        return _collect(_text_pieces(raw, name, options, n_threads), name, options)


def parse_libsvm_bytes(
    buf: bytes,
    name: str = "<bytes>",
    dtype=np.float64,
    n_features: int | None = None,
    zero_based: bool | str = False,
    query_id: bool = False,
    n_jobs: int | None = -1,
    *,
    check_width: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray] | tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Parse LIBSVM text held in memory; `name` is used in error messages.

    Same options and results as `read_libsvm`.
    """
    options = _Options.check(dtype, n_features, zero_based, query_id, check_width)
    n_threads = effective_n_jobs(n_jobs)
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    # A read-only uint8 view (as are the blocks of a file) keeps each kernel to one compiled
    # signature.
    text = np.frombuffer(buf, dtype=np.uint8)
    blocks = _memory_blocks(text, BLOCK_SIZE)
    return _collect(_parsed_blocks(blocks, name, options, n_threads, ""), name, options)


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class _Options:
    """The reader's options, checked, and what the kernel and the messages derive from them."""

    dtype: np.dtype
    n_features: int | None
    zero_based: bool | str
    query_id: bool
    one_based: bool  # index 0 is an error
    index_limit: int  # largest index allowed as written in the file
    # with check_width: the bytes this process can allocate, which bound index_limit
    memory_room: int | None = None
    # with check_width: values too large to train on are refused at their line too
    trainable: bool = False

    @classmethod
    def check(cls, dtype, n_features, zero_based, query_id, check_width=False) -> _Options:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise InvalidInputError(f"dtype must be float32 or float64, got {dtype!r}") from None
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise InvalidInputError(f"dtype must be float32 or float64, got {dtype}")
        if isinstance(zero_based, bool | np.bool_):
            zero_based = bool(zero_based)
        elif not (isinstance(zero_based, str) and zero_based == "auto"):
            raise InvalidInputError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        if n_features is not None:
            if not is_integer(n_features):
                raise InvalidInputError(
                    f"n_features must be a non-negative int or None, got {n_features!r}"
                )
            n_features = int(n_features)
            if n_features < 0:
                raise InvalidInputError(
                    f"n_features must be a non-negative int or None, got {n_features}"
                )
        # With "auto" the 0-based limit is checked after parsing, once it is known whether
        # the file is 0-based.
        memory_room = None
        if n_features is None:
            index_limit = MAX_FEATURE_INDEX
            if check_width:
                memory_room = _memory.allocatable_memory()
            if memory_room is not None:
                # the width is the largest index as written (+ 1 when 0-based)
                width_limit = memory_room // _memory.WEIGHT_BYTES
                index_limit = min(index_limit, width_limit - (1 if zero_based is True else 0))
        elif zero_based is True:
            index_limit = n_features - 1
        else:
            index_limit = n_features
        return cls(dtype, n_features, zero_based, bool(query_id), zero_based is False,
                   index_limit, memory_room, bool(check_width))

    @property
    def value_limit(self) -> float:
        """Magnitude from which a feature value cannot be held in ``dtype`` (it would round
        to infinity), or (data to train on) trained on (``data.TRAINABLE_MAX``)."""
        limit = FLOAT32_OVERFLOW if self.dtype == np.dtype(np.float32) else math.inf
        return min(limit, TRAINABLE_MAX) if self.trainable else limit

    def check_cache_width(self, name: str, cache) -> None:
        """With check_width, for a cache (`linsvm.io.cache.Cache`) read in place of its text:
        DataFormatError at the line of its largest index when that is past the limit."""
        if self.memory_room is None:
            return
        if cache.n_features > self.memory_room // _memory.WEIGHT_BYTES:
            written = cache.n_features - (1 if cache.zero_based else 0)
            what = _too_wide(str(written), cache.n_features, self)
            raise DataFormatError(name, cache.max_index_line, what)


# ----------------------------------------------------------------------------- blocks


def _file_blocks(
    stream, raw, total: int, block_size: int, compressed: bool
) -> Iterator[tuple[np.ndarray, float]]:
    """The text of `stream` as read-only uint8 blocks, each ending with a newline (except the
    last when the file does not), with the fraction of the raw file read so far.

    A line longer than `block_size` makes its block as long as needed. Errors of the
    decompressor come out as `_DecompressionFailed`.
    """
    carry = np.empty(0, dtype=np.uint8)  # the partial line at the end of the previous block
    while True:
        buf = np.empty(carry.shape[0] + block_size, dtype=np.uint8)
        buf[: carry.shape[0]] = carry
        filled = carry.shape[0]
        while True:
            try:
                filled = _read_into(stream, buf, filled)
            except _DECOMPRESSION_ERRORS as exc:
                if not compressed:
                    raise
                raise _DecompressionFailed(exc) from exc
            at_end = filled < buf.shape[0]
            if at_end:
                cut = filled
                break
            cut = _parse.line_end_before(_read_only(buf), filled)
            if cut > 0:
                break
            grown = np.empty(2 * buf.shape[0], dtype=np.uint8)  # a line longer than a block
            grown[:filled] = buf[:filled]
            buf = grown
        if at_end:
            fraction = 1.0
        else:  # 0 = unknown (not a regular file)
            fraction = min(1.0, raw.tell() / total) if total > 0 else 0.0
        if cut > 0:
            yield _read_only(buf[:cut]), fraction
        if at_end:
            return
        carry = buf[cut:filled].copy()


def _read_into(stream, buf: np.ndarray, filled: int) -> int:
    """Fill buf[filled:] from `stream` until it is full or the stream ends; the new fill."""
    view = memoryview(buf)
    while filled < buf.shape[0]:
        got = stream.readinto(view[filled:])
        if not got:
            break
        filled += got
    return filled


def _memory_blocks(text: np.ndarray, block_size: int) -> Iterator[tuple[np.ndarray, float]]:
    """`text` (read-only uint8) as views of about `block_size` bytes cut after newlines."""
    n = text.shape[0]
    pos = 0
    while pos < n:
        end = min(pos + block_size, n)
        if end < n:
            cut = _parse.line_end_before(text[pos:end], end - pos)
            end = pos + cut if cut > 0 else _parse.line_end_after(text, end, n)
        yield text[pos:end], end / n
        pos = end


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def _split_lines(block: np.ndarray, n_parts: int) -> list[np.ndarray]:
    """`block` cut after newlines into at most `n_parts` pieces of about equal size."""
    n = block.shape[0]
    cuts = [0]
    for k in range(1, n_parts):
        cuts.append(_parse.line_end_after(block, max(cuts[-1], k * n // n_parts), n))
    cuts.append(n)
    return [block[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


class _DecompressionFailed(Exception):
    """The decompressor failed while the text was read (wraps its exception)."""


# ----------------------------------------------------------------------------- pieces


@dataclass
class _Piece:
    """One piece of text parsed: its CSR arrays (indices as written in the file), and its first
    error, if any, with the line counted from the start of the piece."""

    n_lines: int  # newlines in the piece: the lines that precede the next piece
    n_rows: int
    nnz: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    labels: np.ndarray
    qids: np.ndarray
    min_index: int
    max_index: int
    max_index_line: int
    n_bytes: int  # of text
    error: tuple[type[DataFormatError], int, str] | None = None
    first_line: int = 0  # lines of the file before the piece (set in file order)


def _parse_piece(text: np.ndarray, options: _Options) -> _Piece:
    """Parse one piece (read-only uint8, whole lines) with the kernel; runs in a worker."""
    parsed = _parse.parse_buffer(text, options.one_based, np.int64(options.index_limit),
                                 options.value_limit)
    indices, data, labels = parsed.indices, parsed.data, parsed.labels
    piece = _Piece(int(parsed.n_newlines), int(parsed.n_rows), int(parsed.nnz), parsed.indptr,
                   indices, data, labels, parsed.qids, int(parsed.min_index),
                   int(parsed.max_index), int(parsed.max_index_line), int(text.shape[0]))

    # Rare tokens the kernel could not round exactly: parse them with float(). They all come
    # before any error the kernel stopped at, so an infinite one is the first error.
    for start, end, target, line in parsed.fallback[: parsed.n_fallback].tolist():
        value = float(text[start:end].tobytes().decode("ascii"))
        if math.isinf(value):
            if target < 0:
                what = _ERROR_MESSAGES[_parse.LABEL_INF]
            else:
                what = _ERROR_MESSAGES[_parse.VALUE_INF].format(a=indices[target])
            piece.error = (DataFormatError, line, what)
            return piece
        if target >= 0 and abs(value) >= options.value_limit:
            token = _token_text(text[start:end].tobytes(), 0, end - start)
            what = _out_of_range(token, int(indices[target]), options)
            piece.error = (DataFormatError, line, what)
            return piece
        if target < 0:
            labels[-target - 1] = value
        else:
            data[target] = value

    if parsed.status != _parse.OK:
        start, end = parsed.err_start, parsed.err_end
        token = _token_text(text[start:end].tobytes(), 0, end - start)
        what = _error_message(parsed.status, token, int(parsed.err_a), int(parsed.err_b), options)
        error = ZeroIndexError if parsed.status == _parse.ZERO_INDEX else DataFormatError
        piece.error = (error, int(parsed.err_line), what)
    return piece


def _text_pieces(
    raw, name: str, options: _Options, n_threads: int
) -> Iterator[tuple[list[_Piece], float]]:
    """The text of the open file `raw` (decompressed by its name's suffix) parsed block after
    block: see `_parsed_blocks`."""
    suffix = os.path.splitext(name)[1].lower()
    total = os.fstat(raw.fileno()).st_size
    with naming_read_errors(name):
        if suffix in _STREAM_OPENERS:
            with _STREAM_OPENERS[suffix](raw) as stream:
                blocks = _file_blocks(stream, raw, total, BLOCK_SIZE, compressed=True)
                yield from _parsed_blocks(blocks, name, options, n_threads, suffix)
        else:
            blocks = _file_blocks(raw, raw, total, BLOCK_SIZE, compressed=False)
            yield from _parsed_blocks(blocks, name, options, n_threads, suffix)


@contextlib.contextmanager
def naming_read_errors(name: str) -> Iterator[None]:
    """Give the file's name to an OSError of a read that has none (EIO, a device's
    refusal), so that the command line's one-line error says which file failed."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, name) from exc


def starts_as_cache(raw, name: str) -> bool:
    """Whether the open file ``raw`` starts with a cache's magic, or is the start of one cut
    short (the cache's reader then says it is truncated; no text starts with its first byte,
    0x89). Peeked: nothing is consumed, so a pipe still reads from its start."""
    with naming_read_errors(name):
        head = raw.peek(_CACHE_MAGIC_SIZE)[:_CACHE_MAGIC_SIZE]
    return len(head) > 0 and _cache_magic().startswith(head)


def _parsed_blocks(
    blocks: Iterator[tuple[np.ndarray, float]],
    name: str,
    options: _Options,
    n_threads: int,
    suffix: str,
) -> Iterator[tuple[list[_Piece], float]]:
    """Each block's pieces parsed (in `n_threads` threads), in file order, with the fraction of
    the file read; every piece knows its first line, and the first error is raised.

    While a block is read, the pieces of the block before it are parsed; a block's pieces are
    yielded once all of them are parsed, and the consumer uses them while the next block's
    are parsed. Without threads each block is parsed and used before the next is read. The
    consumer must close the generator (contextlib.closing) so that the pool stops at once
    when it fails.
    """
    pending: collections.deque[tuple[list[Future], float]] = collections.deque()
    pool = None
    first = True
    n_lines = 0

    def checked(item: tuple[list[Future], float]) -> tuple[list[_Piece], float]:
        nonlocal n_lines
        futures, fraction = item
        pieces = [f.result() for f in futures]
        for piece in pieces:
            piece.first_line = n_lines
            if piece.error is not None:
                error, line, what = piece.error
                raise error(name, n_lines + line, what)
            n_lines += piece.n_lines
        return pieces, fraction

    # Each step that runs kernels on this thread holds Ctrl-C to its end, where it raises
    # (interrupts.held_to_safe_points); never across a yield, where the caller works
    try:
        blocks = iter(blocks)
        while True:
            failed = None
            with held_to_safe_points():
                try:
                    item = next(blocks, None)
                except _DecompressionFailed as exc:
                    failed, item = exc, None
                if item is not None:
                    block, fraction = item
                    n_pieces = min(n_threads, max(1, block.shape[0] // MIN_PIECE_SIZE))
                    pieces = _split_lines(block, n_pieces)
                    # One piece that is the whole text is parsed on this thread, without a
                    # pool.
                    whole = first and fraction == 1.0 and len(pieces) == 1
                    if pool is None and n_threads > 1 and not whole:
                        pool = ThreadPoolExecutor(max_workers=n_threads)
                    first = False
                    if pool is None:
                        futures = [_done(_parse_piece(piece, options)) for piece in pieces]
                    else:
                        futures = [pool.submit(_parse_piece, piece, options) for piece in pieces]
                    pending.append((futures, fraction))
                    del block, pieces, futures  # parsed pieces are freed once used
            if failed is not None:
                while pending:  # a fault earlier in the file is reported first
                    yield checked(pending.popleft())
                exc = failed.__cause__
                raise DataFormatError(name, 0, f"cannot decompress {suffix} data: {exc}") from exc
            if item is None:
                break
            del item
            while len(pending) > (1 if pool is not None else 0):
                yield checked(pending.popleft())
        while pending:
            yield checked(pending.popleft())
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

def _done(piece: _Piece) -> Future:
    future: Future = Future()
    future.set_result(piece)
    return future


# ----------------------------------------------------------------------------- output


def _collect(parsed: Iterator[tuple[list[_Piece], float]], name: str, options: _Options):
    """The reader's result from the parsed blocks of `_parsed_blocks`; the generator is closed
    however this ends, so that its pool stops at once when reading fails."""
    out = _Output(name, options)
    with contextlib.closing(parsed):
        for pieces, fraction in parsed:
            out.add(pieces, fraction)
    return out.result()


class _Output:
    """The CSR arrays filled block after block, in file order.

    The arrays grow in place (`ndarray.resize`: a large block is remapped, not copied) by an
    eighth, or less when the fraction of the file read so far says the end is near, so that
    memory stays close to the final arrays. Indices are stored in int32 until a value or the
    count of non-zeros needs int64. 1-based indices are made 0-based as they are copied (for
    "auto", at the end, once it is known).
    """

    def __init__(self, name: str, options: _Options) -> None:
        self.name = name
        self.options = options
        self.n_rows = 0
        self.nnz = 0
        self.min_index = _INT64_MAX
        self.max_index = -1
        self.max_index_line = 0
        wide = options.n_features is not None and options.n_features > _INT32_MAX
        index_dtype = np.int64 if wide else np.int32
        self.indices = np.empty(0, dtype=index_dtype)
        self.data = np.empty(0, dtype=options.dtype)
        self.indptr = np.zeros(1, dtype=index_dtype)
        self.labels = np.empty(0, dtype=np.float64)
        self.qids = np.empty(0, dtype=np.int64) if options.query_id else None

    def add(self, pieces: list[_Piece], fraction: float) -> None:
        """Append the rows of one block's pieces (parsed without error, in file order)."""
        for piece in pieces:
            if piece.nnz and piece.max_index > self.max_index:
                self.max_index = piece.max_index
                self.max_index_line = piece.first_line + piece.max_index_line
            if piece.nnz:
                self.min_index = min(self.min_index, piece.min_index)

        nnz = self.nnz + sum(p.nnz for p in pieces)
        n_rows = self.n_rows + sum(p.n_rows for p in pieces)
        if self.indices.dtype == np.int32 and max(nnz, self.max_index) > _INT32_MAX:
            self.indices = self.indices.astype(np.int64)
            self.indptr = self.indptr.astype(np.int64)
        self.indices = _reserve(self.indices, nnz, fraction)
        self.data = _reserve(self.data, nnz, fraction)
        self.indptr = _reserve(self.indptr, n_rows + 1, fraction)
        self.labels = _reserve(self.labels, n_rows, fraction)
        if self.qids is not None:
            self.qids = _reserve(self.qids, n_rows, fraction)

        shift = 1 if self.options.zero_based is False else 0
        for p in pieces:
            a, b = self.nnz, self.nnz + p.nnz
            r, s = self.n_rows, self.n_rows + p.n_rows
            np.subtract(p.indices[: p.nnz], shift, out=self.indices[a:b], casting="unsafe")
            self.data[a:b] = p.data[: p.nnz]
            np.add(p.indptr[1 : p.n_rows + 1], a, out=self.indptr[r + 1 : s + 1],
                   casting="unsafe")
            self.labels[r:s] = p.labels[: p.n_rows]
            if self.qids is not None:
                self.qids[r:s] = p.qids[: p.n_rows]
            self.nnz, self.n_rows = b, s

    def result(self):
        """The CSR matrix, labels (and qids), trimmed to size; the last checks."""
        options = self.options
        nnz, n_rows, max_index = self.nnz, self.n_rows, self.max_index
        is_zero_based = options.zero_based is True or (
            options.zero_based == "auto" and nnz > 0 and self.min_index == 0
        )
        if options.n_features is None:
            n_cols = 0 if nnz == 0 else max_index + (1 if is_zero_based else 0)
        else:
            n_cols = options.n_features
            if nnz > 0 and is_zero_based and max_index >= n_cols:
                what = f"feature index {max_index} too large (n_features={n_cols}, 0-based)"
                raise DataFormatError(self.name, self.max_index_line, what)

        # Shrinking in place hands the unused tail back without a copy.
        indices = _trim(self.indices, nnz)
        if options.zero_based == "auto" and not is_zero_based and nnz > 0:
            indices -= 1
        index_dtype = np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64
        indices = indices.astype(index_dtype, copy=False)
        indptr = _trim(self.indptr, n_rows + 1).astype(index_dtype, copy=False)
        X = sp.csr_matrix((_trim(self.data, nnz), indices, indptr), shape=(n_rows, n_cols),
                          copy=False)
        X.has_sorted_indices = True
        y = _trim(self.labels, n_rows)
        self.indices = self.data = self.indptr = self.labels = None
        if self.qids is not None:
            qids, self.qids = _trim(self.qids, n_rows), None
            return X, y, qids
        return X, y


def _reserve(a: np.ndarray, needed: int, fraction: float) -> np.ndarray:
    """`a` with room for `needed` items, grown in place by about an eighth, less near the end
    of the file (`fraction` of it read: the rest is estimated from what came so far)."""
    if needed <= a.shape[0]:
        return a
    growth = needed // 8
    if fraction > 0:
        growth = min(growth, math.ceil(needed * (1.0 - fraction) / fraction * 1.05))
    if a.nbytes < _FRESH_BELOW:
        # A fresh allocation while small: NumPy asks for huge pages on large new arrays (not
        # on resized ones), and the advice stays with the memory as it is remapped.
        grown = np.empty(needed + growth, dtype=a.dtype)
        grown[: a.shape[0]] = a
        return grown
    a.resize(needed + growth, refcheck=False)
    return a


def _trim(a: np.ndarray, size: int) -> np.ndarray:
    if a.shape[0] != size:
        a.resize(size, refcheck=False)
    return a


def _token_text(buf: bytes, start: int, end: int, limit: int = 40) -> str:
    """The token as a message shows it (between quotes): printable text as is, any other
    byte or character escaped once (\\xff), not repr() over an already escaped string."""
    text = buf[start:end].decode("utf-8", errors="surrogateescape")
    shown = []
    for ch in text[:limit]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable() and ch not in "'\\":
            shown.append(ch)
        else:
            shown.append(repr(ch)[1:-1] if ch != "'" else "\\'")
    return "".join(shown) + ("..." if len(text) > limit else "")


def _out_of_range(token: str, index: int, options: _Options) -> str:
    """Why value ``token`` of feature ``index`` (as written) cannot be read, or trained on
    (float64: only a value past ``TRAINABLE_MAX`` gets here; float32's limit is lower)."""
    if options.dtype == np.dtype(np.float64):
        return (f"value '{token}' of feature {index} is 2^500 (3.3e150) or more: it overflows "
                "float64 in training; scale the features")
    return (f"value '{token}' is beyond the range of {options.dtype.name} (feature {index}); "
            "read the data as float64")


def _too_wide(token: str, width: int | None, options: _Options) -> str:
    """Why index ``token`` (a width of ``width`` features, None if too long to be known) is
    refused by a check_width reader."""
    room = _memory.format_bytes(options.memory_room)
    if width is None:
        return (f"feature index {token} too large: a model over that many features cannot "
                f"fit in the {room} of memory this process can allocate")
    needs = _memory.format_bytes(width * _memory.WEIGHT_BYTES)
    return (f"feature index {token} too large: a model over {width} features needs {needs} "
            f"a weight vector, more than the {room} of memory this process can allocate")


# The message of each error code of `_parse.parse_buffer` but INDEX_TOO_LARGE and
# VALUE_OUT_OF_RANGE (which depend on the options), given the token at fault and the indices
# the kernel reports with it (a, b).
_ERROR_MESSAGES = {
    _parse.BAD_LABEL: "bad label '{token}'",
    _parse.MISSING_LABEL: "missing label (line starts with '{token}')",
    _parse.LABEL_NAN: "label is NaN",
    _parse.LABEL_INF: "label is infinite",
    _parse.BAD_QID: "bad qid '{token}'",
    _parse.MISPLACED_QID: "'{token}': qid must come right after the label",
    _parse.BAD_TOKEN: "expected index:value, got '{token}'",
    _parse.BAD_INDEX: "bad feature index '{token}'",
    _parse.NEGATIVE_INDEX: "negative index {a}",
    _parse.ZERO_INDEX: (
        "index 0 is not allowed with 1-based indices (use zero_based=True or 'auto')"
    ),
    _parse.NOT_ASCENDING: "indices must be ascending: {a} after {b}",
    _parse.DUPLICATE_INDEX: "duplicate index {a}",
    _parse.BAD_VALUE: "bad value '{token}' for feature {a}",
    _parse.VALUE_NAN: "value is NaN (feature {a})",
    _parse.VALUE_INF: "value is infinite (feature {a})",
}


def _error_message(status: int, token: str, a: int, b: int, options: _Options) -> str:
    """Human-readable text for an error code of `_parse.parse_buffer`."""
    n_features, zero_based = options.n_features, options.zero_based
    if status == _parse.BAD_VALUE and token == "":
        return f"no value after '{a}:' (the value must follow the colon, with no blank)"
    if status in _ERROR_MESSAGES:
        return _ERROR_MESSAGES[status].format(token=token, a=a, b=b)
    if status == _parse.INDEX_TOO_LARGE:
        if n_features is None and options.memory_room is not None:
            try:
                width = int(token) + (1 if zero_based is True else 0)
            except ValueError:  # shortened for the message
                width = None
            return _too_wide(token, width, options)
        if n_features is None:
            return f"feature index {token} too large (the maximum is 2**40 = {MAX_FEATURE_INDEX})"
        suffix = ", 0-based" if zero_based is True else ""
        return f"feature index {token} too large (n_features={n_features}{suffix})"
    if status == _parse.VALUE_OUT_OF_RANGE:
        return _out_of_range(token, a, options)
    return f"parse error (code {status})"


def write_libsvm(
    X,
    y,
    path: str | os.PathLike,
    zero_based: bool = False,
    query_id=None,
) -> None:
    """Write X, y (and optionally qids) to a LIBSVM file, atomically.

    One line per row: the label, ``qid:<int>`` if `query_id` is given, then ``index:value``
    for the nonzeros of the row in ascending index order (1-based unless `zero_based`).
    Numbers are written with the shortest text that reads back to the identical double
    (integers without ".0"); float32 values are written as their exact float64 value, so
    ``read_libsvm(path, dtype=np.float32)`` returns the identical float32 values. Paths
    ending in ``.gz``, ``.bz2`` or ``.xz`` are compressed. The file is written to a
    temporary file in the same directory and renamed over `path`. The text of chunks of rows
    is made on every core, a chunk a thread, and written in order (the same bytes).

    Parameters
    ----------
    X : scipy sparse matrix or array-like, shape (n_rows, n_features)
    y : array-like, shape (n_rows,)
    path : str or os.PathLike
    zero_based : bool
    query_id : array-like of int, shape (n_rows,), optional

    Raises
    ------
    InvalidInputError
        Shapes disagree, or X or y holds NaN or infinity.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise InvalidInputError(f"X must be 2-D, got shape {X.shape}")
        X = sp.csr_matrix(X)
    X.sum_duplicates()  # also sorts the indices
    X.eliminate_zeros()
    n_rows = X.shape[0]
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("y must hold numbers: the LIBSVM format has numeric labels "
                                "and targets") from None
    if y.shape != (n_rows,):
        raise InvalidInputError(f"y must have shape ({n_rows},), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("y holds NaN or infinite labels")
    data = np.asarray(X.data)
    if not np.all(np.isfinite(data)):
        raise InvalidInputError("X holds NaN or infinite values")
    if query_id is not None:
        query_id = np.asarray(query_id)
        if query_id.shape != (n_rows,) or not np.issubdtype(query_id.dtype, np.integer):
            raise InvalidInputError(f"query_id must be integers of shape ({n_rows},)")

    offset = 0 if zero_based else 1
    name = os.fsdecode(os.fspath(path))
    compress = _STREAM_WRITERS.get(os.path.splitext(name)[1].lower())
    def text(r0: int, r1: int) -> bytes:
        return _lines(X[r0:r1], y[r0:r1], None if query_id is None else query_id[r0:r1], offset)

    chunks = _row_chunks(X.indptr, WRITE_CHUNK_NNZ)
    n_threads = min(effective_n_jobs(-1), len(chunks))
    with atomic_writer(name) as raw, ThreadPoolExecutor(max(n_threads, 1)) as pool:
        out = raw if compress is None else compress(raw)
        try:
            # rows a bounded number of non-zeros at a time, a chunk a thread (the kernel
            # releases the GIL), written in order: the text of a few chunks is held at once,
            # never the file's
            pending: collections.deque[Future] = collections.deque()
            for r0, r1 in chunks:
                if len(pending) == n_threads:
                    out.write(pending.popleft().result())
                pending.append(pool.submit(text, r0, r1))
            while pending:
                out.write(pending.popleft().result())
        finally:
            if compress is not None:
                out.close()


def _row_chunks(indptr: np.ndarray, nnz: int) -> list[tuple[int, int]]:
    """(first row, end row) of consecutive chunks of about ``nnz`` non-zeros (at least a row
    each); none for no rows."""
    n_rows = indptr.shape[0] - 1
    chunks, r0 = [], 0
    while r0 < n_rows:
        r1 = int(np.searchsorted(indptr, indptr[r0] + nnz, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n_rows)
        chunks.append((r0, r1))
        r0 = r1
    return chunks


def _lines(X: sp.csr_matrix, y: np.ndarray, query_id, offset: int) -> bytes:
    """The LIBSVM lines of the rows of X (sorted, no explicit zeros), each ending in a
    newline, as ASCII (written by `_format.format_libsvm_rows`)."""
    labels = np.ascontiguousarray(y, dtype=np.float64)
    values = np.ascontiguousarray(X.data, dtype=np.float64)
    query_ids = np.zeros(0, np.int64) if query_id is None else np.asarray(query_id, np.int64)

    def write(row: int, at: int, out: np.ndarray, pos: int):
        return _format.format_libsvm_rows(labels, query_ids, X.indptr, X.indices, values,
                                          offset, row, at, X.shape[0], out, pos)  # fmt: skip

    def fallback(row: int, at: int) -> str:  # a number the kernel leaves to Python
        if at < 0:
            text = _format_numbers(labels[row : row + 1])[0]
            return text if query_id is None else f"{text} qid:{int(query_ids[row])}"
        k = X.indptr[row] + at
        return f" {int(X.indices[k]) + offset}:{_format_numbers(values[k : k + 1])[0]}"

    return b"".join(_format.rows_text(write, fallback, 1 << 20))


def _format_numbers(values: np.ndarray) -> list[str]:
    """Shortest round-tripping text of each float64 value; integers are written as "3", "-1"."""
    values = np.asarray(values, dtype=np.float64)
    negative_zero = (values == 0) & np.signbit(values)
    integral = (np.trunc(values) == values) & (np.abs(values) < 2.0**53) & ~negative_zero
    out = np.empty(values.shape[0], dtype=object)
    if integral.any():
        out[integral] = values[integral].astype(np.int64).astype(str)
    rest = ~integral
    if rest.any():
        out[rest] = [repr(v) for v in values[rest].tolist()]
    return out.tolist()
