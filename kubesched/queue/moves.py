"""Moving pods between the sub-queues (the requeueing half of upstream's PriorityQueue).

``move_to_active_q`` and ``move_to_backoff_q`` run the PreEnqueue plugins (a gated pod
goes to the unschedulable pool instead); ``requeue_with_strategy`` turns a hint into a
queue; ``move_all_to_active_or_backoff_queue`` is what a cluster event does. Every move
is recorded as a :class:`QueueMove` so a simulation can show a timeline.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from kubesched.api.objects import Pod
from kubesched.framework.events import ClusterEvent
from kubesched.framework.interface import QueuedPodInfo
from kubesched.framework.runtime.results import as_status, call as call_plugin
from kubesched.queue import clusterevents as ce
from kubesched.queue.active_queue import ActiveQueue
from kubesched.queue.backoff_queue import BackoffQueue
from kubesched.queue.hints import QueueingHints, QueueingStrategy
from kubesched.queue.nominator import Nominator
from kubesched.queue.unschedulable_pods import UnschedulablePods

log = logging.getLogger(__name__)

# Where a pod can be (the names used in QueueMove).
NEW = "new"
ACTIVE_Q = "activeQ"
BACKOFF_Q = "backoffQ"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
IN_FLIGHT = "inFlight"
DELETED = "deleted"


class QueueMove(NamedTuple):
    """A pod moved from ``src`` to ``dst`` at ``time`` because of ``event`` (a cluster
    event label or one of the queue's own: ScheduleAttemptFailure, BackoffComplete, ...).
    ``backoff_expiration`` is set when it entered backoffQ."""

    time: float
    pod: str
    src: str | None
    dst: str
    event: str
    backoff_expiration: float | None = None


class MoveLog:
    def __init__(self, now: Callable[[], float], listener: Callable[[QueueMove], None] | None,
                 keep: bool = True) -> None:
        self.now = now
        self.listener = listener
        self.keep = keep
        self.moves: list[QueueMove] = []

    def record(self, pod: Pod, src: str | None, dst: str, event: str, expiry: float | None = None) -> None:
        if not self.keep and self.listener is None:
            return
        m = QueueMove(self.now(), pod.key, src, dst, event, expiry)
        if self.keep:
            self.moves.append(m)
        if self.listener is not None:
            self.listener(m)


class PodMover:
    """The requeueing operations; mixed into :class:`SchedulingQueue`."""

    active_q: ActiveQueue
    backoff_q: BackoffQueue
    unschedulable_pods: UnschedulablePods
    nominator: Nominator
    hints: QueueingHints
    pre_enqueue_plugins: dict[str, list[Any]]
    move_log: MoveLog
    pop_from_backoff_q: bool
    move_request_cycle: int
    now: Callable[[], float]

    def __init__(self) -> None:
        self.unschedulable_pods = UnschedulablePods()

    # -- PreEnqueue ---------------------------------------------------------------------
    def run_pre_enqueue_plugins(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePlugins``: the gating plugin first, then the others;
        the first rejection gates the pod (and counts as one of its rejectors)."""
        plugins = self.pre_enqueue_plugins.get(qpi.pod.scheduler_name, [])
        gating = qpi.gating_plugin
        if gating:
            first = [pl for pl in plugins if pl.name == gating]
            if first and not self._run_pre_enqueue(first[0], qpi):
                return
        for pl in plugins:
            if pl.name != gating and not self._run_pre_enqueue(pl, qpi):
                return
        qpi.gating_plugin = ""
        qpi.gated = False

    @staticmethod
    def _run_pre_enqueue(pl: Any, qpi: QueuedPodInfo) -> bool:
        # a plugin bug (raising, returning neither a Status nor None) gates the pod, as an Error would
        st = as_status(call_plugin(pl, "PreEnqueue", pl.pre_enqueue, qpi.pod), "pre_enqueue", pl.name)
        if st.success:
            return True
        qpi.unschedulable_plugins.add(pl.name)
        qpi.gating_plugin = pl.name
        qpi.gated = True
        log.debug("pod %s gated by %s: %s", qpi.pod.key, pl.name, st.message)
        return False

    # -- the moves ------------------------------------------------------------------------
    def move_to_active_q(self, qpi: QueuedPodInfo, event: str, src: str | None) -> bool:
        """Upstream ``moveToActiveQ``; False if PreEnqueue gated the pod."""
        if not (self.pop_from_backoff_q and event == ce.BACKOFF_COMPLETE):
            self.run_pre_enqueue_plugins(qpi)
        pod = qpi.pod
        if qpi.gated:
            if self.active_q.has(pod) or self.backoff_q.has(pod) or self.unschedulable_pods.get(pod):
                return False
            self.unschedulable_pods.add_or_update(qpi)
            self.move_log.record(pod, src, GATED, event)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.now()
        self.active_q.add(qpi)
        self.unschedulable_pods.delete(pod)
        self.backoff_q.delete(pod)
        self.move_log.record(pod, src, ACTIVE_Q, event)
        if event in (ce.event_label(ce.EVENT_UNSCHEDULED_POD_ADD), ce.event_label(ce.EVENT_UNSCHEDULED_POD_UPDATE)):
            self.nominator.add_nominated_pod(pod)
        return True

    def move_to_backoff_q(self, qpi: QueuedPodInfo, event: str, src: str | None) -> bool:
        """Upstream ``moveToBackoffQ`` (PreEnqueue runs here with PopFromBackoffQ)."""
        pod = qpi.pod
        if self.pop_from_backoff_q:
            self.run_pre_enqueue_plugins(qpi)
            if qpi.gated:
                if self.unschedulable_pods.get(pod) is None:
                    self.unschedulable_pods.add_or_update(qpi)
                    self.move_log.record(pod, src, GATED, event)
                return False
        self.backoff_q.add(qpi)
        self.move_log.record(pod, src, BACKOFF_Q, event, self.backoff_q.get_backoff_time(qpi))
        return True

    def requeue_with_strategy(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, event: str,
                              src: str | None) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns where the pod went."""
        if strategy == QueueingStrategy.QUEUE_SKIP:
            self.unschedulable_pods.add_or_update(qpi)
            if src not in (UNSCHEDULABLE, GATED):
                self.move_log.record(qpi.pod, src, GATED if qpi.gated else UNSCHEDULABLE, event)
            return UNSCHEDULABLE
        if strategy == QueueingStrategy.QUEUE_AFTER_BACKOFF and self.backoff_q.is_pod_backing_off(qpi):
            return BACKOFF_Q if self.move_to_backoff_q(qpi, event, src) else UNSCHEDULABLE
        return ACTIVE_Q if self.move_to_active_q(qpi, event, src) else UNSCHEDULABLE

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                            pre_check: Callable[[Pod], bool] | None = None) -> int:
        """A cluster event happened (upstream ``MoveAllToActiveOrBackoffQueue``): move the
        pool pods it may help; returns how many moved."""
        if not self.hints.is_event_of_interest(event):
            return 0
        pods = [q for q in self.unschedulable_pods if pre_check is None or pre_check(q.pod)]
        return self.move_pods_to_active_or_backoff_queue(pods, event, old, new)

    def move_on_event(self, event: ClusterEvent, old: Any = None, new: Any = None,
                      pre_check: Callable[[Pod], bool] | None = None) -> int:
        """:meth:`move_all_to_active_or_backoff_queue` for callers that may not know the
        event's objects: without any, the hints of the rejecting plugins registered for the
        event cannot judge it and count as Queue."""
        if old is not None or new is not None:
            return self.move_all_to_active_or_backoff_queue(event, old, new, pre_check)
        if not self.hints.is_event_of_interest(event):
            return 0
        pods = [q for q in self.unschedulable_pods if pre_check is None or pre_check(q.pod)]
        return self.move_pods_to_active_or_backoff_queue(pods, event, None, None, blind=True)

    def move_pods_to_active_or_backoff_queue(self, pods: Iterable[QueuedPodInfo], event: ClusterEvent,
                                             old: Any, new: Any, blind: bool = False) -> int:
        if not self.hints.is_event_of_interest(event):
            return 0
        label = ce.event_label(event)
        moved = 0
        for qpi in pods:
            if qpi.gated and not ce.match_any_cluster_event(
                    event, self.hints.plugin_events.get(qpi.gating_plugin, ())):
                continue  # its gating plugin does not care about this event
            strategy = self.hints.is_pod_worth_requeuing(qpi, event, old, new, blind)
            if strategy == QueueingStrategy.QUEUE_SKIP:
                continue
            src = GATED if qpi.gated else UNSCHEDULABLE
            self.unschedulable_pods.delete(qpi.pod)
            if self.requeue_with_strategy(qpi, strategy, label, src) != UNSCHEDULABLE:
                moved += 1
        self.move_request_cycle = self.active_q.scheduling_cycle
        self.active_q.add_event_if_any_in_flight(old, new, event)
        return moved
