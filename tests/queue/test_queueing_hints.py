"""QueueingHints and cluster events moving pods, ported from upstream v1.34
``backend/queue/scheduling_queue_test.go`` (Test_isPodWorthRequeuing,
TestPriorityQueue_MoveAllToActiveOrBackoffQueue(WithQueueingHint),
TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks) and ``buildQueueingHintMap`` of
``scheduler.go``. kubesched has no PersistentVolume/CSINode resources: upstream's pvAdd and
pvUpdate are played by PodGroup Add/Update, which no plugin of these tests registers either."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from queue_helpers import (
    NODE_ADD, PROFILE, AllowList, FakeClock, hint_map, high_priority_pod, med_priority_pod, new_queue,
    pod, queue_hint, skip_hint, unschedulable_pod,
)

from kubesched.api.objects import Pod
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.interface import QueuedPodInfo
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.queue.clusterevents import (
    EVENT_ASSIGNED_POD_ADD, EVENT_FORCE_ACTIVATE, EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_UPDATE,
)
from kubesched.queue.hints import QueueingHints, QueueingStrategy, build_queueing_hint_map

S = QueueingStrategy
PV_ADD = ClusterEvent(Resource.PodGroup, ActionType.Add)
NODE_LABEL = ClusterEvent(Resource.Node, ActionType.UpdateNodeLabel)


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, hint: QueueingHint | None) -> Callable[[Any, Any, Any], QueueingHint]:
        def fn(p: Any, old: Any, new: Any) -> QueueingHint:
            self.n += 1
            if hint is None:
                raise RuntimeError("unexpected error")
            return hint
        return fn


P1 = pod("pod1", "ns1", "1")


@pytest.mark.parametrize("unsched,pending,event,new,entries,want,want_calls", [
    ({"fooPlugin1"}, set(), NODE_ADD, None, {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", "Q")]}, S.QUEUE_SKIP, 0),
    ({"fooPlugin1"}, set(), NODE_ADD, None, {NODE_ADD: [("fooPlugin1", "E")]}, S.QUEUE_AFTER_BACKOFF, 1),
    ({"fooPlugin1"}, set(), EVENT_UNSCHEDULABLE_TIMEOUT, None, None, S.QUEUE_AFTER_BACKOFF, 0),
    ({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, P1, None, S.QUEUE_AFTER_BACKOFF, 0),
    ({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, pod("pod-different", "ns2", "2"), None, S.QUEUE_SKIP, 0),
    ({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}, NODE_ADD, None,
     {NODE_ADD: [("fooPlugin1", "Q"), ("fooPlugin2", "Q"), ("fooPlugin3", "Q"), ("fooPlugin4", "E")]},
     S.QUEUE_IMMEDIATELY, 2),
    ({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, None,
     {NODE_ADD: [("fooPlugin1", "S"), ("fooPlugin2", "Q")]}, S.QUEUE_AFTER_BACKOFF, 2),
    ({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, None,
     {NODE_ADD: [("fooPlugin1", "S"), ("fooPlugin2", "S"), ("fooPlugin3", "Q")]}, S.QUEUE_SKIP, 2),
    ({"fooPlugin1", "fooPlugin2"}, set(), NODE_LABEL, None,
     {NODE_LABEL: [("fooPlugin1", "Q"), ("fooPlugin2", "Q")],
      ClusterEvent(Resource.Node, ActionType.Update): [("fooPlugin1", "Q")], NODE_ADD: [("fooPlugin1", "Q")]},
     S.QUEUE_AFTER_BACKOFF, 1),
    ({"fooPlugin1"}, set(), NODE_ADD, None,
     {ClusterEvent(Resource.WildCard, ActionType.Add): [("fooPlugin1", "Q")]}, S.QUEUE_AFTER_BACKOFF, 1),
    ({"fooPlugin1"}, set(), ClusterEvent(Resource.Node, ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint),
     None, {ClusterEvent(Resource.WildCard, ActionType.All): [("fooPlugin1", "Q")]}, S.QUEUE_AFTER_BACKOFF, 1),
], ids=["no hint registered for the event", "a failing hint counts as Queue", "wildcard event",
        "wildcard event targeting the pod", "wildcard event targeting another pod",
        "Queue from a pending plugin is queueImmediately", "Queue from an unschedulable plugin",
        "hints of other plugins are ignored", "specific node update also runs Node/Update hints",
        "'*' resource registration", "wildcard registration"])
def test_is_pod_worth_requeuing(unsched: set[str], pending: set[str], event: ClusterEvent, new: Any,
                                entries: dict[ClusterEvent, list[tuple[str, str]]] | None,
                                want: S, want_calls: int) -> None:
    """Test_isPodWorthRequeuing, with the number of hint functions run."""
    calls = Counter()
    kinds = {"Q": QueueingHint.Queue, "S": QueueingHint.QueueSkip, "E": None}
    m = hint_map({ev: [(pl, calls(kinds[k])) for pl, k in fns] for ev, fns in (entries or {}).items()})
    hints = QueueingHints({PROFILE: m} if entries is not None else {})
    qpi = QueuedPodInfo(pod=P1, unschedulable_plugins=unsched, pending_plugins=pending)
    assert hints.is_pod_worth_requeuing(qpi, event, None, new) == want
    assert calls.n == want_calls


def _gated(qpi: QueuedPodInfo, plugin: str) -> QueuedPodInfo:
    """upstream setQueuedPodInfoGated."""
    qpi.gating_plugin, qpi.gated = plugin, True
    qpi.unschedulable_plugins = {plugin}
    return qpi


def _must_not_run(p: Any, old: Any, new: Any) -> QueueingHint:
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


@pytest.mark.parametrize("make,hint,duration,want", [
    (lambda p: QueuedPodInfo(pod=p, pending_plugins={"foo"}), queue_hint, 0.0, "activeQ"),
    (lambda p: QueuedPodInfo(pod=p, unschedulable_plugins={"foo"}), queue_hint, 0.0, "backoffQ"),
    (lambda p: QueuedPodInfo(pod=p, unschedulable_plugins={"foo"}), queue_hint, 2.0, "activeQ"),
    (lambda p: QueuedPodInfo(pod=p, unschedulable_plugins={"foo"}), skip_hint, 0.0, "unschedulable"),
    (lambda p: _gated(QueuedPodInfo(pod=p), "SchedulingGates"), _must_not_run, 0.0, "gated"),
    (lambda p: _gated(QueuedPodInfo(pod=p), "foo"), queue_hint, 0.0, "backoffQ"),
], ids=["Queue queues pod to activeQ (pending plugin)", "Queue queues pod to backoffQ if backing off",
        "Queue queues pod to activeQ if not backing off", "Skip keeps pod in the pool",
        "gated by a plugin not interested in the event", "gated by a plugin interested in the event"])
def test_move_all_with_queueing_hint(make: Callable[[Pod], QueuedPodInfo], hint: Any, duration: float,
                                     want: str) -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint (NodeAdd event)."""
    clock = FakeClock()
    m = hint_map({NODE_ADD: [("foo", hint)], EVENT_UNSCHEDULED_POD_UPDATE: [("SchedulingGates", queue_hint)]})
    q = new_queue(clock, m, pre_enqueue=[SchedulingGates(), AllowList(["foo"], name="foo")])
    p = pod("pod1", "ns1", "1", labels={"foo": "bar"})
    q.add(p)
    assert q.pop() is not None
    qpi = make(p)
    q.add_unschedulable(qpi)
    clock.step(duration)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.where(p) == want


def _clone(p: Pod, name: str) -> Pod:
    return pod(name, p.namespace, name + p.namespace, p.priority)


def test_move_all_to_active_or_backoff_queue() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue: hints decide who moves; backing-off
    pods go to backoffQ; pods without rejecting plugins (errors) to the error backoffQ."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({NODE_ADD: [("fooPlugin", queue_hint)]}))
    up, hp, med = unschedulable_pod(), high_priority_pod(), med_priority_pod()

    def pop(p: Pod) -> None:
        qpi = q.pop()
        assert qpi is not None and qpi.pod.uid == p.uid

    def in_flight(*pods: Pod) -> None:
        assert sorted(q.in_flight_uids()) == sorted(p.uid for p in pods)

    for p in (up, hp):
        q.add(p)
        pop(p)
    in_flight(up, hp)
    q.add_unschedulable(q.new_queued_pod_info(up, "fooPlugin"))
    q.add_unschedulable(q.new_queued_pod_info(hp, "fooPlugin"))
    in_flight()
    hpp1, hpp2 = _clone(hp, "hpp1"), _clone(hp, "hpp2")
    q.add(hpp1)
    pop(hpp1)
    info = q.new_queued_pod_info(hpp1)
    info.unschedulable_count += 1
    q.add_unschedulable(info)  # no rejecting plugin: backoffQ
    q.add(hpp2)
    pop(hpp2)
    q.add_unschedulable(q.new_queued_pod_info(hpp2, "barPlugin"))
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.add(med)
    assert len(q.active_q) == 1
    pop(med)
    in_flight(med)
    assert len(q.backoff_q) == 3  # up, hpp, hpp1; hpp2 stays
    clock.step(10)
    q.backoff_q.pop_all_backoff_completed()  # popped out, not in flight
    in_flight(med)
    for p in (up, hp, hpp1):
        q.add(p)
        pop(p)
    in_flight(med, up, hp, hpp1)
    q.add_unschedulable(q.new_queued_pod_info(up, "fooPlugin"))
    q.add_unschedulable(q.new_queued_pod_info(hp, "fooPlugin"))
    q.add_unschedulable(q.new_queued_pod_info(hpp1))
    in_flight(med)
    q.add(med)
    assert all(q.unschedulable_pods.get(p) is not None for p in (up, hp, hpp2))
    assert q.backoff_q.has(hpp1) and len(q.active_q) == 1
    clock.step(10)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert (len(q.active_q), len(q.backoff_q), len(q.unschedulable_pods)) == (4, 0, 1)
    in_flight(med)


@pytest.mark.parametrize("event,check,want", [
    (EVENT_UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority >= 2, {"p2", "p3", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority >= 2, {"p2", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority < 0, set()),
    (PV_ADD, _must_not_run, set()),
], ids=["nil PreEnqueueCheck", "priority greater than 2", "even and greater than 2",
        "even and negative", "preCheck isn't called if no plugin is interested"])
def test_move_all_pre_enqueue_checks(event: ClusterEvent, check: Any, want: set[str]) -> None:
    """TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks."""
    clock = FakeClock()
    q = new_queue(clock)
    for i in range(5):
        p = pod(f"p{i}", "default", f"p{i}", i)
        q.add(p)
        assert q.pop() is not None
        q.add_unschedulable(QueuedPodInfo(pod=p, unschedulable_plugins={"plugin"}))
    q.move_all_to_active_or_backoff_queue(event, None, None, check)
    clock.step(2 * 10)
    assert {x.pod.name for x in q.backoff_q.pop_all_backoff_completed()} == want


def test_move_on_event_without_objects_cannot_ask_hints() -> None:
    """``move_on_event(event)`` without objects: the rejectors' hints cannot judge, so a
    registered event counts as Queue (upstream counts a failing hint so)."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({NODE_ADD: [("foo", skip_hint)]}))
    p = pod("p")
    q.add(p)
    q.add_unschedulable(QueuedPodInfo(pod=q.pop().pod, unschedulable_plugins={"foo"}))  # type: ignore[union-attr]
    clock.step(5)
    assert q.move_on_event(PV_ADD) == 0
    assert q.move_on_event(NODE_ADD) == 1 and q.active_q.has(p)


class _Plain:
    """A Filter plugin without EnqueueExtensions."""

    def __init__(self, name: str) -> None:
        self.name = name

    def filter(self, state: Any, p: Pod, ni: Any) -> Any:
        return None


class _NodeAdder(_Plain):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD, skip_hint)]


class _Silent(_Plain):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


def test_build_queueing_hint_map() -> None:
    """buildQueueingHintMap (v1.34.1 scheduler.go): a plugin without EnqueueExtensions gets
    every resource's All; one registering Node/Add but not UpdateNodeTaint also gets
    UpdateNodeTaint (default hint); an empty registration is left out."""
    from kubesched.framework.runtime.framework import Framework

    class _Sort:
        name = "PrioritySort"

        def less(self, a: Any, b: Any) -> bool:
            return False

        def sort_key(self, p: Any) -> Any:
            return 0

    class _Bind:
        name = "DefaultBinder"

        def bind(self, state: Any, p: Any, node: str) -> Any:
            return None

    plain, node, silent = _Plain("plain"), _NodeAdder("node"), _Silent("silent")
    fw = Framework("p", {"queueSort": [_Sort()], "filter": [plain, node, silent], "bind": [_Bind()]}, {})
    events = fw.cluster_event_map()
    assert set(events) == {"plain", "node", "silent"}  # QueueSort and Bind plugins have none
    m = build_queueing_hint_map(events)
    assert {ev: [f.plugin_name for f in fns] for ev, fns in m.items()} == {
        ClusterEvent(Resource.Pod, ActionType.All): ["plain"],
        ClusterEvent(Resource.Node, ActionType.All): ["plain"],
        ClusterEvent(Resource.PersistentVolumeClaim, ActionType.All): ["plain"],
        NODE_ADD: ["node"],
        ClusterEvent(Resource.Node, ActionType.UpdateNodeTaint): ["node"],
    }
    taint = m[ClusterEvent(Resource.Node, ActionType.UpdateNodeTaint)][0]
    assert taint.fn(None, None, None) == QueueingHint.Queue
    assert m[NODE_ADD][0].fn(None, None, None) == QueueingHint.QueueSkip
