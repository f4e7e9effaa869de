"""Threads over rows, for work whose result does not depend on how it is split.

Decision values (and so predictions and probabilities) are computed row by row, each row on
its own: cutting the rows into contiguous chunks, one per thread, gives exactly the serial
result, so such work uses every core by default. The compiled kernels release the GIL, so
plain Python threads run them side by side with no copy of the data: each thread gets the
``indptr`` of its rows (positions into the shared ``indices`` / ``data``) and its slice of the
output.

Chunks are balanced by non-zeros, not rows (rows of text differ in length by orders of
magnitude), and work under ``PARALLEL_MIN_NNZ`` non-zeros stays on the calling thread, where
starting threads would cost more than they save.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from .errors import InvalidInputError

# Below this many non-zeros a job runs on the calling thread (measured: a thread pool's start
# and join cost tens of microseconds, a non-zero about a nanosecond).
PARALLEL_MIN_NNZ = 200_000

R = TypeVar("R")


def usable_cpus() -> list[int]:
    """The processors this process may run on, sorted (its affinity mask, as ``taskset`` or a
    container's cpuset sets it; all the machine's where that cannot be asked)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """How many processors this process may run on (``usable_cpus``), at least 1."""
    return max(1, len(usable_cpus()))


def effective_n_jobs(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` by joblib's convention: None -> 1, -1 -> all cores this process
    may use, -2 -> all but one, ...; 0 and non-integers are errors."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InvalidInputError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, usable_cores() + 1 + int(n_jobs))


def row_chunks(indptr: np.ndarray, n_chunks: int) -> list[tuple[int, int]]:
    """Contiguous row ranges [r0, r1) covering all rows, about equal in non-zeros.

    indptr: (n_rows + 1,) CSR offsets. At most ``n_chunks`` ranges, none empty (unless there
    are no rows at all: then none).
    """
    n_rows = indptr.shape[0] - 1
    if n_rows <= 0:
        return []
    n_chunks = max(1, min(int(n_chunks), n_rows))
    nnz = int(indptr[-1] - indptr[0])
    # the first row whose start reaches k/n of the non-zeros begins chunk k
    # (in indptr's dtype: another would make searchsorted convert all of indptr first)
    targets = (indptr[0] + (np.arange(1, n_chunks) * nnz) // n_chunks).astype(indptr.dtype)
    cuts = np.searchsorted(indptr[:-1], targets, side="left")
    bounds = np.unique(np.concatenate(([0], cuts, [n_rows])))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def work_chunks(indptr: np.ndarray, n_jobs: int | None) -> list[tuple[int, int]]:
    """The row chunks ``for_row_chunks`` runs: one per thread of ``n_jobs`` while each holds
    ``PARALLEL_MIN_NNZ`` non-zeros, else all rows in one."""
    n_rows = indptr.shape[0] - 1
    nnz = int(indptr[-1] - indptr[0]) if n_rows > 0 else 0
    n_threads = min(effective_n_jobs(n_jobs), max(1, nnz // PARALLEL_MIN_NNZ))
    if n_threads <= 1:
        return [(0, n_rows)]
    return row_chunks(indptr, n_threads)


def for_chunks(chunks: list[tuple[int, int]], work: Callable[[int, int], R]) -> list[R]:
    """``work(a, b)`` for each range of ``chunks``, one thread each (one range: on this
    thread). Returns what the calls returned, in the ranges' order."""
    if len(chunks) == 1:
        return [work(*chunks[0])]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        futures = [pool.submit(work, a, b) for a, b in chunks]
        return [future.result() for future in futures]


def for_row_chunks(
    indptr: np.ndarray, n_jobs: int | None, work: Callable[[int, int], R]
) -> list[R]:
    """Run ``work(r0, r1)`` over row chunks: in ``n_jobs`` threads when there is enough work
    (``PARALLEL_MIN_NNZ`` non-zeros a thread), else once over all rows on this thread.
    ``work`` must write only its own rows' results and release the GIL to gain anything.
    Returns what the calls returned, in row order."""
    return for_chunks(work_chunks(indptr, n_jobs), work)


def sum_row_chunks(
    indptr: np.ndarray, n_jobs: int | None, part: Callable[[int, int, float], float],
    start: float = 0.0,
) -> float:  # fmt: skip
    """``start`` plus the sum over rows that ``part(r0, r1, s)`` adds to s for rows [r0, r1),
    over ``for_row_chunks``' chunks: the first chunk is given ``start``, the others 0, and
    their results are added in row order. On one chunk that is ``part(0, n_rows, start)``:
    the serial sum's bits; on several, the same sum for the same chunks at every call."""

    def chunk(r0: int, r1: int) -> float:
        return part(r0, r1, start if r0 == 0 else 0.0)

    total, *rest = for_row_chunks(indptr, n_jobs, chunk)
    for value in rest:
        total += value
    return total


def cast_rows(indptr: np.ndarray, values: np.ndarray, dtype, n_jobs: int | None) -> np.ndarray:
    """A CSR array of the rows' entries (``indices`` or ``data``, at the positions ``indptr``
    gives) as ``dtype``, converted on ``n_jobs`` threads (a row chunk each; NumPy's copy
    releases the GIL); ``values`` itself when it is that already."""
    if values.dtype == dtype and values.flags.c_contiguous:
        return values
    out = np.empty(values.shape[0], dtype=dtype)

    def rows(r0: int, r1: int) -> None:
        a, b = int(indptr[r0]), int(indptr[r1])
        np.copyto(out[a:b], values[a:b], casting="same_kind")

    for_row_chunks(indptr, n_jobs, rows)
    return out
