"""Reading and writing data files in the LIBSVM / svmlight sparse text format.

Each non-empty line is one row::

    <label> [qid:<int>] <index>:<value> <index>:<value> ...   [# comment]

Indices are 1-based by default and must be strictly ascending within a row. Blank lines and
lines holding only a comment are skipped; CRLF line endings, tabs, leading/trailing blanks and
a missing final newline are accepted. A row may have no features at all.

Values written explicitly as 0 are kept as stored entries of the matrix (as LIBLINEAR does);
`write_libsvm` writes only the nonzeros.

The parsing itself happens in one Numba kernel (`linsvm.io._parse.parse_buffer`); this module
validates options, decompresses, turns kernel error codes into `DataFormatError` messages and
assembles the CSR matrix.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import os

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, InvalidInputError, ZeroIndexError
from . import _parse
from ._atomic import atomic_write_bytes

__all__ = ["parse_libsvm_bytes", "read_libsvm", "write_libsvm"]

# Without n_features, an index above this is rejected: a model over more features than this
# (2**40, about 1.1e12) could never be allocated, so such an index is a corrupt file.
MAX_FEATURE_INDEX = 2**40

_INT32_MAX = np.iinfo(np.int32).max

_DECOMPRESSORS = {
    ".gz": (gzip.decompress, gzip.compress),
    ".bz2": (bz2.decompress, bz2.compress),
    ".xz": (lzma.decompress, lzma.compress),
}


def read_libsvm(
    path: str | os.PathLike,
    dtype=np.float64,
    n_features: int | None = None,
    zero_based: bool | str = False,
    query_id: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray] | tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Read a LIBSVM / svmlight file.

    Files ending in ``.gz``, ``.bz2`` or ``.xz`` are decompressed in memory first.

    Parameters
    ----------
    path : str or os.PathLike
    dtype : float32 or float64
        dtype of the matrix values (labels are always float64).
    n_features : int, optional
        Number of columns of X. Default: the largest feature index seen (plus one when
        0-based). A feature index beyond it is an error.
    zero_based : bool or "auto"
        False: 1-based indices as in LIBSVM (index 0 is an error). True: 0-based.
        "auto": 0-based if any index 0 occurs, else 1-based.
    query_id : bool
        Also return the ``qid:`` of each row.

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
        compressed stream itself is corrupt).
    ValueError
        Bad options (dtype, n_features, zero_based).
    """
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as f:
        buf = f.read()
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _DECOMPRESSORS:
        try:
            buf = _DECOMPRESSORS[suffix][0](buf)
        except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
            raise DataFormatError(name, 0, f"cannot decompress {suffix} data: {exc}") from exc
    return parse_libsvm_bytes(
        buf,
        name,
        dtype=dtype,
        n_features=n_features,
        zero_based=zero_based,
        query_id=query_id,
    )


def parse_libsvm_bytes(
    buf: bytes,
    name: str = "<bytes>",
    dtype=np.float64,
    n_features: int | None = None,
    zero_based: bool | str = False,
    query_id: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray] | tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Parse LIBSVM text held in memory; `name` is used in error messages.

    Same options and results as `read_libsvm`.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if isinstance(zero_based, bool | np.bool_):
        zero_based = bool(zero_based)
    elif not (isinstance(zero_based, str) and zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise ValueError(f"n_features must be a non-negative int or None, got {n_features!r}")
        n_features = int(n_features)
        if n_features < 0:
            raise ValueError(f"n_features must be a non-negative int or None, got {n_features}")
    if not isinstance(buf, bytes):
        buf = bytes(buf)  # a read-only uint8 view keeps the kernel to one compiled signature

    # Largest index allowed as written in the file; with "auto" the 0-based case is checked
    # after parsing, once it is known whether the file is 0-based.
    if n_features is None:
        index_limit = MAX_FEATURE_INDEX
    elif zero_based is True:
        index_limit = n_features - 1
    else:
        index_limit = n_features
    one_based = zero_based is False

    (
        status,
        err_line,
        err_start,
        err_end,
        err_a,
        err_b,
        n_rows,
        nnz,
        indptr,
        indices,
        data,
        labels,
        qids,
        min_index,
        max_index,
        max_index_line,
        fallback,
        n_fallback,
    ) = _parse.parse_buffer(np.frombuffer(buf, dtype=np.uint8), one_based, np.int64(index_limit))

    # Rare tokens the kernel could not round exactly: parse them with float(). They all come
    # before any error the kernel stopped at, so an infinite one is the first error.
    for start, end, target, line in fallback[:n_fallback].tolist():
        value = float(buf[start:end].decode("ascii"))
        if math.isinf(value):
            if target < 0:
                raise DataFormatError(name, line, "label is infinite")
            raise DataFormatError(name, line, f"value is infinite (feature {indices[target]})")
        if target < 0:
            labels[-target - 1] = value
        else:
            data[target] = value

    if status != _parse.OK:
        token = _token_text(buf, err_start, err_end)
        what = _error_message(status, token, int(err_a), int(err_b), n_features, zero_based)
        error = ZeroIndexError if status == _parse.ZERO_INDEX else DataFormatError
        raise error(name, int(err_line), what)

    is_zero_based = zero_based is True or (zero_based == "auto" and nnz > 0 and min_index == 0)
    if n_features is None:
        n_cols = 0 if nnz == 0 else int(max_index) + (1 if is_zero_based else 0)
    else:
        n_cols = n_features
        if nnz > 0 and is_zero_based and max_index >= n_features:
            what = f"feature index {int(max_index)} too large (n_features={n_features}, 0-based)"
            raise DataFormatError(name, int(max_index_line), what)

    indices = indices[:nnz]
    if not is_zero_based and nnz > 0:
        indices -= 1
    index_dtype = np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64
    indices = indices.astype(index_dtype)
    indptr = indptr[: n_rows + 1].astype(index_dtype)
    values = data[:nnz].astype(dtype)  # also drops the unused tail of the buffer
    X = sp.csr_matrix((values, indices, indptr), shape=(n_rows, n_cols), copy=False)
    X.has_sorted_indices = True
    y = labels[:n_rows].copy()
    if query_id:
        return X, y, qids[:n_rows].copy()
    return X, y


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


def _error_message(
    status: int,
    token: str,
    a: int,
    b: int,
    n_features: int | None,
    zero_based: bool | str,
) -> str:
    """Human-readable text for an error code of `_parse.parse_buffer`."""
    p = _parse
    if status == p.BAD_LABEL:
        return f"bad label '{token}'"
    if status == p.MISSING_LABEL:
        return f"missing label (line starts with '{token}')"
    if status == p.LABEL_NAN:
        return "label is NaN"
    if status == p.LABEL_INF:
        return "label is infinite"
    if status == p.BAD_QID:
        return f"bad qid '{token}'"
    if status == p.MISPLACED_QID:
        return f"'{token}': qid must come right after the label"
    if status == p.BAD_TOKEN:
        return f"expected index:value, got '{token}'"
    if status == p.BAD_INDEX:
        return f"bad feature index '{token}'"
    if status == p.NEGATIVE_INDEX:
        return f"negative index {a}"
    if status == p.ZERO_INDEX:
        return "index 0 is not allowed with 1-based indices (use zero_based=True or 'auto')"
    if status == p.INDEX_TOO_LARGE:
        if n_features is None:
            return f"feature index {token} too large (the maximum is 2**40 = {MAX_FEATURE_INDEX})"
        suffix = ", 0-based" if zero_based is True else ""
        return f"feature index {token} too large (n_features={n_features}{suffix})"
    if status == p.NOT_ASCENDING:
        return f"indices must be ascending: {a} after {b}"
    if status == p.DUPLICATE_INDEX:
        return f"duplicate index {a}"
    if status == p.BAD_VALUE:
        return f"bad value '{token}' for feature {a}"
    if status == p.VALUE_NAN:
        return f"value is NaN (feature {a})"
    if status == p.VALUE_INF:
        return f"value is infinite (feature {a})"
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
    temporary file in the same directory and renamed over `path`.

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
    y = np.asarray(y, dtype=np.float64)
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
    label_text = _format_numbers(y)
    value_text = _format_numbers(data)
    index_text = (X.indices.astype(np.int64) + offset).astype(str).tolist()
    features = [f"{i}:{v}" for i, v in zip(index_text, value_text, strict=True)]
    indptr = X.indptr.tolist()
    if query_id is None:
        heads = label_text
    else:
        heads = [f"{lab} qid:{q}" for lab, q in zip(label_text, query_id.tolist(), strict=True)]
    lines = []
    for r in range(n_rows):
        row = features[indptr[r] : indptr[r + 1]]
        lines.append(heads[r] + " " + " ".join(row) if row else heads[r])
    text = "\n".join(lines) + "\n" if lines else ""
    payload = text.encode("ascii")

    name = os.fsdecode(os.fspath(path))
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _DECOMPRESSORS:
        payload = _DECOMPRESSORS[suffix][1](payload)
    atomic_write_bytes(name, payload)


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
