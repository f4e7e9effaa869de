"""How stale may the reads of w be? Dual coordinate descent whose every read of w misses the
last ``tau`` updates, as when ``tau`` rows are in flight at once (a GPU's blocks, threads
adding their changes without waiting for each other).

Run from the repository root::

    python -m benchmarks.bench_staleness [--datasets pypi-recent,reuters] [--solvers 1,3]
        [--taus 0,64,256,1024,4096] [--max-epochs 60] [--out benchmarks/RESULTS-staleness.md]

The arithmetic, on one thread: each epoch visits a fresh random permutation of the rows (C = 1,
no bias, no shrinking); a row's step reads w as it was before the last ``tau`` steps, whose
changes wait in a queue and reach w in the order they were taken (at the end of an epoch the
queue empties, as a kernel launch ends). ``tau = 0`` is the serial solver. After every epoch
the primal of w is scored against P* (the lowest primal of a tight ``linsvm.train`` run and
of every epoch here); the report gives the epochs to 1e-2 and 1e-3 relative accuracy, or how
far from P* the last epoch ended when they are not reached. The exact w is always the sum of
the steps: only what each read sees is delayed.
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
# A run is stopped once its primal passes this multiple of P* (it has diverged).
DIVERGED = 1e3


@njit(cache=True)
def delayed_epoch(indptr, indices, data, y, qbar, bound_or_diag, squared, alpha, w, order,
                  queue_row, queue_step, tau) -> None:  # fmt: skip
    """One epoch of DCD over ``order`` whose reads of w miss the last ``tau`` steps (the queue
    holds them: row and y_i * change of alpha_i, oldest first). The step is the serial
    solver's (``dcd.svm_coordinate``), without shrinking."""
    head = 0
    count = 0
    for i in order:
        dot = row_dot(indptr, indices, data, -1.0, i, w)
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


def epochs_to_accuracy(X, y, loss: int, tau: int, max_epochs: int, seed: int = 1):
    """Primal after each epoch (list) of DCD with reads ``tau`` steps stale."""
    indptr, indices, data = X.indptr, X.indices, X.data
    squared = loss == LOSS_SQUARED_HINGE
    # C = 1: D_ii = 1/2 for the L2 loss, the bound U_i = 1 for the L1 loss (the records' column)
    bound_or_diag = 0.5 if squared else 1.0
    qbar = np.asarray(X.multiply(X).sum(axis=1)).ravel() + (0.5 if squared else 0.0)
    alpha = np.zeros(X.shape[0])
    w = np.zeros(X.shape[1])
    C = np.ones(X.shape[0])
    queue_row = np.zeros(max(tau, 1), dtype=np.int64)
    queue_step = np.zeros(max(tau, 1))
    rng = np.random.default_rng(seed)
    primals = []
    for _ in range(max_epochs):
        order = rng.permutation(X.shape[0])
        delayed_epoch(indptr, indices, data, y, qbar, bound_or_diag, squared, alpha, w, order,
                      queue_row, queue_step, tau)  # fmt: skip
        p = primal_value(indptr, indices, data, -1.0, y, C, w, loss)
        primals.append(p)
        if not np.isfinite(p) or (len(primals) > 3 and p > DIVERGED * min(primals)):
            break
    return primals


def first_epoch(rel: list[float], target: float) -> int | None:
    return next((e + 1 for e, r in enumerate(rel) if r <= target), None)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="pypi-recent,reuters")
    p.add_argument("--solvers", default="1,3")
    p.add_argument("--taus", default=DEFAULT_TAUS)
    p.add_argument("--max-epochs", type=int, default=60)
    p.add_argument("--out", default="benchmarks/RESULTS-staleness.md")
    args = p.parse_args(argv)
    taus = [int(t) for t in args.taus.split(",")]
    lines = report_header("DCD with stale reads of w: epochs to accuracy", "bench_staleness",
                          [f"taus: {args.taus}; max epochs {args.max_epochs}; C = 1, no bias, "
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
            runs = {tau: epochs_to_accuracy(X, y, loss, tau, args.max_epochs) for tau in taus}
            finite = [p for ps in runs.values() for p in ps if np.isfinite(p)]
            p_star = min([tight.results_[0].primal, *finite])
            rows = []
            for tau, primals in runs.items():
                rel = [(p - p_star) / p_star for p in primals]
                last = rel[-1] if rel else float("nan")
                # (a run ends early only when it diverged)
                diverged = len(rel) < args.max_epochs
                ending = f"diverged ({fmt_sci(last)})" if diverged else fmt_sci(last)
                rows.append([tau, first_epoch(rel, 1e-2) or "-", first_epoch(rel, 1e-3) or "-",
                             len(rel), ending])  # fmt: skip
                print(name, solver, rows[-1], flush=True)
            lines += [f"## {name} ({X.shape[0]:,} x {X.shape[1]:,}), -s {solver}", "",
                      f"P* = {p_star:.10g}", ""]  # fmt: skip
            lines += markdown_table(
                ["reads miss (tau)", "epochs to 1e-2", "epochs to 1e-3", "epochs run",
                 "(P - P*)/P* at the end"], rows)  # fmt: skip
            lines.append("")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
