"""linsvm: large-scale linear classification (LIBLINEAR's solver family) in Python + Numba."""

# First, before anything slow to import: a Ctrl-C while the command is loading is one line.
from . import _command_start  # noqa: F401

# isort: split
# Then, before any module defines a cached kernel: a writable Numba cache where the install
# has none (a read-only install used by an account with no writable home); importing the
# module is what sets it up.
from . import _numba_cache  # noqa: F401

# isort: split
from . import features
from .errors import (
    DataFormatError,
    InvalidInputError,
    LinsvmError,
    MissingExtraError,
    ModelFormatError,
    import_extra,
    installed,
)
from .evaluation import evaluations
from .features import _TRANSFORMERS, FeatureMap, hash_tokens
from .io import read_libsvm, write_libsvm
from .io.cache import CacheFormatError, open_cache, write_cache
from .model import Model, load_model
from .solvers import Progress, Solution
from .training import ConvergenceWarning, TrainingInterrupted, cross_validation, train

__version__ = "0.1.0"

# scikit-learn estimators and linsvm.features' transformers, imported on first use so that the
# command line and the plain API start without scikit-learn (the sklearn extra); without it,
# one error naming the extra.
_ESTIMATORS = ("LinearSVC", "LinearSVR", "LogisticRegression")
# linsvm.model_selection (-C's search) and linsvm.scaling (svm-scale's): modules of their own
_SUBMODULES = ("model_selection", "scaling")


def __getattr__(name: str):
    if name in _SUBMODULES:  # (loaded on first use, as the estimators)
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in _ESTIMATORS or name in _TRANSFORMERS:
        import_extra("sklearn", "sklearn", f"linsvm.{name}", package="scikit-learn")
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    if name in _TRANSFORMERS:
        return getattr(features, name)  # imports them on first use
    raise AttributeError(f"module 'linsvm' has no attribute {name!r}")


__all__ = [
    "CacheFormatError",
    "ConvergenceWarning",
    "DataFormatError",
    "FeatureMap",
    "InvalidInputError",
    "LinsvmError",
    "MissingExtraError",
    "Model",
    "ModelFormatError",
    "Progress",
    "Solution",
    "TrainingInterrupted",
    "cross_validation",
    "evaluations",
    "hash_tokens",
    "load_model",
    "open_cache",
    "read_libsvm",
    "train",
    "write_cache",
    "write_libsvm",
]


# ``from linsvm import *`` takes the estimators only where scikit-learn is there to import
if installed("sklearn"):
    __all__ += [*_ESTIMATORS, *_TRANSFORMERS]
