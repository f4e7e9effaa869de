"""Hashing of string tokens (linsvm.features.tokens) and the scikit-learn transformers of the
feature maps (linsvm.features.transformers): against a pure-Python reference of the documented
hash, the kernel identity of the degree-2 map, and scikit-learn's estimator checks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import linsvm.parallel  # noqa: E402
from linsvm import train  # noqa: E402
from linsvm.data import as_csr  # noqa: E402
from linsvm.errors import InvalidInputError  # noqa: E402
from linsvm.estimators import LinearSVC  # noqa: E402
from linsvm.features import FeatureMap  # noqa: E402
from linsvm.features._rows import mix64  # noqa: E402
from linsvm.features.tokens import hash_tokens, token_collisions  # noqa: E402
from linsvm.features.transformers import Poly2Features, TokenHasher  # noqa: E402

# -- the reference: the documented hash, one token at a time in plain Python ------------------

_M64 = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & _M64
    return h


def splitmix_finaliser(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def ref_column(token: str, bits: int) -> tuple[int, int]:
    h = splitmix_finaliser(fnv1a64(token.encode("utf-8")))
    return h & ((1 << bits) - 1), (-1 if h >> 63 else 1)


def ref_hash(documents, bits: int, input_type: str = "string") -> np.ndarray:
    out = np.zeros((len(documents), 2**bits))
    for d, doc in enumerate(documents):
        if input_type == "string":
            items = [(t, 1.0) for t in doc]
        elif input_type == "dict":
            items = list(doc.items())
        else:
            items = list(doc)
        for token, value in items:
            col, sign = ref_column(token, bits)
            out[d, col] += sign * value
    return out


def assert_canonical(X: sp.csr_matrix) -> None:
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64
    assert X.has_canonical_format
    assert np.all(X.data != 0.0)
    for i in range(X.shape[0]):
        row = X.indices[X.indptr[i] : X.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)


tokens_st = st.text(
    alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=6
)
# a small vocabulary as well, so that documents repeat tokens and columns collide
small_tokens_st = st.sampled_from(["a", "b", "é", "日本", "", "🙂", "ab", "ba"])
any_token_st = st.one_of(tokens_st, small_tokens_st)
values_st = st.integers(-3, 3).map(float)  # integers: sums exact in any order, zeros cancel


# -- hash_tokens ----------------------------------------------------------------------------


def test_fnv_and_mix_reference_match_published_vectors_and_the_kernel():
    # FNV-1a 64 test vectors (Fowler, Noll, Vo)
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8
    for z in [0, 1, 12345, _M64, 0xAF63DC4C8601EC8C]:
        assert int(mix64(np.uint64(z))) == splitmix_finaliser(z)


def test_hash_is_pinned():
    """A model's hashed columns must not move between versions, processes or machines."""
    tokens = ["", "a", "foobar", "hello", "naïve", "日本語", "🙂"]
    X = hash_tokens([[t] for t in tokens], 20)
    assert X.indices.tolist() == [327472, 754983, 253519, 451840, 870864, 504999, 439343]
    assert X.data.tolist() == [-1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0]


@settings(max_examples=60)
@given(
    docs=st.lists(st.lists(any_token_st, max_size=8), max_size=6),
    bits=st.integers(1, 10),
)
def test_hash_tokens_equals_reference_strings(docs, bits):
    X = hash_tokens(docs, bits)
    assert X.shape == (len(docs), 2**bits)
    assert_canonical(X)
    np.testing.assert_array_equal(X.toarray(), ref_hash(docs, bits))


@settings(max_examples=40)
@given(
    docs=st.lists(st.dictionaries(any_token_st, values_st, max_size=6), max_size=5),
    bits=st.integers(1, 8),
)
def test_hash_tokens_equals_reference_dict_and_pair(docs, bits):
    expected = ref_hash(docs, bits, "dict")
    X = hash_tokens(docs, bits, input_type="dict")
    assert_canonical(X)
    np.testing.assert_array_equal(X.toarray(), expected)
    pairs = [list(d.items()) for d in docs]
    Xp = hash_tokens(pairs, bits, input_type="pair")
    assert_canonical(Xp)
    np.testing.assert_array_equal(Xp.toarray(), expected)


def test_widest_hash_and_long_documents():
    tokens = ["a", "b", "日本語", "", "a"] * 40 + [f"w{i}" for i in range(300)]
    for bits in (31, 20):
        X = hash_tokens([tokens, tokens[::-1]], bits)
        assert X.shape == (2, 2**bits)
        assert_canonical(X)
        expected = {}
        for t in tokens:
            col, sign = ref_column(t, bits)
            expected[col] = expected.get(col, 0.0) + sign
        expected = {c: v for c, v in expected.items() if v != 0.0}
        for row in (X[0], X[1]):
            assert dict(zip(row.indices.tolist(), row.data.tolist(), strict=True)) == expected


def test_documents_may_be_generators_and_tuples():
    docs = [["a", "b"], ("c",), iter(["d", "a"]), set(), "x y".split()]
    plain = [["a", "b"], ["c"], ["d", "a"], [], ["x", "y"]]
    np.testing.assert_array_equal(
        hash_tokens(iter(docs), 6).toarray(), hash_tokens(plain, 6).toarray()
    )
    X = hash_tokens([], 5)
    assert X.shape == (0, 32) and X.nnz == 0
    X = hash_tokens([[], []], 5)
    assert X.shape == (2, 32) and X.nnz == 0


def test_same_tokens_same_columns_across_calls_and_threads(monkeypatch):
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(3000)] + ["ü", "日本", ""]
    docs = [list(rng.choice(vocab, size=rng.integers(0, 40))) for _ in range(500)]
    first = hash_tokens(docs, 12, n_jobs=1)
    again = hash_tokens(docs, 12, n_jobs=1)
    monkeypatch.setattr(linsvm.parallel, "PARALLEL_MIN_NNZ", 1)  # force threads on small data
    threaded = hash_tokens(docs, 12, n_jobs=2)
    for other in (again, threaded):
        np.testing.assert_array_equal(first.indptr, other.indptr)
        np.testing.assert_array_equal(first.indices, other.indices)
        np.testing.assert_array_equal(first.data, other.data)
    # a token's column does not depend on its document or neighbours
    single = hash_tokens([[t] for t in vocab], 12)
    col = dict(zip(vocab, single.indices, strict=True))
    for d, doc in enumerate(docs[:50]):
        assert set(first.indices[first.indptr[d] : first.indptr[d + 1]]) <= {col[t] for t in doc}


def test_values_add_up_on_collision():
    # two distinct tokens in one column, found with the reference
    seen = {}
    pair = None
    for i in range(1000):
        col, sign = ref_column(f"t{i}", 6)
        if col in seen:
            pair = (seen[col], (f"t{i}", sign))
            break
        seen[col] = (f"t{i}", sign)
    (a, sa), (b, sb) = pair
    col = ref_column(a, 6)[0]
    X = hash_tokens([{a: 2.5, b: 0.75}], 6, input_type="dict")
    assert X.nnz == 1 and X.indices[0] == col
    assert X.data[0] == sa * 2.5 + sb * 0.75
    # repeats of one token add up too, and entries that cancel are dropped
    X = hash_tokens([[a, a, a]], 6)
    assert X[0, col] == 3 * sa
    X = hash_tokens([[(a, 1.0), (a, -1.0)]], 6, input_type="pair")
    assert X.nnz == 0


def test_signs_balanced_and_columns_spread():
    tokens = [f"token-{i}" for i in range(20000)]
    X = hash_tokens([tokens], 8)
    signs = np.sign(hash_tokens([[t] for t in tokens], 8).data)
    assert abs(np.mean(signs == 1.0) - 0.5) < 0.02  # 0.02 is > 5 standard deviations
    # 20000 tokens in 256 columns: about 78 a column
    counts = np.bincount(hash_tokens([[t] for t in tokens], 8).indices, minlength=256)
    assert counts.min() > 30 and counts.max() < 130
    assert X.shape == (1, 256)


def test_token_collisions():
    docs = [["a", "b", "a"], [], ["c", "é", "b"], [f"w{i}" for i in range(200)]]
    for bits in (3, 6, 12):
        distinct = {t for doc in docs for t in doc}
        columns = {ref_column(t, bits)[0] for t in distinct}
        assert token_collisions(docs, bits) == (len(distinct), len(columns))
    assert token_collisions([{"a": 1.0, "b": 0.0}], 20, input_type="dict") == (2, 2)


@pytest.mark.parametrize(
    "documents, input_type, message",
    [
        ([["ok", "a\x00b"]], "string", "NUL"),
        ([["ok", 3]], "string", "not str"),
        ([[b"bytes"]], "string", "not str"),
        (["a single text"], "string", "document 0 is a single str"),
        (np.array(["a text", "another"]), "string", "single str"),  # (np.str_ elements)
        ([{"a": 10**400}], "dict", "real numbers"),
        ([{"a": 1.0}, {"b": None}], "dict",
         "document 1, token 0: token values must be real numbers"),
        # (the value at fault named, not token 0; no date, list or complex taken for a number)
        ([[("a", 1.0)], [("b", 2.0), ("c", np.complex128(1j))]], "pair",
         "^document 1, token 1: token values must be real numbers"),
        ([[("a", 1), ("b", np.datetime64("2020-01-02"))]], "pair", "^document 0, token 1: "),
        ([[("a", 1.0), ("b", [1.0])]], "pair", "^document 0, token 1: "),
        ([[("a", 1.0)], [("b", 10**400)]], "pair", "^document 1, token 0: "),
        ([[("a", 1e308), ("a", 1e308)]], "pair", "^document 0: the token values hashed to "),
        ([[{"x": 1, "y": 2}]], "pair", "document 0 is"),
        ([["a"], [np.eye(2)]], "string", "document 1, token 0"),  # (a repr of two lines)
        ({"a": 1.0}, "dict", "a list of one mapping is one document"),
        ("not documents", "string", "iterable of documents"),
        ([["\ud800"]], "string", "UTF-8"),
        ([{"a": float("nan")}], "dict", "not finite"),
        ([{"a": float("inf")}], "dict", "not finite"),
        ([{"a": "1.5"}], "dict", "numbers"),
        ([{3: 1.0}], "dict", "not str"),
        ([["a"]], "dict", "mapping"),
        ([[("a", 1.0, 2.0)]], "pair", "pair"),
        ([[("a", float("nan"))]], "pair", "not finite"),
        ([[1]], "pair", "pairs"),
        ([["a"]], "strings", "input_type"),
    ],
)
def test_errors_are_one_line(documents, input_type, message):
    with pytest.raises(InvalidInputError, match=message) as info:
        hash_tokens(documents, 8, input_type=input_type)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bits", [0, 32, 2.0, True, None])
def test_bad_hash_bits(bits):
    with pytest.raises(InvalidInputError, match="hash bits"):
        hash_tokens([["a"]], bits)


# -- Poly2Features ----------------------------------------------------------------------------


def _sparse(n_rows=40, n_features=7, density=0.4, seed=0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng)
    X.data = rng.normal(size=X.nnz)
    return as_csr(X)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"gamma": 0.3},
        {"coef0": 2.0},
        {"gamma": 0.5, "coef0": 1.0},
        {"hash_bits": 6},
        {"gamma": 0.5, "coef0": 1.0, "hash_bits": 10},
    ],
)
def test_poly2_equals_feature_map(params):
    X = _sparse()
    t = Poly2Features(**params).fit(X)
    Z = t.transform(X)
    expected = FeatureMap(degree=2, **params).bind(X.shape[1]).transform(X)
    assert_canonical(Z)
    assert Z.shape == (X.shape[0], t.n_output_features_) == expected.shape
    np.testing.assert_array_equal(Z.indptr, expected.indptr)
    np.testing.assert_array_equal(Z.indices, expected.indices)
    np.testing.assert_array_equal(Z.data, expected.data)
    assert t.n_features_in_ == X.shape[1]
    assert t.feature_map_ == FeatureMap(degree=2, **params).bind(X.shape[1])
    if "hash_bits" in params:
        assert t.collisions_ == t.feature_map_.collisions(X)  # (few entries: counted exactly)
        distinct, columns = t.collisions_
        assert 0 < columns <= distinct
    else:
        assert t.collisions_ is None
    # dense and float32 input, and n_jobs, give the same map
    np.testing.assert_allclose(t.transform(X.toarray()).toarray(), Z.toarray(), rtol=1e-15)
    Z32 = Poly2Features(**params, n_jobs=2).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float64
    np.testing.assert_allclose(Z32.toarray(), Z.toarray(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("gamma, coef0", [(0.5, 1.0), (2.0, 0.0), (None, 3.0), (0.1, None)])
def test_exact_map_is_the_polynomial_kernel(gamma, coef0):
    X = _sparse(n_rows=30, n_features=6, seed=1)
    Z = Poly2Features(gamma=gamma, coef0=coef0).fit_transform(X)
    g = gamma if gamma is not None else 1.0 / X.shape[1]
    r = coef0 if coef0 is not None else 0.0
    K = (g * (X @ X.T).toarray() + r) ** 2
    np.testing.assert_allclose((Z @ Z.T).toarray(), K, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("params", [{}, {"gamma": 0.5, "coef0": 1.0}])
def test_hashing_without_collisions_keeps_the_gram_matrix(params):
    X = _sparse(n_rows=25, n_features=6, seed=2)
    hashed = Poly2Features(hash_bits=24, **params).fit(X)
    distinct, columns = hashed.collisions_
    assert distinct == columns  # 27-28 features in 2^24 columns: no collision for this seed
    Zh = hashed.transform(X)
    Ze = Poly2Features(**params).fit_transform(X)
    np.testing.assert_allclose((Zh @ Zh.T).toarray(), (Ze @ Ze.T).toarray(), rtol=1e-12)
    # a signed permutation: same multiset of |values| row by row
    for i in range(X.shape[0]):
        np.testing.assert_allclose(
            np.sort(np.abs(Zh[i].data)), np.sort(np.abs(Ze[i].data)), rtol=1e-15
        )


def test_other_width_is_refused():
    X = _sparse(n_features=5)
    t = Poly2Features().fit(X)
    with pytest.raises(ValueError, match="features"):
        t.transform(_sparse(n_features=7))


def test_feature_names():
    X = _sparse(n_rows=10, n_features=3)
    names = Poly2Features().fit(X).get_feature_names_out()
    assert names.tolist() == ["x0", "x1", "x2", "x0^2", "x0 x1", "x1^2", "x0 x2", "x1 x2", "x2^2"]
    names = Poly2Features(coef0=1.0).fit(X).get_feature_names_out(["a", "b", "c"])
    assert names.tolist()[-3:] == ["b c", "c^2", "1"]
    # the names are the layout: column "x0 x2" holds x0 * x2
    t = Poly2Features().fit(X)
    Z = t.transform(X).toarray()
    col = t.get_feature_names_out().tolist().index("x0 x2")
    np.testing.assert_allclose(Z[:, col], X[:, [0]].toarray().ravel() * X[:, [2]].toarray().ravel())
    assert not hasattr(Poly2Features(hash_bits=8), "get_feature_names_out")


def test_bad_parameters_are_refused_at_fit():
    X = _sparse()
    for params in [{"gamma": -1.0}, {"coef0": -1.0}, {"hash_bits": 40}, {"hash_bits": 0},
                   {"gamma": "0.5"}, {"gamma": True}, {"coef0": "abc"}, {"n_jobs": 0}]:
        with pytest.raises(InvalidInputError):
            Poly2Features(**params).fit(X)


@pytest.mark.parametrize("params", [{"hash_bits": 0}, {"hash_bits": 2.0},
                                    {"input_type": "bogus"}, {"input_type": None},
                                    {"n_jobs": 0}])  # fmt: skip
def test_token_hasher_checks_its_parameters_at_fit(params):
    """As FeatureHasher: a bad parameter fails at fit, not at the first transform."""
    with pytest.raises(InvalidInputError):
        TokenHasher(**params).fit([["a"]])


def test_pickle_and_clone():
    X = _sparse()
    for t in [Poly2Features(gamma=0.5, coef0=1.0), Poly2Features(hash_bits=9), TokenHasher(9)]:
        data = [["a", "b"], ["c"]] if isinstance(t, TokenHasher) else X
        fitted = t.fit(data)
        restored = pickle.loads(pickle.dumps(fitted))
        assert (restored.transform(data) != fitted.transform(data)).nnz == 0
        assert clone(t).get_params() == t.get_params()


# -- TokenHasher ------------------------------------------------------------------------------


def test_token_hasher_is_hash_tokens():
    docs = [{"a": 2.0, "é": -1.0}, {}, {"b": 0.5}]
    t = TokenHasher(hash_bits=7, input_type="dict")
    Z = t.transform(docs)  # no fit needed
    assert (Z != hash_tokens(docs, 7, input_type="dict")).nnz == 0
    assert t.fit(docs) is t
    assert t.fit_transform(docs).shape == (3, 128)


# -- with linsvm's estimators --------------------------------------------------------------


def test_poly2_pipeline_beats_linear_on_xor():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 1.0, size=(600, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    X_test = rng.uniform(-1.0, 1.0, size=(600, 2))
    y_test = np.where(X_test[:, 0] * X_test[:, 1] > 0, 1, -1)
    linear = LinearSVC().fit(X, y).score(X_test, y_test)
    for t in [Poly2Features(), Poly2Features(gamma=1.0, coef0=1.0), Poly2Features(hash_bits=12)]:
        poly = make_pipeline(t, LinearSVC(C=10.0)).fit(X, y).score(X_test, y_test)
        assert linear < 0.7
        assert poly > 0.9, (t, poly)


def test_poly2_pipeline_beats_linear_on_circles():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(800, 5))
    y = (np.sum(X**2, axis=1) > 5.0).astype(int)  # a sphere: no linear separator
    Xtr, ytr, Xte, yte = X[:500], y[:500], X[500:], y[500:]
    linear = LinearSVC().fit(Xtr, ytr).score(Xte, yte)
    poly = make_pipeline(Poly2Features(), LinearSVC()).fit(Xtr, ytr).score(Xte, yte)
    assert poly > 0.9 and poly > linear + 0.15, (poly, linear)


@pytest.mark.parametrize("params", [{}, {"gamma": 0.5, "coef0": 1.0, "hash_bits": 12}])
def test_pipeline_equals_a_model_keeping_its_map(params):
    """Poly2Features then training is what train(feature_map=..., map_mode="materialise")
    does: same weights, same decision values (to rounding) on raw rows."""
    X = _sparse(n_rows=120, n_features=6, seed=6)
    y = np.where(np.asarray((X.multiply(X)).sum(axis=1)).ravel() > 1.0, 1, -1)
    t = Poly2Features(**params).fit(X)
    fmap = FeatureMap(degree=2, **params)
    for solver in (1, 2):
        on_phi = train(t.transform(X), y, solver=solver, seed=0)
        keeping = train(X, y, solver=solver, seed=0, feature_map=fmap, map_mode="materialise")
        assert keeping.feature_map == t.feature_map_
        np.testing.assert_array_equal(on_phi.coef_, keeping.coef_)
        # the model maps raw rows on the fly: w'phi(x) summed in another order
        np.testing.assert_allclose(
            on_phi.decision_function(t.transform(X)), keeping.decision_function(X), rtol=1e-12
        )


def test_token_hasher_pipeline():
    rng = np.random.default_rng(5)
    pos = [f"good{i}" for i in range(20)]
    neg = [f"bad{i}" for i in range(20)]
    common = [f"the{i}" for i in range(50)]
    docs, y = [], []
    for _ in range(300):
        label = int(rng.integers(2))
        words = list(rng.choice(pos if label else neg, size=3)) + list(rng.choice(common, 8))
        docs.append(words)
        y.append(label)
    model = make_pipeline(TokenHasher(hash_bits=12), LinearSVC()).fit(docs[:200], y[:200])
    assert model.score(docs[200:], y[200:]) > 0.95


# -- scikit-learn's contract --------------------------------------------------------------


@parametrize_with_checks(
    [
        Poly2Features(),
        Poly2Features(gamma=0.5, coef0=1.0),
        Poly2Features(hash_bits=8),
        TokenHasher(),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_poly2_collisions_are_estimated_on_many_entries(monkeypatch):
    """fit counted the collisions exactly, a sort of every mapped key: seven times the cost of
    transform on 20,000 x 1,000 rows at 4%. Beyond a sample's worth of entries it estimates
    them, as the command line does."""
    import linsvm.features.maps as maps

    monkeypatch.setattr(maps, "COLLISION_SAMPLE_KEYS", 64)
    X = _sparse(n_rows=200, n_features=30, density=0.3)
    t = Poly2Features(hash_bits=20).fit(X)
    distinct, columns, share = t.feature_map_.estimate_collisions(X)
    assert share > 1 and t.collisions_ == (distinct, columns)


def test_token_values_numpy_can_convert_that_are_real_numbers():
    """NumPy booleans and Decimals among other values are numbers (the first was refused as
    "got True" once real numbers were checked one by one)."""
    from decimal import Decimal

    out = hash_tokens([[("a", np.bool_(True)), ("b", 10**30), ("c", Decimal("1.5"))]], 8,
                      input_type="pair")  # fmt: skip
    np.testing.assert_array_equal(np.sort(np.abs(out.data)), [1.0, 1.5, 1e30])


def test_token_values_of_mixed_kinds_and_the_bad_one_named():
    """Mixed kinds of real numbers (converted by C-level loops, not a value at a time) give
    float() of each; an int beyond float64 or a signalling-NaN Decimal among them is named by
    its document and token, in one line."""
    from decimal import Decimal

    values = [3, Decimal("0.25"), 2.5, np.float32(0.5), True, Decimal("1e-3")] * 50
    docs = [{f"t{i}": v} for i, v in enumerate(values)]
    out = hash_tokens(docs, 20, input_type="dict")
    np.testing.assert_array_equal(np.abs(out.toarray()).sum(axis=1),
                                  [float(v) for v in values])  # fmt: skip
    for bad in (10**400, Decimal("sNaN"), "7"):
        with pytest.raises(InvalidInputError, match=r"^document 3.*must be real numbers") as info:
            hash_tokens(docs[:3] + [{"x": bad}], 20, input_type="dict")
        assert "\n" not in str(info.value)
