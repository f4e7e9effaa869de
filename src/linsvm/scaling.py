"""Feature scaling as LIBSVM's ``svm-scale``, the tool LIBLINEAR ships for it.

Each feature j is mapped linearly from its range over the rows the scaling is found on,
[min_j, max_j], onto [lower, upper] (default [-1, 1])::

    x' = lower + (upper - lower) (x - min_j) / (max_j - min_j)

with x = min_j and x = max_j mapped to lower and upper exactly, as svm-scale does. A row's
missing features are zeros and count in min_j and max_j; a feature of one value over those rows
(min_j = max_j) is left out of the scaled rows. A zero whose image is not zero becomes a
stored entry: with lower = -1 every feature whose minimum is 0 gains an entry in every row
that lacks it, so that sparse non-negative data becomes dense; lower = 0 keeps it as sparse as
it was. The labels may be mapped too, from [y_min, y_max] onto [y_lower, y_upper] (regression
targets; svm-scale's ``-y``).

The scaling found on training rows is applied unchanged to test rows (svm-scale's ``-s`` and
``-r``): their values may fall outside [lower, upper]. A feature the test rows have but the
scaling leaves out (absent or of one value in the training rows) is left out of them too, with
a warning where the test rows hold more than one value of it. ``Scaling.save`` writes the
scaling as svm-scale's range file and ``load_scaling`` reads one, so either tool reads the
other's.

Why the exact endpoints and svm-scale's order of operations: the command ``linsvm scale``
writes the same bytes as ``svm-scale`` for the same input and options (its numbers as svm-scale
prints them: the labels to 17 significant digits, the features to 6, ``%g``).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import _memory
from .data import as_csr
from .errors import DataFormatError, InvalidInputError
from .io import _format, _parse

# ----------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _column_ranges(indptr, indices, data, n_columns, low, high) -> None:
    """low[j], high[j] = the smallest and largest value of column j over the rows, a missing
    entry counting as 0 (shapes: low, high (n_columns,)).

    A zero extreme has the sign of the column's last zero in row order, as svm-scale's
    max(x, y) macro keeps the later of equal values: a stored -0 after the last row that
    lacks the column gives -0 (its range file says "-0")."""
    n_rows = indptr.shape[0] - 1
    stored = np.zeros(n_columns, dtype=np.int64)
    last_row = np.full(n_columns, -1, dtype=np.int64)  # the last row holding the column
    run = np.zeros(n_columns, dtype=np.int64)  # rows holding it in a row up to last_row
    last_zero_row = np.full(n_columns, -1, dtype=np.int64)  # the last stored +-0 ...
    last_zero = np.zeros(n_columns)  # ... and its value
    for j in range(n_columns):
        low[j] = np.inf
        high[j] = -np.inf
    for i in range(n_rows):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = np.float64(data[k])
            low[j] = min(low[j], v)
            high[j] = max(high[j], v)
            stored[j] += 1
            run[j] = run[j] + 1 if last_row[j] == i - 1 else 1
            last_row[j] = i
            if v == 0.0:
                last_zero_row[j] = i
                last_zero[j] = v
    for j in range(n_columns):
        if stored[j] < n_rows:  # (some row lacks it: a zero)
            low[j] = min(low[j], 0.0)
            high[j] = max(high[j], 0.0)
        # the last row lacking the column (a +0), against the last stored zero
        last_missing = n_rows - 1 if last_row[j] < n_rows - 1 else n_rows - 1 - run[j]
        zero = last_zero[j] if last_zero_row[j] > last_missing else 0.0
        if low[j] == 0.0:
            low[j] = zero
        if high[j] == 0.0:
            high[j] = zero


@njit(cache=True, nogil=True, inline="always")
def _scaled(v, low, high, lower, upper):
    """svm-scale's map of one value (low < high), its order of operations kept."""
    if v == low:
        return lower
    if v == high:
        return upper
    return lower + (upper - lower) * (v - low) / (high - low)


@njit(cache=True, nogil=True)
def _scale_rows(indptr, indices, data, low, high, lower, upper, zero_image, dense_columns,
                count_only, out_indptr, out_indices, out_data):  # fmt: skip
    """The scaled rows as CSR (columns of the parameters only: those with low < high).

    ``dense_columns``: the columns (ascending) whose image of 0 is not 0, ``zero_image`` that
    image for each column; a row's missing entry of such a column becomes a stored one. With
    ``count_only`` fills out_indptr only (the entries of each row); else out_indices and
    out_data too, from out_indptr. Zeros of the result are left out, as svm-scale prints none.
    """
    n_rows = indptr.shape[0] - 1
    width = low.shape[0]
    n_dense = dense_columns.shape[0]
    if count_only:
        out_indptr[0] = 0
    for i in range(n_rows):
        at = out_indptr[i]
        d = 0
        k = indptr[i]
        end = indptr[i + 1]
        while k < end or d < n_dense:
            # the next column of the row: a stored entry or a dense column it lacks (width:
            # none left; every stored column is below it)
            j_stored = indices[k] if k < end else width
            j_dense = dense_columns[d] if d < n_dense else width
            if j_stored < width and j_stored <= j_dense:
                j = j_stored
                v = np.float64(data[k])
                k += 1
                if j_dense == j_stored:
                    d += 1
                if not (low[j] < high[j]):
                    continue
                s = _scaled(v, low[j], high[j], lower, upper)
            else:
                j = j_dense
                d += 1
                s = zero_image[j]
            if s != 0.0:
                if not count_only:
                    out_indices[at] = j
                    out_data[at] = s
                at += 1
        if count_only:
            out_indptr[i + 1] = at


# The longest line of a range file: a 19-digit index, two "%.17g" values, two spaces and a
# newline.
_MAX_RANGE_LINE_BYTES = 19 + 2 * _format.MAX_VALUE_BYTES + 3


@njit(cache=True, nogil=True)
def _format_range_lines(features, low_bits, high_bits, k, part, out, pos):
    """Write the range file's lines "index min max" of the features ``features[k:]`` (0-based,
    written + 1) into ``out`` from ``pos``, from item ``part`` of the first (0: its index, 1:
    its min, 2: its max): the numbers as "%.17g", one space between them, a newline after.

    features : (n_lines,) int64; low_bits, high_bits : (n_features,) uint64 -- the IEEE bits
        of the float64 ranges (``.view(np.uint64)``); out : uint8 with room for every line
        left (_MAX_RANGE_LINE_BYTES each).

    Returns (k, part, n_bytes, status): out[:n_bytes] holds the text; status _format.DONE
    (every line written) or _format.FALLBACK (the item ``part`` of the line ``k`` is to be
    formatted by Python, then continue after it).
    """
    while k < features.shape[0]:
        j = features[k]
        if part == 0:
            pos = _format._put_int(out, pos, j + 1)
            out[pos] = 32
            pos += 1
            part = 1
        if part == 1:
            end = _format.write_g(low_bits[j], out, pos, 17)
            if end < 0:
                return k, part, pos, _format.FALLBACK
            out[end] = 32
            pos = end + 1
            part = 2
        end = _format.write_g(high_bits[j], out, pos, 17)
        if end < 0:
            return k, part, pos, _format.FALLBACK
        out[end] = 10
        pos = end + 1
        part = 0
        k += 1
    return k, part, pos, _format.DONE


# ----------------------------------------------------------------------------- the scaling


@dataclass(frozen=True, eq=False)
class Scaling:
    """A feature scaling (and optionally a label scaling) as svm-scale's range file holds it.

    Attributes
    ----------
    lower, upper : float
        The interval every feature is mapped onto (lower < upper).
    feature_min, feature_max : ndarray of shape (n_features,), float64
        The range of feature j + 1 over the rows the scaling was found on (missing entries
        counting as 0). A feature with feature_min == feature_max is left out of scaled rows.
    y_limits : (y_lower, y_upper) or None
        The interval the labels are mapped onto; None: labels are left as they are.
    y_range : (y_min, y_max) or None
        The labels' range over those rows (given with ``y_limits``).
    """

    lower: float
    upper: float
    feature_min: np.ndarray
    feature_max: np.ndarray
    y_limits: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        check_limits(self.lower, self.upper, "lower/upper")
        low = np.ascontiguousarray(self.feature_min, dtype=np.float64)
        high = np.ascontiguousarray(self.feature_max, dtype=np.float64)
        if low.ndim != 1 or low.shape != high.shape:
            raise InvalidInputError("feature_min and feature_max must be 1-D of one length")
        if not (np.isfinite(low).all() and np.isfinite(high).all() and (low <= high).all()):
            raise InvalidInputError("feature ranges must be finite with min <= max")
        object.__setattr__(self, "feature_min", low)
        object.__setattr__(self, "feature_max", high)
        if (self.y_limits is None) != (self.y_range is None):
            raise InvalidInputError("y_limits and y_range are given together or not at all")
        if self.y_limits is not None:
            y_lower, y_upper = (float(v) for v in self.y_limits)
            check_limits(y_lower, y_upper, "y_lower/y_upper")
            y_min, y_max = (float(v) for v in self.y_range)
            if not (math.isfinite(y_min) and math.isfinite(y_max) and y_min <= y_max):
                raise InvalidInputError(f"label range must be finite with min <= max, got "
                                        f"{y_min:g}, {y_max:g}")  # fmt: skip
            object.__setattr__(self, "y_limits", (y_lower, y_upper))
            object.__setattr__(self, "y_range", (y_min, y_max))

    @property
    def n_features(self) -> int:
        """The features the scaling has ranges for (1 to n_features)."""
        return self.feature_min.shape[0]

    def transform(self, X) -> sp.csr_matrix:
        """X (n_rows, n_columns) scaled: CSR float64 of shape (n_rows, max(n_columns,
        n_features)), the features the scaling leaves out absent, zeros not stored.

        Warns (UserWarning) when X holds more than one value of a feature the scaling leaves
        out (svm-scale's "not seen in the scaling factor file"), and when the result has more
        stored entries than X (svm-scale's advice: lower = 0 for non-negative sparse data)."""
        X = as_csr(X)
        width = max(X.shape[1], self.n_features)
        check_ranges_fit(width, "the scaled rows")
        low = np.zeros(width)
        high = np.zeros(width)
        low[: self.n_features] = self.feature_min
        high[: self.n_features] = self.feature_max
        _warn_unseen(X, low, high)
        return _apply(X, low, high, self.lower, self.upper)

    def transform_labels(self, y) -> np.ndarray:
        """The labels (n_rows,) mapped onto y_limits, as svm-scale's ``-y`` (float64); as
        given (as float64) when the scaling has no label limits."""
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise InvalidInputError(f"y must be 1-D, got shape {y.shape}")
        if not np.isfinite(y).all():
            raise InvalidInputError("y holds NaN or infinite labels")
        if self.y_limits is None:
            return y.copy()
        (y_lower, y_upper), (y_min, y_max) = self.y_limits, self.y_range
        with np.errstate(all="ignore"):
            out = y_lower + (y_upper - y_lower) * (y - y_min) / (y_max - y_min)
        out[y == y_max] = y_upper
        out[y == y_min] = y_lower  # (first in svm-scale: where y_min == y_max, y_lower)
        if not np.isfinite(out).all():
            raise InvalidInputError(
                f"the labels' range [{y_min:g}, {y_max:g}] overflows the scaling's arithmetic "
                "(svm-scale writes nan there)"
            )
        return out

    def to_text(self) -> str:
        """svm-scale's range file: an optional ``y`` section, then ``x``, the limits, and one
        line "index min max" for each feature that is not left out (17 significant digits)."""
        return self._text_bytes().decode("ascii")

    def save(self, path: str | os.PathLike) -> None:
        """Write the range file (``to_text``) to ``path`` atomically."""
        from .io._atomic import atomic_write_bytes

        atomic_write_bytes(path, self._text_bytes())

    def _text_bytes(self) -> bytes:
        """``to_text``'s text as ASCII bytes; the feature lines written by a compiled loop."""
        lines = []
        if self.y_limits is not None:
            lines += ["y", "{:.17g} {:.17g}".format(*self.y_limits),
                      "{:.17g} {:.17g}".format(*self.y_range)]  # fmt: skip
        lines += ["x", f"{self.lower:.17g} {self.upper:.17g}"]
        header = ("\n".join(lines) + "\n").encode("ascii")
        features = np.flatnonzero(self.feature_min != self.feature_max).astype(np.int64, copy=False)
        values = (self.feature_min, self.feature_max)
        bits = tuple(v.view(np.uint64) for v in values)
        out = np.empty(features.shape[0] * _MAX_RANGE_LINE_BYTES, dtype=np.uint8)
        k, part, pos = 0, 0, 0
        while True:
            k, part, pos, status = _format_range_lines(features, *bits, k, part, out, pos)
            if status == _format.DONE:
                return header + out[:pos].tobytes()
            # FALLBACK: a value the kernel leaves to Python (see linsvm.io._format)
            text = f"{float(values[part - 1][features[k]]):.17g}" + (" " if part == 1 else "\n")
            encoded = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
            out[pos : pos + encoded.shape[0]] = encoded  # (no longer than the kernel's)
            pos += encoded.shape[0]
            k, part = (k, 2) if part == 1 else (k + 1, 0)


# Bytes a feature's range takes at the widest moment, applying a scaling: its two ranges,
# transform's copies at the result's width, the zeros' images and their temporaries (finding
# one takes less: the ranges and the column sweep's five records)
_BYTES_PER_RANGE = 96


def check_ranges_fit(width: int, what: str) -> None:
    """Refuse, before any allocation, ranges for features 1 to ``width`` that would not fit in
    this process: the scaling is dense over the features (as svm-scale's), so one index near
    2^31 in a data or range file asks for hundreds of GB (the process was killed, not told)."""
    room = _memory.allocatable_memory()
    needs = width * _BYTES_PER_RANGE
    if room is not None and needs > room:
        raise InvalidInputError(
            f"{what}: ranges for features 1 to {width} take about {_memory.format_bytes(needs)}, "
            f"more than this process's {_memory.format_bytes(room)} (the scaling holds every "
            "feature up to the widest index, as svm-scale's does; renumber or hash the features)"
        )


def check_limits(lower: float, upper: float, what: str) -> None:
    """svm-scale's check of an interval: finite, lower < upper."""
    if not (math.isfinite(lower) and math.isfinite(upper) and upper > lower):
        raise InvalidInputError(f"inconsistent {what} specification: {lower:g} and {upper:g} "
                                "(lower must be below upper)")  # fmt: skip


def find_scaling(X, y=None, lower: float = -1.0, upper: float = 1.0,
                 y_limits: tuple[float, float] | None = None) -> Scaling:  # fmt: skip
    """The scaling of X (n_rows, n_features) onto [lower, upper] (svm-scale's ``-l``, ``-u``);
    with ``y_limits`` (svm-scale's ``-y y_lower y_upper``) also of the labels y (n_rows,)
    onto them. Apply it with ``Scaling.transform`` / ``transform_labels``."""
    lower, upper = float(lower), float(upper)
    check_limits(lower, upper, "lower/upper")
    X = as_csr(X)
    check_ranges_fit(X.shape[1], "the scaling")
    low = np.empty(X.shape[1])
    high = np.empty(X.shape[1])
    _column_ranges(X.indptr, X.indices, X.data, X.shape[1], low, high)
    if X.shape[0] == 0:
        low[:] = high[:] = 0.0
    y_range = None
    if y_limits is not None:
        if y is None:
            raise InvalidInputError("y_limits scales the labels: give y")
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (X.shape[0],):
            raise InvalidInputError(f"y must have shape ({X.shape[0]},), got {y.shape}")
        if not np.isfinite(y).all():
            raise InvalidInputError("y holds NaN or infinite labels")
        if y.shape[0] == 0:
            raise InvalidInputError("the labels' range needs at least one row")
        y_range = (_label_extreme(y, float(y.min())), _label_extreme(y, float(y.max())))
        y_limits = (float(y_limits[0]), float(y_limits[1]))
    return Scaling(lower, upper, low, high, y_limits, y_range)


def _label_extreme(y: np.ndarray, value: float) -> float:
    """A zero extreme with the sign of the last zero label in row order (see
    ``_column_ranges``)."""
    if value != 0.0:
        return value
    return float(y[np.flatnonzero(y == 0.0)[-1]])


def load_scaling(path: str | os.PathLike) -> Scaling:
    """Read svm-scale's range file (``Scaling.save`` writes one); a DataFormatError naming the
    file and line for anything else."""
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as f:
        raw = f.read()
    if not raw.isascii():
        try:
            raw.decode("ascii")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise DataFormatError(name, line, "not a range file of svm-scale (not text)") from None
    return _parse_range_file(raw, name)


# svm-scale reads a range file's indices as C ints
_INDEX_MAX = 2**31 - 1


def _number(word: str, kind=float):
    """``word`` as C's scanf reads a number (no digit groups "1_0", ASCII only), finite; None
    for anything else."""
    if not word.isascii() or "_" in word:
        return None
    try:
        value = kind(word)
    except ValueError:
        return None
    # (an int is finite: math.isfinite would convert one of over 308 digits to float, and fail)
    return value if kind is int or math.isfinite(value) else None


def parse_scaling(text: str, name: str = "<range file>") -> Scaling:
    """A Scaling from the text of svm-scale's range file; ``name`` for the errors, which name
    the file and line (a DataFormatError)."""
    if text.isascii():
        return _parse_range_file(text.encode("ascii"), name)
    # The lines and words str.splitlines and str.split() find, in ASCII: the other line ends
    # as one the reader knows (and no "\r" before it joins), the other blanks as spaces, any
    # other character (which no number holds) as "?"
    text = re.sub("[\x85\u2028\u2029]", "\x1e", text)
    text = re.sub(r"[^\S\x00-\x7f]", " ", text)
    return _parse_range_file(text.encode("ascii", errors="replace"), name)


# Python's str.splitlines' line ends among ASCII bytes ("\r\n" is one)
_LINE_END = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e]")


def _parse_range_file(raw: bytes, name: str) -> Scaling:
    """``parse_scaling`` of the ASCII text ``raw``: the header here, the feature lines by a
    compiled loop (`linsvm.io._parse.parse_range_lines`) that hands the lines it does not take
    (a number it leaves to float(), or an error) to ``_feature_line``."""
    # The header's lines (five at most: y, y_lower y_upper, y_min y_max, x, lower upper)
    lines, starts = [], [0]  # starts[k]: where the line after the first k begins
    line_ends = _LINE_END.finditer(raw)
    while starts[-1] < len(raw) and len(lines) < 5:
        end = next(line_ends, None)
        stop, after = (end.start(), end.end()) if end is not None else (len(raw), len(raw))
        lines.append(raw[starts[-1] : stop].decode("ascii"))
        starts.append(after)
    at = 0

    def numbers(count: int, what: str) -> list[float]:
        nonlocal at
        if at >= len(lines):
            raise DataFormatError(name, at, f"ends before {what}")
        values = [_number(word) for word in lines[at].split()]
        at += 1
        if len(values) != count or None in values:
            raise DataFormatError(name, at, f"expected {what}: {count} finite numbers")
        return values

    def interval(what: str, check) -> tuple[float, float]:
        a, b = numbers(2, what)
        try:
            check(a, b)
        except InvalidInputError as exc:
            raise DataFormatError(name, at, str(exc)) from None
        return a, b

    def section(letter: str) -> bool:
        nonlocal at
        if at < len(lines) and lines[at].strip() == letter:
            at += 1
            return True
        return False

    def ordered(a: float, b: float) -> None:
        if a > b:
            raise InvalidInputError(f"the labels' min {a:g} is above their max {b:g}")

    y_limits = y_range = None
    if section("y"):
        y_limits = interval("y_lower y_upper", lambda a, b: check_limits(a, b, "y_lower/y_upper"))
        y_range = interval("y_min y_max", ordered)
    if not section("x"):
        raise DataFormatError(name, at + 1, "expected the line 'x' (a range file of svm-scale)")
    lower, upper = interval("lower upper", lambda a, b: check_limits(a, b, "lower/upper"))
    # The feature lines: each has five bytes or more, and a line end unless it is the last
    start = starts[at]
    n_lines = (len(raw) - start + 1) // 6 + 1
    indices = np.empty(n_lines, dtype=np.int64)
    lows = np.empty(n_lines)
    highs = np.empty(n_lines)
    buf = np.frombuffer(raw, dtype=np.uint8)
    found, line, last = 0, at, 0
    while True:
        found, status, line_start, line_end, line, start, last = _parse.parse_range_lines(
            buf, start, indices, lows, highs, found, line, last, _INDEX_MAX
        )
        if status == _parse.WORDS_DONE:
            break
        text = raw[line_start:line_end].decode("ascii")
        indices[found], lows[found], highs[found] = _feature_line(text, name, line, last)
        last = int(indices[found])
        found += 1
    check_ranges_fit(last, f"{name}: feature index {last}")
    low = np.zeros(last)
    high = np.zeros(last)
    low[indices[:found] - 1] = lows[:found]
    high[indices[:found] - 1] = highs[:found]
    return Scaling(lower, upper, low, high, y_limits, y_range)


def _feature_line(text: str, name: str, line: int, last: int) -> tuple[int, float, float]:
    """(index, min, max) of the range file's feature line ``line``, ``text`` (not blank), the
    index of the line before being ``last``; a DataFormatError for anything else."""
    fields = text.split()
    values = [_number(fields[0], int), *(_number(f) for f in fields[1:])]
    if len(values) != 3 or None in values:
        raise DataFormatError(name, line, "expected 'index min max' (finite numbers)")
    index, low, high = values
    if not last < index <= _INDEX_MAX:
        raise DataFormatError(name, line, f"feature index {index} is not above the line "
                              f"before's ({last}) and at most {_INDEX_MAX}: indices ascend "
                              "from 1")  # fmt: skip
    if low > high:
        raise DataFormatError(name, line, f"feature {index}: min {low:g} is above max {high:g}")
    return index, low, high


def _warn_unseen(X: sp.csr_matrix, low: np.ndarray, high: np.ndarray) -> None:
    """Warn of the features X holds more than one value of that the scaling leaves out."""
    left_out = ~(low < high)
    if not left_out[: X.shape[1]].any():
        return
    x_low = np.empty(X.shape[1])
    x_high = np.empty(X.shape[1])
    _column_ranges(X.indptr, X.indices, X.data, X.shape[1], x_low, x_high)
    if X.shape[0] == 0:
        return
    unseen = np.flatnonzero(left_out[: X.shape[1]] & (x_low < x_high)) + 1
    if unseen.shape[0]:
        listed = ", ".join(str(j) for j in unseen[:5].tolist())
        more = f" and {unseen.shape[0] - 5} more" if unseen.shape[0] > 5 else ""
        warnings.warn(f"feature(s) {listed}{more} vary in these rows but not in the rows the "
                      "scaling was found on (or lie beyond them): left out, as svm-scale "
                      "scales them to 0", UserWarning, stacklevel=3)  # fmt: skip


def _apply(X: sp.csr_matrix, low: np.ndarray, high: np.ndarray, lower: float,
           upper: float) -> sp.csr_matrix:  # fmt: skip
    """X's rows scaled with the ranges low, high (one per column of the result)."""
    width = low.shape[0]
    kept = low < high
    # the image of a missing entry (0), column by column: _scaled's arithmetic, vectorised
    with np.errstate(all="ignore"):
        zero_image = lower + (upper - lower) * (0.0 - low) / (high - low)
    zero_image[low == 0.0] = lower
    zero_image[high == 0.0] = upper
    zero_image[~kept] = 0.0
    dense_columns = np.flatnonzero(kept & (zero_image != 0.0)).astype(np.int64)
    indptr = np.empty(X.shape[0] + 1, dtype=np.int64)
    empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    args = (X.indptr, X.indices, X.data, low, high, lower, upper, zero_image, dense_columns)
    _scale_rows(*args, True, indptr, empty_i, empty_f)
    nnz = int(indptr[-1])
    index_dtype = np.int32 if width <= np.iinfo(np.int32).max and nnz <= np.iinfo(np.int32).max \
        else np.int64  # fmt: skip
    indices = np.empty(nnz, dtype=np.int64)
    data = np.empty(nnz)
    _scale_rows(*args, False, indptr, indices, data)
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.shape[0]:
        j = int(indices[bad[0]])
        raise InvalidInputError(f"feature {j + 1}'s range [{low[j]:g}, {high[j]:g}] overflows the "
                                "scaling's arithmetic (svm-scale writes nan there)")  # fmt: skip
    if nnz > X.nnz:
        warnings.warn(f"the scaled rows have {nnz} non-zeros where the original have {X.nnz}: "
                      "for non-negative sparse features lower = 0 (-l 0) keeps them sparse",
                      UserWarning, stacklevel=3)  # fmt: skip
    return sp.csr_matrix((data, indices.astype(index_dtype), indptr.astype(index_dtype)),
                         shape=(X.shape[0], width))  # fmt: skip


# the text of about this many bytes is made at a time (the command writes it out in turn)
TEXT_CHUNK_BYTES = 1 << 24


def svm_scale_text(X: sp.csr_matrix, y: np.ndarray, chunk_bytes: int = TEXT_CHUNK_BYTES):
    """The rows as svm-scale prints them, in pieces of about ``chunk_bytes`` (an iterator of
    bytes): the label to 17 significant digits, each entry as "index:%g", every item followed
    by a space, one row a line (LIBSVM's format)."""
    labels = np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)
    values = np.ascontiguousarray(X.data, dtype=np.float64).view(np.uint64)

    def write(row: int, at: int, out: np.ndarray, pos: int):
        return _format.format_svm_scale_rows(labels, X.indptr, X.indices, values, row, at,
                                             X.shape[0], out, pos)  # fmt: skip

    def fallback(row: int, at: int) -> str:  # a number the kernel leaves to Python
        if at < 0:
            return f"{float(y[row]):.17g} "
        k = X.indptr[row] + at
        return f"{int(X.indices[k]) + 1}:{float(X.data[k]):g} "

    return _format.rows_text(write, fallback, max(int(chunk_bytes), 4 * _format.MAX_ENTRY_BYTES))


__all__ = ["Scaling", "find_scaling", "load_scaling", "parse_scaling", "svm_scale_text"]
