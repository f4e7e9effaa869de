"""The cutting-plane solvers across C: linsvm's -s 36 (OCAS) and -s 35 (the 1-slack cutting
plane) against libocas's svmocas and LIBLINEAR's -s 3, C from 1 to 1e6.

Run from the repository root::

    python -m benchmarks.bench_cutting_plane_c [--datasets heart_scale,australian]
        [--costs 1,100,1e4,1e6] [--timeout 30] [--out benchmarks/RESULTS-cutting-plane-c.md]

At large C the cuts are sums of nearly the same rows and the reduced dual, a QP over the
cuts, is ill-conditioned: a coordinate method on it (SMO, libocas's QP solver) needs up to
millions of steps a solve. This benchmark shows what that costs each tool as C grows. Each
row: one data set and C, no bias, the tools at their own stopping rules of the same kind:

- linsvm -s 36 and ``svmocas -m 1``: stop at (P(w_b) - bound) <= 0.01 P(w_b) (both
  defaults);
- linsvm -s 35 with ``tol_rel=0.01`` and ``svmocas -m 0 -r 0.01``: the plain cutting plane
  with svmocas's rule (-s 35's default rule is svm_perf's, reported in its own column);
- LIBLINEAR -s 3 at its default -e 0.1 (dual coordinate descent, what a LIBLINEAR user gets;
  at large C it stops at its iteration cap, far from the optimum).

Reported: seconds (linsvm: the least of 3 solves, compiled beforehand; svmocas: its own
``ocas_time``, reading the file excluded; LIBLINEAR: ``train`` on a prepared problem),
iterations, and P's distance from the least P any tool reached, relative:
(P - P_best) / P_best. A run past ``--timeout`` seconds is stopped and shown as such.
Larger sets take long at large C for every tool (a9a at C = 1e4: -s 35 7,074 iterations,
30 s; the originals past 60 s).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import time

import numpy as np

import linsvm
from linsvm.objective import LOSS_HINGE, primal_value
from linsvm.solvers import Subproblem
from linsvm.solvers import cutting_plane as cp

from .common import (
    BENCH_DIR,
    find_data_file,
    fmt_sci,
    fmt_seconds,
    markdown_table,
    report_header,
    write_report,
)
from .originals_cutting_plane import find_svmocas, run_svmocas
from .peers import train_liblinear_logged

DATASETS = ("heart_scale", "australian")
COSTS = (1.0, 1e2, 1e4, 1e6)
TOL_REL = 0.01


def _primal(X, y, C: float, w: np.ndarray) -> float:
    c_rows = np.full(X.shape[0], C)
    return float(primal_value(X.indptr, X.indices, X.data, -1.0, y, c_rows, w, LOSS_HINGE))


def run_linsvm(X, y, C: float, method: str, repeats: int = 3) -> tuple[float, int, float, str]:
    """(seconds: the least of ``repeats`` runs, iterations, P, note) of linsvm's solver."""
    if method == "ocas":
        solve, eps, options = cp.solve_ocas, TOL_REL, {}
    elif method == "svmperf-ocas-rule":
        solve, eps, options = cp.solve_svmperf, 0.0, {"tol_rel": TOL_REL}
    else:
        solve, eps, options = cp.solve_svmperf, cp.DEFAULT_SVMPERF_EPS, {}
    best = math.inf
    for _ in range(repeats):
        sub = Subproblem(X, y, np.full(X.shape[0], C), eps, 100_000, bias=-1.0, options=options)
        t0 = time.perf_counter()
        sol = solve(sub)
        best = min(best, time.perf_counter() - t0)
    note = "" if sol.figures["qp_capped"] == 0 else f"{sol.figures['qp_capped']} QPs capped"
    return best, sol.n_iter, sol.primal, note


def run_liblinear(X, y, C: float) -> tuple[float, int | None, float, str]:
    import re

    from liblinear.liblinearutil import parameter, problem

    seconds, model, text = train_liblinear_logged(problem(y, X), parameter(f"-s 3 -c {C:.17g}"))
    n = model.get_nr_feature()
    w = np.zeros(X.shape[1])
    w[:n] = np.ctypeslib.as_array(model.w, shape=(n,))
    if model.get_labels()[0] != 1:
        w = -w
    iters = re.findall(r"#iter\s*=\s*(\d+)", text)
    capped = "reaching max number of iterations" in text
    return (seconds, int(iters[0]) if iters else None, _primal(X, y, C, w),
            "iteration cap" if capped else "")  # fmt: skip


def bench(args) -> list[str]:
    tools = ["linsvm -s 36", "svmocas -m 1", "linsvm -s 35 (-r 0.01)", "svmocas -m 0",
             "linsvm -s 35 (svm_perf's rule)", "LIBLINEAR -s 3"]  # fmt: skip
    have_ocas = find_svmocas() is not None
    rows = []
    for name in args.datasets:
        path = find_data_file(name)
        if path is None:
            print(f"{name}: not found, skipped", flush=True)
            continue
        X, labels = linsvm.read_libsvm(path)
        y = np.where(labels > 0, 1.0, -1.0)
        for method in ("ocas", "svmperf"):
            run_linsvm(X, y, 1e6, method, repeats=1)  # compiled before any timing
        for C in args.costs:
            results: dict[str, tuple] = {}
            results["linsvm -s 36"] = run_linsvm(X, y, C, "ocas")
            results["linsvm -s 35 (-r 0.01)"] = run_linsvm(X, y, C, "svmperf-ocas-rule")
            results["linsvm -s 35 (svm_perf's rule)"] = run_linsvm(X, y, C, "svmperf")
            results["LIBLINEAR -s 3"] = run_liblinear(X, y, C)
            for method, tool in ((1, "svmocas -m 1"), (0, "svmocas -m 0")):
                if not have_ocas:
                    continue
                try:
                    run = run_svmocas(path, C, method=method, tol_rel=TOL_REL,
                                      timeout=args.timeout, problem=(X, y))  # fmt: skip
                    results[tool] = (run.seconds, run.iterations, run.primal, "")
                except subprocess.TimeoutExpired:
                    results[tool] = (None, None, None, f"stopped at {args.timeout:g} s")
            best = min(r[2] for r in results.values() if r[2] is not None)
            for tool in tools:
                if tool not in results:
                    continue
                seconds, iters, primal, note = results[tool]
                gap = None if primal is None else (primal - best) / best
                iterations = "n/a" if iters is None else str(iters)
                rows.append([name, f"{C:g}", tool, fmt_seconds(seconds), iterations, fmt_sci(gap),
                             note])  # fmt: skip
                print(" | ".join(rows[-1]), flush=True)
    extra = [f"svmocas: {'found' if have_ocas else 'not installed (scripts/oracles/libocas.sh)'}"]
    lines = report_header("Cutting-plane solvers across C", "bench_cutting_plane_c", extra)
    lines += markdown_table(["data", "C", "tool", "seconds", "iterations",
                             "(P - P_best) / P_best", "note"], rows)  # fmt: skip
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        type=lambda s: [x for x in s.split(",") if x])  # fmt: skip
    parser.add_argument("--costs", default=",".join(f"{c:g}" for c in COSTS),
                        type=lambda s: [float(x) for x in s.split(",") if x])  # fmt: skip
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-cutting-plane-c.md"))
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    write_report(bench(args), args.out)


if __name__ == "__main__":
    main()
