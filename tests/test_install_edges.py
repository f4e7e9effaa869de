"""A new user's first steps on other installs than the dev one.

- the extras: without dask.distributed, ``train --dask`` is one line naming
  ``linsvm[distributed]`` (as ``--gpu`` names ``linsvm[cuda]``) and ``linsvm.distributed`` one
  ``MissingExtraError``; without scikit-learn, ``from linsvm import LinearSVC`` is one
  ``MissingExtraError`` naming ``linsvm[sklearn]`` and ``from linsvm import *`` still works;
  pyproject.toml declares both extras with lower bounds;
- a read-only install used by an account with no writable home: Numba's cache falls back to a
  private temporary folder (``linsvm._numba_cache``), checked as another user where the tests
  can switch users, and in its logic without one;
- ``python -m linsvm`` is the ``linsvm`` command, with its exit status;
- the training summary reports what each solver's numbers mean: no support vector count for
  logistic regression, the duality gap (and relative to the primal) only where the dual
  variables are the solver's own.

An absent package is simulated (``sys.modules[name] = None`` makes its import fail), never
uninstalled.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pytest

import linsvm
from linsvm.cli import main
from linsvm.errors import LinsvmError, MissingExtraError

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(linsvm.__file__).resolve().parent


@pytest.fixture()
def train_file(tmp_path) -> Path:
    """60 rows of two separable-ish classes, 5 features."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(60):
        label = int(rng.choice([-1, 1]))
        values = rng.normal(size=5) + 0.8 * label * np.array([1, 0.5, 0, 0, 0])
        lines.append(f"{label} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(values)))
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _without(monkeypatch, *modules: str) -> None:
    """Make ``import`` of these modules fail as if they were not installed, and forget
    linsvm's modules that imported them, for this test."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
    for name in list(sys.modules):
        if name == "linsvm.distributed" or name.startswith("linsvm.distributed."):
            monkeypatch.delitem(sys.modules, name)


# ----------------------------------------------------------------------------- extras


def test_dask_without_the_extra_is_one_line(monkeypatch, train_file, capsys):
    _without(monkeypatch, "distributed", "dask")
    assert main(["train", "--dask", "local:2", str(train_file), str(train_file) + ".m"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("linsvm train: error: --dask needs dask.distributed,")
    assert "pip install 'linsvm[distributed]'" in err
    assert not os.path.exists(str(train_file) + ".m")


def test_distributed_module_without_the_extra_names_it(monkeypatch):
    _without(monkeypatch, "distributed", "dask")
    with pytest.raises(MissingExtraError, match=r"pip install 'linsvm\[distributed\]'") as info:
        import linsvm.distributed  # noqa: F401
    assert isinstance(info.value, LinsvmError) and isinstance(info.value, ImportError)
    assert "\n" not in str(info.value)


def test_estimator_client_without_the_extra_names_it(monkeypatch):
    _without(monkeypatch, "distributed", "dask")
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([1, -1, 1, -1])
    with pytest.raises(MissingExtraError, match=r"linsvm\[distributed\]"):
        linsvm.LinearSVC(client=object()).fit(X, y)


SKLEARN_ABSENT = """
import sys
sys.modules["sklearn"] = None  # as if scikit-learn were not installed
import linsvm
from linsvm import *  # the names there are, without the estimators
from linsvm.features import *  # likewise without the transformers
from linsvm.errors import MissingExtraError
for name in ("LinearSVC", "LinearSVR", "LogisticRegression", "Poly2Features", "TokenHasher",
             "features.Poly2Features", "features.TokenHasher"):
    module, _, name = ("linsvm." + name).rpartition(".")
    try:
        exec(f"from {module} import {name}")
    except MissingExtraError as exc:
        print(exc)
    else:
        print(name, "imported")
"""


def test_estimators_without_scikit_learn_name_the_extra():
    run = subprocess.run([sys.executable, "-c", SKLEARN_ABSENT], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 7
    for name, line in zip(
        ("LinearSVC", "LinearSVR", "LogisticRegression", "Poly2Features", "TokenHasher",
         "features.Poly2Features", "features.TokenHasher"),
        lines, strict=True,
    ):  # fmt: skip
        assert line == (
            f"linsvm.{name} needs scikit-learn, which is not installed: "
            "pip install 'linsvm[sklearn]'"
        )


def test_star_import_lists_the_estimators_where_scikit_learn_is_installed():
    assert {"LinearSVC", "LinearSVR", "LogisticRegression"} <= set(linsvm.__all__)


def _lower_bound(requirements: list[str], package: str) -> str:
    (requirement,) = [r for r in requirements if re.match(rf"{re.escape(package)}(?![\w.-])", r)]
    match = re.search(r">=\s*([0-9][0-9.]*)", requirement)
    assert match, f"{requirement}: no lower bound"
    return match.group(1)


def test_pyproject_declares_the_sklearn_and_distributed_extras():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert _lower_bound(extras["sklearn"], "scikit-learn") == _lower_bound(
        extras["dev"], "scikit-learn"
    )
    assert _lower_bound(extras["distributed"], "dask[distributed]")


# ----------------------------------------------------------------------------- python -m linsvm


def test_python_m_linsvm_is_the_command_with_its_exit_status():
    version = subprocess.run(
        [sys.executable, "-m", "linsvm", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout == f"linsvm {linsvm.__version__}\n"
    error = subprocess.run(
        [sys.executable, "-m", "linsvm", "no-such-command"], capture_output=True, text=True
    )
    assert error.returncode == 1
    assert error.stderr.startswith("linsvm: error: unknown command 'no-such-command'")


# ----------------------------------------------------------------------------- Numba's cache


def _writable_by_root_too(path: Path) -> None:
    """``path`` made unusable as a folder whoever asks (root ignores permissions, not file
    types): a file where a folder is expected."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")


@pytest.fixture()
def fallback_setting(tmp_path, monkeypatch):
    """A package whose ``__pycache__`` cannot be made, no user-wide folder, the temporary
    folder in tmp_path, and Numba's config as if nothing had set a cache folder."""
    import numba.core.config

    from linsvm import _numba_cache

    package = tmp_path / "package"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "kernels.py").write_text("")
    _writable_by_root_too(package / "sub" / "__pycache__")
    no_home = tmp_path / "no-home"
    no_home.write_text("")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", "")
    return _numba_cache, package, str(no_home / "numba"), temporary


def test_cache_falls_back_to_a_private_temporary_folder(fallback_setting):
    _numba_cache, package, no_user_cache, temporary = fallback_setting
    environ: dict[str, str] = {}
    folder = _numba_cache.use_fallback_cache(environ, str(package), no_user_cache)
    expected = temporary / f"linsvm-numba-cache-{os.getuid()}"
    assert folder == str(expected) and environ == {"NUMBA_CACHE_DIR": str(expected)}
    assert stat.S_IMODE(expected.stat().st_mode) == 0o700
    # the next process finds it and uses it again
    assert _numba_cache.use_fallback_cache({}, str(package), no_user_cache) == str(expected)


def test_cache_is_left_alone_where_numba_has_a_folder(fallback_setting, tmp_path):
    _numba_cache, package, no_user_cache, temporary = fallback_setting
    chosen = {"NUMBA_CACHE_DIR": str(tmp_path / "chosen")}
    assert _numba_cache.use_fallback_cache(chosen, str(package), no_user_cache) is None
    assert chosen == {"NUMBA_CACHE_DIR": str(tmp_path / "chosen")}
    # a chosen folder that cannot be written (Numba then failed every import: "no locator
    # available"): the fallback takes its place
    unwritable = {"NUMBA_CACHE_DIR": os.path.join(no_user_cache, "cache")}
    folder = _numba_cache.use_fallback_cache(unwritable, str(package), no_user_cache)
    assert unwritable == {"NUMBA_CACHE_DIR": folder} and folder.startswith(str(temporary))
    for path in temporary.iterdir():
        shutil.rmtree(path)
    # a writable user-wide folder: Numba uses it
    environ: dict[str, str] = {}
    user_cache = str(tmp_path / "home" / ".cache" / "numba")
    assert _numba_cache.use_fallback_cache(environ, str(package), user_cache) is None
    # a writable package: Numba caches beside the sources
    (package / "sub" / "__pycache__").unlink()
    assert _numba_cache.use_fallback_cache(environ, str(package), no_user_cache) is None
    assert environ == {} and not list(temporary.iterdir())


def test_cache_folder_another_account_could_write_is_not_used(fallback_setting):
    _numba_cache, package, no_user_cache, temporary = fallback_setting
    shared = temporary / f"linsvm-numba-cache-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    environ: dict[str, str] = {}
    folder = _numba_cache.use_fallback_cache(environ, str(package), no_user_cache)
    assert folder != str(shared) and Path(folder).parent == temporary
    assert stat.S_IMODE(Path(folder).stat().st_mode) == 0o700
    shutil.rmtree(folder)


OTHER_UID = 65534  # nobody


def _as_other_user(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    setpriv = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]
    return subprocess.run([*setpriv, *argv], capture_output=True, text=True, env=env, cwd="/")


PROBE = """
import sys, tempfile
import numba  # the venv is readable
open(sys.argv[1]).close()  # and the checkout
try:
    tempfile.TemporaryFile(dir=sys.argv[2]).close()
except OSError:
    print("read-only")
else:
    print("writable")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="switching users with setpriv: Linux")
def test_read_only_install_without_a_home_starts(tmp_path):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    temporary = Path(tempfile.mkdtemp(prefix="linsvm-other-user-"))
    try:
        temporary.chmod(0o1777)
        env = {
            key: value for key, value in os.environ.items()
            if not key.startswith("NUMBA_") and key not in ("XDG_CACHE_HOME", "HOME", "TMPDIR")
        }  # fmt: skip
        env.update(HOME="/nonexistent", TMPDIR=str(temporary))
        probe = _as_other_user(
            [sys.executable, "-c", PROBE, str(PACKAGE / "__init__.py"),
             str(PACKAGE / "__pycache__")], env,
        )  # fmt: skip
        if probe.returncode != 0:
            pytest.skip(f"uid {OTHER_UID} cannot read the venv or the checkout")
        if probe.stdout.strip() != "read-only":
            pytest.skip(f"the checkout is writable by uid {OTHER_UID}: nothing to fall back from")
        console_script = Path(sys.executable).parent / "linsvm"
        command = [str(console_script)] if console_script.exists() else [
            sys.executable, "-m", "linsvm"]  # fmt: skip
        run = _as_other_user([*command, "--version"], env)
        assert (run.returncode, run.stdout, run.stderr) == (0, f"linsvm {linsvm.__version__}\n", "")
        assert (temporary / f"linsvm-numba-cache-{OTHER_UID}").is_dir()
    finally:
        shutil.rmtree(temporary)


NUMBA_CACHE_PROBE = """
import numpy as np
from linsvm.data import all_finite
print(all_finite(np.ones(40)))
"""


def test_a_damaged_numba_cache_file_is_a_miss_and_healed(tmp_path):
    # a cache file cut short (a full disk, a killed process): the kernel compiles again, and
    # the next save writes a sound index
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)

    def probe() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", NUMBA_CACHE_PROBE], env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    assert probe().stdout == "True\n"
    (index,) = tmp_path.rglob("*_any_at_least*.nbi")
    (data,) = tmp_path.rglob("*_any_at_least*.nbc")
    for damaged, size in ((data, 100), (index, 0)):
        damaged.write_bytes(damaged.read_bytes()[:size])
        run = probe()
        assert (run.returncode, run.stdout, run.stderr) == (0, "True\n", "")
        assert index.stat().st_size > 0


# ----------------------------------------------------------------------------- the summary


def test_logistic_regression_summary_has_no_support_vectors_or_derived_gap(train_file, capsys):
    assert main(["train", "-s", "0", str(train_file), str(train_file) + ".m"]) == 0
    out = capsys.readouterr().out
    # (LIBLINEAR's Newton solvers print neither "optimization finished" nor nSV: linsvm's
    # line says the iterations)
    assert "#iter = " in out and "stop measure / initial = " in out
    assert "nSV" not in out and "gap" not in out and "dual" not in out


@pytest.mark.parametrize(("solver", "support_vectors"), [("7", False), ("3", True), ("2", False)])
def test_summary_reports_what_each_solver_means(train_file, capsys, solver, support_vectors):
    assert main(["train", "-s", solver, str(train_file), str(train_file) + ".m"]) == 0
    out = capsys.readouterr().out
    assert ("nSV = " in out) == support_vectors
    gap = re.search(r"duality gap = (\S+) \(relative (\S+)\)", out)
    # -s 2's dual point is derived from w after the run: no gap; the dual solvers' own gap,
    # also relative to the primal
    assert (gap is None) == (solver == "2") and ("dual = " in out) == (solver != "2")
    if gap is not None:
        primal = float(re.search(r"primal = (\S+)", out).group(1))
        assert float(gap.group(2)) == pytest.approx(float(gap.group(1)) / primal, rel=1e-2)


@pytest.mark.usefixtures("fresh_process_overhead")
def test_block_summary_of_logistic_regression_has_no_support_vectors(train_file, capsys):
    argv = ["train", "-s", "7", "--memory", "300M", str(train_file), str(train_file) + ".m"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "nSV" not in out and re.search(r"duality gap = \S+ \(relative \S+\)", out)


FORK_WHILE_COMPILING = """
import os, sys, threading, time
import linsvm
from numba.core.compiler_lock import global_compiler_lock as lock

held = threading.Event()

def compiling():  # (a kernel loading or compiling on another thread: seconds when cold)
    with lock:
        held.set()
        time.sleep(1.0)

threading.Thread(target=compiling).start()
held.wait()
pid = os.fork()
if pid == 0:  # the child's first kernel takes the lock
    os._exit(0 if lock._lock.acquire(timeout=5) else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork here")
def test_a_child_forked_while_a_kernel_compiles_can_compile():
    """multiprocessing's fork start beside a training thread: the child inherited Numba's
    compiler lock held by a thread it does not have, and hung at its first kernel (5 of 5
    Pools). A fork now waits for the lock."""
    run = subprocess.run([sys.executable, "-c", FORK_WHILE_COMPILING], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0"]
