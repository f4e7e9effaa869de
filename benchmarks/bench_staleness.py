"""How stale may the reads of w be? Dual coordinate descent whose every read of w misses the
last ``tau`` updates, as when ``tau`` rows are in flight at once (a GPU's blocks, threads
adding their changes without waiting for each other).

Run from the repository root::

    python -m benchmarks.bench_staleness [--datasets pypi-recent,reuters] [--solvers 1,3]
        [--taus 0,64,256,1024,4096] [--hot 4096:2048:4,...] [--max-epochs 60]
        [--out benchmarks/RESULTS-staleness.md]

The arithmetic, on one thread: each epoch visits a fresh random permutation of the rows (C = 1,
no bias, no shrinking); a row's step reads w as it was before the last ``tau`` steps, whose
changes wait in a queue and reach w in the order they were taken (at the end of an epoch the
queue empties, as a kernel launch ends). ``tau = 0`` is the serial solver. After every epoch
the primal of w is scored against P* (the lowest primal of a tight ``linsvm.train`` run and
of every epoch here); the report gives the epochs to 1e-2 and 1e-3 relative accuracy, or how
far from P* the last epoch ended when they are not reached. The exact w is always the sum of
the steps: only what each read sees is delayed.

The hot block (-s 1, ``--hot``): stale reads hurt through the features most rows share, each
of the rows in flight pushing them as if alone. Here those features (the block: the ones in
most rows) leave the dual: the rows step against their weights frozen (the block's part of
each margin an offset) and change only the others, so no read of them is ever stale; a few
times an epoch the block's weights are set by one Newton step (conjugate gradients, at most
5) on the primal with the other weights fixed, a small smooth problem that a GPU would solve
with sparse matrix-vector products over the block's columns (the report counts them: passes
over the block). At the joint optimum the block's weights are sum_i y_i alpha_i x_i on it, so
the fixed point is the problem's optimum. A read of the other weights still misses ``tau``
steps; what the block removes is the features on which that many steps pile up.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from numba import njit

import linsvm
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value
from linsvm.solvers.dcd import svm_coordinate
from linsvm.sparse_rows import row_axpy, row_dot

from .common import fmt_sci, load_dataset, markdown_table, report_header, write_report

DEFAULT_TAUS = "0,64,256,1024,4096"
DEFAULT_HOT = "1024:512:4,4096:512:4,4096:2048:2,4096:2048:4,16384:2048:4,16384:8192:4"
# A run is stopped once its primal passes this multiple of P* (it has diverged).
DIVERGED = 1e3


@njit(cache=True)
def delayed_epoch(indptr, indices, data, y, qbar, bound_or_diag, squared, alpha, w, order,
                  queue_row, queue_step, tau, offset) -> None:  # fmt: skip
    """One epoch of DCD over ``order`` whose reads of w miss the last ``tau`` steps (the queue
    holds them: row and y_i * change of alpha_i, oldest first). The step is the serial
    solver's (``dcd.svm_coordinate``), without shrinking. ``offset[i]`` is added to every
    w'x_i (the frozen hot block's part of the row's margin; zeros without one)."""
    head = 0
    count = 0
    for i in order:
        dot = row_dot(indptr, indices, data, -1.0, i, w) + offset[i]
        a = alpha[i]
        _, _, a_new = svm_coordinate(a, y[i], dot, bound_or_diag, qbar[i], squared, False,
                                     np.inf, -np.inf)  # fmt: skip
        if a_new == a:
            continue
        alpha[i] = a_new
        step = (a_new - a) * y[i]
        if tau == 0:
            row_axpy(indptr, indices, data, -1.0, i, step, w)
            continue
        if count == tau:  # the oldest step in flight lands
            row_axpy(indptr, indices, data, -1.0, queue_row[head], queue_step[head], w)
            head = (head + 1) % tau
            count -= 1
        tail = (head + count) % tau
        queue_row[tail] = i
        queue_step[tail] = step
        count += 1
    while count > 0:
        row_axpy(indptr, indices, data, -1.0, queue_row[head], queue_step[head], w)
        head = (head + 1) % tau
        count -= 1


def split_hot(X, n_hot: int):
    """The ``n_hot`` features in most rows, the rows without them (CSR, same columns) and the
    rows' part on them (CSR, ``n_hot`` columns), and the share of rows the least of them is in."""
    counts = np.bincount(X.indices, minlength=X.shape[1])
    hot = np.argsort(-counts, kind="stable")[:n_hot]
    is_hot = np.zeros(X.shape[1], dtype=bool)
    is_hot[hot] = True
    cold = X.copy()
    cold.data[is_hot[cold.indices]] = 0.0
    cold.eliminate_zeros()
    return hot, cold, X[:, hot].tocsr(), counts[hot].min() / X.shape[0]


def _block_objective(u, z, s, ds, t: float) -> float:
    """The hot block's objective at u + t s (the rows' losses from their slacks z, which the
    step moves by -t ds), up to the constant of the other weights."""
    zt = np.maximum(z - t * ds, 0.0)
    v = u + t * s
    return 0.5 * (v @ v) + zt @ zt


def hot_block_step(Xh, y, cold_margin, u, newton_steps: int, cg_max: int = 50):
    """Newton steps (conjugate gradients, TRON's relative tolerance 0.1) on the hot block's
    weights ``u``, the rest of w fixed: minimise 1/2 u'u + sum_i max(0, 1 - y_i (c_i +
    u'h_i))^2 (C = 1; c_i the row's margin on the other features, h_i its hot part), with a
    backtracking line search. Returns u and the passes over the hot block's non-zeros taken
    (a margin and gradient, each Hessian-vector product, each line search's direction)."""
    passes = 0
    for _ in range(newton_steps):
        z = 1.0 - y * (cold_margin + Xh @ u)
        act = z > 0
        g = u - 2.0 * (Xh.T @ np.where(act, z * y, 0.0))
        passes += 1
        s = np.zeros_like(u)
        r = -g
        d = r.copy()
        rr = r @ r
        tol = 0.1 * np.sqrt(rr)
        for _ in range(cg_max):
            if np.sqrt(rr) <= tol:
                break
            hd = d + 2.0 * (Xh.T @ np.where(act, Xh @ d, 0.0))
            passes += 1
            a = rr / (d @ hd)
            s += a * d
            r -= a * hd
            rr, rr_old = r @ r, rr
            d = r + (rr / rr_old) * d
        ds = y * (Xh @ s)
        passes += 1

        t, f0, slope = 1.0, _block_objective(u, z, s, ds, 0.0), g @ s
        while _block_objective(u, z, s, ds, t) > f0 + 0.01 * t * slope and t > 1e-8:
            t *= 0.5
        u = u + t * s
    return u, passes


def epochs_to_accuracy(X, y, loss: int, tau: int, max_epochs: int, seed: int = 1,
                       hot: int = 0, hot_steps: int = 1, newton_steps: int = 1,
                       cg_max: int = 5):
    """Primal after each epoch (list) of DCD with reads ``tau`` steps stale, the passes over
    the hot block's non-zeros its steps took per epoch (0 without one), the delay at the end
    and the halvings of it (with a block, the GPU's safeguard acts: below).

    With ``hot`` > 0 the ``hot`` features in most rows are a primal block (L2 loss only): the
    rows step against them frozen (their part of each margin an offset) and change only the
    other weights; ``hot_steps`` times an epoch (after that share of its rows, the queue
    emptied as a kernel launch ends) ``hot_block_step`` sets them anew for the other weights
    as they are. A row's step is the exact one of the dual with the block fixed (its
    curvature |x_i|^2 + D_ii over its other features only); with its whole |x_i|^2 the rows
    lag the block where the block holds most of a row (a bias: 22 epochs to 6e-7 on a
    64-row test problem where this takes 11), though it is the more forgiving of a block
    too small for tau (reuters, tau 1024, 512 features: 5 / 6 epochs to 1e-2 / 1e-3
    against 4 / 6). With a block the GPU solver's safeguard is modelled too: a part of an
    epoch that raised the dual with the block fixed is undone and run again with half the
    delay (the rows in flight halved)."""
    squared = loss == LOSS_SQUARED_HINGE
    # C = 1: D_ii = 1/2 for the L2 loss, the bound U_i = 1 for the L1 loss (the records' column)
    bound_or_diag = 0.5 if squared else 1.0
    if hot:
        hot_idx, X_rows, Xh, _ = split_hot(X, hot)
        u = np.zeros(hot)
    else:
        X_rows = X
    # (with a block: the restricted dual's exact step, Q_ii over the row's other features)
    qbar = np.asarray(X_rows.multiply(X_rows).sum(axis=1)).ravel() + (0.5 if squared else 0.0)
    indptr, indices, data = X_rows.indptr, X_rows.indices, X_rows.data
    alpha = np.zeros(X.shape[0])
    w = np.zeros(X.shape[1])
    offset = np.zeros(X.shape[0])
    C = np.ones(X.shape[0])
    queue_row = np.zeros(max(tau, 1), dtype=np.int64)
    queue_step = np.zeros(max(tau, 1))
    rng = np.random.default_rng(seed)
    primals = []
    passes = 0
    tau_now, halvings = tau, 0
    f_kept = 0.0  # the dual with the block fixed, at alpha = 0
    for _ in range(max_epochs):
        order = rng.permutation(X.shape[0])
        for part in np.array_split(order, hot_steps if hot else 1):
            while True:
                kept = (alpha.copy(), w.copy()) if hot else None
                delayed_epoch(indptr, indices, data, y, qbar, bound_or_diag, squared, alpha,
                              w, part, queue_row, queue_step, tau_now, offset)  # fmt: skip
                # (with the block, the GPU's safeguard: a part that raised the dual with the
                # block fixed is undone and run again with half the reads' delay)
                if not hot or tau_now == 0 or not _rose(_block_dual(w, alpha, y, offset),
                                                        f_kept):  # fmt: skip
                    break
                alpha, w = kept
                tau_now //= 2
                halvings += 1
            if hot:
                u, k = hot_block_step(Xh, y, X_rows @ w, u, newton_steps, cg_max)
                passes += k
                offset = Xh @ u
                f_kept = _block_dual(w, alpha, y, offset)
        w_all = w.copy()
        if hot:
            w_all[hot_idx] = u
        p = primal_value(X.indptr, X.indices, X.data, -1.0, y, C, w_all, loss)
        primals.append(p)
        if not np.isfinite(p) or (len(primals) > 3 and p > DIVERGED * min(primals)):
            break
    return primals, passes / max(len(primals), 1), tau_now, halvings


def _block_dual(w, alpha, y, offset) -> float:
    """The L2-loss SVM's dual (C = 1, minimised) with the block fixed: 1/2 w'w over the other
    weights + sum_i alpha_i (y_i offset_i - 1) + 1/4 sum_i alpha_i^2."""
    return 0.5 * (w @ w) + alpha @ (y * offset - 1.0) + 0.25 * (alpha @ alpha)


def _rose(f: float, f_kept: float) -> bool:
    return not np.isfinite(f) or f > f_kept + 1e-12 * max(abs(f), abs(f_kept))


def first_epoch(rel: list[float], target: float) -> int | None:
    return next((e + 1 for e, r in enumerate(rel) if r <= target), None)


def ending(rel: list[float], max_epochs: int) -> str:
    """How far from P* a run's last epoch ended (a run ends early only when it diverged)."""
    last = rel[-1] if rel else float("nan")
    return f"diverged ({fmt_sci(last)})" if len(rel) < max_epochs else fmt_sci(last)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="pypi-recent,reuters")
    p.add_argument("--solvers", default="1,3")
    p.add_argument("--taus", default=DEFAULT_TAUS)
    p.add_argument("--hot", default=DEFAULT_HOT,
                   help="tau:features:steps of the hot-block runs (-s 1), comma-separated")
    p.add_argument("--max-epochs", type=int, default=60)
    p.add_argument("--out", default="benchmarks/RESULTS-staleness.md")
    args = p.parse_args(argv)
    taus = [int(t) for t in args.taus.split(",")]
    hot_runs = [tuple(int(v) for v in c.split(":")) for c in args.hot.split(",") if c]
    lines = report_header("DCD with stale reads of w: epochs to accuracy", "bench_staleness",
                          [f"taus: {args.taus}; hot-block runs (tau:features:steps): "
                           f"{args.hot or 'none'}; max epochs {args.max_epochs}; C = 1, no bias, "
                           "no shrinking, seed 1"])  # fmt: skip
    for name in args.datasets.split(","):
        ds = load_dataset(name)
        if ds is None:
            print(f"{name}: not found, skipped", file=sys.stderr)
            continue
        X = ds.X.astype(np.float64)
        y = ds.y
        for solver in (int(s) for s in args.solvers.split(",")):
            loss = LOSS_SQUARED_HINGE if solver == 1 else LOSS_HINGE
            tight = linsvm.train(X, y, solver=solver, C=1.0, eps=1e-5)
            runs = {tau: epochs_to_accuracy(X, y, loss, tau, args.max_epochs)[0] for tau in taus}
            blocks = {}
            if loss == LOSS_SQUARED_HINGE:
                for tau, n_hot, steps in hot_runs:
                    blocks[tau, n_hot, steps] = epochs_to_accuracy(
                        X, y, loss, tau, args.max_epochs, hot=min(n_hot, X.shape[1]),
                        hot_steps=steps)  # fmt: skip
            finite = [p for ps in [*runs.values(), *(b[0] for b in blocks.values())]
                      for p in ps if np.isfinite(p)]  # fmt: skip
            p_star = min([tight.results_[0].primal, *finite])
            rows = []
            for tau, primals in runs.items():
                rel = [(p - p_star) / p_star for p in primals]
                rows.append([tau, first_epoch(rel, 1e-2) or "-", first_epoch(rel, 1e-3) or "-",
                             len(rel), ending(rel, args.max_epochs)])  # fmt: skip
                print(name, solver, rows[-1], flush=True)
            lines += [f"## {name} ({X.shape[0]:,} x {X.shape[1]:,}), -s {solver}", "",
                      f"P* = {p_star:.10g}", ""]  # fmt: skip
            lines += markdown_table(
                ["reads miss (tau)", "epochs to 1e-2", "epochs to 1e-3", "epochs run",
                 "(P - P*)/P* at the end"], rows)  # fmt: skip
            lines.append("")
            if blocks:
                lines += hot_block_table(X, blocks, p_star, args.max_epochs)
    write_report(lines, args.out)


def hot_block_table(X, blocks: dict, p_star: float, max_epochs: int) -> list[str]:
    """The hot-block runs of one problem: their block, its share of the rows and non-zeros,
    the passes over it an epoch, the epochs to accuracy."""
    counts = np.sort(np.bincount(X.indices, minlength=X.shape[1]))[::-1]
    rows = []
    for (tau, n_hot, steps), (primals, passes, tau_end, halvings) in blocks.items():
        n_hot = min(n_hot, X.shape[1])
        share = counts[n_hot - 1] / X.shape[0]
        rel = [(p - p_star) / p_star for p in primals]
        rows.append([tau, n_hot, f"{share:.2g}", f"{tau * share:.1f}",
                     f"{counts[:n_hot].sum() / X.nnz:.0%}", steps, f"{passes:.0f}",
                     first_epoch(rel, 1e-2) or "-", first_epoch(rel, 1e-3) or "-",
                     first_epoch(rel, 1e-5) or "-", len(rel), f"{tau_end} ({halvings})",
                     ending(rel, max_epochs)])  # fmt: skip
        print("hot block", rows[-1], flush=True)
    return [
        "Hot block (the features in most rows a primal block, frozen while the rows step, "
        "set by a Newton step `steps` times an epoch; their reads are never stale; a part of "
        "an epoch that raised the dual with the block fixed undone and run again with half "
        "the delay, as the GPU's safeguard halves the rows in flight):", "",
        *markdown_table(
            ["reads miss (tau)", "block's features", "share of rows of its rarest",
             "tau x that share", "block's share of non-zeros", "steps an epoch",
             "passes over the block an epoch", "epochs to 1e-2", "epochs to 1e-3",
             "epochs to 1e-5", "epochs run", "tau at the end (halvings)",
             "(P - P*)/P* at the end"], rows),  # fmt: skip
        "",
    ]


if __name__ == "__main__":
    main()
