"""Validation at the edge: turn what the user passes into what the kernels accept.

Kernels take CSR arrays of float32/float64 values with int32/int64 indices, sorted and without
duplicates within a row. Input already in that form is used as is (no copy); anything else is
converted once here, with clear errors for what cannot be trained on.
"""

from __future__ import annotations

import math
import mmap
import numbers as numbers_abc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from numba import njit

from .errors import InvalidInputError
from .parallel import PARALLEL_MIN_NNZ, effective_n_jobs

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# Training refuses float64 values of this magnitude or more: every solver forms x'x (a sum of
# squares) and y w'x, and a square of 2^500 (about 3.3e150) or more, summed over a row, can
# overflow float64 (2^1024) and turn the model NaN. float32 values (up to 2^128) are far below.
TRAINABLE_MAX = 2.0**500
# The smallest magnitude a float64 -> float32 cast rounds to infinity (halfway between the
# largest float32, 2**128 - 2**104, and 2**128; the tie goes to the even 2**128). Values kept
# as float32 must stay below it: a finite value made infinite is a value lost.
FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


@njit(cache=True, nogil=True)
def _any_at_least(bits, mask, threshold) -> bool:
    """Whether any of the floats whose bit patterns are ``bits`` (uint64 for float64, uint32
    for float32) has its exponent bits (``bits & mask``) at or above ``threshold``: with the
    all-ones exponent, NaN or infinite; with a lower one, also that large. An OR over integer
    tests, with no early exit, so the loop runs in SIMD lanes (a test of np.isfinite per value
    with a return took 13 ms on pypi-recent's 9.4M values); eight values a step, OR-ed apart
    from the running result, make it a pass at memory speed (as fast as np.sum, 1.5x the
    plain loop)."""
    n = bits.shape[0]
    found = False
    k = 0
    while k + 8 <= n:
        block = False
        for j in range(8):
            block |= (bits[k + j] & mask) >= threshold
        found |= block
        k += 8
    for j in range(k, n):
        found |= (bits[j] & mask) >= threshold
    return found


def all_finite(values: np.ndarray, n_jobs: int | None = -1, below: float | None = None) -> bool:
    """Whether a float32/float64 array holds no NaN or infinity (and, with ``below``, a power
    of two, no value of that magnitude or more); in ``n_jobs`` threads over contiguous parts
    when it is large (the answer does not depend on them)."""
    if values.dtype == np.float32:
        bits, mask = values.view(np.uint32), np.uint32(0x7F800000)
        threshold = mask if below is None or below >= 2.0**128 else np.uint32(
            (int(math.log2(below)) + 127) << 23)
    else:
        bits, mask = values.view(np.uint64), np.uint64(0x7FF0000000000000)
        threshold = mask if below is None else np.uint64((int(math.log2(below)) + 1023) << 52)
    n_parts = min(effective_n_jobs(n_jobs), max(1, bits.shape[0] // PARALLEL_MIN_NNZ))
    if n_parts <= 1:
        return not _any_at_least(bits, mask, threshold)
    cuts = [bits.shape[0] * k // n_parts for k in range(n_parts + 1)]
    with ThreadPoolExecutor(max_workers=n_parts) as pool:
        found = pool.map(
            lambda k: _any_at_least(bits[cuts[k] : cuts[k + 1]], mask, threshold), range(n_parts)
        )
        return not any(list(found))


def _first_bad_value(X: sp.csr_matrix, name: str, below: float | None,
                     why: str = "float64 in training",
                     rows_from: int = 0) -> InvalidInputError:  # fmt: skip
    """The error naming the first value of X (row and column, 0-based; the rows numbered from
    ``rows_from``) that is NaN or infinite, or (``below``) too large to train on (``why``:
    what such a value overflows, said in the message)."""
    data = X.data
    bad = ~np.isfinite(data)
    if below is not None:
        # (float64: a float32 array compared with 2^500 casts the bound and warns)
        bad |= np.abs(data.astype(np.float64, copy=False)) >= below
    p = int(np.flatnonzero(bad)[0])
    row = rows_from + int(np.searchsorted(X.indptr, p, side="right")) - 1
    where = f"row {row}, column {int(X.indices[p])}"
    if np.isfinite(data[p]):
        value, exponent = float(data[p]), math.log2(below)
        if exponent.is_integer():
            value, bound = f"{value:.3g}", f"2^{exponent:.0f} ({below:.2g})"
        else:  # (digits enough to tell the value from the bound)
            value, bound = f"{value:.9g}", f"{below:.9g}"
        return InvalidInputError(
            f"{name} holds {value} ({where}): values of magnitude {bound} or more "
            f"overflow {why}; scale the features"
        )
    return InvalidInputError(f"{name} contains NaN or infinity ({where})")


def as_csr(
    X,
    *,
    name: str = "X",
    check_finite: bool = True,
    n_jobs: int | None = -1,
    trainable: bool = False,
    rows_from: int = 0,
) -> sp.csr_matrix:
    """X (any SciPy sparse matrix/array or 2-D array-like) as canonical CSR of float32/float64.

    CSR input with sorted indices, no duplicates, a float32/float64 dtype, int32/int64
    indices and contiguous arrays is returned as is (same arrays, no copy).
    ``check_finite=False`` leaves the check for NaN and infinity to a caller whose own pass
    over the values reveals them; ``n_jobs``: threads for that check (``all_finite``).
    ``trainable``: also refuse values of magnitude ``TRAINABLE_MAX`` or more (in the same
    pass). The error names the first bad value's row, X's rows numbered from ``rows_from``
    (a piece of larger data).
    """
    X = sparse_frame_as_csr(X)
    if sp.issparse(X):
        if np.iscomplexobj(X):
            raise InvalidInputError(f"{name} is complex; linsvm needs real values")
        if X.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D, got {X.ndim}-D")
        if X.format in ("csc", "coo"):
            _check_structure(X, name)  # (SciPy's conversion trusts them: a crash, else)
        if X.format != "csr":
            X = X.tocsr()
        if X.dtype not in _FLOAT_DTYPES:
            X = X.astype(np.float64)
        if X.indices.dtype not in _INDEX_DTYPES or X.indptr.dtype != X.indices.dtype:
            X = sp.csr_matrix(
                (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), shape=X.shape
            )
        _check_structure(X, name)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()  # also sorts the indices
        if not all(a.flags.c_contiguous for a in (X.data, X.indices, X.indptr)):
            # (views into larger arrays: the kernels are compiled for contiguous ones)
            X = sp.csr_matrix((np.ascontiguousarray(X.data), np.ascontiguousarray(X.indices),
                               np.ascontiguousarray(X.indptr)), shape=X.shape)  # fmt: skip
        if not isinstance(X, sp.csr_matrix):
            X = sp.csr_matrix(X)  # shares the arrays of a csr_array
    else:
        X = dense_to_csr(dense_values(X, name))
    below = TRAINABLE_MAX if trainable else None
    if check_finite and not all_finite(X.data, n_jobs, below):
        raise _first_bad_value(X, name, below, rows_from=rows_from)
    return X


def sparse_frame_as_csr(X):
    """A pandas DataFrame whose columns are all sparse (fill value 0) as CSR, which
    ``np.asarray`` would make dense (1 GB for 20,000 x 5,000 at density 0.001); anything else
    as it is."""
    if not type(X).__module__.startswith("pandas") or not hasattr(X, "columns"):
        return X
    try:
        return X.sparse.to_coo().tocsr()
    except (AttributeError, TypeError, ValueError):  # (not all sparse, or another fill value)
        return X


def dense_values(X, name: str = "X") -> np.ndarray:
    """Array-like X as a 2-D array of float32 or float64 (other numbers cast to float64);
    complex values, non-numbers (strings, pandas' NA) and other shapes refused in one line."""
    if isinstance(X, list | tuple) and X and isinstance(X[0], dict):
        raise InvalidInputError(
            f"{name} holds rows as dicts (LIBLINEAR's svm_read_problem gives them): read the "
            "file with linsvm.read_libsvm, or make a matrix of them (scikit-learn's "
            "DictVectorizer)"
        )
    try:
        if np.iscomplexobj(X):
            raise InvalidInputError(f"{name} is complex; linsvm needs real values")
        arr = np.asarray(X)
        if arr.dtype.kind in "USMm":
            # (text and dates: NumPy would convert them to numbers; scikit-learn refuses them)
            raise InvalidInputError(f"{name} must be numeric, got an array of {arr.dtype}")
        if arr.ndim == 2 and arr.dtype not in _FLOAT_DTYPES:
            arr = arr.astype(np.float64)
    except InvalidInputError:
        raise
    except (TypeError, ValueError) as exc:  # (also a ragged list: NumPy's inhomogeneous shape)
        raise InvalidInputError(f"{name} must be numeric: {exc}") from None
    if arr.ndim == 1:
        # (LIBLINEAR's Python interface takes the labels first: train(y, x))
        raise InvalidInputError(f"{name} must be 2-D, got shape {arr.shape}: one row is "
                                f"{name}.reshape(1, -1), and the rows come before the labels, "
                                "train(X, y)")  # fmt: skip
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-D, got shape {arr.shape}")
    return arr


@njit(cache=True, nogil=True)
def _row_counts(A, counts) -> None:
    """counts[i] = the entries of row i of the 2-D array A that are not zero (NaN counts)."""
    for i in range(A.shape[0]):
        c = 0
        for j in range(A.shape[1]):
            if A[i, j] != 0.0:
                c += 1
        counts[i] = c


@njit(cache=True, nogil=True)
def _fill_rows(A, indptr, indices, data) -> None:
    """The CSR arrays of A, its rows' offsets already in indptr."""
    for i in range(A.shape[0]):
        p = indptr[i]
        for j in range(A.shape[1]):
            if A[i, j] != 0.0:
                indices[p] = j
                data[p] = A[i, j]
                p += 1


def dense_to_csr(A: np.ndarray) -> sp.csr_matrix:
    """The 2-D float32/float64 array A as CSR (its dtype; int32 indices where they fit), in
    two compiled passes: the peak is A and the result (SciPy's conversion goes through COO's
    int64 coordinates of every entry: about twice that)."""
    counts = np.empty(A.shape[0], dtype=np.int64)
    _row_counts(A, counts)
    nnz = int(counts.sum())
    index_dtype = np.int32 if max(nnz, A.shape[1]) <= np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(A.shape[0] + 1, dtype=index_dtype)
    np.cumsum(counts, out=indptr[1:])
    del counts
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=A.dtype)
    _fill_rows(A, indptr, indices, data)
    X = sp.csr_matrix((data, indices, indptr), shape=A.shape, copy=False)
    X.has_canonical_format = True
    return X


def _check_structure(X, name: str) -> None:
    """Refuse CSR, CSC and COO arrays that point outside the matrix (SciPy builds them
    unchecked from arrays, and its conversions and the kernels would read and write past
    them, or past w: a crash or wrong results): indices outside the shape, a pointer that does
    not start at 0, decreases, or ends past the entries (indices or values) it has."""
    kind = X.format.upper()
    if X.format == "coo":
        rows, cols, data = X.row, X.col, X.data
        if not rows.shape == cols.shape == data.shape:
            raise InvalidInputError(
                f"{name} is not a valid COO matrix: {rows.shape[0]} rows, {cols.shape[0]} "
                f"columns and {data.shape[0]} values"
            )
        for what, at, size in (("row", rows, X.shape[0]), ("column", cols, X.shape[1])):
            if at.shape[0] and (at.min() < 0 or at.max() >= size):
                bad = at[(at < 0) | (at >= size)][0]
                raise InvalidInputError(f"{name} is not a valid COO matrix: {what} index "
                                        f"{bad} outside 0..{size - 1}")  # fmt: skip
        return
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    minor = "column" if X.format == "csr" else "row"
    indptr, indices = X.indptr, X.indices
    n_entries = min(indices.shape[0], X.data.shape[0])
    if indptr.shape[0] != n_major + 1 or indptr[0] != 0 or indptr[-1] > n_entries:
        raise InvalidInputError(f"{name} is not a valid {kind} matrix: its pointer does not "
                                f"fit its {indices.shape[0]} indices and {X.data.shape[0]} "
                                "values")  # fmt: skip
    if (indptr[1:] < indptr[:-1]).any():
        at = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
        raise InvalidInputError(f"{name} is not a valid {kind} matrix: its pointer decreases "
                                f"at {'row' if X.format == 'csr' else 'column'} {at}")  # fmt: skip
    if indices.shape[0] and (indices.min() < 0 or indices.max() >= n_minor):
        bad = indices[(indices < 0) | (indices >= n_minor)][0]
        raise InvalidInputError(f"{name} is not a valid {kind} matrix: {minor} index {bad} "
                                f"outside 0..{n_minor - 1}")  # fmt: skip


def is_integer(value) -> bool:
    """Whether ``value`` is an integer of Python or NumPy (not a bool, nor a float of integral
    value): what a count of iterations, rows or bytes must be."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def check_bias(bias: float) -> None:
    """Refuse a bias (LIBLINEAR's -B, a feature every row holds) that is not finite, or of
    ``TRAINABLE_MAX`` or more: it would overflow as a value of X would (the solvers returned
    w = 0 as converged). A negative bias is none, whatever its size."""
    if not math.isfinite(bias):
        raise InvalidInputError(f"bias must be finite, got {bias}")
    if bias >= TRAINABLE_MAX:
        raise InvalidInputError(
            f"bias {bias:.3g}: values of magnitude 2^{math.log2(TRAINABLE_MAX):.0f} "
            f"({TRAINABLE_MAX:.2g}) or more overflow float64 in training; scale it down"
        )


def check_trainable(X: sp.csr_matrix, below: float, why: str, name: str = "X",
                    n_jobs: int | None = -1, exact: bool = False) -> None:  # fmt: skip
    """Refuse values of X of magnitude ``below`` (rounded down to a power of 2 unless
    ``exact``: a bound estimated from a map's growth) or more, which would overflow what
    ``why`` says in training. (A bound of TRAINABLE_MAX or more, infinite included, refuses
    nothing more than ``as_csr(trainable=True)`` does.)"""
    if not below < TRAINABLE_MAX:
        return
    rounded = 2.0 ** math.floor(math.log2(below))
    if all_finite(X.data, n_jobs, rounded):  # (the fast test takes powers of 2 only)
        return
    if not exact:
        raise _first_bad_value(X, name, rounded, why)
    if not np.all(np.abs(X.data.astype(np.float64, copy=False)) < below):
        raise _first_bad_value(X, name, below, why)


def check_labels(y, n_rows: int, rows_from: int = 0) -> np.ndarray:
    """y as a 1-D array of n_rows labels without NaN (a row named in an error numbered from
    ``rows_from``: a piece of larger data)."""
    if y is None:
        raise InvalidInputError("y is required: the labels or targets of X's rows")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise InvalidInputError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_rows:
        raise InvalidInputError(f"X has {n_rows} rows but y has {y.shape[0]} labels")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise InvalidInputError(
            f"y contains NaN or infinity (row {rows_from + int(np.argmin(np.isfinite(y)))})")
    if y.dtype.kind not in "biufUSO":
        raise InvalidInputError(f"labels of dtype {y.dtype} are not supported")
    if y.dtype.kind == "O":
        # Missing values in object columns: None, or NaN (the only value unequal to itself).
        try:
            missing = np.equal(y, None) | np.not_equal(y, y)
        except TypeError:  # (pandas' NA compares to nothing: the slow way, a label at a time)
            missing = np.fromiter((_is_missing(v) for v in y), dtype=bool, count=y.shape[0])
        if missing.any():
            raise InvalidInputError(
                f"y contains NaN or a missing label "
                f"(row {rows_from + int(np.flatnonzero(missing)[0])})"
            )
    return y


def _is_missing(label) -> bool:
    """Whether one label is a missing value: None, NaN, or one of pandas' NA and NaT, which
    compare to nothing."""
    if label is None:
        return True
    try:
        return bool(label != label)
    except TypeError:
        return True


def real_values(values, name: str) -> np.ndarray:
    """An array-like of real numbers as float64; text, complex values and ragged sequences
    refused in one line naming ``name`` (NumPy would raise its own words, or drop an
    imaginary part)."""
    try:
        if np.iscomplexobj(values):
            raise TypeError("complex values")
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be real numbers: {exc}") from None


def check_sample_weight(sample_weight, n_rows: int) -> np.ndarray | None:
    """Per-row weights as float64 (n_rows,), finite and >= 0; None stays None."""
    if sample_weight is None:
        return None
    sw = real_values(sample_weight, "sample_weight")
    if sw.ndim == 0:
        sw = np.full(n_rows, float(sw))
    if sw.shape != (n_rows,):
        raise InvalidInputError(f"sample_weight must have shape ({n_rows},), got {sw.shape}")
    if not np.isfinite(sw).all():
        raise InvalidInputError(
            f"sample_weight contains NaN or infinity (row {np.argmin(np.isfinite(sw))})"
        )
    if (sw < 0).any():
        raise InvalidInputError("sample_weight must be >= 0")
    return sw


# Rows of labels grouped at a time by ``_unique_by_chunks``.
_LABEL_CHUNK = 1 << 20
# ``group_labels`` finds at most this many classes in one compiled pass over the labels
# (each row compared with the classes found so far); more go through np.unique's sort.
_FEW_CLASSES = 64


@njit(cache=True, nogil=True)
def _group_few(y, max_classes, class_index):
    """LIBLINEAR's grouping in one pass: the distinct labels of ``y`` in order of first
    appearance (at most ``max_classes``), ``class_index[i]`` the position of y[i] among them.
    Returns (number of classes, their first rows); -1 classes when there are more."""
    found = np.empty(max_classes, dtype=y.dtype)
    first_rows = np.empty(max_classes, dtype=np.int64)
    n_classes = 0
    for i in range(y.shape[0]):
        label = y[i]
        k = -1
        for j in range(n_classes):  # selects, not branches: labels in random order stay fast
            k = j if found[j] == label else k
        if k < 0:  # a new class (rare: the only branch taken unpredictably)
            if n_classes == max_classes:
                return -1, first_rows
            found[n_classes] = label
            first_rows[n_classes] = i
            k = n_classes
            n_classes += 1
        class_index[i] = k
    return n_classes, first_rows


def _unique_by_chunks(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(y, return_index=True, return_inverse=True)`` for numeric labels, a chunk
    of rows at a time: the distinct values first, then each chunk's codes. np.unique sorts the
    whole array with an argsort beside it (about 40 bytes a row at its peak: 0.7 GB for 18M
    rows, more than block minimisation's budget for its blocks); this holds the inverse (int32
    once the classes fit) and a chunk's temporaries."""
    n = y.shape[0]
    uniq = np.unique(np.concatenate([np.unique(y[i : i + _LABEL_CHUNK])
                                     for i in range(0, n, _LABEL_CHUNK)]))  # fmt: skip
    inverse = np.empty(n, dtype=np.int32 if uniq.shape[0] < 2**31 else np.int64)
    first = np.full(uniq.shape[0], n, dtype=np.int64)
    for i in range(0, n, _LABEL_CHUNK):
        codes = np.searchsorted(uniq, y[i : i + _LABEL_CHUNK])
        inverse[i : i + codes.shape[0]] = codes
        seen, at = np.unique(codes, return_index=True)
        first[seen] = np.minimum(first[seen], at + i)
    return uniq, first, inverse


def group_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LIBLINEAR's class order: (labels in order of first appearance, class index per row).

    For two classes labelled -1 and +1, +1 comes first, so that the binary problem's positive
    class is the +1 data (as LIBLINEAR's ``group_classes``).
    """
    y = np.asarray(y)
    if (
        y.ndim == 1
        and y.dtype.kind in "biuf"
        and y.dtype.isnative
        and y.dtype != np.float16  # (not Numba types: half and extended precision)
        and y.dtype.itemsize <= 8
        and y.shape[0] > 0
    ):
        # numbers (NaN refused by check_labels): one compiled pass when the classes are few
        class_index = np.empty(y.shape[0], dtype=np.int32)
        n_classes, first_rows = _group_few(y, _FEW_CLASSES, class_index)
        if n_classes > 0:
            return _binary_order(y[first_rows[:n_classes]], class_index)
    if y.ndim == 1 and y.dtype.kind in "iuf" and y.shape[0] > _LABEL_CHUNK:
        uniq, first, inverse = _unique_by_chunks(y)
    else:
        try:
            uniq, first, inverse = np.unique(y, return_index=True, return_inverse=True)
        except TypeError as exc:
            raise InvalidInputError(f"labels must be of one comparable type: {exc}") from None
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    labels = uniq[order]
    class_index = rank[inverse.ravel()].astype(np.int32)  # 4 bytes a row: kept through training
    return _binary_order(labels, class_index)


def minus_one_first(labels: np.ndarray) -> bool:
    """Whether ``labels`` (in order of appearance) are -1 then +1, which LIBLINEAR swaps so
    that +1 comes first: numbers, also in an object array (a pandas column of objects),
    booleans not."""
    numbers = labels.dtype.kind in "iuf" or (labels.dtype.kind == "O" and all(
        isinstance(v, numbers_abc.Real) and not isinstance(v, (bool, np.bool_)) for v in labels))
    return labels.shape[0] == 2 and numbers and labels[0] == -1 and labels[1] == 1


def _binary_order(labels: np.ndarray, class_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels -1 and +1 (in this order of appearance) swapped so that +1 comes first."""
    if minus_one_first(labels):
        labels = labels[::-1].copy()
        np.subtract(1, class_index, out=class_index)
    return labels, class_index


# Whether anonymous memory can decline transparent huge pages (Linux)
_SMALL_PAGES = hasattr(mmap.mmap, "madvise") and hasattr(mmap, "MADV_NOHUGEPAGE")
_PAGE_BYTES = 4096
_HUGE_PAGE_BYTES = 2 << 20


def table_resident_bytes(width: int, itemsize: int, n_written: int) -> int:
    """The most of a table of ``width`` entries (``untouched_zeros``) that ``n_written``
    written entries make resident: a page each, at most the whole table."""
    page = _PAGE_BYTES if _SMALL_PAGES else _HUGE_PAGE_BYTES
    return min(width * itemsize, n_written * page)


def untouched_zeros(n: int, dtype) -> np.ndarray:
    """n zeros whose pages become resident only where written: anonymous memory that
    declines transparent huge pages where it can (NumPy asks for them on large arrays, and a
    written entry then makes 2 MiB resident: a table over a width of 3e8 took 1.1 GB for
    2,000 used columns; filled with -1 instead of zeros, 1.2 GB whatever the columns)."""
    dtype = np.dtype(dtype)
    area = mmap.mmap(-1, max(n * dtype.itemsize, 1))
    if _SMALL_PAGES:
        area.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(area, dtype=dtype, count=n)


@njit(cache=True, nogil=True)
def _used_columns(indices, n_features) -> tuple[np.ndarray, bool]:
    """(the columns ``indices`` holds, ascending; whether they are fewer than half of
    ``n_features``), the scan stopped (no columns returned) as soon as half are seen: a byte
    a column marked, where np.bincount's counts took 93 ms on pypi-recent's 9.4M indices, a
    cost of every training call; this scan stops there after 2 ms."""
    seen = np.zeros(n_features, dtype=np.uint8)
    distinct = 0
    for k in range(indices.shape[0]):
        j = indices[k]
        if seen[j] == 0:
            seen[j] = 1
            distinct += 1
            if 2 * distinct >= n_features:
                return np.zeros(0, dtype=np.int64), False
    return np.flatnonzero(seen), 2 * distinct < n_features


class UsedColumns:
    """The columns of a CSR matrix that hold a value, where fewer than half do (hashed
    features, a wide declared width): the solvers then train on X with those columns only and
    the weights come back over every column, zero on the others, which is their optimum for
    every regularised loss here (an unused column's weight enters only the regulariser).
    Weight vectors carry the bias weight(s) after the features, kept as they are.

    Why: solvers that keep dense vectors over the weights do O(width) work per step, epoch or
    CG iteration (SGD-QN's curvature, SGD-S/M's norms, PCD's sweep, the threaded Newton's
    sums, the cutting planes' cuts): a9a hashed to 2^24 columns took SGD-QN 58 s against
    0.03 s at its 123.
    """

    def __init__(self, columns: np.ndarray, n_features: int) -> None:
        self.columns = columns  # sorted, int64
        self.n_features = n_features

    @classmethod
    def of(cls, X: sp.csr_matrix) -> UsedColumns | None:
        """The used columns of X, or None where at least half are used (nothing to gain)."""
        used, fewer_than_half = _used_columns(X.indices, X.shape[1])
        return cls(used.astype(np.int64, copy=False), X.shape[1]) if fewer_than_half else None

    def places(self, dtype) -> np.ndarray:
        """Each column's place among the used ones (0 on the unused), shape (n_features,):
        resident only in the pages that hold a used column (``untouched_zeros``)."""
        place = untouched_zeros(self.n_features, dtype)
        place[self.columns] = np.arange(self.columns.shape[0], dtype=dtype)
        return place

    def take(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """X over the used columns (its values and row pointers shared, indices renumbered)."""
        place = self.places(X.indices.dtype)
        return sp.csr_matrix((X.data, place[X.indices], X.indptr),
                             shape=(X.shape[0], self.columns.shape[0]))  # fmt: skip

    def take_w(self, w: np.ndarray) -> np.ndarray:
        """Weights over every column (last axis; bias weights after them) -> over the used."""
        w = np.asarray(w)
        return np.concatenate([w[..., self.columns], w[..., self.n_features :]], axis=-1)

    def expand_w(self, w: np.ndarray) -> np.ndarray:
        """Weights over the used columns (last axis; bias weights after them) -> over every
        column, zero on the unused."""
        w = np.asarray(w)
        n_used = self.columns.shape[0]
        full = np.zeros(w.shape[:-1] + (self.n_features + w.shape[-1] - n_used,), dtype=w.dtype)
        full[..., self.columns] = w[..., :n_used]
        full[..., self.n_features :] = w[..., n_used:]
        return full
