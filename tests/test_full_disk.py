"""Full disks and failing reads.

A model, a cache, a checkpoint (in-memory and block runs) or a prediction file written onto a
file system that fills up during the write: one line naming the file, the old file left as it
was, nothing left behind and the space given back. On a real small tmpfs where this process
may mount one (root); under RLIMIT_FSIZE anywhere (the predict and cache outputs under
RLIMIT_FSIZE and /dev/full are tests/test_cli.py's).

A cache changed or truncated while ``train --memory`` trains on it: refused at the next read
of a changed block (its checksum), or of any block once truncated (not a SIGBUS), in one line;
the last checkpoint is whole and resumes to the model of the undisturbed run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import main
from linsvm.io.cache import CacheFormatError, open_cache, write_cache
from linsvm.outofcore import CacheBlocks, train_cache

OLD = b"the previous file\n"
DISK_BYTES = 4 << 20

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's limits")


def _sparse(n_rows: int, n_cols: int, per_row: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Random CSR rows, about ``per_row`` non-zeros each and the width ``n_cols`` (column
    n_cols - 1 set in row 0); labels -1/+1 from a random direction."""
    rng = np.random.default_rng(seed)
    rows = np.append(np.repeat(np.arange(n_rows), per_row), 0)
    cols = np.append(rng.integers(0, n_cols - 1, n_rows * per_row), n_cols - 1)
    X = sp.coo_matrix((rng.random(rows.shape[0]), (rows, cols)), shape=(n_rows, n_cols)).tocsr()
    X.sum_duplicates()
    y = np.where(X @ rng.standard_normal(n_cols) + 0.1 * rng.standard_normal(n_rows) > 0, 1, -1)
    return X, y


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """Training text whose model has 3M weights (24 MB in a checkpoint, 6 MB of model text);
    text for a 5 MB cache, and that cache; a test file of 100k lines and a model for it."""
    folder = tmp_path_factory.mktemp("inputs")
    files = {name: folder / name for name in ("wide.txt", "data.txt", "test.txt", "m")}
    linsvm.write_libsvm(*_sparse(300, 3_000_000, 12, 0), files["wide.txt"])
    X, y = _sparse(20_000, 5_000, 20, 1)
    linsvm.write_libsvm(X, y, files["data.txt"])
    files["data.lsvc"] = folder / "data.lsvc"
    write_cache(files["data.txt"], files["data.lsvc"])
    linsvm.write_libsvm(*_sparse(100_000, 5_000, 1, 2), files["test.txt"])
    linsvm.train(X[:2000], y[:2000], solver=3).save(files["m"])
    return files


def _argv(writer: str, inputs: dict[str, Path], target: Path, scratch: Path) -> list[str]:
    """A command whose output (or checkpoint) is ``target``; its other output in scratch."""
    model = str(scratch / "model")
    return {
        "model": ["train", "-q", "-s", "3", str(inputs["wide.txt"]), str(target)],
        "cache": ["cache", "-q", str(inputs["data.txt"]), str(target)],
        # (wide.txt's 3M columns, 3,600 used, are trained as those: a small checkpoint)
        "checkpoint": ["train", "-q", "-s", "3", "--checkpoint", str(target),
                       str(inputs["data.txt"]), model],
        "block checkpoint": ["train", "-q", "-s", "3", "--memory", "1G", "--checkpoint",
                             str(target), str(inputs["data.lsvc"]), model],
        "predict": ["predict", "-q", str(inputs["test.txt"]), str(inputs["m"]), str(target)],
    }[writer]  # fmt: skip


WRITERS = ["model", "cache", "checkpoint", "block checkpoint", "predict"]


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs mounted for the test (root only; skipped where mounting is refused)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs",
                            str(disk)], capture_output=True, text=True)  # fmt: skip
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _free(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize


@pytest.mark.usefixtures("fresh_process_overhead")  # (in-process `train --memory`)
@pytest.mark.parametrize("writer", WRITERS)
def test_a_disk_that_fills_up_is_named_and_leaves_the_old_file(tmp_path, small_disk, inputs,
                                                                capsys, writer):  # fmt: skip
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # the new file's size, written where there is room (the compiled code loaded too)
    full_size = tmp_path / "full-size"
    assert main(_argv(writer, inputs, full_size, scratch)) == 0
    new_size = full_size.stat().st_size
    (scratch / "model").unlink(missing_ok=True)
    target = small_disk / "out"
    target.write_bytes(OLD)
    # the rest of the disk filled but for half the new file: the write fails midway
    filler = small_disk / "filler"
    filler.write_bytes(bytes(max(_free(small_disk) - new_size // 2, 0)))
    assert 0 < _free(small_disk) < new_size
    free = _free(small_disk)
    capsys.readouterr()
    assert main(_argv(writer, inputs, target, scratch)) == 1
    command = "predict" if writer == "predict" else "cache" if writer == "cache" else "train"
    assert capsys.readouterr().err == (
        f"linsvm {command}: error: {target}: No space left on device\n"
    )
    assert target.read_bytes() == OLD
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out"]
    assert _free(small_disk) == free  # the partial file's space is given back
    assert not (scratch / "model").exists()


FSIZE_CHILD = """
import os, resource, signal, sys
from linsvm.cli import main
limit, target, scratch, *argv = sys.argv[1:]
# a first run loads (and caches, if new) the compiled code: only the output meets the limit
os.mkdir(scratch + ".warm")
if main([a.replace(target, target + ".warm").replace(scratch, scratch + ".warm")
         for a in argv]) != 0:
    sys.exit("the run without a limit failed")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
sys.exit(main(argv))
"""


@linux_only
@pytest.mark.parametrize("writer", ["model", "checkpoint", "block checkpoint"])
def test_a_file_size_limit_is_named_by_the_model_or_checkpoint(tmp_path, inputs, writer):
    """Without root: RLIMIT_FSIZE stops the write midway as a full disk would."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    target = tmp_path / "out"
    target.write_bytes(OLD)
    argv = _argv(writer, inputs, str(target), scratch)
    # (data.txt's checkpoints are 200 KB or more, its model 100 KB: a limit between them)
    limit = 1 << 17 if writer.endswith("checkpoint") else 1 << 20
    run = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(limit), str(target),
                          str(scratch), *argv], capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr == f"linsvm train: error: {target}: File too large\n"
    assert target.read_bytes() == OLD
    assert (tmp_path / "out.warm").stat().st_size > limit  # the limit cut a larger file
    expected = ["out", "out.warm", "scratch", "scratch.warm"]
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    assert not (scratch / "model").exists()


# ----------------------------------------------------------------------------- failing reads


@pytest.fixture(scope="module")
def block_cache(tmp_path_factory) -> Path:
    """A cache of 6 stored blocks."""
    folder = tmp_path_factory.mktemp("blocks")
    X, y = _sparse(3000, 400, 15, 3)
    linsvm.write_libsvm(X, y, folder / "d.txt")
    summary = write_cache(folder / "d.txt", folder / "d.lsvc", block_bytes=120_000)
    assert summary.n_blocks >= 5
    return folder / "d.lsvc"


def _damage(path: Path, how: str) -> int:
    """Change the cache file in place as a failing disk or another program would: flip a
    byte within block 1 or cut the file in two. The block the damage is in."""
    with open_cache(path) as cache:
        offset, length = int(cache._table["offset"][1]), int(cache._table["length"][1])
    with open(path, "r+b") as f:
        if how == "truncated":
            f.truncate(offset + length // 2)
        else:
            f.seek(offset + length // 2)
            byte = f.read(1)[0]
            f.seek(offset + length // 2)
            f.write(bytes([byte ^ 0x10]))
    return 1


def _damaged_at_read(monkeypatch, path: Path, how: str, at_read: int) -> list[int]:
    """Damage ``path`` just before the ``at_read``-th read of blocks from a cache (in the
    reader's thread, while training goes on in the other): the reads so far."""
    reads = [0]
    real_gather = CacheBlocks.gather

    def gather(self, *args, **kwargs):
        reads[0] += 1
        if reads[0] == at_read:
            _damage(path, how)
        return real_gather(self, *args, **kwargs)

    monkeypatch.setattr(CacheBlocks, "gather", gather)
    return reads


def _block_run(path: Path) -> dict:
    """Options of a block run that trains on one stored block at a time."""
    with open_cache(path) as cache:
        largest = int(CacheBlocks(cache).block_nbytes().max())
    return dict(solver=3, C=0.5, eps=1e-4, max_outer=200, max_block_bytes=largest)


@pytest.mark.parametrize("how", ["changed", "truncated"])
def test_a_cache_damaged_during_training_stops_it_with_the_checkpoint_whole(
    tmp_path, block_cache, monkeypatch, how
):
    """Damaged after its first outer iteration, as its blocks are read again: the run stops
    within a pass (at the next read of the block's first rows; of any block, truncated), the
    last checkpoint resumes to the undisturbed run's model."""
    path = tmp_path / "d.lsvc"
    good = block_cache.read_bytes()
    path.write_bytes(good)
    options = _block_run(path)
    whole = train_cache(path, **options)
    assert whole.results_[0].n_iter >= 3
    with open_cache(path) as cache:
        n_blocks = cache.n_blocks
    checkpoint = tmp_path / "run.ckpt"
    with monkeypatch.context() as patch:
        # block 1 is read again at read n_blocks + 2: damaged just before that read
        reads = _damaged_at_read(patch, path, how, n_blocks + 2)
        expected = "truncated to" if how == "truncated" else "block 1 is corrupt"
        with pytest.raises(CacheFormatError, match=expected) as info:
            train_cache(path, checkpoint=checkpoint, checkpoint_every=1e-9, **options)
    # refused within one pass of the damage: a stored block is checked whenever its first
    # rows are read, and the training blocks are drawn afresh from pieces every pass
    assert n_blocks + 2 <= reads[0] <= 2 * n_blocks + 2
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    path.write_bytes(good)  # the disk repaired: the checkpoint continues the run
    resumed = train_cache(path, resume=checkpoint, **options)
    np.testing.assert_array_equal(resumed.results_[0].w, whole.results_[0].w)
    np.testing.assert_array_equal(resumed.results_[0].alpha, whole.results_[0].alpha)


@pytest.mark.usefixtures("fresh_process_overhead")
@pytest.mark.parametrize("how", ["changed", "truncated"])
def test_train_memory_on_a_damaged_cache_says_one_line(tmp_path, block_cache, monkeypatch,
                                                       capsys, how):  # fmt: skip
    path = tmp_path / "d.lsvc"
    path.write_bytes(block_cache.read_bytes())
    checkpoint, model = tmp_path / "run.ckpt", tmp_path / "model"
    argv = ["train", "-q", "-s", "3", "-e", "1e-6", "--memory", "1G", "--checkpoint",
            str(checkpoint), "--every", "1e-9", str(path), str(model)]  # fmt: skip
    with monkeypatch.context() as patch:
        _damaged_at_read(patch, path, how, 3)  # the third outer iteration's read
        assert main(argv) == 1
    what = "truncated to" if how == "truncated" else "block 1 is corrupt (checksum mismatch)"
    err = capsys.readouterr().err
    assert err.startswith(f"linsvm train: error: {path}: ") and what in err, err
    assert err.count("\n") == 1
    assert not model.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.lsvc", "run.ckpt"]
    with np.load(checkpoint, allow_pickle=False) as saved:  # whole, and a block run's
        assert {"W", "alpha", "meta"} <= set(saved.files)
