"""A slice of ``benchmarks/bench_soak.py``: repeated fits, ``train --memory`` runs and Dask
fits in this process leave no file descriptors, threads, temporary files or worker partitions
behind (counted against the sample after the warm-up). Resident memory is not checked here
(too noisy for a test); the benchmark reports it over 10,000 fits."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("psutil")

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_soak as soak  # noqa: E402


def test_fits_and_predictions_leave_nothing_behind():
    (phase,) = soak.soak(n_fits=200, n_memory=0, n_dask=0, samples=10)
    assert [s.iteration for s in phase.samples][-1] == 200
    assert phase.leftovers() == dict.fromkeys(phase.leftovers(), 0)


def test_train_memory_runs_leave_nothing_behind():
    (phase,) = soak.soak(n_fits=0, n_memory=5, n_dask=0, samples=5)
    assert phase.leftovers() == dict.fromkeys(phase.leftovers(), 0)


def test_dask_fits_leave_nothing_behind():
    pytest.importorskip("distributed")
    (phase,) = soak.soak(n_fits=0, n_memory=0, n_dask=5, samples=5)
    left = phase.leftovers()
    del left["sockets"]  # a Dask client's pool of connections: reported by the benchmark
    assert left == dict.fromkeys(left, 0)
    # the runs held partitions on the workers while they ran, and none after
    assert phase.samples[-1].partitions == 0 and phase.samples[-1].worker_keys == 0
