"""Cluster events as the scheduling queue sees them (upstream ``framework/events.go`` and the
event matching of ``framework/types.go``).

The queue moves a pod out of the unschedulable pool only for an event that one of the
plugins that rejected it registered. This module names the events the queue itself raises
(``UnschedulableTimeout``, ``ForceActivate``, the pod events of the informers), says when a
registered event matches an incoming one (an incoming event must be the same or more
specific), and turns an object update into events (``UpdatePodLabel``, ``UpdateNodeTaint``,
...) the way upstream's informer handlers do.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.events import ActionType, ClusterEvent, Resource

# Labels of the queue's own moves (upstream's special event labels).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(Resource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(Resource.AssignedPod, ActionType.Update)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(Resource.AssignedPod, ActionType.Delete)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(Resource.UnscheduledPod, ActionType.Add)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(Resource.UnscheduledPod, ActionType.Update)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(Resource.UnscheduledPod, ActionType.Delete)
EVENT_NODE_ADD = ClusterEvent(Resource.Node, ActionType.Add)
EVENT_NODE_DELETE = ClusterEvent(Resource.Node, ActionType.Delete)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(Resource.WildCard, ActionType.All, UNSCHEDULABLE_TIMEOUT)
EVENT_FORCE_ACTIVATE = ClusterEvent(Resource.WildCard, ActionType.All, FORCE_ACTIVATE)

_ACTION_NAMES: dict[int, str] = {
    int(ActionType.Add): "Add", int(ActionType.Delete): "Delete",
    int(ActionType.UpdateNodeAllocatable): "UpdateNodeAllocatable",
    int(ActionType.UpdateNodeLabel): "UpdateNodeLabel", int(ActionType.UpdateNodeTaint): "UpdateNodeTaint",
    int(ActionType.UpdateNodeCondition): "UpdateNodeCondition",
    int(ActionType.UpdateNodeAnnotation): "UpdateNodeAnnotation",
    int(ActionType.UpdatePodLabel): "UpdatePodLabel", int(ActionType.UpdatePodScaleDown): "UpdatePodScaleDown",
    int(ActionType.UpdatePodToleration): "UpdatePodToleration",
    int(ActionType.UpdatePodSchedulingGatesEliminated): "UpdatePodSchedulingGatesEliminated",
    int(ActionType.UpdatePodGeneratedResourceClaim): "UpdatePodGeneratedResourceClaim",
    int(ActionType.UpdateNodeDeclaredFeature): "UpdateNodeDeclaredFeature",
    int(ActionType.All): "All", int(ActionType.Update): "Update",
}
# upstream spells the internal resource of unscheduled pods "UnschedulablePod" in labels
_RESOURCE_NAMES = {Resource.UnscheduledPod: "UnschedulablePod"}


def event_label(ev: ClusterEvent) -> str:
    """Upstream ``ClusterEvent.Label()``: the custom label, else resource and action."""
    if ev.label:
        return ev.label
    return _RESOURCE_NAMES.get(ev.resource, ev.resource.value) + _ACTION_NAMES.get(int(ev.action), "")


def is_wildcard(ev: ClusterEvent) -> bool:
    return ev.resource == Resource.WildCard and int(ev.action) == int(ActionType.All)


def _match_resources(registered: Resource, incoming: Resource) -> bool:
    return (registered == Resource.WildCard or registered == incoming
            or (registered == Resource.Pod and incoming in (Resource.AssignedPod, Resource.UnscheduledPod)))


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Upstream ``MatchClusterEvents``: ``incoming`` is the same as or more specific than
    ``registered`` (a wildcard incoming event matches only a wildcard registration)."""
    if is_wildcard(registered):
        return True
    a, b = int(registered.action), int(incoming.action)
    return _match_resources(registered.resource, incoming.resource) and a & b != 0 and b <= a


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    return any(match_cluster_events(r, incoming) for r in registered)


# -- pod and node updates -------------------------------------------------------------------
def _scaled_down(new: Pod, old: Pod) -> bool:
    for name, old_req in old.requests.items():
        if name not in new.requests or old_req > new.requests[name]:
            return True
    return False


def _claim_statuses(p: Pod) -> tuple[Any, Any]:
    status = p.raw.get("status") or {}
    return status.get("resourceClaimStatuses") or [], status.get("extendedResourceClaimStatus")


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: the specific update events of a pod
    update, or the generic Update when none applies."""
    res = Resource.AssignedPod if new.node_name else Resource.UnscheduledPod
    actions = []
    if new.labels != old.labels:
        actions.append(ActionType.UpdatePodLabel)
    if _scaled_down(new, old):
        actions.append(ActionType.UpdatePodScaleDown)
    if not new.scheduling_gates and old.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new.tolerations) != len(old.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if _claim_statuses(new) != _claim_statuses(old):  # DynamicResourceAllocation is GA in v1.34
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        actions.append(ActionType.Update)
    return [ClusterEvent(res, a) for a in actions]


def _conditions(raw: Mapping[str, Any]) -> dict[str, Any]:
    status = raw.get("status") or {}
    return {str(c.get("type")): c.get("status") for c in status.get("conditions") or ()
            if isinstance(c, Mapping)}


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """Upstream ``NodeSchedulingPropertiesChange`` (no event when nothing relevant changed)."""
    actions = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        actions.append(ActionType.UpdateNodeTaint)
    if new.allocatable != old.allocatable:
        actions.append(ActionType.UpdateNodeAllocatable)
    if new.labels != old.labels:
        actions.append(ActionType.UpdateNodeLabel)
    if new.taints != old.taints:
        actions.append(ActionType.UpdateNodeTaint)
    if _conditions(new.raw) != _conditions(old.raw):
        actions.append(ActionType.UpdateNodeCondition)
    if new.annotations != old.annotations:
        actions.append(ActionType.UpdateNodeAnnotation)
    if new.declared_features != old.declared_features:
        actions.append(ActionType.UpdateNodeDeclaredFeature)
    return [ClusterEvent(Resource.Node, a) for a in actions]


def _strip(raw: Mapping[str, Any]) -> dict[str, Any]:
    d = copy.deepcopy(dict(raw))
    meta = dict(d.get("metadata") or {})
    for k in ("resourceVersion", "generation", "managedFields", "finalizers"):
        meta.pop(k, None)
    d["metadata"] = meta
    status = d.get("status") or {}
    d["status"] = {k: status[k] for k in ("resourceClaimStatuses", "extendedResourceClaimStatus")
                   if k in status}
    return d


def is_pod_updated(old: Pod, new: Pod) -> bool:
    """Upstream ``isPodUpdated``: did anything but the status (and resourceVersion,
    generation, managed fields, finalizers) change?"""
    return _strip(old.raw) != _strip(new.raw)
