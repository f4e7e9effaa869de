"""Mapped sparse rows: phi(x_i) for the degree-2 map and feature hashing, row by row.

A map is described to compiled code by a small float64 array, ``params`` (``FeatureMap.params``),
so kernels stay cacheable (no objects): see the ``P_*`` positions below. For an input row x with
features j < n_input (sorted, no duplicates, as canonical CSR has them)::

    degree 2:  phi(x) = [c_lin x_j ; c_sq x_j^2 ; c_cross x_j x_k (j < k) ; c_const]

Exact layout (``hash_bits == 0``): x_j at column j, the pair (j <= k) at column
n_input + k(k+1)/2 + j, the constant last. Walking a sorted row's pairs by (k, j) therefore
writes ascending columns: a materialised row needs no sort. Hashed (``hash_bits = b``): the
entry of key ``feature_key`` goes to column h mod 2^b with sign +1/-1 from h's top bit,
h = ``mix64(key)``; entries of a row that meet in one column add up. With ``degree == 1`` only
the x_j are mapped (hashing raw feature indices).

Features j >= n_input are ignored, as LIBLINEAR ignores features beyond the model's.

Every function works on one row and is inlined into the kernel calling it; ``mapped_dot`` and
``mapped_axpy`` never form phi(x_i), which is how the dual kernels run on the map implicitly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Positions in the params array.
P_DEGREE, P_HASH_BITS, P_N_INPUT, P_C_LIN, P_C_SQ, P_C_CROSS, P_C_CONST = range(7)
N_PARAMS = 7

_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def mix64(key):
    """A 64-bit hash of a 64-bit key (SplitMix64's finaliser: every input bit moves every
    output bit, so low bits make good buckets and the top bit a fair sign)."""
    z = np.uint64(key) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def feature_key(j, k):
    """The key of a mapped feature: x_j alone is (j, -1), the pair x_j x_k (j <= k) is (j, k),
    the constant (-1, -1). Keys do not depend on n_input, so a hashed map has no layout."""
    return (np.uint64(k + 1) << np.uint64(32)) | np.uint64(j + 1)


@njit(cache=True, nogil=True, inline="always")
def _column(params, j, k):
    """(column, sign) of the mapped feature (j, k) as ``feature_key`` names them. Columns are
    unsigned: Numba then skips its negative-index wraparound on every access of w."""
    bits = np.uint64(params[P_HASH_BITS])
    if bits == 0:
        n = np.uint64(params[P_N_INPUT])
        if j < 0:
            return n + n * (n + np.uint64(1)) // np.uint64(2), 1.0
        if k < 0:
            return np.uint64(j), 1.0
        uk = np.uint64(k)
        return n + uk * (uk + np.uint64(1)) // np.uint64(2) + np.uint64(j), 1.0
    h = mix64(feature_key(j, k))
    sign = 1.0 if (h >> np.uint64(63)) == 0 else -1.0
    return h & ((np.uint64(1) << bits) - np.uint64(1)), sign


@njit(cache=True, nogil=True, inline="always")
def _row_span(indptr, indices, i, params):
    """(start, end) positions of row i's features below n_input, the ones the map reads (the
    row is sorted, so those beyond n_input are its tail)."""
    start = np.int64(indptr[i])
    end = np.int64(indptr[i + 1])
    n_input = params[P_N_INPUT]
    while end > start and indices[end - 1] >= n_input:
        end -= 1
    return start, end


@njit(cache=True, nogil=True, inline="always")
def _coefficients(params):
    """(c_lin, c_sq, c_cross): the scalings of x_j, x_j^2 and x_j x_k."""
    return params[P_C_LIN], params[P_C_SQ], params[P_C_CROSS]


@njit(cache=True, nogil=True, inline="always")
def mapped_dot(indptr, indices, data, bias, i, w, params) -> float:
    """w'phi(x_i) (+ the bias feature's weight x bias when ``bias >= 0``), phi never formed."""
    start, end = _row_span(indptr, indices, i, params)
    c_lin, c_sq, c_cross = _coefficients(params)
    exact = params[P_HASH_BITS] == 0.0
    s = 0.0
    if params[P_DEGREE] == 2.0 and exact:
        # The pairs (j_q, j_p), q < p, of a sorted row sit at base(j_p) + j_q: one gather each.
        n = np.uint64(params[P_N_INPUT])
        for p in range(np.uint64(start), np.uint64(end)):
            jp = np.uint64(indices[p])
            vp = np.float64(data[p])
            base = n + jp * (jp + np.uint64(1)) // np.uint64(2)
            cross = 0.0
            for q in range(np.uint64(start), p):
                cross += w[base + np.uint64(indices[q])] * data[q]
            s += vp * (c_lin * w[jp] + c_cross * cross + c_sq * vp * w[base + jp])
    else:
        for p in range(start, end):
            jp = np.int64(indices[p])
            vp = np.float64(data[p])
            col, sign = _column(params, jp, -1)
            s += sign * c_lin * vp * w[col]
            if params[P_DEGREE] == 2.0:
                for q in range(start, p + 1):
                    jq = np.int64(indices[q])
                    col, sign = _column(params, jq, jp)
                    c = c_sq if q == p else c_cross
                    s += sign * c * vp * data[q] * w[col]
    if params[P_C_CONST] != 0.0:
        col, sign = _column(params, -1, -1)
        s += sign * params[P_C_CONST] * w[col]
    if bias >= 0.0:
        s += w[w.shape[0] - 1] * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def mapped_axpy(indptr, indices, data, bias, i, scale, w, params) -> None:
    """w += scale * phi(x_i) (and the bias feature), phi never formed."""
    start, end = _row_span(indptr, indices, i, params)
    c_lin, c_sq, c_cross = _coefficients(params)
    exact = params[P_HASH_BITS] == 0.0
    if params[P_DEGREE] == 2.0 and exact:
        n = np.uint64(params[P_N_INPUT])
        for p in range(np.uint64(start), np.uint64(end)):
            jp = np.uint64(indices[p])
            sp_ = scale * np.float64(data[p])
            base = n + jp * (jp + np.uint64(1)) // np.uint64(2)
            w[jp] += c_lin * sp_
            sc = c_cross * sp_
            for q in range(np.uint64(start), p):
                w[base + np.uint64(indices[q])] += sc * data[q]
            w[base + jp] += c_sq * sp_ * data[p]
    else:
        for p in range(start, end):
            jp = np.int64(indices[p])
            sp_ = scale * np.float64(data[p])
            col, sign = _column(params, jp, -1)
            w[col] += sign * c_lin * sp_
            if params[P_DEGREE] == 2.0:
                for q in range(start, p + 1):
                    jq = np.int64(indices[q])
                    col, sign = _column(params, jq, jp)
                    c = c_sq if q == p else c_cross
                    w[col] += sign * c * sp_ * data[q]
    if params[P_C_CONST] != 0.0:
        col, sign = _column(params, -1, -1)
        w[col] += sign * params[P_C_CONST] * scale
    if bias >= 0.0:
        w[w.shape[0] - 1] += scale * bias


@njit(cache=True, nogil=True)
def mapped_row(indptr, indices, data, i, params, cols, vals) -> int:
    """Write phi(x_i) into cols/vals (ascending columns, entries of one column added, zeros
    dropped); return its length. cols/vals must hold ``mapped_row_bound`` entries."""
    start, end = _row_span(indptr, indices, i, params)
    c_lin, c_sq, c_cross = _coefficients(params)
    m = 0
    for p in range(start, end):
        jp = np.int64(indices[p])
        vp = np.float64(data[p])
        if c_lin != 0.0:
            cols[m], sign = _column(params, jp, -1)
            vals[m] = sign * c_lin * vp
            m += 1
    if params[P_DEGREE] == 2.0:
        for p in range(start, end):
            jp = np.int64(indices[p])
            vp = np.float64(data[p])
            for q in range(start, p + 1):
                cols[m], sign = _column(params, np.int64(indices[q]), jp)
                vals[m] = sign * (c_sq if q == p else c_cross) * vp * data[q]
                m += 1
    if params[P_C_CONST] != 0.0:
        cols[m], sign = _column(params, -1, -1)
        vals[m] = sign * params[P_C_CONST]
        m += 1
    if params[P_HASH_BITS] != 0.0:
        # Hashed columns come in any order. Exact ones are already ascending: the x_j below
        # n_input, then the pairs by (k, j), then the constant.
        order = np.argsort(cols[:m], kind="mergesort")
        sorted_cols = cols[:m][order]
        sorted_vals = vals[:m][order]
        for t in range(m):
            cols[t] = sorted_cols[t]
            vals[t] = sorted_vals[t]
    # add the entries that share a column; drop exact zeros
    out = 0
    for t in range(m):
        if out > 0 and cols[out - 1] == cols[t]:
            vals[out - 1] += vals[t]
        else:
            cols[out] = cols[t]
            vals[out] = vals[t]
            out += 1
    kept = 0
    for t in range(out):
        if vals[t] != 0.0:
            cols[kept] = cols[t]
            vals[kept] = vals[t]
            kept += 1
    return kept


@njit(cache=True, nogil=True, inline="always")
def mapped_row_bound(indptr, i, params) -> int:
    """At most how many entries phi(x_i) has (before columns meet)."""
    m = np.int64(indptr[i + 1] - indptr[i])
    total = m
    if params[P_DEGREE] == 2.0:
        total += m * (m + 1) // 2
    return total + 1


def row_scratch(indptr: np.ndarray, params: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Room for one mapped row of the longest input row: (cols int64, vals float64); empty
    arrays without a map (``params`` None)."""
    if params is None:
        return np.empty(0, dtype=np.int64), np.empty(0)
    m = int(np.max(np.diff(indptr))) if indptr.shape[0] > 1 else 0
    size = m + (m * (m + 1) // 2 if params[P_DEGREE] == 2.0 else 0) + 1
    return np.empty(size, dtype=np.int64), np.empty(size)


@njit(cache=True, nogil=True)
def mapped_sq_norm(indptr, indices, data, bias, i, params, cols, vals) -> float:
    """||phi(x_i)||^2 (+ bias^2), of the row as hashed: entries that share a column add first,
    so the dual's Qbar_ii is exact for a hashed map too."""
    m = mapped_row(indptr, indices, data, i, params, cols, vals)
    sq = 0.0
    for t in range(m):
        sq += vals[t] * vals[t]
    if bias >= 0.0:
        sq += bias * bias
    return sq
