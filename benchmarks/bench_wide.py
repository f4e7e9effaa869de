"""Training over a wide, mostly unused feature space (hashed features): a9a's rows with their
123 columns spread over 2^20 and 2^24, against the same rows at their natural width, for
linsvm's solvers and LIBLINEAR's in the same run.

Where fewer than half the columns hold a value, linsvm's solvers see the used columns only
(``linsvm.data.UsedColumns``) and the model comes back over every column; this measures what
that leaves of the width's cost, and LIBLINEAR's cost on the same data (it sweeps or allocates
over the whole width where its solvers do). The model must be the same at every width (the
primal objective is compared). Training in blocks (``memory=``, -s 1 and -s 3) is timed the
same way: its run keeps w over the used columns too. Run: ``python -m benchmarks.bench_wide``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import scipy.sparse as sp

from .common import (
    BENCH_DIR,
    REPO_ROOT,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    time_call,
    write_report,
)

# linsvm's solvers: LIBLINEAR's (timed against it) and linsvm's own with dense per-weight work
SOLVERS = (1, 3, 0, 2, 5, 6, 34, 32, 39, 36)
WIDTHS = (0, 20, 24)  # 0: the natural width; else 2^bits columns


def spread(X: sp.csr_matrix, bits: int, seed: int = 0) -> sp.csr_matrix:
    """X's columns at sorted random places among 2^bits (hashing without collisions)."""
    if bits == 0:
        return X
    places = np.sort(np.random.default_rng(seed).choice(1 << bits, X.shape[1], replace=False))
    return sp.csr_matrix((X.data, places[X.indices], X.indptr), shape=(X.shape[0], 1 << bits))


def linsvm_run(X, y, solver: int) -> tuple[float, float]:
    import linsvm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, model = time_call(lambda: linsvm.train(X, y, solver=solver))
    return seconds, float(model.results_[0].primal)


def liblinear_run(X, y, solver: int) -> float | None:
    """Seconds of LIBLINEAR's train (None for linsvm's own solvers)."""
    if solver > 21:
        return None
    from liblinear.liblinearutil import parameter, problem

    from .peers import train_liblinear_logged

    prob = problem(np.ascontiguousarray(y, dtype=np.float64), X)
    seconds, _, _ = train_liblinear_logged(prob, parameter(f"-s {solver} -q"))
    return seconds


def blocks_run(X, y, solver: int) -> tuple[float, float]:
    """Block minimisation (``memory=``'s run) over X in blocks of 1 MB: (seconds, primal)."""
    from linsvm.outofcore import ArrayBlocks, train_blocks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, model = time_call(lambda: train_blocks(
            ArrayBlocks(X, y, 16), solver=solver, memory="2G", max_block_bytes=1 << 20))
    return seconds, float(model.results_[0].primal)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--solvers", default=",".join(map(str, SOLVERS)))
    parser.add_argument("--bits", default=",".join(map(str, WIDTHS)),
                        help="widths as bits of 2^bits columns (0: natural)")
    parser.add_argument("--blocks-solvers", default="1,3",
                        help="solvers also timed in blocks (training larger than memory)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-wide.md"))
    args = parser.parse_args()
    import linsvm

    X0, y = linsvm.read_libsvm(REPO_ROOT / "data" / "a9a")
    solvers = [int(s) for s in args.solvers.split(",")]
    widths = [int(b) for b in args.bits.split(",")]
    rows = []
    for solver in solvers:
        linsvm_run(X0, y, solver)  # (compiles)
        natural = None
        for bits in widths:
            X = spread(X0, bits)
            runs = [linsvm_run(X, y, solver) for _ in range(args.repeats)]
            ours = median([r[0] for r in runs])
            primal = runs[0][1]
            theirs_runs = [liblinear_run(X, y, solver) for _ in range(args.repeats)]
            theirs = None if theirs_runs[0] is None else median(theirs_runs)
            if bits == 0:
                natural = (ours, primal)
            same = "yes" if primal == natural[1] else f"{(primal - natural[1]) / natural[1]:.1e}"
            rows.append([f"-s {solver}", "natural (123)" if bits == 0 else f"2^{bits}",
                         fmt_seconds(ours), fmt_ratio(ours, natural[0]),
                         fmt_seconds(theirs), fmt_ratio(ours, theirs), same])  # fmt: skip
            print(rows[-1], flush=True)
    block_rows = []
    for solver in [int(s) for s in args.blocks_solvers.split(",") if s]:
        blocks_run(X0, y, solver)  # (compiles)
        natural = None
        for bits in widths:
            X = spread(X0, bits)
            runs = [blocks_run(X, y, solver) for _ in range(args.repeats)]
            ours, primal = median([r[0] for r in runs]), runs[0][1]
            if bits == 0:
                natural = (ours, primal)
            same = "yes" if primal == natural[1] else f"{(primal - natural[1]) / natural[1]:.1e}"
            block_rows.append([f"-s {solver}", "natural (123)" if bits == 0 else f"2^{bits}",
                               fmt_seconds(ours), fmt_ratio(ours, natural[0]), same])  # fmt: skip
            print(block_rows[-1], flush=True)
    lines = report_header(
        "Training over a wide, mostly unused feature space", "bench_wide",
        [f"data: a9a (32,561 rows, 123 columns, 451,592 non-zeros), its columns spread over "
         f"2^bits; C = 1, default eps, no bias; medians of {args.repeats}"],
    )  # fmt: skip
    lines += markdown_table(
        ["solver", "width", "linsvm s", "/ its natural", "LIBLINEAR s", "linsvm / LIBLINEAR",
         "same P as natural"], rows)  # fmt: skip
    if block_rows:
        lines += ["", "## In blocks (`memory=`: block minimisation, blocks of 1 MB, at most 300 "
                  "outer iterations)", ""]  # fmt: skip
        lines += markdown_table(["solver", "width", "linsvm s", "/ its natural",
                                 "same P as natural"], block_rows)  # fmt: skip
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
