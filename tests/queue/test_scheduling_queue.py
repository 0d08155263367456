"""The scheduling queue's core moves, ported from upstream v1.34
``backend/queue/scheduling_queue_test.go`` (test names in the docstrings). Times are on a
fake clock; pods are upstream's test pods (``queue_helpers``)."""

from __future__ import annotations

import copy

import pytest
from queue_helpers import (
    HIGH, MID, NODE_ADD, FakeClock, hint_map, high_pri_nominated_pod, high_priority_pod,
    med_priority_pod, new_queue, pod, queue_hint, unschedulable_pod,
)

from kubesched.api.objects import Pod
from kubesched.framework.interface import QueuedPodInfo
from kubesched.queue.clusterevents import EVENT_UNSCHEDULABLE_TIMEOUT
from kubesched.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION as MAX_UNSCHED

INITIAL, MAX_BACKOFF = 1.0, 10.0


def lookup(p: Pod, *plugins: str) -> QueuedPodInfo:
    """upstream newQueuedPodInfoForLookup: only the pod and its rejecting plugins."""
    return QueuedPodInfo(pod=p, unschedulable_plugins=set(plugins))


def popped(q: object) -> str:
    qpi = q.pop()  # type: ignore[attr-defined]
    assert qpi is not None
    return str(qpi.pod.name)


def test_add() -> None:
    """TestPriorityQueue_Add: pop order by priority; nominated pods recorded from their status."""
    q = new_queue()
    med, up, high = med_priority_pod(), unschedulable_pod(), high_priority_pod()
    for p in (med, up, high):
        q.add(p)
    assert q.nominator.nominated_pod_to_node == {med.uid: "node1", up.uid: "node1"}
    assert [p.uid for p in q.nominator.nominated_pods["node1"]] == [med.uid, up.uid]
    assert [popped(q) for _ in range(3)] == ["hpp", "mpp", "up"]
    assert len(q.nominator.nominated_pods["node1"]) == 2


def test_add_with_reverse_priority() -> None:
    """TestPriorityQueue_AddWithReversePriorityLessFunc."""
    q = new_queue()
    q.add(med_priority_pod())
    q.add(high_priority_pod())
    assert [popped(q), popped(q)] == ["hpp", "mpp"]


def test_add_unschedulable_if_not_present() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent: no event during its attempt, so the
    pod goes to the unschedulable pool."""
    q = new_queue()
    up = unschedulable_pod()
    q.add(up)
    assert popped(q) == "up"
    q.add(high_pri_nominated_pod())
    assert q.add_unschedulable(lookup(up, "plugin")) is None
    assert popped(q) == "hpp"
    assert len(q.nominator.nominated_pods) == 1
    assert q.unschedulable_pods.get(up) is not None


def test_add_unschedulable_if_not_present_backoff() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: a move request while the pods
    were in flight sends them to backoffQ instead of the pool."""
    q = new_queue()
    pods = [pod(f"pod{i}", f"ns{i}", f"upns{i}", i) for i in range(10)]
    for p in pods:
        q.add(p)
    assert [popped(q) for _ in range(9)] == [f"pod{i}" for i in range(9, 0, -1)]
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert popped(q) == "pod0"
    for p in pods[1:]:
        assert q.add_unschedulable(lookup(p, "plugin")) is None
    assert all(q.backoff_q.has(p) for p in pods[1:])


def test_add_unschedulable_refuses_queued_pods() -> None:
    """AddUnschedulableIfNotPresent returns an error for a pod already queued."""
    q = new_queue()
    up = unschedulable_pod()
    q.add(up)
    assert q.add_unschedulable(lookup(up, "plugin")) is not None
    assert q.active_q.has(up) and q.unschedulable_pods.get(up) is None


def test_pop_from_backoff_q_when_active_q_is_empty() -> None:
    """TestPriorityQueue_Pop (PopFromBackoffQ enabled): activeQ first, then the head of the
    plugin-rejected backoffQ; never the error backoffQ or the pool."""
    q = new_queue()
    high2 = pod("hpp2", "ns1", "hpp2ns1", HIGH)
    q.add(med_priority_pod())
    q.backoff_q.add(q.new_queued_pod_info(high_priority_pod(), "plugin"))
    q.backoff_q.add(q.new_queued_pod_info(high2))
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(unschedulable_pod(), "plugin"))
    got = []
    while (qpi := q.active_q.pop()[0]) is not None:  # upstream's Pop: no backoff flush
        got.append(qpi.pod.name)
    assert got == ["mpp", "hpp"]


def test_pop_without_pop_from_backoff_q() -> None:
    """TestPriorityQueue_Pop (PopFromBackoffQ disabled): only activeQ."""
    q = new_queue(pop_from_backoff_q=False)
    q.add(med_priority_pod())
    q.backoff_q.add(q.new_queued_pod_info(high_priority_pod(), "plugin"))
    assert [q.active_q.pop()[0] is not None, q.active_q.pop()[0]] == [True, None]


def test_pop_clears_rejector_plugins() -> None:
    """v1.34.1 unlockedPop: a popped pod's unschedulable/pending plugins and gating plugin
    are reset for the new attempt; attempts count up."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({NODE_ADD: [("fooPlugin1", queue_hint)]}))
    p = pod("targetpod", "default", "pod1")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None and qpi.attempts == 1
    qpi.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable(qpi)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # TestPop: a pending plugin skips backoff
    assert q.active_q.has(p)
    again = q.pop()
    assert again is qpi and again.attempts == 2
    assert (again.unschedulable_plugins, again.pending_plugins, again.gating_plugin) == (set(), set(), "")


def test_high_priority_backoff() -> None:
    """TestHighPriorityBackoff: an unschedulable high-priority pod backs off behind others."""
    q = new_queue()
    mid = pod("test-midpod", "ns1", "tp-mid", MID, nominated="node1")
    high = pod("test-highpod", "ns1", "tp-high", HIGH, nominated="node1")
    q.add(mid)
    q.add(high)
    assert popped(q) == "test-highpod"
    q.add_unschedulable(lookup(high, "fooPlugin"))
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert q.backoff_q.has(high)
    assert popped(q) == "test-midpod"


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover: after podMaxInUnschedulablePodsDuration
    the pool is flushed to activeQ, in priority order."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({NODE_ADD: [("fakePlugin", queue_hint)]}))
    mid = pod("test-midpod", "ns1", "tp-mid", MID, nominated="node1")
    high = pod("test-highpod", "ns1", "tp-high", HIGH, nominated="node1")
    for p in (high, mid):
        q.add(p)
        assert popped(q) == p.name
    q.add_unschedulable(q.new_queued_pod_info(high, "fakePlugin"))
    q.add_unschedulable(q.new_queued_pod_info(mid, "fakePlugin"))
    clock.step(MAX_UNSCHED + 1)
    q.flush_unschedulable_pods_leftover()
    assert [popped(q), popped(q)] == ["test-highpod", "test-midpod"]


def test_flush_leftover_needs_strictly_longer_than_max() -> None:
    """flushUnschedulablePodsLeftover moves pods whose wait is strictly longer than the max."""
    clock = FakeClock()
    q = new_queue(clock)
    p = pod("p")
    q.add(p)
    q.add_unschedulable(lookup(q.pop().pod, "plugin"))  # type: ignore[union-attr]
    clock.step(MAX_UNSCHED)
    q.flush_unschedulable_pods_leftover()
    assert q.unschedulable_pods.get(p) is not None
    clock.step(1e-3)
    q.flush_unschedulable_pods_leftover()
    assert q.active_q.has(p)


def test_recently_tried_pods_go_back() -> None:
    """TestRecentlyTriedPodsGoBack: a retried pod goes behind pods of the same priority."""
    clock = FakeClock()
    q = new_queue(clock)
    for i in range(5):
        q.add(pod(f"test-pod-{i}", "ns1", f"tp00{i}", HIGH, nominated="node1"))
    clock.step(1e-6)
    p1 = q.pop()
    assert p1 is not None
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable(p1)
    clock.step(MAX_BACKOFF)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    order = [q.pop() for _ in range(5)]
    assert [x is p1 for x in order] == [False, False, False, False, True]


def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod() -> None:
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    clock = FakeClock()
    q = new_queue(clock)
    old = pod("test-pod-unscheduled", "ns1", "tp001", HIGH, nominated="node1")
    q.add(old)
    assert popped(q) == old.name
    q.add_unschedulable(lookup(old, "plugin"))
    clock.step(INITIAL + 1)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert popped(q) == old.name
    newer = pod("test-newer-pod", "ns1", "tp002", HIGH, nominated="node1")
    q.add(newer)
    q.add_unschedulable(lookup(old, "plugin"))
    clock.step(INITIAL + 1)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert popped(q) == newer.name


def _pinfos(clock: FakeClock) -> tuple[QueuedPodInfo, QueuedPodInfo]:
    p1 = QueuedPodInfo(pod=pod("test-pod-1", "ns1", "tp-1", nominated="node1"), timestamp=clock.now())
    p2 = QueuedPodInfo(pod=pod("test-pod-2", "ns2", "tp-2", nominated="node2"), timestamp=clock.now() + 1)
    return p1, p2


@pytest.mark.parametrize("case", ["activeQ", "unschedulable then move", "backoffQ then flush"])
def test_pod_timestamp(case: str) -> None:
    """TestPodTimestamp: activeQ orders equal-priority pods by queue timestamp."""
    clock = FakeClock()
    q = new_queue(clock)
    p1, p2 = _pinfos(clock)
    if case == "activeQ":
        q.active_q.add(p2)
        q.active_q.add(p1)
    elif case == "unschedulable then move":
        for p in (p2, p1):
            p.unschedulable_count += 1
            q.unschedulable_pods.add_or_update(p)
        clock.step(3)
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    else:
        q.active_q.add(p2)
        q.backoff_q.add(p1)
        clock.step(3)
        q.flush_backoff_q_completed()
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert len(q.active_q) == 2
    assert [q.active_q.pop()[0], q.active_q.pop()[0]] == [p1, p2]


@pytest.mark.parametrize("max_in_unschedulable", [MAX_UNSCHED, 30.0], ids=["default", "user-defined"])
def test_pod_max_in_unschedulable_pods_duration(max_in_unschedulable: float) -> None:
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration."""
    clock = FakeClock()
    q = new_queue(clock, max_in_unschedulable=max_in_unschedulable)
    p1 = QueuedPodInfo(pod=pod("test-pod-1", "ns1", "tp-1", nominated="node1"), timestamp=clock.now() - 1)
    p2 = QueuedPodInfo(pod=pod("test-pod-2", "ns2", "tp-2", nominated="node2"), timestamp=clock.now() - 2)
    for p in (p1, p2):
        p.unschedulable_count += 1
        q.unschedulable_pods.add_or_update(p)
    clock.step(max_in_unschedulable)
    q.flush_unschedulable_pods_leftover()
    assert [q.active_q.pop()[0], q.active_q.pop()[0]] == [p2, p1]


def test_pending_pods() -> None:
    """TestPriorityQueue_PendingPods."""
    q = new_queue()
    up, high, med = unschedulable_pod(), high_priority_pod(), med_priority_pod()
    for p in (up, high):
        q.add(p)
        assert popped(q) == p.name
    q.add(med)
    q.add_unschedulable(q.new_queued_pod_info(up, "plugin"))
    q.add_unschedulable(q.new_queued_pod_info(high, "plugin"))
    pods, summary = q.pending_pods()
    assert sorted(p.name for p in pods) == ["hpp", "mpp", "up"]
    assert summary == "activeQ:1; backoffQ:0; unschedulablePods:2"
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    pods, summary = q.pending_pods()
    assert sorted(p.name for p in pods) == ["hpp", "mpp", "up"]
    assert summary == "activeQ:1; backoffQ:2; unschedulablePods:0"


def test_delete() -> None:
    """TestPriorityQueue_Delete: deleting a pod also forgets its nomination."""
    q = new_queue()
    up, nominated = unschedulable_pod(), high_pri_nominated_pod()
    q.update(high_priority_pod(), nominated)
    q.add(up)
    q.delete(nominated)
    assert q.active_q.has(up) and not q.active_q.has(nominated)
    assert len(q.nominator.nominated_pods) == 1
    q.delete(up)
    assert q.nominator.nominated_pods == {}


def _generation(p: Pod, g: int) -> Pod:
    raw = copy.deepcopy(p.raw)
    raw["metadata"]["generation"] = g
    return Pod.from_dict(raw)


@pytest.mark.parametrize("scenario,want_attempts,want_initial_offset", [
    ("add", 1, 0.0), ("flushed", 2, 0.0), ("flushed then updated", 2, 0.0),
], ids=["scheduled after 1 attempt", "scheduled after 2 attempts", "2 attempts with an update"])
def test_per_pod_scheduling_metrics(scenario: str, want_attempts: int, want_initial_offset: float) -> None:
    """TestPerPodSchedulingMetrics: attempts count up; the initial attempt time stays."""
    clock = FakeClock()
    start = clock.now()
    q = new_queue(clock)
    p = pod("test-pod", "test-ns", "test-uid")
    q.add(p)
    if scenario != "add":
        qpi = q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = {"plugin"}
        q.add_unschedulable(qpi)
        clock.t = start + MAX_UNSCHED + 1e-9
        q.flush_unschedulable_pods_leftover()
        if scenario == "flushed then updated":
            q.update(p, _generation(p, 1))
    got = q.pop()
    assert got is not None and got.attempts == want_attempts
    assert got.initial_attempt_timestamp == start + want_initial_offset
