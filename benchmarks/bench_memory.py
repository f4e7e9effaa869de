"""Peak memory added by ``linsvm.train``, relative to the size of the training data.

Run from the repository root::

    python -m benchmarks.bench_memory [--quick] [--datasets a9a,pypi-recent,...]
        [--synthetic-rows 4000000] [--out benchmarks/RESULTS-memory.md]

Each measurement runs in a fresh subprocess, which

1. warms up: trains both solvers on a tiny problem with the same dtypes (float64 values, the
   dataset's index dtype), so that Numba's compilation / cache loading is not counted as
   training memory;
2. loads the dataset (``linsvm.read_libsvm`` on the decompressed file, or the cached synthetic
   ``.npz``) and collects garbage;
3. resets the kernel's peak-RSS mark (``echo 5 > /proc/self/clear_refs``) and reads ``VmRSS``;
4. runs ``linsvm.train(X, y, solver=S)`` at its defaults and keeps the model;
5. reads ``VmHWM`` (peak RSS since the reset).

The child runs with ``MALLOC_MMAP_THRESHOLD_=65536`` and calls ``malloc_trim(0)`` before the
reset, so that the training's arrays are fresh pages (not heap memory freed by the reader and
still resident, which would not raise the peak and would hide them).

Training memory = peak - RSS before training. Reported beside it: the CSR bytes
(data + indices + indptr), and the bytes of ``w`` (float64, n_features) and ``alpha`` (float64,
n_rows), which any dual solver must hold. Target: training adds <= 0.5 x CSR bytes beyond w and
alpha.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from .common import (
    BENCH_DIR,
    DEFAULT_SYNTHETIC_ROWS,
    REPO_ROOT,
    SYNTHETIC,
    markdown_table,
    report_header,
    write_report,
)

DEFAULT_DATASETS = ("a9a", "ijcnn1", "reuters", "pypi-recent", SYNTHETIC)
QUICK_DATASETS = ("a9a", "reuters")
TARGET_RATIO = 0.5


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _release_free_heap() -> None:
    """Give freed heap memory back to the OS (glibc), so that reuse of it shows in the peak."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def child(dataset: str, solver: int, synthetic_rows: int) -> dict:
    """The measurement itself (runs inside the fresh subprocess)."""
    import gc
    import warnings

    import numpy as np
    import scipy.sparse as sp

    import linsvm

    from .common import load_dataset

    warnings.simplefilter("ignore")
    ds = load_dataset(dataset, synthetic_rows=synthetic_rows)
    if ds is None:
        return {"missing": True}
    X, y = ds.X, ds.y
    ds.X_test = ds.y_test = None

    # Warm-up on a tiny problem with the same dtypes: compilation is not training memory.
    tiny = sp.random(300, 50, density=0.1, format="csr", random_state=0, dtype=X.dtype)
    tiny = sp.csr_matrix((tiny.data, tiny.indices.astype(X.indices.dtype),
                          tiny.indptr.astype(X.indptr.dtype)), shape=tiny.shape)
    tiny_y = np.where(np.arange(300) % 2 == 0, 1.0, -1.0)
    for s in (1, 3):
        linsvm.train(tiny, tiny_y, solver=s)
    gc.collect()

    _release_free_heap()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    rss_before = _status_kib("VmRSS")
    model = linsvm.train(X, y, solver=solver)
    peak = _status_kib("VmHWM")
    n_rows, n_features = X.shape
    return {
        "dataset": dataset, "solver": solver, "rows": n_rows, "features": n_features,
        "nnz": int(X.nnz),
        "csr_bytes": int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes),
        "w_bytes": int(model.coef_.nbytes), "alpha_bytes": int(8 * n_rows),
        "rss_before": rss_before * 1024, "added": (peak - rss_before) * 1024,
        "n_iter": model.results_[0].n_iter,
    }


def measure(dataset: str, solver: int, synthetic_rows: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_memory", "--child", dataset, str(solver),
           "--synthetic-rows", str(synthetic_rows)]
    # A fixed mmap threshold turns off glibc's dynamic one: every allocation above 64 KiB is a
    # fresh mapping whose touched pages show in the RSS, instead of reusing heap memory freed
    # earlier (by the reader), which would hide training's allocations from the peak.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed for {dataset} -s {solver}:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mib(n: float) -> str:
    return f"{n / 2**20:.1f}"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small datasets only")
    p.add_argument("--datasets", default=None)
    p.add_argument("--synthetic-rows", type=int, default=DEFAULT_SYNTHETIC_ROWS)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-memory.md"))
    p.add_argument("--child", nargs=2, metavar=("DATASET", "SOLVER"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.synthetic_rows)))
        return

    names = (args.datasets.split(",") if args.datasets else
             QUICK_DATASETS if args.quick else DEFAULT_DATASETS)
    rows, notes = [], []
    for name in names:
        for solver in (1, 3):
            print(f"{name} -s {solver} ...", file=sys.stderr, flush=True)
            r = measure(name.strip(), solver, args.synthetic_rows)
            if r.get("missing"):
                notes.append(f"{name}: skipped, data not found")
                break
            beyond = r["added"] - r["w_bytes"] - r["alpha_bytes"]
            ratio = beyond / r["csr_bytes"]
            label = name + (f" ({r['rows']} rows)" if name == SYNTHETIC else "")
            rows.append([label, solver, f"{r['rows']} x {r['features']}", r["nnz"],
                         mib(r["csr_bytes"]), mib(r["w_bytes"] + r["alpha_bytes"]),
                         mib(r["added"]), mib(beyond), f"{ratio:.2f}",
                         "yes" if ratio <= TARGET_RATIO else "NO"])
    lines = report_header("linsvm training memory", "bench_memory", [
        "peak RSS added by linsvm.train (defaults) in a fresh process, after a warm-up on a "
        "tiny problem of the same dtypes; MiB = 2**20 bytes",
        f"target: added - (w + alpha) <= {TARGET_RATIO} x CSR bytes",
    ])
    lines += markdown_table(
        ["dataset", "-s", "shape", "nnz", "CSR MiB", "w + alpha MiB", "added MiB",
         "added beyond w+alpha MiB", "beyond / CSR", "within target"], rows)
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
