"""Clocks: the virtual clock of the simulator, and the real one for live schedulers."""

from __future__ import annotations

import time


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
    def now(self) -> float:
        return time.monotonic()
