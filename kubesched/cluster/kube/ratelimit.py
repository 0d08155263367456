"""Client-side rate limiting: upstream's ``clientConnection.qps`` / ``burst`` (client-go's
token-bucket ``flowcontrol.NewTokenBucketRateLimiter``).

Every request waits for a token. The bucket holds ``burst`` tokens and refills at ``qps``
per second, so up to ``burst`` requests go at once and the long-run rate is ``qps``. A
``qps`` of 0 or less turns limiting off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    @property
    def unlimited(self) -> bool:
        return self.qps <= 0

    def reserve(self) -> float:
        """Take a token; return how long the caller must wait before using it."""
        if self.unlimited:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def wait(self) -> float:
        """Block until a token is available; returns the time waited."""
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)
        return delay
