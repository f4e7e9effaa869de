"""The fitted model: labels, weights, bias, solver; prediction and decision values.

Conventions are LIBLINEAR's: ``labels_`` in LIBLINEAR's class order; for two classes (solvers
other than Crammer-Singer) one weight vector whose positive side is ``labels_[0]``; otherwise
one weight vector per class and the prediction is the class of largest decision value.
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp
from numba import njit

from .data import all_finite, as_csr, dense_values, sparse_frame_as_csr
from .errors import InvalidInputError, ModelFormatError
from .features import FeatureMap
from .features._rows import mapped_dot
from .features.maps import map_overflow
from .io.model_file import (
    ModelFields,
    format_model_text,
    parse_model_text,
    read_model_file,
    write_model_file,
)
from .parallel import for_row_chunks
from .solvers import ONECLASS, REGRESSION, SOLVERS
from .solvers._base import INTERRUPTED, Solution


@njit(cache=True, nogil=True, error_model="numpy")  # (0/0 is NaN, as in C)
def _probabilities(dec, n_classes, out) -> None:
    """LIBLINEAR's predict_probability row by row: out[r, j] = 1 / (1 + exp(-dec[r, j])) for
    the n_w decision values; two classes: out[r, 1] = 1 - out[r, 0]; else each row divided by
    its sum, added in class order (a model of one class: 1, or 0/0 = NaN where its sigmoid is
    0). The C library's exp (NumPy's vectorised one differs from it in the last bit, and so
    did the printed digits of ``predict -b 1`` at a rounding boundary), and 1 / (1 + exp(-z))
    for every z: below z = -709.78 exp(-z) overflows and the probability is 0, as LIBLINEAR
    prints it. dec: (n, n_w); out: (n, n_classes)."""
    n_w = dec.shape[1]
    for r in range(dec.shape[0]):
        for j in range(n_w):
            out[r, j] = 1.0 / (1.0 + math.exp(-dec[r, j]))
        if n_classes == 2:
            out[r, 1] = 1.0 - out[r, 0]
        else:
            total = 0.0
            for j in range(n_classes):
                total += out[r, j]
            for j in range(n_classes):
                out[r, j] = out[r, j] / total


@njit(cache=True, nogil=True)
def _sparse_decision(indptr, indices, data, coef, bias_term, out, check_index) -> None:
    """out[r, k] = sum_j coef[k, j] x_rj + bias_term[k] for the rows of ``indptr``.

    Summed in row order, then the bias, as LIBLINEAR's predict_values. ``check_index``: skip
    features j >= coef.shape[1] (X wider than the model); without it the test is not made.
    """
    n_w, n_features = coef.shape
    for r in range(indptr.shape[0] - 1):
        # unsigned positions: Numba then skips its negative-index wraparound on every access
        start = np.uint64(indptr[r])
        stop = np.uint64(indptr[r + 1])
        for k in range(n_w):
            wk = coef[k]
            s = 0.0
            if check_index:
                for p in range(start, stop):
                    j = indices[p]
                    if j < n_features:
                        s += wk[np.uint64(j)] * data[p]
            else:
                for p in range(start, stop):
                    s += wk[np.uint64(indices[p])] * data[p]
            out[r, k] = s + bias_term[k]


@njit(cache=True, nogil=True)
def _mapped_decision(indptr, indices, data, coef, bias_term, out, fparams) -> None:
    """out[r, k] = coef[k]'phi(x_r) + bias_term[k], phi formed row by row, never stored."""
    for r in range(indptr.shape[0] - 1):
        for k in range(coef.shape[0]):
            out[r, k] = mapped_dot(indptr, indices, data, -1.0, r, coef[k], fparams) + bias_term[k]


class Model:
    """A trained linear model.

    Attributes
    ----------
    solver : int
        LIBLINEAR solver number (``-s``).
    labels_ : ndarray of shape (n_classes,)
        Class labels in LIBLINEAR's order (empty for regression and one-class models).
    coef_ : ndarray of shape (n_weight_vectors, n_features), float64
    bias : float
        LIBLINEAR's ``B``: the value of the implicit bias feature, or -1 for none.
    bias_weights_ : ndarray of shape (n_weight_vectors,)
        The weight of the bias feature (zeros when ``bias < 0``).
    rho : float
        Offset of a one-class SVM model (0 for the others).
    results_ : list of Solution
        One per binary sub-problem (one in all for Crammer-Singer) for a model trained here;
        empty for a loaded one.
    feature_map : linsvm.features.FeatureMap or None
        The map the model was trained on (bound to its input width): ``coef_`` is in its
        mapped space, and decision values map the rows the same way first.
    """

    def __init__(
        self,
        solver: int,
        labels: np.ndarray,
        coef: np.ndarray,
        bias: float,
        bias_weights: np.ndarray | None = None,
        rho: float = 0.0,
        results: list[Solution] | None = None,
        p: float | None = None,
        feature_map: FeatureMap | None = None,
    ) -> None:
        self.solver = int(solver)
        self.labels_ = np.asarray(labels)
        self.coef_ = np.ascontiguousarray(coef, dtype=np.float64)
        self.bias = float(bias)
        n_w = self.coef_.shape[0]
        self.bias_weights_ = (
            np.zeros(n_w)
            if bias_weights is None
            else np.asarray(bias_weights, dtype=np.float64).reshape(n_w)
        )
        self.rho = float(rho)
        self.p = p  # regression models: the tube width trained with (not in the model file)
        self.results_ = list(results or [])
        # the signal (SIGINT, SIGTERM) that stopped training early, if one did
        self.stop_signal: int | None = None
        self.feature_map = feature_map
        if feature_map is not None and feature_map.n_output != self.coef_.shape[1]:
            raise InvalidInputError(
                f"the feature map has {feature_map.n_output} features, the weights "
                f"{self.coef_.shape[1]}"
            )

    @classmethod
    def from_weights(cls, solver: int, labels: np.ndarray, W: np.ndarray, n_features: int,
                     bias: float, results: list[Solution], stop_signal: int | None = None,
                     **extra) -> Model:  # fmt: skip
        """The model of stacked weights ``W`` (n_weight_vectors, n_features [+ 1]): the
        last column is the bias weights when ``bias >= 0``. ``coef_`` is W itself where W
        has no bias column; the bias weights are a copy (a view would keep W alive beside
        the contiguous copy ``coef_`` then is)."""
        model = cls(solver, labels, W[:, :n_features], bias,
                    W[:, n_features].copy() if bias >= 0 else None, results=results,
                    **extra)  # fmt: skip
        model.stop_signal = stop_signal
        return model

    @property
    def n_features(self) -> int:
        """Features of ``coef_`` (the mapped ones for a model with a feature map)."""
        return self.coef_.shape[1]

    @property
    def n_input_features(self) -> int:
        """Features of the rows the model takes: the map's input width, or ``n_features``."""
        return self.n_features if self.feature_map is None else int(self.feature_map.n_input)

    @property
    def intercept_(self) -> np.ndarray:
        """bias x bias weight per weight vector, as scikit-learn reports the intercept."""
        if self.bias < 0:
            return np.zeros(self.coef_.shape[0])
        return self.bias * self.bias_weights_

    @property
    def interrupted(self) -> bool:
        """Whether training was stopped early (Ctrl-C, SIGTERM or a hook asked it to)."""
        return any(r.stop_reason == INTERRUPTED for r in self.results_)

    @property
    def kind(self) -> str:
        return SOLVERS[self.solver].kind

    def decision_function(self, X, n_jobs: int | None = -1) -> np.ndarray:
        """Decision values: shape (n_samples,) for one weight vector, else (n_samples, n_w).

        Features beyond the model's ``n_features`` are ignored, as LIBLINEAR does; missing
        trailing features count as zeros. For one-class models ``rho`` is subtracted.
        ``n_jobs``: threads over rows for sparse X (joblib's convention; default all cores).
        Every row is computed on its own, so the values do not depend on it.
        """
        if isinstance(n_jobs, str):  # (LIBLINEAR's Python interface: predict(y, x, m, '-b 1'))
            raise InvalidInputError(
                f"n_jobs must be an integer, got {n_jobs!r}; LIBLINEAR's predict options are "
                "methods here: predict_proba(X) for -b 1"
            )
        offset = self.intercept_ - self.rho
        X = sparse_frame_as_csr(X)
        if self.feature_map is not None and not sp.issparse(X):
            width = self.n_input_features  # (the columns beyond it are ignored, as sparse)
            X = sp.csr_matrix(_dense_input(X, width)[:, :width])
        if sp.issparse(X):
            # The values are checked through the results: a NaN or an infinity in a feature
            # the model has makes its row's decision values non-finite (x w with w = 0 is
            # NaN), which saves a pass over the values (a third of the time on large data).
            X = as_csr(X, check_finite=False)
            out = np.empty((X.shape[0], self.coef_.shape[0]))
            indptr, indices, data, coef = X.indptr, X.indices, X.data, self.coef_

            wider = X.shape[1] > coef.shape[1]
            fparams = None if self.feature_map is None else self.feature_map.params

            def rows(r0: int, r1: int) -> None:
                part = indptr[r0 : r1 + 1]
                if fparams is None:
                    _sparse_decision(part, indices, data, coef, offset, out[r0:r1], wider)
                else:
                    _mapped_decision(part, indices, data, coef, offset, out[r0:r1], fparams)

            for_row_chunks(indptr, n_jobs, rows)
            if not all_finite(out.ravel()):
                if not all_finite(X.data):
                    raise InvalidInputError("X contains NaN or infinity")
                if fparams is not None:
                    # finite values whose squares or products overflow: the decision value
                    # would be NaN and the label arbitrary (training refuses such values)
                    raise map_overflow(int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0]))
        else:
            X = _dense_input(X, self.n_features)
            m = min(X.shape[1], self.n_features)
            out = X[:, :m] @ self.coef_[:, :m].T + offset
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X, n_jobs: int | None = -1) -> np.ndarray:
        """Predicted labels (classification), values (regression) or +1/-1 (one-class).
        ``n_jobs`` as for ``decision_function``."""
        dec = self.decision_function(X, n_jobs)
        if self.kind == REGRESSION:
            return dec
        if self.kind == ONECLASS:
            return np.where(dec > 0, 1.0, -1.0)
        # As LIBLINEAR's predict_values: two classes are decided by the first decision value
        # alone (also for a two-class Crammer-Singer model); otherwise the largest wins.
        if self.labels_.shape[0] == 2:
            first = dec if dec.ndim == 1 else dec[:, 0]
            return np.where(first > 0, self.labels_[0], self.labels_[1])
        if dec.ndim == 1:
            return np.full(dec.shape[0], self.labels_[0])
        return self.labels_[np.argmax(dec, axis=1)]

    @property
    def is_probability_model(self) -> bool:
        """Logistic regression (-s 0, 6, 7): the only models with probability estimates."""
        return SOLVERS[self.solver].probability

    def predict_proba(self, X, n_jobs: int | None = -1) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), columns in ``labels_`` order.

        As LIBLINEAR's ``predict_probability``: the logistic sigmoid of each decision value;
        for two classes p(labels_[0]) = sigma(dec) and p(labels_[1]) = 1 - that; for more, the
        one-vs-rest sigmoids normalised to sum to one. Logistic-regression models only.
        ``n_jobs`` as for ``decision_function``.
        """
        if not self.is_probability_model:
            raise InvalidInputError(
                "probability output is only supported for logistic regression (-s 0, 6, 7)"
            )
        dec = np.ascontiguousarray(self.decision_function(X, n_jobs), dtype=np.float64)
        n_classes = len(self.labels_)
        # (every sigmoid 0 on a row far from all classes: 0/0, NaN, as LIBLINEAR's)
        out = np.empty((dec.shape[0], max(n_classes, 1)))
        _probabilities(dec.reshape(-1, 1) if dec.ndim == 1 else dec, n_classes, out)
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the model in LIBLINEAR's text format, atomically.

        LIBLINEAR's files hold integer class labels: a model with other labels (strings,
        1.5) is a ModelFormatError and nothing is written.
        """
        write_model_file(path, _fields(self))

    def __repr__(self) -> str:
        return (
            f"Model(solver={self.solver} ({SOLVERS[self.solver].name}), "
            f"n_classes={len(self.labels_)}, n_features={self.n_features}, "
            f"bias={self.bias:g})"
        )


def _dense_input(X, width: int | None = None) -> np.ndarray:
    """X as a float64 2-D array, its values finite in the first ``width`` columns (those a
    model uses: the rest are ignored, as in sparse X; None: all)."""
    X = dense_values(X).astype(np.float64, copy=False)
    if not np.isfinite(X[:, :width]).all():
        raise InvalidInputError("X contains NaN or infinity")
    return X


def _fields(model: Model) -> ModelFields:
    fmap = model.feature_map
    return ModelFields(
        model.solver, model.labels_, model.coef_, model.bias, model.bias_weights_, model.rho,
        None if fmap is None else fmap.header_fields(),
    )  # fmt: skip


def _from_fields(fields: ModelFields, name: str) -> Model:
    fmap = None
    if fields.feature_map is not None:
        try:
            fmap = FeatureMap.from_header(fields.feature_map)
        except (ValueError, InvalidInputError) as exc:
            raise ModelFormatError(f"{name}: bad feature_map line: {exc}") from None
        if fmap.n_output != fields.coef.shape[1]:
            raise ModelFormatError(
                f"{name}: the feature map has {fmap.n_output} features, nr_feature is "
                f"{fields.coef.shape[1]}"
            )
    return Model(
        fields.solver, fields.labels, fields.coef, fields.bias, fields.bias_weights, fields.rho,
        feature_map=fmap,
    )  # fmt: skip


def format_model(model: Model) -> str:
    """The model as LIBLINEAR model-file text (with linsvm's feature_map line if it has one)."""
    f = _fields(model)
    return format_model_text(
        f.solver, f.labels, f.coef, f.bias, f.bias_weights, f.rho, f.feature_map
    )


def parse_model(text: str, name: str = "<model>") -> Model:
    """A Model from LIBLINEAR model-file text; ``name`` (the file) prefixes errors."""
    return _from_fields(parse_model_text(text, name), name)


def load_model(path: str | os.PathLike) -> Model:
    """Read the LIBLINEAR-format model file at ``path`` (one written here or by LIBLINEAR).

    Nothing in the file is executed: it is text, parsed field by field. Class labels come
    back as integers (int64), as the file holds them. Raises ModelFormatError (the file, and
    the line where one word is at fault) on a malformed file.
    """
    return _from_fields(read_model_file(path), os.fsdecode(os.fspath(path)))
