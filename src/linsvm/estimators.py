"""scikit-learn estimators over linsvm's solvers (this module is the only one importing sklearn).

``LinearSVC``, ``LinearSVR`` and ``LogisticRegression`` take the parameters, defaults,
attributes and validity rules of ``sklearn.svm.LinearSVC``, ``sklearn.svm.LinearSVR`` and
``sklearn.linear_model.LogisticRegression(solver="liblinear")``, and fit through
``linsvm.train`` (no solver logic here): the parameters map to a LIBLINEAR solver number as
scikit-learn's ``_get_liblinear_solver_type`` does, labels are encoded to 0..k-1 and the model's
weight vectors are reordered to ``classes_``'s sorted order with scikit-learn's sign convention
(binary: positive decision means ``classes_[1]``).

Beyond scikit-learn, every estimator has

- ``tol="liblinear"``: the faster tolerance preset, LIBLINEAR's own default stopping tolerance
  for the chosen solver (what ``linsvm train`` and LIBLINEAR's ``train`` use: 0.1 for the dual
  solvers, 0.01 for the primal Newton and L1 solvers, relative to the gradient at w = 0, and
  1e-4 for -s 11), instead of scikit-learn's 1e-4, which makes the dual solvers run far longer
  for predictions that rarely change (loose for ``LinearSVR``'s default dual solver, -s 13:
  its 0.1 is relative to the first iteration's violation, and on w8a the objective stays
  far above the optimum; prefer a number there);
- ``tol=0`` for every estimator (scikit-learn's ``LinearSVC`` and ``LinearSVR`` refuse it): no
  stopping rule, the solver runs ``max_iter`` outer iterations exactly (the primal Newton
  solvers stop earlier where the line search can no longer decrease the objective, as
  ``linsvm.train`` says); ``max_iter=0`` fits
  the solver's start point (w = 0, n_iter_ 0, with scikit-learn's ConvergenceWarning), as
  scikit-learn's liblinear does;
- ``warm_start=True``: the next ``fit`` on the same rows restarts the solver from the previous
  fit's dual variables (dual solvers) or weights (primal solvers), e.g. along a path of growing
  ``C``; a fit on another number of rows or features, or other classes, starts cold (other
  rows of the same number warm-start: the rows themselves are not compared). The dual
  variables (8 bytes a
  row and binary sub-problem) are kept only by a fit made with ``warm_start=True``: a fitted
  estimator otherwise holds its weights alone, as scikit-learn's do (and a dual solver's next
  warm fit after it starts cold);
- ``objective_`` and ``dual_gap_``: the primal objective and duality gap of each binary
  sub-problem (NaN gap where the solver computes no dual; ``objectives=False`` skips the dual
  solvers' pass over the data that computes them, about half an epoch, and leaves NaN), and
  ``model_``, the ``linsvm.Model`` (LIBLINEAR's layout, on the estimator's own labels),
  which can be saved in LIBLINEAR's model format and used by ``linsvm predict`` (integer
  labels only: the format holds no others, and saving a model of string labels is a
  ModelFormatError);
- ``feature_map``: a ``linsvm.features.FeatureMap`` (the degree-2 map, hashing) the model is
  trained on and predicts through (``map_mode`` as ``linsvm.train``'s); ``coef_`` then has the
  mapped features' columns, ``feature_map_`` is the map bound to ``n_features_in_``,
  ``n_features_in_`` stays the width of the rows the estimator takes, and ``dual="auto"``
  compares the rows with the mapped columns (2^hash_bits: usually the dual);
- Ctrl-C during ``fit`` raises KeyboardInterrupt once the solver has stopped at the end of its
  outer iteration (a second one at once), as scikit-learn's estimators do; ``linsvm.train``
  instead returns the iterate it stopped at;
- ``client`` (``LinearSVC``, ``LogisticRegression``): a ``dask.distributed.Client`` (or a
  scheduler's address, or "local:N", connected for each fit; clones share the Client, and a
  pickled estimator holds its scheduler's address); ``fit`` then trains on that cluster by
  CoCoA+ (``linsvm.distributed.train``: the dual solvers -s 1,
  -s 3 and -s 7 only, so ``LinearSVC(dual="auto")`` takes the dual and ``LogisticRegression``
  needs ``dual=True``; ``tol`` is the relative duality gap to stop at, ``max_iter`` the
  rounds). X and y pass through the client once, scattered to the workers; to keep data off
  the client, call ``linsvm.distributed.train`` with files or dask collections.

The solvers are LIBLINEAR 2.50's, not scikit-learn's bundled copy of an older LIBLINEAR, whose
L1-regularised logistic regression (``LogisticRegression(l1_ratio=1)``, -s 6) also stops after
10 Newton iterations without a coordinate step: on badly scaled features (1e8) or a tight
``tol`` linsvm's runs on to ``max_iter`` and warns where scikit-learn's stops early at the
same objective. Crammer-Singer warns at its own cap (100,000 iterations, as scikit-learn's),
not at ``max_iter`` as scikit-learn's warning does.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin, LinearModel, SparseCoefMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .data import all_finite, as_csr, group_labels, minus_one_first
from .errors import InvalidInputError
from .features import FeatureMap
from .features.maps import map_overflow
from .model import Model
from .problems import check_class_weight, check_weighted_classes, show_label, silenced
from .solvers import CLASSIFICATION, MAP_MODES, SOLVERS
from .solvers._base import without_dual_variables
from .solvers._dual_threads import SCHEMES
from .training import ConvergenceWarning, TrainingInterrupted, train

__all__ = ["LinearSVC", "LinearSVR", "LogisticRegression", "liblinear_solver_type"]

# scikit-learn's _get_liblinear_solver_type table: loss -> penalty -> dual -> solver number
_SOLVER_TYPES = {
    "logistic_regression": {"l1": {False: 6}, "l2": {False: 0, True: 7}},
    "hinge": {"l2": {True: 3}},
    "squared_hinge": {"l1": {False: 5}, "l2": {False: 2, True: 1}},
    "epsilon_insensitive": {"l2": {True: 13}},
    "squared_epsilon_insensitive": {"l2": {False: 11, True: 12}},
}

# the preset: train's eps=None is LIBLINEAR's default for the solver
_TOL_PRESET = "liblinear"


def liblinear_solver_type(multi_class: str, penalty: str, loss: str, dual: bool) -> int:
    """LIBLINEAR's solver number for the options (scikit-learn's rules and messages)."""
    if multi_class == "crammer_singer":
        return 4
    if multi_class != "ovr":
        raise ValueError(
            f"`multi_class` must be one of `ovr`, `crammer_singer`, got {multi_class!r}"
        )
    by_penalty = _SOLVER_TYPES.get(loss)
    if by_penalty is None:
        error = f"loss='{loss}' is not supported"
    else:
        by_dual = by_penalty.get(penalty)
        if by_dual is None:
            error = f"The combination of penalty='{penalty}' and loss='{loss}' is not supported"
        else:
            solver = by_dual.get(dual)
            if solver is not None:
                return solver
            error = (
                f"The combination of penalty='{penalty}' and loss='{loss}' are not supported "
                f"when dual={dual}"
            )
    raise ValueError(
        f"Unsupported set of arguments: {error}, Parameters: penalty={penalty!r}, "
        f"loss={loss!r}, dual={dual!r}"
    )


def _resolve_dual(dual, loss: str, penalty: str, multi_class: str, n_samples: int, n_features: int):
    """``dual='auto'`` as scikit-learn: dual iff n_samples < n_features, unless unsupported.
    ``n_features``: the columns the solver sees (with a feature map, the mapped ones)."""
    if dual != "auto":
        return dual
    preferred = n_samples < n_features
    try:
        liblinear_solver_type(multi_class, penalty, loss, preferred)
        return preferred
    except ValueError:
        return not preferred


def _train_eps(tol) -> float | None:
    """The tolerance ``train`` gets: None (LIBLINEAR's default) for the preset."""
    if isinstance(tol, str):
        return None
    return float(tol)  # 0: no stopping rule, max_iter iterations (train's eps = 0)


def _encode_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LabelEncoder's (classes_, y encoded): the sorted classes and each row's position among
    them; numbers in one compiled pass (``group_labels``) and a sort of the classes only,
    not np.unique's sorts of every row."""
    if y.ndim == 1 and y.dtype.kind in "biuf":
        labels, class_index = group_labels(y)
        order = np.argsort(labels, kind="stable")
        rank = np.empty(order.shape[0], dtype=np.intp)
        rank[order] = np.arange(order.shape[0])
        return labels[order], rank[class_index]
    encoder = LabelEncoder()
    y_ind = encoder.fit_transform(y)
    return encoder.classes_, y_ind


# a sub-problem's class as train names it: "(class 3)"
_CLASS_INDEX = re.compile(r"\(class (\d+)\)")


def _with_labels(model: Model, labels: np.ndarray) -> Model:
    """The same model (shared arrays) with ``labels`` in place of ``model.labels_``."""
    return Model(
        model.solver,
        labels,
        model.coef_,
        model.bias,
        model.bias_weights_,
        rho=model.rho,
        results=model.results_,
        p=model.p,
        feature_map=model.feature_map,
    )


def _without_row_variables(model: Model) -> Model:
    """The model without what it holds a row (the dual variables, -s 7's complements): what
    only a warm start resumes from. A fitted estimator then holds its weights, as
    scikit-learn's do, not 8 bytes a row and sub-problem (26 classes of letter's 15,000 rows:
    a 3 MB pickle). The number of support vectors stays (``Solution.n_sv``)."""
    results = [without_dual_variables(r) for r in model.results_]
    return Model(model.solver, model.labels_, model.coef_, model.bias, model.bias_weights_,
                 rho=model.rho, results=results, p=model.p,
                 feature_map=model.feature_map)  # fmt: skip


def _two_labels_swapped(model: Model) -> Model:
    """The binary classifier ``model`` with its two labels in the other order (the same
    decisions): one weight vector negated, or Crammer-Singer's two swapped."""
    labels = model.labels_[::-1].copy()
    if model.coef_.shape[0] == 1:
        coef, bias_weights = -model.coef_, -model.bias_weights_
        results = [replace(r, w=-r.w) for r in model.results_]
    else:
        coef, bias_weights = model.coef_[::-1], model.bias_weights_[::-1]
        results = [replace(r, w=r.w[::-1].copy(),
                           alpha=None if r.alpha is None else r.alpha[:, ::-1].copy())
                   for r in model.results_]  # fmt: skip
    return Model(model.solver, labels, coef, model.bias, bias_weights, rho=model.rho,
                 results=results, p=model.p, feature_map=model.feature_map)  # fmt: skip


def _keep_parameters(estimator, parameters: dict) -> None:
    """scikit-learn's ``__init__``: every parameter kept as given under its own name (``fit``
    validates them); ``parameters`` the ``locals()`` of that ``__init__``."""
    for name, value in parameters.items():
        if name != "self":
            setattr(estimator, name, value)


# why a 'balanced' class weight can be infinite
BALANCED_WEIGHT_HINT = " (class_weight='balanced': its rows' sample weights sum to 0)"


class _LiblinearMixin:
    """Fit plumbing shared by the estimators: validation, warm start, train, attributes."""

    def _validate_X_y(self, X, y, y_numeric: bool):
        # float32 stays float32 and canonical CSR is not copied: train reads it as given,
        # int32 or int64 indices alike (scikit-learn's load_svmlight_file gives int64);
        # train checks X's values (NaN, infinity, overflowing magnitudes) in one compiled
        # pass, so scikit-learn's check would be a second pass over them
        return validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            accept_large_sparse=True,
            ensure_all_finite=False,
            y_numeric=y_numeric,
        )

    def _warm_model(self, X, y_train) -> Model | None:
        """The previous fit's model when warm starting on the same rows and labels, on the
        encoded labels ``y_train`` trains on."""
        model = getattr(self, "model_", None)
        if not (getattr(self, "warm_start", False) and isinstance(model, Model)):
            return None
        same_rows = getattr(self, "_n_samples_fit", None) == X.shape[0]
        if not same_rows or model.n_input_features != X.shape[1]:
            return None
        if (model.feature_map is None) != (self.feature_map is None) or (
            model.feature_map is not None
            and model.feature_map.header_fields()
            != self.feature_map.bind(X.shape[1]).header_fields()
        ):
            return None
        if model.kind == CLASSIFICATION:
            _, first = np.unique(y_train, return_index=True)
            encoded = y_train[np.sort(first)]  # train's order: first appearance
            swapped = minus_one_first(self.classes_[encoded])
            labels = self.classes_[encoded[::-1] if swapped else encoded]  # model_'s order
            if labels.shape != model.labels_.shape or np.any(labels != model.labels_):
                return None
            model = _with_labels(_two_labels_swapped(model) if swapped else model, encoded)
        return model

    def _train(self, X, y_train, solver: int, warn_stacklevel: int = 3, **params) -> Model:
        """``linsvm.train`` with the estimator's common parameters; our convergence warnings
        give way to scikit-learn's single one, shown at the user's call of ``fit``
        (``warn_stacklevel``: the frames from here to it)."""
        seed = int(check_random_state(self.random_state).randint(np.iinfo("i").max))
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        if self.verbose:
            print("[LibLinear]", end="")
        warm = self._warm_model(X, y_train)
        # (a stop raises KeyboardInterrupt below: its warning would say what that says)
        with silenced(ConvergenceWarning, TrainingInterrupted):
            if getattr(self, "client", None) is not None:
                model = self._train_distributed(X, y_train, solver, bias, seed, **params)
            else:
                model = train(
                    X,
                    y_train,
                    solver=solver,
                    C=float(self.C),
                    eps=_train_eps(self.tol),
                    bias=bias,
                    max_iter=self._solver_max_iter(solver),
                    seed=seed,
                    verbose=bool(self.verbose),
                    warm_start=warm,
                    n_jobs=getattr(self, "n_jobs", None),
                    feature_map=self.feature_map,
                    map_mode=self.map_mode,
                    device=getattr(self, "device", "cpu"),
                    thread_scheme=getattr(self, "thread_scheme", "auto"),
                    objectives=bool(self.objectives),
                    # max_iter is the cap, as in scikit-learn (no primal solve after it)
                    fallback=False,
                    **params,
                )
        if model.stop_signal is not None:
            # scikit-learn's way: Ctrl-C ends the fit (and a search over fits), where train
            # returns the iterate it stopped at
            raise KeyboardInterrupt
        if not getattr(self, "warm_start", False):
            model = _without_row_variables(model)
        self.model_ = model
        self.feature_map_ = model.feature_map
        self._n_samples_fit = X.shape[0]
        results = model.results_
        self.objective_ = np.array([r.primal for r in results], dtype=np.float64)
        self.dual_gap_ = np.array([r.gap for r in results], dtype=np.float64)
        # scikit-learn's rule: warn at the iteration cap (a Newton line search that can no
        # longer improve at a tolerance near machine precision is not worth a warning)
        n_iter = int(max(r.n_iter for r in results))
        if getattr(self, "client", None) is not None:
            # (CoCoA+ counts the round that measures the gap: one that converges on the last
            # allowed round has n_iter = max_iter)
            capped = any(r.stop_reason == "max_iter" for r in results)
        else:
            capped = n_iter >= self._solver_max_iter(solver)
        if capped:
            warnings.warn(
                "Liblinear failed to converge, increase the number of iterations.",
                SklearnConvergenceWarning,
                stacklevel=warn_stacklevel,
            )
        return model

    def _train_distributed(self, X, y_train, solver: int, bias: float, seed: int,
                           class_weight=None, sample_weight=None) -> Model:  # fmt: skip
        """``linsvm.train`` on ``self.client`` by CoCoA+ (a Client, or an address or "local:N"
        that the call connects; the options it cannot take are a ValueError, as
        scikit-learn reports bad parameters)."""
        if solver not in (1, 3, 7):
            raise ValueError(
                f"client= trains the dual solvers -s 1, -s 3 and -s 7 (CoCoA+), not -s {solver}"
                + (": set dual=True" if solver == 0 else "")
            )
        unsupported = [
            name
            for name, given in (
                ("sample_weight", sample_weight is not None),
                ("feature_map", self.feature_map is not None),
                ("warm_start", self.warm_start),
                # (this process's threads and GPU: the workers train, as their own)
                ("n_jobs", getattr(self, "n_jobs", None) not in (None, 1)),
                ("device", getattr(self, "device", "cpu") != "cpu"),
                ("thread_scheme", getattr(self, "thread_scheme", "auto") != "auto"),
            )
            if given
        ]
        if unsupported:
            raise ValueError(f"client= does not go with {', '.join(unsupported)}")
        if self.tol != _TOL_PRESET and float(self.tol) <= 0:
            raise ValueError("client= needs tol > 0: CoCoA+ stops at that relative duality gap")
        if int(self.max_iter) < 1:
            raise ValueError("client= needs max_iter >= 1: the rounds CoCoA+ may take")
        return train(
            X, y_train, client=self.client, solver=solver, C=float(self.C),
            eps=None if self.tol == _TOL_PRESET else float(self.tol), bias=bias,
            class_weight=class_weight, max_iter=int(self.max_iter), seed=seed,
            verbose=bool(self.verbose),
        )  # fmt: skip

    def __sklearn_clone__(self):
        """scikit-learn's clone, sharing a dask Client rather than copying it (a live
        connection cannot be copied: clone, and so GridSearchCV and cross_val_score, failed)."""
        client = getattr(self, "client", None)
        if client is None or isinstance(client, str):
            return super().__sklearn_clone__()
        # scikit-learn's clone of a stand-in without the client: self stays untouched (other
        # threads may be cloning or fitting it meanwhile)
        stand_in = object.__new__(type(self))
        stand_in.__dict__.update(self.__dict__)
        stand_in.client = None
        twin = super(_LiblinearMixin, stand_in).__sklearn_clone__()
        twin.client = client
        return twin

    def __getstate__(self):
        """Pickled (or deep-copied) with a dask Client's scheduler address in its place: a
        live connection cannot be pickled; a fit of the copy connects to that address."""
        state = super().__getstate__()
        client = state.get("client")
        if client is not None and not isinstance(client, str):
            state = {**state, "client": client.scheduler.address}
        return state

    def _solver_max_iter(self, solver: int) -> int:
        """The iteration cap: ``max_iter`` (0: the solver's start point, w = 0 but for -s 7's
        interior start, as scikit-learn's liblinear), except for Crammer-Singer (-s 4), whose
        cap scikit-learn's liblinear leaves at LIBLINEAR's 100000 whatever max_iter says."""
        spec = SOLVERS[solver]
        return spec.max_iter if spec.multiclass else int(self.max_iter)

    def _solver_shape(self, X) -> tuple[int, int]:
        """(rows, columns) of the problem the solver sees: with a feature map, phi(X)'s
        columns (2^hash_bits, or the exact map's width), not X's."""
        if self.feature_map is None:
            return X.shape
        return X.shape[0], self.feature_map.bind(X.shape[1]).n_output

    def _mapped_scores(self, X) -> np.ndarray:
        """X @ coef_.T + intercept_ on phi(X), for a model trained on a feature map."""
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False,
            accept_large_sparse=True,
        )  # fmt: skip
        Z = self.feature_map_.transform(as_csr(X), n_jobs=getattr(self, "n_jobs", None) or 1)
        if not all_finite(Z.data):
            first = int(np.flatnonzero(~np.isfinite(Z.data))[0])
            raise map_overflow(int(np.searchsorted(Z.indptr, first, side="right")) - 1)
        return safe_sparse_dot(Z, self.coef_.T, dense_output=True) + self.intercept_

    def _intercept(self, model: Model) -> np.ndarray | float:
        """scikit-learn's ``intercept_``: bias * bias weight, or the scalar 0.0 without one."""
        return np.array(model.intercept_, dtype=np.float64) if self.fit_intercept else 0.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class _LiblinearClassifier(_LiblinearMixin, LinearClassifierMixin, SparseCoefMixin, BaseEstimator):
    """Classification: labels of any type, class weights, scikit-learn's coef_ layout."""

    def decision_function(self, X) -> np.ndarray:
        """Confidence scores, shape (n_samples,) for two classes, else (n_samples, n_classes);
        through the feature map when the model has one."""
        if getattr(self, "feature_map_", None) is None:
            return super().decision_function(X)
        scores = self._mapped_scores(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _fit_classifier(self, X, y, sample_weight, solver_for) -> None:
        """Validate, encode labels, train with ``solver_for(n_samples, n_features)``."""
        X, y = self._validate_X_y(X, y, y_numeric=False)
        check_classification_targets(y)
        self.classes_, y_ind = _encode_labels(y)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {self.classes_[0]!r}"
            )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        weights = compute_class_weight(
            self.class_weight, classes=self.classes_, y=y, sample_weight=sample_weight
        )
        # checked here as well as in train, to name the user's labels (train sees indices)
        balanced = isinstance(self.class_weight, str) and self.class_weight == "balanced"
        for label, weight in zip(self.classes_, weights, strict=True):
            hint = BALANCED_WEIGHT_HINT if balanced and np.isinf(weight) else ""
            check_class_weight(label, weight, hint)
        check_weighted_classes(self.classes_, y_ind, sample_weight)
        solver = solver_for(*self._solver_shape(X))
        try:
            model = self._train(
                X,
                y_ind,
                solver,
                warn_stacklevel=4,  # (fit, then this method)
                class_weight={k: float(w) for k, w in enumerate(weights)},
                sample_weight=sample_weight,
            )
        except InvalidInputError as exc:
            # train named a sub-problem's class by its index in classes_
            raise InvalidInputError(_CLASS_INDEX.sub(
                lambda m: f"(class {show_label(self.classes_[int(m.group(1))])})", str(exc))
            ) from None
        labels = np.asarray(model.labels_).astype(np.int64)
        if minus_one_first(self.classes_[labels]):
            # (train saw 0 and 1: LIBLINEAR's -1/+1 rule, +1 first, applied to the user's)
            model, labels = _two_labels_swapped(model), labels[::-1]
        # the model in the user's labels and LIBLINEAR's label order (the file `linsvm train`
        # writes): saved, it predicts what the estimator predicts but on exact ties of
        # decision values, which the estimator breaks as scikit-learn (the first of classes_;
        # classes_[0] at a binary 0) and the model as LIBLINEAR (its first label; labels_[1])
        self.model_ = _with_labels(model, self.classes_[labels])
        coef = model.coef_
        intercept = np.broadcast_to(self._intercept(model), coef.shape[0])
        if coef.shape[0] == 1:  # binary: LIBLINEAR's w is positive for labels_[0]
            sign = 1.0 if labels[0] == 1 else -1.0
            # (+ 0.0: a negated zero weight is 0, as scikit-learn's, not -0)
            coef = sign * coef + 0.0
            intercept = sign * intercept + 0.0
        else:
            # one row per class in labels_ order -> classes_ order
            order = np.argsort(labels)
            coef = coef[order]
            intercept = intercept[order]
            if len(model.results_) == n_classes:
                self.objective_ = self.objective_[order]
                self.dual_gap_ = self.dual_gap_[order]
            if n_classes == 2:  # Crammer-Singer on two classes: one vector, as sklearn
                coef = (coef[1] - coef[0]).reshape(1, -1)
                intercept = intercept[1:] - intercept[:1]
        self.coef_ = np.ascontiguousarray(coef, dtype=np.float64)
        self.intercept_ = np.array(intercept, dtype=np.float64) if self.fit_intercept else 0.0
        self._n_iter = int(max(r.n_iter for r in model.results_))


# joblib's convention: n threads, or all but |n| - 1 of the cores for n < 0 (0 means nothing)
_N_JOBS = [None, Interval(Integral, None, -1, closed="right"),
           Interval(Integral, 1, None, closed="left")]  # fmt: skip

_COMMON_CONSTRAINTS: dict = {
    # 0 (refused by scikit-learn's LinearSVC and LinearSVR): no stopping rule, max_iter
    # iterations exactly, as LogisticRegression's tol=0 in scikit-learn
    "tol": [Interval(Real, 0.0, None, closed="left"), StrOptions({_TOL_PRESET})],
    "C": [Interval(Real, 0.0, None, closed="neither")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
    "verbose": ["verbose"],
    "random_state": ["random_state"],
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "warm_start": ["boolean"],
    "feature_map": [None, FeatureMap],
    "map_mode": [StrOptions(set(MAP_MODES))],
    "objectives": ["boolean"],
}


class LinearSVC(_LiblinearClassifier):
    """Linear support vector classification, a drop-in for ``sklearn.svm.LinearSVC``.

    Parameters, defaults and fitted attributes are scikit-learn's (``coef_`` of shape
    (1, n_features) for two classes, else (n_classes, n_features); ``intercept_`` of shape (1,)
    or (n_classes,), the scalar 0.0 when ``fit_intercept=False``; ``n_iter_`` the largest
    iteration count over the sub-problems). Solvers: ``loss="squared_hinge"`` is LIBLINEAR's
    -s 1 (dual) / -s 2 (primal), ``"hinge"`` -s 3, ``penalty="l1"`` -s 5,
    ``multi_class="crammer_singer"`` -s 4. Beyond scikit-learn: ``tol="liblinear"``,
    ``warm_start``, ``n_jobs`` (threads, joblib's convention: see ``linsvm.train``; the
    one-vs-rest sub-problems side by side, then within each the threaded dual solver or the
    passes of the primal Newton solver), ``objective_``, ``dual_gap_`` and ``model_`` (see the
    module docstring), ``device="cuda"`` (the dual solvers -s 1 and -s 3 on an NVIDIA GPU,
    ``linsvm.train``'s; ``dual="auto"`` then takes the dual), ``thread_scheme`` (how threads
    share one dual solve: "auto", "async", "replicas", or "rounds" for the same model at every
    run; see ``linsvm.train``).
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "client": "no_validation",
        "device": [StrOptions({"cpu", "cuda"})],
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "n_jobs": _N_JOBS,
        "thread_scheme": [StrOptions(set(SCHEMES))],
    }

    def __init__(
        self,
        penalty="l2",
        loss="squared_hinge",
        *,
        dual="auto",
        tol=1e-4,
        C=1.0,
        multi_class="ovr",
        fit_intercept=True,
        intercept_scaling=1,
        class_weight=None,
        verbose=0,
        random_state=None,
        max_iter=1000,
        warm_start=False,
        n_jobs=None,
        feature_map=None,
        map_mode="auto",
        objectives=True,
        client=None,
        device="cpu",
        thread_scheme="auto",
    ):
        _keep_parameters(self, locals())

    def fit(self, X, y, sample_weight=None) -> LinearSVC:
        """Fit on X (n_samples, n_features), y (n_samples,), optional per-sample weights."""
        self._validate_params()

        def solver_for(n_samples: int, n_features: int) -> int:
            if (self.client is not None or self.device == "cuda") and self.dual == "auto":
                return liblinear_solver_type(self.multi_class, self.penalty, self.loss, True)
            dual = _resolve_dual(
                self.dual, self.loss, self.penalty, self.multi_class, n_samples, n_features
            )
            return liblinear_solver_type(self.multi_class, self.penalty, self.loss, dual)

        self._fit_classifier(X, y, sample_weight, solver_for)
        self.n_iter_ = self._n_iter
        return self


class LogisticRegression(_LiblinearClassifier):
    """L2- or L1-regularised logistic regression, a drop-in for scikit-learn's
    ``LogisticRegression(solver="liblinear")``.

    Parameters, defaults and attributes are scikit-learn's, as with ``solver="liblinear"``
    (the only solver here, and the default): ``l1_ratio=0`` (or ``penalty="l2"``) is LIBLINEAR's
    -s 0 (primal Newton) or, with ``dual=True``, -s 7 (dual coordinate descent);
    ``l1_ratio=1`` (or ``penalty="l1"``) is -s 6 (newGLMNET). More than two classes are fitted
    one-vs-rest, as LIBLINEAR does (scikit-learn's liblinear solver refuses them), and
    ``predict_proba`` then normalises the classes' sigmoids, as LIBLINEAR. Options only other
    scikit-learn solvers have (elastic-net ``l1_ratio``, ``penalty=None`` or ``C=inf``) are an
    error. ``n_iter_`` has shape (1,): the largest iteration count over the sub-problems.
    ``n_jobs``: threads, joblib's convention (see ``linsvm.train``): the one-vs-rest
    sub-problems side by side, then within each the passes of the primal Newton solver
    (the LR dual runs on one thread; scikit-learn's liblinear ignores it). Beyond
    scikit-learn: ``tol="liblinear"``, ``warm_start`` (scikit-learn's liblinear ignores it;
    here it restarts the solver), ``objective_``, ``dual_gap_``, ``model_``.
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "client": "no_validation",
        "penalty": [StrOptions({"l1", "l2", "elasticnet", "deprecated"}), None],
        "C": [Interval(Real, 0, None, closed="right")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), None],
        "dual": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left"), StrOptions({_TOL_PRESET})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "solver": [
            StrOptions({"lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga"})
        ],
        "n_jobs": _N_JOBS,
    }

    def __init__(
        self,
        penalty="deprecated",
        *,
        C=1.0,
        l1_ratio=0.0,
        dual=False,
        tol=1e-4,
        fit_intercept=True,
        intercept_scaling=1,
        class_weight=None,
        random_state=None,
        solver="liblinear",
        max_iter=100,
        verbose=0,
        warm_start=False,
        n_jobs=None,
        feature_map=None,
        map_mode="auto",
        objectives=True,
        client=None,
    ):
        _keep_parameters(self, locals())

    def _penalty(self) -> str:
        """'l1' or 'l2' from penalty / l1_ratio / C, as scikit-learn resolves them."""
        if self.solver != "liblinear":
            raise ValueError(
                f"linsvm's LogisticRegression has LIBLINEAR's solvers only: use "
                f"solver='liblinear', got solver={self.solver!r}"
            )
        if self.penalty == "deprecated":
            ratio = 0.0 if self.l1_ratio is None else self.l1_ratio
            if 0 < ratio < 1:
                raise ValueError(
                    "Only 'saga' solver supports elasticnet penalty, got solver=liblinear."
                )
            penalty = "l1" if ratio == 1 else "l2"
        elif self.penalty == "elasticnet":
            raise ValueError(
                "Only 'saga' solver supports elasticnet penalty, got solver=liblinear."
            )
        else:
            penalty = self.penalty
        if penalty is None or self.C == np.inf:
            raise ValueError(
                "C=np.inf as well as penalty=None is not supported for the liblinear solver"
            )
        return penalty

    def fit(self, X, y, sample_weight=None) -> LogisticRegression:
        """Fit on X (n_samples, n_features), y (n_samples,), optional per-sample weights."""
        self._validate_params()
        solver = liblinear_solver_type("ovr", self._penalty(), "logistic_regression", self.dual)
        self._fit_classifier(X, y, sample_weight, lambda n_samples, n_features: solver)
        self.n_iter_ = np.array([self._n_iter], dtype=np.int32)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes) in ``classes_`` order.

        Two classes: the sigmoid of the decision value; more: each class's one-vs-rest
        sigmoid, normalised to sum to 1 (LIBLINEAR's ``predict_probability``). A row far from
        every class, where every sigmoid is 0 (decision values below about -745), gets their
        limit there, the softmax of its decision values, whose largest is ``predict``'s class
        (LIBLINEAR's division gives NaN, as ``model_.predict_proba`` does; scikit-learn's
        estimators a uniform row).
        """
        check_is_fitted(self)
        dec = self.decision_function(X)
        if dec.ndim == 1:
            positive = expit(dec)
            return np.column_stack([1.0 - positive, positive])
        prob = expit(dec)
        total = prob.sum(axis=1, keepdims=True)
        far = total[:, 0] == 0.0
        if far.any():
            limit = np.exp(dec[far] - dec[far].max(axis=1, keepdims=True))
            prob[far], total[far] = limit, limit.sum(axis=1, keepdims=True)
        return prob / total

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of ``predict_proba``, shape (n_samples, n_classes)."""
        return np.log(self.predict_proba(X))


class LinearSVR(_LiblinearMixin, RegressorMixin, LinearModel):
    """Linear support vector regression, a drop-in for ``sklearn.svm.LinearSVR``.

    Parameters, defaults and attributes are scikit-learn's: ``coef_`` of shape
    (n_features,), ``intercept_`` of shape (1,) (the scalar 0.0 when ``fit_intercept=False``),
    ``n_iter_`` an int. ``loss="epsilon_insensitive"`` is LIBLINEAR's -s 13 (dual),
    ``"squared_epsilon_insensitive"`` -s 12 (dual) or -s 11 (primal Newton); ``epsilon`` is
    LIBLINEAR's -p. Beyond scikit-learn: ``tol="liblinear"``, ``warm_start``, ``n_jobs``
    (threads within the solve: the dual CD of -s 12 and -s 13, or the primal Newton solver's
    passes over the rows, -s 11; see ``linsvm.train``), ``thread_scheme`` (the dual's:
    "auto", "async", "replicas", or "rounds" for the same model at every run), ``objective_`` and
    ``dual_gap_`` (shape (1,)), ``model_``, ``device="cuda"`` (the dual solvers -s 12 and -s 13
    on an NVIDIA GPU, ``linsvm.train``'s; ``dual="auto"`` then takes the dual).
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "epsilon": [Interval(Real, 0.0, math.inf, closed="left")],  # (finite, named here)
        "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "n_jobs": _N_JOBS,
        "device": [StrOptions({"cpu", "cuda"})],
        "thread_scheme": [StrOptions(set(SCHEMES))],
    }

    def __init__(
        self,
        *,
        epsilon=0.0,
        tol=1e-4,
        C=1.0,
        loss="epsilon_insensitive",
        fit_intercept=True,
        intercept_scaling=1.0,
        dual="auto",
        verbose=0,
        random_state=None,
        max_iter=1000,
        warm_start=False,
        n_jobs=None,
        feature_map=None,
        map_mode="auto",
        objectives=True,
        device="cpu",
        thread_scheme="auto",
    ):
        _keep_parameters(self, locals())

    def fit(self, X, y, sample_weight=None) -> LinearSVR:
        """Fit on X (n_samples, n_features), real targets y (n_samples,), optional weights."""
        self._validate_params()
        X, y = self._validate_X_y(X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self.device == "cuda" and self.dual == "auto":
            dual = True  # the GPU trains the dual solvers only
        else:
            dual = _resolve_dual(self.dual, self.loss, "l2", "ovr", *self._solver_shape(X))
        solver = liblinear_solver_type("ovr", "l2", self.loss, dual)
        model = self._train(X, y, solver, p=float(self.epsilon), sample_weight=sample_weight)
        # (a copy: model_ keeps its own, as the classifiers' do; a change to coef_ changed
        # model_'s predictions and a model saved from it)
        self.coef_ = np.array(model.coef_[0], dtype=np.float64)
        self.intercept_ = self._intercept(model)
        self.n_iter_ = int(max(r.n_iter for r in model.results_))
        return self

    def _decision_function(self, X) -> np.ndarray:
        if getattr(self, "feature_map_", None) is None:
            return super()._decision_function(X)
        return self._mapped_scores(X)
