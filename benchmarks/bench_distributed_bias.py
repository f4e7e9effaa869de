"""CoCoA+ with a bias feature: the bias weight held by the client against the bias in the dual.

Run from the repository root::

    python -m benchmarks.bench_distributed_bias [--datasets text,reuters,pypi-recent]
        [--partitions 4,16] [--solvers 1,7,3] [--max-rounds 300]
        [--out benchmarks/RESULTS-distributed-bias.md]

The question: how many CoCoA+ rounds (and seconds) does ``linsvm.distributed.train`` need to a
relative duality gap of 1e-3 with LIBLINEAR's bias ``-B 1``, now that -s 1 and -s 7 hold the
bias weight on the client (``distributed/cocoa.py``, "The bias"), against the bias left in the
dual as one more feature that every partition moves?

- **Held**: ``train(X, y, bias=1.0, hold_bias=True)``. For -s 3 that is the bias in the dual
  (the hinge keeps it there), so its two columns are the same scheme.
- **In the dual**: the same problem written with the bias as an ordinary feature: X with a
  column of ones appended, ``bias=-1`` (LIBLINEAR's -B 1 is exactly that column, its weight
  regularised): what ``bias=1.0`` runs without ``hold_bias``.
- **No bias**: ``bias=-1`` on X, a different problem, for scale: what CoCoA+ takes when no
  weight is shared by every row.
- Data: ``text``, 800 generated rows of 15 non-zeros over 3,000 features at unit norm (the
  README's example: the bias is half of every row); reuters (7,770 x 8,315, binary); and
  pypi-recent (663k rows) when its file is at hand. C = 1, seed 1, in-memory rows scattered
  to a 2-worker LocalCluster (one thread each), K partitions (rounds do not depend on where
  the partitions run; seconds are those of 2 cores).
- Reported: rounds to the gap (``--max-rounds`` caps a run: "> cap"), seconds of the call,
  the client's bias evaluations (calls of its Newton steps), the final relative gap, and
  (P - P*)/P* with P* from ``linsvm.train`` at eps 1e-8 (1e-6 beyond 100k rows) in this
  process (the held runs' P is
  at their held bias weight, the other runs' at alpha's).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .common import (
    BENCH_DIR,
    fmt_sci,
    fmt_seconds,
    load_real,
    markdown_table,
    report_header,
    write_report,
)

GAP = 1e-3
SOLVERS = (1, 7, 3)


def text_rows(n_rows: int = 800, n_features: int = 3000, nnz: int = 15, seed: int = 0):
    """Unit-norm rows of ``nnz`` random features, labels from a random linear model (the
    distributed tests' and the README's example)."""
    rng = np.random.default_rng(seed)
    cols = rng.choice(n_features, size=(n_rows, nnz))
    indptr = np.arange(0, n_rows * nnz + 1, nnz)
    X = sp.csr_matrix(
        (rng.random(n_rows * nnz) + 0.5, cols.ravel(), indptr), shape=(n_rows, n_features)
    )
    X.sum_duplicates()
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    scores = X @ rng.standard_normal(n_features) + 0.3 * rng.standard_normal(n_rows)
    return X, np.where(scores > 0, 1.0, -1.0)


def reference_eps(X) -> float:
    """The tolerance of the reference solve: 1e-8, 1e-6 beyond 100k rows (pypi-recent's -s 3
    would take minutes at 1e-8; its relative accuracy is then good to about 1e-6)."""
    return 1e-8 if X.shape[0] <= 100_000 else 1e-6


def with_ones_column(X: sp.csr_matrix) -> sp.csr_matrix:
    """X with a last column of ones: LIBLINEAR's -B 1 as an ordinary feature."""
    return sp.csr_matrix(sp.hstack([X, np.ones((X.shape[0], 1))], format="csr"))


def run_one(client, X, y, solver, bias, k, max_rounds, hold_bias=False):
    import linsvm.distributed as dist

    rounds = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dist.train(X, y, client=client, solver=solver, bias=bias, eps=GAP,
                           n_partitions=k, max_rounds=max_rounds, hold_bias=hold_bias,
                           on_round=rounds.append)  # fmt: skip
    seconds = time.perf_counter() - start
    (result,) = model.results_
    return {
        "rounds": len(rounds) - 1,
        "converged": result.converged,
        "seconds": seconds,
        "gap": result.gap / result.primal,
        "primal": result.primal,
        "bias_evaluations": result.figures.get("bias_evaluations"),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="text,reuters,pypi-recent")
    p.add_argument("--partitions", default="4,16")
    p.add_argument("--solvers", default="1,7,3")
    p.add_argument("--max-rounds", type=int, default=300)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-distributed-bias.md"))
    args = p.parse_args()

    import distributed

    import linsvm

    sets = {}
    for name in args.datasets.split(","):
        if name == "text":
            sets[name] = text_rows()
        else:
            ds = load_real(name)
            if ds is None:
                print(f"{name}: not found, skipped")
                continue
            sets[name] = (ds.X, ds.y)
    partitions = [int(k) for k in args.partitions.split(",")]
    solvers = [int(s) for s in args.solvers.split(",")]

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)  # fmt: skip
    client = distributed.Client(cluster)
    rows = []
    try:
        # warm the workers' compiled kernels
        X, y = text_rows(200)
        for solver in SOLVERS:
            run_one(client, X, y, solver, 1.0, 2, 3, hold_bias=True)
            run_one(client, X, y, solver, -1.0, 2, 3)
        for name, (X, y) in sets.items():
            X_ones = with_ones_column(X)
            for solver in solvers:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = linsvm.train(X, y, solver=solver, bias=1.0, eps=reference_eps(X),
                                       max_iter=100_000)  # fmt: skip
                pstar = ref.results_[0].primal
                for k in partitions:
                    held = run_one(client, X, y, solver, 1.0, k, args.max_rounds, hold_bias=True)
                    in_dual = run_one(client, X_ones, y, solver, -1.0, k, args.max_rounds)
                    plain = run_one(client, X, y, solver, -1.0, k, args.max_rounds)
                    cells = []
                    for r in (held, in_dual):
                        cells += [
                            str(r["rounds"]) if r["converged"] else f"> {args.max_rounds}",
                            fmt_seconds(r["seconds"]),
                            fmt_sci(r["gap"]),
                            fmt_sci((r["primal"] - pstar) / pstar),
                        ]
                    cells.insert(4, "-" if held["bias_evaluations"] is None
                                 else str(held["bias_evaluations"]))  # fmt: skip
                    no_bias = str(plain["rounds"]) if plain["converged"] else "> cap"
                    rows.append([name, f"-s {solver}", str(k), *cells, no_bias])
                    print(rows[-1], flush=True)
    finally:
        client.close()
        cluster.close()

    lines = report_header(
        "CoCoA+ with a bias of 1: the bias weight held by the client against the bias in the "
        "dual",
        "bench_distributed_bias",
        [f"relative duality gap {GAP:g}, C = 1, -B 1; 2-worker LocalCluster, K partitions; "
         f"runs capped at {args.max_rounds} rounds"],
    )  # fmt: skip
    lines += [
        "`held`: `bias=1.0, hold_bias=True` (-s 1, -s 7: the client holds the bias weight; "
        "-s 3 keeps it in "
        "the dual, so both columns are one scheme there); `in the dual`: the same problem with "
        "the bias as a column of ones (`bias=-1`); `no bias`: rounds of the problem without a "
        "bias, for scale. `rel acc`: (P - P*)/P*, P* from `linsvm.train` at eps 1e-8 (1e-6 "
        "beyond 100k rows).",
        "",
    ]
    header = ["data", "solver", "K", "held rounds", "held s", "held gap", "held rel acc",
              "bias evaluations", "in the dual rounds", "in the dual s", "in the dual gap",
              "in the dual rel acc", "no bias rounds"]  # fmt: skip
    lines += markdown_table(header, rows, ["l", "l"] + ["r"] * (len(header) - 2))
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
