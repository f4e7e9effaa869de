"""Every trainable solver through ``linsvm.train`` against LIBLINEAR: objective and model files.

The per-solver tests (test_newton, test_dual_lr, test_crammer_singer, test_l1) check each
routine on its own; these check the wiring: label order, one-vs-rest costs, class weights, the
bias, the model layout, and that a model trained here is a LIBLINEAR model (its file loads in
liblinear-official and predicts the same).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    liblinear_predict,
    liblinear_weights,
    linsvm_weights,
    make_sparse_problem,
    subproblems,
)

import linsvm
from linsvm.objective import (
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    cs_primal_value,
    l1_primal_value,
    primal_value,
)

liblinear = pytest.importorskip("liblinear.liblinearutil")

# (solver, eps) pairs tight enough that both sides sit within ~1e-6 of the optimum
TIGHT = {0: 1e-8, 2: 1e-8, 5: 1e-6, 6: 1e-6, 7: 1e-6}
LOSS = {
    0: LOSS_LOGISTIC,
    2: LOSS_SQUARED_HINGE,
    5: LOSS_SQUARED_HINGE,
    6: LOSS_LOGISTIC,
    7: LOSS_LOGISTIC,
}


def _objective(solver, X, bias, y_pm1, c_rows, w):
    args = (X.indptr, X.indices, X.data, float(bias), y_pm1, c_rows, w, LOSS[solver])
    if solver in (5, 6):
        return l1_primal_value(*args, True)
    return primal_value(*args)


@pytest.mark.parametrize("solver", [0, 2, 5, 6, 7])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_binary_solvers_match_liblinear(solver, n_classes, bias):
    X, y = make_sparse_problem(n_rows=240, n_features=20, n_classes=n_classes, seed=11)
    C, weights = 0.5, ({1: 2.0} if n_classes == 3 else None)
    options = f"-s {solver} -c {C} -e {TIGHT[solver]} -B {bias} -q" + (" -w1 2" if weights else "")
    ll = liblinear.train(liblinear.problem(y, X), liblinear.parameter(options))
    model = linsvm.train(
        X, y, solver=solver, C=C, eps=TIGHT[solver], bias=bias, class_weight=weights
    )
    assert list(model.labels_) == list(ll.get_labels())
    W_ll, W_lin = liblinear_weights(ll), linsvm_weights(model)
    assert W_ll.shape == W_lin.shape
    for k, (y_pm1, c_rows) in enumerate(subproblems(y, ll.get_labels(), C, weights, None)):
        ours = _objective(solver, X, bias, y_pm1, c_rows, W_lin[k])
        theirs = _objective(solver, X, bias, y_pm1, c_rows, W_ll[k])
        assert ours == pytest.approx(theirs, rel=1e-5), (k, ours, theirs)
        assert model.results_[k].primal == pytest.approx(ours, rel=1e-10)
        if np.isfinite(model.results_[k].gap):
            assert model.results_[k].gap >= -1e-9 * abs(ours)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_crammer_singer_matches_liblinear(n_classes):
    X, y = make_sparse_problem(n_rows=240, n_features=20, n_classes=n_classes, seed=12)
    ll = liblinear.train(liblinear.problem(y, X), liblinear.parameter("-s 4 -c 0.5 -e 1e-5 -q"))
    model = linsvm.train(X, y, solver=4, C=0.5, eps=1e-5)
    assert list(model.labels_) == list(ll.get_labels())
    assert model.coef_.shape == (n_classes, X.shape[1])  # nr_w = nr_class, also for 2
    index = {lab: k for k, lab in enumerate(ll.get_labels())}
    cls = np.array([index[v] for v in y], dtype=np.int64)
    c_rows = np.full(len(y), 0.5)

    def primal(W):
        return cs_primal_value(
            X.indptr, X.indices, X.data, -1.0, cls, c_rows, np.ascontiguousarray(W.T)
        )

    assert primal(linsvm_weights(model)) == pytest.approx(primal(liblinear_weights(ll)), rel=1e-4)
    result = model.results_[0]
    assert len(model.results_) == 1 and result.gap >= -1e-9 * abs(result.primal)


@pytest.mark.parametrize("solver", [0, 2, 4, 5, 6, 7])
def test_models_trained_here_load_in_liblinear(tmp_path, solver):
    X, y = make_sparse_problem(n_rows=200, n_features=15, n_classes=3, seed=13)
    model = linsvm.train(X, y, solver=solver, bias=1.0)
    path = tmp_path / f"s{solver}.model"
    model.save(path)
    ll = liblinear.load_model(str(path))
    ll_labels, ll_dec = liblinear_predict(ll, X, native=True)
    np.testing.assert_array_equal(model.predict(X), ll_labels)
    np.testing.assert_allclose(model.decision_function(X), ll_dec, rtol=1e-12, atol=1e-12)
    again = linsvm.load_model(path)
    np.testing.assert_array_equal(again.coef_, model.coef_)
    assert again.solver == solver


def _regression_problem(n_rows=200, n_features=12, seed=14):
    rng = np.random.default_rng(seed)
    X, _ = make_sparse_problem(n_rows=n_rows, n_features=n_features, seed=seed)
    w = rng.normal(size=n_features)
    y = X @ w + 0.1 * rng.normal(size=n_rows)
    return X, y


@pytest.mark.parametrize("solver, eps", [(11, 1e-8), (12, 1e-6), (13, 1e-6)])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_regression_solvers_match_liblinear(tmp_path, solver, eps, bias):
    from linsvm.objective import SVR_LOSS_L1, SVR_LOSS_L2, svr_primal_value

    X, y = _regression_problem()
    C, p = (0.1 if solver == 13 else 1.0), 0.05
    options = f"-s {solver} -c {C} -p {p} -e {eps} -B {bias} -q"
    ll = liblinear.train(liblinear.problem(y, X), liblinear.parameter(options))
    model = linsvm.train(X, y, solver=solver, C=C, p=p, eps=eps, bias=bias)
    assert model.labels_.size == 0 and model.coef_.shape == (1, X.shape[1])
    loss = SVR_LOSS_L1 if solver == 13 else SVR_LOSS_L2
    c_rows = np.full(len(y), C)
    ours = svr_primal_value(X, bias, y, c_rows, linsvm_weights(model)[0], loss, p)
    theirs = svr_primal_value(X, bias, y, c_rows, liblinear_weights(ll)[0], loss, p)
    assert ours == pytest.approx(theirs, rel=1e-4 if solver == 13 else 1e-6)
    result = model.results_[0]
    assert result.primal == pytest.approx(ours, rel=1e-10)
    assert result.gap >= -1e-9 * abs(ours)
    # the model file is LIBLINEAR's: it loads there and predicts the same values
    path = tmp_path / "svr.model"
    model.save(path)
    reloaded = liblinear.load_model(str(path))
    ll_values, _, _ = liblinear.predict(y, X, reloaded, "-q")
    np.testing.assert_allclose(model.predict(X), ll_values, rtol=1e-10, atol=1e-10)


def test_regression_command_line(tmp_path, capsys):
    from linsvm.cli import main

    X, y = _regression_problem(seed=15)
    data = tmp_path / "r.txt"
    linsvm.write_libsvm(X, y, data)
    model_file, out_file = tmp_path / "m", tmp_path / "o"
    assert main(["train", "-q", "-s", "12", "-p", "0.05", str(data), str(model_file)]) == 0
    assert main(["predict", str(data), str(model_file), str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "Mean squared error = " in out and "Squared correlation coefficient = " in out
    assert main(["train", "-s", "11", "-v", "3", str(data)]) == 0
    assert "Cross Validation Mean squared error" in capsys.readouterr().out
    with pytest.raises(linsvm.InvalidInputError, match="p must be a finite number >= 0"):
        linsvm.train(X, y, solver=11, p=-1)


def test_one_class_through_train_and_the_command_line(tmp_path, capsys):
    from linsvm.cli import main

    X, y = make_sparse_problem(n_rows=150, n_features=10, seed=16)
    X = abs(X)
    model = linsvm.train(X, None, solver=21, nu=0.2)
    assert model.labels_.size == 0 and np.isfinite(model.rho)
    ll = liblinear.train(liblinear.problem(y, X), liblinear.parameter("-s 21 -n 0.2 -q"))
    _, ll_dec = liblinear_predict(ll, X, native=True)
    np.testing.assert_allclose(model.decision_function(X), ll_dec.ravel(), rtol=1e-6, atol=1e-6)
    assert set(np.unique(model.predict(X))) <= {-1.0, 1.0}
    data = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, data)
    assert main(["train", "-q", "-s", "21", "-n", "0.2", str(data), str(tmp_path / "m")]) == 0
    assert "rho " in (tmp_path / "m").read_text()
    assert main(["predict", str(data), str(tmp_path / "m"), str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out.startswith("Accuracy = ")
    with pytest.raises(linsvm.InvalidInputError, match="nu"):
        linsvm.train(X, y, solver=21, nu=1.5)
