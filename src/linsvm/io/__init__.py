"""Data files: the LIBSVM / svmlight sparse text format."""

from .libsvm import parse_libsvm_bytes, read_libsvm, write_libsvm

__all__ = ["parse_libsvm_bytes", "read_libsvm", "write_libsvm"]
