"""Start-up cost: warm-cache time to a first trained model, and the one-time compile cost.

Run from the repository root::

    python -m benchmarks.bench_startup [--quick] [--repeats 5] [--out benchmarks/RESULTS-startup.md]

Two measurements, each in fresh subprocesses (``python -c``):

- **Warm cache**: with Numba's on-disk cache already filled (one untimed run first), the time
  from before ``import linsvm`` to the end of a first ``linsvm.train`` on a tiny problem
  (200 x 50, both solvers' kernel is shared); median of ``--repeats`` processes. Target: <= 1 s.
  The whole process (interpreter start included) is timed from outside too.
- **Empty cache**: ``NUMBA_CACHE_DIR`` set to a fresh temporary folder, so every kernel is
  compiled: time of ``import linsvm``, first ``train`` (solver 1, then solver 3), first
  ``predict`` and first ``read_libsvm`` (of a small file written beforehand), separately and in
  total. This is paid once per installation (and per change of the code or of the input
  dtypes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

from .common import (
    BENCH_DIR,
    REPO_ROOT,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    write_report,
)

TARGET_SECONDS = 1.0

# The child script: prints one JSON line of timings (perf_counter deltas inside the process).
CHILD = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import json, sys
    import linsvm
    t_import = time.perf_counter()
    import numpy as np
    import scipy.sparse as sp
    X = sp.random(200, 50, density=0.1, format="csr", random_state=0)
    y = np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    t_data = time.perf_counter()
    model = linsvm.train(X, y, solver=1)
    t_train1 = time.perf_counter()
    out = {"import": t_import - t0, "train_1": t_train1 - t_data,
           "to_first_model": t_train1 - t0 - (t_data - t_import)}
    if "--all" in sys.argv:
        t = time.perf_counter()
        linsvm.train(X, y, solver=3)
        out["train_3"] = time.perf_counter() - t
        t = time.perf_counter()
        model.predict(X)
        out["predict"] = time.perf_counter() - t
        t = time.perf_counter()
        linsvm.read_libsvm(sys.argv[sys.argv.index("--all") + 1])
        out["read_libsvm"] = time.perf_counter() - t
        out["total"] = time.perf_counter() - t0 - (t_data - t_import)
    print(json.dumps(out))
""")


def run_child(env: dict, extra: list[str]) -> tuple[dict, float]:
    """(timings reported by the child, wall time of the whole process)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *extra], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def write_small_file(path) -> None:
    import numpy as np
    import scipy.sparse as sp

    import linsvm

    X = sp.random(100, 20, density=0.3, format="csr", random_state=1)
    linsvm.write_libsvm(X, np.where(np.arange(100) % 2 == 0, 1.0, -1.0), path)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 warm and 1 cold process")
    p.add_argument("--repeats", type=int, default=None, help="warm-cache processes (5)")
    p.add_argument("--cold-repeats", type=int, default=None, help="empty-cache processes (2)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-startup.md"))
    args = p.parse_args(argv)
    repeats = args.repeats or (2 if args.quick else 5)
    cold_repeats = args.cold_repeats or (1 if args.quick else 2)

    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    run_child(env, [])  # fills the cache where linsvm normally keeps it
    warm = [run_child(env, []) for _ in range(repeats)]

    cold = []
    with tempfile.TemporaryDirectory(prefix="linsvm-startup-") as tmp:
        data_file = os.path.join(tmp, "small.svm")
        write_small_file(data_file)
        for k in range(cold_repeats):
            cache = os.path.join(tmp, f"numba-cache-{k}")
            os.mkdir(cache)
            cold.append(run_child(dict(env, NUMBA_CACHE_DIR=cache), ["--all", data_file]))

    def med(results, key):
        return median([r[0][key] for r in results])

    warm_first = med(warm, "to_first_model")
    lines = report_header("linsvm start-up and compile cost", "bench_startup", [
        f"warm cache: median of {repeats} fresh processes; empty cache: median of "
        f"{cold_repeats} fresh processes with NUMBA_CACHE_DIR in a new temporary folder",
        "tiny problem: 200 x 50 random sparse, 10% dense; times inside the process by "
        "time.perf_counter (building the tiny problem excluded)",
    ])
    lines += ["## Warm cache: import linsvm + first train", ""]
    lines += markdown_table(
        ["import linsvm s", "first train (-s 1) s", "import + first train s",
         f"target <= {TARGET_SECONDS:g} s", "whole process (python start to exit) s"],
        [[fmt_seconds(med(warm, "import")), fmt_seconds(med(warm, "train_1")),
          fmt_seconds(warm_first), "yes" if warm_first <= TARGET_SECONDS else "NO",
          fmt_seconds(median([w for _, w in warm]))]], align=["r"] * 5)
    lines += ["", "## Empty cache: one-time compilation", ""]
    lines += markdown_table(
        ["import s", "first train -s 1 s", "first train -s 3 s", "first predict s",
         "first read_libsvm s", "total s", "whole process s"],
        [[fmt_seconds(med(cold, k)) for k in
          ("import", "train_1", "train_3", "predict", "read_libsvm", "total")]
         + [fmt_seconds(median([w for _, w in cold]))]], align=["r"] * 7)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
