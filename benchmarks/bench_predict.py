"""Prediction on every core: decision values of a trained model, 1 thread vs all.

Run from the repository root::

    python -m benchmarks.bench_predict [--quick] [--files pypi-recent.t,...] [--repeats 5]
                                       [--out benchmarks/RESULTS-predict.md]

For each file a model is trained once (-s 1, C = 1, -B 1, on the file itself), then its
decision values over the file's rows are timed: ``Model.decision_function`` with ``n_jobs=1``
(the serial kernel) and with all cores, against scikit-learn's way (``safe_sparse_dot(X,
coef.T) + intercept``, what its linear models' ``decision_function`` computes; SciPy's sparse
product, one thread). The values of the threaded run are checked bit-identical to the serial
run's. Medians of ``--repeats`` timed runs after one untimed warm-up each. LIBLINEAR is not
timed here: liblinear-official's Python ``predict`` calls its C ``predict_values`` once a row
from a Python loop, which would measure the loop.
"""

from __future__ import annotations

import argparse
import os

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

DEFAULT_FILES = ("a9a.t", "w8a.t", "pypi-recent.t", "pypi-recent")
QUICK_FILES = ("a9a.t",)


def sklearn_decision(X, coef, intercept):
    from sklearn.utils.extmath import safe_sparse_dot

    return safe_sparse_dot(X, coef.T, dense_output=True) + intercept


def bench_file(name: str, repeats: int) -> list[object] | None:
    import linsvm

    path = find_data_file(name)
    if path is None:
        print(f"{name}: not found, skipped")
        return None
    X, y = linsvm.read_libsvm(path)
    model = linsvm.train(X, y, solver=1, bias=1.0)
    coef, intercept = model.coef_, model.intercept_
    n_cols = min(X.shape[1], coef.shape[1])
    X_sk = X[:, :n_cols]  # scikit-learn needs the model's width; the copy is not timed
    runs = {
        "linsvm 1 thread": lambda: model.decision_function(X, n_jobs=1),
        "linsvm all cores": lambda: model.decision_function(X, n_jobs=-1),
        "scikit-learn": lambda: sklearn_decision(X_sk, coef[:, :n_cols], intercept),
    }
    times = {}
    values = {}
    for label, fn in runs.items():
        fn()
        samples = []
        for _ in range(repeats):
            t, values[label] = time_call(fn)
            samples.append(t)
        times[label] = median(samples)
    same = np.array_equal(values["linsvm 1 thread"], values["linsvm all cores"])
    close = np.allclose(np.ravel(values["scikit-learn"]), np.ravel(values["linsvm 1 thread"]))
    one, many, sk = times["linsvm 1 thread"], times["linsvm all cores"], times["scikit-learn"]
    print(f"{name}: 1 thread {one:.4f} s, all cores {many:.4f} s, scikit-learn {sk:.4f} s")
    return [
        name, f"{X.shape[0]} x {X.shape[1]}, nnz {X.nnz}", fmt_seconds(one), fmt_seconds(many),
        fmt_ratio(many, one), fmt_seconds(sk), fmt_ratio(many, sk),
        "yes" if same else "NO", "yes" if close else "NO",
    ]  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a9a.t only, 3 repeats")
    p.add_argument("--files", default=None)
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-predict.md"))
    args = p.parse_args(argv)
    files = args.files.split(",") if args.files else (QUICK_FILES if args.quick else DEFAULT_FILES)
    repeats = args.repeats or (3 if args.quick else 5)
    rows = [r for r in (bench_file(name, repeats) for name in files) if r is not None]
    lines = report_header(
        "Prediction: decision values on 1 thread and on every core",
        "bench_predict",
        [f"cores: {os.cpu_count()}; repeats: {repeats} (median); model: -s 1, C = 1, -B 1"],
    )
    lines += [
        "Times are the decision values of the file's rows by a model trained on the file. "
        "`all / 1` is the time on all cores over the time on one (below 1: faster); "
        "`all / sklearn` compares with scikit-learn's sparse product (below 1: linsvm "
        "faster). `identical`: the threaded values equal the serial ones bit for bit; "
        "`= sklearn`: np.allclose.",
        "",
    ]
    lines += markdown_table(
        ["file", "size", "1 thread s", "all cores s", "all / 1", "scikit-learn s",
         "all / sklearn", "identical", "= sklearn"],
        rows,
    )  # fmt: skip
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
