"""Run the original cutting-plane programs and read their results back: libocas's ``svmocas``
(OCAS, ``-m 1``, and the plain cutting plane, ``-m 0``) and Joachims' ``svm_perf_learn``.

Both solve LIBLINEAR's -s 3 problem P(w) = 1/2 w'w + C sum_i max(0, 1 - y_i w'x_i)
(``linsvm.solvers.cutting_plane`` has the derivation):

- svmocas: its ``-c`` is LIBLINEAR's C; ``-b 0`` no bias, ``-b B`` a bias feature of value B,
  regularised (LIBLINEAR's -B B); ``-r`` TolRel, ``-a`` TolAbs (stop when
  Q_P - Q_D <= TolRel |Q_P| or <= TolAbs). Its model file holds w, one number a line, then the
  bias feature's weight (measured: P of that w with bias B equals its Q_P).
- svm_perf: ``-c C l / 100 -l 2 -w 3`` (error-rate loss under margin rescaling, the 1-slack
  dual algorithm) is the same problem, its ``-e`` in percent of the average hinge loss;
  ``--b 0`` no bias, ``--b B`` a bias feature of value B (the model's feature n + 1). Its model
  file (SVM-light's format) holds w as one support vector with coefficient 1.

Installing them: ``scripts/oracles/libocas.sh`` (Debian's libocas-tools) and
``scripts/oracles/svm_perf.sh SRC`` (a local build, never redistributed). The programs are
found on PATH or at ``$LINSVM_SVMOCAS``, and at ``$LINSVM_SVM_PERF`` or
``${LINSVM_ORACLES:-<repo>/.oracles}/svm_perf/svm_perf_learn``.

Each ``run_*`` returns an ``OriginalRun``: the program's own solver time and wall time, its
iterations, w (bias weight last when a bias is used), our P(w) on the same file, and its
per-iteration trace.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import linsvm
from linsvm.objective import LOSS_HINGE, primal_value

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class OriginalRun:
    """One run of an original program.

    seconds: the solver's own time as it prints it (svmocas's ``ocas_time``, svm_perf's
    "Runtime in cpu-seconds"; loading the file excluded); wall_seconds: the whole process.
    iterations: svmocas's nIter (QP solves), svm_perf's "Number of iterations". w: (n [+1],)
    with n the file's features. primal: P(w) computed by linsvm. trace: per iteration,
    svmocas (iteration, seconds, Q_P, Q_D), svm_perf (iteration, CEps). output: its stdout.
    """

    program: str
    seconds: float
    wall_seconds: float
    iterations: int
    w: np.ndarray
    primal: float
    trace: list[tuple] = field(default_factory=list)
    output: str = ""


def find_svmocas() -> str | None:
    """The svmocas program, or None when it is not installed."""
    env = os.environ.get("LINSVM_SVMOCAS")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("svmocas")


def find_svm_perf() -> str | None:
    """The svm_perf_learn program, or None when it has not been built."""
    env = os.environ.get("LINSVM_SVM_PERF")
    if env:
        return env if os.access(env, os.X_OK) else None
    root = Path(os.environ.get("LINSVM_ORACLES", REPO_ROOT / ".oracles"))
    path = root / "svm_perf" / "svm_perf_learn"
    return str(path) if os.access(path, os.X_OK) else None


def _problem(train_file: str | os.PathLike) -> tuple:
    X, y = linsvm.read_libsvm(train_file)
    return X, np.where(y > 0, 1.0, -1.0)


def primal_of(train_file: str | os.PathLike, C: float, w: np.ndarray, bias: float = -1.0,
              problem: tuple | None = None) -> float:  # fmt: skip
    """P(w) on the file's rows (labels > 0 positive), w with the bias weight last when
    ``bias >= 0``. ``problem``: (X, y) already read, to skip reading the file."""
    X, y = problem if problem is not None else _problem(train_file)
    n_w = X.shape[1] + (1 if bias >= 0 else 0)
    w = np.ascontiguousarray(w[:n_w], dtype=np.float64)
    c_rows = np.full(X.shape[0], float(C))
    return float(primal_value(X.indptr, X.indices, X.data, float(bias), y, c_rows, w, LOSS_HINGE))


def pad_empty_rows(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy a LIBSVM file, giving each row without features an explicit ``1:0`` (the same
    problem): svmocas stops with "Parsing error" at a row holding a label only (pypi-recent
    has some)."""
    with open(src) as fin, open(dst, "w") as fout:
        for line in fin:
            fields = line.split()
            fout.write(line if len(fields) != 1 else f"{fields[0]} 1:0\n")
    return Path(dst)


def _run(command: list[str], timeout: float | None) -> tuple[str, float]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{command[0]} failed ({done.returncode}): "
            f"{(done.stderr or done.stdout)[-300:].strip()}"
        )
    return done.stdout, wall


_OCAS_LINE = re.compile(
    r"^\s*(\d+): tim=([0-9.eE+-]+), Q_P=([0-9.eE+-]+), Q_D=([0-9.eE+-]+)", re.MULTILINE
)


def run_svmocas(train_file: str | os.PathLike, C: float, method: int = 1, tol_rel: float = 0.01,
                tol_abs: float = 0.0, bias: float = -1.0, timeout: float | None = None,
                problem: tuple | None = None) -> OriginalRun:  # fmt: skip
    """svmocas on a LIBSVM file: ``method`` 1 OCAS, 0 the plain cutting plane (SVMperf/BMRM);
    stop at Q_P - Q_D <= tol_rel |Q_P| or <= tol_abs; ``bias`` as LIBLINEAR's -B (< 0: none).
    ``problem``: (X, y) of the file already read (for the primal)."""
    program = find_svmocas()
    if program is None:
        raise FileNotFoundError("svmocas is not installed (scripts/oracles/libocas.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        command = [program, "-c", repr(float(C)), "-b", repr(max(float(bias), 0.0)),
                   "-m", str(int(method)), "-r", repr(float(tol_rel)), "-a", repr(float(tol_abs)),
                   "-v", "1", str(train_file), str(model)]  # fmt: skip
        out, wall = _run(command, timeout)
        values = np.loadtxt(model, ndmin=1)
    trace = [(int(k), float(t), float(qp), float(qd)) for k, t, qp, qd in _OCAS_LINE.findall(out)]
    iterations = trace[-1][0] if trace else 0
    found = re.search(r"ocas_time\s*:\s*([0-9.eE+-]+)", out)
    seconds = float(found.group(1)) if found else wall
    # the last line is the weight of the bias feature (of value B), 0 without one
    w = values if bias >= 0 else values[:-1]
    primal = primal_of(train_file, C, _fit(w, train_file, bias, problem), bias, problem)
    return OriginalRun("svmocas", seconds, wall, iterations, w, primal, trace, out)


def _fit(w: np.ndarray, train_file, bias: float, problem: tuple | None) -> np.ndarray:
    """w padded (or cut) to the file's features, the bias weight kept last."""
    X, _ = problem if problem is not None else _problem(train_file)
    n = X.shape[1]
    body = w[:-1] if bias >= 0 else w
    full = np.zeros(n)
    full[: min(n, body.shape[0])] = body[:n]
    return np.append(full, w[-1]) if bias >= 0 else full


def run_svm_perf(train_file: str | os.PathLike, C: float, eps: float = 0.1, bias: float = -1.0,
                 algorithm: int = 3, timeout: float | None = None,
                 problem: tuple | None = None) -> OriginalRun:  # fmt: skip
    """svm_perf_learn on a LIBSVM file with LIBLINEAR's C (``-c C l / 100 -l 2 -w algorithm``,
    default the 1-slack dual, -w 3), ``-e eps`` (its percent of the average hinge loss),
    ``bias`` as LIBLINEAR's -B (< 0: ``--b 0``)."""
    program = find_svm_perf()
    if program is None:
        raise FileNotFoundError("svm_perf_learn is not built (scripts/oracles/svm_perf.sh SRC)")
    X, y = problem if problem is not None else _problem(train_file)
    n_rows, n = X.shape
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        command = [program, "-c", repr(float(C) * n_rows / 100.0), "-l", "2",
                   "-w", str(int(algorithm)), "--b", repr(max(float(bias), 0.0)),
                   "-e", repr(float(eps)), str(train_file), str(model)]  # fmt: skip
        out, wall = _run(command, timeout)
        text = model.read_text()
    w_all = np.zeros(n + 2)
    lines = text.splitlines()
    # the header's last line says where the support vectors start
    start = next(k for k, line in enumerate(lines) if "threshold b" in line) + 1
    for line in lines[start:]:
        parts = line.split("#")[0].split()
        if not parts:
            continue
        coef = float(parts[0])
        for token in parts[1:]:
            index, value = token.split(":")
            index = int(index)
            if index <= n + 1:
                w_all[index - 1] += coef * float(value)
    w = w_all[: n + 1] if bias >= 0 else w_all[:n]
    iterations = int(re.search(r"Number of iterations:\s*(\d+)", out).group(1))
    found = re.search(r"Runtime in cpu-seconds:\s*([0-9.eE+-]+)", out)
    seconds = float(found.group(1)) if found else wall
    trace = [(k + 1, float(v)) for k, v in enumerate(re.findall(r"CEps=([0-9.eE+-]+)", out))]
    primal = primal_of(train_file, C, w, bias, (X, y))
    return OriginalRun("svm_perf", seconds, wall, iterations, w, primal, trace, out)


__all__ = [
    "OriginalRun",
    "find_svmocas",
    "find_svm_perf",
    "pad_empty_rows",
    "primal_of",
    "run_svmocas",
    "run_svm_perf",
]
