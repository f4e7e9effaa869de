"""Where an outer iteration of the threaded dual CD spends its time: the shared-w (async)
scheme with its parts taken away one at a time, at each thread count.

Run from the repository root::

    python -m benchmarks.bench_async_costs [--data pypi-recent] [--threads 2]
        [--solvers 1,3] [--repeats 3] [--bias -1] [--out benchmarks/RESULTS-async-costs.md]

On one data set (default pypi-recent; ``synthetic-text``: the generated rows of
``--synthetic-rows``), C = 1, no bias (``--bias 1``: a bias feature of 1, the case where
the bias weight, in every row, is what the threads' reads miss most), the solver called
directly with its threads forced
(``thread_choice="threads"``: every outer iteration on all of them, no ladder). A variant's
time is that of its outer iterations after the first, (a solve of 4) - (a solve of 1),
divided by the outer iterations run between them (those the guard undid included: an undone
one costs its pass too), median of ``--repeats``, the variants taking turns in each:

- ``serial``: the serial kernel (one thread);
- at each T of ``--threads``: ``async`` as it runs (the hot features' views flushed every
  256 / T rows); ``async, flushes / 4`` (every 1024 / T rows: what the flushes cost, though
  the reads then miss more and the guard may undo and halve); ``async, no views`` (no hot
  features: every change an atomic add on the shared w); ``replicas`` (each thread its own
  w, replaying the others' steps); with ``--bias``, ``async, bias damped 1/2`` (the shared w's
  steps with ``bias_damping`` 0.5: ``solvers/dcd_async.py``'s note on many threads and a bias)
  and ``async, bias not discounted`` (``bias_discount`` 0: the threads' views of the bias
  weight take the others' changes whole).

The table gives each variant's seconds an outer iteration, its speed-up over the serial
kernel, and the guard's undone outer iterations, final flush interval and whether it handed
the solve to one thread. A question of
cost only: time to accuracy is ``bench_dcd_threads``'s.
"""

from __future__ import annotations

import argparse
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
    write_report,
)

DEFAULT_REPEATS = 3
# Outer iterations of the longer solve; its first is timed away by the solve of one.
LONG_SOLVE = 4


def variants(n_threads: int, extra: dict, bias: float = -1.0) -> list[tuple[str, dict]]:
    """(name, solver options) of the variants at ``n_threads`` threads (``extra`` added; with
    a ``bias``, the async scheme's damped steps, its bias flushed after every row from the
    start and its undiscounted views of the bias too)."""
    from linsvm.solvers.dcd_async import STALE_ROWS

    forced = {"thread_choice": "threads", **extra}
    flush = max(1, STALE_ROWS // n_threads)
    return [
        ("async", {**forced, "thread_scheme": "async"}),
        ("async, flushes / 4", {**forced, "thread_scheme": "async",
                                "thread_options": {"flush_rows": 4 * flush}}),
        ("async, no views", {**forced, "thread_scheme": "async",
                             "thread_options": {"max_hot": 0}}),
        ("replicas", {**forced, "thread_scheme": "replicas"}),
    ] + ([("async, bias damped 1/2", {**forced, "thread_scheme": "async",
                                      "thread_options": {"bias_damping": 0.5}}),
          ("async, bias flushed every row", {**forced, "thread_scheme": "async",
                                             "thread_options": {"bias_each_row": True}}),
          ("async, bias not discounted", {**forced, "thread_scheme": "async",
                                          "thread_options": {"bias_discount": 0.0}})]
         if bias >= 0 else [])  # fmt: skip


def solve(X, y, solver: int, n_threads: int, options: dict, max_iter: int, bias: float = -1.0):
    """(seconds, outer iterations run, figures) of one solve."""
    from linsvm.solvers import SOLVERS, Subproblem

    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=1e-6, max_iter=max_iter, bias=bias,
                     options=options, n_threads=n_threads)  # fmt: skip
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the cap on outer iterations, reached on purpose)
        sol = SOLVERS[solver].solve(sub, None)
    seconds = time.perf_counter() - started
    figures = sol.figures or {}
    return seconds, sol.n_iter + int(figures.get("undone_epochs", 0)), figures


def per_outer_iteration(X, y, solver: int, runs: list[tuple[str, int, dict]],
                        repeats: int, bias: float = -1.0) -> list[dict]:  # fmt: skip
    """For each (name, threads, options) of ``runs``: the seconds of an outer iteration after
    the first (median) and the guard's figures. The runs take turns within each repeat, so
    that a slow spell of the machine falls on all of them."""
    for _, n_threads, options in runs:  # (compiled or loaded, pages touched)
        solve(X, y, solver, n_threads, options, 1, bias)
    seconds = [[] for _ in runs]
    figures = [{} for _ in runs]
    for _ in range(repeats):
        for k, (_, n_threads, options) in enumerate(runs):
            short, short_iters, _ = solve(X, y, solver, n_threads, options, 1, bias)
            long, long_iters, figures[k] = solve(X, y, solver, n_threads, options, LONG_SOLVE,
                                                 bias)  # fmt: skip
            seconds[k].append((long - short) / max(long_iters - short_iters, 1))
    return [{"seconds": median(s), "undone": int(f.get("undone_epochs", 0)),
             "flush_rows": f.get("flush_rows"), "threads": f.get("n_threads", 1),
             "handed_over": bool(f.get("handed_to_one_thread", False)),
             "allowed": int(f.get("threads_allowed", f.get("n_threads", 1)))}
            for s, f in zip(seconds, figures, strict=True)]


def _guard_end(r: dict) -> str:
    """Where the guard left the solve: handed to one thread, on fewer threads, or as begun."""
    if r["handed_over"]:
        return "one thread"
    return f"on {r['allowed']}" if r["allowed"] < r["threads"] else "all threads"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="pypi-recent")
    p.add_argument("--synthetic-rows", type=int, default=3_000_000)
    p.add_argument("--threads", default="2", help="thread counts, comma-separated")
    p.add_argument("--solvers", default="1,3")
    p.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    p.add_argument("--bias", type=float, default=-1.0,
                   help="the bias feature's value (-1: none, as the other benchmarks)")
    p.add_argument("--thread-min-nnz", type=int, default=None,
                   help="the solver's option of that name (smoke runs on tiny data)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-async-costs.md"))
    args = p.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    solvers = [int(s) for s in args.solvers.split(",")]
    ds = load_dataset(args.data, synthetic_rows=args.synthetic_rows)
    if ds is None:
        raise SystemExit(f"data set {args.data!r} not found in the shared data folder")
    X, y = ds.X, ds.y
    X.sort_indices()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lines = report_header(
        "Where a threaded outer iteration's time goes (dual CD, shared w)", "bench_async_costs",
        [f"data: {ds.name} ({X.shape[0]:,} x {X.shape[1]:,}, nnz {X.nnz:,})"
         + (f"; {ds.note}" if ds.name == SYNTHETIC and ds.note else ""),
         f"threads: {', '.join(map(str, threads))} ({cores} usable cores here); repeats: "
         f"{args.repeats} (median); C = 1, "
         + ("no bias" if args.bias < 0 else f"bias {args.bias:g}")
         + "; threads forced, the solver called "
         f"directly; seconds of an outer iteration: (a solve of {LONG_SOLVE}) - (a solve of "
         "1), over the outer iterations run between them, undone ones included"],
    )
    header = ["variant", "threads", "s an outer iteration", "speed-up over serial",
              "undone", "flush rows at the end", "the guard's end"]
    extra = {} if args.thread_min_nnz is None else {"thread_min_nnz": args.thread_min_nnz}
    runs = [("serial", 1, {})] + [(name, T, options) for T in threads
                                  for name, options in variants(T, extra, args.bias)]
    for solver in solvers:
        results = per_outer_iteration(X, y, solver, runs, args.repeats, args.bias)
        serial = results[0]["seconds"]
        rows = []
        for (name, _, _), r in zip(runs, results, strict=True):
            rows.append([name, str(r["threads"]), fmt_seconds(r["seconds"]),
                         fmt_ratio(serial, r["seconds"]),
                         "-" if name == "serial" else str(r["undone"]),
                         "-" if name in ("serial", "replicas") else str(r["flush_rows"]),
                         "-" if name == "serial" else _guard_end(r)])
        lines += [f"## -s {solver}", ""] + markdown_table(header, rows) + [""]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
