"""Feature maps: the degree-2 polynomial map and feature hashing (``maps``), their row kernels
(``_rows``), and hashing of string tokens (``tokens``)."""

from .maps import MAX_EXACT_FEATURES, MAX_HASH_BITS, FeatureMap

__all__ = ["FeatureMap", "MAX_EXACT_FEATURES", "MAX_HASH_BITS"]
