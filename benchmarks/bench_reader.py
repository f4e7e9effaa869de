"""LIBSVM reader throughput: linsvm.read_libsvm vs sklearn.datasets.load_svmlight_file.

Run from the repository root::

    python -m benchmarks.bench_reader [--quick] [--files a9a,w8a,...] [--repeats 3]
                                      [--out benchmarks/RESULTS-reader.md]

Both read the same plain files (the .xz ones decompressed once into the scratch folder) into a
float64 CSR matrix, 1-based indices (``zero_based=False`` for both). Each reader is warmed up
by one untimed read of each file (Numba cache loading, OS page cache), then timed ``--repeats``
times with ``time.perf_counter``; the table gives the median and the throughput in MB/s
(10**6 bytes of file per second). The two results are compared for equality.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np

from .common import (
    BENCH_DIR,
    find_data_file,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    write_report,
)

DEFAULT_FILES = ("a9a", "w8a", "ijcnn1", "reuters.trn", "pypi-recent.t", "pypi-recent")
QUICK_FILES = ("a9a", "w8a", "reuters.trn")


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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small files, 1 repeat")
    p.add_argument("--files", default=None, help="comma-separated shared data file names")
    p.add_argument("--repeats", type=int, default=None, help="timed reads per file (3)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-reader.md"))
    args = p.parse_args(argv)
    files = (args.files.split(",") if args.files else
             QUICK_FILES if args.quick else DEFAULT_FILES)
    repeats = args.repeats or (1 if args.quick else 3)

    rows, notes = [], []
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
    lines = report_header("LIBSVM reader benchmark", "bench_reader", [
        f"median of {repeats} timed reads after one warm-up read per reader and file; "
        "float64 values, 1-based indices; MB = 10**6 bytes of (uncompressed) file",
    ])
    lines += markdown_table(
        ["file", "MB", "rows", "nnz", "linsvm s", "linsvm MB/s", "sklearn s", "sklearn MB/s",
         "speed-up (sklearn s / linsvm s)", "same matrix"], rows)
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
