"""The compiled helpers of ``linsvm._intrinsics`` that are not exercised bit for bit by the
solvers' own tests: the kernels' clock."""

from __future__ import annotations

import time

from numba import njit

from linsvm._intrinsics import monotonic_seconds


@njit(cache=True)
def _read_clock_twice_around(work: int) -> tuple[float, float]:
    first = monotonic_seconds()
    total = 0.0
    for k in range(work):
        total += k * 1e-9
    second = monotonic_seconds()
    return first, second + 0.0 * total


def test_monotonic_seconds_is_the_systems_monotonic_clock():
    _read_clock_twice_around(1)  # (compiled before the clock is read around it)
    before = time.clock_gettime(time.CLOCK_MONOTONIC)
    first, second = _read_clock_twice_around(2_000_000)
    after = time.clock_gettime(time.CLOCK_MONOTONIC)
    assert before <= first <= second <= after
    assert second > first  # (two million additions take far longer than the clock's tick)
