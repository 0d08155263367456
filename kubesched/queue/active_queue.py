"""activeQ: the pods ready to be tried, and the pods being tried right now.

A heap in the profile's QueueSort order (upstream ``activeQueue``). Popping a pod makes it
*in flight* until :meth:`ActiveQueue.done`; every cluster event that arrives while any pod
is in flight is kept in one ordered log, so that when an in-flight pod comes back
unschedulable the queue can ask whether something that happened during its attempt may
help it (upstream ``inFlightPods``/``inFlightEvents``). Events older than every in-flight
pod are dropped as soon as no pod can need them.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.objects import Pod
from kubesched.framework.events import ClusterEvent
from kubesched.framework.interface import QueuedPodInfo


@dataclass(frozen=True, slots=True)
class InFlightEvent:
    """A cluster event received while some pod was in flight, with its objects."""

    event: ClusterEvent
    old: Any
    new: Any


class _PodMark:
    """Where a pod's attempt started in the in-flight log."""

    __slots__ = ("pod", "alive")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.alive = True


class BackoffPopper(Protocol):
    def len_backoff(self) -> int: ...

    def pop_backoff(self) -> QueuedPodInfo | None: ...


class ActiveQueue:
    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any], backoff: BackoffPopper | None = None) -> None:
        self.sort_key = sort_key
        self.backoff = backoff  # set: pop from backoffQ when activeQ is empty (SchedulerPopFromBackoffQ)
        self._heap: list[tuple[Any, int, str]] = []
        self._items: dict[str, tuple[int, QueuedPodInfo]] = {}  # pod key -> (entry seq, info)
        self._seq = itertools.count()
        self.in_flight: dict[str, int] = {}  # pod uid -> absolute index of its mark in the log
        self._log: deque[_PodMark | InFlightEvent] = deque()
        self._base = 0  # absolute index of _log[0]
        self.scheduling_cycle = 0

    # -- the heap -----------------------------------------------------------------------
    def add(self, qpi: QueuedPodInfo) -> None:
        seq = next(self._seq)
        key = qpi.pod.key
        self._items[key] = (seq, qpi)
        heapq.heappush(self._heap, (self.sort_key(qpi), seq, key))

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        item = self._items.get(pod.key)
        return item[1] if item else None

    def has(self, pod: Pod) -> bool:
        return pod.key in self._items

    def update(self, new: Pod, old: Pod) -> QueuedPodInfo | None:
        qpi = self.get(old)
        if qpi is None:
            return None
        qpi.pod = new
        self.add(qpi)
        return qpi

    def delete(self, pod: Pod) -> bool:
        return self._items.pop(pod.key, None) is not None

    def __len__(self) -> int:
        return len(self._items)

    def infos(self) -> list[QueuedPodInfo]:
        return [qpi for _, qpi in self._items.values()]

    def _pop_heap(self) -> QueuedPodInfo | None:
        while self._heap:
            _, seq, key = heapq.heappop(self._heap)
            item = self._items.get(key)
            if item is not None and item[0] == seq:
                del self._items[key]
                return item[1]
        return None

    def pop(self) -> tuple[QueuedPodInfo | None, bool]:
        """The next pod to try and whether it came from backoffQ (activeQ was empty);
        (None, False) when there is nothing to try."""
        while True:
            from_backoff = False
            qpi = self._pop_heap()
            if qpi is None and self.backoff is not None and self.backoff.len_backoff():
                qpi, from_backoff = self.backoff.pop_backoff(), True
            if qpi is None:
                return None, False
            qpi.attempts += 1
            if qpi.pod.uid in self.in_flight:
                continue  # tracked twice: a bug elsewhere; discard this copy (upstream does too)
            self.in_flight[qpi.pod.uid] = self._base + len(self._log)
            self._log.append(_PodMark(qpi.pod))
            self.scheduling_cycle += 1
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
            qpi.gating_plugin = ""
            qpi.gated = False
            return qpi, from_backoff

    # -- in-flight pods and events -------------------------------------------------------
    def add_events_if_pod_in_flight(self, old: Pod | None, new: Pod, events: Iterable[ClusterEvent]) -> bool:
        if new.uid not in self.in_flight:
            return False
        for ev in events:
            self._log.append(InFlightEvent(ev, old, new))
        return True

    def add_event_if_any_in_flight(self, old: Any, new: Any, event: ClusterEvent) -> bool:
        if not self.in_flight:
            return False
        self._log.append(InFlightEvent(event, old, new))
        return True

    def cluster_events_for_pod(self, uid: str) -> list[InFlightEvent] | None:
        """Events received since the pod was popped; None if it is not in flight."""
        start = self.in_flight.get(uid)
        if start is None:
            return None
        out = []
        for i in range(start - self._base + 1, len(self._log)):
            e = self._log[i]
            if isinstance(e, InFlightEvent):
                out.append(e)
        return out

    def done(self, uid: str) -> None:
        start = self.in_flight.pop(uid, None)
        if start is None:
            return
        mark = self._log[start - self._base]
        assert isinstance(mark, _PodMark)
        mark.alive = False
        while self._log:
            head = self._log[0]
            if isinstance(head, _PodMark) and head.alive:
                break  # events after a live pod's mark are still needed
            self._log.popleft()
            self._base += 1

    def in_flight_pods(self) -> list[Pod]:
        out = []
        for uid, start in self.in_flight.items():
            mark = self._log[start - self._base]
            assert isinstance(mark, _PodMark)
            out.append(mark.pod)
        return out

    def in_flight_log(self) -> list[Pod | InFlightEvent]:
        """The log as upstream lists it: pods (at the start of their attempt) and events."""
        return [e.pod if isinstance(e, _PodMark) else e
                for e in self._log if not isinstance(e, _PodMark) or e.alive]
