"""Shared fixtures and helpers for the linsvm test-suite.

- ``shared_data_dir`` / ``shared_dataset(name)`` / ``load_shared(name)``: the real LIBSVM data in
  ``../shared/data`` (override with ``LINSVM_SHARED_DATA``); a test needing a file that is absent
  is skipped, never failed. ``.xz`` files are decompressed once per session into a scratch folder
  (the shared folder is read-only).
- ``sparse_problem(...)``: small generated sparse classification problems (binary or multi-class).
- ``liblinear_train(...)``: LIBLINEAR (liblinear-official) with its iteration counts captured, so
  an oracle test can check that its reference actually converged (LIBLINEAR 2.50 caps its dual
  solvers at 300 outer iterations).
- ``subproblems(...)`` / ``liblinear_primal(...)`` / ``linsvm_primal(...)``: the binary one-vs-rest
  sub-problems of LIBLINEAR's multi-class scheme, and the primal value of each weight vector
  scored with ``linsvm.objective.primal_value``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import lzma
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# scikit-learn's check_array_api_input (run for every estimator) needs SciPy's array-API mode,
# which SciPy reads once, on import: set it before anything imports scipy
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Without an NVIDIA GPU, the GPU solver's tests (test_gpu.py) run its kernels under numba-cuda's
# simulator, which Numba chooses on import: set before anything imports numba
if not (glob.glob("/dev/nvidia[0-9]*") or shutil.which("nvidia-smi")):
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import signal

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, settings

# A suite started in the background by a shell without job control inherits SIGINT ignored
# (and Python then leaves it so): the Ctrl-C tests would see nothing. Caught here, it reaches
# the tests, and the programs they start get it at its default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import linsvm
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_value

_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None)


@pytest.fixture(autouse=True)
def _reset_liblinear_rand():
    """Seed the C library's rand() before every test.

    LIBLINEAR draws its coordinate order from rand(), whose state otherwise carries over from
    one test to the next: the oracle's iterations (and which rows sit exactly at its tolerance)
    would then depend on the order the tests run in. Seeded, every oracle run is reproducible.
    """
    _LIBC.srand(1)
    yield


# No deadline: the first example of a test pays Numba's compilation (or cache load), and the
# machine is shared. Tests choose their own max_examples. The default profile is derandomized so
# that the suite (and CI) gives the same verdict on every run; the "explore" profile draws new
# examples each run (LINSVM_HYPOTHESIS_PROFILE=explore) for hunting bugs.
settings.register_profile(
    "linsvm",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "explore",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("LINSVM_HYPOTHESIS_PROFILE", "linsvm"))

LOSS_OF_SOLVER = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE}


# ----------------------------------------------------------------------------- parallel runs

# scripts/test.sh runs the suite on 2 pytest-xdist workers (``-n 2 --dist loadgroup``). The
# modules that start a Dask LocalCluster (2 or 3 worker processes each, some with a 1 s
# worker-ttl) run in one group, on one pytest worker, one after another: never two clusters at
# once on a 2-core machine.
_ONE_CLUSTER_AT_A_TIME = frozenset(
    {
        "test_bench_distributed.py",
        "test_distributed.py",
        "test_distributed_cli.py",
        "test_distributed_faults.py",
        "test_distributed_shards.py",
        "test_soak.py",
    }
)


def pytest_collection_modifyitems(config, items):
    # Every other file's tests stay together too: the Numba cache starts empty on CI, and tests
    # of one file spread over both workers made both compile the same kernels (a quarter of
    # the suite's time went to compiling, a third of it twice).
    for item in items:
        group = "dask" if item.path.name in _ONE_CLUSTER_AT_A_TIME else item.path.name
        item.add_marker(pytest.mark.xdist_group(group))


def _lock_numba_cache_saves() -> None:
    """Under pytest-xdist, both workers compile into the same on-disk Numba cache. Numba
    writes each file atomically (a temporary file, then a rename), but a save reads the index,
    picks the first free data-file number and writes both: two processes saving different
    signatures of one function at the same moment could pick the same number, and the index
    of one would then name the other's code. The save is made whole under a file lock (the
    pytest workers only; a lock file in the function's cache folder)."""
    import fcntl

    try:
        from numba.core import caching
    except ImportError:
        return
    cache_file = getattr(caching, "IndexDataCacheFile", None)
    save = getattr(cache_file, "save", None)
    if save is None or getattr(save, "_linsvm_locked", False):
        return

    def locked_save(self, key, data):
        with open(os.path.join(self._cache_path, "linsvm-save.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    locked_save._linsvm_locked = True
    cache_file.save = locked_save


if os.environ.get("PYTEST_XDIST_WORKER") and sys.platform != "win32":
    _lock_numba_cache_saves()


# ----------------------------------------------------------------------------- shared data


@pytest.fixture()
def fresh_process_overhead(monkeypatch):
    """``train --memory`` called in this process counts what a fresh ``linsvm`` process holds
    (the constant the Python API plans with), not the test process's resident memory, which
    grows through the suite past any small budget. The measurement itself is tested in a
    subprocess (``test_outofcore``)."""
    from linsvm import outofcore

    monkeypatch.setattr(outofcore, "measured_overhead",
                        lambda solver=1: outofcore.FIXED_OVERHEAD_BYTES)  # fmt: skip


def _default_data_dir() -> Path:
    env = os.environ.get("LINSVM_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


SHARED_DATA_DIR = _default_data_dir()


@pytest.fixture()
def gpu_simulator():
    """numba-cuda's simulator with a block barrier that wakes on arrival rather than by polling
    (``_simulator_barrier.py``: 3-4x faster on the GPU solver's kernels), and a short GIL switch
    interval, so that a block's threads interleave finely and races between them show."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":  # (a real GPU: nothing to change)
        import _simulator_barrier

        _simulator_barrier.install()
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    if not SHARED_DATA_DIR.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA_DIR} is absent")
    return SHARED_DATA_DIR


# the repository bundles a few files (a9a, a9a.t) for its quick start: used when the shared
# folder lacks them, so that CI from a clean clone still runs those tests
REPO_DATA_DIR = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="session")
def shared_dataset(tmp_path_factory):
    """``shared_dataset(name) -> Path`` of a shared data file (decompressed if stored as .xz).

    Looks in the shared folder, then in the repository's ``data/``; skips the calling test
    when neither has the file.
    """
    scratch: dict[str, Path] = {}

    def get(name: str) -> Path:
        for folder in (SHARED_DATA_DIR, REPO_DATA_DIR):
            if not folder.is_dir():
                continue
            plain = folder / name
            if plain.is_file():
                return plain
            packed = folder / (name + ".xz")
            if packed.is_file():
                if name not in scratch:
                    out = tmp_path_factory.mktemp("shared-data") / name
                    with lzma.open(packed, "rb") as src, open(out, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    scratch[name] = out
                return scratch[name]
        pytest.skip(f"dataset {name!r} is absent from {SHARED_DATA_DIR} and {REPO_DATA_DIR}")

    return get


@pytest.fixture(scope="session")
def load_shared(shared_dataset):
    """``load_shared(name, n_features=None) -> (X, y)`` read with linsvm (cached per session)."""
    cache: dict[tuple, tuple[sp.csr_matrix, np.ndarray]] = {}

    def get(name: str, n_features: int | None = None):
        key = (name, n_features)
        if key not in cache:
            cache[key] = linsvm.read_libsvm(shared_dataset(name), n_features=n_features)
        X, y = cache[key]
        return X, y

    return get


# ----------------------------------------------------------------------------- generated data


def make_sparse_problem(
    n_rows: int = 300,
    n_features: int = 40,
    n_classes: int = 2,
    density: float = 0.15,
    seed: int = 0,
    noise: float = 0.1,
    labels=None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """A sparse, roughly linearly separable problem with some label noise (CSR float64/int32).

    Labels are ``labels`` (default: -1/+1 for two classes, else 1..n_classes), each class
    given by the argmax of random linear scores.
    """
    rng = np.random.default_rng(seed)
    X = sp.random(
        n_rows,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=lambda k: rng.uniform(-1.0, 1.0, k),
    )
    X.sort_indices()
    W = rng.normal(size=(n_features, n_classes))
    scores = X @ W + noise * rng.normal(size=(n_rows, n_classes))
    if n_classes == 2:
        cls = (scores[:, 0] > scores[:, 1]).astype(np.int64)
    else:
        cls = np.argmax(scores, axis=1)
    if labels is None:
        labels = np.array([-1.0, 1.0]) if n_classes == 2 else np.arange(1.0, n_classes + 1.0)
    labels = np.asarray(labels)
    # make sure every class is present
    for c in range(n_classes):
        if not np.any(cls == c):
            cls[c] = c
    return sp.csr_matrix(X, dtype=np.float64), labels[cls]


@pytest.fixture
def sparse_problem():
    """``sparse_problem(**kwargs)``: see ``make_sparse_problem``."""
    return make_sparse_problem


# ----------------------------------------------------------------------------- LIBLINEAR oracle


def liblinear_train(y, X, options: str, bias: float = -1.0):
    """Train liblinear-official; return (model, [outer iterations per sub-problem]).

    LIBLINEAR's progress lines go to the C stdout; they are captured at the file-descriptor
    level (``-q`` must not be in ``options``) so that the caller can see whether a dual solver
    hit LIBLINEAR's 300-iteration cap.
    """
    ll = pytest.importorskip("liblinear.liblinearutil")
    X = sp.csr_matrix(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    prob = ll.problem(y, X)
    # liblinearutil.train sets the problem's bias from the parameter's -B
    param = ll.parameter(f"{options} -B {bias:.17g}")
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            model = ll.train(prob, param)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        out = tmp.read().decode(errors="replace")
    iterations = [int(v) for v in re.findall(r"#iter\s*=\s*(\d+)", out)]
    return model, iterations


def liblinear_weights(model) -> np.ndarray:
    """LIBLINEAR's w as an array (n_w, w_size): one row per weight vector, bias weight last."""
    nr_class = model.get_nr_class()
    nr_w = 1 if nr_class == 2 and model.param.solver_type != 4 else nr_class
    w_size = model.nr_feature + (1 if model.bias >= 0 else 0)
    flat = np.array([model.w[i] for i in range(w_size * nr_w)], dtype=np.float64)
    return flat.reshape(w_size, nr_w).T.copy()


def liblinear_predict(model, X, native: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(labels, decision values (n, nr_w)) of a LIBLINEAR classification model.

    ``native``: through LIBLINEAR's own ``predict`` (a Python loop over rows in its binding:
    about 1 s per 50k rows) or from its weights with LIBLINEAR's rule (binary: dec > 0 gives
    label[0]; else the first label of largest dec). Default: native up to 5000 rows.
    """
    ll = pytest.importorskip("liblinear.liblinearutil")
    X = sp.csr_matrix(X, dtype=np.float64)
    if native is None:
        native = X.shape[0] <= 5000
    if native:
        labels, _, values = ll.predict(np.zeros(X.shape[0]), X, model, "-q")
        return np.asarray(labels), np.asarray(values, dtype=np.float64)
    W = liblinear_weights(model)
    n = min(model.nr_feature, X.shape[1])
    dec = np.asarray(X[:, :n] @ W[:, :n].T)
    if model.bias >= 0:
        dec = dec + model.bias * W[:, -1]
    labels = np.asarray(model.get_labels(), dtype=np.float64)
    if dec.shape[1] == 1:
        return np.where(dec[:, 0] > 0, labels[0], labels[1]), dec
    return labels[np.argmax(dec, axis=1)], dec


def subproblems(y, labels, C: float, class_weight: Mapping | None = None, sample_weight=None):
    """LIBLINEAR's one-vs-rest sub-problems: a list of (y_pm1, C_rows) in weight-vector order.

    Two classes: one sub-problem, labels[0] positive with C*weight[labels[0]], the other
    class C*weight[labels[1]]. More: sub-problem k has labels[k] positive with C*weight[labels[k]]
    and every other row plain C. Sample weights multiply each row's C.
    """
    y = np.asarray(y)
    labels = list(np.asarray(labels).tolist())
    cw = {}
    for lab, wt in (class_weight or {}).items():
        cw[lab] = float(wt)
    weighted = np.array([C * cw.get(lab, 1.0) for lab in labels])
    out = []
    targets = [0] if len(labels) == 2 else range(len(labels))
    for k in targets:
        pos = y == labels[k]
        y_pm1 = np.where(pos, 1.0, -1.0)
        if len(labels) == 2:
            c_rows = np.where(pos, weighted[0], weighted[1])
        else:
            c_rows = np.where(pos, weighted[k], float(C))
        if sample_weight is not None:
            c_rows = c_rows * np.asarray(sample_weight, dtype=np.float64)
        out.append((y_pm1, c_rows))
    return out


def primal_of(X, bias: float, y_pm1, c_rows, w, loss: int) -> float:
    """P(w) of one binary sub-problem, w including the bias weight when bias >= 0."""
    X = linsvm.data.as_csr(X)
    return float(
        primal_value(
            X.indptr,
            X.indices,
            X.data,
            float(bias),
            np.asarray(y_pm1, dtype=np.float64),
            np.asarray(c_rows, dtype=np.float64),
            np.ascontiguousarray(w, dtype=np.float64),
            loss,
        )
    )


def liblinear_primal(
    model, X, y, C: float, loss: int, class_weight: Mapping | None = None, sample_weight=None
) -> list[float]:
    """Primal value of each of LIBLINEAR's weight vectors on its own sub-problem."""
    labels = model.get_labels()
    W = liblinear_weights(model)
    n = X.shape[1]
    values = []
    for k, (y_pm1, c_rows) in enumerate(subproblems(y, labels, C, class_weight, sample_weight)):
        w = W[k]
        # LIBLINEAR's nr_feature is its problem's n: the training matrix's width
        w_full = np.zeros(n + (1 if model.bias >= 0 else 0))
        m = min(model.nr_feature, n)
        w_full[:m] = w[:m]
        if model.bias >= 0:
            w_full[-1] = w[-1]
        values.append(primal_of(X, model.bias, y_pm1, c_rows, w_full, loss))
    return values


def linsvm_weights(model) -> np.ndarray:
    """linsvm's weight vectors as (n_w, n [+1]) with the bias weight last when bias >= 0."""
    if model.bias >= 0:
        return np.hstack([model.coef_, model.bias_weights_[:, None]])
    return model.coef_.copy()


def linsvm_primal(
    model, X, y, C: float, loss: int, class_weight: Mapping | None = None, sample_weight=None
) -> list[float]:
    """Primal value of each of linsvm's weight vectors, recomputed from coef_ and bias."""
    W = linsvm_weights(model)
    return [
        primal_of(X, model.bias, y_pm1, c_rows, W[k], loss)
        for k, (y_pm1, c_rows) in enumerate(
            subproblems(y, model.labels_, C, class_weight, sample_weight)
        )
    ]


def rel_diff(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def sklearn_l1_logistic() -> dict:
    """The parameters of scikit-learn's own LogisticRegression for the L1 penalty (-s 6):
    ``l1_ratio=1`` from 1.8 (which deprecates ``penalty``), ``penalty="l1"`` before (1.7
    ignores ``l1_ratio`` unless the penalty is elastic-net)."""
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    return {"l1_ratio": 1.0} if (major, minor) >= (1, 8) else {"penalty": "l1"}
