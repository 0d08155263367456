"""Log records rate-limited per message, so that a flood of one failure cannot fill a disk.

A client can make a server log the same line thousands of times a second: under a flood of
connections, every failed ``accept`` was an error with its traceback (54 MB of log a minute).
:class:`RateLimit`, a filter on the root logger's handlers, lets through at most
:data:`BURST` records of each message (its logger, level and unformatted text) per
:data:`PERIOD` seconds; the first record let through after that says how many like it were
dropped. Distinct messages are limited independently, so a flood of one hides no other.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

BURST = 5
PERIOD = 10.0
_MAX_MESSAGES = 1000  # distinct messages remembered; beyond, the oldest windows are forgotten


class RateLimit(logging.Filter):
    def __init__(self, burst: int = BURST, period: float = PERIOD,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst = burst
        self.period = period
        self.clock = clock
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, int, str], list[float]] = {}  # key -> [start, passed, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg)[:300])
        now = self.clock()
        with self._lock:
            window = self._windows.get(key)
            if window is None or now - window[0] >= self.period:
                dropped = int(window[2]) if window is not None else 0
                if window is None and len(self._windows) >= _MAX_MESSAGES:
                    self._forget(now)
                self._windows[key] = [now, 1, 0]
                if dropped:
                    record.msg = f"{record.msg} [{dropped} more like this dropped in the last {self.period:.0f} s]"
                return True
            if window[1] < self.burst:
                window[1] += 1
                return True
            window[2] += 1
            return False

    def _forget(self, now: float) -> None:
        old = [k for k, w in self._windows.items() if now - w[0] >= self.period]
        for k in old or list(self._windows)[: len(self._windows) // 2]:
            del self._windows[k]


def install() -> None:
    """Rate-limit every handler of the root logger (call after ``logging.basicConfig``)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(RateLimit())
