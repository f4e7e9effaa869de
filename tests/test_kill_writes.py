"""Writers killed with SIGKILL at random moments: the file they were replacing is left as it
was (or absent, if there was none) or whole and new, never half-written, and nothing else is
left beside it.

The four kinds of file linsvm writes are tried: a model of 2M weights (``Model.save``), a cache
of 5 MB (``write_cache``), a checkpoint of 20 MB (``Checkpointer``) and a prediction file of
100k lines (``linsvm predict``). The bulk of the kills fork this process, already warm, once a
trial: the child writes, the parent kills it after a delay drawn over the write's measured
duration, then looks at the folder. A few kills end real ``linsvm`` commands in their own
processes, once their output file is open.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.checkpoint import Checkpointer
from linsvm.cli import main
from linsvm.io import _atomic
from linsvm.io.cache import write_cache
from linsvm.model import Model
from linsvm.solvers._base import Solution

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "fork") and sys.platform.startswith("linux")),
    reason="kills forked writers; reads /proc",
)

KILLS_PER_WRITER = 50
CLI_KILLS_PER_COMMAND = 2
OLD = b"the previous file\n"
CHILD = "import sys\nfrom linsvm.cli import main\nsys.exit(main(sys.argv[1:]))\n"


@dataclass
class Writer:
    """One kind of file: ``write()`` writes its new version to ``target``, alone in its
    folder."""

    name: str
    target: Path
    write: Callable[[], None]
    new: bytes = b""
    seconds: float = 0.0  # the write's median duration, measured here

    def calibrate(self) -> None:
        """The new version's bytes, and how long a write takes (compiled code warm)."""
        times = []
        for _ in range(4):
            self.target.unlink(missing_ok=True)
            start = time.perf_counter()
            self.write()
            times.append(time.perf_counter() - start)
        self.seconds = float(np.median(times[1:]))
        self.new = self.target.read_bytes()


def _sparse(n_rows: int, n_cols: int, per_row: int, rng) -> sp.csr_matrix:
    """Random CSR data, about ``per_row`` non-zeros a row (column n_cols - 1 in row 0, so
    that the data's width is n_cols)."""
    rows = np.append(np.repeat(np.arange(n_rows), per_row), 0)
    cols = np.append(rng.integers(0, n_cols - 1, n_rows * per_row), n_cols - 1)
    X = sp.coo_matrix((rng.random(rows.shape[0]), (rows, cols)), shape=(n_rows, n_cols))
    X = X.tocsr()
    X.sum_duplicates()
    return X


def _labels(n: int, rng) -> np.ndarray:
    return np.where(rng.random(n) > 0.5, 1, -1)


def _problem_files(folder: Path) -> dict[str, Path]:
    """The inputs: LIBSVM text for a cache (10 MB), a test file of 100k short lines, a small
    model for it, and training text whose largest index is 3M (its model: 3M weights)."""
    rng = np.random.default_rng(0)
    files = {name: folder / name for name in ("data.txt", "test.txt", "small.model", "wide.txt")}
    X = _sparse(20_000, 5_000, 20, rng)
    linsvm.write_libsvm(X, _labels(20_000, rng), files["data.txt"])
    linsvm.write_libsvm(_sparse(100_000, 5_000, 1, rng), _labels(100_000, rng),
                        files["test.txt"])  # fmt: skip
    linsvm.train(X[:2000], _labels(2000, rng), solver=3).save(files["small.model"])
    linsvm.write_libsvm(_sparse(300, 3_000_000, 12, rng), _labels(300, rng), files["wide.txt"])
    return {"text": files["data.txt"], "test": files["test.txt"],
            "model": files["small.model"], "wide": files["wide.txt"]}  # fmt: skip


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    return _problem_files(tmp_path_factory.mktemp("inputs"))


@pytest.fixture(scope="module")
def writers(tmp_path_factory, inputs) -> list[Writer]:
    rng = np.random.default_rng(1)
    coef = rng.standard_normal((1, 2_000_000))
    coef[:, rng.random(2_000_000) < 0.75] = 0.0  # a sparse model's zeros, as a real one has
    model = Model(1, np.array([1, -1]), coef, -1.0)
    checkpoints = Checkpointer(tmp_path_factory.mktemp("checkpoint") / "run.ckpt", 60.0,
                               {"problem": "kill test"})  # fmt: skip
    checkpoints.finished[0] = Solution(
        w=rng.standard_normal(2_000_000), n_iter=3, converged=False, stop_reason="max_iter",
        primal=1.0, alpha=rng.random(500_000),
    )  # fmt: skip
    out = {name: tmp_path_factory.mktemp(name) for name in ("model", "cache", "predict")}
    found = [
        Writer("model", out["model"] / "big.model", lambda: model.save(out["model"] / "big.model")),
        Writer("cache", out["cache"] / "data.lsvc",
               lambda: write_cache(inputs["text"], out["cache"] / "data.lsvc", n_jobs=1)),
        Writer("checkpoint", Path(checkpoints.path), checkpoints.write),
        Writer("predict", out["predict"] / "out",
               lambda: _ok(main(["predict", "-q", str(inputs["test"]), str(inputs["model"]),
                                 str(out["predict"] / "out")]))),
    ]  # fmt: skip
    for writer in found:
        writer.calibrate()
    return found


def _ok(status: int) -> None:
    assert status == 0


def _leftovers(target: Path) -> list[Path]:
    """What is in the target's folder besides the target."""
    return sorted(p for p in target.parent.iterdir() if p != target)


def _kill_trials(writer: Writer, n: int, seed: int) -> Counter:
    """``n`` trials: the old file (or none, one trial in four) in place, a forked child
    writes the new one and is killed after a random delay over the write's duration.
    Returns the counts of what each kill found and left; fails at the first file that is
    neither the old one nor the new one, whole."""
    rng = np.random.default_rng(seed)
    seen: Counter = Counter()
    for trial in range(n):
        old = None if trial % 4 == 3 else OLD
        if old is None:
            writer.target.unlink(missing_ok=True)
        else:
            writer.target.write_bytes(old)
        assert _leftovers(writer.target) == []
        delay = rng.uniform(0.0, writer.seconds)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: write, say when it started and when it was done
            status = 1
            try:
                os.close(read_end)
                os.write(write_end, b"s")
                writer.write()
                os.write(write_end, b"d")
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        assert os.read(read_end, 1) == b"s"
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        done = os.read(read_end, 1) == b"d"
        os.close(read_end)
        assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0, "the write failed"
        now = writer.target.read_bytes() if writer.target.exists() else None
        where = f"{writer.name}, trial {trial}, killed after {delay:.3f} s"
        if now == writer.new:
            seen["new file, whole"] += 1
        elif now == old:
            seen["old file intact" if old is not None else "no file, as before"] += 1
        else:
            size = "absent" if now is None else f"{len(now)} bytes"
            pytest.fail(f"{where}: the file is neither the old nor the new one ({size})")
        if not os.WIFSIGNALED(status):
            seen["finished before the kill"] += 1
        else:
            seen["killed after the write" if done else "killed mid-write"] += 1
        extra = _leftovers(writer.target)
        if extra:
            # only a kill between the hidden name's link and the rename leaves one: whole,
            # hidden, and removed by the next write of the target
            seen["hidden leftover"] += 1
            for path in extra:
                assert path.name.startswith(f".{writer.target.name}.") and path.suffix == ".tmp"
                assert path.read_bytes() == writer.new, where
            writer.write()
            assert _leftovers(writer.target) == [], where
    return seen


def test_killed_writers_leave_the_old_file_or_the_new_one(writers):
    for seed, writer in enumerate(writers):
        seen = _kill_trials(writer, KILLS_PER_WRITER, seed)
        print(f"{writer.name}: write {writer.seconds:.3f} s, {len(writer.new)} bytes: "
              f"{dict(seen)}")  # fmt: skip
        # the delays are drawn over the write's duration: most kills land within it
        assert seen["killed mid-write"] >= KILLS_PER_WRITER // 5, (writer.name, seen)


def test_hidden_temporaries_of_killed_writers_are_removed_by_the_next_write(writers, monkeypatch):
    """Where the temporary file must have a name from the start (no O_TMPFILE), writers
    killed while writing leave it hidden beside the target; the next write of that target
    removes them."""
    monkeypatch.setattr(_atomic, "_O_TMPFILE", 0)  # the children inherit it
    model = next(w for w in writers if w.name == "model")
    rng = np.random.default_rng(7)
    left = 0
    for _ in range(6):
        model.target.write_bytes(OLD)
        pid = os.fork()
        if pid == 0:
            try:
                model.write()
            finally:
                os._exit(0)
        while not _leftovers(model.target):  # its temporary file is there: kill within
            time.sleep(0.001)
        time.sleep(rng.uniform(0.0, 0.5 * model.seconds))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert model.target.read_bytes() in (OLD, model.new)
        for path in _leftovers(model.target):
            assert path.name.startswith(f".{model.target.name}.") and path.suffix == ".tmp"
            left += 1
    assert left > 0
    model.write()
    assert _leftovers(model.target) == []
    assert model.target.read_bytes() == model.new


def test_a_live_writers_temporary_is_not_removed(tmp_path):
    """Another process writing the same target keeps its file: only unlocked ones go."""
    target = tmp_path / "m"
    for unnamed in (True, False):
        read_end, write_end = os.pipe()
        go_read, go_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                if not unnamed:
                    _atomic._O_TMPFILE = 0
                with _atomic.atomic_writer(target) as f:
                    f.write(b"from the other writer\n")
                    f.flush()
                    os.write(write_end, b"s")
                    os.read(go_read, 1)  # held open until the parent has written
                status = 0
            finally:
                os._exit(status)
        assert os.read(read_end, 1) == b"s"
        _atomic.atomic_write_bytes(target, b"mine\n")
        assert target.read_bytes() == b"mine\n"
        os.write(go_write, b"g")
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert target.read_bytes() == b"from the other writer\n"
        assert _leftovers(target) == []
        for fd in (read_end, write_end, go_read, go_write):
            os.close(fd)


def test_the_trials_catch_a_writer_that_is_not_atomic(tmp_path):
    """The same trials fail a writer that writes the target in place: they can fail."""
    target = tmp_path / "in-place"
    payload = os.urandom(1 << 20) * 24

    def in_place() -> None:
        with open(target, "wb") as f:
            for start in range(0, len(payload), 1 << 20):
                f.write(payload[start : start + (1 << 20)])
                f.flush()
                os.fsync(f.fileno())

    naive = Writer("in place", target, in_place)
    naive.calibrate()
    with pytest.raises(pytest.fail.Exception, match="neither the old nor the new"):
        _kill_trials(naive, 20, seed=3)


def _temp_open(pid: int, folder: Path) -> bool:
    """Whether process ``pid`` holds a file of ``folder`` open: an unnamed one shows as
    ``folder/#inode (deleted)``, a hidden one by its name."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith(f"{folder}/#") or link.startswith(f"{folder}/."):
            return True
    return False


def _timed_writes(monkeypatch) -> list[float]:
    """The durations of the atomic writes that follow, from the temporary file's creation to
    its rename."""
    durations: list[float] = []
    create, publish = _atomic.TempFile.__init__, _atomic.TempFile.publish

    def timed_create(self, *args, **kwargs):
        self.created = time.perf_counter()
        create(self, *args, **kwargs)

    def timed_publish(self):
        publish(self)
        durations.append(time.perf_counter() - self.created)

    monkeypatch.setattr(_atomic.TempFile, "__init__", timed_create)
    monkeypatch.setattr(_atomic.TempFile, "publish", timed_publish)
    return durations


@pytest.mark.parametrize("command", ["train", "cache", "predict"])
def test_killed_commands_leave_the_old_output(tmp_path, inputs, monkeypatch, command):
    """``linsvm train`` (a model of 3M weights), ``cache`` and ``predict`` in their own
    processes, killed once their output's temporary file is open."""
    out = tmp_path / "out"
    out.mkdir()
    target = out / "result"
    files = {
        "train": ["train", "-q", "-s", "3", str(inputs["wide"]), str(target)],
        "cache": ["cache", "-q", str(inputs["text"]), str(target)],
        "predict": ["predict", "-q", str(inputs["test"]), str(inputs["model"]), str(target)],
    }[command]
    # the new file's bytes, from the same command run here; and its write's duration
    with monkeypatch.context() as patch:
        durations = _timed_writes(patch)
        assert main(files) == 0
    [seconds] = durations
    new = target.read_bytes()
    rng = np.random.default_rng(len(command))
    kills = 0
    outcomes = []
    for _ in range(CLI_KILLS_PER_COMMAND):
        target.write_bytes(OLD)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, *files],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        try:
            while proc.poll() is None and not _temp_open(proc.pid, out):
                time.sleep(0.001)
            time.sleep(rng.uniform(0.0, seconds))
            alive = proc.poll() is None
            proc.kill()
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if alive:
            kills += 1
            assert proc.returncode == -signal.SIGKILL
        else:
            assert proc.returncode == 0, err
        now = target.read_bytes()
        assert now in (OLD, new)
        assert _leftovers(target) == []
        outcomes.append(("killed" if alive else "finished") + (", old" if now == OLD else ", new"))
    print(f"linsvm {command}: write {seconds:.3f} s: {outcomes}")
    assert kills >= 1
