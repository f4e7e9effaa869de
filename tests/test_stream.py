"""Rows a chunk at a time (io.stream) and the streaming ``linsvm predict`` built on them."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import main
from linsvm.io import libsvm as libsvm_io
from linsvm.io.cache import write_cache
from linsvm.io.stream import iter_libsvm


def data(n_rows=3000, n_features=50, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=0.1, format="csr", random_state=seed)
    X = X.tolil()
    X[5] = 0  # an empty row
    X = X.tocsr()
    X.eliminate_zeros()
    y = np.where(X @ rng.standard_normal(n_features) > 0, 1, -1)
    return X, y


@pytest.fixture
def files(tmp_path, monkeypatch):
    # small blocks, so that the text comes in many chunks
    monkeypatch.setattr(libsvm_io, "BLOCK_SIZE", 4096)
    X, y = data()
    text = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, text)
    packed = tmp_path / "d.txt.gz"
    packed.write_bytes(gzip.compress(text.read_bytes()))
    cache = tmp_path / "d.lsvc"
    write_cache(text, cache, block_bytes=8192)
    return X, y, {"text": text, "gz": packed, "cache": cache}


@pytest.mark.parametrize("kind", ["text", "gz", "cache"])
def test_chunks_are_the_rows_in_order(files, kind):
    X, y, paths = files
    chunks = list(iter_libsvm(paths[kind], n_features=60))
    assert len(chunks) > 3
    stacked = sp.vstack([c for c, _ in chunks]).tocsr()
    assert stacked.shape == (X.shape[0], 60)
    np.testing.assert_array_equal(stacked[:, : X.shape[1]].toarray(), X.toarray())
    np.testing.assert_array_equal(np.concatenate([t for _, t in chunks]), y)


@pytest.mark.parametrize("kind", ["text", "gz", "cache"])
@pytest.mark.parametrize("flags", [[], ["-b", "1"]])
def test_streaming_predict_writes_what_whole_prediction_gives(files, tmp_path, capsys, kind,
                                                             flags):  # fmt: skip
    X, y, paths = files
    model = linsvm.train(X, y, solver=0 if flags else 1)
    model_path = tmp_path / "m.model"
    model.save(model_path)
    out = tmp_path / f"out-{kind}"
    assert main(["predict", *flags, str(paths[kind]), str(model_path), str(out)]) == 0
    lines = out.read_text().splitlines()
    if flags:
        assert lines[0] == "labels " + " ".join(str(v) for v in model.labels_)
        lines = lines[1:]
        proba = np.array([[float(v) for v in line.split()[1:]] for line in lines])
        np.testing.assert_allclose(proba, model.predict_proba(X), rtol=1e-5)
    predicted = np.array([float(line.split()[0]) for line in lines])
    np.testing.assert_array_equal(predicted, model.predict(X))
    accuracy = 100.0 * np.mean(predicted == y)
    assert f"Accuracy = {accuracy:g}%" in capsys.readouterr().out


def test_streaming_regression_scores_match_the_whole_ones(files, tmp_path, capsys):
    from linsvm.cli import regression_scores

    X, _, paths = files
    target = X @ np.linspace(-1, 1, X.shape[1])
    text = tmp_path / "r.txt"
    linsvm.write_libsvm(X, target, text)
    model = linsvm.train(X, target, solver=11)
    model.save(tmp_path / "r.model")
    assert main(["predict", str(text), str(tmp_path / "r.model"), str(tmp_path / "o")]) == 0
    mse, r2 = regression_scores(model.predict(X), target)
    printed = capsys.readouterr().out
    assert f"Mean squared error = {mse:g}" in printed
    assert f"Squared correlation coefficient = {r2:g}" in printed


def test_a_bad_line_late_in_the_file_leaves_the_output_untouched(files, tmp_path, capsys):
    X, y, paths = files
    model_path = tmp_path / "m.model"
    linsvm.train(X, y).save(model_path)
    bad = tmp_path / "bad.txt"
    bad.write_text(paths["text"].read_text() + "1 3:x\n")
    out = tmp_path / "out"
    out.write_text("before\n")
    assert main(["predict", str(bad), str(model_path), str(out)]) != 0
    err = capsys.readouterr().err
    assert f"{bad}:{X.shape[0] + 1}:" in err and "\n" not in err.strip()
    assert out.read_text() == "before\n"


CUT_WHILE_READ = """
import os, sys
import numpy as np
import linsvm
from linsvm.io.stream import iter_libsvm
path = sys.argv[1]
chunks = iter_libsvm(path)
X, y = next(chunks)
os.truncate(path, 4096)  # (cp of another file over it, a full disk's cut)
print(float(X.data.sum()) == float(X.data.sum()), flush=True)  # the rows handed out stay
try:
    next(chunks)
except linsvm.LinsvmError as error:
    print(str(error).split(": ", 1)[1])
"""


def test_a_cache_cut_short_while_predict_reads_it_is_an_error_not_sigbus(tmp_path):
    # predict streams a cache a block at a time: the rows it holds are its own copies
    import subprocess
    import sys

    X, y = data(n_rows=4000)
    text = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, tmp_path / "cut.lsvc", block_bytes=20_000)
    run = subprocess.run([sys.executable, "-c", CUT_WHILE_READ, str(tmp_path / "cut.lsvc")],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, (run.returncode, run.stderr)
    lines = run.stdout.splitlines()
    assert lines[0] == "True" and lines[1].startswith("truncated to 4096 of ")
