"""Output paths are checked before any work: ``train``'s model file and checkpoint,
``predict``'s output and ``cache``'s cache file. A path that cannot be written (its folder
missing, not a folder or not writable, the path a folder or a read-only file) is one line on
stderr naming it and exit status 1, before the data is read; nothing is created or truncated.

"Before the data is read" is checked by replacing the reader with one that fails the test.
A read-only folder stops only other users than root: that case runs in this process where
the tests do not run as root, and as another user (setpriv) where they do and can.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

import linsvm
import linsvm.io.cache
import linsvm.runner
from linsvm.cli import main
from linsvm.io import _atomic
from linsvm.io._atomic import check_writable

OTHER_UID = 65534  # nobody


@pytest.fixture()
def data(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(40):
        label = int(rng.choice([-1, 1]))
        values = rng.normal(size=4) + 0.8 * label
        lines.append(f"{label} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(values)))
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture()
def no_work(monkeypatch):
    """Readers and trainers that fail the test if anything reaches them."""

    def reached(*args, **kwargs):
        raise AssertionError("the work started before the output path was checked")

    monkeypatch.setattr(linsvm, "read_libsvm", reached)
    monkeypatch.setattr(linsvm, "load_model", reached)
    monkeypatch.setattr(linsvm.io.cache, "write_cache", reached)
    monkeypatch.setattr(linsvm.runner, "train_blocks", reached)


def _unwritable(tmp_path: Path) -> list[tuple[Path, str]]:
    """Paths that cannot be written whoever asks, and the error each gives."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    a_folder = tmp_path / "a-folder"
    a_folder.mkdir()
    return [
        (tmp_path / "no-such-folder" / "out", "No such file or directory"),
        (a_file / "out", "Not a directory"),
        (a_folder, "Is a directory"),
    ]


def test_train_checks_the_model_path_before_reading_data(data, tmp_path, capsys, no_work):
    for path, error in _unwritable(tmp_path):
        for extra in ([], ["--memory", "1G"], ["-s", "3", "--save-on-interrupt"]):
            assert main(["train", *extra, str(data), str(path)]) == 1
            captured = capsys.readouterr()
            assert (captured.out, captured.err) == ("", f"linsvm train: error: {path}: {error}\n")
    assert not (tmp_path / "no-such-folder").exists()


def test_train_checks_the_checkpoint_path(data, tmp_path, capsys, no_work):
    for path, error in _unwritable(tmp_path):
        argv = ["train", "--checkpoint", str(path), str(data), str(tmp_path / "m")]
        assert main(argv) == 1
        assert capsys.readouterr().err == f"linsvm train: error: {path}: {error}\n"
    assert not (tmp_path / "m").exists()


def test_cross_validation_writes_no_model_so_checks_none(data, tmp_path, capsys):
    missing = tmp_path / "no-such-folder" / "m"
    assert main(["train", "-v", "2", str(data), str(missing)]) == 0
    # (each fold's LIBLINEAR lines, then the accuracy)
    assert capsys.readouterr().out.splitlines()[-1].startswith("Cross Validation Accuracy = ")


def test_predict_checks_its_output_before_loading_the_model(data, tmp_path, capsys, no_work):
    for path, error in _unwritable(tmp_path):
        assert main(["predict", str(data), str(tmp_path / "m"), str(path)]) == 1
        assert capsys.readouterr().err == f"linsvm predict: error: {path}: {error}\n"


def test_cache_checks_its_output_before_converting(data, tmp_path, capsys, no_work):
    for path, error in _unwritable(tmp_path):
        assert main(["cache", str(data), str(path)]) == 1
        assert capsys.readouterr().err == f"linsvm cache: error: {path}: {error}\n"


@pytest.mark.parametrize("unnamed_temporary", [True, False], ids=["O_TMPFILE", "hidden-name"])
def test_the_check_creates_and_truncates_nothing(tmp_path, monkeypatch, unnamed_temporary):
    if not unnamed_temporary:
        monkeypatch.setattr(_atomic, "_O_TMPFILE", 0)
    existing = tmp_path / "model"
    existing.write_text("keep me")
    before = existing.stat()
    check_writable(existing)
    check_writable(tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    after = existing.stat()
    assert existing.read_text() == "keep me"
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


# ------------------------------------------------------------ what only root may write


def _read_only_cases(folder: Path) -> list[tuple[list[str], Path]]:
    """(arguments of linsvm, the path its error must name) for a read-only folder and a
    read-only file in a writable folder; ``folder`` readable and searchable by all."""
    data = folder / "train.txt"
    read_only = folder / "ro"
    read_only.mkdir()
    writable = folder / "rw"
    writable.mkdir()
    kept = writable / "kept.model"
    kept.write_text("keep me")
    kept.chmod(0o444)
    read_only.chmod(0o555)
    writable.chmod(0o777)
    return [
        (["train", str(data), str(read_only / "m")], read_only / "m"),
        (["train", str(data), str(kept)], kept),
        (["cache", str(data), str(read_only / "c")], read_only / "c"),
    ]


@pytest.fixture()
def shared_folder(data):
    """A folder any user can read, holding the training data; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="linsvm-output-paths-"))
    folder.chmod(0o755)
    shutil.copy(data, folder / "train.txt")
    (folder / "train.txt").chmod(0o644)
    yield folder
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.rmtree(folder)


def _as_other_user(argv: list[str]) -> subprocess.CompletedProcess:
    setpriv = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update(HOME="/nonexistent", TMPDIR="/tmp")
    return subprocess.run([*setpriv, sys.executable, *argv], capture_output=True, text=True,
                          env=env, cwd="/")  # fmt: skip


def test_read_only_folder_and_file_fail_before_training(shared_folder, capsys, monkeypatch):
    cases = _read_only_cases(shared_folder)
    if os.geteuid() != 0:
        monkeypatch.setattr(linsvm, "read_libsvm", None)  # reading would be a TypeError
        monkeypatch.setattr(linsvm.io.cache, "write_cache", None)
        for argv, path in cases:
            assert main(argv) == 1
            captured = capsys.readouterr()
            assert (captured.out, captured.err) == (
                "",
                f"linsvm {argv[0]}: error: {path}: Permission denied\n",
            )
        return
    if sys.platform != "linux" or shutil.which("setpriv") is None:
        pytest.skip("as root, needs setpriv (Linux) to run as another user")
    probe = _as_other_user(["-c", "import linsvm.cli"])
    if probe.returncode != 0:
        pytest.skip(f"uid {OTHER_UID} cannot run this interpreter or import linsvm")
    for argv, path in cases:
        run = _as_other_user(["-m", "linsvm", *argv])
        # stdout empty: nothing trained or converted
        assert (run.returncode, run.stdout, run.stderr) == (
            1,
            "",
            f"linsvm {argv[0]}: error: {path}: Permission denied\n",
        )
    assert (shared_folder / "rw" / "kept.model").read_text() == "keep me"
    assert sorted(p.name for p in (shared_folder / "ro").iterdir()) == []


# ------------------------------------------------------- links, devices, pipes, permissions


def test_predict_writes_a_named_pipe_in_place(data, tmp_path, capsys):
    """A pipe (or a device: /dev/null, /dev/stdout on a terminal) is written as LIBLINEAR
    writes it; a rename over it would leave a plain file where the pipe was."""
    model = tmp_path / "m"
    assert main(["train", "-q", str(data), str(model)]) == 0
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    assert main(["predict", "-q", str(data), str(model), str(pipe)]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    expected = tmp_path / "out"
    assert main(["predict", "-q", str(data), str(model), str(expected)]) == 0
    assert received == [expected.read_bytes()]
    assert main(["predict", "-q", str(data), str(model), os.devnull]) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_link_stays_a_link_and_a_file_keeps_its_permissions(tmp_path):
    real = tmp_path / "real.model"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.model"
    link.symlink_to(real.name)
    check_writable(link)
    _atomic.atomic_write_bytes(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.model", "real.model"]


@pytest.mark.parametrize(
    "command, replaced",
    [(["train", "{data}", "{target}"], "the model would replace the training file"),
     (["train", "--checkpoint", "{target}", "{data}", "{out}"],
      "the checkpoint would replace the training file"),
     (["predict", "{data}", "{model}", "{target}"], "the predictions would replace the test file"),
     (["predict", "{data}", "{target}", "{target}"],
      "the predictions would replace the model file"),
     (["train", "-W", "{target}", "{data}", "{target}"], "the model would replace the weight file"),
     (["train", "--resume", "{target}", "{data}", "{target}"],
      "the model would replace the checkpoint")],
)  # fmt: skip
def test_outputs_never_replace_the_inputs(data, tmp_path, capsys, command, replaced):
    """LIBLINEAR's programs would overwrite their input here, and linsvm's did: the data or
    the model lost, exit status 0. Refused in one line before any work, also through a link."""
    model = tmp_path / "m.model"
    assert main(["train", "-q", str(data), str(model)]) == 0
    other = tmp_path / "weights-or-checkpoint"
    other.write_text("1\n" * 40)
    replaced_file = {"model file": model, "weight file": other, "checkpoint": other}
    kept = next((path for name, path in replaced_file.items() if replaced.endswith(name)), data)
    before = data.read_bytes(), model.read_bytes(), other.read_bytes()
    link = tmp_path / "link"
    link.symlink_to(kept)
    out = tmp_path / "o"
    for target in (kept, link):
        args = [a.format(data=data, target=target, model=model, out=out) for a in command]
        assert main(args) == 1
        assert capsys.readouterr().err == f"linsvm {command[0]}: error: {target}: {replaced}\n"
    assert (data.read_bytes(), model.read_bytes(), other.read_bytes()) == before


def test_devices_as_outputs_are_not_taken_for_the_inputs(data, tmp_path, capsys):
    """A device as the input and the output (/dev/null here; /dev/stdin and /dev/stdout on
    one terminal alike) is written in place, replacing nothing: it was refused as the test
    file replaced."""
    model = tmp_path / "m.model"
    assert main(["train", "-q", str(data), str(model)]) == 0
    assert main(["predict", "-q", os.devnull, str(model), os.devnull]) == 1
    assert capsys.readouterr().err == f"linsvm predict: error: {os.devnull}: no test instances\n"


def test_a_cache_is_not_written_to_a_device_nor_over_its_data(data, tmp_path, capsys, no_work):
    assert main(["cache", str(data), os.devnull]) == 1
    assert capsys.readouterr().err == (
        f"linsvm cache: error: {os.devnull}: not a regular file, and this file is read back\n"
    )
    link = tmp_path / "link.txt"
    link.symlink_to(data)
    for target in (data, link):
        assert main(["cache", str(data), str(target)]) == 1
        assert capsys.readouterr().err == (
            f"linsvm cache: error: {target}: the cache would replace the data file\n"
        )


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc/self/mem")
@pytest.mark.parametrize("command", ["train", "predict", "cache"])
def test_a_read_that_fails_names_its_file(data, tmp_path, capsys, command):
    """A file whose reads fail (EIO: /proc/self/mem at offset 0) gave "[Errno 5]
    Input/output error", naming no file."""
    model = tmp_path / "m.model"
    assert main(["train", "-q", str(data), str(model)]) == 0
    bad = "/proc/self/mem"
    args = {"train": [bad, str(tmp_path / "x.model")],
            "predict": [bad, str(model), str(tmp_path / "out")],
            "cache": [bad, str(tmp_path / "x.cache")]}[command]  # fmt: skip
    assert main([command, *args]) == 1
    assert capsys.readouterr().err == f"linsvm {command}: error: {bad}: Input/output error\n"
