"""Threads within one primal Newton solve (-s 0, -s 2, -s 11; ``Subproblem.n_threads``).

- n_threads = 1 is the serial algorithm bit for bit: the models of a fixed problem are those
  the serial solver gave before the threaded passes existed (recorded digests), and a
  problem too small to split stays serial whatever n_threads asks for.
- with threads the passes over the rows are cut into row chunks and their sums added in
  another order, nothing else: at a tight tolerance the objective is within 1e-6 relative of
  the serial optimum (generated text-like data, and a9a / w8a when the shared data is there),
  and the same number of threads gives the same bits twice.
- the interface holds with threads: interrupting and resuming from ``Progress.state()`` ends
  at the uninterrupted threaded run's bits; ``train(n_jobs=2)`` on a binary problem uses them.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.solvers import newton
from linsvm.solvers._base import CONVERGED, INTERRUPTED, SMALL_REDUCTION, Subproblem
from linsvm.solvers.newton import solve_l2svc_primal, solve_lr_primal
from linsvm.solvers.svr import solve_svr_primal

SOLVE = {0: solve_lr_primal, 2: solve_l2svc_primal, 11: solve_svr_primal}
REL_TOL = 1e-6


def rcv_like(n_rows: int, n_features: int, nnz_per_row: int, seed: int):
    """Text-like sparse data: row lengths around ``nnz_per_row``, feature frequencies falling
    as a power law (a few features in most rows), rows scaled to unit norm as tf-idf.
    Returns (X CSR float64, labels +1/-1, real targets for the SVR)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(nnz_per_row // 2, nnz_per_row * 3 // 2 + 1, size=n_rows)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    freq = 1.0 / np.arange(1, n_features + 1) ** 1.1
    freq /= freq.sum()
    indices = np.empty(indptr[-1], dtype=np.int32)
    for i in range(n_rows):
        picked = rng.choice(n_features, size=lengths[i], replace=False, p=freq)
        indices[indptr[i] : indptr[i + 1]] = np.sort(picked)
    X = sp.csr_matrix((rng.random(indptr[-1]), indices, indptr), shape=(n_rows, n_features))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X)
    X.sort_indices()
    t = X @ rng.normal(size=n_features)
    y = np.where(t + 0.3 * rng.normal(size=n_rows) * t.std() > np.median(t), 1.0, -1.0)
    return X, y, t


@pytest.fixture(scope="module")
def text_like():
    return rcv_like(2000, 3000, 40, 7)


@pytest.fixture
def small_chunks(monkeypatch):
    """Let the generated problems (tens of thousands of non-zeros) be split into chunks."""
    monkeypatch.setattr(newton, "THREAD_MIN_NNZ", 1000)


def subproblem(X, y, t, solver: int, eps: float, regularize_bias: bool = True, **changes):
    targets = t if solver == 11 else y
    options = {"p": 0.05} if solver == 11 else {}
    return Subproblem(
        X, targets, np.full(len(targets), 4.0), eps, 1000, bias=1.0,
        regularize_bias=regularize_bias, options=options, **changes,
    )  # fmt: skip


def digest(w: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(w, dtype=np.float64).tobytes()).hexdigest()[:16]


# The serial solver's results on ``text_like`` at eps 1e-6 (C = 4, bias 1): (Newton
# iterations, CG steps, P(w).hex(), digest of w). Recorded from the serial passes (the threaded
# ones must give them bit for bit), with pcg's r'M^-1 r formed as LIBLINEAR forms it, z = M^-1 r
# first (at this tolerance a last-bit change moves -s 2 and -s 11 by a few CG steps).
SERIAL_RECORD = {
    (0, True): (9, 39, "0x1.9dc226d8c7eaap+11", "e356b4a42d044bb1"),
    (0, False): (9, 37, "0x1.9dc2258074c1ep+11", "c5de3409767868b2"),
    (2, True): (14, 101, "0x1.8b024ce452aa8p+10", "aa4fc8e1643f8291"),
    (2, False): (13, 96, "0x1.8b0128973bd48p+10", "7b787cb5bfd00b40"),
    (11, True): (11, 79, "0x1.08fef18f100c9p+9", "616dd4f7f825d4cc"),
    (11, False): (12, 89, "0x1.08fe400179018p+9", "5c5f913f37101253"),
}


@pytest.mark.parametrize("solver, regularize_bias", sorted(SERIAL_RECORD))
def test_one_thread_is_the_serial_solver_bit_for_bit(text_like, solver, regularize_bias):
    n_iter, n_cg, f_hex, w_digest = SERIAL_RECORD[solver, regularize_bias]
    sub = subproblem(*text_like, solver, 1e-6, regularize_bias)
    # 80k non-zeros: under THREAD_MIN_NNZ a thread, so 2 threads asked for still run serially
    for n_threads in (1, 2):
        sol = SOLVE[solver](sub.but(n_threads=n_threads))
        assert (sol.n_iter, sol.figures["n_cg_iter"]) == (n_iter, n_cg)
        assert float(sol.figures["f"]).hex() == f_hex
        assert digest(sol.w) == w_digest


def test_thread_count():
    indptr = np.array([0, 3, 3, 10, 12])
    rows = np.arange(4)
    assert newton.thread_count(indptr, rows, 1) == 1
    assert newton.thread_count(indptr, rows, 8) == 1  # 12 non-zeros: one thread
    assert newton.thread_count(indptr, rows[:1], 8) == 1
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(newton, "THREAD_MIN_NNZ", 5)
        assert newton.thread_count(indptr, rows, 8) == 2
        assert newton.thread_count(indptr, rows, 2) == 2
        assert newton.thread_count(indptr, rows[2:3], 8) == 1  # one row: nothing to split


def check_threaded_against_serial(X, y, t, solver, regularize_bias=True, threads=(2, 3)):
    sub = subproblem(X, y, t, solver, 1e-8, regularize_bias)
    serial = SOLVE[solver](sub)
    assert serial.stop_reason in (CONVERGED, SMALL_REDUCTION)
    for n_threads in threads:
        first = SOLVE[solver](sub.but(n_threads=n_threads))
        again = SOLVE[solver](sub.but(n_threads=n_threads))
        assert first.stop_reason in (CONVERGED, SMALL_REDUCTION)
        assert abs(first.primal - serial.primal) <= REL_TOL * abs(serial.primal)
        assert np.array_equal(first.w, again.w)  # the same threads: the same bits
        assert first.figures["history"] == again.figures["history"]
        assert first.primal == again.primal


@pytest.mark.parametrize("solver", [0, 2, 11])
@pytest.mark.parametrize("regularize_bias", [True, False])
def test_threads_reach_the_serial_optimum_generated(
    text_like, small_chunks, solver, regularize_bias
):
    check_threaded_against_serial(*text_like, solver, regularize_bias)


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_threads_with_empty_rows_zero_costs_and_float32(small_chunks, solver):
    X, y, t = rcv_like(1500, 800, 20, 11)
    X = X.tolil()
    X[::7] = 0  # empty rows
    X = sp.csr_matrix(X, dtype=np.float32)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    targets = t if solver == 11 else y
    C = np.full(len(y), 2.0)
    C[::5] = 0.0  # dropped rows
    options = {"p": 0.05} if solver == 11 else {}
    sub = Subproblem(X, targets, C, 1e-9, 1000, bias=1.0, options=options)
    serial = SOLVE[solver](sub)
    for n_threads in (2, 4):
        sol = SOLVE[solver](sub.but(n_threads=n_threads))
        assert abs(sol.primal - serial.primal) <= REL_TOL * abs(serial.primal)


@pytest.mark.parametrize("name", ["a9a", "w8a"])
@pytest.mark.parametrize("solver", [0, 2])
def test_threads_reach_the_serial_optimum_shared(load_shared, name, solver):
    # real data as it is: a9a (450k non-zeros) and w8a (580k) get 2 threads of their own
    X, labels = load_shared(name)
    y = np.where(labels == labels[0], 1.0, -1.0)
    assert newton.thread_count(X.indptr, np.arange(X.shape[0]), 2) == 2
    check_threaded_against_serial(X, y, None, solver, threads=(2,))


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_threads_interrupt_and_resume_exactly(text_like, small_chunks, solver):
    sub = subproblem(*text_like, solver, 1e-8).but(n_threads=2)
    full = SOLVE[solver](sub)
    assert full.n_iter >= 4
    captured = {}

    def stop_at_3(progress):
        if progress.iteration == 3:
            captured["state"] = progress.state()
            return False
        return True

    part = SOLVE[solver](sub, stop_at_3)
    assert part.stop_reason == INTERRUPTED and part.n_iter == 3
    rest = SOLVE[solver](sub.but(resume=captured["state"]))
    assert np.array_equal(rest.w, full.w)
    assert rest.figures["history"] == full.figures["history"]


def test_train_n_jobs_uses_threads_within_a_binary_problem(text_like, small_chunks, monkeypatch):
    X, y, _ = text_like
    made = []

    class Counted(newton.RowPasses):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(len(self.chunks))

    monkeypatch.setattr(newton, "RowPasses", Counted)
    serial = linsvm.train(X, y, solver=2, C=4.0, eps=1e-9, bias=1.0)
    assert made == []
    threaded = linsvm.train(X, y, solver=2, C=4.0, eps=1e-9, bias=1.0, n_jobs=2)
    assert made == [2]
    p_serial, p_threaded = serial.results_[0].primal, threaded.results_[0].primal
    assert abs(p_threaded - p_serial) <= REL_TOL * abs(p_serial)


def test_the_summary_says_how_many_threads_ran_the_passes(text_like, small_chunks):
    from linsvm.solvers._dual_threads import threads_line

    X, y, _ = text_like
    serial = linsvm.train(X, y, solver=2, C=4.0, bias=1.0)
    threaded = linsvm.train(X, y, solver=2, C=4.0, bias=1.0, n_jobs=2)
    assert threads_line(serial.results_[0].figures) is None
    assert threads_line(threaded.results_[0].figures) == (
        "2 threads (each pass over the rows in chunks)")
