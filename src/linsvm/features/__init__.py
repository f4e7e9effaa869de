"""Feature maps: the degree-2 polynomial map and feature hashing (``maps``), their row kernels
(``_rows``), hashing of string tokens (``tokens``) and scikit-learn transformers over them
(``transformers``, imported on first use: the rest needs no scikit-learn)."""

from ..errors import import_extra, installed
from .maps import MAX_EXACT_FEATURES, MAX_HASH_BITS, FeatureMap
from .tokens import hash_tokens, token_collisions

# scikit-learn transformers, imported on first use (linsvm re-exports them the same way)
_TRANSFORMERS = ("Poly2Features", "TokenHasher")


def __getattr__(name: str):
    if name in _TRANSFORMERS:
        import_extra("sklearn", "sklearn", f"linsvm.features.{name}", package="scikit-learn")
        from . import transformers

        return getattr(transformers, name)
    raise AttributeError(f"module 'linsvm.features' has no attribute {name!r}")


__all__ = [
    "FeatureMap",
    "MAX_EXACT_FEATURES",
    "MAX_HASH_BITS",
    "hash_tokens",
    "token_collisions",
]
# ``from linsvm.features import *`` takes the transformers only where scikit-learn is there
if installed("sklearn"):
    __all__ += list(_TRANSFORMERS)
