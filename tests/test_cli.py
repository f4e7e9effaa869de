"""The command line: LIBLINEAR's options, outputs and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import linsvm
from linsvm.cli import main, parse_train_args

REPO = Path(__file__).resolve().parents[1]
A9A = REPO / "data" / "a9a"
A9A_T = REPO / "data" / "a9a.t"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture()
def small_files(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(60):
        label = int(rng.integers(1, 4))
        feats = sorted(rng.choice(np.arange(1, 11), size=4, replace=False))
        vals = [
            f"{j}:{(label == 1) * 0.5 + rng.normal():.4f}" if j < 3 else f"{j}:{rng.normal():.4f}"
            for j in feats
        ]
        lines.append(f"{label} " + " ".join(vals))
    train = write(tmp_path / "train.txt", "\n".join(lines) + "\n")
    return tmp_path, train


def test_parse_liblinear_options():
    opts = parse_train_args(
        [
            "-s",
            "3",
            "-c",
            "0.5",
            "-e",
            "0.01",
            "-B",
            "1",
            "-w1",
            "2",
            "-w-1",
            "0.5",
            "-q",
            "--seed",
            "7",
            "data",
            "out.model",
        ]
    )
    assert (opts.solver, opts.C, opts.eps, opts.bias, opts.seed) == (3, 0.5, 0.01, 1.0, 7)
    assert opts.class_weight == {1: 2.0, -1: 0.5}
    assert opts.quiet and opts.model_file == "out.model"
    assert parse_train_args(["dir/heart"]).model_file == "heart.model"


def test_train_predict_roundtrip(tmp_path, capsys):
    model_file = tmp_path / "a9a.model"
    out_file = tmp_path / "a9a.out"
    assert main(["train", "-q", str(A9A), str(model_file)]) == 0
    assert main(["predict", str(A9A_T), str(model_file), str(out_file)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Accuracy = ")
    predicted = np.loadtxt(out_file)
    X, y = linsvm.read_libsvm(A9A_T)
    model = linsvm.load_model(model_file)
    assert np.array_equal(predicted, model.predict(X))
    accuracy = float(printed.split("=")[1].split("%")[0])
    assert accuracy == pytest.approx(100 * np.mean(predicted == y))
    assert accuracy > 84.0  # a9a's test accuracy for a linear SVM at C = 1 is about 85%


def test_train_output_and_multiclass(small_files, capsys):
    folder, train = small_files
    model_file = folder / "m"
    assert main(["train", "-s", "3", "-B", "1", str(train), str(model_file)]) == 0
    out = capsys.readouterr().out
    assert out.count("optimization finished") == 3  # one-vs-rest over 3 classes
    text = model_file.read_text()
    assert "nr_class 3" in text and "bias 1" in text
    assert not [p for p in os.listdir(folder) if p.endswith(".tmp")]


def test_cross_validation(small_files, capsys):
    _, train = small_files
    assert main(["train", "-v", "5", "-q", str(train)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Cross Validation Accuracy = ")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "-s", "21", "-B", "1", str(A9A)], "ignored in ONECLASS_SVM"),
        (["train", "-s", "99", "x"], "unknown solver"),
        (["train", "-c", "abc", "x"], "needs a number"),
        (["train", "-v", "1", "x"], "n must >= 2"),
        (["train", "-z", "1", "x"], "unknown option"),
        (["train", "/nonexistent/file"], "No such file"),
        (["train", "-c", "0", str(A9A)], "C must be > 0"),
        (["train", "-e", "-1", str(A9A)], "eps must be > 0"),
        (["predict", str(A9A_T), "/nonexistent.model", "out"], "No such file"),
        (["predict", str(A9A_T), str(A9A), "out"], "unknown text in model file"),
        (["frobnicate"], "unknown command"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_data_names_file_and_line(tmp_path, capsys):
    bad = write(tmp_path / "bad.txt", "1 1:1\n# comment\n-1 2:1 1:3\n")
    assert main(["train", str(bad), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "ascending" in err
    assert not (tmp_path / "m").exists()


def test_non_integer_labels_rejected(tmp_path, capsys):
    data = write(tmp_path / "d.txt", "1 1:1\n2.5 1:-1\n")
    assert main(["train", str(data), str(tmp_path / "m")]) == 1
    assert "not an integer" in capsys.readouterr().err


def test_empty_and_one_class(tmp_path, capsys):
    empty = write(tmp_path / "empty.txt", "")
    assert main(["train", str(empty), str(tmp_path / "m")]) == 1
    assert "no training instances" in capsys.readouterr().err
    one = write(tmp_path / "one.txt", "1 1:1\n1 2:1\n")
    assert main(["train", str(one), str(tmp_path / "m")]) == 1
    assert "only one class" in capsys.readouterr().err


def test_instance_weights_file(small_files, capsys):
    folder, train = small_files
    weights = write(folder / "w.txt", "\n".join(["1"] * 30 + ["0.5"] * 30) + "\n")
    assert main(["train", "-q", "-W", str(weights), str(train), str(folder / "m")]) == 0
    short = write(folder / "short.txt", "1\n2\n")
    assert main(["train", "-W", str(short), str(train), str(folder / "m")]) == 1
    assert "2 weights for 60" in capsys.readouterr().err
    bad = write(folder / "bad.txt", "1\nx\n")
    assert main(["train", "-W", str(bad), str(train), str(folder / "m")]) == 1
    assert f"{bad}:2:" in capsys.readouterr().err


def test_iteration_cap_warns(small_files, capsys):
    _, train = small_files
    assert main(["train", "-e", "1e-9", "--max-iter", "2", str(train), str(train) + ".model"]) == 0
    assert "WARNING: reaching max number of iterations" in capsys.readouterr().err


def test_console_script_runs():
    # The installed entry point: exit status and usage, as a user would run it.
    result = subprocess.run([sys.executable, "-m", "linsvm.cli"], capture_output=True, text=True)
    assert result.returncode == 1 and "Usage" in result.stdout


def test_primal_solvers_and_unregularized_bias(tmp_path, capsys):
    for argv in (["-s", "0"], ["-s", "2", "-B", "1", "-R"]):
        model_file = tmp_path / "m"
        assert main(["train", *argv, str(A9A), str(model_file)]) == 0
        assert "stop measure / initial" in capsys.readouterr().out
        assert main(["predict", "-q", str(A9A_T), str(model_file), str(tmp_path / "o")]) == 0
    assert main(["train", "-s", "1", "-R", str(A9A), str(tmp_path / "m")]) == 1
    assert "needs bias=1" in capsys.readouterr().err


def test_l1_solver_reports_nonzeros(tmp_path, capsys):
    assert main(["train", "-s", "6", str(A9A), str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "nnz(w) = " in out and "stop measure / initial" in out


def test_package_and_cli_start_without_scikit_learn():
    # scikit-learn is imported by the estimators only, on first use of linsvm.LinearSVC
    code = (
        "import sys, linsvm, linsvm.cli; "
        "assert 'sklearn' not in sys.modules; "
        "linsvm.LinearSVC; assert 'sklearn' in sys.modules"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
