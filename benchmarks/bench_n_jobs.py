"""One-vs-rest in threads: linsvm's estimators with ``n_jobs`` on the multi-class sets.

Run from the repository root::

    python -m benchmarks.bench_n_jobs [--datasets dna.scale,...] [--configs svc,...]
        [--repeats 5] [--n-jobs 2] [--out benchmarks/RESULTS-n-jobs.md]

For each one-vs-rest configuration of benchmarks/bench_estimators.py (Crammer-Singer is one
problem, LinearSVR one regression: neither has sub-problems to share out) and each multi-class
set: ``fit`` time of scikit-learn's class (LogisticRegression wrapped in OneVsRestClassifier, as
in bench_estimators; there its ``n_jobs`` is given too, so both sides use the same threads),
linsvm with ``n_jobs=None`` and linsvm with ``n_jobs=N``; medians of ``--repeats`` rounds, the
tools interleaved within a round. The threaded model must equal the one-thread model
(coef_ compared exactly): a row where it does not is marked. scikit-learn's LinearSVC has no
``n_jobs``: it runs on one core, so that ratio is the gain a user gets by asking for threads,
not a like-for-like comparison of the solvers (bench_estimators gives that).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .bench_estimators import (
    BENCH_DIR,
    RANDOM_STATE,
    Config,
    configurations,
    linsvm_estimator,
    load_data,
    sklearn_estimator,
    timed_fit,
)
from .common import fmt_seconds, markdown_table, median, report_header

MULTICLASS_SETS = ("dna.scale", "letter.scale", "pendigits", "sector.scale")
OVR_CONFIGS = ("svc", "svc-hinge", "svc-l1", "lr", "lr-dual", "lr-l1")


def sklearn_threads(cfg: Config, multiclass: bool, n_jobs: int):
    """scikit-learn's estimator; its one-vs-rest wrapper gets the threads where there is one."""
    from sklearn.multiclass import OneVsRestClassifier

    est = sklearn_estimator(cfg.estimator, cfg.params, multiclass)
    if isinstance(est, OneVsRestClassifier):
        est.set_params(n_jobs=n_jobs)
    return est


def run(args) -> list[str]:
    rows = []
    configs = [c for c in configurations() if c.key in args.configs]
    for name in args.datasets:
        data = load_data(name)
        if data is None:
            print(f"{name}: not found, skipped", flush=True)
            continue
        print(data.describe(), flush=True)
        for cfg in configs:
            def make_sk(cfg=cfg, data=data):
                return sklearn_threads(cfg, data.multiclass, args.n_jobs)

            def make_one(cfg=cfg):
                return linsvm_estimator(cfg.estimator, cfg.params)

            def make_many(cfg=cfg):
                return linsvm_estimator(cfg.estimator, cfg.params, n_jobs=args.n_jobs)

            timed_fit(make_many, data.X, data.y)  # untimed: caches, page faults
            times: dict[str, list[float]] = {"sklearn": [], "one": [], "many": []}
            same = True
            for _ in range(args.repeats):
                for key, make in (("sklearn", make_sk), ("one", make_one), ("many", make_many)):
                    fit = timed_fit(make, data.X, data.y)
                    times[key].append(fit.seconds)
                    if key == "one":
                        coef_one = fit.est.coef_
                    elif key == "many":
                        same = same and np.array_equal(fit.est.coef_, coef_one)
            med = {k: median(v) for k, v in times.items()}
            rows.append((data, cfg, med, same))
            print(
                f"  {cfg.label}: sklearn {fmt_seconds(med['sklearn'])} s, linsvm 1 thread "
                f"{fmt_seconds(med['one'])} s, {args.n_jobs} threads {fmt_seconds(med['many'])} s"
                + ("" if same else "  MODEL DIFFERS"),
                flush=True,
            )
    table = []
    for data, cfg, med, same in rows:
        table.append(
            [
                data.name,
                data.shape,
                f"`{cfg.label}`",
                fmt_seconds(med["sklearn"]),
                fmt_seconds(med["one"]),
                fmt_seconds(med["many"]),
                f"{med['one'] / med['many']:.2f}x",
                f"{med['sklearn'] / med['one']:.2f}x",
                f"{med['sklearn'] / med['many']:.2f}x",
                "yes" if same else "NO",
            ]
        )
    header = report_header(
        f"One-vs-rest in {args.n_jobs} threads (linsvm n_jobs) on the multi-class sets",
        "bench_n_jobs",
        [f"- repeats: {args.repeats} (median reported); `random_state={RANDOM_STATE}`, C = 1"],
    )
    return header + [
        "",
        "Times are medians of `fit` (seconds). scikit-learn's LinearSVC has no `n_jobs` (one "
        "core); its LogisticRegression runs as `OneVsRestClassifier(..., n_jobs=N)`. "
        "`same model`: the threaded fit's `coef_` equals the one-thread fit's exactly.",
        "",
        *markdown_table(
            [
                "dataset",
                "shape",
                "configuration",
                "sklearn s",
                "linsvm 1 thread s",
                f"linsvm {args.n_jobs} threads s",
                "threads speedup",
                "speedup vs sklearn, 1 thread",
                f"speedup vs sklearn, {args.n_jobs} threads",
                "same model",
            ],
            table,
            align="lll" + "r" * 6 + "l",
        ),
    ]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default=",".join(MULTICLASS_SETS))
    p.add_argument("--configs", default=",".join(OVR_CONFIGS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-n-jobs.md"))
    args = p.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.configs = [c for c in args.configs.split(",") if c]
    bad = [c for c in args.configs if c not in OVR_CONFIGS]
    if bad:
        p.error(f"not one-vs-rest configurations: {bad}")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    started = time.perf_counter()
    lines = run(args)
    lines += ["", f"- total benchmark time {time.perf_counter() - started:.0f} s"]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
