"""Cluster events: pod and node updates turned into events, ported from upstream
``framework/events_test.go`` (Test_podSchedulingPropertiesChange,
TestNodeSchedulingPropertiesChange); event matching and labels as upstream's
``MatchClusterEvents`` and ``ClusterEvent.Label`` define them (``framework/types.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.events import ActionType as A
from kubesched.framework.events import ClusterEvent, Resource
from kubesched.queue.clusterevents import (
    EVENT_ASSIGNED_POD_ADD, EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_UPDATE, event_label,
    is_pod_updated, match_cluster_events, node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from kubesched.testing.wrappers import make_node, make_pod

U, AP = Resource.UnscheduledPod, Resource.AssignedPod


def _with_status(p: Pod, **status: Any) -> Pod:
    raw = copy.deepcopy(p.raw)
    raw.setdefault("status", {}).update(status)
    return Pod.from_dict(raw)


CLAIM_A = {"name": "my-claim", "resourceClaimName": "claim"}
CLAIM_B = {"name": "my-claim-2", "resourceClaimName": "claim-2"}


@pytest.mark.parametrize("new,old,want", [
    (make_pod().label("foo", "bar").node("node").obj(), make_pod().label("foo", "bar2").node("node").obj(),
     [(AP, A.UpdatePodLabel)]),
    (make_pod().label("foo", "bar").obj(), make_pod().label("foo", "bar2").obj(), [(U, A.UpdatePodLabel)]),
    (make_pod().req(cpu="100m").obj(), make_pod().req(cpu="101m").obj(), [(U, A.UpdatePodScaleDown)]),
    (make_pod().req(cpu="101m").obj(), make_pod().req(cpu="100m").obj(), [(U, A.Update)]),
    (make_pod().label("foo", "bar").req(cpu="100m").obj(), make_pod().req(cpu="101m").obj(),
     [(U, A.UpdatePodLabel), (U, A.UpdatePodScaleDown)]),
    (make_pod().annotation("foo", "bar").obj(), make_pod().annotation("foo", "bar2").obj(), [(U, A.Update)]),
    (make_pod().obj(), make_pod().gate("foo").obj(), [(U, A.UpdatePodSchedulingGatesEliminated)]),
    (make_pod().gate("foo").obj(), make_pod().gate("foo").gate("bar").obj(), [(U, A.Update)]),
    (make_pod().toleration("key").toleration("key2").obj(), make_pod().toleration("key").obj(),
     [(U, A.UpdatePodToleration)]),
    (_with_status(make_pod().obj(), resourceClaimStatuses=[CLAIM_A]), make_pod().obj(),
     [(U, A.UpdatePodGeneratedResourceClaim)]),
    (_with_status(make_pod().obj(), resourceClaimStatuses=[CLAIM_A, CLAIM_B]),
     _with_status(make_pod().obj(), resourceClaimStatuses=[CLAIM_B, CLAIM_A]),
     [(U, A.UpdatePodGeneratedResourceClaim)]),
], ids=["assigned pod is updated", "only label is updated", "request is scaled down",
        "request is scaled up", "both request and label", "untracked properties",
        "scheduling gate is eliminated", "gate removed but not eliminated", "tolerations updated",
        "claim statuses change (DRA on)", "claim statuses swapped"])
def test_pod_scheduling_properties_change(new: Pod, old: Pod, want: list[tuple[Resource, A]]) -> None:
    """Test_podSchedulingPropertiesChange."""
    assert pod_scheduling_properties_change(new, old) == [ClusterEvent(r, a) for r, a in want]


def _node(**kw: Any) -> Node:
    w = make_node().name("n").capacity(cpu="1", memory="100m", **{"example.com/foo": kw.pop("foo", "1")})
    if kw.get("unschedulable"):
        w = w.unschedulable(True)
    for k, v in (kw.get("labels") or {}).items():
        w = w.label(k, v)
    if "taint" in kw:
        w = w.taint("node.kubernetes.io/unschedulable", kw["taint"])
    raw = w.raw()
    if "annotation" in kw:
        raw["metadata"]["annotations"] = {"foo": kw["annotation"]}
    if kw.get("ready"):
        raw["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "Ready"}]
    if "declared" in kw:
        raw["status"]["declaredFeatures"] = kw["declared"]
    return Node.from_dict(raw)


@pytest.mark.parametrize("new,old,want", [
    (_node(), _node(), []),
    (_node(), _node(unschedulable=True), [A.UpdateNodeTaint]),
    (_node(foo="1"), _node(foo="2"), [A.UpdateNodeAllocatable]),
    (_node(labels={"foo": "bar"}), _node(labels={"foo": "fuz"}), [A.UpdateNodeLabel]),
    (_node(taint=""), _node(taint="foo"), [A.UpdateNodeTaint]),
    (_node(annotation="bar"), _node(annotation="fuz"), [A.UpdateNodeAnnotation]),
    (_node(), _node(ready=True), [A.UpdateNodeCondition]),
    (_node(labels={"foo": "bar"}, taint=""), _node(taint="foo"), [A.UpdateNodeLabel, A.UpdateNodeTaint]),
    (_node(declared=["A", "B"]), _node(declared=["A"]), [A.UpdateNodeDeclaredFeature]),
    (_node(declared=["A"]), _node(declared=["A"]), []),
], ids=["no specific change", "only spec.unschedulable", "only allocatable", "only label", "only taint",
        "only annotation", "only condition", "label and taint", "only declared features",
        "same declared features"])
def test_node_scheduling_properties_change(new: Node, old: Node, want: list[A]) -> None:
    """TestNodeSchedulingPropertiesChange; the declared-features cases follow KEP-5328 (the
    UpdateNodeDeclaredFeature action fires when ``status.declaredFeatures`` is modified)."""
    assert node_scheduling_properties_change(new, old) == [ClusterEvent(Resource.Node, a) for a in want]


@pytest.mark.parametrize("registered,incoming,want", [
    (ClusterEvent(Resource.Node, A.Update), ClusterEvent(Resource.Node, A.UpdateNodeLabel), True),
    (ClusterEvent(Resource.Node, A.UpdateNodeLabel), ClusterEvent(Resource.Node, A.Update), False),
    (ClusterEvent(Resource.Node, A.UpdateNodeLabel),
     ClusterEvent(Resource.Node, A.UpdateNodeLabel | A.UpdateNodeTaint), False),
    (ClusterEvent(Resource.Pod, A.Add), EVENT_ASSIGNED_POD_ADD, True),
    (ClusterEvent(Resource.Pod, A.Update), ClusterEvent(U, A.UpdatePodLabel), True),
    (ClusterEvent(AP, A.Add), ClusterEvent(Resource.Pod, A.Add), False),
    (ClusterEvent(Resource.WildCard, A.Add), ClusterEvent(Resource.Node, A.Add), True),
    (ClusterEvent(Resource.WildCard, A.All), ClusterEvent(Resource.Node, A.UpdateNodeTaint), True),
    (ClusterEvent(Resource.Node, A.All), EVENT_UNSCHEDULABLE_TIMEOUT, False),
    (ClusterEvent(Resource.Node, A.Add), ClusterEvent(Resource.Node, A.Delete), False),
], ids=["general registration, specific event", "specific registration, general event",
        "event broader than registration", "Pod matches AssignedPod", "Pod update matches unscheduled pod",
        "AssignedPod registration, Pod event", "wildcard resource", "wildcard registration",
        "wildcard event only matches wildcard", "other action"])
def test_match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent, want: bool) -> None:
    """MatchClusterEvents: the incoming event must be the same or more specific."""
    assert match_cluster_events(registered, incoming) is want


def test_event_labels() -> None:
    """ClusterEvent.Label: custom label, else resource and action (upstream metric labels)."""
    assert event_label(EVENT_ASSIGNED_POD_ADD) == "AssignedPodAdd"
    assert event_label(EVENT_UNSCHEDULED_POD_UPDATE) == "UnschedulablePodUpdate"
    assert event_label(EVENT_UNSCHEDULABLE_TIMEOUT) == "UnschedulableTimeout"
    assert event_label(ClusterEvent(Resource.Node, A.UpdateNodeTaint)) == "NodeUpdateNodeTaint"


def test_is_pod_updated_ignores_status() -> None:
    """isPodUpdated strips status (nominatedNodeName), resourceVersion and generation."""
    p = make_pod().name("p").obj()
    nominated = _with_status(p, nominatedNodeName="n1")
    raw = copy.deepcopy(p.raw)
    raw["metadata"].update(resourceVersion="7", generation=3)
    assert not is_pod_updated(p, nominated)
    assert not is_pod_updated(p, Pod.from_dict(raw))
    assert is_pod_updated(p, make_pod().name("p").label("a", "b").obj())
