"""linsvm's own solvers (-s 30-34: Pegasos, SGD-R/S/M, PCD) through train, the CLI and model
files: the solvers themselves are tested in test_sgd.py and test_pcd.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import linsvm_primal, make_sparse_problem

import linsvm
from linsvm.cli import main
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE
from linsvm.solvers import SOLVERS, solver_number
from linsvm.solvers._base import MAX_ITER

OWN = {"pegasos": 30, "sgd-r": 31, "sgd-s": 32, "sgd-m": 33, "pcd": 34}


def test_names_and_numbers():
    for name, number in OWN.items():
        assert solver_number(name) == solver_number(str(number)) == number
        assert solver_number(name.upper()) == number
        assert SOLVERS[number].alias == name
    assert solver_number(3) == 3 and solver_number("3") == 3
    assert solver_number("sgd") == solver_number(9) == solver_number("x1") == -1


@pytest.mark.parametrize("name", list(OWN))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_train_one_vs_rest_and_results(name, n_classes):
    X, y = make_sparse_problem(n_rows=240, n_features=15, n_classes=n_classes, seed=1)
    model = linsvm.train(X, y, solver=name, C=0.5, max_iter=200 if name != "pcd" else None)
    assert model.solver == OWN[name]
    assert model.coef_.shape == (1 if n_classes == 2 else n_classes, 15)
    assert np.mean(model.predict(X) == y) > 0.8
    loss_is_hinge = name != "pcd"
    for r in model.results_:
        assert r.solver == OWN[name] and r.n_iter >= 1 and np.isfinite(r.primal)
        if name in ("sgd-s", "sgd-m", "pcd"):  # a dual bound: feasible, below the primal
            assert r.gap >= -1e-9 * r.primal
            assert r.alpha is not None and r.alpha.min() >= 0
            if loss_is_hinge:
                assert r.alpha.max() <= 0.5 * (1 + 1e-12)
        else:
            assert np.isnan(r.gap) and r.alpha is None
    # the reported primal is the one definition's value of the returned w
    loss = LOSS_HINGE if loss_is_hinge else LOSS_SQUARED_HINGE
    expected = linsvm_primal(model, X, y, 0.5, loss)
    np.testing.assert_allclose([r.primal for r in model.results_], expected, rtol=1e-9)


def test_model_file_is_liblinears_problem(tmp_path):
    ll = pytest.importorskip("liblinear.liblinearutil")
    X, y = make_sparse_problem(n_rows=200, n_features=12, seed=2)
    for name, as_solver in (("sgd-s", 3), ("pcd", 2)):
        model = linsvm.train(X, y, solver=name, bias=1.0)
        path = tmp_path / f"{name}.model"
        model.save(path)
        assert path.read_text().splitlines()[0] == f"solver_type {SOLVERS[as_solver].name}"
        loaded = linsvm.load_model(path)
        assert loaded.solver == as_solver
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        theirs = ll.load_model(str(path))
        labels, _, _ = ll.predict(np.zeros(X.shape[0]), X, theirs, "-q")
        np.testing.assert_array_equal(np.asarray(labels), model.predict(X))


def test_cli_takes_names(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=150, n_features=10, seed=3)
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    for solver in ("sgd-m", "34", "pegasos"):
        out = tmp_path / f"{solver}.model"
        assert main(["train", "-q", "-s", solver, str(data), str(out)]) == 0
        assert out.exists()
    assert main(["train", "-s", "sgd-x", str(data), str(tmp_path / "x.model")]) == 1
    err = capsys.readouterr().err
    assert "unknown solver type -s sgd-x" in err and "-s 32 (sgd-s)" in err
    assert main(["train", "-s", "sgd-s", "-W", str(data), str(data)]) == 1


def test_registry_defaults_follow_the_solvers():
    from linsvm.solvers import pcd, sgd

    for name in ("sgd-s", "sgd-m"):
        assert SOLVERS[OWN[name]].default_eps == sgd.DEFAULT_DELTA
    assert SOLVERS[OWN["pcd"]].default_eps == pcd.DEFAULT_EPS


@pytest.mark.parametrize("solver", [30, 31, 32, 33, 37, 38, 39])
@pytest.mark.parametrize("C", [1e308, 1e-320])
def test_a_lambda_of_zero_or_infinity_is_refused(solver, C):
    """The SGD solvers' lambda = 1/(C l) was 0 (C l past float64) or infinite (C subnormal):
    a ZeroDivisionError from inside their kernels, or NaN weights blamed on a C too large."""
    X, y = make_sparse_problem(n_rows=40, n_features=5, seed=2)
    with pytest.raises(linsvm.InvalidInputError, match=r"lambda = 1/\(C l\) = (0|inf)"):
        linsvm.train(X, y, solver=solver, C=C)


def test_cap_warnings():
    """Pegasos and SGD-R run their epochs (no criterion, no warning); SGD-S/M and PCD warn at
    their cap; each result says why it stopped."""
    X, y = make_sparse_problem(n_rows=200, n_features=12, seed=4)
    for name in ("pegasos", "sgd-r"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", linsvm.ConvergenceWarning)
            model = linsvm.train(X, y, solver=name, max_iter=3)
        (r,) = model.results_
        assert r.n_iter == 3 and not r.converged and r.stop_reason == MAX_ITER
    for name in ("sgd-s", "sgd-m", "pcd"):
        with pytest.warns(linsvm.ConvergenceWarning, match="max number of iterations"):
            model = linsvm.train(X, y, solver=name, eps=1e-12, max_iter=2)
        (r,) = model.results_
        assert r.n_iter == 2 and not r.converged and r.stop_reason == MAX_ITER
