"""Degree-2 linear models against kernel SVMs and scikit-learn pipelines (the seed's tables).

Run from the repository root::

    python -m benchmarks.bench_poly2 [--quick]
        [--datasets a9a,ijcnn1,letter,pendigits,mushrooms,covtype,reuters] [--repeats 3]
        [--libsvm-repeats 1] [--methods ...] [--search]
        [--out benchmarks/RESULTS-poly2.md]

Per dataset, one row per method, each trained on the training file and scored on the test file
(mushrooms has none: a fixed seeded 80/20 split). Every method runs on one thread.

- linsvm linear: ``linsvm.train`` -s 1 and -s 3 on the raw features, C = 1, -B 1.
- linsvm degree 2: the kernel-scaled map ``FeatureMap(2, gamma, coef0)`` (phi(x)'phi(x') =
  (gamma x'x' + coef0)^2), -s 3 (the hinge loss, LIBSVM's problem) and -s 1, at the dataset's
  C, -B 1; the map materialised, run implicitly by the dual kernel, and hashed into
  2^hash_bits signed columns. Training time includes mapping; prediction maps the raw test rows.
- LIBSVM (libsvm-official): the polynomial kernel ``-t 1 -d 2 -g gamma -r coef0`` with the SAME
  gamma, coef0 and C as the degree-2 rows (so the same problem up to LIBSVM's unregularised
  bias), and the RBF kernel at its own (C, gamma); ``-m 1000 -q``, default ``-e 0.001``.
  Multi-class: LIBSVM is one-vs-one, linsvm and scikit-learn one-vs-rest.
- scikit-learn: ``PolynomialFeatures(degree=2)`` on the sparse rows, its columns scaled to the
  same kernel map, + ``LinearSVC(loss="hinge", C)`` (LIBLINEAR -s 3 with an intercept: the
  linsvm -s 3 problem, materialised by scikit-learn); ``Nystroem(kernel="rbf")`` and
  ``RBFSampler`` at the RBF gamma + ``LinearSVC(C_rbf)`` (its defaults: squared hinge).

Measured: training time (median of ``--repeats``; LIBSVM ``--libsvm-repeats``), prediction time
per test row (median; all test rows in one call; LIBSVM: its C ``svm_predict_values`` once a
row on rows converted to its nodes beforehand, so Python's loop is ~1 us of each row), test
accuracy, model size (bytes of the saved model file for linsvm and LIBSVM, text formats both;
the fitted arrays' ``nbytes`` for scikit-learn), and for the degree-2 rows the mapped columns
and the collisions of the hashed map on the training rows (``FeatureMap.collisions``).

Parameters: ``PARAMS`` below holds C, gamma, coef0 (poly) and C, gamma (RBF) per dataset,
chosen once by ``--search`` (what it does is in ``search_poly``/``search_rbf``); ``--search``
redoes it and runs with its picks. The run takes about 20 minutes on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from .common import (
    BENCH_DIR,
    find_data_file,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    match_columns,
    median,
    report_header,
    write_report,
)

# ---- datasets and parameters ----------------------------------------------------------------


@dataclass(frozen=True)
class DataSpec:
    """Where a dataset's files are, and the fixed choices that are not searched."""

    train: str
    test: str | None  # None: seeded 80/20 split of the training file
    hash_bits: int  # few collisions on its training rows (see the report's columns)
    n_components: int = 1000  # Nystroem / RBFSampler width
    note: str = ""


DATASETS: dict[str, DataSpec] = {
    "a9a": DataSpec("a9a", "a9a.t", 20),
    "ijcnn1": DataSpec("ijcnn1", "ijcnn1.t", 20),
    "letter": DataSpec("letter.scale", "letter.scale.t", 20),
    "pendigits": DataSpec("pendigits", "pendigits.t", 20),
    "mushrooms": DataSpec("mushrooms", None, 20, note="no test file: seeded 80/20 split"),
    "covtype": DataSpec("covtype", "covtype.t", 20),
    "reuters": DataSpec("reuters.trn", "reuters.tst", 24,
                        note="text: the exact map has 34.6 M columns, hashing only"),
}  # fmt: skip
DEFAULT_DATASETS = ("a9a", "ijcnn1", "letter", "pendigits", "mushrooms", "covtype", "reuters")
QUICK_DATASETS = ("mushrooms", "pendigits")
QUICK_ROWS = (2000, 1000)  # training, test rows in --quick
SPLIT_SEED = 0
# An exact map wider than this is not run: its w alone would be over 128 MiB a class, and the
# text model file a line per column (reuters: 34.6 M columns).
MAX_EXACT_COLUMNS = 2**24


@dataclass(frozen=True)
class Params:
    """The SVM parameters of one dataset: the poly kernel (and degree-2 map) and RBF."""

    C: float
    gamma: float
    coef0: float
    C_rbf: float
    gamma_rbf: float
    why: str = ""


# Picked by `--search` (validation accuracy on a held-out 20% of the training file; see
# search_poly / search_rbf; run of 2026-11-26 on this machine). coef0 = 1 throughout: (gamma,
# coef0, C) and (gamma/coef0, 1, C coef0^2) are the same problem up to the bias, so only gamma
# and C are searched. C = 10, the largest tried, won the degree-2 search everywhere (larger C
# slows both LIBSVM and the dual solvers: not tried); gamma sits at the grid's top on ijcnn1,
# letter and pendigits.
PARAMS: dict[str, Params] = {
    "a9a": Params(C=10.0, gamma=0.0216, coef0=1.0, C_rbf=1.0, gamma_rbf=0.0326,
                  why="Validation: degree-2 84.29%, RBF 84.70% (flat: 83.5-84.3% over the grid)."),
    "ijcnn1": Params(C=10.0, gamma=2.0, coef0=1.0, C_rbf=8.0, gamma_rbf=0.266,
                     why="Validation: degree-2 97.57%, RBF 94.65% (on 5000 rows)."),
    "letter": Params(C=10.0, gamma=0.961, coef0=1.0, C_rbf=8.0, gamma_rbf=2.59,
                     why="Validation: degree-2 93.43%, RBF 94.70% (on 5000 rows)."),
    "pendigits": Params(C=10.0, gamma=4.98e-5, coef0=1.0, C_rbf=1.0, gamma_rbf=6.63e-5,
                        why="Features 0..100, not scaled: hence the small gammas. "
                            "Validation: degree-2 99.80%, RBF 99.87%."),
    "mushrooms": Params(C=10.0, gamma=0.0143, coef0=1.0, C_rbf=8.0, gamma_rbf=0.0236,
                        why="Validation: 100% for both (linear too)."),
    "covtype": Params(C=1.0, gamma=1.0 / 54, coef0=1.0, C_rbf=1.0, gamma_rbf=1.0 / 54,
                      why="Not searched: no data."),
    "reuters": Params(C=10.0, gamma=0.1, coef0=1.0, C_rbf=8.0, gamma_rbf=0.258,
                      why="Searched on the exact map; run hashed. "
                          "Validation: degree-2 98.33%, RBF 98.20%."),
}  # fmt: skip
PARAMS_SOURCE = "PARAMS in the script (from one --search run, see each dataset's note)"


@dataclass
class Problem:
    name: str
    X: sp.csr_matrix
    y: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    spec: DataSpec
    note: str = ""

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.y).shape[0])

    def describe(self) -> str:
        rows, cols = self.X.shape
        return (f"{rows} x {cols}, {self.X.nnz / max(rows, 1):.1f} non-zeros a row, "
                f"{self.n_classes} classes, {self.X_test.shape[0]} test rows")  # fmt: skip


def split_rows(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded split of range(n): (first part, the other ``fraction``), each sorted."""
    perm = np.random.default_rng(seed).permutation(n)
    n_out = int(round(n * fraction))
    return np.sort(perm[n_out:]), np.sort(perm[:n_out])


def load_problem(name: str, quick: bool = False) -> tuple[Problem | None, str]:
    """The dataset ``name`` (None and a note when its files are missing)."""
    import linsvm

    spec = DATASETS[name]
    path = find_data_file(spec.train)
    if path is None:
        return None, (f"{name}: {spec.train} not in the shared data folder (not available, "
                      "see its PROVENANCE.md), skipped")
    X, y = linsvm.read_libsvm(path)
    note = spec.note
    if spec.test is None:
        keep, held = split_rows(X.shape[0], 0.2, SPLIT_SEED)
        X, y, X_test, y_test = X[keep], y[keep], X[held], y[held]
    else:
        test_path = find_data_file(spec.test)
        if test_path is None:
            return None, f"{name}: {spec.test} missing, skipped"
        X_test, y_test = linsvm.read_libsvm(test_path)
        X_test = match_columns(X_test, X.shape[1])
    if quick:
        rng = np.random.default_rng(SPLIT_SEED)
        tr = np.sort(rng.permutation(X.shape[0])[: QUICK_ROWS[0]])
        te = np.sort(rng.permutation(X_test.shape[0])[: QUICK_ROWS[1]])
        X, y, X_test, y_test = X[tr], y[tr], X_test[te], y_test[te]
        note = (note + "; " if note else "") + f"--quick: {len(tr)} / {len(te)} rows"
    return Problem(name, sp.csr_matrix(X), y, sp.csr_matrix(X_test), y_test, spec, note), ""


# ---- one measured method --------------------------------------------------------------------


@dataclass
class Result:
    """One row of a dataset's table."""

    method: str
    family: str  # "linear", "poly2", "libsvm", "sklearn"
    train_s: float | None = None
    predict_s: float | None = None  # whole test set
    n_test: int = 0
    accuracy: float | None = None  # percent
    model_bytes: int | None = None
    columns: int | None = None
    collisions: tuple[int, int] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def predict_row_s(self) -> float | None:
        return None if self.predict_s is None or self.n_test == 0 else self.predict_s / self.n_test


# Repeats stop once the calls so far took this long: a slow run's noise is a small part of it,
# and the whole benchmark stays near 20 minutes.
REPEAT_BUDGET_S = 15.0


def timed_repeats(fit: Callable[[], object], repeats: int) -> tuple[float, object]:
    """(median seconds, last result) of ``repeats`` calls, fewer past ``REPEAT_BUDGET_S``."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fit()
        times.append(time.perf_counter() - t0)
        if sum(times) > REPEAT_BUDGET_S:
            break
    return median(times), out


def accuracy(pred, y) -> float:
    return 100.0 * float(np.mean(np.asarray(pred).ravel() == np.asarray(y).ravel()))


def file_bytes(save: Callable[[str], None]) -> int:
    """The size of the file ``save(path)`` writes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model")
        save(path)
        return os.path.getsize(path)


# ---- linsvm ---------------------------------------------------------------------------------


def train_takes_feature_map() -> bool:
    """Whether ``linsvm.train`` takes ``feature_map=`` (else the map is materialised here)."""
    import linsvm

    return "feature_map" in inspect.signature(linsvm.train).parameters


class MappedModel:
    """A model trained on fm.transform(X) by this script, predicting on raw rows: the
    stand-in while ``linsvm.train`` has no ``feature_map``."""

    def __init__(self, model, fmap) -> None:
        self.model, self.fmap = model, fmap

    def predict(self, X, n_jobs: int | None = 1):
        return self.model.predict(self.fmap.transform(X, n_jobs=n_jobs), n_jobs=n_jobs)

    def save(self, path: str) -> None:
        self.model.save(path)


def fit_linsvm(X, y, solver: int, C: float, fmap=None, mode: str = "materialise"):
    """A linsvm model on one thread, -B 1; with ``fmap`` trained on phi(X) in ``mode``."""
    import linsvm

    if fmap is None:
        return linsvm.train(X, y, solver=solver, C=C, bias=1.0, n_jobs=1)
    if train_takes_feature_map():
        return linsvm.train(X, y, solver=solver, C=C, bias=1.0, n_jobs=1, feature_map=fmap,
                            map_mode=mode)  # fmt: skip
    if mode != "materialise":
        raise NotImplementedError("linsvm.train has no feature_map yet: only materialised runs")
    bound = fmap.bind(X.shape[1])
    return MappedModel(linsvm.train(bound.transform(X, n_jobs=1), y, solver=solver, C=C,
                                    bias=1.0, n_jobs=1), bound)  # fmt: skip


def run_linsvm(p: Problem, method: str, family: str, solver: int, C: float, repeats: int,
               fmap=None, mode: str = "materialise") -> Result:  # fmt: skip
    import linsvm

    res = Result(method, family, n_test=p.X_test.shape[0])
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", linsvm.ConvergenceWarning)
            res.train_s, model = timed_repeats(lambda: fit_linsvm(p.X, p.y, solver, C, fmap,
                                                                  mode), repeats)  # fmt: skip
        if any(issubclass(w.category, linsvm.ConvergenceWarning) for w in caught):
            res.notes.append("hit the iteration cap")
    except (NotImplementedError, linsvm.LinsvmError) as exc:
        res.notes.append(f"not run: {exc}")
        return res
    res.predict_s, pred = timed_repeats(lambda: model.predict(p.X_test, n_jobs=1), repeats)
    res.accuracy = accuracy(pred, p.y_test)
    res.model_bytes = file_bytes(model.save)
    if fmap is not None:
        bound = fmap.bind(p.X.shape[1])
        res.columns = bound.n_output
        if bound.hash_bits is not None:
            res.collisions = bound.collisions(p.X)
    return res


# ---- LIBSVM ---------------------------------------------------------------------------------


def libsvm_available() -> bool:
    try:
        import libsvm.svm  # noqa: F401
    except ImportError:
        return False
    return True


def libsvm_options(kernel: str, C: float, gamma: float, coef0: float = 0.0) -> str:
    """LIBSVM's C-SVC options: ``kernel`` "poly2" (degree 2) or "rbf"; cache 1000 MB, quiet."""
    if kernel == "poly2":
        return f"-s 0 -t 1 -d 2 -g {gamma:.17g} -r {coef0:.17g} -c {C:.17g} -m 1000 -q"
    if kernel == "rbf":
        return f"-s 0 -t 2 -g {gamma:.17g} -c {C:.17g} -m 1000 -q"
    raise ValueError(kernel)


def libsvm_fit(X: sp.csr_matrix, y: np.ndarray, options: str):
    """(model, problem) of LIBSVM's svm_train; the model's support vectors live in the
    problem's memory, so keep both."""
    from libsvm.svm import svm_parameter, svm_problem
    from libsvm.svmutil import svm_train

    prob = svm_problem(np.asarray(y, dtype=np.float64), sp.csr_matrix(X, dtype=np.float64))
    return svm_train(prob, svm_parameter(options)), prob


def libsvm_predict(model, X: sp.csr_matrix) -> tuple[float, np.ndarray]:
    """(seconds, labels): LIBSVM's C predictor once a row on rows converted beforehand."""
    from ctypes import c_double

    from libsvm.svm import libsvm as libsvm_c
    from libsvm.svm import svm_problem

    rows = svm_problem(np.zeros(X.shape[0]), sp.csr_matrix(X, dtype=np.float64))
    n_class = model.get_nr_class()
    values = (c_double * max(1, n_class * (n_class - 1) // 2))()
    predict_values = libsvm_c.svm_predict_values
    out = np.empty(X.shape[0])
    t0 = time.perf_counter()
    for i in range(X.shape[0]):
        out[i] = predict_values(model, rows.x[i], values)
    return time.perf_counter() - t0, out


LIBSVM_TIMING_ROWS = 2000


def run_libsvm(p: Problem, method: str, options: str, repeats: int,
               predict_repeats: int) -> Result:  # fmt: skip
    """LIBSVM trained ``repeats`` times; prediction timed over the whole test set once (its
    accuracy) and ``predict_repeats - 1`` more times over its first ``LIBSVM_TIMING_ROWS``
    rows: the median time a row of these passes."""
    from libsvm.svmutil import svm_save_model

    res = Result(method, "libsvm", n_test=p.X_test.shape[0])
    # the problem (LIBSVM's copy of the data) is built inside the timing: about 1% of a fit
    res.train_s, (model, prob) = timed_repeats(lambda: libsvm_fit(p.X, p.y, options), repeats)
    seconds, pred = libsvm_predict(model, p.X_test)
    per_row = [seconds / res.n_test]
    head = p.X_test[:LIBSVM_TIMING_ROWS]
    for _ in range(predict_repeats - 1):
        per_row.append(libsvm_predict(model, head)[0] / head.shape[0])
    res.predict_s = median(per_row) * res.n_test
    res.accuracy = accuracy(pred, p.y_test)
    res.model_bytes = file_bytes(lambda path: svm_save_model(path, model))
    res.notes.append(f"{model.get_nr_sv()} SVs")
    if p.n_classes > 2:
        res.notes.append("one-vs-one")
    del prob
    return res


# ---- scikit-learn ---------------------------------------------------------------------------


def kernel_scales(powers: np.ndarray, gamma: float, coef0: float) -> np.ndarray:
    """Column factors turning PolynomialFeatures(degree=2)'s columns (``powers``: its
    ``powers_``, one row per column) into the kernel map, phi(x)'phi(x') = (gamma x'x' + coef0)^2:
    constant coef0, x_j sqrt(2 gamma coef0), x_j^2 gamma, x_j x_k sqrt(2) gamma."""
    powers = np.asarray(powers)
    degree = powers.sum(axis=1)
    n_terms = (powers > 0).sum(axis=1)
    scale = np.empty(powers.shape[0])
    scale[degree == 0] = coef0
    scale[degree == 1] = math.sqrt(2.0 * gamma * coef0)
    scale[(degree == 2) & (n_terms == 1)] = gamma
    scale[(degree == 2) & (n_terms == 2)] = math.sqrt(2.0) * gamma
    return scale


def make_sklearn_pipeline(kind: str, prm: Params, n_components: int = 1000, seed: int = 0):
    """The scikit-learn pipeline ``kind``: "poly2", "nystroem" or "rbf-sampler"."""
    from sklearn.base import BaseEstimator, TransformerMixin
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures
    from sklearn.svm import LinearSVC

    if kind == "poly2":

        class KernelScaledPoly2(TransformerMixin, BaseEstimator):
            """PolynomialFeatures(degree=2) with its columns scaled to the poly kernel's map."""

            def __init__(self, gamma: float = 1.0, coef0: float = 1.0) -> None:
                self.gamma, self.coef0 = gamma, coef0

            def fit(self, X, y=None):
                self.poly_ = PolynomialFeatures(degree=2).fit(X)
                self.scale_ = kernel_scales(self.poly_.powers_, self.gamma, self.coef0)
                return self

            def transform(self, X):
                Z = self.poly_.transform(X)
                return sp.csr_matrix(Z.multiply(self.scale_[None, :])) if sp.issparse(Z) \
                    else Z * self.scale_

        return make_pipeline(KernelScaledPoly2(prm.gamma, prm.coef0),
                             LinearSVC(C=prm.C, loss="hinge", dual=True, random_state=seed))
    if kind == "nystroem":
        return make_pipeline(Nystroem(kernel="rbf", gamma=prm.gamma_rbf, n_components=n_components,
                                      random_state=seed),
                             LinearSVC(C=prm.C_rbf, random_state=seed))  # fmt: skip
    if kind == "rbf-sampler":
        return make_pipeline(RBFSampler(gamma=prm.gamma_rbf, n_components=n_components,
                                        random_state=seed),
                             LinearSVC(C=prm.C_rbf, random_state=seed))  # fmt: skip
    raise ValueError(kind)


def fitted_nbytes(estimator) -> int:
    """Bytes of the fitted arrays (attributes ending in '_') of an estimator or pipeline,
    nested estimators included."""
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        return sum(fitted_nbytes(step) for _, step in estimator.steps)
    total = 0
    for name, value in vars(estimator).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif sp.issparse(value):
            total += sum(getattr(value, a).nbytes for a in ("data", "indices", "indptr")
                         if hasattr(value, a))  # fmt: skip
        elif hasattr(value, "get_params") and hasattr(value, "fit"):
            total += fitted_nbytes(value)
    return total


def run_sklearn(p: Problem, method: str, kind: str, prm: Params, repeats: int) -> Result:
    from sklearn.exceptions import ConvergenceWarning

    res = Result(method, "sklearn", n_test=p.X_test.shape[0])
    n_comp = min(p.spec.n_components, p.X.shape[0])

    def fit():
        return make_sklearn_pipeline(kind, prm, n_comp).fit(p.X, p.y)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        res.train_s, pipe = timed_repeats(fit, repeats)
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        res.notes.append("LinearSVC hit max_iter=1000")
    res.predict_s, pred = timed_repeats(lambda: pipe.predict(p.X_test), repeats)
    res.accuracy = accuracy(pred, p.y_test)
    res.model_bytes = fitted_nbytes(pipe)
    if kind == "poly2":
        res.columns = int(pipe[0].poly_.n_output_features_)
    else:
        res.columns = n_comp
    return res


# ---- the parameter search -------------------------------------------------------------------


def mean_sq_norm(X: sp.csr_matrix) -> float:
    return float(X.multiply(X).sum() / max(X.shape[0], 1))


def mean_sq_distance(X: sp.csr_matrix, pairs: int = 2000, seed: int = 0) -> float:
    """Mean ||x_i - x_j||^2 over random pairs of rows."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, X.shape[0], pairs)
    b = rng.integers(0, X.shape[0], pairs)
    D = X[a] - X[b]
    return float(D.multiply(D).sum() / pairs)


POLY_SCALE_GRID = (0.1, 0.3, 1.0, 3.0)  # gamma * mean ||x||^2
POLY_C_GRID = (0.1, 1.0, 10.0)
RBF_SCALE_GRID = (0.5, 2.0, 8.0)  # gamma * mean ||x - x'||^2
RBF_C_GRID = (1.0, 8.0, 64.0)
RBF_SEARCH_ROWS = (5000, 2000)


def search_poly(p: Problem) -> tuple[tuple[float, float], list[list[object]]]:
    """((C, gamma), table): the degree-2 map (coef0 = 1) by linsvm -s 3, trained on a seeded
    80% of the training rows and scored on the rest, over gamma = s / mean ||x||^2 and C on
    ``POLY_*_GRID`` (hashed where the exact map is too wide). The same problem as LIBSVM's
    poly kernel, at a fraction of its cost. The best accuracy wins; ties keep the first found
    (the smaller gamma, then the smaller C)."""
    from linsvm.features.maps import FeatureMap

    keep, held = split_rows(p.X.shape[0], 0.2, SPLIT_SEED + 1)
    Xa, ya, Xb, yb = p.X[keep], p.y[keep], p.X[held], p.y[held]
    msn = mean_sq_norm(Xa)
    exact, _, _ = poly2_maps(p, Params(1.0, 1.0, 1.0, 1.0, 1.0))
    hash_bits = None if exact is not None else p.spec.hash_bits
    rows, best = [], None
    for s in POLY_SCALE_GRID:
        gamma = float(f"{s / msn:.3g}")
        for C in POLY_C_GRID:
            t0 = time.perf_counter()
            fmap = FeatureMap(2, gamma=gamma, coef0=1.0, hash_bits=hash_bits)
            model = fit_linsvm(Xa, ya, 3, C, fmap)
            acc = accuracy(model.predict(Xb), yb)
            rows.append([f"{gamma:.3g}", f"{C:g}", f"{acc:.2f}",
                         fmt_seconds(time.perf_counter() - t0)])  # fmt: skip
            print(f"  {p.name} search poly: gamma {gamma:.3g}, C {C:g}: {acc:.2f}%",
                  flush=True)
            if best is None or acc > best[0] + 1e-9:
                best = (acc, C, gamma)
    return (best[1], best[2]), rows


def search_rbf(p: Problem) -> tuple[tuple[float, float], list[list[object]]]:
    """((C, gamma), table): LIBSVM's RBF on at most 5000 of a seeded 80% of the training rows,
    scored on at most 2000 of the rest, gamma = s / mean ||x - x'||^2 and C on ``RBF_*_GRID``."""
    keep, held = split_rows(p.X.shape[0], 0.2, SPLIT_SEED + 1)
    keep, held = keep[: RBF_SEARCH_ROWS[0]], held[: RBF_SEARCH_ROWS[1]]
    Xa, ya, Xb, yb = p.X[keep], p.y[keep], p.X[held], p.y[held]
    msd = mean_sq_distance(Xa)
    rows, best = [], None
    for s in RBF_SCALE_GRID:
        gamma = float(f"{s / msd:.3g}")
        for C in RBF_C_GRID:
            t0 = time.perf_counter()
            model, prob = libsvm_fit(Xa, ya, libsvm_options("rbf", C, gamma))
            acc = accuracy(libsvm_predict(model, Xb)[1], yb)
            rows.append([f"{gamma:.3g}", f"{C:g}", f"{acc:.2f}",
                         fmt_seconds(time.perf_counter() - t0)])  # fmt: skip
            print(f"  {p.name} search rbf: gamma {gamma:.3g}, C {C:g}: {acc:.2f}%",
                  flush=True)
            if best is None or acc > best[0] + 1e-9:
                best = (acc, C, gamma)
    return (best[1], best[2]), rows


# ---- one dataset ----------------------------------------------------------------------------

METHODS = ("linear", "poly2", "modes", "libsvm-poly", "libsvm-rbf", "sk-poly2", "sk-nystroem",
           "sk-rbf-sampler")  # fmt: skip


def poly2_maps(p: Problem, prm: Params):
    """(exact map or None with the reason, hashed map) of the dataset's degree-2 rows."""
    from linsvm.features.maps import FeatureMap

    exact = FeatureMap(2, gamma=prm.gamma, coef0=prm.coef0)
    hashed = FeatureMap(2, gamma=prm.gamma, coef0=prm.coef0, hash_bits=p.spec.hash_bits)
    width = exact.bind(p.X.shape[1]).n_output if p.X.shape[1] < 2**15 else None
    if width is None or width > MAX_EXACT_COLUMNS:
        cols = f"{width:,}" if width else "over 2^28"
        return None, hashed, f"exact map too wide ({cols} columns)"
    return exact, hashed, ""


MODE_NAMES = {"materialise": "materialised", "implicit": "implicit"}


def bench_dataset(p: Problem, prm: Params, methods: set[str], repeats: int,
                  libsvm_repeats: int) -> tuple[list[Result], dict, list[str]]:  # fmt: skip
    """(rows of the main table, map-mode results keyed (solver, map, mode), notes)."""
    results: list[Result] = []
    modes: dict[tuple[int, str, str], Result] = {}
    notes: list[str] = []
    exact, hashed, why = poly2_maps(p, prm)
    if why:
        notes.append(why + ": the degree-2 rows use the hashed map only")

    def log(r: Result) -> Result:
        print(f"  {p.name} {r.method}: train {fmt_seconds(r.train_s)} s, "
              f"acc {r.accuracy if r.accuracy is None else round(r.accuracy, 2)} "
              f"{'; '.join(r.notes)}", flush=True)  # fmt: skip
        return r

    if "linear" in methods:
        for s in (1, 3):
            results.append(log(run_linsvm(p, f"linsvm linear -s {s}", "linear", s, 1.0, repeats)))
    if "poly2" in methods or "modes" in methods:
        solvers = (3, 1) if "modes" in methods else (3,)
        for s in solvers:
            for map_name, fmap in (("exact", exact), ("hashed", hashed)):
                if fmap is None:
                    continue
                for mode in ("materialise", "implicit"):
                    label = (f"linsvm poly2 -s {s} {map_name if map_name == 'hashed' else ''} "
                             f"{MODE_NAMES[mode]}").replace("  ", " ")  # fmt: skip
                    if map_name == "hashed":
                        label += f" (2^{fmap.hash_bits})"
                    r = log(run_linsvm(p, label, "poly2", s, prm.C, repeats, fmap, mode))
                    modes[(s, map_name, mode)] = r
                    if s == 3 and "poly2" in methods:
                        results.append(r)
    if libsvm_available():
        if "libsvm-poly" in methods:
            results.append(log(run_libsvm(
                p, "LIBSVM poly2 kernel", libsvm_options("poly2", prm.C, prm.gamma, prm.coef0),
                libsvm_repeats, repeats)))  # fmt: skip
        if "libsvm-rbf" in methods:
            results.append(log(run_libsvm(
                p, "LIBSVM RBF kernel", libsvm_options("rbf", prm.C_rbf, prm.gamma_rbf),
                libsvm_repeats, repeats)))  # fmt: skip
    elif methods & {"libsvm-poly", "libsvm-rbf"}:
        notes.append("LIBSVM rows skipped: libsvm-official is not installed")
    for kind, key, label in (("poly2", "sk-poly2", "sklearn PolynomialFeatures + LinearSVC"),
                             ("nystroem", "sk-nystroem", "sklearn Nystroem + LinearSVC"),
                             ("rbf-sampler", "sk-rbf-sampler", "sklearn RBFSampler + LinearSVC")):
        if key in methods:
            if kind == "poly2" and exact is None:
                results.append(Result(label, "sklearn", notes=["not run: " + why]))
                continue
            results.append(log(run_sklearn(p, label, kind, prm, repeats)))
    return results, modes, notes


# ---- report ---------------------------------------------------------------------------------


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "n/a"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def fmt_us(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    us = seconds * 1e6
    return f"{us:.3g}" if us < 1000 else f"{us:,.0f}"


def fmt_acc(a: float | None) -> str:
    return "n/a" if a is None else f"{a:.2f}"


def fmt_collisions(r: Result) -> str:
    if r.collisions is None:
        return ""
    distinct, occupied = r.collisions
    return f"{distinct - occupied} of {distinct}"


def find(results: list[Result], prefix: str) -> Result | None:
    for r in results:
        if r.method.startswith(prefix) and r.train_s is not None:
            return r
    return None


def reference_poly2(results: list[Result]) -> Result | None:
    """The degree-2 row the targets are judged on: -s 3, exact map materialised (the map mode
    the run recommends is judged in the modes table), else the hashed one."""
    return (find(results, "linsvm poly2 -s 3 materialised")
            or find(results, "linsvm poly2 -s 3 hashed materialised"))


def dataset_lines(p: Problem, prm: Params, results: list[Result], notes: list[str]) -> list[str]:
    lines = [f"### {p.name}", "", f"{p.describe()}" + (f"; {p.note}" if p.note else "") + ".",
             f"Poly kernel / degree-2 map: C = {prm.C:g}, gamma = {prm.gamma:.3g}, "
             f"coef0 = {prm.coef0:g}; RBF: C = {prm.C_rbf:g}, gamma = {prm.gamma_rbf:.3g}."
             + (f" {prm.why}" if prm.why else ""), ""]  # fmt: skip
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    ref = reference_poly2(results)
    rows = []
    for r in results:
        is_ref = r is ref
        rows.append([
            ("**" + r.method + "**") if is_ref else r.method, fmt_seconds(r.train_s),
            fmt_us(r.predict_row_s), fmt_acc(r.accuracy), fmt_bytes(r.model_bytes),
            "" if r.columns is None else f"{r.columns:,}", fmt_collisions(r),
            fmt_ratio(ref.train_s, r.train_s) if ref and r.train_s and not is_ref else "",
            fmt_ratio(ref.predict_row_s, r.predict_row_s) if ref and r.predict_s and not is_ref
            else "", "; ".join(r.notes),
        ])  # fmt: skip
    lines += markdown_table(
        ["method", "train s", "predict us/row", "accuracy %", "model", "columns",
         "collisions", "train: poly2 / this", "predict: poly2 / this", "notes"],
        rows, ["l", "r", "r", "r", "r", "r", "r", "r", "r", "l"])  # fmt: skip
    lines.append("")
    return lines


def targets(results: list[Result]) -> list[tuple[str, str, str]]:
    """(target, measured, holds) for one dataset."""
    ref = reference_poly2(results)
    out = []
    if ref is None:
        return [("degree-2 linear", "not run", "n/a")]
    poly = find(results, "LIBSVM poly2")
    if poly is not None:
        gap = ref.accuracy - poly.accuracy
        out.append(("accuracy within 0.5 points of LIBSVM poly2",
                    f"{ref.accuracy:.2f} vs {poly.accuracy:.2f} ({gap:+.2f})",
                    "yes" if gap >= -0.5 else "NO"))  # fmt: skip
        tr = ref.train_s / poly.train_s
        out.append(("training >= 10x faster than LIBSVM poly2", f"ratio {tr:.3g}",
                    "yes" if tr <= 0.1 else "NO"))  # fmt: skip
        pr = ref.predict_row_s / poly.predict_row_s
        out.append(("prediction >= 100x faster than LIBSVM poly2", f"ratio {pr:.3g}",
                    "yes" if pr <= 0.01 else "NO"))  # fmt: skip
    rbf = find(results, "LIBSVM RBF")
    if rbf is not None:
        out.append(("(beside) LIBSVM RBF", f"accuracy {rbf.accuracy:.2f}, train ratio "
                    f"{ref.train_s / rbf.train_s:.3g}, predict ratio "
                    f"{ref.predict_row_s / rbf.predict_row_s:.3g}", ""))  # fmt: skip
    sk = find(results, "sklearn PolynomialFeatures")
    if sk is not None:
        tr = ref.train_s / sk.train_s
        equal = ref.accuracy >= sk.accuracy - 0.5
        out.append(("faster than scikit-learn's PolynomialFeatures + LinearSVC at equal accuracy",
                    f"train ratio {tr:.3g}, accuracy {ref.accuracy:.2f} vs {sk.accuracy:.2f}",
                    "yes" if tr < 1 and equal else "NO"))  # fmt: skip
    return out


def mode_lines(all_modes: dict[str, dict]) -> list[str]:
    rows = []
    for name, modes in all_modes.items():
        for s in (3, 1):
            cells = []
            times = {}
            for map_name in ("exact", "hashed"):
                for mode in ("materialise", "implicit"):
                    r = modes.get((s, map_name, mode))
                    if r is None or r.train_s is None:
                        cells.append("n/a")
                        continue
                    times[(map_name, mode)] = r.train_s
                    cells.append(f"{fmt_seconds(r.train_s)} ({fmt_acc(r.accuracy)})")
            if not times:
                continue
            win = min(times, key=times.get)
            rows.append([name, f"-s {s}", *cells, f"{win[0]} {MODE_NAMES[win[1]]}"])
    if not rows:
        return []
    lines = ["## Map modes: materialised vs implicit vs hashed", "",
             "Training time in seconds (test accuracy %) of the degree-2 rows, on one thread, "
             "mapping included: the exact map materialised as CSR and then trained, the dual "
             "kernel forming phi(x_i) on the fly (implicit), and the same two for the hashed map.",
             ""]  # fmt: skip
    lines += markdown_table(["dataset", "solver", "exact materialised", "exact implicit",
                             "hashed materialised", "hashed implicit", "fastest"], rows)
    lines.append("")
    return lines


def search_lines(searches: dict[str, dict]) -> list[str]:
    if not searches:
        return []
    lines = ["## Parameter search (--search)", "",
             "Held-out 20% of the training file (seeded). Degree-2: linsvm -s 3 on the map "
             "(coef0 = 1), gamma = s / mean ||x||^2, s in "
             f"{POLY_SCALE_GRID}, C in {POLY_C_GRID}. RBF: LIBSVM on at most "
             f"{RBF_SEARCH_ROWS[0]} / {RBF_SEARCH_ROWS[1]} of those rows, gamma = s / mean "
             f"||x - x'||^2, s in {RBF_SCALE_GRID}, C in {RBF_C_GRID}. Highest validation "
             "accuracy wins (first found on ties: smaller gamma, then smaller C).", ""]  # fmt: skip
    for name, found in searches.items():
        lines.append(f"{name}: degree-2 picks C = {found['poly'][0]:g}, gamma = "
                     f"{found['poly'][1]:.3g}; RBF picks C = {found['rbf'][0]:g}, gamma = "
                     f"{found['rbf'][1]:.3g}")  # fmt: skip
        lines.append("")
        lines += markdown_table(["gamma", "C", "validation acc %", "s"], found["poly_rows"])
        lines.append("")
        if found["rbf_rows"]:
            lines += markdown_table(["RBF gamma", "C", "validation acc %", "s"],
                                    found["rbf_rows"])  # fmt: skip
            lines.append("")
    return lines


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help=f"{','.join(QUICK_DATASETS)} cut to {QUICK_ROWS[0]} training / "
                        f"{QUICK_ROWS[1]} test rows, 1 repeat")  # fmt: skip
    p.add_argument("--datasets", default=None)
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"comma-separated subset of {','.join(METHODS)}")
    p.add_argument("--repeats", type=int, default=None, help="linsvm and scikit-learn (3)")
    p.add_argument("--libsvm-repeats", type=int, default=1)
    p.add_argument("--search", action="store_true",
                   help="choose C and gamma per dataset on held-out rows first and use them")
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-poly2.md"))
    args = p.parse_args(argv)
    names = (args.datasets.split(",") if args.datasets
             else list(QUICK_DATASETS if args.quick else DEFAULT_DATASETS))  # fmt: skip
    methods = set(args.methods.split(","))
    unknown = methods - set(METHODS) | {n for n in names if n not in DATASETS}
    if unknown:
        p.error(f"unknown method or dataset: {', '.join(sorted(unknown))}")
    repeats = args.repeats or (1 if args.quick else 3)
    warm_up()
    t_start = time.perf_counter()
    sections: list[str] = []
    all_targets: list[list[object]] = []
    all_modes: dict[str, dict] = {}
    searches: dict[str, dict] = {}
    skipped: list[str] = []
    for name in names:
        prob, why = load_problem(name, args.quick)
        if prob is None:
            print(why, flush=True)
            skipped.append(why)
            continue
        prm = PARAMS[name]
        if args.search:
            (C, gamma), poly_rows = search_poly(prob)
            rbf_pick, rbf_rows = ((prm.C_rbf, prm.gamma_rbf), [])
            if libsvm_available():
                rbf_pick, rbf_rows = search_rbf(prob)
            searches[name] = {"poly": (C, gamma), "poly_rows": poly_rows, "rbf": rbf_pick,
                              "rbf_rows": rbf_rows}  # fmt: skip
            prm = replace(prm, C=C, gamma=gamma, coef0=1.0, C_rbf=rbf_pick[0],
                          gamma_rbf=rbf_pick[1], why="(from this run's --search)")  # fmt: skip
            print(f"{name}: search picked {prm}", flush=True)
        print(f"{name}: {prob.describe()}", flush=True)
        results, modes, notes = bench_dataset(prob, prm, methods, repeats, args.libsvm_repeats)
        sections += dataset_lines(prob, prm, results, notes)
        all_modes[name] = modes
        for target, measured, holds in targets(results):
            all_targets.append([name, target, measured, holds])
    minutes = (time.perf_counter() - t_start) / 60
    lines = report_header(
        "Degree-2 linear models vs kernel SVMs and scikit-learn pipelines", "bench_poly2",
        [f"repeats: {repeats} (median) for linsvm and scikit-learn, {args.libsvm_repeats} for "
         f"LIBSVM training, fewer once a method's runs pass {REPEAT_BUDGET_S:g} s; "
         f"everything on one thread; the run took {minutes:.1f} min",
         f"libsvm-official {package_version_safe('libsvm-official')}; linsvm.train "
         + ("takes feature_map" if train_takes_feature_map() else
            "has no feature_map yet: degree-2 rows materialised by this script, implicit "
            "rows not run"),
         f"parameters: {'this run --search' if args.search else PARAMS_SOURCE}"],
    )  # fmt: skip
    lines += [
        "Each dataset: training time (mapping included), prediction time per test row (all "
        "test rows in one call; LIBSVM: its C predictor once a row, rows converted to its "
        "nodes beforehand), test accuracy, model size (saved model file for linsvm and "
        "LIBSVM, both text; fitted arrays' bytes for scikit-learn), mapped columns and hash "
        "collisions on the training rows (mapped features sharing a column with another, of "
        "the distinct mapped features). The **bold** row is the degree-2 model the targets "
        "are judged on (-s 3, the hinge loss LIBSVM solves, exact map materialised; the "
        "hashed one where the exact map is too wide); the ratio columns are that row's time "
        "over each row's (below 1: linsvm degree-2 faster). linsvm: -B 1, default eps (0.1), "
        "one-vs-rest; LIBSVM: C-SVC, -e 0.001, one-vs-one on multi-class sets; "
        "scikit-learn: LinearSVC (one-vs-rest, intercept), its PolynomialFeatures columns "
        "scaled to the same kernel map as linsvm's.",
        "",
    ]
    if skipped:
        lines += [f"- skipped: {s}" for s in skipped] + [""]
    if all_targets:
        lines += ["## Targets", ""]
        lines += markdown_table(["dataset", "target", "measured (linsvm / peer)", "holds"],
                                all_targets, ["l", "l", "l", "l"])  # fmt: skip
        lines.append("")
    lines += mode_lines(all_modes)
    lines += ["## Per dataset", ""] + sections
    lines += search_lines(searches)
    write_report(lines, args.out)


def package_version_safe(name: str) -> str:
    from .common import package_version

    return package_version(name)


def warm_up() -> None:
    """Compile / load every kernel on a tiny problem (untimed)."""
    from linsvm.features.maps import FeatureMap

    rng = np.random.default_rng(0)
    X = sp.random(300, 20, density=0.3, format="csr", random_state=1)
    X.sort_indices()
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    p = Problem("warm-up", X, y, X, y, DataSpec("", "", 10))
    for s in (1, 3):
        run_linsvm(p, "", "linear", s, 1.0, 1)
        for fmap in (FeatureMap(2, gamma=0.1, coef0=1.0),
                     FeatureMap(2, gamma=0.1, coef0=1.0, hash_bits=10)):
            for mode in ("materialise", "implicit"):
                run_linsvm(p, "", "poly2", s, 1.0, 1, fmap, mode)


if __name__ == "__main__":
    main()
