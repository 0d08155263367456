"""``SchedulingQueue``: where pending pods wait (upstream ``backend/queue``).

    activeQ        heap ordered by the profile's QueueSort; pods ready to be tried
    backoffQ       pods that failed and wait out their backoff (exponential, from
                   podInitialBackoffSeconds doubling up to podMaxBackoffSeconds)
    unschedulable  pods that failed for a reason only a cluster event can fix
    gated          pods a PreEnqueue plugin (scheduling gates) keeps out of activeQ

A cluster event moves unschedulable pods whose rejecting plugins registered for it to
backoffQ (still backing off) or activeQ. The nominator remembers which pods were nominated
to which node by preemption. Time comes from an injected clock, never from the system.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.events import ClusterEvent
from kubesched.framework.interface import QueuedPodInfo


class Nominator:
    """Pods nominated to nodes (``status.nominatedNodeName``) that are not bound yet."""

    def __init__(self) -> None:
        self.by_node: dict[str, dict[str, Pod]] = {}
        self.node_of: dict[str, str] = {}

    def add(self, pod: Pod, node: str) -> None:
        self.delete(pod)
        if not node:
            return
        self.by_node.setdefault(node, {})[pod.uid] = pod
        self.node_of[pod.uid] = node

    def delete(self, pod: Pod) -> None:
        node = self.node_of.pop(pod.uid, None)
        if node is not None:
            pods = self.by_node.get(node, {})
            pods.pop(pod.uid, None)
            if not pods:
                self.by_node.pop(node, None)

    def pods_for_node(self, node: str) -> list[Pod]:
        return list(self.by_node.get(node, {}).values())

    def nodes(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods, and those pods."""
        return {n: list(p.values()) for n, p in self.by_node.items()}


class SchedulingQueue:
    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any], now: Callable[[], float],
                 pre_enqueue: Callable[[Pod], Any] | None = None,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 events_for: Callable[[QueuedPodInfo, ClusterEvent], bool] | None = None) -> None:
        self.sort_key = sort_key
        self.now = now
        self.pre_enqueue = pre_enqueue
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.events_for = events_for
        self._seq = itertools.count()
        self.active: list[tuple[Any, int, QueuedPodInfo]] = []
        self.backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.gated: dict[str, QueuedPodInfo] = {}
        self.in_queue: dict[str, QueuedPodInfo] = {}  # uid -> info, for active/backoff
        self.nominator = Nominator()
        self.moves: list[tuple[float, str, str, str]] = []  # (time, pod, from, to) for timelines
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._pop_cycle: dict[str, int] = {}

    # -- adding -----------------------------------------------------------------------
    def _push_active(self, qpi: QueuedPodInfo, origin: str) -> None:
        heapq.heappush(self.active, (self.sort_key(qpi), next(self._seq), qpi))
        self.in_queue[qpi.pod.uid] = qpi
        self.moves.append((self.now(), qpi.pod.key, origin, "activeQ"))

    def _gate_or_activate(self, qpi: QueuedPodInfo, origin: str) -> None:
        if self.pre_enqueue is not None:
            st = self.pre_enqueue(qpi.pod)
            if not st.success:
                qpi.gated = True
                qpi.gating_plugin = st.plugin
                self.gated[qpi.pod.uid] = qpi
                self.moves.append((self.now(), qpi.pod.key, origin, "gated"))
                return
        qpi.gated = False
        self._push_active(qpi, origin)

    def add(self, pod: Pod) -> None:
        now = self.now()
        qpi = QueuedPodInfo(pod=pod, timestamp=now, initial_attempt_timestamp=None)
        if pod.nominated_node_name:
            self.nominator.add(pod, pod.nominated_node_name)
        self._gate_or_activate(qpi, "new")

    def update(self, pod: Pod) -> None:
        """A pending pod changed (e.g. a gate removed): re-evaluate where it waits."""
        uid = pod.uid
        qpi = self.gated.pop(uid, None) or self.unschedulable.pop(uid, None)
        if qpi is not None:
            qpi.pod = pod
            self._gate_or_activate(qpi, "update")
            return
        live = self.in_queue.get(uid)
        if live is not None:
            live.pod = pod

    def delete(self, pod: Pod) -> None:
        uid = pod.uid
        self.gated.pop(uid, None)
        self.unschedulable.pop(uid, None)
        qpi = self.in_queue.pop(uid, None)
        if qpi is not None:
            qpi.pod = None  # type: ignore[assignment]  # tombstone: skipped when popped
        self.nominator.delete(pod)

    # -- popping ----------------------------------------------------------------------
    def pop(self) -> QueuedPodInfo | None:
        self.flush_backoff_completed()
        while self.active:
            _, _, qpi = heapq.heappop(self.active)
            if qpi.pod is None or self.in_queue.get(qpi.pod.uid) is not qpi:
                continue
            del self.in_queue[qpi.pod.uid]
            self.scheduling_cycle += 1
            self._pop_cycle[qpi.pod.uid] = self.scheduling_cycle
            qpi.attempts += 1
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self.now()
            return qpi
        return None

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        """initial * 2^(attempts-1), capped at max (upstream calculateBackoffDuration)."""
        d = self.initial_backoff
        for _ in range(1, qpi.unschedulable_count + qpi.consecutive_errors):
            d *= 2
            if d >= self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    def flush_backoff_completed(self) -> None:
        now = self.now()
        while self.backoff and self.backoff[0][0] <= now:
            _, _, qpi = heapq.heappop(self.backoff)
            if qpi.pod is None or self.in_queue.get(qpi.pod.uid) is not qpi:
                continue
            del self.in_queue[qpi.pod.uid]
            self._push_active(qpi, "backoffQ")

    def next_backoff_expiry(self) -> float | None:
        while self.backoff and (self.backoff[0][2].pod is None or
                                self.in_queue.get(self.backoff[0][2].pod.uid) is not self.backoff[0][2]):
            heapq.heappop(self.backoff)
        return self.backoff[0][0] if self.backoff else None

    # -- failures and events ------------------------------------------------------------
    def add_unschedulable(self, qpi: QueuedPodInfo, error: bool = False) -> None:
        """The attempt failed: wait for an event (rejected) or back off (error)."""
        qpi.timestamp = self.now()
        if error:
            qpi.consecutive_errors += 1
            self._to_backoff(qpi, "error")
            return
        qpi.unschedulable_count += 1
        qpi.consecutive_errors = 0
        cycle = self._pop_cycle.pop(qpi.pod.uid, self.scheduling_cycle)
        if self.move_request_cycle >= cycle:
            # an event arrived while the pod was being scheduled: it may help, retry after backoff
            self._to_backoff(qpi, "attempt")
            return
        self.unschedulable[qpi.pod.uid] = qpi
        self.moves.append((self.now(), qpi.pod.key, "attempt", "unschedulable"))

    def _to_backoff(self, qpi: QueuedPodInfo, origin: str) -> None:
        expiry = qpi.timestamp + self.backoff_duration(qpi)
        qpi.backoff_expiration = expiry
        if expiry <= self.now():
            self._push_active(qpi, origin)
            return
        heapq.heappush(self.backoff, (expiry, next(self._seq), qpi))
        self.in_queue[qpi.pod.uid] = qpi
        self.moves.append((self.now(), qpi.pod.key, origin, "backoffQ"))

    def move_on_event(self, event: ClusterEvent, pods: Iterable[QueuedPodInfo] | None = None) -> int:
        """Move unschedulable pods interested in ``event`` to backoffQ/activeQ."""
        moved = 0
        self.move_request_cycle = self.scheduling_cycle
        for uid, qpi in list(self.unschedulable.items()):
            if self.events_for is not None and not self.events_for(qpi, event):
                continue
            del self.unschedulable[uid]
            self._to_backoff(qpi, "unschedulable")
            moved += 1
        return moved

    def flush_unschedulable_older_than(self, age: float) -> int:
        """podMaxInUnschedulablePodsDuration: retry pods that waited too long."""
        now = self.now()
        moved = 0
        for uid, qpi in list(self.unschedulable.items()):
            if now - qpi.timestamp >= age:
                del self.unschedulable[uid]
                self._to_backoff(qpi, "flush")
                moved += 1
        return moved

    def pending(self) -> int:
        return len(self.in_queue) + len(self.unschedulable) + len(self.gated)

    def empty_active(self) -> bool:
        self.flush_backoff_completed()
        return not any(q.pod is not None and self.in_queue.get(q.pod.uid) is q for _, _, q in self.active)
