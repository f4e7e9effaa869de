"""`linsvm train --dask` and the estimators' ``client=`` option, on a LocalCluster."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import main

distributed = pytest.importorskip("distributed")


def text_like(n_rows=800, n_features=3000, nnz=15, seed=0):
    """Unit-norm rows of a few random features, labels from a random linear model."""
    rng = np.random.default_rng(seed)
    cols = rng.choice(n_features, size=(n_rows, nnz))
    X = sp.csr_matrix(
        (rng.random(n_rows * nnz) + 0.5, cols.ravel(), np.arange(0, n_rows * nnz + 1, nnz)),
        shape=(n_rows, n_features),
    )
    X.sum_duplicates()
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))))
    y = np.where(X @ rng.standard_normal(n_features) + 0.3 * rng.standard_normal(n_rows) > 0,
                 1, 2)  # fmt: skip
    return X, y


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_cli_trains_on_a_local_cluster_and_writes_the_usual_model(tmp_path, capsys):
    X, y = text_like()
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    model_path = tmp_path / "data.model"
    assert main(["train", "--dask", "local:2", "-s", "3", "-e", "1e-4", str(text),
                 str(model_path)]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "round 1:" in captured.err and "gap" in captured.err
    assert "optimization finished" in captured.out
    model = linsvm.load_model(model_path)
    reference = linsvm.train(X, y, solver=3, eps=1e-6, max_iter=100_000)
    assert model.solver == 3 and list(model.labels_) == list(reference.labels_)
    assert np.mean(model.predict(X) == reference.predict(X)) >= 0.99
    # the model the distributed run wrote is LIBLINEAR's format: predict reads it
    assert main(["predict", str(text), str(model_path), str(tmp_path / "out")]) == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dask", "local:2", "-s", "2"], "trains -s 1, -s 3 and -s 7"),
        (["--dask", "local:2", "--memory", "1G"], "does not go with --memory"),
        (["--dask", "local:2", "-v", "3"], "does not go with -v"),
        (["--partitions", "2"], "go with --dask"),
        (["--hold-bias"], "go with --dask"),
        (["--dask", "local:0"], "N >= 1"),
        (["--dask", "local:two"], "needs a number"),
        (["--dask", "local:2", "--no-shrinking"], "does not go with --no-shrinking"),
        (["--dask", "local:2", "-m", "2"], "does not go with -m"),
        (["--dask", "local:2", "-e", "0"], "-e (the relative duality gap to stop at) must be > 0"),
        (["--dask", "local:2", "-e", "1"], "must be > 0 and < 1, got 1"),
        (["--dask", "local:2", "--partitions", "0"], "--partitions must be >= 1"),
        (["--dask", "foo"], "'foo' is not a scheduler's address"),
        (["--dask", "localhost:abc"], "is not a scheduler's address"),
        # (refused before a Client is made: one failing in its constructor hung the
        # process at its garbage collection, where another Client runs)
        (["--dask", "inproc://x"], "for inproc://, pass a dask Client"),
        (["--dask", "tls://127.0.0.1:1"], "for tls://, pass a dask Client"),
        (["--dask", "ucx://127.0.0.1:1"], "for ucx://, pass a dask Client"),
    ],
)
def test_cli_refuses_what_distributed_training_cannot_do(tmp_path, capsys, args, message):
    X, y = text_like(n_rows=50)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    assert main(["train", *args, str(text), str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_estimators_fit_on_the_cluster(client):
    X, y = text_like(seed=1)
    # without an intercept: a bias feature every row shares takes CoCoA+ many more rounds
    local = linsvm.LinearSVC(tol=1e-6, max_iter=100_000, fit_intercept=False).fit(X, y)
    remote = linsvm.LinearSVC(client=client, tol=1e-5, fit_intercept=False).fit(X, y)
    assert remote.model_.solver == 1  # dual="auto" takes the dual with a client
    np.testing.assert_array_equal(remote.classes_, local.classes_)
    assert np.mean(remote.predict(X) == local.predict(X)) >= 0.99
    assert abs(remote.objective_[0] - local.objective_[0]) <= 1e-4 * local.objective_[0]

    lr = linsvm.LogisticRegression(dual=True, client=client, tol=1e-5, fit_intercept=False)
    lr.fit(X, y)
    assert lr.model_.solver == 7 and lr.predict_proba(X).shape == (X.shape[0], 2)
    with pytest.raises(ValueError, match="set dual=True"):
        linsvm.LogisticRegression(client=client).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        linsvm.LinearSVC(client=client).fit(X, y, sample_weight=np.ones(X.shape[0]))
    # this process's threads and GPU, refused as the command line refuses -m and --gpu
    # with --dask (they were ignored: device="cuda" fitted on the workers' CPUs)
    for options, refused in (({"device": "cuda"}, "device"), ({"n_jobs": 4}, "n_jobs"),
                             ({"thread_scheme": "rounds"}, "thread_scheme"),
                             ({"tol": 0.0}, "tol > 0"), ({"max_iter": 0}, "max_iter >= 1")):
        with pytest.raises(ValueError, match=refused):
            linsvm.LinearSVC(client=client, **options).fit(X, y)


def test_an_estimator_warns_only_when_the_cluster_run_hits_its_cap(client):
    """CoCoA+ counts the round that measures the gap: a fit that converged on its last
    allowed round warned "failed to converge" (scikit-learn's n_iter >= max_iter)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y = text_like(seed=2)
    options = {"client": client, "tol": 1e-2, "fit_intercept": False}
    rounds = linsvm.LinearSVC(**options).fit(X, y).model_.results_[0].n_iter
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        exact = linsvm.LinearSVC(max_iter=rounds, **options).fit(X, y)
    assert exact.model_.results_[0].converged
    with pytest.warns(ConvergenceWarning, match="failed to converge"):
        linsvm.LinearSVC(max_iter=rounds - 1, **options).fit(X, y)


def test_an_estimator_with_a_client_clones_pickles_and_cross_validates(client):
    """clone shares the Client (a live connection cannot be copied); a pickled estimator holds
    its scheduler's address, and a fit of it connects there; cross_val_score clones."""
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, y = text_like(n_rows=300, seed=2)
    estimator = linsvm.LinearSVC(client=client, tol=1e-4, fit_intercept=False, C=0.5)
    twin = clone(estimator)
    assert twin.client is client and twin.get_params()["C"] == 0.5
    scores = cross_val_score(estimator, X, y, cv=2)
    assert scores.shape == (2,) and np.all(scores > 0.5)
    fitted = estimator.fit(X, y)
    copy = pickle.loads(pickle.dumps(fitted))
    assert copy.client == client.scheduler.address and estimator.client is client
    np.testing.assert_array_equal(copy.coef_, fitted.coef_)
    objective = fitted.objective_[0]
    copy.fit(X, y)  # (CoCoA+ runs differ in the last digits: both within tol of the optimum)
    assert abs(copy.objective_[0] - objective) <= 1e-3 * objective


def test_cli_a_bad_file_read_by_the_workers_is_one_line(tmp_path):
    """The workers' error comes back as the client's one line, with nothing printed by the
    worker processes (they share the terminal: a subprocess shows what they print)."""
    import subprocess
    import sys

    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n-1 2:x\n")
    command = "import sys; from linsvm.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", command, "train", "--dask", "local:2", "bad.svm", "m"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode != 0
    # the workers read the absolute path; the error names the file as given, as other modes
    assert run.stderr.strip().splitlines() == [
        "linsvm train: error: bad.svm:2: bad value 'x' for feature 2"
    ]
    assert not (tmp_path / "m").exists()


def test_cli_a_file_it_cannot_open_is_the_error_other_modes_give(tmp_path, monkeypatch, capsys):
    """Found before a cluster starts, and named as given."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    assert main(["train", "--dask", "local:2", "adir", "m"]) == 1
    assert capsys.readouterr().err == "linsvm train: error: adir: Is a directory\n"
    assert main(["train", "--dask", "local:2", "nope.txt", "m"]) == 1
    assert capsys.readouterr().err == "linsvm train: error: nope.txt: No such file or directory\n"


def test_errors_naming_the_workers_absolute_path_name_the_file_as_given():
    from linsvm.cli import _as_given
    from linsvm.errors import DataFormatError, InvalidInputError
    from linsvm.io.cache import CacheFormatError

    absolute, given = "/data/x/train.txt", "x/train.txt"
    cases = [
        (DataFormatError(absolute, 7, "bad value"), "x/train.txt:7: bad value"),
        (CacheFormatError(absolute, "truncated"), "x/train.txt: truncated"),
        (InvalidInputError(f"{absolute} bytes 0-100: a label that the planned classes do not "
                           "have"), "x/train.txt bytes 0-100: a label"),
        (FileNotFoundError(2, "No such file or directory", absolute), "x/train.txt"),
        (InvalidInputError("no training data: 0 rows"), "no training data: 0 rows"),
    ]
    for error, expected in cases:
        with pytest.raises(type(error)) as caught, _as_given(absolute, given):
            raise error
        shown = caught.value.filename if isinstance(error, OSError) else str(caught.value)
        assert shown.startswith(expected), (error, shown)
        if isinstance(error, DataFormatError):
            assert caught.value.path == given and caught.value.line == error.line
