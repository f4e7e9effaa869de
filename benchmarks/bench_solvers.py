"""LIBLINEAR's whole solver family: linsvm vs LIBLINEAR, per solver (``-s``) and dataset.

Run from the repository root::

    python -m benchmarks.bench_solvers [--quick] [--solvers 0,1,2,3,4,5,6,7,11,12,13]
                                       [--datasets a9a,...] [--repeats 5]
                                       [--max-run-seconds 60] [--out benchmarks/RESULTS-solvers.md]

For each solver number and dataset: C = 1 (and p = 0.1 for regression), no bias, the data
loaded once per dataset and shared by both tools.

- Classification solvers 0, 1, 2, 3, 5, 6, 7 run on the binary sets (a9a, w8a, ijcnn1, reuters,
  pypi-recent); the Crammer-Singer solver 4 on the multi-class sets (dna.scale, letter.scale,
  sector.scale); the regression solvers 11, 12, 13 on a9a and ijcnn1 with their +-1 labels used
  as real targets (as LIBLINEAR users sometimes do).
- Timed: ``linsvm.train(X, y, solver=s, C=1, ...)`` and LIBLINEAR's ``train(prob, parameter(
  '-s s -c 1 -q ...'))`` with the ``problem`` built beforehand. Every linsvm solver is first run
  on a tiny problem so that Numba compilation / cache loading is not timed.
- (a) Default tolerances: ``--repeats`` runs each, median time; the relative primal accuracy
  ``(P - P*)/|P*|`` of the worst repeat.
- (b) Time to 1e-3: each tool's eps swept from loose to tight over a short grid (one probe run
  per setting, stopping at the first setting reaching 1e-3 or after a run slower than
  ``--max-run-seconds``); the fastest settings reaching 1e-3 get ``--repeats`` runs; the
  smallest median among those whose every repeat reaches 1e-3 is reported (as
  benchmarks/harness.py does). If no setting's repeats all reach it (LIBLINEAR's coordinate
  order differs run to run), the sweep resumes at the next tighter eps.
- P is computed with linsvm.objective, one function per family: ``primal_value`` per
  one-vs-rest sub-problem (0, 1, 2, 3, 7; accuracy = the worst sub-problem's), ``l1_primal_value``
  (5, 6), ``cs_primal_value`` (4), ``svr_primal_value`` (11, 12, 13). P* is the lowest P seen in
  the session (all runs, plus a tight LIBLINEAR reference run per family, plus the certified
  optima that benchmarks/harness.py cached for the L1/L2-loss SVM); it is cached in the scratch
  folder (``pstar-solvers.json``) and only lowered by later runs.
- A cell whose first LIBLINEAR default run takes longer than ``--max-run-seconds`` gets no
  further runs (linsvm included) and is reported as skipped: this bounds the slow solvers on
  pypi-recent.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from linsvm.objective import (
    LOSS_HINGE,
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    cs_primal_value,
    l1_primal_value,
    primal_value,
    svr_primal_value,
)

from .common import (
    BENCH_DIR,
    REAL_DATASETS,
    find_data_file,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    load_real,
    markdown_table,
    median,
    report_header,
    scratch_dir,
    write_report,
)
from .peers import train_liblinear_logged

ALL_SOLVERS = (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13)
BINARY_SETS = ("a9a", "w8a", "ijcnn1", "reuters", "pypi-recent")
MULTICLASS_SETS = ("dna.scale", "letter.scale", "sector.scale")
REGRESSION_SETS = ("a9a", "ijcnn1")
DEFAULT_DATASETS = BINARY_SETS + MULTICLASS_SETS
TARGET = 1e-3
SMALL_SECONDS = 0.05  # the target ratio <= 1 applies only when LIBLINEAR needs >= 50 ms
C = 1.0
P_SVR = 0.1
PSTAR_CACHE_NAME = "pstar-solvers.json"

SOLVER_NAMES = {
    0: "L2R_LR (primal Newton)",
    1: "L2R_L2LOSS_SVC_DUAL",
    2: "L2R_L2LOSS_SVC (primal Newton)",
    3: "L2R_L1LOSS_SVC_DUAL",
    4: "MCSVM_CS (Crammer-Singer)",
    5: "L1R_L2LOSS_SVC",
    6: "L1R_LR",
    7: "L2R_LR_DUAL",
    11: "L2R_L2LOSS_SVR (primal Newton)",
    12: "L2R_L2LOSS_SVR_DUAL",
    13: "L2R_L1LOSS_SVR_DUAL",
}
# LIBLINEAR 2.50's default eps (linsvm uses the same; checked against linsvm.solvers.SOLVERS).
DEFAULT_EPS = {
    0: 0.01,
    1: 0.1,
    2: 0.01,
    3: 0.1,
    4: 0.1,
    5: 0.01,
    6: 0.01,
    7: 0.1,
    11: 1e-4,
    12: 0.1,
    13: 0.1,
}
# The objective each solver minimises: solvers of one family share P and P*.
FAMILY = {
    0: "L2R-LR",
    7: "L2R-LR",
    1: "L2R-L2SVM",
    2: "L2R-L2SVM",
    3: "L2R-L1SVM",
    4: "CS",
    5: "L1R-L2SVM",
    6: "L1R-LR",
    11: "L2-SVR",
    12: "L2-SVR",
    13: "L1-SVR",
}
OVR_LOSS = {"L2R-LR": LOSS_LOGISTIC, "L2R-L2SVM": LOSS_SQUARED_HINGE, "L2R-L1SVM": LOSS_HINGE}
L1R_LOSS = {"L1R-L2SVM": LOSS_SQUARED_HINGE, "L1R-LR": LOSS_LOGISTIC}
# The tight LIBLINEAR run that anchors P* per family: (solver, eps).
REFERENCE_RUN = {
    "L2R-LR": (0, 1e-6),
    "L2R-L2SVM": (2, 1e-6),
    "L2R-L1SVM": (3, 1e-4),
    "CS": (4, 1e-3),
    "L1R-L2SVM": (5, 1e-5),
    "L1R-LR": (6, 1e-5),
    "L2-SVR": (11, 1e-7),
    "L1-SVR": (13, 1e-4),
}
# LIBLINEAR caps its dual solvers at 300 iterations: the dual-only families also get a tight
# linsvm run with a larger cap: (solver, eps, max_iter).
LINSVM_REFERENCE = {
    "L2R-L1SVM": (3, 1e-4, 3000),
    "L1-SVR": (13, 1e-4, 3000),
    "CS": (4, 1e-4, 100_000),
}
# benchmarks/harness.py caches certified optima of the same problems (C = 1, no bias).
HARNESS_LOSS_KEY = {"L2R-L2SVM": LOSS_SQUARED_HINGE, "L2R-L1SVM": LOSS_HINGE}


def eps_grid(solver: int, quick: bool) -> tuple[float, ...]:
    """eps values from loose to tight for the time-to-1e-3 sweep (same grid for both tools)."""
    d = DEFAULT_EPS[solver]
    factors = (
        (100.0, 10.0, 1.0, 0.1, 0.01, 1e-3)
        if quick
        else (100.0, 30.0, 10.0, 3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4)
    )
    return tuple(float(f"{d * f:.3g}") for f in factors)


# ---- data ------------------------------------------------------------------------------------


@dataclass
class Data:
    """One dataset as both tools see it: raw labels (classification) or real targets."""

    name: str
    X: sp.csr_matrix
    y: np.ndarray  # float64: original labels, or +-1 used as real regression targets
    labels: np.ndarray  # class labels in order of first appearance (LIBLINEAR's order)
    problem: object = None  # LIBLINEAR problem, built once
    note: str = ""

    def describe(self) -> str:
        r, c = self.X.shape
        return f"{self.name}: {r} x {c}, nnz {self.X.nnz}, {len(self.labels)} classes"


def first_appearance_labels(y: np.ndarray) -> np.ndarray:
    values, first = np.unique(y, return_index=True)
    return values[np.argsort(first)]


def load_data(name: str) -> Data | None:
    import linsvm

    if name in REAL_DATASETS:
        ds = load_real(name)
        if ds is None:
            return None
        X, y = ds.X, ds.y
    else:
        path = find_data_file(name)
        if path is None:
            return None
        X, y = linsvm.read_libsvm(path)
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    y = np.ascontiguousarray(y, dtype=np.float64)
    return Data(name, X, y, first_appearance_labels(y))


def ensure_problem(data: Data):
    from liblinear.liblinearutil import problem

    if data.problem is None:
        data.problem = problem(data.y, data.X)
    return data.problem


def subproblems(y: np.ndarray, labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """LIBLINEAR's one-vs-rest sub-problems (y_pm1, C_rows), as tests/conftest.py (C = 1)."""
    targets = [0] if len(labels) == 2 else range(len(labels))
    c_rows = np.full(y.shape[0], C)
    return [(np.where(y == labels[k], 1.0, -1.0), c_rows) for k in targets]


# ---- scoring -----------------------------------------------------------------------------------


def primal_values(data: Data, solver: int, W: np.ndarray) -> np.ndarray:
    """P of each weight vector (rows of W, in ``data.labels`` order); one value for 4, 5/6, SVR.

    For 0/1/2/3/7 one value per one-vs-rest sub-problem; for 5/6 likewise (L1-regularised).
    """
    X = data.X
    fam = FAMILY[solver]
    if fam in ("L2-SVR", "L1-SVR"):
        loss = "l2" if fam == "L2-SVR" else "l1"
        return np.array(
            [svr_primal_value(X, -1.0, data.y, np.full(X.shape[0], C), W[0], loss, P_SVR)]
        )
    if fam == "CS":
        cls = np.searchsorted(np.sort(data.labels), data.y)
        order = np.argsort(data.labels)  # sorted position -> labels index
        cls = order[cls].astype(np.int64)
        Wt = np.ascontiguousarray(W.T)
        return np.array(
            [cs_primal_value(X.indptr, X.indices, X.data, -1.0, cls, np.full(X.shape[0], C), Wt)]
        )
    out = []
    for k, (y_pm1, c_rows) in enumerate(subproblems(data.y, data.labels)):
        w = np.ascontiguousarray(W[k], dtype=np.float64)
        if fam in L1R_LOSS:
            out.append(
                l1_primal_value(
                    X.indptr, X.indices, X.data, -1.0, y_pm1, c_rows, w, L1R_LOSS[fam], True
                )
            )
        else:
            out.append(
                primal_value(X.indptr, X.indices, X.data, -1.0, y_pm1, c_rows, w, OVR_LOSS[fam])
            )
    return np.array(out, dtype=np.float64)


def align_rows(W: np.ndarray, tool_labels, data: Data, solver: int) -> np.ndarray:
    """W's rows reordered / re-oriented to ``data.labels`` (LIBLINEAR's first-appearance order)."""
    if FAMILY[solver] in ("L2-SVR", "L1-SVR"):
        return W
    tool_labels = list(np.asarray(tool_labels, dtype=np.float64))
    ref = list(data.labels)
    if len(ref) == 2 and solver != 4:
        return W if tool_labels[0] == ref[0] else -W
    return W[[tool_labels.index(lab) for lab in ref]]


# ---- the two tools -----------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    primals: np.ndarray
    note: str = ""


def fit_linsvm(data: Data, solver: int, eps: float | None, seed: int = 1) -> Run:
    import linsvm

    kwargs = {} if eps is None else {"eps": eps}
    if solver in (11, 12, 13):
        kwargs["p"] = P_SVR
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", linsvm.ConvergenceWarning)
        t0 = time.perf_counter()
        model = linsvm.train(data.X, data.y, solver=solver, C=C, seed=seed, **kwargs)
        seconds = time.perf_counter() - t0
    W = np.asarray(model.coef_, dtype=np.float64)
    W = align_rows(W, model.labels_, data, solver)
    note = (
        "hit max_iter"
        if any(issubclass(c.category, linsvm.ConvergenceWarning) for c in caught)
        else ""
    )
    return Run(seconds, primal_values(data, solver, W), note)


def liblinear_weights(model, solver: int, n_features: int) -> np.ndarray:
    """LIBLINEAR's w as (nr_w, n_features) (logic of tests/conftest.py, no bias here)."""
    nr_class = model.get_nr_class()
    if solver in (11, 12, 13):
        nr_w = 1
    else:
        nr_w = 1 if nr_class == 2 and solver != 4 else nr_class
    w_size = model.get_nr_feature()
    flat = np.ctypeslib.as_array(model.w, shape=(w_size * nr_w,)).astype(np.float64)
    W = flat.reshape(w_size, nr_w).T
    if w_size < n_features:
        W = np.hstack([W, np.zeros((nr_w, n_features - w_size))])
    return np.ascontiguousarray(W[:, :n_features])


def fit_liblinear(data: Data, solver: int, eps: float | None, seed: int = 1) -> Run:
    """(``seed`` unused: LIBLINEAR's rand() runs on from repeat to repeat, never reseeded.)"""
    from liblinear.liblinearutil import parameter

    prob = ensure_problem(data)
    opts = f"-s {solver} -c {C:g}"
    if solver in (11, 12, 13):
        opts += f" -p {P_SVR:g}"
    if eps is not None:
        opts += f" -e {eps:.17g}"
    param = parameter(opts + " -q")
    # -q installs a silent print hook; replaced by one that collects the (few) messages so
    # that a run hitting the iteration cap can be noted.
    seconds, model, text = train_liblinear_logged(prob, param)
    note = "hit the iteration cap" if "max number of iterations" in text else ""
    W = liblinear_weights(model, solver, data.X.shape[1])
    W = align_rows(W, model.get_labels(), data, solver)
    return Run(seconds, primal_values(data, solver, W), note)


TOOLS = {"LIBLINEAR": fit_liblinear, "linsvm": fit_linsvm}


def warm_up(solvers) -> float:
    """Compile / load every linsvm solver on tiny problems (binary, 3-class, regression)."""
    import linsvm

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    X = sp.random(300, 30, density=0.2, format="csr", random_state=1, dtype=np.float64)
    X.sort_indices()
    y2 = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    y3 = rng.integers(1, 4, 300).astype(np.float64)
    yr = rng.normal(size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in solvers:
            for y in (yr,) if s in (11, 12, 13) else (y2, y3):
                linsvm.train(X, y, solver=s, C=C)
                linsvm.train(X, y, solver=s, C=C, eps=1e-6)  # cap / fallback paths
                linsvm.train(X, y, solver=s, C=C, eps=10.0)
        # the scorers
        d = Data("tiny", X, y3, first_appearance_labels(y3))
        for s in solvers:
            W = np.zeros((1 if s in (11, 12, 13) else 3, 30))
            primal_values(d if s not in (11, 12, 13) else Data("tiny", X, yr, np.array([])), s, W)
    return time.perf_counter() - t0


# ---- P* ----------------------------------------------------------------------------------------


class PStarCache:
    """The lowest primal values seen per (family, dataset), in a JSON file in the scratch folder."""

    def __init__(self) -> None:
        self.path = scratch_dir() / PSTAR_CACHE_NAME
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}
        try:
            self.harness = json.loads((scratch_dir() / "pstar.json").read_text())
        except (OSError, ValueError):
            self.harness = {}

    def get(self, fam: str, dataset: str) -> tuple[np.ndarray, str] | None:
        d = self.data.get(f"{fam}|{dataset}")
        if d is None:
            return None
        return np.array(d["primal"], dtype=np.float64), d.get("source", "")

    def harness_value(self, fam: str, dataset: str) -> float | None:
        if fam not in HARNESS_LOSS_KEY:
            return None
        d = self.harness.get(f"{dataset}|loss={HARNESS_LOSS_KEY[fam]}")
        return None if d is None else float(d["primal"])

    def put(self, fam: str, dataset: str, primal: np.ndarray, source: str) -> None:
        self.data[f"{fam}|{dataset}"] = {"primal": [float(v) for v in primal], "source": source}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


@dataclass
class Reference:
    primal: np.ndarray | None = None  # per sub-problem
    source: str = ""
    seconds: float = 0.0

    def offer(self, primals: np.ndarray, source: str) -> None:
        if self.primal is None:
            self.primal = primals.copy()
            self.source = source
            return
        better = primals < self.primal
        if np.any(better):
            self.primal = np.where(better, primals, self.primal)
            self.source = source

    def rel(self, primals: np.ndarray) -> float:
        return float(np.max((primals - self.primal) / np.abs(self.primal)))


# ---- one cell (solver, dataset) ----------------------------------------------------------------


@dataclass
class Measurement:
    label: str
    eps: float | None
    runs: list[Run] = field(default_factory=list)

    @property
    def median_time(self) -> float:
        return median([r.seconds for r in self.runs])

    @property
    def worst_primals(self) -> np.ndarray:
        return np.max(np.array([r.primals for r in self.runs]), axis=0)

    @property
    def notes(self) -> str:
        return "; ".join(sorted({r.note for r in self.runs if r.note}))


@dataclass
class Cell:
    solver: int
    dataset: str
    ref: Reference
    runs: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # tool -> label -> m
    skipped: str = ""
    sweep_notes: list[str] = field(default_factory=list)

    def default(self, tool: str) -> Measurement | None:
        return self.runs.get(tool, {}).get("default")

    def best_to_target(self, tool: str) -> Measurement | None:
        ms = [
            m for m in self.runs.get(tool, {}).values() if self.ref.rel(m.worst_primals) <= TARGET
        ]
        if not ms:
            return None
        most = max(len(m.runs) for m in ms)
        return min((m for m in ms if len(m.runs) == most), key=lambda m: m.median_time)


def measure(
    cell: Cell, data: Data, tool: str, label: str, eps: float | None, n_runs: int
) -> Measurement:
    m = cell.runs.setdefault(tool, {}).setdefault(label, Measurement(label, eps))
    while len(m.runs) < n_runs:
        gc.collect()
        # (repeat k with seed k: every repeat another order, as LIBLINEAR's)
        run = TOOLS[tool](data, cell.solver, eps, len(m.runs) + 1)
        cell.ref.offer(run.primals, f"{tool} -s {cell.solver} {label}")
        m.runs.append(run)
    return m


def sweep(cell: Cell, data: Data, tool: str, args) -> None:
    """Probe eps loose to tight until one reaches the target; then repeat the fastest.

    When no setting still reaches the target once repeated (a repeat with another random order
    may fall short), the probing resumes at the next tighter eps.
    """
    default = cell.runs[tool]["default"]
    d_eps = DEFAULT_EPS[cell.solver]
    grid = list(eps_grid(cell.solver, args.quick))

    def reaches(m: Measurement) -> bool:
        return cell.ref.rel(m.worst_primals) <= TARGET

    stopped = False
    while grid and not stopped:
        while grid:
            eps = grid.pop(0)
            label = f"eps={eps:g}"
            if eps == d_eps:
                cell.runs[tool][label] = default  # the very same computation
                m = default
            else:
                m = measure(cell, data, tool, label, eps, 1)
            if reaches(m):
                break
            if m.runs[0].seconds > args.max_run_seconds:
                cell.sweep_notes.append(
                    f"{tool}: sweep stopped after {label} (one run took "
                    f"{fmt_seconds(m.runs[0].seconds)} s)"
                )
                stopped = True
                break
        reaching = [m for m in cell.runs[tool].values() if reaches(m)]
        if reaching:
            best = min(m.median_time for m in reaching)
            for m in reaching:
                if m.median_time <= 1.5 * best:
                    measure(cell, data, tool, m.label, m.eps, args.repeats)
        done = [m for m in cell.runs[tool].values() if reaches(m) and len(m.runs) >= args.repeats]
        # (the default, repeated as every default is, ends the sweep only when no setting
        # looser than it is left to try: a looser one that failed its repeats moves on to the
        # next, which may still be faster than the default)
        if any(m is not default for m in done) or (done and (not grid or grid[0] <= d_eps)):
            break


def reference_run(cell: Cell, data: Data, cache: PStarCache, args, probe_seconds: float) -> None:
    """Offer the cached P*, the harness's certified optimum and a tight LIBLINEAR run.

    The tight runs are made only when nothing is cached for (family, dataset); when LIBLINEAR's
    default run took over ``--max-run-seconds`` / 20 their eps is loosened to default / 100.
    """
    fam = FAMILY[cell.solver]
    cached = cache.get(fam, data.name)
    if cached is not None:
        cell.ref.offer(cached[0], cached[1].removesuffix(" (cached)") + " (cached)")
    hv = cache.harness_value(fam, data.name)
    if hv is not None:
        cell.ref.offer(np.array([hv]), "benchmarks/harness.py P* (cached)")
    if cached is None:
        s, eps = REFERENCE_RUN[fam]
        if probe_seconds > args.max_run_seconds / 20:
            # a large problem: a moderately tight reference, to bound its time
            eps = max(eps, DEFAULT_EPS[s] * 1e-2)
        t0 = time.perf_counter()
        run = fit_liblinear(data, s, eps)
        cell.ref.offer(run.primals, f"LIBLINEAR -s {s} -e {eps:g}")
        if fam in LINSVM_REFERENCE and hv is None:
            import linsvm

            s, eps, max_iter = LINSVM_REFERENCE[fam]
            if probe_seconds > args.max_run_seconds / 20:
                eps, max_iter = max(eps, DEFAULT_EPS[s] * 1e-2), 1000
            kwargs = {"p": P_SVR} if s in (11, 12, 13) else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = linsvm.train(
                    data.X, data.y, solver=s, C=C, eps=eps, max_iter=max_iter, **kwargs
                )
            W = align_rows(np.asarray(model.coef_, dtype=np.float64), model.labels_, data, s)
            cell.ref.offer(
                primal_values(data, s, W), f"linsvm -s {s} eps={eps:g} max_iter={max_iter}"
            )
        cell.ref.seconds = time.perf_counter() - t0


def bench_cell(solver: int, data: Data, cache: PStarCache, args) -> Cell:
    cell = Cell(solver, data.name, Reference())
    fam = FAMILY[solver]
    # probe: LIBLINEAR's default once, bounding the slow solvers on the large sets
    probe = measure(cell, data, "LIBLINEAR", "default", None, 1)
    if probe.runs[0].seconds > args.max_run_seconds:
        cell.skipped = (
            f"one LIBLINEAR default run took {fmt_seconds(probe.runs[0].seconds)} s"
            f" (> --max-run-seconds {args.max_run_seconds:g}): no further runs"
        )
        cached = cache.get(fam, data.name)
        if cached is not None:
            cell.ref.offer(cached[0], cached[1].removesuffix(" (cached)") + " (cached)")
        return cell
    reference_run(cell, data, cache, args, probe.runs[0].seconds)
    for tool in TOOLS:
        measure(cell, data, tool, "default", None, args.repeats)
    for tool in TOOLS:
        sweep(cell, data, tool, args)
    cache.put(fam, data.name, cell.ref.primal, cell.ref.source)
    return cell


# ---- report ------------------------------------------------------------------------------------


def applicable(solver: int, datasets: list[str]) -> list[str]:
    if solver == 4:
        return [d for d in datasets if d in MULTICLASS_SETS]
    if solver in (11, 12, 13):
        return [d for d in datasets if d in REGRESSION_SETS]
    return [d for d in datasets if d in BINARY_SETS]


def _t(m: Measurement | None) -> str:
    if m is None:
        return "not reached"
    runs = "" if len(m.runs) > 1 else ", 1 run"
    return f"{fmt_seconds(m.median_time)} ({m.label}{runs})"


def summary(cells: list[Cell]) -> list[str]:
    """Per solver: the largest ratios over the rows where LIBLINEAR needs >= 50 ms."""
    rows = []
    for solver in sorted({c.solver for c in cells}):
        d_ratios, t_ratios, small, skipped = [], [], 0, 0
        for c in (c for c in cells if c.solver == solver):
            if c.skipped:
                skipped += 1
                continue
            ll, lin = c.default("LIBLINEAR"), c.default("linsvm")
            if ll.median_time >= SMALL_SECONDS:
                d_ratios.append((lin.median_time / ll.median_time, c.dataset))
            else:
                small += 1
            b_ll, b_lin = c.best_to_target("LIBLINEAR"), c.best_to_target("linsvm")
            if b_ll and b_lin and b_ll.median_time >= SMALL_SECONDS:
                t_ratios.append((b_lin.median_time / b_ll.median_time, c.dataset))

        def worst(r):
            return "n/a" if not r else "{:.2f} ({})".format(*max(r))

        rows.append([f"-s {solver}", worst(d_ratios), worst(t_ratios), small, skipped])
    out = [
        "## Summary",
        "",
        "Largest linsvm/LIBLINEAR ratio per solver over the datasets where "
        "LIBLINEAR needs >= 50 ms (target <= 1.0).",
        "",
    ]
    out += markdown_table(
        [
            "solver",
            "default eps: max ratio (dataset)",
            "to 1e-3: max ratio (dataset)",
            "rows under 50 ms",
            "rows skipped",
        ],
        rows,
    )
    return out + [""]


def report(cells: list[Cell], header: list[str], notes: list[str], sizes: dict) -> list[str]:
    lines = list(header)
    lines += [
        "Times are medians in seconds of the training call only; `ratio` is linsvm time / "
        "LIBLINEAR time (below 1: linsvm faster); `rel acc` is (P(w) - P*)/|P*| of the worst "
        "repeat (for one-vs-rest solvers on multi-class data: the worst sub-problem). "
        f"`to 1e-3`: the fastest eps on each tool's grid whose every repeat reaches {TARGET:g}. "
        "C = 1, no bias; p = 0.1 for regression. Rows marked * have LIBLINEAR's default run "
        "under 50 ms (in the last column: LIBLINEAR's time to 1e-3 under 50 ms): the target "
        "ratio <= 1.0 applies only at >= 50 ms.",
        "",
        "Regression (-s 11, 12, 13) uses a9a and ijcnn1 with their +-1 class labels as real "
        "targets, as LIBLINEAR users sometimes do.",
        "",
    ]
    lines += summary(cells)
    for solver in sorted({c.solver for c in cells}):
        rows = []
        for c in (c for c in cells if c.solver == solver):
            ll, lin = c.default("LIBLINEAR"), c.default("linsvm")
            if c.skipped:
                rows.append(
                    [
                        c.dataset,
                        fmt_seconds(ll.median_time),
                        "skipped",
                        "n/a",
                        "n/a",
                        "n/a",
                        "n/a",
                        "n/a",
                        "n/a",
                    ]
                )
                continue
            small = ll.median_time < SMALL_SECONDS
            b_ll, b_lin = c.best_to_target("LIBLINEAR"), c.best_to_target("linsvm")
            rows.append(
                [
                    c.dataset + (" *" if small else ""),
                    fmt_seconds(ll.median_time),
                    fmt_seconds(lin.median_time),
                    fmt_ratio(lin.median_time, ll.median_time),
                    fmt_sci(c.ref.rel(ll.worst_primals)),
                    fmt_sci(c.ref.rel(lin.worst_primals)),
                    _t(b_ll),
                    _t(b_lin),
                    fmt_ratio(
                        b_lin.median_time if b_lin else None, b_ll.median_time if b_ll else None
                    )
                    + (" *" if b_ll and b_ll.median_time < SMALL_SECONDS else ""),
                ]
            )
        lines += [
            f"## -s {solver}: {SOLVER_NAMES[solver]} (default eps {DEFAULT_EPS[solver]:g})",
            "",
        ]
        lines += markdown_table(
            [
                "dataset",
                "LIBLINEAR s",
                "linsvm s",
                "ratio",
                "rel acc LIBLINEAR",
                "rel acc linsvm",
                "to 1e-3 LIBLINEAR s (eps)",
                "to 1e-3 linsvm s (eps)",
                "ratio to 1e-3",
            ],
            rows,
        )
        lines.append("")

    lines += ["## P* (lowest primal seen)", ""]
    rows = []
    seen = set()
    for c in cells:
        key = (FAMILY[c.solver], c.dataset)
        if key in seen or c.ref.primal is None:
            continue
        seen.add(key)
        p = c.ref.primal
        shown = f"{p[0]:.10g}" if p.shape[0] == 1 else f"sum {p.sum():.10g} ({p.shape[0]} sub)"
        src = c.ref.source + (
            f" (reference run {fmt_seconds(c.ref.seconds)} s)" if c.ref.seconds else ""
        )
        rows.append([key[0], c.dataset, sizes.get(c.dataset, ""), shown, src])
    lines += markdown_table(
        ["objective", "dataset", "size", "P*", "lowest P from"],
        rows,
        align=["l", "l", "l", "r", "l"],
    )

    lines += ["", "## All settings run", ""]
    rows = []
    for c in cells:
        for tool, ms in c.runs.items():
            seen_ids = set()
            for m in ms.values():
                if id(m) in seen_ids:
                    continue
                seen_ids.add(id(m))
                rows.append(
                    [
                        f"-s {c.solver}",
                        c.dataset,
                        tool,
                        m.label,
                        len(m.runs),
                        fmt_seconds(m.median_time),
                        fmt_sci(c.ref.rel(m.worst_primals)) if c.ref.primal is not None else "n/a",
                        m.notes,
                    ]
                )
    lines += markdown_table(
        ["solver", "dataset", "tool", "setting", "runs", "median s", "rel acc", "notes"],
        rows,
        align=["l", "l", "l", "l", "r", "r", "r", "l"],
    )
    for c in cells:
        if c.skipped:
            notes.append(f"-s {c.solver} {c.dataset}: {c.skipped}")
        notes += [f"-s {c.solver} {c.dataset}: {n}" for n in c.sweep_notes]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return lines


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick", action="store_true", help="a9a (+ dna.scale for -s 4), 2 repeats, short eps grid"
    )
    p.add_argument("--solvers", default=",".join(str(s) for s in ALL_SOLVERS))
    p.add_argument(
        "--datasets",
        default=None,
        help="comma-separated among "
        + ", ".join(DEFAULT_DATASETS)
        + " (each solver runs on those of its kind)",
    )
    p.add_argument("--repeats", type=int, default=None, help="timed runs per setting (5)")
    p.add_argument(
        "--max-run-seconds",
        type=float,
        default=60.0,
        help="skip a (solver, dataset) whose first LIBLINEAR run is slower; stop a "
        "sweep after a slower run (60)",
    )
    p.add_argument(
        "--fresh-pstar",
        action="store_true",
        help=f"ignore the P* values cached in the scratch folder ({PSTAR_CACHE_NAME}); make the "
        "tight reference runs again",
    )
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-solvers.md"))
    args = p.parse_args(argv)
    args.solvers = [int(s) for s in args.solvers.split(",") if s.strip()]
    bad = [s for s in args.solvers if s not in ALL_SOLVERS]
    if bad:
        p.error(f"unknown solvers {bad}")
    if args.datasets is None:
        args.datasets = "a9a,dna.scale" if args.quick else ",".join(DEFAULT_DATASETS)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    bad = [d for d in args.datasets if d not in DEFAULT_DATASETS]
    if bad:
        p.error(f"unknown datasets {bad}")
    args.repeats = args.repeats or (2 if args.quick else 5)
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    from linsvm.solvers import SOLVERS

    notes = []
    for s in args.solvers:
        if SOLVERS[s].default_eps != DEFAULT_EPS[s]:
            notes.append(
                f"-s {s}: linsvm's default eps {SOLVERS[s].default_eps:g} differs from "
                f"LIBLINEAR's {DEFAULT_EPS[s]:g}"
            )
    started = time.perf_counter()
    seconds = warm_up(args.solvers)
    notes.append(
        f"linsvm warm-up (every solver on tiny problems; Numba cache loading or "
        f"compilation) took {seconds:.1f} s before any timing"
    )
    header = report_header(
        "linsvm vs LIBLINEAR: the whole solver family",
        "bench_solvers",
        [
            f"solvers: {', '.join(str(s) for s in args.solvers)}; repeats: {args.repeats} (median "
            f"reported); cells whose LIBLINEAR default run exceeds {args.max_run_seconds:g} s are "
            "skipped",
        ],
    )
    cache = PStarCache()
    if args.fresh_pstar:
        cache.data = {}
    cells: list[Cell] = []
    sizes: dict[str, str] = {}
    for name in args.datasets:
        todo = [s for s in args.solvers if name in applicable(s, [name])]
        if not todo:
            continue
        t0 = time.perf_counter()
        data = load_data(name)
        if data is None:
            notes.append(f"{name}: skipped, data file not found")
            continue
        sizes[name] = f"{data.X.shape[0]} x {data.X.shape[1]}, nnz {data.X.nnz}"
        print(
            f"{data.describe()} (loaded in {time.perf_counter() - t0:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        for s in todo:
            t1 = time.perf_counter()
            cell = bench_cell(s, data, cache, args)
            cells.append(cell)
            print(f"  -s {s}: {time.perf_counter() - t1:.1f} s", file=sys.stderr, flush=True)
        del data
        gc.collect()
    notes.append(f"total benchmark time {time.perf_counter() - started:.0f} s")
    cells.sort(key=lambda c: (c.solver, args.datasets.index(c.dataset)))
    write_report(report(cells, header, notes, sizes), args.out)


if __name__ == "__main__":
    main()
