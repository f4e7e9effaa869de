"""scikit-learn transformers for the feature maps: ``Poly2Features`` and ``TokenHasher``.

Both return canonical CSR float64, which linsvm's estimators take as is (no copy), so
``make_pipeline(Poly2Features(), linsvm.LinearSVC())`` trains on phi(X). The map then lives in
the pipeline; ``linsvm.train(..., feature_map=FeatureMap(...))`` is the alternative that keeps
it in the model (and can run it implicitly, without storing phi(X)).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from ..data import as_csr
from ..parallel import effective_n_jobs
from .maps import FeatureMap, check_hash_bits
from .tokens import _check_input_type, hash_tokens

__all__ = ["Poly2Features", "TokenHasher"]


def _exact_map(transformer: Poly2Features) -> bool:
    """Whether the columns have names: the fitted map's, else the parameters' (a set_params
    after fit changes nothing until the next fit)."""
    fitted = getattr(transformer, "feature_map_", None)
    hash_bits = transformer.hash_bits if fitted is None else fitted.hash_bits
    return hash_bits is None


class Poly2Features(TransformerMixin, BaseEstimator):
    """The degree-2 map phi(X) of ``linsvm.features.FeatureMap``, sparse in and out.

    Parameters
    ----------
    gamma, coef0 : None, None for phi(x) = [x_j ; x_j^2 ; x_j x_k (j < k)]; either given
        (the other defaulting as LIBSVM's: gamma = 1/n_features_in_, coef0 = 0) for the
        scaling with phi(x)'phi(x') = (gamma x'x' + coef0)^2, the degree-2 polynomial kernel.
    hash_bits : None for the exact layout (n + n(n+1)/2 columns, + 1 constant column when
        coef0 > 0); b in 1..31 for 2^b signed hashed columns.
    n_jobs : threads for ``transform`` (joblib's convention; the result does not depend on it).

    Attributes
    ----------
    n_features_in_ : the input width seen by ``fit``.
    feature_names_in_ : the input's column names, when ``fit`` was given a DataFrame.
    feature_map_ : the ``FeatureMap`` bound to ``n_features_in_``.
    n_output_features_ : columns of phi(X).
    collisions_ : with hashing, (distinct mapped features of the training X, hashed columns
        they occupy): ``FeatureMap.estimate_collisions``, exact up to
        ``COLLISION_SAMPLE_KEYS`` mapped entries and estimated on a sample of the columns
        beyond (about a transform's cost; the exact count, ``FeatureMap.collisions``, sorts
        every mapped key: several times a transform); None for the exact map, which has no
        collisions.

    ``transform`` of X of another width than ``fit`` saw raises ValueError, as every
    scikit-learn estimator (and ``linsvm.LinearSVC``) does: in a pipeline a wrong width is a
    misaligned column more often than a feature the model never saw. (``FeatureMap.transform``
    and a ``linsvm.Model`` trained with a map keep LIBLINEAR's rule instead: features beyond
    the trained width are ignored.)
    """

    def __init__(self, gamma=None, coef0=None, hash_bits=None, n_jobs=None):
        self.gamma = gamma
        self.coef0 = coef0
        self.hash_bits = hash_bits
        self.n_jobs = n_jobs

    def _validate(self, X, reset: bool) -> sp.csr_matrix:
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            accept_large_sparse=True,
        )
        return as_csr(X, check_finite=False)  # validate_data refused NaN and infinity

    def fit(self, X, y=None):
        """Check X (n_samples, n_features), bind the map to n_features; y is ignored."""
        X = self._validate(X, reset=True)
        effective_n_jobs(self.n_jobs)  # (n_jobs=0 failed at the first transform)
        # (gamma and coef0 as given: FeatureMap refuses a str or a bool, which float() took)
        fmap = FeatureMap(degree=2, gamma=self.gamma, coef0=self.coef0,
                          hash_bits=self.hash_bits).bind(X.shape[1])  # fmt: skip
        self.feature_map_ = fmap
        self.n_output_features_ = fmap.n_output
        self.collisions_ = (fmap.estimate_collisions(X)[:2] if fmap.hash_bits is not None
                            else None)  # fmt: skip
        return self

    def transform(self, X) -> sp.csr_matrix:
        """phi(X): canonical CSR float64 of shape (n_samples, n_output_features_)."""
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        return self.feature_map_.transform(X, n_jobs=self.n_jobs)

    @available_if(_exact_map)
    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the exact map's columns in order: "x3", then "x0^2", "x0 x1", "x1^2",
        "x0 x2", ... (pairs j <= k ordered by k, then j), then "1" for the constant.
        Hashed columns have no names (the method is absent then)."""
        check_is_fitted(self)
        names = [str(f) for f in _check_feature_names_in(self, input_features)]
        out = list(names)
        out += [
            f"{names[k]}^2" if j == k else f"{names[j]} {names[k]}"
            for k in range(len(names))
            for j in range(k + 1)
        ]
        if self.feature_map_.coefficients()[3] != 0.0:
            out.append("1")
        return np.asarray(out, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class TokenHasher(TransformerMixin, BaseEstimator):
    """Documents of string tokens to 2^hash_bits signed hashed columns (``hash_tokens``).

    Stateless: ``fit`` does nothing, so a fitted and an unfitted TokenHasher transform alike,
    in every process (the hash is fixed, see ``linsvm.features.tokens``).

    Parameters
    ----------
    hash_bits : b in 1..31: the output has 2^b columns.
    input_type : "string" (each document an iterable of str tokens, each counting 1),
        "dict" ({token: value}) or "pair" ((token, value) pairs), as FeatureHasher's.
    n_jobs : threads for the hashing kernel (the result does not depend on it).
    """

    def __init__(self, hash_bits=20, input_type="string", n_jobs=None):
        self.hash_bits = hash_bits
        self.input_type = input_type
        self.n_jobs = n_jobs

    def fit(self, X=None, y=None):
        """Nothing to learn: checks the parameters (as FeatureHasher does); returns self."""
        check_hash_bits(self.hash_bits)
        _check_input_type(self.input_type)
        effective_n_jobs(self.n_jobs)  # (n_jobs=0 failed at the first transform)
        return self

    def transform(self, X) -> sp.csr_matrix:
        """CSR float64 of shape (n_documents, 2**hash_bits)."""
        return hash_tokens(X, self.hash_bits, input_type=self.input_type, n_jobs=self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = self.input_type == "string"
        tags.input_tags.dict = self.input_type == "dict"
        tags.requires_fit = False
        return tags
