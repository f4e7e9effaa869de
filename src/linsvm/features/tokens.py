"""Feature hashing of string tokens: documents of words (or any strings) to signed columns.

Every token goes to one of 2^b columns with a sign, so a model's width is 2^b whatever the
vocabulary, and no vocabulary is stored (Weinberger et al., ICML 2009). The hash is fixed and
documented so that a model's columns are the same in every process, run and machine (Python's
``hash()`` of a str is salted per process and must never be used here)::

    h0 = FNV-1a 64 of the token's UTF-8 bytes:
         h0 = 0xCBF29CE484222325; for each byte c: h0 = ((h0 XOR c) * 0x100000001B3) mod 2^64
    h  = linsvm.features._rows.mix64(h0)   (SplitMix64's finaliser, so that low bits are
         good buckets and the top bit a fair sign):
         z = h0 + 0x9E3779B97F4A7C15;  z = (z XOR z >> 30) * 0xBF58476D1CE4E5B9;
         z = (z XOR z >> 27) * 0x94D049BB133111EB;  h = z XOR z >> 31     (all mod 2^64)
    column = h mod 2^b,  sign = +1 if h < 2^63 else -1

A document's entry in a column is the sum of sign * value over its tokens in that column.

How the work is split: Python touches each *document* a few times, always through C-level
builtins (``map``, ``itertools.chain``, ``str.join``), never each token or byte in a Python
loop; all tokens are joined into one string with NUL as a terminator and encoded to UTF-8 once,
and a compiled kernel finds the token boundaries, hashes the bytes and scatters the entries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from decimal import Decimal
from itertools import chain
from numbers import Real
from operator import itemgetter, methodcaller

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..errors import InvalidInputError
from ..parallel import for_row_chunks
from ._rows import mix64
from .maps import check_hash_bits, compact_rows

INPUT_TYPES = ("string", "dict", "pair")
# Terminates every token in the joined buffer; so no token may contain it.
SEPARATOR = "\x00"

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


# -- kernels ----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _token_ends(buf, n_tokens):
    """(ends, count): ends[t] is the position of token t's terminating NUL; count is how many
    NULs the buffer holds (== n_tokens unless a token contained one)."""
    ends = np.empty(n_tokens, dtype=np.int64)
    t = 0
    for p in range(buf.shape[0]):
        if buf[p] == 0:
            if t < n_tokens:
                ends[t] = p
            t += 1
    return ends, t


@njit(cache=True, nogil=True, inline="always")
def _token_hash(buf, start, end):
    """h = mix64(FNV-1a 64 of buf[start:end]) (see the module docstring)."""
    h = _FNV_OFFSET
    for p in range(start, end):
        h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
    return mix64(h)


@njit(cache=True, nogil=True)
def _hash_documents(buf, ends, doc_ptr, values, unit, bits, r0, r1, cols, vals, lengths):
    """Documents r0..r1-1: document d's entries are written at cols/vals[doc_ptr[d]:] (its
    tokens' places), ascending columns, the tokens of one column added in token order, zeros
    dropped; lengths[d] = how many remain.

    Each token first becomes one int64 sort key, column << 32 | position << 1 | sign bit
    (column < 2^31, position < 2^31 in its document), written in ``cols``: one in-place sort
    of plain integers orders a document by column, then token order, with no index array."""
    mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    top = np.uint64(63)
    for d in range(r0, r1):
        a = doc_ptr[d]
        b = doc_ptr[d + 1]
        for t in range(a, b):
            start = ends[t - 1] + 1 if t > 0 else 0
            h = _token_hash(buf, start, ends[t])
            cols[t] = (np.int64(h & mask) << 32) | ((t - a) << 1) | np.int64(h >> top)
        if b - a > 1:
            cols[a:b].sort()
        out = a
        for t in range(a, b):
            key = cols[t]
            col = key >> 32
            v = 1.0 if unit else values[a + ((key & 0xFFFFFFFF) >> 1)]
            if key & 1:
                v = -v
            if out > a and cols[out - 1] == col:
                vals[out - 1] += v
            else:
                cols[out] = col  # out <= t: key t is already read
                vals[out] = v
                out += 1
        kept = a
        for t in range(a, out):
            if vals[t] != 0.0:
                cols[kept] = cols[t]
                vals[kept] = vals[t]
                kept += 1
        lengths[d] = kept - a


@njit(cache=True, nogil=True)
def _all_hashes(buf, ends):
    out = np.empty(ends.shape[0], dtype=np.uint64)
    for t in range(ends.shape[0]):
        start = ends[t - 1] + 1 if t > 0 else 0
        out[t] = _token_hash(buf, start, ends[t])
    return out


# -- Python side ------------------------------------------------------------------------------


def _short(obj) -> str:
    """repr(obj) on one line (an array's spans several), cut to 40 characters."""
    text = " ".join(repr(obj).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _where(doc_ptr: np.ndarray, t: int) -> str:
    d = int(np.searchsorted(doc_ptr, t, side="right")) - 1
    return f"document {d}, token {t - int(doc_ptr[d])}"


def _check_input_type(input_type) -> str:
    if not isinstance(input_type, str) or input_type not in INPUT_TYPES:
        raise InvalidInputError(f"input_type must be one of {INPUT_TYPES}, got {input_type!r}")
    return input_type


def _flatten(documents, input_type: str):
    """(tokens: list of str, doc_ptr: (n_docs + 1,) int64, values: float64 array or None).

    Per document: one ``tuple``/``len`` call through ``map``; per token: C-level copies only.
    """
    _check_input_type(input_type)
    if (isinstance(documents, (str, bytes, Mapping)) or hasattr(documents, "columns")
            or not isinstance(documents, Iterable)):  # fmt: skip
        # (a mapping or a DataFrame iterates over its keys: strs, taken for documents)
        raise InvalidInputError(
            "documents must be an iterable of documents (each an iterable of str tokens, a "
            f"mapping or (token, value) pairs), got one {type(documents).__name__}"
            + (" (a list of one mapping is one document)" if isinstance(documents, Mapping)
               else " (give one of its columns)" if hasattr(documents, "columns") else "")
        )  # fmt: skip
    docs = documents if isinstance(documents, list) else list(documents)
    kinds = set(map(type, docs))
    # (subclasses too: NumPy's str_ and bytes_, the elements of an array of texts)
    if any(issubclass(kind, (str, bytes)) for kind in kinds):
        d = next(d for d, doc in enumerate(docs) if isinstance(doc, (str, bytes)))
        raise InvalidInputError(
            f"document {d} is a single str: give each document as an iterable of tokens "
            "(e.g. text.split()), not the text itself"
        )
    try:
        if input_type == "dict":
            lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
            tokens = list(chain.from_iterable(docs))
            raw_values = list(chain.from_iterable(map(methodcaller("values"), docs)))
        else:
            docs = list(map(tuple, docs))  # a tuple is kept as is; anything else copied once
            lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
            if input_type == "string":
                tokens, raw_values = list(chain.from_iterable(docs)), None
            else:
                pairs = list(chain.from_iterable(docs))
                if pairs and set(map(len, pairs)) != {2}:
                    bad = next(t for t, pair in enumerate(pairs) if len(pair) != 2)
                    raise InvalidInputError(
                        f"{_where(_pointers(lengths), bad)}: input_type 'pair' needs every "
                        f"token as a (token, value) pair, got {_short(pairs[bad])}"
                    )
                tokens = list(map(itemgetter(0), pairs))
                raw_values = list(map(itemgetter(1), pairs))
    except (TypeError, AttributeError, KeyError) as exc:
        need = {
            "string": "an iterable of str tokens",
            "dict": "a mapping {token: value}",
            "pair": "an iterable of (token, value) pairs",
        }[input_type]
        d = _first_bad_document(docs, input_type)
        raise InvalidInputError(
            f"with input_type {input_type!r} every document must be {need}: document {d} is "
            f"{_short(docs[d])} ({type(exc).__name__}: {exc})"
        ) from None
    if lengths.shape[0] and lengths.max() >= 2**31:
        raise InvalidInputError("a document holds 2^31 tokens or more; split it")
    doc_ptr = _pointers(lengths)
    values = None
    if raw_values is not None:
        values = _as_values(raw_values, doc_ptr)
    return tokens, doc_ptr, values


def _pointers(lengths: np.ndarray) -> np.ndarray:
    """(n_docs + 1,) int64: where each document's tokens start, from their counts."""
    doc_ptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=doc_ptr[1:])
    return doc_ptr


def _first_bad_document(docs: list, input_type: str) -> int:
    """The first document that is not of ``input_type``'s form (one was not)."""
    for d, doc in enumerate(docs):
        try:
            if input_type == "dict":
                len(doc), list(doc), list(doc.values())
            elif input_type == "pair":
                [(pair[0], pair[1]) for pair in tuple(doc)]
            else:
                tuple(doc)
        except (TypeError, AttributeError, KeyError, IndexError):
            return d
    return 0


def _as_values(raw_values: list, doc_ptr: np.ndarray) -> np.ndarray:
    """Token values as float64: real numbers only (a str value is refused, not parsed; so are
    complex numbers, dates and other objects NumPy would convert), finite."""
    try:
        arr = np.asarray(raw_values) if raw_values else np.zeros(0)
    except ValueError:  # (a sequence among the numbers)
        arr = None
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "biuf":
        # mixed kinds of real numbers (ints and Decimals, ...): converted by C-level loops
        if all(issubclass(kind, (Real, np.bool_, Decimal)) for kind in set(map(type, raw_values))):
            # (an int beyond float64, 10**400; a signalling NaN Decimal): found below
            with contextlib.suppress(OverflowError, ValueError):
                arr = np.fromiter(map(float, raw_values), np.float64, count=len(raw_values))
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "biuf":
        # the slow way, a value at a time: the first value that is not a real number
        arr = np.empty(len(raw_values))
        for t, v in enumerate(raw_values):
            try:
                if isinstance(v, (Real, np.bool_, Decimal)):
                    arr[t] = float(v)
                    continue
            except (OverflowError, ValueError):  # (an int beyond float64, 10**400; sNaN)
                pass
            raise InvalidInputError(f"{_where(doc_ptr, t)}: token values must be real numbers, "
                                    f"got {_short(v)}")  # fmt: skip
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise InvalidInputError(f"{_where(doc_ptr, bad)}: token value {arr[bad]} is not finite")
    return arr


def _token_buffer(tokens: list, doc_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(buf: uint8 UTF-8 bytes of every token followed by NUL, ends: each token's NUL)."""
    n_tokens = len(tokens)
    try:
        # (the last NUL joined on, not appended: a copy of the whole text fewer)
        text = SEPARATOR.join(chain(tokens, ("",))) if n_tokens else ""
    except TypeError:
        bad = next(t for t, tok in enumerate(tokens) if not isinstance(tok, str))
        raise InvalidInputError(
            f"{_where(doc_ptr, bad)} ({_short(tokens[bad])}) is of type "
            f"{type(tokens[bad]).__name__}, not str"
        ) from None
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        bad = next(t for t, tok in enumerate(tokens) if not _encodable(tok))
        raise InvalidInputError(
            f"{_where(doc_ptr, bad)} ({_short(tokens[bad])}) cannot be encoded as UTF-8 "
            "(a lone surrogate?)"
        ) from None
    buf = np.frombuffer(raw, dtype=np.uint8)
    ends, count = _token_ends(buf, n_tokens)
    if count != n_tokens:
        bad = next(t for t, tok in enumerate(tokens) if SEPARATOR in tok)
        raise InvalidInputError(
            f"{_where(doc_ptr, bad)} ({_short(tokens[bad])}) contains the NUL character, "
            "which token hashing reserves as its separator"
        )
    return buf, ends


def _encodable(token: str) -> bool:
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def hash_tokens(
    documents, hash_bits: int, *, input_type: str = "string", n_jobs: int | None = -1
) -> sp.csr_matrix:
    """Documents of string tokens as signed hashed columns: CSR (n_documents, 2**hash_bits).

    documents : an iterable of documents. With ``input_type="string"`` each document is an
        iterable of str tokens, each counting 1 (repeats add up); ``"dict"``: a mapping
        {token: value}; ``"pair"``: an iterable of (token, value) pairs (repeats add up).
        Values are real numbers (a str value is an error, not a ``"token=value"`` feature).
    hash_bits : b in 1..31; token t goes to column h(t) mod 2^b with sign +/-1 from h's top
        bit, h the documented 64-bit hash of its UTF-8 bytes (module docstring).
    n_jobs : threads for the hashing kernel over documents (joblib's convention; the result
        does not depend on it).

    Returns canonical CSR, float64: indices sorted, one entry per column, exact zeros
    (values, or entries that cancelled) dropped.

    Costs: per document, a few C-level calls through ``map`` (``tuple``, ``len``; "dict":
    ``.values()``); per token, pointer copies into one list (and for "pair", two
    ``itemgetter`` calls and a ``len``), then one ``str.join``; per byte, one UTF-8 encoding and
    the compiled scan and hash; per document again, one in-place integer sort of its tokens'
    (column, position) keys in the kernel. Indicatively, 5M tokens of ~9 bytes in 50k
    documents: ~0.4 s of Python-side flattening, joining and encoding, ~0.4 s of kernel on
    one thread. Memory: the token list, the joined string, its bytes, and 8 + 8 bytes a
    token for the result (before compaction). A document holds fewer than 2^31 tokens.

    Raises InvalidInputError: a token that is not a str, contains NUL or is not encodable; a
    value that is not a finite number; a document given as one str.
    """
    bits = check_hash_bits(hash_bits)
    tokens, doc_ptr, values = _flatten(documents, input_type)
    buf, ends = _token_buffer(tokens, doc_ptr)
    n_docs, n_tokens = doc_ptr.shape[0] - 1, len(tokens)
    unit = values is None
    values = np.zeros(0) if unit else values
    cols = np.empty(n_tokens, dtype=np.int64)
    vals = np.empty(n_tokens)
    lengths = np.empty(n_docs, dtype=np.int64)

    def documents_(r0: int, r1: int) -> None:
        _hash_documents(buf, ends, doc_ptr, values, unit, bits, r0, r1, cols, vals, lengths)

    for_row_chunks(doc_ptr, n_jobs, documents_)
    out_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_ptr[1:])
    compact_rows(doc_ptr, out_ptr, cols, vals)
    nnz = int(out_ptr[-1])
    if not np.isfinite(vals[:nnz]).all():
        # (finite values whose sum in one column overflows: refused, as a value that is not)
        k = int(np.flatnonzero(~np.isfinite(vals[:nnz]))[0])
        d = int(np.searchsorted(out_ptr, k, side="right")) - 1
        raise InvalidInputError(f"document {d}: the token values hashed to column {cols[k]} "
                                "add up beyond the largest float64 number")  # fmt: skip
    index_dtype = np.int32 if nnz <= np.iinfo(np.int32).max else np.int64
    out = sp.csr_matrix(
        (vals[:nnz].copy(), cols[:nnz].astype(index_dtype), out_ptr.astype(index_dtype)),
        shape=(n_docs, 2**bits),
    )
    out.has_sorted_indices = True
    return out


def token_collisions(documents, hash_bits: int, *, input_type: str = "string") -> tuple[int, int]:
    """(distinct tokens, columns they occupy) of ``hash_tokens(documents, hash_bits)``: their
    difference is how many tokens share a column with another.

    Tokens are told apart by their 64-bit hash (h above): two distinct tokens count as one
    only if all 64 bits meet. Tokens whose every value is 0 (dict/pair input) still count:
    the vocabulary is what collides, whatever the values.
    """
    bits = check_hash_bits(hash_bits)
    tokens, doc_ptr, _ = _flatten(documents, input_type)
    buf, ends = _token_buffer(tokens, doc_ptr)
    distinct = np.unique(_all_hashes(buf, ends))
    mask = np.uint64((1 << bits) - 1)
    return int(distinct.shape[0]), int(np.unique(distinct & mask).shape[0])


__all__ = ["INPUT_TYPES", "hash_tokens", "token_collisions"]
