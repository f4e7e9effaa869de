"""``linsvm.train`` as the one way in: a path read into memory, blocks of a file under
``memory=``, a Dask cluster with ``client=``; the same models as the place's own function and
as the command line, and one-line errors for what a place does not take."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.errors import InvalidInputError


def problem(n_rows=800, n_features=60, seed=3):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=0.15, format="csr", random_state=seed)
    y = np.where(X @ rng.standard_normal(n_features) + 0.1 * rng.standard_normal(n_rows) > 0,
                 1, -1)  # fmt: skip
    return X, y


@pytest.fixture()
def files(tmp_path):
    """(text path, cache path) of the same rows."""
    from linsvm.io.cache import write_cache

    X, y = problem()
    text, cache = tmp_path / "data.txt", tmp_path / "data.lsvc"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, cache)
    return text, cache


@pytest.mark.parametrize("kind", [0, 1])
def test_a_path_is_read_into_memory(files, kind):
    path = files[kind]
    model = linsvm.train(path, solver=3, C=0.5)
    X, y = linsvm.read_libsvm(path)
    same = linsvm.train(X, y, solver=3, C=0.5)
    np.testing.assert_array_equal(model.coef_, same.coef_)
    assert model.results_[0].n_iter == same.results_[0].n_iter


def test_memory_gives_the_model_of_train_cache_and_of_the_command(files, tmp_path):
    """The data fit one block under every overhead (measured or the constant), so the three
    runs make the same model file. linsvm.train counts this process as measured, like the
    command, so its budget is what the process holds plus the command's room."""
    from linsvm.outofcore import measured_overhead, train_cache

    text, cache = files
    by_train = tmp_path / "train.model"
    by_cache = tmp_path / "cache.model"
    by_command = tmp_path / "command.model"
    budget = f"{(measured_overhead(1) >> 20) + 64}M"
    linsvm.train(cache, memory=budget, solver=1).save(by_train)
    train_cache(cache, memory="300M", solver=1).save(by_cache)
    subprocess.run(
        [sys.executable, "-m", "linsvm", "train", "-q", "-s", "1", "--memory", "300M",
         str(cache), str(by_command)],
        check=True,
    )  # fmt: skip
    assert by_train.read_bytes() == by_cache.read_bytes() == by_command.read_bytes()
    # text is converted to a temporary cache first: the same rows, the same model
    linsvm.train(text, memory=budget, solver=1).save(tmp_path / "text.model")
    assert (tmp_path / "text.model").read_bytes() == by_train.read_bytes()


def test_what_a_place_does_not_take_is_one_line_error(files):
    X, y = problem()
    text, cache = files
    with pytest.raises(InvalidInputError, match="file's labels are the targets"):
        linsvm.train(text, y)
    with pytest.raises(InvalidInputError, match="already in memory"):
        linsvm.train(X, y, memory="300M")
    with pytest.raises(InvalidInputError, match="not both"):
        linsvm.train(cache, memory="300M", client="local:1")
    with pytest.raises(InvalidInputError, match=r"not sample_weight, shrinking$"):
        linsvm.train(cache, memory="300M", sample_weight=np.ones(800), shrinking=False)
    with pytest.raises(InvalidInputError, match="-s 1, -s 3 and -s 7, not -s 2"):
        linsvm.train(cache, memory="300M", solver=2)
    with pytest.raises(InvalidInputError, match="too small: this process holds"):
        linsvm.train(cache, memory="1M", solver=3)
    with pytest.raises(InvalidInputError, match="not checkpoint"):
        linsvm.train(X, y, client="local:1", checkpoint="ckpt")


def test_client_local_trains_on_a_cluster_it_starts_and_closes(files):
    pytest.importorskip("distributed")
    X, y = problem()
    model = linsvm.train(X, y, client="local:1", solver=3, eps=1e-4)
    reference = linsvm.train(X, y, solver=3, eps=1e-6, max_iter=100_000)
    (r,), (ref,) = model.results_, reference.results_
    assert abs(r.primal - ref.primal) <= 1e-3 * ref.primal
    assert np.mean(model.predict(X) == reference.predict(X)) >= 0.99
    with pytest.raises(InvalidInputError, match="local:N needs"):
        linsvm.train(X, y, client="local:zero")
