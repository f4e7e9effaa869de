"""Generated data sets for tests and benchmarks.

``make_text_classification`` draws a large, sparse, bag-of-words-like binary problem in the
shape of the classic text benchmarks (rcv1, news20, webspam-unigram): millions of rows, a few
dozen non-zeros per row, a long-tailed vocabulary, tf-idf values and L2-normalised rows.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from numba import njit

from .errors import InvalidInputError
from .solvers._random import new_state, next_u64

__all__ = ["make_text_classification"]

# Mean of the geometric term count per (row, feature) pair: 1 / _TF_P.
_TF_P = 0.6
# Zipf draws tried for one row before the rest of the row is filled uniformly (only reached when
# a row asks for a large share of a small vocabulary).
_ZIPF_TRIES_PER_ENTRY = 64
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True, inline="always")
def _uniform(state) -> float:
    """A uniform double in [0, 1)."""
    return float(next_u64(state) >> np.uint64(11)) * _INV_2_53


@njit(cache=True, nogil=True, inline="always")
def _zipf_rank(state, n_features, exponent, top) -> int:
    """A rank in [0, n_features) from a continuous power law on [1, n_features + 1), floored.

    The density is proportional to x**-exponent; ``top`` is (n_features + 1)**(1 - exponent) - 1
    (or log(n_features + 1) when exponent == 1), precomputed by the caller.
    """
    u = _uniform(state)
    if exponent == 1.0:
        x = math.exp(u * top)
    else:
        x = (1.0 + u * top) ** (1.0 / (1.0 - exponent))
    r = int(x) - 1
    if r < 0:
        return 0
    if r >= n_features:
        return n_features - 1
    return r


@njit(cache=True, nogil=True)
def _insertion_sort(a, start, stop) -> None:
    for k in range(start + 1, stop):
        v = a[k]
        j = k - 1
        while j >= start and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@njit(cache=True, nogil=True)
def _fill_rows(indptr, indices, data, feature_of_rank, idf_of_rank, exponent, seed_state):
    """Fill the CSR arrays row by row: distinct Zipf-ranked features, sorted, tf-idf, L2 = 1.

    Work happens in rank space (frequent ranks are small numbers, so the duplicate marks and
    look-up tables stay in cache); a row's entries are packed as ``feature << 32 | rank`` so
    that sorting them by feature keeps each entry's rank.
    """
    n_rows = indptr.shape[0] - 1
    n_features = feature_of_rank.shape[0]
    if exponent == 1.0:
        top = math.log(n_features + 1.0)
    else:
        top = (n_features + 1.0) ** (1.0 - exponent) - 1.0
    stamp = np.zeros(n_features, dtype=np.int64)  # stamp[rank] == row + 1: rank already in row
    max_len = 1
    for row in range(n_rows):
        max_len = max(max_len, indptr[row + 1] - indptr[row])
    keys = np.empty(max_len, dtype=np.int64)
    low_mask = np.int64(0xFFFFFFFF)
    log_1m_p = math.log(1.0 - _TF_P)
    for row in range(n_rows):
        start = indptr[row]
        k = indptr[row + 1] - start
        mark = row + 1
        m = 0
        tries = 0
        max_tries = _ZIPF_TRIES_PER_ENTRY * k
        while m < k and tries < max_tries:
            r = _zipf_rank(seed_state, n_features, exponent, top)
            tries += 1
            if stamp[r] != mark:
                stamp[r] = mark
                keys[m] = (np.int64(feature_of_rank[r]) << 32) | r
                m += 1
        while m < k:  # rare fallback: uniform draws (k <= n_features / 2, so this ends fast)
            r = np.int64(_uniform(seed_state) * n_features)
            if stamp[r] != mark:
                stamp[r] = mark
                keys[m] = (np.int64(feature_of_rank[r]) << 32) | r
                m += 1
        if k <= 64:
            _insertion_sort(keys, 0, k)
        else:
            keys[:k].sort()
        sq = 0.0
        for j in range(k):
            key = keys[j]
            # sublinear tf 1 + log(count), count ~ Geometric(_TF_P) on {1, 2, ...}
            u = _uniform(seed_state)
            tf = 1.0
            if u >= _TF_P:
                tf += math.log(1.0 + math.floor(math.log(1.0 - u) / log_1m_p))
            v = tf * idf_of_rank[key & low_mask]
            indices[start + j] = key >> 32
            data[start + j] = v
            sq += v * v
        scale = 1.0 / math.sqrt(sq)
        for j in range(k):
            data[start + j] = data[start + j] * scale


def _rank_probabilities(n_features: int, exponent: float) -> np.ndarray:
    """P(rank r) of the floored continuous power law used by ``_zipf_rank``."""
    edges = np.arange(1, n_features + 2, dtype=np.float64)
    if exponent == 1.0:
        cdf = np.log(edges) / math.log(n_features + 1.0)
    else:
        cdf = (edges ** (1.0 - exponent) - 1.0) / ((n_features + 1.0) ** (1.0 - exponent) - 1.0)
    return np.diff(cdf)


def make_text_classification(
    n_samples: int,
    n_features: int = 2**18,
    nnz_per_row: float = 40,
    zipf_exponent: float = 1.1,
    informative: float = 0.01,
    label_noise: float = 0.05,
    dtype=np.float64,
    random_state: int | None = 0,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """A large sparse text-like binary classification problem.

    The model:

    - **Row lengths.** The number of distinct features of a row is ``Geometric(1 / nnz_per_row)``
      on {1, 2, ...} (mean ``nnz_per_row``, long-tailed like document lengths), capped at
      ``max(1, n_features // 2)``.
    - **Vocabulary.** Feature ranks follow a Zipf-like law: a rank is the floor of a draw from
      the power law ``x**-zipf_exponent`` on ``[1, n_features + 1)``, so rank r has probability
      about ``(r + 1)**-zipf_exponent / H``. A fixed random permutation maps ranks to feature
      ids, so frequent features are spread over the index range as in a vocabulary sorted
      alphabetically. Draws repeating a feature already in the row are rejected (sampling
      without replacement); the row's indices are sorted and unique.
    - **Values.** tf-idf-like: ``(1 + log count) * idf`` with ``count ~ Geometric(0.6)`` on
      {1, 2, ...} and ``idf = 1 + log(1 / q)``, ``q = 1 - exp(-nnz_per_row * p_rank)`` the
      expected share of rows holding the feature. Every row is then scaled to unit L2 norm, so
      all values are positive and ``||x_i|| = 1``.
    - **Labels.** ``k = max(1, round(informative * n_features))`` features get a planted weight
      drawn from N(0, 1); they are drawn without replacement with probability proportional to
      their frequency (so that most rows meet several of them, as most documents hold some
      topical words). The score ``s_i = x_i' w_planted`` is thresholded at its median (the
      small offset that balances the classes): ``y_i = +1`` if ``s_i > median``, ``-1`` if
      below; rows at the median (those holding no informative feature, when many do) are
      +1 in random order until the classes are balanced (``n_samples // 2`` rows +1 when
      the rows at the median allow it). Finally each label is flipped with probability
      ``label_noise``.

    Parameters
    ----------
    n_samples : int
        Number of rows (> 0).
    n_features : int
        Number of columns (>= 2).
    nnz_per_row : float
        Mean number of non-zeros per row (>= 1).
    zipf_exponent : float
        Exponent of the feature-frequency law (>= 0; 0 is uniform).
    informative : float
        Fraction of features with a non-zero planted weight, in (0, 1].
    label_noise : float
        Probability of flipping each label, in [0, 0.5].
    dtype : float32 or float64
        dtype of the values.
    random_state : int or None
        Seed (>= 0); with an int the output is a deterministic function of all arguments.
        None: fresh entropy, different data at every call (as scikit-learn's ``make_*``).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Sorted unique column indices (int32 when they fit, else int64), rows of unit norm.
    y : ndarray of shape (n_samples,), float64 in {-1, +1}

    Notes
    -----
    Generation is one pass of a Numba kernel over the pre-sized CSR arrays (about 0.2 us per
    non-zero); memory is the output plus O(n_features) work space: 4 million rows of 40
    non-zeros take 1.9 GB in float64/int32.
    """
    for name, value in (("n_samples", n_samples), ("n_features", n_features)):
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise InvalidInputError(f"{name} must be an integer, got {value!r}")
    for name, value in (("nnz_per_row", nnz_per_row), ("zipf_exponent", zipf_exponent),
                        ("informative", informative), ("label_noise", label_noise)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, Real):
            raise InvalidInputError(f"{name} must be a number, got {value!r}")
    n_samples = int(n_samples)
    n_features = int(n_features)
    if n_samples < 1:
        raise InvalidInputError(f"n_samples must be >= 1, got {n_samples}")
    if n_features < 2:
        raise InvalidInputError(f"n_features must be >= 2, got {n_features}")
    if not (np.isfinite(nnz_per_row) and nnz_per_row >= 1):
        raise InvalidInputError(f"nnz_per_row must be >= 1, got {nnz_per_row}")
    if not (np.isfinite(zipf_exponent) and zipf_exponent >= 0):
        raise InvalidInputError(f"zipf_exponent must be >= 0, got {zipf_exponent}")
    if not 0 < informative <= 1:
        raise InvalidInputError(f"informative must be in (0, 1], got {informative}")
    if not 0 <= label_noise <= 0.5:
        raise InvalidInputError(f"label_noise must be in [0, 0.5], got {label_noise}")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise InvalidInputError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise InvalidInputError(f"dtype must be float32 or float64, got {dtype}")

    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError):
        raise InvalidInputError(f"random_state must be an integer >= 0 or None, "
                                f"got {random_state!r}") from None
    counts = rng.geometric(1.0 / nnz_per_row, size=n_samples)
    np.minimum(counts, max(1, n_features // 2), out=counts)
    nnz = int(counts.sum())
    index_dtype = np.int32 if max(nnz, n_features) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(n_samples + 1, dtype=index_dtype)
    np.cumsum(counts, out=indptr[1:])
    del counts

    feature_of_rank = rng.permutation(n_features).astype(np.int32)
    p_rank = _rank_probabilities(n_features, float(zipf_exponent))
    share = -np.expm1(-nnz_per_row * p_rank)
    idf_of_rank = 1.0 + np.log(1.0 / np.maximum(share, 1e-300))

    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=dtype)
    kernel_seed = int(rng.integers(0, 2**63))
    _fill_rows(
        indptr,
        indices,
        data,
        feature_of_rank,
        idf_of_rank,
        float(zipf_exponent),
        new_state(kernel_seed),
    )
    X = sp.csr_matrix((data, indices, indptr), shape=(n_samples, n_features))

    # Planted weights on frequency-weighted informative features (Gumbel top-k sampling).
    n_informative = max(1, round(informative * n_features))
    keys = np.log(np.maximum(p_rank, 1e-300)) + rng.gumbel(size=n_features)
    informative_ranks = np.argpartition(-keys, n_informative - 1)[:n_informative]
    w_planted = np.zeros(n_features)
    w_planted[feature_of_rank[informative_ranks]] = rng.standard_normal(n_informative)

    score = X @ w_planted
    threshold = np.median(score)
    y = np.where(score > threshold, 1.0, -1.0)
    # Rows at the median (those holding no informative feature, when many do) are +1 in
    # random order until the classes are balanced: a coin each would leave them unbalanced by
    # as many rows as lie on one side of the median more than on the other.
    tie_key = rng.random(n_samples)
    tied = np.flatnonzero(score == threshold)
    n_positive_ties = min(max(n_samples // 2 - int(np.count_nonzero(score > threshold)), 0),
                          tied.shape[0])  # fmt: skip
    y[tied[np.argsort(tie_key[tied], kind="stable")[:n_positive_ties]]] = 1.0
    flip = rng.random(n_samples) < label_noise
    y[flip] = -y[flip]
    return X, y
