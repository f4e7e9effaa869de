"""Bad input through ``linsvm.train`` (and friends): clear ``InvalidInputError``s, and the
``ConvergenceWarning`` when the iteration cap is hit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm import ConvergenceWarning, InvalidInputError, LinsvmError


@pytest.fixture(scope="module")
def data():
    return make_sparse_problem(n_rows=60, n_features=6, seed=0, density=0.5)


def _raises(match: str):
    return pytest.raises(InvalidInputError, match=match)


def test_error_types():
    assert issubclass(InvalidInputError, LinsvmError)
    assert issubclass(InvalidInputError, ValueError)  # scikit-learn style callers catch this


# ----------------------------------------------------------------------------- X


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kind", ["dense", "csr", "csc", "float32"])
def test_non_finite_X(data, bad, kind):
    X, y = data
    D = X.toarray()
    D[7, 2] = bad
    X_bad = {
        "dense": D,
        "csr": sp.csr_matrix(D),
        "csc": sp.csc_matrix(D),
        "float32": sp.csr_matrix(D.astype(np.float32)),
    }[kind]
    with _raises("X contains NaN or infinity"):
        linsvm.train(X_bad, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dense_rows_become_scipys_csr(dtype, order):
    # (linsvm's two compiled passes, not SciPy's COO: the same arrays, half the peak)
    from linsvm.data import dense_to_csr

    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 30)) * (rng.random((50, 30)) < 0.3)
    A[3, 4], A[5, :], A[6, 2] = np.nan, 0.0, -0.0
    A = np.asarray(A, dtype=dtype, order=order)
    X, expected = dense_to_csr(A), sp.csr_matrix(A)
    assert X.dtype == expected.dtype and X.shape == expected.shape
    np.testing.assert_array_equal(X.indptr, expected.indptr)
    np.testing.assert_array_equal(X.indices, expected.indices)
    np.testing.assert_array_equal(X.data, expected.data)  # (NaN kept: refused after)
    assert dense_to_csr(np.zeros((0, 3))).shape == (0, 3)


@pytest.mark.parametrize("X", [np.zeros((0, 4)), sp.csr_matrix((0, 4)), []])
def test_no_rows(X):
    with _raises("0 rows|2-D"):
        linsvm.train(X, np.array([]))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_X_not_2d(shape):
    with _raises("2-D"):
        linsvm.train(np.ones(shape), np.ones(shape[0]))


def test_X_not_numeric(data):
    X, y = data
    with _raises("numeric"):
        linsvm.train(np.full(X.shape, "a"), y)


def test_complex_X(data):
    """Not silently cast to real (NumPy would drop the imaginary part)."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning is not the error we want
        with pytest.raises(InvalidInputError):
            linsvm.train(X.toarray() + 1j, y)


# ----------------------------------------------------------------------------- y


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_labels(data, bad):
    X, y = data
    y = y.copy()
    y[4] = bad
    with _raises("y contains NaN"):
        linsvm.train(X, y)
    with _raises("y contains NaN"):
        linsvm.train(X, y.tolist())


def test_nan_in_object_labels(data):
    """An object column with a missing label (as pandas gives): np.unique would keep
    duplicates around the NaN and make up classes."""
    X, y = data
    y_obj = y.astype(object)
    y_obj[3] = float("nan")
    with _raises("NaN"):
        linsvm.train(X, y_obj)


def test_one_class(data):
    X, _ = data
    with _raises("only one class"):
        linsvm.train(X, np.full(X.shape[0], 3.0))
    with _raises("only one class"):
        linsvm.train(X, ["a"] * X.shape[0])


@pytest.mark.parametrize("delta", [-1, 1])
def test_mismatched_lengths(data, delta):
    X, y = data
    y = np.concatenate([y, [1.0]]) if delta > 0 else y[:-1]
    with _raises(f"X has {X.shape[0]} rows but y has {X.shape[0] + delta} labels"):
        linsvm.train(X, y)


def test_y_not_1d(data):
    X, y = data
    with _raises("1-D"):
        linsvm.train(X, np.c_[y, y])
    linsvm.train(X, y[:, None])  # a column vector is accepted


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize("C", [0.0, -1.0, np.nan, np.inf])
def test_bad_C(data, C):
    X, y = data
    with _raises("C must be > 0"):
        linsvm.train(X, y, C=C)


@pytest.mark.parametrize("eps", [-1e-3, np.nan, np.inf])
def test_bad_eps(data, eps):
    X, y = data
    with _raises("eps must be >= 0"):
        linsvm.train(X, y, eps=eps)


@pytest.mark.parametrize("solver", [99, -1, 8, 14, 22])
def test_unknown_solver(data, solver):
    X, y = data
    with _raises(f"unknown solver type {solver}"):
        linsvm.train(X, y, solver=solver)


def test_every_liblinear_solver_is_available():
    from linsvm.solvers import SOLVERS, available_solvers

    # every registered solver is trainable: its solve function imports
    assert all(callable(spec.solve) for spec in SOLVERS.values())
    listed = available_solvers()
    assert listed.startswith("-s 0, -s 1, -s 2, -s 3, -s 4, -s 5, -s 6, -s 7, -s 11, -s 12")
    assert "-s 21, -s 30 (pegasos), -s 31 (sgd-r)" in listed and listed.endswith("-s 40 (tron)")


@pytest.mark.parametrize("solver", ["sgd-x", "99", 8, 2.5, True, None])
def test_unknown_solver_names(data, solver):
    X, y = data
    with _raises("unknown solver type"):
        linsvm.train(X, y, solver=solver)


@pytest.mark.parametrize("solver", ["pegasos", "sgd-r", "sgd-s", "sgd-m"])
def test_sgd_solvers_take_one_C(data, solver):
    X, y = data
    with _raises("one C for all rows"):
        linsvm.train(X, y, solver=solver, sample_weight=np.ones(X.shape[0]))
    label = np.unique(y)[0]
    with _raises("one C for all rows"):
        linsvm.train(X, y, solver=solver, class_weight={label: 2.0})
    model = linsvm.train(X, y, solver=solver, class_weight={label: 1.0}, max_iter=2)
    assert model.solver == linsvm.solvers.solver_number(solver)


@pytest.mark.parametrize("max_iter", [-1, -5])
def test_bad_max_iter(data, max_iter):
    X, y = data
    with _raises("max_iter must be >= 0"):
        linsvm.train(X, y, max_iter=max_iter)


@pytest.mark.parametrize("solver", [1, 3, 4, 7, 12, 5])
def test_a_numpy_integer_seed_is_the_same_seed(data, solver):
    X, y = data
    y = y * 1.5 if solver == 12 else y
    np.testing.assert_array_equal(linsvm.train(X, y, solver=solver, seed=np.int64(3)).coef_,
                                  linsvm.train(X, y, solver=solver, seed=3).coef_)  # fmt: skip


@pytest.mark.parametrize("seed", [1.0, None, "1", True])
def test_bad_seed(data, seed):
    X, y = data
    with _raises("seed must be an integer"):
        linsvm.train(X, y, seed=seed)


@pytest.mark.parametrize("bias", [np.nan, np.inf])
def test_bad_bias(data, bias):
    X, y = data
    with _raises("bias must be finite"):
        linsvm.train(X, y, bias=bias)


@pytest.mark.parametrize("weight", [-1.0, np.nan])
def test_bad_class_weight(data, weight):
    X, y = data
    with _raises("class weight for 1 must be finite and >= 0"):
        linsvm.train(X, y, class_weight={1: weight})


def test_class_weight_for_an_absent_label_only_warns(data, capsys):
    X, y = data
    with pytest.warns(UserWarning, match="^class label 5 specified in weight is not found$"):
        model = linsvm.train(X, y, class_weight={5: 2.0})
    assert capsys.readouterr().err == ""  # (a warning, not a print: filters apply)
    np.testing.assert_array_equal(model.coef_, linsvm.train(X, y).coef_)


@pytest.mark.parametrize("option", [{"bucket_size": 0}, {"buckets_per_group": 0}])
def test_bad_bucket_options(data, option):
    """An InvalidInputError (the CLI reports LinsvmError in one line), not a ValueError."""
    X, y = data
    with pytest.raises(InvalidInputError):
        linsvm.train(X, y, **option)


# ----------------------------------------------------------------------------- sample weights


@pytest.mark.parametrize(
    "sw, match",
    [
        (-1.0, "sample_weight must be >= 0"),
        (np.nan, "sample_weight contains NaN"),
        (np.inf, "sample_weight contains NaN"),
    ],
)
def test_bad_sample_weight_values(data, sw, match):
    X, y = data
    weights = np.ones(X.shape[0])
    weights[3] = sw
    with _raises(match):
        linsvm.train(X, y, sample_weight=weights)


@pytest.mark.parametrize("n", [1, 59, 61])
def test_sample_weight_shape(data, n):
    X, y = data
    with _raises(r"sample_weight must have shape \(60,\)"):
        linsvm.train(X, y, sample_weight=np.ones(n) if n > 1 else np.ones((60, 2)))


def test_scalar_sample_weight_is_broadcast(data):
    X, y = data
    a = linsvm.train(X, y, sample_weight=2.0)
    b = linsvm.train(X, y, sample_weight=np.full(X.shape[0], 2.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)


# ----------------------------------------------------------------------------- convergence


def test_convergence_warning_when_max_iter_is_hit(data):
    X, y = data
    with pytest.warns(ConvergenceWarning, match=r"max number of iterations \(2\)"):
        model = linsvm.train(X, y, solver=3, C=100.0, eps=1e-12, max_iter=2)
    res = model.results_[0]
    assert not res.converged and res.n_iter == 2
    assert res.gap >= -1e-9 * abs(res.primal)  # still an honest report


def test_convergence_warning_per_subproblem():
    X, y = make_sparse_problem(n_rows=90, n_features=6, n_classes=3, seed=1, density=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = linsvm.train(X, y, solver=3, C=100.0, eps=1e-12, max_iter=1)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 3
    for k, message in enumerate(messages):
        assert f"sub-problem {k}" in message
    assert all(not r.converged and r.n_iter == 1 for r in model.results_)


def _cap_warning(X, y, **params) -> str:
    with pytest.warns(ConvergenceWarning, match="max number of iterations") as caught:
        linsvm.train(X, y, C=100.0, eps=1e-12, max_iter=2, **params)
    return next(str(w.message) for w in caught if "max number" in str(w.message))


def test_cap_advice_fits_the_data_and_keeps_the_loss():
    # -s 3 on wide data: the hinge has no primal Newton solver; nothing about few features,
    # and -s 2 is named as the other loss it is, not offered as a faster -s 3
    X, y = make_sparse_problem(n_rows=40, n_features=200, seed=2, density=0.1)
    wide = _cap_warning(X, y, solver=3)
    assert "the hinge loss has no primal Newton solver" in wide
    assert "-s 2 minimises the squared hinge loss" in wide
    assert "fewer than rows" not in wide and "faster" not in wide
    # tall data: the rule of thumb holds and says why
    X, y = make_sparse_problem(n_rows=200, n_features=5, seed=2, density=0.6)
    tall = _cap_warning(X, y, solver=3)
    assert "slow when C is large and features are fewer than rows (5 < 200)" in tall
    assert "the hinge loss has no primal Newton solver" in tall
    # the epsilon-insensitive loss (-s 13) likewise; -s 11 is the squared one
    svr = _cap_warning(X, X.toarray()[:, 0], solver=13)
    assert "epsilon-insensitive loss has no primal Newton solver" in svr
    assert "-s 11 minimises the squared epsilon-insensitive loss" in svr
    # -s 1 does not stop at its cap: it continues with -s 2, its own loss in the primal
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        linsvm.train(X, y, solver=1, C=100.0, eps=1e-12, max_iter=2)
    assert any("switching to -s 2 (the same loss, in the primal)" in str(w.message) for w in caught)


@pytest.mark.parametrize("solver", [1, 7, 12])
def test_without_the_fallback_a_dual_stops_at_its_cap(solver):
    X, y = make_sparse_problem(n_rows=200, n_features=5, seed=2, density=0.6)
    y = X.toarray()[:, 0] if solver == 12 else y
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = linsvm.train(X, y, solver=solver, C=100.0, eps=1e-12, max_iter=2,
                             fallback=False)  # fmt: skip
    (result,) = model.results_
    assert result.solver == solver and result.n_iter == 2 and not result.converged
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1 and "switching" not in messages[0]


def test_default_cap_is_300(data):
    X, y = data
    with pytest.warns(ConvergenceWarning, match=r"\(300\)"):
        model = linsvm.train(X, y, solver=3, C=1e4, eps=1e-15)
    assert model.results_[0].n_iter == 300


def test_no_warning_when_converged(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = linsvm.train(X, y, C=0.1)
    assert model.results_[0].converged


# ----------------------------------------------------------------------------- prediction, CV


def test_predict_bad_input(data):
    X, y = data
    model = linsvm.train(X, y)
    with _raises("NaN"):
        model.predict(np.full((2, X.shape[1]), np.nan))
    with _raises("NaN"):
        model.predict(sp.csr_matrix(np.full((2, X.shape[1]), np.inf)))
    with _raises("2-D"):
        model.predict(np.ones(X.shape[1]))


def test_cross_validation_bad_folds(data):
    X, y = data
    with _raises("n must be >= 2"):
        linsvm.cross_validation(X, y, 1)
    # one row: its one fold would train on nothing (not "X has 0 rows" of the whole data)
    with _raises("cross validation needs at least 2 rows, got 1"):
        linsvm.cross_validation(X[:1], y[:1], 5)
    from linsvm.model_selection import find_parameter_C

    with _raises("cross validation needs at least 2 rows, got 1"):
        find_parameter_C(X[:1], y[:1], solver=2, n_folds=5, verbose=False)


def test_s1_falls_back_to_primal_newton_at_the_cap():
    # LIBLINEAR 2.50: -s 1 that reaches its iteration cap continues with -s 2 from its w.
    X, y = make_sparse_problem(n_rows=90, n_features=6, n_classes=2, seed=1, density=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback = linsvm.train(X, y, solver=1, C=100.0, eps=1e-3, max_iter=2)
    assert any("switching to -s 2" in str(w.message) for w in caught)
    result = fallback.results_[0]
    assert result.solver == 2 and result.converged
    assert result.gap >= -1e-9 * abs(result.primal)
    primal = linsvm.train(X, y, solver=2, C=100.0, eps=1e-6)
    assert result.primal == pytest.approx(primal.results_[0].primal, rel=1e-4)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predict_refuses_non_finite_values_in_the_models_features(bad, dtype):
    """Prediction checks the values through the decision values it computes; a NaN or an
    infinity in any feature the model has is still a one-line error, wherever the row is."""
    rng = np.random.default_rng(0)
    X = sp.random(3000, 40, density=0.2, format="csr", random_state=1, dtype=dtype)
    y = np.where(rng.random(3000) > 0.5, 1, -1)
    model = linsvm.train(X, y, solver=2, bias=1.0)
    for row in (0, 1234, 2999):
        bad_X = X.copy()
        bad_X.data[bad_X.indptr[row]] = bad
        with pytest.raises(InvalidInputError, match="NaN or infinity"):
            model.predict(bad_X)
        with pytest.raises(InvalidInputError, match="NaN or infinity"):
            model.decision_function(bad_X, n_jobs=1)


@pytest.mark.parametrize("mapped", [False, True])
def test_prediction_ignores_columns_beyond_the_model_dense_or_sparse(mapped):
    """Columns past the model's features are ignored, NaN in them too, dense as sparse, with
    a feature map as without."""
    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=0, density=0.5)
    model = linsvm.train(X, y, feature_map=linsvm.FeatureMap() if mapped else None)
    wider = np.hstack([X.toarray(), np.full((60, 1), np.nan)])
    expected = model.predict(X)
    np.testing.assert_array_equal(model.predict(wider), expected)
    np.testing.assert_array_equal(model.predict(sp.csr_matrix(wider)), expected)
    wider[3, 2] = np.inf  # (a feature the model has)
    with _raises("NaN or infinity"):
        model.predict(wider)


@pytest.mark.parametrize("bad, message", [
    (np.ones((3, 6)) + 1j, "X is complex"),
    (np.array([["a"] * 6] * 3), "X must be numeric"),
])  # fmt: skip
def test_prediction_refuses_what_training_refuses(bad, message):
    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=0, density=0.5)
    model = linsvm.train(X, y)
    with _raises(message):
        model.predict(bad)


def test_a_hook_answering_numpys_false_stops_the_solver(data):
    """A comparison of the progress's arrays answers numpy.False_: it stops as False does."""
    X, y = data
    with pytest.warns(linsvm.TrainingInterrupted):
        model = linsvm.train(X, y, eps=1e-12, hook=lambda p: np.abs(p.w).max() < 0.0)
    assert model.interrupted and model.results_[0].n_iter == 1


def test_cross_validation_of_integer_targets_predicts_real_numbers():
    X, _ = make_sparse_problem(n_rows=120, n_features=6, seed=3, density=0.5)
    y = np.rint(4 * (X @ np.linspace(-1, 1, 6))).astype(np.int64)
    predicted = linsvm.cross_validation(X, y, 3, solver=11)
    assert predicted.dtype == np.float64 and np.any(predicted != np.rint(predicted))
    assert linsvm.cross_validation(X, y.astype(np.float32), 3, solver=12).dtype == np.float64


def test_every_error_class_survives_pickling():
    """Errors travel back from Dask workers pickled: each must come back as itself."""
    import pickle

    from linsvm.errors import DataFormatError, InvalidInputError, ModelFormatError, ZeroIndexError
    from linsvm.io.cache import CacheFormatError

    for error in (
        DataFormatError("a.svm", 3, "bad value 'x' for feature 2"),
        ZeroIndexError("a.svm", 1, "feature index 0"),
        CacheFormatError("a.cache", "truncated"),
        InvalidInputError("no training data"),
        ModelFormatError("not a model"),
    ):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert str(back) == str(error)
        assert vars(back) == vars(error)


def test_non_contiguous_csr_arrays_train():
    """CSR whose arrays are views into larger ones (valid SciPy) trains as its copy does."""
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((60, 5))
    y = np.where(dense[:, 0] > 0, 1, -1)
    X = sp.csr_matrix(dense)
    columns = np.empty((X.nnz, 2))
    columns[:, 0] = X.data
    view = sp.csr_matrix((columns[:, 0], X.indices, X.indptr), shape=X.shape)
    assert not view.data.flags.c_contiguous
    for solver in (1, 7):
        np.testing.assert_array_equal(linsvm.train(view, y, solver=solver).coef_,
                                      linsvm.train(X, y, solver=solver).coef_)


def test_csr_arrays_pointing_outside_the_matrix_are_refused():
    """SciPy builds CSR from arrays unchecked: an index past the columns is refused in training
    and prediction (the kernels would read and write past w)."""
    indptr = np.arange(0, 13, 2)
    indices = np.tile([0, 1_000_000], 6).astype(np.int32)
    X = sp.csr_matrix((np.linspace(-1, 1, 12), indices, indptr), shape=(6, 3))
    y = np.array([1, -1, 1, -1, 1, -1])
    with _raises("column index 1000000 outside 0..2"):
        linsvm.train(X, y)
    model = linsvm.train(np.eye(3), [1, -1, 1])
    with _raises("not a valid CSR matrix"):
        model.predict(X)


# ----------------------------------------------------------------------------- the API's promises


def test_every_bad_option_of_the_api_is_a_linsvm_error(tmp_path, data):
    """docs/guarantees.md: every user error is a LinsvmError (InvalidInputError is also the
    ValueError these were); some were bare ValueErrors and TypeErrors."""
    from linsvm import FeatureMap
    from linsvm.datasets import make_text_classification
    from linsvm.io import read_libsvm, write_cache, write_libsvm

    X, y = data
    text = tmp_path / "d.txt"
    write_libsvm(X, y, text)
    for call in (
        lambda: read_libsvm(text, dtype=np.int32),
        lambda: read_libsvm(text, dtype="no such type"),
        lambda: read_libsvm(text, zero_based="x"),
        lambda: read_libsvm(text, n_features=-1),
        lambda: write_cache(text, tmp_path / "c", block_bytes=0),
        lambda: write_libsvm(X, np.array(["a", "b"] * 30), tmp_path / "s.txt"),
        lambda: linsvm.cross_validation(X, y, 2.5),
        lambda: make_text_classification(10, 10, random_state=-1),
        lambda: FeatureMap(gamma="1"),
        lambda: FeatureMap(coef0=True),
    ):
        with pytest.raises(InvalidInputError):
            call()
    assert not (tmp_path / "s.txt").exists()


def test_forgotten_labels(data):
    X, _ = data
    with _raises("y is required"):
        linsvm.train(X)
    # the one-class SVM ignores y, in cross-validation as in train
    predicted = linsvm.cross_validation(X, None, 3, solver=21)
    assert predicted.shape == (X.shape[0],) and set(np.unique(predicted)) <= {-1.0, 1.0}


def test_cache_blocks_out_of_range(tmp_path, data):
    """A negative block number read the last block (numpy's wraparound), past the end
    numpy's IndexError; ``block`` already refused both in one line."""
    from linsvm.io import open_cache, write_cache, write_libsvm

    X, y = data
    write_libsvm(X, y, tmp_path / "d.txt")
    write_cache(tmp_path / "d.txt", tmp_path / "c", block_bytes=256)
    with open_cache(tmp_path / "c") as cache:
        for k in (-1, cache.n_blocks):
            for call in (cache.read_block, cache.check_block, cache.prefetch, cache.release):
                with pytest.raises(IndexError, match="out of range"):
                    call(k)


def test_c_search_for_regression_reports_its_p(data):
    X, y = data
    from linsvm.model_selection import find_parameter_C

    search = find_parameter_C(X, y * 3.0, solver=11, n_folds=3, p=0.2, verbose=False)
    assert search.best_p == 0.2
    assert find_parameter_C(X, y, solver=2, n_folds=3, verbose=False).best_p == -1.0


def test_seeds_beyond_64_bits_are_refused(data):
    """The generator keeps 64 bits: seed 2^64 gave seed 0's model."""
    X, y = data
    with _raises("seed must be an integer from -2"):
        linsvm.train(X, y, seed=2**64)
    with _raises("seed must be an integer from -2"):
        linsvm.train(X, y, seed=-(2**63) - 1)
    linsvm.train(X, y, seed=-1)


@pytest.mark.parametrize("solver", [1, 3, 4, 7, 5, 0])
def test_costs_that_overflow_are_refused(data, solver):
    """C times a class or sample weight past the float range: the dual CD solvers returned
    a NaN objective and a model; the others refused it, each in its own words."""
    X, y = data
    with _raises("overflows"):
        linsvm.train(X, y, solver=solver, C=1e308, class_weight={1: 10.0})
    with _raises("the cost of row 3 overflows"):
        linsvm.train(X, y, solver=solver, C=1e300, sample_weight=[1.0, 1.0] + [1e300] * 58)


@pytest.mark.parametrize("solver", [12, 13, 11])
def test_regression_costs_that_overflow_are_refused(data, solver):
    X, y = data
    with _raises("the cost of row 1 overflows"):
        linsvm.train(X, y, solver=solver, C=1e300, sample_weight=np.full(60, 1e300))


@pytest.mark.parametrize("solver", [0, 4])
def test_a_class_of_zero_weight_is_refused(solver):
    """Its rows weighted 0, the class stayed in the model (never predicted) and still shaped
    the Crammer-Singer solution; the instance-weight LIBLINEAR drops zero-weight rows before
    counting the classes."""
    X, y = make_sparse_problem(n_rows=90, n_features=6, n_classes=3, seed=1, density=0.5)
    sw = np.where(y == y[0], 0.0, 1.0)
    with _raises(f"every row of class {float(y[0])} has sample weight 0"):
        linsvm.train(X, y, solver=solver, sample_weight=sw)
    with _raises("has sample weight 0"):
        linsvm.train(X, y, solver=solver, sample_weight=np.zeros(90))


def test_the_estimators_name_the_users_class_in_weight_errors():
    pytest.importorskip("sklearn")
    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=0, density=0.5)
    labels = np.where(y > 0, "pos", "neg")
    with _raises("class weight for 'pos' must be finite and >= 0, got -1"):
        linsvm.LinearSVC(class_weight={"pos": -1}).fit(X, labels)
    sw = np.where(labels == "pos", 0.0, 1.0)
    with _raises("every row of class 'pos' has sample weight 0"):
        linsvm.LinearSVC().fit(X, labels, sample_weight=sw)
    with _raises("'balanced': its rows' sample weights sum to 0"):
        linsvm.LinearSVC(class_weight="balanced").fit(X, labels, sample_weight=sw)
    # an infinite weight given as such says nothing of 'balanced'
    with pytest.raises(ValueError, match=r"got inf$"):
        linsvm.LinearSVC(class_weight={"pos": np.inf}).fit(X, labels)


def test_class_weight_that_is_not_a_mapping(data):
    X, y = data
    with _raises("class_weight must be a mapping"):
        linsvm.train(X, y, class_weight="balanced")


def test_dual_variables_can_be_dropped_as_each_sub_problem_ends():
    """Kept, K one-vs-rest results hold K x l dual variables (8,000 one-row classes: 674 MB
    where LIBLINEAR takes 111 MB); the command line never resumes from a model and drops
    them, keeping the support-vector counts it prints."""
    X, y = make_sparse_problem(n_rows=90, n_features=6, n_classes=3, seed=1, density=0.5)
    kept = linsvm.train(X, y, solver=3)
    dropped = linsvm.train(X, y, solver=3, dual_variables=False)
    np.testing.assert_array_equal(dropped.coef_, kept.coef_)
    assert all(r.alpha is None for r in dropped.results_)
    assert [r.n_sv for r in dropped.results_] == [r.n_sv for r in kept.results_]
    assert all(r.alpha is not None for r in kept.results_)


def test_cross_validation_folds_drop_the_rows_of_classes_without_weight():
    """A fold whose training part leaves a class only zero-weight rows (its weighted rows all
    held out) trains without that class's rows, as the instance-weight LIBLINEAR drops them,
    rather than being refused as a whole fit is."""
    from linsvm.model_selection import find_parameter_C

    X, y = make_sparse_problem(n_rows=60, n_features=6, seed=0, density=0.5)
    from linsvm.problems import cv_folds

    _, held_out = cv_folds(60, 5, 1)[0]
    weighted = held_out[y[held_out] == y[0]]
    assert weighted.size >= 1
    sw = np.where(y == y[0], 0.0, 1.0)
    sw[weighted] = 1.0  # the class's only weighted rows, all held out by fold 0
    predicted = linsvm.cross_validation(X, y, 5, sample_weight=sw, solver=2)
    assert predicted.shape == (60,)
    find_parameter_C(X, y, solver=2, n_folds=5, sample_weight=sw, verbose=False)


# ----------------------------------------------------------------------------- malformed input


def _malformed(kind: str):
    """Sparse matrices whose arrays disagree (SciPy builds them unchecked, or they were
    changed after): its conversions and the kernels crashed on them or read past them."""
    if kind == "decreasing csr":
        return sp.csr_matrix((np.ones(4), np.array([0, 1, 2, 0]), np.array([0, 3, 1, 4])),
                             shape=(3, 3))  # fmt: skip
    if kind == "short data":
        X = sp.csr_matrix((np.ones(4), np.array([0, 1, 2, 0]), np.array([0, 2, 3, 4])),
                          shape=(3, 3))  # fmt: skip
        X.data = X.data[:2]
        return X
    if kind == "decreasing csc":
        return sp.csc_matrix((np.ones(4), np.array([0, 1, 2, 0]), np.array([0, 3, 1, 4])),
                             shape=(3, 3))  # fmt: skip
    X = sp.coo_matrix((np.ones(2), (np.array([0, 1]), np.array([0, 1]))), shape=(3, 3))
    X.row[1] = 5
    return X


@pytest.mark.parametrize("kind, message", [
    ("decreasing csr", "not a valid CSR matrix: its pointer decreases at row 1"),
    ("short data", "not a valid CSR matrix: its pointer does not fit its 4 indices and 2 values"),
    ("decreasing csc", "not a valid CSC matrix: its pointer decreases at column 1"),
    ("coo", "not a valid COO matrix: row index 5 outside 0..2"),
])  # fmt: skip
def test_malformed_sparse_matrices_are_refused(data, kind, message):
    with _raises(message):
        linsvm.train(_malformed(kind), [1, -1, 1])
    X, y = data
    model = linsvm.train(X[:, :3], y)
    with _raises(message):
        model.predict(_malformed(kind))


def test_labels_and_weights_numpy_and_pandas_give(data):
    """Labels of extended precision (a Numba TypingError), pandas' NA among labels (a raw
    TypeError), tuple keys of class_weight (broadcast: (1, 7) weighted class 1), text for
    weights: each trains as it should or is refused in one line."""
    X, y = data
    model = linsvm.train(X, y.astype(np.longdouble))
    np.testing.assert_array_equal(model.coef_, linsvm.train(X, y).coef_)
    with _raises(r"class_weight keys must be labels, got \(1, 7\)"):
        linsvm.train(X, y, class_weight={(1, 7): 5.0})
    with _raises("class weight for 1 must be a number, got 'x'"):
        linsvm.train(X, y, class_weight={1: "x"})
    with _raises("sample_weight must be real numbers"):
        linsvm.train(X, y, sample_weight=["a"] * X.shape[0])
    with _raises("sample_weight must be real numbers"):
        linsvm.train(X, y, sample_weight=np.ones(X.shape[0]) + 1j)
    with _raises("X must be numeric, got an array of <U"):
        linsvm.train(np.array([["1", "2"], ["3", "4"]]), [1, -1])
    with _raises("X must be numeric"):
        linsvm.train([[1.0, 2.0], [3.0]], [1, -1])
    pd = pytest.importorskip("pandas")
    labels = pd.array(["a", "b"] * (X.shape[0] // 2 - 1) + ["a", pd.NA], dtype="string")
    with _raises(rf"y contains NaN or a missing label \(row {X.shape[0] - 1}\)"):
        linsvm.train(X, labels)


def test_regression_targets_and_starts_beyond_the_trainable_range(data):
    """A target of 1e200: -s 11 returned w = 0, -s 12 a w of 1e198 as converged; a NaN start
    was blamed on C, one of 1e155 gave a garbage model."""
    X, y = data
    targets = np.r_[np.ones(X.shape[0] - 1), 1e200]
    for solver in (11, 12):
        with _raises(r"regression target 1e\+200 \(row 59\)"):
            linsvm.train(X, targets, solver=solver)
    for start in (np.nan, 1e155, 1j):
        with _raises("init_sol must be"):
            linsvm.train(X, y, solver=2, init_sol=np.full((1, X.shape[1]), start))


def test_a_sparse_data_frame_stays_sparse(data):
    """np.asarray made a frame of sparse columns dense (1 GB for 20,000 x 5,000 at 0.1%)."""
    pd = pytest.importorskip("pandas")
    import linsvm.data as data_module

    X, y = data
    frame = pd.DataFrame.sparse.from_spmatrix(X)
    seen = []
    dense = data_module.dense_values
    import linsvm.model as model_module

    with pytest.MonkeyPatch.context() as patch:
        for module in (data_module, model_module):
            patch.setattr(module, "dense_values",
                          lambda *a, **k: seen.append(1) or dense(*a, **k))  # fmt: skip
        model = linsvm.train(frame, y)
        predicted = model.predict(frame)
    assert not seen
    np.testing.assert_array_equal(model.coef_, linsvm.train(X, y).coef_)
    np.testing.assert_array_equal(predicted, model.predict(X))


# ----------------------------------------------------------------------------- options' types


@pytest.mark.parametrize("nu", ["abc", [0.5], None])
def test_nu_not_a_number(data, nu):
    X, y = data
    with _raises("nu must be a number in"):
        linsvm.train(X, y, solver=21, nu=nu)


@pytest.mark.parametrize(
    "option, match",
    [({"bucket_size": "4"}, "bucket_size must be an integer >= 1, got '4'"),
     ({"bucket_size": 2.5}, "bucket_size must be an integer >= 1, got 2.5"),
     ({"buckets_per_group": 1.0}, "buckets_per_group must be an integer >= 1, got 1.0")],
)  # fmt: skip
def test_bucket_options_must_be_integers(data, option, match):
    X, y = data
    with _raises(match):
        linsvm.train(X, y, **option)


@pytest.mark.parametrize("every, match", [("abc", "must be a number of seconds, got 'abc'"),
                                          (None, "must be a number of seconds, got None"),
                                          (0, "must be > 0 seconds, got 0")])  # fmt: skip
def test_checkpoint_interval(data, tmp_path, every, match):
    X, y = data
    with _raises(f"checkpoint interval {match}"):
        linsvm.train(X, y, checkpoint=tmp_path / "run.ckpt", checkpoint_every=every)


def test_place_options_must_be_a_mapping(data):
    X, y = data
    with _raises("place_options must be a mapping of option names to values, got str"):
        linsvm.train(X, y, place_options="inner_iter=3")


# ----------------------------------------------------------------------------- seeds and paths
# in cross-validation and the parameter search, as in train


def _searches():
    from linsvm.model_selection import find_parameter_C, find_parameters

    return {
        "cross_validation": lambda X, y, **kw: linsvm.cross_validation(X, y, 3, **kw),
        "find_parameter_C": lambda X, y, **kw: np.array(
            find_parameter_C(X, y, n_folds=3, verbose=False, **kw).path),
        "find_parameters": lambda X, y, **kw: np.array(
            find_parameters(X, y, solver=11, n_folds=3, verbose=False, **kw).path),
    }  # fmt: skip


@pytest.mark.parametrize("run", ["cross_validation", "find_parameter_C", "find_parameters"])
def test_searches_take_numpy_seeds_and_refuse_others(data, run):
    X, y = data
    search = _searches()[run]
    np.testing.assert_array_equal(search(X, y, seed=np.int64(3)), search(X, y, seed=3))
    for seed in ("3", None, 2.0):
        with _raises("seed must be an integer"):
            search(X, y, seed=seed)


@pytest.mark.parametrize("run", ["cross_validation", "find_parameter_C", "find_parameters"])
def test_searches_read_a_path_as_train_does(data, tmp_path, run):
    X, y = data
    path = tmp_path / "rows.svm"
    linsvm.write_libsvm(X, y, path)
    search = _searches()[run]
    np.testing.assert_array_equal(search(str(path), None), search(X, y))
    with _raises("y is given with the path"):
        search(path, y)


def test_the_p_search_refuses_a_fixed_p(data):
    from linsvm.model_selection import find_parameters

    X, y = data
    with _raises("the search walks p: give its start as initial_p, not p"):
        find_parameters(X, y, solver=11, p=0.5, verbose=False)


def test_model_selection_and_scaling_are_attributes_of_the_package():
    import subprocess
    import sys

    code = ("import linsvm; print(linsvm.model_selection.find_parameter_C.__name__, "
            "linsvm.scaling.find_scaling.__name__)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["find_parameter_C", "find_scaling"]


# ----------------------------------------------------------------------------- habits from
# LIBLINEAR's Python interface (train(y, x, '-s 0'), svm_read_problem's dicts, predict options)


def test_an_option_string_says_how_options_are_given(data):
    X, y = data
    with _raises("looks like a LIBLINEAR option string; linsvm takes the options as arguments"):
        linsvm.train(X, y, "-s 0 -c 4")


@pytest.mark.parametrize("name, number", [("L2R_LR", 0), ("l2r_l2loss_svc_dual", 1),
                                          ("MCSVM_CS", 4), ("ONECLASS_SVM", 21)])  # fmt: skip
def test_model_file_solver_names_are_solvers(name, number):
    from linsvm.solvers import get_solver

    assert get_solver(name).number == number


def test_labels_first_or_rows_as_dicts(data):
    X, y = data
    with _raises(r"X must be 2-D, got shape \(60,\): .*train\(X, y\)"):
        linsvm.train(y, X)
    with _raises("X holds rows as dicts .*linsvm.read_libsvm"):
        linsvm.train([{1: 0.5, 3: 1.0}, {2: 1.0}], [1, -1])


def test_predict_with_an_option_string(data):
    X, y = data
    model = linsvm.train(X, y, solver=0)
    for method in (model.predict, model.decision_function, model.predict_proba):
        with _raises("LIBLINEAR's predict options are methods here: predict_proba"):
            method(X, "-b 1")


def test_read_libsvm_of_a_file_object(tmp_path):
    path = tmp_path / "rows.svm"
    path.write_text("1 1:0.5\n-1 2:1\n")
    with open(path) as f, _raises("read_libsvm takes a file's path, got a file object"):
        linsvm.read_libsvm(f)
