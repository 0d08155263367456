"""In-flight pods and the events received during their attempt, ported from upstream v1.34
``scheduling_queue_test.go`` (Test_InFlightPods with QueueingHints on,
TestPriorityQueue_UpdateWhenInflight) and ``active_queue_test.go`` (TestClose's bookkeeping).
PersistentVolume, PVC and CSINode events are played by PodGroup Add, PVC Add and Namespace
Update (kubesched has no PV/CSINode resources)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from queue_helpers import NODE_ADD, FakeClock, hint_map, new_queue, pod, queue_hint, skip_hint

from kubesched.api.objects import Pod
from kubesched.framework.events import ActionType, ClusterEvent, Resource
from kubesched.framework.interface import QueuedPodInfo
from kubesched.queue.active_queue import InFlightEvent
from kubesched.queue.clusterevents import (
    EVENT_ASSIGNED_POD_ADD, EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_UPDATE,
)
from kubesched.testing.wrappers import make_pod

PV_ADD = ClusterEvent(Resource.PodGroup, ActionType.Add)
PV_UPDATE = ClusterEvent(Resource.PodGroup, ActionType.Update)
PVC_ADD = ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add)
CSI_NODE_UPDATE = ClusterEvent(Resource.Namespace, ActionType.Update)

POD1 = pod("targetpod", "default", "pod1")
POD2 = pod("targetpod2", "default", "pod2")
POD3 = pod("targetpod3", "default", "pod3")


@dataclass
class Case:
    initial: list[Pod]
    actions: list[tuple[str, Any]]
    hints: dict[ClusterEvent, list[tuple[str, Any]]]
    in_flight: list[Pod] = field(default_factory=list)
    log: list[Any] = field(default_factory=list)
    active: list[str] | None = None
    backoff: list[str] | None = None
    unschedulable: list[str] = field(default_factory=list)


def lookup(p: Pod, *plugins: str, pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    return QueuedPodInfo(pod=p, unschedulable_plugins=set(plugins), pending_plugins=set(pending))


ALL_QUEUE = {PV_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("fooPlugin1", queue_hint)],
             PVC_ADD: [("fooPlugin1", queue_hint)], CSI_NODE_UPDATE: [("fooPlugin1", queue_hint)]}

CASES = {
    "Pod and interested events are registered in inFlightPods/inFlightEvents": Case(
        [POD1], [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("event", PV_UPDATE)],
        {PV_ADD: [("fooPlugin1", queue_hint)]}, in_flight=[POD1], log=[POD1, PV_ADD]),
    "Pod, registered in inFlightPods, is enqueued back to backoffQ": Case(
        [POD1, POD2], [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2),
                       ("event", NODE_ADD), ("enqueue", lookup(POD1))],
        ALL_QUEUE, in_flight=[POD2], log=[POD2, NODE_ADD], backoff=["targetpod"]),
    "All Pods registered in inFlightPods are enqueued back to activeQ": Case(
        [POD1, POD2], [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2),
                       ("event", NODE_ADD), ("enqueue", lookup(POD1)), ("event", CSI_NODE_UPDATE),
                       ("enqueue", lookup(POD2))],
        ALL_QUEUE, backoff=["targetpod", "targetpod2"]),
    "One intermediate Pod registered in inFlightPods is enqueued back to activeQ": Case(
        [POD1, POD2, POD3], [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2),
                             ("event", NODE_ADD), ("pop", POD3), ("event", EVENT_ASSIGNED_POD_ADD),
                             ("enqueue", lookup(POD2))],
        {PV_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("fooPlugin1", queue_hint)],
         EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        in_flight=[POD1, POD3], log=[POD1, PV_ADD, NODE_ADD, POD3, EVENT_ASSIGNED_POD_ADD], backoff=["targetpod2"]),
    "events before popping Pod are ignored when Pod is enqueued back to queue": Case(
        [POD1], [("event", EVENT_UNSCHEDULABLE_TIMEOUT), ("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", lookup(POD1, "fooPlugin1"))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]}, unschedulable=["targetpod"]),
    "pod is enqueued to backoff if no failed plugin": Case(
        [POD1], [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", lookup(POD1))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]}, backoff=["targetpod"]),
    "pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable": Case(
        [POD1], [("pop", POD1), ("event", NODE_ADD), ("enqueue", lookup(POD1, "fooPlugin1"))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]}, unschedulable=["targetpod"]),
    "pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip": Case(
        [POD1], [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", lookup(POD1, "fooPlugin1"))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]}, unschedulable=["targetpod"]),
    "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue": Case(
        [POD1], [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", lookup(POD1, "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",)))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint),
                                  ("fooPlugin1", queue_hint)]}, active=["targetpod"]),
    "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue": Case(
        [POD1], [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", lookup(POD1, "fooPlugin1", "fooPlugin2"))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin2", skip_hint), ("fooPlugin1", queue_hint)]}, backoff=["targetpod"]),
    "pod is enqueued to activeQ because the pending plugin's hint says Queue for an event received "
    "while another pod was in flight": Case(
        [POD1, POD2], [("pop", POD1), ("event", NODE_ADD), ("pop", POD2), ("event", EVENT_ASSIGNED_POD_ADD),
                       ("enqueue", lookup(POD1)),
                       ("enqueue", lookup(POD2, "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",)))],
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint),
                                  ("fooPlugin1", queue_hint)]}, active=["targetpod2"], backoff=["targetpod"]),
    "Pop is made twice for the same Pod, but the cleanup still happen correctly": Case(
        [POD1, POD2], [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2),
                       ("bug", POD1), ("create", POD3), ("pop", POD3), ("empty", None), ("event", NODE_ADD),
                       ("enqueue", lookup(POD1)), ("event", CSI_NODE_UPDATE), ("enqueue", lookup(POD2)),
                       ("enqueue", lookup(POD3))],
        ALL_QUEUE, backoff=["targetpod", "targetpod2", "targetpod3"]),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_in_flight_pods(case: Case) -> None:
    """Test_InFlightPods."""
    clock = FakeClock()
    q = new_queue(clock, hint_map(case.hints))
    for p in case.initial:
        q.add(p)
        clock.step(1)
    for kind, arg in case.actions:
        if kind == "pop":
            qpi = q.pop()
            assert qpi is not None and qpi.pod.uid == arg.uid
        elif kind == "event":
            q.move_all_to_active_or_backoff_queue(arg)
        elif kind == "enqueue":
            assert q.add_unschedulable(arg) is None
        elif kind == "create":
            q.add(arg)
        elif kind == "bug":  # put a pod being scheduled back into activeQ
            q.active_q.add(QueuedPodInfo(pod=arg))
        elif kind == "empty":
            assert len(q.active_q) == 0
    assert sorted(p.uid for p in q.active_q.in_flight_pods()) == sorted(p.uid for p in case.in_flight)
    log = [e.event if isinstance(e, InFlightEvent) else e for e in q.active_q.in_flight_log()]
    assert log == case.log
    if case.active is not None:
        assert sorted(x.pod.name for x in q.active_q.infos()) == case.active
    if case.backoff is not None:
        assert sorted(x.pod.name for x in q.backoff_q.infos()) == case.backoff
    for name in case.unschedulable:
        assert any(x.pod.name == name for x in q.unschedulable_pods)


def test_update_when_in_flight() -> None:
    """TestPriorityQueue_UpdateWhenInflight: an update received while the pod was being
    scheduled may help it, so it is requeued (backoffQ) with the updated object."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({EVENT_UNSCHEDULED_POD_UPDATE: [("fakePlugin", queue_hint)]}))
    test_pod = pod("test-pod", "test-ns", "test-uid")
    q.add(test_pod)
    assert q.pop() is not None
    updated = make_pod().name("test-pod").namespace("test-ns").uid("test-uid").toleration(
        "foo", operator="Exists", effect="NoSchedule").obj()
    q.update(test_pod, updated)
    assert q.add_unschedulable(QueuedPodInfo(pod=updated, unschedulable_plugins={"fakePlugin"})) is None
    got = q.backoff_q.get(updated)
    assert got is not None and got.pod is updated


def test_done_forgets_events_no_pod_needs() -> None:
    """TestClose's bookkeeping: two pods in flight and two events give four entries; once
    both are done nothing is kept."""
    q = new_queue(hints=hint_map({NODE_ADD: [("p", queue_hint)], CSI_NODE_UPDATE: [("p", queue_hint)]}))
    p1, p2 = pod("p1", "foo", "p1"), pod("p2", "bar", "p2")
    q.add(p1)
    q.add(p2)
    assert q.pop() is not None and q.pop() is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.move_all_to_active_or_backoff_queue(CSI_NODE_UPDATE)
    assert len(q.active_q.in_flight_log()) == 4 and len(q.active_q.in_flight_pods()) == 2
    q.done(p1.uid)
    q.done(p2.uid)
    assert q.active_q.in_flight_log() == [] and q.active_q.in_flight_pods() == []
