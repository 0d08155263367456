"""Pod updates and PreEnqueue gating, ported from upstream v1.34
``scheduling_queue_test.go``: TestPriorityQueue_Update, TestPriorityQueue_moveToActiveQ,
TestPriorityQueue_moveToBackoffQ, Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate,
and the queue sizes of TestPendingPodsMetric (SchedulerPopFromBackoffQ on).

Upstream registers PreEnqueue plugins in a map keyed by name, so two test plugins of the
same name leave only the last one: the cases below list that one."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from queue_helpers import (
    FakeClock, AllowList, hint_map, high_pri_nominated_pod, high_priority_pod, med_priority_pod,
    new_queue, pod, queue_hint, skip_hint,
)

from kubesched.api.objects import Pod
from kubesched.framework.events import ActionType, ClusterEvent, Resource
from kubesched.framework.interface import QueuedPodInfo
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.queue.clusterevents import (
    BACKOFF_COMPLETE, EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_ADD, EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE, event_label,
)
from kubesched.queue.hints import build_queueing_hint_map
from kubesched.queue.scheduling_queue import SchedulingQueue

ADD = event_label(EVENT_UNSCHEDULED_POD_ADD)


def annotated(p: Pod, value: str) -> Pod:
    raw = copy.deepcopy(p.raw)
    raw["metadata"].setdefault("annotations", {})["foo"] = value
    return Pod.from_dict(raw)


def relabeled(p: Pod, labels: dict[str, str]) -> Pod:
    raw = copy.deepcopy(p.raw)
    raw["metadata"]["labels"] = dict(labels)
    return Pod.from_dict(raw)


Prepare = Callable[[SchedulingQueue, FakeClock], tuple[Pod, Pod]]


def _not_in_queue(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    med = med_priority_pod()
    return med, annotated(med, "test")


def _nominate(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    return high_priority_pod(), high_pri_nominated_pod()


def _in_active(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    q.add(high_priority_pod())
    return high_priority_pod(), high_priority_pod()


def _in_backoff(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    info = q.new_queued_pod_info(med_priority_pod())
    q.backoff_q.add(info)
    return info.pod, info.pod


def _in_pool(plugin: str, count: int, wait: float) -> Prepare:
    def prepare(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
        med = med_priority_pod()
        info = q.new_queued_pod_info(med, plugin)
        info.unschedulable_count += count
        q.unschedulable_pods.add_or_update(info)
        c.step(wait)
        return med, annotated(med, "test1")
    return prepare


def _in_flight(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    med = med_priority_pod()
    q.add(med)
    assert q.pop() is not None
    return med, annotated(med, "bar")


@pytest.mark.parametrize("prepare,want,want_nominated", [
    (_not_in_queue, "activeQ", False),
    (_nominate, "activeQ", True),
    (_in_active, "activeQ", False),
    (_in_backoff, "backoffQ", False),
    (_in_pool("queuePlugin", 1, 0.0), "backoffQ", False),
    (_in_pool("queuePlugin", 1, 10.0), "activeQ", False),
    (_in_pool("skipPlugin", 0, 0.0), "unschedulable", False),
    (_in_flight, None, False),
], ids=["pod that didn't exist in the queue", "add a nominatedNodeName", "already in activeQ",
        "in backoffQ and still backing off", "in the pool, backoff not expired: backoffQ",
        "in the pool, backoff expired: activeQ", "in the pool, hint says QueueSkip",
        "in flight: not added to any queue"])
def test_update(prepare: Prepare, want: str | None, want_nominated: bool) -> None:
    """TestPriorityQueue_Update (QueueingHints on)."""
    clock = FakeClock()
    q = new_queue(clock, hint_map({EVENT_UNSCHEDULED_POD_UPDATE: [("queuePlugin", queue_hint),
                                                                  ("skipPlugin", skip_hint)]}))
    old, new = prepare(q, clock)
    q.update(old, new)
    where = q.where(new)
    assert where == (want or "inFlight")
    if want is None:
        return
    info = q.active_q.get(new) or q.backoff_q.get(new) or q.unschedulable_pods.get(new)
    assert info is not None and info.pod is new
    if want_nominated:
        assert len(q.nominator.nominated_pods) == 1


@pytest.mark.parametrize("plugins,labels,event,from_backoff,want_success", [
    ([], {"p": ""}, ADD, False, True),
    ([AllowList()], {"p": ""}, ADD, False, False),
    ([AllowList(["foo"])], {"bar": ""}, ADD, False, False),
    ([AllowList(["foo"])], {"bar": ""}, BACKOFF_COMPLETE, True, True),
    ([AllowList(["foo"])], {"bar": ""}, FORCE_ACTIVATE, False, False),
    ([AllowList(["bar"])], {"bar": ""}, ADD, False, True),
], ids=["no plugins registered", "pod not in allowlists", "pod failed one preEnqueue plugin",
        "moved from backoffQ after backoff: PreEnqueue not run", "activated from the pool",
        "pod passed all preEnqueue plugins"])
def test_move_to_active_q(plugins: list[Any], labels: dict[str, str], event: str, from_backoff: bool,
                          want_success: bool) -> None:
    """TestPriorityQueue_moveToActiveQ (popFromBackoffQ enabled), then an update that keeps a
    gated pod in the pool."""
    q = new_queue(pre_enqueue=plugins, initial_backoff=30.0, max_backoff=60.0)
    p = pod("bar" if "bar" in labels else "p", labels=labels)
    info = q.new_queued_pod_info(p)
    src = "backoffQ" if from_backoff else "new"
    assert q.move_to_active_q(info, event, src) is want_success
    want_pool = 0 if want_success else 1
    assert len(q.unschedulable_pods) == want_pool
    q.update(p, annotated(p, ""))
    assert len(q.unschedulable_pods) == want_pool


@pytest.mark.parametrize("plugins,labels,want_success", [
    ([], {"p": ""}, True),
    ([AllowList()], {"p": ""}, False),
    ([AllowList(["foo"])], {"bar": ""}, False),
    ([AllowList(["bar"])], {"bar": ""}, True),
], ids=["no plugins registered", "pod name not in allowlists", "pod failed one preEnqueue plugin",
        "pod passed all preEnqueue plugins"])
def test_move_to_backoff_q(plugins: list[Any], labels: dict[str, str], want_success: bool) -> None:
    """TestPriorityQueue_moveToBackoffQ (popFromBackoffQ enabled: PreEnqueue runs here)."""
    q = new_queue(pre_enqueue=plugins, initial_backoff=30.0, max_backoff=60.0)
    info = q.new_queued_pod_info(pod("bar" if "bar" in labels else "p", labels=labels))
    assert q.move_to_backoff_q(info, ADD, "new") is want_success
    assert q.backoff_q.has(info.pod) is want_success
    assert (q.unschedulable_pods.get(info.pod) is not None) is not want_success


def test_gated_set_upon_creation_and_unset_upon_update() -> None:
    """Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate."""
    q = new_queue(pre_enqueue=[SchedulingGates()])
    gated = pod("p", gates=["hello world"])
    q.add(gated)
    info = q.unschedulable_pods.get(gated)
    assert info is not None and info.gated and info.gating_plugin == "SchedulingGates"
    assert q.gated == {gated.uid: info}
    q.update(gated, pod("p"))
    popped = q.pop()
    assert popped is not None and not popped.gated


def test_gate_removed_with_scheduling_gates_hints() -> None:
    """With the SchedulingGates plugin's registered event (UpdatePodSchedulingGatesEliminated)
    a gated pod moves to activeQ when its last gate goes, and not before."""
    hints = build_queueing_hint_map({"SchedulingGates": SchedulingGates().events_to_register()})
    q = new_queue(hints=hints, pre_enqueue=[SchedulingGates()])
    two = pod("p", gates=["a", "b"])
    q.add(two)
    one = pod("p", gates=["a"])
    q.update(two, one)  # a generic Update: the gating plugin did not register it
    assert q.where(one) == "gated"
    q.move_all_to_active_or_backoff_queue(ClusterEvent(Resource.Node, ActionType.Add))
    assert q.where(one) == "gated"
    q.update(one, pod("p"))
    assert q.where(pod("p")) == "activeQ"


# -- queue sizes of TestPendingPodsMetric -----------------------------------------------------
def _infos(n: int, prefix: str, label: str, ts: float) -> list[QueuedPodInfo]:
    return [QueuedPodInfo(pod=pod(f"{prefix}-{i}", f"ns{i}", f"tp-{i}", labels={label: ""}), timestamp=ts)
            for i in range(1, n + 1)]


def _sizes(q: SchedulingQueue) -> dict[str, int]:
    pool = q.unschedulable_pods.values()
    return {"active": len(q.active_q), "backoff": len(q.backoff_q),
            "gated": sum(1 for x in pool if x.gated), "unschedulable": sum(1 for x in pool if not x.gated)}


Op = Callable[[SchedulingQueue, FakeClock, QueuedPodInfo | None], None]


def add_active(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    assert i is not None
    q.add(i.pod)


def add_pool(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    assert i is not None
    if not i.gated:
        i.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(i)


def add_backoff(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    assert i is not None
    q.backoff_q.add(i)


def delete(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    assert i is not None
    q.delete(i.pod)


def make_queueable(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    assert i is not None
    q.update(i.pod, relabeled(i.pod, {"queueable": ""}))


def move_all(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)


def clock_forward(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    c.step(3)


def flush_backoff(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    c.step(3)
    q.flush_backoff_q_completed()


def gate_all(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    q.pre_enqueue_plugins["default-scheduler"] = [AllowList([""])]


def ungate_all(q: SchedulingQueue, c: FakeClock, i: QueuedPodInfo | None) -> None:
    q.pre_enqueue_plugins["default-scheduler"] = [AllowList(["queueable"])]


Slice = tuple[str, int | None, int | None] | None
PENDING_CASES: dict[str, tuple[list[tuple[Op, Slice]], tuple[int, int, int, int]]] = {
    "add pods to activeQ and unschedulablePods": (
        [(add_active, ("p", None, 30)), (add_pool, ("p", 30, None))], (30, 0, 10, 20)),
    "add pods to all kinds of queues": (
        [(add_active, ("p", None, 15)), (add_backoff, ("p", 15, 40)), (add_pool, ("p", 40, None))], (15, 25, 10, 10)),
    "add pods to unschedulablePods and then move all to activeQ": (
        [(add_pool, ("p", None, 60)), (clock_forward, None), (move_all, None)], (50, 0, 10, 0)),
    "make some pods subject to backoff, add pods to unschedulablePods, and then move all to activeQ": (
        [(add_pool, ("p", 20, 60)), (clock_forward, None), (add_pool, ("d", None, 20)), (move_all, None)], (30, 20, 10, 0)),
    "make some pods subject to backoff, add pods to unschedulablePods/activeQ, move all, flush backoffQ": (
        [(add_pool, ("p", None, 40)), (add_active, ("p", 40, 50)), (move_all, None), (flush_backoff, None)], (50, 0, 0, 0)),
    "add pods to activeQ/unschedulablePods and then delete some Pods": (
        [(add_active, ("p", None, 30)), (add_pool, ("p", 30, None)), (delete, ("p", None, 2)), (delete, ("p", 30, 33)),
         (delete, ("p", 50, 54))], (28, 0, 6, 17)),
    "add pods to activeQ/unschedulablePods and then update some Pods as queueable": (
        [(add_active, ("p", None, 30)), (add_pool, ("p", 30, None)), (make_queueable, ("p", 50, 55))], (35, 0, 5, 20)),
    "Gated when Ungated to Gated transition into moveToActiveQ": (
        [(add_pool, ("p", None, 1)), (clock_forward, None), (gate_all, None), (make_queueable, ("p", None, 1))], (0, 0, 1, 0)),
    "Gated when Ungated to Gated transition into moveToBackoffQ": (
        [(add_pool, ("p", None, 1)), (gate_all, None), (make_queueable, ("p", None, 1))], (0, 0, 1, 0)),
    "Ungated -> Gated -> Ungated (ActiveQ)": (
        [(add_pool, ("p", None, 1)), (clock_forward, None), (gate_all, None), (make_queueable, ("p", None, 1)),
         (ungate_all, None), (make_queueable, ("p", None, 1))], (1, 0, 0, 0)),
    "Ungated -> Gated -> Ungated (BackoffQ)": (
        [(add_pool, ("p", None, 1)), (gate_all, None), (make_queueable, ("p", None, 1)), (ungate_all, None),
         (make_queueable, ("p", None, 1))], (0, 1, 0, 0)),
}


@pytest.mark.parametrize("name", list(PENDING_CASES))
def test_pending_pods_sizes(name: str) -> None:
    """TestPendingPodsMetric: active, backoff, gated and unschedulable sizes."""
    ops, (active, backoff, gated, unsched) = PENDING_CASES[name]
    clock = FakeClock()
    ts = clock.now()
    p = _infos(50, "x", "queueable", ts) + _infos(10, "y", "failme", ts)
    for info in p[50:]:
        info.gating_plugin, info.gated, info.unschedulable_plugins = "preEnqueuePlugin", True, {"preEnqueuePlugin"}
    d = _infos(20, "z", "queueable", ts + 2)
    q = new_queue(clock, hint_map({EVENT_UNSCHEDULED_POD_UPDATE: [("preEnqueuePlugin", queue_hint)]}),
                  pre_enqueue=[AllowList(["queueable"])])
    for op, sl in ops:
        targets: list[QueuedPodInfo | None] = [None]
        if sl is not None:
            targets = list({"p": p, "d": d}[sl[0]][sl[1]:sl[2]])
        for info in targets:
            op(q, clock, info)
    assert _sizes(q) == {"active": active, "backoff": backoff, "gated": gated, "unschedulable": unsched}
