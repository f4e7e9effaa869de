"""Threads within one DCD solve (-s 1, -s 3): which scheme reaches 1e-2 / 1e-3 first?

Run from the repository root, on an otherwise idle machine::

    python -m benchmarks.bench_dcd_threads [--quick] [--datasets pypi-recent,...]
                                           [--repeats 5] [--threads 2]
                                           [--out benchmarks/RESULTS-dcd-threads.md]

For each dataset and loss (C = 1, bias 1, shrinking on, linsvm's bucketed order), the schemes
of ``benchmarks/reference/dcd_threads.py`` and the serial kernel are run one outer iteration
at a time; only the iterations are timed (the objectives are evaluated between them, outside
the clock). Reported, as medians of ``--repeats`` runs: seconds and iterations to a relative
primal accuracy (P(w) - P*)/P* <= 1e-2 and 1e-3 (P* from a serial run to a relative duality
gap of 1e-6), the time of one early iteration, and max |w - sum_i y_i alpha_i x_i| / max |w|
at the end (0 up to rounding: every scheme is exact). A last table times the serial kernel
alone and two independent serial solves side by side: what the machine's cores and memory
allow when the threads share nothing.
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np

from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE

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
from .reference.dcd_threads import ThreadedDCD

LOSSES = {"-s 1": LOSS_SQUARED_HINGE, "-s 3": LOSS_HINGE}
ACCURACIES = (1e-2, 1e-3)
MAX_EPOCHS = 100


def optimum(ds, loss) -> float:
    """P* from a serial run to a relative duality gap of 1e-6 (or 3000 iterations)."""
    run = ThreadedDCD(ds.X, ds.y, np.ones(ds.X.shape[0]), 1.0, loss, "serial")
    best = np.inf
    for epoch in range(3000):
        run.epoch()
        if epoch % 5 == 4:
            primal, dual, gap = run.objectives()
            best = min(best, primal)
            if gap <= 1e-6 * abs(primal):
                break
    return best


def to_accuracy(ds, loss, pstar: float, scheme: str, n_threads: int, **options) -> dict:
    """Seconds and iterations until each accuracy is reached, the first iterations' time and
    the final w error."""
    run = ThreadedDCD(ds.X, ds.y, np.ones(ds.X.shape[0]), 1.0, loss, scheme,
                      n_threads=n_threads, **options)  # fmt: skip
    seconds = 0.0
    reached: dict[float, tuple[float, int]] = {}
    early = []
    for epoch in range(1, MAX_EPOCHS + 1):
        start = time.perf_counter()
        converged = run.epoch()
        elapsed = time.perf_counter() - start
        seconds += elapsed
        if epoch in (2, 3, 4):
            early.append(elapsed)
        primal = run.objectives()[0]
        for accuracy in ACCURACIES:
            if accuracy not in reached and (primal - pstar) / pstar <= accuracy:
                reached[accuracy] = (seconds, epoch)
        if len(reached) == len(ACCURACIES) or converged:
            break
    result = {"reached": reached, "early": median(early) if early else np.nan,
              "w_error": run.w_error()}  # fmt: skip
    run.close()
    return result


def serial_part(ds, repeats: int) -> float:
    """Seconds of what one iteration does on one thread whatever the threads: the visiting
    order of all rows and the end of the iteration (dropping shrunk rows)."""
    from linsvm.solvers import _dual
    from linsvm.solvers._random import new_state

    n = ds.X.shape[0]
    rows = np.arange(n, dtype=np.int32)
    active, removed = _dual.active_set(rows, n)
    order, bucket_order = _dual.order_buffers(n, 16, np.int32)
    rng = new_state(1)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        _dual.visiting_order(active, n, order, bucket_order, 16, 16, rng)
        _dual.drop_shrunk(active, n, removed)
        times.append(time.perf_counter() - start)
    return median(times[1:])


MODEL_THREADS = (2, 8, 16, 64)


def model_rows(nnz_bytes: float, serial: tuple[float, float], scheme: tuple[float, float, float],
               f: float) -> list[list[str]]:
    """Predicted speed-up to 1e-3 at MODEL_THREADS from the measured costs (a model, not a
    measurement; its T = 2 row reproduces the measurement by construction).

    serial = (s, I): the serial kernel's iteration time and iterations to 1e-3; scheme = (a1,
    a2, I2): the scheme's iteration time on 1 and 2 threads and its iterations on 2; f: the
    serial part of an iteration. An iteration on T threads costs f + (a1 - f) / T + c(T), with
    c(2) = a2 - f - (a1 - f) / 2 the measured excess at two threads (synchronisation, cache
    lines moving between cores, imbalance): constant in T (optimistic) or growing as T - 1
    (pessimistic: each thread reads every other thread's published sums). Iterations grow
    with the staleness, as 1 + max(I2 / I - 1, 0)(T - 1). The memory traffic this implies (the rows
    once an iteration) is shown so it can be checked against a machine's bandwidth.
    """
    s, iters = serial
    a1, a2, iters2 = scheme
    excess = max(a2 - f - (a1 - f) / 2, 0.0)
    growth = max(iters2 / iters - 1.0, 0.0)  # (fewer iterations on two threads: noise)
    rows = []
    for T in MODEL_THREADS:
        n_iters = iters * (1.0 + growth * (T - 1))
        work = f + (a1 - f) / T
        best, worst = work + excess, work + excess * (T - 1)
        rows.append([str(T), f"{n_iters:.1f}", f"{1e3 * best:.0f}-{1e3 * worst:.0f}",
                     f"{iters * s / (n_iters * worst):.2f}-{iters * s / (n_iters * best):.2f}",
                     f"{nnz_bytes / best / 1e9:.1f}"])  # fmt: skip
    return rows


def side_by_side(ds, loss, repeats: int) -> tuple[float, float]:
    """Seconds of one early iteration: the serial kernel alone, and each of two independent
    serial solves run at the same time on two threads (no shrinking: equal work)."""
    def make():
        return ThreadedDCD(ds.X, ds.y, np.ones(ds.X.shape[0]), 1.0, loss, "serial",
                           shrinking=False)  # fmt: skip

    alone, together = [], []
    for _ in range(repeats):
        a, b = make(), make()
        a.epoch()
        b.epoch()
        start = time.perf_counter()
        a.epoch()
        alone.append(time.perf_counter() - start)
        threads = [threading.Thread(target=run.epoch) for run in (a, b)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        together.append(time.perf_counter() - start)
    return median(alone), median(together)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="pypi-recent")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a9a, 1 repeat: a smoke run")
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-dcd-threads.md"))
    args = parser.parse_args()
    names = ["a9a"] if args.quick else args.datasets.split(",")
    repeats = 1 if args.quick else args.repeats
    T = args.threads
    schemes = [
        ("serial (linsvm)", "serial", 1, {}),
        (f"atomic, {T} threads", "atomic", T, {}),
        ("atomic, 1 thread", "atomic", 1, {}),
        (f"replicas, 4 merges/iter, {T} threads", "replicas", T, {"merges": 4}),
        (f"replicas, 1 merge/iter, {T} threads", "replicas", T, {"merges": 1}),
    ]
    lines = report_header(
        "Threads within one DCD solve: time to accuracy", "bench_dcd_threads",
        [f"medians of {repeats} runs; C = 1, bias 1, shrinking, buckets of 16 rows; "
         "hot features 4096, published every 2048 visits (the bias every 32)"],
    )  # fmt: skip
    scaling = []
    models = []
    for name in names:
        ds = load_dataset(name)
        if ds is None:
            print(f"skipping {name}: data not found")
            continue
        f = serial_part(ds, repeats)
        nnz_bytes = ds.X.data.nbytes + ds.X.indices.nbytes + 40 * ds.X.shape[0]
        for label, loss in LOSSES.items():
            pstar = optimum(ds, loss)
            rows = []
            serial_times = {}
            measured = {}
            for title, scheme, n_threads, options in schemes:
                runs = [to_accuracy(ds, loss, pstar, scheme, n_threads, **options)
                        for _ in range(repeats)]  # fmt: skip
                hits = [r["reached"].get(1e-3) for r in runs]
                measured[title] = (
                    median([r["early"] for r in runs]),
                    median([h[1] for h in hits]) if all(hits) else np.nan,
                )
                row = [title]
                for accuracy in ACCURACIES:
                    hits = [r["reached"].get(accuracy) for r in runs]
                    if all(h is not None for h in hits):
                        t = median([h[0] for h in hits])
                        row += [fmt_seconds(t), str(int(median([h[1] for h in hits])))]
                    else:
                        t = None
                        row += [f"not in {MAX_EPOCHS}", "-"]
                    if scheme == "serial":
                        serial_times[accuracy] = t
                    row.append(fmt_ratio(serial_times.get(accuracy), t))
                row += [f"{1e3 * median([r['early'] for r in runs]):.0f}",
                        fmt_sci(max(r["w_error"] for r in runs))]  # fmt: skip
                rows.append(row)
                print(label, name, row, flush=True)
            lines += [f"## {ds.describe()}, {label} (P* = {pstar:.8g})", ""]
            lines += markdown_table(
                ["scheme", "to 1e-2 (s)", "iters", "speed-up", "to 1e-3 (s)", "iters",
                 "speed-up", "one iteration (ms)", "w error"], rows,
            )  # fmt: skip
            lines.append("")
            s_iter, s_iters = measured["serial (linsvm)"]
            for title, one_thread in ((f"atomic, {T} threads", "atomic, 1 thread"),
                                      (f"replicas, 4 merges/iter, {T} threads", None)):  # fmt: skip
                a2, iters2 = measured[title]
                # the replicas' thread kernel is the serial one: one thread costs an iteration
                a1 = measured[one_thread][0] if one_thread else s_iter
                if np.isfinite(iters2) and np.isfinite(s_iters) and T == 2:
                    models.append((f"{name} {label}, {title.split(',')[0]}",
                                   model_rows(nnz_bytes, (s_iter, s_iters), (a1, a2, iters2), f)))
        alone, together = side_by_side(ds, LOSS_SQUARED_HINGE, repeats)
        scaling.append([name, f"{1e3 * alone:.0f}", f"{1e3 * together:.0f}",
                        fmt_ratio(2 * alone, together)])  # fmt: skip
    lines += ["## What sharing nothing allows: independent serial solves (-s 1, no shrinking)",
              ""]  # fmt: skip
    lines += markdown_table(["data", "one alone (ms/iter)", "two side by side (ms/iter)",
                             "throughput ratio"], scaling)  # fmt: skip
    if models:
        lines += ["", "## A model of more threads (not a measurement)", "",
                  model_rows.__doc__.split("\n\n", 1)[1].replace("\n    ", " ").strip(), "",
                  f"Measured serial part of an iteration (visiting order, end): "
                  f"{1e3 * f:.1f} ms on {names[-1]}.", ""]  # fmt: skip
        for title, rows in models:
            lines += [f"### {title}", ""]
            lines += markdown_table(["threads", "iterations to 1e-3", "ms per iteration",
                                     "speed-up to 1e-3 (pessimistic-optimistic)",
                                     "memory traffic at best (GB/s)"], rows)  # fmt: skip
            lines.append("")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
