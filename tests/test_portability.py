"""What differs on other systems (Windows above all), simulated here on Linux: the system calls
that are missing there, and the rules of its files (text-mode descriptors, open files that
cannot be removed), so that a missing fallback fails here and not on a user's machine."""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import _intrinsics, cli, train
from linsvm.errors import InvalidInputError
from linsvm.io import _atomic, read_libsvm, write_cache
from linsvm.io import cache as cache_module
from linsvm.outofcore import return_freed_arrays_to_the_system
from linsvm.solvers import _dual_threads
from linsvm.solvers._base import Subproblem

ROWS = "".join(
    f"{1 if i % 3 else -1} 1:{(i % 7) / 7:.3f} 3:{(i % 5) / 5:.3f} 4:{((i * 7) % 11) / 11:.3f}\n"
    for i in range(300)
).encode()


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "data.txt"
    path.write_bytes(ROWS)
    return path


def test_outputs_are_opened_binary(tmp_path, monkeypatch):
    """Windows opens a descriptor in text mode unless O_BINARY is given: every \\n of a cache,
    a checkpoint or a figure would be written as \\r\\n, and none would read back."""
    flags = []
    real_open = os.open

    def recording_open(path, flag, *args, **kwargs):
        flags.append(flag)
        return real_open(path, flag, *args, **kwargs)

    # 0x8000 is Windows' O_BINARY, and O_LARGEFILE here: harmless to give on Linux
    monkeypatch.setattr(_atomic, "_O_BINARY", 0x8000)
    monkeypatch.setattr(os, "open", recording_open)
    _atomic.atomic_write_bytes(tmp_path / "out", b"a\nb\n")
    written = [flag for flag in flags if flag & (os.O_WRONLY | os.O_RDWR)]
    assert written and all(flag & 0x8000 for flag in written)
    assert (tmp_path / "out").read_bytes() == b"a\nb\n"


@pytest.mark.usefixtures("fresh_process_overhead")  # (--memory in this process: see conftest)
def test_caches_read_without_pread(text, tmp_path, monkeypatch):
    """Windows has neither os.preadv nor os.pread: a cache's rows are read by a seek and a
    read, the same bytes."""
    target = tmp_path / "data.lsvc"
    write_cache(text, target, block_bytes=1024)  # (several blocks)
    X, y = read_libsvm(target)
    monkeypatch.delattr(os, "preadv", raising=False)
    monkeypatch.delattr(os, "pread", raising=False)
    Xs, ys = read_libsvm(target)
    assert (Xs != X).nnz == 0 and np.array_equal(ys, y)
    with cache_module.open_cache(target) as cache:
        assert cache.n_blocks > 1
        for k in range(cache.n_blocks):
            cache.check_block(k)
            Xk, yk = cache.read_block(k)
            r0, r1 = int(cache.row_starts[k]), int(cache.row_starts[k + 1])
            assert (Xk != X[r0:r1]).nnz == 0 and np.array_equal(yk, y[r0:r1])
    # block training reads its blocks the same way
    assert cli.main(["train", "-q", "--memory", "400M", str(target), str(tmp_path / "m")]) == 0


def test_existing_outputs_are_replaced_without_fchmod(text, tmp_path, monkeypatch):
    """os.fchmod is missing on Windows before Python 3.13: replacing an existing model failed
    with an AttributeError traceback."""
    monkeypatch.delattr(os, "fchmod")
    model = tmp_path / "m"
    for _ in range(2):
        assert cli.main(["train", "-q", str(text), str(model)]) == 0
    assert model.read_bytes().startswith(b"solver_type")


def test_discarded_temporaries_are_closed_before_they_are_removed(tmp_path, monkeypatch):
    """Windows refuses to remove a file that is open; the temporary file of a failed write
    (and the probe of `check_writable`) was removed while open, and stayed behind."""
    held = set()

    def unlink_unless_open(path, *args, **kwargs):
        name = os.path.realpath(path)
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == name:
                    held.add(name)
                    raise PermissionError(13, "in use by another process", path)
            except OSError as exc:
                if isinstance(exc, PermissionError):
                    raise
        return real_unlink(path, *args, **kwargs)

    real_unlink = os.unlink
    monkeypatch.setattr(_atomic, "_O_TMPFILE", 0)  # named temporaries, as everywhere but Linux
    monkeypatch.setattr(os, "unlink", unlink_unless_open)
    target = tmp_path / "out"
    target.write_bytes(b"old")
    _atomic.check_writable(target)
    with pytest.raises(RuntimeError), _atomic.atomic_writer(target) as f:
        f.write(b"half")
        raise RuntimeError("the writer failed")
    assert sorted(os.listdir(tmp_path)) == ["out"] and not held
    assert target.read_bytes() == b"old"


def test_block_training_runs_without_glibc(monkeypatch):
    """ctypes.CDLL(None) is a TypeError on Windows (not an OSError): block training's malloc
    tuning must skip it, not fail."""

    def no_process_library(name, *args, **kwargs):
        if name is None:
            raise TypeError("LoadLibrary() argument 1 must be str, not None")
        return ctypes.CDLL(name, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", no_process_library)
    return_freed_arrays_to_the_system()
    assert _intrinsics._has_thread_calls() is False


def test_closed_pipe_without_sigpipe(monkeypatch, capfd):
    """Windows has no signal.SIGPIPE: the broken-pipe exit must not fail on it."""
    monkeypatch.delattr(signal, "SIGPIPE")

    def broken(argv):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "run_train", broken)
    assert cli.main(["train", "x", "y"]) == 141


def test_names_the_output_encoding_cannot_hold(text, tmp_path, monkeypatch):
    """stdout in a legacy code page (Windows, redirected): the summary line naming a model
    whose name it cannot encode is printed escaped; it failed after the model was written."""
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="cp1252"))
    model = tmp_path / "模型"
    assert cli.main(["train", str(text), str(model)]) == 0
    sys.stdout.flush()
    assert model.exists()
    assert b"\\u6a21\\u578b" in out.getvalue()


def test_threaded_dual_solves_need_the_thread_calls(monkeypatch):
    """Where sched_yield or clock_gettime is missing (Windows) the threaded dual kernels would
    not compile, or abort the process: the solve runs on one thread, and asking to simulate
    threads is a one-line error."""
    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.3, random_state=1, format="csr")
    y = np.where(rng.random(400) < 0.5, -1.0, 1.0)
    monkeypatch.setattr(_dual_threads, "THREAD_MIN_NNZ", 1)

    def plan(n_threads, **options):
        sub = Subproblem(X, y, np.ones(X.shape[0]), 0.1, 1.0, n_threads=n_threads,
                         options=options)  # fmt: skip
        return _dual_threads.thread_plan(sub, X, False)

    assert plan(4).n_threads == 4
    monkeypatch.setattr(_intrinsics, "THREAD_CALLS", False)
    assert plan(4) == _dual_threads.ThreadPlan(1, "serial")
    with pytest.raises(InvalidInputError, match="lacks"):
        plan(1, simulate_threads=4)
    serial = train(X, y, solver=1, n_jobs=1)
    assert np.array_equal(train(X, y, solver=1, n_jobs=4).coef_, serial.coef_)
    monkeypatch.delattr(time, "CLOCK_MONOTONIC")
    assert _intrinsics._has_thread_calls() is False
