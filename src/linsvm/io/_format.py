"""Numba kernels that write numbers as text, byte for byte as Python's (and C's) ``%g``.

A model file's weight lines (`linsvm.io.model_file`) hold every weight as ``%.17g``: 17
significant digits, correctly rounded (round half to even on the exact binary value), laid
out as C's ``%g`` lays them out (fixed notation for decimal exponents -4 to 16, else
``d.ddde+XX``; trailing zeros and a trailing point dropped). Formatting them one Python float
at a time costs about a microsecond and 100 bytes of Python objects a weight; these kernels
write them straight into a byte buffer, a buffer at a time. The same kernels write any
precision p (``%.{p}g``): ``linsvm scale`` writes svm-scale's rows, their values as ``%g`` (6
digits).

The p digits of v = m * 2**e come from one 64x128-bit product: m (normalised to 64 bits)
times the parser's truncated 128-bit mantissa of 10**q (`linsvm.io._parse`), q chosen so that
the integer part N of v * 10**q has p digits. The table's truncation makes the product at
most m units of its lowest 64-bit word too small, far below the fraction's resolution, so the
rounding of N is decided exactly except when the fraction lies within that margin of one
half: exact ties (which need round-half-even on the exact value) and about one value in
2**60 otherwise. Such a value, and a non-finite one, is handed back to the caller, which
formats it with Python (`FALLBACK`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from numba import njit

from .._intrinsics import mul_u64
from ._parse import (
    _MAX_U64,
    _POW10_EXP2,
    _POW10_HI,
    _POW10_LO,
    _POW10_MIN_EXP,
    _U0,
    _U1,
    _U63,
    decimal_value,
)

# Status of `format_weight_rows`.
DONE = 0
FULL = 1  # the buffer is full: write it out and call again from (row, col)
FALLBACK = 2  # the weight at (row, col) needs Python's formatting

# The longest "%.17g" text ("-1.2345678901234567e-308"), a space and a newline.
MAX_VALUE_BYTES = 24
_ROOM = MAX_VALUE_BYTES + 2

# Typed constants, as in the parser (Numba turns uint64 (op) int64 into float64); the ones
# both use are the parser's.
_U2 = np.uint64(2)
_U11 = np.uint64(11)
_U52 = np.uint64(52)
_EXPONENT_MASK = np.uint64(0x7FF)
_FRACTION_MASK = np.uint64((1 << 52) - 1)
_HIDDEN_BIT = np.uint64(1 << 52)
_U48 = np.uint64(48)  # "0"
_TEN8 = np.uint64(10**8)
_POW10_INT = np.array([10**i for i in range(19)], dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _digits(m, e, p):
    """(N, k, ok) for v = m * 2**e > 0 (m uint64 with its leading bit at 63): N in
    [10**(p - 1), 10**p) the p significant digits of v correctly rounded (1 <= p <= 17), k
    its decimal exponent (v ~= N * 10**(k - p + 1)); ok False when the rounding cannot be
    decided from the 192-bit product (the caller falls back)."""
    ten_low = _POW10_INT[p - 1]
    ten_high = _POW10_INT[p]
    b = e + 63  # floor(log2 v)
    # k = floor(log10 2**b) (Ryu's 78913 / 2**18, exact for |b| <= 1650); v has k + 1 or
    # k + 2 digits before the point, so N = v * 10**(p - 1 - k) has p or p + 1
    if b >= 0:
        k = (b * 78913) >> 18
    else:
        k = -((-b * 78913) >> 18) - 1
    t = p - 1 - k - _POW10_MIN_EXP
    if t < 0 or t >= _POW10_EXP2.shape[0]:
        return 0, 0, False
    a_hi, a_lo = mul_u64(m, _POW10_HI[t])
    b_hi, b_lo = mul_u64(m, _POW10_LO[t])
    p1 = a_lo + b_hi
    p2 = a_hi + (_U1 if p1 < a_lo else _U0)
    p0 = b_lo
    # v * 10**q ~= (p2:p1:p0) * 2**(e + _POW10_EXP2[t]), below the exact value by less than
    # one unit of p1 (the table is truncated); the integer part lies in p2
    shift = -(e + _POW10_EXP2[t]) - 128
    if shift < 1 or shift > 63:
        return 0, 0, False
    sh = np.uint64(shift)
    n = np.int64(p2 >> sh)
    mask = (_U1 << sh) - _U1
    f2 = p2 & mask
    if n >= ten_high:
        # p + 1 digits: round off the last, d, with the fraction below it
        d = n % 10
        n = n // 10
        k += 1
        if d > 5 or (d == 5 and (f2 | p1 | p0) != _U0):
            n += 1
        elif d == 5 or (d == 4 and f2 == mask and p1 == _MAX_U64):
            return 0, 0, False  # a tie, or too close to one to tell
    elif n >= ten_low:
        # Round up when the product is past one half, down when one unit of p1 more is
        # still below it (with a unit to spare); in between, undecided.
        half = _U1 << (sh - _U1)
        if f2 > half or (f2 == half and (p1 | p0) != _U0):
            n += 1
        elif f2 == half or (f2 == half - _U1 and p1 == _MAX_U64):
            return 0, 0, False
    else:
        return 0, 0, False  # just below 10**(p - 1) by the truncation: v * 10**q near it
    if n == ten_high:
        n = ten_low
        k += 1
    return n, k, True


def _digit_pairs() -> np.ndarray:
    """b"000102...99": the two digits of 0..99 at [2i, 2i + 2)."""
    return np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint8)


_DIGIT_PAIRS = _digit_pairs()


@njit(cache=True, nogil=True, inline="always")
def _put2(out, at, x):
    """The two digits of x < 100 (uint64) at out[at:at + 2]."""
    out[at] = _DIGIT_PAIRS[x * _U2]
    out[at + 1] = _DIGIT_PAIRS[x * _U2 + _U1]


@njit(cache=True, nogil=True, inline="always")
def _put8(out, at, x):
    """The eight digits of x < 10**8 (uint64, leading zeros written) at out[at:at + 8]."""
    hi = x // np.uint64(10000)
    lo = x - hi * np.uint64(10000)
    a = hi // np.uint64(100)
    c = lo // np.uint64(100)
    _put2(out, at, a)
    _put2(out, at + 2, hi - a * np.uint64(100))
    _put2(out, at + 4, c)
    _put2(out, at + 6, lo - c * np.uint64(100))


@njit(cache=True, nogil=True, inline="always")
def _put_digits(out, at, n, p):
    """The p digits of n in [10**(p - 1), 10**p) at out[at:at + p]; how many remain when the
    trailing zeros are dropped (at least one)."""
    x = np.uint64(n)
    if p == 17:  # (the model files' weights: eight digits at a time)
        rest = x % (_TEN8 * _TEN8)
        out[at] = _U48 + x // (_TEN8 * _TEN8)
        hi = rest // _TEN8
        _put8(out, at + 1, hi)
        _put8(out, at + 9, rest - hi * _TEN8)
    else:
        for i in range(p - 1, -1, -1):
            q = x // np.uint64(10)
            out[at + i] = _U48 + (x - q * np.uint64(10))
            x = q
    n_digits = p
    while n_digits > 1 and out[at + n_digits - 1] == 48:
        n_digits -= 1
    return n_digits


@njit(cache=True, nogil=True, inline="always")
def _mantissa(bits):
    """(m, e) with v = m * 2**e and m's leading bit at 63, for the finite non-zero |v| of IEEE
    bits ``bits`` (uint64)."""
    biased = np.int64((bits >> _U52) & _EXPONENT_MASK)
    fraction = bits & _FRACTION_MASK
    if biased == 0:
        m = fraction  # subnormal: fraction * 2**-1074, normalised here (rare)
        e = -1074
        while m >> _U63 == _U0:
            m = m << _U1
            e -= 1
        return m, e
    return (fraction | _HIDDEN_BIT) << _U11, biased - 1075 - 11


@njit(cache=True, nogil=True, inline="always")
def _put_g(out, pos, n, k, p):
    """Lay out the p digits n (in [10**(p - 1), 10**p)) of a value of decimal exponent k at
    out[pos:] as C's ``%.{p}g`` does; the position after it.

    The p digits are written once where most of them belong, then the few around the
    decimal point are moved; bytes past the returned position may be scribbled on.
    """
    if 0 <= k < p:
        # fixed: k + 1 integer digits (zeros past the significant ones), the rest after "."
        n_digits = _put_digits(out, pos + 1, n, p)
        for i in range(pos, pos + k + 1):
            out[i] = out[i + 1]
        if n_digits <= k + 1:
            return pos + k + 1
        out[pos + k + 1] = 46  # "."
        return pos + n_digits + 1
    if -4 <= k < 0:
        # fixed: "0.", -k - 1 zeros, the digits
        start = pos + 1 - k
        n_digits = _put_digits(out, start, n, p)
        out[pos] = 48
        out[pos + 1] = 46
        for i in range(pos + 2, start):
            out[i] = 48
        return start + n_digits
    # exponential: d[.ddd]e+XX (at least two exponent digits)
    n_digits = _put_digits(out, pos + 1, n, p)
    out[pos] = out[pos + 1]
    mantissa_end = pos + 1
    if n_digits > 1:
        out[pos + 1] = 46
        mantissa_end = pos + 1 + n_digits
    out[mantissa_end] = 101  # "e"
    out[mantissa_end + 1] = 45 if k < 0 else 43  # "-" / "+"
    x = np.uint64(-k if k < 0 else k)
    if x >= 100:
        out[mantissa_end + 2] = _U48 + x // np.uint64(100)
        _put2(out, mantissa_end + 3, x % np.uint64(100))
        return mantissa_end + 5
    _put2(out, mantissa_end + 2, x)
    return mantissa_end + 4


@njit(cache=True, nogil=True)
def write_g(bits, out, pos, p):
    """Write ``f"{v:.{p}g}"`` (C's ``%.{p}g``, 1 <= p <= 17) at out[pos:] (room for
    MAX_VALUE_BYTES assumed) for the float64 v of IEEE bits ``bits`` (uint64); the position
    after it, or -1 when v must be formatted by Python (not finite, or undecided). Bytes past
    the returned position may be scribbled on.
    """
    if (bits >> _U52) & _EXPONENT_MASK == _EXPONENT_MASK:  # infinite or NaN
        return -1
    if bits >> _U63:
        out[pos] = 45  # "-"
        pos += 1
    if bits & ~(_U1 << _U63) == _U0:
        out[pos] = 48
        return pos + 1
    m, e = _mantissa(bits)
    n, k, ok = _digits(m, e, p)
    if not ok:
        return -1
    return _put_g(out, pos, n, k, p)


@njit(cache=True, nogil=True)
def format_weight_rows(w, row, col, row_stop, out, pos):
    """Write the weight lines ``row`` to ``row_stop`` - 1 of ``w``, from weight ``col`` of
    the first, into ``out`` from ``pos``.

    w : (n_w, n_lines) uint64 -- the IEEE bits of the float64 weights (``.view(np.uint64)``):
        line j of the file holds w[:, j], each weight as "%.17g" followed by a space, then a
        newline (a line of no weights is " ").
    out : uint8 buffer with room for at least MAX_VALUE_BYTES + 2 bytes past ``pos``.

    Returns (row, col, n_bytes, status): out[:n_bytes] holds the text; status DONE (every
    line up to row_stop written), FULL (call again from (row, col) with room) or FALLBACK
    (the weight at (row, col) is to be formatted by Python, then continue after it).
    """
    n_w = w.shape[0]
    limit = out.shape[0] - _ROOM
    while row < row_stop:
        if n_w == 0:
            if pos > limit:
                return row, col, pos, FULL
            out[pos] = 32
            pos += 1
        while col < n_w:
            if pos > limit:
                return row, col, pos, FULL
            end = write_g(w[col, row], out, pos, 17)
            if end < 0:
                return row, col, pos, FALLBACK
            out[end] = 32
            pos = end + 1
            col += 1
        out[pos] = 10
        pos += 1
        col = 0
        row += 1
    return row, col, pos, DONE


@njit(cache=True, nogil=True, inline="always")
def _put_int(out, pos, x):
    """The decimal digits of x >= 0 (int64) at out[pos:]; the position after them."""
    n_digits = 1
    while n_digits < 19 and x >= _POW10_INT[n_digits]:
        n_digits += 1
    for i in range(n_digits - 1, -1, -1):
        q = x // 10
        out[pos + i] = 48 + (x - q * 10)
        x = q
    return pos + n_digits


# The longest entry of svm-scale's rows: a 19-digit index, ":", a "%g" value
# ("-1.23457e-308"), a space, and a newline.
MAX_ENTRY_BYTES = 19 + 1 + MAX_VALUE_BYTES + 2


@njit(cache=True, nogil=True)
def format_svm_scale_rows(labels, indptr, indices, values, row, at, row_stop, out, pos):
    """Write the rows ``row`` to ``row_stop`` - 1 as svm-scale prints them, from item ``at``
    of the first (-1: its label; k >= 0: its k-th stored entry), into ``out`` from ``pos``:
    the label as "%.17g", each entry as "index:%g" (indices + 1), every item followed by a
    space, a newline after each row.

    labels : (n_rows,) uint64, values : (nnz,) uint64 -- the IEEE bits of the float64 labels
        and values (``.view(np.uint64)``); indptr, indices: the rows' CSR structure.

    Returns (row, at, n_bytes, status) as ``format_weight_rows``: DONE, FULL, or FALLBACK
    (the item ``at`` of ``row`` is to be formatted by Python, then continue after it).
    """
    limit = out.shape[0] - MAX_ENTRY_BYTES
    while row < row_stop:
        start = indptr[row]
        n_items = indptr[row + 1] - start
        while at < n_items:
            if pos > limit:
                return row, at, pos, FULL
            if at < 0:
                end = write_g(labels[row], out, pos, 17)
            else:
                pos_value = _put_int(out, pos, np.int64(indices[start + at]) + 1)
                out[pos_value] = 58  # ":"
                end = write_g(values[start + at], out, pos_value + 1, 6)
            if end < 0:
                return row, at, pos, FALLBACK
            out[end] = 32
            pos = end + 1
            at += 1
        if pos > limit:
            return row, at, pos, FULL
        out[pos] = 10
        pos += 1
        at = -1
        row += 1
    return row, at, pos, DONE


@njit(cache=True, nogil=True)
def format_prediction_rows(first, first_p, rest, rest_p, row, at, row_stop, out, pos):
    """Write the lines ``row`` to ``row_stop`` - 1 of predict's output, from item ``at`` of
    the first (-1: its prediction; k >= 0: its k-th probability), into ``out`` from ``pos``:
    first[row] as "%.{first_p}g", then each of rest[row] as " %.{rest_p}g", then a newline.

    first : (n_rows,) uint64, rest : (n_rows, n_rest) uint64 -- the IEEE bits of float64
        values (``.view(np.uint64)``); n_rest may be 0.

    Returns (row, at, n_bytes, status) as ``format_weight_rows``: DONE, FULL, or FALLBACK
    (item ``at`` of ``row``, with the space before it, is to be written by Python, then
    continue after it).
    """
    limit = out.shape[0] - _ROOM
    n_rest = rest.shape[1]
    while row < row_stop:
        while at < n_rest:
            if pos > limit:
                return row, at, pos, FULL
            if at < 0:
                end = write_g(first[row], out, pos, first_p)
            else:
                out[pos] = 32
                end = write_g(rest[row, at], out, pos + 1, rest_p)
            if end < 0:
                return row, at, pos, FALLBACK
            pos = end
            at += 1
        if pos > limit:
            return row, at, pos, FULL
        out[pos] = 10
        pos += 1
        at = -1
        row += 1
    return row, at, pos, DONE


_TWO53 = 2.0**53


@njit(cache=True, nogil=True)
def write_shortest(value, bits, out, pos):
    """Write the float64 v = ``value`` (of IEEE bits ``bits``) at out[pos:] (room for
    MAX_VALUE_BYTES) as a LIBSVM file's number: an integer below 2**53 in magnitude as its
    digits ("3", "-1"), any other value as Python's ``repr`` (the fewest significant digits
    that read back to v); the position after it, or -1 when v must be written by Python.

    The fewest digits: v's 17 correctly rounded digits are rounded to p = 1, 2, ... digits
    until the decimal reads back to v (the parser's `decimal_value`); the p-digit decimal
    nearest v is the one repr picks whenever v's rounding interval is symmetric. Python
    writes the rest: -0.0, non-finite values, powers of two (their interval is lopsided: a
    farther decimal may be the shorter), magnitudes of 2**53 and above (repr's layout differs
    from %g's there), and values whose digits or read-back cannot be decided here.
    """
    if value == 0.0:
        if bits >> _U63:
            return -1
        out[pos] = 48
        return pos + 1
    magnitude = abs(value)
    if not magnitude < _TWO53:  # (NaN, infinities, and the large)
        return -1
    negative = value < 0
    if negative:
        out[pos] = 45
        pos += 1
    if value == np.trunc(value):
        return _put_int(out, pos, np.int64(magnitude))
    if bits & _FRACTION_MASK == _U0:
        return -1
    m, e = _mantissa(bits)
    n17, k17, ok = _digits(m, e, 17)
    if not ok:
        return -1
    for p in range(1, 18):
        n, k = n17, k17
        if p < 17:
            unit = _POW10_INT[17 - p]
            n = n17 // unit
            dropped = n17 - n * unit
            if 2 * dropped == unit:  # (n17's tie need not be v's: round v itself)
                n_tie = n
                n, k, ok = _digits(m, e, p)
                if not ok:
                    # v itself halfway (or too near to tell): Python picks, unless neither
                    # neighbour reads back to v, when p digits are too few anyway
                    for q in (n_tie, n_tie + 1):
                        read, ok = decimal_value(np.uint64(q), k17 - p + 1, negative)
                        if not ok or read == value:
                            return -1
                    continue
            else:
                if 2 * dropped > unit:
                    n += 1
                if n == _POW10_INT[p]:
                    n = _POW10_INT[p - 1]
                    k += 1
        read, ok = decimal_value(np.uint64(n), k - p + 1, negative)
        if not ok:
            return -1
        if read == value:
            return _put_g(out, pos, n, k, p)
    return -1


@njit(cache=True, nogil=True)
def format_libsvm_rows(labels, query_ids, indptr, indices, values, offset, row, at, row_stop,
                       out, pos):
    """Write the rows ``row`` to ``row_stop`` - 1 as LIBSVM lines, from item ``at`` of the
    first (-1: its label, and " qid:Q" when query_ids has a row's; k >= 0: its k-th stored
    entry), into ``out`` from ``pos``: the label, then " index:value" for each entry
    (indices + offset), then a newline; numbers as `write_shortest` writes them.

    labels : (n_rows,) float64, values : (nnz,) float64; query_ids : (n_rows,) or (0,)
        int64; indptr, indices: the rows' CSR structure.

    Returns (row, at, n_bytes, status) as ``format_weight_rows``: DONE, FULL, or FALLBACK
    (item ``at`` of ``row``, with the space before an entry, is to be written by Python,
    then continue after it).
    """
    label_bits = labels.view(np.uint64)
    value_bits = values.view(np.uint64)
    limit = out.shape[0] - 2 * MAX_ENTRY_BYTES
    with_query_ids = query_ids.shape[0] > 0
    while row < row_stop:
        start = indptr[row]
        n_items = indptr[row + 1] - start
        while at < n_items:
            if pos > limit:
                return row, at, pos, FULL
            if at < 0:
                end = write_shortest(labels[row], label_bits[row], out, pos)
                if end >= 0 and with_query_ids:
                    for c in (32, 113, 105, 100, 58):  # " qid:"
                        out[end] = c
                        end += 1
                    q = np.int64(query_ids[row])
                    if q < 0:
                        out[end] = 45
                        end += 1
                        q = -q
                    end = _put_int(out, end, q)
            else:
                out[pos] = 32
                end = _put_int(out, pos + 1, np.int64(indices[start + at]) + offset)
                out[end] = 58  # ":"
                end = write_shortest(values[start + at], value_bits[start + at], out, end + 1)
            if end < 0:
                return row, at, pos, FALLBACK
            pos = end
            at += 1
        if pos > limit:
            return row, at, pos, FULL
        out[pos] = 10
        pos += 1
        at = -1
        row += 1
    return row, at, pos, DONE


def rows_text(
    write: Callable[[int, int, np.ndarray, int], tuple[int, int, int, int]],
    fallback: Callable[[int, int], str],
    buffer_bytes: int,
) -> Iterator[bytes]:
    """The text a row-writing kernel writes, in pieces of about ``buffer_bytes`` (an iterator
    of bytes), every row from its first item (-1).

    write(row, at, out, pos) runs the kernel from item ``at`` of ``row`` into out from pos and
    returns its (row, at, n_bytes, status): DONE, FULL or FALLBACK; fallback(row, at) is the
    text of the item the kernel left to Python (with the separator the kernel would have
    written), no longer than the kernel's room for it.
    """
    buffer = np.empty(buffer_bytes, dtype=np.uint8)
    row, at, pos = 0, -1, 0
    while True:
        row, at, pos, status = write(row, at, buffer, pos)
        if status == DONE:
            yield bytes(buffer[:pos])
            return
        if status == FULL:
            yield bytes(buffer[:pos])
            pos = 0
            continue
        encoded = np.frombuffer(fallback(row, at).encode("ascii"), dtype=np.uint8)
        buffer[pos : pos + encoded.shape[0]] = encoded
        pos += encoded.shape[0]
        at += 1
