"""Clocks: the scheduler's time is injected (upstream ``WithClock``; trio's ``Clock``).

The simulator runs on a :class:`VirtualClock` that moves only when told; a live scheduler
(``kubesched.live``) runs on a :class:`RealClock`. Both read in seconds. A RealClock is
monotonic (queue timestamps and backoffs never jump with the wall clock) but starts at the
wall time measured from ``epoch``, so times the API server writes (creation timestamps,
which Coscheduling orders pod groups by) compare with queue timestamps as they do in the
simulator, whose clock 0 is :data:`CLOCK_EPOCH`.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Protocol

# The wall time the simulator's clock 0 stands for (the in-process cluster and Coscheduling
# convert RFC 3339 times against the same instant).
CLOCK_EPOCH = dt.datetime(2100, 1, 1, tzinfo=dt.timezone.utc)


class Clock(Protocol):
    def now(self) -> float: ...


class VirtualClock:
    """Time that moves only when the simulation says so: backoffs cost no wall time."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        if t > self._now:
            self._now = t


class RealClock:
    """Seconds since ``epoch`` (default :data:`CLOCK_EPOCH`), advancing monotonically."""

    def __init__(self, epoch: dt.datetime = CLOCK_EPOCH) -> None:
        self._epoch = epoch.timestamp()
        self._offset = time.time() - self._epoch - time.monotonic()

    def now(self) -> float:
        return time.monotonic() + self._offset

    def to_unix(self, t: float) -> float:
        """A time of this clock as seconds since 1970 (for people and APIs)."""
        return t + self._epoch
