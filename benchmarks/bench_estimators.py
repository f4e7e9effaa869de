"""linsvm's scikit-learn estimators vs scikit-learn's own: fit time, objectives, a C path.

Run from the repository root::

    python -m benchmarks.bench_estimators [--quick] [--datasets a9a,...] [--configs svc,...]
        [--repeats 5] [--max-fit-seconds 120] [--path-datasets a9a,ijcnn1,w8a,pypi-recent]
        [--path-repeats 3] [--max-path-seconds 120] [--no-path] [--no-fit-table]
        [--out benchmarks/RESULTS-estimators.md]

``--quick``: the small sets splice (binary) and dna.scale (3 classes), 2 repeats, C path on splice
over 6 values: a smoke test of about a minute; its times are all near or under 50 ms.

Part 1, fit time. For each configuration (below) and dataset, the same parameters on both sides
(C = 1, every other parameter at its default, ``random_state=0``): ``linsvm.LinearSVC`` vs
``sklearn.svm.LinearSVC``, ``linsvm.LinearSVR`` vs ``sklearn.svm.LinearSVR`` and
``linsvm.LogisticRegression`` vs ``sklearn.linear_model.LogisticRegression(solver="liblinear")``.
scikit-learn's liblinear refuses more than two classes for logistic regression, so on the
multi-class sets it is wrapped in ``sklearn.multiclass.OneVsRestClassifier`` (one binary fit per
class, as linsvm's one-vs-rest), which is what a scikit-learn user would do.

- Data: the binary sets a9a, w8a, ijcnn1, reuters, pypi-recent (labels -1/+1) and the
  multi-class sets with a training file (dna.scale, letter.scale, pendigits, sector.scale),
  loaded once as float64 CSR with sorted indices, through benchmarks/common.py.
- LinearSVR has no regression set to run on: it uses the binary sets with their -1/+1 labels as
  real targets (as benchmarks/bench_solvers.py does for -s 11-13), so its problems are the
  regression view of the same data; quality is R^2 and mean squared error on the test split.
- Timing: ``time.perf_counter`` around ``fit`` only (the estimator is built beforehand; each
  tool's input validation and conversion is part of its ``fit``). Every linsvm estimator and
  configuration is first fitted on tiny problems (Numba compilation / cache loading), and each
  (dataset, configuration) starts with one untimed linsvm fit on the full data. Then
  ``--repeats`` rounds, each fitting scikit-learn, linsvm and linsvm with ``tol="liblinear"``
  (LIBLINEAR's own default tolerance of the solver, looser than scikit-learn's 1e-4) in turn;
  the medians are reported. A tool whose first fit takes longer than ``--max-fit-seconds`` is
  not run again for that row (noted: 1 run).
- Objectives: linsvm's ``objective_`` (the primal objective per binary sub-problem; one value for
  Crammer-Singer and SVR), and the same function evaluated at scikit-learn's ``coef_`` and
  ``intercept_`` with ``linsvm.objective``: LIBLINEAR regularises the bias weight
  ``w_b = intercept_ / intercept_scaling`` (the extra feature of value ``intercept_scaling``),
  so it is part of ``w``. One-vs-rest problems have one objective per class; the table shows
  their sum and the relative difference of the class where linsvm and scikit-learn differ most.
  linsvm's ``objective_`` is also checked against the same evaluation of its own ``coef_``.
- Target (the issue): linsvm at least 1.5x faster wherever scikit-learn needs >= 50 ms; rows
  that miss it are marked MISS.

Part 2, a warm-started path over C (2^-6 ... 2^4): ``est = Cls(warm_start=True, ...)`` then
``est.set_params(C=C).fit(X, y)`` for each C in turn, against a fresh linsvm estimator per C and
scikit-learn's fits per C (its liblinear has no warm start), for LinearSVC(dual=True) with both
losses and LogisticRegression (liblinear, dual and primal); total time of the path, total
iterations, and the agreement of the objectives (warm vs cold at every C; vs scikit-learn at the
last C). linsvm's cold path runs first; once its fits have taken ``--max-path-seconds`` it stops,
and the warm and scikit-learn paths stop at the same C (or at their own budget): the table
compares the three over the C values all of them fitted.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .common import (
    BENCH_DIR,
    REAL_DATASETS,
    find_data_file,
    fmt_seconds,
    load_real,
    markdown_table,
    match_columns,
    median,
    report_header,
    to_pm1,
    write_report,
)

BINARY_SETS = ("a9a", "w8a", "ijcnn1", "reuters", "pypi-recent")
# multi-class sets with a training file: name -> test file
MULTICLASS_SETS = {
    "dna.scale": "dna.scale.t",
    "letter.scale": "letter.scale.t",
    "pendigits": "pendigits.t",
    "sector.scale": "sector.t.scale",
}
# small sets for --quick only: name -> test file
QUICK_SETS = {"splice": "splice.t"}
OTHER_SETS = {**MULTICLASS_SETS, **QUICK_SETS}
DEFAULT_DATASETS = BINARY_SETS + tuple(MULTICLASS_SETS)
KNOWN_DATASETS = DEFAULT_DATASETS + tuple(QUICK_SETS)
PATH_DATASETS = ("a9a", "ijcnn1", "w8a", "pypi-recent")
C_GRID = tuple(2.0**k for k in range(-6, 5))
QUICK_C_GRID = tuple(2.0**k for k in range(-6, 5, 2))
RANDOM_STATE = 0
SMALL_SECONDS = 0.05  # the 1.5x target applies where scikit-learn needs >= 50 ms
TARGET_SPEEDUP = 1.5
OBJECTIVE_CHECK = 1e-8  # linsvm's objective_ vs the same objective recomputed from its coef_
FULL_WARMUP_MAX_NNZ = 5_000_000  # larger sets rely on the tiny-problem warm-up alone


@dataclass
class Config:
    """One estimator configuration, with identical parameters on both sides."""

    key: str
    estimator: str  # "LinearSVC", "LogisticRegression" or "LinearSVR"
    params: dict
    sets: str  # "classification" (binary + multi-class), "multiclass" or "regression"
    objective: tuple  # ("ovr", loss code, "l2" | "l1"), ("cs",) or ("svr", "l1" | "l2")

    @property
    def label(self) -> str:
        shown = dict(self.params)
        if self.estimator == "LogisticRegression":
            shown = {"solver": "liblinear", **shown}
        args = ", ".join(f"{k}={v!r}".replace("'", '"') for k, v in shown.items())
        return f"{self.estimator}({args})"


def configurations() -> list[Config]:
    from linsvm.objective import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED_HINGE

    lr = {"solver": "liblinear"}
    return [
        Config("svc", "LinearSVC", {}, "classification", ("ovr", LOSS_SQUARED_HINGE, "l2")),
        Config(
            "svc-hinge",
            "LinearSVC",
            {"loss": "hinge", "dual": True},
            "classification",
            ("ovr", LOSS_HINGE, "l2"),
        ),
        Config("svc-cs", "LinearSVC", {"multi_class": "crammer_singer"}, "multiclass", ("cs",)),
        Config(
            "svc-l1",
            "LinearSVC",
            {"penalty": "l1", "dual": False},
            "classification",
            ("ovr", LOSS_SQUARED_HINGE, "l1"),
        ),
        Config(
            "lr", "LogisticRegression", dict(lr), "classification", ("ovr", LOSS_LOGISTIC, "l2")
        ),
        Config(
            "lr-dual",
            "LogisticRegression",
            {**lr, "dual": True},
            "classification",
            ("ovr", LOSS_LOGISTIC, "l2"),
        ),
        Config(
            "lr-l1",
            "LogisticRegression",
            {**lr, "l1_ratio": 1.0},
            "classification",
            ("ovr", LOSS_LOGISTIC, "l1"),
        ),
        Config("svr", "LinearSVR", {}, "regression", ("svr", "l1")),
        Config(
            "svr-l2-primal",
            "LinearSVR",
            {"loss": "squared_epsilon_insensitive", "dual": False},
            "regression",
            ("svr", "l2"),
        ),
        Config(
            "svr-l2-dual",
            "LinearSVR",
            {"loss": "squared_epsilon_insensitive", "dual": True},
            "regression",
            ("svr", "l2"),
        ),
    ]


# Part 2: (label, estimator, params); C varies along the grid.
PATH_CONFIGS = (
    ("LinearSVC", {"dual": True}, ("ovr", 1, "l2")),
    ("LinearSVC", {"loss": "hinge", "dual": True}, ("ovr", 0, "l2")),
    ("LogisticRegression", {"solver": "liblinear", "dual": True}, ("ovr", 2, "l2")),
    ("LogisticRegression", {"solver": "liblinear"}, ("ovr", 2, "l2")),
)


# ---- data ------------------------------------------------------------------------------------


@dataclass
class Data:
    name: str
    X: sp.csr_matrix
    y: np.ndarray
    X_test: sp.csr_matrix | None
    y_test: np.ndarray | None
    classes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.classes = np.unique(self.y)

    @property
    def multiclass(self) -> bool:
        return self.classes.shape[0] > 2

    @property
    def shape(self) -> str:
        r, c = self.X.shape
        return f"{r} x {c}" + (f", {self.classes.shape[0]} cl" if self.multiclass else "")

    def describe(self) -> str:
        return f"{self.name}: {self.shape}, nnz {self.X.nnz}"


def _csr64(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return X


def load_data(name: str) -> Data | None:
    """A dataset as both tools see it (None if its training file is missing)."""
    import linsvm

    if name in REAL_DATASETS:
        ds = load_real(name)
        if ds is None:
            return None
        X_test = None if ds.X_test is None else _csr64(ds.X_test)
        return Data(name, _csr64(ds.X), ds.y, X_test, ds.y_test)
    path = find_data_file(name)
    if path is None:
        return None
    X, y = linsvm.read_libsvm(path)
    X = _csr64(X)
    y = np.asarray(y, dtype=np.float64)
    X_test = y_test = None
    test_path = find_data_file(OTHER_SETS[name])
    if test_path is not None:
        Xt, y_test = linsvm.read_libsvm(test_path)
        X_test = _csr64(match_columns(_csr64(Xt), X.shape[1]))
        y_test = np.asarray(y_test, dtype=np.float64)
    labels = np.unique(y)
    if labels.shape[0] == 2:  # -1/+1, as the binary sets above (LinearSVR's targets)
        y = to_pm1(y, labels[1])
        y_test = None if y_test is None else to_pm1(y_test, labels[1])
    return Data(name, X, y, X_test, y_test)


def applicable(cfg: Config, data: Data) -> bool:
    if cfg.sets == "multiclass":
        return data.multiclass
    if cfg.sets == "regression":
        return not data.multiclass
    return True


# ---- estimators --------------------------------------------------------------------------------


def sklearn_estimator(name: str, params: dict, multiclass: bool, **extra):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC, LinearSVR

    cls = {
        "LinearSVC": LinearSVC,
        "LinearSVR": LinearSVR,
        "LogisticRegression": LogisticRegression,
    }[name]
    est = cls(random_state=RANDOM_STATE, **params, **extra)
    if name == "LogisticRegression" and multiclass:
        return OneVsRestClassifier(est)
    return est


def linsvm_estimator(name: str, params: dict, **extra):
    import linsvm

    return getattr(linsvm, name)(random_state=RANDOM_STATE, **params, **extra)


def linsvm_available(name: str) -> str | None:
    """None if ``linsvm.<name>`` can be built; otherwise why not."""
    try:
        linsvm_estimator(name, {})
    except Exception as exc:  # the estimators land one at a time
        return f"{type(exc).__name__}: {exc}"
    return None


@dataclass
class Fit:
    seconds: float
    est: object
    converged: bool


def timed_fit(make, X, y) -> Fit:
    """Build an estimator, then time its ``fit`` alone; notes a ConvergenceWarning."""
    from sklearn.exceptions import ConvergenceWarning

    est = make()
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t0
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return Fit(seconds, est, converged)


def weights(est) -> tuple[np.ndarray, np.ndarray]:
    """(coef rows, intercepts): one row per binary sub-problem / class, or one for SVR."""
    if hasattr(est, "estimators_"):  # OneVsRestClassifier
        W = np.vstack([np.atleast_2d(e.coef_) for e in est.estimators_])
        b = np.concatenate([np.atleast_1d(e.intercept_) for e in est.estimators_])
    else:
        W = np.atleast_2d(est.coef_)
        b = np.atleast_1d(est.intercept_)
    return np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)


def primal_objectives(objective: tuple, data: Data, est, C: float) -> np.ndarray:
    """LIBLINEAR's primal objective at the estimator's coef_/intercept_ (bias regularised).

    One value per one-vs-rest sub-problem (classes_ order; one for a binary problem), or one
    value for Crammer-Singer and SVR.
    """
    from linsvm.objective import (
        cs_primal_value,
        l1_primal_value,
        primal_value,
        svr_primal_value,
    )

    X, y = data.X, data.y
    scaling = float(getattr(est, "intercept_scaling", 1.0))
    if hasattr(est, "estimators_"):
        scaling = float(est.estimators_[0].intercept_scaling)
    W, b = weights(est)
    W_full = np.ascontiguousarray(np.hstack([W, (b / scaling)[:, None]]))
    C_rows = np.full(y.shape[0], float(C))
    kind = objective[0]
    if kind == "svr":
        eps = float(getattr(est, "epsilon", 0.0))
        return np.array([svr_primal_value(X, scaling, y, C_rows, W_full[0], objective[1], eps)])
    if kind == "cs":
        cls = np.searchsorted(data.classes, y).astype(np.int64)
        Wt = np.ascontiguousarray(W_full.T)
        return np.array([cs_primal_value(X.indptr, X.indices, X.data, scaling, cls, C_rows, Wt)])
    _, loss, penalty = objective
    targets = data.classes[1:] if W_full.shape[0] == 1 else data.classes
    out = []
    for w, positive in zip(W_full, targets, strict=True):
        y_pm1 = np.where(y == positive, 1.0, -1.0)
        w = np.ascontiguousarray(w)
        if penalty == "l1":
            p = l1_primal_value(X.indptr, X.indices, X.data, scaling, y_pm1, C_rows, w, loss, True)
        else:
            p = primal_value(X.indptr, X.indices, X.data, scaling, y_pm1, C_rows, w, loss)
        out.append(p)
    return np.array(out, dtype=np.float64)


def max_rel_diff(p: np.ndarray, ref: np.ndarray) -> float:
    """The signed (p - ref)/|ref| of the entry with the largest magnitude."""
    p, ref = np.asarray(p, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if p.shape != ref.shape:
        return float("nan")
    rel = (p - ref) / np.maximum(np.abs(ref), 1e-300)
    return float(rel[np.argmax(np.abs(rel))])


def test_quality(est, data: Data, regression: bool) -> tuple[float, float] | None:
    """(accuracy, nan) for classifiers, (R^2, MSE) for regression, on the test split."""
    if data.X_test is None:
        return None
    if regression:
        pred = est.predict(data.X_test)
        mse = float(np.mean((pred - data.y_test) ** 2))
        ss = float(np.sum((data.y_test - data.y_test.mean()) ** 2))
        return 1.0 - mse * data.y_test.shape[0] / ss, mse
    return float(np.mean(est.predict(data.X_test) == data.y_test)), float("nan")


# ---- warm-up -----------------------------------------------------------------------------------


def warm_up(configs: list[Config], path: bool) -> float:
    """Fit every linsvm configuration on tiny problems: Numba compiles / loads its kernels.

    Tall and wide problems (dual="auto" resolves both ways), binary, 3-class and regression
    targets, both tolerances, and a warm-started refit.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    tall = _csr64(sp.random(300, 30, density=0.2, format="csr", random_state=1))
    wide = _csr64(sp.random(40, 120, density=0.2, format="csr", random_state=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for X in (tall, wide):
            n = X.shape[0]
            y2 = np.where(rng.random(n) < 0.5, 1.0, -1.0)
            y3 = rng.integers(1, 4, n).astype(np.float64)
            for cfg in configs:
                if cfg.sets == "regression":
                    targets = (y2 + 0.1 * rng.normal(size=n),)
                elif cfg.sets == "multiclass":
                    targets = (y3,)
                else:
                    targets = (y2, y3)
                for y in targets:
                    for extra in ({}, {"tol": "liblinear"}):
                        linsvm_estimator(cfg.estimator, cfg.params, **extra).fit(X, y)
            if path:
                for name, params, _ in PATH_CONFIGS:
                    est = linsvm_estimator(name, params, warm_start=True)
                    for C in (0.5, 2.0):
                        est.set_params(C=C).fit(X, y2)
    return time.perf_counter() - t0


# ---- part 1: fit time --------------------------------------------------------------------------

TOOLS = ("sklearn", "linsvm", "linsvm-ll")
TOOL_NAMES = {"sklearn": "scikit-learn", "linsvm": "linsvm", "linsvm-ll": 'linsvm tol="liblinear"'}


@dataclass
class Row:
    data: Data
    cfg: Config
    fits: dict = field(default_factory=dict)  # tool -> list[Fit]
    notes: list = field(default_factory=list)
    objectives: dict = field(default_factory=dict)  # tool -> array (from the first fit)
    quality: dict = field(default_factory=dict)  # tool -> (metric, mse) or None
    n_iter: dict = field(default_factory=dict)  # tool -> largest n_iter_ (from the first fit)

    def median(self, tool: str) -> float | None:
        fits = self.fits.get(tool)
        return median([f.seconds for f in fits]) if fits else None

    def speedup(self) -> float | None:
        sk, lin = self.median("sklearn"), self.median("linsvm")
        return sk / lin if sk and lin else None

    def miss(self) -> bool:
        sk, s = self.median("sklearn"), self.speedup()
        return sk is not None and sk >= SMALL_SECONDS and (s is None or s < TARGET_SPEEDUP)


def bench_row(data: Data, cfg: Config, args) -> Row:
    row = Row(data, cfg)
    multi = data.multiclass
    makers = {
        "sklearn": lambda: sklearn_estimator(cfg.estimator, cfg.params, multi),
        "linsvm": lambda: linsvm_estimator(cfg.estimator, cfg.params),
        "linsvm-ll": lambda: linsvm_estimator(cfg.estimator, cfg.params, tol="liblinear"),
    }
    if data.X.nnz <= FULL_WARMUP_MAX_NNZ:
        timed_fit(makers["linsvm"], data.X, data.y)  # untimed warm-up on the full data
    stopped = set()
    for r in range(args.repeats):
        for tool in TOOLS:
            if tool in stopped:
                continue
            fit = timed_fit(makers[tool], data.X, data.y)
            row.fits.setdefault(tool, []).append(fit)
            if r == 0:
                evaluate(row, tool, fit)
                if fit.seconds > args.max_fit_seconds:
                    stopped.add(tool)
                    row.notes.append(
                        f"{TOOL_NAMES[tool]}: first fit took {fmt_seconds(fit.seconds)} s "
                        f"(> --max-fit-seconds {args.max_fit_seconds:g}): 1 run"
                    )
            del fit
    hits = [
        f"{TOOL_NAMES[tool]} {sum(not f.converged for f in fits)}/{len(fits)}"
        for tool, fits in row.fits.items()
        if any(not f.converged for f in fits)
    ]
    if hits:
        iters = ", ".join(f"{TOOL_NAMES[t]} {n}" for t, n in row.n_iter.items())
        row.notes.append(
            "ConvergenceWarning (max_iter reached) in " + ", ".join(hits) + " fits; "
            f"n_iter_ (largest, first fit): {iters}"
        )
    # keep no estimator alive beyond this row (pypi-recent's are large)
    for fits in row.fits.values():
        for f in fits:
            f.est = None
    return row


def evaluate(row: Row, tool: str, fit: Fit) -> None:
    cfg, data = row.cfg, row.data
    P = primal_objectives(cfg.objective, data, fit.est, 1.0)
    if tool == "sklearn":
        row.objectives[tool] = P
    else:
        reported = np.asarray(fit.est.objective_, dtype=np.float64)
        row.objectives[tool] = reported
        diff = max_rel_diff(reported, P)
        if not np.isfinite(diff) or abs(diff) > OBJECTIVE_CHECK:
            row.notes.append(
                f"{TOOL_NAMES[tool]}: objective_ {_objective_text(reported)} differs from the "
                f"objective of its coef_/intercept_ {_objective_text(P)} (rel {diff:+.1e})"
            )
    row.quality[tool] = test_quality(fit.est, data, cfg.sets == "regression")
    row.n_iter[tool] = n_iterations(fit.est)


def n_iterations(est) -> int:
    """The largest ``n_iter_`` of an estimator (over the binary fits of a OneVsRestClassifier)."""
    if hasattr(est, "estimators_"):
        return max(n_iterations(e) for e in est.estimators_)
    return int(np.max(est.n_iter_))


def _objective_text(P: np.ndarray | None) -> str:
    if P is None:
        return "n/a"
    if P.shape[0] == 1:
        return f"{P[0]:.7g}"
    return f"sum {P.sum():.7g} ({P.shape[0]})"


def _signed(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    return f"{x:+.1e}"


def _quality_text(q, regression: bool) -> str:
    if q is None:
        return "n/a"
    if regression:
        return f"{q[0]:.4f} / {q[1]:.4f}"
    return f"{100 * q[0]:.2f}%"


def _time_text(row: Row, tool: str) -> str:
    t = row.median(tool)
    runs = len(row.fits.get(tool, []))
    return fmt_seconds(t) + (" (1 run)" if runs == 1 and t is not None else "")


def fit_table(rows: list[Row]) -> list[str]:
    out = []
    for row in rows:
        sk, lin, ll = (row.median(t) for t in TOOLS)
        regression = row.cfg.sets == "regression"
        if sk is None or sk < SMALL_SECONDS:
            mark = "(< 50 ms)"
        else:
            mark = "MISS" if row.miss() else "ok"
        P = row.objectives
        out.append(
            [
                row.data.name,
                row.data.shape,
                f"`{row.cfg.label}`",
                _time_text(row, "sklearn"),
                _time_text(row, "linsvm"),
                _ratio(lin, sk),
                _speedup(sk, lin),
                mark,
                _time_text(row, "linsvm-ll"),
                _ratio(ll, sk),
                _objective_text(P.get("sklearn")),
                _objective_text(P.get("linsvm")),
                _signed(_rel(P, "linsvm")),
                _signed(_rel(P, "linsvm-ll")),
                _quality_text(row.quality.get("sklearn"), regression),
                _quality_text(row.quality.get("linsvm"), regression),
                _quality_text(row.quality.get("linsvm-ll"), regression),
            ]
        )
    return markdown_table(
        [
            "dataset",
            "shape",
            "configuration",
            "sklearn s",
            "linsvm s",
            "ratio",
            "speedup",
            "1.5x target",
            'linsvm tol="liblinear" s',
            "ratio",
            "P sklearn",
            "P linsvm",
            "rel diff",
            'rel diff tol="liblinear"',
            "test sklearn",
            "test linsvm",
            'test tol="liblinear"',
        ],
        out,
        align=["l", "l", "l"] + ["r"] * 4 + ["l"] + ["r"] * 9,
    )


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if not a or not b else f"{a / b:.2f}"


def _speedup(sk: float | None, lin: float | None) -> str:
    return "n/a" if not sk or not lin else f"{sk / lin:.2f}x"


def _rel(P: dict, tool: str) -> float | None:
    if "sklearn" not in P or tool not in P:
        return None
    return max_rel_diff(P[tool], P["sklearn"])


def summary(rows: list[Row], configs: list[Config]) -> list[str]:
    out = []
    for cfg in configs:
        mine = [r for r in rows if r.cfg.key == cfg.key]
        if not mine:
            continue
        big = [r for r in mine if (r.median("sklearn") or 0) >= SMALL_SECONDS and r.speedup()]
        worst = min(big, key=lambda r: r.speedup()) if big else None
        misses = [r.data.name for r in mine if r.miss()]
        ll_big = [r for r in big if r.median("linsvm-ll")]
        ll_worst = (
            min(ll_big, key=lambda r: r.median("sklearn") / r.median("linsvm-ll"))
            if ll_big
            else None
        )
        out.append(
            [
                f"`{cfg.label}`",
                len(mine),
                len(big),
                f"{worst.speedup():.2f}x ({worst.data.name})" if worst else "n/a",
                ", ".join(misses) or "none",
                f"{ll_worst.median('sklearn') / ll_worst.median('linsvm-ll'):.2f}x "
                f"({ll_worst.data.name})"
                if ll_worst
                else "n/a",
            ]
        )
    return markdown_table(
        [
            "configuration",
            "datasets",
            "sklearn >= 50 ms",
            "smallest speedup there",
            "MISS (< 1.5x at >= 50 ms)",
            'smallest speedup, tol="liblinear"',
        ],
        out,
        align=["l", "r", "r", "r", "l", "r"],
    )


# ---- part 2: warm-started path -----------------------------------------------------------------


@dataclass
class PathRun:
    """One pass of one mode over (a prefix of) the grid."""

    seconds: list = field(default_factory=list)  # per C
    iters: list = field(default_factory=list)  # max(n_iter_) per C
    objectives: list = field(default_factory=list)  # array per C


@dataclass
class PathResult:
    data: Data
    label: str
    grid: tuple
    runs: dict = field(default_factory=dict)  # mode -> list[PathRun]; the first may be partial
    notes: list = field(default_factory=list)

    @property
    def done(self) -> int:
        """C values every mode fitted (the common prefix of the grid the table compares)."""
        return min((len(r[0].seconds) for r in self.runs.values()), default=0)

    def total(self, mode: str) -> float | None:
        """Median over runs of the time to fit the common prefix."""
        k = self.done
        totals = [sum(r.seconds[:k]) for r in self.runs.get(mode, []) if len(r.seconds) >= k]
        return median(totals) if totals and k else None

    def n_runs(self, mode: str) -> int:
        return len(self.runs.get(mode, []))

    def first(self, mode: str) -> PathRun:
        return self.runs.get(mode, [PathRun()])[0]


# linsvm cold first: it sets how far along the grid the budget allows; the other two modes then
# stop at the same C.
PATH_MODES = ("linsvm cold", "linsvm warm", "sklearn cold")


def run_path(mode, name, params, objective, data: Data, grid, budget: float, limit: int, first):
    """One pass over ``grid[:limit]``, stopping once ``budget`` seconds of fits are spent."""
    run = PathRun()
    warm = linsvm_estimator(name, params, warm_start=True) if mode == "linsvm warm" else None
    for C in grid[:limit]:
        if mode == "sklearn cold":

            def make(C=C):
                return sklearn_estimator(name, params, data.multiclass, C=C)

        elif mode == "linsvm cold":

            def make(C=C):
                return linsvm_estimator(name, params, C=C)

        else:

            def make(C=C):
                return warm.set_params(C=C)

        fit = timed_fit(make, data.X, data.y)
        run.seconds.append(fit.seconds)
        run.iters.append(int(np.max(fit.est.n_iter_)))
        if first:
            if mode == "sklearn cold":
                run.objectives.append(primal_objectives(objective, data, fit.est, C))
            else:
                run.objectives.append(np.asarray(fit.est.objective_, dtype=np.float64))
        del fit
        if sum(run.seconds) > budget:
            break
    return run


def bench_path(data: Data, name: str, params: dict, objective: tuple, args) -> PathResult:
    label = Config("", name, params, "", objective).label
    grid = args.grid
    res = PathResult(data, label, grid)
    limit = len(grid)
    for r in range(args.path_repeats):
        for mode in PATH_MODES:
            if r > 0:
                first = res.first(mode)
                if len(first.seconds) < len(grid) or sum(first.seconds) > args.max_fit_seconds:
                    continue  # a partial or slow path runs once
            run = run_path(
                mode, name, params, objective, data, grid, args.max_path_seconds, limit, r == 0
            )
            res.runs.setdefault(mode, []).append(run)
            if r == 0 and len(run.seconds) < limit:
                limit = len(run.seconds)
                res.notes.append(
                    f"{mode}: stopped after C = {grid[limit - 1]:g}, its fits having taken "
                    f"{fmt_seconds(sum(run.seconds))} s (> --max-path-seconds "
                    f"{args.max_path_seconds:g}); the path is compared up to that C"
                )
    return res


def path_table(results: list[PathResult], repeats: int) -> list[str]:
    out = []
    for res in results:
        k = res.done
        if k == 0:
            continue
        ow, oc, osk = (
            res.first(m).objectives for m in ("linsvm warm", "linsvm cold", "sklearn cold")
        )
        warm_cold = [max_rel_diff(ow[i], oc[i]) for i in range(k)]
        sk, cold, warm = (res.total(m) for m in ("sklearn cold", "linsvm cold", "linsvm warm"))

        def t(mode, value, res=res):
            runs = res.n_runs(mode)
            return fmt_seconds(value) + (" (1 run)" if runs == 1 and repeats > 1 else "")

        def iters(mode, res=res, k=k):
            return sum(res.first(mode).iters[:k])

        out.append(
            [
                res.data.name,
                f"`{res.label}`",
                f"{res.grid[0]:g} ... {res.grid[k - 1]:g} ({k})",
                t("sklearn cold", sk),
                t("linsvm cold", cold),
                t("linsvm warm", warm),
                _ratio(warm, cold),
                _speedup(sk, warm),
                f"{iters('linsvm warm')} / {iters('linsvm cold')} / {iters('sklearn cold')}",
                _signed(max(warm_cold, key=abs)),
                _signed(max_rel_diff(ow[k - 1], oc[k - 1])),
                _signed(max_rel_diff(ow[k - 1], osk[k - 1])),
            ]
        )
    return markdown_table(
        [
            "dataset",
            "configuration",
            "C (values)",
            "sklearn cold s",
            "linsvm cold s",
            "linsvm warm s",
            "warm / cold",
            "sklearn cold / linsvm warm",
            "iterations warm / cold / sklearn",
            "largest rel diff warm vs cold",
            "last C: warm vs cold",
            "last C: warm vs sklearn",
        ],
        out,
        align=["l", "l", "l"] + ["r"] * 9,
    )


# ---- report ------------------------------------------------------------------------------------


def report(rows, paths, configs, header, notes, args) -> list[str]:
    lines = list(header)
    lines += [
        "Times are medians of `fit` alone (seconds; `--repeats` runs unless noted). `ratio` is "
        "linsvm / scikit-learn (below 1: linsvm faster), `speedup` its inverse. Identical "
        "parameters on both sides: C = 1, `random_state=0`, everything else at scikit-learn's "
        "defaults (tol 1e-4; `max_iter` 1000 for LinearSVC / LinearSVR, 100 for "
        'LogisticRegression). `tol="liblinear"` is linsvm alone with LIBLINEAR\'s default '
        "tolerance for the solver (looser): it is not the same problem setting, so the 1.5x "
        "target is judged on the `linsvm s` column only; its objective shows what the looser "
        "tolerance costs.",
        "",
        "`P` is LIBLINEAR's primal objective with the bias weight intercept_/intercept_scaling "
        "regularised (`linsvm.objective`): linsvm's `objective_`, and the same function at "
        "scikit-learn's coef_/intercept_. For one-vs-rest on multi-class data `P` is the sum "
        "over the classes and `rel diff` = (P linsvm - P sklearn)/|P sklearn| of the class where "
        "they differ most (negative: linsvm's is lower). `test`: accuracy on the test split; "
        "for LinearSVR R^2 / mean squared error.",
        "",
        'scikit-learn\'s `LogisticRegression(solver="liblinear")` refuses more than two classes: '
        "on the multi-class sets it runs as `OneVsRestClassifier(LogisticRegression("
        'solver="liblinear"))` (one binary liblinear fit per class, like linsvm\'s one-vs-rest). '
        "LinearSVR runs on the binary sets with their -1/+1 labels as real targets (no "
        "regression set is available), epsilon = 0 (its default).",
        "",
    ]
    if rows:
        lines += ["## Summary", ""]
        lines += summary(rows, configs)
        lines.append("")
        misses = [r for r in rows if r.miss()]
        if misses:
            lines.append(
                f"{len(misses)} row(s) miss the 1.5x target where scikit-learn needs >= 50 ms: "
                + "; ".join(
                    f"{r.data.name} `{r.cfg.label}` "
                    f"({_speedup(r.median('sklearn'), r.median('linsvm'))})"
                    for r in misses
                )
                + "."
            )
        else:
            lines.append("Every row where scikit-learn needs >= 50 ms meets the 1.5x target.")
        lines.append("")
        for est in ("LinearSVC", "LogisticRegression", "LinearSVR"):
            mine = [r for r in rows if r.cfg.estimator == est]
            if not mine:
                continue
            lines += [f"## {est}: fit time", ""]
            lines += fit_table(mine)
            lines.append("")
    if paths:
        lines += [
            "## Warm-started path over C",
            "",
            f"C over {', '.join(f'{c:g}' for c in paths[0].grid)} in this order, other "
            "parameters as above (tol 1e-4). `linsvm warm`: one estimator with "
            "`warm_start=True`, then `set_params(C=C).fit(X, y)` for each C; `linsvm cold` and "
            "`sklearn cold`: a fresh estimator per C (scikit-learn's liblinear has no warm "
            "start). Times are the totals over the C values of the `C` column (median of "
            f"{args.path_repeats} runs unless noted; a path slower than --max-fit-seconds or cut "
            "short by --max-path-seconds runs once); iterations are the sums of `max(n_iter_)` "
            "over those C. Objectives (primal, as above): the signed relative difference of "
            "linsvm warm vs linsvm cold at each C (the largest in magnitude), and warm vs cold "
            "and warm vs scikit-learn at the last C.",
            "",
        ]
        lines += path_table(paths, args.path_repeats)
        lines.append("")
    row_notes = [f"{r.data.name} `{r.cfg.label}`: {n}" for r in rows for n in r.notes] + [
        f"path {p.data.name} `{p.label}`: {n}" for p in paths for n in p.notes
    ]
    all_notes = notes + row_notes
    if all_notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in all_notes]
    return lines


# ---- main --------------------------------------------------------------------------------------


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="splice and dna.scale, 2 repeats, 6 values of C: a smoke test",
    )
    p.add_argument(
        "--datasets", default=None, help="comma-separated among " + ", ".join(KNOWN_DATASETS)
    )
    keys = [c.key for c in configurations()]
    p.add_argument(
        "--configs", default=",".join(keys), help="comma-separated among " + ", ".join(keys)
    )
    p.add_argument("--repeats", type=int, default=None, help="timed fits per tool and row (5)")
    p.add_argument(
        "--max-fit-seconds",
        type=float,
        default=120.0,
        help="a tool whose first fit is slower is run once for that row; a path stops after "
        "a slower fit (120)",
    )
    p.add_argument(
        "--path-datasets",
        default=None,
        help="datasets of the C path (" + ",".join(PATH_DATASETS) + ")",
    )
    p.add_argument("--path-repeats", type=int, default=None, help="runs of each path (3)")
    p.add_argument(
        "--max-path-seconds",
        type=float,
        default=120.0,
        help="a path (one tool, one configuration) stops at the C where its fits have taken "
        "longer; the others stop at the same C (120)",
    )
    p.add_argument("--no-path", action="store_true", help="skip the warm-started C path")
    p.add_argument("--no-fit-table", action="store_true", help="skip part 1 (the fit-time table)")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-estimators.md"))
    args = p.parse_args(argv)

    def names(text, default, known):
        out = [d.strip() for d in (text or ",".join(default)).split(",") if d.strip()]
        bad = [d for d in out if d not in known]
        if bad:
            p.error(f"unknown datasets {bad}")
        return out

    args.datasets = names(
        args.datasets, ("splice", "dna.scale") if args.quick else DEFAULT_DATASETS, KNOWN_DATASETS
    )
    args.path_datasets = names(
        args.path_datasets, ("splice",) if args.quick else PATH_DATASETS, KNOWN_DATASETS
    )
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in args.configs if c not in keys]
    if bad:
        p.error(f"unknown configurations {bad}")
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.path_repeats = args.path_repeats or (1 if args.quick else 3)
    args.grid = QUICK_C_GRID if args.quick else C_GRID
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    notes: list[str] = []
    configs = [c for c in configurations() if c.key in args.configs]
    missing = {}
    for name in sorted({c.estimator for c in configs}):
        why = linsvm_available(name)
        if why:
            missing[name] = why
            notes.append(f"linsvm.{name} not available ({why}): its configurations skipped")
    configs = [c for c in configs if c.estimator not in missing]
    path_configs = [pc for pc in PATH_CONFIGS if pc[0] not in missing]
    if not args.no_path:
        for name in sorted({pc[0] for pc in path_configs}):
            try:
                linsvm_estimator(name, {}, warm_start=True)
            except TypeError as exc:
                notes.append(f"linsvm.{name} has no warm_start ({exc}): its paths skipped")
                path_configs = [pc for pc in path_configs if pc[0] != name]
    started = time.perf_counter()
    seconds = warm_up(configs, not args.no_path and bool(path_configs))
    notes.append(
        f"linsvm warm-up (every configuration on tiny problems: Numba cache loading or "
        f"compilation) took {seconds:.1f} s before any timing"
    )
    header = report_header(
        "linsvm's scikit-learn estimators vs scikit-learn",
        "bench_estimators",
        [
            f"repeats: {args.repeats} (median reported); a tool whose first fit exceeds "
            f"{args.max_fit_seconds:g} s runs once",
        ],
    )
    rows: list[Row] = []
    paths: list[PathResult] = []
    todo = list(dict.fromkeys(args.datasets + ([] if args.no_path else args.path_datasets)))
    for name in todo:
        in_fit = name in args.datasets and not args.no_fit_table
        in_path = name in args.path_datasets and not args.no_path and path_configs
        if not (in_fit or in_path):
            continue
        t0 = time.perf_counter()
        data = load_data(name)
        if data is None:
            notes.append(f"{name}: skipped, data file not found")
            continue
        print(
            f"{data.describe()} (loaded in {time.perf_counter() - t0:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        if in_fit:
            for cfg in configs:
                if not applicable(cfg, data):
                    continue
                t1 = time.perf_counter()
                row = bench_row(data, cfg, args)
                rows.append(row)
                print(
                    f"  {cfg.label}: sklearn {_time_text(row, 'sklearn')} s, linsvm "
                    f"{_time_text(row, 'linsvm')} s ({time.perf_counter() - t1:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        if in_path and not data.multiclass:
            for est_name, params, objective in path_configs:
                t1 = time.perf_counter()
                res = bench_path(data, est_name, params, objective, args)
                paths.append(res)
                print(
                    f"  path {res.label}: warm {fmt_seconds(res.total('linsvm warm'))} s, cold "
                    f"{fmt_seconds(res.total('linsvm cold'))} s "
                    f"({time.perf_counter() - t1:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        del data
        gc.collect()
    notes.append(f"total benchmark time {time.perf_counter() - started:.0f} s")
    order = {n: i for i, n in enumerate(args.datasets)}
    keys = {c.key: i for i, c in enumerate(configs)}
    rows.sort(key=lambda r: (keys[r.cfg.key], order.get(r.data.name, 0)))
    write_report(report(rows, paths, configs, header, notes, args), args.out)


if __name__ == "__main__":
    main()
