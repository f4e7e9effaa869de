"""The exceptions linsvm raises for bad input.

Every error caused by the user's data, options or files derives from `LinsvmError`, so the
command line can print it as one line and exit non-zero instead of showing a traceback.
"""

from __future__ import annotations

from types import ModuleType


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


class MissingExtraError(LinsvmError, ImportError):
    """An optional dependency is not installed. The message names the extra that installs it
    (``pip install 'linsvm[extra]'``); an ImportError too, for code that catches those."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules without a spec: there, then
        return True


def import_extra(
    module: str, extra: str, purpose: str, package: str = "", provides: tuple[str, ...] = ()
) -> ModuleType:
    """``import module``, or a MissingExtraError naming ``linsvm[extra]`` when it (or one of the
    packages in ``provides`` that it imports, e.g. dask for distributed) is not installed.
    ``package``: the name to show where the module's would not say it (scikit-learn). An
    ImportError from an installed but broken package is left as it is: its message says more."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in (module.partition(".")[0], *provides):
            raise
        raise MissingExtraError(
            f"{purpose} needs {package or module}, which is not installed: "
            f"pip install 'linsvm[{extra}]'"
        ) from None
