"""linsvm's scikit-learn estimators: the estimator contract for all three; LinearSVC in detail
(LogisticRegression and LinearSVR: test_estimators_lr_svr.py; warm starts: test_warm_start.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from conftest import make_sparse_problem  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.svm import LinearSVC as SkLinearSVC  # noqa: E402
from sklearn.utils.estimator_checks import (  # noqa: E402
    check_sample_weight_equivalence_on_dense_data,
    check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks,
)

from linsvm import train  # noqa: E402
from linsvm.estimators import LinearSVC, LinearSVR, LogisticRegression  # noqa: E402

_SAMPLE_WEIGHT_REASON = (
    "sample_weight is not equivalent to removing/repeating samples at the check's default "
    "tolerance: every solver stops at tol, far from the check's precision (the primal "
    "Newton's -s 2 of LinearSVC's dual='auto' too), and the coordinate-descent solvers visit "
    "the rows in random order (sklearn's own LinearSVC and LinearSVR expect this failure "
    "too; test_sample_weight_equivalence_primal runs it at tol=1e-12)"
)
EXPECTED_FAILED = {
    "check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT_REASON,
    "check_sample_weight_equivalence_on_sparse_data": _SAMPLE_WEIGHT_REASON,
}


def _expected_failed(estimator):
    """The primal Newton solvers (-s 0, -s 11) pass the equivalence checks at their defaults."""
    if isinstance(estimator, LogisticRegression) and not estimator.dual:
        deterministic = estimator.l1_ratio == 0
    else:
        deterministic = isinstance(estimator, LinearSVR) and estimator.dual is False
    return {} if deterministic else EXPECTED_FAILED


@parametrize_with_checks(
    [
        LinearSVC(max_iter=20),
        LinearSVC(dual=True, loss="hinge", max_iter=20),
        LinearSVC(multi_class="crammer_singer", tol="liblinear"),
        LogisticRegression(),
        LogisticRegression(dual=True),
        LogisticRegression(l1_ratio=1, tol="liblinear"),
        LinearSVR(max_iter=50),
        LinearSVR(loss="squared_epsilon_insensitive", dual=False),
    ],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _primal(X, y, classes, coef, intercept, C, fit_intercept, scaling, loss="squared_hinge"):
    """sklearn-convention primal value of each one-vs-rest sub-problem."""
    X = sp.csr_matrix(X, dtype=np.float64)
    values = []
    for k in range(coef.shape[0]):
        positive = classes[1] if coef.shape[0] == 1 else classes[k]
        y_pm1 = np.where(y == positive, 1.0, -1.0)
        margin = y_pm1 * (X @ coef[k] + intercept[k])
        slack = np.maximum(0.0, 1.0 - margin)
        reg = coef[k] @ coef[k]
        if fit_intercept:
            reg += (intercept[k] / scaling) ** 2
        values.append(0.5 * reg + C * np.sum(slack**2 if loss == "squared_hinge" else slack))
    return np.array(values)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("dual", [True, False])
def test_primal_matches_sklearn(n_classes, fit_intercept, dual):
    X, y = make_sparse_problem(n_rows=200, n_features=20, n_classes=n_classes, seed=3)
    params = dict(C=0.5, tol=1e-6, dual=dual, fit_intercept=fit_intercept, max_iter=100000)
    ours = LinearSVC(random_state=0, **params).fit(X, y)
    ref = SkLinearSVC(random_state=0, **params).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert ours.coef_.shape == ref.coef_.shape
    # intercept_ is the scalar 0.0 without an intercept, as scikit-learn's
    assert np.shape(ours.intercept_) == np.shape(ref.intercept_)
    assert fit_intercept or ours.intercept_ == 0.0
    our_intercept = np.broadcast_to(ours.intercept_, ours.coef_.shape[0])
    ref_intercept = np.broadcast_to(ref.intercept_, ours.coef_.shape[0])
    p_ours = _primal(X, y, ours.classes_, ours.coef_, our_intercept, 0.5, fit_intercept, 1.0)
    p_ref = _primal(X, y, ref.classes_, ref.coef_, ref_intercept, 0.5, fit_intercept, 1.0)
    np.testing.assert_allclose(p_ours, p_ref, rtol=1e-4)
    # objective_ is that primal, per sub-problem in classes_ order
    np.testing.assert_allclose(ours.objective_, p_ours, rtol=1e-8)
    assert ours.dual_gap_.shape == ours.objective_.shape
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.97


@pytest.mark.parametrize("n_classes", [2, 3])
def test_equals_train(n_classes):
    X, y = make_sparse_problem(n_rows=150, n_features=30, n_classes=n_classes, seed=5)
    est = LinearSVC(random_state=7, dual=True, C=2.0, intercept_scaling=2.0).fit(X, y)
    seed = int(np.random.RandomState(7).randint(np.iinfo("i").max))
    # y is -1/+1 or 1..3: sorted, so the encoded labels are its ranks
    y_ind = np.searchsorted(np.unique(y), y)
    model = train(X, y_ind, solver=1, C=2.0, eps=1e-4, bias=2.0, max_iter=1000, seed=seed)
    labels = model.labels_.astype(int)
    if n_classes == 2:
        sign = 1.0 if labels[0] == 1 else -1.0
        np.testing.assert_array_equal(est.coef_, sign * model.coef_)
        np.testing.assert_array_equal(est.intercept_, sign * model.intercept_)
    else:
        order = np.argsort(labels)
        np.testing.assert_array_equal(est.coef_, model.coef_[order])
        np.testing.assert_array_equal(est.intercept_, model.intercept_[order])
    np.testing.assert_array_equal(np.unique(y)[model.predict(X).astype(int)], est.predict(X))


def test_binary_sign_convention_and_string_labels():
    X, y = make_sparse_problem(n_rows=200, n_features=15, seed=1)
    names = np.where(y > 0, "spam", "ham")
    est = LinearSVC(random_state=0).fit(X, names)
    assert list(est.classes_) == ["ham", "spam"]
    dec = est.decision_function(X)
    pred = est.predict(X)
    np.testing.assert_array_equal(pred, np.where(dec > 0, "spam", "ham"))
    assert np.mean(pred == names) > 0.9
    # the same fit with labels in the other first-seen order gives the same model
    perm = np.argsort(names, kind="stable")
    est2 = LinearSVC(random_state=0, dual=False, tol=1e-8).fit(X[perm], names[perm])
    est3 = LinearSVC(random_state=0, dual=False, tol=1e-8).fit(X, names)
    np.testing.assert_allclose(est2.coef_, est3.coef_, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
def test_string_labels_multiclass_and_pickle(multi_class):
    X, y = make_sparse_problem(n_rows=240, n_features=20, n_classes=3, seed=2)
    names = np.array(["c", "a", "b"])[y.astype(int) - 1]
    est = LinearSVC(multi_class=multi_class, random_state=0).fit(X, names)
    assert list(est.classes_) == ["a", "b", "c"]
    assert est.coef_.shape == (3, 20)
    pred = est.predict(X)
    np.testing.assert_array_equal(pred, est.classes_[np.argmax(est.decision_function(X), 1)])
    assert np.mean(pred == names) > 0.8
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.predict(X), pred)
    np.testing.assert_array_equal(clone.coef_, est.coef_)


def test_crammer_singer_binary_is_one_vector():
    X, y = make_sparse_problem(n_rows=150, n_features=10, seed=4)
    est = LinearSVC(multi_class="crammer_singer", random_state=0).fit(X, y)
    ref = SkLinearSVC(multi_class="crammer_singer", random_state=0).fit(X, y)
    assert est.coef_.shape == ref.coef_.shape == (1, 10)
    assert est.intercept_.shape == (1,)
    assert np.mean(est.predict(X) == ref.predict(X)) > 0.95


def test_float32_sparse_and_dense():
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=6)
    X32 = X.astype(np.float32)
    est32 = LinearSVC(random_state=0, dual=True).fit(X32, y)
    est64 = LinearSVC(random_state=0, dual=True).fit(X, y)
    assert est32.coef_.dtype == np.float64
    np.testing.assert_allclose(est32.coef_, est64.coef_, rtol=1e-3, atol=1e-4)
    dense = LinearSVC(random_state=0, dual=True).fit(X32.toarray(), y)
    assert dense.coef_.dtype == np.float64
    np.testing.assert_allclose(dense.coef_, est32.coef_, rtol=1e-10, atol=1e-12)


def test_float32_csr_is_not_copied(monkeypatch):
    import linsvm.estimators as mod

    X, y = make_sparse_problem(n_rows=100, n_features=10, seed=8)
    X32 = X.astype(np.float32)
    seen = {}
    real_train = mod.train

    def spy(X, *args, **kwargs):
        seen["data"] = X.data
        return real_train(X, *args, **kwargs)

    monkeypatch.setattr(mod, "train", spy)
    LinearSVC(random_state=0).fit(X32, y)
    assert seen["data"] is X32.data or np.shares_memory(seen["data"], X32.data)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(penalty="l1", loss="hinge"), "penalty='l1' and loss='hinge' is not supported"),
        (dict(penalty="l1", dual=True), "are not supported when dual=True"),
        (dict(loss="hinge", dual=False), "are not supported when dual=False"),
    ],
)
def test_invalid_combinations(params, message):
    X, y = make_sparse_problem(n_rows=50, n_features=5, seed=0)
    with pytest.raises(ValueError, match=message):
        LinearSVC(**params).fit(X, y)
    with pytest.raises(ValueError, match=message):
        SkLinearSVC(**params).fit(X, y)


def test_dual_auto_and_l1_penalty():
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=9)
    # penalty l1 only has a primal solver: 'auto' picks it even for wide data
    est = LinearSVC(penalty="l1", random_state=0).fit(X[:10], y[:10])
    assert est.model_.solver == 5
    assert LinearSVC(random_state=0).fit(X, y).model_.solver == 2
    assert LinearSVC(random_state=0).fit(X[:10], y[:10]).model_.solver == 1
    assert LinearSVC(loss="hinge", random_state=0).fit(X, y).model_.solver == 3


def test_class_weight_balanced_and_sample_weight():
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=10)
    params = dict(class_weight="balanced", dual=False, tol=1e-8)
    sw = np.linspace(0.5, 2.0, y.shape[0])
    ours = LinearSVC(**params).fit(X, y, sample_weight=sw)
    ref = SkLinearSVC(**params).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-3, atol=1e-5)


def test_sparsify_densify():
    X, y = make_sparse_problem(n_rows=100, n_features=10, seed=11)
    est = LinearSVC(random_state=0).fit(X, y)
    dense_pred = est.predict(X)
    est.sparsify()
    assert sp.issparse(est.coef_)
    np.testing.assert_array_equal(est.predict(X), dense_pred)
    est.densify()
    assert isinstance(est.coef_, np.ndarray)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "check",
    [check_sample_weight_equivalence_on_dense_data, check_sample_weight_equivalence_on_sparse_data],
)
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_sample_weight_equivalence_primal(check, class_weight):
    # the deterministic primal solver honours the equivalence the xfailed checks test (the
    # configurations scikit-learn itself checks for LinearSVC)
    check("LinearSVC", LinearSVC(dual=False, tol=1e-12, class_weight=class_weight))


def test_convergence_warning_and_random_state():
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=12)
    with pytest.warns(ConvergenceWarning, match="failed to converge"):
        LinearSVC(dual=True, max_iter=1, tol=1e-10, random_state=0).fit(X, y)
    # max_iter is the cap, as scikit-learn's: no primal solve after it (LIBLINEAR's command
    # line goes on with -s 2 there)
    for estimator in (LinearSVC(dual=True, max_iter=3, tol=1e-10),
                      LogisticRegression(dual=True, max_iter=3, tol=1e-10)):  # fmt: skip
        with pytest.warns(ConvergenceWarning, match="failed to converge"):
            estimator.fit(X, y)
        assert np.max(estimator.n_iter_) == 3
        dual_solver = 1 if isinstance(estimator, LinearSVC) else 7
        assert {r.solver for r in estimator.model_.results_} == {dual_solver}
    a = LinearSVC(dual=True, random_state=np.random.RandomState(3)).fit(X, y)
    b = LinearSVC(dual=True, random_state=np.random.RandomState(3)).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.n_features_in_ == 20 and a.n_iter_ >= 1


def test_ctrl_c_ends_a_fit_as_in_scikit_learn(monkeypatch):
    """train returns the iterate a Ctrl-C stopped at; a fit raises KeyboardInterrupt, so that
    a search over fits ends too."""
    import os
    import signal

    import linsvm.estimators

    X, y = make_sparse_problem(n_rows=300, n_features=20, seed=12)
    trained = linsvm.estimators.train

    def train_then_ctrl_c(*args, **kwargs):
        def hook(progress):
            if progress.iteration == 2:
                os.kill(os.getpid(), signal.SIGINT)

        return trained(*args, hook=hook, **kwargs)

    monkeypatch.setattr(linsvm.estimators, "train", train_then_ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        LinearSVC(dual=True, tol=1e-12, max_iter=10_000).fit(X, y)
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(("penalty", "loss"), [("l2", "hinge"), ("l1", "squared_hinge")])
def test_other_losses_match_sklearn(n_classes, penalty, loss):
    X, y = make_sparse_problem(n_rows=200, n_features=20, n_classes=n_classes, seed=13)
    params = dict(penalty=penalty, loss=loss, C=0.5, tol=1e-6, max_iter=100000)
    ours = LinearSVC(random_state=0, **params).fit(X, y)
    ref = SkLinearSVC(random_state=0, **params).fit(X, y)

    def primal(est):
        values = []
        for k in range(est.coef_.shape[0]):
            positive = est.classes_[1] if est.coef_.shape[0] == 1 else est.classes_[k]
            y_pm1 = np.where(y == positive, 1.0, -1.0)
            slack = np.maximum(0.0, 1.0 - y_pm1 * (X @ est.coef_[k] + est.intercept_[k]))
            w = np.append(est.coef_[k], est.intercept_[k])
            reg = np.abs(w).sum() if penalty == "l1" else 0.5 * w @ w
            values.append(reg + 0.5 * np.sum(slack**2 if loss == "squared_hinge" else slack))
        return np.array(values)

    np.testing.assert_allclose(primal(ours), primal(ref), rtol=1e-4)
    np.testing.assert_allclose(ours.objective_, primal(ours), rtol=1e-6)


def test_crammer_singer_cap_is_liblinears_as_in_sklearn():
    # scikit-learn's liblinear ignores max_iter for Crammer-Singer (cap 100000): so do we
    X, y = make_sparse_problem(n_rows=120, n_features=8, n_classes=3, seed=14)
    est = LinearSVC(multi_class="crammer_singer", max_iter=1, tol=1e-3, random_state=0).fit(X, y)
    assert est.n_iter_ > 1 and est.model_.results_[0].converged


# ----------------------------------------------------------------------------- model_ and files


def test_saved_model_predicts_what_the_estimator_predicts(tmp_path, capsys, shared_dataset):
    # model_ holds the estimator's labels, not the encoded 0..k-1: `linsvm predict` with the
    # saved model scores what the estimator scores (a9a and a9a.t are bundled in data/)
    import linsvm
    from linsvm.cli import main

    X, y = linsvm.read_libsvm(shared_dataset("a9a"))
    test_file = shared_dataset("a9a.t")
    X_test, y_test = linsvm.read_libsvm(test_file, n_features=X.shape[1])
    est = LinearSVC(tol="liblinear", random_state=0).fit(X, y)
    model_file, out_file = tmp_path / "a9a.model", tmp_path / "a9a.out"
    est.model_.save(model_file)
    # (a9a's first label is -1: LIBLINEAR, and `linsvm train`, put +1 first)
    assert "\nlabel 1 -1\n" in model_file.read_text()
    np.testing.assert_array_equal(est.model_.predict(X_test), est.predict(X_test))
    capsys.readouterr()
    assert main(["predict", str(test_file), str(model_file), str(out_file)]) == 0
    printed = capsys.readouterr().out
    accuracy = float(printed.split("=")[1].split("%")[0])
    assert accuracy == pytest.approx(100 * est.score(X_test, y_test), abs=1e-3)
    assert accuracy > 84.0
    np.testing.assert_array_equal(np.loadtxt(out_file), est.predict(X_test))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_model_has_the_estimators_labels(tmp_path, n_classes):
    import linsvm

    X, y = make_sparse_problem(n_rows=90, n_features=8, n_classes=n_classes, seed=2)
    labels = np.array([7, -3, 40])[:n_classes]
    y_user = labels[np.unique(y, return_inverse=True)[1]]
    for est in (LinearSVC(random_state=0), LogisticRegression(random_state=0)):
        est.fit(X, y_user)
        assert sorted(est.model_.labels_.tolist()) == sorted(labels.tolist())
        est.model_.save(tmp_path / "m")
        loaded = linsvm.load_model(tmp_path / "m")
        np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_exact_ties_are_broken_as_scikit_learn_by_the_estimator_as_liblinear_by_model_():
    # an empty row without an intercept scores 0 for every class; labels first seen 3, 1, 2
    X, y = make_sparse_problem(n_rows=90, n_features=8, n_classes=3, seed=2)
    y = np.array([3, 1, 2])[np.unique(y, return_inverse=True)[1]]
    y[:3] = [3, 1, 2]
    empty = sp.csr_matrix((1, X.shape[1]))
    est = LinearSVC(fit_intercept=False, random_state=0).fit(X, y)
    assert est.model_.labels_.tolist() == [3, 1, 2]
    assert est.predict(empty).tolist() == [1] and est.model_.predict(empty).tolist() == [3]
    binary = y != 2
    est.fit(X[binary], y[binary])  # 3 seen first: LIBLINEAR's w is positive for 3
    assert est.model_.labels_.tolist() == [3, 1]
    assert est.predict(empty).tolist() == [1] and est.model_.predict(empty).tolist() == [1]
    est.fit(X[binary], 4 - y[binary])  # 1 seen first (from 3): now the two part
    assert est.model_.labels_.tolist() == [1, 3]
    assert est.predict(empty).tolist() == [1] and est.model_.predict(empty).tolist() == [3]


def test_model_of_string_labels_refuses_to_be_saved(tmp_path):
    import linsvm

    X, y = make_sparse_problem(n_rows=60, n_features=5, seed=1)
    est = LinearSVC(random_state=0).fit(X, np.where(y > 0, "spam", "ham"))
    np.testing.assert_array_equal(est.model_.predict(X), est.predict(X))
    target = tmp_path / "m"
    with pytest.raises(linsvm.ModelFormatError) as err:
        est.model_.save(target)
    message = str(err.value)
    assert message.startswith(f"{target}: cannot save: class label ")
    assert "not an integer" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("Estimator", [LinearSVC, LogisticRegression])
@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
def test_model_of_minus_one_first_puts_plus_one_first_as_liblinear(Estimator, multi_class):
    import linsvm

    if multi_class == "crammer_singer" and Estimator is LogisticRegression:
        pytest.skip("Crammer-Singer is LinearSVC's")
    X, y = make_sparse_problem(n_rows=80, n_features=6, seed=3)
    y = np.where(y > 0, 1, -1)
    y[0] = -1
    params = {"multi_class": multi_class} if multi_class != "ovr" else {}
    est = Estimator(random_state=0, warm_start=True, tol=1e-8, **params).fit(X, y)
    solver = 4 if multi_class == "crammer_singer" else est.model_.solver
    model = linsvm.train(X, y, solver=solver, bias=1.0, eps=1e-8, seed=0)
    assert est.model_.labels_.tolist() == model.labels_.tolist() == [1, -1]
    np.testing.assert_allclose(est.model_.coef_, model.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(est.model_.predict(X), est.predict(X))
    # a warm start from the swapped model_ restarts at its optimum
    first = est.n_iter_
    est.fit(X, y)
    assert est.n_iter_ <= max(first // 2, 2)


def test_warm_start_with_the_users_labels():
    X, y = make_sparse_problem(n_rows=120, n_features=10, n_classes=3, seed=4)
    y_user = np.array(["b", "c", "a"])[np.unique(y, return_inverse=True)[1]]
    est = LinearSVC(dual=True, warm_start=True, random_state=0, tol=1e-6).fit(X, y_user)
    first = est.n_iter_
    est.set_params(C=1.0).fit(X, y_user)  # same problem: restarts at the optimum
    assert est.n_iter_ < first
    assert sorted(est.model_.labels_.tolist()) == ["a", "b", "c"]


@pytest.mark.parametrize("Estimator", [LinearSVC, LogisticRegression, LinearSVR])
def test_csr_with_int64_indices_is_accepted(Estimator):
    # scikit-learn 1.9's load_svmlight_file returns int64 indices; the kernels take them
    X, y = make_sparse_problem(n_rows=80, n_features=9, seed=3)
    X64 = X.copy()
    X64.indices, X64.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    assert X64.indices.dtype == np.int64
    a = Estimator(random_state=0).fit(X, y)
    b = Estimator(random_state=0).fit(X64, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(X64), b.predict(X))


def test_csr_with_int64_indices_is_not_copied(monkeypatch):
    import linsvm.estimators as mod

    seen = []
    monkeypatch.setattr(mod, "train", lambda X, y, **kw: seen.append(X) or train(X, y, **kw))
    X, y = make_sparse_problem(n_rows=80, n_features=9, seed=3)
    X64 = X.copy()
    X64.indices, X64.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    LinearSVC(random_state=0).fit(X64, y)
    assert seen[0].indices is X64.indices and seen[0].data is X64.data


@pytest.mark.parametrize("make", [lambda ws: LinearSVC(dual=True, warm_start=ws, random_state=0),
                                  lambda ws: LogisticRegression(dual=True, warm_start=ws,
                                                                random_state=0)])
def test_a_fitted_estimator_keeps_dual_variables_only_for_a_warm_start(make):
    """The dual variables (8 bytes a row and sub-problem, and -s 7's complements as many
    again) are what a warm start resumes from: without warm_start a fitted estimator held them
    all the same, its pickle growing with the rows (letter's 26 classes: 3 MB against
    scikit-learn's 4 kB)."""
    X, y = make_sparse_problem(n_rows=3000, n_features=20, n_classes=4, seed=5)
    cold, warm = make(False).fit(X, y), make(True).fit(X, y)
    np.testing.assert_array_equal(cold.coef_, warm.coef_)
    for kept, r in zip(warm.model_.results_, cold.model_.results_, strict=True):
        assert r.alpha is None and "alpha_complement" not in r.figures
        assert kept.alpha.shape == (3000,) and r.n_sv == kept.n_sv > 0
    assert len(pickle.dumps(cold)) < 0.1 * len(pickle.dumps(warm))
    # turned on afterwards, the next fit starts cold (nothing kept to resume from) and works
    cold.set_params(warm_start=True).fit(X, y)
    np.testing.assert_allclose(cold.coef_, warm.coef_, atol=1e-3)
    assert cold.model_.results_[0].alpha.shape == (3000,)


@pytest.mark.parametrize("estimator", [LinearSVC(max_iter=2), LogisticRegression(max_iter=1),
                                       LinearSVR(max_iter=2)])  # fmt: skip
def test_the_convergence_warning_points_at_the_users_fit(estimator):
    """As scikit-learn's: filters by module (``module="sklearn"`` silences scikit-learn's own)
    and the warning's line are the caller's; the classifiers' pointed inside linsvm."""
    X, y = make_sparse_problem(n_rows=200, n_features=20, seed=3)
    with pytest.warns(ConvergenceWarning) as caught:
        estimator.fit(X, y)
    assert [w.filename for w in caught] == [__file__]


def test_cloning_with_a_client_from_threads_leaves_the_estimator_alone():
    """clone shares a dask Client; it once set the estimator's own client to None while it
    cloned, so that clones made (or a fit run) on other threads meanwhile lost the client and
    trained locally without a word."""
    import threading

    from sklearn.base import clone

    class Client:  # (stands for a dask.distributed.Client: clone must share, not copy, it)
        pass

    client = Client()
    estimator = LinearSVC(client=client, C=0.5)
    lost = []

    def clone_many():
        for _ in range(2000):
            twin = clone(estimator)
            if twin.client is not client or estimator.client is not client:
                lost.append(twin)

    threads = [threading.Thread(target=clone_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not lost
    twin = clone(estimator.set_params(tol=1e-3))
    assert twin.get_params() == {**estimator.get_params(), "client": client}
    assert twin is not estimator and not hasattr(twin, "coef_")
