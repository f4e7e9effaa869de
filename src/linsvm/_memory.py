"""How much memory this process can still take: the bound a model's weights must fit in.

Training allocates its weights at the data's width (8 bytes a feature and weight vector) and
a model file cannot be written without them; a width whose weights exceed what the process
can allocate at all is refused up front (naming the file and line that asked for it) rather
than found out by a failing allocation. The bound is the machine's physical memory, or less
where the address-space or data-segment limit (``ulimit -v`` / ``-d``: RLIMIT_AS,
RLIMIT_DATA) leaves the process less room than that.
"""

from __future__ import annotations

import os

WEIGHT_BYTES = 8  # float64


def physical_memory() -> int | None:
    """Bytes of physical memory of the machine, None where the system does not say."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def _address_space_used() -> int:
    """Bytes of address space this process maps now (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def allocatable_memory() -> int | None:
    """Bytes this process could allocate at most: physical memory, or the room its resource
    limits leave (the limit less what is mapped now) where that is smaller; None when
    neither is known."""
    bounds = []
    physical = physical_memory()
    if physical is not None:
        bounds.append(physical)
    try:
        import resource
    except ImportError:  # not a POSIX system
        resource = None
    if resource is not None:
        used = None
        for which in ("RLIMIT_AS", "RLIMIT_DATA"):
            if not hasattr(resource, which):
                continue
            soft, _ = resource.getrlimit(getattr(resource, which))
            if soft != resource.RLIM_INFINITY and soft >= 0:
                used = _address_space_used() if used is None else used
                bounds.append(max(0, soft - used))
    return min(bounds) if bounds else None


def max_weight_vector_width() -> int | None:
    """The most features a model of one float64 weight vector can have and still fit in
    `allocatable_memory`; None when that is unknown."""
    room = allocatable_memory()
    return None if room is None else room // WEIGHT_BYTES


def check_weights_fit(n_vectors: int, n_weights: int, copies: int = 1, held: str = "") -> None:
    """Refuse, before any training, a model whose weights (``n_vectors`` x ``n_weights``
    float64, ``copies`` of them at once ``held``, e.g. "a round") this process could not
    allocate: the reader bounds one weight vector's width, but a model of k classes holds k
    (they were found out only when the trained weights were assembled)."""
    from .errors import InvalidInputError

    room = allocatable_memory()
    needs = copies * n_vectors * n_weights * WEIGHT_BYTES
    if room is not None and needs > room:
        held = f", {copies} copies {held}" if copies > 1 else ""
        raise InvalidInputError(
            f"the model's weights ({n_vectors} x {n_weights} float64{held}: "
            f"{format_bytes(needs)}) do not fit in this process's {format_bytes(room)}; hash "
            "the features or drop the widest indices"
        )


def format_bytes(n: int) -> str:
    """"745.1 GiB", "512.0 MiB": a size for a message."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
