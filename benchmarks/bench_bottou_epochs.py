"""The cost of one epoch: linsvm's svmsgd, ASGD and SGD-QN against Bottou's sgd 2.0 programs.

Run from the repository root::

    python -m benchmarks.bench_bottou_epochs [--datasets w8a,pypi-recent] [--epochs 25]
        [--repeats 3] [--double DIR] [--out benchmarks/RESULTS-bottou-epochs.md]

Both visit the same shuffled file in its order (linsvm ``shuffle=False``), C = 1, no bias,
no hook. sgd 2.0 keeps w and the rows in single precision (``VFloat`` is float in its
lib/vectors.h); linsvm keeps w in float64 whatever the data. ``--double DIR`` also times the
programs built with double-precision vectors (``SGD_DEFINES=-DVFLOAT=double
LINSVM_ORACLES=DIR scripts/oracles/bottou_sgd.sh SRC``), which separates what the precision
costs from what the code costs.

- theirs: the median of the programs' own per-epoch training times (epochs 6 to ``--epochs``;
  svmsgdqn given t0 = 1e5, no t0 search), median over ``--repeats`` runs;
- ours: (time of ``--epochs`` epochs - time of 5 epochs) / (``--epochs`` - 5), one solver call
  each, so that the calibration (eta0, t0) and the call's set-up cancel; the median over
  ``--repeats``. The same for the default shuffled order (a new permutation every epoch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

from . import originals_bottou as bottou
from .bench_lineup import data_file, shuffled
from .common import BENCH_DIR, load_dataset, markdown_table, report_header, write_report

FIRST = 5  # epochs not counted: calibration, the first epochs' different work
# (linsvm's solver, the program, its options)
SOLVERS = (
    ("svmsgd", 37, "svmsgd-nobias"),
    ("ASGD", 38, "svmasgd-nobias"),
    ("SGD-QN", 39, "svmsgdqn"),
)


def theirs(program: str, path, lam: float, epochs: int, repeats: int) -> float:
    """Median seconds of one epoch of the program (epochs FIRST+1 .. epochs)."""
    runs = []
    for _ in range(repeats):
        if program == "svmsgdqn":
            out = bottou.run_svmsgdqn(path, lam, epochs, t0=1e5)
        else:
            out = bottou.run_svmsgd(path, lam, epochs, bias=False,
                                    averaged=program.startswith("svmasgd"))  # fmt: skip
        runs.append(statistics.median(out["epoch_seconds"][FIRST:]))
    return statistics.median(runs)


def ours(number: int, X, y, epochs: int, repeats: int, in_order: bool) -> float:
    """Median seconds of one epoch of linsvm's solver ``number`` (difference of two calls)."""
    from linsvm.solvers import SOLVERS as REGISTRY
    from linsvm.solvers import Subproblem

    signs = np.where(y == y[0], 1.0, -1.0)
    options = {"shuffle": not in_order, "t0_epochs": 1}
    sub = Subproblem(X, signs, np.ones(X.shape[0]), eps=0.0, max_iter=1, bias=-1.0,
                     options=options)  # fmt: skip
    solve = REGISTRY[number].solve
    solve(sub.but(max_iter=2))  # compiled code loaded before timing

    def seconds(n: int) -> float:
        start = time.perf_counter()
        solve(sub.but(max_iter=n))
        return time.perf_counter() - start

    runs = [(seconds(epochs) - seconds(FIRST)) / (epochs - FIRST) for _ in range(repeats)]
    return statistics.median(runs)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="w8a,pypi-recent")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--double", default=None, help="oracle folder of the double-precision build")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-bottou-epochs.md"))
    args = p.parse_args(argv)
    if args.epochs <= FIRST:
        raise SystemExit(f"--epochs must exceed {FIRST}")
    float_dir = os.environ.get("LINSVM_ORACLES")
    started = time.perf_counter()
    rows = []
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        ds = load_dataset(name)
        if ds is None:
            print(f"{name}: not found, skipped", file=sys.stderr)
            continue
        ds = shuffled(ds)
        path = data_file(name, ds)
        lam = bottou.lambda_of(1.0, ds.X.shape[0])
        for label, number, program in SOLVERS:
            print(f"{name}: {label}", file=sys.stderr, flush=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mine = ours(number, ds.X, ds.y, args.epochs, args.repeats, True)
                mixed = ours(number, ds.X, ds.y, args.epochs, args.repeats, False)
            single = theirs(program, path, lam, args.epochs, args.repeats)
            double = float("nan")
            if args.double:
                os.environ["LINSVM_ORACLES"] = args.double
                try:
                    double = theirs(program, path, lam, args.epochs, args.repeats)
                finally:
                    if float_dir is None:
                        os.environ.pop("LINSVM_ORACLES")
                    else:
                        os.environ["LINSVM_ORACLES"] = float_dir
            rows.append([
                name, label, f"{1e3 * single:.3g}", f"{1e3 * double:.3g}", f"{1e3 * mine:.3g}",
                f"{mine / single:.2f}", f"{mine / double:.2f}", f"{1e3 * mixed:.3g}",
            ])  # fmt: skip
    header = report_header(
        "One epoch: linsvm's svmsgd, ASGD and SGD-QN against Bottou's sgd 2.0",
        "bench_bottou_epochs",
        [
            f"C = 1, no bias, the same shuffled file visited in its order; per epoch: medians "
            f"over epochs {FIRST + 1}-{args.epochs} (theirs, as the programs report them) or "
            f"the difference of {args.epochs} and {FIRST} epochs (ours), medians of "
            f"{args.repeats} runs; milliseconds",
            "sgd 2.0 single: as released (w and rows in float); double: built with "
            "-DVFLOAT=double" + ("" if args.double else " (not run: --double not given)"),
        ],
    )
    lines = list(header) + [
        "## Milliseconds per epoch",
        "",
        *markdown_table(
            ["data set", "solver", "sgd 2.0 single", "sgd 2.0 double", "linsvm (file order)",
             "linsvm / single", "linsvm / double", "linsvm (shuffled)"],
            rows, ["l", "l"] + ["r"] * 6,
        ),  # fmt: skip
        "",
        f"- total benchmark time {time.perf_counter() - started:.0f} s",
    ]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
