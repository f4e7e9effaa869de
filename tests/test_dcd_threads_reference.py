"""The threaded DCD schemes kept as a reference (``benchmarks/reference/dcd_threads.py``, for
``bench_dcd_threads``): exact and convergent, so that their measurement means something.

Each scheme, on two threads, on generated text-like data with a bias: after every outer
iteration w = sum_i y_i alpha_i x_i (1e-10 relative), the gap is >= 0, and run long enough it
reaches the serial kernel's optimum (objective within 1e-6 relative) with both losses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from linsvm.datasets import make_text_classification
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE

# the benchmarks package sits at the repository root, which a bare ``pytest`` does not put on
# sys.path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference.dcd_threads import ThreadedDCD  # noqa: E402


@pytest.fixture(scope="module")
def problem():
    X, y = make_text_classification(3000, n_features=2000, nnz_per_row=20, random_state=3)
    return X, np.where(y > 0, 1.0, -1.0)


def _solve(problem, loss, scheme, epochs):
    X, y = problem
    run = ThreadedDCD(X, y, np.ones(X.shape[0]), 1.0, loss, scheme, n_threads=2, n_hot=64,
                      push_rows=128, merges=4, bucket_size=4)  # fmt: skip
    errors = []
    for _ in range(epochs):
        converged = run.epoch()
        errors.append(run.w_error())
        if converged:
            break
    result = run.objectives(), max(errors)
    run.close()
    return result


@pytest.mark.parametrize("loss", [LOSS_HINGE, LOSS_SQUARED_HINGE])
@pytest.mark.parametrize("scheme", ["atomic", "replicas"])
def test_threaded_schemes_are_exact_and_reach_the_optimum(problem, loss, scheme):
    (p_serial, d_serial, _), _ = _solve(problem, loss, "serial", 3000)
    (primal, dual, gap), w_error = _solve(problem, loss, scheme, 3000)
    assert w_error < 1e-10
    assert gap >= -1e-9 * abs(primal)
    assert abs(primal - p_serial) <= 1e-6 * abs(p_serial)
