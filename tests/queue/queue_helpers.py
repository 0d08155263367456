"""Shared builders for the scheduling queue tests: a fake clock, upstream's test pods and
hint functions, and a queue wired like upstream's ``NewTestQueue``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.events import ActionType, ClusterEvent, QueueingHint, Resource
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue.hints import QueueingHintFunction, QueueingHintMap
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.testing.wrappers import make_pod

PROFILE = "default-scheduler"
START = 1_000_000.0  # a whole second, like upstream tests that align the fake clock

NODE_ADD = ClusterEvent(Resource.Node, ActionType.Add)
PVC_ADD = ClusterEvent(Resource.PersistentVolumeClaim, ActionType.Add)
POD_LABEL = ClusterEvent(Resource.Pod, ActionType.UpdatePodLabel)
LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2


class FakeClock:
    def __init__(self, t: float = START) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def step(self, d: float) -> None:
        self.t += d


def queue_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.Queue


def skip_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QueueSkip


def hint_map(entries: Mapping[ClusterEvent, Sequence[tuple[str, Any]]]) -> QueueingHintMap:
    return {ev: [QueueingHintFunction(plugin, fn) for plugin, fn in fns] for ev, fns in entries.items()}


def new_queue(clock: FakeClock | None = None, hints: QueueingHintMap | None = None,
              pre_enqueue: Sequence[Any] = (), **kw: Any) -> SchedulingQueue:
    """``hints`` None: no hint map at all (upstream's NewTestQueue without one), so a pod's
    rejectors are never asked and any event of interest moves it."""
    clock = clock or FakeClock()
    return SchedulingQueue(PrioritySort().sort_key, clock.now,
                           hint_maps={PROFILE: hints} if hints is not None else {},
                           pre_enqueue_plugins={PROFILE: list(pre_enqueue)}, **kw)


def pod(name: str, ns: str = "ns1", uid: str | None = None, priority: int = 0, nominated: str = "",
        labels: Mapping[str, str] | None = None, gates: Sequence[str] = ()) -> Pod:
    w = make_pod().name(name).namespace(ns).uid(uid or f"{name}{ns}").priority(priority)
    if nominated:
        w = w.nominated_node(nominated)
    for k, v in (labels or {}).items():
        w = w.label(k, v)
    for g in gates:
        w = w.gate(g)
    return w.obj()


# upstream's package-level test pods
def high_priority_pod() -> Pod:
    return pod("hpp", "ns1", "hppns1", HIGH)


def high_pri_nominated_pod() -> Pod:
    return pod("hpp", "ns1", "hppns1", HIGH, nominated="node1")


def med_priority_pod() -> Pod:
    return pod("mpp", "ns2", "mppns2", MEDIUM, nominated="node1")


def unschedulable_pod() -> Pod:
    return pod("up", "ns1", "upns1", LOW, nominated="node1")


class AllowList:
    """Upstream's test ``preEnqueuePlugin``: admits a pod having one of these label keys."""

    name = "preEnqueuePlugin"

    def __init__(self, allow: Sequence[str] = (), name: str = "preEnqueuePlugin") -> None:
        self.allow = list(allow)
        self.name = name

    def pre_enqueue(self, p: Pod) -> Status:
        if any(k in p.labels for k in self.allow):
            return SUCCESS
        return unresolvable("pod name not in allowlists")


def names(pods: Sequence[Any]) -> list[str]:
    return sorted(getattr(p, "pod", p).name for p in pods)
