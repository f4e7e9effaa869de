"""Model files in LIBLINEAR's text format: exchange with liblinear-official both ways.

LIBLINEAR 2.50's rules (linear.cpp ``save_model`` / ``load_model`` / ``predict_values``):
values written ``%.17g``; ``nr_w = 1`` for two classes except Crammer-Singer, else nr_class;
line j holds feature j's weight of each weight vector; for two classes the prediction is
``dec[0] > 0 ? label[0] : label[1]`` (Crammer-Singer included), otherwise the first label of
largest decision value; test features beyond ``nr_feature`` are ignored.
"""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import liblinear_predict, liblinear_weights, make_sparse_problem
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm import Model, ModelFormatError
from linsvm.model import format_model, parse_model

ll = pytest.importorskip("liblinear.liblinearutil")


def _ll_train(y, X, options: str, bias: float = -1.0):
    """liblinear-official model (quiet); bias through -B as its train() expects."""
    X = sp.csr_matrix(X, dtype=np.float64)
    return ll.train(
        ll.problem(np.asarray(y, dtype=np.float64), X), ll.parameter(f"{options} -B {bias:g} -q")
    )


def _ll_save(model, path) -> str:
    ll.save_model(os.fspath(path), model)
    return open(path, encoding="ascii").read()


def _ll_load(path):
    model = ll.load_model(os.fspath(path))
    assert model is not None, f"LIBLINEAR could not load {path}"
    return model


def _problem(n_classes: int, seed: int = 0, **kw):
    """A generated problem without empty rows (so no decision value is exactly 0)."""
    X, y = make_sparse_problem(
        n_rows=150, n_features=20, n_classes=n_classes, seed=seed, density=0.3, **kw
    )
    nnz = np.diff(X.indptr)
    keep = nnz > 0
    return sp.csr_matrix(X[keep]), y[keep]


def _assert_same_predictions(model: Model, ll_model, X):
    ll_pred, ll_dec = liblinear_predict(ll_model, X, native=True)
    np.testing.assert_array_equal(np.asarray(model.predict(X), dtype=np.float64), ll_pred)
    # LIBLINEAR's binding returns one value per row for two classes even for Crammer-Singer:
    # compare all weight vectors through its weights, and the first through predict itself
    dec = model.decision_function(X).reshape(X.shape[0], -1)
    np.testing.assert_allclose(dec[:, : ll_dec.shape[1]], ll_dec, rtol=1e-12, atol=1e-12)
    _, ll_dec_all = liblinear_predict(ll_model, X, native=False)
    np.testing.assert_allclose(dec, ll_dec_all, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- linsvm -> LIBLINEAR


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0, 0.5])
@pytest.mark.parametrize("n_classes, labels", [(2, None), (2, [3, -8]), (3, [4, 0, -2])])
def test_saved_by_linsvm_loads_in_liblinear(tmp_path, solver, bias, n_classes, labels):
    X, y = _problem(n_classes, seed=n_classes, labels=labels)
    model = linsvm.train(X, y, solver=solver, C=0.5, bias=bias)
    path = tmp_path / "linsvm.model"
    model.save(path)
    ll_model = _ll_load(path)
    assert ll_model.get_labels() == [int(v) for v in model.labels_]
    assert ll_model.nr_feature == X.shape[1]
    assert ll_model.bias == bias
    assert ll_model.param.solver_type == solver
    W = liblinear_weights(ll_model)
    np.testing.assert_array_equal(W[:, : X.shape[1]], model.coef_)  # %.17g: the same bits
    if bias >= 0:
        np.testing.assert_array_equal(W[:, -1], model.bias_weights_)
    _assert_same_predictions(model, ll_model, X)
    # and the file is the one LIBLINEAR itself would write for that model
    assert _ll_save(ll_model, tmp_path / "resaved.model") == path.read_text()


# ----------------------------------------------------------------------------- LIBLINEAR -> linsvm


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_saved_by_liblinear_loads_in_linsvm(tmp_path, solver, bias, n_classes):
    X, y = _problem(n_classes, seed=10 + n_classes)
    ll_model = _ll_train(y, X, f"-s {solver} -c 0.5", bias)
    path = tmp_path / "liblinear.model"
    text = _ll_save(ll_model, path)
    model = linsvm.load_model(path)
    assert model.solver == solver
    assert list(model.labels_) == ll_model.get_labels()
    assert model.bias == bias and model.n_features == X.shape[1]
    assert model.results_ == []
    _assert_same_predictions(model, ll_model, X)
    # written back by linsvm: byte for byte LIBLINEAR's file
    model.save(tmp_path / "again.model")
    assert (tmp_path / "again.model").read_text() == text
    assert format_model(model) == text


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_shared_data_model_exchange(tmp_path, load_shared, bias):
    """heart_scale (and its own rows as test data) both ways, with LIBLINEAR's labels +1/-1."""
    X, y = load_shared("heart_scale")
    model = linsvm.train(X, y, solver=1, C=1.0, bias=bias)
    model.save(tmp_path / "m")
    _assert_same_predictions(model, _ll_load(tmp_path / "m"), X)
    ll_model = _ll_train(y, X, "-s 3 -c 0.1", bias)
    _ll_save(ll_model, tmp_path / "l")
    _assert_same_predictions(linsvm.load_model(tmp_path / "l"), ll_model, X)


# ----------------------------------------------------------------------------- round trip


def test_round_trip_identical_bits(tmp_path):
    rng = np.random.default_rng(0)
    coef = rng.normal(size=(3, 7)) * 10.0 ** rng.integers(-300, 300, size=(3, 7))
    coef[0, :4] = [0.0, -0.0, 5e-324, -1.7976931348623157e308]
    coef[1, 0] = 0.1 + 0.2  # needs all 17 digits
    model = Model(3, np.array([2, -5, 11]), coef, 0.75, np.array([1e-310, -3.5, 1 / 3]))
    model.save(tmp_path / "m")
    back = linsvm.load_model(tmp_path / "m")
    assert back.solver == 3 and back.bias == 0.75
    np.testing.assert_array_equal(back.labels_, [2, -5, 11])
    assert back.coef_.view(np.int64).tolist() == model.coef_.view(np.int64).tolist()
    assert back.bias_weights_.view(np.int64).tolist() == model.bias_weights_.view(np.int64).tolist()
    back.save(tmp_path / "m2")
    assert (tmp_path / "m").read_bytes() == (tmp_path / "m2").read_bytes()


@settings(deadline=None, max_examples=60)
@given(
    coef=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=12),
    n_w=st.sampled_from([1, 3]),
    bias=st.sampled_from([-1.0, 0.0, 1.0, 2.5]),
    solver=st.sampled_from([1, 3]),
)
def test_round_trip_any_finite_weights(coef, n_w, bias, solver):
    coef = np.array(coef * n_w).reshape(n_w, -1)
    labels = np.array([1, -1]) if n_w == 1 else np.arange(n_w) * 7 - 3
    bw = coef[:, 0] * -1.0 if bias >= 0 else None
    model = Model(solver, labels, coef, bias, bw)
    back = parse_model(format_model(model))
    assert back.coef_.tobytes() == model.coef_.tobytes()
    assert back.bias_weights_.tobytes() == model.bias_weights_.tobytes()
    assert back.bias == bias and back.solver == solver
    np.testing.assert_array_equal(back.labels_, labels)


def test_round_trip_trained_model_predicts_the_same(tmp_path):
    X, y = _problem(3, seed=4, labels=[1, 2, 3])
    model = linsvm.train(X, y, solver=3, C=0.5, bias=1.0)
    model.save(tmp_path / "m")
    back = linsvm.load_model(tmp_path / "m")
    np.testing.assert_array_equal(back.coef_, model.coef_)
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))


# ----------------------------------------------------------------------------- atomic write


def test_atomic_write_leaves_only_the_target(tmp_path):
    X, y = _problem(2)
    model = linsvm.train(X, y)
    target = tmp_path / "model.txt"
    model.save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.txt"]
    first = target.read_text()
    other = linsvm.train(X, y, C=0.01)
    other.save(str(target))  # str paths too; replaces the file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.txt"]
    assert target.read_text() != first
    assert target.read_text() == format_model(other)


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    X, y = _problem(2)
    model = linsvm.train(X, y)
    target = tmp_path / "model.txt"
    target.write_text("old content\n")

    def broken_replace(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="simulated"):
        model.save(target)
    monkeypatch.undo()
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.txt"]


def test_saved_file_permissions_follow_umask(tmp_path):
    """As LIBLINEAR's fopen: 0666 & ~umask (a mkstemp temp file would leave 0600)."""
    X, y = _problem(2)
    model = linsvm.train(X, y)
    umask = os.umask(0)
    os.umask(umask)
    model.save(tmp_path / "new.model")
    assert stat.S_IMODE(os.stat(tmp_path / "new.model").st_mode) == 0o666 & ~umask
    existing = tmp_path / "existing.model"
    existing.write_text("x")
    os.chmod(existing, 0o644)
    model.save(existing)
    assert stat.S_IMODE(os.stat(existing).st_mode) == 0o644


# ----------------------------------------------------------------------------- malformed files

# LIBLINEAR writes every weight followed by a blank ("%.17g ")
GOOD = (
    "solver_type L2R_L2LOSS_SVC_DUAL\n"
    "nr_class 2\n"
    "label 1 -1\n"
    "nr_feature 3\n"
    "bias 1\n"
    "w\n"
    "0.5 \n"
    "-0.25 \n"
    "1e-3 \n"
    "2 \n"
)

MALFORMED = {
    "unknown solver": GOOD.replace("L2R_L2LOSS_SVC_DUAL", "L2R_MAGIC_SVC"),
    "missing solver_type": GOOD.replace("solver_type L2R_L2LOSS_SVC_DUAL\n", ""),
    "missing nr_class": GOOD.replace("nr_class 2\n", "").replace("label 1 -1\n", ""),
    "missing nr_feature": GOOD.replace("nr_feature 3\n", ""),
    "missing bias": GOOD.replace("bias 1\n", ""),
    "missing labels": GOOD.replace("label 1 -1\n", ""),
    "missing w": GOOD.replace("w\n", ""),
    "too few weights": GOOD.replace("2 \n", ""),
    "too many weights": GOOD + "7 \n",
    "weights of a model without bias": GOOD.replace("bias 1", "bias -1"),
    "non-number weight": GOOD.replace("-0.25", "abc"),
    "weight with an underscore": GOOD.replace("-0.25", "-0_25"),  # (Python's, not C's)
    "weight with other digits": GOOD.replace("-0.25", "-0.\u0662\u0665"),
    "cut inside the last weight": GOOD.replace("2 \n", "2"),
    "nan weight": GOOD.replace("-0.25", "nan"),
    "non-number nr_feature": GOOD.replace("nr_feature 3", "nr_feature three"),
    "non-number bias": GOOD.replace("bias 1", "bias one"),
    "non-integer label": GOOD.replace("label 1 -1", "label 1 x"),
    "fewer labels than nr_class": GOOD.replace("nr_class 2", "nr_class 3"),
    "unknown header key": GOOD.replace("bias 1\n", "bias 1\nfoo 3\n"),
    "negative nr_feature": GOOD.replace("nr_feature 3", "nr_feature -3"),
    "truncated header": "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1",
    "odd feature_map line": "feature_map gamma 0.5 coef0\n" + GOOD,
    # (Python's number syntax, which LIBLINEAR refuses: "1_0" read as 10)
    "bias with an underscore": GOOD.replace("bias 1", "bias 1_0"),
    "feature_map key given twice": "feature_map degree 2 n_input 3 n_input 2\n" + GOOD,
    "feature_map width with an underscore": "feature_map degree 2 n_input 2_0\n" + GOOD,
    # (more weights than the text can hold: refused before a 640 GiB array is asked for)
    "header asking for 2^31 x 40 weights": (
        "solver_type MCSVM_CS\nnr_class 40\nlabel " + " ".join(map(str, range(1, 41)))
        + "\nnr_feature 2147483647\nbias -1\nw\n0.5 \n"),
    "empty file": "",
}


def test_good_file_parses(tmp_path):
    path = tmp_path / "good.model"
    path.write_text(GOOD)
    model = linsvm.load_model(path)
    np.testing.assert_array_equal(model.coef_, [[0.5, -0.25, 1e-3]])
    np.testing.assert_array_equal(model.bias_weights_, [2.0])
    # LIBLINEAR agrees on what it means
    ll_model = _ll_load(path)
    X = sp.csr_matrix(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, -1.0], [-4.0, 0.0, 0.0]]))
    _assert_same_predictions(model, ll_model, X)


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_malformed_file_raises_model_format_error(tmp_path, what):
    path = tmp_path / f"bad-{what.replace(' ', '_')}.model"
    path.write_text(MALFORMED[what])
    with pytest.raises(ModelFormatError) as err:
        linsvm.load_model(path)
    assert str(path) in str(err.value), f"the message must name the file: {err.value}"


# the line a malformed file's error names, where one word is at fault
FAULT_LINES = {
    "unknown solver": 1, "non-number weight": 8, "weight with an underscore": 8, "nan weight": 8,
    "non-number nr_feature": 4, "non-number bias": 5, "non-integer label": 3,
    "unknown header key": 6, "negative nr_feature": 4, "odd feature_map line": 1,
    "bias with an underscore": 5, "feature_map key given twice": 1,
}


@pytest.mark.parametrize("what", sorted(FAULT_LINES))
def test_a_malformed_word_is_named_with_its_line(tmp_path, what):
    """As data files' errors: "file:line: what" (they named the file only)."""
    path = tmp_path / "bad.model"
    path.write_text(MALFORMED[what])
    with pytest.raises(ModelFormatError, match=f"^{path}:{FAULT_LINES[what]}: "):
        linsvm.load_model(path)
    # (CRLF line ends: the same lines)
    import linsvm.io.model_file as model_file

    with pytest.raises(ModelFormatError, match=f"^x:{FAULT_LINES[what]}: "):
        model_file.parse_model_text(MALFORMED[what].replace("\n", "\r\n"), "x")


@pytest.mark.parametrize("compiled", [False, True])
def test_weights_are_read_a_piece_at_a_time(monkeypatch, compiled):
    """Pieces cut anywhere (here a few bytes each) give the weights of the whole, read by
    Python (small models) or by the compiled reader."""
    import linsvm.io.model_file as model_file

    if compiled:
        monkeypatch.setattr(model_file, "PYTHON_PARSE_MAX_WEIGHTS", -1)
    text = MALFORMED["too many weights"].replace("nr_feature 3", "nr_feature 4")
    whole = model_file.parse_model_text(text)
    for size in (1, 3, 7):
        monkeypatch.setattr(model_file, "WEIGHT_PIECE_BYTES", size)
        fields = model_file.parse_model_text(text)
        np.testing.assert_array_equal(fields.coef, [[0.5, -0.25, 1e-3, 2.0]])
        np.testing.assert_array_equal(fields.coef, whole.coef)
        with pytest.raises(ModelFormatError, match="expected 5 weights .*, found 4"):
            model_file.parse_model_text(GOOD.replace("nr_feature 3", "nr_feature 4"))
        with pytest.raises(ModelFormatError, match="^<model>:8: bad weight 'abc'"):
            model_file.parse_model_text(MALFORMED["non-number weight"])


# Words as a model file's weights might hold them, good (mostly) and bad, and C's blanks
_WEIGHT_WORDS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.17g}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.17g}"),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["0", "-0", "+1", "1.", ".5", "1e5", "1E-5", "2.4703282292062327e-324",
                     "1e-400", "1e400", "nan", "-inf", "Infinity", "0x1p3", "1_0", "abc", "--1",
                     "1e", ".", "1.5.5", "9" * 30, "0." + "0" * 25 + "1" * 25, "\u0662"]),
)  # fmt: skip
_BLANK_RUNS = st.text(alphabet=" \t\n\r\v\f", min_size=1, max_size=3)


@settings(deadline=None, max_examples=150)
@given(
    n_features=st.integers(0, 7),
    n_classes=st.sampled_from([2, 3]),
    bias=st.sampled_from([-1, 1]),
    piece=st.sampled_from([1, 2, 5, 1 << 22]),
    data=st.data(),
)
def test_the_compiled_reader_reads_as_python_does(n_features, n_classes, bias, piece, data):
    """The compiled reader of large models' weights and Python's reader of small ones take
    the same words, put them in the same places with the same bits, and refuse the same
    files with the same message."""
    import linsvm.io.model_file as model_file

    expected = (n_features + (bias > 0)) * (n_classes if n_classes > 2 else 1)
    # (mostly as many words as the header asks for, so that most files are whole)
    n_words = data.draw(st.one_of(st.just(expected), st.integers(0, 24)))
    words = data.draw(st.lists(st.tuples(_WEIGHT_WORDS, _BLANK_RUNS), min_size=n_words,
                               max_size=n_words))  # fmt: skip

    labels = " ".join(map(str, range(n_classes)))
    header = (f"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class {n_classes}\nlabel {labels}\n"
              f"nr_feature {n_features}\nbias {bias}\nw\n")  # fmt: skip
    text = header + "".join(word + blank for word, blank in words)
    outcomes = []
    for python_max in (1 << 16, -1):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(model_file, "PYTHON_PARSE_MAX_WEIGHTS", python_max)
            patch.setattr(model_file, "WEIGHT_PIECE_BYTES", piece)
            try:
                fields = model_file.parse_model_text(text, "m")
                outcomes.append((fields.coef.tobytes(), fields.coef.shape,
                                 None if bias < 0 else fields.bias_weights.tobytes()))  # fmt: skip
            except ModelFormatError as exc:
                outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_a_large_file_is_read_in_pieces(tmp_path, monkeypatch):
    """A header longer than the first piece read, a word longer than a weights' piece, a
    number whose rounding is left to float(), and a model file read from a pipe."""
    import linsvm.io.model_file as model_file

    monkeypatch.setattr(model_file, "HEADER_PIECE_BYTES", 8)
    monkeypatch.setattr(model_file, "WEIGHT_PIECE_BYTES", 4)
    monkeypatch.setattr(model_file, "PYTHON_PARSE_MAX_WEIGHTS", -1)
    labels = list(range(1, 41))
    rng = np.random.default_rng(3)
    coef = rng.normal(size=(40, 3)) * 10.0 ** rng.integers(-300, 300, size=(40, 3))
    coef[0, 0] = 5e-324  # (subnormal: float() decides its rounding)
    model = Model(4, np.array(labels), coef, -1.0, None)
    path = tmp_path / "m"
    model.save(path)
    back = linsvm.load_model(path)
    assert back.coef_.tobytes() == coef.tobytes()
    # (a weight of 30 digits, beyond a piece of 4 bytes and 19 significant digits)
    long_weight = "1." + "0" * 28 + "1"
    path.write_text(GOOD.replace("-0.25", long_weight))
    assert linsvm.load_model(path).coef_[0, 1] == float(long_weight)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = __import__("threading").Thread(target=lambda: fifo.write_text(GOOD))
    writer.start()
    try:
        np.testing.assert_array_equal(linsvm.load_model(fifo).coef_, [[0.5, -0.25, 1e-3]])
    finally:
        writer.join()


def test_binary_file_raises_model_format_error(tmp_path):
    path = tmp_path / "binary.model"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(ModelFormatError, match="binary.model"):
        linsvm.load_model(path)


def test_crlf_and_extra_blanks_are_accepted(tmp_path):
    path = tmp_path / "crlf.model"
    path.write_bytes(GOOD.replace("\n", "\r\n").replace(" \r\n", "  \t\r\n").encode())
    model = linsvm.load_model(path)
    np.testing.assert_array_equal(model.coef_, [[0.5, -0.25, 1e-3]])


def test_a_width_beyond_a_c_int_cannot_be_saved(tmp_path, capsys):
    """nr_feature is a C int: the writer refuses a wider model, and the command line refuses
    such an index before training."""
    from linsvm.cli import main
    from linsvm.io.model_file import MAX_NR_FEATURE, ModelFields, write_model_file

    wide = ModelFields(solver=1, labels=np.array([1, -1]), bias=-1.0, bias_weights=None,
                       rho=0.0, feature_map=None,
                       coef=np.broadcast_to(0.0, (1, MAX_NR_FEATURE)))  # (no memory)  # fmt: skip
    with pytest.raises(ModelFormatError, match="at most 2147483647"):
        write_model_file(tmp_path / "wide.model", wide)
    data = tmp_path / "wide.txt"
    data.write_text(f"1 {MAX_NR_FEATURE}:1\n-1 2:1\n")
    assert main(["train", str(data), str(tmp_path / "m")]) == 1
    assert capsys.readouterr().err == (
        f"linsvm train: error: {data}: feature index {MAX_NR_FEATURE}: LIBLINEAR's model files "
        "hold at most 2147483647 features (nr_feature is a C int)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wide.txt"]


@pytest.mark.parametrize("labels", [[0.5, 1.5], ["spam", "ham"], [1, 2**40]])
def test_non_integer_labels_cannot_be_saved(tmp_path, labels):
    X, y = _problem(2, seed=3)
    y_named = np.where(y > 0, labels[0], labels[1])
    model = linsvm.train(X, y_named, C=0.5)
    target = tmp_path / "model.txt"
    with pytest.raises(ModelFormatError):
        model.save(target)
    assert list(tmp_path.iterdir()) == [], "nothing (not even a temp file) may be left"


def test_integer_valued_float_labels_are_saved_as_integers(tmp_path):
    X, y = _problem(3, seed=3, labels=[1.0, 2.0, 30.0])
    model = linsvm.train(X, y, C=0.5)
    model.save(tmp_path / "m")
    assert (
        "\nlabel " + " ".join(str(int(v)) for v in model.labels_) + "\n"
        in (tmp_path / "m").read_text()
    )


# ----------------------------------------------------------------------------- test data width


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_prediction_with_more_and_fewer_features(tmp_path, bias, n_classes):
    X, y = _problem(n_classes, seed=20)
    model = linsvm.train(X, y, C=0.5, bias=bias)
    model.save(tmp_path / "m")
    ll_model = _ll_load(tmp_path / "m")
    rng = np.random.default_rng(1)
    # wider: 5 extra columns with values (LIBLINEAR ignores indices beyond nr_feature)
    extra = sp.random(
        X.shape[0],
        5,
        density=0.5,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.uniform(1.0, 2.0, k),
    )
    wide = sp.hstack([X, extra], format="csr")
    _assert_same_predictions(model, ll_model, wide)
    np.testing.assert_array_equal(model.decision_function(wide), model.decision_function(X))
    np.testing.assert_array_equal(model.predict(wide.toarray()), model.predict(X))
    # narrower: the trailing features are absent (zeros)
    narrow = sp.csr_matrix(X[:, :12])
    _assert_same_predictions(model, ll_model, narrow)
    zeroed = sp.hstack([narrow, sp.csr_matrix((X.shape[0], X.shape[1] - 12))], format="csr")
    np.testing.assert_allclose(
        model.decision_function(narrow), model.decision_function(zeroed), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        model.decision_function(narrow.toarray()),
        model.decision_function(zeroed),
        rtol=1e-12,
        atol=1e-12,
    )


def test_a9a_test_split_has_fewer_features(load_shared, tmp_path):
    X, y = load_shared("a9a")
    X_test, _ = load_shared("a9a.t")
    assert X_test.shape[1] < X.shape[1]
    model = linsvm.train(X, y, C=0.1, bias=1.0)
    model.save(tmp_path / "m")
    sample = X_test[:2000]
    _assert_same_predictions(model, _ll_load(tmp_path / "m"), sample)


# ----------------------------------------------------------------------------- other solvers

OTHER_SOLVERS = [
    # (-s, classes or "regression"/"oneclass", bias)
    (0, 2, -1.0),
    (0, 3, 1.0),
    (2, 2, 1.0),
    (4, 2, -1.0),  # Crammer-Singer keeps two weight vectors for two classes
    (4, 2, 1.0),
    (4, 3, -1.0),
    (5, 2, -1.0),
    (6, 3, 1.0),
    (7, 2, 1.0),
    (11, "regression", 1.0),
    (12, "regression", -1.0),
    (13, "regression", -1.0),
    (21, "oneclass", -1.0),  # LIBLINEAR rejects a bias for one-class
]


@pytest.mark.parametrize("solver, kind, bias", OTHER_SOLVERS)
def test_models_of_other_solvers_load_and_predict_like_liblinear(tmp_path, solver, kind, bias):
    n_classes = kind if isinstance(kind, int) else 2
    X, y = _problem(n_classes, seed=30 + solver)
    if kind == "regression":
        y = X @ np.linspace(-1.0, 2.0, X.shape[1]) + 0.3
    ll_model = _ll_train(y, X, f"-s {solver} -c 0.5", bias)
    path = tmp_path / f"s{solver}.model"
    text = _ll_save(ll_model, path)
    model = linsvm.load_model(path)
    assert model.solver == solver
    n_w = 1 if n_classes == 2 and solver != 4 else n_classes
    assert model.coef_.shape == (n_w, X.shape[1])
    if kind == "oneclass":
        assert model.rho == ll_model.rho
        assert model.kind == "oneclass"
    ll_pred, ll_dec = liblinear_predict(ll_model, X, native=True)
    pred = np.asarray(model.predict(X), dtype=np.float64)
    if kind == "regression":
        np.testing.assert_allclose(pred, ll_pred, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(pred, ll_pred)
    dec = model.decision_function(X).reshape(X.shape[0], -1)
    np.testing.assert_allclose(dec[:, : ll_dec.shape[1]], ll_dec, rtol=1e-12, atol=1e-12)
    # get_decfun is LIBLINEAR's own view of the loaded weights
    for k in range(n_w):
        w, b = ll_model.get_decfun(k)
        np.testing.assert_array_equal(model.coef_[k], w)
        expected_b = -model.rho if kind == "oneclass" else model.intercept_[k]
        assert b == pytest.approx(expected_b, abs=0, rel=1e-15)
    assert format_model(model) == text


def test_two_class_crammer_singer_prediction_rule(tmp_path):
    """Two classes: dec[0] > 0 ? label[0] : label[1], even with two weight vectors."""
    path = tmp_path / "cs.model"
    # hand-made: w_1 is not -w_0 (allowed by the format), and one row has no features
    path.write_text(
        "solver_type MCSVM_CS\nnr_class 2\nlabel 5 9\nnr_feature 2\nbias -1\nw\n1 3 \n0.5 0.5 \n"
    )
    model = linsvm.load_model(path)
    ll_model = _ll_load(path)
    X = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]))
    ll_pred, _ = liblinear_predict(ll_model, X, native=True)
    np.testing.assert_array_equal(ll_pred, [9, 5, 9, 5])
    np.testing.assert_array_equal(model.predict(X), ll_pred)


def test_single_class_liblinear_model(tmp_path):
    """LIBLINEAR trains on one class (nr_class 1, one weight vector): always label[0]."""
    X, _ = _problem(2, seed=5)
    y = np.full(X.shape[0], 7.0)
    ll_model = _ll_train(y, X, "-s 1", -1.0)
    text = _ll_save(ll_model, tmp_path / "one.model")
    assert "nr_class 1\nlabel 7\n" in text
    model = linsvm.load_model(tmp_path / "one.model")
    ll_pred, _ = liblinear_predict(ll_model, X, native=True)
    np.testing.assert_array_equal(model.predict(X), ll_pred)


def test_single_class_logistic_model_gives_probability_one(tmp_path):
    """LIBLINEAR's predict_probability normalises the one class's sigmoid: 1 for every row."""
    ll = pytest.importorskip("liblinear.liblinearutil")
    X, _ = _problem(2, seed=5)
    y = np.full(X.shape[0], 7.0)
    _ll_save(_ll_train(y, X, "-s 0", -1.0), tmp_path / "one.model")
    model = linsvm.load_model(tmp_path / "one.model")
    _, _, ll_prob = ll.predict(np.zeros(X.shape[0]), sp.csr_matrix(X),
                               ll.load_model(str(tmp_path / "one.model")), "-b 1 -q")  # fmt: skip
    np.testing.assert_array_equal(model.predict_proba(X), ll_prob)
    np.testing.assert_array_equal(model.predict_proba(X), np.ones((X.shape[0], 1)))


def test_model_file_module_does_not_import_the_model():
    # one direction only: linsvm.model builds on linsvm.io.model_file (plain fields), never
    # the reverse, so neither needs a lazy import to break a cycle
    import ast

    import linsvm.io.model_file as model_file

    with open(model_file.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in tree.body:  # the module's own imports (not the compatibility __getattr__)
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not {"..model", "linsvm.model", "linsvm"} & imported
    assert {"..errors", "..solvers", "._atomic"} <= imported


def test_fields_round_trip_without_a_model():
    from linsvm.io.model_file import ModelFields, format_model_text, parse_model_text

    coef = np.array([[0.5, -0.25], [1.0, 2.0], [3.0, -1e-300]])
    text = format_model_text(4, [3, 1, 2], coef, 1.0, np.array([0.1, 0.2, 0.3]))
    back = parse_model_text(text)
    assert isinstance(back, ModelFields) and back.solver == 4
    np.testing.assert_array_equal(back.labels, [3, 1, 2])
    np.testing.assert_array_equal(back.coef, coef)
    np.testing.assert_array_equal(back.bias_weights, [0.1, 0.2, 0.3])
    again = format_model_text(back.solver, back.labels, back.coef, back.bias, back.bias_weights)
    assert again == text


def test_a_rho_line_counts_for_one_class_models_only(tmp_path):
    """LIBLINEAR reads rho in any model but subtracts it for one-class models only; linsvm
    subtracted it from every model (and did not write it back on save)."""
    X, y = make_sparse_problem(n_rows=50, n_features=4, seed=1, density=0.8)
    path = tmp_path / "m"
    linsvm.train(X, y, solver=2).save(path)
    lines = path.read_text().splitlines()
    lines.insert(lines.index("w"), "rho 5")
    path.write_text("\n".join(lines) + "\n")
    model = linsvm.load_model(path)
    assert model.rho == 0.0
    np.testing.assert_array_equal(model.decision_function(X),
                                  linsvm.train(X, y, solver=2).decision_function(X))  # fmt: skip


@pytest.mark.parametrize("edit, message", [
    (lambda text: text.replace("nr_class 2", "nr_class 3"), "has nr_class 2, not 3"),
    (lambda text: text.replace("nr_feature", "nr_class 2\nnr_feature"), "given twice"),
])
def test_regression_headers_that_predict_could_not_use(tmp_path, edit, message):
    """A regression model claiming three classes was read (three weight columns) and
    `predict` failed with a TypeError traceback; a repeated key was taken, the last one
    winning over the labels read for the first."""
    from linsvm.errors import ModelFormatError

    X, y = make_sparse_problem(n_rows=40, n_features=4, seed=2, density=0.8)
    path = tmp_path / "m"
    linsvm.train(X, y, solver=11).save(path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(ModelFormatError, match=message):
        linsvm.load_model(path)


def test_a_feature_map_header_beyond_any_reader(tmp_path):
    """n_input of 2^63 in a hashed degree-1 map's header: an OverflowError traceback from
    SciPy at prediction."""
    from linsvm.errors import ModelFormatError

    X, y = make_sparse_problem(n_rows=40, n_features=4, seed=2, density=0.8)
    path = tmp_path / "m"
    linsvm.train(X, y, feature_map=linsvm.FeatureMap(degree=1, hash_bits=4)).save(path)
    text = path.read_text()
    assert " n_input 4 " in text
    path.write_text(text.replace(" n_input 4 ", f" n_input {2**63} "))
    with pytest.raises(ModelFormatError, match="n_input must be from 0 to"):
        linsvm.load_model(path)


@pytest.mark.parametrize("n_classes, rows", [
    (2, [[-0.4926287378957334], [1.0052345091605435]]),
    (8, [[0.005198936132661835, -3.840681180236057, -1.628107327890719, -0.935195117785494,
          -2.3864049548645223, -2.9849277681260675, 0.07327565388961017, 1.7944985134554952]]),
    (1, [[1.0]]),
])  # fmt: skip
def test_probabilities_are_liblinears_to_the_bit(tmp_path, n_classes, rows):
    """predict_proba is LIBLINEAR's predict_probability: the C library's exp (NumPy's
    vectorised exp differs in the last bit: here 0.379275 printed where LIBLINEAR prints
    0.379274), the sum of the sigmoids in class order (NumPy's pairwise sum rounds
    otherwise from 8 classes on), and 0/0 = NaN for a one-class model whose sigmoid is 0."""
    X = sp.csr_matrix(np.array(rows))
    n_features = X.shape[1]
    if n_classes == 1:
        weights = np.array([[-1000.0]])
    elif n_classes == 2:
        weights = np.ones((1, 1))
    else:
        weights = np.eye(n_classes)
    labels = list(range(1, n_classes + 1)) if n_classes != 2 else [1, -1]
    lines = ["solver_type L2R_LR", f"nr_class {n_classes}",
             "label " + " ".join(map(str, labels)), f"nr_feature {n_features}", "bias -1", "w"]
    lines += [" ".join(f"{v:g}" for v in row) + " " for row in weights.T]
    path = tmp_path / "m"
    path.write_text("\n".join(lines) + "\n")
    ours = linsvm.load_model(path).predict_proba(X)
    theirs_model = ll.load_model(str(path))
    _, _, theirs = ll.predict([], X, theirs_model, "-b 1 -q")
    np.testing.assert_array_equal(ours, np.array(theirs))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probabilities_of_no_rows(n_classes):
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    model = linsvm.train(X, np.arange(3) % n_classes, solver=0)
    assert model.predict_proba(X[:0]).shape == (0, n_classes)


@pytest.mark.parametrize("solver, labels, n_w", [(1, [1, 2], 2), (4, [1, 2], 1), (1, [1, 2, 3], 2),
                                                 (11, [], 2)])
def test_weight_vectors_the_header_does_not_announce_are_not_saved(tmp_path, solver, labels,
                                                                    n_w):
    """A file holds as many weights a line as its header implies: a model of others would be
    written and then not load (here or in LIBLINEAR)."""
    model = Model(solver, np.array(labels), np.ones((n_w, 3)), -1.0)
    with pytest.raises(ModelFormatError, match="weight vectors: a .* model of"):
        model.save(tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_header_of_other_bytes_is_not_a_model_file(tmp_path):
    """A feature_map value of non-ASCII bytes parsed, and reached the map as a surrogate."""
    path = tmp_path / "m"
    path.write_bytes(b"feature_map degree 2 n_input \xc3\xa9\n" + GOOD.encode())
    with pytest.raises(ModelFormatError, match="not a LIBLINEAR model file \\(not ASCII text\\)"):
        linsvm.load_model(path)
