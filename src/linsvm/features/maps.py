"""Feature maps a model remembers: the degree-2 polynomial map and feature hashing.

Linear classification on phi(x), an explicit degree-2 map, reaches the accuracy of a
polynomial-kernel SVM at a fraction of its cost when the data are sparse (Chang, Hsieh, Chang,
Ringgaard, Lin, JMLR 2010): phi(x) has O(nbar^2) non-zeros per row, however large n is. Hashing
the mapped features into 2^b signed columns keeps w bounded when n(n+1)/2 is not.

``FeatureMap`` is the description (degree, kernel scaling, hash bits, and the input width it was
bound to when trained); ``transform`` materialises phi(X) as CSR; the dual kernels can also run
on it implicitly (``_rows``). A model trained on a map keeps it, so predicting maps the rows the
same way, and its model file names it on a first line LIBLINEAR does not know (so LIBLINEAR's
own reader refuses the file rather than misreading its weights).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..data import as_csr
from ..errors import InvalidInputError
from ..parallel import for_row_chunks
from ._rows import (
    N_PARAMS,
    P_C_CONST,
    P_C_CROSS,
    P_C_LIN,
    P_C_SQ,
    P_DEGREE,
    P_HASH_BITS,
    P_N_INPUT,
    _column,
    feature_key,
    mapped_row,
    mapped_row_bound,
)

# An exact degree-2 map wider than this needs hashing: its w alone would take 2 GiB.
MAX_EXACT_FEATURES = 2**28
MAX_HASH_BITS = 31
# Input features a hashed degree-2 map can key (a key holds j + 1 and k + 1 in 32 bits each).
MAX_HASHED_PAIR_INPUT = 2**32 - 1
# The most input features a map takes: the readers' largest feature index (2^40,
# io.libsvm.MAX_FEATURE_INDEX), and index 0 of a 0-based file.
MAX_INPUT_FEATURES = 2**40 + 1
# Work on phi(X) in bounded memory takes rows in chunks of about this many mapped entries.
CHUNK_ENTRIES = 1 << 22
# ``estimate_collisions`` counts exactly while X maps to at most about this many entries;
# beyond, it counts on a sample of the columns holding about this many ...
COLLISION_SAMPLE_KEYS = 1 << 19
# ... but never on fewer columns than this (a small hashed space is counted whole).
COLLISION_MIN_COLUMNS = 1 << 12


def check_hash_bits(hash_bits) -> int:
    """``hash_bits`` as an int, or the error for one that is not an integer in
    1..MAX_HASH_BITS (a map's and the token hasher's alike)."""
    if (
        isinstance(hash_bits, bool)
        or not isinstance(hash_bits, (int, np.integer))
        or not 1 <= hash_bits <= MAX_HASH_BITS
    ):
        raise InvalidInputError(
            f"hash bits must be an integer in 1..{MAX_HASH_BITS}, got {hash_bits!r}"
        )
    return int(hash_bits)


def map_overflow(row: int) -> InvalidInputError:
    """The error for finite inputs whose squares or products overflow float64 in phi(x) (at
    prediction: the decision value would be NaN or infinite and the label arbitrary; training
    refuses such values before mapping)."""
    return InvalidInputError(
        f"X's values overflow the feature map in float64 (row {row}); scale the features"
    )


def _coefficients(gamma: float, coef0: float) -> tuple[float, float, float, float]:
    """(c_lin, c_sq, c_cross, c_const) of the degree-2 map of ``gamma``, ``coef0``:
    sqrt(2 gamma coef0), gamma, sqrt(2) gamma, coef0. Where 2 gamma coef0 overflows or is
    below the normal numbers, c_lin is sqrt(2 gamma) sqrt(coef0) (elsewhere the same digits
    as always: a saved model's map is the one it was trained with)."""
    product = 2.0 * gamma * coef0
    if coef0 == 0.0 or sys.float_info.min <= product < math.inf:
        c_lin = math.sqrt(product)
    else:
        c_lin = math.sqrt(2.0 * gamma) * math.sqrt(coef0)
    return c_lin, gamma, math.sqrt(2.0) * gamma, coef0


@dataclass(frozen=True)
class FeatureMap:
    """What to do to every row before the linear model sees it.

    degree : 2 for x, its squares and pairwise products; 1 for x alone (with ``hash_bits``:
        hashing the raw feature indices).
    gamma, coef0 : None for unit coefficients, phi(x) = [x_j ; x_j^2 ; x_j x_k]. Given (either
        one; the other then takes LIBSVM's default, gamma = 1/n_input, coef0 = 0), phi is scaled
        so that phi(x)'phi(x') = (gamma x'x' + coef0)^2, the polynomial kernel of degree 2:
        [sqrt(2 gamma coef0) x_j ; gamma x_j^2 ; sqrt(2) gamma x_j x_k ; coef0].
    hash_bits : None for the exact layout (``_rows``); b for 2^b signed hashed columns.
    n_input : the input width the map was bound to (``bind``): the layout's offset, and
        features at or beyond it are ignored when mapping, as LIBLINEAR ignores features
        beyond a model's.
    """

    degree: int = 2
    gamma: float | None = None
    coef0: float | None = None
    hash_bits: int | None = None
    n_input: int | None = None

    def __post_init__(self) -> None:
        if (
            isinstance(self.degree, bool)
            or not isinstance(self.degree, (int, np.integer))
            or self.degree not in (1, 2)
        ):
            # (2.0 == 2, but the model file's header would say "degree 2.0", which no reader
            # takes back)
            raise InvalidInputError(
                f"the feature map's degree must be the integer 1 or 2, not {self.degree!r}"
            )
        if self.degree == 1 and self.hash_bits is None:
            raise InvalidInputError("a degree-1 feature map only hashes: give hash_bits")
        if self.degree == 1 and (self.gamma is not None or self.coef0 is not None):
            raise InvalidInputError("gamma and coef0 scale the degree-2 map only")
        for name in ("gamma", "coef0"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, Real)):
                raise InvalidInputError(f"{name} must be a number, got {value!r}")
        if self.gamma is not None and not (math.isfinite(self.gamma) and self.gamma > 0):
            raise InvalidInputError(f"gamma must be a positive number, got {self.gamma!r}")
        if self.gamma is not None and not all(
            math.isfinite(c) for c in _coefficients(self.gamma, self.coef0 or 0.0)
        ):
            # (sqrt(2) gamma, the cross terms', or sqrt(2 gamma coef0), the linear terms')
            raise InvalidInputError(f"gamma {self.gamma!r} is too large: phi's coefficients "
                                    "overflow float64")  # fmt: skip
        if self.coef0 is not None and not (math.isfinite(self.coef0) and self.coef0 >= 0):
            # a negative coef0 gives a kernel with no real feature map of this shape
            raise InvalidInputError(f"coef0 must be a number >= 0, got {self.coef0!r}")
        if self.hash_bits is not None:
            check_hash_bits(self.hash_bits)
        if self.n_input is not None and not 0 <= self.n_input <= MAX_INPUT_FEATURES:
            # (beyond it no reader takes a row: a model file saying more is damaged)
            raise InvalidInputError(
                f"n_input must be from 0 to {MAX_INPUT_FEATURES}, got {self.n_input}")
        if (
            self.degree == 2
            and self.hash_bits is not None
            and self.n_input is not None
            and self.n_input > MAX_HASHED_PAIR_INPUT
        ):
            # a pair's hash key packs j + 1 and k + 1 into 32 bits each (``feature_key``):
            # wider inputs would merge distinct pairs before any hashing
            raise InvalidInputError(
                f"a hashed degree-2 map takes at most {MAX_HASHED_PAIR_INPUT} input features, "
                f"got {self.n_input}"
            )

    # -- binding to data ------------------------------------------------------------------

    @property
    def kernel_scaled(self) -> bool:
        return self.gamma is not None or self.coef0 is not None

    def bind(self, n_input: int) -> FeatureMap:
        """This map for inputs of ``n_input`` features (a trained model's map is bound).
        An exact degree-2 map too wide for memory is refused here, before any work."""
        bound = replace(self, n_input=int(n_input))
        if bound.hash_bits is None and bound.n_output > MAX_EXACT_FEATURES:
            raise InvalidInputError(
                f"the exact degree-2 map of {n_input} features has {bound.n_output} features "
                f"(more than {MAX_EXACT_FEATURES}); hash them (hash_bits / --hash-bits, e.g. 24)"
            )
        return bound

    def _require_bound(self) -> int:
        if self.n_input is None:
            raise InvalidInputError("the feature map is not bound to an input width yet")
        return self.n_input

    def coefficients(self) -> tuple[float, float, float, float]:
        """(c_lin, c_sq, c_cross, c_const) of phi (see the class docstring)."""
        if self.degree == 1:
            return 1.0, 0.0, 0.0, 0.0
        if not self.kernel_scaled:
            return 1.0, 1.0, 1.0, 0.0
        n = self._require_bound()
        gamma = self.gamma if self.gamma is not None else 1.0 / max(n, 1)
        coef0 = self.coef0 if self.coef0 is not None else 0.0
        return _coefficients(gamma, coef0)

    def largest_input(self, limit: float) -> float:
        """The magnitude of an input value below which every entry of phi(x) stays below
        ``limit`` (each entry a coefficient times x_j, x_j^2 or x_j x_k)."""
        c_lin, c_sq, c_cross, _ = self.coefficients()
        bound = limit / c_lin if c_lin > 0.0 else math.inf
        c_square = max(c_sq, c_cross)
        if c_square > 0.0:
            bound = min(bound, math.sqrt(limit / c_square))
        return bound

    @property
    def n_output(self) -> int:
        """Columns of phi(X): 2^hash_bits, or n + n(n+1)/2 (+1 for a constant) exactly."""
        if self.hash_bits is not None:
            return 2**self.hash_bits
        n = self._require_bound()
        return n + n * (n + 1) // 2 + (1 if self.coefficients()[3] != 0.0 else 0)

    @property
    def params(self) -> np.ndarray:
        """The map as compiled kernels take it (positions ``_rows.P_*``)."""
        p = np.zeros(N_PARAMS)
        p[P_DEGREE] = self.degree
        p[P_HASH_BITS] = self.hash_bits or 0
        p[P_N_INPUT] = self._require_bound()
        p[P_C_LIN], p[P_C_SQ], p[P_C_CROSS], p[P_C_CONST] = self.coefficients()
        return p

    # -- mapping --------------------------------------------------------------------------

    def transform(self, X, n_jobs: int | None = -1) -> sp.csr_matrix:
        """phi(X) as canonical CSR of shape (n_rows, n_output), float64.

        X: any sparse matrix or 2-D array (made canonical CSR by ``linsvm.data.as_csr``, a
        no-op for canonical CSR: unsorted or repeated indices would pair the wrong entries).
        ``n_jobs``: threads over rows (the result does not depend on it)."""
        X = as_csr(X, check_finite=False)
        params = self.params
        indptr, indices, data = X.indptr, X.indices, X.data
        n_rows = X.shape[0]
        bound = _row_bounds(indptr, params)
        room = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(bound, out=room[1:])
        # int32 only when both the columns and the entries fit: a row pointer cast to int32
        # past 2^31 entries would wrap (scipy then checks only what it is given)
        fits = max(self.n_output, int(room[-1])) <= np.iinfo(np.int32).max
        index_dtype = np.int32 if fits else np.int64
        cols = np.empty(int(room[-1]), dtype=index_dtype)
        vals = np.empty(int(room[-1]))
        lengths = np.empty(n_rows, dtype=np.int64)

        def rows(r0: int, r1: int) -> None:
            _map_rows(indptr, indices, data, r0, r1, params, room, cols, vals, lengths)

        for_row_chunks(indptr, n_jobs, rows)
        out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(lengths, out=out_ptr[1:])
        compact_rows(room, out_ptr, cols, vals)
        nnz = int(out_ptr[-1])
        cols, vals = cols[:nnz], vals[:nnz]
        if nnz < 0.9 * room[-1]:  # give back what the bound over-reserved
            cols, vals = cols.copy(), vals.copy()
        shape = (n_rows, self.n_output)
        out = sp.csr_matrix((vals, cols, out_ptr.astype(index_dtype)), shape=shape)
        out.has_sorted_indices = True
        return out

    def chunks(self, X, max_entries: int = CHUNK_ENTRIES) -> list[tuple[int, int]]:
        """Row ranges [r0, r1) of X whose phi holds at most about ``max_entries`` entries each
        (a row longer than that is a range of its own): for work on phi(X) in bounded memory."""
        X = as_csr(X, check_finite=False)
        ends = np.cumsum(_row_bounds(X.indptr, self.params))
        cuts = [0]
        while cuts[-1] < X.shape[0]:
            start = ends[cuts[-1] - 1] if cuts[-1] > 0 else 0
            nxt = int(np.searchsorted(ends, start + max_entries, side="right"))
            cuts.append(max(nxt, cuts[-1] + 1))
        return list(zip(cuts[:-1], cuts[1:], strict=True))

    def nbytes(self, X) -> int:
        """About how many bytes ``transform(X)`` takes (an upper bound on its entries)."""
        X = as_csr(X, check_finite=False)
        entries = int(_row_bounds(X.indptr, self.params).sum())
        index_bytes = 4 if max(self.n_output, entries) <= np.iinfo(np.int32).max else 8
        return entries * (8 + index_bytes)

    def collisions(self, X) -> tuple[int, int]:
        """(distinct mapped features of X's rows, hashed columns they occupy): their difference
        is the number of features that share a column with another. Exact maps: equal.
        Exact counts: a sort of every mapped entry's key (``estimate_collisions`` is cheaper)."""
        return self._count_in_columns(X, 1)

    def estimate_collisions(self, X, max_keys: int | None = None) -> tuple[int, int, int]:
        """(distinct mapped features, hashed columns they occupy, share): ``collisions``
        counted on the columns c with c mod share == 0 only and scaled by share, share the
        smallest power of two that leaves about ``max_keys`` (default
        ``COLLISION_SAMPLE_KEYS``) mapped entries of X to sort, on at least
        ``COLLISION_MIN_COLUMNS`` columns. Features meet only within a column, so
        each sampled column is counted exactly and the estimates are unbiased; share == 1:
        the exact counts. Costs one hashing pass over X's mapped entries, not a sort of them.
        Exact maps are always counted whole (share 1)."""
        X = as_csr(X, check_finite=False)  # (as collisions takes it)
        max_keys = COLLISION_SAMPLE_KEYS if max_keys is None else max_keys
        share = 1
        if self.hash_bits is not None:
            n_keys = int(_row_bounds(X.indptr, self.params).sum())
            most = max(self.n_output // COLLISION_MIN_COLUMNS, 1)  # the largest share
            while n_keys > max_keys * share and 2 * share <= most:
                share *= 2
        distinct, columns = self._count_in_columns(X, share)
        return distinct * share, columns * share, share

    def _count_in_columns(self, X, share: int) -> tuple[int, int]:
        """(distinct mapped features, columns they occupy) among the columns c with
        c mod share == 0 (share: a power of two)."""
        X = as_csr(X, check_finite=False)
        params = self.params
        n_keys = int(_row_bounds(X.indptr, params).sum())
        # room for the expected sample and its spread; the kernel grows it if need be
        capacity = n_keys if share == 1 else n_keys // share + 8 * math.isqrt(n_keys) + 1024
        keys = _keys_in_columns(X.indptr, X.indices, X.data, params, share - 1, capacity)
        distinct = np.unique(keys)
        del keys
        if self.hash_bits is None:
            return distinct.shape[0], distinct.shape[0]
        return distinct.shape[0], np.unique(_bucket_of_keys(distinct, params)).shape[0]

    # -- the model-file line ---------------------------------------------------------------

    def header_fields(self) -> dict[str, str]:
        """The model file's ``feature_map`` line as key/value pairs (gamma and coef0 as used,
        defaults resolved, so the file does not depend on them)."""
        fields = {"degree": str(self.degree), "n_input": str(self._require_bound())}
        if self.kernel_scaled:
            _, gamma, _, coef0 = self.coefficients()
            fields.update(gamma=f"{gamma:.17g}", coef0=f"{coef0:.17g}")
        if self.hash_bits is not None:
            fields["hash_bits"] = str(self.hash_bits)
        return fields

    def header(self) -> str:
        """The model file's first line: ``feature_map degree 2 n_input 123 gamma ...``."""
        return " ".join(["feature_map", *(f"{k} {v}" for k, v in self.header_fields().items())])

    @classmethod
    def from_header(cls, fields: dict[str, str]) -> FeatureMap:
        """The map of a model file's ``feature_map`` line (its key/value pairs).
        Raises ValueError (the model-file reader names the file)."""
        known = {"degree", "n_input", "gamma", "coef0", "hash_bits"}
        unknown = set(fields) - known
        if unknown:
            raise ValueError(f"unknown feature_map field(s) {sorted(unknown)}")
        if "degree" not in fields or "n_input" not in fields:
            raise ValueError("feature_map needs 'degree' and 'n_input'")
        for key in ("degree", "n_input", "hash_bits"):
            # (decimal digits, as the header's integers: not Python's "2_0")
            if key in fields and not (fields[key].isascii() and fields[key].isdigit()):
                raise ValueError(f"feature_map {key} must be a whole number, got {fields[key]!r}")
        for key in ("gamma", "coef0"):
            if key in fields and ("_" in fields[key] or not fields[key].isascii()):
                raise ValueError(f"feature_map {key} must be a number, got {fields[key]!r}")
        try:
            fmap = cls(
                degree=int(fields["degree"]),
                gamma=float(fields["gamma"]) if "gamma" in fields else None,
                coef0=float(fields["coef0"]) if "coef0" in fields else None,
                hash_bits=int(fields["hash_bits"]) if "hash_bits" in fields else None,
            )
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None
        return fmap.bind(int(fields["n_input"]))

    def describe(self) -> str:
        """One line for people: what the map is and how wide."""
        what = "degree-2 map" if self.degree == 2 else "hashing"
        if self.kernel_scaled:
            if self.n_input is None:
                g = "1/n" if self.gamma is None else f"{self.gamma:g}"
                r = f"{self.coef0 or 0.0:g}"
            else:
                _, gamma, _, coef0 = self.coefficients()
                g, r = f"{gamma:g}", f"{coef0:g}"
            what += f" scaled as (gamma x'x' + coef0)^2, gamma {g}, coef0 {r}"
        if self.hash_bits is not None:
            what += f", hashed into 2^{self.hash_bits} columns"
        elif self.n_input is not None:
            what += f", {self.n_output} features"
        return what


@njit(cache=True, nogil=True)
def _row_bounds(indptr, params):
    out = np.empty(indptr.shape[0] - 1, dtype=np.int64)
    for i in range(out.shape[0]):
        out[i] = mapped_row_bound(indptr, i, params)
    return out


@njit(cache=True, nogil=True)
def _map_rows(indptr, indices, data, r0, r1, params, room, cols, vals, lengths) -> None:
    """Rows r0..r1-1 of phi(X), each written at room[i] (its reserved place)."""
    for i in range(r0, r1):
        a, b = room[i], room[i + 1]
        lengths[i] = mapped_row(indptr, indices, data, i, params, cols[a:b], vals[a:b])


@njit(cache=True, nogil=True)
def compact_rows(room, out_ptr, cols, vals) -> None:
    """Slide every row's entries from its reserved place ``room[i]`` to its final one
    ``out_ptr[i]`` (never to the right): CSR built with room reserved per row, then closed up."""
    for i in range(out_ptr.shape[0] - 1):
        src = room[i]
        dst = out_ptr[i]
        if src != dst:
            for t in range(out_ptr[i + 1] - dst):
                cols[dst + t] = cols[src + t]
                vals[dst + t] = vals[src + t]


@njit(cache=True, nogil=True, inline="always")
def _append_key(keys, m, key):
    """keys[m] = key, in a larger copy of keys when it is full; (keys, m + 1)."""
    if m == keys.shape[0]:
        grown = np.empty(2 * m + 1024, dtype=np.uint64)
        for t in range(m):
            grown[t] = keys[t]
        keys = grown
    keys[m] = key
    return keys, m + 1


@njit(cache=True, nogil=True)
def _keys_in_columns(indptr, indices, data, params, mask, capacity):
    """The keys (``feature_key``) of every mapped feature of every row, with repeats, whose
    column c has c & mask == 0 (mask 0: all of them); ``capacity``: the room to start with."""
    n_input = params[P_N_INPUT]
    umask = np.uint64(mask)
    keys = np.empty(max(capacity, 1), dtype=np.uint64)
    m = 0
    has_lin = params[P_C_LIN] != 0.0
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            jp = np.int64(indices[p])
            if jp >= n_input or data[p] == 0.0:
                continue
            if has_lin and (_column(params, jp, -1)[0] & umask) == 0:
                keys, m = _append_key(keys, m, feature_key(jp, -1))
            if params[P_DEGREE] == 2.0:
                for q in range(indptr[i], p + 1):
                    jq = np.int64(indices[q])
                    if data[q] != 0.0 and (_column(params, jq, jp)[0] & umask) == 0:
                        keys, m = _append_key(keys, m, feature_key(jq, jp))
    if params[P_C_CONST] != 0.0 and indptr.shape[0] > 1:
        if (_column(params, -1, -1)[0] & umask) == 0:
            keys, m = _append_key(keys, m, feature_key(-1, -1))
    return keys[:m]


@njit(cache=True, nogil=True)
def _bucket_of_keys(keys, params):
    out = np.empty(keys.shape[0], dtype=np.int64)
    for t in range(keys.shape[0]):
        key = keys[t]
        j = np.int64(key & np.uint64(0xFFFFFFFF)) - 1
        k = np.int64(key >> np.uint64(32)) - 1
        out[t] = _column(params, j, k)[0]
    return out


__all__ = ["FeatureMap", "MAX_EXACT_FEATURES", "MAX_HASH_BITS"]
