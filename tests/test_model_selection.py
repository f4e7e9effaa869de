"""Parameter search (-C), probability estimates (-b 1) and warm starts (init_sol)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm.cli import main
from linsvm.model_selection import MAX_C, find_parameter_C, start_C


@pytest.mark.parametrize("solver", [0, 2])
def test_search_walks_doubling_C_and_reports_the_best(solver):
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=3)
    search = find_parameter_C(X, y, solver=solver, n_folds=4, verbose=False)
    Cs = [c for c, _ in search.path]
    assert Cs[0] == start_C(X, solver, -1.0) and Cs[0] <= 1.0
    assert all(b == 2 * a for a, b in zip(Cs, Cs[1:], strict=False))
    assert Cs[-1] <= MAX_C
    rates = [r for _, r in search.path]
    assert search.best_rate == max(rates)
    assert search.best_C == Cs[rates.index(max(rates))]  # the first C reaching the best rate


def test_search_matches_cross_validation_at_each_C():
    # Warm starts change where each solve begins, not its answer: the CV accuracy at a C on
    # the path equals a cold cross-validation at that C (same folds, tight tolerance).
    X, y = make_sparse_problem(n_rows=150, n_features=12, seed=5)
    search = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False, eps=1e-8, seed=2)
    for C, rate in search.path[::3]:
        cold = linsvm.cross_validation(X, y, 3, seed=2, solver=2, C=C, eps=1e-8)
        assert rate == pytest.approx(np.mean(cold == y), abs=1.0 / len(y) + 1e-12)


@pytest.mark.parametrize("solver", [2, 11])
def test_search_takes_per_row_weights_with_their_rows(solver, tmp_path, capsys):
    """-W's weights go with their rows into each fold: weights of 1 change nothing, and each
    fold's solve at a C is the weighted cross-validation's at that C."""
    X, y = make_sparse_problem(n_rows=120, n_features=10, seed=4)
    if solver == 11:
        y = X @ np.linspace(-1, 1, 10)
    options = dict(solver=solver, n_folds=3, verbose=False, eps=1e-8, seed=2)
    plain = find_parameter_C(X, y, **options)
    ones = find_parameter_C(X, y, sample_weight=np.ones(120), **options)
    assert ones.path == plain.path
    weights = np.random.default_rng(1).uniform(0.0, 3.0, 120)
    weighted = find_parameter_C(X, y, sample_weight=weights, **options)
    assert weighted.path != plain.path
    for C, score in weighted.path[::4]:
        cold = linsvm.cross_validation(X, y, 3, seed=2, solver=solver, C=C, eps=1e-8,
                                       sample_weight=weights)  # fmt: skip
        expected = np.mean((cold - y) ** 2) if solver == 11 else np.mean(cold == y)
        # (warm and cold starts stop at slightly different points: MSE to 1%, accuracy to a row)
        tolerance = 1e-2 * expected if solver == 11 else 1.0 / len(y) + 1e-12
        assert score == pytest.approx(expected, abs=tolerance)
    data, weight_file = tmp_path / "d.txt", tmp_path / "w.txt"
    linsvm.write_libsvm(X, y, data)
    weight_file.write_text("".join(f"{float(v)!r}\n" for v in weights))
    assert main(["train", "-C", "-s", str(solver), "-v", "3", "-W", str(weight_file),
                 str(data)]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("Best C = ")


def test_a_fold_trained_on_one_class_predicts_it_as_liblinear_does(tmp_path, capsys):
    """Five rows of one class, one of another, 3 folds: the fold holding the odd row trains on
    one class only. LIBLINEAR's -v and -C train a model of that class there, which predicts
    it; so do these (they refused the whole run before)."""
    ll = pytest.importorskip("liblinear.liblinearutil")
    text = "1 1:1\n1 1:0.9 2:0.1\n1 1:0.8\n2 2:1\n1 1:0.7\n1 1:1 3:1\n"
    data = tmp_path / "d.txt"
    data.write_text(text)
    X, y = linsvm.read_libsvm(data)
    for solver in (1, 2):
        predicted = linsvm.cross_validation(X, y, 3, solver=solver)
        ll_y, ll_x = ll.svm_read_problem(str(data))
        ll_rate = ll.train(ll_y, ll_x, f"-v 3 -q -s {solver}")
        assert 100.0 * np.mean(predicted == y) == pytest.approx(ll_rate)
    search = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False)
    assert search.path and search.best_rate == pytest.approx(ll_rate / 100.0)
    assert main(["train", "-q", "-v", "3", str(data)]) == 0
    assert capsys.readouterr().out.startswith("Cross Validation Accuracy = ")
    with pytest.raises(linsvm.InvalidInputError, match="only one class"):
        linsvm.train(X[:3], y[:3])  # (training itself still refuses one class)


def test_init_sol_warm_start_reaches_the_same_optimum():
    X, y = make_sparse_problem(n_rows=300, n_features=25, seed=1)
    small = linsvm.train(X, y, solver=0, C=0.1, bias=1.0, eps=1e-8)
    init = np.hstack([small.coef_, small.bias_weights_[:, None]])
    cold = linsvm.train(X, y, solver=0, C=1.0, bias=1.0, eps=1e-8)
    warm = linsvm.train(X, y, solver=0, C=1.0, bias=1.0, eps=1e-8, init_sol=init)
    np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=1e-5, atol=1e-7)
    assert warm.results_[0].n_iter <= cold.results_[0].n_iter
    with pytest.raises(linsvm.InvalidInputError, match="shape"):
        linsvm.train(X, y, solver=0, init_sol=np.zeros((1, 3)))
    with pytest.raises(linsvm.InvalidInputError, match="solvers 0, 2 and 40"):
        linsvm.train(X, y, solver=1, init_sol=init)


def test_cli_parameter_search(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=120, n_features=10, seed=2)
    data = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, data)
    assert main(["train", "-C", "-v", "3", str(data)]) == 0
    out = capsys.readouterr().out
    assert "log2c=" in out and out.strip().splitlines()[-1].startswith("Best C = ")
    assert main(["train", "-C", "-s", "1", str(data)]) == 1
    assert "only available for -s 0, -s 2 and -s 11" in capsys.readouterr().err


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probability_estimates_match_liblinear(tmp_path, n_classes):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    X, y = make_sparse_problem(n_rows=150, n_features=10, n_classes=n_classes, seed=4)
    ll_model = liblinear.train(liblinear.problem(y, X), liblinear.parameter("-s 0 -q"))
    path = tmp_path / "lr.model"
    liblinear.save_model(str(path), ll_model)
    _, _, ll_prob = liblinear.predict(y, X, ll_model, "-b 1 -q")
    model = linsvm.load_model(path)
    np.testing.assert_allclose(model.predict_proba(X), np.array(ll_prob), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_probabilities_of_extreme_decision_values_are_liblinears(tmp_path):
    """Decision values of -720 and -740: LIBLINEAR's 1 / (1 + exp(-z)) is exactly 0 there
    (exp overflows), and so are linsvm's (not a subnormal number)."""
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    path = tmp_path / "lr.model"
    path.write_text("solver_type L2R_LR\nnr_class 2\nlabel -1 1\nnr_feature 1\nbias -1\nw\n1 \n")
    X = sp.csr_matrix(np.array([[-720.0], [-740.0], [-700.0], [30.0]]))
    y = np.array([-1, -1, -1, 1])
    _, _, ll_prob = liblinear.predict(y, X, liblinear.load_model(str(path)), "-b 1 -q")
    prob = linsvm.load_model(path).predict_proba(X)
    np.testing.assert_array_equal(prob, np.array(ll_prob))
    assert prob[0, 0] == prob[1, 0] == 0.0


def test_cli_probability_output(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=80, n_features=8, seed=6)
    data = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, data)
    model_file, out_file = tmp_path / "m", tmp_path / "o"
    assert main(["train", "-q", "-s", "7", str(data), str(model_file)]) == 0
    assert main(["predict", "-b", "1", str(data), str(model_file), str(out_file)]) == 0
    lines = out_file.read_text().splitlines()
    model = linsvm.load_model(model_file)
    assert lines[0] == "labels " + " ".join(str(int(v)) for v in model.labels_)
    first = lines[1].split()
    assert float(first[0]) in model.labels_ and len(first) == 1 + len(model.labels_)
    assert main(["train", "-q", "-s", "1", str(data), str(model_file)]) == 0
    assert main(["predict", "-b", "1", str(data), str(model_file), str(out_file)]) == 1
    assert "only supported for logistic regression" in capsys.readouterr().err


def test_regression_search_over_C_and_p(tmp_path, capsys):
    from linsvm.model_selection import find_parameters

    rng = np.random.default_rng(7)
    X, _ = make_sparse_problem(n_rows=120, n_features=8, seed=7)
    y = X @ rng.normal(size=8) + 0.05 * rng.normal(size=120)
    search = find_parameters(X, y, solver=11, n_folds=3, verbose=False, initial_p=0.3)
    assert 0 <= search.best_p <= 0.3 and search.best_C > 0
    assert search.best_rate == min(score for _, score in search.path)
    data = tmp_path / "r.txt"
    linsvm.write_libsvm(X, y, data)
    assert main(["train", "-C", "-s", "11", "-p", "0.2", "-v", "3", str(data)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # LIBLINEAR's lines, to the spaces
    assert lines[0] == "Doing parameter search with 3-fold cross validation."
    assert re.fullmatch(r"Best C = \S+ Best p = \S+  CV MSE = \S+", lines[-1])


@pytest.mark.parametrize("solver", [2, 11])
def test_search_raises_no_convergence_warnings(solver):
    # LIBLINEAR's -C prints no iteration-cap warnings: solves along the path that stop at
    # their cap only feed the CV score
    import warnings

    X, y = make_sparse_problem(n_rows=90, n_features=8, seed=3)
    if solver == 11:
        y = X @ np.linspace(-1, 1, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linsvm.ConvergenceWarning)
        search = find_parameter_C(X, y, solver=solver, n_folds=3, verbose=False, max_iter=1)
    assert search.path
    with pytest.warns(linsvm.ConvergenceWarning):  # the same solve outside the search warns
        linsvm.train(X, y, solver=solver, C=search.path[-1][0], max_iter=1, eps=1e-12)


def test_cli_search_says_which_solver_it_chose_as_liblinear(tmp_path, capsys):
    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=2)
    data = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, data)
    assert main(["train", "-q", "-C", "-v", "2", str(data)]) == 0
    assert capsys.readouterr().err == "Solver not specified. Using -s 2\n"
    assert main(["train", "-q", "-C", "-s", "0", "-v", "2", str(data)]) == 0
    assert capsys.readouterr().err == ""


def test_regression_search_refuses_a_negative_p(tmp_path, capsys):
    from linsvm.model_selection import find_parameters

    X, _ = make_sparse_problem(n_rows=40, n_features=4, seed=7)
    y = X @ np.ones(4)
    data = tmp_path / "r.txt"
    linsvm.write_libsvm(X, y, data)
    for p in ("-1", "inf", "nan"):
        # (refused before the search's first line, as LIBLINEAR does)
        assert main(["train", "-C", "-s", "11", "-p", p, str(data)]) == 1
        out, err = capsys.readouterr()
        assert err.strip().endswith(f"p must be a finite number >= 0, got {float(p)}")
        assert len(err.splitlines()) == 1 and out == ""
    # (a p past every target's size starts the p grid at its top; inf was an OverflowError)
    for p in (-0.5, np.inf):
        with pytest.raises(linsvm.InvalidInputError, match="p must be a finite number >= 0"):
            find_parameters(X, y, solver=11, initial_p=p, verbose=False)
    top = find_parameters(X, y, solver=11, initial_p=1e308, verbose=False)
    assert top.best_p == find_parameters(X, y, solver=11, verbose=False).best_p


def test_a_search_over_subnormal_values_starts_at_the_largest_C_as_liblinear():
    """Features whose x'x is subnormal made LIBLINEAR's start 1/(l max x'x) infinite, and
    targets whose max|y| / 20 underflows made p's grid step 0: OverflowError and
    ZeroDivisionError tracebacks. The first starts at the largest C (as LIBLINEAR, which
    prints Best C = 1024 there); the second walks every p of the grid."""
    from linsvm.model_selection import find_parameters

    X = sp.csr_matrix(np.array([[1e-160], [-1e-160], [2e-161], [-3e-161]]))
    assert start_C(X, 2, -1.0) == np.inf
    search = find_parameters(X, np.array([1, -1, 1, -1]), solver=2, n_folds=4, verbose=False)
    assert search.best_C == MAX_C and [C for C, _ in search.path] == [MAX_C]
    y = np.array([4e-323, -4e-323, 4e-323, 0.0])
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [0.5, 0], [0, 0.3]]))
    search = find_parameters(X, y, solver=11, n_folds=4, initial_p=1.0, verbose=False)
    assert np.isfinite(search.best_rate)


def test_a_target_too_large_is_named_by_its_row_in_the_callers_data(tmp_path, capsys):
    """The refusal named the row of the sub-problem it was found in, counted from 0: under -v
    and -C a row of a fold's training part, not of the file."""
    from linsvm.model_selection import find_parameters

    X, _ = make_sparse_problem(n_rows=40, n_features=4, seed=7)
    y = X @ np.ones(4)
    y[13] = 3e151
    for run in (lambda: linsvm.train(X, y, solver=11),
                lambda: linsvm.cross_validation(X, y, 5, solver=11),
                lambda: find_parameters(X, y, solver=11, verbose=False)):  # fmt: skip
        with pytest.raises(linsvm.InvalidInputError, match=r"target 3e\+151 \(row 13\)"):
            run()
    data = tmp_path / "r.txt"
    linsvm.write_libsvm(X, y, data)
    for options in ([], ["-v", "5"], ["-C"]):
        assert main(["train", "-s", "11", *options, str(data), str(tmp_path / "m")]) == 1
        out, err = capsys.readouterr()
        assert err == (f"linsvm train: error: {data}: regression target 3e+151 of instance 14: "
                       "targets of magnitude 2^500 or more overflow the solvers; scale them\n")
        assert out == ""


def test_search_takes_solvers_by_name_and_refuses_unknown_ones_and_C():
    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=2)
    by_number = find_parameter_C(X, y, solver=2, n_folds=2, verbose=False)
    assert find_parameter_C(X, y, solver="2", n_folds=2, verbose=False).path == by_number.path
    with pytest.raises(linsvm.InvalidInputError, match="unknown solver type 99"):
        find_parameter_C(X, y, solver=99, verbose=False)
    with pytest.raises(linsvm.InvalidInputError, match="give its start as initial_C"):
        find_parameter_C(X, y, C=3.0, verbose=False)


@pytest.mark.parametrize("solver, max_C", [(2, MAX_C), (11, 2.0**20)])
def test_search_on_zero_rows_starts_at_the_largest_C_as_liblinear(solver, max_C):
    # LIBLINEAR's calc_start_C divides by max x'x = 0: the start is infinite, clipped to max C
    import scipy.sparse as sp

    X = sp.csr_matrix((30, 3))
    y = np.where(np.arange(30) % 3 == 0, 1.0, -1.0)
    if solver == 11:
        y = np.linspace(-1.0, 2.0, 30)
    search = find_parameter_C(X, y, solver=solver, n_folds=3, verbose=False, p=0.0)
    assert [C for C, _ in search.path] == [max_C] and search.reached_max_C


def test_regression_search_warns_of_leave_one_out_once(capfd):
    from linsvm.model_selection import find_parameters

    X, _ = make_sparse_problem(n_rows=8, n_features=3, seed=7)
    y = X @ np.ones(3) + 0.5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        find_parameters(X, y, solver=11, n_folds=20, verbose=False)
    assert [str(w.message)[:18] for w in caught] == ["# folds > # data. "]
    assert caught[0].filename == __file__ and capfd.readouterr().err == ""


@pytest.mark.parametrize("solver", [12, 13])
def test_the_regression_search_is_for_s11_only(solver):
    """find_parameters quietly ran -s 11's search for -s 12 and 13 (13's loss is another);
    find_parameter_C and `train -s 12 -C` refuse them, as LIBLINEAR does."""
    from linsvm.errors import InvalidInputError
    from linsvm.model_selection import find_parameters

    X, y = make_sparse_problem(n_rows=40, n_features=5, seed=2, density=0.6)
    with pytest.raises(InvalidInputError, match="only available for"):
        find_parameters(X, y, solver=solver, verbose=False)


def test_targets_whose_search_start_overflows(tmp_path, capsys):
    """(sum |y_i|)^2 past the float range was an OverflowError traceback."""
    data = tmp_path / "hugey"
    data.write_text("1e150 1:1e10\n-1e150 2:1e10\n3e149 1:5e9 2:5e9\n")
    assert main(["train", "-s", "11", "-C", str(data), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert "C search's start overflows" in err and "Traceback" not in err


def test_cv_accuracy_is_printed_with_liblinears_rounding(tmp_path, capsys):
    """100 * correct / rows, in LIBLINEAR's order: 100 * (403 / 640) printed 62.9687%, where
    LIBLINEAR prints 62.9688%."""
    data = tmp_path / "d.txt"
    rows = ["+1 1:1\n"] * 403 + ["-1 1:1\n"] * 237
    data.write_text("".join(rows[k] for k in np.random.default_rng(0).permutation(640)))
    assert main(["train", "-q", "-v", "5", str(data)]) == 0
    assert capsys.readouterr().out == "Cross Validation Accuracy = 62.9688%\n"


def test_search_over_folds_of_one_class_walks_to_the_largest_C():
    """LIBLINEAR trains a fold of one class (its one vector moves with C), so its walk never
    sees five unchanged C and ends at the largest, with its warning; this one stopped after
    five."""
    X, y = make_sparse_problem(n_rows=40, n_features=5, seed=2)
    y = np.ones_like(y)
    search = find_parameter_C(X, y, solver=2, n_folds=5, verbose=False)
    assert search.reached_max_C and search.path[-1][0] == 1024.0
    assert search.best_rate == 1.0


def test_the_leave_one_out_notice_comes_before_the_search(tmp_path):
    """LIBLINEAR says it will use leave-one-out before the search's lines; it was printed once
    the whole search was done."""
    import subprocess
    import sys

    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n-1 1:-1\n1 1:0.5\n-1 2:1\n1 1:2 2:-1\n")
    out = subprocess.run(
        [sys.executable, "-m", "linsvm", "train", "-C", "-v", "10", str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True,
        env={**__import__("os").environ, "PYTHONUNBUFFERED": "1"},
    ).stdout.splitlines()  # fmt: skip
    notice = [k for k, line in enumerate(out) if line.startswith("WARNING: # folds > # data")]
    first_c = next(k for k, line in enumerate(out) if line.startswith("log2c="))
    assert len(notice) == 1 and notice[0] == first_c - 1, out


def test_the_c_search_keeps_the_used_columns_of_hashed_rows(monkeypatch):
    """The folds' weights, kept from one C to the next, were as wide as the hashed space
    (2^26 columns: 5.9 GB and 83 s for heart_scale, killed at 2^31). The search trains on
    the used columns, as train does, and walks the path the unhashed rows walk (13 features
    hashed into 2^26 columns: no collision)."""
    from linsvm import model_selection
    from linsvm.features import FeatureMap

    X, y = make_sparse_problem(n_rows=120, n_features=13, seed=4, density=0.6)
    widths = []
    trained = model_selection.train

    def recording(X, *args, **kwargs):
        widths.append(X.shape[1])
        return trained(X, *args, **kwargs)

    monkeypatch.setattr(model_selection, "train", recording)
    hashed = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False,
                              feature_map=FeatureMap(hash_bits=26, degree=1))  # fmt: skip
    assert widths and max(widths) <= 13
    plain = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False)
    assert hashed.path == plain.path and hashed.best_C == plain.best_C


@pytest.mark.parametrize("option", ["init_sol", "warm_start", "memory", "client", "checkpoint",
                                    "resume"])  # fmt: skip
def test_runs_of_many_trainings_refuse_what_each_training_cannot_take(tmp_path, option):
    """init_sol, warm_start, memory, client, checkpoint and resume reached every fold's
    train: a TypeError (init_sol: the search passes its own), an error about options the
    caller never gave, or one checkpoint file every fold overwrote."""
    from linsvm.model_selection import find_parameters

    X, y = make_sparse_problem(n_rows=60, n_features=5, seed=2)
    value = {"init_sol": np.zeros((1, 5)), "warm_start": linsvm.train(X, y, solver=2),
             "memory": "300M", "client": "local:1", "checkpoint": tmp_path / "c",
             "resume": tmp_path / "c"}[option]  # fmt: skip
    for run in (lambda: find_parameters(X, y, verbose=False, **{option: value}),
                lambda: linsvm.cross_validation(X, y, 3, solver=2, **{option: value})):
        with pytest.raises(linsvm.InvalidInputError, match=f"does not take {option}:"):
            run()
    assert not (tmp_path / "c").exists()
