"""A clock a test sets by hand (``clock.t = ...``) and hands to whatever takes a
``Callable[[], float]`` (the registry, token issuers): time moves only when the test says."""

from __future__ import annotations

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z: the registry tests' "now"


class ManualClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t
