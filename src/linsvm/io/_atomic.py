"""Atomic file writes: a temporary file in the target's folder, then a rename over the target.

A reader (or a crash) never sees a half-written file: it sees the old file or the new one.
"""

from __future__ import annotations

import contextlib
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
    OSErrors name ``path`` as ``atomic_write_bytes``'s do."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        # os.open with mode 0o666 lets the umask decide the final permissions, as open() would.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise


def _naming(exc: OSError, path: str) -> OSError:
    """The same error about ``path`` (the user's name for the file)."""
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, os.fsdecode(path))
