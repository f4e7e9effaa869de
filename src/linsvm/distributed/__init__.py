"""Distributed training on Dask (dask.distributed) by CoCoA+: ``linsvm.distributed.train``.

The same model and solvers as ``linsvm.train`` (-s 1, -s 3, -s 7), on the rows of a cluster
that Dask runs (Kubernetes, YARN, HPC schedulers, SSH hosts or a ``LocalCluster``): each
worker holds a partition of the rows and their dual variables, solves its local problem
for a few passes per round, and only W and the partitions' dW travel (``cocoa.py``; the
worker side in ``_partition.py``; reading shards of files on the workers in ``shards.py``).
Needs the ``distributed`` extra (dask[distributed]).
"""

from __future__ import annotations

from ..errors import import_extra

# before cocoa's own imports of dask: without the extra, one error that names it
import_extra(
    "distributed", "distributed", "distributed training", package="dask.distributed",
    provides=("dask",),
)

from .cocoa import (  # noqa: E402 (after the check above)
    DEFAULT_EPS,
    DEFAULT_LOCAL_PASSES,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_SNAPSHOT_EVERY,
    DistributedError,
    RoundProgress,
    client_for,
    train,
)

__all__ = [
    "DEFAULT_EPS",
    "DEFAULT_LOCAL_PASSES",
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_SNAPSHOT_EVERY",
    "DistributedError",
    "RoundProgress",
    "client_for",
    "train",
]
