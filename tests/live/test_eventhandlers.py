"""kubesched.scheduler.eventhandlers: upstream's informer handlers over a Scheduler's cache and queue.

Cases ported from upstream v1.34 ``pkg/scheduler/eventhandlers_test.go``
(TestEventHandlers_MoveToActiveOnNominatedNodeUpdate, TestUpdateAssignedPodInCache), plus the
filtering of upstream's two pod handlers (addAllEventHandlers) and skipPodSchedule."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.cluster.inprocess import InProcessCluster
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.framework.events import ActionType, ClusterEvent, QueueingHint, Resource
from kubesched.framework.runtime.waiting import WaitingPod
from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue.clusterevents import EVENT_ASSIGNED_POD_DELETE
from kubesched.queue.hints import QueueingHintFunction
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.wrappers import make_node, make_pod

PROFILE = "test-scheduler"
LOW, MID, HIGH = 0, 100, 1000


class Clock:
    t = 1000.0

    def now(self) -> float:
        return self.t


def new_scheduler(hints: dict[ClusterEvent, list[QueueingHintFunction]] | None = None) -> tuple[Scheduler, EventHandlers]:
    clock = Clock()
    cluster = InProcessCluster(clock.now)
    sched = Scheduler(Cache(), cluster, cluster, clock.now, random.Random(0))
    sched.profiles[PROFILE] = None  # type: ignore[assignment]  # only the names matter here
    # initial and max backoff 0: upstream's "disable backoff queue"
    sched.queue = SchedulingQueue(PrioritySort().sort_key, clock.now, hint_maps={PROFILE: hints or {}},
                                  initial_backoff=0.0, max_backoff=0.0)
    return sched, EventHandlers(sched)


def pod(name: str, ns: str, uid: str, priority: int = 0, nominated: str = "", node: str = "",
        scheduler: str = PROFILE, rv: str = "") -> Pod:
    w = make_pod().name(name).namespace(ns).uid(uid).priority(priority).scheduler_name(scheduler)
    if nominated:
        w = w.nominated_node(nominated)
    if node:
        w = w.node(node)
    if rv:
        w = w.set("metadata.resourceVersion", rv)
    return w.obj()


def changed(p: Pod, **fields: Any) -> Pod:
    raw = copy.deepcopy(p.raw)
    for path, value in fields.items():
        d = raw
        parts = path.split("__")
        for part in parts[:-1]:
            d = d.setdefault(part, {})
        d[parts[-1]] = value
    return Pod.from_dict(raw, validate=False)


def make_unschedulable(sched: Scheduler, pods: list[Pod], plugin: str = "fooPlugin1") -> None:
    q = sched.queue
    assert q is not None
    for p in pods:
        q.add(p)
        qpi = q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = {plugin}
        assert q.add_unschedulable(qpi) is None


def active_or_backoff(sched: Scheduler) -> set[str]:
    assert sched.queue is not None
    return {q.pod.name for q in sched.queue.active_q.infos() + sched.queue.backoff_q.infos()}


# -- TestEventHandlers_MoveToActiveOnNominatedNodeUpdate -------------------------------------------
HPP = pod("hpp", "ns1", "hppns1", HIGH)
MPP_NOMINATED = pod("mpp", "ns2", "mppns1", MID, nominated="node1")
SMPP = pod("smpp", "ns3", "mppns2", MID)
LPP = pod("lpp", "ns4", "lppns1", LOW)


def hint_for_pod_delete(p: Any, old: Any, new: Any) -> QueueingHint:
    """Queue only when the deleted pod had a nominated node."""
    return QueueingHint.Queue if old.nominated_node_name else QueueingHint.QueueSkip


NOMINATION_CASES: list[tuple[str, Callable[[EventHandlers], None], set[str]]] = [
    ("Update of a nominated node name to a different value should trigger rescheduling of lower priority pods",
     lambda h: h.update_pod_in_scheduling_queue(
         MPP_NOMINATED, changed(MPP_NOMINATED, status__nominatedNodeName="node2", metadata__resourceVersion="1")),
     {"lpp", "smpp", "mpp"}),
    ("Removal of a nominated node name should trigger rescheduling of lower priority pods",
     lambda h: h.update_pod_in_scheduling_queue(
         MPP_NOMINATED, changed(MPP_NOMINATED, status__nominatedNodeName="", metadata__resourceVersion="1")),
     {"lpp", "smpp", "mpp"}),
    ("Removal of a pod that had nominated node name should trigger rescheduling of lower priority pods",
     lambda h: h.delete_pod_from_scheduling_queue(MPP_NOMINATED), {"lpp", "smpp"}),
    ("Addition of a nominated node name to the high priority pod that did not have it before shouldn't "
     "trigger rescheduling",
     lambda h: h.update_pod_in_scheduling_queue(
         HPP, changed(HPP, status__nominatedNodeName="node2", metadata__resourceVersion="1")),
     set()),
]


@pytest.mark.parametrize("update, want", [c[1:] for c in NOMINATION_CASES], ids=[c[0] for c in NOMINATION_CASES])
def test_move_to_active_on_nominated_node_update(update: Callable[[EventHandlers], None], want: set[str]) -> None:
    """Upstream TestEventHandlers_MoveToActiveOnNominatedNodeUpdate (queueing hints on)."""
    sched, h = new_scheduler({EVENT_ASSIGNED_POD_DELETE: [QueueingHintFunction("fooPlugin1", hint_for_pod_delete)]})
    make_unschedulable(sched, [HPP, MPP_NOMINATED, SMPP, LPP])
    assert active_or_backoff(sched) == set()
    update(h)
    assert active_or_backoff(sched) == want


# -- TestUpdateAssignedPodInCache ------------------------------------------------------------------
def pod_with_port(uid: str, node: str, port: int) -> Pod:
    return make_pod().name("pod").namespace("default").uid(uid).node(node).host_port(port).obj()


@pytest.mark.parametrize("old, new", [
    (pod_with_port("oldUID", "node", 80), pod_with_port("oldUID", "node", 8080)),
    (pod_with_port("oldUID", "node", 80), pod_with_port("newUID", "node", 8080)),
], ids=["pod updated with the same UID", "pod updated with different UIDs"])
def test_update_assigned_pod_in_cache(old: Pod, new: Pod) -> None:
    """Upstream TestUpdateAssignedPodInCache."""
    sched, h = new_scheduler()
    h.on_pod_add(old)
    h.on_pod_update(old, new)
    if old.uid != new.uid:
        assert sched.cache.get_pod(old.uid) is None
    cur = sched.cache.get_pod(new.uid)
    assert cur is not None and cur.uid == new.uid
    assert [p.uid for p in sched.cache.nodes["node"].pods] == [new.uid]


# -- the two filtered pod handlers -----------------------------------------------------------------
def test_bind_moves_a_pod_from_the_queue_to_the_cache() -> None:
    """A bind is an update from unassigned to assigned: a delete for the queue handler and an
    add for the cache handler (client-go's FilteringResourceEventHandler); the pod is no
    longer in flight."""
    sched, h = new_scheduler()
    assert sched.queue is not None
    p = pod("p", "ns", "p-uid", rv="1")
    h.on_pod_add(p)
    assert sched.queue.where(p) == "activeQ"
    qpi = sched.queue.pop()
    assert qpi is not None and sched.queue.where(p) == "inFlight"
    sched.cache.assume_pod(changed(p, spec__nodeName="n1"))
    bound = changed(p, spec__nodeName="n1", metadata__resourceVersion="2")
    h.on_pod_update(p, bound)
    assert sched.queue.where(p) is None and sched.queue.in_flight_uids() == []
    assert not sched.cache.is_assumed(bound) and sched.cache.get_pod("p-uid") is bound


def test_pods_of_other_schedulers_are_not_queued_but_count_when_bound() -> None:
    sched, h = new_scheduler()
    assert sched.queue is not None
    other = pod("o", "ns", "o-uid", scheduler="someone-else")
    h.on_pod_add(other)
    assert sched.queue.pending() == 0
    h.on_pod_update(other, changed(other, spec__nodeName="n1"))
    assert sched.cache.get_pod("o-uid") is not None
    h.on_pod_delete(changed(other, spec__nodeName="n1"))
    assert sched.cache.get_pod("o-uid") is None


def test_update_with_the_same_resource_version_is_ignored() -> None:
    """upstream #96071: an update event that carries identical objects changes nothing."""
    sched, h = new_scheduler()
    assert sched.queue is not None
    p = pod("p", "ns", "p-uid", rv="7")
    make_unschedulable(sched, [p])
    h.update_pod_in_scheduling_queue(p, changed(p, metadata__labels={"x": "y"}))
    assert sched.queue.unschedulable["p-uid"].pod.labels == {}


def test_deleting_a_pod_waiting_at_permit_rejects_it() -> None:
    sched, h = new_scheduler()
    p = pod("p", "ns", "p-uid")
    wp = WaitingPod(changed(p, spec__nodeName="n1"), "n1", {"Coscheduling": 2000.0})
    sched.waiting.add(wp)
    h.on_pod_delete(p)
    assert wp.result is not None and not wp.result.success
    assert wp.result.message == "removed"


def test_final_state_unknown_delete_cleans_the_cache() -> None:
    """A pod deleted while the informer was not watching arrives with its last known state,
    possibly still unassigned although it was assumed: both handlers clean up."""
    sched, h = new_scheduler()
    p = pod("p", "ns", "p-uid")
    sched.cache.assume_pod(changed(p, spec__nodeName="n1"))
    h.on_pod_delete(p, final_state_unknown=True)
    assert sched.cache.get_pod("p-uid") is None
    assert not sched.cache.nodes.get("n1") or not sched.cache.nodes["n1"].pods


def test_node_update_raises_the_events_of_what_changed() -> None:
    seen: list[str] = []

    def hint(p: Any, old: Any, new: Any) -> QueueingHint:
        seen.append(f"{old.name}->{new.name}")
        return QueueingHint.Queue

    taint = ClusterEvent(Resource.Node, ActionType.UpdateNodeTaint)
    sched, h = new_scheduler({taint: [QueueingHintFunction("TaintToleration", hint)]})
    make_unschedulable(sched, [pod("p", "ns", "p-uid")], plugin="TaintToleration")
    tainted: Node = make_node().name("n1").capacity(cpu="4").taint("k").obj()
    h.on_node_add(tainted)
    h.on_node_update(tainted, make_node().name("n1").capacity(cpu="4").label("a", "b").obj())
    assert seen == ["n1->n1"] and active_or_backoff(sched) == {"p"}
    assert "n1" in sched.cache.nodes
    h.on_node_delete(make_node().name("n1").obj())
    assert "n1" not in sched.cache.nodes


def test_skip_pod_schedule() -> None:
    """Upstream skipPodSchedule: a terminating pod (with a FailedScheduling event), an
    assumed pod."""
    sched, h = new_scheduler()
    terminating = changed(pod("t", "ns", "t-uid"), metadata__deletionTimestamp="2026-01-01T00:00:00Z")
    assert h.skip_pod_schedule(terminating)
    cluster = sched.sink
    assert isinstance(cluster, InProcessCluster)
    assert [(e.reason, e.message) for e in cluster.events] == [
        ("FailedScheduling", "skip schedule deleting pod: ns/t")]
    p = pod("p", "ns", "p-uid")
    assert not h.skip_pod_schedule(p)
    sched.cache.assume_pod(changed(p, spec__nodeName="n1"))
    assert h.skip_pod_schedule(p)
