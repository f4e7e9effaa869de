"""Numba kernels that parse LIBSVM / svmlight text held in a byte buffer.

A buffer (a whole file, or one piece of it cut at line boundaries) is parsed by one compiled
function, `parse_buffer`, with no Python code per line or token; it releases the GIL, so pieces
of one file are parsed side by side in threads. Kernels never raise: they return an error
code, the 1-based line number and the byte range of the offending token, and the Python
wrapper (`linsvm.io.libsvm`) turns that into a `DataFormatError` with a readable message.

Number parsing is correctly rounded (bit-identical to Python's ``float(token)``):

* Clinger's fast path: a mantissa below 2**53 and a power of ten in [-22, 22] are both exact
  doubles, so one IEEE multiply or divide rounds correctly.
* Otherwise the Eisel-Lemire algorithm (as in Go's ``strconv``), with a table of 128-bit
  truncated powers of ten computed here at import time from exact integers.
* When Eisel-Lemire cannot decide (halfway cases, subnormal or overflowing results, exponents
  outside the table, more than 19 significant digits whose rounding is ambiguous), the token's
  byte range is recorded in a small "fallback" list and the wrapper parses just those tokens
  with ``float()``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._intrinsics import mul_u64

# Error codes returned by `parse_buffer` (0 = success). The wrapper maps them to messages.
OK = 0
BAD_LABEL = 1
MISSING_LABEL = 2
LABEL_NAN = 3
LABEL_INF = 4
BAD_QID = 5
MISPLACED_QID = 6
BAD_TOKEN = 7
BAD_INDEX = 8
NEGATIVE_INDEX = 9
ZERO_INDEX = 10
INDEX_TOO_LARGE = 11
NOT_ASCENDING = 12
DUPLICATE_INDEX = 13
BAD_VALUE = 14
VALUE_NAN = 15
VALUE_INF = 16
VALUE_OUT_OF_RANGE = 17  # finite, but beyond the range of the dtype it is read into

# Status of `_parse_float`.
NUM_OK = 0
NUM_BAD = 1
NUM_NAN = 2
NUM_INF = 3
NUM_FALLBACK = 4

# Status of `_parse_int`.
INT_OK = 0
INT_BAD = 1
INT_OVERFLOW = 2

_POW10_MIN_EXP = -348
_POW10_MAX_EXP = 347


def _powers_of_ten_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """128-bit truncated mantissas of 10**q for q in [-348, 347], as (hi, lo) uint64 arrays,
    and their binary exponents e (int64): 10**q ~= (hi * 2**64 + lo) * 2**e.

    Entry q holds floor(10**q * 2**-e) for the e that puts its leading bit at bit 127; this is
    the table of Go's ``strconv.detailedPowersOfTen``, computed from exact integers. The
    parser needs the mantissas, the formatter (`linsvm.io._format`) the exponents too.
    """
    n = _POW10_MAX_EXP - _POW10_MIN_EXP + 1
    hi = np.empty(n, dtype=np.uint64)
    lo = np.empty(n, dtype=np.uint64)
    exp2 = np.empty(n, dtype=np.int64)
    mask64 = (1 << 64) - 1
    for q in range(_POW10_MIN_EXP, _POW10_MAX_EXP + 1):
        if q >= 0:
            m = 10**q
            shift = m.bit_length() - 128
            m = m >> shift if shift > 0 else m << -shift
            exponent = shift
        else:
            d = 10**-q
            # floor(2**b / d) has exactly 128 bits when 2**(b-128) < d <= 2**(b-127) roughly;
            # pick b so the quotient is in [2**127, 2**128).
            b = d.bit_length() + 127
            m = (1 << b) // d
            if m < (1 << 127):
                b += 1
                m = (1 << b) // d
            exponent = -b
        hi[q - _POW10_MIN_EXP] = m >> 64
        lo[q - _POW10_MIN_EXP] = m & mask64
        exp2[q - _POW10_MIN_EXP] = exponent
    return hi, lo, exp2


_POW10_HI, _POW10_LO, _POW10_EXP2 = _powers_of_ten_table()
# 1e0 .. 1e22 are exact doubles (Clinger's fast path).
_EXACT_POW10 = np.array([10.0**k for k in range(23)], dtype=np.float64)

# Typed constants: Numba turns uint64 (op) int64 into float64, so every operand of the
# 64-bit integer arithmetic below must be a uint64.
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U53 = np.uint64(53)
_U63 = np.uint64(63)
_MASK9 = np.uint64(0x1FF)
_MAX_U64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_TWO53 = np.uint64(1 << 53)
_INT64_MAX_DIV10 = (2**63 - 1) // 10


@njit(cache=True)
def _leading_zeros(x):
    """Number of leading zero bits of a nonzero uint64."""
    n = 0
    for shift in (32, 16, 8, 4, 2, 1):
        s = np.uint64(shift)
        if (x >> (_U63 - s + _U1)) == _U0:
            n += shift
            x = x << s
    return n


@njit(cache=True)
def _eisel_lemire(man, exp10, neg):
    """man * 10**exp10 correctly rounded to float64, for 0 < man < 2**64.

    Returns (value, ok); ok is False when the algorithm cannot decide (the caller falls
    back to an exact method). Follows Go's ``strconv.eiselLemire64``.
    """
    if exp10 < _POW10_MIN_EXP or exp10 > _POW10_MAX_EXP:
        return 0.0, False
    clz = _leading_zeros(man)
    man = man << np.uint64(clz)
    ret_exp2 = ((217706 * exp10) >> 16) + 64 + 1023 - clz
    k = exp10 - _POW10_MIN_EXP
    x_hi, x_lo = mul_u64(man, _POW10_HI[k])
    # The truncated table entry may be too small to decide the low bits: widen to 192 bits.
    if (x_hi & _MASK9) == _MASK9 and x_lo + man < man:
        y_hi, y_lo = mul_u64(man, _POW10_LO[k])
        merged_hi = x_hi
        merged_lo = x_lo + y_hi
        if merged_lo < x_lo:
            merged_hi += _U1
        if (merged_hi & _MASK9) == _MASK9 and merged_lo == _MAX_U64 and y_lo + man < man:
            return 0.0, False
        x_hi = merged_hi
        x_lo = merged_lo
    msb = x_hi >> _U63
    mantissa = x_hi >> (msb + _U9)
    ret_exp2 -= 1 - np.int64(msb)
    # Exactly halfway between two doubles: needs the exact decimal, give up.
    if x_lo == _U0 and (x_hi & _MASK9) == _U0 and (mantissa & _U3) == _U1:
        return 0.0, False
    mantissa += mantissa & _U1
    mantissa = mantissa >> _U1
    if (mantissa >> _U53) > _U0:
        mantissa = mantissa >> _U1
        ret_exp2 += 1
    # Subnormal or overflowing results are left to the exact fallback.
    if ret_exp2 <= 0 or ret_exp2 >= 0x7FF:
        return 0.0, False
    # mantissa (53 bits, leading bit included) * 2**(ret_exp2 - 1023 - 52), exact.
    value = math.ldexp(np.float64(mantissa), ret_exp2 - 1075)
    if neg:
        value = -value
    return value, True


@njit(cache=True, inline="always")
def decimal_value(man, exp10, neg):
    """(-1)**neg * man * 10**exp10 correctly rounded to float64, for 0 < man < 2**64 (uint64).

    Returns (value, ok); ok is False when it cannot be decided here (the caller falls back to
    an exact method). Exact operands (man <= 2**53, |exp10| <= 22) take one correctly rounded
    product or quotient, the rest `_eisel_lemire`, which cannot decide some of those.
    """
    if man <= _TWO53 and -22 <= exp10 <= 22:
        value = np.float64(man)
        if exp10 >= 0:
            value = value * _EXACT_POW10[exp10]
        else:
            value = value / _EXACT_POW10[-exp10]
        return (-value if neg else value), True
    return _eisel_lemire(man, exp10, neg)


@njit(cache=True)
def _is_space(c):
    # Space, tab, \v, \f and \r (so CRLF files parse); \n ends a line and is handled apart.
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


# The words of the non-finite values, as arrays of one type: tuples of their codes would each
# compile _matches_word again.
_NAN_WORD = np.frombuffer(b"nan", dtype=np.uint8)
_INF_WORD = np.frombuffer(b"inf", dtype=np.uint8)
_INFINITY_WORD = np.frombuffer(b"infinity", dtype=np.uint8)


@njit(cache=True)
def _lower(c):
    if 65 <= c <= 90:
        return c + 32
    return np.int64(c)


@njit(cache=True)
def _matches_word(buf, i, e, word):
    """True if buf[i:e] equals `word` (lowercase bytes, uint8), ignoring case."""
    if e - i != len(word):
        return False
    for k in range(len(word)):
        if _lower(buf[i + k]) != word[k]:
            return False
    return True


@njit(cache=True)
def _parse_float(buf, s, e):
    """Parse buf[s:e] as a decimal real number (the whole range must be consumed).

    Accepts an optional sign, digits with an optional '.', and an optional exponent
    ("1", "1.", ".5", "-0.25", "1e-3", "1E+3", "+3"); "inf", "infinity" and "nan" (any case)
    are recognised only to be reported. Returns (value, status) with status NUM_OK, NUM_BAD,
    NUM_NAN, NUM_INF or NUM_FALLBACK (syntax valid, exact value left to Python's float()).
    """
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    man = _U0
    n_sig = 0  # significant digits held in man (at most 19 always fit a uint64)
    exp10 = 0
    any_digit = False
    truncated = False  # nonzero digits dropped beyond the 19th
    # The digits before and after the point in one loop: past the point, each digit held
    # divides by 10; before it, each digit dropped multiplies by 10.
    after_point = False
    while i < e:
        c = buf[i]
        if c < 48 or c > 57:
            if c == 46 and not after_point:
                after_point = True
                i += 1
                continue
            break
        any_digit = True
        if n_sig < 19:
            if man != _U0 or c != 48:
                man = man * _U10 + np.uint64(c - 48)
                n_sig += 1
            if after_point:
                exp10 -= 1
        else:
            if not after_point:
                exp10 += 1
            if c != 48:
                truncated = True
        i += 1
    if not any_digit:
        if _matches_word(buf, i, e, _NAN_WORD):
            return np.nan, NUM_NAN
        if _matches_word(buf, i, e, _INF_WORD) or _matches_word(buf, i, e, _INFINITY_WORD):
            return np.inf, NUM_INF
        return 0.0, NUM_BAD
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exp_neg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            exp_neg = buf[i] == 45
            i += 1
        if i >= e or buf[i] < 48 or buf[i] > 57:
            return 0.0, NUM_BAD
        exp_value = 0
        clamped = False
        while i < e and 48 <= buf[i] <= 57:
            if exp_value < 100000:
                exp_value = exp_value * 10 + np.int64(buf[i] - 48)
            else:
                clamped = True
            i += 1
        exp10 += -exp_value if exp_neg else exp_value
        if clamped and i == e:
            # (the exponent's value is not held: with 1e5 digits or more before the point,
            # or zeros after it, a clamped exponent can still be in range; float() decides)
            return 0.0, NUM_FALLBACK
    if i != e:
        return 0.0, NUM_BAD
    if man == _U0:
        return (-0.0 if neg else 0.0), NUM_OK
    if not truncated:
        value, ok = decimal_value(man, exp10, neg)
        if ok:
            return value, NUM_OK
        return 0.0, NUM_FALLBACK
    # More than 19 significant digits: the true value lies in [man, man + 1) * 10**exp10;
    # if both ends round to the same double, so does the value.
    value, ok = _eisel_lemire(man, exp10, neg)
    if ok:
        upper, ok_upper = _eisel_lemire(man + _U1, exp10, neg)
        if ok_upper and upper == value:
            return value, NUM_OK
    return 0.0, NUM_FALLBACK


@njit(cache=True)
def _parse_int(buf, s, e):
    """Parse buf[s:e] as a signed decimal integer. Returns (value, status).

    status is INT_OK, INT_BAD (empty, or a non-digit) or INT_OVERFLOW (all digits, but the
    magnitude exceeds int64).
    """
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    if i >= e:
        return 0, INT_BAD
    value = 0
    overflow = False
    while i < e:
        c = buf[i]
        if c < 48 or c > 57:
            return 0, INT_BAD
        d = np.int64(c - 48)
        if value > _INT64_MAX_DIV10 or (value == _INT64_MAX_DIV10 and d > 7):
            overflow = True
        else:
            value = value * 10 + d
        i += 1
    if overflow:
        return 0, INT_OVERFLOW
    return (-value if neg else value), INT_OK


@njit(cache=True)
def _add_fallback(fallback, n_fallback, start, end, target, line):
    """Append a row (start, end, target, line) to `fallback`, doubling it when full.

    Returns the (possibly new) array; the caller increments n_fallback.
    """
    if n_fallback == fallback.shape[0]:
        grown = np.empty((2 * n_fallback, 4), dtype=np.int64)
        for k in range(n_fallback):
            for j in range(4):
                grown[k, j] = fallback[k, j]
        fallback = grown
    fallback[n_fallback, 0] = start
    fallback[n_fallback, 1] = end
    fallback[n_fallback, 2] = target
    fallback[n_fallback, 3] = line
    return fallback


class ParsedBuffer(NamedTuple):
    """What `parse_buffer` returns."""

    # OK or an error code; err_line is 1-based (counted from the start of the buffer),
    # buf[err_start:err_end] is the token at fault and err_a / err_b carry the indices involved.
    status: int
    err_line: int
    err_start: int
    err_end: int
    err_a: int
    err_b: int
    # The rows as CSR arrays sized by upper bounds (slice them to n_rows / nnz); indices are
    # as written in the file.
    n_rows: int
    nnz: int
    indptr: np.ndarray  # int64 (n_rows + 1,)
    indices: np.ndarray  # int64 (nnz,)
    data: np.ndarray  # float64 (nnz,)
    labels: np.ndarray  # float64 (n_rows,)
    qids: np.ndarray  # int64 (n_rows,)
    # Over all features (max_index = -1 if none), and the first line holding max_index.
    min_index: int
    max_index: int
    max_index_line: int
    # fallback[:n_fallback], shape (n_fallback, 4): tokens to re-parse with float(), as rows
    # (start, end, target, line); target >= 0 is a position in data, target < 0 the label of
    # row -target - 1.
    fallback: np.ndarray
    n_fallback: int
    n_newlines: int  # the number of b"\n" in the buffer (lines before the next piece of a file)


def parse_buffer(buf, one_based, index_limit, value_limit) -> ParsedBuffer:
    """Parse a whole LIBSVM file held in `buf` (uint8, shape (n_bytes,)).

    Parameters
    ----------
    buf : uint8 array, shape (n_bytes,)
    one_based : bool
        If True an index 0 is an error (LIBSVM's 1-based indices).
    index_limit : int64
        Largest index allowed as written in the file; larger ones are INDEX_TOO_LARGE.
    value_limit : float64
        Feature values of at least this magnitude are VALUE_OUT_OF_RANGE (the float32 overflow
        threshold when they are read as float32; infinity otherwise).

    Returns
    -------
    ParsedBuffer
    """
    # The kernel returns a plain tuple, made into the NamedTuple here: Numba boxes a
    # NamedTuple by calling its class, Python code that runs a pending signal's handler, and
    # a KeyboardInterrupt raised there crashed the process (SIGSEGV: Ctrl-C while a large file
    # was read); a tuple is boxed without running Python code.
    return ParsedBuffer(*_parse_buffer(buf, one_based, index_limit, value_limit))


@njit(cache=True, nogil=True)
def _parse_buffer(buf, one_based, index_limit, value_limit):
    """`parse_buffer`'s kernel: its fields as a tuple."""
    n = buf.shape[0]
    # Upper bounds: every row ends at a newline or at the end; every feature has a colon.
    n_newlines = 0
    n_colons = 0
    for i in range(n):
        c = buf[i]
        if c == 10:
            n_newlines += 1
        elif c == 58:
            n_colons += 1
    max_rows = n_newlines + 1
    indptr = np.zeros(max_rows + 1, dtype=np.int64)
    indices = np.empty(n_colons, dtype=np.int64)
    data = np.empty(n_colons, dtype=np.float64)
    labels = np.empty(max_rows, dtype=np.float64)
    qids = np.zeros(max_rows, dtype=np.int64)
    fallback = np.empty((16, 4), dtype=np.int64)
    n_fallback = np.int64(0)  # (typed: a literal 0 compiles _add_fallback once more for it)

    status = OK
    err_line = 0
    err_start = 0
    err_end = 0
    err_a = 0
    err_b = 0
    min_index = np.iinfo(np.int64).max
    max_index = -1
    max_index_line = 0
    n_rows = 0
    nnz = np.int64(0)  # (typed, as n_fallback)
    line = 0
    pos = 0
    while pos < n and status == OK:
        line += 1
        i = pos
        n_tokens = 0
        prev_index = -1
        while True:
            while i < n and _is_space(buf[i]):
                i += 1
            if i >= n or buf[i] == 10 or buf[i] == 35:  # end of line or '#' comment
                break
            start = i
            colon = -1
            while i < n:
                c = buf[i]
                if c == 10 or c == 35 or _is_space(c):
                    break
                if c == 58 and colon < 0:
                    colon = i
                i += 1
            end = i
            err_start = start
            err_end = end
            if n_tokens == 0:
                # The label.
                if colon >= 0:
                    status = MISSING_LABEL
                    break
                value, st = _parse_float(buf, start, end)
                if st == NUM_OK:
                    labels[n_rows] = value
                elif st == NUM_FALLBACK:
                    labels[n_rows] = 0.0
                    fallback = _add_fallback(fallback, n_fallback, start, end, -(n_rows + 1), line)
                    n_fallback += 1
                elif st == NUM_NAN:
                    status = LABEL_NAN
                    break
                elif st == NUM_INF:
                    status = LABEL_INF
                    break
                else:
                    status = BAD_LABEL
                    break
                n_tokens += 1
                continue
            is_qid = (
                colon == start + 3
                and buf[start] == 113
                and buf[start + 1] == 105
                and buf[start + 2] == 100
            )
            if is_qid:
                if n_tokens != 1:
                    status = MISPLACED_QID
                    break
                qid, st = _parse_int(buf, colon + 1, end)
                if st != INT_OK:
                    status = BAD_QID
                    break
                qids[n_rows] = qid
                n_tokens += 1
                continue
            if colon < 0:
                status = BAD_TOKEN
                break
            index, st = _parse_int(buf, start, colon)
            if st == INT_BAD:
                err_end = colon
                status = BAD_INDEX
                break
            if st == INT_OVERFLOW:
                err_end = colon
                status = INDEX_TOO_LARGE
                break
            err_a = index
            if index < 0:
                status = NEGATIVE_INDEX
                break
            if index == 0 and one_based:
                status = ZERO_INDEX
                break
            if index > index_limit:
                err_end = colon
                status = INDEX_TOO_LARGE
                break
            if index <= prev_index:
                err_b = prev_index
                status = DUPLICATE_INDEX if index == prev_index else NOT_ASCENDING
                break
            value, st = _parse_float(buf, colon + 1, end)
            if st == NUM_OK:
                if abs(value) >= value_limit:
                    err_start = colon + 1
                    status = VALUE_OUT_OF_RANGE
                    break
                data[nnz] = value
            elif st == NUM_FALLBACK:
                data[nnz] = 0.0
                fallback = _add_fallback(fallback, n_fallback, colon + 1, end, nnz, line)
                n_fallback += 1
            elif st == NUM_NAN:
                status = VALUE_NAN
                break
            elif st == NUM_INF:
                status = VALUE_INF
                break
            else:
                err_start = colon + 1
                status = BAD_VALUE
                break
            indices[nnz] = index
            nnz += 1
            prev_index = index
            if index < min_index:
                min_index = index
            if index > max_index:
                max_index = index
                max_index_line = line
            n_tokens += 1
        if status != OK:
            err_line = line
            break
        if n_tokens > 0:
            n_rows += 1
            indptr[n_rows] = nnz
        # Skip the rest of the line (a comment) and its newline.
        while i < n and buf[i] != 10:
            i += 1
        pos = i + 1
    return (status, err_line, err_start, err_end, err_a, err_b, n_rows, nnz, indptr, indices,
            data, labels, qids, min_index, max_index, max_index_line, fallback, n_fallback,
            n_newlines)


@njit(cache=True, nogil=True)
def line_end_after(buf, pos, end):
    """Position just after the first b"\\n" in buf[pos:end], or `end` if there is none."""
    for i in range(pos, end):
        if buf[i] == 10:
            return i + 1
    return end


@njit(cache=True, nogil=True)
def line_end_before(buf, end):
    """Position just after the last b"\\n" in buf[:end], or 0 if there is none."""
    for i in range(end - 1, -1, -1):
        if buf[i] == 10:
            return i + 1
    return 0


# Status of `parse_number_words`.
WORDS_DONE = 0  # every word was read
WORDS_BAD = 1  # the word that stopped the reading is not a number
WORDS_NONFINITE = 2  # ... is nan or inf
WORDS_FALLBACK = 3  # ... is a number whose exact value is left to Python's float()


@njit(cache=True, nogil=True)
def parse_number_words(buf, start, stop, coef, bias_weights, found):
    """Read the blank-separated numbers of buf[start:stop] as LIBLINEAR's model weights, as
    C's strtod reads them (blanks: C's isspace; numbers: `_parse_float`'s).

    The file's weights are feature-major: word n is weight vector n % n_w's weight of feature
    n // n_w, read here into coef (n_w, n_features) and, past the features, bias_weights
    (n_w,) or (0,); ``found`` words were read before. Words past them are counted, not read
    (a file with too many of them says how many).
    Returns (found, status, word_start, word_end, newlines): found counts the words before
    the one that stopped the reading (status other than WORDS_DONE), buf[word_start:word_end];
    newlines, the b"\\n" before it (before stop when every word was read).
    """
    n_w, n_features = coef.shape
    n_weights = coef.size + bias_weights.shape[0]
    feature = found // n_w if n_w else 0
    vector = found - feature * n_w
    i = start
    newlines = 0
    while True:
        while i < stop and (buf[i] == 10 or _is_space(buf[i])):
            newlines += buf[i] == 10
            i += 1
        if i >= stop:
            return found, WORDS_DONE, stop, stop, newlines
        word_start = i
        while i < stop and not (buf[i] == 10 or _is_space(buf[i])):
            i += 1
        if found < n_weights:
            value, status = _parse_float(buf, word_start, i)
            if status != NUM_OK:
                if status == NUM_BAD:
                    return found, WORDS_BAD, word_start, i, newlines
                if status == NUM_FALLBACK:
                    return found, WORDS_FALLBACK, word_start, i, newlines
                return found, WORDS_NONFINITE, word_start, i, newlines
            if feature < n_features:
                coef[vector, feature] = value
            else:
                bias_weights[vector] = value
            vector += 1
            if vector == n_w:
                vector = 0
                feature += 1
        found += 1


# `parse_number_lines`'s status beyond `parse_number_words`': the number is below zero.
WORDS_NEGATIVE = 4


@njit(cache=True, nogil=True)
def parse_number_lines(buf, start, values, found, line):
    """Read buf[start:] as one non-negative number a line (a per-row weights file), blank
    lines skipped, into values[found:]; ``line`` lines were read before ``start``.

    A line ends at b"\\n", b"\\r\\n" or a lone b"\\r"; blanks around the number are C's
    isspace; numbers are `_parse_float`'s. Stops at the first line that is not one such number.
    Returns (found, status, text_start, text_end, line, next_start): status WORDS_DONE (every
    line read) or why the reading stopped at line ``line``: WORDS_BAD (not one number),
    WORDS_NONFINITE, WORDS_NEGATIVE, or WORDS_FALLBACK (its exact value is left to Python's
    float()); buf[text_start:text_end] is that line's text up to its end, and next_start
    where the line after it begins.
    """
    n = buf.shape[0]
    i = start
    while i < n:
        line += 1
        while i < n and buf[i] != 10 and buf[i] != 13 and _is_space(buf[i]):
            i += 1
        word_start = i
        while i < n and buf[i] != 10 and buf[i] != 13 and not _is_space(buf[i]):
            i += 1
        word_end = i
        trailing_text = False
        while i < n and buf[i] != 10 and buf[i] != 13:
            trailing_text = trailing_text or not _is_space(buf[i])
            i += 1
        line_end = i
        if i < n and buf[i] == 13:
            i += 1
            if i < n and buf[i] == 10:
                i += 1
        elif i < n:
            i += 1
        if word_start == word_end:
            continue  # a blank line
        if trailing_text:
            return found, WORDS_BAD, word_start, line_end, line, i
        value, status = _parse_float(buf, word_start, word_end)
        if status == NUM_FALLBACK:
            return found, WORDS_FALLBACK, word_start, word_end, line, i
        if status == NUM_NAN or status == NUM_INF:
            return found, WORDS_NONFINITE, word_start, word_end, line, i
        if status != NUM_OK:
            return found, WORDS_BAD, word_start, word_end, line, i
        if value < 0:
            return found, WORDS_NEGATIVE, word_start, word_end, line, i
        values[found] = value
        found += 1
    return found, WORDS_DONE, n, n, line, n


# `parse_range_lines`'s status beyond `parse_number_words`': the line's index is not above the
# one before or beyond the limit, or its min is above its max.
RANGE_DISORDER = 5


@njit(cache=True, nogil=True, inline="always")
def _ends_text_line(c):
    # Python's str.splitlines' line boundaries among ASCII bytes: \n, \r, \v, \f, \x1c-\x1e
    return c == 10 or c == 13 or c == 11 or c == 12 or 28 <= c <= 30


@njit(cache=True, nogil=True, inline="always")
def _splits_text_words(c):
    # Python's str.split()'s separators within a line among ASCII bytes: space, \t, \x1f
    return c == 32 or c == 9 or c == 31


@njit(cache=True, nogil=True)
def parse_range_lines(buf, start, indices, lows, highs, found, line, last, index_max):
    """Read buf[start:] (ASCII) as the feature lines of svm-scale's range file, "index min
    max" a line, blank lines skipped, into indices[found:], lows[found:], highs[found:]
    (shapes (n_lines,), n_lines at least the lines left); ``line`` lines were read before
    ``start`` and ``last`` is the index of the line before (0: none).

    Lines end where Python's str.splitlines ends them (\\n, \\r\\n, \\r, \\v, \\f, \\x1c-\\x1e)
    and words are separated as str.split() separates them (space, \\t, \\x1f), so that line
    numbers agree with the Python code that reports a line. A line is taken when it holds
    three words: an index (`_parse_int`'s) above ``last`` and at most ``index_max``, and a
    min and a max (`_parse_float`'s) with min <= max. Stops at the first line that is not so.
    Returns (found, status, line_start, line_end, line, next_start, last): status WORDS_DONE
    (every line read) or why the reading stopped at line ``line``: WORDS_BAD (not three such
    words), WORDS_NONFINITE, WORDS_FALLBACK (a number whose exact value is left to Python's
    float()) or RANGE_DISORDER; buf[line_start:line_end] is that line's text, without its
    end, and next_start where the line after it begins.
    """
    n = buf.shape[0]
    i = start
    while i < n:
        line += 1
        line_start = i
        n_words = 0
        index_start = index_end = low_start = low_end = high_start = high_end = 0
        while True:
            while i < n and _splits_text_words(buf[i]):
                i += 1
            if i >= n or _ends_text_line(buf[i]):
                break
            word_start = i
            while i < n and not (_splits_text_words(buf[i]) or _ends_text_line(buf[i])):
                i += 1
            if n_words == 0:
                index_start, index_end = word_start, i
            elif n_words == 1:
                low_start, low_end = word_start, i
            elif n_words == 2:
                high_start, high_end = word_start, i
            n_words += 1
        line_end = i
        if i < n:
            i += 2 if buf[i] == 13 and i + 1 < n and buf[i + 1] == 10 else 1
        if n_words == 0:
            continue  # a blank line
        if n_words != 3:
            return found, WORDS_BAD, line_start, line_end, line, i, last
        index, index_status = _parse_int(buf, index_start, index_end)
        low, low_status = _parse_float(buf, low_start, low_end)
        high, high_status = _parse_float(buf, high_start, high_end)
        if index_status != INT_OK or low_status == NUM_BAD or high_status == NUM_BAD:
            status = WORDS_BAD
        elif low_status == NUM_FALLBACK or high_status == NUM_FALLBACK:
            status = WORDS_FALLBACK
        elif low_status != NUM_OK or high_status != NUM_OK:
            status = WORDS_NONFINITE
        elif not (last < index <= index_max) or low > high:
            status = RANGE_DISORDER
        else:
            indices[found] = index
            lows[found] = low
            highs[found] = high
            found += 1
            last = index
            continue
        return found, status, line_start, line_end, line, i, last
    return found, WORDS_DONE, n, n, line, n, last


@njit(cache=True)
def parse_floats(buf, starts, ends):
    """Parse the tokens buf[starts[k]:ends[k]] with `_parse_float` (for tests).

    Returns (values, statuses), both of shape (n_tokens,).
    """
    values = np.empty(starts.shape[0], dtype=np.float64)
    statuses = np.empty(starts.shape[0], dtype=np.int64)
    for k in range(starts.shape[0]):
        values[k], statuses[k] = _parse_float(buf, starts[k], ends[k])
    return values, statuses
