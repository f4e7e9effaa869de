"""scikit-learn estimators over linsvm's solvers (this module is the only one importing sklearn).

``LinearSVC`` takes scikit-learn's ``sklearn.svm.LinearSVC`` parameters, defaults, attributes
and validity rules, and fits through ``linsvm.train`` (no solver logic here): the parameters map
to a LIBLINEAR solver number as scikit-learn's ``_get_liblinear_solver_type`` does, labels are
encoded to 0..k-1 and the model's weight vectors are reordered to ``classes_``'s sorted order
with scikit-learn's sign convention (binary: positive decision means ``classes_[1]``).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .training import ConvergenceWarning, train

__all__ = ["LinearSVC", "liblinear_solver_type"]

_SOLVER_TYPES = {
    "hinge": {"l2": {True: 3}},
    "squared_hinge": {"l1": {False: 5}, "l2": {False: 2, True: 1}},
}


def liblinear_solver_type(multi_class: str, penalty: str, loss: str, dual: bool) -> int:
    """LIBLINEAR's solver number for LinearSVC's options (scikit-learn's rules and messages)."""
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
    """``dual='auto'`` as scikit-learn: dual iff n_samples < n_features, unless unsupported."""
    if dual != "auto":
        return dual
    preferred = n_samples < n_features
    try:
        liblinear_solver_type(multi_class, penalty, loss, preferred)
        return preferred
    except ValueError:
        return not preferred


class LinearSVC(LinearClassifierMixin, SparseCoefMixin, BaseEstimator):
    """Linear support vector classification, a drop-in for ``sklearn.svm.LinearSVC``.

    Parameters, defaults and fitted attributes are scikit-learn's; the fit runs
    ``linsvm.train``. Beyond scikit-learn, ``dual_gap_`` and ``objective_`` hold the duality
    gap and primal objective of each binary sub-problem (in ``classes_`` order for k > 2
    classes; one value for two classes or Crammer-Singer; the gap is NaN where the solver
    computes no dual). ``model_`` is the underlying ``linsvm.Model`` (LIBLINEAR's layout, on
    the encoded labels 0..k-1).
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
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
    ):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y), optionally with per-sample weights; returns self."""
        self._validate_params()
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            accept_large_sparse=False,
        )
        check_classification_targets(y)
        encoder = LabelEncoder()
        y_ind = encoder.fit_transform(y)
        self.classes_ = encoder.classes_
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
        dual = _resolve_dual(
            self.dual, self.loss, self.penalty, self.multi_class, X.shape[0], X.shape[1]
        )
        solver = liblinear_solver_type(self.multi_class, self.penalty, self.loss, dual)
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        seed = int(check_random_state(self.random_state).randint(np.iinfo("i").max))
        if self.verbose:
            print("[LibLinear]", end="")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = train(
                X,
                y_ind,
                solver=solver,
                C=float(self.C),
                eps=float(self.tol),
                bias=bias,
                class_weight={k: float(w) for k, w in enumerate(weights)},
                sample_weight=sample_weight,
                max_iter=max(int(self.max_iter), 1),
                seed=seed,
                verbose=bool(self.verbose),
            )
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                continue
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.model_ = model

        labels = np.asarray(model.labels_).astype(np.int64)
        coef = model.coef_
        intercept = model.intercept_ if self.fit_intercept else np.zeros(coef.shape[0])
        results = model.results_
        if coef.shape[0] == 1:  # binary: LIBLINEAR's w is positive for labels_[0]
            sign = 1.0 if labels[0] == 1 else -1.0
            coef = sign * coef
            intercept = sign * intercept
        else:
            # one row per class in labels_ order -> classes_ order
            order = np.argsort(labels)
            coef = coef[order]
            intercept = intercept[order]
            if len(results) == len(labels):
                results = [results[i] for i in order]
            if n_classes == 2:  # Crammer-Singer on two classes: one vector, as sklearn
                coef = (coef[1] - coef[0]).reshape(1, -1)
                intercept = np.array([intercept[1] - intercept[0]])
        self.coef_ = np.ascontiguousarray(coef, dtype=np.float64)
        self.intercept_ = np.asarray(intercept, dtype=np.float64).copy()
        self.n_iter_ = int(max(r.n_iter for r in results)) if results else 0
        self.objective_ = np.array([r.primal for r in results], dtype=np.float64)
        self.dual_gap_ = np.array([r.gap for r in results], dtype=np.float64)
        if self.n_iter_ >= self.max_iter or any(not r.converged for r in results):
            warnings.warn(
                "Liblinear failed to converge, increase the number of iterations.",
                SklearnConvergenceWarning,
                stacklevel=2,
            )
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
