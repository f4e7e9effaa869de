"""``linsvm train`` stopped by Ctrl-C or SIGTERM, and continued from its checkpoint.

The process is started with ``--verbose`` and signalled once it has printed its third
iteration line, so the signal always arrives during training. It must exit non-zero with one
line on stderr, leave an existing file at the model path untouched unless
``--save-on-interrupt`` is given, and write a checkpoint (``--checkpoint``) from which
``--resume`` finishes with the very model file of an uninterrupted run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm

# a run that does not converge for a long while: -s 3 at a large C on noisy data
SLOW = ["-s", "3", "-c", "1000", "-e", "1e-12", "--max-iter", "60"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = sp.random(3000, 50, density=0.2, format="csr", random_state=rng)
    y = np.where(X @ rng.standard_normal(50) + 0.5 * rng.standard_normal(3000) > 0, 1, -1)
    path = tmp_path_factory.mktemp("cli") / "train.txt"
    linsvm.write_libsvm(X, y, path)
    return path


def linsvm_command(*args) -> list[str]:
    return [sys.executable, "-m", "linsvm.cli", "train", *map(str, args)]


def run_and_signal(args, signum: int, after_iterations: int = 3):
    """Run ``linsvm train --verbose ARGS``, send ``signum`` after that many iteration lines;
    return (exit status, the stderr lines after the signal)."""
    proc = subprocess.Popen(
        linsvm_command("--verbose", *args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = 0
    for line in proc.stderr:
        if line.startswith("iter"):
            seen += 1
            if seen == after_iterations:
                proc.send_signal(signum)
                break
    rest = [line.rstrip("\n") for line in proc.stderr if not line.startswith("iter")]
    return proc.wait(), rest


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_writes_no_model_and_keeps_the_old_file(data_file, tmp_path, signum):
    model_path = tmp_path / "out.model"
    model_path.write_text("an earlier model\n")
    status, lines = run_and_signal([*SLOW, data_file, model_path], signum)
    assert status == 128 + signum
    assert len(lines) == 1, lines
    assert f"interrupted by {signal.Signals(signum).name}" in lines[0]
    assert "no model written" in lines[0]
    assert model_path.read_text() == "an earlier model\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.model"]  # no temporary left behind


def test_save_on_interrupt_writes_the_current_model(data_file, tmp_path):
    model_path = tmp_path / "out.model"
    status, lines = run_and_signal([*SLOW, "--save-on-interrupt", data_file, model_path],
                                   signal.SIGINT)  # fmt: skip
    assert status == 128 + signal.SIGINT and "written to" in lines[-1]
    model = linsvm.load_model(model_path)
    assert model.coef_.shape == (1, 50) and np.any(model.coef_ != 0)


def test_checkpoint_and_resume_give_the_uninterrupted_model(data_file, tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    interrupted = tmp_path / "interrupted.model"
    status, lines = run_and_signal(
        [*SLOW, "--checkpoint", checkpoint, data_file, interrupted], signal.SIGINT
    )
    assert status == 128 + signal.SIGINT and "--resume" in lines[-1]
    assert checkpoint.exists() and not interrupted.exists()

    resumed = tmp_path / "resumed.model"
    done = subprocess.run(
        linsvm_command("-q", *SLOW, "--resume", checkpoint, data_file, resumed),
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    straight = tmp_path / "straight.model"
    done = subprocess.run(
        linsvm_command("-q", *SLOW, data_file, straight), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert resumed.read_bytes() == straight.read_bytes()


def test_resume_with_other_options_is_refused(data_file, tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    run_and_signal([*SLOW, "--checkpoint", checkpoint, data_file, tmp_path / "m"], signal.SIGINT)
    done = subprocess.run(
        linsvm_command("-s", "3", "-c", "1", "--resume", checkpoint, data_file, tmp_path / "m"),
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "differs in: -c (C)" in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_cross_validation_names_its_signal(data_file, monkeypatch, capsys,
                                                         signum):  # fmt: skip
    """-v ends as a whole; its line names the signal, Ctrl-C's too (it said only
    "interrupted" for Ctrl-C)."""
    from linsvm.cli import main
    from linsvm.interrupts import RunInterrupted

    def interrupted(*args, **kwargs):
        raise RunInterrupted(signum)

    monkeypatch.setattr(linsvm, "cross_validation", interrupted)
    assert main(["train", "-v", "3", str(data_file)]) == 128 + signum
    err = capsys.readouterr().err
    assert err == f"linsvm train: interrupted by {signal.Signals(signum).name}\n"


def test_a_ctrl_c_numba_turned_into_a_system_error_is_an_interrupt(data_file, monkeypatch,
                                                                   capsys):  # fmt: skip
    """A Ctrl-C pending when a Numba kernel hands its arrays back raises within that return
    and comes out as a SystemError caused by the KeyboardInterrupt: one line and status 130,
    as any Ctrl-C; a SystemError of another cause is not taken for one."""
    from linsvm.cli import main

    def interrupted_in_a_kernels_return(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") \
                from exc

    monkeypatch.setattr(linsvm, "cross_validation", interrupted_in_a_kernels_return)
    assert main(["train", "-v", "3", str(data_file)]) == 130
    assert capsys.readouterr().err == "linsvm train: interrupted by SIGINT\n"

    def failed(*args, **kwargs):
        raise SystemError("something else")

    monkeypatch.setattr(linsvm, "cross_validation", failed)
    with pytest.raises(SystemError, match="something else"):
        main(["train", "-v", "3", str(data_file)])
