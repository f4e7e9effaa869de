"""Cross-validation on every core: ``-v 5`` with the folds side by side vs one after another.

Run from the repository root::

    python -m benchmarks.bench_cv [--quick] [--datasets a9a,...] [--solvers 1,3] [--repeats 3]
                                  [--out benchmarks/RESULTS-cv.md]

For each dataset and solver: ``linsvm.cross_validation(X, y, 5, solver=s)`` with ``n_jobs=1``
(folds in turn) and ``n_jobs=-1`` (folds side by side, one thread each), and LIBLINEAR 2.50's
own ``-v 5`` (liblinear-official's ``train`` on a ``problem`` built beforehand, ``-q``) in the
same run. C = 1, no bias, default tolerances. Medians of ``--repeats`` timed runs after one
untimed warm-up; the two linsvm runs' predictions are checked identical, and the CV accuracy
of each tool is reported (LIBLINEAR draws its folds with its own generator, so its accuracy
differs a little).
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

from .common import (
    BENCH_DIR,
    find_data_file,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    time_call,
    write_report,
)

DEFAULT_DATASETS = ("a9a", "w8a", "ijcnn1", "pypi-recent")
QUICK_DATASETS = ("a9a",)
N_FOLDS = 5


def liblinear_cv(X, y, solver: int):
    """LIBLINEAR's -v: (seconds, accuracy %), the problem built before the clock starts."""
    from liblinear import liblinearutil

    prob = liblinearutil.problem(y, X)
    param = liblinearutil.parameter(f"-s {solver} -c 1 -v {N_FOLDS} -q")
    return time_call(lambda: liblinearutil.train(prob, param))


def bench(name: str, solver: int, repeats: int) -> list[object] | None:
    import linsvm

    path = find_data_file(name)
    if path is None:
        print(f"{name}: not found, skipped")
        return None
    X, y = linsvm.read_libsvm(path)

    def cv(n_jobs: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return linsvm.cross_validation(X, y, N_FOLDS, solver=solver, n_jobs=n_jobs)

    times, predicted = {}, {}
    for n_jobs in (1, -1):
        cv(n_jobs)
        samples = []
        for _ in range(repeats):
            t, predicted[n_jobs] = time_call(lambda n=n_jobs: cv(n))
            samples.append(t)
        times[n_jobs] = median(samples)
    liblinear_cv(X, y, solver)
    ll = [liblinear_cv(X, y, solver) for _ in range(repeats)]
    ll_time, ll_acc = median([t for t, _ in ll]), ll[0][1]
    same = np.array_equal(predicted[1], predicted[-1])
    acc = 100.0 * float(np.mean(predicted[-1] == y))
    print(f"{name} -s {solver}: 1 thread {times[1]:.3f} s, all cores {times[-1]:.3f} s, "
          f"LIBLINEAR {ll_time:.3f} s")  # fmt: skip
    return [
        name, f"-s {solver}", fmt_seconds(times[1]), fmt_seconds(times[-1]),
        fmt_ratio(times[-1], times[1]), fmt_seconds(ll_time), fmt_ratio(times[-1], ll_time),
        fmt_ratio(times[1], ll_time), "yes" if same else "NO", f"{acc:.2f} / {ll_acc:.2f}",
    ]  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a9a only, 2 repeats")
    p.add_argument("--datasets", default=None)
    p.add_argument("--solvers", default="1,3")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-cv.md"))
    args = p.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else (
        QUICK_DATASETS if args.quick else DEFAULT_DATASETS
    )
    repeats = args.repeats or (2 if args.quick else 3)
    solvers = [int(s) for s in args.solvers.split(",")]
    rows = [r for name in names for s in solvers if (r := bench(name, s, repeats)) is not None]
    lines = report_header(
        f"Cross-validation ({N_FOLDS} folds): folds side by side vs in turn, and LIBLINEAR's -v",
        "bench_cv",
        [f"cores: {os.cpu_count()}; repeats: {repeats} (median); C = 1, no bias, default eps"],
    )
    lines += [
        "`all / 1`: linsvm with the folds side by side (one thread each) over folds in turn; "
        "`/ LIBLINEAR`: against LIBLINEAR's own -v, timed in the same run (below 1: linsvm "
        "faster). `identical`: the two linsvm runs predict the same for every row. CV accuracy "
        "%: linsvm / LIBLINEAR (each tool draws its own folds).",
        "",
    ]
    lines += markdown_table(
        ["dataset", "solver", "linsvm 1 thread s", "linsvm all cores s", "all / 1",
         "LIBLINEAR s", "all cores / LIBLINEAR", "1 thread / LIBLINEAR", "identical",
         "CV accuracy %"],
        rows,
    )  # fmt: skip
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
