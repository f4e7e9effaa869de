"""Numba kernels that write model weights as text, byte for byte as Python's ``f"{v:.17g}"``.

A model file's weight lines (`linsvm.io.model_file`) hold every weight as ``%.17g``: 17
significant digits, correctly rounded (round half to even on the exact binary value), laid
out as C's ``%g`` lays them out (fixed notation for decimal exponents -4 to 16, else
``d.ddde+XX``; trailing zeros and a trailing point dropped). Formatting them one Python float
at a time costs about a microsecond and 100 bytes of Python objects a weight; these kernels
write them straight into a byte buffer, a buffer at a time.

The 17 digits of v = m * 2**e come from one 64x128-bit product: m (normalised to 64 bits)
times the parser's truncated 128-bit mantissa of 10**q (`linsvm.io._parse`), q chosen so that
the integer part N of v * 10**q has 17 digits. The table's truncation makes the product at
most m units of its lowest 64-bit word too small, far below the fraction's resolution, so the
rounding of N is decided exactly except when the fraction lies within that margin of one
half: exact ties (which need round-half-even on the exact value) and about one value in
2**60 otherwise. Such a value, and a non-finite one, is handed back to the caller, which
formats it with Python (`FALLBACK`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._parse import _POW10_HI, _POW10_LO, _POW10_MAX_EXP, _POW10_MIN_EXP, _mul64

# Status of `format_weight_rows`.
DONE = 0
FULL = 1  # the buffer is full: write it out and call again from (row, col)
FALLBACK = 2  # the weight at (row, col) needs Python's formatting

# The longest "%.17g" text ("-1.2345678901234567e-308"), a space and a newline.
MAX_VALUE_BYTES = 24
_ROOM = MAX_VALUE_BYTES + 2


def _pow10_exponents() -> np.ndarray:
    """b_q with 10**q ~= (hi * 2**64 + lo) * 2**b_q for the parser's table entry of 10**q
    (its leading bit at bit 127): from exact integers, as the table was built."""
    out = np.empty(_POW10_MAX_EXP - _POW10_MIN_EXP + 1, dtype=np.int64)
    for q in range(_POW10_MIN_EXP, _POW10_MAX_EXP + 1):
        if q >= 0:
            out[q - _POW10_MIN_EXP] = (10**q).bit_length() - 128
        else:
            out[q - _POW10_MIN_EXP] = -((10**-q).bit_length()) - 127
    return out


_POW10_EXP2 = _pow10_exponents()

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U11 = np.uint64(11)
_MAX_U64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_TWO53 = 2.0**53
_LOG10_2 = math.log10(2.0)
_TEN16 = 10**16
_TEN17 = 10**17


@njit(cache=True, nogil=True)
def _digits17(v):
    """(N, k, ok) for finite nonzero v > 0: N in [10**16, 10**17) the 17 significant digits
    of v correctly rounded, k its decimal exponent (v ~= N * 10**(k - 16)); ok False when the
    rounding cannot be decided from the 192-bit product (the caller falls back)."""
    frac, e = math.frexp(v)  # v = frac * 2**e, frac in [0.5, 1): 53 bits, also subnormal
    m = np.uint64(frac * _TWO53) << _U11  # v = m * 2**(e - 64), leading bit at 63
    k = int(math.floor((e - 1) * _LOG10_2))  # floor(log10 v), or one less
    for _ in range(3):
        q = 16 - k
        if q < _POW10_MIN_EXP or q > _POW10_MAX_EXP:
            return 0, 0, False
        t = q - _POW10_MIN_EXP
        a_hi, a_lo = _mul64(m, _POW10_HI[t])
        b_hi, b_lo = _mul64(m, _POW10_LO[t])
        p1 = a_lo + b_hi
        p2 = a_hi + (_U1 if p1 < a_lo else _U0)
        p0 = b_lo
        # v * 10**q ~= (p2:p1:p0) * 2**(e - 64 + b_q); its integer part lies in p2
        shift = -(e - 64 + _POW10_EXP2[t]) - 128
        if shift < 1 or shift > 63:
            return 0, 0, False
        sh = np.uint64(shift)
        n = int(p2 >> sh)
        if n >= _TEN17:
            k += 1
            continue
        if n < _TEN16:
            k -= 1
            continue
        half = _U1 << (sh - _U1)
        f2 = p2 & ((_U1 << sh) - _U1)
        # The exact product lies in [P, P + m) in units of p0: above P by less than one
        # unit of p1. Round up when P is past one half, down when P + one unit of p1 is
        # still below it (with a unit to spare); in between, undecided.
        if f2 > half or (f2 == half and (p1 != _U0 or p0 != _U0)):
            n += 1
        elif f2 == half or (f2 == half - _U1 and p1 == _MAX_U64):
            return 0, 0, False
        if n == _TEN17:
            n = _TEN16
            k += 1
        return n, k, True
    return 0, 0, False


@njit(cache=True, nogil=True)
def _write_g17(v, out, pos):
    """Write ``f"{v:.17g}"`` at out[pos:] (room for MAX_VALUE_BYTES assumed); the position
    after it, or -1 when v must be formatted by Python (not finite, or undecided)."""
    if not math.isfinite(v):
        return -1
    negative = math.copysign(1.0, v) < 0.0
    if negative:
        out[pos] = 45  # "-"
        pos += 1
    if v == 0.0:
        out[pos] = 48
        return pos + 1
    n, k, ok = _digits17(abs(v))
    if not ok:
        return -1
    n_digits = 17
    while n % 10 == 0:  # "%g" drops trailing zeros (n > 0, so this stops)
        n //= 10
        n_digits -= 1
    if 0 <= k < 17:
        # fixed: k + 1 integer digits (zeros past the significant ones), the rest after "."
        if n_digits <= k + 1:
            end = pos + k + 1
            for i in range(pos + n_digits, end):
                out[i] = 48
            p = pos + n_digits - 1
            for _ in range(n_digits):
                out[p] = 48 + n % 10
                n //= 10
                p -= 1
            return end
        end = pos + n_digits + 1
        p = end - 1
        for _ in range(n_digits - k - 1):
            out[p] = 48 + n % 10
            n //= 10
            p -= 1
        out[p] = 46  # "."
        p -= 1
        for _ in range(k + 1):
            out[p] = 48 + n % 10
            n //= 10
            p -= 1
        return end
    if -4 <= k < 0:
        # fixed: "0.", -k - 1 zeros, the digits
        out[pos] = 48
        out[pos + 1] = 46
        p = pos + 2
        for _ in range(-k - 1):
            out[p] = 48
            p += 1
        end = p + n_digits
        p = end - 1
        for _ in range(n_digits):
            out[p] = 48 + n % 10
            n //= 10
            p -= 1
        return end
    # exponential: d[.ddd]e+XX (at least two exponent digits)
    mantissa_end = pos + n_digits + (1 if n_digits > 1 else 0)
    p = mantissa_end - 1
    for _ in range(n_digits - 1):
        out[p] = 48 + n % 10
        n //= 10
        p -= 1
    if n_digits > 1:
        out[p] = 46
        p -= 1
    out[p] = 48 + n
    out[mantissa_end] = 101  # "e"
    out[mantissa_end + 1] = 45 if k < 0 else 43  # "-" / "+"
    x = -k if k < 0 else k
    n_exp = 3 if x >= 100 else 2
    end = mantissa_end + 2 + n_exp
    p = end - 1
    for _ in range(n_exp):
        out[p] = 48 + x % 10
        x //= 10
        p -= 1
    return end


@njit(cache=True, nogil=True)
def format_weight_rows(w, row, col, out):
    """Write the weight lines of ``w`` from line ``row``, weight ``col``, into ``out``.

    w : (n_w, n_lines) float64 -- line j of the file holds w[:, j], each weight as "%.17g"
        followed by a space, then a newline (a line of no weights is " ").
    out : uint8 buffer of at least MAX_VALUE_BYTES + 2 bytes.

    Returns (row, col, n_bytes, status): out[:n_bytes] holds the text written; status DONE
    (every line written), FULL (call again from (row, col)) or FALLBACK (the weight at
    (row, col) is to be formatted by Python, then continue after it).
    """
    n_w, n_lines = w.shape
    pos = 0
    limit = out.shape[0] - _ROOM
    while row < n_lines:
        if n_w == 0:
            if pos > limit:
                return row, col, pos, FULL
            out[pos] = 32
            pos += 1
        while col < n_w:
            if pos > limit:
                return row, col, pos, FULL
            end = _write_g17(w[col, row], out, pos)
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
