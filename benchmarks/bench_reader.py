"""LIBSVM reader throughput: linsvm.read_libsvm vs sklearn.datasets.load_svmlight_file, and
linsvm's reader on 1 vs 2 threads with its peak memory, on a real and a generated large file.

Run from the repository root::

    python -m benchmarks.bench_reader [--quick] [--files a9a,w8a,...] [--repeats 3]
        [--thread-files pypi-recent,synthetic-small,synthetic] [--synthetic-rows 3000000]
        [--block-sizes 16] [--out benchmarks/RESULTS-reader.md]

**Readers.** Both read the same plain files (the .xz ones decompressed once into the scratch
folder) into a float64 CSR matrix, 1-based indices (``zero_based=False`` for both); linsvm at
its default (every core). Each reader is warmed up by one untimed read of each file (Numba
cache loading, OS page cache), then timed ``--repeats`` times with ``time.perf_counter``; the
table gives the median and the throughput in MB/s (10**6 bytes of file per second). The two
results are compared for equality.

**Threads and memory.** Each read runs in a fresh child process, which first reads a tiny
file (Numba's cache loaded), resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) and
notes its RSS (the interpreter, NumPy, SciPy, Numba and the compiled kernels), then reads the
file once with ``n_jobs`` threads; its peak RSS (``VmHWM``; ``ru_maxrss`` where there is no
/proc) minus the RSS before is what reading added, to be compared with the bytes of the
result (CSR data + indices + indptr and the labels). Median of 5 children (3 for the
large generated file), the file in the OS page cache. The generated files are
``make_text_classification(rows, nnz_per_row=32)`` written as text like pypi-recent's
(5 significant digits): about 1.4 GB for 3 million rows, and 0.14 GB for a tenth of them (the
same content at a tenth of the size: the rate should not depend on the size), in the scratch
folder (``/tmp/linsvm-bench-data``), written once.

The report ends with a check of the machine: the speed-up of 2 threads over 1 on a pure
compute kernel, at the start and at the end (about 2.0 idle; about 1.0 when others hold a
core, and then the thread speed-ups above mean nothing).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

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

DEFAULT_FILES = ("a9a", "w8a", "ijcnn1", "reuters.trn", "pypi-recent.t", "pypi-recent")
QUICK_FILES = ("a9a", "w8a", "reuters.trn")
SYNTHETIC = "synthetic"
SYNTHETIC_SMALL = "synthetic-small"  # the same generator, a tenth of the rows
THREAD_FILES = ("pypi-recent", SYNTHETIC_SMALL, SYNTHETIC)
QUICK_THREAD_FILES = ("reuters.trn",)
DEFAULT_SYNTHETIC_ROWS = 3_000_000
SYNTHETIC_NNZ_PER_ROW = 32


def read_linsvm(path):
    import linsvm

    return linsvm.read_libsvm(path)


def read_sklearn(path):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(path), zero_based=False)


READERS = (("linsvm.read_libsvm", read_linsvm), ("sklearn load_svmlight_file", read_sklearn))


def same_matrix(a, b) -> bool:
    Xa, ya = a
    Xb, yb = b
    if Xa.shape[0] != Xb.shape[0] or not np.array_equal(ya, yb):
        return False
    n = max(Xa.shape[1], Xb.shape[1])
    Xa = Xa.copy()
    Xb = Xb.copy()
    Xa.resize((Xa.shape[0], n))
    Xb.resize((Xb.shape[0], n))
    return (Xa != Xb).nnz == 0


def bench_file(path, repeats: int) -> dict:
    out = {"path": path, "mb": path.stat().st_size / 1e6, "times": {}}
    results = {}
    for name, reader in READERS:
        results[name] = reader(path)  # warm-up, kept for the equality check
        times = []
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            reader(path)
            times.append(time.perf_counter() - t0)
        out["times"][name] = median(times)
    X, _ = results[READERS[0][0]]
    out["rows"], out["nnz"] = X.shape[0], X.nnz
    out["same"] = same_matrix(results[READERS[0][0]], results[READERS[1][0]])
    return out


# ---- the generated file ---------------------------------------------------------------------


@njit(cache=True)
def _format_rows(indptr, indices, data, y, r0, r1, out):
    """Rows r0..r1 as LIBSVM text into `out` (uint8), like pypi-recent's: "+1"/"-1" labels,
    1-based indices, values in (0, 1] with 5 significant digits. Returns the bytes written."""
    n = 0
    digits = np.empty(20, dtype=np.uint8)
    for r in range(r0, r1):
        out[n] = 43 if y[r] > 0 else 45
        out[n + 1] = 49
        n += 2
        for k in range(indptr[r], indptr[r + 1]):
            out[n] = 32
            n += 1
            v = indices[k] + 1
            m = 0
            while True:
                digits[m] = 48 + v % 10
                v //= 10
                m += 1
                if v == 0:
                    break
            for j in range(m - 1, -1, -1):
                out[n] = digits[j]
                n += 1
            out[n] = 58
            n += 1
            x = data[k]
            e = int(np.floor(np.log10(x)))
            mant = int(np.round(x * 10.0 ** (4 - e)))
            if mant >= 100000:
                mant //= 10
                e += 1
            if e >= 0:  # only 1.0 in unit-norm rows
                out[n] = 49
                n += 1
                continue
            out[n] = 48
            out[n + 1] = 46
            n += 2
            for _ in range(-e - 1):
                out[n] = 48
                n += 1
            while mant % 10 == 0:
                mant //= 10
            m = 0
            while mant > 0:
                digits[m] = 48 + mant % 10
                mant //= 10
                m += 1
            for j in range(m - 1, -1, -1):
                out[n] = digits[j]
                n += 1
        out[n] = 10
        n += 1
    return n


def synthetic_file(n_rows: int) -> Path:
    """The generated text file of `n_rows` rows in the scratch folder (written once)."""
    path = scratch_dir() / f"synthetic-text-{n_rows}x{SYNTHETIC_NNZ_PER_ROW}.svm"
    if path.is_file():
        return path
    from linsvm.datasets import make_text_classification

    print(f"writing {path} ...", file=sys.stderr, flush=True)
    X, y = make_text_classification(n_rows, nnz_per_row=SYNTHETIC_NNZ_PER_ROW, random_state=0)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    step = 100_000
    with open(tmp, "wb") as f:
        for r0 in range(0, n_rows, step):
            r1 = min(n_rows, r0 + step)
            nnz = int(X.indptr[r1] - X.indptr[r0])
            out = np.empty(24 * nnz + 4 * (r1 - r0), dtype=np.uint8)
            n = _format_rows(X.indptr, X.indices, X.data, y, r0, r1, out)
            f.write(out[:n].tobytes())
    os.replace(tmp, path)
    return path


# ---- threads and peak memory, one fresh process per read -------------------------------------


WHOLE = -1  # block size meaning: the whole text read at once, parsed as one piece


def child(path: str, n_jobs: int, block_mb: float | None) -> dict:
    """One read in this (fresh) process: seconds, peak RSS before and after, result bytes.

    ``block_mb == WHOLE``: the file read into memory at once and parsed as one piece on one
    thread, as the reader did before it streamed."""
    import linsvm
    from linsvm.io import libsvm

    tiny = scratch_dir() / "bench-reader-tiny.txt"
    if not tiny.is_file():
        tiny.write_text("1 1:0.5 3:1\n-1 2:0.25\n")
    linsvm.read_libsvm(tiny, n_jobs=n_jobs)  # Numba's cache loaded
    if block_mb == WHOLE:
        libsvm.BLOCK_SIZE = libsvm.MIN_PIECE_SIZE = 2**62

        def read():
            with open(path, "rb") as f:
                return libsvm.parse_libsvm_bytes(f.read(), path, n_jobs=1)
    else:
        if block_mb:
            libsvm.BLOCK_SIZE = int(block_mb * 2**20)

        def read():
            return linsvm.read_libsvm(path, n_jobs=n_jobs)
    gc.collect()
    before = _reset_peak_rss()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    X, y = read()
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    after = _peak_rss()
    return {"seconds": seconds, "rss_before": before, "rss_peak": after,
            "user": r1.ru_utime - r0.ru_utime, "sys": r1.ru_stime - r0.ru_stime,
            "result_bytes": X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes,
            "rows": X.shape[0], "nnz": X.nnz}


def _status_bytes(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak_rss() -> int:
    """Reset the kernel's peak-RSS mark of this process (Linux); the RSS now.

    Without the reset the peak is ru_maxrss, which a child inherits from its parent at fork
    (so a small read would look free)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_bytes("VmRSS") or _peak_rss()
    except OSError:
        return _peak_rss()


def _peak_rss() -> int:
    return _status_bytes("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(path: Path, n_jobs: int, repeats: int, block_mb: float | None) -> dict:
    """Median seconds and peak RSS of `repeats` fresh processes reading `path`."""
    cmd = [sys.executable, "-m", "benchmarks.bench_reader", "--child", str(path), str(n_jobs),
           str(block_mb or 0)]
    runs = []
    for _ in range(repeats):
        out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    res = {k: runs[0][k] for k in ("result_bytes", "rows", "nnz")}
    res["seconds"] = median([r["seconds"] for r in runs])
    res["min_seconds"] = min(r["seconds"] for r in runs)
    res["cpu"] = median([r["user"] + r["sys"] for r in runs])
    res["rss_before"] = median([r["rss_before"] for r in runs])
    res["added"] = median([r["rss_peak"] - r["rss_before"] for r in runs])
    return res


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 26):
            pass


def thread_rows(names, synthetic_rows: int, block_sizes, quick: bool):
    """Table rows of 1 vs 2 threads (and block sizes) for each file; MB/s per file."""
    rows, rates = [], {}
    for name in names:
        if name in (SYNTHETIC, SYNTHETIC_SMALL):
            n_rows = synthetic_rows if name == SYNTHETIC else synthetic_rows // 10
            path, repeats = synthetic_file(n_rows), 3 if name == SYNTHETIC else 5
            label = f"generated, {n_rows} rows"
        else:
            path, repeats, label = find_data_file(name), 5, name
        if path is None:
            continue
        repeats = 1 if quick else repeats
        mb = path.stat().st_size / 1e6
        warm_page_cache(path)
        for block_mb in [WHOLE, *block_sizes]:
            one = None
            for n_jobs in (1,) if block_mb == WHOLE else (1, 2):
                print(f"{path} n_jobs={n_jobs} block={block_mb} MB ...", file=sys.stderr,
                      flush=True)
                r = measure(path, n_jobs, repeats, block_mb)
                one = one or r
                rates[(name, block_mb, n_jobs)] = mb / r["seconds"]
                block = {WHOLE: "whole text (before)", None: "default"}.get(block_mb, block_mb)
                rows.append([label, f"{mb:.0f}", block, n_jobs, repeats,
                             fmt_seconds(r["seconds"]), fmt_seconds(r["min_seconds"]),
                             f"{mb / r['seconds']:.0f}",
                             fmt_ratio(one["seconds"], r["seconds"]),
                             fmt_ratio(one["min_seconds"], r["min_seconds"]),
                             fmt_seconds(r["cpu"]),
                             f"{r['result_bytes'] / 1e6:.0f}", f"{r['rss_before'] / 1e6:.0f}",
                             f"{r['added'] / 1e6:.0f}",
                             fmt_ratio(r["added"], r["result_bytes"])])
    return rows, rates


@njit(cache=True, nogil=True)
def _spin(n):
    s = 0.0
    for i in range(n):
        s += (i % 7) * 0.5
    return s


def two_thread_capacity(n: int = 200_000_000) -> float:
    """Speed-up of 2 threads over 1 on the same pure compute (a kernel that releases the GIL):
    about 2.0 on an idle 2-core machine, about 1.0 when only one core is free."""
    from concurrent.futures import ThreadPoolExecutor

    _spin(10)
    t0 = time.perf_counter()
    _spin(n)
    one = time.perf_counter() - t0
    with ThreadPoolExecutor(2) as pool:
        t0 = time.perf_counter()
        for f in [pool.submit(_spin, n // 2) for _ in range(2)]:
            f.result()
        two = time.perf_counter() - t0
    return one / two


def lscpu_head(n: int = 10) -> list[str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ["lscpu not available"]
    return out.splitlines()[:n]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small files, 1 repeat")
    p.add_argument("--files", default=None, help="comma-separated shared data file names")
    p.add_argument("--repeats", type=int, default=None, help="timed reads per file (3)")
    p.add_argument("--thread-files", default=None,
                   help=f"files of the threads/memory table ({','.join(THREAD_FILES)}; "
                        f"'{SYNTHETIC}' is the generated file, '{SYNTHETIC_SMALL}' one of a "
                        "tenth of its rows; '' for none)")
    p.add_argument("--synthetic-rows", type=int, default=DEFAULT_SYNTHETIC_ROWS)
    p.add_argument("--block-sizes", default="",
                   help="comma-separated block sizes in MB for the threads table "
                        "(default: the reader's own)")
    p.add_argument("--child", nargs=3, metavar=("PATH", "N_JOBS", "BLOCK_MB"),
                   help=argparse.SUPPRESS)
    p.add_argument("--note", action="append", default=[],
                   help="a line for the report's notes (e.g. how busy the machine was)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-reader.md"))
    args = p.parse_args(argv)
    if args.child:
        path, n_jobs, block_mb = args.child
        print(json.dumps(child(path, int(n_jobs), float(block_mb) or None)))
        return
    files = (args.files.split(",") if args.files is not None else
             QUICK_FILES if args.quick else DEFAULT_FILES)
    files = [f for f in files if f.strip()]
    repeats = args.repeats or (1 if args.quick else 3)
    if args.thread_files is not None:
        thread_files = [f.strip() for f in args.thread_files.split(",") if f.strip()]
    else:
        thread_files = QUICK_THREAD_FILES if args.quick else THREAD_FILES
    block_sizes = [float(b) for b in args.block_sizes.split(",") if b.strip()] or [None]

    rows, notes = [], []
    if not thread_files and not files:
        p.error("nothing to measure")
    capacity = [two_thread_capacity()]
    for name in files:
        path = find_data_file(name.strip())
        if path is None:
            notes.append(f"{name}: skipped, file not found")
            continue
        print(f"reading {path} ...", file=sys.stderr, flush=True)
        r = bench_file(path, repeats)
        t_lin = r["times"][READERS[0][0]]
        t_skl = r["times"][READERS[1][0]]
        rows.append([name, f"{r['mb']:.1f}", r["rows"], r["nnz"],
                     fmt_seconds(t_lin), f"{r['mb'] / t_lin:.0f}",
                     fmt_seconds(t_skl), f"{r['mb'] / t_skl:.0f}",
                     fmt_ratio(t_skl, t_lin), "yes" if r["same"] else "NO"])
    trows, rates = thread_rows(thread_files, args.synthetic_rows, block_sizes, args.quick)
    capacity.append(two_thread_capacity())

    lines = report_header("LIBSVM reader benchmark", "bench_reader", [
        f"median of {repeats} timed reads after one warm-up read per reader and file; "
        "float64 values, 1-based indices; MB = 10**6 bytes of (uncompressed) file; "
        f"linsvm with its default n_jobs=-1 ({os.cpu_count()} cores)",
    ])
    if rows:
        lines += markdown_table(
            ["file", "MB", "rows", "nnz", "linsvm s", "linsvm MB/s", "sklearn s",
             "sklearn MB/s", "speed-up (sklearn s / linsvm s)", "same matrix"], rows)
    if trows:
        lines += ["", "## Threads and peak memory", "",
                  "One fresh process per read (median over the processes: the `reads` "
                  "column); RSS before = RSS of the process before the read "
                  "(interpreter, libraries, compiled kernels); added = peak RSS during the "
                  "read minus that; result = CSR data + indices + indptr + labels; CPU s = "
                  "user + system time of the read, all threads (median). Block 'whole text "
                  "(before)': the file read into memory at once and parsed as one piece on "
                  "one thread, as the reader did before it streamed.", ""]
        lines += markdown_table(
            ["file", "MB", "block MB", "threads", "reads", "median s", "min s", "MB/s (median)",
             "speed-up vs 1 thread (median)", "speed-up (min)", "CPU s (user + sys)",
             "result MB", "RSS before MB", "added MB", "added / result"], trows)
        ratios = [f"{k[2]} thread(s), block {k[1] or 'default'}: "
                  f"{rates[k] / rates[(SYNTHETIC_SMALL, *k[1:])]:.2f}"
                  for k in rates if k[0] == SYNTHETIC and (SYNTHETIC_SMALL, *k[1:]) in rates
                  and k[1] != WHOLE]
        if ratios:
            lines += ["", "MB/s of the generated file / MB/s of the one of a tenth of its rows "
                      "(same generator; 1.00 = the rate does not fall with size): "
                      + "; ".join(ratios) + "."]
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
