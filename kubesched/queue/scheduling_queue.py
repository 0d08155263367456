"""``SchedulingQueue``: where pending pods wait (upstream ``backend/queue`` PriorityQueue,
v1.34: QueueingHints GA, SchedulerPopFromBackoffQ on).

    add ──PreEnqueue──► activeQ ──pop──► in flight ──fails──► unschedulable pool
     └─► gated (in the pool)  ▲              (backoffQ/activeQ if an event received
                              │               during the attempt may help)
         backoffQ ────────────┘  backoff over, or popped at once when activeQ is empty
         pool ──► backoffQ/activeQ  on an event a rejector's hint says Queue to, or
                                    after podMaxInUnschedulablePodsDuration

activeQ is ordered by the profile's QueueSort; when it is empty, pop takes the head of
backoffQ. A pod that failed goes to the unschedulable pool unless an event received while
it was in flight may help it (then to backoffQ while backing off, else activeQ). Cluster
events move pool pods whose rejecting plugins' hints say Queue. Gated pods (a PreEnqueue
plugin said no) live in the pool until an update or event lets PreEnqueue pass.

Time comes from an injected clock. The periodic flushes (backoff every second, leftover
pods every 30 s) are methods the owner calls; :meth:`pop` flushes completed backoffs first,
which is exact because backoff completion only depends on the current whole second.
Every move is recorded in ``moves`` (and sent to ``listener``) for timelines.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.interface import QueuedPodInfo
from kubesched.queue import clusterevents as ce
from kubesched.queue.active_queue import ActiveQueue, InFlightEvent
from kubesched.queue.backoff_queue import BackoffQueue
from kubesched.queue.hints import (
    QueueingHintMap, QueueingHints, QueueingStrategy, build_queueing_hint_map,
)
from kubesched.queue.moves import (
    ACTIVE_Q, BACKOFF_Q, GATED, IN_FLIGHT, NEW, UNSCHEDULABLE, MoveLog, PodMover, QueueMove,
)
from kubesched.queue.nominator import Nominator

log = logging.getLogger(__name__)

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0

__all__ = ["SchedulingQueue", "QueueMove", "InFlightEvent"]


class SchedulingQueue(PodMover):
    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any], now: Callable[[], float], *,
                 pre_enqueue_plugins: Mapping[str, Sequence[Any]] | None = None,
                 hint_maps: Mapping[str, QueueingHintMap] | None = None,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 pod_lister: Callable[[Pod], Pod | None] | None = None,
                 listener: Callable[[QueueMove], None] | None = None,
                 pop_from_backoff_q: bool = True, keep_moves: bool = True) -> None:
        """``keep_moves`` False (a long-running scheduler): moves go to ``listener`` only,
        ``moves`` stays empty, so memory does not grow with every move."""
        super().__init__()
        self.now = now
        self.sort_key = sort_key
        self.backoff_q = BackoffQueue(now, initial_backoff, max_backoff, sort_key, pop_from_backoff_q)
        self.active_q = ActiveQueue(sort_key, self.backoff_q if pop_from_backoff_q else None)
        self.pop_from_backoff_q = pop_from_backoff_q
        self.hints = QueueingHints(hint_maps or {})
        self.pre_enqueue_plugins = {k: list(v) for k, v in (pre_enqueue_plugins or {}).items()}
        self.max_in_unschedulable = max_in_unschedulable
        self.pod_lister = pod_lister
        self.nominator = Nominator(pod_lister)
        self.move_log = MoveLog(now, listener, keep_moves)
        self.move_request_cycle = -1
        self.started = now()  # the periodic leftover flush runs at started + k * 30 s

    @classmethod
    def for_profiles(cls, profiles: Mapping[str, Any], now: Callable[[], float], **kw: Any) -> "SchedulingQueue":
        """The queue of a scheduler with these Frameworks (first profile's QueueSort)."""
        first = next(iter(profiles.values()))
        return cls(first.queue_sort.sort_key, now,
                   pre_enqueue_plugins={n: fw.points["preEnqueue"] for n, fw in profiles.items()},
                   hint_maps={n: build_queueing_hint_map(fw.cluster_event_map()) for n, fw in profiles.items()},
                   **kw)

    # -- views ----------------------------------------------------------------------------
    @property
    def moves(self) -> list[QueueMove]:
        return self.move_log.moves

    @property
    def scheduling_cycle(self) -> int:
        return self.active_q.scheduling_cycle

    @property
    def gated(self) -> dict[str, QueuedPodInfo]:
        return {q.pod.uid: q for q in self.unschedulable_pods if q.gated}

    @property
    def unschedulable(self) -> dict[str, QueuedPodInfo]:
        return {q.pod.uid: q for q in self.unschedulable_pods if not q.gated}

    @property
    def in_queue(self) -> dict[str, QueuedPodInfo]:
        """Pods in activeQ or backoffQ, by uid."""
        return {q.pod.uid: q for q in self.active_q.infos() + self.backoff_q.infos()}

    def where(self, pod: Pod) -> str | None:
        if self.active_q.has(pod):
            return ACTIVE_Q
        if self.backoff_q.has(pod):
            return BACKOFF_Q
        q = self.unschedulable_pods.get(pod)
        if q is not None:
            return GATED if q.gated else UNSCHEDULABLE
        return IN_FLIGHT if pod.uid in self.active_q.in_flight else None

    def pending_pods(self) -> tuple[list[Pod], str]:
        act, bo, un = self.active_q.infos(), self.backoff_q.infos(), self.unschedulable_pods.values()
        pods = [q.pod for q in act + bo + un]
        return pods, f"activeQ:{len(act)}; backoffQ:{len(bo)}; unschedulablePods:{len(un)}"

    def pending(self) -> int:
        return len(self.active_q) + len(self.backoff_q) + len(self.unschedulable_pods)

    def in_flight_uids(self) -> list[str]:
        return list(self.active_q.in_flight)

    # -- adding, updating, deleting ------------------------------------------------------
    def new_queued_pod_info(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self.now(), initial_attempt_timestamp=None,
                             unschedulable_plugins=set(plugins))

    def add(self, pod: Pod) -> None:
        """A new pending pod (upstream ``Add``)."""
        self.move_to_active_q(self.new_queued_pod_info(pod), ce.event_label(ce.EVENT_UNSCHEDULED_POD_ADD), NEW)

    def update(self, old: Pod | None, new: Pod | None = None) -> None:
        """A pending pod changed (upstream ``Update``). ``update(pod)`` is update(None, pod)."""
        if new is None:
            old, new = None, old
        assert new is not None
        events = ce.pod_scheduling_properties_change(new, old) if old is not None else \
            [ce.EVENT_UNSCHEDULED_POD_UPDATE]
        if self.active_q.add_events_if_pod_in_flight(old, new, events):
            return  # it is being scheduled; the events are checked when it comes back
        if old is not None:
            for q in (self.active_q, self.backoff_q):
                qpi = q.update(new, old)
                if qpi is not None:
                    self.nominator.update_nominated_pod(old, new)
                    return
        qpi = self.unschedulable_pods.get(new)
        if qpi is not None:
            self._update_unschedulable(qpi, old or qpi.pod, new, events)
            return
        self.move_to_active_q(self.new_queued_pod_info(new), ce.event_label(ce.EVENT_UNSCHEDULED_POD_UPDATE), NEW)

    def _update_unschedulable(self, qpi: QueuedPodInfo, old: Pod, new: Pod, events: list[Any]) -> None:
        """An update may make a pool pod schedulable: ask the hints of its rejectors."""
        qpi.pod = new
        self.nominator.update_nominated_pod(old, new)
        src = GATED if qpi.gated else UNSCHEDULABLE
        for ev in events:
            strategy = self.hints.is_pod_worth_requeuing(qpi, ev, old, new)
            where = self.requeue_with_strategy(qpi, strategy, ce.event_label(ev), src)
            if where != UNSCHEDULABLE:
                self.unschedulable_pods.delete(qpi.pod)
            if where in (ACTIVE_Q, BACKOFF_Q):
                break

    def delete(self, pod: Pod) -> None:
        """A pending pod was deleted (upstream ``Delete``)."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        src = self.where(pod)
        if self.active_q.delete(pod) or self.backoff_q.delete(pod):
            self.move_log.record(pod, src, "deleted", ce.event_label(ce.EVENT_UNSCHEDULED_POD_DELETE))
            return
        if self.unschedulable_pods.get(pod) is not None:
            self.unschedulable_pods.delete(pod)
            self.move_log.record(pod, src, "deleted", ce.event_label(ce.EVENT_UNSCHEDULED_POD_DELETE))

    # -- popping ------------------------------------------------------------------------
    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, now in flight; None if nothing can be tried now."""
        self.flush_backoff_q_completed()
        qpi, from_backoff = self.active_q.pop()
        if qpi is None:
            return None
        src, event = (BACKOFF_Q, ce.POP_FROM_BACKOFF_Q) if from_backoff else (ACTIVE_Q, "Pop")
        self.move_log.record(qpi.pod, src, IN_FLIGHT, event)
        return qpi

    def activate(self, pods: Mapping[str, Pod]) -> int:
        """Move these pods from the unschedulable pool or backoffQ straight to activeQ
        (upstream ``Activate``, used through the PodsToActivate cycle state); pods in flight
        or already active are left alone. Returns how many moved."""
        moved = 0
        for pod in pods.values():
            qpi = self.unschedulable_pods.get(pod) or self.backoff_q.get(pod)
            if qpi is None:
                continue
            src = self.where(pod)
            if self.move_to_active_q(qpi, ce.FORCE_ACTIVATE, src):
                moved += 1
        return moved

    def done(self, uid: str) -> None:
        """The pod's attempt is over (upstream ``Done``): forget its in-flight events."""
        self.active_q.done(uid)

    # -- failures -----------------------------------------------------------------------
    def add_unschedulable(self, qpi: QueuedPodInfo, error: bool = False) -> str | None:
        """An attempt failed (upstream ``AddUnschedulableIfNotPresent``). ``error``: the
        attempt failed with an error, not a rejection, so no plugin is to blame. Returns an
        error message when the pod cannot be added."""
        pod = qpi.pod
        try:
            if error:
                qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            if self.pod_lister is not None:
                current = self.pod_lister(pod)
                if current is None or current.node_name:
                    return f"pod {pod.key} no longer exists or is bound"
            where = self.where(pod)
            if where not in (None, IN_FLIGHT):
                return f"pod {pod.key} is already present in {where}"
            if not qpi.unschedulable_plugins and not qpi.pending_plugins:
                qpi.consecutive_errors += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors = 0
            qpi.timestamp = self.now()
            qpi.backoff_expiration = 0.0
            strategy = self._hint_for_in_flight_pod(qpi)
            self.requeue_with_strategy(qpi, strategy, ce.SCHEDULE_ATTEMPT_FAILURE, IN_FLIGHT)
            return None
        finally:
            self.done(pod.uid)

    def _hint_for_in_flight_pod(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        """Upstream ``determineSchedulingHintForInFlightPod``."""
        S = QueueingStrategy
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return S.QUEUE_AFTER_BACKOFF
        events = self.active_q.cluster_events_for_pod(qpi.pod.uid)
        if events is None:
            log.debug("pod %s was not in flight", qpi.pod.key)
            return S.QUEUE_AFTER_BACKOFF
        strategy = S.QUEUE_SKIP
        for e in events:
            s = self.hints.is_pod_worth_requeuing(qpi, e.event, e.old, e.new)
            if s == S.QUEUE_IMMEDIATELY:
                return s
            if s == S.QUEUE_AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return s
        return strategy

    # -- periodic flushes -----------------------------------------------------------------
    def flush_backoff_q_completed(self) -> None:
        for qpi in self.backoff_q.pop_all_backoff_completed():
            self.move_to_active_q(qpi, ce.BACKOFF_COMPLETE, BACKOFF_Q)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Retry pool pods that waited longer than podMaxInUnschedulablePodsDuration."""
        now = self.now()
        old = [q for q in self.unschedulable_pods if now - q.timestamp > self.max_in_unschedulable]
        if old:
            self.move_pods_to_active_or_backoff_queue(old, ce.EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def is_leftover_flush_tick(self, t: float) -> bool:
        k = (t - self.started) / UNSCHEDULABLE_FLUSH_INTERVAL
        return k >= 0 and math.isclose(k, round(k), abs_tol=1e-9)

    def run_periodic_flushes(self) -> None:
        """What upstream's timers do at the current time: flushBackoffQCompleted (every
        second) and, on a 30 s tick, flushUnschedulablePodsLeftover."""
        self.flush_backoff_q_completed()
        if self.is_leftover_flush_tick(self.now()):
            self.flush_unschedulable_pods_leftover()

    def leftover_flushes(self) -> list[tuple[float, QueuedPodInfo]]:
        """Pool pods the leftover flush would retry, with the tick at which it would."""
        out = []
        now, step = self.now(), UNSCHEDULABLE_FLUSH_INTERVAL
        for q in self.unschedulable_pods:
            if q.gated and not ce.match_any_cluster_event(
                    ce.EVENT_UNSCHEDULABLE_TIMEOUT, self.hints.plugin_events.get(q.gating_plugin, ())):
                continue
            due = q.timestamp + self.max_in_unschedulable
            tick = self.started + step * (math.floor((due - self.started) / step) + 1)
            while tick <= now:
                tick += step
            out.append((tick, q))
        return out

    def backoff_completions(self) -> list[tuple[float, QueuedPodInfo]]:
        return self.backoff_q.completions()

    def next_backoff_expiry(self) -> float | None:
        """When the next backoff completes (backoffQ and error backoffQ heads)."""
        return self.backoff_q.next_completion()

    def empty_active(self) -> bool:
        self.flush_backoff_q_completed()
        return len(self.active_q) == 0
