"""QueueingHints: may this event make that unschedulable pod schedulable?

Built once per profile from the events each plugin registered (upstream
``buildQueueingHintMap``): an event without a hint function always says Queue, and a
plugin that registers Node/Add without Node/UpdateNodeTaint also gets UpdateNodeTaint.
:meth:`QueueingHints.is_pod_worth_requeuing` asks only the plugins that rejected the pod
(upstream ``isPodWorthRequeuing``); a pending plugin's Queue skips the backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.events import (
    ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, QueueingHintFn, Resource,
)
from kubesched.framework.interface import QueuedPodInfo
from kubesched.queue.clusterevents import event_label, is_wildcard, match_cluster_events

log = logging.getLogger(__name__)

NODE_TAINT_UPDATE = ClusterEvent(Resource.Node, ActionType.UpdateNodeTaint)


class QueueingStrategy(IntEnum):
    """Where a pod goes after an event (upstream ``queueingStrategy``)."""

    QUEUE_SKIP = 0  # stay in the unschedulable pool
    QUEUE_AFTER_BACKOFF = 1  # backoffQ while backing off, else activeQ
    QUEUE_IMMEDIATELY = 2  # activeQ


def default_queueing_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    """The hint of an event registered without a hint function."""
    return QueueingHint.Queue


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    plugin_name: str
    fn: QueueingHintFn


QueueingHintMap = dict[ClusterEvent, list[QueueingHintFunction]]


def build_queueing_hint_map(events_by_plugin: Mapping[str, Sequence[ClusterEventWithHint]]) -> QueueingHintMap:
    """One profile's map from registered event to the hint functions of its plugins."""
    m: QueueingHintMap = {}
    for plugin, events in events_by_plugin.items():
        if not events:
            continue  # e.g. a pod rejected only by itself (scheduling gates): moved by Update
        node_added = taint_updated = False
        for ev in events:
            if ev.event.resource == Resource.Node:
                node_added |= bool(ev.event.action & ActionType.Add)
                taint_updated |= bool(ev.event.action & ActionType.UpdateNodeTaint)
            m.setdefault(ev.event, []).append(QueueingHintFunction(plugin, ev.hint or default_queueing_hint))
        if node_added and not taint_updated:
            m.setdefault(NODE_TAINT_UPDATE, []).append(QueueingHintFunction(plugin, default_queueing_hint))
    return m


class QueueingHints:
    """The hint maps of every profile (keyed by scheduler name)."""

    def __init__(self, per_profile: Mapping[str, QueueingHintMap]) -> None:
        self.per_profile = {name: dict(m) for name, m in per_profile.items()}
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        self._interest: dict[ClusterEvent, bool] = {}
        for m in self.per_profile.values():
            for ev, fns in m.items():
                for f in fns:
                    self.plugin_events.setdefault(f.plugin_name, []).append(ev)

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Whether some plugin of some profile registered for ``event`` (memoised: the
        registrations are fixed once the profiles are built, and every bind asks)."""
        ok = self._interest.get(event)
        if ok is None:
            ok = self._interest[event] = is_wildcard(event) or any(
                match_cluster_events(registered, event) for m in self.per_profile.values() for registered in m)
        return ok

    def is_pod_worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                               blind: bool = False) -> QueueingStrategy:
        """``blind``: the event's objects are unknown, so no hint function can judge it;
        each one counts as Queue (as upstream counts a hint function that fails)."""
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        if is_wildcard(event):
            # a wildcard event carrying a pod is meant for that pod only
            if new is not None and (not isinstance(new, Pod) or new.uid != qpi.pod.uid):
                return QueueingStrategy.QUEUE_SKIP
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        hint_map = self.per_profile.get(qpi.pod.scheduler_name)
        if hint_map is None:
            log.error("no queueing hints for profile %r (pod %s)", qpi.pod.scheduler_name, qpi.pod.key)
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        for registered, fns in hint_map.items():
            if not match_cluster_events(registered, event):
                continue
            for f in fns:
                if f.plugin_name not in rejectors:
                    continue
                if not blind and self._hint(f, qpi, event, old, new) == QueueingHint.QueueSkip:
                    continue
                if f.plugin_name in qpi.pending_plugins:
                    return QueueingStrategy.QUEUE_IMMEDIATELY
                if not qpi.pending_plugins:
                    return QueueingStrategy.QUEUE_AFTER_BACKOFF
                strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
        return strategy

    @staticmethod
    def _hint(f: QueueingHintFunction, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
              ) -> QueueingHint:
        try:
            return f.fn(qpi.pod, old, new)
        except Exception:  # noqa: BLE001 - upstream treats a failing hint as Queue
            log.exception("queueing hint of %s failed for %s on %s", f.plugin_name, qpi.pod.key,
                          event_label(event))
            return QueueingHint.Queue
