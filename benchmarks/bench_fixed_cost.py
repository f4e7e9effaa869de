"""Per-call fixed cost of a fit: a one-epoch fit against the epoch it runs.

Run from the repository root::

    python -m benchmarks.bench_fixed_cost [--data pypi-recent] [--repeats 11]
        [--baseline-src DIR] [--out benchmarks/RESULTS-fixed-cost.md]

What is timed, on one data set (default pypi-recent, 663k x 321k, 9.4M non-zeros), the
L1-loss SVM dual (-s 3, C = 1), Numba's cache warm and two untimed calls first:

- linsvm: ``linsvm.train(X, y, solver=3, max_iter=1, shrinking=False)`` (and with
  ``objectives=False``), and ``linsvm.LinearSVC(loss="hinge", dual=True, max_iter=1).fit``.
  The epoch is the time of the kernel call inside that same fit (the first pass over the rows,
  which updates nearly every row and so costs more than later ones); the fixed cost is the
  rest of the call: checks, labels, per-row costs and records, copies, the objectives at the
  end. Medians over ``--repeats`` fits, with the spread of the fixed cost (min-max);
- scikit-learn: ``sklearn.svm.LinearSVC(loss="hinge", dual=True, max_iter=1).fit`` (its own
  checks and its conversion of the CSR rows to LIBLINEAR's, then one pass);
- LIBLINEAR (liblinear-official): ``train(problem, "-s 3 -e 1e30")``, one pass (a tolerance
  no violation exceeds stops it after the first), on a ``problem`` built before timing, and
  the time of building that ``problem`` from the CSR matrix, which a caller pays once per data
  set.

Other tools' epochs cannot be timed apart, so their fits are given as multiples of linsvm's
epoch and of linsvm's one-epoch fit. ``--baseline-src DIR`` also times linsvm from another
source tree (e.g. ``git archive HEAD src | tar -x -C /tmp/before``, then ``--baseline-src
/tmp/before/src``) in a subprocess, for a before/after table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .common import (
    BENCH_DIR,
    REPO_ROOT,
    find_data_file,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    scratch_dir,
    write_report,
)

DEFAULT_REPEATS = 11
WARMUP = 2
# The objectives' passes over the rows, as the code has them: the margins alone (the serial
# dual's, its dual from the running w(alpha)), one fused pass (margins and w(alpha) afresh),
# or (older code) the primal's and the dual's.
OBJECTIVE_PASSES = ("loss_sum", "svm_primal_dual", "primal_value", "svm_dual_value")


def load(name: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """The training file of a shared data set, cached as .npz in the scratch folder."""
    cache = scratch_dir() / f"{name}.fixed-cost.npz"
    if cache.is_file():
        z = np.load(cache)
        X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        return X, z["y"]
    import linsvm

    path = find_data_file(name)
    if path is None:
        raise SystemExit(f"data set {name!r} not found in the shared data folder")
    X, y = linsvm.read_libsvm(path)
    np.savez(cache, data=X.data, indices=X.indices, indptr=X.indptr,
             shape=np.array(X.shape), y=y)  # fmt: skip
    return X, y


def _timed_kernels(store: dict) -> None:
    """Wrap the DCD kernel (and the fused objective pass, where the code has it) to add their
    seconds to ``store``: the epoch inside a fit, timed by the fit's own call."""
    import linsvm.objective as objective
    import linsvm.solvers.dcd as dcd

    def wrap(module, name: str) -> None:
        inner = getattr(module, name, None)
        if inner is None:
            return

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                store[name] = store.get(name, 0.0) + time.perf_counter() - t0

        setattr(module, name, timed)

    wrap(dcd, "dcd_svm_kernel")
    for name in OBJECTIVE_PASSES:
        wrap(objective, name)


def measure_ours(X, y, repeats: int, with_new_options: bool = True) -> dict:
    """{run: {"fit": [s], "epoch": [s], "objectives": [s]}} of linsvm's one-epoch fits."""
    import linsvm
    from linsvm.estimators import LinearSVC

    store: dict = {}
    _timed_kernels(store)
    runs = {
        "linsvm.train": lambda: linsvm.train(X, y, solver=3, max_iter=1, shrinking=False),
        "linsvm LinearSVC.fit": lambda: LinearSVC(loss="hinge", dual=True, max_iter=1,
                                                  random_state=0).fit(X, y),
    }
    if with_new_options:
        runs["linsvm.train, objectives=False"] = lambda: linsvm.train(
            X, y, solver=3, max_iter=1, shrinking=False, objectives=False)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fit in runs.items():
            times = {"fit": [], "epoch": [], "objectives": []}
            for r in range(WARMUP + repeats):
                store.clear()
                t0 = time.perf_counter()
                fit()
                seconds = time.perf_counter() - t0
                if r >= WARMUP:
                    times["fit"].append(seconds)
                    times["epoch"].append(store.get("dcd_svm_kernel", float("nan")))
                    passes = [store[k] for k in OBJECTIVE_PASSES if k in store]
                    times["objectives"].append(sum(passes) if passes else float("nan"))
            out[name] = times
    return out


def measure_peers(X, y, repeats: int) -> dict:
    """{run: {"fit": [s]}} of scikit-learn's and LIBLINEAR's one-epoch fits."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from sklearn.svm import LinearSVC as SkLinearSVC

            fits = []
            for r in range(WARMUP + repeats):
                t0 = time.perf_counter()
                SkLinearSVC(loss="hinge", dual=True, max_iter=1, random_state=0).fit(X, y)
                if r >= WARMUP:
                    fits.append(time.perf_counter() - t0)
            out["scikit-learn LinearSVC.fit"] = {"fit": fits}
        except ImportError:
            pass
    try:
        from liblinear import liblinear as ll
        from liblinear.liblinearutil import parameter, problem, train
    except ImportError:
        return out
    builds, fits = [], []
    Xd = sp.csr_matrix(X, dtype=np.float64)
    yd = np.ascontiguousarray(y, dtype=np.float64)
    for r in range(WARMUP + min(repeats, 5)):
        t0 = time.perf_counter()
        prob = problem(yd, Xd)
        if r >= WARMUP:
            builds.append(time.perf_counter() - t0)
    messages: list[bytes] = []
    for r in range(WARMUP + repeats):
        param = parameter("-s 3 -c 1 -e 1e30")
        param.print_func = ll.PRINT_STRING_FUN(messages.append)
        t0 = time.perf_counter()
        train(prob, param)
        if r >= WARMUP:
            fits.append(time.perf_counter() - t0)
    one_pass = b"#iter = 1\n" in b"".join(messages)
    out["LIBLINEAR train (problem built before)"] = {"fit": fits, "one_pass": one_pass}
    out["LIBLINEAR problem(y, X) (once per data set)"] = {"fit": builds}
    return out


def _spread(values) -> str:
    return f"{fmt_seconds(min(values))}-{fmt_seconds(max(values))}"


def ours_rows(ours: dict, label: str = "") -> tuple[list[list[str]], float, float]:
    """Table rows of linsvm's runs; (the epoch, the train fit) for the ratios."""
    rows = []
    ref_epoch = median(ours["linsvm.train"]["epoch"])
    ref_fit = median(ours["linsvm.train"]["fit"])
    for name, t in ours.items():
        fit, epoch = np.array(t["fit"]), np.array(t["epoch"])
        fixed = fit - epoch
        obj = np.array(t["objectives"])
        rows.append([
            name + label, fmt_seconds(median(fit)), fmt_seconds(median(epoch)),
            f"{fmt_seconds(median(fixed))} ({_spread(fixed)})",
            f"{median(fixed / epoch):.2f}",
            fmt_seconds(median(obj)) if np.isfinite(obj).all() else "(not timed)",
        ])  # fmt: skip
    return rows, ref_epoch, ref_fit


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="pypi-recent")
    p.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    p.add_argument("--baseline-src", default=None,
                   help="also time linsvm from this source folder (a subprocess)")
    p.add_argument("--ours-json", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-fixed-cost.md"))
    args = p.parse_args(argv)

    X, y = load(args.data)
    if args.ours_json:  # the baseline's subprocess: its own linsvm, no new options
        print(json.dumps(measure_ours(X, y, args.repeats, with_new_options=False)))
        return
    ours = measure_ours(X, y, args.repeats)
    baseline = None
    if args.baseline_src:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline_src))
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_fixed_cost", "--ours-json",
             "--data", args.data, "--repeats", str(args.repeats)],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        baseline = json.loads(done.stdout.strip().splitlines()[-1])
    peers = measure_peers(X, y, args.repeats)

    rows, ref_epoch, ref_fit = ours_rows(ours)
    if baseline is not None:
        before, _, _ = ours_rows(baseline, " (baseline)")
        rows = before + rows
    header = ["run", "1-epoch fit (s)", "its epoch (s)", "fixed cost (s, min-max)",
              "fixed / epoch", "objectives pass (s)"]  # fmt: skip
    peer_rows = []
    for name, t in peers.items():
        fit = median(t["fit"])
        note = "" if t.get("one_pass", True) else " (not one pass!)"
        peer_rows.append([name + note, fmt_seconds(fit), _spread(t["fit"]),
                          f"{fit / ref_epoch:.2f}", f"{fit / ref_fit:.2f}"])  # fmt: skip
    ours_as_peers = [[name, fmt_seconds(median(t["fit"])), _spread(t["fit"]),
                      f"{median(t['fit']) / ref_epoch:.2f}", f"{median(t['fit']) / ref_fit:.2f}"]
                     for name, t in ours.items()]  # fmt: skip

    rows_n, cols_n = X.shape
    lines = report_header("Per-call fixed cost of a one-epoch fit", "bench_fixed_cost", [
        f"data: {args.data} ({rows_n} x {cols_n}, {X.nnz} non-zeros, {X.dtype}), labels "
        f"{', '.join(str(v) for v in np.unique(y))}",
        f"-s 3 (L1-loss SVM dual), C = 1, one pass, no shrinking; medians of {args.repeats} "
        f"fits after {WARMUP} untimed ones (Numba's cache warm)",
    ])
    lines += [
        "## linsvm: fit, epoch and the rest", "",
        "The epoch is the kernel's call inside the same fit; the fixed cost is the rest of "
        "the call (its spread over the repeats in brackets: the machine's other work moves "
        "it).", "",
        *markdown_table(header, rows), "",
        "## Beside scikit-learn and LIBLINEAR", "",
        "One-epoch fits as multiples of linsvm's epoch (linsvm.train's, above) and of "
        "linsvm.train's one-epoch fit.", "",
        *markdown_table(["run", "1-epoch fit (s)", "min-max (s)", "fit / linsvm epoch",
                         "fit / linsvm.train fit"], ours_as_peers + peer_rows),
        "",
    ]  # fmt: skip
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
