"""Data files: the LIBSVM / svmlight sparse text format and linsvm's binary cache of it."""

from .cache import Cache, CacheFormatError, CacheSummary, open_cache, write_cache
from .libsvm import parse_libsvm_bytes, read_libsvm, write_libsvm

__all__ = [
    "Cache",
    "CacheFormatError",
    "CacheSummary",
    "open_cache",
    "parse_libsvm_bytes",
    "read_libsvm",
    "write_cache",
    "write_libsvm",
]
