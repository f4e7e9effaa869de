"""What a fit costs besides its passes, checked by structure (no clocks): canonical CSR is used
without a copy, its values are checked once by one compiled pass, labels are grouped by a pass
rather than sorted, and the dual solvers' objectives take one fused pass (none if not asked)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_sparse_problem

import linsvm
import linsvm.data as data
import linsvm.estimators as estimators
import linsvm.objective as objective
import linsvm.solvers.dcd as dcd
from linsvm.estimators import LinearSVC
from linsvm.training import ConvergenceWarning

# short runs stop at their cap: the warnings say so, and are not what these tests check
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture
def value_checks(monkeypatch):
    """Counts the compiled passes over X's values (``data._any_at_least``)."""
    calls = []
    check = data._any_at_least

    def counted(bits, mask, threshold):
        calls.append(bits.shape[0])
        return check(bits, mask, threshold)

    monkeypatch.setattr(data, "_any_at_least", counted)
    return calls


@pytest.fixture
def solved_rows(monkeypatch):
    """The X each DCD solve (-s 1, -s 3) is handed."""
    seen = []
    solve = dcd._solve_svm_dual

    def capture(sub, loss, hook=None):
        seen.append(sub.X)
        return solve(sub, loss, hook)

    monkeypatch.setattr(dcd, "_solve_svm_dual", capture)
    return seen


@pytest.mark.parametrize("solver", [3, 1, 2, 5, 6, 34, 40, 32, 30])
def test_values_checked_by_one_compiled_pass(value_checks, solver):
    """train checks X's values once (as_csr); the solvers that check their own input when
    called directly do not check them again."""
    X, y = make_sparse_problem(n_rows=200, n_features=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        linsvm.train(X, y, solver=solver, max_iter=3)
    assert value_checks == [X.nnz]


def test_bad_values_still_refused_by_that_pass(value_checks):
    X, y = make_sparse_problem(n_rows=200, n_features=30)
    X.data[17] = np.nan
    with pytest.raises(linsvm.InvalidInputError, match="NaN or infinity"):
        linsvm.train(X, y, solver=3)
    assert len(value_checks) == 1


def test_canonical_csr_not_copied(value_checks, solved_rows):
    X, y = make_sparse_problem(n_rows=200, n_features=30)
    linsvm.train(X, y, solver=3, max_iter=2, shrinking=False)
    LinearSVC(loss="hinge", max_iter=2).fit(X, y)
    assert len(solved_rows) == 2
    for rows in solved_rows:
        assert rows.data is X.data and rows.indices is X.indices and rows.indptr is X.indptr
    assert len(value_checks) == 2  # one pass a fit


def test_numeric_labels_grouped_without_sorting(monkeypatch):
    """np.unique sorts every row (argsorts of l values): numeric labels are grouped in one
    compiled pass instead, by train and by the estimators' encoding alike."""
    y = np.random.default_rng(0).choice([-1.0, 1.0, 5.0], 10_000)
    expected_labels = np.array([y[0], *[v for v in (-1.0, 1.0, 5.0) if v != y[0]]])

    def no_sort(*args, **kwargs):
        raise AssertionError("np.unique called")

    monkeypatch.setattr(np, "unique", no_sort)
    labels, class_index = data.group_labels(y)
    classes, encoded = estimators._encode_labels(y)
    monkeypatch.undo()
    first = {v: int(np.flatnonzero(y == v)[0]) for v in (-1.0, 1.0, 5.0)}
    assert list(labels) == sorted(expected_labels, key=first.get)
    np.testing.assert_array_equal(labels[class_index], y)
    np.testing.assert_array_equal(classes, [-1.0, 1.0, 5.0])
    np.testing.assert_array_equal(classes[encoded], y)


def test_dual_objectives_one_pass_over_the_rows(monkeypatch):
    """P(w) and D(alpha) of a serial dual solve come from one pass over the rows, their
    margins (``loss_sum``), the dual taking the solver's running w(alpha): no pass forms
    w(alpha) afresh; none at all with ``objectives=False``."""
    calls = []
    margins = objective.loss_sum

    def counted(*args):
        calls.append(1)
        return margins(*args)

    def sweep(*args):
        raise AssertionError("a pass forming w(alpha) afresh")

    monkeypatch.setattr(objective, "loss_sum", counted)
    monkeypatch.setattr(objective, "svm_primal_dual", sweep)
    monkeypatch.setattr(objective, "primal_from_dual", sweep)
    X, y = make_sparse_problem(n_rows=200, n_features=30)
    model = linsvm.train(X, y, solver=3, max_iter=2)
    r = model.results_[0]
    assert len(calls) == 1 and np.isfinite(r.gap)
    monkeypatch.undo()
    signs = np.where(y == model.labels_[0], 1.0, -1.0)
    fresh = objective.svm_objectives(X, -1.0, signs, np.ones(200), r.w, r.alpha,
                                     objective.LOSS_HINGE)  # fmt: skip
    assert r.primal == fresh[0] and abs(r.dual - fresh[1]) <= 1e-12 * abs(fresh[0])
    monkeypatch.setattr(objective, "loss_sum", counted)
    skipped = linsvm.train(X, y, solver=3, max_iter=2, objectives=False)
    assert len(calls) == 1 and np.isnan(skipped.results_[0].primal)
    np.testing.assert_array_equal(skipped.coef_, model.coef_)
    est = LinearSVC(loss="hinge", max_iter=2, objectives=False).fit(X, y)
    assert len(calls) == 1 and np.isnan(est.objective_).all()
