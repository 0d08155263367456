"""backoffQ: pods that failed and wait out their backoff (upstream ``backoffQueue``).

Two heaps ordered by backoff expiry: one for pods rejected by plugins, one for pods that
failed with an error (no rejecting plugin). The backoff of a pod is
``podInitialBackoffSeconds * 2^(n-1)`` capped at ``podMaxBackoffSeconds``, where ``n`` is
its consecutive error count if its last attempt errored, else its unschedulable count
(``calculateBackoffDuration``, in integer nanoseconds as upstream). With
SchedulerPopFromBackoffQ (on in v1.34) expiries are truncated to whole seconds (the
*ordering window*): pods of one window are ordered as activeQ orders them, a pod is still
backing off while its window is the current one, and when activeQ is empty the scheduler
pops the head of the first heap without waiting for its backoff to end.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.interface import QueuedPodInfo

NS = 1_000_000_000
ORDERING_WINDOW = 1.0  # seconds; also the interval of flushBackoffQCompleted


def _ns(seconds: float) -> int:
    return int(round(seconds * NS))


class _Heap:
    """A heap of pods with lazy deletion, keyed by pod key."""

    def __init__(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        self.key = key
        self.heap: list[tuple[Any, int, str]] = []
        self.items: dict[str, tuple[int, QueuedPodInfo]] = {}
        self.seq = itertools.count()

    def push(self, qpi: QueuedPodInfo) -> None:
        seq = next(self.seq)
        self.items[qpi.pod.key] = (seq, qpi)
        heapq.heappush(self.heap, (self.key(qpi), seq, qpi.pod.key))

    def peek(self) -> QueuedPodInfo | None:
        while self.heap:
            _, seq, key = self.heap[0]
            item = self.items.get(key)
            if item is not None and item[0] == seq:
                return item[1]
            heapq.heappop(self.heap)
        return None

    def pop(self) -> QueuedPodInfo | None:
        qpi = self.peek()
        if qpi is not None:
            heapq.heappop(self.heap)
            del self.items[qpi.pod.key]
        return qpi


class BackoffQueue:
    def __init__(self, now: Callable[[], float], initial_backoff: float, max_backoff: float,
                 sort_key: Callable[[QueuedPodInfo], Any], pop_from_backoff_q: bool = True) -> None:
        self.now = now
        self.initial_ns = _ns(initial_backoff)
        self.max_ns = _ns(max_backoff)
        self.windowed = pop_from_backoff_q
        if pop_from_backoff_q:  # ties within a window: as activeQ orders them
            self._bq = _Heap(lambda q: (self.get_backoff_time(q), sort_key(q)))
        else:
            self._bq = _Heap(self.get_backoff_time)
        self._eq = _Heap(self.get_backoff_time)

    @property
    def initial_backoff(self) -> float:
        return self.initial_ns / NS

    @property
    def max_backoff(self) -> float:
        return self.max_ns / NS

    # -- backoff arithmetic --------------------------------------------------------------
    def calculate_backoff_duration_ns(self, count: int) -> int:
        if count == 0:
            return 0
        shift = count - 1
        if self.initial_ns > self.max_ns >> shift:
            return self.max_ns
        return self.initial_ns << shift

    def calculate_backoff_duration(self, count: int) -> float:
        return self.calculate_backoff_duration_ns(count) / NS

    def align(self, t: float) -> float:
        """The start of ``t``'s ordering window."""
        return float(math.floor(t)) if self.windowed else t

    def get_backoff_time(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff expires (window-aligned); -inf when it has none."""
        if self.max_ns == 0:
            return -math.inf
        count = qpi.consecutive_errors if qpi.consecutive_errors > 0 else qpi.unschedulable_count
        if count == 0:
            return -math.inf
        expiry = self.align(qpi.timestamp + self.calculate_backoff_duration_ns(count) / NS)
        qpi.backoff_expiration = expiry
        return expiry

    def is_pod_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.get_backoff_time(qpi) >= self.align(self.now())

    def completes_at(self, qpi: QueuedPodInfo) -> float:
        """The first time at which the pod is no longer backing off."""
        expiry = self.get_backoff_time(qpi)
        if expiry == -math.inf:
            return expiry
        return expiry + ORDERING_WINDOW if self.windowed else math.nextafter(expiry, math.inf)

    # -- membership ---------------------------------------------------------------------
    def add(self, qpi: QueuedPodInfo) -> None:
        errored = not qpi.unschedulable_plugins and not qpi.pending_plugins
        heap, other = (self._eq, self._bq) if errored else (self._bq, self._eq)
        other.items.pop(qpi.pod.key, None)
        heap.push(qpi)

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        item = self._bq.items.get(pod.key) or self._eq.items.get(pod.key)
        return item[1] if item else None

    def has(self, pod: Pod) -> bool:
        return pod.key in self._bq.items or pod.key in self._eq.items

    def update(self, new: Pod, old: Pod) -> QueuedPodInfo | None:
        for heap in (self._bq, self._eq):
            item = heap.items.get(old.key)
            if item is not None:
                item[1].pod = new
                heap.push(item[1])
                return item[1]
        return None

    def delete(self, pod: Pod) -> bool:
        return (self._bq.items.pop(pod.key, None) or self._eq.items.pop(pod.key, None)) is not None

    def infos(self) -> list[QueuedPodInfo]:
        return [q for _, q in self._bq.items.values()] + [q for _, q in self._eq.items.values()]

    def __len__(self) -> int:
        return len(self._bq.items) + len(self._eq.items)

    def len_backoff(self) -> int:
        """Pods rejected by plugins (the ones PopFromBackoffQ may take)."""
        return len(self._bq.items)

    # -- leaving ------------------------------------------------------------------------
    def pop_backoff(self) -> QueuedPodInfo | None:
        return self._bq.pop()

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        out: list[QueuedPodInfo] = []
        for heap in (self._bq, self._eq):
            while True:
                qpi = heap.peek()
                if qpi is None or self.is_pod_backing_off(qpi):
                    break
                heap.pop()
                out.append(qpi)
        return out

    def completions(self) -> list[tuple[float, QueuedPodInfo]]:
        """Every pod with the time its backoff completes."""
        return [(self.completes_at(q), q) for q in self.infos()]

    def next_completion(self) -> float | None:
        heads = [q for q in (self._bq.peek(), self._eq.peek()) if q is not None]
        return min((self.completes_at(q) for q in heads), default=None)
