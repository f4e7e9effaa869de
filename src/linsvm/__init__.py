"""linsvm: large-scale linear classification (LIBLINEAR's solver family) in Python + Numba."""

from .errors import DataFormatError, InvalidInputError, LinsvmError, ModelFormatError
from .features import FeatureMap, hash_tokens
from .io import read_libsvm, write_libsvm
from .io.cache import CacheFormatError, open_cache, write_cache
from .model import Model, load_model
from .solvers import Progress, Solution
from .training import ConvergenceWarning, TrainingInterrupted, cross_validation, train

__version__ = "0.1.0"

# scikit-learn estimators, imported on first use so that the command line and the plain API
# start without scikit-learn.
_ESTIMATORS = ("LinearSVC", "LinearSVR", "LogisticRegression")
_TRANSFORMERS = ("Poly2Features", "TokenHasher")


def __getattr__(name: str):
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    if name in _TRANSFORMERS:
        from .features import transformers

        return getattr(transformers, name)
    raise AttributeError(f"module 'linsvm' has no attribute {name!r}")


__all__ = [
    "CacheFormatError",
    "ConvergenceWarning",
    "DataFormatError",
    "FeatureMap",
    "InvalidInputError",
    "LinearSVC",
    "LinearSVR",
    "LinsvmError",
    "LogisticRegression",
    "Model",
    "ModelFormatError",
    "Poly2Features",
    "Progress",
    "Solution",
    "TokenHasher",
    "TrainingInterrupted",
    "cross_validation",
    "hash_tokens",
    "load_model",
    "open_cache",
    "read_libsvm",
    "train",
    "write_cache",
    "write_libsvm",
]
