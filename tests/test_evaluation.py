"""``linsvm.evaluations``: LIBLINEAR's Python ``evaluations`` (accuracy %, MSE, squared
correlation), checked against liblinear-official's own."""

from __future__ import annotations

import math

import numpy as np
import pytest

import linsvm
from linsvm import InvalidInputError

commonutil = pytest.importorskip("liblinear.commonutil")


@pytest.mark.parametrize("seed", range(4))
def test_as_liblinears_evaluations(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=200).astype(float)
    guesses = np.where(rng.random(200) < 0.7, labels, rng.integers(0, 3, size=200))
    targets = rng.normal(size=200) * 10.0 ** seed
    predictions = targets + rng.normal(size=200)
    for y_true, y_pred in ((labels, guesses), (targets, predictions)):
        ours = linsvm.evaluations(y_true, y_pred)
        theirs = commonutil.evaluations(list(y_true), list(y_pred), useScipy=False)
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1:], theirs[1:], rtol=1e-12)


def test_a_constant_side_has_no_correlation():
    accuracy, mse, scc = linsvm.evaluations([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    assert accuracy == pytest.approx(100 / 3) and mse == pytest.approx(2 / 3)
    assert math.isnan(scc)


@pytest.mark.parametrize("y_true, y_pred, message", [
    ([1.0, 2.0], [1.0], "1-D of one length"), ([1.0, 2.0], [[1.0, 2.0]], "1-D of one length"),
    ([], [], "no predictions"),
])  # fmt: skip
def test_shapes(y_true, y_pred, message):
    with pytest.raises(InvalidInputError, match=message):
        linsvm.evaluations(y_true, y_pred)
