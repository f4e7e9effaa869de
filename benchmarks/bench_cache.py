"""The binary cache: conversion speed and memory, reading it vs parsing the text, one block.

Run from the repository root::

    python -m benchmarks.bench_cache [--quick] [--files pypi-recent,synthetic]
        [--synthetic-rows 6000000] [--repeats 3] [--out benchmarks/RESULTS-cache.md]

For each file (pypi-recent, and a generated text file of a few GB written once in the scratch
folder by `bench_reader`'s generator: ``make_text_classification(rows, nnz_per_row=32)``
printed like pypi-recent's text), every measurement runs in a fresh child process, which first
loads the compiled kernels on a tiny file, resets the kernel's peak-RSS mark and notes its RSS,
then does one thing, timed with ``time.perf_counter``:

- **convert**: ``write_cache(text, cache)`` (default blocks of 64 MB, all cores); MB/s of text;
  added = peak RSS during the conversion minus the RSS before (the claim: about a block and the
  reader's buffers, whatever the file's size).
- **read text**: ``read_libsvm(text)`` (all cores): the whole CSR.
- **read cache**: ``read_libsvm(cache)`` (all cores): the same arrays from the cache, every
  block's checksum and structure verified on the way.
- **one block**: ``open_cache`` then ``block(k)`` for the middle block: without verification
  (mapping only), then a pass over its values (the pages read), and with verification (checksum
  and structure) in a second process.

Both files are read once before the children (OS page cache warm), so these are in-memory
speeds, not disk speeds. Median over ``--repeats`` children (1 for the generated file).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .bench_reader import (
    _peak_rss,
    _reset_peak_rss,
    lscpu_head,
    synthetic_file,
    two_thread_capacity,
    warm_page_cache,
)
from .common import (
    BENCH_DIR,
    REPO_ROOT,
    find_data_file,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    scratch_dir,
    write_report,
)

DEFAULT_FILES = ("pypi-recent", "synthetic")
QUICK_FILES = ("reuters.trn", "synthetic")
DEFAULT_SYNTHETIC_ROWS = 6_000_000  # about 2.9 GB of text, 192M non-zeros
QUICK_SYNTHETIC_ROWS = 300_000
KINDS = ("convert", "text", "cache", "block", "block-verify")


def child(kind: str, text: str, cache: str) -> dict:
    """One measurement in this (fresh) process."""
    import numpy as np

    from linsvm.io import open_cache, read_libsvm, write_cache

    tiny = scratch_dir() / "bench-reader-tiny.txt"
    if not tiny.is_file():
        tiny.write_text("1 1:0.5 3:1\n-1 2:0.25\n")
    read_libsvm(tiny)  # Numba's cache loaded
    write_cache(tiny, str(scratch_dir() / f"bench-cache-tiny.{os.getpid()}.lsvc"))
    os.unlink(scratch_dir() / f"bench-cache-tiny.{os.getpid()}.lsvc")
    gc.collect()
    before = _reset_peak_rss()
    out: dict = {}
    t0 = time.perf_counter()
    if kind == "convert":
        summary = write_cache(text, cache)
        out.update(blocks=summary.n_blocks, cache_bytes=summary.cache_bytes,
                   text_bytes=summary.text_bytes)
    elif kind in ("text", "cache"):
        X, y = read_libsvm(text if kind == "text" else cache)
        out.update(rows=X.shape[0], nnz=X.nnz,
                   result_bytes=X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes)
    else:
        c = open_cache(cache)
        k = c.n_blocks // 2
        t_open = time.perf_counter() - t0
        if kind == "block":
            t1 = time.perf_counter()
            X, y = c.block(k, verify=False)
            out["map_seconds"] = time.perf_counter() - t1
            t1 = time.perf_counter()
            out["sum"] = float(np.sum(X.data)) + float(np.sum(X.indices[-1:]))
            out["touch_seconds"] = time.perf_counter() - t1
        else:
            t1 = time.perf_counter()
            X, y = c.block(k, verify=True)
            out["verify_seconds"] = time.perf_counter() - t1
        out.update(open_seconds=t_open, block_rows=X.shape[0], block_nnz=X.nnz,
                   block_bytes=X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes)
    out["seconds"] = time.perf_counter() - t0
    out["added"] = _peak_rss() - before
    return out


def measure(kind: str, text: Path, cache: Path, repeats: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_cache", "--child", kind, str(text),
           str(cache)]
    runs = []
    for _ in range(repeats):
        print(f"  {kind} {text.name} ...", file=sys.stderr, flush=True)
        out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    res = dict(runs[0])
    for key in runs[0]:
        if key.endswith("seconds") or key == "added":
            res[key] = median([r[key] for r in runs])
    return res


def bench_file(name: str, synthetic_rows: int, repeats: int) -> dict | None:
    if name == "synthetic":
        text, repeats = synthetic_file(synthetic_rows), 1
        label = f"generated, {synthetic_rows} rows"
    else:
        text, label = find_data_file(name), name
        if text is None:
            return None
    cache = scratch_dir() / f"{text.name}.lsvc"
    warm_page_cache(text)
    res = {"label": label, "text_mb": text.stat().st_size / 1e6, "repeats": repeats}
    res["convert"] = measure("convert", text, cache, repeats)
    warm_page_cache(cache)
    for kind in KINDS[1:]:
        res[kind] = measure(kind, text, cache, repeats)
    return res


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help=f"{','.join(QUICK_FILES)} with {QUICK_SYNTHETIC_ROWS} generated rows, "
                        "1 repeat")
    p.add_argument("--files", default=None,
                   help=f"comma-separated ({','.join(DEFAULT_FILES)}; 'synthetic' is the "
                        "generated file)")
    p.add_argument("--synthetic-rows", type=int, default=None)
    p.add_argument("--repeats", type=int, default=None, help="children per measurement (3)")
    p.add_argument("--child", nargs=3, metavar=("KIND", "TEXT", "CACHE"), help=argparse.SUPPRESS)
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-cache.md"))
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    files = args.files.split(",") if args.files else QUICK_FILES if args.quick else DEFAULT_FILES
    rows_generated = args.synthetic_rows or (QUICK_SYNTHETIC_ROWS if args.quick
                                             else DEFAULT_SYNTHETIC_ROWS)
    repeats = args.repeats or (1 if args.quick else 3)

    capacity = [two_thread_capacity()]
    results, notes = [], []
    for name in (f.strip() for f in files if f.strip()):
        r = bench_file(name, rows_generated, repeats)
        if r is None:
            notes.append(f"{name}: skipped, file not found")
        else:
            results.append(r)
    capacity.append(two_thread_capacity())

    lines = report_header("Binary cache benchmark", "bench_cache", [
        f"MB = 10**6 bytes; each figure from fresh child processes (median of {repeats}; 1 "
        f"for the generated file); files in the OS page cache; n_jobs=-1 ({os.cpu_count()} "
        "cores)",
    ])
    conv, reads, blocks = [], [], []
    for r in results:
        c, t, k = r["convert"], r["text"], r["cache"]
        conv.append([r["label"], f"{r['text_mb']:.0f}", c["blocks"],
                     f"{c['cache_bytes'] / 1e6:.0f}", fmt_seconds(c["seconds"]),
                     f"{c['text_bytes'] / 1e6 / c['seconds']:.0f}", f"{c['added'] / 1e6:.0f}",
                     f"{t['result_bytes'] / 1e6:.0f}"])
        reads.append([r["label"], t["rows"], t["nnz"], fmt_seconds(t["seconds"]),
                      f"{t['added'] / 1e6:.0f}", fmt_seconds(k["seconds"]),
                      f"{k['added'] / 1e6:.0f}", fmt_ratio(t["seconds"], k["seconds"]),
                      f"{k['result_bytes'] / 1e6 / k['seconds']:.0f}"])
        b, v = r["block"], r["block-verify"]
        blocks.append([r["label"], b["block_rows"], b["block_nnz"],
                       f"{b['block_bytes'] / 1e6:.0f}", f"{b['open_seconds'] * 1e3:.2f}",
                       f"{b['map_seconds'] * 1e3:.2f}", f"{b['touch_seconds'] * 1e3:.1f}",
                       f"{v['verify_seconds'] * 1e3:.1f}",
                       f"{b['block_bytes'] / 1e6 / v['verify_seconds']:.0f}"])
    if conv:
        lines += ["## Conversion (`write_cache`, blocks of 64 MB)", "",
                  "added = peak RSS of the conversion minus the RSS before it; whole CSR = what "
                  "reading the text at once returns (for comparison). Expected: about 1.3 x 64 "
                  "MB (one block's rows as the parser holds them, 16 bytes a non-zero) plus the "
                  "reader's buffers (about 40 MB), the same for any size of file.", ""]
        lines += markdown_table(["file", "text MB", "blocks", "cache MB", "seconds",
                                 "MB/s of text", "added MB", "whole CSR MB"], conv)
        lines += ["", "## Reading the whole data: text vs cache (`read_libsvm`)", "",
                  "The same arrays either way (the tests check it bit for bit); the cache's "
                  "read verifies every block's checksum and structure. 'added' for the cache "
                  "includes the blocks mapped while they are copied (one per thread; each is "
                  "unmapped once copied).", ""]
        lines += markdown_table(["file", "rows", "nnz", "text s", "text added MB", "cache s",
                                 "cache added MB", "speed-up", "cache MB/s of CSR"], reads)
        lines += ["", "## One block by memory mapping (the middle block)", "",
                  "open = `open_cache` (header and table checked); map = `block(k, "
                  "verify=False)` (views of the mapping: no data read); touch = a pass over its "
                  "values (the pages read from the page cache); verify = `block(k)` in a fresh "
                  "process (CRC-32 and structure of the whole block).", ""]
        lines += markdown_table(["file", "rows", "nnz", "block MB", "open ms", "map ms",
                                 "touch ms", "verify ms", "verify MB/s"], blocks)
    lines += ["", "## Machine (`lscpu | head`)", "", "```", *lscpu_head(), "```", "",
              "Two-thread capacity (a compute kernel on 2 threads vs 1; 2.00 on an idle 2-core "
              "machine, 1.00 when one core is taken by others): "
              f"{capacity[0]:.2f} at the start, {capacity[1]:.2f} at the end."]
    notes += args.note
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
