"""Distributed training on Dask by CoCoA+: rounds and seconds to 1e-2 / 1e-3 relative primal
accuracy against the single-process solver, what a round moves, and what that predicts on a
cluster.

Run from the repository root::

    python -m benchmarks.bench_distributed [--quick] [--datasets pypi-recent,synthetic-text]
        [--workers 1,2,4] [--partitions 1,2,4,8,16,64] [--synthetic-rows 3000000]
        [--max-rounds 150] [--no-dask-ml] [--out benchmarks/RESULTS-distributed.md]

The question: how many CoCoA+ rounds and how many seconds does ``linsvm.distributed.train``
need to reach a relative primal accuracy (P - P*)/P* of 1e-2 and 1e-3 with 1, 2 and 4 Dask
workers, against ``linsvm.train`` in one process, how many bytes does a round move, and what do
those measurements predict for data 100 times larger on 16 and 64 machines?

Everything is measured on one machine: worker processes of a ``LocalCluster`` (one thread
each) that share its cores. With 2 cores, 2 workers can run side by side and 4 workers take
turns: the 4-worker times are those of 4 partitions on 2 cores, not of 4 machines. Rounds do
not depend on the hardware; seconds do.

- **Data**: pypi-recent (text, 663k rows, 321k features, 9.4M non-zeros) and the generated
  text of ``bench_reader`` (``make_text_classification(rows, nnz_per_row=32)``, 3M rows by
  default), both as LIBSVM text files that the workers read themselves (``plan_shards``: byte
  ranges, one per partition; nothing passes through the client). The single-process solver
  reads the same file with ``read_libsvm``.
- **Problem**: the L2-loss SVM (-s 1), C = 1, no bias (the project's harness problem).
- **P\\***: ``linsvm.train`` at eps ``PSTAR_EPS`` in this process, cached in the scratch folder;
  P* is the lowest primal value any run reaches (every P(w) is an upper bound), the reference
  run's dual a certified lower bound.
- **Single process**: ``linsvm.train`` (one thread) at eps 1, 0.3 and 0.1 (the default); the
  time to a target is the fastest of those runs that reaches it. Reading the file is timed
  apart.
- **Distributed**: a fresh ``LocalCluster(n_workers=W, threads_per_worker=1)`` for each W, its
  workers warmed up (Numba's cached kernels loaded) by a tiny run; then
  ``linsvm.distributed.train(path, client=..., n_partitions=W)``. Every round reports P(W) at
  the W it started from (``RoundProgress.primal``); the time to a target is the end of the
  first round whose primal is within it (conservative by one round: that W existed a round
  earlier), counted from the call (so it includes planning and the workers' reading, reported
  apart as "setup"). The run stops once the last target is reached or after ``--max-rounds``.
  Bytes per round: ``bytes_sent + bytes_received`` of the round (W to each worker, the dW and
  the objectives' parts back), median over rounds.
- **Rounds against K** (the written model's input): the same runs with K = 1, 2, 4, 8, 16, 64
  partitions on a 2-worker cluster (one thread a worker process; a worker runs its partitions
  one after another). Rounds do not depend on where the partitions run; their seconds here are
  those of 2 cores, so the model takes its compute per non-zero from the process runs above
  with no more workers than cores.
- **dask-ml** (pypi-recent only, ``--no-dask-ml`` to skip): ``dask_ml.linear_model
  .LogisticRegression(solver="lbfgs", C=1, fit_intercept=False)`` without its input
  normalisation, on the same rows as a dask array of ``sparse.COO`` chunks persisted on a
  2-worker cluster (its estimators accept no scipy.sparse chunks), for several ``max_iter``.
  It minimises (1/C) ||w||^2 / 2 + sum_i log(1 + exp(-y_i w'x_i)), i.e. LIBLINEAR's logistic
  regression divided by C: the same minimiser, so its coef_ is scored with linsvm's logistic
  primal against P* of that problem, beside CoCoA+ on -s 7 (the logistic dual) on the same
  cluster. dask-ml has no SVM estimator: the SVM rows compare with linsvm alone.
- **Model**: from the measured rounds R(K), compute per non-zero and bytes per round, the time
  to 1e-2 on data 100x pypi-recent over 16 and 64 workers, with a stated network (bandwidth,
  latency, per-task overhead); printed beside the published CoCoA+ and Snap ML figures. What
  is measured and what is modelled is labelled in the report.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .common import (
    BENCH_DIR,
    find_data_file,
    fmt_sci,
    fmt_seconds,
    markdown_table,
    package_version,
    report_header,
    scratch_dir,
    write_report,
)

TARGETS = (1e-2, 1e-3)
SOLVER = 1
C = 1.0
PSTAR_EPS = 1e-4
SINGLE_EPS = (1.0, 0.3, 0.1)
DEFAULT_WORKERS = "1,2,4"
DEFAULT_PARTITIONS = "1,2,4,8,16,64"
DEFAULT_SYNTHETIC_ROWS = 3_000_000
DASK_ML_ITERS = (10, 25, 50)
MB = 1e6

# The network the written model assumes (stated in the report): a 10 Gbit/s link at the
# scheduler and the client, 0.2 ms per message, and the scheduler's cost per worker call.
MODEL_BANDWIDTH = 1.25e9  # bytes per second
MODEL_LATENCY = 2e-4  # seconds per message
MODEL_TASK_OVERHEAD = 1e-3  # seconds of scheduler time per worker per round
MODEL_SCALE = 100
MODEL_WORKERS = (16, 64)


# ---- data ------------------------------------------------------------------------------------


def data_file(name: str, synthetic_rows: int) -> Path | None:
    """The LIBSVM text file of a dataset (None when it is missing)."""
    if name == "synthetic-text":
        from .bench_reader import synthetic_file

        return synthetic_file(synthetic_rows)
    return find_data_file(name)


def tiny_file(folder: Path, rows: int = 4000, seed: int = 0) -> Path:
    """A small generated LIBSVM text file (for --quick and the warm-ups)."""
    from linsvm.datasets import make_text_classification
    from linsvm.io import write_libsvm

    path = folder / f"tiny-{rows}-{seed}.svm"
    if not path.is_file():
        X, y = make_text_classification(rows, n_features=3000, nnz_per_row=12,
                                        random_state=seed)
        write_libsvm(X, y, path)
    return path


# ---- P* and the single-process solver ------------------------------------------------------


def rel(primal: float, pstar: float) -> float:
    return (primal - pstar) / abs(pstar)


def reference(path: Path, X, y, solver: int, fresh: bool) -> dict:
    """The tight single-process run (eps PSTAR_EPS), cached in a json in the scratch folder
    under the file's name, size and time and the solver."""
    import linsvm

    store = scratch_dir() / "bench-distributed-pstar.json"
    known = json.loads(store.read_text()) if store.is_file() else {}
    stat = path.stat()
    key = f"{path.name}|{stat.st_size}|{int(stat.st_mtime)}|s{solver}|C{C:g}|eps{PSTAR_EPS:g}"
    if fresh or key not in known:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model = linsvm.train(X, y, solver=solver, C=C, eps=PSTAR_EPS, max_iter=10000)
            seconds = time.perf_counter() - t0
        primal = sum(r.primal for r in model.results_)
        dual = sum(r.dual for r in model.results_)
        known[key] = {"primal": primal, "dual": dual, "seconds": seconds,
                      "n_iter": max(r.n_iter for r in model.results_)}
        store.write_text(json.dumps(known, indent=1))
    return known[key]


def single_runs(X, y, solver: int, eps_list=SINGLE_EPS) -> list[dict]:
    """``linsvm.train`` (one thread) at each eps: seconds, primal, iterations."""
    import linsvm

    runs = []
    for eps in eps_list:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model = linsvm.train(X, y, solver=solver, C=C, eps=eps, n_jobs=1)
            seconds = time.perf_counter() - t0
        runs.append({"eps": eps, "seconds": seconds,
                     "primal": sum(r.primal for r in model.results_),
                     "n_iter": max(r.n_iter for r in model.results_)})
    return runs


# ---- the cluster and the distributed runs -----------------------------------------------------


@contextlib.contextmanager
def local_cluster(n_workers: int, warm_file: Path | None = None, solvers=(SOLVER,)):
    """A LocalCluster of ``n_workers`` one-thread worker processes and its client, each worker
    warmed up by a tiny distributed run per solver (Numba's cached kernels loaded)."""
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", memory_limit=0, silence_logs=40)
        client = Client(cluster)
    try:
        if warm_file is not None:
            from linsvm import distributed as ld

            for s in solvers:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ld.train(str(warm_file), client=client, solver=s, C=C,
                             n_partitions=n_workers, max_rounds=2)
        yield client
    finally:
        client.close()
        cluster.close()


def distributed_run(client, source, solver: int, n_partitions: int, pstar: float,
                    max_rounds: int, stop_at: float = TARGETS[-1],
                    max_seconds: float | None = None) -> dict:
    """One ``linsvm.distributed.train`` call, traced round by round; it stops once P(W) is
    within ``stop_at`` of ``pstar`` (or after ``max_rounds`` rounds, or ``max_seconds``)."""
    from linsvm import distributed as ld

    trace: list[dict] = []
    t0 = time.perf_counter()

    def on_round(p) -> bool:
        now = time.perf_counter() - t0
        trace.append({"round": p.round, "t": now, "primal": p.objective,
                      "relative_gap": p.relative_gap, "gap": p.gap, "seconds": p.seconds,
                      "compute": p.compute_seconds, "sent": p.bytes_sent,
                      "received": p.bytes_received, "events": list(p.events)})
        if rel(p.objective, pstar) <= stop_at:
            return False
        return max_seconds is None or now < max_seconds

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ld.train(source, client=client, solver=solver, C=C, eps=1e-6,
                         n_partitions=n_partitions, max_rounds=max_rounds, on_round=on_round)
    seconds = time.perf_counter() - t0
    first = trace[0] if trace else None
    setup = (first["t"] - first["seconds"]) if first else seconds
    out = {"n_partitions": n_partitions, "seconds": seconds, "setup": setup, "trace": trace,
           "primal": sum(r.primal for r in model.results_)}
    out["to"] = [rounds_to(trace, pstar, t) for t in TARGETS]
    rounds = trace[1:] or trace  # round 0 starts from W = 0: its dW is the first solve
    out["round_seconds"] = float(np.median([r["seconds"] for r in rounds])) if rounds else None
    out["compute_seconds"] = float(np.median([r["compute"] for r in rounds])) if rounds else None
    out["round_bytes"] = float(np.median([r["sent"] + r["received"] for r in rounds])) \
        if rounds else None
    out["total_bytes"] = int(sum(r["sent"] + r["received"] for r in trace))
    out["recoveries"] = sum(1 for r in trace for e in r["events"] if e.startswith("recovered"))
    return out


def gap_violations(run: dict, pstar: float) -> list[int]:
    """Rounds whose reported gap is below their distance to P* (relative_gap is
    (P - D) / P, so the bound reads relative_gap * P >= P - P*): none if the gap is a bound."""
    return [r["round"] for r in run["trace"]
            if r["relative_gap"] * r["primal"] < (r["primal"] - pstar) - 1e-9 * abs(pstar)]


def rounds_to(trace: list[dict], pstar: float, target: float) -> dict | None:
    """The first round whose P(W) is within ``target``: its index (= rounds solved before it),
    the seconds since the call at its end, and the gap it reported."""
    for r in trace:
        if rel(r["primal"], pstar) <= target:
            return {"rounds": r["round"], "t": r["t"], "relative_gap": r["relative_gap"],
                    "rel": rel(r["primal"], pstar)}
    return None


# ---- dask-ml -------------------------------------------------------------------------------


def dask_ml_runs(client, X, y, iters=DASK_ML_ITERS, n_chunks: int = 4) -> dict:
    """dask-ml's LogisticRegression (lbfgs, no normalisation) on X as persisted sparse.COO
    chunks: for each max_iter, seconds and linsvm's logistic primal of its coef_."""
    import dask.array as da
    import sparse
    from dask_ml.linear_model import LogisticRegression

    from linsvm.objective import LOSS_LOGISTIC, primal_value

    rows = -(-X.shape[0] // n_chunks)
    t0 = time.perf_counter()
    Xd = da.from_array(X, chunks=(rows, X.shape[1]), asarray=False)
    Xd = Xd.map_blocks(sparse.COO.from_scipy_sparse, dtype=X.dtype)
    y01 = (y == y[0]).astype(np.float64)  # the first label is the positive class, as linsvm's
    yd = da.from_array(y01, chunks=rows)
    Xd, yd = client.persist([Xd, yd])
    from distributed import wait

    wait([Xd, yd])
    load = time.perf_counter() - t0
    ypm = np.where(y01 > 0, 1.0, -1.0)
    runs = []
    for max_iter in iters:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = LogisticRegression(solver="lbfgs", C=C, fit_intercept=False,
                                     max_iter=max_iter, solver_kwargs={"normalize": False})
            t0 = time.perf_counter()
            est.fit(Xd, yd)
            seconds = time.perf_counter() - t0
        w = np.asarray(est.coef_, dtype=np.float64).ravel()
        runs.append({"max_iter": max_iter, "seconds": seconds,
                     "primal": float(primal_value(X.indptr, X.indices, X.data, -1.0, ypm,
                                                  np.full(X.shape[0], C), w, LOSS_LOGISTIC))})
    return {"load": load, "runs": runs}


def logistic_reference(X, y, fresh: bool, path: Path) -> dict:
    """P* of the logistic problem: -s 0 (Newton) at a tight tolerance, cached."""
    import linsvm

    store = scratch_dir() / "bench-distributed-pstar.json"
    known = json.loads(store.read_text()) if store.is_file() else {}
    stat = path.stat()
    key = f"{path.name}|{stat.st_size}|{int(stat.st_mtime)}|s0|C{C:g}|eps1e-08"
    if fresh or key not in known:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model = linsvm.train(X, y, solver=0, C=C, eps=1e-8)
            seconds = time.perf_counter() - t0
        known[key] = {"primal": model.results_[0].primal, "seconds": seconds,
                      "n_iter": model.results_[0].n_iter}
        store.write_text(json.dumps(known, indent=1))
    return known[key]


# ---- the benchmark ---------------------------------------------------------------------------


def run_dataset(name: str, path: Path, args, warm: Path) -> dict:
    import linsvm

    print(f"== {name}: {path}", file=sys.stderr, flush=True)
    res: dict = {"name": name, "path": str(path), "bytes": path.stat().st_size}
    t0 = time.perf_counter()
    X, y = linsvm.read_libsvm(path, n_jobs=1)
    res["read_seconds"] = time.perf_counter() - t0
    res["shape"], res["nnz"] = list(X.shape), int(X.nnz)
    print(f"  read {res['read_seconds']:.1f} s; P* ...", file=sys.stderr, flush=True)
    res["reference"] = reference(path, X, y, SOLVER, args.fresh)
    print("  single process ...", file=sys.stderr, flush=True)
    res["single"] = single_runs(X, y, SOLVER)
    if name == "pypi-recent" and not args.no_dask_ml:
        res["lr_reference"] = logistic_reference(X, y, args.fresh, path)
        res["lr_single"] = single_runs(X, y, 7, eps_list=(0.1, 0.01))
        Xy = (X, y)
    else:
        Xy = None
    del X, y
    gc.collect()

    pstar = min([res["reference"]["primal"]] + [r["primal"] for r in res["single"]])
    res["distributed"] = []
    for w in args.workers:
        print(f"  {w} worker(s) ...", file=sys.stderr, flush=True)
        with local_cluster(w, warm) as client:
            r = distributed_run(client, str(path), SOLVER, w, pstar, args.max_rounds,
                                max_seconds=args.max_seconds)
        r["workers"] = w
        res["distributed"].append(r)

    if name == args.partitions_dataset and args.partitions:
        # K partitions on 2 workers: what the rounds need against K
        res["by_k"] = []
        for k in args.partitions:
            print(f"  K = {k} partitions on 2 workers ...", file=sys.stderr, flush=True)
            with local_cluster(2, warm) as client:
                r = distributed_run(client, str(path), SOLVER, k, pstar, args.max_rounds,
                                    max_seconds=args.k_max_seconds)
            r["workers"] = 2
            res["by_k"].append(r)
    if Xy is not None:
        print("  dask-ml, then CoCoA+ -s 7, on 2 workers ...", file=sys.stderr, flush=True)
        with local_cluster(2, warm, (SOLVER, 7)) as client:
            res["dask_ml"] = dask_ml_runs(client, *Xy)
            lr_pstar = min([res["lr_reference"]["primal"]]
                           + [r["primal"] for r in res["lr_single"]]
                           + [r["primal"] for r in res["dask_ml"]["runs"]])
            res["lr_distributed"] = distributed_run(client, str(path), 7, 2, lr_pstar,
                                                    args.max_rounds,
                                                    max_seconds=args.max_seconds)
    return res


def summarise(res: dict) -> dict:
    """P* (the lowest primal seen) and every run's accuracy and times to the targets."""
    primals = [res["reference"]["primal"]] + [r["primal"] for r in res["single"]]
    for r in res["distributed"] + res.get("by_k", []):
        primals += [p["primal"] for p in r["trace"]]
    res["pstar"] = pstar = min(primals)
    ref = res["reference"]
    res["pstar_bound"] = (pstar - ref["dual"]) / abs(pstar)
    for r in res["single"]:
        r["rel"] = rel(r["primal"], pstar)
    res["single_to"] = []
    for t in TARGETS:
        ok = [r for r in res["single"] if r["rel"] <= t]
        res["single_to"].append(min(ok, key=lambda r: r["seconds"]) if ok else None)
    for r in res["distributed"] + res.get("by_k", []):
        r["to"] = [rounds_to(r["trace"], pstar, t) for t in TARGETS]
        r["nnz_per_partition"] = res["nnz"] / r["n_partitions"]
    if "lr_reference" in res:
        lr = [res["lr_reference"]["primal"]] + [r["primal"] for r in res["lr_single"]]
        lr += [r["primal"] for r in res.get("dask_ml", {}).get("runs", [])]
        if "lr_distributed" in res:
            lr += [p["primal"] for p in res["lr_distributed"]["trace"]]
        res["lr_pstar"] = lr_pstar = min(lr)
        for r in res["lr_single"] + res.get("dask_ml", {}).get("runs", []):
            r["rel"] = rel(r["primal"], lr_pstar)
        if "lr_distributed" in res:
            d = res["lr_distributed"]
            d["to"] = [rounds_to(d["trace"], lr_pstar, t) for t in TARGETS]
    return res


# ---- the written model ------------------------------------------------------------------------


def projection(res: dict, bandwidth: float = MODEL_BANDWIDTH,
               latency: float = MODEL_LATENCY, task_overhead: float = MODEL_TASK_OVERHEAD,
               scale: int = MODEL_SCALE, workers=MODEL_WORKERS) -> dict | None:
    """Time to 1e-2 on ``scale`` x the data over K workers (one partition each), from the
    measured rounds R(K) (the largest K measured at or below the worker count), compute per
    non-zero and round, and W's bytes:

        T(K) = reading + R(K) * (compute(K) + communication(K))
        compute(K) = c * scale * nnz / K        (c: measured seconds a non-zero a round)
        communication(K) = K * 2 * |W| / bandwidth + 2 * latency + K * task_overhead
                           (W to every worker and a dense dW back, through the client)
        reading = scale * file bytes / K / (one worker's measured parse rate)
    """
    by_k = [r for r in res.get("by_k", []) if r["to"][0] is not None]
    if not by_k:
        return None
    # a core's compute: the least contended of the process runs with no more workers than
    # cores (on a shared machine the others wait for a core; the K runs put several
    # partitions on each worker)
    cores = os.cpu_count() or 1
    timed = [r for r in res["distributed"] if r["workers"] <= cores and r["compute_seconds"]]
    c = float(min(r["compute_seconds"] / r["nnz_per_partition"] for r in timed))
    w_bytes = 8 * res["shape"][1]
    one = [r for r in res["distributed"] if r["workers"] == 1]
    parse_rate = res["bytes"] / one[0]["setup"] if one and one[0]["setup"] > 0 else None
    rows = []
    for k in workers:
        below = [r for r in by_k if r["n_partitions"] <= k]
        if not below:
            continue
        measured = max(below, key=lambda r: r["n_partitions"])
        rounds = measured["to"][0]["rounds"]
        compute = c * scale * res["nnz"] / k
        comm = k * 2 * w_bytes / bandwidth + 2 * latency + k * task_overhead
        reading = scale * res["bytes"] / k / parse_rate if parse_rate else float("nan")
        rows.append({"workers": k, "rounds": rounds, "rounds_from_k": measured["n_partitions"],
                     "compute": compute, "comm": comm, "setup": reading,
                     "train": rounds * (compute + comm),
                     "total": reading + rounds * (compute + comm)})
    single = res["single_to"][0]
    return {"c": c, "w_bytes": w_bytes, "parse_rate": parse_rate, "rows": rows,
            "single_1e2": single["seconds"] * scale if single else None,
            "bandwidth": bandwidth, "latency": latency, "task_overhead": task_overhead,
            "scale": scale}


# ---- the report ------------------------------------------------------------------------------


def _to_cells(to: dict | None) -> list[str]:
    if to is None:
        return ["not reached", "-"]
    return [str(to["rounds"]), fmt_seconds(to["t"])]


def report(results: list[dict], args, capacity: list[float], passes: int) -> list[str]:
    lines = report_header(
        "Distributed training on Dask (CoCoA+) vs one process", "bench_distributed", [
            f"problem: -s {SOLVER} (L2-loss SVM dual), C = {C:g}, no bias; targets: relative "
            "primal accuracy (P - P*)/P* of " + " and ".join(f"{t:g}" for t in TARGETS),
            f"cluster: dask.distributed LocalCluster on this machine ({os.cpu_count()} cores), "
            "one thread a worker process; dask "
            f"{package_version('dask')}, distributed {package_version('distributed')}, "
            f"dask-ml {package_version('dask-ml')}; local passes per round: {passes}",
            "MB = 10^6 bytes. Times: wall clock; how idle the machine was: the two-thread "
            "capacity in the last section.",
        ])
    lines += [
        "## What is measured", "",
        "Every figure in the tables below is measured on this machine, except in the section "
        "\"Model\", which says what it computes from them. Workers are processes of one "
        f"machine with {os.cpu_count()} cores: up to {os.cpu_count()} workers compute side by "
        "side; 4 workers share 2 cores (their rounds are right, their seconds are those of 2 "
        "cores). Data moves through the loopback interface, not a network.", ""]
    for res in results:
        lines += dataset_section(res)
    for res in results:
        if res.get("by_k"):
            proj = projection(res)
            lines += by_k_section(res, passes)
            if "dask_ml" in res or "lr_distributed" in res:
                lines += lr_section(res)
            lines += model_section(res, proj)
    lines += published_section()
    lines += ["## Machine", "",
              "Two-thread capacity (a compute kernel on 2 threads vs 1; 2.00 on an idle 2-core "
              "machine, 1.00 when one core is taken by others): "
              f"{capacity[0]:.2f} at the start, {capacity[1]:.2f} at the end.", ""]
    if args.note:
        lines += ["## Notes", ""] + [f"- {n}" for n in args.note] + [""]
    return lines


def dataset_section(res: dict) -> list[str]:
    rows_, cols = res["shape"]
    ref = res["reference"]
    lines = [f"## {res['name']}", "",
             f"{res['path']}: {res['bytes'] / MB:.0f} MB of text, {rows_} rows, {cols} "
             f"features, {res['nnz']} non-zeros. P* = {res['pstar']:.10g} (lowest primal "
             f"seen; the eps {PSTAR_EPS:g} run: {ref['seconds']:.1f} s, {ref['n_iter']} "
             f"iterations; its dual certifies (P* - D)/P* <= {fmt_sci(res['pstar_bound'])}).",
             ""]
    table = []
    for r in res["single"]:
        table.append([f"single process, eps {r['eps']:g}", "1", "-",
                      fmt_seconds(res["read_seconds"]), "-",
                      fmt_seconds(r["seconds"]) if r["rel"] <= TARGETS[0] else "not reached",
                      "-",
                      fmt_seconds(r["seconds"]) if r["rel"] <= TARGETS[1] else "not reached",
                      fmt_sci(r["rel"]), "-", "-", "-", "-"])
    for r in res["distributed"]:
        to = r["to"]
        gap = fmt_sci(to[1]["relative_gap"]) if to[1] else "-"
        table.append([f"CoCoA+, {r['workers']} worker(s)", str(r["workers"]),
                      str(r["n_partitions"]), fmt_seconds(r["setup"]),
                      *_to_cells(to[0]), *_to_cells(to[1]),
                      fmt_sci(rel(r["trace"][-1]["primal"], res["pstar"])) if r["trace"] else "-",
                      gap, fmt_seconds(r["round_seconds"]),
                      f"{(r['round_bytes'] or 0) / MB:.2f}", str(r["recoveries"])])
    lines += markdown_table(
        ["run", "workers", "partitions", "read / setup s", "rounds to 1e-2", "s to 1e-2",
         "rounds to 1e-3", "s to 1e-3", "last rel. acc.", "gap reported at 1e-3",
         "round s (median)", "MB moved a round", "recoveries"], table)
    s2, s3 = res["single_to"]
    lines += ["",
              "Single process: one `linsvm.train` call per eps (one thread, data in memory; "
              "reading the file is the 'read' column, not included in the train times); the "
              "time to a target is that of the run, shown where it reaches it"
              + (f" (fastest to 1e-2: eps {s2['eps']:g}, {fmt_seconds(s2['seconds'])} s"
                 if s2 else " (1e-2 not reached")
              + (f"; to 1e-3: eps {s3['eps']:g}, {fmt_seconds(s3['seconds'])} s)." if s3
                 else "; 1e-3 not reached)."),
              "CoCoA+: seconds from the call, including the setup column (planning, the "
              "workers reading their byte ranges, the labels merged, the partitions set up); "
              "'rounds to' is the number of solving rounds whose sum gave the first W within "
              "the target; the gap reported is the run's own certified relative duality gap "
              "at that round, (P - D)/P, with D <= P*: an upper bound of (P - P*)/P. "
              "Recoveries: rounds replayed from a snapshot after a worker was lost (their "
              "time is in the totals).", ""]
    runs = res["distributed"] + res.get("by_k", [])
    bad = sum(len(gap_violations(r, res["pstar"])) for r in runs)
    rounds = sum(len(r["trace"]) for r in runs)
    lines += [f"Gap check: in {rounds} rounds of the CoCoA+ runs on this data, the reported "
              f"gap was below P - P* in {bad}"
              + (" (it is a true bound in every round)." if bad == 0
                 else ": **there the reported gap is not a bound.**"), ""]
    return lines


def by_k_section(res: dict, passes: int) -> list[str]:
    lines = [f"## Rounds against the number of partitions K ({res['name']})", "",
             "The same CoCoA+ runs with K partitions on 2 worker processes (one thread "
             "each; a worker runs its partitions one after another): the rounds are those "
             "of K machines, the seconds are those of 2 cores (compute per partition: the "
             f"slowest partition's {passes} local pass(es) and its parts of the objectives).",
             ""]
    table = []
    for r in res["by_k"]:
        rate = r["compute_seconds"] / r["nnz_per_partition"] if r["compute_seconds"] else None
        table.append([str(r["n_partitions"]), *_to_cells(r["to"][0]), *_to_cells(r["to"][1]),
                      fmt_sci(r["trace"][-1]["relative_gap"]) if r["trace"] else "-",
                      f"{r['nnz_per_partition']:.0f}",
                      fmt_seconds(r["compute_seconds"]),
                      f"{rate * 1e9:.1f}" if rate else "-",
                      fmt_seconds(r["round_seconds"]),
                      f"{(r['round_bytes'] or 0) / MB:.2f}"])
    lines += markdown_table(
        ["K", "rounds to 1e-2", "s to 1e-2", "rounds to 1e-3", "s to 1e-3", "last gap",
         "nnz a partition", "compute a partition a round, s", "ns a non-zero a round",
         "round s", "MB a round"], table)
    return lines + [""]


def lr_section(res: dict) -> list[str]:
    lines = ["## Logistic regression: dask-ml against CoCoA+ -s 7 (pypi-recent, 2 workers)", "",
             f"P* = {res['lr_pstar']:.10g} (lowest primal seen; -s 0 at eps 1e-8 took "
             f"{res['lr_reference']['seconds']:.1f} s). dask-ml's `LogisticRegression(solver="
             "'lbfgs', C=1, fit_intercept=False, solver_kwargs={'normalize': False})` "
             "minimises the same objective divided by C (checked: its coefficients match "
             "-s 0's on small data); its rows here are "
             "`sparse.COO` chunks persisted on the workers before the timed fits (the data "
             "passed through the client once, in the load column).", ""]
    table = []
    for r in res["lr_single"]:
        table.append([f"linsvm -s 7, one process, eps {r['eps']:g}", "-",
                      fmt_seconds(r["seconds"]), fmt_sci(r["rel"])])
    dm = res.get("dask_ml")
    if dm:
        for r in dm["runs"]:
            table.append([f"dask-ml lbfgs, max_iter {r['max_iter']}", fmt_seconds(dm["load"]),
                          fmt_seconds(r["seconds"]), fmt_sci(r["rel"])])
    d = res.get("lr_distributed")
    if d:
        for t, to in zip(TARGETS, d["to"], strict=True):
            table.append([f"CoCoA+ -s 7, 2 workers, to {t:g}", fmt_seconds(d["setup"]),
                          fmt_seconds(to["t"]) if to else "not reached",
                          fmt_sci(to["rel"]) if to else "-"])
    lines += markdown_table(["run", "load / setup s", "seconds", "rel. acc."], table)
    return lines + ["", "dask-ml's times are fits on data already on the workers; CoCoA+'s "
                    "count from the call (reading included). dask-ml has no hinge or "
                    "squared-hinge estimator, so the SVM rows above have no dask-ml peer.", ""]


def model_section(res: dict, proj: dict | None) -> list[str]:
    lines = [f"## Model: time to 1e-2 on {MODEL_SCALE}x {res['name']} over 16 and 64 workers",
             ""]
    if proj is None:
        return lines + ["No K reached 1e-2 within the rounds allowed: no model.", ""]
    lines += [
        "Modelled, not measured. Inputs, measured above: R(K), the rounds to 1e-2 with K "
        "partitions (the largest K measured at or below the worker count: rounds grow with "
        "K, so for K beyond the largest measured the figure is optimistic); c = "
        f"{proj['c'] * 1e9:.1f} ns a non-zero a round (a partition's local passes and its "
        "parts of the objectives, per non-zero: the least contended process run above with "
        "no more workers than cores); W = "
        f"{proj['w_bytes'] / MB:.2f} MB (8 bytes a feature; the data 100x larger is assumed "
        "to keep its features, as hashed features would); the parse rate of one worker, "
        + (f"{proj['parse_rate'] / MB:.0f} MB/s (the 1-worker setup)." if proj["parse_rate"]
           else "unknown."),
        f"Assumed: a {proj['bandwidth'] * 8 / 1e9:.0f} Gbit/s link at the scheduler and "
        f"the client, {proj['latency'] * 1e3:.1f} ms a message, "
        f"{proj['task_overhead'] * 1e3:.1f} ms of scheduler time a worker a round; one "
        "partition a worker; W sent to every worker and a dense dW back from each, relayed "
        "by the scheduler (what `linsvm.distributed` does now: `Client.run` goes through "
        "it; measured here, a round on tiny partitions costs 3.5 ms on 2 workers).", "",
        "    T(K) = reading + R(K) * (c * 100 nnz / K + K * 2 * |W| / bandwidth "
        "+ 2 * latency + K * overhead a worker)", ""]
    table = []
    for r in proj["rows"]:
        table.append([str(r["workers"]), f"{r['rounds']} (K = {r['rounds_from_k']})",
                      fmt_seconds(r["compute"]), fmt_seconds(r["comm"]),
                      fmt_seconds(r["setup"]), fmt_seconds(r["train"]),
                      fmt_seconds(r["total"])])
    lines += markdown_table(["workers", "R(K) rounds", "compute a round s",
                             "communication a round s", "reading s", "training s",
                             "total s"], table)
    if proj["single_1e2"]:
        lines += ["", f"For scale: one process would need about "
                  f"{fmt_seconds(proj['single_1e2'])} s to 1e-2 on the {MODEL_SCALE}x data "
                  "(its measured time times 100, if it fitted in memory)."]
    return lines + [""]


def published_section() -> list[str]:
    return [
        "## Published figures, for context", "",
        "Not measured here: what others report, on their own data and hardware.", "",
        "- CoCoA (Jaggi, Smith, Takac, Terhorst, Krishnan, Hofmann, Jordan, NIPS 2014; "
        "averaging the local updates), implemented in Spark: against mini-batch SGD and SDCA "
        "it reached the same .001-accurate solution on average 25x as quickly (abstract).",
        "- CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtarik, Takac, ICML 2015; adding them, "
        "sigma' = K, what linsvm.distributed runs): stronger primal-dual rates, which cover "
        "non-smooth losses, and markedly better performance than CoCoA on real distributed "
        "data sets, the more so as the number of machines grows (abstract; the per-data-set "
        "figures are plots, not reproduced here).",
        "- A third party's measurement of CoCoA+ (Pal, Xu, Yang, Rajasekaran, Bi, J. Parallel "
        "Distrib. Comput. 2020, Hybrid-DCA): on a 280 GB LIBSVM data set, CoCoA+ on 16 nodes "
        "took more than 160 s to a duality gap of 1e-5, their hybrid (12 cores a node, "
        "asynchronous) under 30 s (abstract).",
        "- Snap ML (Duenner et al., NeurIPS 2018; CoCoA-type across nodes, GPUs and threads "
        "within): logistic regression on the Criteo Terabyte Click Logs (4.2 billion "
        "examples, 1 million features) in 1.53 minutes (91.5 s) on 4 IBM Power AC922 servers "
        "(8 POWER9 CPUs, 16 V100 GPUs), 46x faster than the figure it compared with "
        "(TensorFlow on Google Cloud: 60 workers and 29 parameter servers, 70 minutes). That "
        "is training time to a test log-loss with the data already in memory; the model "
        "above counts reading too and runs on CPUs.", ""]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="a tiny generated file, workers 1,2, partitions 1,2,4, no dask-ml")
    p.add_argument("--datasets", default="pypi-recent,synthetic-text")
    p.add_argument("--workers", default=DEFAULT_WORKERS)
    p.add_argument("--partitions", default=DEFAULT_PARTITIONS,
                   help="K for the rounds-against-K runs ('' to skip)")
    p.add_argument("--partitions-dataset", default="pypi-recent")
    p.add_argument("--synthetic-rows", type=int, default=DEFAULT_SYNTHETIC_ROWS)
    p.add_argument("--max-rounds", type=int, default=150)
    p.add_argument("--max-seconds", type=float, default=240.0,
                   help="a distributed run stops after this many seconds (240)")
    p.add_argument("--k-max-seconds", type=float, default=300.0,
                   help="the same for the runs against K (300)")
    p.add_argument("--no-dask-ml", action="store_true")
    p.add_argument("--fresh", action="store_true", help="recompute P* (else cached)")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--report-only", metavar="JSON", default=None,
                   help="write the report again from a run's saved results (adding --note)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-distributed.md"))
    args = p.parse_args(argv)
    if args.report_only:
        saved = json.loads(Path(args.report_only).read_text())
        if isinstance(saved, list):  # results only: the machine check was not kept
            saved = {"results": saved, "capacity": [float("nan")] * 2, "passes": 1}
        with _command_line(saved.get("argv", [])):
            write_report(report(saved["results"], args, saved["capacity"], saved["passes"]),
                         args.out)
        return
    argv_given = list(argv) if argv is not None else sys.argv[1:]
    args.workers = [int(w) for w in args.workers.split(",") if w.strip()]
    args.partitions = [int(k) for k in args.partitions.split(",") if k.strip()]
    res_json = scratch_dir() / "bench-distributed-results.json"
    if args.quick:
        folder = scratch_dir()
        datasets = [("tiny", tiny_file(folder, rows=20000, seed=1))]
        args.workers = [w for w in args.workers if w <= 2] or [1]
        args.partitions = [k for k in args.partitions if k <= 4]
        args.partitions_dataset = "tiny"
        args.no_dask_ml = True
        args.max_rounds = min(args.max_rounds, 60)
        res_json = scratch_dir() / "bench-distributed-quick.json"
    else:
        datasets = []
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            path = data_file(name, args.synthetic_rows)
            if path is None:
                args.note.append(f"{name}: data file missing, skipped")
                continue
            datasets.append((name, path))
    from .bench_reader import two_thread_capacity

    capacity = [two_thread_capacity()]
    warm = tiny_file(scratch_dir(), rows=2000)
    results = [summarise(run_dataset(name, path, args, warm)) for name, path in datasets]
    capacity.append(two_thread_capacity())
    from linsvm.distributed import DEFAULT_LOCAL_PASSES

    res_json.write_text(json.dumps({"results": results, "capacity": capacity,
                                    "passes": DEFAULT_LOCAL_PASSES, "argv": argv_given},
                                   indent=1, default=str))
    with _command_line(argv_given):
        write_report(report(results, args, capacity, DEFAULT_LOCAL_PASSES), args.out)


@contextlib.contextmanager
def _command_line(argv: list[str]):
    """sys.argv as the run's own (the report's header shows the command that measured)."""
    saved = sys.argv
    sys.argv = [saved[0], *argv]
    try:
        yield
    finally:
        sys.argv = saved


if __name__ == "__main__":
    main()
