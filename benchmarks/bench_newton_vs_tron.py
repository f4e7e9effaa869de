"""Line-search Newton (LIBLINEAR >= 2.40) vs trust-region Newton (TRON, LIBLINEAR <= 2.30).

Run from the repository root::

    python -m benchmarks.bench_newton_vs_tron [--quick] [--datasets a9a,...] [--repeats 5]
        [--with-pcg] [--out benchmarks/RESULTS-newton-vs-tron.md]

For -s 0 (logistic) and -s 2 (L2-loss SVM), C in {1, 100}, no bias, on a9a, w8a, ijcnn1,
reuters and pypi-recent (``--quick``: a9a, w8a and reuters, 3 repeats):

- (a) LIBLINEAR's default tolerance: eps = solver_tolerance(SOLVERS[s], 0.01, y) (the relative
  gradient norm LIBLINEAR's ``train_one`` passes to its primal solvers). Median wall time of
  ``--repeats`` runs (5) per method; outer iterations (TRON: accepted / CG solves, i.e.
  including rejected steps); Hessian-vector products (= CG steps); the relative primal
  accuracy (P - P*) / P* reached.
- (b) Time to a 1e-6 relative primal accuracy: each method is run once at eps 1e-10, keeping
  its per-iteration objective; the first iteration k with (P_k - P*) / P* <= 1e-6 is found
  and the method is timed (median of ``--repeats``) with ``max_iter = k`` (the same
  trajectory cut at k). Hessian-vector products are counted up to k.
- P* is the lower objective of the methods' eps 1e-10 runs.
- ``--with-pcg`` adds TRON with LIBLINEAR 2.20-2.30's diagonal preconditioner and radius rules
  (``options["preconditioned"]``).

newton is linsvm's -s 0 / -s 2 through the solver registry (``SOLVERS[s].solve(sub)``); tron is
``linsvm.solvers.tron``: -s 40 (LIBLINEAR 1.x's TRON) for the L2-loss SVM and its unregistered
logistic twin ``solve_tron_lr`` for -s 0. Both share the Numba kernels of
``linsvm.solvers.newton`` (function value, gradient and preconditioner in one pass;
Hessian-vector products); per outer iteration both also make
one pass over the rows for the step's margins (line search / trial value), so the work is
about (outer iterations + Hessian-vector products) passes over the data.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import dataclass

import numpy as np

from linsvm.objective import LOSS_LOGISTIC, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, Subproblem, solver_tolerance
from linsvm.solvers.tron import solve_tron, solve_tron_lr

from .common import (
    BENCH_DIR,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    report_header,
    write_report,
)

FULL_DATASETS = ("a9a", "w8a", "ijcnn1", "reuters", "pypi-recent")
QUICK_DATASETS = ("a9a", "w8a", "reuters")
LOSSES = ((0, LOSS_LOGISTIC), (2, LOSS_SQUARED_HINGE))
C_VALUES = (1.0, 100.0)
TARGET = 1e-6
TIGHT_EPS = 1e-10
TIGHT_MAX_ITER = 2000


NEWTON_SOLVER = {LOSS_LOGISTIC: 0, LOSS_SQUARED_HINGE: 2}


@dataclass
class Run:
    """What the table needs of a run, for either method."""

    n_iter: int
    n_trials: int  # TRON: CG solves, accepted or rejected; Newton: its iterations
    n_cg_iter: int
    objective: float
    history: list  # Newton: (k, P, |g|, CG, step); TRON: (k, P, |g|, CG, delta, accepted)


def newton(X, y, C, loss, bias, eps, max_iter=1000) -> Run:
    sub = Subproblem(X=X, y=y, C=C, eps=eps, max_iter=max_iter, bias=bias)
    sol = SOLVERS[NEWTON_SOLVER[loss]].solve(sub, None)
    f = sol.figures
    return Run(sol.n_iter, sol.n_iter, f["n_cg_iter"], f["f"], f["history"])


TRON_SOLVER = {LOSS_LOGISTIC: solve_tron_lr, LOSS_SQUARED_HINGE: solve_tron}


def tron(X, y, C, loss, bias, eps, max_iter=1000, preconditioned=False) -> Run:
    sub = Subproblem(X=X, y=y, C=C, eps=eps, max_iter=max_iter, bias=bias,
                     options={"preconditioned": preconditioned})  # fmt: skip
    sol = TRON_SOLVER[loss](sub, None)
    f = sol.figures
    return Run(sol.n_iter, f["n_trials"], f["n_cg_iter"], f["f"], f["history"])


def tron_pcg(*args) -> Run:
    return tron(*args, preconditioned=True)


METHODS = {"newton": newton, "tron": tron, "tron-pcg": tron_pcg}


def warm_up() -> None:
    """Compile / load the Numba kernels outside the timings."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random(50, 8, density=0.4, format="csr", random_state=rng)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    C = np.ones(50)
    for fn in METHODS.values():
        for loss in (LOSS_LOGISTIC, LOSS_SQUARED_HINGE):
            fn(X, y, C, loss, -1.0, 1e-3)


def timed(fn, repeats: int) -> tuple[float, object]:
    times = []
    out = None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return median(times), out


def outer_counts(name: str, sol) -> str:
    if name == "newton":
        return f"{sol.n_iter}"
    return f"{sol.n_iter}/{sol.n_trials}"


def first_reaching(name: str, sol, pstar: float) -> tuple[int | None, int, int]:
    """(accepted iteration k reaching TARGET or None, Hv products up to k, outer trials to k)."""
    hv = 0
    trials = 0
    for row in sol.history:
        hv += row[3]
        trials += 1
        accepted = True if name == "newton" else row[5]
        if accepted and (row[1] - pstar) / abs(pstar) <= TARGET:
            return row[0], hv, trials
    return None, hv, trials


def run_cell(ds, loss: int, c_value: float, methods, repeats: int) -> dict:
    X, y = ds.X, ds.y
    C = np.full(y.shape[0], c_value)
    eps_default = solver_tolerance(SOLVERS[NEWTON_SOLVER[loss]], 0.01, y)
    cell = {"default": {}, "tight": {}}
    tight_runs = {}
    for name in methods:
        fn = METHODS[name]
        tight_runs[name] = fn(X, y, C, loss, -1.0, TIGHT_EPS, TIGHT_MAX_ITER)
    pstar = min(s.objective for s in tight_runs.values())
    cell["pstar"] = pstar
    for name in methods:
        fn = METHODS[name]
        t, sol = timed(lambda fn=fn: fn(X, y, C, loss, -1.0, eps_default), repeats)
        cell["default"][name] = {
            "time": t,
            "outer": outer_counts(name, sol),
            "hv": sol.n_cg_iter,
            "acc": (sol.objective - pstar) / abs(pstar),
        }
        k, hv, trials = first_reaching(name, tight_runs[name], pstar)
        if k is None:
            cell["tight"][name] = None
            continue
        t, sol = timed(lambda fn=fn, k=k: fn(X, y, C, loss, -1.0, TIGHT_EPS, k), repeats)
        outer = f"{k}" if name == "newton" else f"{k}/{trials}"
        cell["tight"][name] = {"time": t, "outer": outer, "hv": hv}
    return cell


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a9a, w8a, reuters; 3 repeats")
    p.add_argument("--datasets", default=None, help="comma-separated dataset names")
    p.add_argument("--repeats", type=int, default=None, help="timed runs per setting (5)")
    p.add_argument("--with-pcg", action="store_true", help="add 2.20-2.30's preconditioned TRON")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-newton-vs-tron.md"))
    args = p.parse_args(argv)
    if args.datasets:
        datasets = args.datasets.split(",")
    else:
        datasets = QUICK_DATASETS if args.quick else FULL_DATASETS
    repeats = args.repeats or (3 if args.quick else 5)
    methods = ["newton", "tron"] + (["tron-pcg"] if args.with_pcg else [])

    warm_up()
    results = []
    sizes = []
    for name in datasets:
        ds = load_dataset(name)
        if ds is None:
            print(f"[{name}: data missing, skipped]", file=sys.stderr)
            continue
        sizes.append(ds.describe())
        for s_num, loss in LOSSES:
            for c_value in C_VALUES:
                t0 = time.perf_counter()
                cell = run_cell(ds, loss, c_value, methods, repeats)
                print(
                    f"[{name} -s {s_num} -c {c_value:g}: {time.perf_counter() - t0:.1f}s]",
                    file=sys.stderr,
                )
                results.append((name, s_num, c_value, cell))
        del ds
        gc.collect()

    header = report_header(
        "Line-search Newton vs trust-region Newton (TRON)",
        "bench_newton_vs_tron",
        extra=[
            f"datasets: {'; '.join(sizes)}",
            f"timed: median wall time of {repeats} runs (time.perf_counter), one thread, "
            "Numba kernels compiled beforehand; no bias, C_i = C for every row",
            "newton: linsvm.solvers.newton (LIBLINEAR 2.50's line-search Newton, PCG with the "
            "quadratic-model stop); tron: linsvm.solvers.tron (LIBLINEAR 1.x's TRON, no "
            "preconditioner, eps_cg 0.1)"
            + (
                "; tron-pcg: TRON with LIBLINEAR 2.20-2.30's preconditioner and radius rules"
                if args.with_pcg
                else ""
            ),
            "outer: Newton iterations; for TRON accepted iterations / CG solves (incl. "
            "rejected steps). Hv: Hessian-vector products (CG steps). acc: (P - P*)/P*, P* the "
            f"lower objective of the methods' eps {TIGHT_EPS:g} runs",
        ],
    )
    lines = list(header)
    other = [m for m in methods if m != "newton"]
    for key, title in (
        ("default", "(a) LIBLINEAR's default tolerance (eps 0.01, scaled as train_one)"),
        ("tight", f"(b) To a {TARGET:g} relative primal accuracy"),
    ):
        lines += [f"## {title}", ""]
        head = ["data", "-s", "C"]
        for m in methods:
            head += [f"{m} s", f"{m} outer", f"{m} Hv"]
            if key == "default":
                head.append(f"{m} acc")
        head += [f"{m} / newton time" for m in other]
        rows = []
        ratios = {m: [] for m in other}
        for name, s_num, c_value, cell in results:
            row = [name, s_num, f"{c_value:g}"]
            for m in methods:
                r = cell[key][m]
                if r is None:
                    row += ["n/a", "n/a", "n/a"] + (["n/a"] if key == "default" else [])
                    continue
                row += [fmt_seconds(r["time"]), r["outer"], r["hv"]]
                if key == "default":
                    row.append(fmt_sci(r["acc"]))
            for m in other:
                a, b = cell[key][m], cell[key]["newton"]
                ratio = fmt_ratio(a and a["time"], b and b["time"])
                row.append(ratio)
                if a and b and b["time"] > 0:
                    ratios[m].append(a["time"] / b["time"])
            rows.append(row)
        lines += markdown_table(head, rows)
        lines.append("")
        for m in other:
            if ratios[m]:
                gm = float(np.exp(np.mean(np.log(ratios[m]))))
                lines.append(
                    f"- {m} / newton time: geometric mean {gm:.2f} over {len(ratios[m])} cells, "
                    f"range {min(ratios[m]):.2f}-{max(ratios[m]):.2f}"
                )
        lines.append("")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
