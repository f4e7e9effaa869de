"""Atomic file writes: a temporary file in the target's folder, then a rename over the target.

A reader (or a crash) never sees a half-written file: it sees the old file or the new one.

Errors of the writing itself (the folder missing or not writable, the disk full, the file size
limit, ``path`` a folder) name ``path``, the user's name for the file, never the hidden
temporary file nor nothing at all; errors of anything else done while writing (reading the
input, say) are left as they are, naming their own file.

A symbolic link stays a link: the file it names is the one replaced. The new file keeps the
permissions of the file it replaces. A target that is not a regular file (``/dev/null``, a
terminal or pipe behind ``/dev/stdout``, a named pipe) is written in place, as LIBLINEAR
writes it: a rename would put a plain file in its place.

What a killed writer leaves
---------------------------
Where the system offers it (Linux's O_TMPFILE on ext4, xfs, btrfs, tmpfs, ...) the temporary
file has no name while it is written: a process killed then (kill -9, the OOM killer) leaves
nothing, its file is freed with it. Written and flushed, it is given a hidden name (linkat
through /proc/self/fd) and renamed over the target at once, so only a kill between those two
calls leaves a file, a whole one. Elsewhere the temporary file is created under its hidden
name, ``.<target's name>.<12 hex digits>.tmp``, and a killed writer leaves it behind.
Either way its writer holds an flock on it while it is open, and every write of a target first
removes the hidden temporaries of that target that no live process holds: a killed writer's
leftover lasts until the next write of the same file, and another process writing the same
target at the same time keeps its own. Temporary folders (``temporary_folder``: a text
converted to a cache for training in blocks) are tidied the same way, by the next one made.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import stat
from collections.abc import Iterator
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not POSIX: no locks, so leftovers are not removed
    fcntl = None

_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
# Windows opens a descriptor in text mode unless told otherwise, and would write every \n as
# \r\n (a cache or a checkpoint would not read back); elsewhere 0
_O_BINARY = getattr(os, "O_BINARY", 0)
_PROC_FD = "/proc/self/fd"
# O_TMPFILE refused by the file system, or by a kernel that predates it (EISDIR)
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.ENOTSUP, errno.EISDIR, errno.EINVAL}
_LEFTOVER_TAIL = re.compile(r"[0-9a-f]{12}\.tmp")


def atomic_write_bytes(path: str | os.PathLike, payload: bytes) -> None:
    """Write ``payload`` to ``path`` atomically; permissions as open() would give (umask).

    An OSError (folder missing or not writable, disk full, ``path`` a folder) names ``path``,
    not the hidden temporary file.
    """
    with atomic_writer(path) as f:
        f.write(payload)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` with in pieces: it becomes ``path`` (renamed over it,
    after fsync) when the block ends, and is removed if the block raises (``path`` untouched).

    OSErrors of the writing (the yielded file's methods, the final flush, fsync and rename)
    name ``path``; any other error raised in the block passes through unchanged, so that an
    input file that cannot be read is named as itself, not as the output.
    """
    temp = TempFile(path, "wb")
    try:
        yield temp.file
        temp.publish()
    except BaseException:
        temp.discard()
        raise


class TempFile:
    """A new file in the folder of ``path`` that becomes ``path`` on `publish`.

    ``file`` is the buffered file to write ("wb") or to write and read back ("w+b") with;
    its OSErrors name ``path``. `discard` removes it. Leftovers of killed writers of ``path``
    are removed first (see the module's docstring).
    """

    def __init__(self, path: str | os.PathLike, mode: str = "wb") -> None:
        self.path = os.fspath(path)
        readable = "+" in mode
        self.target, existing = _target(self.path)
        self.in_place = existing is not None and not stat.S_ISREG(existing.st_mode)
        if self.in_place:
            fd, self.name = _open_in_place(self.path, readable), None
        else:
            remove_leftovers(self.target)
            with errors_naming(self.path):
                fd, self.name = _create(self.target, readable)
            # the new file keeps the old one's permissions (os.fchmod: not on Windows
            # before Python 3.13, where only the read-only bit would be kept anyway)
            if existing is not None and hasattr(os, "fchmod"):
                with contextlib.suppress(OSError):
                    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        try:
            raw = io.FileIO(fd, "r+" if readable else "w", closefd=True)
        except BaseException:
            os.close(fd)
            if self.name is not None:
                os.unlink(self.name)
            raise
        self.file: BinaryIO = (_NamingRandom if readable else _NamingWriter)(raw, self.path)

    def publish(self) -> None:
        """Flush the file to disk and rename it over ``path``; then close it."""
        f = self.file
        if self.in_place:
            f.close()  # (flushes; a device or a pipe has nothing to sync or rename)
            return
        with errors_naming(self.path):
            f.flush()
            os.fsync(f.fileno())
            if self.name is None:
                self.name = _link_hidden(f.fileno(), self.target)
            if fcntl is None:
                f.close()  # a system without flock may refuse to rename an open file
            # renamed while open: its lock keeps other writers of path from removing it
            os.replace(self.name, self.target)
            self.name = None
            f.close()

    def discard(self) -> None:
        """Remove the file (after an error); ``path`` is left as it was."""
        # closed first: Windows refuses to remove a file that is open
        with contextlib.suppress(OSError):  # its unwritten buffer may fail again: no matter
            self.file.close()
        if self.name is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.name)
            self.name = None


def check_writable(path: str | os.PathLike, read_back: bool = False) -> None:
    """Raise now the OSError (naming ``path``) that writing ``path`` later would raise: its
    folder missing, not a folder or not writable, ``path`` a folder or an existing file that
    may not be written. For commands that check their outputs before their work.

    ``path`` itself is neither created nor truncated: the folder is proved writable by the
    temporary file a write would start with, discarded at once (unnamed where the system
    offers O_TMPFILE, else a hidden name removed at once). ``read_back``: the writer reads
    the file back (``TempFile(path, "w+b")``), which a device or a pipe refuses.
    """
    name = os.fsdecode(os.fspath(path))
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    # the write replaces the file (a rename), but a file that may not be written is one the
    # user meant to keep; effective ids: those a write would run with
    effective = os.access in os.supports_effective_ids
    if os.path.exists(name) and not os.access(name, os.W_OK, effective_ids=effective):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
    _, existing = _target(name)
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        if read_back:
            _open_in_place(name, readable=True)  # (raises)
        return  # written in place (a pipe is not opened here: that would wait for a reader)
    TempFile(name).discard()


def hidden_name(path: str | os.PathLike) -> str:
    """A fresh hidden name beside ``path`` for a temporary file of it."""
    directory, base = os.path.split(os.path.abspath(os.fsdecode(os.fspath(path))))
    return os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")


def remove_leftovers(path: str | os.PathLike) -> int:
    """Remove the hidden temporary files of ``path`` that no process holds open and locked
    (left by killed writers); the number removed. Errors are ignored: this is tidying."""
    if fcntl is None:
        return 0
    directory, base = os.path.split(os.path.abspath(os.fsdecode(os.fspath(path))))
    prefix = f".{base}."
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    removed = 0
    for name in names:
        if not name.startswith(prefix) or not _LEFTOVER_TAIL.fullmatch(name, len(prefix)):
            continue
        full = os.path.join(directory, name)
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode) or not _abandoned(fd):
                continue
            now = os.stat(full, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                os.unlink(full)
                removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


# A temporary folder's lock file: held (flock) by its process while it lives.
_IN_USE = ".in-use"


@contextlib.contextmanager
def temporary_folder(prefix: str) -> Iterator[str]:
    """A fresh folder in $TMPDIR (``tempfile``'s), removed with what it holds when the block
    ends. A process killed outright (kill -9, the OOM killer) cannot remove it: its folder
    holds a file the process keeps locked while it lives, and each new folder of ``prefix``
    first removes those whose lock no live process holds (as ``remove_leftovers`` does for
    files; where there are no locks, nothing is removed but the block's own folder)."""
    import shutil
    import tempfile

    remove_abandoned_folders(tempfile.gettempdir(), prefix)
    folder = tempfile.mkdtemp(prefix=prefix)
    lock = -1
    try:
        if fcntl is not None:
            # (locked under another name, then named: a folder's lock file is never seen
            # unlocked while its process lives)
            staging = os.path.join(folder, _IN_USE + ".new")
            lock = os.open(staging, os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                os.rename(staging, os.path.join(folder, _IN_USE))
            except OSError:  # (a file system without locks, some FUSE or NFS: no tidying)
                os.close(lock)
                lock = -1
                os.unlink(staging)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if lock >= 0:
            os.close(lock)


def remove_abandoned_folders(parent: str, prefix: str) -> int:
    """Remove the folders ``parent/<prefix>*`` of this user whose lock file no process holds
    (``temporary_folder``'s, left by killed processes); the number removed. Errors are
    ignored: this is tidying."""
    import shutil

    if fcntl is None:
        return 0
    try:
        names = [name for name in os.listdir(parent) if name.startswith(prefix)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        folder = os.path.join(parent, name)
        try:
            status = os.stat(folder, follow_symlinks=False)
            if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(folder, _IN_USE), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # (no lock file: not one of temporary_folder's, or not ours to judge)
        try:
            if _abandoned(fd):
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        finally:
            os.close(fd)
    return removed


def _abandoned(fd: int) -> bool:
    """Whether no process holds the lock of the file open at ``fd`` (its writer is gone): it
    is then this process's."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _target(path: str) -> tuple[str, os.stat_result | None]:
    """(the file a write of ``path`` replaces, its status or None while there is none):
    through symbolic links, so that a link stays a link to the file it names, rewritten."""
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    return (os.path.realpath(path) if os.path.islink(path) else path), existing


def _open_in_place(path: str, readable: bool) -> int:
    """A descriptor to write a device, a pipe or a socket at ``path`` with (``/dev/null``,
    ``/dev/stdout`` on a terminal or a pipe), as LIBLINEAR's fopen does: replacing it by a
    renamed file would put a plain file in the place of the device. A file read back after
    it is written (a cache) cannot be one of them."""
    if readable:
        raise OSError(errno.ESPIPE, "not a regular file, and this file is read back", path)
    with errors_naming(path):
        return os.open(path, os.O_WRONLY | _O_BINARY)


def _create(path: str, readable: bool) -> tuple[int, str | None]:
    """(descriptor, hidden name, None while it has none) of a new, empty file in the folder
    of ``path``, locked; permissions from the umask, as open() gives; OSErrors name
    ``path``."""
    access = (os.O_RDWR if readable else os.O_WRONLY) | _O_BINARY
    with errors_naming(path):
        if _O_TMPFILE and os.path.isdir(_PROC_FD):
            try:
                fd = os.open(os.path.dirname(os.path.abspath(path)), _O_TMPFILE | access, 0o666)
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
            else:
                _lock(fd)
                return fd, None
        while True:
            name = hidden_name(path)
            fd = os.open(name, os.O_CREAT | os.O_EXCL | access, 0o666)
            _lock(fd)
            # another writer of path may have removed it before it was locked
            with contextlib.suppress(FileNotFoundError):
                now, held = os.stat(name, follow_symlinks=False), os.fstat(fd)
                if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    return fd, name
            os.close(fd)


def _lock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _link_hidden(fd: int, path: str) -> str:
    """Give the unnamed file ``fd`` a hidden name beside ``path``; that name."""
    name = hidden_name(path)
    folder = os.open(os.path.dirname(name), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        # linkat(AT_SYMLINK_FOLLOW) of the /proc link: with no dir_fd os.link calls link(),
        # which links the symbolic link itself (and fails)
        os.link(f"{_PROC_FD}/{fd}", os.path.basename(name), dst_dir_fd=folder,
                follow_symlinks=True)  # fmt: skip
    finally:
        os.close(folder)
    return name


@contextlib.contextmanager
def errors_naming(path: str) -> Iterator[None]:
    """OSErrors raised in the block name ``path`` (``os.fsync`` and friends name nothing)."""
    try:
        yield
    except OSError as exc:
        raise _naming(exc, path) from None


def _naming(exc: OSError, path: str) -> OSError:
    """The same error about ``path`` (the user's name for the file)."""
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, os.fsdecode(path))


class _Naming:
    """The buffered file's I/O methods, their OSErrors naming ``self.path``; ``close`` (which
    flushes) included. Mixed in before io.BufferedWriter / io.BufferedRandom, whose C code
    calls ``write`` and ``flush`` through the instance, so ``writelines`` and ``close`` are
    covered too."""

    def __init__(self, raw: io.RawIOBase, path: str) -> None:
        super().__init__(raw)
        self.path = os.fsdecode(path)

    def write(self, data) -> int:
        with errors_naming(self.path):
            return super().write(data)

    def flush(self) -> None:
        with errors_naming(self.path):
            super().flush()

    def read(self, size: int | None = -1) -> bytes:
        with errors_naming(self.path):
            return super().read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        with errors_naming(self.path):
            return super().seek(offset, whence)

    def close(self) -> None:
        with errors_naming(self.path):
            super().close()


class _NamingWriter(_Naming, io.BufferedWriter):
    pass


class _NamingRandom(_Naming, io.BufferedRandom):
    pass
