"""Atomic file writes: a temporary file in the target's folder, then a rename over the target.

A reader (or a crash) never sees a half-written file: it sees the old file or the new one.

Errors of the writing itself (the folder missing or not writable, the disk full, the file size
limit, ``path`` a folder) name ``path``, the user's name for the file, never the hidden
temporary file nor nothing at all; errors of anything else done while writing (reading the
input, say) are left as they are, naming their own file.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
from collections.abc import Iterator
from typing import BinaryIO


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
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    f = create_named(tmp, "wb", path)
    try:
        yield f
        with errors_naming(path):
            f.flush()
            os.fsync(f.fileno())
            f.close()
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # its unwritten buffer may fail again: no matter
            f.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def create_named(tmp: str, mode: str, path: str) -> BinaryIO:
    """A new file ``tmp`` (it must not exist; permissions from the umask, as open() gives)
    opened in ``mode`` ("wb" or "w+b"), whose OSErrors name ``path`` (the file ``tmp``
    becomes)."""
    with errors_naming(path):
        # os.open with mode 0o666 lets the umask decide the final permissions, as open() would.
        flags = os.O_CREAT | os.O_EXCL | (os.O_RDWR if "+" in mode else os.O_WRONLY)
        fd = os.open(tmp, flags, 0o666)
    try:
        raw = io.FileIO(fd, "r+" if "+" in mode else "w", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    cls = _NamingRandom if "+" in mode else _NamingWriter
    return cls(raw, path)


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
