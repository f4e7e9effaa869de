"""Error paths no other test walked: each bad input gives one clear line (a LinsvmError from
the API; from the command line a line on stderr and exit status 1, never a traceback).

Checkpoints that are not there or not checkpoints (``resume=`` and ``--resume``), model files
whose nr_class is out of range, the commands' missing or extra arguments, ``compare`` without
a solver or with one twice, labels of mixed types, an estimator's ``client=`` with
``max_iter=0``, and the Dask inputs of the wrong kind or shape.
"""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_sparse_problem

import linsvm
from linsvm import InvalidInputError, LinsvmError, ModelFormatError
from linsvm.cli import main


@pytest.fixture(scope="module")
def data():
    return make_sparse_problem(n_rows=30, n_features=5, seed=0, density=0.5)


def one_line(exc: BaseException) -> str:
    message = str(exc)
    assert "\n" not in message, message
    return message


def command_error(capsys, argv: list[str]) -> str:
    """stderr of ``linsvm ARGV``, checked to be one line after exit status 1."""
    assert main([str(a) for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err
    return err


# ----------------------------------------------------------------------------- checkpoints


def _not_checkpoints(folder):
    """{kind: path} of files that are no linsvm checkpoint."""
    folder.mkdir(exist_ok=True)
    paths = {}
    paths["random bytes"] = folder / "random.ckpt"
    paths["random bytes"].write_bytes(np.random.default_rng(0).bytes(300))
    paths["empty file"] = folder / "empty.ckpt"
    paths["empty file"].write_bytes(b"")
    paths["zip of text"] = folder / "text.zip"
    with zipfile.ZipFile(paths["zip of text"], "w") as archive:
        archive.writestr("hello.txt", "hello")
    paths["npz without meta"] = folder / "plain.npz"
    with open(paths["npz without meta"], "wb") as f:
        np.savez(f, a=np.arange(3))
    for kind, meta in (("meta of another format", {"format": "other", "version": 1}),
                       ("meta not an object", [1, 2])):  # fmt: skip
        paths[kind] = folder / f"{kind.replace(' ', '-')}.npz"
        with open(paths[kind], "wb") as f:
            np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    paths["meta not UTF-8"] = folder / "latin.npz"
    with open(paths["meta not UTF-8"], "wb") as f:
        np.savez(f, meta=np.frombuffer(b"\xff\xfe{", dtype=np.uint8))
    paths["a folder"] = folder / "folder.ckpt"
    paths["a folder"].mkdir(exist_ok=True)
    return paths


NOT_CHECKPOINTS = ["random bytes", "empty file", "zip of text", "npz without meta",
                   "meta of another format", "meta not an object", "meta not UTF-8",
                   "a folder"]  # fmt: skip


def test_resume_from_a_missing_checkpoint(data, tmp_path):
    X, y = data
    missing = tmp_path / "never-written.ckpt"
    with pytest.raises(InvalidInputError, match=f"^checkpoint {re.escape(str(missing))}: "
                                                "no such file$") as info:  # fmt: skip
        linsvm.train(X, y, resume=missing)
    one_line(info.value)
    assert not missing.exists()


@pytest.mark.parametrize("kind", NOT_CHECKPOINTS)
def test_resume_from_a_file_that_is_no_checkpoint(data, tmp_path, kind):
    X, y = data
    path = _not_checkpoints(tmp_path / "c")[kind]
    with pytest.raises(InvalidInputError, match=f"^checkpoint {re.escape(str(path))}: "
                                                "not a linsvm checkpoint") as info:  # fmt: skip
        linsvm.train(X, y, resume=path)
    one_line(info.value)


@pytest.fixture()
def data_file(tmp_path):
    rng = np.random.default_rng(1)
    lines = [f"{1 if k % 2 else -1} 1:{rng.normal():.3f} 3:{rng.normal():.3f}" for k in range(20)]
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


# (a budget far above any test process's own size: 1G was refused as too small where the
# worker process had grown past 1 GB, before the checkpoint was looked at)
@pytest.mark.parametrize("memory", [[], ["--memory", "16G"]], ids=["in-memory", "blocks"])
@pytest.mark.parametrize("kind", ["missing", "random bytes", "zip of text"])
def test_cli_resume_from_no_checkpoint(data_file, tmp_path, capsys, kind, memory):
    path = (tmp_path / "missing.ckpt" if kind == "missing"
            else _not_checkpoints(tmp_path / "c")[kind])  # fmt: skip
    model = tmp_path / "out.model"
    err = command_error(capsys, ["train", "-q", *memory, "--resume", path, data_file, model])
    assert err.startswith("linsvm train: error: ")
    expected = "no such file" if kind == "missing" else "not a linsvm checkpoint"
    assert f"checkpoint {path}: {expected}" in err
    assert not model.exists()


def test_cli_resume_error_does_not_blame_the_training_file(data_file, tmp_path, capsys):
    missing = tmp_path / "missing.ckpt"
    err = command_error(capsys, ["train", "-q", "--resume", missing, data_file,
                                 tmp_path / "m.model"])  # fmt: skip
    assert err == f"linsvm train: error: checkpoint {missing}: no such file\n"


# ----------------------------------------------------------------------------- model files

CLASSIFIER = ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\n"
              "w\n0.5 \n-0.25 \n")  # fmt: skip
REGRESSOR = "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 2\nbias -1\nw\n0.5 \n-0.25 \n"


def _model_with_nr_class(tmp_path, value: str, text: str = CLASSIFIER):
    path = tmp_path / "bad.model"
    path.write_text(text.replace("nr_class 2\n", f"nr_class {value}\n"))
    return path


def test_the_models_here_load(tmp_path):
    assert linsvm.load_model(_model_with_nr_class(tmp_path, "2")).coef_.shape == (1, 2)
    assert linsvm.load_model(_model_with_nr_class(tmp_path, "2", REGRESSOR)).coef_.shape[-1] == 2


@pytest.mark.parametrize("text", [CLASSIFIER, REGRESSOR], ids=["classifier", "regressor"])
@pytest.mark.parametrize(
    "value",
    ["two", "2.5", "1e3", "0x2", "nan", "inf", "+", "2147483648", "-2147483649",
     "99999999999999999999", "1_0"],
)  # fmt: skip
def test_nr_class_not_an_int(tmp_path, text, value):
    path = _model_with_nr_class(tmp_path, value, text)
    with pytest.raises(ModelFormatError,
                       match=f"^{re.escape(str(path))}:2: bad nr_class {re.escape(repr(value))}$"
                       ) as info:  # fmt: skip
        linsvm.load_model(path)
    one_line(info.value)


@pytest.mark.parametrize("value", ["0", "-1", "-2147483648"])
@pytest.mark.parametrize(
    "text",
    [REGRESSOR, CLASSIFIER.replace("label 1 -1\n", "")],
    ids=["regressor", "classifier without labels"],
)
def test_nr_class_below_one(tmp_path, text, value):
    path = _model_with_nr_class(tmp_path, value, text)
    with pytest.raises(ModelFormatError,
                       match=f"^{re.escape(str(path))}:2: bad nr_class {value}$") as info:
        linsvm.load_model(path)
    one_line(info.value)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_nr_class_below_one_in_a_classifier(tmp_path, value):
    path = _model_with_nr_class(tmp_path, value)
    with pytest.raises(ModelFormatError, match=f"^{re.escape(str(path))}:2: bad nr_class"):
        linsvm.load_model(path)


@pytest.mark.parametrize("value", ["3", "2147483647"])
def test_nr_class_beyond_the_labels_given(tmp_path, value):
    """(LIBLINEAR's reading: nr_class labels, the word after the last a bad label)"""
    path = _model_with_nr_class(tmp_path, value)
    with pytest.raises(ModelFormatError, match=f"^{re.escape(str(path))}:4: bad label") as info:
        linsvm.load_model(path)
    one_line(info.value)


@pytest.mark.parametrize("value", ["3", "2147483647"])
def test_nr_class_of_a_regressor_names_its_line(tmp_path, value):
    path = _model_with_nr_class(tmp_path, value, REGRESSOR)
    with pytest.raises(ModelFormatError, match=f"^{re.escape(str(path))}:2: .*nr_class"):
        linsvm.load_model(path)


def test_cli_predict_with_a_bad_nr_class(tmp_path, capsys, data_file):
    path = _model_with_nr_class(tmp_path, "two")
    err = command_error(capsys, ["predict", data_file, path, tmp_path / "out"])
    assert err == f"linsvm predict: error: {path}:2: bad nr_class 'two'\n"
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- command arguments


@pytest.mark.parametrize("argv", [["train", "-q"], ["train", "-c", "1", "-s", "3"]])
def test_train_without_a_training_file(capsys, argv):
    err = command_error(capsys, argv)
    assert err == "linsvm train: error: missing training_set_file\n"


def test_train_alone_prints_its_usage(capsys):
    assert main(["train"]) == 1  # (as LIBLINEAR's train without arguments)
    captured = capsys.readouterr()
    assert captured.out.startswith("Usage: linsvm train [options] training_set_file")
    assert "Traceback" not in captured.err


def test_train_with_too_many_arguments(capsys, tmp_path):
    err = command_error(capsys, ["train", "-q", "a", tmp_path / "m", "extra"])
    assert err == "linsvm train: error: too many arguments: extra\n"
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    ("options", "files"),
    [([], ["t"]), ([], ["t", "m"]), (["-b", "1"], ["t", "m"]), (["-q"], ["t", "m"]),
     ([], ["t", "m", "o", "extra"]), ([], ["t", "m", "o", "extra", "more"])],
)  # fmt: skip
def test_predict_with_the_wrong_number_of_arguments(capsys, tmp_path, options, files):
    err = command_error(capsys, ["predict", *options, *(tmp_path / f for f in files)])
    assert err == "linsvm predict: error: expected test_file model_file output_file\n"
    assert list(tmp_path.iterdir()) == []


def test_predict_alone_prints_its_usage(capsys):
    assert main(["predict"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("Usage: linsvm predict [options] test_file model_file")
    assert "Traceback" not in captured.err


# ----------------------------------------------------------------------------- compare


@pytest.mark.parametrize("solvers", ["", ",", " , ,"])
def test_compare_without_a_solver(capsys, tmp_path, solvers):
    err = command_error(capsys, ["compare", "-o", tmp_path / "o", "--solvers", solvers,
                                 tmp_path / "a", tmp_path / "b"])  # fmt: skip
    assert err == "linsvm compare: error: no solver given\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("solvers", ["pegasos,pegasos", "pegasos, dcd-l1,pegasos"])
def test_compare_with_a_solver_twice(capsys, tmp_path, solvers):
    err = command_error(capsys, ["compare", "-o", tmp_path / "o", "--solvers", solvers,
                                 tmp_path / "a", tmp_path / "b"])  # fmt: skip
    assert err.startswith("linsvm compare: error: a solver is listed twice: pegasos, ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("solvers", "message"),
    [([], "^no solver given$"), (["pegasos", "pegasos"], "^a solver is listed twice: ")],
)
def test_compare_function_without_or_with_a_solver_twice(data, tmp_path, solvers, message):
    from linsvm.compare import compare

    X, y = data
    with pytest.raises(InvalidInputError, match=message) as info:
        compare(X, y, X, y, solvers=solvers, max_time=0.05, quiet=True, outdir=tmp_path / "o")
    one_line(info.value)
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    "labels",
    [[1, "a", 2.0], [b"x", "x", 1], [(1,), 1, 2], [1.5, "1.5", 2]],
    ids=["int-str-float", "bytes-str-int", "tuple-int", "float-str"],
)
def test_labels_of_mixed_types(data, labels):
    X, _ = data
    y = np.empty(X.shape[0], dtype=object)
    for k in range(X.shape[0]):
        y[k] = labels[k % len(labels)]
    with pytest.raises(InvalidInputError, match="^labels must be of one comparable type") as info:
        linsvm.train(X, y)
    one_line(info.value)


def test_labels_of_mixed_numbers_are_one_type(data):
    """(ints and floats in an object array compare: they train, as numbers)"""
    X, _ = data
    y = np.array([1, 2.5] * (X.shape[0] // 2), dtype=object)
    assert len(linsvm.train(X, y).labels_) == 2


# ----------------------------------------------------------------------------- client= options


@pytest.mark.parametrize(
    "make",
    [lambda client: linsvm.LinearSVC(client=client, max_iter=0),
     lambda client: linsvm.LogisticRegression(client=client, dual=True, max_iter=0)],
    ids=["LinearSVC", "LogisticRegression"],
)  # fmt: skip
def test_estimator_client_needs_max_iter_of_one_or_more(data, make):
    """Refused before the client is used (a stand-in here: no cluster needed); a ValueError,
    as scikit-learn reports bad parameters (the other client= options' errors too)."""
    pytest.importorskip("sklearn")

    class Client:  # (stands for a dask.distributed.Client)
        pass

    X, y = data
    with pytest.raises(ValueError, match=r"^client= needs max_iter >= 1") as info:
        make(Client()).fit(X, y)
    one_line(info.value)


# ----------------------------------------------------------------------------- Dask inputs


def _dask_data(n_rows=40, chunk=20):
    da = pytest.importorskip("dask.array")
    X = sp.random(n_rows, 5, density=0.5, format="csr", random_state=0)
    y = np.where(np.arange(n_rows) % 2, 1.0, -1.0)
    return da, X, y, da.from_array(X, chunks=(chunk, 5), asarray=False)


def _bad_collections(case):
    da, X, y, Xd = _dask_data()
    yd = da.from_array(y, chunks=20)
    return {
        "X 1-D": (da.from_array(np.ones(40), chunks=20), yd, "^X must be a 2-D dask array$"),
        "X 3-D": (da.ones((40, 5, 2), chunks=(20, 5, 2)), yd, "^X must be a 2-D dask array$"),
        "y 2-D": (Xd, da.from_array(np.ones((40, 2)), chunks=(20, 2)),
                  "^y must be a 1-D dask array or series$"),
        "y a NumPy array": (Xd, y, "^y must be a dask array or dataframe, got ndarray$"),
        "y of other chunks": (Xd, da.from_array(y, chunks=(10, 30)),
                              "^X and y are chunked differently along the rows$"),
        "y of more chunks": (Xd, da.from_array(y, chunks=(10, 10, 20)),
                             "^X has 2 row chunks and y 3; chunk them alike$"),
    }[case]


BAD_COLLECTIONS = ["X 1-D", "X 3-D", "y 2-D", "y a NumPy array", "y of other chunks",
                   "y of more chunks"]  # fmt: skip


@pytest.mark.parametrize("case", BAD_COLLECTIONS)
def test_dask_collections_of_bad_shapes_are_refused_when_planned(case):
    from linsvm.distributed.shards import shards_from_collection

    X, y, message = _bad_collections(case)
    with pytest.raises(InvalidInputError, match=message) as info:
        shards_from_collection(X, y)
    one_line(info.value)


def test_unknown_chunk_sizes_name_the_row_within_its_shard():
    """A bad value in chunks of unknown length: the row within its shard, and how to get the
    row in the data."""
    import dask

    from linsvm.distributed.shards import shards_from_collection

    da, X, y, _ = _dask_data()
    dense = X.toarray()
    dense[25, 1] = np.nan
    keep = da.from_array(np.arange(40) % 7 > 0, chunks=20)  # (rows 0, 7, ..., 35 dropped)
    Xu, yu = da.from_array(dense, chunks=(20, 5))[keep], da.from_array(y, chunks=20)[keep]
    with pytest.raises(InvalidInputError,
                       match=r"^X contains NaN or infinity \(row 4, column 1\); the row counted "
                             r"within a shard whose place in the data is unknown \(compute the "
                             r"chunks' sizes") as info:  # fmt: skip
        dask.compute(*shards_from_collection(Xu, yu), scheduler="sync")
    one_line(info.value)


@pytest.fixture(scope="module")
def client():
    """An in-process cluster of one worker thread (no processes: cheap, and no clash with the
    Dask tests' clusters)."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("linsvm.distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.mark.parametrize("case", BAD_COLLECTIONS)
def test_dask_collections_of_bad_shapes_through_train(client, case):
    X, y, message = _bad_collections(case)
    with pytest.raises(InvalidInputError, match=message) as info:
        linsvm.train(X, y, client=client)
    one_line(info.value)


@pytest.mark.parametrize("y_chunks", [(20, 10), (10, 10, 10)])
def test_dask_collections_of_other_lengths_say_so(y_chunks):
    from linsvm.distributed.shards import shards_from_collection

    da, _, y, Xd = _dask_data()
    with pytest.raises(InvalidInputError, match="40 .*30"):
        shards_from_collection(Xd, da.from_array(y[:30], chunks=y_chunks))


def test_text_and_cache_files_mixed_through_train(client, tmp_path):
    from linsvm.io import write_cache

    text = tmp_path / "d.svm"
    text.write_text("1 1:1\n-1 2:1\n1 1:2\n-1 2:3\n")
    write_cache(text, tmp_path / "d.cache")
    for files in ([text, tmp_path / "d.cache"], [tmp_path / "d.cache", text]):
        with pytest.raises(InvalidInputError, match="^data files must be all LIBSVM text or all "
                                                    "linsvm caches, not a mix$") as info:
            linsvm.train([str(f) for f in files], client=client)
        one_line(info.value)
    assert issubclass(InvalidInputError, LinsvmError)
