"""Block minimisation (-s 1, -s 3 over blocks of rows) against the in-memory solvers."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.errors import InvalidInputError
from linsvm.outofcore import ArrayBlocks, group_blocks, parse_memory, train_blocks


def problem(n_rows=600, n_features=40, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=0.2, format="csr", random_state=seed)
    scores = X @ rng.standard_normal((n_features, n_classes)) + 0.2 * rng.standard_normal(
        (n_rows, n_classes)
    )
    y = np.argmax(scores, axis=1) if n_classes > 2 else np.where(scores[:, 0] > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("n_blocks", [1, 3, 7])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("selective", [True, False])
def test_tiny_blocks_reach_the_in_memory_optimum(solver, n_blocks, bias, selective):
    X, y = problem()
    whole = linsvm.train(X, y, solver=solver, C=0.5, eps=1e-8, bias=bias, max_iter=100_000)
    model = train_blocks(
        ArrayBlocks(X, y, n_blocks), solver=solver, C=0.5, eps=1e-6, bias=bias,
        max_outer=2000, max_block_bytes=1, selective=selective,
    )  # fmt: skip
    (r,), (ref,) = model.results_, whole.results_
    assert r.converged
    assert abs(r.primal - ref.primal) <= 1e-6 * abs(ref.primal)
    assert r.gap >= -1e-9 * abs(r.primal)
    # w = sum_i y_i alpha_i x_i over every row, across the blocks
    y_sign = np.where(y == model.labels_[0], 1.0, -1.0)
    Xb = sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr() if bias >= 0 else X
    np.testing.assert_allclose(Xb.T @ (y_sign * r.alpha), r.w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))


def test_lr_dual_in_blocks_takes_about_the_in_memory_iterations():
    """-s 7 in blocks goes by epochs of the in-memory solver, its training blocks (10 here)
    drawn afresh from 48 stored ones: about the solver's outer iterations (fixed blocks, each
    solved for several passes, took many times as many)."""
    X, y = problem(n_rows=3000, n_features=30, seed=5)
    whole = linsvm.train(X, y, solver=7, C=4.0, eps=1e-3, max_iter=1000)
    model = train_blocks(ArrayBlocks(X, y, 48), solver=7, C=4.0, eps=1e-3, max_outer=1000,
                         max_block_bytes=60_000)  # fmt: skip
    r, ref = model.results_[0], whole.results_[0]
    assert r.converged
    assert r.n_iter <= 2 * ref.n_iter + 5, (r.n_iter, ref.n_iter)
    assert abs(r.primal - ref.primal) <= 1e-5 * ref.primal


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_lr_dual_in_blocks_reaches_the_in_memory_optimum(n_classes, bias):
    X, y = problem(n_classes=n_classes, seed=13)
    whole = linsvm.train(X, y, solver=7, C=2.0, eps=1e-9, bias=bias, max_iter=100_000)
    model = train_blocks(
        ArrayBlocks(X, y, 5), solver=7, C=2.0, eps=1e-6, bias=bias, max_outer=2000,
        max_block_bytes=1,
    )  # fmt: skip
    assert model.solver == 7
    for k, (r, ref) in enumerate(zip(model.results_, whole.results_, strict=True)):
        assert r.converged
        assert abs(r.primal - ref.primal) <= 1e-6 * abs(ref.primal)
        assert -1e-12 * abs(r.primal) <= r.gap <= 1e-5 * abs(r.primal)  # (rounding below 0)
        assert np.all((r.alpha > 0) & (r.alpha < 2.0))
        # w = sum_i y_i alpha_i x_i exactly, the alphas moved into (0, C) included
        label = model.labels_[k]
        y_sign = np.where(y == label, 1.0, -1.0)
        Xb = sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr() if bias >= 0 else X
        np.testing.assert_allclose(Xb.T @ (y_sign * r.alpha), r.w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-5)



@contextlib.contextmanager
def stopped_at_checkpoint(monkeypatch, saves: int = 1):
    """A run within the block checkpoints every block and ends (KeyboardInterrupt, as the
    end of the process) right after its ``saves``-th checkpoint is written."""
    from linsvm.runner import _RunCheckpoints

    real_save = _RunCheckpoints.save
    written = []

    def save_then_stop(self, *args):
        real_save(self, *args)
        written.append(args)
        if len(written) == saves:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(_RunCheckpoints, "save", save_then_stop)
        patch.setattr(_RunCheckpoints, "due", lambda self: True)
        with pytest.raises(KeyboardInterrupt):
            yield

def test_multiclass_shares_the_blocks():
    X, y = problem(n_classes=4, seed=3)
    whole = linsvm.train(X, y, solver=1, eps=1e-8, max_iter=100_000)
    model = train_blocks(
        ArrayBlocks(X, y, 4), solver=1, eps=1e-6, max_block_bytes=1, max_outer=2000
    )
    assert all(r.converged for r in model.results_)
    assert list(model.labels_) == list(whole.labels_) and len(model.results_) == 4
    for r, ref in zip(model.results_, whole.results_, strict=True):
        assert abs(r.primal - ref.primal) <= 1e-6 * abs(ref.primal)


def test_progress_reports_a_true_gap_every_outer_iteration():
    X, y = problem(seed=5)
    whole = linsvm.train(X, y, solver=3, eps=1e-9, max_iter=100_000).results_[0].primal
    seen = []
    train_blocks(ArrayBlocks(X, y, 5), solver=3, eps=1e-4, max_block_bytes=1, on_outer=seen.append)
    assert [p.iteration for p in seen] == list(range(1, len(seen) + 1))
    for p in seen:
        # P(w_t) >= P* >= D(alpha_t): the reported gap brackets the optimum
        assert p.primal[0] >= whole * (1 - 1e-12) and p.dual[0] <= whole * (1 + 1e-12)
        assert p.blocks == 5 and p.mb_read > 0


@pytest.mark.parametrize("solver", [1, 3])
def test_held_out_rows_take_no_part(solver):
    X, y = problem(n_rows=700, n_classes=3, seed=11)
    held_out = np.zeros(X.shape[0], dtype=bool)
    held_out[np.random.default_rng(0).choice(X.shape[0], 200, replace=False)] = True
    whole = linsvm.train(X[~held_out], y[~held_out], solver=solver, eps=1e-8, max_iter=100_000)
    model = train_blocks(
        ArrayBlocks(X, y, 4), solver=solver, eps=1e-6, max_block_bytes=1, max_outer=10_000,
        held_out=held_out,
    )  # fmt: skip
    for r, ref in zip(model.results_, whole.results_, strict=True):
        assert r.converged
        assert abs(r.primal - ref.primal) <= 1e-6 * abs(ref.primal)
        assert not r.alpha[held_out].any()
    with pytest.raises(InvalidInputError, match="mask of the 700 rows"):
        train_blocks(ArrayBlocks(X, y, 2), held_out=held_out[:5])


@pytest.mark.usefixtures("fresh_process_overhead")
def test_cross_validation_in_blocks_matches_the_in_memory_folds(tmp_path, capsys):
    from linsvm.cli import main
    from linsvm.outofcore import cross_validate_blocks

    X, y = problem(n_rows=800, n_classes=3, seed=12)
    predicted = linsvm.cross_validation(X, y, 4, seed=3, solver=1, eps=1e-6, max_iter=100_000)
    in_memory = int(np.count_nonzero(predicted == y))
    correct, n_rows = cross_validate_blocks(
        ArrayBlocks(X, y, 3), 4, seed=3, solver=1, eps=1e-6, max_block_bytes=1, max_outer=2000
    )
    # the same folds and (to the tolerance) the same models: the same predictions
    assert n_rows == 800 and abs(correct - in_memory) <= 2, (correct, in_memory)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    capsys.readouterr()
    assert main(["train", "-v", "4", "--memory", "1G", "-s", "1", str(text)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]  # (after each fold's lines)
    assert last.startswith("Cross Validation Accuracy = ")
    accuracy = float(last.split("=")[1].strip().rstrip("%"))
    assert abs(accuracy - 100.0 * in_memory / 800) <= 2.0


@pytest.mark.usefixtures("fresh_process_overhead")
def test_cross_validation_in_blocks_caps_folds_as_training_in_blocks(tmp_path, monkeypatch):
    # -v --memory without --max-iter: each fold's cap is the in-memory solver's, as for
    # train --memory (a lower one stopped the folds early and lowered the accuracy)
    from linsvm import runner, solvers
    from linsvm.cli import main

    caps = []
    options = runner._block_options

    def recording(*args):
        checked = options(*args)
        caps.append(checked[-1])
        return checked

    monkeypatch.setattr(runner, "_block_options", recording)
    X, y = problem(n_rows=200, n_classes=2, seed=12)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    assert main(["train", "-q", "-v", "2", "--memory", "1G", "-s", "1", str(text)]) == 0
    assert main(["train", "-q", "--memory", "1G", "-s", "1", str(text), str(tmp_path / "m")]) == 0
    # (max_outer=2: measured_overhead's warm-up of the kernels, before each run)
    assert [cap for cap in caps if cap != 2] == [solvers.SOLVERS[1].max_iter] * 3


@pytest.mark.usefixtures("fresh_process_overhead")
def test_summary_names_the_classes_as_in_memory(tmp_path, capsys):
    from linsvm.cli import main

    X, y = problem(n_rows=300, n_classes=3, seed=12)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    capsys.readouterr()
    heads = {}
    for place in ([], ["--memory", "1G"]):
        assert main(["train", *place, "-s", "1", str(text), str(tmp_path / "m")]) == 0
        out = capsys.readouterr().out
        heads[bool(place)] = list(dict.fromkeys(re.findall(r"^\[class [^]]*\]", out, re.M)))
    assert heads[True] == heads[False] and len(heads[True]) == 3, heads
    assert all(re.fullmatch(r"\[class -?\d+\]", head) for head in heads[True])


def test_cross_validation_in_blocks_scores_pieces_not_whole_stored_blocks(tmp_path,
                                                                          monkeypatch):  # fmt: skip
    # the held-out rows are scored a piece at a time (read into one buffer): a stored block
    # copied whole (64 MB by default) took -v --memory past its budget
    from linsvm.io import cache as cache_module
    from linsvm.io.cache import write_cache
    from linsvm.runner import SCORING_SHARE, cross_validate_cache

    X, y = problem(n_rows=3000, n_features=400, n_classes=2, seed=12)
    text, path = tmp_path / "data.txt", tmp_path / "data.lsvc"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, path)  # (one stored block)
    read = []
    read_rows = cache_module.Cache.read_rows

    def recording(self, k, r0, r1, *args):
        read.append(r1 - r0)
        return read_rows(self, k, r0, r1, *args)

    monkeypatch.setattr(cache_module.Cache, "read_rows", recording)
    monkeypatch.setattr(cache_module.Cache, "blocks", None)  # (no whole copies)
    memory = 20 << 20  # (with no overhead counted: 1.25 MiB pieces, the data twice that)
    data_bytes = X.nnz * 12 + 3000 * 16
    assert data_bytes > 2 * memory // SCORING_SHARE
    correct, n_rows = cross_validate_cache(path, 3, memory=memory, solver=1, overhead_bytes=0)
    assert n_rows == 3000 and correct > 2000
    assert max(read) * data_bytes / 3000 <= 1.1 * memory / SCORING_SHARE


def test_a_fold_trained_on_one_class_predicts_it_in_blocks_as_in_memory():
    """Three rows of one class and one of another in 4 folds: three folds train on one class,
    and predict it, as the in-memory cross-validation (and LIBLINEAR) does."""
    from linsvm.outofcore import cross_validate_blocks

    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [2.0, 0, 0], [0, 0, 1.0]]))
    y = np.array([1.0, 1.0, 1.0, -1.0])
    in_memory = int(np.count_nonzero(linsvm.cross_validation(X, y, 4, seed=1) == y))
    correct, n_rows = cross_validate_blocks(ArrayBlocks(X, y, 2), 4, seed=1, solver=1)
    assert (correct, n_rows) == (in_memory, 4)


def test_cross_validation_in_blocks_hands_each_fold_to_on_fold():
    """``on_fold(f, model)`` once a fold, in fold order: None for a fold trained on one class
    (as the in-memory cross-validation's), else the fold's model."""
    from linsvm.outofcore import cross_validate_blocks

    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [2.0, 0, 0], [0, 0, 1.0]]))
    y = np.array([1.0, 1.0, 1.0, -1.0])
    blocks, memory = [], []
    cross_validate_blocks(ArrayBlocks(X, y, 2), 4, seed=1, solver=1,
                          on_fold=lambda f, model: blocks.append((f, model)))  # fmt: skip
    linsvm.cross_validation(X, y, 4, seed=1,
                            on_fold=lambda f, model: memory.append((f, model)))  # fmt: skip
    assert [f for f, _ in blocks] == [0, 1, 2, 3]
    assert [m is None for _, m in blocks] == [m is None for _, m in sorted(memory)]
    assert any(m is None for _, m in blocks) and any(m is not None for _, m in blocks)
    for _, model in blocks:
        if model is not None:
            assert model.results_[0].n_iter >= 1 and model.predict(X).shape == (4,)


def test_group_blocks_and_memory_sizes():
    rows = np.array([10, 10, 10, 10])
    nbytes = np.array([100, 100, 100, 100])
    per_row = 8 + 8 + 32 + 4 + 4 + 1 + 8
    assert group_blocks(rows, nbytes, 2 * (100 + 10 * per_row), 1) == [(0, 2), (2, 4)]
    assert group_blocks(rows, nbytes, 1, 1) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert parse_memory("2G") == 2 << 30 and parse_memory("512m") == 512 << 20
    assert parse_memory("1.5GiB") == int(1.5 * 2**30) and parse_memory(4096) == 4096
    for bad in ("lots", "-1G", "0", ""):
        with pytest.raises(InvalidInputError):
            parse_memory(bad)


def test_bad_requests_are_one_line_errors():
    X, y = problem()
    with pytest.raises(InvalidInputError, match="-s 1, -s 3 and -s 7"):
        train_blocks(ArrayBlocks(X, y, 2), solver=2)
    with pytest.raises(InvalidInputError, match="selective=False"):
        train_blocks(ArrayBlocks(X, y, 2), solver=7, selective=True)
    with pytest.raises(InvalidInputError, match="memory 1.0 MiB is too small"):
        train_blocks(ArrayBlocks(X, y, 2), memory="1M")
    # a size without a unit is bytes, and the message says so (not "0 MiB")
    with pytest.raises(InvalidInputError, match="memory 10 bytes is too small"):
        train_blocks(ArrayBlocks(X, y, 2), memory=10)
    with pytest.raises(InvalidInputError, match="one class"):
        train_blocks(ArrayBlocks(X, np.ones(X.shape[0]), 2))
    # counts are integers: inner_iter=2.5 ran no iteration and waited for one forever, a
    # fractional or boolean max_iter was a TypeError or one outer iteration
    for options, match in (({"inner_iter": 2.5}, "inner_iter must be an integer >= 1"),
                           ({"inner_iter": "2"}, "inner_iter must be an integer >= 1"),
                           ({"max_outer": 2.5}, r"max_iter \(max_outer\) must be an integer"),
                           ({"max_outer": True}, r"max_iter \(max_outer\) must be an integer"),
                           # (an IndexError and a raw ValueError before)
                           ({"held_out": np.ones(X.shape[0], bool)}, "held_out holds every row"),
                           ({"max_block_bytes": "1M"}, "max_block_bytes must be a number"),
                           ({"max_block_bytes": 0}, "max_block_bytes must be a number")):
        with pytest.raises(InvalidInputError, match=match):
            train_blocks(ArrayBlocks(X, y, 2), **options)


def test_a_cache_in_blocks_reaches_the_in_memory_optimum(tmp_path):
    from linsvm.io.cache import open_cache, write_cache
    from linsvm.outofcore import CacheBlocks, train_cache

    X, y = problem(n_rows=900, seed=7)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    cache = tmp_path / "data.lsvc"
    write_cache(text, cache, block_bytes=4096)
    with open_cache(cache) as opened:
        source = CacheBlocks(opened)
        assert source.n_blocks > 5
        np.testing.assert_array_equal(source.labels(), y)
    whole = linsvm.train(X, y, solver=1, eps=1e-8, max_iter=100_000).results_[0].primal
    model = train_cache(cache, solver=1, eps=1e-6, max_outer=2000, max_block_bytes=20_000)
    assert model.results_[0].converged
    assert abs(model.results_[0].primal - whole) <= 1e-6 * whole


def test_data_several_times_the_budget_reaches_the_in_memory_optimum(tmp_path):
    """The default (epochs over training blocks drawn afresh from units each epoch) on a cache
    seven times what its budget leaves a block reaches the in-memory optimum. (-s 1: on this
    data -s 3 needs 56k epochs in memory to eps 1e-6; the tiny-block tests hold it.)"""
    solver = 1
    from linsvm.io.cache import write_cache
    from linsvm.outofcore import RUN_SLACK_BYTES, train_cache
    from linsvm.problems import RowTargets

    X, y = problem(n_rows=16_000, n_features=300, seed=21)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    cache = tmp_path / "data.lsvc"
    write_cache(text, cache, block_bytes=1 << 16)
    block = 5 << 18  # 1.25 MiB, past the smallest block a budget must leave (MIN_BLOCK_BYTES)
    assert X.nnz * 12 + 16 * X.shape[0] > 7 * block
    # two blocks, the labels and the shrinking marks, w at an iteration's start, the slack
    budget = (2 * block + 2 * X.shape[0] + 8 * X.shape[1] + RowTargets.CHUNK_BYTES
              + RUN_SLACK_BYTES)  # fmt: skip
    seen = []
    whole = linsvm.train(X, y, solver=solver, C=0.3, eps=1e-9, max_iter=100_000)
    model = train_cache(cache, memory=budget, overhead_bytes=0, solver=solver, C=0.3,
                        eps=1e-5, max_outer=20_000, on_outer=seen.append)  # fmt: skip
    (r,), (ref,) = model.results_, whole.results_
    assert r.converged and seen[0].blocks >= 7
    assert abs(r.primal - ref.primal) <= 1e-6 * ref.primal
    # every outer iteration's exact gap brackets the optimum
    assert all(p.primal[0] >= ref.primal * (1 - 1e-9) for p in seen)
    assert all(p.dual[0] <= ref.primal * (1 + 1e-9) for p in seen)


def test_blocks_drawn_from_units_hold_the_units_rows(tmp_path):
    """A training block of the epoch mode is its units' rows in the plan's order, read from
    the cache into reused buffers (the same arrays as reading the rows whole)."""
    from linsvm.io.cache import open_cache, write_cache
    from linsvm.outofcore import BlockBuffer, CacheBlocks, unit_rows

    X, y = problem(n_rows=700, seed=4)
    text = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, tmp_path / "d.lsvc", block_bytes=5000)
    with open_cache(tmp_path / "d.lsvc") as cache:
        units = CacheBlocks(cache).split(2000)
        starts = np.concatenate(([0], np.cumsum(units.block_rows())))
        out = BlockBuffer()
        for pick in ([3, 0, 7], [units.n_blocks - 1], [5, 6, 2, 1]):
            rows = unit_rows(starts, np.array(pick))
            Xg, yg = units.gather(np.array(pick), out)
            np.testing.assert_array_equal(Xg.toarray(), X[rows].toarray())
            np.testing.assert_array_equal(yg, y[rows])


@pytest.mark.usefixtures("fresh_process_overhead")
def test_cli_trains_in_blocks_from_text_or_cache(tmp_path, capsys):
    from linsvm.cli import main

    X, y = problem(n_rows=500, seed=8)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)
    assert main(["cache", "-q", str(text), str(tmp_path / "data.lsvc")]) == 0
    for source in ("data.txt", "data.lsvc"):
        model_path = tmp_path / f"{source}.model"
        assert main(["train", "-q", "--memory", "1G", "-s", "3", "-e", "0.001",
                     str(tmp_path / source), str(model_path)]) == 0  # fmt: skip
        model = linsvm.load_model(model_path)
        reference = linsvm.train(X, y, solver=3, eps=0.001)
        assert np.mean(model.predict(X) == reference.predict(X)) > 0.99
    capsys.readouterr()
    assert main(["train", "--memory", "1G", "-s", "0", str(text)]) != 0
    assert "-s 1, -s 3 and -s 7" in capsys.readouterr().err


MEMORY_CHILD = textwrap.dedent("""
    import sys
    import linsvm
    from linsvm.outofcore import train_cache

    def status(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024

    mode, cache, warm, memory = sys.argv[1:]
    # compiled code loaded and every path run once (several blocks) before measuring
    train_cache(warm, memory="300M", solver=1, max_outer=2, max_block_bytes=20000)
    linsvm.train(*linsvm.read_libsvm(warm), solver=1, max_iter=1)
    with open("/proc/self/clear_refs", "w") as f:  # the peak-RSS mark reset to the RSS now
        f.write("5")
    before = status("VmRSS")
    if mode == "blocks":
        train_cache(cache, memory=int(memory), solver=1, max_outer=2)
    else:
        linsvm.train(*linsvm.read_libsvm(cache), solver=1, max_iter=2)
    print(before, status("VmHWM"))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                    reason="the peak-RSS mark is reset through Linux's /proc")
def test_block_minimisation_stays_within_its_memory(tmp_path):
    """Measured from the process: training in blocks grows the peak RSS by less than the
    budget allows beyond its fixed overhead, while training on the whole data (the control)
    grows it by more than the data."""
    from linsvm.io.cache import write_cache
    from linsvm.outofcore import FIXED_OVERHEAD_BYTES

    rng = np.random.default_rng(2)
    lines = []
    for i in range(2000):
        cols = np.sort(rng.choice(50_000, size=40, replace=False)) + 1
        values = rng.integers(1, 9, 40)
        label = 1 if (cols[0] + i) % 3 else -1
        lines.append(f"{label} " + " ".join(f"{c}:{v}" for c, v in zip(cols, values, strict=True)))
    chunk = ("\n".join(lines) + "\n").encode()
    text = tmp_path / "big.txt"
    with open(text, "wb") as f:
        for _ in range(80):  # 160k rows, 6.4M non-zeros
            f.write(chunk)
    cache = tmp_path / "big.lsvc"
    write_cache(text, cache, block_bytes=1 << 20)
    warm = tmp_path / "warm.lsvc"
    small = tmp_path / "warm.txt"
    small.write_bytes(chunk[:20000].rsplit(b"\n", 1)[0] + b"\n")
    write_cache(small, warm, block_bytes=4096)
    csr_bytes = 6_400_000 * 12 + 160_001 * 4
    allowance = 40 << 20  # what the blocks may take: 7 shares of about 5.7 MB
    memory = FIXED_OVERHEAD_BYTES + allowance  # w and alpha (~2 MB) come on top

    def growth(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, mode, str(cache), str(warm), str(memory)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        before, after = map(int, out.stdout.split())
        return after - before

    blocks, whole = growth("blocks"), growth("whole")
    print(f"growth: blocks {blocks >> 20} MB, whole {whole >> 20} MB, CSR {csr_bytes >> 20} MB")
    assert whole > csr_bytes  # the measure sees the whole data
    # the shares are an estimate of the solver's and the allocator's use (measured 40-42 MB
    # here): 30% slack, still well below the data the control holds
    assert blocks < 1.3 * allowance < 0.75 * whole, (blocks, allowance, whole)


@pytest.mark.parametrize("solver, stop_after", [(3, 1), (3, 4), (3, 9), (7, 5)])
def test_checkpoint_and_resume_give_the_uninterrupted_model(tmp_path, monkeypatch, solver,
                                                            stop_after):  # fmt: skip
    """A run stopped after some blocks (as Ctrl-C does, between blocks) and resumed from its
    checkpoint ends with the same w and alpha as the run that was never stopped (-s 7: its
    epoch state, C - alpha and the inner tolerance, resumed too)."""

    X, y = problem(n_rows=700, seed=11)
    options = dict(solver=solver, C=0.7, eps=1e-5, max_outer=500, max_block_bytes=1)
    whole = train_blocks(ArrayBlocks(X, y, 4), **options)
    path = tmp_path / "run.ckpt"
    with stopped_at_checkpoint(monkeypatch, stop_after):
        train_blocks(ArrayBlocks(X, y, 4), checkpoint=path, **options)
    resumed = train_blocks(ArrayBlocks(X, y, 4), resume=path, **options)
    np.testing.assert_array_equal(resumed.results_[0].w, whole.results_[0].w)
    np.testing.assert_array_equal(resumed.results_[0].alpha, whole.results_[0].alpha)
    assert resumed.results_[0].n_iter == whole.results_[0].n_iter


@pytest.mark.parametrize("solver", [3, 7])
def test_a_run_resumed_at_another_block_keeps_the_runs_order(tmp_path, monkeypatch, solver):
    """The epoch mode chooses its order within a block (buckets, prefetch) on the first block
    it sees; resumed at block 2, a run saw another first block and chose another order (a9a
    in caches: buckets of 16 against none, w off by 0.68). The order is kept in the checkpoint.
    Here the choice is made to differ between the first block and the others."""
    import linsvm.outofcore as outofcore

    first_block: list[float] = []

    def order_of(X_b, *args):
        first_block[:] = first_block or [float(X_b.data.sum())]
        return (4, 2) if float(X_b.data.sum()) == first_block[0] else (1, 1)

    monkeypatch.setattr(outofcore, "choose_order", order_of)
    X, y = problem(n_rows=700, seed=11)
    options = dict(solver=solver, C=0.7, eps=1e-5, max_outer=500, max_block_bytes=1)
    whole = train_blocks(ArrayBlocks(X, y, 4), **options)
    path = tmp_path / "run.ckpt"
    with stopped_at_checkpoint(monkeypatch, 2):
        train_blocks(ArrayBlocks(X, y, 4), checkpoint=path, **options)
    resumed = train_blocks(ArrayBlocks(X, y, 4), resume=path, **options)
    np.testing.assert_array_equal(resumed.results_[0].w, whole.results_[0].w)
    assert resumed.results_[0].n_iter == whole.results_[0].n_iter


@pytest.mark.parametrize("solver", [3, 7])
def test_resuming_a_converged_runs_checkpoint_gives_its_model(tmp_path, solver):
    # the last checkpoint of a run that converged: resumed, the same model and no epoch more
    X, y = problem(n_rows=500, seed=11)
    options = dict(solver=solver, C=0.7, eps=1e-3, max_block_bytes=1)
    path = tmp_path / "run.ckpt"
    whole = train_blocks(ArrayBlocks(X, y, 4), checkpoint=path, **options)
    assert whole.results_[0].converged
    resumed = train_blocks(ArrayBlocks(X, y, 4), resume=path, **options)
    a, b = resumed.results_[0], whole.results_[0]
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert (a.n_iter, a.converged, a.primal, a.dual) == (b.n_iter, True, b.primal, b.dual)


def test_a_checkpoint_of_another_run_is_refused(tmp_path):
    X, y = problem(n_rows=300, seed=12)
    path = tmp_path / "run.ckpt"
    train_blocks(ArrayBlocks(X, y, 3), solver=1, max_block_bytes=1, checkpoint=path)
    # (another cap would stop it elsewhere: the model of no run)
    with pytest.raises(InvalidInputError, match=r"differs in: --max-iter \(max_outer\)\)"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, max_block_bytes=1, max_outer=20,
                     resume=path)  # fmt: skip
    # a file that is no checkpoint: one line, also where its planned overhead is read first
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(InvalidInputError, match="not a linsvm checkpoint or damaged"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, max_block_bytes=1, overhead_bytes=1 << 20,
                     resume=tmp_path / "empty")  # fmt: skip
    with pytest.raises(InvalidInputError, match="checkpoint .*no/dir/c: No such file"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, checkpoint=tmp_path / "no" / "dir" / "c",
                     on_outer=lambda p: pytest.fail("trained before the path was checked"))
    with pytest.raises(InvalidInputError, match=r"differs in: -c \(C\)\)"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, C=2.0, max_block_bytes=1, resume=path)
    # (named once, whichever of the blocks' entries differ)
    with pytest.raises(InvalidInputError,
                       match=r"differs in: --memory \(or the cache file's blocks\)\)"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, max_block_bytes=10**9, resume=path)
    (tmp_path / "junk").write_bytes(b"not a checkpoint")
    with pytest.raises(InvalidInputError, match="not a linsvm checkpoint or damaged"):
        train_blocks(ArrayBlocks(X, y, 3), solver=1, max_block_bytes=1, resume=tmp_path / "junk")


def test_one_checkpoint_format_records_its_place(tmp_path, monkeypatch):
    """Checkpoints of training in memory and in blocks are one format with its place: each
    resumed in the other place is refused in one line; a block checkpoint of the format
    before (its own format name, no place) still resumes to the uninterrupted run's model."""
    import json

    import linsvm

    X, y = problem(n_rows=300, seed=12)
    options = dict(solver=1, C=0.7, eps=1e-4, max_block_bytes=1, max_outer=500)
    whole = train_blocks(ArrayBlocks(X, y, 3), **options)
    in_blocks, in_memory = tmp_path / "blocks.ckpt", tmp_path / "memory.ckpt"
    with stopped_at_checkpoint(monkeypatch):
        train_blocks(ArrayBlocks(X, y, 3), checkpoint=in_blocks, **options)
    linsvm.train(X, y, solver=1, checkpoint=in_memory)
    with pytest.raises(InvalidInputError, match=r"written by training in blocks \(--memory\)"):
        linsvm.train(X, y, solver=1, resume=in_blocks)
    with pytest.raises(InvalidInputError, match="written by training in memory"):
        train_blocks(ArrayBlocks(X, y, 3), resume=in_memory, **options)
    # the format before: the same arrays, meta with its own format name and no place
    with np.load(in_blocks, allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    meta = json.loads(arrays.pop("meta").tobytes().decode())
    assert meta.pop("place") == "blocks"
    meta.update(format="linsvm-blocks-checkpoint", version=2)
    old = tmp_path / "old.ckpt"
    with open(old, "wb") as f:
        np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    resumed = train_blocks(ArrayBlocks(X, y, 3), resume=old, **options)
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    assert resumed.results_[0].n_iter == whole.results_[0].n_iter


def test_stored_blocks_larger_than_the_budget_are_split(tmp_path):
    from linsvm.io.cache import open_cache, write_cache
    from linsvm.outofcore import CacheBlocks

    X, y = problem(n_rows=800, seed=13)
    text = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, tmp_path / "d.lsvc")  # one stored block
    with open_cache(tmp_path / "d.lsvc") as cache:
        whole = CacheBlocks(cache)
        assert whole.n_blocks == 1
        units = whole.split(3000)
        assert units.n_blocks > 5 and units.block_rows().sum() == X.shape[0]
        assert units.block_nbytes().max() <= 3000 + 16 + 12 * X.shape[1]
        pieces = [units.blocks(k, k + 1) for k in range(units.n_blocks)]
        np.testing.assert_array_equal(sp.vstack([p[0] for p in pieces]).toarray(), X.toarray())
        np.testing.assert_array_equal(np.concatenate([p[1] for p in pieces]), y)
        Xr, yr = units.blocks(2, 5)
        r0, r1 = units.block_rows()[:2].sum(), units.block_rows()[:5].sum()
        np.testing.assert_array_equal(Xr.toarray(), X[r0:r1].toarray())
        reference = linsvm.train(X, y, solver=1, eps=1e-8, max_iter=100_000).results_[0].primal
        model = train_blocks(whole, solver=1, eps=1e-6, max_outer=2000, max_block_bytes=3000)
        assert len(model.results_[0].alpha) == X.shape[0]
        assert abs(model.results_[0].primal - reference) <= 1e-6 * reference


# ----------------------------------------------------------------------------- the floor


def test_a_budget_too_small_says_the_smallest_that_trains():
    """The refusal names the overhead and the smallest budget (and the one-block budget);
    the smallest it names trains."""
    import re

    from linsvm.outofcore import FIXED_OVERHEAD_BYTES

    X, y = problem()
    with pytest.raises(InvalidInputError) as refused:
        train_blocks(ArrayBlocks(X, y, 2), memory="64M")
    message = str(refused.value)
    assert f"takes {FIXED_OVERHEAD_BYTES >> 20} MiB" in message
    smallest, one_block = map(int, re.search(
        r"smallest budget that trains is (\d+)M \((\d+)M trains the data in one block", message
    ).groups())  # fmt: skip
    assert (FIXED_OVERHEAD_BYTES >> 20) < smallest <= one_block
    model = train_blocks(ArrayBlocks(X, y, 2), memory=f"{smallest}M", solver=1, max_outer=50)
    assert model.results_[0].n_iter >= 1
    # an overhead given (as measured) takes the constant's place
    with pytest.raises(InvalidInputError, match=r"holds 40 MiB .*trains is 48M"):
        train_blocks(ArrayBlocks(X, y, 2), memory="30M", overhead_bytes=40 << 20)
    train_blocks(ArrayBlocks(X, y, 2), memory="48M", overhead_bytes=40 << 20, max_outer=5)


TRAIN_AND_PEAK = textwrap.dedent("""
    import sys
    from linsvm.cli import main

    try:
        code = main(sys.argv[1:]) or 0
    except SystemExit as stop:
        code = stop.code
    with open("/proc/self/status") as f:
        print(next(int(line.split()[1]) << 10 for line in f if line.startswith("VmHWM:")))
    sys.exit(code)
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                    reason="train --memory measures the process through Linux's /proc")
def test_the_command_stays_within_the_smallest_budget_it_suggests(tmp_path):
    """``train --memory`` at the smallest budget its refusal names: the whole process's peak
    RSS (os.wait4) stays within the budget plus w and alpha, which come on top."""
    import re

    from linsvm.io.cache import write_cache

    rng = np.random.default_rng(5)
    n_rows, n_features, per_row = 60_000, 300_000, 20
    X = sp.csr_matrix(
        (rng.integers(1, 9, n_rows * per_row).astype(np.float64),
         rng.integers(0, n_features, n_rows * per_row),
         np.arange(0, n_rows * per_row + 1, per_row)),
        shape=(n_rows, n_features),
    )  # fmt: skip
    X.sum_duplicates()
    X.sort_indices()
    X = X[:, :n_features]
    y = np.where(X[:, :1000].sum(axis=1).A1 > 0, 1.0, -1.0)
    text, cache = tmp_path / "data.txt", tmp_path / "data.lsvc"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, cache)

    def command(memory: str, *options: str, data=cache) -> tuple[int, str, int]:
        """(exit status, stderr, peak RSS) of ``linsvm train``; the peak read by the child
        itself (VmHWM: its own, where wait4's counts the parent it was forked from)."""
        proc = subprocess.run(
            [sys.executable, "-c", TRAIN_AND_PEAK, "train", "-q", "-s", "3", *options,
             "--memory", memory, str(data), str(tmp_path / "model")],
            capture_output=True, text=True,
        )  # fmt: skip
        return proc.returncode, proc.stderr, int(proc.stdout.split()[-1])

    assert command("1G")[0] == 0  # Numba's cache filled, as a user's second run finds it
    code, err, _ = command("64M")
    assert code != 0
    smallest = re.search(r"the smallest budget that trains is (\d+)M", err).group(1)
    code, err, peak = command(f"{smallest}M")
    assert code == 0, err
    on_top = 8 * (n_features + n_rows)  # w and alpha
    assert peak <= (int(smallest) << 20) + on_top, (peak >> 10, smallest)
    # -v (10 classes) in its smallest budget: three bytes a row more than training (the last
    # fold's model, its w and alpha, and every row's label were held through each fold's
    # training: 10-20% past the bound)
    multi = tmp_path / "multi.lsvc"
    linsvm.write_libsvm(X, np.arange(n_rows) % 10, text)
    write_cache(text, multi)
    # (cross-validation's own kernels cached too, as for training above: a compile inside
    # the measured run is not the budget's)
    assert command("1G", "-v", "2", "--max-iter", "2", data=multi)[0] == 0
    code, err, _ = command("64M", data=multi)
    smallest = re.search(r"the smallest budget that trains is (\d+)M", err).group(1)
    code, err, peak = command(f"{smallest}M", "-v", "2", "--max-iter", "2", data=multi)
    assert code == 0, err
    on_top = 8 * 10 * (n_features + n_rows)  # w and alpha of 10 sub-problems
    assert peak <= (int(smallest) << 20) + on_top + 3 * n_rows, (peak >> 10, smallest)


def test_the_overhead_is_measured_from_the_process():
    from linsvm.outofcore import OVERHEAD_STEP_BYTES, measured_overhead

    held = measured_overhead(3)
    if not os.path.exists("/proc/self/statm"):
        assert held is None
        return
    # at least the interpreter with numpy, scipy and numba; at most what the process holds
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmHWM:"))
    # (rounded up to a step, so that runs of one command plan the same blocks)
    assert 30 << 20 < held <= peak + OVERHEAD_STEP_BYTES and held % OVERHEAD_STEP_BYTES == 0


def test_a_resumed_run_plans_with_the_interrupted_runs_overhead(tmp_path, monkeypatch):
    """A measured overhead differs from process to process, and the blocks follow it: the
    resumed run takes the one its checkpoint was planned with, and ends where the
    uninterrupted run ends."""

    X, y = problem(n_rows=20_000, n_features=200, seed=11)  # 4 MB to train on: above the
    options = dict(solver=3, C=0.7, eps=1e-3, max_outer=500)  # floor's 1 MB a block
    overhead = 100 << 20
    memory = overhead + 20_000 + 7 * (3 << 19)  # blocks of 1.5 MiB: three
    whole = train_blocks(ArrayBlocks(X, y, 16), memory=memory, overhead_bytes=overhead,
                         **options)  # fmt: skip
    path = tmp_path / "run.ckpt"
    with stopped_at_checkpoint(monkeypatch):
        train_blocks(ArrayBlocks(X, y, 16), memory=memory, overhead_bytes=overhead,
                     checkpoint=path, **options)  # fmt: skip
    # measured 5 MB less this time: blocks of another size, were it not for the checkpoint's
    resumed = train_blocks(ArrayBlocks(X, y, 16), memory=memory,
                           overhead_bytes=overhead - (5 << 20), resume=path, **options)
    np.testing.assert_array_equal(resumed.results_[0].w, whole.results_[0].w)
    assert resumed.results_[0].n_iter == whole.results_[0].n_iter


def test_cli_memory_too_small_names_a_budget_that_trains(tmp_path):
    """``train --memory 64M`` counts the process itself: refused with the smallest budget,
    which (in a fresh process, as the user runs it) trains."""
    import re

    X, y = problem(n_rows=500, seed=8)
    text = tmp_path / "data.txt"
    linsvm.write_libsvm(X, y, text)

    def train(memory: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "linsvm.cli", "train", "-q", "--memory", memory, "-s", "3",
             str(text), str(tmp_path / "m")],
            capture_output=True, text=True,
        )  # fmt: skip

    refused = train("64M")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert "(measured: interpreter, libraries, compiled code)" in refused.stderr
    smallest = re.search(r"smallest budget that trains is (\d+M)", refused.stderr).group(1)
    done = train(smallest)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m").is_file()


def test_a_stored_block_cut_into_pieces_counts_in_the_budget_only_when_mapped(
    tmp_path, monkeypatch
):
    """A stored block larger than a training block is read piece by piece from the file:
    nothing of it stays resident, so a budget with room for 1 MiB blocks trains. Were its
    pieces copied from the mapping (a copy that changes the index dtype), the block would be
    resident until its last piece: that budget is refused, and the smallest budget it names
    trains."""
    import re

    from linsvm.io.cache import write_cache
    from linsvm.outofcore import CacheBlocks, train_cache

    X, y = problem(n_rows=20_000, n_features=200, seed=3)
    text = tmp_path / "d.txt"
    linsvm.write_libsvm(X, y, text)
    cache = tmp_path / "d.lsvc"
    summary = write_cache(text, cache)  # one stored block of about 2.6 MB
    assert summary.n_blocks == 1 and summary.cache_bytes > 2 << 20
    overhead = 10 << 20
    memory = overhead + 20_000 + 7 * (1 << 20) + (1 << 20)  # 1.14 MiB blocks without it
    model = train_cache(cache, memory=memory, overhead_bytes=overhead, solver=1)
    assert model.results_[0].n_iter >= 1
    monkeypatch.setattr(CacheBlocks, "pieces_from_mapping", property(lambda self: True))
    with pytest.raises(InvalidInputError, match="too small") as refused:
        train_cache(cache, memory=memory, overhead_bytes=overhead, solver=1)
    smallest = re.search(r"trains is (\d+)M", str(refused.value)).group(1)
    assert int(smallest) << 20 >= overhead + 7 * (1 << 20) + summary.cache_bytes - 4096
    model = train_cache(cache, memory=f"{smallest}M", overhead_bytes=overhead, solver=1)
    assert model.results_[0].n_iter >= 1


@pytest.mark.parametrize("solver, selective", [(1, None), (3, True)])
def test_a_row_larger_than_a_block_counts_in_the_budget(tmp_path, solver, selective):
    """A row cannot be cut: one larger than a training block's share trains as a block of
    its own, past the budget (two rows of 1.5M non-zeros put a run 10 MiB over the smallest
    budget it was told). Such a budget is refused, saying how large the row is, and the
    smallest budget the refusal names trains."""
    from linsvm.io.cache import write_cache
    from linsvm.outofcore import train_cache

    X, y = problem(n_rows=2_000, n_features=200, seed=4)
    # small rows, and two wide ones of 200k non-zeros (2.4 MB each)
    wide = sp.csr_matrix(np.random.default_rng(4).uniform(-1, 1, (2, 200_000)) / 100)
    X = sp.vstack([sp.hstack([X, sp.csr_matrix((X.shape[0], 200_000))]),
                   sp.hstack([sp.csr_matrix((2, 200)), wide])], format="csr")  # fmt: skip
    y = np.concatenate([y, [1, -1]])
    text, cache = tmp_path / "d.txt", tmp_path / "d.lsvc"
    linsvm.write_libsvm(X, y, text)
    write_cache(text, cache)
    options = dict(overhead_bytes=10 << 20, solver=solver, selective=selective, C=0.01)
    shares = 7 if selective else 2  # kept support vectors and their copies: seven shares
    memory = (10 << 20) + (6 << 20) + shares * (1 << 20)  # state 5 MiB: blocks of 1-1.5 MiB
    with pytest.raises(InvalidInputError, match="the largest takes 3 MiB") as refused:
        train_cache(cache, memory=memory, **options)
    smallest = re.search(r"trains is (\d+)M", str(refused.value)).group(1)
    assert int(smallest) << 20 >= (10 << 20) + shares * 2_400_000
    model = train_cache(cache, memory=f"{smallest}M", eps=1e-4, **options)
    reference = linsvm.train(X, y, solver=solver, C=0.01, eps=1e-8).results_[0].primal
    assert abs(model.results_[0].primal - reference) <= 1e-3 * reference


@pytest.mark.parametrize("selective", [False, True])
def test_a_damaged_block_checkpoint_is_refused_before_any_kernel_runs(tmp_path, monkeypatch,
                                                                      selective):  # fmt: skip
    """Block checkpoints were loaded unchecked: a bucket size of -1, a w_start of another
    shape or support rows out of range segfaulted the resumed run (the kernels index without
    bounds checks); NaN in alpha or alpha past C wrote a NaN model."""
    import json

    X, y = problem(n_rows=300, seed=12)
    solver = 3 if selective else 7
    options = dict(solver=solver, C=0.7, eps=1e-4, max_block_bytes=1, max_outer=500,
                   selective=selective)  # fmt: skip
    path = tmp_path / "run.ckpt"
    with stopped_at_checkpoint(monkeypatch, 2):
        train_blocks(ArrayBlocks(X, y, 3), checkpoint=path, **options)
    with np.load(path, allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    meta = json.loads(arrays.pop("meta").tobytes().decode())

    def resume_with(meta_changes=(), **array_changes):
        damaged = tmp_path / "damaged.ckpt"
        with open(damaged, "wb") as f:
            np.savez(f, meta=np.frombuffer(json.dumps(dict(meta, **dict(meta_changes))).encode(),
                                           dtype=np.uint8), **dict(arrays, **array_changes))
        with pytest.raises(InvalidInputError, match="damaged"):
            train_blocks(ArrayBlocks(X, y, 3), resume=damaged, **options)

    resume_with(w_start=np.zeros((1, 1)))
    resume_with(alpha=np.full_like(arrays["alpha"], np.nan))
    resume_with(alpha=np.full_like(arrays["alpha"], 1e300))
    resume_with([("reader", [0, 99])])
    resume_with([("group", -1)])
    if selective:
        # (the generator's state beyond 64 bits: an OverflowError traceback)
        for inc in (-1, 2**200):
            rng = json.loads(json.dumps(meta["rng"]))
            rng["state"]["inc"] = inc
            resume_with([("rng", rng)])
        resume_with(support_rows=np.full_like(arrays["support_rows"], -5))
        indices = arrays["support_indices"].copy()
        indices[:1] = 2**30
        resume_with(support_indices=indices)
    else:
        resume_with([("order", [-1, 16, True])])
        resume_with([("order", [16, 0, True])])
    # the checkpoint as written still resumes
    train_blocks(ArrayBlocks(X, y, 3), resume=path, **options)


def test_a_negative_seed_trains_in_blocks_as_in_memory():
    """seed=-1 trains in memory; the blocks' plan, the kept support vectors and the folds drew
    from NumPy's generator, which refused it (a traceback)."""
    from linsvm.outofcore import cross_validate_blocks

    X, y = problem(n_rows=200, seed=2)
    for selective in (False, True):
        a = train_blocks(ArrayBlocks(X, y, 4), seed=-1, max_block_bytes=1, selective=selective,
                         max_outer=20)  # fmt: skip
        b = train_blocks(ArrayBlocks(X, y, 4), seed=-1, max_block_bytes=1, selective=selective,
                         max_outer=20)  # fmt: skip
        np.testing.assert_array_equal(a.coef_, b.coef_)
    assert cross_validate_blocks(ArrayBlocks(X, y, 4), 3, seed=-1, max_block_bytes=1,
                                 max_outer=20)[1] == X.shape[0]  # fmt: skip
    assert linsvm.cross_validation(X, y, 3, seed=-1).shape == y.shape


def test_a_cache_cut_within_its_magic_is_truncated_in_blocks_too(tmp_path, capsys):
    """Cut to fewer bytes than its magic, a cache was taken for text with --memory and
    refused as "already a linsvm cache, not LIBSVM text"."""
    from linsvm.cli import main
    from linsvm.io.cache import write_cache

    X, y = problem(n_rows=50)
    linsvm.write_libsvm(X, y, tmp_path / "d.txt")
    write_cache(tmp_path / "d.txt", tmp_path / "d.lsvc")
    (tmp_path / "cut.lsvc").write_bytes((tmp_path / "d.lsvc").read_bytes()[:10])
    for memory in ([], ["--memory", "300M"]):
        assert main(["train", *memory, str(tmp_path / "cut.lsvc"), str(tmp_path / "m")]) == 1
        assert "truncated linsvm cache (10 bytes)" in capsys.readouterr().err


def test_a_folds_classes_are_those_of_its_training_rows():
    """-v in blocks took each fold's classes and their order from every row: a class held
    out whole got a weight vector (and was predicted, where it had no training row), and
    the order of the rest broke ties of empty rows the other way. LIBLINEAR (and -v in
    memory) group a fold's own rows."""
    from linsvm.outofcore import cross_validate_blocks

    rng = np.random.default_rng(7)
    X = sp.random(60, 6, density=0.5, random_state=8, format="csr")
    X[rng.random(60) < 0.4] = 0.0  # (empty rows: decision values 0, ties)
    X.eliminate_zeros()
    y = np.where(rng.random(60) < 0.5, 2.0, 4.0)
    y[rng.integers(60)] = 7.0  # (a class of one row: held out whole in its fold)
    for seed in (1, 2, 3):
        predicted = linsvm.cross_validation(X, y, 5, seed=seed, solver=1, eps=1e-8)
        in_memory = int(np.count_nonzero(predicted == y))
        correct, n_rows = cross_validate_blocks(ArrayBlocks(X, y, 2), 5, seed=seed, solver=1,
                                                eps=1e-8, max_outer=5000)  # fmt: skip
        assert (correct, n_rows) == (in_memory, 60), seed


def test_a_binary_folds_classes_put_plus_one_first():
    """A fold whose first training row is -1 had -1 as its positive class in blocks (LIBLINEAR
    and -v in memory put +1 first): the empty rows' ties went the other way."""
    from linsvm.outofcore import cross_validate_blocks

    rng = np.random.default_rng(3)
    X = sp.random(200, 8, density=0.4, random_state=4, format="csr")
    X[::4] = 0.0
    X.eliminate_zeros()
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    for seed in (1, 2, 3):
        predicted = linsvm.cross_validation(X, y, 2, seed=seed, solver=1, eps=1e-8)
        correct, _ = cross_validate_blocks(ArrayBlocks(X, y, 2), 2, seed=seed, solver=1,
                                           eps=1e-8, max_outer=5000)  # fmt: skip
        assert correct == int(np.count_nonzero(predicted == y)), seed
