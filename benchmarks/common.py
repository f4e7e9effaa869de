"""What the benchmark scripts share: data locations and loading, machine facts, markdown output.

Data: the real LIBSVM files in ``/work/shared/data`` (``../shared/data`` beside the repository;
override with ``LINSVM_SHARED_DATA``) and generated text-like data
(``linsvm.datasets.make_text_classification``). Compressed files are decompressed once into a
scratch folder (``/tmp/linsvm-bench-data``; override with ``LINSVM_BENCH_SCRATCH``), where the
generated data is also cached as ``.npz``.
"""

from __future__ import annotations

import datetime
import lzma
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(__file__).resolve().parent


def shared_data_dir() -> Path:
    """The read-only folder of real datasets."""
    env = os.environ.get("LINSVM_SHARED_DATA")
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "data"


def scratch_dir() -> Path:
    """The writable scratch folder (decompressed files, generated data, cached P*); created."""
    path = Path(os.environ.get("LINSVM_BENCH_SCRATCH", "/tmp/linsvm-bench-data"))
    path.mkdir(parents=True, exist_ok=True)
    return path


# Real binary datasets: name -> (training file, test file or None), as in data/PROVENANCE.md.
REAL_DATASETS: dict[str, tuple[str, str | None]] = {
    "a9a": ("a9a", "a9a.t"),
    "w8a": ("w8a", "w8a.t"),
    "ijcnn1": ("ijcnn1", "ijcnn1.t"),
    "reuters": ("reuters.trn", "reuters.tst"),
    "pypi-recent": ("pypi-recent", "pypi-recent.t"),
}
SYNTHETIC = "synthetic-text"
DEFAULT_DATASETS = ("a9a", "w8a", "ijcnn1", "reuters", "pypi-recent", SYNTHETIC)
DEFAULT_SYNTHETIC_ROWS = 4_000_000


def find_data_file(name: str) -> Path | None:
    """A plain (uncompressed) copy of a shared data file, decompressing ``name.xz`` once.

    Returns None when neither ``name`` nor ``name.xz`` exists in the shared folder.
    """
    shared = shared_data_dir()
    plain = shared / name
    if plain.is_file():
        return plain
    packed = shared / (name + ".xz")
    if not packed.is_file():
        return None
    target = scratch_dir() / name
    if target.is_file() and target.stat().st_mtime >= packed.stat().st_mtime:
        return target
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with lzma.open(packed, "rb") as src, open(tmp, "wb") as dst:
        while chunk := src.read(1 << 24):
            dst.write(chunk)
    os.replace(tmp, target)
    return target


@dataclass
class Dataset:
    """A binary problem with labels mapped to -1/+1 (float64); the test split may be absent."""

    name: str
    X: sp.csr_matrix
    y: np.ndarray
    X_test: sp.csr_matrix | None = None
    y_test: np.ndarray | None = None
    note: str = ""

    @property
    def csr_bytes(self) -> int:
        return self.X.data.nbytes + self.X.indices.nbytes + self.X.indptr.nbytes

    def describe(self) -> str:
        rows, cols = self.X.shape
        return f"{self.name}: {rows} x {cols}, nnz {self.X.nnz}"


def to_pm1(y: np.ndarray, positive) -> np.ndarray:
    """Labels as float64 +1 (== positive) / -1."""
    return np.where(y == positive, 1.0, -1.0)


def match_columns(X: sp.csr_matrix, n_features: int) -> sp.csr_matrix:
    """X with exactly ``n_features`` columns: extra columns dropped, missing ones empty."""
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        return X[:, :n_features].tocsr()
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def load_real(name: str, dtype=np.float64) -> Dataset | None:
    """A real dataset from the shared folder (None if its training file is missing)."""
    import linsvm

    train_file, test_file = REAL_DATASETS[name]
    train_path = find_data_file(train_file)
    if train_path is None:
        return None
    X, y = linsvm.read_libsvm(train_path, dtype=dtype)
    labels = np.unique(y)
    if labels.shape[0] != 2:
        raise ValueError(f"{name}: expected two classes, got {labels}")
    positive = labels[1]
    ds = Dataset(name, X, to_pm1(y, positive))
    test_path = find_data_file(test_file) if test_file else None
    if test_path is not None:
        Xt, yt = linsvm.read_libsvm(test_path, dtype=dtype)
        ds.X_test = match_columns(Xt, X.shape[1])
        ds.y_test = to_pm1(yt, positive)
    else:
        ds.note = "no test split"
    return ds


def synthetic_test_rows(n_rows: int) -> int:
    """Rows held out as the synthetic data's test split."""
    return max(1, min(200_000, n_rows // 5))


def load_synthetic(n_rows: int = DEFAULT_SYNTHETIC_ROWS, dtype=np.float64,
                   random_state: int = 0) -> Dataset:
    """Text-like data from make_text_classification (cached as .npz in the scratch folder).

    ``n_rows`` training rows plus ``synthetic_test_rows(n_rows)`` test rows drawn in the same
    call (same planted model), the test rows last.
    """
    from linsvm.datasets import make_text_classification

    n_test = synthetic_test_rows(n_rows)
    cache = scratch_dir() / (f"synthetic-text-{n_rows}+{n_test}-seed{random_state}-"
                             f"{np.dtype(dtype).name}.npz")
    if cache.is_file():
        with np.load(cache) as z:
            X_all = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
            y_all = z["y"]
    else:
        X_all, y_all = make_text_classification(n_rows + n_test, dtype=dtype,
                                                random_state=random_state)
        tmp = cache.with_name(f".{cache.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, data=X_all.data, indices=X_all.indices, indptr=X_all.indptr,
                 shape=np.array(X_all.shape), y=y_all)
        os.replace(tmp, cache)
    # Views on the generated arrays, not copies: the training rows, then the test rows.
    split = int(X_all.indptr[n_rows])
    n_cols = X_all.shape[1]
    X = sp.csr_matrix((X_all.data[:split], X_all.indices[:split], X_all.indptr[:n_rows + 1]),
                      shape=(n_rows, n_cols), copy=False)
    X_test = sp.csr_matrix((X_all.data[split:], X_all.indices[split:],
                            X_all.indptr[n_rows:] - X_all.indptr[n_rows]),
                           shape=(n_test, n_cols), copy=False)
    del X_all
    return Dataset(SYNTHETIC, X, y_all[:n_rows].copy(), X_test, y_all[n_rows:].copy(),
                   note=f"make_text_classification({n_rows + n_test}, random_state={random_state}),"
                        f" last {n_test} rows as test split")


def load_dataset(name: str, synthetic_rows: int = DEFAULT_SYNTHETIC_ROWS,
                 dtype=np.float64) -> Dataset | None:
    """Any benchmark dataset by name; None when its files are missing."""
    if name == SYNTHETIC:
        return load_synthetic(synthetic_rows, dtype=dtype)
    if name not in REAL_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DEFAULT_DATASETS)}")
    return load_real(name, dtype=dtype)


# ---- machine and versions -------------------------------------------------------------------

def _lscpu_field(field: str) -> str | None:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(rf"^{re.escape(field)}:\s*(.+)$", out, flags=re.MULTILINE)
    return m.group(1).strip() if m else None


def machine_description() -> str:
    """CPU model, logical cores and memory, one line."""
    model = _lscpu_field("Model name") or platform.processor() or "unknown CPU"
    cores = os.cpu_count()
    mem = "unknown memory"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 2**20:.1f} GiB RAM"
                    break
    except OSError:
        pass
    return f"{model}, {cores} logical cores, {mem}, {platform.system()} {platform.release()}"


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions_line(packages: Sequence[str] = ("numpy", "scipy", "numba", "liblinear-official",
                                             "snapml", "scikit-learn", "linsvm")) -> str:
    parts = [f"python {platform.python_version()}"]
    parts += [f"{p} {package_version(p)}" for p in packages]
    return ", ".join(parts)


def git_description() -> str:
    """The repository's HEAD commit, and whether src/ has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "log", "-1", "--format=%h %ci"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain",
                                "--untracked-files=no", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" + uncommitted changes in src/" if dirty else "")


def report_header(title: str, script: str, extra: Sequence[str] = ()) -> list[str]:
    """The markdown lines every report starts with: command, date, machine, versions.

    ``script`` is the module name under ``benchmarks`` (e.g. "harness").
    """
    args = " ".join(shlex.quote(a) for a in sys.argv[1:])
    command = f"python -m benchmarks.{script} {args}".strip()
    load = ""
    try:
        load = " (load average at start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")"
    except OSError:
        pass
    lines = [
        f"# {title}",
        "",
        f"- command: `{command}` (from the repository root)",
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- machine: {machine_description()}{load}",
        f"- versions: {versions_line()}",
        f"- linsvm code: commit {git_description()}",
    ]
    lines += [f"- {e}" for e in extra]
    lines.append("")
    return lines


# ---- timing and formatting ------------------------------------------------------------------

def time_call(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call, by time.perf_counter."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]],
                   align: Sequence[str] | None = None) -> list[str]:
    """A GitHub markdown table; ``align`` holds 'l' or 'r' per column (default: l then r)."""
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" for a in align]
    out = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def fmt_seconds(t: float | None) -> str:
    if t is None or not np.isfinite(t):
        return "n/a"
    if t >= 100:
        return f"{t:.0f}"
    if t >= 10:
        return f"{t:.1f}"
    if t >= 0.1:
        return f"{t:.2f}"
    return f"{t:.3f}"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or not (np.isfinite(a) and np.isfinite(b)) or b <= 0:
        return "n/a"
    return f"{a / b:.2f}"


def fmt_sci(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    if x <= 0:
        return "0"
    return f"{x:.1e}"


def write_report(lines: Sequence[str], out: str | os.PathLike) -> None:
    """Print the markdown and write it to ``out``."""
    text = "\n".join(lines).rstrip() + "\n"
    print(text)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"[written to {out}]", file=sys.stderr)
