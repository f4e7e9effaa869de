"""linsvm: large-scale linear classification (LIBLINEAR's solver family) in Python + Numba."""

from .errors import DataFormatError, InvalidInputError, LinsvmError, ModelFormatError
from .io import read_libsvm, write_libsvm
from .model import Model, load_model
from .solvers import Progress, Solution
from .training import ConvergenceWarning, TrainingInterrupted, cross_validation, train

__version__ = "0.1.0"

# scikit-learn estimators, imported on first use so that the command line and the plain API
# start without scikit-learn.
_ESTIMATORS = ("LinearSVC", "LinearSVR", "LogisticRegression")


def __getattr__(name: str):
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'linsvm' has no attribute {name!r}")


__all__ = [
    "ConvergenceWarning",
    "DataFormatError",
    "InvalidInputError",
    "LinearSVC",
    "LinearSVR",
    "LinsvmError",
    "LogisticRegression",
    "Model",
    "ModelFormatError",
    "Progress",
    "Solution",
    "TrainingInterrupted",
    "cross_validation",
    "load_model",
    "read_libsvm",
    "train",
    "write_libsvm",
]
