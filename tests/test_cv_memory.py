"""Cross-validation memory: about the data's, not folds x rows.

LIBLINEAR's ``-v n`` holds one permutation of the rows; the folds' row lists are built as each
fold runs. With as many folds as rows (leave-one-out), building them all first would take
rows squared integers (32,561 rows of a9a: 8.5 GB).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np

from linsvm.training import cv_folds


def test_folds_are_built_when_asked():
    n_rows = 3000
    tracemalloc.start()
    try:
        folds = cv_folds(n_rows, n_rows, seed=1)
        seen = np.zeros(n_rows, dtype=np.int64)
        for f in range(len(folds)):
            fit, test = folds[f]
            assert fit.size + test.size == n_rows
            seen[test] += 1
            del fit, test
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.all(seen == 1)  # every row held out exactly once
    # a permutation and one fold's lists at a time: a few arrays of n_rows integers
    assert peak < 8 * n_rows * 8, peak


def test_folds_as_liblinear_cuts_them():
    folds = cv_folds(10, 3, seed=4)
    assert len(folds) == 3
    parts = [folds.held_out(f) for f in range(3)]
    assert [p.size for p in parts] == [3, 3, 4]
    assert sorted(np.concatenate(parts).tolist()) == list(range(10))
    fit, test = folds[-1]
    np.testing.assert_array_equal(test, parts[2])
    assert sorted(np.concatenate([fit, test]).tolist()) == list(range(10))


def test_leave_one_out_memory_in_a_process():
    """``cross_validation`` with as many folds as rows, its solver replaced by a stub (the
    folds' bookkeeping is what is measured): the peak resident memory grows by far less than
    rows squared integers (4,000 rows: 128 MB)."""
    code = textwrap.dedent(
        """
        import resource
        import numpy as np
        import scipy.sparse as sp
        import linsvm.training as training

        class Stub:
            interrupted = False
            stop_signal = None

            def predict(self, X, n_jobs=None):
                return np.ones(X.shape[0])

        training.train = lambda *a, **k: Stub()
        n_rows = 4000
        X = sp.random(n_rows, 20, density=0.3, format="csr", random_state=0)
        y = np.where(np.arange(n_rows) % 2 == 0, 1.0, -1.0)
        training.cross_validation(X[:40], y[:40], 40, n_jobs=1)  # imports, first calls
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        training.cross_validation(X, y, n_rows, n_jobs=1)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    grown = int(out.stdout.split()[-1])
    assert grown < 24 * 2**20, grown
