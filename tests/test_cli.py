"""The command line: LIBLINEAR's options, outputs and one-line errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    # LIBLINEAR multiplies a class's C by each weight given for it
    assert parse_train_args(["-w1", "2", "-w1", "3", "d"]).class_weight == {1: 6.0}


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


@pytest.mark.parametrize("solver", ["1", "3", "5", "7", "12", "2"])
def test_train_prints_liblinears_objective_value(tmp_path, capsys, solver):
    """LIBLINEAR's "Objective value" line: the dual objective f(alpha) its dual solvers
    minimise (minus the dual value), the primal value of -s 5 and -s 6; none for the Newton
    solvers, which print iteration lines there."""
    model_file = tmp_path / "m"
    assert main(["train", "-s", solver, str(A9A), str(model_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    summary = dict(pair.split(" = ") for pair in lines[-2].split("  ") if " = " in pair)
    if solver == "2":
        # (nor "optimization finished" nor nSV, as LIBLINEAR: its iterations end linsvm's line)
        assert not any(line.startswith(("Objective value", "optimization finished", "nSV"))
                       for line in lines)  # fmt: skip
        assert int(summary["#iter"]) > 0
        return
    assert lines[0].startswith("optimization finished")
    assert lines[1].startswith("Objective value = ")
    value = float(lines[1].split(" = ")[1])
    expected = float(summary["primal"]) if solver == "5" else -float(summary["dual"])
    assert value == pytest.approx(expected, abs=1e-6, rel=1e-9)


@pytest.mark.parametrize("argv", [["-s", "pegasos", "--max-iter", "3"],
                                  ["-s", "sgd-s", "-e", "0", "--max-iter", "3"]])
def test_verbose_warns_only_where_a_tolerance_was_missed(tmp_path, capsys, argv):
    """Fixed epochs (Pegasos) or -e 0 set no tolerance to miss: no "WARNING: max iter"."""
    assert main(["train", "--verbose", *argv, str(A9A), str(tmp_path / "m")]) == 0
    assert "WARNING" not in capsys.readouterr().err


def test_predict_prints_scores_as_liblinears_printf(tmp_path, capsys):
    """The accuracy divided before it is scaled (87/640 is 13.5937% in LIBLINEAR, 13.5938% the
    other way), and a NaN r^2 (constant predictions: 0/0) as glibc's "-nan"."""
    model = tmp_path / "m"
    model.write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 1\n"
                     "bias -1\nw\n1 \n")  # fmt: skip
    test = tmp_path / "t"
    test.write_text("1 1:1\n" * 87 + "-1 1:1\n" * 553)
    assert main(["predict", str(test), str(model), str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out == "Accuracy = 13.5937% (87/640)\n"
    model.write_text("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 1\nbias -1\nw\n0.5 \n")
    test.write_text("3 1:1\n")
    assert main(["predict", str(test), str(model), str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out == (
        "Mean squared error = 6.25 (regression)\n"
        "Squared correlation coefficient = -nan (regression)\n"
    )


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
        (["train", "-e", "-1", str(A9A)], "eps must be >= 0"),
        (["predict", str(A9A_T), "/nonexistent.model", "{tmp}/out"], "No such file"),
        (["predict", str(A9A_T), str(A9A), "{tmp}/out"], "unknown text in model file"),
        (["frobnicate"], "unknown command"),
        (["train", "--memory", "1G", "--no-shrinking", str(A9A)],
         "--memory does not go with --no-shrinking"),
        (["train", "--memory", "inf", str(A9A)], "memory must be a size such as 2G"),
        (["train", "-v", "3", "--checkpoint", "{tmp}/c", str(A9A)],
         "-v does not go with --checkpoint/--resume"),
        (["train", "--hash-bits", "31", str(A9A)], "--hash-bits 31: a model file holds at most"),
        (["train", "--every", "5", str(A9A)], "give --checkpoint too"),  # (was ignored)
        # options of the dual loops that the solver would ignore (its model unchanged)
        (["train", "-s", "0", "--no-shrinking", str(A9A)],
         "--no-shrinking applies to -s 1, 3, 4, 12 and 13, not -s 0"),
        (["train", "-s", "37", "--bucket-size", "4", str(A9A)],
         "--bucket-size applies to -s 1, 3, 7, 12 and 13, not -s 37"),
        (["train", "-s", "5", "--buckets-per-group", "4", str(A9A)],
         "--buckets-per-group applies to -s 1, 3, 7, 12 and 13, not -s 5"),
        (["train", "-s", "21", "-m", "2", "--thread-scheme", "rounds", str(A9A)],
         "--thread-scheme applies to -s 1, 3, 12 and 13, not -s 21"),
        # (-v writes no model, and prints the folds' lines, not each iteration)
        (["train", "-v", "3", "--save-on-interrupt", str(A9A)],
         "-v does not go with --save-on-interrupt"),
        (["train", "-C", "-s", "0", "--verbose", str(A9A)], "-C does not go with --verbose"),
        # (Python's float took digit groups: LIBLINEAR's atof reads "1_0" as 1, linsvm as 10)
        (["train", "-c", "1_0", str(A9A)], "needs a number"),
        (["train", "-w1_0", "2", str(A9A)], "needs an integer"),
        (["train", "-q", "--memory", "1G", "--max-iter", "0", str(A9A), "{tmp}/m"],
         "block minimisation runs at least one outer iteration"),
        # (a value option last took the first file as its value)
        (["compare", str(A9A), str(A9A_T), "-c"], "option -c needs a value"),
        (["compare", "{tmp}", str(A9A), str(A9A_T), "-o"], "option -o needs a value"),
    ],
)
def test_errors_are_one_line(argv, message, capsys, tmp_path):
    # (outputs in a fresh folder: the demo leaves a folder "out" in the repository's root)
    assert main([arg.format(tmp=tmp_path) for arg in argv]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_regression_scores_of_huge_targets_print_no_warnings(tmp_path, capsys):
    """Targets near the float64 limit overflow the scores' sums (to inf, as LIBLINEAR's):
    the scores say so, and no NumPy warning reaches stderr."""
    # (trained on targets it can train on: those of 2^500 and more are refused)
    train = write(tmp_path / "t.txt", "1 1:1\n-1 2:1\n")
    data = write(tmp_path / "r.txt", "1e300 1:1\n-1e300 2:1\n")
    model = tmp_path / "m"
    assert main(["train", "-q", "-s", "12", str(train), str(model)]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["predict", str(data), str(model), str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "Mean squared error = inf" in captured.out
    assert captured.err.startswith("read + predict ") and captured.err.count("\n") == 1


def test_regression_scores_are_liblinears_sums_in_row_order_whatever_the_pieces():
    """The squared correlation n vt - v t cancels (targets near 1e5): LIBLINEAR's digits come
    only from its additions in row order, which the scores make whatever pieces the rows
    come in (per core, per cache block)."""
    from linsvm.cli import _Scores
    from linsvm.evaluation import regression_scores

    rng = np.random.default_rng(0)
    target = 1e5 + 300.0 * rng.standard_normal(5000)
    predicted = target + 150.0 * rng.standard_normal(5000)
    sums = [0.0] * 6  # (LIBLINEAR's predict.c: doubles added row after row)
    for v, t in zip(predicted.tolist(), target.tolist(), strict=True):
        sums = [sums[0] + (v - t) * (v - t), sums[1] + v, sums[2] + t, sums[3] + v * t,
                sums[4] + v * v, sums[5] + t * t]  # fmt: skip
    sq, v, t, vt, vv, tt = sums
    n = target.shape[0]
    expected = (sq / n, (n * vt - v * t) * (n * vt - v * t) / ((n * vv - v * v) * (n * tt - t * t)))
    assert regression_scores(predicted, target) == expected
    for cuts in ([2500], [1, 17, 4000], list(range(100, 5000, 100))):
        scores = _Scores()
        for p_part, t_part in zip(np.split(predicted, cuts), np.split(target, cuts), strict=True):
            scores.add(p_part, t_part)
        assert scores.regression() == expected


def test_bad_data_names_file_and_line(tmp_path, capsys):
    bad = write(tmp_path / "bad.txt", "1 1:1\n# comment\n-1 2:1 1:3\n")
    assert main(["train", str(bad), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "ascending" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("memory", [[], ["--memory", "1G"]], ids=["in-memory", "blocks"])
@pytest.mark.parametrize(
    "label, message",
    [("2.5", "2.5 of instance 2 is not an integer"),
     ("3000000000", "3000000000 of instance 2 is out of the range of LIBLINEAR's labels"),
     ("-1e20", "-1e+20 of instance 2 is out of the range")],
)  # fmt: skip
def test_labels_a_model_file_cannot_hold_are_refused_before_training(
    tmp_path, capsys, monkeypatch, label, message, memory
):
    data = write(tmp_path / "d.txt", f"1 1:1\n{label} 1:-1\n")

    def trained(*args, **kwargs):
        raise AssertionError("trained on labels that cannot be saved")

    monkeypatch.setattr("linsvm.outofcore.measured_overhead", lambda solver: None)  # (a run)
    monkeypatch.setattr("linsvm.runner._BlocksRun.train", trained)
    monkeypatch.setattr("linsvm.training._Runner.run_all", trained)
    assert main(["train", "-q", *memory, str(data), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"linsvm train: error: {data}: class label {message}")
    assert err.count("\n") == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.usefixtures("fresh_process_overhead")
def test_cross_validation_in_blocks_prints_each_folds_lines(small_files, capsys):
    # -v with --memory: each fold's lines as train --memory ends with them (a line a class of
    # this three-class set), then the accuracy; none with -q
    folder, train = small_files
    assert main(["train", "-v", "3", "--memory", "300M", str(train)]) == 0
    out = capsys.readouterr().out.splitlines()
    ends = [line for line in out if "#outer iterations = " in line]
    assert len(ends) == 3 * 3
    assert all(line.startswith("[class ") for line in ends)
    assert out[-1].startswith("Cross Validation Accuracy = ")
    assert main(["train", "-q", "-v", "3", "--memory", "300M", str(train)]) == 0
    assert capsys.readouterr().out.splitlines() == [out[-1]]


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


# ----------------------------------------------------------------------------- a new user's path


@pytest.mark.parametrize("command", ["train", "predict", "compare"])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_on_every_command(command, flag, capsys):
    assert main([command, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: linsvm {command}")
    # also after other arguments, as users type it
    assert main([command, "-q", flag]) == 0
    assert capsys.readouterr().out == out


def test_main_help_and_version(capsys):
    assert main(["--help"]) == 0
    assert "linsvm COMMAND --help" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"linsvm {linsvm.__version__}\n"


def test_compare_takes_options_after_the_files(monkeypatch, tmp_path):
    # the README's order: linsvm compare TRAIN TEST -c 1 -o DIR --max-time 10
    import linsvm.compare

    seen = []
    monkeypatch.setattr(linsvm.compare, "run_compare", lambda argv: seen.append(argv) or 0)
    out = str(tmp_path / "out")
    argv = [str(A9A), str(A9A_T), "-c", "1", "-o", out, "--max-time", "10", "-q", "-B", "-1"]
    assert main(["compare", *argv]) == 0
    assert seen[-1] == ["-c", "1", "-o", out, "--max-time", "10", "-q", "-B", "-1",
                        str(A9A), str(A9A_T)]  # fmt: skip
    opts = linsvm.compare.parse_compare_args(seen[-1])
    assert opts.datasets == [(str(A9A), str(A9A_T))]
    assert (opts.C, opts.outdir, opts.max_time, opts.quiet, opts.bias) == (1.0, out, 10.0, True, -1)
    # options between the files, and LIBLINEAR's order, give the same
    assert main(["compare", str(A9A), "-c", "1", str(A9A_T), "-o", out]) == 0
    assert main(["compare", "-c", "1", "-o", out, str(A9A), str(A9A_T)]) == 0
    assert seen[-1] == seen[-2] == ["-c", "1", "-o", out, str(A9A), str(A9A_T)]


def test_train_and_predict_keep_liblinear_order(tmp_path, capsys):
    # options first, then files; an option after the files is an operand, as in LIBLINEAR
    assert main(["train", str(A9A), str(tmp_path / "m"), "-c"]) == 1
    assert "too many arguments: -c" in capsys.readouterr().err


def test_predict_b_any_nonzero_is_probability(tmp_path, capsys):
    # LIBLINEAR's predict: flag_predict_probability = atoi(argv[i]): -b 2 is -b 1
    model_file = tmp_path / "lr.model"
    assert main(["train", "-q", "-s", "0", str(A9A), str(model_file)]) == 0
    outputs = {}
    for b in ("1", "2", "-1", "0"):
        out_file = tmp_path / f"out{b}"
        assert main(["predict", "-q", "-b", b, str(A9A_T), str(model_file), str(out_file)]) == 0
        outputs[b] = out_file.read_text()
    assert outputs["1"].startswith("labels ")
    assert outputs["2"] == outputs["1"] == outputs["-1"]
    assert not outputs["0"].startswith("labels ")
    svm_file = tmp_path / "svm.model"
    assert main(["train", "-q", str(A9A), str(svm_file)]) == 0
    capsys.readouterr()
    assert main(["predict", "-b", "2", str(A9A_T), str(svm_file), str(tmp_path / "o")]) == 1
    assert "only supported for logistic regression" in capsys.readouterr().err


def test_predict_b_takes_an_integer(tmp_path, capsys):
    model_file = tmp_path / "lr.model"
    assert main(["train", "-q", "-s", "0", str(A9A), str(model_file)]) == 0
    capsys.readouterr()
    assert main(["predict", "-b", "1.0", str(A9A_T), str(model_file), str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err.strip().endswith("option -b needs an integer, got '1.0'")


def test_predict_b_far_from_every_class_prints_glibcs_nan(tmp_path, capsys):
    # every one-vs-rest sigmoid underflows to 0 on the first row: LIBLINEAR divides 0 by 0
    # and its printf("%g") writes -nan; no NumPy warning reaches the terminal
    model_file = write(
        tmp_path / "m",
        "solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 1\nbias -1\nw\n-1 -1 -1 \n",
    )
    test_file = write(tmp_path / "t", "1 1:1000\n2 1:1\n")
    out_file = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["predict", "-q", "-b", "1", str(test_file), str(model_file),
                     str(out_file)]) == 0  # fmt: skip
    lines = out_file.read_text().splitlines()
    assert lines[0] == "labels 1 2 3"
    assert lines[1] == "1 -nan -nan -nan"
    assert lines[2].split()[1:] == ["0.333333"] * 3


def test_predict_on_an_empty_test_file_is_an_error(tmp_path, capsys):
    model_file = tmp_path / "m"
    assert main(["train", "-q", str(A9A), str(model_file)]) == 0
    empty = write(tmp_path / "empty.t", "")
    assert main(["predict", str(empty), str(model_file), str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"linsvm predict: error: {empty}: no test instances\n"
    assert "Accuracy" not in captured.out and not (tmp_path / "out").exists()


def test_errors_from_training_name_the_file(tmp_path, capsys):
    one = write(tmp_path / "one.txt", "1 1:1\n1 2:1\n")
    assert main(["train", str(one), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"linsvm train: error: {one}: ") and "only one class" in err
    assert err.count("\n") == 1
    # option errors are found before the data is read and do not name it
    assert main(["train", "-c", "0", str(one)]) == 1
    assert capsys.readouterr().err == "linsvm train: error: C must be > 0, got 0.0\n"


@pytest.mark.parametrize("command", ["train", "predict"])
def test_index_zero_advice_fits_the_command_line(tmp_path, capsys, command):
    zero = write(tmp_path / "zero.txt", "1 0:1 2:1\n-1 1:1\n")
    model_file = tmp_path / "m"
    if command == "train":
        argv = ["train", str(zero), str(model_file)]
    else:
        assert main(["train", "-q", str(A9A), str(model_file)]) == 0
        argv = ["predict", str(zero), str(model_file), str(tmp_path / "o")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"linsvm {command}: error: {zero}:1: feature index 0")
    assert "zero_based" not in err and "number features from 1" in err


def test_binary_garbage_in_data_is_shown_escaped_once(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 1:0.5 \xff\xfe:1\n")
    assert main(["train", str(bad)]) == 1
    assert capsys.readouterr().err == (
        f"linsvm train: error: {bad}:1: bad feature index '\\xff\\xfe'\n"
    )


def test_unwritable_output_names_the_given_path(tmp_path, capsys):
    missing = tmp_path / "no-such-folder" / "a9a.model"
    assert main(["train", "-q", str(A9A), str(missing)]) == 1
    err = capsys.readouterr().err
    assert err == f"linsvm train: error: {missing}: No such file or directory\n"
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert main(["train", "-q", str(A9A), str(folder)]) == 1
    assert capsys.readouterr().err.startswith(f"linsvm train: error: {folder}: ")
    model_file = tmp_path / "m"
    assert main(["train", "-q", str(A9A), str(model_file)]) == 0
    assert main(["predict", str(A9A_T), str(model_file), str(missing)]) == 1
    assert capsys.readouterr().err.startswith(f"linsvm predict: error: {missing}: No such file")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to read-only folders"
)
def test_read_only_folder_names_the_given_path(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert main(["train", "-q", str(A9A), str(folder / "m")]) == 1
    finally:
        folder.chmod(0o755)
    assert capsys.readouterr().err == (
        f"linsvm train: error: {folder / 'm'}: Permission denied\n"
    )


def test_parameter_search_prints_no_iteration_cap_warnings(tmp_path, capsys):
    # as LIBLINEAR's -C: the solves along the C path that stop at their cap say nothing
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 6))
    y = X @ rng.normal(size=6) + 0.05 * rng.normal(size=80)
    data = tmp_path / "r.txt"
    linsvm.write_libsvm(X, y, data)
    assert main(["train", "-C", "-s", "11", "--max-iter", "2", "-v", "3", str(data)]) == 0
    captured = capsys.readouterr()
    assert "iteration cap" not in captured.err and "WARNING" not in captured.err
    assert captured.out.strip().splitlines()[-1].startswith("Best C = ")


@pytest.mark.skipif(sys.platform == "win32", reason="bash scripts")
def test_demo_sets_up_once_and_names_the_compilation(tmp_path):
    # scripts/demo.sh in a copy of the repository whose .venv logs pip instead of running it
    for name in ("pyproject.toml", "constraints.txt"):
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    (tmp_path / "scripts").mkdir()
    for name in ("demo.sh", "venv.sh"):
        (tmp_path / "scripts" / name).write_bytes((REPO / "scripts" / name).read_bytes())
    (tmp_path / "src" / "linsvm").mkdir(parents=True)
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    log = tmp_path / "calls.log"
    fake_python = (
        "#!/bin/bash\n"
        f'if [ "$1" = -m ] && [ "$2" = pip ]; then echo "pip $*" >> {log}; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    (venv_bin / "python").write_text(fake_python)
    (venv_bin / "linsvm").write_text(f'#!/bin/bash\necho "linsvm $*" >> {log}\n')
    for tool in venv_bin.iterdir():
        tool.chmod(0o755)

    def demo() -> str:
        result = subprocess.run(
            ["bash", str(tmp_path / "scripts" / "demo.sh")], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    first = demo()
    assert "compilation" in first and "first run" in first
    assert log.read_text().count("pip install") == 2  # pip itself, then linsvm
    log.write_text("")
    demo()  # installed, nothing changed: no pip
    assert "pip" not in log.read_text() and log.read_text().count("linsvm train") == 1
    with open(tmp_path / "constraints.txt", "a") as f:
        f.write("# changed\n")
    log.write_text("")
    demo()
    assert "-c constraints.txt -e ." in log.read_text()


@pytest.mark.usefixtures("fresh_process_overhead")
def test_summary_reports_the_save_time_beside_the_training_time(small_files, capsys):
    folder, train = small_files
    assert main(["train", str(train), str(folder / "m")]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"read \d+\.\d{{3}} s, train \d+\.\d{{3}} s, save \d+\.\d{{3}} s \(60 instances, \d+ "
        rf"features, 240 non-zeros\); model written to {re.escape(str(folder / 'm'))}", last
    )
    assert main(["train", "--memory", "300M", str(train), str(folder / "m2")]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"trained in \d+\.\d{{3}} s, saved in \d+\.\d{{3}} s; model written to "
        rf"{re.escape(str(folder / 'm2'))}", last
    )


# ----------------------------------------------------------------------------- errors name files


@pytest.fixture()
def svm_model(tmp_path):
    """(a small training file, an SVM model trained on it), in tmp_path."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    model = tmp_path / "svm.model"
    linsvm.train(X, y).save(model)
    return data, model


def test_predict_names_the_test_file_it_cannot_read(tmp_path, monkeypatch, capsys, svm_model):
    """Not the output file: the output is written atomically, but errors of the reading
    inside that write are the test file's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    assert main(["predict", "nonexist.txt", "svm.model", "out1"]) == 1
    assert capsys.readouterr().err == (
        "linsvm predict: error: nonexist.txt: No such file or directory\n"
    )
    assert main(["predict", "adir", "svm.model", "out2"]) == 1
    assert capsys.readouterr().err == "linsvm predict: error: adir: Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "svm.model", "train.txt"]


def test_predict_b_on_an_svm_model_names_the_model_file(tmp_path, monkeypatch, capsys,
                                                       svm_model):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["predict", "-b", "1", "train.txt", "svm.model", "out"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("linsvm predict: error: svm.model: probability output (-b 1)")
    assert "not a -s 1 model" in err and err.count("\n") == 1


def _onto_a_full_disk(monkeypatch):
    """Every temporary file an atomic write creates (unnamed, O_TMPFILE, or hidden) is
    /dev/full instead: its writes fail as on a full disk (ENOSPC), from the kernel."""
    real_open = os.open
    unnamed = getattr(os, "O_TMPFILE", -1)

    def open_full(path, flags, mode=0o777, **kwargs):
        if flags & unnamed == unnamed or (str(path).endswith(".tmp") and flags & os.O_CREAT):
            return real_open("/dev/full", os.O_RDWR)
        return real_open(path, flags, mode, **kwargs)

    monkeypatch.setattr(os, "open", open_full)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("command", ["predict", "cache"])
def test_a_full_disk_is_named_by_the_output_file(tmp_path, monkeypatch, capsys, svm_model,
                                                 command):  # fmt: skip
    data, model = svm_model
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 200)  # more than a write buffer of output
    monkeypatch.chdir(tmp_path)
    argv = ["big.txt", "svm.model", "out"] if command == "predict" else ["big.txt", "out"]
    assert main([command, "-q", *argv[:-1], "warm"]) == 0  # the compiled code loaded first
    os.remove("warm")
    _onto_a_full_disk(monkeypatch)
    assert main([command, *argv]) == 1
    assert capsys.readouterr().err == (
        f"linsvm {command}: error: out: No space left on device\n"
    )
    assert not (tmp_path / "out").exists()


FSIZE_CHILD = """
import os, resource, signal, sys
from linsvm.cli import main
command, *files = sys.argv[1:]
# a first run loads (and caches, if new) the compiled code: only the output meets the limit
if main([command, "-q", *files[:-1], "warm"]) != 0:
    sys.exit("the run without a limit failed")
os.remove("warm")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (5000, 5000))
sys.exit(main([command, *files]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE as on Linux")
@pytest.mark.parametrize("command", ["predict", "cache"])
def test_a_file_size_limit_is_named_by_the_output_file(tmp_path, svm_model, command):
    data, model = svm_model
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 200)  # 8000 rows: more than 5000 bytes of either output
    argv = ["big.txt", "svm.model", "out"] if command == "predict" else ["big.txt", "out"]
    run = subprocess.run([sys.executable, "-c", FSIZE_CHILD, command, *argv], cwd=tmp_path,
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr == f"linsvm {command}: error: out: File too large\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "svm.model", "train.txt"]


def test_an_interrupted_run_counts_what_its_progress_lines_count(tmp_path, capsys):
    """Rounds for --dask, outer iterations for --memory, iterations otherwise."""
    import signal
    from types import SimpleNamespace

    from linsvm.cli import TrainOptions, _finish

    model = SimpleNamespace(stop_signal=signal.SIGINT, interrupted=True,
                            results_=[SimpleNamespace(n_iter=3, gap=0.25)])  # fmt: skip
    opts = TrainOptions(model_file=str(tmp_path / "m"))
    for unit in ("round", "outer iteration"):
        assert _finish(model, opts, [], 1.0, unit) == 128 + signal.SIGINT
        err = capsys.readouterr().err
        assert f"interrupted by SIGINT after 3 {unit}(s), duality gap 0.25;" in err
    # sub-problems that share the count (a run in blocks) say it once, others each theirs
    for counts, said in (((6, 6, 6), "after 6 outer"), ((6, 3, 6), "after 6, 3, 6 outer")):
        model.results_ = [SimpleNamespace(n_iter=n, gap=0.25) for n in counts]
        _finish(model, opts, [], 1.0, "outer iteration")
        assert said in capsys.readouterr().err


def test_running_out_of_memory_is_one_line(tmp_path, capsys, monkeypatch):
    """A MemoryError (reading a file larger than memory, as under ulimit -v) was a traceback."""

    def no_memory(*args, **kwargs):
        raise MemoryError("cannot allocate memory for array")

    monkeypatch.setattr(linsvm, "read_libsvm", no_memory)
    assert main(["train", str(A9A), str(tmp_path / "m")]) == 1
    assert capsys.readouterr().err == (
        "linsvm train: error: out of memory; --memory SIZE trains in blocks within SIZE\n")
    assert not (tmp_path / "m").exists()


def test_output_to_a_closed_pipe_ends_quietly(tmp_path):
    """`linsvm predict ... /dev/stdout | head -1`: the reader goes away; LIBLINEAR's programs
    die of SIGPIPE without a word, linsvm's said "error: [Errno 32] Broken pipe"."""
    model = tmp_path / "m"
    assert main(["train", "-q", str(A9A), str(model)]) == 0
    test = tmp_path / "t"  # (predictions well past a pipe's 64 KiB buffer)
    test.write_bytes(A9A_T.read_bytes() * 4)
    process = subprocess.Popen(
        [sys.executable, "-m", "linsvm", "predict", str(test), str(model), "/dev/stdout"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    process.stdout.read(1)
    process.stdout.close()
    _, err = process.communicate(timeout=300)
    assert process.returncode == 141 and err == b""


def test_train_prints_liblinears_lines_as_its_train_does(tmp_path, capsys):
    """For the scripts that parse LIBLINEAR's output: its lines unprefixed, one set a class
    in its order ("[class 3] optimization finished" matched no ^-anchored pattern), -s 4's
    nSV counting the non-zero alpha_i^m, the L1 solvers' "#nonzeros/#features", -s 21's rho
    (linsvm's own lines keep the class prefix)."""
    model_file = tmp_path / "m"
    X, y = linsvm.read_libsvm(A9A)
    three = tmp_path / "three"
    linsvm.write_libsvm(X[:3000], np.where(X[:3000, 0].toarray().ravel() > 0, 3, y[:3000]),
                        three)  # fmt: skip
    assert main(["train", "-s", "1", str(three), str(model_file)]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^optimization finished, #iter = \d+$", out, re.M)) == 3
    assert len(re.findall(r"^Objective value = -?\d+\.\d{6}$", out, re.M)) == 3
    assert len(re.findall(r"^nSV = \d+$", out, re.M)) == 3
    assert len(re.findall(r"^\[class -?\d+\] primal", out, re.M)) == 3
    assert main(["train", "-s", "4", str(three), str(model_file)]) == 0
    nsv = int(re.search(r"^nSV = (\d+)$", capsys.readouterr().out, re.M).group(1))
    model = linsvm.train(X[:3000], np.where(X[:3000, 0].toarray().ravel() > 0, 3, y[:3000]),
                         solver=4)  # fmt: skip
    assert nsv == np.count_nonzero(model.results_[0].alpha) > model.results_[0].n_sv
    assert main(["train", "-s", "5", "-B", "1", str(A9A), str(model_file)]) == 0
    line = re.search(r"^#nonzeros/#features = (\d+)/(\d+)$", capsys.readouterr().out, re.M)
    assert line and int(line.group(2)) == 124 and 0 < int(line.group(1)) <= 124
    assert main(["train", "-s", "21", str(three), str(model_file)]) == 0
    rho = re.search(r"^rho = (-?\d+\.\d{6})$", capsys.readouterr().out, re.M)
    assert rho and abs(float(rho.group(1)) - linsvm.load_model(model_file).rho) < 1e-6


@pytest.mark.parametrize("args, lines, start", [
    (["-s", "3", "--max-iter", "3"], ["WARNING: reaching max number of iterations",
                                      "Using -s 2 may be faster (also see FAQ)"], 3),
    (["-s", "1", "--max-iter", "3"], ["WARNING: reaching max number of iterations",
                                      "Switching to use -s 2"], 3),
    (["-s", "2", "--max-iter", "1"], ["WARNING: reaching max number of Newton iterations"], 0),
    # (these say it as they finish, before their objective value, as LIBLINEAR's routines)
    (["-s", "5", "--max-iter", "1"], ["WARNING: reaching max number of iterations"], 1),
    (["-s", "6", "--max-iter", "1"], ["WARNING: reaching max number of iterations"], 1),
    (["-s", "4", "--max-iter", "1"], ["WARNING: reaching max number of iterations"], 1),
    (["-s", "21", "--max-iter", "1"], ["WARNING: reaching max number of iterations"], 1),
])  # fmt: skip
def test_the_iteration_cap_prints_liblinears_warning_lines(tmp_path, capsys, args, lines,
                                                           start):  # fmt: skip
    """On stdout where LIBLINEAR's train prints them: after the class's lines (linear.cpp's
    train_one), or after "optimization finished" for the solvers whose routine says it; the
    Newton solvers print neither "optimization finished" nor nSV. linsvm's own warning, with
    its advice, stays on stderr; -q silences both."""
    model_file = str(tmp_path / "m")
    assert main(["train", *args, str(A9A), model_file]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[start : start + len(lines)] == lines, out
    if start:
        assert out[0].startswith("optimization finished, #iter = ")
    if start == 1:
        assert out[2].startswith("Objective value = ")
    assert "WARNING: reaching max number of iterations (" in captured.err
    assert main(["train", "-q", *args, str(A9A), model_file]) == 0
    assert capsys.readouterr() == ("", "")


def test_a_handover_prints_the_duals_lines_as_liblinear(tmp_path, capsys):
    """At -s 1's cap LIBLINEAR prints the dual's #iter, objective value and nSV, then switches
    to -s 2: the same here, with the primal solver's iterations on linsvm's own line."""
    X, y = linsvm.read_libsvm(A9A)
    dual = linsvm.train(X, y, solver=1, max_iter=3, fallback=False)
    assert main(["train", "-s", "1", "--max-iter", "3", str(A9A), str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == ["optimization finished, #iter = 3",
                       f"Objective value = {-dual.results_[0].dual:f}",
                       f"nSV = {dual.results_[0].n_sv}",
                       "WARNING: reaching max number of iterations",
                       "Switching to use -s 2"]  # fmt: skip
    newton = int(re.search(r"  #iter of -s 2 = (\d+)$", out[5]).group(1))
    model = linsvm.train(X, y, solver=1, max_iter=3)
    assert newton == model.results_[0].n_iter - 3 > 0
    assert model.results_[0].figures["dual_n_iter"] == 3
    # -s 7 (the logistic dual, every row a support vector): LIBLINEAR prints no nSV
    assert main(["train", "-s", "7", "--max-iter", "3", str(A9A), str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "optimization finished, #iter = 3" and out[1].startswith("Objective value")
    assert out[2:4] == ["WARNING: reaching max number of iterations", "Switching to use -s 0"]


def test_a_weights_file_takes_numbers_as_liblinear_reads_them(tmp_path, capsys):
    """"1_5" read as 15 (Python's digit groups), where LIBLINEAR's atof reads 1."""
    data = write(tmp_path / "d.txt", "1 1:1\n-1 2:1\n")
    weights = write(tmp_path / "w", "1\n1_5\n")
    assert main(["train", "-q", "-W", str(weights), str(data), str(tmp_path / "m")]) == 1
    assert ":2: bad weight '1_5'" in capsys.readouterr().err


def test_quiet_keeps_liblinears_own_stderr_warnings(tmp_path, capsys):
    """LIBLINEAR's train writes these two on stderr whatever -q says; so does linsvm's (they
    are warnings now, which -q silences otherwise)."""
    data = write(tmp_path / "d.txt", "1 1:1\n-1 2:1\n1 1:2\n")
    assert main(["train", "-q", "-w5", "2", str(data), str(tmp_path / "m")]) == 0
    assert capsys.readouterr().err == "WARNING: class label 5 specified in weight is not found\n"
    assert main(["train", "-q", "-v", "10", str(data)]) == 0
    assert capsys.readouterr().err.startswith("WARNING: # folds > # data.")
    assert main(["train", "-q", "-s", "1", "--max-iter", "1", str(data), str(tmp_path / "m")]) == 0
    assert capsys.readouterr().err == ""


def test_cross_validation_prints_each_folds_liblinear_lines(tmp_path, capsys):
    """LIBLINEAR's -v prints every fold's training lines, its cap warnings with them: nothing
    said that the folds stopped at the cap. In fold order whatever the threads; -q none."""
    X, y = linsvm.read_libsvm(A9A)
    data = tmp_path / "d"
    linsvm.write_libsvm(X[:2000], y[:2000], data)
    outs = []
    for threads in ("1", "2"):
        assert main(["train", "-s", "1", "--max-iter", "3", "-v", "3", "-m", threads,
                     str(data)]) == 0  # fmt: skip
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    lines = outs[0].splitlines()
    assert lines[:5] == ["optimization finished, #iter = 3", lines[1], lines[2],
                         "WARNING: reaching max number of iterations", "Switching to use -s 2"]
    assert lines[1].startswith("Objective value = ") and lines[2].startswith("nSV = ")
    assert lines.count("Switching to use -s 2") == 3 and len(lines) == 16
    assert lines[-1].startswith("Cross Validation Accuracy = ")
    assert main(["train", "-q", "-s", "1", "--max-iter", "3", "-v", "3", str(data)]) == 0
    assert capsys.readouterr().out.startswith("Cross Validation Accuracy = ")


@settings(deadline=None, max_examples=80)
@given(
    st.lists(st.floats(0.0, 1e300), min_size=1, max_size=12),
    st.lists(st.sampled_from(["", " ", "\t", "  \t "]), min_size=2, max_size=2),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_weight_files_read_back_what_was_written(tmp_path_factory, weights, pad, newline, blank):
    """-W files: a number a line, blanks around it, blank lines skipped, any line end."""
    from linsvm.cli import read_weight_file

    path = tmp_path_factory.mktemp("w") / "w.txt"
    lines = [f"{pad[0]}{w!r}{pad[1]}" for w in weights]
    if blank:
        lines.insert(len(lines) // 2, "  ")
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    np.testing.assert_array_equal(read_weight_file(str(path), len(weights)), weights)


_ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [-float("nan"), 5e-324, -0.0, 2.0**53 + 2, 1e16, 123456.5, 1e-5])


@settings(deadline=None, max_examples=150)
@given(
    st.lists(st.tuples(_ANY_FLOAT, st.lists(_ANY_FLOAT, min_size=3, max_size=3)), max_size=30),
    st.integers(0, 3),
    st.integers(100, 400),
)
def test_prediction_lines_are_printfs(rows, n_classes, chunk_bytes):
    """predict's lines, written by a compiled kernel a buffer at a time, are LIBLINEAR's
    printf("%.17g\\n") of each prediction, or with -b printf("%g") and " %g" a probability
    (a NaN with its sign bit set is "-nan", as glibc writes it)."""
    from linsvm.cli import prediction_text, printf_g

    predicted = np.array([row[0] for row in rows], dtype=np.float64)
    proba = np.array([row[1][:n_classes] for row in rows], dtype=np.float64).reshape(
        len(rows), n_classes)
    plain = "".join(f"{v:.17g}\n" for v in predicted.tolist())
    assert b"".join(prediction_text(predicted, None, chunk_bytes)) == plain.encode()
    with_proba = "".join(
        f"{v:g}" + "".join(" " + printf_g(p) for p in row) + "\n"
        for v, row in zip(predicted.tolist(), proba.tolist(), strict=True))
    assert b"".join(prediction_text(predicted, proba, chunk_bytes)) == with_proba.encode()


def test_weight_files_read_as_python_reads_their_numbers(tmp_path):
    """Numbers whose exact value the compiled parser leaves to Python (over 19 significant
    digits, underflow), and a file of many lines, read as float() reads each line."""
    from linsvm.cli import read_weight_file

    words = ["0.1000000000000000055511151231257827021181583404541015625", "1e-400",
             "4.9e-324", "-0", "1.7976931348623157e308", "00000000000000000000000000001"]
    path = tmp_path / "w.txt"
    path.write_text("\n".join(words))
    got = read_weight_file(str(path), len(words))
    np.testing.assert_array_equal(got, [float(word) for word in words])
    assert np.signbit(got[3])
    scales = 10.0 ** np.arange(-5, 5).repeat(2000)
    weights = np.random.default_rng(0).exponential(size=scales.size) * scales
    path.write_text("".join(f"{float(value)!r}\n" for value in weights))
    np.testing.assert_array_equal(read_weight_file(str(path), weights.size), weights)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.floats(0.0, 1e6), min_size=1, max_size=8),
    st.sampled_from(["-1", "nan", "inf", "1e999", "abc", "1,5", "0x10", "2 3", "1_0", "1e",
                     "--1", "-inf", "\u00e91", "1\x00"]),
    st.data(),
)
def test_weight_files_name_the_bad_line(tmp_path_factory, weights, bad, data):
    from linsvm import DataFormatError
    from linsvm.cli import read_weight_file

    at = data.draw(st.integers(0, len(weights)))
    lines = [repr(w) for w in weights]
    lines.insert(at, bad)
    path = tmp_path_factory.mktemp("w") / "w.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}:{at + 1}: ") as info:
        read_weight_file(str(path), len(lines))
    assert "\n" not in str(info.value)
