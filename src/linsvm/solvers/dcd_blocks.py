"""Dual coordinate descent on one block of rows of a larger problem: the kernels of training
in blocks (``runner.train_blocks``), whose rows' targets, costs, ``alpha`` and shrink marks
are indexed by the row's number in the whole data (``rows``) while the block holds only its
own rows.

- ``svm_block_epoch``: a block's share of an epoch of the SVM duals (-s 1, -s 3), the
  in-memory solver's pass (``dcd.svm_pass``) over the block's active rows;
- ``check_block``: LIBLINEAR's stopping measure and the loss over a block at a fixed w (the
  check at the final w);
- ``enter_interior``: the LR dual's (-s 7) start inside (0, C) for rows a block's solve takes
  as given.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE, loss_value
from ..sparse_rows import row_axpy, row_dot, row_dot_sq_norm
from ._dual import visiting_order
from .dcd import ALPHA_COLUMN, fill_record, svm_coordinate, svm_pass
from .dual_lr import INIT_CAP, INIT_FRACTION


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
        positive = class_index[r] == k
        yi = 1.0 if positive else -1.0
        ci = c_pos if positive else c_neg
        if held_out.shape[0] and held_out[r]:
            ci = 0.0
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
def check_block(indptr, indices, data, bias, y, C, alpha, w, loss):
    """Over a block's rows at fixed w: (sum_i C_i xi(y_i w'x_i), max g, min g), g the
    stopping rule's per-row quantity: for the SVM duals the projected gradient (LIBLINEAR's
    measure), as the solver's own coordinate step computes it; for the LR dual the gradient
    y_i w'x_i + log(alpha_i / (C_i - alpha_i)) (-inf at alpha_i = 0)."""
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
            g = -np.inf if a <= 0.0 else y[i] * dot + np.log(a / (C[i] - a))
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

