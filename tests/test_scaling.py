"""Feature scaling as svm-scale (``linsvm scale``, ``linsvm.scaling``).

Oracles: LIBSVM's ``svm-scale`` itself (Debian's libsvm-tools; ``scripts/oracles/libsvm_tools.sh``,
skipped when absent): the same bytes on stdout and in the range file for the same input and
options, and each tool reads the other's range file; liblinear-official's
``csr_find_scale_param`` / ``csr_scale`` (the same map as ``x * coef + offset``, to rounding);
Python's ``%g`` for the compiled text (hypothesis).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm
from linsvm import DataFormatError, InvalidInputError
from linsvm.cli import main
from linsvm.io import _format
from linsvm.scaling import Scaling, find_scaling, load_scaling, parse_scaling, svm_scale_text

REPO = Path(__file__).resolve().parents[1]
SVM_SCALE = shutil.which("svm-scale")
needs_svm_scale = pytest.mark.skipif(
    SVM_SCALE is None, reason="svm-scale not installed (scripts/oracles/libsvm_tools.sh)"
)


def _rows(seed: int, n_rows: int = 40, n_features: int = 12) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows with negative values, a constant feature, a feature of zeros only, repeated
    extremes, values of 1e-7 to 1e7 (so that %g prints some in exponential form)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_rows, n_features)) * 10.0 ** rng.integers(-7, 8, size=n_features)
    A[rng.random(A.shape) < 0.5] = 0.0
    A[:, 2] = 3.5  # constant: left out
    A[:, 5] = 0.0  # never present
    A[:3, 7] = A[:, 7].max()  # the maximum repeated
    y = rng.integers(1, 4, size=n_rows).astype(float) * 1.25
    return sp.csr_matrix(A), y


def _write(path: Path, X, y) -> Path:
    linsvm.write_libsvm(X, y, path)
    return path


def _svm_scale(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([SVM_SCALE, *args], capture_output=True, check=False)


def _linsvm_scale(args: list[str], capfdbinary) -> tuple[int, bytes, str]:
    status = main(["scale", *args])
    captured = capfdbinary.readouterr()
    return status, captured.out, captured.err.decode()


# ----------------------------------------------------------------------------- against svm-scale


@needs_svm_scale
@pytest.mark.parametrize(
    "options",
    [[], ["-l", "0"], ["-l", "-2.5", "-u", "3"], ["-y", "0", "1"], ["-l", "0", "-y", "-1", "7"]],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_bytes_as_svm_scale(tmp_path, capfdbinary, options, seed):
    data = _write(tmp_path / "train.svm", *_rows(seed))
    theirs = _svm_scale([*options, "-s", str(tmp_path / "theirs.range"), str(data)])
    assert theirs.returncode == 0, theirs.stderr
    status, ours, _ = _linsvm_scale([*options, "-s", str(tmp_path / "ours.range"), str(data)],
                                    capfdbinary)  # fmt: skip
    assert status == 0
    assert ours == theirs.stdout
    assert (tmp_path / "ours.range").read_bytes() == (tmp_path / "theirs.range").read_bytes()


@needs_svm_scale
@pytest.mark.parametrize("y_scaled", [False, True])
def test_each_reads_the_others_range_file(tmp_path, capfdbinary, y_scaled):
    """Test rows with features the training rows lack (one varying: warned), and fewer."""
    X, y = _rows(2)
    X_test, y_test = _rows(3, n_rows=15, n_features=15)
    train = _write(tmp_path / "train.svm", X, y)
    test = _write(tmp_path / "test.svm", X_test[:, :], y_test)
    options = ["-y", "-1", "1"] if y_scaled else []
    assert _svm_scale([*options, "-l", "0", "-s", str(tmp_path / "theirs.range"),
                       str(train)]).returncode == 0  # fmt: skip
    _linsvm_scale([*options, "-l", "0", "-s", str(tmp_path / "ours.range"), str(train)],
                  capfdbinary)  # fmt: skip
    theirs = _svm_scale(["-r", str(tmp_path / "ours.range"), str(test)])
    status, ours, err = _linsvm_scale(["-r", str(tmp_path / "theirs.range"), str(test)],
                                      capfdbinary)  # fmt: skip
    assert status == 0 and ours == theirs.stdout
    assert "warning: feature(s) 13, 14, 15 vary" in err  # (beyond the training rows' 12)
    assert b"WARNING: feature index 13" in theirs.stderr


@needs_svm_scale
def test_the_bundled_adult_data_as_svm_scale(tmp_path, capfdbinary):
    data = REPO / "data" / "a9a"
    theirs = _svm_scale(["-l", "0", str(data)])
    status, ours, _ = _linsvm_scale(["-l", "0", str(data)], capfdbinary)
    assert status == 0 and ours == theirs.stdout


# ----------------------------------------------------------------------------- the map


def test_as_liblinears_python_scaling():
    from liblinear.commonutil import csr_find_scale_param, csr_scale

    X, _ = _rows(4)
    for lower, upper in [(-1.0, 1.0), (0.0, 1.0), (-3.0, 0.5)]:
        expected = csr_scale(X, csr_find_scale_param(X, lower, upper))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (the non-zeros' growth)
            ours = find_scaling(X, lower=lower, upper=upper).transform(X)
        np.testing.assert_allclose(ours.toarray(), expected.toarray(), rtol=1e-12, atol=1e-14)


def test_each_feature_spans_the_limits_exactly():
    X, y = _rows(5)
    scaling = find_scaling(X, y, lower=-2.0, upper=3.0, y_limits=(10.0, 20.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        Z = scaling.transform(X).toarray()
    A = X.toarray()
    varying = A.min(axis=0) < A.max(axis=0)
    assert np.all(Z[:, ~varying] == 0.0)  # constant features left out
    lows = (A == A.min(axis=0)) & varying
    highs = (A == A.max(axis=0)) & varying
    assert np.all(Z[lows] == -2.0) and np.all(Z[highs] == 3.0)
    assert np.all((Z[:, varying] >= -2.0) & (Z[:, varying] <= 3.0))
    labels = scaling.transform_labels(y)
    assert labels[y == y.min()].tolist() == [10.0] * int(np.sum(y == y.min()))
    assert labels[y == y.max()].tolist() == [20.0] * int(np.sum(y == y.max()))
    middle = (y > y.min()) & (y < y.max())
    np.testing.assert_allclose(labels[middle],
                               10 + 10 * (y[middle] - y.min()) / (y.max() - y.min()))  # fmt: skip


def test_lower_zero_keeps_non_negative_rows_sparse_and_minus_one_warns():
    X = sp.csr_matrix(np.abs(_rows(6)[0].toarray()))
    assert find_scaling(X, lower=0.0).transform(X).nnz <= X.nnz
    with pytest.warns(UserWarning, match="non-zeros where the original have .*-l 0"):
        find_scaling(X).transform(X)


def test_wider_and_narrower_rows():
    X, _ = _rows(7)
    scaling = find_scaling(X, lower=0.0)
    assert scaling.transform(X[:, :5]).shape == (X.shape[0], X.shape[1])
    wide = sp.hstack([X, sp.csr_matrix(np.arange(X.shape[0], dtype=float)[:, None])]).tocsr()
    with pytest.warns(UserWarning, match=r"feature\(s\) 13 vary"):
        Z = scaling.transform(wide)
    assert Z.shape == wide.shape and Z[:, 12].nnz == 0


def test_inputs_dense_and_float32_as_csr():
    X = _rows(8)[0].astype(np.float32).astype(np.float64)  # (values float32 holds exactly)
    expected = find_scaling(X, lower=0.0).transform(X).toarray()
    for rows in (X.toarray(), X.astype(np.float32), X.tocsc()):
        np.testing.assert_array_equal(find_scaling(rows, lower=0.0).transform(rows).toarray(),
                                      expected)  # fmt: skip


def test_labels_of_one_value_map_to_y_lower():
    X, _ = _rows(9)
    y = np.full(X.shape[0], 4.0)
    assert find_scaling(X, y, y_limits=(-1.0, 1.0)).transform_labels(y).tolist() == [-1.0] * 40


@pytest.mark.parametrize("limits", [(1.0, 1.0), (2.0, 1.0), (np.nan, 1.0), (0.0, np.inf)])
def test_bad_limits(limits):
    X, y = _rows(0)
    with pytest.raises(InvalidInputError, match="inconsistent lower/upper specification"):
        find_scaling(X, lower=limits[0], upper=limits[1])
    with pytest.raises(InvalidInputError, match="inconsistent y_lower/y_upper"):
        find_scaling(X, y, y_limits=limits)


# ----------------------------------------------------------------------------- range files


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.tuples(st.floats(-1e300, 1e300), st.floats(0, 1e300)), min_size=0, max_size=8),
    st.sampled_from([(-1.0, 1.0), (0.0, 1.0), (-0.1, 1e-3)]),
    st.one_of(st.none(), st.tuples(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6))),
)
def test_range_files_round_trip(ranges, limits, y_limits):
    low = np.array([a for a, _ in ranges])
    high = np.array([a + b for a, b in ranges])
    high = np.where(np.isfinite(high), high, low)
    y_part = {}
    if y_limits is not None:
        y_part = {"y_limits": (y_limits[0], y_limits[0] + y_limits[1]), "y_range": (-2.0, 5.0)}
    scaling = Scaling(limits[0], limits[1], low, high, **y_part)
    again = parse_scaling(scaling.to_text())
    kept = low != high
    n = int(np.flatnonzero(kept)[-1]) + 1 if kept.any() else 0
    np.testing.assert_array_equal(again.feature_min[kept[:n]], low[:n][kept[:n]])
    np.testing.assert_array_equal(again.feature_max[kept[:n]], high[:n][kept[:n]])
    assert again.n_features == n and again.to_text() == scaling.to_text()
    assert (again.lower, again.upper, again.y_limits) == (scaling.lower, scaling.upper,
                                                          scaling.y_limits)  # fmt: skip


def test_save_and_load(tmp_path):
    X, y = _rows(10)
    scaling = find_scaling(X, y, y_limits=(0.0, 1.0))
    scaling.save(tmp_path / "r")
    loaded = load_scaling(tmp_path / "r")
    assert loaded.to_text() == scaling.to_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        np.testing.assert_array_equal(loaded.transform(X).toarray(),
                                      scaling.transform(X).toarray())  # fmt: skip


@pytest.mark.parametrize(
    "text, where",
    [("", ":1: expected the line 'x'"), ("x\n-1\n", ":2: expected lower upper"),
     ("x\n-1 1\n2 0 1\n1 0 1\n", ":4: feature index 1 is not above"),
     ("x\n-1 1\n1 3 2\n", ":3: feature 1: min 3 is above max 2"),
     ("x\n-1 1\n1 0 nan\n", ":3: expected 'index min max'"),
     ("y\n0 1\nx\n", ":3: expected y_min y_max"), ("x\n1 -1\n", ":2: inconsistent lower/upper"),
     ("y\n1 0\n0 1\nx\n-1 1\n", ":2: inconsistent y_lower/y_upper"),
     ("y\n0 1\n3 1\nx\n-1 1\n", ":3: the labels' min 3 is above their max 1"),
     ("x\n-1 1\n1 1_0 20\n", ":3: expected 'index min max'"),
     ("x\n-1 1\n99999999999999999999 0 1\n", ":3: feature index 99999999999999999999"),
     ("x\n-1 1_0\n", ":2: expected lower upper")],
)  # fmt: skip
def test_malformed_range_files(tmp_path, text, where):
    path = tmp_path / "r"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=f"^{path}{where}") as info:
        load_scaling(path)
    assert "\n" not in str(info.value)
    path.write_bytes(b"x\n-1 1\n\xff\xfe")
    with pytest.raises(DataFormatError, match=":3: not a range file of svm-scale"):
        load_scaling(path)


def _assorted_ranges(seed: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranges of every kind of value %.17g writes: fixed and exponential, -0, subnormals, the
    largest, ties at 17 digits (1 + 2**-17: formatted by Python), and features left out."""
    rng = np.random.default_rng(seed)
    low = -np.abs(rng.normal(size=n_features)) * 10.0 ** rng.integers(-30, 30, size=n_features)
    high = np.abs(rng.normal(size=n_features)) * 10.0 ** rng.integers(-30, 30, size=n_features)
    special = [-0.0, 0.0, 5e-324, -1e-310, 2.2250738585072014e-308, 1.7976931348623157e308,
               -1.7976931348623157e308, 1 + 2**-17, -(3 + 2**-17), 0.1, 1e16, 1e-5]  # fmt: skip
    at = rng.choice(n_features, size=(len(special), 20), replace=False)
    for value, where in zip(special, at, strict=True):
        low[where[:10]] = np.minimum(value, high[where[:10]])
        high[where[10:]] = np.maximum(value, low[where[10:]])
    equal = rng.random(n_features) < 0.1
    high[equal] = low[equal]
    return low, high


def test_a_large_range_file_is_pythons_g_and_reads_back_as_float(tmp_path):
    low, high = _assorted_ranges(12, 40_000)
    scaling = Scaling(-1.0, 1.0, low, high, (0.0, 1.0), (-2.0, 1 + 2**-17))
    kept = np.flatnonzero(low != high)
    expected = "y\n0 1\n-2 1.0000076293945312\nx\n-1 1\n" + "".join(
        f"{j + 1} {low[j]:.17g} {high[j]:.17g}\n" for j in kept.tolist())
    assert scaling.to_text() == expected
    scaling.save(tmp_path / "r")
    assert (tmp_path / "r").read_bytes() == expected.encode()
    loaded = load_scaling(tmp_path / "r")
    words = np.array(expected.split()[8:], dtype=object).reshape(-1, 3)
    assert loaded.n_features == kept[-1] + 1
    assert np.flatnonzero(loaded.feature_min != loaded.feature_max).tolist() == kept.tolist()
    as_float = np.array([[float(w) for w in row[1:]] for row in words])  # the oracle: float()
    np.testing.assert_array_equal(loaded.feature_min[kept].view(np.uint64),
                                  as_float[:, 0].view(np.uint64))  # fmt: skip
    np.testing.assert_array_equal(loaded.feature_max[kept].view(np.uint64),
                                  as_float[:, 1].view(np.uint64))  # fmt: skip
    assert loaded.y_range == (-2.0, 1 + 2**-17) and loaded.to_text() == expected


@needs_svm_scale
def test_a_large_range_file_as_svm_scale_writes_and_reads_it(tmp_path, capfdbinary):
    """Tens of thousands of features, with values whose %.17g is left to Python, subnormal
    values (read by float()) and -0."""
    n_rows, n_features = 400, 30_000
    rng = np.random.default_rng(13)
    # every feature in three rows or more, so that most vary
    columns = np.concatenate([rng.permutation(n_features) for _ in range(3)])
    rows = rng.integers(0, n_rows, size=columns.shape[0])
    values = rng.normal(size=columns.shape[0]) * 10.0 ** rng.integers(-12, 12, size=columns.size)
    values[::97] = 1 + 2**-17
    values[::101] = 5e-324
    values[::103] = -1e-310
    X = sp.coo_matrix((values, (rows, columns)), shape=(n_rows, n_features)).tocsr()
    X.sum_duplicates()
    y = rng.normal(size=n_rows)
    data = _write(tmp_path / "d.svm", X, y)
    for options in (["-l", "0"], ["-y", "-1", "1"]):
        theirs = _svm_scale([*options, "-s", str(tmp_path / "theirs.range"), str(data)])
        status, ours, _ = _linsvm_scale([*options, "-s", str(tmp_path / "ours.range"),
                                         str(data)], capfdbinary)  # fmt: skip
        assert status == 0 and ours == theirs.stdout
        text = (tmp_path / "theirs.range").read_bytes()
        assert text.count(b"\n") > 20_000
        for value in (b" 1.0000076293945312\n", b"e-324\n", b" -9.9999999999999694e-311 "):
            assert value in text
        assert (tmp_path / "ours.range").read_bytes() == text
        assert load_scaling(tmp_path / "theirs.range").to_text().encode() == text
        theirs = _svm_scale(["-r", str(tmp_path / "ours.range"), str(data)])
        status, ours, _ = _linsvm_scale(["-r", str(tmp_path / "theirs.range"), str(data)],
                                        capfdbinary)  # fmt: skip
        assert status == 0 and ours == theirs.stdout


def test_range_files_lines_and_blanks_as_pythons_splitlines_and_split():
    """Every line end of str.splitlines (one line each; "\r\n" one), every blank of
    str.split(), blank lines, and numbers left to float() (subnormal, 23 digits)."""
    text = ("y\x0c0 1\r2 3\x1ex\x1d-1 1\x1c\r\n\x1f \t\n007\x1f-0 1e-310 \x0b\x0c"
            "+9\t0.5 12345678901234567890123\r\r10 -4.9e-324 0\u2028\u202911 -2 2\x85"
            "12\u00a0-1\u30001\n\n\n")  # fmt: skip
    scaling = parse_scaling(text)
    assert (scaling.y_limits, scaling.y_range, scaling.lower, scaling.upper) == \
        ((0.0, 1.0), (2.0, 3.0), -1.0, 1.0)  # fmt: skip
    expected_low, expected_high = np.zeros(12), np.zeros(12)
    expected_low[[6, 8, 9, 10, 11]] = [-0.0, 0.5, float("-4.9e-324"), -2.0, -1.0]
    expected_high[[6, 8, 9, 10, 11]] = [float("1e-310"), float("12345678901234567890123"), 0.0,
                                        2.0, 1.0]  # fmt: skip
    np.testing.assert_array_equal(scaling.feature_min.view(np.uint64),
                                  expected_low.view(np.uint64))  # fmt: skip
    np.testing.assert_array_equal(scaling.feature_max, expected_high)
    for error in ["13 0 nan", "12 0 1", "13 1 0", "13 0"]:
        with pytest.raises(DataFormatError, match="^<range file>:17: "):
            parse_scaling(text.replace("\n\n\n", "\n\n" + error + "\n"))
    with pytest.raises(DataFormatError, match=r"^<range file>:10: feature index 6 is not above"):
        parse_scaling(text.replace("+9", "+6"))


@pytest.mark.parametrize(
    "body, line, message",
    [("1 0 1\n2 0", 4, "expected 'index min max'"), ("1 0 1 2", 3, "expected 'index min max'"),
     ("1 0 1\n\n2 0 1 x", 5, "expected 'index min max'"), ("1.0 0 1", 3, "expected 'index"),
     ("1e0 0 1", 3, "expected 'index"), ("1 0 x", 3, "expected 'index"),
     ("1 0 inf", 3, "expected 'index"), ("1 -Infinity 0", 3, "expected 'index"),
     ("1 0 1e400", 3, "expected 'index"), ("1 -1e400 0", 3, "expected 'index"),
     ("1 NaN 0", 3, "expected 'index"), ("1 0 0x1", 3, "expected 'index"),
     ("1 0 1_0", 3, "expected 'index"), ("1 0 1\n2 0 .", 4, "expected 'index"),
     ("1 0 1\r2 0 1e", 4, "expected 'index"),
     ("1 0 1\x0b2 0 1\x0c2 0 1", 5, r"feature index 2 is not above the line before's \(2\)"),
     ("0 0 1", 3, r"feature index 0 is not above the line before's \(0\) and at most 2147483647"),
     ("-3 0 1", 3, r"feature index -3 is not above"), ("+0 0 1", 3, "feature index 0 is not"),
     ("1 0 1\n3 0 1e-320\n2 0 1", 5, r"feature index 2 is not above the line before's \(3\)"),
     ("2147483648 0 1", 3, "feature index 2147483648 is not above"),
     ("99999999999999999999 0 1", 3, "feature index 99999999999999999999 is not above"),
     ("9" * 400 + " 0 1", 3, "feature index 9999999999.* is not above"),
     ("1 5e-324 0", 3, "feature 1: min 4.94066e-324 is above max 0"),
     ("1 0 1\n2 1e-310 -1e-310", 4, "feature 2: min 1e-310 is above max -1e-310"),
     ("1 0 -0.5", 3, r"feature 1: min 0 is above max -0.5")],
)  # fmt: skip
def test_malformed_feature_lines(tmp_path, body, line, message):
    path = tmp_path / "r"
    path.write_bytes(b"x\r\n-1 1\r\n" + body.encode() + b"\n")
    with pytest.raises(DataFormatError, match=f"^{path}:{line}: {message}"):
        load_scaling(path)
    with pytest.raises(DataFormatError, match=f"^<range file>:{line}: {message}"):
        parse_scaling("x\n-1 1\n" + body.replace("\n", "\r\n"))


_BLANKS = st.sampled_from([" ", "\t", "\x1f", " \t ", "\u00a0"])
_LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                              "\u2028", "\u2029"])  # fmt: skip
_BAD_LINES = st.sampled_from(["1", "1 2", "1 2 3 4", "x 0 1", "1 0 nan", "1 -inf 0", "1 0 1e999",
                              "1 0 1_0", "1.5 0 1", "1 0 0x1", "0 0 1", "-1 0 1", "2147483648 0 1",
                              "1 1 0", "1 é 2"])  # fmt: skip


@settings(deadline=None, max_examples=150)
@given(
    st.lists(st.tuples(st.integers(1, 3), st.floats(allow_nan=False, allow_infinity=False),
                       st.floats(0, 1e300), st.sampled_from(["r", ".12e", ".17g"]), _BLANKS,
                       _LINE_ENDS, st.integers(0, 2)), max_size=40),  # fmt: skip
    st.integers(0, 40),
    _BAD_LINES,
)
def test_feature_lines_read_as_float_and_errors_name_their_line(lines, bad_at, bad_line):
    """Lines of numbers written as repr, %e or %.17g, any blanks and line ends, blank lines:
    read as float() reads the words; a bad line inserted named by its line number."""
    text, line, index, expected = "x\n-1 1\n", 2, 0, {}
    bad_line_number = None
    for k, (step, low, width, form, blank, end, n_blank) in enumerate(lines):
        if k == bad_at:
            text += bad_line.replace("1", str(index + 1), 1) + "\n"
            line += 1
            bad_line_number = line
        index += step
        high = low + width if np.isfinite(low + width) else low
        words = [repr(v) if form == "r" else format(v, form) for v in (low, high)]
        text += blank.join([str(index), *words]) + end + blank * (n_blank > 1) + end * n_blank
        line += 1 + n_blank
        expected[index] = (float(words[0]), float(words[1]))
    if bad_line_number is not None:
        with pytest.raises(DataFormatError, match=f"^<range file>:{bad_line_number}: "):
            parse_scaling(text)
        return
    scaling = parse_scaling(text)
    assert scaling.n_features == index
    for j, (low, high) in expected.items():
        assert (scaling.feature_min[j - 1], scaling.feature_max[j - 1]) == (low, high)
        assert np.signbit(scaling.feature_min[j - 1]) == np.signbit(low)


# ----------------------------------------------------------------------------- the text


@settings(deadline=None, max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(2, 17))
def test_compiled_g_is_pythons(value, precision):
    out = np.zeros(_format.MAX_VALUE_BYTES + 2, dtype=np.uint8)
    end = _format.write_g(np.array(value).view(np.uint64)[()], out, 0, precision)
    if end >= 0:  # (-1: a tie or near one, left to Python)
        assert out[:end].tobytes().decode() == f"{value:.{precision}g}"


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.sampled_from([64, 200, 1 << 16]))
def test_rows_text_is_pythons(seed, chunk_bytes):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(int(rng.integers(0, 9)), 6)) * 10.0 ** rng.integers(-9, 9, size=6)
    A[rng.random(A.shape) < 0.4] = 0.0
    A[A.shape[0] // 2 :, 3] = 0.5  # (a tie of %g: formatted by Python)
    X = sp.csr_matrix(A)
    y = rng.normal(size=A.shape[0]) * 1e3
    expected = "".join(
        f"{y[i]:.17g} " + "".join(f"{j + 1}:{A[i, j]:g} " for j in np.flatnonzero(A[i])) + "\n"
        for i in range(A.shape[0])
    ).encode()
    assert b"".join(svm_scale_text(X, y, chunk_bytes)) == expected


# ----------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    "args, message",
    [(["-r", "R", "-s", "S"], "cannot use -r and -s simultaneously"),
     (["-l", "1", "-u", "0"], "inconsistent lower/upper specification"),
     (["-y", "1"], "option -y needs a number, got '.*d.svm'"),
     (["-q"], "unknown option: -q"), (["-l", "x"], "-l"),
     (["-r", "RANGE", "-l", "0"], "-l 0 differs from the range file"),
     (["-r", "RANGE", "-y", "0", "1"], "-y 0 1 differs from the range file .*no label scaling"),
     (["-r", "MISSING"], "MISSING")],
)  # fmt: skip
def test_command_errors(tmp_path, capfdbinary, args, message):
    data = _write(tmp_path / "d.svm", *_rows(11))
    find_scaling(*_rows(11)).save(tmp_path / "RANGE")
    args = [str(tmp_path / a) if a in ("RANGE", "MISSING", "R", "S") else a for a in args]
    status, out, err = _linsvm_scale([*args, str(data)], capfdbinary)
    assert status == 1 and out == b""
    assert err.startswith("linsvm scale: error: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_command_usage_and_a_malformed_data_file(tmp_path, capfdbinary):
    assert main(["scale"]) == 1 and b"Usage: linsvm scale" in capfdbinary.readouterr().out
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n-1 2:x\n")
    status, out, err = _linsvm_scale([str(bad)], capfdbinary)
    assert status == 1 and out == b"" and f"{bad}:2:" in err


def test_ranges_wider_than_memory_are_refused_before_any_allocation(tmp_path, capfdbinary,
                                                                   monkeypatch):
    """The scaling is dense over the features up to the widest index: one range line or data
    entry at index 2147483000 asked for about 190 GB, and the process was killed. Such widths
    are refused in one line naming the file, before anything is allocated (here the room is
    made small, so that a width of 100,000 stands for it)."""
    from linsvm import _memory

    monkeypatch.setattr(_memory, "allocatable_memory", lambda: 1 << 20)
    ranges = tmp_path / "range"
    ranges.write_text("x\n-1 1\n1 0 1\n100000 -1 1\n")
    data = tmp_path / "d.svm"
    data.write_text("1 1:0.5 2:1\n-1 1:1\n")
    status, out, err = _linsvm_scale(["-r", str(ranges), str(data)], capfdbinary)
    assert status == 1 and out == b"" and err.count("\n") == 1
    assert f"{ranges}: feature index 100000: ranges for features 1 to 100000" in err
    wide = tmp_path / "wide.svm"
    wide.write_text("1 1:0.5 100000:1\n-1 1:1\n")
    status, out, err = _linsvm_scale([str(wide)], capfdbinary)
    assert status == 1 and out == b"" and f"{wide}: feature index 100000" in err
    X = sp.csr_matrix(([1.0], ([0], [99_999])), shape=(1, 100_000))
    with pytest.raises(InvalidInputError, match="features 1 to 100000"):
        find_scaling(X)
    with pytest.raises(InvalidInputError, match="features 1 to 100000"):
        find_scaling(X[:, :10]).transform(X)
    with pytest.raises(InvalidInputError, match="features 1 to 100000"):
        parse_scaling("x\n-1 1\n100000 0 1\n")
    assert find_scaling(X[:, :1000]).n_features == 1000  # (within the room)


def test_a_zero_extreme_has_the_sign_of_the_last_zero(tmp_path):
    """svm-scale's max(x, y) keeps the later of equal values: its range file says -0 where the
    last zero of a feature (or of the labels) in row order is a stored -0."""
    rows = sp.csr_matrix((np.array([-0.0, 0.0, 5.0, -0.0, 2.0]), np.array([0, 0, 0, 1, 1]),
                          np.array([0, 1, 2, 4, 5])), shape=(4, 2))  # fmt: skip
    y = np.array([0.0, 1.0, -0.0, 2.0])
    scaling = find_scaling(rows, y, y_limits=(0.0, 1.0))
    # feature 1: -0, +0, 5, (missing: +0) -> min +0; feature 2: (missing), (missing), -0, 2
    assert np.signbit(scaling.feature_min).tolist() == [False, True]
    assert np.signbit(scaling.y_range[0])
    assert scaling.to_text().splitlines()[2:] == ["-0 2", "x", "-1 1", "1 0 5", "2 -0 2"]


def test_ranges_past_the_arithmetic_are_refused():
    X = sp.csr_matrix(np.array([[-1.7e308], [1.7e308], [1e308]]))
    with pytest.raises(InvalidInputError, match="feature 1's range .* overflows"):
        find_scaling(X).transform(X)
    y = np.array([-1.7e308, 1.7e308, 1e308])
    with pytest.raises(InvalidInputError, match="the labels' range .* overflows"):
        find_scaling(np.ones((3, 1)), y, y_limits=(0.0, 1.0)).transform_labels(y)
