"""The degree-2 map and feature hashing: against explicit computations, implicit against
materialised, hashed against exact, the polynomial kernel's expansion, model files, the CLI."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.cli import main
from linsvm.errors import InvalidInputError, ModelFormatError
from linsvm.features import FeatureMap
from linsvm.model_selection import find_parameter_C
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, svm_objectives
from linsvm.training import ConvergenceWarning


def explicit_phi(x: np.ndarray, fmap: FeatureMap) -> np.ndarray:
    """phi(x) written out from its definition, in the exact layout (dense)."""
    n = fmap.n_input
    c_lin, c_sq, c_cross, c_const = fmap.coefficients()
    out = np.zeros(fmap.n_output)
    out[:n] = c_lin * x[:n]
    for k in range(n):
        for j in range(k + 1):
            out[n + k * (k + 1) // 2 + j] = (c_sq if j == k else c_cross) * x[j] * x[k]
    if c_const:
        out[-1] = c_const
    return out


def sparse_problem(n_rows=120, n_features=9, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=seed)
    X.data = rng.uniform(-1, 1, X.data.shape[0])
    # a label that needs products of features: the sign of x0 x1 + x2^2 - 0.1
    dense = X.toarray()
    y = np.where(dense[:, 0] * dense[:, 1] + dense[:, 2] ** 2 - 0.1 > 0, 1, -1)
    y[:2] = [1, -1]
    return X, y


MAPS = [
    FeatureMap(),
    FeatureMap(gamma=0.5, coef0=1.0),
    FeatureMap(gamma=0.25),
    FeatureMap(hash_bits=6),
    FeatureMap(hash_bits=7, gamma=1.0, coef0=2.0),
    FeatureMap(degree=1, hash_bits=3),
]


@settings(deadline=None, max_examples=40)
@given(
    n_rows=st.integers(1, 6),
    n_features=st.integers(1, 7),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 10_000),
    scaled=st.booleans(),
)
def test_exact_map_is_its_definition(n_rows, n_features, density, seed, scaled):
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=seed)
    fmap = FeatureMap(gamma=0.7, coef0=0.3) if scaled else FeatureMap()
    fmap = fmap.bind(n_features)
    Z = fmap.transform(X)
    expected = np.array([explicit_phi(x, fmap) for x in X.toarray()]).reshape(n_rows, -1)
    np.testing.assert_allclose(Z.toarray(), expected, rtol=1e-15, atol=1e-15)
    assert Z.has_sorted_indices and Z.shape == (n_rows, fmap.n_output)
    assert np.all(np.diff(Z.indices[Z.indptr[0] : Z.indptr[1]]) > 0) if n_rows else True


def test_scaled_map_reproduces_the_polynomial_kernel():
    X, _ = sparse_problem()
    for gamma, coef0 in [(0.5, 1.0), (2.0, 0.0), (0.1, 3.0)]:
        fmap = FeatureMap(gamma=gamma, coef0=coef0).bind(X.shape[1])
        Z = fmap.transform(X)
        K = (gamma * (X @ X.T).toarray() + coef0) ** 2
        np.testing.assert_allclose((Z @ Z.T).toarray(), K, rtol=1e-12, atol=1e-12)


def test_hashed_map_adds_the_exact_features_into_signed_columns():
    X, _ = sparse_problem()
    exact = FeatureMap(gamma=1.0, coef0=2.0).bind(X.shape[1])
    hashed = FeatureMap(gamma=1.0, coef0=2.0, hash_bits=7).bind(X.shape[1])
    # column and sign of every exact feature, read off a one-hot row of the exact layout
    Ze, Zh = exact.transform(X).toarray(), hashed.transform(X).toarray()
    distinct, columns = hashed.collisions(X)
    assert distinct == np.count_nonzero(np.any(Ze != 0, axis=0))
    assert 0 < columns <= distinct
    # the hashed row is a signed sum of the exact row's entries: norms of sums of columns
    # that meet cannot be checked one by one, but with no collision Gram matrices agree
    assert Zh.shape[1] == 128 and np.isfinite(Zh).all()
    wide = FeatureMap(gamma=1.0, coef0=2.0, hash_bits=24).bind(X.shape[1])
    d, c = wide.collisions(X)
    assert d == c  # no collision at 2^24 columns for these few features
    Zw = wide.transform(X)
    np.testing.assert_allclose((Zw @ Zw.T).toarray(), Ze @ Ze.T, rtol=1e-12, atol=1e-12)


def test_features_beyond_the_bound_width_are_ignored():
    X, _ = sparse_problem()
    fmap = FeatureMap().bind(5)
    np.testing.assert_array_equal(
        fmap.transform(X).toarray(), fmap.transform(X[:, :5].tocsr()).toarray()
    )


@pytest.mark.parametrize("fmap", MAPS, ids=str)
@pytest.mark.parametrize("solver", [1, 3])
def test_implicit_and_materialised_training_agree(fmap, solver):
    X, y = sparse_problem()
    models = [
        linsvm.train(
            X, y, solver=solver, C=0.5, eps=1e-4, max_iter=5000, bias=1, feature_map=fmap,
            map_mode=m,
        )  # fmt: skip
        for m in ("materialise", "implicit")
    ]
    for m in models:
        assert m.feature_map is not None and m.coef_.shape[1] == m.feature_map.n_output
    a, b = (m.results_[0] for m in models)
    assert a.n_iter == b.n_iter and a.converged and b.converged
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.primal, b.primal, rtol=1e-12)
    assert b.gap >= -1e-9 * abs(b.primal)
    Xt, _ = sparse_problem(seed=1)
    np.testing.assert_allclose(
        models[0].decision_function(Xt), models[1].decision_function(Xt), rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("loss", [LOSS_HINGE, LOSS_SQUARED_HINGE])
def test_objectives_in_chunks_equal_the_materialised_ones(loss, monkeypatch):
    X, y = sparse_problem(n_rows=300)
    fmap = FeatureMap(gamma=0.5, coef0=1.0).bind(X.shape[1])
    Z = fmap.transform(X)
    rng = np.random.default_rng(3)
    w = rng.standard_normal(fmap.n_output + 1)
    alpha = rng.uniform(0, 1, X.shape[0])
    C = np.full(X.shape[0], 1.0)
    yf = y.astype(np.float64)
    whole = svm_objectives(Z, 1.0, yf, C, w, alpha, loss)
    real_chunks = FeatureMap.chunks
    monkeypatch.setattr(FeatureMap, "chunks", lambda self, X: real_chunks(self, X, 500))
    assert len(fmap.chunks(X)) > 3
    chunked = svm_objectives(X, 1.0, yf, C, w, alpha, loss, feature_map=fmap)
    np.testing.assert_allclose(chunked, whole, rtol=1e-12)


def test_hashing_without_collisions_trains_the_exact_model():
    """A collision-free hashed map is a signed permutation of the exact one: the same Gram
    matrix, so the dual path and the decision values are the exact map's."""
    X, y = sparse_problem()
    exact = linsvm.train(X, y, solver=3, eps=1e-8, feature_map=FeatureMap(gamma=1.0, coef0=1.0))
    fmap = FeatureMap(gamma=1.0, coef0=1.0, hash_bits=22)
    assert len(set(fmap.bind(X.shape[1]).collisions(X))) == 1
    hashed = linsvm.train(X, y, solver=3, eps=1e-8, feature_map=fmap)
    np.testing.assert_allclose(hashed.results_[0].alpha, exact.results_[0].alpha, atol=1e-9)
    Xt, _ = sparse_problem(seed=5)
    np.testing.assert_allclose(
        hashed.decision_function(Xt), exact.decision_function(Xt), rtol=1e-8, atol=1e-9
    )


@pytest.mark.parametrize("map_mode", ["implicit", "materialise"])
def test_decision_values_are_the_kernel_expansion(map_mode):
    """w'phi(x) = sum_i alpha_i y_i K(x_i, x) with K = (gamma x_i'x + coef0)^2: the degree-2
    model is the polynomial-kernel SVM's decision function, written out."""
    X, y = sparse_problem()
    gamma, coef0 = 0.5, 1.0
    model = linsvm.train(
        X, y, solver=3, C=2.0, eps=1e-6, feature_map=FeatureMap(gamma=gamma, coef0=coef0),
        map_mode=map_mode,
    )  # fmt: skip
    alpha = model.results_[0].alpha
    y_sign = np.where(y == model.labels_[0], 1.0, -1.0)
    Xt, _ = sparse_problem(n_rows=40, seed=9)
    K = (gamma * (Xt @ X.T).toarray() + coef0) ** 2
    np.testing.assert_allclose(model.decision_function(Xt), K @ (alpha * y_sign), atol=1e-9)


def test_model_file_round_trip_and_liblinear_refuses_it(tmp_path):
    X, y = sparse_problem()
    for fmap in MAPS:
        model = linsvm.train(X, y, solver=1, bias=1, feature_map=fmap)
        path = tmp_path / "m.model"
        model.save(path)
        first = path.read_text().splitlines()[0]
        assert first.startswith("feature_map degree ")
        loaded = linsvm.load_model(path)
        assert loaded.feature_map.header_fields() == model.feature_map.header_fields()
        np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    plain = tmp_path / "plain.model"
    linsvm.train(X, y, solver=1).save(plain)
    assert plain.read_text().startswith("solver_type ")
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    assert liblinear.load_model(str(plain)) is not None
    assert liblinear.load_model(str(path)) is None  # "unknown text in model file"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("degree 2", "degree 3", 1), "degree"),
        (lambda t: t.replace("n_input 9", "n_input 8", 1), "features"),
        (lambda t: t.replace("feature_map degree", "feature_map colour red degree", 1), "colour"),
        (lambda t: t.replace("feature_map degree 2", "feature_map degree", 1), "pairs"),
    ],
)
def test_bad_feature_map_lines_are_refused_in_one_line(tmp_path, edit, message):
    X, y = sparse_problem()
    path = tmp_path / "m.model"
    linsvm.train(X, y, feature_map=FeatureMap(gamma=0.5, coef0=1.0)).save(path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(ModelFormatError, match=message) as info:
        linsvm.load_model(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"degree": 3},
        {"degree": 1},
        {"gamma": -1.0},
        {"gamma": math.nan},
        {"coef0": -0.5},
        {"hash_bits": 0},
        {"hash_bits": 32},
        {"hash_bits": 2.5},
        {"degree": 1, "hash_bits": 4, "gamma": 1.0},
        {"degree": 2.0},  # (its model file would say "degree 2.0", which no reader takes)
        {"degree": True, "hash_bits": 4},
        {"hash_bits": 10, "n_input": 2**32},  # (pair keys hold j + 1 in 32 bits)
    ],
)
def test_bad_maps_are_one_line_errors(kwargs):
    with pytest.raises(InvalidInputError) as info:
        FeatureMap(**kwargs)
    assert "\n" not in str(info.value)


def test_hashed_pairs_of_indices_beyond_32_bits_are_refused_not_merged(tmp_path, capsys):
    """A key packs j + 1 and k + 1 into 32 bits each: at index 2^32 the features x_J, x_0^2,
    x_0 x_J, x_J^2 had one key, one column, and the collision count said none collided."""
    J = 2**32
    X = sp.csr_matrix(([1.0, 1.0], np.array([0, J]), [0, 2]), shape=(1, J + 1))
    with pytest.raises(InvalidInputError, match="at most 4294967295 input features"):
        FeatureMap(hash_bits=20).bind(J + 1)
    with pytest.raises(InvalidInputError, match="at most 4294967295 input features"):
        linsvm.train(sp.vstack([X, X]).tocsr(), [1, -1], feature_map=FeatureMap(hash_bits=8))
    bound = FeatureMap(hash_bits=20).bind(J - 1)  # the widest input a pair key holds
    assert bound.n_input == J - 1
    data = tmp_path / "huge.svm"
    data.write_text(f"+1 1:1 {J + 1}:1\n-1 2:1\n")
    assert main(["train", "--poly2", "--hash-bits", "10", str(data), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip()
    assert "at most 4294967295 input features" in err and "\n" not in err


def test_prediction_on_values_the_map_overflows_is_refused():
    """Training refuses values the map would square past float64; prediction on such finite
    values gave a NaN or infinite decision value and an arbitrary label."""
    X, y = sparse_problem()
    big = X[:3].toarray()
    big[1, 0] = 1e200
    model = linsvm.train(X, y, solver=1, feature_map=FeatureMap())
    estimator = linsvm.LinearSVC(feature_map=FeatureMap()).fit(X, y)
    for predict in (model.predict, model.decision_function, estimator.predict):
        for rows in (big, sp.csr_matrix(big)):
            with pytest.raises(InvalidInputError, match=r"overflow the feature map.*\(row 1\)"):
                predict(rows)
    model.predict(big[[0, 2]])  # (the other rows predict)


def test_too_wide_exact_maps_ask_for_hashing():
    X = sp.csr_matrix((np.ones(2), ([0, 1], [0, 40_000])), shape=(2, 40_001))
    with pytest.raises(InvalidInputError, match="hash"):
        linsvm.train(X, [1, -1], feature_map=FeatureMap())
    model = linsvm.train(X, [1, -1], feature_map=FeatureMap(hash_bits=12))
    assert model.coef_.shape == (1, 4096)


def test_implicit_mode_only_for_solvers_that_have_it():
    X, y = sparse_problem()
    with pytest.raises(InvalidInputError, match="1 and 3"):
        linsvm.train(X, y, solver=2, feature_map=FeatureMap(), map_mode="implicit")
    with pytest.raises(InvalidInputError, match="map_mode"):
        linsvm.train(X, y, feature_map=FeatureMap(), map_mode="lazy")
    for solver in (0, 2, 5, 7, 4):  # "auto" materialises for them
        model = linsvm.train(X, y, solver=solver, feature_map=FeatureMap(gamma=1.0))
        assert model.coef_.shape[1] == model.feature_map.n_output


def test_the_fallback_of_an_implicit_solve_runs_on_the_materialised_rows():
    X, y = sparse_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = linsvm.train(
            X, y, solver=1, C=100.0, max_iter=2, feature_map=FeatureMap(), map_mode="implicit"
        )
    assert model.results_[0].solver == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        materialised = linsvm.train(
            X, y, solver=1, C=100.0, max_iter=2, feature_map=FeatureMap(), map_mode="materialise"
        )
    optimum = linsvm.train(
        X, y, solver=2, C=100.0, eps=1e-8, feature_map=FeatureMap(), map_mode="materialise"
    ).results_[0].primal
    # the same fallback, up to rounding (the dual's w summed in another order); it stops at
    # 0.1x -s 2's default tolerance, near the optimum
    primal = model.results_[0].primal
    np.testing.assert_allclose(primal, materialised.results_[0].primal, rtol=1e-4)
    assert optimum * (1 - 1e-9) <= primal <= optimum * 1.01


def test_threads_cross_validation_and_c_search_take_the_map():
    X, y = sparse_problem(n_rows=200)
    y3 = np.where(X.toarray()[:, 3] > 0.2, 3, y)  # three classes: one-vs-rest
    fmap = FeatureMap(gamma=0.5, coef0=1.0)
    one = linsvm.train(X, y3, solver=3, feature_map=fmap, n_jobs=1)
    two = linsvm.train(X, y3, solver=3, feature_map=fmap, n_jobs=2)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    predicted = linsvm.cross_validation(X, y, 3, solver=1, feature_map=fmap)
    plain = linsvm.cross_validation(X, y, 3, solver=1)
    assert np.mean(predicted == y) > np.mean(plain == y)
    search = find_parameter_C(X, y, solver=2, n_folds=3, verbose=False, feature_map=fmap)
    assert search.path and 0 < search.best_rate <= 1


def test_warm_start_with_a_map():
    X, y = sparse_problem()
    fmap = FeatureMap(gamma=0.5, coef0=1.0)
    small = linsvm.train(X, y, solver=3, C=0.5, eps=1e-5, max_iter=5000, feature_map=fmap)
    warm = linsvm.train(
        X, y, solver=3, C=1.0, eps=1e-5, max_iter=5000, feature_map=fmap, warm_start=small
    )
    cold = linsvm.train(X, y, solver=3, C=1.0, eps=1e-5, max_iter=5000, feature_map=fmap)
    np.testing.assert_allclose(warm.results_[0].primal, cold.results_[0].primal, rtol=1e-5)


def test_cli_train_and_predict_apply_the_map(tmp_path, capsys):
    X, y = sparse_problem()
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    model_path = tmp_path / "m.model"
    out = tmp_path / "out.txt"
    assert main(["train", "-q", "--poly2", "--gamma", "0.5", "--coef0", "1", "-s", "3",
                 str(data), str(model_path)]) == 0  # fmt: skip
    assert main(["predict", "-q", str(data), str(model_path), str(out)]) == 0
    api = linsvm.train(X, y, solver=3, feature_map=FeatureMap(gamma=0.5, coef0=1.0))
    np.testing.assert_array_equal(np.loadtxt(out), api.predict(X))
    capsys.readouterr()
    assert main(["train", "--poly2", "--hash-bits", "5", str(data), str(model_path)]) == 0
    assert "land in a column already taken" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gamma", "1"], "--poly2"),
        (["--poly2", "--map-mode", "implicit", "-s", "2"], "implicit"),
        (["--map-mode", "implicit"], "feature map"),
        (["--poly2", "--map-mode", "lazy"], "--map-mode"),
        (["--poly2", "--hash-bits", "40"], "hash bits"),
        (["--poly2", "--coef0", "-1"], "coef0"),
    ],
)
def test_cli_map_errors_are_one_line(tmp_path, capsys, args, message):
    data = tmp_path / "train.txt"
    data.write_text("1 1:1 2:0.5\n-1 1:-1\n")
    assert main(["train", *args, str(data), str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "m")


def test_auto_mode_materialises_unless_phi_outgrows_the_budget(monkeypatch):
    import linsvm.training as training

    X, y = sparse_problem()
    fmap = FeatureMap(gamma=0.5, coef0=1.0)
    seen = []
    real = training._place_map

    def spy(*args):
        placed = real(*args)
        seen.append(placed[1])
        return placed

    monkeypatch.setattr(training, "_place_map", spy)
    auto = linsvm.train(X, y, solver=3, feature_map=fmap)
    monkeypatch.setattr(training, "materialise_budget", lambda: 0)
    tight = linsvm.train(X, y, solver=3, feature_map=fmap)
    assert seen == [False, True]
    np.testing.assert_allclose(tight.coef_, auto.coef_, rtol=1e-9, atol=1e-12)
    assert fmap.bind(X.shape[1]).nbytes(X) >= fmap.bind(X.shape[1]).transform(X).nnz * 12


def test_estimators_train_and_predict_through_the_map():
    import pickle

    from sklearn.base import clone

    from linsvm import LinearSVC, LinearSVR, LogisticRegression

    X, y = sparse_problem(n_rows=200)
    fmap = FeatureMap(gamma=0.5, coef0=1.0)
    for est in (LinearSVC(feature_map=fmap), LogisticRegression(feature_map=fmap),
                LinearSVC(loss="hinge", feature_map=fmap, map_mode="implicit")):  # fmt: skip
        est.fit(X, y)
        assert est.n_features_in_ == X.shape[1]
        assert est.coef_.shape == (1, est.feature_map_.n_output)
        Z = est.feature_map_.transform(X)
        np.testing.assert_allclose(
            est.decision_function(X), (Z @ est.coef_.T).ravel() + est.intercept_, rtol=1e-12
        )
        np.testing.assert_array_equal(est.predict(X), est.model_.predict(X))
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), est.predict(X))
        assert clone(est).feature_map == fmap
    plain = LinearSVC().fit(X, y).score(X, y)
    assert LinearSVC(feature_map=fmap).fit(X, y).score(X, y) > plain
    target = X.toarray()[:, 0] * X.toarray()[:, 1]
    svr = LinearSVR(feature_map=fmap, epsilon=0.0, tol=1e-6, max_iter=10_000).fit(X, target)
    assert svr.score(X, target) > 0.99


def test_dual_auto_decides_on_the_mapped_width():
    """``dual="auto"`` compares the rows with the columns the solver sees: 200 rows of 9
    features are tall, their 2^10 hashed (or 54 exact degree-2) columns are wide."""
    from linsvm import LinearSVC, LinearSVR

    X, y = sparse_problem(n_rows=200)
    assert LinearSVC(tol="liblinear").fit(X, y).model_.solver == 2  # tall: primal
    hashed = LinearSVC(feature_map=FeatureMap(hash_bits=10), tol="liblinear").fit(X, y)
    assert hashed.model_.solver == 1  # 1024 mapped columns > 200 rows: dual
    exact = LinearSVC(feature_map=FeatureMap(), tol="liblinear").fit(X[:40], y[:40])
    assert exact.model_.solver == 1  # 54 mapped columns > 40 rows
    target = X.toarray()[:, 0]
    svr = dict(loss="squared_epsilon_insensitive", tol="liblinear")
    assert LinearSVR(**svr).fit(X, target).model_.solver == 11
    assert LinearSVR(feature_map=FeatureMap(hash_bits=10), **svr).fit(X, target).model_.solver == 12


def test_collision_estimate_counts_a_share_of_the_columns():
    """The estimate counts the columns c with c mod share == 0 exactly and scales them up:
    whole (share 1) it is ``collisions``; on a sample it lands near the exact counts."""
    rng = np.random.default_rng(4)
    X = sp.random(3000, 2000, density=0.01, format="csr", random_state=rng)
    X.sort_indices()
    fmap = FeatureMap(hash_bits=16).bind(X.shape[1])
    distinct, columns = fmap.collisions(X)
    # entries within max_keys: counted whole
    assert fmap.estimate_collisions(X, max_keys=10**7) == (distinct, columns, 1)
    est_distinct, est_columns, share = fmap.estimate_collisions(X, max_keys=20_000)
    assert share == 16  # 2^16 columns / 16 = the fewest columns a sample keeps (2^12)
    assert est_distinct % share == 0 and est_columns % share == 0
    assert est_distinct == pytest.approx(distinct, rel=0.05)
    assert est_columns == pytest.approx(columns, rel=0.05)
    assert est_distinct - est_columns == pytest.approx(distinct - columns, rel=0.1)
    # exact maps have no collisions to estimate: always counted whole
    exact = FeatureMap().bind(X.shape[1])
    assert exact.estimate_collisions(X[:200], max_keys=10) == (*exact.collisions(X[:200]), 1)


def test_cli_collision_note_says_when_it_is_estimated(tmp_path, capsys, monkeypatch):
    import linsvm.features.maps as maps

    X, y = sparse_problem(n_rows=300, n_features=40, density=0.3)
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    model_path = tmp_path / "m.model"
    assert main(["train", "--poly2", "--hash-bits", "14", str(data), str(model_path)]) == 0
    whole = capsys.readouterr().out
    assert "distinct mapped features land in a column already taken" in whole
    assert "about" not in whole
    monkeypatch.setattr(maps, "COLLISION_SAMPLE_KEYS", 1000)
    assert main(["train", "--poly2", "--hash-bits", "14", str(data), str(model_path)]) == 0
    sampled = capsys.readouterr().out
    assert "(counted on 1/4 of the columns)" in sampled and "; about " in sampled


@pytest.mark.parametrize("map_mode", ["materialise", "implicit"])
def test_values_the_map_would_square_past_the_trainable_are_refused(map_mode):
    """1e100 trains without a map (below 2^500); the degree-2 map squares it past the bound:
    refused in one line (it trained a zero or wrong model), in -v too."""
    X = sp.csr_matrix(np.array([[1e100, 1.0], [1.0, 2.0], [0.5, 0.0], [2.0, 1.0]]))
    y = np.array([1, -1, 1, -1])
    linsvm.train(X, y, solver=2)
    with pytest.raises(InvalidInputError, match=r"\(row 0, column 0\).*feature map squares"):
        linsvm.train(X, y, solver=1, feature_map=FeatureMap(), map_mode=map_mode)
    with pytest.raises(InvalidInputError, match="feature map squares"):
        linsvm.cross_validation(X, y, 2, solver=2, feature_map=FeatureMap())
    linsvm.train(X.multiply(1e-30).tocsr(), y, solver=1, feature_map=FeatureMap(),
                 map_mode=map_mode)  # (1e70 is below the bound)


def test_extreme_gamma_and_coef0_are_one_line_errors_or_train():
    """gamma = 1e-200 or 1e-320 raised OverflowError from the trainable-value check (a bound
    of infinity), gamma = 1.5e308 a math domain error (sqrt(2) gamma infinite, 2 gamma coef0
    NaN), and transform gave NaN columns."""
    X = sp.csr_matrix(np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]]))
    y = np.array([1, -1, 1])
    for gamma, coef0 in ((1e-200, None), (1e-320, 1.0), (1e-300, 1e300)):
        fmap = FeatureMap(gamma=gamma, coef0=coef0)
        assert np.isfinite(fmap.bind(2).transform(X).data).all()
        linsvm.train(X, y, feature_map=fmap, max_iter=5)
    for gamma, coef0 in ((1.5e308, None), (1e308, 1.0)):  # (sqrt(2 gamma coef0) infinite)
        with pytest.raises(linsvm.InvalidInputError, match="gamma 1.*e.308 is too large"):
            FeatureMap(gamma=gamma, coef0=coef0)
    # where 2 gamma coef0 is a normal number, its square root, as maps saved before
    assert FeatureMap(gamma=0.3, coef0=0.7).bind(2).coefficients()[0] == math.sqrt(2 * 0.3 * 0.7)


def test_collisions_are_estimated_on_any_matrix():
    fmap = FeatureMap(hash_bits=6).bind(3)
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    expected = fmap.estimate_collisions(sp.csr_matrix(dense))
    assert fmap.estimate_collisions(dense) == expected
    assert fmap.estimate_collisions(sp.coo_matrix(dense)) == expected


def test_a_map_mode_without_a_map_is_refused():
    """As the command line refuses --map-mode without --poly2 or --hash-bits: train and the
    estimators trained a plain model and said nothing."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(linsvm.InvalidInputError, match="needs a feature_map"):
        linsvm.train(X, y, map_mode="implicit")
    with pytest.raises(ValueError, match="needs a feature_map"):
        linsvm.LinearSVC(map_mode="materialise").fit(X, y)
