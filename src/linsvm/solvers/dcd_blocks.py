"""Dual coordinate descent on one block of rows of a larger problem: the kernels of training
in blocks (``runner.train_blocks``), whose rows' targets, costs, ``alpha`` and shrink marks
are indexed by the row's number in the whole data (``rows``) while the block holds only its
own rows.

- ``svm_block_epoch``: a block's share of an epoch of the SVM duals (-s 1, -s 3), the
  in-memory solver's pass (``dcd.svm_pass``) over the block's active rows;
- ``lr_block_epoch``: the same for the LR dual (-s 7), the in-memory solver's pass
  (``dual_lr.lr_dual_kernel``, one outer iteration) over the block's rows;
- ``check_block``: LIBLINEAR's stopping measure and the loss over a block at a fixed w (the
  check at the final w);
- ``enter_interior``: the LR dual's (-s 7) start inside (0, C) for rows a block's solve takes
  as given.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE, _xlogx_rel, loss_value
from ..sparse_rows import row_axpy, row_dot, row_dot_sq_norm
from ._dual import visiting_order
from .dcd import ALPHA_COLUMN, fill_record, svm_coordinate, svm_pass
from .dual_lr import (
    _A,
    _C,
    _CA,
    _F_GMAX,
    _I_NEWTON,
    _QII,
    _Y,
    INIT_CAP,
    INIT_FRACTION,
    lr_dual_kernel,
)


@njit(cache=True, nogil=True, inline="always")
def _row_target(r, class_index, k, c_pos, c_neg, held_out):
    """(y_r, C_r) of row r in sub-problem k: +1 and ``c_pos`` for class k, else -1 and
    ``c_neg``; C_r = 0 where held out (``held_out`` a mask, or empty: none)."""
    positive = class_index[r] == k
    ci = c_pos if positive else c_neg
    if held_out.shape[0] and held_out[r]:
        ci = 0.0
    return (1.0 if positive else -1.0), ci


@njit(cache=True, nogil=True)
def svm_block_epoch(indptr, indices, data, bias, rows, class_index, k, c_pos, c_neg,
                     held_out, squared, alpha, w, w_start, shrunk, pgmax_old, pgmin_old,
                     bucket_size, buckets_per_group, use_prefetch, rng, rec, removed, active,
                     order, bucket_order):  # fmt: skip
    """One block's share of an epoch of the SVM dual (-s 1, -s 3): the in-memory solver's
    pass (``svm_pass``) over the block's active rows in its bucketed order, shrinking against
    the whole previous epoch's extremes.

    The block's row i is row ``rows[i]`` of the whole data, whose arrays ``class_index``,
    ``held_out`` (a mask, or empty: none), ``alpha`` and ``shrunk`` are given whole.

    First, in storage order (streaming): the block's parts of the exact objectives at the
    epoch's start, its loss at ``w_start`` and its alpha terms of the dual (sum of 1/2 D_ii
    alpha_i^2 - alpha_i: its rows' alpha are still the epoch's first), and the in-memory
    solver's record of every active row (trainable, not ``shrunk``): alpha, Qbar_ii, y_i,
    U_i or D_ii, so that a visit in random order touches one cache line of state. Then the
    pass, and the records' alpha and shrink marks written back (a row shrunk now is skipped
    until the caller clears its mark).
    The targets and costs come from the class index (``problems.RowTargets``): y_i = +1 for class
    ``k``, else -1; C_i = ``c_pos`` or ``c_neg`` accordingly, 0 where held out.

    Shapes: indptr (l + 1,), rows (l,); class_index, held_out, alpha, shrunk (uint8) (n,);
    work arrays rec (at least (l, 4)), removed (uint8, at least l, all zero), active (at
    least l), order and bucket_order (``order_buffers(l, bucket_size)``). Returns (loss at
    w_start, alpha terms at the start, the projected gradients' max and min over the rows
    visited, rows visited).
    """
    n_rows = rows.shape[0]
    loss = LOSS_SQUARED_HINGE if squared else LOSS_HINGE
    loss_total = 0.0
    alpha_terms = 0.0
    n_active = 0
    for i in range(n_rows):
        r = rows[i]
        yi, ci = _row_target(r, class_index, k, c_pos, c_neg, held_out)
        if ci <= 0.0:
            continue
        dot, sq = row_dot_sq_norm(indptr, indices, data, bias, i, w_start)
        loss_total += ci * loss_value(loss, yi * dot)
        a = alpha[r]
        if a != 0.0:
            alpha_terms += (0.25 * a * (a / ci) if squared else 0.0) - a
        if shrunk[r] == 0:
            fill_record(rec, i, a, yi, ci, sq, squared, 1.0)
            active[n_active] = i
            n_active += 1
    visiting_order(active, n_active, order, bucket_order, bucket_size, buckets_per_group, rng)
    pg_max, pg_min = svm_pass(indptr, indices, data, bias, squared, rec, w, order, n_active,
                              True, pgmax_old, pgmin_old, use_prefetch, removed, None, 1.0)
    for s in range(n_active):
        i = active[s]
        alpha[rows[i]] = rec[i, ALPHA_COLUMN]
        if removed[i]:
            shrunk[rows[i]] = 1
            removed[i] = 0
    return loss_total, alpha_terms, pg_max, pg_min, n_active


@njit(cache=True, nogil=True)
def lr_block_epoch(indptr, indices, data, bias, rows, class_index, k, c_pos, c_neg, held_out,
                   alpha, alpha_c, w, w_start, inner_eps, bucket_size, buckets_per_group,
                   use_prefetch, rng, rec, active, order, bucket_order):  # fmt: skip
    """One block's share of an epoch of the LR dual (-s 7): the in-memory solver's outer
    iteration (``lr_dual_kernel``) over the block's trainable rows in its bucketed order, at
    the inner Newton tolerance ``inner_eps`` of the whole epoch (the caller lowers it between
    epochs, as the solver does between outer iterations, from the whole epoch's Newton steps).

    The block's row i is row ``rows[i]`` of the whole data, whose arrays ``class_index``,
    ``held_out`` (a mask, or empty: none), ``alpha`` and ``alpha_c`` (C_i - alpha_i, kept
    apart so that an alpha near C_i keeps its relative accuracy, as the solver's pairs) are
    given whole; targets and costs as in ``svm_block_epoch``.

    First, in storage order: the block's loss at ``w_start`` and its terms of the dual at the
    epoch's start (sum of alpha_i log(alpha_i/C_i) + (C_i - alpha_i) log((C_i - alpha_i)/C_i)),
    and each row's record; a row not yet inside (0, C_i) (never visited) enters as the
    solver's own start does (``enter_interior``), w with it. Then the pass, and the records'
    pairs written back.

    Shapes: as ``svm_block_epoch``'s; rec at least (l, 5). Returns (loss at w_start, dual
    terms at the start, max |g_i| over the pass (the solver's measure), Newton steps taken,
    rows visited).
    """
    n_rows = rows.shape[0]
    loss_total = 0.0
    alpha_terms = 0.0
    n_active = 0
    for i in range(n_rows):
        r = rows[i]
        yi, ci = _row_target(r, class_index, k, c_pos, c_neg, held_out)
        if ci <= 0.0:
            continue
        dot, sq = row_dot_sq_norm(indptr, indices, data, bias, i, w_start)
        loss_total += ci * loss_value(LOSS_LOGISTIC, yi * dot)
        a, ac = alpha[r], alpha_c[r]
        alpha_terms += _xlogx_rel(a, ci) + _xlogx_rel(ac, ci)
        if a <= 0.0 or ac <= 0.0:
            lo = min(INIT_FRACTION * ci, INIT_CAP)
            start = lo if a <= 0.0 else ci - lo
            row_axpy(indptr, indices, data, bias, i, yi * (start - a), w)
            a, ac = (lo, ci - lo) if a <= 0.0 else (ci - lo, lo)
        rec[i, _A], rec[i, _CA], rec[i, _QII], rec[i, _Y], rec[i, _C] = a, ac, sq, yi, ci
        active[n_active] = i
        n_active += 1
    fstate = np.array([inner_eps, np.inf, inner_eps])
    istate = np.array([n_active, 0, 0, 0], dtype=np.int64)
    # eps -1: the pass never counts as converged here (the caller applies the rule); the
    # floor inner_eps: the tolerance stays the epoch's
    lr_dual_kernel(indptr, indices, data, bias, rec, w, active[:n_active], fstate, istate, rng,
                   -1.0, inner_eps, 1, bucket_size, buckets_per_group, use_prefetch, order,
                   bucket_order)  # fmt: skip
    for s in range(n_active):
        i = active[s]
        alpha[rows[i]] = rec[i, _A]
        alpha_c[rows[i]] = rec[i, _CA]
    gmax = fstate[_F_GMAX] if n_active > 0 else 0.0
    return loss_total, alpha_terms, gmax, istate[_I_NEWTON], n_active


@njit(cache=True, nogil=True)
def check_block(indptr, indices, data, bias, y, C, alpha, alpha_c, w, loss):
    """Over a block's rows at fixed w: (sum_i C_i xi(y_i w'x_i), max g, min g), g the
    stopping rule's per-row quantity: for the SVM duals the projected gradient (LIBLINEAR's
    measure), as the solver's own coordinate step computes it; for the LR dual the gradient
    y_i w'x_i + log(alpha_i / (C_i - alpha_i)) (-inf at alpha_i = 0), with C_i - alpha_i
    from ``alpha_c`` where given (non-empty: kept apart, accurate near C_i)."""
    squared = loss == LOSS_SQUARED_HINGE
    total = 0.0
    g_max = -np.inf
    g_min = np.inf
    for i in range(y.shape[0]):
        if C[i] <= 0.0:
            continue
        dot = row_dot(indptr, indices, data, bias, i, w)
        total += C[i] * loss_value(loss, y[i] * dot)
        if loss == LOSS_LOGISTIC:
            a = alpha[i]
            ac = alpha_c[i] if alpha_c.shape[0] else C[i] - a
            g = -np.inf if a <= 0.0 else y[i] * dot + np.log(a / ac)
        else:
            bound_or_diag = 0.5 / C[i] if squared else C[i]
            # no shrinking: the step's PG only (its Qbar and new alpha are not used)
            _, g, _ = svm_coordinate(
                alpha[i], y[i], dot, bound_or_diag, 1.0, squared, False, np.inf, -np.inf
            )
        g_max = max(g_max, g)
        g_min = min(g_min, g)
    return total, g_max, g_min


@njit(cache=True, nogil=True)
def enter_interior(indptr, indices, data, bias, y, C, alpha, w) -> None:
    """The LR dual lives in 0 < alpha_i < C_i: move each trainable row's alpha inside as the
    solver's own start does (LIBLINEAR's min(1e-3 C_i, 1e-8) from a bound), and w with it, so
    that w = sum_i y_i alpha_i x_i stays exact when the block's solve takes them as given."""
    for i in range(y.shape[0]):
        c = C[i]
        if c <= 0.0:
            continue
        lo = min(INIT_FRACTION * c, INIT_CAP)
        a = alpha[i]
        if a <= 0.0:
            a = lo
        elif c - a <= 0.0:
            a = c - lo
        if a != alpha[i]:
            row_axpy(indptr, indices, data, bias, i, y[i] * (a - alpha[i]), w)
            alpha[i] = a

