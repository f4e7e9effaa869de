"""Sparse row primitives shared by every kernel: dot products and updates of CSR rows.

Rows are CSR rows (``indptr``, ``indices``, ``data``; int32 or int64 indices, float32 or
float64 values) with LIBLINEAR's implicit bias feature: when ``bias >= 0`` every row has one
more feature of value ``bias``, whose weight is the last entry of ``w``. Everything sums in
float64. The per-row helpers are inlined into the kernels that call them (``inline="always"``):
as real calls each visit pushed some 28 arguments on the stack.

The loops over a row's non-zeros are ``while`` loops over unsigned positions, not ``for k in
range(start, stop)``: LLVM unrolls the ``for`` form by 8 behind a loop of the remainder, and on
rows of 10-20 non-zeros the exits of the two loops (a different trip count every row) cost
more than the unrolling saves; the ``while`` form it leaves as one loop, as a C compiler's
-O3 does. A Hessian-vector product (``solvers.newton``) ran 1.1-1.24x faster so on w8a, a9a,
ijcnn1 and pypi-recent, the same on sector's 160-non-zero rows, with the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def sq_norm(v) -> float:
    """v'v by a plain loop. np.dot would call multi-threaded BLAS: on 2 cores its threads cost
    more than the sum (and compete with n_jobs' threads)."""
    total = 0.0
    for j in range(v.shape[0]):
        total += v[j] * v[j]
    return total


@njit(cache=True, nogil=True, inline="always")
def row_dot(indptr, indices, data, bias, i, w) -> float:
    """w'x_i, with the implicit bias feature when ``bias >= 0``."""
    # (the count below is dead code here, and compiled away)
    return row_dot_and_split(indptr, indices, data, bias, i, w, 0)[0]


@njit(cache=True, nogil=True, inline="always")
def row_dot_and_split(indptr, indices, data, bias, i, w, bound) -> tuple[float, int]:
    """(w'x_i, the position in ``indices`` of row i's first feature >= ``bound``): the dot
    product of ``row_dot`` and, in the same sweep, where the row's ascending features cross
    ``bound`` (``_row_sweep``)."""
    dot, split, _ = _row_sweep(indptr, indices, data, bias, i, w, bound)
    return dot, split


@njit(cache=True, nogil=True, inline="always")
def _row_sweep(indptr, indices, data, bias, i, w, bound) -> tuple[float, int, float]:
    """(w'x_i, the position in ``indices`` of row i's first feature >= ``bound``, x_i'x_i)
    in one sweep of the row, with the implicit bias feature. Inlined, what a caller leaves
    unused is compiled away, so each row function keeps only its own work."""
    # Unsigned positions: Numba then skips its negative-index wraparound on every access,
    # which otherwise doubles the cost of these loops (CSR positions are never negative).
    start = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    # Four partial sums: the additions of one long chain wait on each other (FP add latency);
    # four independent chains keep the loads and multiplies flowing. The norm sums in order,
    # as ``row_sq_norm``. Where the features cross ``bound`` is counted without branches (a
    # search's branches on where a row crosses, unpredictable row to row, cost three times
    # as much).
    # The bias feature's terms are taken before the sweep and added after it without a branch:
    # a branch on ``bias`` after the loops made the inlined sweep ~40% slower on short rows
    # (w8a, svmsgd's epoch) whatever its outcome.
    bias_dot = w[w.shape[0] - 1] * bias if bias >= 0.0 else 0.0
    bias_sq = bias * bias if bias >= 0.0 else 0.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    sq = 0.0
    below = np.uint64(0)
    k = start
    while k + np.uint64(4) <= stop:
        j0 = indices[k]
        j1 = indices[k + np.uint64(1)]
        j2 = indices[k + np.uint64(2)]
        j3 = indices[k + np.uint64(3)]
        v0 = np.float64(data[k])
        v1 = np.float64(data[k + np.uint64(1)])
        v2 = np.float64(data[k + np.uint64(2)])
        v3 = np.float64(data[k + np.uint64(3)])
        s0 += w[np.uint64(j0)] * v0
        s1 += w[np.uint64(j1)] * v1
        s2 += w[np.uint64(j2)] * v2
        s3 += w[np.uint64(j3)] * v3
        sq += v0 * v0
        sq += v1 * v1
        sq += v2 * v2
        sq += v3 * v3
        below += np.uint64(j0 < bound) + np.uint64(j1 < bound)
        below += np.uint64(j2 < bound) + np.uint64(j3 < bound)
        k += np.uint64(4)
    while k < stop:
        j0 = indices[k]
        v0 = np.float64(data[k])
        s0 += w[np.uint64(j0)] * v0
        sq += v0 * v0
        below += np.uint64(j0 < bound)
        k += np.uint64(1)
    # (+ 0.0 without a bias: the same value, -0.0 aside)
    return (s0 + s1) + (s2 + s3) + bias_dot, np.int64(start + below), sq + bias_sq


@njit(cache=True, nogil=True, inline="always")
def row_dot_in_order(indptr, indices, data, i, w) -> float:
    """w'x_i without the bias feature, summed in the row's order in one chain: LIBLINEAR's
    sum, bit for bit (the Newton solvers'; ``row_dot`` sums in four chains)."""
    k = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    total = 0.0
    while k < stop:
        total += w[np.uint64(indices[k])] * data[k]
        k += np.uint64(1)
    return total


@njit(cache=True, nogil=True, inline="always")
def row_sq_norm(indptr, data, bias, i) -> float:
    """x_i'x_i in float64 (also for float32 data), with the implicit bias feature."""
    sq = 0.0
    k = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    while k < stop:
        v = np.float64(data[k])
        sq += v * v
        k += np.uint64(1)
    if bias >= 0.0:
        sq += bias * bias
    return sq


@njit(cache=True, nogil=True)
def rows_sq_norms(indptr, data, bias) -> np.ndarray:
    """x_i'x_i of every row (``row_sq_norm``, with the implicit bias feature), shape (l,)."""
    sq = np.empty(indptr.shape[0] - 1)
    for i in range(sq.shape[0]):
        sq[i] = row_sq_norm(indptr, data, bias, i)
    return sq


@njit(cache=True, nogil=True, inline="always")
def row_dot_sq_norm(indptr, indices, data, bias, i, w) -> tuple[float, float]:
    """(w'x_i, x_i'x_i) in one sweep of the row, with the implicit bias feature: bit for bit
    ``row_dot``'s and ``row_sq_norm``'s values (``_row_sweep``)."""
    # (the count is dead code here, and compiled away)
    dot, _, sq = _row_sweep(indptr, indices, data, bias, i, w, 0)
    return dot, sq


@njit(cache=True, nogil=True, inline="always")
def row_axpy(indptr, indices, data, bias, i, scale, w) -> None:
    """w += scale * x_i, with the implicit bias feature when ``bias >= 0``."""
    k = np.uint64(indptr[i])
    stop = np.uint64(indptr[i + 1])
    while k < stop:
        w[np.uint64(indices[k])] += scale * data[k]
        k += np.uint64(1)
    if bias >= 0.0:
        w[w.shape[0] - 1] += scale * bias


@njit(cache=True, nogil=True)
def rows_dot(indptr, indices, data, i, j) -> float:
    """x_i'x_j by merging the two rows' sorted indices (float64 accumulation).

    Each step without a branch: which row moves on is unpredictable from step to step, and
    as branches the merge took 1.5 ms of a 6 ms reuters fit (the coordinate order's sample of
    neighbouring rows); the product at unequal indices enters as an exact zero (the values
    are finite), so the sum is the matched products' in ascending order, as before."""
    p, p_end = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
    q, q_end = np.uint64(indptr[j]), np.uint64(indptr[j + 1])
    s = 0.0
    while p < p_end and q < q_end:
        a = indices[p]
        b = indices[q]
        s += np.float64(data[p]) * data[q] * np.float64(a == b)
        p += np.uint64(a <= b)
        q += np.uint64(b <= a)
    return s
