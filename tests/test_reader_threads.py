"""The LIBSVM reader in blocks and threads gives exactly the one-piece result.

`read_libsvm` / `parse_libsvm_bytes` read text in blocks of `libsvm.BLOCK_SIZE` bytes, cut
each block into pieces of at least `libsvm.MIN_PIECE_SIZE` bytes and parse the pieces in
n_jobs threads. Here both sizes are made tiny, so that lines straddle blocks and pieces, and
every result (arrays, dtypes, shape, labels, qids) and every error (text and line) is compared
with the serial parse of the whole text as one piece.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.errors import DataFormatError, InvalidInputError, ZeroIndexError
from linsvm.io import libsvm, parse_libsvm_bytes, read_libsvm

HUGE = 2**40  # one block, one piece: the serial parse of the whole text


@contextlib.contextmanager
def sizes(block: int, piece: int = 1):
    with (
        mock.patch.object(libsvm, "BLOCK_SIZE", block),
        mock.patch.object(libsvm, "MIN_PIECE_SIZE", piece),
    ):
        yield


def reference(text: bytes, **options):
    """The whole text parsed as one piece on the calling thread."""
    with sizes(HUGE, HUGE):
        return parse_libsvm_bytes(text, "mem.txt", n_jobs=1, **options)


def assert_identical(got, expected) -> None:
    """Same shape, dtypes and bits of every array (X's data, indices, indptr; y; qid)."""
    assert len(got) == len(expected)
    X, Xe = got[0], expected[0]
    assert X.shape == Xe.shape
    assert X.has_sorted_indices
    for a, b in ((X.data, Xe.data), (X.indices, Xe.indices), (X.indptr, Xe.indptr),
                 *zip(got[1:], expected[1:], strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def error_of(call) -> tuple[type, int, str]:
    with pytest.raises(DataFormatError) as info:
        call()
    return type(info.value), info.value.line, info.value.what


# ----------------------------------------------------------------------------- generated text

NUMBERS = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.sampled_from(["0.5", "-.25", "1e-3", "+3", "-0", "1.", "9007199254740993", "4.9e-324",
                     "2.2250738585072011e-308", "1e23", "0.30000000000000004"]),
)
ENDINGS = st.sampled_from(["\n", "\r\n", " \n", "\t# comment 1:2\n", "#c\r\n"])


@st.composite
def rows(draw, min_index: int = 0) -> str:
    """One line of a LIBSVM file: a row, a blank line or a comment, with its line ending."""
    kind = draw(st.sampled_from(["row"] * 6 + ["blank", "comment"]))
    end = draw(ENDINGS)
    if kind == "blank":
        return draw(st.sampled_from(["", "  ", "\t"])) + end
    if kind == "comment":
        return "# a comment 3:4" + end
    parts = [draw(NUMBERS)]
    if draw(st.booleans()):
        parts.append(f"qid:{draw(st.integers(-5, 2**40))}")
    indices = sorted(draw(st.sets(st.integers(min_index, 3000), max_size=8)))
    parts += [f"{i}:{draw(NUMBERS)}" for i in indices]
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    return draw(st.sampled_from(["", " "])) + sep.join(parts) + end


@st.composite
def files(draw, min_index: int = 0) -> bytes:
    lines = draw(st.lists(rows(min_index), max_size=40))
    text = "".join(lines)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no final newline
    return text.encode()


OPTIONS = st.fixed_dictionaries({
    "dtype": st.sampled_from([np.float64, np.float32]),
    "zero_based": st.sampled_from([True, "auto"]),
    "query_id": st.booleans(),
})


@settings(max_examples=150, deadline=None)
@given(text=files(), options=OPTIONS, block=st.integers(1, 80), piece=st.integers(1, 40),
       n_jobs=st.sampled_from([1, 2, 3]))
def test_any_blocks_and_threads_give_the_serial_result(text, options, block, piece, n_jobs):
    try:
        expected = reference(text, **options)
    except DataFormatError:
        # float32 data with a value beyond its range: the same first error either way
        assert options["dtype"] == np.float32
        expected_error = error_of(lambda: reference(text, **options))
        with sizes(block, piece):
            got_error = error_of(
                lambda: parse_libsvm_bytes(text, "mem.txt", n_jobs=n_jobs, **options))
        assert got_error == expected_error and "float32" in got_error[2]
        return
    with sizes(block, piece):
        got = parse_libsvm_bytes(text, "mem.txt", n_jobs=n_jobs, **options)
    assert_identical(got, expected)


@settings(max_examples=60, deadline=None)
@given(text=files(min_index=1), n_features=st.sampled_from([None, 3000, 2**31 + 1]),
       block=st.integers(1, 80), piece=st.integers(1, 40), n_jobs=st.sampled_from([1, 2]))
def test_one_based_and_n_features(text, n_features, block, piece, n_jobs):
    expected = reference(text, n_features=n_features)
    with sizes(block, piece):
        got = parse_libsvm_bytes(text, "mem.txt", n_features=n_features, n_jobs=n_jobs)
    assert_identical(got, expected)


@settings(max_examples=40, deadline=None)
@given(text=files(), block=st.integers(1, 80), n_jobs=st.sampled_from([1, 2]),
       suffix=st.sampled_from(["", ".gz", ".bz2", ".xz"]))
def test_files_read_in_blocks_give_the_serial_result(tmp_path_factory, text, block, n_jobs,
                                                     suffix):
    compress = {"": bytes, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
    path = tmp_path_factory.mktemp("blocks") / f"data.txt{suffix}"
    path.write_bytes(compress[suffix](text))
    expected = reference(text, zero_based=True, query_id=True)
    with sizes(block):
        got = read_libsvm(path, zero_based=True, query_id=True, n_jobs=n_jobs)
    assert_identical(got, expected)


@settings(max_examples=100, deadline=None)
@given(text=files(min_index=1), bad=st.sampled_from([
    "1 1:1 abc", "x 1:1", "1 1:nan", "1 3:1 2:1", "1 2:1 2:1", "1 0:1", "1 1:1e999",
    "1.8e308 1:1", "1 1:1 qid:3", "1 1:1.7976931348623159e308", "1:1", "1 1:1 2:1 3:x",
]), where=st.floats(0, 1), block=st.integers(1, 60), n_jobs=st.sampled_from([1, 2, 3]),
   crlf=st.booleans())
def test_errors_name_the_line_of_the_whole_file(text, bad, where, block, n_jobs, crlf):
    lines = text.split(b"\n")
    cut = int(where * len(lines))
    before = b"".join(line + b"\n" for line in lines[:cut])
    faulty = before + bad.encode() + (b"\r\n" if crlf else b"\n") + b"\n".join(lines[cut:])
    expected = error_of(lambda: reference(faulty))
    assert expected[1] == before.count(b"\n") + 1  # the valid lines before it are not at fault
    with sizes(block, 1):
        got = error_of(lambda: parse_libsvm_bytes(faulty, "mem.txt", n_jobs=n_jobs))
    assert got == expected


# ----------------------------------------------------------------------------- cases


def many_rows(n: int) -> str:
    return "".join(f"{k % 3 - 1} {k % 7 + 1}:{k}.5 {k % 7 + 9}:-{k}e-3\n" for k in range(n))


@pytest.mark.parametrize("n_jobs", [1, 2, 4])
@pytest.mark.parametrize("block", [1, 3, 17, 64, 1000])
def test_error_deep_in_a_later_block(tmp_path, n_jobs, block):
    text = many_rows(500) + "1 4:1 2:1\n" + many_rows(100)
    path = tmp_path / "late.txt"
    path.write_text(text)
    with sizes(block, 5), pytest.raises(DataFormatError) as info:
        read_libsvm(path, n_jobs=n_jobs)
    assert str(info.value) == f"{path}:501: indices must be ascending: 2 after 4"


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_first_fault_wins_across_pieces(n_jobs):
    # a fallback infinity (a later piece may fail too: the earlier line is reported)
    text = (many_rows(50) + "1 1:1.7976931348623159e308\n" + many_rows(50) + "x\n").encode()
    with sizes(32, 8):
        err = error_of(lambda: parse_libsvm_bytes(text, "m", n_jobs=n_jobs))
    assert err == (DataFormatError, 51, "value is infinite (feature 1)")
    text = (many_rows(30) + "1 0:1\n" + many_rows(30)).encode()
    with sizes(32, 8):
        err = error_of(lambda: parse_libsvm_bytes(text, "m", n_jobs=n_jobs))
    assert err[:2] == (ZeroIndexError, 31)


def test_auto_zero_based_limit_names_the_first_line_of_the_largest_index():
    text = (many_rows(40) + "1 20:1\n" + many_rows(40) + "1 0:1 20:2\n").encode()
    expected = error_of(lambda: reference(text, zero_based="auto", n_features=20))
    assert expected[1] == 41
    for n_jobs in (1, 2):
        with sizes(16, 4):
            got = error_of(lambda n=n_jobs: parse_libsvm_bytes(
                text, "mem.txt", zero_based="auto", n_features=20, n_jobs=n))
        assert got == expected


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_lines_longer_than_a_block(tmp_path, n_jobs):
    long_row = "1 " + " ".join(f"{i}:{i}.25" for i in range(1, 400)) + "\n"
    text = many_rows(20) + long_row + many_rows(5) + long_row.rstrip("\n")
    path = tmp_path / "long.txt"
    path.write_text(text)
    expected = reference(text.encode())
    with sizes(64, 16):
        assert_identical(read_libsvm(path, n_jobs=n_jobs), expected)


def test_crlf_and_missing_final_newline(tmp_path):
    text = many_rows(300).replace("\n", "\r\n").rstrip("\r\n")
    path = tmp_path / "crlf.txt"
    path.write_bytes(text.encode())
    expected = reference(text.encode())
    assert expected[0].shape[0] == 300
    for block in (1, 2, 7, 100):
        for n_jobs in (1, 2):
            with sizes(block, 3):
                assert_identical(read_libsvm(path, n_jobs=n_jobs), expected)


@pytest.mark.parametrize("name", ["mushrooms", "svmguide1", "a9a", "heart_scale"])
def test_real_files_in_small_blocks(name, shared_dataset):
    # mushrooms has trailing blanks, svmguide1 no final newline
    path = shared_dataset(name)
    expected = reference(path.read_bytes())
    for block, n_jobs in ((4096, 2), (65536, 3), (100_000, 1)):
        with sizes(block, 1000):
            assert_identical(read_libsvm(path, n_jobs=n_jobs), expected)


def test_index_dtype_grows_to_int64_in_a_later_block():
    big = 2**31 + 5
    text = (many_rows(100) + f"1 {big}:2\n" + many_rows(10)).encode()
    expected = reference(text)
    assert expected[0].indices.dtype == np.int64
    for n_jobs in (1, 2):
        with sizes(64, 16):
            assert_identical(parse_libsvm_bytes(text, n_jobs=n_jobs), expected)
    # int32 max as written: 1-based fits int32; with an index 0 ("auto") it does not
    for extra, dtype in (("", np.int32), ("1 0:1\n", np.int64)):
        text = (many_rows(50) + "1 2147483647:1\n" + extra + many_rows(10)).encode()
        expected = reference(text, zero_based="auto")
        assert expected[0].indices.dtype == dtype
        with sizes(64, 16):
            assert_identical(parse_libsvm_bytes(text, zero_based="auto", n_jobs=2), expected)


def test_empty_and_blank_inputs():
    for text in (b"", b"\n\n\n", b"# c\r\n# d", b"   "):
        expected = reference(text, n_features=5, query_id=True)
        for n_jobs in (1, 2):
            with sizes(1, 1):
                got = parse_libsvm_bytes(text, n_features=5, query_id=True, n_jobs=n_jobs)
            assert_identical(got, expected)
            assert got[0].shape == (0, 5)


@pytest.mark.parametrize("suffix, compress", [
    (".gz", gzip.compress), (".xz", lzma.compress),
    (".bz2", lambda data: bz2.compress(data, compresslevel=1)),  # 100 kB blocks
])
def test_corrupt_stream_after_good_blocks(tmp_path, suffix, compress):
    text = many_rows(20_000).encode()
    packed = compress(text)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(packed[: len(packed) // 2])  # truncated
    with sizes(4096, 256), pytest.raises(DataFormatError) as info:
        read_libsvm(path, n_jobs=2)
    assert str(info.value).startswith(f"{path}:0: cannot decompress {suffix} data")
    # a fault in the text before the corrupt part is reported first
    text = many_rows(10).encode() + b"bad 1:1\n" + many_rows(20_000).encode()
    packed = compress(text)
    path.write_bytes(packed[: len(packed) // 2])
    with sizes(4096, 256), pytest.raises(DataFormatError) as info:
        read_libsvm(path, n_jobs=2)
    assert info.value.line == 11 and info.value.what == "bad label 'bad'"


def test_bad_n_jobs(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("1 1:1\n")
    for bad in (0, 1.5, "2"):
        with pytest.raises(InvalidInputError, match="n_jobs"):
            read_libsvm(path, n_jobs=bad)
        with pytest.raises(InvalidInputError, match="n_jobs"):
            parse_libsvm_bytes(b"1 1:1\n", n_jobs=bad)
    X, _ = read_libsvm(path, n_jobs=None)
    assert X.shape == (1, 1)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_of_unknown_size(tmp_path):
    text = many_rows(3000).encode()
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            f.write(text)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with sizes(1000, 100):
            got = read_libsvm(fifo, n_jobs=2)
    finally:
        writer.join()
    assert_identical(got, reference(text))
