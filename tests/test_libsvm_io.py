"""Tests of the LIBSVM reader / writer (linsvm.io.libsvm) and its number parser."""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from linsvm.errors import DataFormatError, InvalidInputError, ZeroIndexError
from linsvm.io import _parse, libsvm, parse_libsvm_bytes, read_libsvm, write_libsvm

SETTINGS = settings(
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def parse(text: str | bytes, **kwargs):
    if isinstance(text, str):
        text = text.encode()
    return parse_libsvm_bytes(text, "mem.txt", **kwargs)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical float arrays (distinguishes -0.0 from 0.0)."""
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    view = np.int64 if a.dtype == np.float64 else np.int32
    return bool(np.array_equal(a.view(view), b.view(view)))


def assert_csr_valid(X: sp.csr_matrix) -> None:
    assert isinstance(X, sp.csr_matrix)
    assert X.has_sorted_indices
    assert X.indices.dtype == X.indptr.dtype
    assert X.indptr[0] == 0 and X.indptr[-1] == X.nnz
    assert np.all(np.diff(X.indptr) >= 0)
    for r in range(X.shape[0]):
        row = X.indices[X.indptr[r] : X.indptr[r + 1]]
        assert np.all(np.diff(row) > 0)
    if X.nnz:
        assert 0 <= X.indices.min() and X.indices.max() < X.shape[1]


# ----------------------------------------------------------------------------- basics


def test_basic_file():
    X, y = parse("+1 1:0.5 3:-2\n-1 2:1e3\n2.5\n")
    assert_csr_valid(X)
    assert X.shape == (3, 3)
    assert X.dtype == np.float64
    assert X.indices.dtype == np.int32
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, -2], [0, 1000, 0], [0, 0, 0]])
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [1, -1, 2.5])


def test_float32_dtype_and_bad_dtype():
    X, _ = parse("1 1:0.1\n", dtype=np.float32)
    assert X.dtype == np.float32
    assert X.data[0] == np.float32(0.1)
    for bad in (np.int32, np.float16, "complex128"):
        with pytest.raises(ValueError, match="dtype"):
            parse("1 1:1\n", dtype=bad)


def test_bad_options():
    with pytest.raises(ValueError, match="zero_based"):
        parse("1 1:1\n", zero_based="yes")
    with pytest.raises(ValueError, match="zero_based"):
        parse("1 1:1\n", zero_based=1)
    with pytest.raises(ValueError, match="n_features"):
        parse("1 1:1\n", n_features=-1)
    with pytest.raises(ValueError, match="n_features"):
        parse("1 1:1\n", n_features=2.0)


def test_empty_input():
    for text in ("", "\n\n", "# only a comment\n", "  \t \r\n"):
        X, y = parse(text)
        assert X.shape == (0, 0) and X.nnz == 0
        assert y.shape == (0,)
    X, y, qid = parse("", n_features=7, query_id=True)
    assert X.shape == (0, 7) and y.shape == (0,) and qid.shape == (0,)


def test_comments_blank_lines_crlf_tabs():
    text = (
        "# header comment\r\n"
        "\r\n"
        "  1 1:1\t3:2  # trailing comment 9:9\r\n"
        "\t\n"
        "-1\t2:3 \t\r\n"
        "   # indented comment\n"
        "1 4:4#no space before comment\n"
        "-1 1:5"  # no final newline
    )
    X, y = parse(text)
    np.testing.assert_array_equal(y, [1, -1, 1, -1])
    np.testing.assert_array_equal(
        X.toarray(), [[1, 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4], [5, 0, 0, 0]]
    )


def test_labels_and_value_spellings():
    X, y = parse("+1 1:1\n-1 1:1.\n1.0 1:.5\n2 1:-0.25\n-1.5e0 1:1e-3\n7 1:1E+3\n3 1:+3\n")
    np.testing.assert_array_equal(y, [1, -1, 1, 2, -1.5, 7, 3])
    np.testing.assert_array_equal(X.data, [1, 1, 0.5, -0.25, 1e-3, 1e3, 3])


def test_explicit_zeros_are_kept():
    X, _ = parse("1 1:0 2:0.0 3:1\n")
    assert X.nnz == 3
    np.testing.assert_array_equal(X.data, [0, 0, 1])


def test_empty_rows():
    X, y = parse("1\n-1 2:1\n3\n")
    assert X.shape == (3, 2)
    np.testing.assert_array_equal(X.indptr, [0, 0, 1, 1])
    np.testing.assert_array_equal(y, [1, -1, 3])


def test_qid():
    text = "1 qid:3 1:1\n2 qid:3 2:1\n0 1:1\n1 qid:-7\n"
    X, y, qid = parse(text, query_id=True)
    assert qid.dtype == np.int64
    np.testing.assert_array_equal(qid, [3, 3, 0, -7])
    np.testing.assert_array_equal(y, [1, 2, 0, 1])
    X2, y2 = parse(text)  # qids are accepted and ignored by default
    assert (X2 != X).nnz == 0


def test_zero_based():
    X, _ = parse("1 0:1 2:2\n", zero_based=True)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2]])
    X, _ = parse("1 1:1 2:2\n", zero_based=True)
    assert X.shape == (1, 3)
    X, _ = parse("1 0:1 2:2\n", zero_based="auto")
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2]])
    X, _ = parse("1 1:1 2:2\n", zero_based="auto")  # no index 0: 1-based
    np.testing.assert_array_equal(X.toarray(), [[1, 2]])


def test_n_features():
    X, _ = parse("1 1:1 3:1\n", n_features=10)
    assert X.shape == (1, 10)
    X, _ = parse("1 1:1 3:1\n", n_features=3)
    assert X.shape == (1, 3)
    with pytest.raises(DataFormatError, match=r"mem.txt:2: feature index 5 too large"):
        parse("1 1:1\n1 5:1\n1 2:1\n", n_features=4)
    with pytest.raises(DataFormatError, match=r"mem.txt:1: .*too large.*n_features=3"):
        parse("1 3:1\n", n_features=3, zero_based=True)
    X, _ = parse("1 3:1\n", n_features=3, zero_based="auto")  # 1-based: fits
    assert X.shape == (1, 3) and X[0, 2] == 1
    with pytest.raises(DataFormatError, match=r"mem.txt:2: .*too large"):
        parse("1 0:1\n1 3:1\n", n_features=3, zero_based="auto")  # 0-based: does not


def test_index_dtype_int64_for_huge_n_features():
    big = 2**31 + 5
    X, y = parse(f"1 2:1.5 {big}:2\n-1 7:3\n", n_features=big)
    assert X.shape == (2, big)
    assert X.indices.dtype == np.int64 and X.indptr.dtype == np.int64
    np.testing.assert_array_equal(X.indices, [1, big - 1, 6])
    assert X[0, big - 1] == 2 and X[0, 1] == 1.5 and X[1, 6] == 3
    # Without n_features the width comes from the largest index.
    X, _ = parse(f"1 {big}:2\n")
    assert X.shape == (1, big) and X.indices.dtype == np.int64
    X, _ = parse("1 2147483647:1\n")
    assert X.indices.dtype == np.int32


def test_index_limit_without_n_features():
    limit = 2**40
    X, _ = parse(f"1 {limit}:1\n")
    assert X.shape == (1, limit)
    with pytest.raises(DataFormatError, match=r"mem.txt:1: feature index 10000000000000 too large"):
        parse("1 10000000000000:1\n")
    X, _ = parse("1 10000000000000:1\n", n_features=10**13)
    assert X.shape == (1, 10**13)


# ----------------------------------------------------------------------------- errors

ERROR_CASES = [
    ("1 1:1\n1 3:abc\n", 2, "bad value 'abc' for feature 3"),
    ("1 1:1\n\n1 3:\n", 3, "no value after '3:'"),
    ("1 1:1\n1 2: 0.5\n", 2, "no value after '2:' (the value must follow the colon"),
    ("1 1:1.2.3\n", 1, "bad value '1.2.3' for feature 1"),
    ("1 1:1\n1 0:1\n", 2, "index 0 is not allowed with 1-based indices"),
    ("1 1:1\n1 -3:1\n", 2, "negative index -3"),
    ("1 1:1\n# c\n1 9:1 7:1\n", 3, "indices must be ascending: 7 after 9"),
    ("1 5:1 5:2\n", 1, "duplicate index 5"),
    ("1 1:nan\n", 1, "value is NaN"),
    ("1 1:1\n1 2:-inf\n", 2, "value is infinite"),
    ("1 1:1\n1 2:1e400\n", 2, "value is infinite"),
    ("1 1:1\n1:1 2:1\n", 2, "missing label"),
    ("1 1:1\nqid:1 2:1\n", 2, "missing label"),
    ("x 1:1\n", 1, "bad label 'x'"),
    ("1 1:1\r\n-1 2:1\r\nNaN 1:1\r\n", 3, "label is NaN"),
    ("inf 1:1\n", 1, "label is infinite"),
    ("1e999 1:1\n", 1, "label is infinite"),
    ("1 qid:x 1:1\n", 1, "bad qid 'qid:x'"),
    ("1 1:1 qid:2\n", 1, "qid must come right after the label"),
    ("1 1:1 abc\n", 1, "expected index:value, got 'abc'"),
    ("1 a:1\n", 1, "bad feature index 'a'"),
    ("1 :1\n", 1, "bad feature index ''"),
    ("1 1:1\n2 99999999999999999999999:1\n", 2, "feature index 99999999999999999999999 too large"),
]


@pytest.mark.parametrize(("text", "line", "what"), ERROR_CASES)
def test_error_messages(tmp_path, text, line, what):
    path = tmp_path / "bad_file.txt"
    path.write_bytes(text.encode())
    with pytest.raises(DataFormatError) as info:
        read_libsvm(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.path == str(path)
    assert err.line == line
    assert what in err.what
    assert str(err).startswith(f"{path}:{line}: ")


def test_first_error_in_file_order_wins():
    # A label whose rounding needs the Python fallback and overflows, then a kernel error.
    with pytest.raises(DataFormatError, match=r":1: label is infinite"):
        parse("1.8e308 1:1 x\n")
    with pytest.raises(DataFormatError, match=r":1: bad label"):
        parse("y 1:1\n1e999\n")


def test_float32_refuses_a_value_it_cannot_hold():
    """Read as float32, a finite value beyond its range would turn infinite (a value lost,
    with a RuntimeWarning from the cast): refused at its line, as "inf" is; the largest value
    that rounds to float32's maximum is kept."""
    largest = float(np.finfo(np.float32).max)
    below = math.nextafter(libsvm.FLOAT32_OVERFLOW, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, _ = parse(f"1 1:{below!r} 2:{-below!r}\n", dtype=np.float32)
        assert X.data.tolist() == [largest, -largest]
        # 2**128 + 2**75: halfway between two doubles, so parsed by the float() fallback
        halfway = str(2**128 + 2**75)
        buf = np.frombuffer(f"1 1:{halfway}\n".encode(), dtype=np.uint8)
        assert _parse.parse_buffer(buf, True, np.int64(10), math.inf)[17] == 1
        for token in (repr(libsvm.FLOAT32_OVERFLOW), "-1e39", "3.4028236e38", halfway):
            with pytest.raises(DataFormatError) as info:
                parse(f"1 1:1\n\n-1 1:0.5 7:{token}\n", dtype=np.float32)
            assert (info.value.line, info.value.what) == (
                3, f"value '{token}' is beyond the range of float32 (feature 7); read the data "
                "as float64")
        X, _ = parse(f"1 7:1e39 8:{halfway}\n")  # float64 holds them
        assert X.data.tolist() == [1e39, float(halfway)]


def test_data_to_train_on_refuses_values_that_overflow_training_at_their_line(tmp_path):
    """read with check_width (data to train on): a value of 2^500 or more is refused at its
    line, as the training's own check would refuse it by row and column afterwards."""
    path = tmp_path / "d"
    path.write_text("1 1:1\n\n-1 2:1\n1 1:2 5:-1e200\n")
    with pytest.raises(DataFormatError) as info:
        read_libsvm(path, check_width=True)
    assert info.value.line == 4 and "'-1e200' of feature 5 is 2^500" in info.value.what
    assert read_libsvm(path)[0].data.min() == -1e200  # (only training cannot take it)


def test_long_tokens_are_truncated_in_messages():
    with pytest.raises(DataFormatError) as info:
        parse("1 1:" + "z" * 500 + "\n")
    assert len(str(info.value)) < 150


# ----------------------------------------------------------------------------- numbers

SPECIAL_STRINGS = [
    "1e23",
    "9007199254740993",
    "9007199254740992",
    "2.2250738585072011e-308",
    "2.2250738585072014e-308",
    "2.2250738585072009e-308",
    "4.9e-324",
    "2.4703282292062327e-324",
    "2.4703282292062328e-324",
    "1e-400",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "0.1",
    ".5",
    "5.",
    "+3",
    "-0",
    "-0.0e10",
    "0e999999999",
    "123456789012345678901234567890",
    "0.30000000000000004",
    "7.3177701707893310e+15",
    "1448997445238699",
    "00000000000000000000000000001.5",
    "1." + "0" * 40 + "1",
    "8.98846567431158e307",
    "3.4028234663852886e+38",
    "1e-5",
    "1E22",
    "1e22",
    "123456789e-22",
]


def parse_values(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Parse each string both as a label and as a value; returns (labels, values)."""
    text = "".join(f"{s} 1:{s}\n" for s in strings)
    X, y = parse(text)
    assert X.nnz == len(strings)
    return y, X.data


def test_special_strings_exact():
    y, values = parse_values(SPECIAL_STRINGS)
    expected = np.array([float(s) for s in SPECIAL_STRINGS])
    assert same_bits(y, expected)
    assert same_bits(values, expected)


def test_many_fallback_tokens():
    # Halfway cases and subnormals go through the float() fallback; more than its initial
    # capacity of 16 makes the kernel grow the list.
    strings = ["9007199254740993", "4.9e-324", "2.2250738585072011e-308", "1e23"] * 30
    strings = [s if k % 2 else "-" + s for k, s in enumerate(strings)]
    y, values = parse_values(strings)
    expected = np.array([float(s) for s in strings])
    assert same_bits(y, expected)
    assert same_bits(values, expected)


def test_float32_reads_nearest_of_double():
    strings = ["0.1", "3.4028234663852886e+38", "1e-45", "16777217"]
    X, _ = parse("".join(f"1 1:{s}\n" for s in strings), dtype=np.float32)
    expected = np.array([float(s) for s in strings]).astype(np.float32)
    assert same_bits(X.data, expected)


@st.composite
def decimal_strings(draw, min_digits=1, max_digits=15):
    n = draw(st.integers(min_digits, max_digits))
    digits = draw(st.text("0123456789", min_size=n, max_size=n))
    if n > 1:
        # A nonzero leading digit makes the significant-digit count exact.
        digits = draw(st.sampled_from("123456789")) + digits[1:]
    point = draw(st.integers(0, n))
    body = digits[:point] + "." + digits[point:] if draw(st.booleans()) else digits
    sign = draw(st.sampled_from(["", "-", "+"]))
    exponent = ""
    if draw(st.booleans()):
        e = draw(st.integers(-345, 330))
        sign_text = draw(st.sampled_from(["", "+"])) if e >= 0 else "-"
        exponent = draw(st.sampled_from("eE")) + sign_text + str(abs(e))
    return sign + body + exponent


@SETTINGS
@given(st.lists(decimal_strings(), min_size=1, max_size=40))
def test_decimal_up_to_15_digits_is_correctly_rounded(strings):
    strings = [s for s in strings if math.isfinite(float(s))]
    assume(strings)
    y, values = parse_values(strings)
    expected = np.array([float(s) for s in strings])
    assert same_bits(y, expected)
    assert same_bits(values, expected)


@SETTINGS
@given(st.lists(decimal_strings(16, 25), min_size=1, max_size=40))
def test_decimal_16_to_25_digits_within_one_ulp(strings):
    strings = [s for s in strings if math.isfinite(float(s))]
    assume(strings)
    y, values = parse_values(strings)
    for s, a, b in zip(strings, y, values, strict=True):
        ref = float(s)
        assert abs(a - ref) <= math.ulp(ref)
        assert abs(b - ref) <= math.ulp(ref)


@SETTINGS
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_repr_of_any_double_reads_back_exactly(values):
    strings = [repr(v) for v in values]
    y, data = parse_values(strings)
    assert same_bits(y, np.array(values))
    assert same_bits(data, np.array(values))


def test_number_kernel_statuses():
    tokens = [
        "1",
        "nan",
        "-Infinity",
        "INF",
        "abc",
        "1e",
        "e5",
        ".",
        "+",
        "1.5x",
        "9007199254740993",
    ]
    buf = " ".join(tokens).encode()
    starts, ends, pos = [], [], 0
    for t in tokens:
        starts.append(pos)
        ends.append(pos + len(t))
        pos += len(t) + 1
    _, status = _parse.parse_floats(
        np.frombuffer(buf, dtype=np.uint8), np.array(starts), np.array(ends)
    )
    n = _parse
    assert status.tolist() == [
        n.NUM_OK,
        n.NUM_NAN,
        n.NUM_INF,
        n.NUM_INF,
        n.NUM_BAD,
        n.NUM_BAD,
        n.NUM_BAD,
        n.NUM_BAD,
        n.NUM_BAD,
        n.NUM_BAD,
        n.NUM_FALLBACK,  # exactly halfway between two doubles
    ]


def test_an_exponent_past_its_clamp_reads_as_python_float(tmp_path):
    # 99,990 digits offset an exponent of 1,000,005: the clamped exponent must not make a
    # finite value of what float() says is infinite (or zero)
    import linsvm

    big = "0." + "0" * 99990 + "1e1000005"
    small = "1" + "0" * 99990 + "e-1000005"
    assert float(big) == math.inf and float(small) == 0.0
    data = tmp_path / "d.txt"
    data.write_text(f"1 1:{small} 2:1\n-1 2:2\n")
    X, _ = linsvm.read_libsvm(data)
    assert X[0, 0] == 0.0
    data.write_text(f"1 1:{big}\n-1 2:2\n")
    with pytest.raises(linsvm.DataFormatError, match=r"d.txt:1: .*inf"):
        linsvm.read_libsvm(data)


# ----------------------------------------------------------------------------- writer


@st.composite
def sparse_problems(draw, dtype=np.float64):
    n_rows = draw(st.integers(0, 8))
    n_cols = draw(st.integers(1, 12))
    width = 32 if dtype == np.float32 else 64
    finite = st.floats(allow_nan=False, allow_infinity=False, width=width)
    values = st.one_of(
        finite,
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, 1.7976931348623157e308, 1e-300])
        if width == 64
        else st.sampled_from([0.0, 1.0, -1.0, 1e-45, 3.4028234663852886e38]),
    )
    dense = np.array(
        draw(
            st.lists(
                st.lists(values, min_size=n_cols, max_size=n_cols), min_size=n_rows, max_size=n_rows
            )
        ),
        dtype=dtype,
    ).reshape(n_rows, n_cols)
    mask = np.array(
        draw(st.lists(st.booleans(), min_size=n_rows * n_cols, max_size=n_rows * n_cols)),
        dtype=bool,
    ).reshape(n_rows, n_cols)
    dense[~mask] = 0
    labels = np.array(
        draw(
            st.lists(
                st.one_of(
                    st.integers(-5, 5).map(float), st.floats(allow_nan=False, allow_infinity=False)
                ),
                min_size=n_rows,
                max_size=n_rows,
            )
        ),
        dtype=np.float64,
    )
    return dense, labels


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("libsvm_roundtrip")


def check_roundtrip(dense, labels, path, dtype, zero_based, sparse_input=True):
    X = sp.csr_matrix(dense) if sparse_input else dense
    write_libsvm(X, labels, path, zero_based=zero_based)
    X2, y2 = read_libsvm(path, dtype=dtype, n_features=dense.shape[1], zero_based=zero_based)
    ref = sp.csr_matrix(dense)
    ref.eliminate_zeros()
    ref.sort_indices()
    assert_csr_valid(X2)
    assert X2.shape == dense.shape
    assert same_bits(X2.data, ref.data.astype(dtype))
    np.testing.assert_array_equal(X2.indices, ref.indices)
    np.testing.assert_array_equal(X2.indptr, ref.indptr)
    assert same_bits(y2, labels)


@SETTINGS
@given(sparse_problems(np.float64), st.booleans(), st.booleans())
def test_roundtrip_float64(scratch, problem, zero_based, sparse_input):
    dense, labels = problem
    check_roundtrip(dense, labels, scratch / "rt64.txt", np.float64, zero_based, sparse_input)


@SETTINGS
@given(sparse_problems(np.float32), st.booleans())
def test_roundtrip_float32(scratch, problem, zero_based):
    dense, labels = problem
    check_roundtrip(dense, labels, scratch / "rt32.txt", np.float32, zero_based)


def test_writer_text_format(tmp_path):
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.5], [0.0, 0.0, 0.0], [-1e-300, 0.0, 3.0]]))
    path = tmp_path / "out.txt"
    write_libsvm(X, [1.0, -1.0, 2.5], path)
    assert path.read_text() == "1 2:2 3:0.5\n-1\n2.5 1:-1e-300 3:3\n"
    write_libsvm(X, np.array([1, -1, 0]), path, zero_based=True, query_id=[4, 4, 9])
    assert path.read_text() == "1 qid:4 1:2 2:0.5\n-1 qid:4\n0 qid:9 0:-1e-300 2:3\n"
    X2, y2, qid = read_libsvm(path, zero_based=True, query_id=True)
    np.testing.assert_array_equal(qid, [4, 4, 9])
    np.testing.assert_array_equal(X2.toarray(), X.toarray())
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary left behind


_WRITTEN_NUMBERS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [-0.0, 0.5, 0.25, 2.0**-30, 2.0**60, 2.0**53 - 1, 2.0**53 + 2, 1e15 + 0.125, 1e16,
     123456.5, 5e-324, 1e-5, 1e-4, 0.17602]
) | st.floats(-1e6, 1e6).map(lambda v: round(v, 5)) | st.builds(
    lambda k, j: k / 2.0**j, st.integers(1, 10**6), st.integers(1, 60))  # (exact ties)


@settings(deadline=None, max_examples=200)
@given(st.lists(_WRITTEN_NUMBERS, min_size=1, max_size=40), st.lists(st.integers(-9, 2**40)),
       st.booleans())
def test_writer_numbers_are_pythons_shortest_text(numbers, query_ids, zero_based):
    """The compiled writer puts every label and value as Python's repr, integers below 2**53
    as digits, and qids as Python's int: row r holds numbers[r] as its label and as the value
    of feature r + 1."""
    n = len(numbers)
    X = sp.csr_matrix((np.array(numbers), np.arange(n), np.arange(n + 1)), shape=(n, n))
    X.eliminate_zeros()
    qid = None if len(query_ids) < n else np.array(query_ids[:n])
    offset = 0 if zero_based else 1

    def text(v: float) -> str:
        return str(int(v)) if v == int(v) and abs(v) < 2**53 and str(v) != "-0.0" else repr(v)

    lines = []
    for r, v in enumerate(numbers):
        head = text(v) if qid is None else f"{text(v)} qid:{qid[r]}"
        lines.append(head + (f" {r + offset}:{text(v)}" if v != 0 else "") + "\n")
    assert libsvm._lines(X, np.array(numbers), qid, offset).decode() == "".join(lines)


def test_writer_rejects_bad_input(tmp_path):
    path = tmp_path / "x.txt"
    with pytest.raises(InvalidInputError):
        write_libsvm(np.array([[np.nan]]), [1.0], path)
    with pytest.raises(InvalidInputError):
        write_libsvm(np.array([[1.0]]), [np.inf], path)
    with pytest.raises(InvalidInputError):
        write_libsvm(np.array([[1.0]]), [1.0, 2.0], path)
    with pytest.raises(InvalidInputError):
        write_libsvm(np.array([1.0, 2.0]), [1.0], path)
    assert not path.exists()


def test_writer_replaces_existing_file(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old content\n")
    write_libsvm(np.eye(2), [1, 2], path)
    assert path.read_text() == "1 1:1\n2 2:1\n"


# ----------------------------------------------------------------------------- compression


SAMPLE = "# sample\n1 qid:2 1:0.5 4:-3e-7\r\n\n-1 2:1\n0.5\n+1 3:1e10 5:7"


@pytest.mark.parametrize(
    ("suffix", "compress"), [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_compressed_input(tmp_path, suffix, compress):
    plain = tmp_path / "sample.txt"
    plain.write_bytes(SAMPLE.encode())
    packed = tmp_path / f"sample{suffix}"
    packed.write_bytes(compress(SAMPLE.encode()))
    X1, y1, q1 = read_libsvm(plain, query_id=True)
    X2, y2, q2 = read_libsvm(packed, query_id=True)
    assert (X1 != X2).nnz == 0 and X1.shape == X2.shape
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(q1, q2)
    # The writer compresses by extension too.
    out = tmp_path / f"out{suffix}"
    write_libsvm(X1, y1, out)
    X3, y3 = read_libsvm(out, n_features=X1.shape[1])
    assert (X1 != X3).nnz == 0
    np.testing.assert_array_equal(y1, y3)


def test_corrupt_compressed_input(tmp_path):
    path = tmp_path / "broken.gz"
    path.write_bytes(b"this is not gzip")
    with pytest.raises(DataFormatError, match="broken.gz:0: cannot decompress"):
        read_libsvm(path)


def test_pathlike_and_str(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("1 1:1\n")
    X1, _ = read_libsvm(path)
    X2, _ = read_libsvm(os.fspath(path))
    assert (X1 != X2).nnz == 0


# ----------------------------------------------------------------------------- real files


def compare_with_sklearn(path: Path) -> None:
    sk_datasets = pytest.importorskip("sklearn.datasets")
    X, y = read_libsvm(path)
    Xs, ys = sk_datasets.load_svmlight_file(str(path), n_features=X.shape[1])
    assert_csr_valid(X)
    assert X.shape == Xs.shape
    assert abs(X - Xs).max() == 0 if X.nnz else Xs.nnz == 0
    np.testing.assert_array_equal(y, ys)


@pytest.mark.parametrize("name", ["a9a", "mushrooms", "svmguide1", "heart_scale"])
def test_real_files_match_sklearn(name, shared_dataset):
    # a9a is bundled in data/: it runs without the shared folder
    compare_with_sklearn(shared_dataset(name))


# ----------------------------------------------------------------------------- messages


@pytest.mark.parametrize(
    "raw, shown",
    [
        (b"1 1:0.5 \xff\xfe:1\n", "bad feature index '\\xff\\xfe'"),
        (b"\x80abc 1:1\n", "bad label '\\x80abc'"),
        (b"1 1:\x01x\n", "bad value '\\x01x' for feature 1"),
        ("1 1:0.5 \u00e9:1\n".encode(), "bad feature index '\u00e9'"),
    ],
)
def test_binary_garbage_is_escaped_once(tmp_path, raw, shown):
    path = tmp_path / "garbage.txt"
    path.write_bytes(raw)
    with pytest.raises(DataFormatError) as err:
        read_libsvm(path)
    message = str(err.value)
    assert message == f"{path}:1: {shown}"
    assert "\\\\" not in message and "\n" not in message


def test_index_zero_is_its_own_error_kind():
    # the command line recognises it and gives advice that fits the command line
    with pytest.raises(ZeroIndexError, match="zero_based=True") as err:
        parse("1 0:1 2:1\n")
    assert isinstance(err.value, DataFormatError) and err.value.line == 1


def test_write_libsvm_in_chunks_gives_the_same_file(tmp_path, monkeypatch):
    """The writer formats a bounded chunk of rows at a time: chunk boundaries anywhere (empty
    rows, a row larger than a chunk) leave the file as one chunk writes it, compressed too."""
    import linsvm.io.libsvm as writer

    rng = np.random.default_rng(3)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=4)
    X = sp.vstack([X, sp.csr_matrix(np.arange(1.0, 41.0)[None, :]), sp.csr_matrix((2, 40))])
    X = sp.csr_matrix(X)
    y = rng.choice([-1.0, 1.0, 3.5], X.shape[0])
    write_libsvm(X, y, tmp_path / "whole.txt")
    write_libsvm(X, y, tmp_path / "whole.txt.gz")
    monkeypatch.setattr(writer, "WRITE_CHUNK_NNZ", 7)
    write_libsvm(X, y, tmp_path / "chunks.txt")
    write_libsvm(X, y, tmp_path / "chunks.txt.gz")
    whole = (tmp_path / "whole.txt").read_bytes()
    assert (tmp_path / "chunks.txt").read_bytes() == whole
    assert gzip.decompress((tmp_path / "chunks.txt.gz").read_bytes()) == whole
    assert gzip.decompress((tmp_path / "whole.txt.gz").read_bytes()) == whole


def test_write_libsvm_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """Traced memory while writing 200k non-zeros in chunks of 16k stays near one chunk's text
    and a copy of the matrix (formatting the whole file at once held some 300 bytes a
    non-zero: 60 MB here)."""
    import tracemalloc

    import linsvm.io.libsvm as writer

    monkeypatch.setattr(writer, "WRITE_CHUNK_NNZ", 1 << 14, raising=False)
    X = sp.random(20_000, 1_000, density=0.01, format="csr", random_state=5)
    y = np.where(np.arange(20_000) % 3 == 0, 1.0, -1.0)
    tracemalloc.start()
    try:
        write_libsvm(X, y, tmp_path / "big.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert X.nnz == 200_000
    assert peak < 20 << 20, peak >> 20
