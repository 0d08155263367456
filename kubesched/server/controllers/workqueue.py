"""A work queue of keys with the guarantees of client-go's ``workqueue``.

* a key is queued at most once however often it is added (events coalesce);
* a key being processed is not handed to another worker; added again meanwhile, it is
  queued once the worker calls :meth:`WorkQueue.done`;
* :meth:`WorkQueue.add_after` delays a key (timers: a pod's start, a toleration's end);
  :meth:`WorkQueue.add_rate_limited` retries a failed key with per-key exponential
  backoff, which :meth:`WorkQueue.forget` resets.

Delays run on the monotonic clock; nothing here touches the cluster.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.05
MAX_DELAY = 10.0


class WorkQueue(Generic[K]):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._delayed: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._seq = itertools.count()
        self._failures: dict[K, int] = {}
        self._shutdown = False

    def add(self, key: K) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: K) -> None:
        if self._shutdown or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds (at once if not positive). An earlier
        pending time for the key wins."""
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutdown:
                return
            when = self._clock() + delay
            if self._due.get(key, float("inf")) <= when:
                return
            self._due[key] = when
            heapq.heappush(self._delayed, (when, next(self._seq), key))
            self._cond.notify()

    def add_rate_limited(self, key: K) -> None:
        with self._cond:
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
        self.add_after(key, min(MAX_DELAY, BASE_DELAY * (2 ** n)))

    def forget(self, key: K) -> None:
        with self._cond:
            self._failures.pop(key, None)

    def get(self, timeout: float | None = None) -> K | None:
        """The next key to process (mark it done afterwards), or None on timeout/shutdown."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while True:
                self._promote_locked()
                if self._queue:
                    key = self._queue.popleft()
                    self._dirty.discard(key)
                    self._processing.add(key)
                    return key
                if self._shutdown:
                    return None
                now = self._clock()
                wait = None if deadline is None else deadline - now
                if self._delayed:
                    first = self._delayed[0][0] - now
                    wait = first if wait is None else min(wait, first)
                if wait is not None and wait <= 0:
                    if deadline is not None and now >= deadline:
                        return None
                    continue
                self._cond.wait(wait)

    def _promote_locked(self) -> None:
        now = self._clock()
        while self._delayed and self._delayed[0][0] <= now:
            when, _, key = heapq.heappop(self._delayed)
            if self._due.get(key) != when:
                continue  # superseded by an earlier time
            del self._due[key]
            self._add_locked(key)

    def done(self, key: K) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue) + len(self._due)
