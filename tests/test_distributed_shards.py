"""Shards of the data for the Dask workers give exactly what the reader gives for the whole.

Byte ranges of a text file cut anywhere, several files (plain and compressed), caches cut at
stored blocks or inside them, and Dask collections: the shards' rows concatenated in shard
order are `read_libsvm`'s rows, bit for bit, their labels merged give LIBLINEAR's label order,
and a malformed line is reported by the shard that holds it with the line of the whole file.
"""

from __future__ import annotations

import gzip
import os
import pickle
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm.data import TRAINABLE_MAX, group_labels
from linsvm.distributed.shards import (
    Shard,
    ShardData,
    ShardPart,
    load_shard,
    merge_labels,
    plan_shards,
    shards_from_collection,
)
from linsvm.errors import DataFormatError, InvalidInputError
from linsvm.io import libsvm, read_libsvm, write_cache, write_libsvm

# ----------------------------------------------------------------------------- generated text

# (shards are read to be trained on: a value of TRAINABLE_MAX or more is refused at its line,
# test_a_value_too_large_to_train_on_is_refused_at_its_line)
_BELOW_TRAINABLE = np.nextafter(TRAINABLE_MAX, 0.0)
NUMBERS = st.one_of(
    st.integers(-50, 50).map(str),
    st.floats(min_value=-_BELOW_TRAINABLE, max_value=_BELOW_TRAINABLE, width=64).map(repr),
    st.sampled_from(["0.5", "-.25", "1e-3", "+3", "-0", "1.", "4.9e-324"]),
)
LABELS = st.sampled_from(["1", "-1", "+1", "2", "3.5", "0", "7"])
ENDINGS = st.sampled_from(["\n", "\r\n", " \n", "\t# comment 1:2\n", "#c\r\n"])


@st.composite
def lines(draw, min_index: int = 1) -> str:
    """One line: a row (maybe with qid, maybe without features), a blank line or a comment."""
    kind = draw(st.sampled_from(["row"] * 6 + ["blank", "comment"]))
    end = draw(ENDINGS)
    if kind == "blank":
        return draw(st.sampled_from(["", "  ", "\t"])) + end
    if kind == "comment":
        return "# a comment 3:4" + end
    parts = [draw(LABELS)]
    if draw(st.booleans()):
        parts.append(f"qid:{draw(st.integers(0, 99))}")
    indices = sorted(draw(st.sets(st.integers(min_index, 400), max_size=8)))
    parts += [f"{i}:{draw(NUMBERS)}" for i in indices]
    return " ".join(parts) + end


@st.composite
def texts(draw, min_index: int = 1, max_lines: int = 40) -> bytes:
    text = "".join(draw(st.lists(lines(min_index), max_size=max_lines)))
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no final newline
    return text.encode()


def text_shards(path, cuts: list[int], size: int, zero_based: bool = False) -> list[Shard]:
    """Shards of one text file cut at the given byte offsets (sorted, any values)."""
    bounds = [0, *sorted(min(max(c, 0), size) for c in cuts), size]
    return [Shard(k, (ShardPart("text", os.fspath(path), a, b),), b - a, "float64", zero_based)
            for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))]


def concatenated(datas: list[ShardData]) -> tuple[sp.csr_matrix, np.ndarray]:
    """The shards' rows one after another, as wide as the widest shard."""
    width = max([d.n_features_seen for d in datas] + [0])
    for d in datas:
        assert d.X.shape == (d.n_rows, d.n_features_seen)
        assert d.y.shape == (d.n_rows,)
        assert d.X.has_sorted_indices
    Xs = [sp.csr_matrix((d.X.data, d.X.indices, d.X.indptr), shape=(d.n_rows, width))
          for d in datas]
    X = sp.vstack(Xs, format="csr") if Xs else sp.csr_matrix((0, 0))
    return X, np.concatenate([d.y for d in datas]) if datas else np.empty(0)


def assert_same_rows(datas: list[ShardData], expected) -> None:
    """The shards together hold exactly the rows of `expected` = (X, y), in order."""
    X, y = concatenated(datas)
    Xe, ye = expected
    assert max([d.n_features_seen for d in datas] + [0]) == Xe.shape[1]
    assert X.shape == Xe.shape
    assert np.array_equal(X.indptr, Xe.indptr)
    assert np.array_equal(X.indices, Xe.indices)
    assert X.data.dtype == Xe.data.dtype
    assert X.data.tobytes() == Xe.data.tobytes()  # bits, so -0.0 and denormals too
    assert y.tobytes() == ye.tobytes()
    merged = merge_labels([d.labels_in_order for d in datas])
    assert np.array_equal(merged, group_labels(ye)[0] if ye.shape[0] else ye[:0])
    for d in datas:
        assert np.array_equal(d.labels_in_order, pd_unique(d.y))


def pd_unique(y: np.ndarray) -> np.ndarray:
    """Distinct values in order of first appearance, the plain way."""
    seen: list[float] = []
    for v in y.tolist():
        if v not in seen:
            seen.append(v)
    return np.array(seen, dtype=y.dtype)


def error_of(call) -> tuple[type, str, int, str]:
    with pytest.raises(DataFormatError) as info:
        call()
    e = info.value
    return type(e), e.path, e.line, e.what


# ----------------------------------------------------------------------------- byte ranges


@settings(max_examples=150, deadline=None)
@given(text=texts(), cuts=st.lists(st.integers(-5, 4000), max_size=6),
       block=st.sampled_from([7, 64, 2**23]), n_jobs=st.sampled_from([1, 2]))
def test_byte_ranges_cut_anywhere_give_the_whole_file(tmp_path_factory, text, cuts, block,
                                                      n_jobs):
    path = tmp_path_factory.mktemp("ranges") / "data.svm"
    path.write_bytes(text)
    expected = read_libsvm(path, n_jobs=1)
    shards = text_shards(path, cuts, len(text))
    with mock.patch.object(libsvm, "BLOCK_SIZE", block), \
            mock.patch.object(libsvm, "MIN_PIECE_SIZE", 1):
        datas = [load_shard(s, n_jobs=n_jobs) for s in shards]
    assert_same_rows(datas, expected)


@settings(max_examples=60, deadline=None)
@given(text=texts(min_index=0), cuts=st.lists(st.integers(0, 4000), max_size=4))
def test_zero_based_ranges(tmp_path_factory, text, cuts):
    path = tmp_path_factory.mktemp("zero") / "data.svm"
    path.write_bytes(text)
    expected = read_libsvm(path, zero_based=True, n_jobs=1)
    datas = [load_shard(s) for s in text_shards(path, cuts, len(text), zero_based=True)]
    assert_same_rows(datas, expected)


@settings(max_examples=60, deadline=None)
@given(text=texts(), k=st.integers(1, 9))
def test_planned_shards_of_one_file(tmp_path_factory, text, k):
    path = tmp_path_factory.mktemp("plan") / "data.svm"
    path.write_bytes(text)
    shards = plan_shards(path, k)
    assert 1 <= len(shards) <= k
    assert [s.index for s in shards] == list(range(len(shards)))
    if text:  # contiguous byte ranges covering the file
        ranges = [(s.parts[0].start, s.parts[0].stop) for s in shards]
        assert all(len(s.parts) == 1 for s in shards)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(text)
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:], strict=False))
    assert_same_rows([load_shard(s) for s in shards], read_libsvm(path, n_jobs=1))


BAD_LINES = [
    ("1 x\n", "expected index:value, got 'x'"),
    ("1 3:1 2:1\n", "indices must be ascending: 2 after 3"),
    ("abc 1:1\n", "bad label 'abc'"),
    ("1 0:1\n", "index 0 is not allowed"),
    ("1 5:nan\n", "value is NaN (feature 5)"),
]


@settings(max_examples=80, deadline=None)
@given(before=texts(max_lines=30), after=texts(max_lines=10),
       bad=st.sampled_from(BAD_LINES), cuts=st.lists(st.integers(0, 3000), max_size=5),
       block=st.sampled_from([5, 2**23]))
def test_a_malformed_line_is_named_by_its_line_in_the_whole_file(tmp_path_factory, before,
                                                                 after, bad, cuts, block):
    line, what = bad
    if before and not before.endswith(b"\n"):
        before += b"\n"
    text = before + line.encode() + after
    path = tmp_path_factory.mktemp("bad") / "data.svm"
    path.write_bytes(text)
    expected = error_of(lambda: read_libsvm(path, n_jobs=1))
    assert expected[2] == before.count(b"\n") + 1 and expected[3].startswith(what)
    shards = text_shards(path, cuts, len(text))
    start = len(before)  # the shard whose range holds the bad line's start reports it
    owner = next(s for s in shards if s.parts[0].start <= start < s.parts[0].stop)
    with mock.patch.object(libsvm, "BLOCK_SIZE", block):
        assert error_of(lambda: load_shard(owner)) == expected
        for s in shards:  # the shards before it read (the lines after it may be bad too)
            if s.index < owner.index:
                load_shard(s)


def test_n_features_limits_every_shard_with_the_whole_files_message(tmp_path):
    path = tmp_path / "data.svm"
    path.write_bytes(b"1 1:1\n-1 2:1\n\n1 9:1\n-1 3:1\n")
    expected = error_of(lambda: read_libsvm(path, n_features=5))
    shards = text_shards(path, [13], len(path.read_bytes()))
    assert load_shard(shards[0], n_features=5).X.shape == (2, 5)
    assert error_of(lambda: load_shard(shards[1], n_features=5)) == expected
    assert expected[2] == 4


def test_a_range_inside_one_line_holds_no_rows(tmp_path):
    path = tmp_path / "data.svm"
    path.write_bytes(b"1 1:1 2:1 3:1 4:1\n-1 5:1\n")
    shards = text_shards(path, [3, 8], len(path.read_bytes()))
    datas = [load_shard(s) for s in shards]
    assert [d.n_rows for d in datas] == [1, 0, 1]
    assert datas[1].X.shape == (0, 0) and datas[1].labels_in_order.shape == (0,)
    assert_same_rows(datas, read_libsvm(path))


# ----------------------------------------------------------------------------- several files


@settings(max_examples=40, deadline=None)
@given(files=st.lists(st.tuples(texts(max_lines=25), st.sampled_from(["", "", ".gz"])),
                      min_size=1, max_size=4),
       k=st.integers(1, 7))
def test_several_files_are_the_files_one_after_another(tmp_path_factory, files, k):
    folder = tmp_path_factory.mktemp("files")
    paths, expected_X, expected_y = [], [], []
    for i, (text, suffix) in enumerate(files):
        path = folder / f"part{i}.svm{suffix}"
        path.write_bytes(gzip.compress(text) if suffix else text)
        paths.append(path)
        X, y = read_libsvm(path, n_jobs=1)
        expected_X.append(X)
        expected_y.append(y)
    width = max(X.shape[1] for X in expected_X)
    X = sp.vstack([sp.csr_matrix(X, shape=(X.shape[0], width)) for X in expected_X],
                  format="csr")
    y = np.concatenate(expected_y)
    shards = plan_shards(paths, k)
    assert 1 <= len(shards) <= k
    for s in shards:  # a compressed file is never cut
        for part in s.parts:
            if part.kind == "compressed":
                assert part.start == 0 and part.stop == os.path.getsize(part.path)
    assert_same_rows([load_shard(s) for s in shards], (X, y))


def test_a_gz_file_is_one_shard(tmp_path):
    path = tmp_path / "data.svm.gz"
    text = b"".join(b"%d 1:%d 3:1\n" % (i % 3, i) for i in range(1, 500))
    path.write_bytes(gzip.compress(text))
    shards = plan_shards(path, 4)
    assert len(shards) == 1 and shards[0].parts[0].kind == "compressed"
    assert "compressed" in shards[0].describe()
    assert_same_rows([load_shard(shards[0])], read_libsvm(path))


def test_large_files_are_cut_to_balance_the_partitions(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for i, n in enumerate([5000, 300, 2000, 50, 900]):
        X = sp.random(n, 200, density=0.05, format="csr", random_state=rng)
        path = tmp_path / f"f{i}.svm"
        write_libsvm(X, rng.integers(0, 2, n) * 2 - 1, path)
        paths.append(path)
    sizes = [os.path.getsize(p) for p in paths]
    for k in (2, 3, 4, 7, 16):
        shards = plan_shards(paths, k)
        assert len(shards) == k
        weights = np.array([s.weight for s in shards])
        assert weights.sum() == pytest.approx(sum(sizes), abs=k)
        assert weights.max() <= 1.1 * sum(sizes) / k and weights.min() >= 0.9 * sum(sizes) / k
        datas = [load_shard(s) for s in shards]
        nnz = np.array([d.nnz for d in datas])
        assert nnz.max() <= 1.15 * nnz.mean()  # bytes stand for non-zeros in text
    expected = [read_libsvm(p) for p in paths]
    width = max(X.shape[1] for X, _ in expected)
    X = sp.vstack([sp.csr_matrix(X, shape=(X.shape[0], width)) for X, _ in expected], "csr")
    assert_same_rows(datas, (X, np.concatenate([y for _, y in expected])))


def test_empty_files_and_planning_errors(tmp_path):
    empty = tmp_path / "empty.svm"
    empty.write_bytes(b"")
    shards = plan_shards([empty, empty], 3)
    assert len(shards) == 1
    data = load_shard(shards[0])
    assert data.n_rows == 0 and data.X.shape == (0, 0)
    with pytest.raises(InvalidInputError, match="missing.svm"):
        plan_shards(tmp_path / "missing.svm", 2)
    with pytest.raises(InvalidInputError, match="no data files"):
        plan_shards([], 2)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidInputError, match="n_partitions"):
            plan_shards(empty, bad)
    with pytest.raises(InvalidInputError, match="zero_based"):
        plan_shards(empty, 2, zero_based="auto")


# ----------------------------------------------------------------------------- caches


@settings(max_examples=40, deadline=None)
@given(text=texts(max_lines=60), block_bytes=st.sampled_from([1, 200, 2000, 2**26]),
       k=st.integers(1, 9), dtype=st.sampled_from([np.float64, np.float32]))
def test_cache_shards_give_the_whole_cache(tmp_path_factory, text, block_bytes, k, dtype):
    folder = tmp_path_factory.mktemp("cache")
    (folder / "data.svm").write_bytes(text)
    path = folder / "data.anyname"
    write_cache(folder / "data.svm", path, block_bytes=block_bytes)
    shards = plan_shards(path, k, dtype=dtype)
    assert 1 <= len(shards) <= k
    assert all(s.kind == "cache" for s in shards)
    try:
        expected = read_libsvm(path, dtype=dtype, n_jobs=1)
    except InvalidInputError as exc:
        # a value beyond float32's range: the first shard to hold one names the same row
        assert dtype == np.float32 and "beyond the range of float32" in str(exc)
        refusals = []
        for s in shards:
            try:
                load_shard(s)
            except InvalidInputError as refused:
                refusals.append(str(refused))
        assert refusals and refusals[0] == str(exc)
        return
    datas = [load_shard(s) for s in shards]
    for d in datas:
        assert d.X.dtype == dtype
    assert_same_rows(datas, expected)


def test_a_cache_of_few_blocks_is_cut_inside_them_by_non_zeros(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(3000, 100, density=0.1, format="csr", random_state=rng)
    write_libsvm(X, rng.integers(0, 2, 3000), tmp_path / "d.svm")
    write_cache(tmp_path / "d.svm", tmp_path / "d.cache")
    shards = plan_shards(tmp_path / "d.cache", 4)
    assert len(shards) == 4 and "rows" in shards[1].describe()
    datas = [load_shard(s) for s in shards]
    nnz = np.array([d.nnz for d in datas])
    assert nnz.max() <= 1.02 * nnz.mean()
    assert_same_rows(datas, read_libsvm(tmp_path / "d.svm"))
    # n_features widens every shard; a narrower one is the reader's error
    assert load_shard(shards[0], n_features=150).X.shape[1] == 150
    assert error_of(lambda: load_shard(shards[0], n_features=50))[3].startswith(
        "feature index")


def test_caches_and_text_do_not_mix(tmp_path):
    (tmp_path / "d.svm").write_bytes(b"1 1:1\n")
    write_cache(tmp_path / "d.svm", tmp_path / "d.cache")
    with pytest.raises(InvalidInputError, match="mix"):
        plan_shards([tmp_path / "d.svm", tmp_path / "d.cache"], 2)


def test_shards_are_small_and_picklable(tmp_path):
    path = tmp_path / "d.svm"
    path.write_bytes(b"1 1:1\n" * 10000)
    shards = plan_shards(path, 3)
    blob = pickle.dumps(shards)
    assert len(blob) < 2000
    assert pickle.loads(blob) == shards
    assert shards[1].describe().startswith("shard 1: ")
    assert hash(shards[0]) is not None


# ----------------------------------------------------------------------------- collections


def _collections(X: sp.csr_matrix, y: np.ndarray, chunk: int):
    import dask.array as da

    Xd = da.from_array(X, chunks=(chunk, X.shape[1]), asarray=False)
    yd = da.from_array(y, chunks=(chunk,))
    return Xd, yd


@pytest.mark.parametrize("n_partitions", [None, 1, 3, 100])
def test_dask_array_of_sparse_chunks(n_partitions):
    import dask

    rng = np.random.default_rng(2)
    X = sp.random(1000, 60, density=0.1, format="csr", random_state=rng)
    y = rng.integers(0, 4, 1000).astype(np.float64)
    Xd, yd = _collections(X, y, 130)
    shards = shards_from_collection(Xd, yd, n_partitions)
    n_chunks = len(Xd.chunks[0])
    assert len(shards) == (n_chunks if n_partitions in (None, 100) else n_partitions)
    datas = dask.compute(*shards, scheduler="sync")
    X.sort_indices()
    assert_same_rows(list(datas), (X, y))


def test_dask_dataframe_and_series():
    pytest.importorskip("pyarrow", reason="dask.dataframe needs pyarrow")
    import dask.dataframe as dd
    import pandas as pd

    rng = np.random.default_rng(3)
    dense = np.where(rng.random((300, 8)) < 0.3, rng.normal(size=(300, 8)), 0.0)
    y = rng.choice([-1.0, 1.0], 300)
    frame = dd.from_pandas(pd.DataFrame(dense, columns=[f"f{j}" for j in range(8)]),
                           npartitions=4)
    labels = dd.from_pandas(pd.Series(y), npartitions=4)
    import dask

    datas = dask.compute(*shards_from_collection(frame, labels, 2), scheduler="sync")
    assert len(datas) == 2
    X = sp.csr_matrix(dense)
    assert_same_rows(list(datas), (X, y))


def test_collections_badly_chunked_are_refused():
    import dask
    import dask.array as da

    X = sp.random(100, 5, density=0.5, format="csr", random_state=0)
    Xd = da.from_array(X, chunks=(30, 5), asarray=False)
    with pytest.raises(InvalidInputError, match="chunk"):
        shards_from_collection(Xd, da.zeros(100, chunks=50))
    with pytest.raises(InvalidInputError, match="chunked differently"):
        shards_from_collection(Xd, da.zeros(100, chunks=(40, 30, 20, 10)))
    with pytest.raises(InvalidInputError, match="dask"):
        shards_from_collection(X, np.zeros(100))
    # unknown chunk lengths are checked where the chunks are
    Xu = da.from_array(X, chunks=(50, 5), asarray=False)
    yu = da.from_array(np.zeros(100), chunks=50)[da.from_array(np.arange(100) % 7 > 0,
                                                                chunks=50)]
    shards = shards_from_collection(Xu, yu)
    with pytest.raises(InvalidInputError, match="rows"):
        dask.compute(*shards, scheduler="sync")


# ----------------------------------------------------------------------------- on workers


def test_workers_read_their_shards():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(4)
    X = sp.random(2000, 80, density=0.05, format="csr", random_state=rng)
    y = rng.integers(0, 3, 2000).astype(np.float64)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "d.svm")
        write_libsvm(X, y, path)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            shards = plan_shards(path, 2)
            futures = client.map(load_shard, shards, n_jobs=1)
            distributed.wait(futures)
            where = client.who_has(futures)
            datas = client.gather(futures)
            collection = client.compute(shards_from_collection(*_collections(X, y, 500)))
            from_collection = client.gather(collection)
        assert all(len(holders) >= 1 for holders in where.values())  # held on workers
        assert_same_rows(datas, read_libsvm(path))
        X.sort_indices()
        assert_same_rows(from_collection, (X, y))


def test_a_value_too_large_to_train_on_is_refused_at_its_line(tmp_path):
    path = tmp_path / "data.svm"
    path.write_text("1 1:1\n-1 2:1\n1 3:1e200\n")
    [shard] = text_shards(path, [], path.stat().st_size)
    with pytest.raises(DataFormatError, match=r"data.svm:3: value '1e200' of feature 3"):
        load_shard(shard)


def test_paths_are_planned_absolute_and_a_worker_that_cannot_read_says_so(tmp_path,
                                                                         monkeypatch):  # fmt: skip
    """Workers read the files in their own working folders: a list of relative paths was
    sent as given (FileNotFoundError on a worker started elsewhere), and a worker's read
    error came back raw."""
    (tmp_path / "a.svm").write_text("1 1:0.5\n-1 2:1\n")
    monkeypatch.chdir(tmp_path)
    for source in ("a.svm", ["a.svm"]):
        [shard] = plan_shards(source, 1)
        assert [part.path for part in shard.parts] == [str(tmp_path / "a.svm")]
    os.remove(tmp_path / "a.svm")
    with pytest.raises(InvalidInputError, match="a.svm: a worker cannot read it .*same paths"):
        load_shard(shard)
    with pytest.raises(InvalidInputError, match="a data file must be a path, got int"):
        plan_shards(["a.svm", 3], 1)
