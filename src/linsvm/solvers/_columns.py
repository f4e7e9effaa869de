"""Plumbing shared by the primal solvers that run through ``_base.drive``: the column (CSC)
form of one binary sub-problem, with the squared hinge's pieces read from it (-s 5 in
``l1.py`` and PCD in ``pcd.py`` visit features, not rows), the checks of their options and
warm starts, and the run between hook calls (``run_primal``, also SGD's).

The training matrix is transposed once (as LIBLINEAR does) into CSC arrays holding y_i x_ij
(float64), rows renumbered over the rows with C_i > 0. The bias column (value ``bias * y_i`` in
every row) is appended during the same pass: part of that one copy, l more entries, rather
than a copy of X with a column appended.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from ..data import as_csr, check_bias, is_integer
from ..errors import InvalidInputError
from ._base import STALLED, Hook, Progress, Solution, Subproblem, check_eps, drive, stop_reason


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


@njit(cache=True, nogil=True)
def slacks(colptr, rowpos, vals, w, b) -> None:
    """b_i = 1 - y_i w'x_i from the signed columns: the squared hinge's slack, > 0 where the
    row's loss is."""
    margins(colptr, rowpos, vals, w, b)
    for i in range(b.shape[0]):
        b[i] = 1.0 - b[i]


@njit(cache=True, nogil=True)
def column_curvature(colptr, rowpos, vals, C):
    """sum_i C_i x_ij^2 for every column j, shape (n_w,): half a bound on the squared hinge's
    curvature along feature j (the cheap line-search tests of -s 5 and PCD)."""
    n_w = colptr.shape[0] - 1
    xj_sq = np.zeros(n_w)
    for j in range(n_w):
        s2 = 0.0
        for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
            v = vals[k]
            s2 += C[np.uint64(rowpos[k])] * v * v
        xj_sq[j] = s2
    return xj_sq


@njit(cache=True, nogil=True, inline="always")
def squared_hinge_column(colptr, rowpos, vals, C, c_step, b, j):
    """(sum_{b_i > 0} C_i y_i x_ij b_i, sum_{b_i > 0} C_i x_ij^2) over column j, b_i the
    slacks: the squared hinge's derivative along feature j is -2 times the first, its
    generalised second derivative 2 times the second. C_i is read as C[i * c_step] (c_step 0:
    one C for every row, one random access a non-zero fewer)."""
    gb = 0.0
    h = 0.0
    for k in range(np.uint64(colptr[j]), np.uint64(colptr[j + 1])):
        # Only rows with b_i > 0 count. A 0/1 factor, not an if: the sign of b_i is
        # unpredictable and LLVM keeps an if (even a conditional expression) as a branch;
        # the mispredictions made this loop 6x slower (6.5 vs 1 ns a non-zero).
        i = np.uint64(rowpos[k])
        bi = b[i]
        t = C[i * c_step] * vals[k] * np.float64(bi > 0.0)
        gb += t * bi
        h += t * vals[k]
    return gb, h


def cost_step(C: np.ndarray) -> np.uint64:
    """``c_step`` for ``squared_hinge_column``: 0 when every C_i is C[0], else 1."""
    return np.uint64(0 if C.size > 0 and np.all(C == C[0]) else 1)


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


def check_binary_targets(y, C, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(ysign, C) of a binary sub-problem with l = ``n_rows`` rows, checked: ysign (l,)
    float64, +1 where y > 0, else -1; C (l,) float64, finite and >= 0. A one-line
    InvalidInputError otherwise."""
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
    # the losses read the margin y_i w'x_i: the sign of y, whatever values it holds
    return np.where(y > 0, 1.0, -1.0), C


def signed_columns(
    X, y, C, bias: float, eps: float, values_checked: bool = False
) -> SignedColumns:
    """Check one sub-problem (costs finite and >= 0, eps >= 0; X's values unless
    ``values_checked``, see ``Subproblem``) and build its column form."""
    X = as_csr(X, check_finite=not values_checked)
    try:
        bias = float(bias)
        eps = float(eps)
    except (TypeError, ValueError):
        raise InvalidInputError(f"bias and eps must be numbers, got {bias!r}, {eps!r}") from None
    check_bias(bias)
    eps = check_eps(eps)
    n_rows, n_features = X.shape
    ysign, C = check_binary_targets(y, C, n_rows)
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
    if not is_integer(max_iter) or max_iter < 0:
        raise InvalidInputError(f"max_iter must be an integer >= 0, got {max_iter!r}")
    return int(max_iter)


def check_seed(seed) -> int:
    if not is_integer(seed):
        raise InvalidInputError(f"seed must be an integer, got {seed!r}")
    # (the generator keeps 64 bits: a wider seed would give another seed's model)
    if not -(2**63) <= int(seed) < 2**63:
        raise InvalidInputError(f"seed must be an integer from -2^63 to 2^63 - 1, got {seed}")
    return int(seed)


def run_primal(
    sub: Subproblem,
    hook: Hook | None,
    solver: int,
    max_iter: int,
    advance: Callable[[int], None],
    status: Callable[[], tuple[int, bool]],
    live: Callable[[], tuple[np.ndarray, float, dict[str, Any]]],
    state: Callable[[], dict[str, np.ndarray]],
    objectives: Callable[[np.ndarray], tuple[float, float]],
    result: Callable[[], dict[str, Any]],
    converges: bool = True,
    stalled: Callable[[], bool] | None = None,
) -> Solution:
    """Run a resumable primal kernel to its end (``_base.drive``) and return its Solution.

    ``advance(n)`` runs up to n more outer iterations; ``status()`` is (outer iterations done,
    converged), or (done, budget spent) for a solver with no stopping rule (``converges``
    False: never converged). The hook's Progress: ``live()`` gives the current (w, measure,
    figures), ``state()`` the checkpoint, ``objectives(w)`` (P(w), D) on demand. ``result()``
    gives the Solution's fields at the end: w, primal, and whichever of dual, gap, alpha,
    figures (or n_iter) the solver has; n_iter, converged, stop_reason and solver are set here.
    ``stalled()``, for a solver that can stop short of its rule, says it did (``STALLED``):
    its ``status()`` then reports done, not converged.
    """

    def progress() -> Progress:
        w, measure, figures = live()
        return Progress(
            solver=solver,
            index=sub.index,
            iteration=status()[0],
            w=w,
            alpha=None,
            measure=measure,
            figures=figures,
            state=state,
            objectives=lambda: objectives(w),
        )

    went_on = drive(advance, status, hook, max_iter, progress)
    n_iter, done = status()
    if stalled is not None and stalled():
        converged, reason = False, STALLED
    else:
        converged = done and converges
        reason = stop_reason(converged, went_on, n_iter >= max_iter or done)
    fields = {"n_iter": n_iter, "converged": converged, "stop_reason": reason, "solver": solver}
    return Solution(**{**fields, **result()})
