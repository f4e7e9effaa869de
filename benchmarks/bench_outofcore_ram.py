"""Data larger than the machine's RAM: block minimisation under a memory cgroup.

Run from the repository root, after ``bench_outofcore`` (whose cache, test cache and P* it
reuses: ``--folder`` names its work folder, by default that of ``--size large``)::

    python -m benchmarks.bench_outofcore_ram [--folder F] [--ram 3G] [--memory 1G]
        [--solver 1] [--max-outer 30] [--out benchmarks/RESULTS-outofcore-ram.md]

The question: does ``train --memory`` still train, and how fast, when the data cannot stay in
the OS page cache either, so that every outer iteration reads the whole cache from disk? And
how close does it come to the disk's own rate: its time against the time to read the cache,
cold, as many times as the run read it?

This machine has more RAM (24 GiB) than the disk space left for a larger data set allows, so
the machine is made smaller instead: each timed child runs in a Linux memory cgroup (v1,
``/sys/fs/cgroup/memory``) whose limit, ``--ram``, counts the process's memory *and* the
page cache it fills, as a machine's RAM would; the kernel reclaims the cgroup's cached
pages when it reaches the limit. The cache's pages are dropped from the page cache before
each run (``posix_fadvise(DONTNEED)``), so the first read is a disk read too.

- **blocks**: ``train_cache(cache, memory=--memory, solver=--solver)`` at its defaults, in
  the cgroup; its outer iterations' times and read rates; the bytes read from disk
  (``/proc/vmstat`` pgpgin over the run, the whole machine: the run is the only reader), the
  child's peak RSS (``ru_maxrss``) and the cgroup's peak usage (process + page cache).
- **disk rate**: the cache read from start to end in 4 MiB reads, dropped from the page
  cache before each of three reads (median): the time one pass over the data from disk costs
  at least. The run's time is set against the bytes it read from disk at that rate, at its
  end and at the iterations that reached 1e-2 and 1e-3.
- **in memory**, in the same cgroup: ``read_libsvm(cache)`` then ``linsvm.train``, which
  needs the whole CSR matrix; the kernel's OOM killer ends it (shown as such) when the data
  does not fit.
- P* and the warm-page-cache run of the same budget come from ``bench_outofcore``'s files
  beside the cache (``*.pstar.json``, ``results.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .bench_outofcore import block_points, linsvm_predict, rel, time_to
from .common import (
    REPO_ROOT,
    fmt_sci,
    fmt_seconds,
    markdown_table,
    report_header,
    scratch_dir,
    write_report,
)

CGROUP_ROOT = Path("/sys/fs/cgroup/memory")
MB = 1e6
TARGETS = (1e-2, 1e-3)


def parse_size(text: str) -> int:
    from linsvm.outofcore import parse_memory

    return parse_memory(text)


class MemoryCgroup:
    """A cgroup-v1 memory group limited to ``limit`` bytes (process memory + page cache)."""

    def __init__(self, limit: int) -> None:
        if not (CGROUP_ROOT / "memory.limit_in_bytes").is_file():
            raise SystemExit(f"needs a writable cgroup-v1 memory controller at {CGROUP_ROOT}")
        self.path = CGROUP_ROOT / f"linsvm-bench-{os.getpid()}"
        self.path.mkdir()
        (self.path / "memory.limit_in_bytes").write_text(str(limit))

    def enter(self) -> None:
        """Move the calling process into the group (``preexec_fn`` of a child)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def figure(self, name: str) -> int:
        return int((self.path / name).read_text())

    def reset_peak(self) -> None:
        (self.path / "memory.max_usage_in_bytes").write_text("0")

    def close(self) -> None:
        for _ in range(50):  # the group empties once its last process is reaped
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def drop_from_page_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def disk_read_seconds(path: Path, repeats: int = 3) -> list[float]:
    """Seconds to read ``path`` from start to end, cold (dropped from the page cache first)."""
    times = []
    for _ in range(repeats):
        drop_from_page_cache(path)
        fd = os.open(path, os.O_RDONLY)
        try:
            t0 = time.perf_counter()
            while os.read(fd, 4 << 20):
                pass
            times.append(time.perf_counter() - t0)
        finally:
            os.close(fd)
    return times


def pages_read_kb() -> int:
    with open("/proc/vmstat") as f:
        for line in f:
            if line.startswith("pgpgin "):
                return int(line.split()[1])
    return 0


def run_in_group(group: MemoryCgroup, kind: str, spec: dict) -> dict:
    """One ``bench_outofcore`` child in the cgroup: its result (or how it ended), wall
    seconds, peak RSS, the group's peak usage and the kilobytes read from disk."""
    cmd = [sys.executable, "-m", "benchmarks.bench_outofcore", "--child", kind, json.dumps(spec)]
    print(f"  {kind} in {group.path.name}: {json.dumps(spec)}", file=sys.stderr, flush=True)
    group.reset_peak()
    read0 = pages_read_kb()
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=null,
                                preexec_fn=group.enter, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    res: dict = {"wall": wall, "rss": usage.ru_maxrss * 1024,
                 "group_peak": group.figure("memory.max_usage_in_bytes"),
                 "read_bytes": (pages_read_kb() - read0) * 1024}
    if os.WIFSIGNALED(status):
        res["ended"] = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    elif os.WEXITSTATUS(status) != 0:
        res["ended"] = f"exit status {os.WEXITSTATUS(status)}"
    else:
        res["ended"] = "finished"
        res.update(json.loads(out.strip().splitlines()[-1]))
    return res


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_folder = scratch_dir() / "synthetic-text-20000000x32-outofcore"
    p.add_argument("--folder", default=str(default_folder),
                   help="bench_outofcore's work folder (train.lsvc, test.lsvc, P*)")
    p.add_argument("--ram", default="3G", help="the cgroup's limit: the machine's RAM")
    p.add_argument("--memory", default="1G", help="train --memory budget")
    p.add_argument("--solver", type=int, default=1)
    p.add_argument("--max-outer", type=int, default=30)
    p.add_argument("--skip-in-memory", action="store_true")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--out", default=str(Path(__file__).parent / "RESULTS-outofcore-ram.md"))
    args = p.parse_args(argv)

    folder = Path(args.folder)
    cache, test = folder / "train.lsvc", folder / "test.lsvc"
    if not cache.is_file():
        raise SystemExit(f"{cache} missing: run `python -m benchmarks.bench_outofcore "
                         "--size large` first")
    ram = parse_size(args.ram)
    pstar_file = cache.with_name(cache.name + ".pstar.json")
    pstar_runs = json.loads(pstar_file.read_text()) if pstar_file.is_file() else {}
    pstar_run = pstar_runs.get(f"s{args.solver}-eps0.0001")
    if pstar_run is None:
        raise SystemExit(f"no P* for -s {args.solver} beside {cache}: run bench_outofcore first")
    pstar = pstar_run["primal"]
    warm = None  # bench_outofcore's run of the same budget, the page cache warm
    results_file = folder / "results.json"
    if results_file.is_file():
        out = json.loads(results_file.read_text()).get("solvers", {}).get(str(args.solver))
        if out:
            pstar = min(pstar, out["pstar"])
            warm = next((b for b in out["blocks"]
                         if b["budget"] == args.memory and not b["selective"]), None)

    cache_bytes = cache.stat().st_size
    disk_times = disk_read_seconds(cache)
    disk_seconds = sorted(disk_times)[1]
    group = MemoryCgroup(ram)
    try:
        drop_from_page_cache(cache)
        model = folder / "models" / f"blocks-s{args.solver}-{args.memory}-ram{args.ram}.model"
        model.parent.mkdir(exist_ok=True)
        blocks = run_in_group(group, "blocks", {
            "cache": str(cache), "solver": args.solver, "memory": args.memory,
            "selective": None, "max_outer": args.max_outer, "model": str(model)})
        in_memory = None
        if not args.skip_in_memory:
            drop_from_page_cache(cache)
            in_memory = run_in_group(group, "memory", {
                "cache": str(cache), "solver": args.solver, "eps": 0.1})
    finally:
        group.close()
    if blocks["ended"] == "finished":
        blocks["test_acc"] = linsvm_predict(test, model, folder)[0]

    lines = report_header(
        "Data larger than the machine's RAM: block minimisation in a memory cgroup",
        "bench_outofcore_ram",
        [f"training cache: {cache} ({cache_bytes / MB:.0f} MB); the cgroup's limit (process "
         f"+ page cache): {args.ram} = {ram / MB:.0f} MB, {cache_bytes / ram:.1f}x smaller "
         "than the data",
         "MB = 10^6 bytes; disk reads from /proc/vmstat pgpgin over the run (the machine's, "
         "the run the only reader)",
         f"disk: the cache read cold from start to end in {fmt_seconds(disk_seconds)} s "
         f"({cache_bytes / MB / disk_seconds:.0f} MB/s; three reads: "
         + ", ".join(fmt_seconds(t) for t in disk_times) + " s)"])
    lines += ["## Runs", ""]
    rows = []
    if blocks["ended"] == "finished":
        points = block_points(blocks)
        to = [time_to(points, pstar, t) for t in TARGETS]
        n_outer = len(blocks["trace"])
        rows.append([f"blocks --memory {args.memory} (cgroup {args.ram})", blocks["ended"],
                     fmt_seconds(blocks["seconds"]), n_outer, fmt_sci(rel(blocks["primal"],
                                                                           pstar)),
                     fmt_seconds(to[0]), fmt_seconds(to[1]), f"{blocks['rss'] / MB:.0f}",
                     f"{blocks['group_peak'] / MB:.0f}",
                     f"{blocks['read_bytes'] / MB:.0f}", f"{blocks['test_acc']:.2f}"])
    else:
        rows.append([f"blocks --memory {args.memory} (cgroup {args.ram})", blocks["ended"],
                     fmt_seconds(blocks["wall"]), "", "", "", "", f"{blocks['rss'] / MB:.0f}",
                     f"{blocks['group_peak'] / MB:.0f}", f"{blocks['read_bytes'] / MB:.0f}",
                     ""])
    if warm:
        points = block_points(warm)
        to = [time_to(points, pstar, t) for t in TARGETS]
        rows.append([f"blocks --memory {args.memory}, warm page cache (bench_outofcore)",
                     "finished", fmt_seconds(warm["seconds"]), len(warm["trace"]),
                     fmt_sci(rel(warm["primal"], pstar)), fmt_seconds(to[0]),
                     fmt_seconds(to[1]), f"{warm['rss'] / MB:.0f}", "-", "-",
                     f"{warm['test_acc']:.2f}"])
    if in_memory is not None:
        rows.append([f"in memory, eps 0.1 (cgroup {args.ram})", in_memory["ended"],
                     fmt_seconds(in_memory.get("seconds", in_memory["wall"])), "", "", "", "",
                     f"{in_memory['rss'] / MB:.0f}", f"{in_memory['group_peak'] / MB:.0f}",
                     f"{in_memory['read_bytes'] / MB:.0f}", ""])
    lines += markdown_table(["run", "ended", "seconds", "outer iterations", "rel. acc.",
                             "to 1e-2 s", "to 1e-3 s", "peak RSS MB", "cgroup peak MB",
                             "read from disk MB", "test acc %"], rows)
    lines += ["", f"P* = {pstar:.10g} (bench_outofcore's lowest primal for -s {args.solver})."]
    if blocks["ended"] == "finished":
        lines += ["", "## Against the disk", "",
                  "Passes read: the bytes read from disk over the cache's size (the run's "
                  "whole read at its end; at a target, the outer iterations up to the one "
                  "that reached it, plus the labels' read). Disk time: that many passes at "
                  "the cold read's rate.", ""]
        passes_end = blocks["read_bytes"] / cache_bytes
        drows = [["the whole run", fmt_seconds(blocks["seconds"]), f"{passes_end:.1f}",
                  fmt_seconds(passes_end * disk_seconds),
                  f"{blocks['seconds'] / (passes_end * disk_seconds):.2f}"]]
        points = block_points(blocks)
        for target, t in zip(TARGETS, [time_to(points, pstar, x) for x in TARGETS],
                             strict=True):
            if t is None:
                continue
            reached = next((i for i, pt in enumerate(blocks["trace"]) if pt["t"] >= t),
                           len(blocks["trace"]) - 1)
            mib = sum(pt["mb"] for pt in blocks["trace"][: reached + 1])  # (MiB of blocks)
            passes = mib * 2**20 / cache_bytes
            drows.append([f"to {target:g}", fmt_seconds(t), f"{passes:.1f}",
                          fmt_seconds(passes * disk_seconds),
                          f"{t / (passes * disk_seconds):.2f}"])
        lines += markdown_table(["until", "seconds", "passes read", "disk time s",
                                 "seconds / disk time"], drows)
    if blocks["ended"] == "finished":
        lines += ["", "Outer iterations in the cgroup: seconds since the start at each "
                  "iteration's end, relative accuracy at its start, read rate of the iteration "
                  "(MB of cache per second of the iteration).", ""]
        cells = []
        for i, pt in enumerate(blocks["trace"]):
            rate = pt["mb"] * 2**20 / MB / max(pt["seconds"], 1e-9)  # (mb: MiB of blocks)
            cells.append(f"{i + 1}: {fmt_seconds(pt['t'])} s "
                         f"{fmt_sci(rel(pt['primal'], pstar))} ({rate:.0f} MB/s)")
        lines.append("- " + "; ".join(cells))
    if args.note:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in args.note]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
