"""Distributed training on Dask (dask.distributed) by CoCoA+: ``linsvm.train(X, y, client=)``.

The same model and solvers as ``linsvm.train`` (-s 1, -s 3, -s 7), on the rows of a cluster
that Dask runs (Kubernetes, YARN, HPC schedulers, SSH hosts or a ``LocalCluster``): each
worker holds a partition of the rows and their dual variables, solves its local problem
for a few passes per round, and only W and the partitions' dW travel (``cocoa.py``; the
worker side in ``_partition.py``; reading shards of files on the workers in ``shards.py``).
Needs the ``distributed`` extra (dask[distributed]).
"""

from __future__ import annotations

from ..errors import InvalidInputError, import_extra

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
    _count,
    check_client,
    client_for,
    train_cocoa,
)


def train(source, y=None, *, client, max_rounds: int = DEFAULT_MAX_ROUNDS, n_partitions=None,
          local_passes: int = DEFAULT_LOCAL_PASSES, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
          on_round=None, hold_bias: bool = False, **options):  # fmt: skip
    """CoCoA+ on the workers of ``client`` (``cocoa.train_cocoa`` documents every argument):
    ``linsvm.train(source, y, client=client, **options)``, the one way in, with
    ``max_rounds`` as its ``max_iter`` and the cluster's own options as its
    ``place_options``. ``client``: a running Client, or "local:N" (a LocalCluster of N
    workers started for the call)."""
    from ..training import train as train_anywhere

    for name in ("max_iter", "place_options"):  # (this function's own arguments stand for them)
        if name in options:
            raise InvalidInputError(
                f"distributed.train takes no {name}: "
                + ("max_rounds is the rounds' cap" if name == "max_iter" else
                   "n_partitions, local_passes, snapshot_every, on_round and hold_bias are "
                   "its own")
            )
    _count(max_rounds, "max_rounds")
    if not isinstance(client, str):  # ("local:N" and addresses: checked where connected)
        check_client(client)
    place_options = {"n_partitions": n_partitions, "local_passes": local_passes,
                     "snapshot_every": snapshot_every, "on_round": on_round,
                     "hold_bias": hold_bias}  # fmt: skip
    return train_anywhere(source, y, client=client, max_iter=max_rounds,
                          place_options=place_options, **options)  # fmt: skip


__all__ = [
    "DEFAULT_EPS",
    "DEFAULT_LOCAL_PASSES",
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_SNAPSHOT_EVERY",
    "DistributedError",
    "RoundProgress",
    "check_client",
    "client_for",
    "train",
    "train_cocoa",
]
