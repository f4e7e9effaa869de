"""Where Numba caches linsvm's compiled kernels, when it has nowhere of its own.

linsvm compiles its kernels with ``@njit(cache=True)``, and Numba picks the cache folder of
each function when the function is *defined* (at ``import linsvm``): ``NUMBA_CACHE_DIR`` if
set, else the ``__pycache__`` beside the source, else the user's cache folder
(``~/.cache/numba`` on Linux). When none is writable (a root-owned install used by an account
with no writable home: a service user, a container run as another uid) Numba raises
``RuntimeError: cannot cache function ...: no locator available`` and even
``linsvm --version`` fails.

``use_fallback_cache`` runs when this module is imported, which ``linsvm/__init__.py`` does
first, before any kernel is defined: in
that case only, or where the folder the user chose (``NUMBA_CACHE_DIR``) cannot be written, it
points Numba at a private folder under the temporary directory, ``linsvm-numba-cache-<uid>`` (kept
between runs, so kernels compile once per machine and account, not once per process; a folder
of that name that another account owns or can write to is not used: a fresh private one is,
removed at exit). It does so silently: the commands work as they do elsewhere, and a warning
on every import would fill the output of every command with a line the user can do nothing
about beyond what ``NUMBA_CACHE_DIR`` already offers. Nothing changes where Numba's own
locations are writable.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import MutableMapping

PACKAGE_ROOT = os.path.dirname(os.path.abspath(__file__))
FALLBACK_PREFIX = "linsvm-numba-cache-"


def _writable(folder: str) -> bool:
    """Whether files can be created in ``folder`` (made if missing), tested as Numba tests
    its cache folders: by making one."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def in_tree_folders(package_root: str = PACKAGE_ROOT) -> list[str]:
    """The ``__pycache__`` folders Numba's in-tree cache uses: one beside each source folder
    of the package."""
    folders = []
    for folder, subfolders, files in os.walk(package_root):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        if any(name.endswith(".py") for name in files):
            folders.append(os.path.join(folder, "__pycache__"))
    return folders


def numba_user_cache() -> str | None:
    """Numba's user-wide cache folder (None if this Numba does not say where it is)."""
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:
        return None
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _private_folder(path: str) -> bool:
    """Whether ``path`` is a real folder (not a link) of this account that no other can
    write to: compiled code is loaded from the cache, so no one else may put files there."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def fallback_folder() -> str:
    """The temporary cache folder: ``<tmp>/linsvm-numba-cache-<uid>``, made private, or a fresh
    private folder (removed at exit) where that name is taken by something else."""
    if hasattr(os, "getuid"):
        path = os.path.join(tempfile.gettempdir(), f"{FALLBACK_PREFIX}{os.getuid()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            path = ""
        if path and _private_folder(path) and _writable(path):
            return path
    path = tempfile.mkdtemp(prefix=FALLBACK_PREFIX)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def use_fallback_cache(
    environ: MutableMapping[str, str] | None = None,
    package_root: str = PACKAGE_ROOT,
    user_cache: str | None = "",
) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` in ``environ`` (default ``os.environ``, so that worker processes
    inherit it) to ``fallback_folder()`` when Numba would find no writable cache folder for the
    package's kernels: none set by the user and none of Numba's own, or one set by the user
    that cannot be written; returns the folder, or None when nothing was changed.
    ``user_cache``: Numba's user-wide folder ("" asks Numba; None: there is none)."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("NUMBA_CACHE_DIR")
    if chosen:
        # Numba caches there only, and fails where it cannot write (a read-only image's
        # baked cache run as a service user): then the fallback is the folder
        if _writable(chosen):
            return None
    else:
        config = sys.modules.get("numba.core.config")
        if config is not None and getattr(config, "CACHE_DIR", ""):
            return None  # set in Numba's config by the program itself
        if all(_writable(folder) for folder in in_tree_folders(package_root)):
            return None
        if user_cache == "":
            user_cache = numba_user_cache()
        if user_cache is not None and _writable(user_cache):
            return None
    folder = fallback_folder()
    environ["NUMBA_CACHE_DIR"] = folder
    # Numba reads its environment on import, which may have come first (numba_user_cache
    # imports it): read again
    config = sys.modules.get("numba.core.config")
    if config is not None and environ is os.environ:
        config.reload_config()
    return folder


def tolerate_cache_faults() -> None:
    """Numba's cache of linsvm's kernels kept as a cache: a file of it that cannot be read (cut
    short by a full disk or a killed process: Numba raises from its unpickling, on every run
    after) is a miss, and its index is removed so that the next save writes a sound one; a
    save that fails (a full disk, a folder made read-only) leaves the kernel compiled in
    memory, uncached. Other packages' kernels are left to Numba. Idempotent; a no-op on a
    Numba without ``numba.core.caching.Cache``."""
    import contextlib

    try:
        from numba.core.caching import Cache
    except ImportError:
        return
    if getattr(Cache, "_linsvm_tolerant", False):
        return
    load, save = Cache.load_overload, Cache.save_overload

    def ours(cache) -> bool:
        module = getattr(getattr(cache, "_py_func", None), "__module__", "") or ""
        return module == "linsvm" or module.startswith("linsvm.")

    def load_overload(self, sig, target_context):
        if not ours(self):
            return load(self, sig, target_context)
        try:
            return load(self, sig, target_context)
        except Exception:  # (whatever unpickling a damaged file raises)
            index = getattr(getattr(self, "_cache_file", None), "_index_path", None)
            if index is not None:
                with contextlib.suppress(OSError):
                    os.remove(index)
            return None

    def save_overload(self, sig, data):
        if not ours(self):
            return save(self, sig, data)
        with contextlib.suppress(OSError, EOFError, ValueError, TypeError):
            save(self, sig, data)

    Cache.load_overload, Cache.save_overload = load_overload, save_overload
    Cache._linsvm_tolerant = True


def compiler_lock_across_fork() -> None:
    """Make a fork wait until no thread holds Numba's compiler lock. linsvm's kernels load
    (or compile) on first use, under that lock, for seconds on a cold cache: a child forked
    meanwhile (multiprocessing's "fork" start, a Pool beside a training thread) inherited the
    lock held by a thread it does not have, and hung at its first kernel. Idempotent; a
    no-op without ``os.register_at_fork`` or on a Numba without the lock."""
    global _fork_guarded
    if _fork_guarded or not hasattr(os, "register_at_fork"):
        return
    try:
        from numba.core.compiler_lock import global_compiler_lock as lock
    except ImportError:
        return
    os.register_at_fork(before=lock.acquire, after_in_parent=lock.release,
                        after_in_child=lock.release)  # fmt: skip
    _fork_guarded = True


_fork_guarded = False
use_fallback_cache()
tolerate_cache_faults()
compiler_lock_across_fork()
