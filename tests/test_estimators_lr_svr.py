"""linsvm.LogisticRegression and linsvm.LinearSVR against scikit-learn's own classes and train.

Objectives are computed here from coef_/intercept_ with NumPy (LIBLINEAR's problem: the bias
weight intercept_ / intercept_scaling is regularised like the others), an oracle independent of
linsvm.objective.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from conftest import make_sparse_problem, sklearn_l1_logistic  # noqa: E402
from sklearn.linear_model import LogisticRegression as SkLogisticRegression  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.svm import LinearSVR as SkLinearSVR  # noqa: E402

import linsvm  # noqa: E402
from linsvm import train  # noqa: E402
from linsvm.estimators import LinearSVR, LogisticRegression  # noqa: E402


def _weights(coef, intercept, fit_intercept, scaling):
    """(w with the bias weight appended when there is one, intercept) for one weight vector."""
    intercept = float(np.ravel(intercept)[0]) if fit_intercept else 0.0
    return (np.append(coef, intercept / scaling) if fit_intercept else coef), intercept


def _lr_primal(X, y_pm1, coef, intercept, C, fit_intercept, scaling, l1):
    w, b = _weights(coef, intercept, fit_intercept, scaling)
    z = y_pm1 * (X @ coef + b)
    reg = np.abs(w).sum() if l1 else 0.5 * w @ w
    return reg + C * np.sum(np.logaddexp(0.0, -z))


def _svr_primal(X, y, coef, intercept, C, epsilon, fit_intercept, scaling, squared):
    w, b = _weights(coef, intercept, fit_intercept, scaling)
    slack = np.maximum(0.0, np.abs(y - (X @ coef + b)) - epsilon)
    return 0.5 * w @ w + C * np.sum(slack**2 if squared else slack)


def _scaled_problem(n_classes=2, seed=0, n_rows=250, n_features=25):
    X, y = make_sparse_problem(n_rows=n_rows, n_features=n_features, n_classes=n_classes, seed=seed)
    return sp.csr_matrix(X, dtype=np.float64), y


LR_CASES = [
    dict(),  # -s 0
    dict(dual=True),  # -s 7
    dict(l1_ratio=1),  # -s 6
    dict(penalty="l1"),  # -s 6, the deprecated spelling
]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # sklearn 1.8+ deprecates penalty=
@pytest.mark.parametrize("params", LR_CASES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_logistic_primal_matches_sklearn(params, fit_intercept):
    X, y = _scaled_problem(seed=1)
    common = dict(C=0.7, tol=1e-8, max_iter=100000, fit_intercept=fit_intercept, random_state=0)
    ours = LogisticRegression(**common, **params).fit(X, y)
    # (scikit-learn 1.7's own class spells the L1 penalty penalty="l1": l1_ratio is ignored)
    ref_params = sklearn_l1_logistic() if params.get("l1_ratio") == 1 else params
    ref = SkLogisticRegression(solver="liblinear", **common, **ref_params).fit(X, y)
    l1 = params.get("l1_ratio") == 1 or params.get("penalty") == "l1"
    y_pm1 = np.where(y == ours.classes_[1], 1.0, -1.0)
    p_ours = _lr_primal(X, y_pm1, ours.coef_[0], ours.intercept_, 0.7, fit_intercept, 1.0, l1)
    p_ref = _lr_primal(X, y_pm1, ref.coef_[0], ref.intercept_, 0.7, fit_intercept, 1.0, l1)
    assert abs(p_ours - p_ref) <= 1e-4 * p_ref
    np.testing.assert_allclose(ours.objective_, [p_ours], rtol=1e-8)
    assert ours.coef_.shape == ref.coef_.shape == (1, X.shape[1])
    assert np.shape(ours.intercept_) == np.shape(ref.intercept_)
    assert ours.n_iter_.shape == (1,) and ours.n_iter_.dtype == ref.n_iter_.dtype
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.98
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=2e-3)


@pytest.mark.parametrize("dual", [False, True])
def test_logistic_multiclass_is_one_vs_rest(dual):
    X, y = _scaled_problem(n_classes=3, seed=2)
    names = np.array(["x", "y", "z"])[y.astype(int) - 1]
    common = dict(C=1.5, tol=1e-8, max_iter=100000, dual=dual, random_state=0)
    ours = LogisticRegression(**common).fit(X, names)
    ref = OneVsRestClassifier(SkLogisticRegression(solver="liblinear", **common)).fit(X, names)
    assert list(ours.classes_) == ["x", "y", "z"]
    for k, (cls, sub) in enumerate(zip(ours.classes_, ref.estimators_, strict=True)):
        y_pm1 = np.where(names == cls, 1.0, -1.0)
        p_ours = _lr_primal(X, y_pm1, ours.coef_[k], ours.intercept_[k], 1.5, True, 1.0, False)
        p_ref = _lr_primal(X, y_pm1, sub.coef_[0], sub.intercept_[0], 1.5, True, 1.0, False)
        assert abs(p_ours - p_ref) <= 1e-4 * p_ref
        assert ours.objective_[k] == pytest.approx(p_ours, rel=1e-8)
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba, ref.predict_proba(X), atol=2e-3)
    np.testing.assert_array_equal(ours.classes_[np.argmax(proba, axis=1)], ours.predict(X))
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(proba))
    clone = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(clone.predict(X), ours.predict(X))


@pytest.mark.parametrize(
    ("params", "solver"), [(dict(), 0), (dict(dual=True), 7), (dict(l1_ratio=1), 6)]
)
def test_logistic_equals_train(params, solver):
    X, y = _scaled_problem(seed=3)
    est = LogisticRegression(C=2.0, intercept_scaling=3.0, random_state=5, **params).fit(X, y)
    seed = int(np.random.RandomState(5).randint(np.iinfo("i").max))
    model = train(
        X, (y > 0).astype(int), solver=solver, C=2.0, eps=1e-4, bias=3.0, max_iter=100, seed=seed
    )
    sign = 1.0 if model.labels_[0] == 1 else -1.0
    np.testing.assert_array_equal(est.coef_, sign * model.coef_)
    np.testing.assert_array_equal(est.intercept_, sign * model.intercept_)
    assert est.model_.solver == solver


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(solver="lbfgs"), "use solver='liblinear'"),
        (dict(l1_ratio=0.5), "Only 'saga' solver supports elasticnet"),
        (dict(penalty="elasticnet", l1_ratio=0.5), "Only 'saga' solver supports elasticnet"),
        (dict(C=np.inf), "C=np.inf as well as penalty=None is not supported"),
        (dict(penalty=None), "C=np.inf as well as penalty=None is not supported"),
        (dict(l1_ratio=1, dual=True), "are not supported when dual=True"),
        (dict(C=-1.0), "The 'C' parameter of LogisticRegression must be"),
        (dict(tol="fast"), "The 'tol' parameter of LogisticRegression must be"),
    ],
)
def test_logistic_invalid_options(params, message):
    X, y = _scaled_problem(seed=4, n_rows=40)
    with pytest.raises(ValueError, match=message):
        LogisticRegression(**params).fit(X, y)


def test_logistic_tol_zero_runs_to_max_iter():
    X, y = _scaled_problem(seed=5, n_rows=60)
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning):
        est = LogisticRegression(tol=0.0, max_iter=5, dual=True).fit(X, y)
    # tol=0: no stopping rule, the dual's 5 iterations exactly and no switch to the primal
    # Newton solver (-s 0) at the cap
    assert est.n_iter_[0] == 5 and est.model_.results_[0].solver == 7


SVR_CASES = [
    (dict(), 13),
    (dict(loss="squared_epsilon_insensitive", dual=False), 11),
    (dict(loss="squared_epsilon_insensitive", dual=True), 12),
]


def _regression_problem(seed=0, n_rows=200, n_features=15):
    X, _ = make_sparse_problem(n_rows=n_rows, n_features=n_features, seed=seed)
    X = sp.csr_matrix(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    y = X @ rng.normal(size=n_features) + 0.5 + 0.1 * rng.normal(size=n_rows)
    return X, y


@pytest.mark.parametrize(("params", "solver"), SVR_CASES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_svr_primal_matches_sklearn(params, solver, fit_intercept):
    X, y = _regression_problem(seed=6)
    common = dict(C=0.8, epsilon=0.05, tol=1e-8, max_iter=100000, fit_intercept=fit_intercept)
    ours = LinearSVR(random_state=0, **common, **params).fit(X, y)
    ref = SkLinearSVR(random_state=0, **common, **params).fit(X, y)
    assert ours.model_.solver == solver
    squared = solver != 13
    p_ours = _svr_primal(X, y, ours.coef_, ours.intercept_, 0.8, 0.05, fit_intercept, 1.0, squared)
    p_ref = _svr_primal(X, y, ref.coef_, ref.intercept_, 0.8, 0.05, fit_intercept, 1.0, squared)
    assert abs(p_ours - p_ref) <= 1e-4 * p_ref
    np.testing.assert_allclose(ours.objective_, [p_ours], rtol=1e-8)
    assert ours.coef_.shape == ref.coef_.shape == (X.shape[1],)
    assert np.shape(ours.intercept_) == np.shape(ref.intercept_)
    assert isinstance(ours.n_iter_, int)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), abs=1e-3)


@pytest.mark.parametrize(("params", "solver"), SVR_CASES)
def test_svr_equals_train(params, solver):
    X, y = _regression_problem(seed=7)
    est = LinearSVR(C=2.0, epsilon=0.1, intercept_scaling=2.0, random_state=3, **params)
    est.fit(X, y)
    seed = int(np.random.RandomState(3).randint(np.iinfo("i").max))
    model = train(X, y, solver=solver, C=2.0, p=0.1, eps=1e-4, bias=2.0, max_iter=1000, seed=seed)
    np.testing.assert_array_equal(est.coef_, model.coef_[0])
    np.testing.assert_array_equal(est.intercept_, model.intercept_)
    np.testing.assert_allclose(est.predict(X), model.predict(X), rtol=1e-12, atol=1e-12)


def test_svr_invalid_options():
    X, y = _regression_problem(seed=8, n_rows=40)
    with pytest.raises(ValueError, match="are not supported when dual=False"):
        LinearSVR(dual=False).fit(X, y)
    with pytest.raises(ValueError, match="The .epsilon. parameter of LinearSVR must be"):
        LinearSVR(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="The 'loss' parameter of LinearSVR must be"):
        LinearSVR(loss="hinge").fit(X, y)


def test_float32_kept_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _scaled_problem(seed=9)
    X32 = X.astype(np.float32)
    a = LogisticRegression(random_state=0).fit(X32, y)
    b = LogisticRegression(random_state=0).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-3, atol=1e-4)
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(X.shape[1])])
    est = LogisticRegression().fit(frame, y)
    np.testing.assert_array_equal(est.feature_names_in_, frame.columns.to_numpy())
    Xr, yr = _regression_problem(seed=10)
    svr = LinearSVR().fit(pd.DataFrame(Xr.toarray(), columns=list("abcdefghijklmno")), yr)
    assert list(svr.feature_names_in_) == list("abcdefghijklmno")


def test_probabilities_of_a_row_far_from_every_class_follow_predict():
    """Every one-vs-rest sigmoid underflows to 0 there: scikit-learn's normalisation gives a
    uniform row (its argmax classes_[0], not predict's class), LIBLINEAR's 0/0; the limit of
    the normalised sigmoids is the softmax of the decision values."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(random_state=0).fit(X, y)
    away = np.linalg.lstsq(model.coef_, -np.ones(3), rcond=None)[0]
    Z = np.vstack([1000 * away, 3000 * away, X[:20]])
    dec = model.decision_function(Z)
    assert (dec[:2] < -800).all()
    prob = model.predict_proba(Z)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[prob.argmax(axis=1)], model.predict(Z))
    shifted = np.exp(dec[:2] - dec[:2].max(axis=1, keepdims=True))
    np.testing.assert_allclose(prob[:2], shifted / shifted.sum(axis=1, keepdims=True))
    near = 1.0 / (1.0 + np.exp(-dec[2:]))
    np.testing.assert_allclose(prob[2:], near / near.sum(axis=1, keepdims=True), rtol=1e-15)
    assert np.isnan(model.model_.predict_proba(Z[:2])).all()  # (LIBLINEAR's, kept by Model)


def test_parameter_checks_name_the_estimators_parameters():
    """epsilon < 0, inf or NaN was refused at fit by the solver as "p"; n_jobs=0 inside the
    threads' code: scikit-learn's parameter validation names them."""
    from sklearn.utils._param_validation import InvalidParameterError

    X = np.random.default_rng(0).standard_normal((40, 3))
    for epsilon in (-1.0, np.inf, np.nan):
        with pytest.raises(InvalidParameterError, match="'epsilon' parameter of LinearSVR"):
            linsvm.LinearSVR(epsilon=epsilon).fit(X, X[:, 0])
    for estimator in (linsvm.LinearSVC, linsvm.LogisticRegression, linsvm.LinearSVR):
        with pytest.raises(InvalidParameterError, match="'n_jobs' parameter"):
            estimator(n_jobs=0).fit(X, np.where(X[:, 0] > 0, 1, -1))


def test_fitted_weights_are_the_estimators_own():
    """LinearSVR's coef_ was a view of model_'s: a change to it changed model_'s predictions
    (and a model saved from it). A binary classifier's negated zero weights were -0.0."""
    X = np.random.default_rng(1).standard_normal((60, 4))
    svr = linsvm.LinearSVR(random_state=0).fit(X, X[:, 0])
    assert not np.shares_memory(svr.coef_, svr.model_.coef_)
    X[:, 3] = 0.0  # a column of zeros: its weight 0 whatever the sign of the rest
    y = np.where(X[:, 0] > 0, "b", "a")
    svc = linsvm.LinearSVC(fit_intercept=False).fit(X, y)
    assert svc.coef_[0, 3] == 0.0 and not np.signbit(svc.coef_[0, 3])


def test_an_error_in_training_names_the_users_class():
    """train names a sub-problem by its class, which the estimator gives it as an index into
    classes_ ("class 1" for labels "ham"/"spam")."""
    X = np.random.default_rng(2).standard_normal((60, 3))
    y = np.where(X[:, 0] > 0, "spam", "ham")
    with pytest.raises(ValueError, match=r"\(class '(spam|ham)'\): the weights became NaN"):
        linsvm.LogisticRegression(C=1e300, dual=True).fit(X, y)
