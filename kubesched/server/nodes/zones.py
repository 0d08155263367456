"""Zones, as the node lifecycle controller sees them, and the rate limits of evictions.

Upstream's node lifecycle controller groups nodes by zone (region and zone labels),
gives each zone a state from the share of its nodes that are not Ready (``Normal``,
``PartialDisruption`` at ``unhealthy_zone_threshold``, ``FullDisruption`` when none is
Ready), and adds NoExecute taints (which start evictions) through a token bucket per zone
whose rate depends on that state. This module is that arithmetic; the controller in
:mod:`.lifecycle` applies it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.server.controllers.base import meta
from kubesched.server.controllers.informer import Obj

NORMAL_ZONE, PARTIAL, FULL, INITIAL = "Normal", "PartialDisruption", "FullDisruption", "Initial"


class TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, 1)``; qps <= 0 never accepts."""

    def __init__(self, qps: float, clock: Callable[[], float]) -> None:
        self.qps, self._clock = qps, clock
        self._tokens, self._last = 1.0, clock()

    def try_accept(self) -> bool:
        if self.qps <= 0:
            return False
        now = self._clock()
        self._tokens = min(1.0, self._tokens + (now - self._last) * self.qps)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


@dataclass(slots=True)
class Zone:
    """One zone's state, NoExecute tainting queue (node names) and rate limiter."""

    bucket: TokenBucket
    state: str = INITIAL
    queue: deque[str] = field(default_factory=deque)

    def swap_limiter(self, qps: float, clock: Callable[[], float]) -> None:
        """``RateLimitedTimedQueue.SwapLimiter``: a new bucket at ``qps``, drained if the
        old one had no token left (burst 1)."""
        if self.bucket.qps == qps:
            return
        drained = not self.bucket.try_accept()
        self.bucket = TokenBucket(qps, clock)
        if qps > 0 and drained:
            self.bucket.try_accept()


def zone_key(node: Obj) -> str:
    """``nodetopology.GetZoneKey``: region and zone labels, "" when the node has neither."""
    labels = meta(node).get("labels") or {}
    region = labels.get("topology.kubernetes.io/region") or labels.get("failure-domain.beta.kubernetes.io/region", "")
    zone = labels.get("topology.kubernetes.io/zone") or labels.get("failure-domain.beta.kubernetes.io/zone", "")
    return "" if not region and not zone else f"{region}:\x00:{zone}"


def zone_state(conds: list[dict[str, Any] | None], unhealthy_threshold: float) -> str:
    """``ComputeZoneState`` from the Ready conditions of a zone's nodes."""
    ready = sum(1 for c in conds if c is not None and c.get("status") == "True")
    not_ready = len(conds) - ready
    if ready == 0 and not_ready > 0:
        return FULL
    if not_ready > 2 and not_ready / len(conds) >= unhealthy_threshold:
        return PARTIAL
    return NORMAL_ZONE


def eviction_rate(size: int, state: str, healthy_rate: float, secondary_rate: float, large_cluster: int) -> float:
    """``HealthyQPSFunc``/``ReducedQPSFunc``: the tainting rate of a zone in ``state``."""
    if state == PARTIAL:
        return secondary_rate if size > large_cluster else 0.0
    return healthy_rate
