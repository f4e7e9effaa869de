"""The exceptions linsvm raises for bad input.

Every error caused by the user's data, options or files derives from `LinsvmError`, so the
command line can print it as one line and exit non-zero instead of showing a traceback.
"""

from __future__ import annotations


class LinsvmError(Exception):
    """Base class of the errors linsvm reports to the user."""


class DataFormatError(LinsvmError, ValueError):
    """A data file is malformed. The message names the file and the line."""

    def __init__(self, path: str, line: int, what: str) -> None:
        self.path = path
        self.line = line
        self.what = what
        super().__init__(f"{path}:{line}: {what}")

    def __reduce__(self):
        # picklable (errors travel back from Dask workers): rebuilt from the fields, not the
        # message
        return type(self), (self.path, self.line, self.what)


class InvalidInputError(LinsvmError, ValueError):
    """Arrays or options passed to the API are unusable (NaN, empty, one class, ...)."""


class ModelFormatError(LinsvmError, ValueError):
    """A model file is malformed or of an unknown kind."""


class ZeroIndexError(DataFormatError):
    """Feature index 0 in a data file read with 1-based indices (LIBSVM's convention)."""
