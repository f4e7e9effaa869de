"""The binary cache: written in a stream from LIBSVM text, read back exactly.

A cache read whole (`Cache.read`, `read_libsvm`) gives the arrays `read_libsvm` gives for the
text, bit for bit and dtype for dtype; each block is the matching row range, over the mapped
file; a damaged, foreign or newer file is refused in one line naming it; a failed conversion
leaves the target as it was; conversion memory does not grow with the data.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import struct
import subprocess
import sys
import textwrap
import warnings
import zlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.cli import main
from linsvm.errors import DataFormatError, InvalidInputError, LinsvmError
from linsvm.io import (
    CacheFormatError,
    libsvm,
    open_cache,
    read_libsvm,
    write_cache,
)
from linsvm.io import cache as cache_module


@contextlib.contextmanager
def reader_sizes(block: int, piece: int = 1):
    """The text reader's block and piece sizes made tiny: lines straddle blocks and pieces."""
    with (
        mock.patch.object(libsvm, "BLOCK_SIZE", block),
        mock.patch.object(libsvm, "MIN_PIECE_SIZE", piece),
    ):
        yield


def assert_identical(got, expected) -> None:
    """Same shape, dtypes and bytes of X's data, indices, indptr and of y."""
    (X, y), (Xe, ye) = got, expected
    assert X.shape == Xe.shape
    assert X.has_sorted_indices
    for a, b in ((X.data, Xe.data), (X.indices, Xe.indices), (X.indptr, Xe.indptr), (y, ye)):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def assert_block_matches(cache, k: int, X, y) -> None:
    """Block k holds X's and y's rows row_starts[k]:row_starts[k + 1]."""
    Xk, yk = cache.block(k)
    r0, r1 = int(cache.row_starts[k]), int(cache.row_starts[k + 1])
    part = X[r0:r1]
    assert Xk.shape == (r1 - r0, cache.n_features) == part.shape
    assert Xk.indices.dtype == Xk.indptr.dtype == cache.index_dtype
    assert Xk.data.dtype == cache.dtype
    assert np.array_equal(Xk.indptr, part.indptr)
    assert np.array_equal(Xk.indices, part.indices)
    assert Xk.data.tobytes() == part.data.astype(cache.dtype).tobytes()
    assert yk.tobytes() == y[r0:r1].tobytes()


def convert(tmp_path, text: bytes, name: str = "data.txt", **options):
    source = tmp_path / name
    source.write_bytes(text)
    target = tmp_path / "data.lsvc"
    summary = write_cache(source, target, **options)
    return source, target, summary


# ----------------------------------------------------------------------------- round trips

NUMBERS = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.sampled_from(["0.5", "-.25", "1e-3", "-0", "4.9e-324", "1e23", "3.4028236e38"]),
)


@st.composite
def lines(draw) -> str:
    """A row (maybe label only, maybe with a qid), a blank line or a comment."""
    kind = draw(st.sampled_from(["row"] * 6 + ["label", "blank", "comment"]))
    end = draw(st.sampled_from(["\n", "\r\n", " # c 1:2\n"]))
    if kind == "blank":
        return end
    if kind == "comment":
        return "# 3:4" + end
    label = draw(NUMBERS)
    qid = draw(st.sampled_from(["", "", f" qid:{draw(st.integers(0, 99))}"]))
    if kind == "label":
        return label + qid + end
    columns = sorted(draw(st.sets(st.integers(1, 60), max_size=8)))
    features = "".join(f" {j}:{draw(NUMBERS)}" for j in columns)
    return label + qid + features + end


TEXTS = st.lists(lines(), max_size=40).map(lambda ls: "".join(ls).encode())


@settings(max_examples=60, deadline=None)
@given(
    text=TEXTS,
    dtype=st.sampled_from([np.float64, np.float32]),
    block_bytes=st.sampled_from([1, 40, 200, 64 << 20]),
    n_jobs=st.sampled_from([1, 2]),
)
def test_round_trip_exact(tmp_path_factory, text, dtype, block_bytes, n_jobs):
    tmp_path = tmp_path_factory.mktemp("rt")
    source = tmp_path / "data.txt"
    source.write_bytes(text)
    try:
        read_libsvm(source, dtype=dtype)
    except DataFormatError as exc:
        # a value beyond float32's range: the conversion refuses it at the same line
        assert dtype == np.float32 and "beyond the range of float32" in exc.what
        with pytest.raises(DataFormatError) as caught, reader_sizes(64):
            write_cache(source, tmp_path / "data.lsvc", dtype=dtype, block_bytes=block_bytes,
                        n_jobs=n_jobs)
        assert str(caught.value) == str(exc)
        assert not (tmp_path / "data.lsvc").exists()
        return
    with reader_sizes(64):
        source, target, summary = convert(tmp_path, text, dtype=dtype, block_bytes=block_bytes,
                                          n_jobs=n_jobs)
        expected = read_libsvm(source, dtype=dtype)
    X, y = expected
    assert (summary.n_rows, summary.n_features, summary.nnz) == (X.shape[0], X.shape[1], X.nnz)
    with open_cache(target) as cache:
        assert (cache.n_rows, cache.n_features, cache.nnz) == (X.shape[0], X.shape[1], X.nnz)
        assert cache.n_blocks == summary.n_blocks == len(cache.block_rows)
        assert cache.dtype == np.dtype(dtype)
        assert_identical(cache.read(n_jobs=n_jobs), expected)
        assert cache.labels().tobytes() == y.tobytes()
        for k in range(cache.n_blocks):
            assert_block_matches(cache, k, X, y)
        if cache.n_blocks >= 2:
            k0, k1 = 1, cache.n_blocks
            r0 = int(cache.row_starts[k0])
            Xr, yr = cache.blocks(k0, k1, n_jobs=n_jobs)
            assert_identical((Xr, yr), (X[r0:], y[r0:]))
    # read_libsvm reads the cache in the text's place, for either dtype
    for as_dtype in (np.float64, np.float32):
        try:
            from_text = read_libsvm(source, dtype=as_dtype)
        except DataFormatError as exc:
            # a float64 cache read as float32 refuses what the text reader refuses
            assert "beyond the range of float32" in exc.what
            with pytest.raises(InvalidInputError, match="is beyond the range of float32"):
                read_libsvm(target, dtype=as_dtype, n_jobs=n_jobs)
            continue
        got = read_libsvm(target, dtype=as_dtype, n_jobs=n_jobs)
        if as_dtype == dtype or as_dtype == np.float32:
            assert_identical(got, from_text)


def test_values_beyond_float32_are_refused_not_made_infinite(tmp_path):
    """A finite value that float32 cannot hold would turn infinite (the value lost, with a
    RuntimeWarning from the cast): converting to a float32 cache refuses it at its line, and
    a float64 cache read as float32 names its row."""
    text = b"1 1:0.5\n\n-1 2:1 7:1e39\n1 3:1\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataFormatError) as caught:
            convert(tmp_path, text, dtype=np.float32, block_bytes=40)
        assert (caught.value.line, caught.value.what) == (
            3, "value '1e39' is beyond the range of float32 (feature 7); read the data as float64")
        _, target, _ = convert(tmp_path, text, block_bytes=40)  # float64 holds it
        with pytest.raises(InvalidInputError) as refused:
            read_libsvm(target, dtype=np.float32)
        assert str(refused.value) == (
            f"{target}: row 2: value 1e+39 is beyond the range of float32 (feature 7); read the "
            "data as float64")
        with open_cache(target) as cache:
            assert cache.read()[0].data.tolist() == [0.5, 1.0, 1e39, 1.0]
        below = float(np.nextafter(libsvm.FLOAT32_OVERFLOW, 0.0))
        _, target, _ = convert(tmp_path, f"1 1:{below!r}\n".encode())
        X, _ = read_libsvm(target, dtype=np.float32)  # rounds to float32's largest
        assert X.data.tolist() == [float(np.finfo(np.float32).max)]


def test_many_blocks_and_threads(tmp_path):
    """A file of many blocks, read whole in threads and block by block."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(3000):
        cols = np.sort(rng.choice(5000, size=rng.integers(0, 30), replace=False)) + 1
        rows.append(f"{i % 7 - 3} " + " ".join(f"{c}:{rng.normal():.6g}" for c in cols))
    text = ("\n".join(rows) + "\n").encode()
    with reader_sizes(4096):
        source, target, summary = convert(tmp_path, text, block_bytes=4096, n_jobs=2)
    X, y = read_libsvm(source)
    assert summary.n_blocks > 50
    with open_cache(target) as cache:
        assert_identical(cache.read(n_jobs=2), (X, y))
        assert_identical(cache.read(n_jobs=1), (X, y))
        for k in range(cache.n_blocks):
            assert_block_matches(cache, k, X, y)
        sizes = cache.block_rows[:-1] * (8 + 4) + cache.block_nnz[:-1] * 12
        assert sizes.max() < 4096 + 400  # about block_bytes each (a row may overshoot)


@pytest.mark.parametrize("suffix, compress", [
    (".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress),
])
def test_compressed_sources(tmp_path, suffix, compress):
    text = b"1 1:0.5 7:2\n-1 qid:4 2:3\n\n2\n1 3:1e-300 9:4\n" * 50
    source, target, _ = convert(tmp_path, compress(text), name="data.txt" + suffix,
                                block_bytes=256)
    assert_identical(read_libsvm(target), read_libsvm(source))
    assert_identical(open_cache(target).read(), read_libsvm(source))


def test_empty_and_label_only_files(tmp_path):
    _, target, summary = convert(tmp_path, b"")
    assert (summary.n_rows, summary.n_blocks) == (0, 0)
    with open_cache(target) as cache:
        assert_identical(cache.read(), read_libsvm(tmp_path / "data.txt"))
    _, target, summary = convert(tmp_path, b"# nothing\n\n1\n-1\n", block_bytes=1)
    assert (summary.n_rows, summary.n_features, summary.nnz, summary.n_blocks) == (2, 0, 0, 2)
    assert_identical(read_libsvm(target), read_libsvm(tmp_path / "data.txt"))


@pytest.mark.parametrize("zero_based", [True, "auto"])
@pytest.mark.parametrize("has_zero", [True, False])
def test_zero_based_and_auto(tmp_path, zero_based, has_zero):
    """With "auto" the blocks are written as 1-based until an index 0 shows (late, after
    blocks were written) that the text is 0-based: the result is the text's either way."""
    late = b"3 0:1 2:2\n" if has_zero else b"3 1:1 2:2\n"
    text = b"1 1:0.5 4:2\n-1 2:3\n" * 20 + late
    source, target, summary = convert(tmp_path, text, block_bytes=64, zero_based=zero_based)
    assert summary.n_blocks > 3
    expected = read_libsvm(source, zero_based=zero_based)
    assert_identical(read_libsvm(target), expected)
    with open_cache(target) as cache:
        assert cache.zero_based == (zero_based is True or has_zero)
        for k in range(cache.n_blocks):
            assert_block_matches(cache, k, *expected)


def test_index_beyond_int32(tmp_path):
    """A late index beyond int32 makes the whole cache int64 (the blocks written before it
    are rewritten), as read_libsvm's arrays are then int64."""
    text = b"1 1:0.5 4:2\n-1 2:3\n" * 20 + b"2 3000000000:1.5\n1 5:1\n"
    source, target, summary = convert(tmp_path, text, block_bytes=64)
    X, y = read_libsvm(source)
    assert X.indices.dtype == np.int64 and X.shape[1] == 3000000000
    assert summary.n_features == 3000000000
    with open_cache(target) as cache:
        assert cache.index_dtype == np.int64
        assert_identical(cache.read(), (X, y))
        for k in range(cache.n_blocks):
            assert_block_matches(cache, k, X, y)


def test_qid_ignored_and_refused_on_read(tmp_path):
    source, target, _ = convert(tmp_path, b"1 qid:3 1:1\n2 qid:4 2:1\n")
    assert_identical(read_libsvm(target), read_libsvm(source))
    with pytest.raises(InvalidInputError, match="data.lsvc: a linsvm cache keeps no qid"):
        read_libsvm(target, query_id=True)


def test_a_cache_is_known_by_its_bytes_not_its_name(tmp_path):
    source, target, _ = convert(tmp_path, b"1 1:1 3:2\n2 2:1\n")
    for name in ("data.txt", "data.gz", "data.xz", "data"):
        renamed = tmp_path / "renamed" / name
        renamed.parent.mkdir(exist_ok=True)
        renamed.write_bytes(target.read_bytes())
        assert_identical(read_libsvm(renamed), read_libsvm(source))


def test_read_libsvm_options_on_a_cache(tmp_path):
    source, target, _ = convert(tmp_path, b"1 1:1 3:2\n2 2:1\n")
    assert_identical(read_libsvm(target, n_features=10), read_libsvm(source, n_features=10))
    with pytest.raises(DataFormatError) as info:
        read_libsvm(target, n_features=2)
    assert str(info.value) == f"{target}:1: feature index 3 too large (n_features=2)"


def test_block_is_a_view_of_the_file(tmp_path):
    _, target, _ = convert(tmp_path, b"1 1:1 3:2\n2 2:1\n" * 100, block_bytes=500)
    cache = open_cache(target)
    X, y = cache.block(1)
    for a in (X.data, X.indices, X.indptr, y):
        assert not a.flags.writeable and not a.flags.owndata
        assert a.ctypes.data % 64 == 0  # the mapping starts on a page
    expected = X.toarray()
    cache.prefetch(2)
    cache.release(1)  # the pages are read again from the page cache when used
    assert np.array_equal(X.toarray(), expected)
    cache.close()  # the arrays keep the mapping alive
    assert np.array_equal(X.toarray(), expected) and expected.shape == (cache.block_rows[1], 3)
    with pytest.raises(IndexError):
        open_cache(target).block(cache.n_blocks)


def test_arrays_start_on_64_byte_boundaries(tmp_path):
    _, target, _ = convert(tmp_path, b"1 1:1 3:2\n2 2:1\n-1\n" * 50, block_bytes=300,
                           dtype=np.float32)
    cache = open_cache(target)
    offsets = cache._table["offset"]
    assert np.all(offsets % 64 == 0)
    for k in range(cache.n_blocks):
        n_rows, nnz = int(cache.block_rows[k]), int(cache.block_nnz[k])
        layout = cache_module._layout(n_rows, nnz, 4, 4)
        assert all(at % 64 == 0 for at in layout[:4])


# ----------------------------------------------------------------------------- refusals

GOOD_TEXT = b"1 1:0.5 3:2\n-1 2:1\n2 1:1 2:2 3:3\n" * 30


def refused(path) -> str:
    """The one-line message with which open_cache and read_libsvm refuse `path`."""
    with pytest.raises(CacheFormatError) as info:
        open_cache(path).read()
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


@pytest.fixture
def good_cache(tmp_path):
    _, target, summary = convert(tmp_path, GOOD_TEXT, block_bytes=200)
    assert summary.n_blocks >= 3
    return target


def test_truncated_files_are_refused(good_cache, tmp_path):
    data = good_cache.read_bytes()
    cache = open_cache(good_cache)
    mid_block = int(cache._table["offset"][1]) + 10
    table = len(data) - 20
    for size in (0, 5, 16, 100, 127, 128, mid_block, table, len(data) - 1):
        cut = tmp_path / f"cut{size}.lsvc"
        cut.write_bytes(data[:size])
        message = refused(cut)
        assert ("empty file" if size == 0 else "truncated") in message, message
        if size > 0:  # read_libsvm sees (a start of) the magic and refuses it the same way
            with pytest.raises(CacheFormatError, match="truncated"):
                read_libsvm(cut)  # (under 16 bytes it was parsed as text: "bad label")


def test_flipped_bytes_are_refused(good_cache, tmp_path):
    data = bytearray(good_cache.read_bytes())
    cache = open_cache(good_cache)
    offset, length = int(cache._table["offset"][1]), int(cache._table["length"][1])
    for where, expected in [
        (offset + length // 2, "block 1 is corrupt (checksum mismatch)"),
        (offset, "block 1 is corrupt (checksum mismatch)"),
        (50, "corrupt cache header (checksum mismatch)"),
        (120, "corrupt cache header (checksum mismatch)"),
        (len(data) - 30, "corrupt block table (checksum mismatch)"),
    ]:
        bad = bytearray(data)
        bad[where] ^= 0x10
        path = tmp_path / f"flip{where}.lsvc"
        path.write_bytes(bytes(bad))
        assert refused(path) == f"{path}: {expected}"
        with pytest.raises(CacheFormatError, match="checksum"):
            read_libsvm(path)
    # the other blocks of a cache with one bad block are still served
    path = tmp_path / f"flip{offset + length // 2}.lsvc"
    damaged = open_cache(path)
    damaged.block(0)
    with pytest.raises(CacheFormatError, match="block 1"):
        damaged.block(1)


def test_foreign_newer_and_text_files_are_refused(good_cache, tmp_path):
    text = tmp_path / "data.txt"
    assert refused(text) == f"{text}: not a linsvm cache (its first bytes are not a cache's)"
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    assert "not a linsvm cache" in refused(foreign)
    empty = tmp_path / "empty.lsvc"
    empty.write_bytes(b"")
    assert refused(empty) == f"{empty}: empty file, not a linsvm cache"
    newer = bytearray(good_cache.read_bytes())
    newer[16:20] = struct.pack("<I", 2)
    path = tmp_path / "newer.lsvc"
    path.write_bytes(bytes(newer))
    assert "cache format version 2 is newer than this linsvm reads (version 1)" in refused(path)
    trailing = tmp_path / "trailing.lsvc"
    trailing.write_bytes(good_cache.read_bytes() + b"\0")
    assert "1 bytes after its end" in refused(trailing)


def _rechecksum(data: bytearray, cache) -> None:
    """Recompute the blocks', table's and header's CRCs after an edit (a crafted file)."""
    table = cache._table.copy()
    for k in range(cache.n_blocks):
        o, n = int(table["offset"][k]), int(table["length"][k])
        table["crc"][k] = zlib.crc32(bytes(data[o : o + n]))
    t = int(struct.unpack_from("<q", data, 72)[0])
    data[t : t + table.nbytes] = table.tobytes()
    data[96:100] = struct.pack("<I", zlib.crc32(table.tobytes()))
    data[124:128] = struct.pack("<I", zlib.crc32(bytes(data[:124])))


def test_crafted_indices_are_refused(good_cache, tmp_path):
    """Checksums can be forged; indices out of range or out of order are still refused, so a
    crafted file cannot make a kernel read outside w."""
    cache = open_cache(good_cache)
    offset = int(cache._table["offset"][0])
    n_rows, nnz = int(cache.block_rows[0]), int(cache.block_nnz[0])
    at = cache_module._layout(n_rows, nnz, 4, 8)
    for value, what in ((3, "row 0"), (-1, "row 0")):
        data = bytearray(good_cache.read_bytes())
        data[offset + at[2] : offset + at[2] + 4] = struct.pack("<i", value)
        _rechecksum(data, cache)
        path = tmp_path / f"crafted{value}.lsvc"
        path.write_bytes(bytes(data))
        assert refused(path) == f"{path}: block 0 is invalid ({what})"
    # a forged NaN value: said so
    data = bytearray(good_cache.read_bytes())
    data[offset + at[3] : offset + at[3] + 8] = struct.pack("<d", float("nan"))
    _rechecksum(data, cache)
    path = tmp_path / "crafted-nan.lsvc"
    path.write_bytes(bytes(data))
    assert refused(path) == f"{path}: block 0 is invalid (row 0: NaN or infinity)"


def _indptr_at(cache, k: int) -> int:
    """The file position of block k's row pointer (int32 indices)."""
    n_rows, nnz = int(cache.block_rows[k]), int(cache.block_nnz[k])
    return int(cache._table["offset"][k]) + cache_module._layout(n_rows, nnz, 4, 8)[1]


def test_a_forged_row_pointer_that_does_not_start_at_0_is_refused(good_cache, tmp_path):
    """With the checksums forged, indptr[0] = 3 of a block read whole gave rows of the
    entries after it and left the caller's last entries unwritten (uninitialised memory in
    the matrix read_libsvm returned, no error)."""
    cache = open_cache(good_cache)
    data = bytearray(good_cache.read_bytes())
    struct.pack_into("<i", data, _indptr_at(cache, 0), 3)
    _rechecksum(data, cache)
    path = tmp_path / "crafted-indptr.lsvc"
    path.write_bytes(bytes(data))
    with pytest.raises(CacheFormatError, match=r"block 0 is invalid \(indptr\)"):
        read_libsvm(path)
    with open_cache(path) as forged, pytest.raises(CacheFormatError, match="indptr"):
        forged.row_pointer(0)


def test_a_damaged_row_pointer_is_a_checksum_error_when_blocks_are_cut(good_cache, tmp_path):
    """Cutting stored blocks into pieces (block minimisation on a small budget) reads their
    row offsets unchecked: a damaged one was a traceback from scipy's constructor."""
    from linsvm.io.blocks import CacheBlocks

    cache = open_cache(good_cache)
    data = bytearray(good_cache.read_bytes())
    struct.pack_into("<i", data, _indptr_at(cache, 1), 7)
    path = tmp_path / "damaged-indptr.lsvc"
    path.write_bytes(bytes(data))
    with open_cache(path) as damaged:
        with pytest.raises(CacheFormatError, match=r"block 1 is corrupt \(checksum mismatch\)"):
            CacheBlocks(damaged).split(64)


def test_a_damaged_label_is_a_checksum_error_in_block_training(good_cache, tmp_path):
    """A cache's labels are read for the classes before any block's checksum: one flipped
    bit was "class label 0.5 of instance 4 is not an integer" (the command line's check)."""
    from linsvm.cli import integer_labels
    from linsvm.io.blocks import CacheBlocks
    from linsvm.outofcore import train_blocks

    cache = open_cache(good_cache)
    data = bytearray(good_cache.read_bytes())
    data[int(cache._table["offset"][0]) + 8 * 3 + 6] ^= 0x10  # row 3's label: 1 -> 0.5
    path = tmp_path / "damaged-label.lsvc"
    path.write_bytes(bytes(data))
    with open_cache(path) as damaged, pytest.raises(
            CacheFormatError, match=r"block 0 is corrupt \(checksum mismatch\)"):  # fmt: skip
        train_blocks(CacheBlocks(damaged), max_block_bytes=1,
                     labels_check=lambda y: integer_labels(y, str(path)))  # fmt: skip


def test_block_training_on_a_pipe_reads_every_row(tmp_path):
    """train --memory on a pipe looked for a cache's magic by reading the pipe, then
    converted what was left of it: the first rows were lost, without a word."""
    rng = np.random.default_rng(3)
    rows = [f"{1 if rng.random() < 0.5 else -1} {j}:{rng.normal():.3g}"
            for j in rng.integers(1, 30, size=5000)]  # fmt: skip
    text = tmp_path / "train.txt"
    text.write_text("\n".join(rows) + "\n")
    command = [sys.executable, "-m", "linsvm", "train", "-q", "--memory", "300M"]
    subprocess.run([*command, str(text), str(tmp_path / "file.model")], check=True)
    subprocess.run([*command, "/dev/stdin", str(tmp_path / "pipe.model")],
                   input=text.read_bytes(), check=True)  # fmt: skip
    assert (tmp_path / "pipe.model").read_bytes() == (tmp_path / "file.model").read_bytes()


def test_cache_of_a_cache_is_refused(good_cache, tmp_path):
    with pytest.raises(CacheFormatError, match="already a linsvm cache"):
        write_cache(good_cache, tmp_path / "again.lsvc")


# ----------------------------------------------------------------------------- atomic writes


def test_failed_conversion_leaves_the_target(tmp_path):
    text = b"1 1:0.5 3:2\n-1 2:1\n" * 500 + b"1 2:1 1:3\n" + b"1 1:1\n" * 10
    source = tmp_path / "bad.txt"
    source.write_bytes(text)
    target = tmp_path / "out.lsvc"
    target.write_bytes(b"previous contents")
    with reader_sizes(256), pytest.raises(DataFormatError) as info:
        write_cache(source, target, block_bytes=64, n_jobs=2)
    with pytest.raises(DataFormatError) as text_info:
        read_libsvm(source)
    expected = f"{source}:1001: indices must be ascending: 1 after 2"
    assert str(info.value) == str(text_info.value) == expected
    assert target.read_bytes() == b"previous contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "out.lsvc"]


@settings(max_examples=40, deadline=None)
@given(
    text=TEXTS,
    bad=st.sampled_from(["x 1:1\n", "1 2:1 1:1\n", "1 0:1\n", "1 1:nan\n", "1 3:1 3:2\n",
                         "1 qid:x 1:1\n", "1 1:1e999\n"]),
    where=st.floats(0, 1),
    n_jobs=st.sampled_from([1, 2]),
)
def test_malformed_text_same_error_as_the_reader(tmp_path_factory, text, bad, where, n_jobs):
    """The first fault of the text, with its line, exactly as read_libsvm reports it; the
    target never appears."""
    lines = text.decode().splitlines(keepends=True)
    at = int(where * len(lines))
    text = "".join(lines[:at]).encode() + bad.encode() + "".join(lines[at:]).encode()
    tmp_path = tmp_path_factory.mktemp("bad")
    source = tmp_path / "bad.txt"
    source.write_bytes(text)
    with reader_sizes(64):
        with pytest.raises(DataFormatError) as expected:
            read_libsvm(source, n_jobs=n_jobs)
        with pytest.raises(DataFormatError) as got:
            write_cache(source, tmp_path / "bad.lsvc", block_bytes=100, n_jobs=n_jobs)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_missing_folder_names_the_target(tmp_path):
    source = tmp_path / "a.txt"
    source.write_bytes(b"1 1:1\n")
    target = tmp_path / "nowhere" / "a.lsvc"
    with pytest.raises(FileNotFoundError) as info:
        write_cache(source, target)
    assert info.value.filename == str(target)


def test_bad_options():
    with pytest.raises(ValueError, match="block_bytes"):
        write_cache("x", "y", block_bytes=0)
    with pytest.raises(ValueError, match="dtype"):
        write_cache("x", "y", dtype=np.int32)


# ----------------------------------------------------------------------------- command line


def test_cli_cache_then_train_and_predict(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(300):
        cols = np.sort(rng.choice(40, size=6, replace=False)) + 1
        label = 1 if rng.random() < 0.5 else -1
        rows.append(f"{label} " + " ".join(f"{c}:{rng.normal() + label * (c < 5):.4g}"
                                           for c in cols))
    text = tmp_path / "train.txt"
    text.write_text("\n".join(rows) + "\n")
    lsvc = tmp_path / "train.lsvc"
    assert main(["cache", "--block-size", "0.001", str(text), str(lsvc)]) == 0
    out = capsys.readouterr().out
    assert f"{lsvc}: 300 rows, 40 features, 1800 non-zeros," in out and "MB/s" in out
    assert main(["cache", "-q", str(text), str(lsvc)]) == 0
    assert capsys.readouterr().out == ""
    assert open_cache(lsvc).n_blocks == 1

    for data in (text, lsvc):
        model = str(tmp_path / f"{data.name}.model")
        assert main(["train", "-q", "-s", "2", str(data), model]) == 0
        assert main(["predict", "-q", str(data), model, str(tmp_path / f"{data.name}.out")]) == 0
    model = (tmp_path / "train.txt.model").read_bytes()
    assert (tmp_path / "train.lsvc.model").read_bytes() == model
    assert (tmp_path / "train.lsvc.out").read_bytes() == (tmp_path / "train.txt.out").read_bytes()


@pytest.mark.parametrize("argv, message", [
    (["cache", "missing.txt", "x.lsvc"], "missing.txt: No such file or directory"),
    (["cache", "one.txt"], "expected data_file cache_file"),
    (["cache", "--block-size", "0", "a", "b"], "--block-size must be a positive number"),
    (["cache", "--frob", "a", "b"], "unknown option: --frob"),
])
def test_cli_cache_errors(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linsvm cache: error: ") and message in err


def test_cli_cache_malformed_text(tmp_path, capsys):
    (tmp_path / "bad.txt").write_bytes(b"1 1:1\nx 2:2\n")
    assert main(["cache", str(tmp_path / "bad.txt"), str(tmp_path / "bad.lsvc")]) == 1
    expected = f"linsvm cache: error: {tmp_path / 'bad.txt'}:2: bad label 'x'\n"
    assert capsys.readouterr().err == expected
    assert not (tmp_path / "bad.lsvc").exists()


def test_cli_usage_lists_cache(capsys):
    assert main(["--help"]) == 0
    assert "linsvm cache" in capsys.readouterr().out
    assert main(["cache", "--help"]) == 0
    assert "--block-size MB" in capsys.readouterr().out


def test_errors_are_linsvm_errors():
    assert issubclass(CacheFormatError, DataFormatError)
    assert issubclass(CacheFormatError, LinsvmError)


# ----------------------------------------------------------------------------- memory

CHILD = textwrap.dedent("""
    import sys
    from unittest import mock
    from linsvm.io import libsvm, read_libsvm, write_cache

    def status(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024

    mode, source, target, warm = sys.argv[1:]
    # Numba's kernels loaded, and the writer's code run once, before measuring
    write_cache(warm, target + ".warm", block_bytes=1 << 20, n_jobs=1)
    read_libsvm(warm, n_jobs=1)
    with mock.patch.object(libsvm, "BLOCK_SIZE", 1 << 20):
        # the peak-RSS mark reset to the RSS now: what came before does not hide growth
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = status("VmRSS")
        if mode == "cache":
            write_cache(source, target, block_bytes=1 << 20, n_jobs=1)
        else:
            X, y = read_libsvm(source, n_jobs=1)
        after = status("VmHWM")
    print(before, after)
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                    reason="the peak-RSS mark is reset through Linux's /proc")
def test_conversion_memory_is_bounded(tmp_path):
    """The peak memory of a conversion grows by much less than the CSR it writes, while
    reading the same text whole grows by about that CSR (the control)."""
    rng = np.random.default_rng(2)
    lines = []
    for i in range(2000):
        cols = np.sort(rng.choice(900000, size=50, replace=False)) + 1
        values = rng.integers(1, 9, 50)
        lines.append(f"{i % 2} " + " ".join(f"{c}:{v}" for c, v in zip(cols, values, strict=True)))
    chunk = ("\n".join(lines) + "\n").encode()
    source = tmp_path / "big.txt"
    with open(source, "wb") as f:
        for _ in range(100):  # 200k rows, 10M non-zeros
            f.write(chunk)
    warm = tmp_path / "warm.txt"
    warm.write_bytes(chunk[:10000].rsplit(b"\n", 1)[0] + b"\n")
    csr_bytes = 10_000_000 * 12 + 200_001 * 4 + 200_000 * 8

    def growth(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, mode, str(source), str(tmp_path / "big.lsvc"),
             str(warm)], capture_output=True, text=True, check=True)
        before, after = map(int, out.stdout.split())
        return after - before

    cache_growth = growth("cache")
    text_growth = growth("text")
    print(f"growth: cache {cache_growth >> 20} MB, text {text_growth >> 20} MB, "
          f"CSR {csr_bytes >> 20} MB")
    assert text_growth > 0.8 * csr_bytes  # the measure sees a whole CSR
    assert cache_growth < 0.25 * csr_bytes, (cache_growth, text_growth, csr_bytes)
    assert_identical(open_cache(tmp_path / "big.lsvc").read(), read_libsvm(source))


def test_a_conversion_for_training_in_memory_takes_blocks_of_a_32nd_of_it(tmp_path):
    # train --memory SIZE on text: the temporary cache's blocks are held to SIZE / 32
    from linsvm.io.cache import as_cache

    rng = np.random.default_rng(0)
    rows = [f"{i % 2 * 2 - 1} " + " ".join(f"{c}:{rng.normal():.6g}" for c in range(1, 200))
            for i in range(2000)]  # fmt: skip
    source = tmp_path / "data.txt"
    source.write_text("\n".join(rows) + "\n")
    with as_cache(source, memory=32 << 20) as path, open_cache(path) as cache:
        sizes = cache.block_rows * (8 + 4) + cache.block_nnz * 12
        assert cache.n_blocks > 3 and sizes.max() <= (1 << 20) + 3000
    with as_cache(source) as path, open_cache(path) as cache:
        assert cache.n_blocks == 1


def test_block_training_refuses_values_no_training_takes(tmp_path):
    """A cache holds what its text held, 1e300 included (`write_cache` checks no training
    bound); training it in blocks or on Dask went on where the text and in-memory training
    refuse such a value: -s 7 wrote a model of NaN weights."""
    from linsvm.io.blocks import CacheBlocks

    source, target, _ = convert(tmp_path, b"-1 1:1 2:1\n+1 1:0.5\n-1 2:-1 3:1e300\n+1 1:2\n")
    with open_cache(target) as cache:
        with pytest.raises(InvalidInputError, match="row 3, feature 3: value 1e.300"):
            CacheBlocks(cache).gather(np.arange(cache.n_blocks))


def _rows_of_block(cache, k: int, r0: int, r1: int) -> None:
    """Cache.read_rows of rows r0:r1 of block k into fresh arrays (what block training does
    a piece of a stored block at a time)."""
    nnz = int(cache.block_nnz[k])
    cache.read_rows(k, r0, r1, np.empty(r1 - r0), np.empty(r1 - r0 + 1, dtype=cache.index_dtype),
                    np.empty(nnz, dtype=cache.index_dtype), np.empty(nnz, dtype=cache.dtype), 0)


def test_a_forged_block_read_in_pieces_is_not_called_changed(good_cache, tmp_path, monkeypatch):
    """A bad row in a later piece of a block forged with its checksum was reported as
    "changed while in use" (its first piece had checked the checksum); the file never
    changed. A block whose checksum fails when its bad row is met did change."""
    cache = open_cache(good_cache)
    n_rows, nnz = int(cache.block_rows[0]), int(cache.block_nnz[0])
    at = cache_module._layout(n_rows, nnz, 4, 8)
    last_row_start = int(cache._arrays(0, verify=False)[1][-2])
    data = bytearray(good_cache.read_bytes())
    struct.pack_into("<i", data, int(cache._table["offset"][0]) + at[2] + 4 * last_row_start, -1)
    _rechecksum(data, cache)
    path = tmp_path / "forged.lsvc"
    path.write_bytes(bytes(data))
    with open_cache(path) as forged:
        _rows_of_block(forged, 0, 0, 1)  # (the checksum checked, sound)
        with pytest.raises(CacheFormatError) as info:
            _rows_of_block(forged, 0, n_rows - 1, n_rows)
    assert str(info.value) == f"{path}: block 0 is invalid (row {n_rows - 1})"
    # a change the file's stamp does not show (kept still here): the checksum now fails
    monkeypatch.setattr(cache_module, "_stamp", lambda status: 0)
    with open_cache(good_cache) as cache:
        _rows_of_block(cache, 0, 0, 1)
        good_cache.write_bytes(bytes(data[:-200]) + good_cache.read_bytes()[-200:])
        with pytest.raises(CacheFormatError, match=r"\(row \d+: changed while in use\)$"):
            _rows_of_block(cache, 0, n_rows - 1, n_rows)


def test_a_forged_row_pointer_is_said_once(good_cache, tmp_path):
    """A block's forged last row offset was "f: block 1 could not be read: f: block 1 is
    invalid (indptr)": the error wrapped in another."""
    cache = open_cache(good_cache)
    data = bytearray(good_cache.read_bytes())
    struct.pack_into("<i", data, _indptr_at(cache, 1) + 4 * int(cache.block_rows[1]), 5000)
    _rechecksum(data, cache)
    path = tmp_path / "crafted-indptr.lsvc"
    path.write_bytes(bytes(data))
    with pytest.raises(CacheFormatError) as info:
        read_libsvm(path)
    assert str(info.value) == f"{path}: block 1 is invalid (indptr)"


def test_a_cache_through_a_pipe_is_refused_as_such(good_cache, tmp_path):
    """A cache given through a named pipe was "empty file, not a linsvm cache" (a pipe's size
    is 0); it is memory-mapped, so it must be a file."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed():
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as f:
            f.write(good_cache.read_bytes())

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with pytest.raises(CacheFormatError, match="a linsvm cache is read from a regular file"):
            open_cache(fifo)
    finally:
        writer.join()
