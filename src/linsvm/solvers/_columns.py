"""Column (CSC) form of one binary sub-problem, shared by the primal coordinate descent solvers
(-s 5, -s 6 in ``l1.py``, PCD in ``pcd.py``): they visit features, not rows.

The training matrix is transposed once (as LIBLINEAR does) into CSC arrays holding y_i x_ij
(float64), rows renumbered over the rows with C_i > 0. The bias column (value ``bias * y_i`` in
every row) is appended during the same pass: part of that one copy, l more entries, rather
than a copy of X with a column appended.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..data import as_csr
from ..errors import InvalidInputError


@njit(cache=True, nogil=True)
def transpose_signed(indptr, indices, data, rows, y, n_features, bias, colptr, rowpos, vals):
    """CSC arrays of y_i x_ij over the rows ``rows`` (renumbered 0..len-1), bias column last.

    colptr must have n_features (+1 with a bias) + 1 zeroed entries; rowpos / vals the total
    number of entries. Rows come out ascending within each column.
    """
    n_rows = rows.shape[0]
    for r in range(n_rows):
        i = rows[r]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            colptr[np.uint64(indices[k]) + np.uint64(1)] += 1
    if bias >= 0.0:
        colptr[n_features + 1] = n_rows
    for j in range(colptr.shape[0] - 1):
        colptr[j + 1] += colptr[j]
    fill = colptr[:-1].copy()
    for r in range(n_rows):
        i = rows[r]
        yi = y[i]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[k])
            p = np.uint64(fill[j])
            rowpos[p] = r
            vals[p] = yi * data[k]
            fill[j] += 1
        if bias >= 0.0:
            p = np.uint64(fill[n_features])
            rowpos[p] = r
            vals[p] = yi * bias
            fill[n_features] += 1


@njit(cache=True, nogil=True)
def margins(colptr, rowpos, vals, w, z) -> None:
    """z_i = y_i w'x_i from the signed columns."""
    z[:] = 0.0
    for j in range(w.shape[0]):
        wj = w[j]
        if wj != 0.0:
            for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
                z[np.uint64(rowpos[k])] += wj * vals[k]


@dataclass
class SignedColumns:
    """One binary sub-problem in column form.

    X : the CSR matrix (l, n) as given (``as_csr``), for objectives over all rows.
    ysign : (l,) float64, +1 where y > 0, else -1 (whatever values y holds).
    C : (l,) float64, the per-row costs as given.
    rows : (l',) the rows with C_i > 0, in order; ``Cr`` = C[rows].
    colptr (n_w + 1,) int64, rowpos (nnz,) int32/int64, vals (nnz,) float64: CSC arrays of
        y_i x_ij over those rows (renumbered 0..l'-1), bias column last when bias >= 0.
    """

    X: object
    bias: float
    ysign: np.ndarray
    C: np.ndarray
    rows: np.ndarray
    Cr: np.ndarray
    n_w: int
    colptr: np.ndarray
    rowpos: np.ndarray
    vals: np.ndarray


def signed_columns(X, y, C, bias: float, eps: float) -> SignedColumns:
    """Check one sub-problem (costs finite and >= 0, eps > 0) and build its column form."""
    X = as_csr(X)
    try:
        bias = float(bias)
        eps = float(eps)
    except (TypeError, ValueError):
        raise InvalidInputError(f"bias and eps must be numbers, got {bias!r}, {eps!r}") from None
    if not np.isfinite(bias):
        raise InvalidInputError(f"bias must be finite, got {bias}")
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    n_rows, n_features = X.shape
    try:
        y = np.ascontiguousarray(y, dtype=np.float64)
        C = np.ascontiguousarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("y and C must be numeric") from None
    if y.shape != (n_rows,) or C.shape != (n_rows,):
        raise InvalidInputError(f"y and C must have shape ({n_rows},)")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("y contains NaN or infinity")
    if not (np.all(np.isfinite(C)) and np.all(C >= 0)):
        raise InvalidInputError("C must be finite and >= 0 (0 drops the row)")
    ysign = np.where(y > 0, 1.0, -1.0)  # the columns carry y_i x_ij: the sign, whatever y holds
    rows = np.flatnonzero(C > 0)
    n_w = n_features + (1 if bias >= 0 else 0)
    nnz = int(X.indptr[rows + 1].sum() - X.indptr[rows].sum()) if rows.size else 0
    if bias >= 0:
        nnz += rows.size
    pos_dtype = np.int32 if rows.size < 2**31 - 1 else np.int64
    colptr = np.zeros(n_w + 1, dtype=np.int64)
    rowpos = np.empty(nnz, dtype=pos_dtype)
    vals = np.empty(nnz, dtype=np.float64)
    transpose_signed(
        X.indptr, X.indices, X.data, rows, ysign, n_features, bias, colptr, rowpos, vals
    )
    Cr = np.ascontiguousarray(C[rows])
    return SignedColumns(X, bias, ysign, C, rows, Cr, n_w, colptr, rowpos, vals)


def check_w0(w0, n_w: int) -> np.ndarray:
    """A float64 copy of the warm start w0, checked: shape (n_w,), finite."""
    try:
        w0 = np.array(w0, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("w0 must be numeric") from None
    if w0.shape != (n_w,):
        raise InvalidInputError(f"w0 must have shape ({n_w},), got {w0.shape}")
    if not np.all(np.isfinite(w0)):
        raise InvalidInputError("w0 must be finite")
    return w0


def check_max_iter(max_iter) -> int:
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 0:
        raise InvalidInputError(f"max_iter must be an integer >= 0, got {max_iter!r}")
    return int(max_iter)


def check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidInputError(f"seed must be an integer, got {seed!r}")
    return int(seed)


def restore(state: dict, arrays: dict[str, np.ndarray]) -> None:
    """Copy a checkpoint's arrays into the solver's own (same names, shapes and dtypes)."""
    for name, target in arrays.items():
        if name not in state:
            raise InvalidInputError(f"resume state lacks {name!r}")
        value = np.asarray(state[name])
        if value.shape != target.shape:
            raise InvalidInputError(
                f"resume state {name!r} has shape {value.shape}, expected {target.shape}"
            )
        target[...] = value
