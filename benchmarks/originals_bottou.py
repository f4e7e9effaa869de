"""Run Bottou's sgd 2.0 programs (svmsgd, svmasgd, SGD-QN) and read what they print.

Build them first (they are never committed)::

    scripts/oracles/bottou_sgd.sh SRC      # SRC: the sgd-2.0 tree, its tarball or a git dir

which puts svmsgd, svmasgd (hinge loss, sgd's unregularised bias), svmsgd-nobias,
svmasgd-nobias (no bias) and svmsgdqn (hinge, no bias) into
``${LINSVM_ORACLES:-<repo>/.oracles}/bottou_sgd/``. ``program(name)`` finds one (None if absent).

The programs minimise J(w) = lambda/2 w'w + 1/l sum_i hinge(y_i (w'x_i [+ b])), i.e. linsvm's
P = J / lambda with lambda = 1/(C l) (-s 37/38/39 at cost C on l rows). They read svmlight text
files, which must end in a newline and hold labels +1/-1 (``write_svmlight``); svmsgd/svmasgd
want the suffix ".txt", svmsgdqn ".dat.gz" (a plain text file under that name is read as is).
They normalise every row to unit norm unless ``-dontnormalize``: ``normalize=False`` (the
default here) passes it, to match linsvm, which takes the rows as given (svmsgdqn never
normalises). They visit the file in its order: give them a shuffled file, and linsvm
``shuffle=False`` for a like-for-like comparison.

Each ``run_*`` returns a dict: ``seconds`` (the program's own training time over all epochs:
svmsgd/svmasgd include the eta0 calibration, svmsgdqn excludes its t0 search), ``epoch_seconds``
(its per-epoch times), ``wall_seconds`` (the whole process: loading the file, calibration,
the per-epoch evaluation passes), ``epochs``, ``primal`` (P after the last epoch),
``primals`` (P after each epoch), ``eta0`` / ``t0`` and ``skip`` (what the program chose), and
``output`` (what it printed). P is read from the printed train cost: svmsgd's ``Cost``
(12 digits); svmasgd 2.0 prints the averaged model's loss but the SGD iterate's norm in its
``Cost``, so P is taken as (Loss + lambda/2 aNorm) / lambda with aNorm (6 digits) from its
``aNorm=`` line; svmsgdqn's ``Cost:``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]


def oracle_dir() -> Path:
    """Where scripts/oracles/bottou_sgd.sh puts the programs."""
    return Path(os.environ.get("LINSVM_ORACLES", REPO / ".oracles")) / "bottou_sgd"


def program(name: str) -> Path | None:
    """The built program ``name`` (svmsgd, svmsgd-nobias, svmasgd, svmasgd-nobias, svmsgdqn),
    or None when it has not been built."""
    path = oracle_dir() / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def write_svmlight(X, y, path: str | os.PathLike) -> Path:
    """Write rows X (CSR (l, n)) with labels y (l,) of +1/-1 as svmlight text, features from 1,
    each line ending in a newline (the originals' reader drops a last line without one)."""
    X = sp.csr_matrix(X)
    X.sort_indices()
    y = np.asarray(y)
    path = Path(path)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            pairs = " ".join(
                f"{j + 1}:{v:.17g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi], strict=True)
            )
            f.write(f"{'+1' if y[i] > 0 else '-1'} {pairs}\n")
    return path


def lambda_of(C: float, n_rows: int) -> float:
    """sgd's lambda for linsvm's cost C on n_rows rows."""
    return 1.0 / (C * n_rows)


def _named(train_file, suffix: str, workdir: Path) -> Path:
    """The file under a name ending in ``suffix`` (a symbolic link when it has another)."""
    train_file = Path(train_file).resolve()
    if str(train_file).endswith(suffix):
        return train_file
    tag = hashlib.sha1(str(train_file).encode()).hexdigest()[:12]  # one link per file
    link = workdir / f"{train_file.name}.{tag}{suffix}"
    if link.is_symlink() and Path(os.readlink(link)) != train_file:
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(train_file)
    return link


def _run(args: list[str], timeout: float | None) -> tuple[str, float]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout, wall


def _epoch_seconds(out: str) -> list[float]:
    totals = [float(v) for v in re.findall(r"Total training time ([0-9.eE+-]+) secs", out)]
    return [b - a for a, b in zip([0.0, *totals[:-1]], totals, strict=True)]


def _workdir(train_file) -> Path:
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / "linsvm-bottou"
    workdir.mkdir(exist_ok=True)
    return workdir


def run_svmsgd(
    train_file: str | os.PathLike,
    lam: float,
    epochs: int = 5,
    *,
    bias: bool = True,
    normalize: bool = False,
    averaged: bool = False,
    avgstart: int | None = None,
    timeout: float | None = None,
) -> dict:
    """Run svmsgd (``averaged``: svmasgd) on an svmlight file: ``-lambda lam -epochs epochs``,
    ``-dontnormalize`` unless ``normalize``; ``bias`` False runs the -nobias build;
    ``avgstart`` (svmasgd) its ``-avgstart``. Returns the dict of the module docstring."""
    name = ("svmasgd" if averaged else "svmsgd") + ("" if bias else "-nobias")
    exe = program(name)
    if exe is None:
        raise FileNotFoundError(f"{name} is not built (scripts/oracles/bottou_sgd.sh)")
    path = _named(train_file, ".txt", _workdir(train_file))
    args = [str(exe), "-lambda", repr(float(lam)), "-epochs", str(int(epochs))]
    if not normalize:
        args.append("-dontnormalize")
    if averaged and avgstart is not None:
        args += ["-avgstart", str(int(avgstart))]
    out, wall = _run([*args, str(path)], timeout)
    losses = [float(v) for v in re.findall(r"train: Loss=([0-9.eE+-]+)", out)]
    if averaged:
        a_norms = [float(v) for v in re.findall(r"aNorm=([0-9.eE+-]+)", out)]
        costs = [loss + 0.5 * lam * a for loss, a in zip(losses, a_norms, strict=True)]
    else:
        costs = [float(v) for v in re.findall(r"train: Loss=\S+ Cost=([0-9.eE+-]+)", out)]
    eta0 = re.search(r"Using eta0=([0-9.eE+-]+)", out)
    per_epoch = _epoch_seconds(out)
    return {
        "seconds": sum(per_epoch),
        "epoch_seconds": per_epoch,
        "wall_seconds": wall,
        "epochs": len(costs),
        "primal": costs[-1] / lam if costs else float("nan"),
        "primals": [c / lam for c in costs],
        "eta0": float(eta0.group(1)) if eta0 else float("nan"),
        "output": out,
    }


def run_svmasgd(train_file, lam: float, epochs: int = 5, **options) -> dict:
    """svmasgd: ``run_svmsgd(..., averaged=True)``."""
    return run_svmsgd(train_file, lam, epochs, averaged=True, **options)


def run_svmsgdqn(
    train_file: str | os.PathLike,
    lam: float,
    epochs: int = 5,
    *,
    t0: float | None = None,
    timeout: float | None = None,
) -> dict:
    """Run sgd 2.0's old/svmsgdqn (hinge, no bias, no normalisation) on an svmlight file:
    ``-lambda lam -epochs epochs`` [``-t0 t0``; else it searches t0 on a tenth of the rows].
    Returns the dict of the module docstring (with ``t0`` and ``skip``)."""
    exe = program("svmsgdqn")
    if exe is None:
        raise FileNotFoundError("svmsgdqn is not built (scripts/oracles/bottou_sgd.sh)")
    path = _named(train_file, ".dat.gz", _workdir(train_file))
    args = [str(exe), "-lambda", repr(float(lam)), "-epochs", str(int(epochs))]
    if t0 is not None:
        args += ["-t0", repr(float(t0))]
    out, wall = _run([*args, str(path)], timeout)
    costs = [float(v) for v in re.findall(r"train: Cost: ([0-9.eE+-]+)\.", out)]
    number = r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"  # (t0's line ends in a full stop)
    chosen = re.search(r"(?:Final choice: t0=|Using t0=)" + number, out)
    skip = re.search(r"skip: (\d+)", out)
    per_epoch = _epoch_seconds(out)
    return {
        "seconds": sum(per_epoch),
        "epoch_seconds": per_epoch,
        "wall_seconds": wall,
        "epochs": len(costs),
        "primal": costs[-1] / lam if costs else float("nan"),
        "primals": [c / lam for c in costs],
        "t0": float(chosen.group(1)) if chosen else float("nan"),
        "skip": int(skip.group(1)) if skip else -1,
        "output": out,
    }


__all__ = [
    "lambda_of",
    "oracle_dir",
    "program",
    "run_svmasgd",
    "run_svmsgd",
    "run_svmsgdqn",
    "write_svmlight",
]
