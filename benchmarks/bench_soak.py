"""Long runs in one process: does anything pile up over thousands of fits?

Run from the repository root::

    python -m benchmarks.bench_soak [--fits 10000] [--memory-runs 100] [--dask-fits 100]
        [--quick] [--out benchmarks/RESULTS-soak.md]

The question: after a warm-up, does one process that trains and predicts again and again keep
its resident memory flat (within 10% of what it held after the warm-up), and does it leave no
file descriptors, threads, temporary files or partitions on Dask workers behind? Three phases
in one process, one after another:

- **fits**: ``--fits`` fits and predictions of small problems (generated: 400 rows, 300
  features, 12 non-zeros a row; binary, 3 classes and real targets), in turn
  ``linsvm.train`` with -s 0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13 and 21 (predict, and
  ``predict_proba`` for LR), and the estimators ``LinearSVC``, ``LogisticRegression``
  (``predict_proba``) and ``LinearSVR``;
- **--memory**: ``--memory-runs`` runs of ``linsvm train --memory 2G -q`` through the command
  line's ``main()`` (a LIBSVM text file converted to a temporary cache, block minimisation,
  the model file written), each followed by ``outofcore.train_cache`` on a stored cache of
  small blocks with training blocks capped at 1 MiB, so that the blocks are read in turn by
  the background reader;
- **dask**: ``--dask-fits`` runs of ``linsvm.distributed.train`` (-s 1, 3, 7 in turn, 2
  partitions) on one ``LocalCluster`` of 2 worker processes, then ``predict``.

About 100 times a phase (after ``gc.collect()``) the script records this process's
resident memory, open file descriptors and threads (psutil), the files left in the temporary
folder it gives the runs (``tempfile.tempdir`` and ``TMPDIR``, a fresh folder), and for the
dask phase the partitions the workers hold (``_partition.held_counts``), the keys in the
workers' stores and the workers' resident memory (their heartbeat's). A phase's baseline is
its sample at the end of the warm-up (the first 10% of its iterations): RSS growth is the
largest later sample over it; the leftovers are the counts at the end minus the baseline's.
The figure (``benchmarks/figures/soak.png``, where matplotlib is installed) plots RSS
against the iteration for each phase.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil
import scipy.sparse as sp

from benchmarks.common import BENCH_DIR, markdown_table, report_header, write_report

WARMUP_FRACTION = 0.1
RSS_TOLERANCE = 0.10  # the largest allowed growth of RSS after the warm-up


@dataclass
class Sample:
    iteration: int
    seconds: float
    rss: int
    fds: int  # open file descriptors other than sockets: files, pipes, event fds
    sockets: int
    threads: int
    temp_files: int
    partitions: int = 0
    worker_keys: int = 0
    worker_rss: int = 0


@dataclass
class Phase:
    name: str
    what: str
    iterations: int
    samples: list[Sample] = field(default_factory=list)

    @property
    def baseline(self) -> Sample:
        """The sample at the end of the warm-up."""
        warm = max(1, int(self.iterations * WARMUP_FRACTION))
        return next(s for s in self.samples if s.iteration >= warm)

    def growth(self, of: str = "rss") -> float:
        """The largest sample of ``of`` after the warm-up over the warm-up's last, minus 1."""
        base = self.baseline
        later = max(getattr(s, of) for s in self.samples if s.iteration >= base.iteration)
        return later / getattr(base, of) - 1 if getattr(base, of) else 0.0

    def leftovers(self) -> dict[str, int]:
        """What the end holds more than the baseline (fds, threads, temp files) or at all
        (partitions and keys on the workers). Sockets: more than the most seen by the end
        of the warm-up (a Dask client's pool of connections grows and shrinks by a few)."""
        base, end = self.baseline, self.samples[-1]
        warm = [s for s in self.samples if s.iteration <= base.iteration]
        return {
            "fds": end.fds - base.fds,
            "sockets": max(0, end.sockets - max(s.sockets for s in warm)),
            "threads": end.threads - base.threads,
            "temp_files": end.temp_files - base.temp_files,
            "partitions": end.partitions,
            "worker_keys": end.worker_keys,
        }

    def holds(self) -> bool:
        """RSS (and the workers') flat within ``RSS_TOLERANCE``, and nothing left."""
        flat = self.growth() <= RSS_TOLERANCE and self.growth("worker_rss") <= RSS_TOLERANCE
        return flat and not any(self.leftovers().values())


def temp_files(folder: Path) -> int:
    """Files and folders left anywhere under ``folder``."""
    return sum(len(dirs) + len(files) for _, dirs, files in os.walk(folder))


def sockets() -> int:
    """Open sockets of this process (Linux: /proc/self/fd; elsewhere psutil's count)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return len(psutil.Process().net_connections(kind="all"))
    count = 0
    for fd in fds:
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def descriptors() -> tuple[int, int]:
    """(file descriptors other than sockets, sockets), each the least of a few reads 10 ms
    apart: a Dask scheduler in this process reads /proc files now and then (its system
    monitor), and a file open for that moment is not one left open."""
    me = psutil.Process()
    reads = []
    for _ in range(5):
        n_sockets = sockets()
        reads.append((me.num_fds() - n_sockets, n_sockets))
        time.sleep(0.01)
    return min(r[0] for r in reads), min(r[1] for r in reads)


def sample(iteration: int, started: float, folder: Path, client=None) -> Sample:
    gc.collect()
    me = psutil.Process()
    fds, n_sockets = descriptors()
    s = Sample(
        iteration, time.perf_counter() - started, me.memory_info().rss, fds, n_sockets,
        me.num_threads(), temp_files(folder),
    )  # fmt: skip
    if client is not None:
        s.partitions, s.worker_keys, s.worker_rss = worker_state(client)
    return s


def worker_state(client) -> tuple[int, int, int]:
    """(partitions held, keys in the stores, resident bytes) summed over the workers."""
    from linsvm.distributed import _partition

    held = sum(sum(c.values()) for c in client.run(_partition.held_counts).values())
    keys = sum(client.run(lambda dask_worker: len(dask_worker.data)).values())
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    return held, keys, int(sum(w["metrics"]["memory"] for w in workers))


# ----------------------------------------------------------------------------- problems


def small_problem(seed: int, n_rows: int = 400, n_features: int = 300, nnz: int = 12):
    """Unit-norm sparse rows; (X, binary y, 3-class y, real y)."""
    rng = np.random.default_rng(seed)
    cols = rng.choice(n_features, size=(n_rows, nnz))
    X = sp.csr_matrix(
        (rng.random(n_rows * nnz) + 0.5, cols.ravel(), np.arange(0, n_rows * nnz + 1, nnz)),
        shape=(n_rows, n_features),
    )
    X.sum_duplicates()
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    scores = X @ rng.standard_normal((n_features, 3)) + 0.3 * rng.standard_normal((n_rows, 3))
    return X, np.where(scores[:, 0] > 0, 1, -1), np.argmax(scores, axis=1), scores[:, 0]


def fit_cases() -> list[tuple[str, Callable]]:
    """(name, fit-and-predict(problem)) of the fits phase, in turn."""
    import linsvm

    def train(solver, target=1, proba=False, **params):
        def run(problem):
            X, y = problem[0], problem[target]
            model = linsvm.train(X, y, solver=solver, **params)
            return model.predict_proba(X) if proba else model.predict(X)

        return f"train -s {solver}", run

    def estimator(cls, target=1, proba=False, **params):
        def run(problem):
            model = cls(**params).fit(problem[0], problem[target])
            return model.predict_proba(problem[0]) if proba else model.predict(problem[0])

        return cls.__name__, run

    return [
        train(1), train(3), train(7, proba=True), train(0, proba=True), train(2), train(5),
        train(6), train(4, target=2), train(1, target=2, bias=1.0), train(11, target=3),
        train(12, target=3), train(13, target=3), train(21),
        estimator(linsvm.LinearSVC), estimator(linsvm.LogisticRegression, proba=True),
        estimator(linsvm.LinearSVR, target=3),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- phases


def run_fits(n: int, folder: Path, every: int) -> Phase:
    phase = Phase("fits", "fit + predict of a small problem, 16 kinds in turn", n)
    problems = [small_problem(seed) for seed in range(8)]
    cases = fit_cases()
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped solvers warn; the warnings are not the question
        for i in range(n + 1):
            if i % every == 0 or i == n:
                phase.samples.append(sample(i, started, folder))
            if i < n:
                cases[i % len(cases)][1](problems[i % len(problems)])
    return phase


def run_memory(n: int, folder: Path, work: Path, every: int) -> Phase:
    from linsvm.cli import main
    from linsvm.io.cache import write_cache
    from linsvm.io.libsvm import write_libsvm
    from linsvm.outofcore import train_cache

    phase = Phase("--memory", "`train --memory 2G -q` by main(), then train_cache in 1 MiB "
                  "blocks", n)  # fmt: skip
    X, y = small_problem(100, n_rows=20_000, n_features=2000, nnz=20)[:2]
    text = work / "memory.svm"
    write_libsvm(X, y, text)
    cache = work / "memory.lsvc"
    write_cache(text, cache, block_bytes=256 << 10)
    model_file = work / "memory.model"
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(n + 1):
            if i % every == 0 or i == n:
                phase.samples.append(sample(i, started, folder))
            if i < n:
                with contextlib.redirect_stdout(io.StringIO()):
                    code = main(["train", "--memory", "2G", "-q", "-s", "1", str(text),
                                 str(model_file)])  # fmt: skip
                if code != 0:
                    raise RuntimeError(f"train --memory exited with {code}")
                train_cache(cache, memory="2G", solver=3, max_block_bytes=1 << 20, max_outer=5)
    return phase


def run_dask(n: int, folder: Path, every: int) -> Phase:
    import distributed

    import linsvm.distributed as dist

    phase = Phase("dask", "`linsvm.distributed.train` on a 2-worker LocalCluster + predict", n)
    X, y = small_problem(200, n_rows=2000, n_features=1000)[:2]
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        local_directory=str(folder.parent / "dask"),
    )  # fmt: skip
    try:
        with distributed.Client(cluster) as client:
            started = time.perf_counter()
            for i in range(n + 1):
                if i % every == 0 or i == n:
                    phase.samples.append(sample(i, started, folder, client))
                if i < n:
                    model = dist.train(X, y, client=client, solver=(1, 3, 7)[i % 3], eps=1e-3)
                    model.predict(X)
            # the leases end a moment after the runs: wait for the stores to empty
            deadline = time.monotonic() + 30
            while worker_state(client)[1] and time.monotonic() < deadline:
                time.sleep(0.1)
            phase.samples[-1] = sample(n, started, folder, client)
    finally:
        cluster.close()
    return phase


# ----------------------------------------------------------------------------- report


def mib(n: int) -> str:
    return f"{n / 2**20:.1f}"


def phase_table(phase: Phase, rows: int = 11) -> list[str]:
    picks = np.unique(np.linspace(0, len(phase.samples) - 1, rows).round().astype(int))
    header = ["iteration", "seconds", "RSS MiB", "fds", "sockets", "threads", "temp files"]
    dask = phase.name == "dask"
    if dask:
        header += ["partitions held", "keys on workers", "workers' RSS MiB"]
    table = []
    for k in picks:
        s = phase.samples[k]
        row = [s.iteration, f"{s.seconds:.1f}", mib(s.rss), s.fds, s.sockets, s.threads,
               s.temp_files]  # fmt: skip
        if dask:
            row += [s.partitions, s.worker_keys, mib(s.worker_rss)]
        table.append(row)
    return markdown_table(header, table)


def figure(phases: list[Phase], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(phases), figsize=(4.2 * len(phases), 3.4))
    for ax, phase in zip(np.atleast_1d(axes), phases, strict=True):
        its = [s.iteration for s in phase.samples]
        ax.plot(its, [s.rss / 2**20 for s in phase.samples], label="this process")
        if phase.name == "dask":
            ax.plot(its, [s.worker_rss / 2**20 for s in phase.samples], label="2 workers")
            ax.legend(fontsize=8)
        ax.axvline(phase.baseline.iteration, color="grey", lw=0.8, ls=":")
        ax.set_title(phase.name)
        ax.set_xlabel("iteration")
        ax.set_ylabel("resident MiB")
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def report(phases: list[Phase], figure_path: Path | None, out: Path) -> list[str]:
    lines = report_header(
        "Soak: thousands of fits in one process", "bench_soak",
        [f"warm-up: the first {WARMUP_FRACTION:.0%} of each phase's iterations; RSS growth: "
         "the largest later sample over the warm-up's last (psutil, after gc.collect())"],
    )  # fmt: skip
    summary = []
    for p in phases:
        left = p.leftovers()
        dask = p.name == "dask"
        summary.append([
            p.name, p.iterations, mib(p.baseline.rss), mib(p.samples[-1].rss),
            f"{100 * p.growth():+.1f}%",
            f"{100 * p.growth('worker_rss'):+.1f}%" if dask else "-",
            left["fds"], left["sockets"], left["threads"], left["temp_files"],
            left["partitions"] if dask else "-", left["worker_keys"] if dask else "-",
            "yes" if p.holds() else "**no**",
        ])  # fmt: skip
    lines += ["## Summary", ""]
    lines += markdown_table(
        ["phase", "iterations", "RSS after warm-up MiB", "RSS at end MiB",
         "largest RSS growth", "workers' largest RSS growth", "fds left", "sockets left",
         "threads left", "temp files left", "partitions left", "worker keys left",
         "flat and clean"],
        summary,
    )  # fmt: skip
    lines += [""]
    if figure_path is not None:
        shown = os.path.relpath(figure_path.resolve(), out.resolve().parent)
        lines += [f"![RSS against iteration]({shown})", ""]
    for p in phases:
        lines += [f"## {p.name}: {p.what}", ""] + phase_table(p) + [""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fits", type=int, default=10_000)
    parser.add_argument("--memory-runs", type=int, default=100)
    parser.add_argument("--dask-fits", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="500 fits, 10 and 10 runs")
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-soak.md"))
    parser.add_argument("--figure", default=None,
                        help="the figure's file (default: figures/soak.png beside --out)")
    args = parser.parse_args(argv)
    if args.figure is None:  # (a run elsewhere leaves the committed figure as it is)
        args.figure = str(Path(args.out).parent / "figures" / "soak.png")
    if args.quick:
        args.fits, args.memory_runs, args.dask_fits = 500, 10, 10
    phases = soak(args.fits, args.memory_runs, args.dask_fits)
    figure_path = Path(args.figure)
    drawn = figure(phases, figure_path)
    write_report(report(phases, figure_path if drawn else None, Path(args.out)), args.out)
    return 0


def soak(n_fits: int, n_memory: int, n_dask: int, samples: int = 100) -> list[Phase]:
    """The three phases (those with a count > 0), each sampled about ``samples`` times, in a
    fresh temporary folder given to them as ``tempfile.tempdir`` and ``TMPDIR`` (restored
    after)."""
    root = Path(tempfile.mkdtemp(prefix="linsvm-soak-"))
    folder, work = root / "tmp", root / "work"
    folder.mkdir()
    work.mkdir()
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    phases = []
    try:
        if n_fits:
            phases.append(run_fits(n_fits, folder, max(1, n_fits // samples)))
        if n_memory:
            phases.append(run_memory(n_memory, folder, work, max(1, n_memory // samples)))
        if n_dask:
            phases.append(run_dask(n_dask, folder, max(1, n_dask // samples)))
    finally:
        tempfile.tempdir = saved[0]
        if saved[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[1]
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    return phases


if __name__ == "__main__":
    raise SystemExit(main())
