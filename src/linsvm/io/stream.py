"""Rows of a LIBSVM file or a binary cache a chunk at a time, in bounded memory.

For work row by row on files of any size (prediction, evaluation): the text is read and
parsed by the reader's own blocks (``libsvm._text_pieces``: the same parsing, errors with
file and line, threads), a cache by its stored blocks; only one chunk of rows is held at a
time. Each chunk is canonical CSR with 0-based columns, as wide as its largest index (at least
``n_features``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from ..parallel import effective_n_jobs
from .libsvm import _Options, _text_pieces, starts_as_cache


def iter_libsvm(
    path: str | os.PathLike, n_features: int = 0, dtype=np.float64, n_jobs: int | None = -1
) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """(X_chunk, y_chunk) over the rows of ``path`` (LIBSVM text, plain or compressed, or a
    cache), in file order; 1-based indices as LIBSVM writes them (index 0 is an error)."""
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as raw:
        if starts_as_cache(raw, name):
            raw.close()
            yield from _cache_chunks(path, n_features)
            return
        options = _Options.check(dtype, None, False, False)
        with contextlib.closing(_text_pieces(raw, name, options, effective_n_jobs(n_jobs))) as it:
            for pieces, _ in it:
                for piece in pieces:
                    if piece.n_rows == 0:
                        continue
                    width = max(int(n_features), int(piece.max_index))  # 1-based max = width
                    X = sp.csr_matrix(
                        (piece.data[: piece.nnz], piece.indices[: piece.nnz] - 1,
                         piece.indptr[: piece.n_rows + 1]),
                        shape=(piece.n_rows, width),
                    )  # fmt: skip
                    X.has_sorted_indices = True
                    yield X, np.asarray(piece.labels[: piece.n_rows], dtype=np.float64)


def _cache_chunks(path, n_features: int) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    from .cache import open_cache

    with open_cache(path) as cache:
        for k in range(cache.n_blocks):
            # (read, not mapped: a file cut short meanwhile is an error, not SIGBUS)
            X, y = cache.read_block(k)
            if X.shape[1] < n_features:
                X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
            yield X, y


__all__ = ["iter_libsvm"]
