"""Solvers kept only as references for the benchmarks (not part of linsvm)."""
