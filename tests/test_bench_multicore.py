"""The plumbing of ``benchmarks/bench_multicore.py`` on small generated data.

- the bias column written out is LIBLINEAR's ``-B 1``: P(w) on it equals P(w) with bias 1;
- LIBLINEAR's weights come back as linsvm's (features then the bias weight, positive side =
  label +1): both are near the optimum, whatever the label order;
- the worker subprocess (run here by this venv's python with liblinear-official, which has the
  same interface as liblinear-multicore) returns the in-process fit's w and is ended and
  started afresh when a fit outlives its limit.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import linsvm  # noqa: E402
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value  # noqa: E402

pytest.importorskip("liblinear.liblinearutil")

from benchmarks import bench_multicore as bm  # noqa: E402
from benchmarks.multicore_worker import liblinear_fit  # noqa: E402


def _problem(seed: int = 0, rows: int = 300, cols: int = 40):
    rng = np.random.default_rng(seed)
    X = sp.random(rows, cols, density=0.2, format="csr", random_state=seed, dtype=np.float64)
    X.sort_indices()
    w_true = rng.normal(size=cols)
    y = np.where(X @ w_true + 0.1 * rng.normal(size=rows) > 0, 1.0, -1.0)
    return X, y


def _primal(X, y, w, loss):
    return primal_value(X.indptr, X.indices, X.data, 1.0, y, np.ones(X.shape[0]), w, loss)


def test_bias_column_is_bias_one():
    X, y = _problem()
    Xb = bm.with_bias_column(X, 1.0)
    assert np.array_equal(Xb.toarray(), np.hstack([X.toarray(), np.ones((X.shape[0], 1))]))
    w = np.random.default_rng(1).normal(size=X.shape[1] + 1)
    for loss in (LOSS_SQUARED_HINGE, LOSS_HINGE):
        on_column = primal_value(Xb.indptr, Xb.indices, Xb.data, -1.0, y, np.ones(X.shape[0]),
                                 w, loss)
        assert on_column == pytest.approx(_primal(X, y, w, loss), rel=1e-12)


@pytest.mark.parametrize("first_label", [1.0, -1.0])
@pytest.mark.parametrize("loss", [LOSS_SQUARED_HINGE, LOSS_HINGE])
def test_liblinear_weights_match_linsvm(loss, first_label):
    from liblinear.liblinearutil import problem

    X, y = _problem()
    order = np.argsort(y != first_label, kind="stable")  # LIBLINEAR's first label: row 0's
    X, y = X[order], y[order]
    solver = 1 if loss == LOSS_SQUARED_HINGE else 3
    out = liblinear_fit(problem(y, X, 1.0), solver, 0.01, 1.0, X.shape[1])
    assert out["w"].shape == (X.shape[1] + 1,) and not out["capped"]
    model = linsvm.train(X, y, solver=solver, eps=1e-6, bias=1.0, max_iter=100_000)
    sign = 1.0 if model.labels_[0] == 1.0 else -1.0
    w_lin = sign * np.append(model.coef_[0], model.intercept_[0])
    dual = model.results_[0].dual  # a lower bound on P*
    for w in (out["w"], w_lin):
        assert 0.0 <= (_primal(X, y, w, loss) - dual) / dual <= 1e-2


def test_worker_subprocess(tmp_path, monkeypatch):
    from liblinear.liblinearutil import problem

    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path))
    X, y = _problem(2)
    worker = bm.MulticoreWorker(Path(sys.executable), X, y, "test")
    try:
        assert worker.info["ready"] and worker.info["n_features"] == X.shape[1]
        out = worker.fit(3, 0.01, None, limit=60.0)
        direct = liblinear_fit(problem(y, X, 1.0), 3, 0.01, 1.0, X.shape[1])
        assert np.array_equal(out["w"], direct["w"])
        assert out["n_iter"] == direct["n_iter"] and not out["capped"]
        # a fit that cannot answer in time (its worker stopped: no race with a fast fit) is
        # ended with the worker, which is started again and still answers
        os.kill(worker.proc.pid, signal.SIGSTOP)
        assert worker.fit(3, 1e-6, None, limit=0.2) is None
        assert worker.restarts == 1
        again = worker.fit(3, 0.01, None, limit=60.0)
        assert np.array_equal(again["w"], direct["w"])
    finally:
        worker.close()
