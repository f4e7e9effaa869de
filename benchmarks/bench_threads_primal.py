"""Threads within one primal Newton solve: -s 0, -s 2, -s 11 on 1 vs 2 threads, and LIBLINEAR.

Run from the repository root::

    python -m benchmarks.bench_threads_primal [--quick] [--datasets pypi-recent,synthetic-text]
        [--solvers 0,2,11] [--repeats 5] [--synthetic-rows 100000] [--lock FILE]
        [--out benchmarks/RESULTS-threads-primal.md]

For each dataset (binary, labels +1/-1; -s 11 regresses on those +1/-1 targets) and solver,
C = 1, no bias, in one run:

- ``fit``: ``linsvm.train(X, y, solver=s, n_jobs=k)`` at the solver's default tolerance, k = 1
  and 2 (a binary problem is one sub-problem, so k is the threads within it), and
  liblinear-official's ``train`` (single-threaded; its ``problem`` built before the clock),
  median of ``--repeats`` after one untimed warm-up;
- ``time to 1e-2 / 1e-3``: the solver's time until (P(w) - P*) / P* first falls to 1e-2 and
  1e-3, from one Newton run at a tight tolerance whose hook reads P(w) (the driver's own value,
  no extra pass) at each iteration and stops the run at 1e-3 (medians over the repeats); for
  LIBLINEAR the fastest run of its -e grid whose model reaches the target, each model scored
  with ``linsvm.objective``. P* is the smallest P(w) seen, starting from a serial linsvm run at
  eps 1e-10;
- the relative difference of the 1- and 2-thread objectives at the default tolerance.

``--lock FILE``: on a shared machine, hold an exclusive ``flock`` on FILE while each
(dataset, solver) is measured, so that other benchmark runs taking the same lock wait
instead of running alongside (or pausing this one).

The L1-regularised solvers -s 5 and -s 6 are not threaded: their time is column-wise
coordinate descent. The report gives the share of -s 6's fit spent in the passes that could
be threaded (its per-feature gradient and its passes over the rows), measured here.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import math
import os
import time
import warnings

import numpy as np

from .common import (
    BENCH_DIR,
    SYNTHETIC,
    fmt_ratio,
    fmt_seconds,
    load_dataset,
    markdown_table,
    median,
    report_header,
    time_call,
    write_report,
)

DEFAULT_DATASETS = ("pypi-recent", SYNTHETIC)
QUICK_DATASETS = ("a9a", SYNTHETIC)
DEFAULT_SYNTHETIC_ROWS = 100_000
QUICK_SYNTHETIC_ROWS = 50_000
TARGETS = (1e-2, 1e-3)
LIBLINEAR_EPS_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 1e-4, 1e-5, 1e-6)
TIGHT_EPS = 1e-10
THREADS = (1, 2)


def linsvm_fit(X, y, solver: int, n_jobs: int, eps: float | None = None):
    import linsvm

    params = {"eps": eps} if eps is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return linsvm.train(X, y, solver=solver, C=1.0, n_jobs=n_jobs, **params)


def primal_of(X, y, solver: int, w: np.ndarray) -> float:
    """P(w) of the problem (C = 1, no bias), by linsvm.objective."""
    from linsvm.objective import (
        LOSS_LOGISTIC,
        LOSS_SQUARED_HINGE,
        SVR_LOSS_L2,
        primal_value,
        svr_primal_value,
    )

    C = np.ones(X.shape[0])
    if solver == 11:
        return float(svr_primal_value(X, -1.0, y, C, w, SVR_LOSS_L2, 0.1))
    loss = LOSS_LOGISTIC if solver == 0 else LOSS_SQUARED_HINGE
    return float(primal_value(X.indptr, X.indices, X.data, -1.0, y, C, w, loss))


def model_w(model) -> np.ndarray:
    """w of a binary linsvm model oriented so that w'x > 0 means +1 (-s 11: as it is)."""
    w = np.asarray(model.coef_[0], dtype=np.float64)
    if model.labels_ is not None and len(model.labels_) == 2 and model.labels_[0] != 1:
        w = -w
    return w


class Liblinear:
    """liblinear-official on a problem built once."""

    def __init__(self, X, y):
        import scipy.sparse as sp
        from liblinear.liblinearutil import problem

        self.n_features = X.shape[1]
        self.problem = problem(np.ascontiguousarray(y), sp.csr_matrix(X, dtype=np.float64))

    def fit(self, solver: int, eps: float | None = None) -> tuple[float, np.ndarray]:
        from liblinear.liblinearutil import parameter, train

        options = f"-s {solver} -c 1 -q" + (f" -e {eps:.17g}" if eps is not None else "")
        param = parameter(options)
        seconds, model = time_call(lambda: train(self.problem, param))
        nr_feature = model.get_nr_feature()
        w = np.ctypeslib.as_array(model.w, shape=(nr_feature,)).astype(np.float64, copy=True)
        if nr_feature < self.n_features:
            w = np.concatenate([w, np.zeros(self.n_features - nr_feature)])
        if solver != 11 and model.get_labels()[0] != 1:
            w = -w
        return seconds, w


def time_to_targets(X, y, solver: int, n_threads: int, p_star: float) -> tuple[list, float]:
    """(seconds to each target, the lowest P seen) of one tight Newton run on ``n_threads``,
    the hook's own time left out."""
    from linsvm.solvers import SOLVERS
    from linsvm.solvers._base import Subproblem

    sub = Subproblem(
        X, y, np.ones(X.shape[0]), TIGHT_EPS, 1000, options={"p": 0.1} if solver == 11 else {},
        n_threads=n_threads,
    )  # fmt: skip
    reached: list[float | None] = [None] * len(TARGETS)
    paused = 0.0
    best = math.inf
    t0 = time.perf_counter()

    def hook(progress) -> bool:
        nonlocal paused, best
        entered = time.perf_counter()
        f = progress.figures["f"]
        best = min(best, f)
        for k, target in enumerate(TARGETS):
            if reached[k] is None and (f - p_star) / p_star <= target:
                reached[k] = entered - t0 - paused
        paused += time.perf_counter() - entered
        return reached[-1] is None

    SOLVERS[solver].solve(sub, hook)
    return reached, best


def p_star_of(X, y, solver: int) -> float:
    from linsvm.solvers import SOLVERS
    from linsvm.solvers._base import Subproblem

    sub = Subproblem(
        X, y, np.ones(X.shape[0]), TIGHT_EPS, 1000, options={"p": 0.1} if solver == 11 else {}
    )  # fmt: skip
    return float(SOLVERS[solver].solve(sub).figures["f"])


def bench(ds, solver: int, repeats: int, liblinear: Liblinear | None) -> list[object]:
    X, y = ds.X, ds.y
    p_star = p_star_of(X, y, solver)
    fit_times: dict[int, float] = {}
    primals: dict[int, float] = {}
    to_target: dict[int, list[float | None]] = {}
    for k in THREADS:
        linsvm_fit(X, y, solver, k)  # warm-up
        samples = []
        for _ in range(repeats):
            t, model = time_call(lambda k=k: linsvm_fit(X, y, solver, k))
            samples.append(t)
        fit_times[k] = median(samples)
        primals[k] = primal_of(X, y, solver, model_w(model))
        runs = []
        for _ in range(repeats):
            reached, best = time_to_targets(X, y, solver, k, p_star)
            p_star = min(p_star, best)
            runs.append(reached)
        to_target[k] = [
            median([r[j] for r in runs]) if all(r[j] is not None for r in runs) else None
            for j in range(len(TARGETS))
        ]
    ll_fit = None
    ll_target: list[float | None] = [None] * len(TARGETS)
    if liblinear is not None:
        liblinear.fit(solver)
        ll_fit = median([liblinear.fit(solver)[0] for _ in range(repeats)])
        for eps in LIBLINEAR_EPS_GRID:
            seconds, w = liblinear.fit(solver, eps)
            rel = (primal_of(X, y, solver, w) - p_star) / p_star
            for j, target in enumerate(TARGETS):
                if rel <= target and (ll_target[j] is None or seconds < ll_target[j]):
                    ll_target[j] = seconds
            if ll_target[-1] is not None:
                break
    diff = abs(primals[2] - primals[1]) / abs(primals[1])
    print(
        f"{ds.name} -s {solver}: fit {fit_times[1]:.3f} / {fit_times[2]:.3f} s, "
        f"to 1e-3 {to_target[1][-1]} / {to_target[2][-1]} s, LIBLINEAR {ll_fit}"
    )
    row = [ds.name, f"-s {solver}"]
    row += [fmt_seconds(fit_times[1]), fmt_seconds(fit_times[2]),
            fmt_ratio(fit_times[1], fit_times[2])]  # fmt: skip
    for j in range(len(TARGETS)):
        a, b = to_target[1][j], to_target[2][j]
        row += [fmt_seconds(a), fmt_seconds(b), fmt_ratio(a, b)]
    row += [fmt_seconds(ll_fit), fmt_seconds(ll_target[0]), fmt_seconds(ll_target[1])]
    row += [fmt_ratio(fit_times[2], ll_fit), f"{diff:.1e}"]
    return row


def l1_breakdown(ds) -> list[str]:
    """-s 5 and -s 6 fit times and the share of -s 6 in passes that threads could split."""
    from linsvm.solvers import SOLVERS, l1, solver_tolerance
    from linsvm.solvers import _columns as cc

    X, y = ds.X, ds.y
    C = np.ones(X.shape[0])
    fits = {}
    for solver in (5, 6):
        linsvm_fit(X, y, solver, 1)
        fits[solver] = median([time_call(lambda s=solver: linsvm_fit(X, y, s, 1))[0]
                               for _ in range(3)])  # fmt: skip
    eps = solver_tolerance(SOLVERS[6], SOLVERS[6].default_eps, y)
    sol = linsvm_fit(X, y, 6, 1).results_[0]
    n_newton = sol.n_iter
    t_cols = median([time_call(lambda: cc.signed_columns(X, y, C, -1.0, eps))[0]
                     for _ in range(3)])  # fmt: skip
    cols = cc.signed_columns(X, y, C, -1.0, eps)
    n_rows, n_w = cols.Cr.size, cols.n_w
    z = np.random.default_rng(0).normal(size=n_rows)
    e, tail, tau, D = (np.zeros(n_rows) for _ in range(4))
    l1._logistic_state(z, cols.Cr, e, tail, tau, D)
    t_rows = median([time_call(lambda: l1._logistic_state(z, cols.Cr, e, tail, tau, D))[0]
                     for _ in range(3)])  # fmt: skip
    hdiag, grad = np.zeros(n_w), np.zeros(n_w)

    def gradient():
        index = np.arange(n_w)
        l1._lr_gradient(cols.colptr, cols.rowpos, cols.vals, False, np.zeros(n_w), tau, D,
                        hdiag, grad, index, np.inf, float(n_rows))  # fmt: skip

    gradient()
    t_grad = median([time_call(gradient)[0] for _ in range(3)])
    # per Newton iteration: one gradient, and about three passes over the rows (line-search
    # trial, state update; the start's margins)
    threadable = (n_newton + 1) * (t_grad + 3 * t_rows)
    share = threadable / fits[6]
    return [
        f"On {ds.name}: -s 5 fit {fmt_seconds(fits[5])} s, -s 6 fit {fmt_seconds(fits[6])} s "
        f"({n_newton} Newton iterations, {sol.figures['n_inner_iter']} CD cycles in all). "
        f"In -s 6, one per-feature gradient pass takes {fmt_seconds(t_grad)} s and one pass "
        f"over the rows (exp / log1p of the margins) {fmt_seconds(t_rows)} s; the column form "
        f"(transpose) {fmt_seconds(t_cols)} s. Those passes are about {100 * share:.0f}% of "
        f"the fit, so 2 threads could make -s 6 at most {1 / (1 - share / 2):.2f}x faster; "
        "the rest is coordinate descent, one feature at a time (each step needs the previous "
        "one's X d), which Python threads cannot split (a column holds "
        f"{X.nnz / max(X.shape[1], 1):.0f} non-zeros on average, tens of nanoseconds of work, "
        "against tens of microseconds to start and join a task). -s 5 is coordinate descent "
        "through and through (its only pass over the rows recomputes b after a failed line "
        "search). Both are left serial.",
    ]


def core_probe(seconds: float = 0.3) -> float:
    """How busy the machine is: the time of two compute-bound threads side by side over the
    time of one (about 1.0 with two free cores, 2.0 when only one core is free for this run)."""
    from concurrent.futures import ThreadPoolExecutor

    from numba import njit

    @njit(nogil=True)
    def spin(n):
        s = 0.0
        for i in range(n):
            s += np.sqrt(float(i))
        return s

    spin(10)
    n = 1000
    while True:  # size the work to about ``seconds``
        t, _ = time_call(lambda n=n: spin(n))
        if t >= seconds / 4:
            break
        n *= 4
    n = int(n * seconds / t)
    one = median([time_call(lambda: spin(n))[0] for _ in range(3)])
    with ThreadPoolExecutor(2) as pool:
        two = median([time_call(lambda: list(pool.map(spin, [n, n])))[0] for _ in range(3)])
    return two / one


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a9a and a small generated set")
    p.add_argument("--datasets", default=None)
    p.add_argument("--solvers", default="0,2,11")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--synthetic-rows", type=int, default=None)
    p.add_argument("--lock", default=None, help="flock this file while measuring")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-threads-primal.md"))
    args = p.parse_args(argv)

    @contextlib.contextmanager
    def measuring():
        if args.lock is None:
            yield
            return
        with open(args.lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    names = args.datasets.split(",") if args.datasets else (
        QUICK_DATASETS if args.quick else DEFAULT_DATASETS
    )  # fmt: skip
    repeats = args.repeats or (2 if args.quick else 5)
    synthetic_rows = args.synthetic_rows or (
        QUICK_SYNTHETIC_ROWS if args.quick else DEFAULT_SYNTHETIC_ROWS
    )  # fmt: skip
    solvers = [int(s) for s in args.solvers.split(",")]
    try:
        import liblinear.liblinearutil  # noqa: F401

        have_liblinear = True
    except ImportError:
        have_liblinear = False
    load_start = os.getloadavg()
    with measuring():
        probe_start = core_probe()
    rows, notes, l1_notes = [], [], []
    for name in names:
        ds = load_dataset(name, synthetic_rows=synthetic_rows)
        if ds is None:
            print(f"{name}: not found, skipped")
            continue
        notes.append(f"{ds.describe()}" + (f" ({ds.note})" if ds.note else ""))
        liblinear = Liblinear(ds.X, ds.y) if have_liblinear else None
        for solver in solvers:
            with measuring():
                rows.append(bench(ds, solver, repeats, liblinear))
        if name == names[0]:
            with measuring():
                l1_notes = l1_breakdown(ds)
    load_end = os.getloadavg()
    with measuring():
        probe_end = core_probe()
    lines = report_header(
        "Threads within one primal Newton solve (-s 0, 2, 11): 1 vs 2 threads, and LIBLINEAR",
        "bench_threads_primal",
        [
            f"cores: {os.cpu_count()}; repeats: {repeats} (median); C = 1, no bias, default "
            "tolerances for the fits (-s 0 / 2: -e 0.01 scaled by the class balance; -s 11: "
            "0.0001, p = 0.1)",
            "load average at the end: " + ", ".join(f"{x:.2f}" for x in load_end)
            + " (at the start: " + ", ".join(f"{x:.2f}" for x in load_start) + ")",
            f"free cores: two compute-bound threads took {probe_start:.2f}x the time of one at "
            f"the start, {probe_end:.2f}x at the end (1.0: both cores free; 2.0: one core "
            "free for this run, so no 2-thread speed-up can show)",
            "LIBLINEAR: liblinear-official "
            + ("(single-threaded)" if have_liblinear else "not installed: its columns are n/a"),
        ]
        + [f"data: {n}" for n in notes],
    )  # fmt: skip
    lines += [
        "`1t` / `2t`: linsvm on 1 and 2 threads (`train(n_jobs=k)`; a binary problem is one "
        "sub-problem, so k threads work within it); `1t/2t`: the speed-up. `to 1e-2` / "
        "`to 1e-3`: seconds until (P(w) - P*) / P* <= 1e-2 / 1e-3. `2t / LL`: the 2-thread fit "
        "over LIBLINEAR's (below 1: linsvm faster). `|dP|/P`: relative difference of the 1- "
        "and 2-thread objectives at the default tolerance (the threads change only the order "
        "of the sums).",
        "",
    ]
    lines += markdown_table(
        ["dataset", "solver", "fit 1t s", "fit 2t s", "1t/2t",
         "to 1e-2 1t", "to 1e-2 2t", "1t/2t", "to 1e-3 1t", "to 1e-3 2t", "1t/2t",
         "LIBLINEAR fit s", "LL to 1e-2", "LL to 1e-3", "2t / LL", "\\|dP\\|/P"],
        rows,
    )  # fmt: skip
    lines += ["", "## -s 5 and -s 6", ""] + l1_notes
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
