"""``InProcessCluster``: the simulator's cluster, held in memory.

It is both the scheduler's source of objects (``ClusterObjects``) and its sink for
decisions (``ClusterSink``): a bind sets ``spec.nodeName`` and a start time, a preemption
deletes the victim, a nomination sets ``status.nominatedNodeName``. Every change is
reported to listeners synchronously, which is how the scheduler's cache and queue learn of
it, as informers would tell them in a live cluster.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework.clock import CLOCK_EPOCH
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.api.workloads import Workload, WorkloadIndex
from kubesched.framework.status import SUCCESS, Status, error

BIND_EPOCH = CLOCK_EPOCH  # bound pods' start times are on the scheduler clock's epoch
RUNNING_START = "2000-01-01T00:00:00Z"


def _copy_spec_status(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod's manifest that may change ``spec`` and ``status`` keys without
    touching the original (the rest is shared: objects are never modified in place)."""
    out = dict(raw)
    out["spec"] = dict(raw.get("spec") or {})
    out["status"] = dict(raw.get("status") or {})
    return out


@dataclass
class Event:
    """A Kubernetes Event as the scheduler records it."""

    time: float
    type: str
    reason: str
    namespace: str
    name: str
    message: str


@dataclass
class ClusterChange:
    kind: str  # "pod-bound" | "pod-deleted" | "pod-updated"
    pod: Pod
    old: Pod | None = None


class InProcessCluster:
    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}  # uid -> current object
        self.namespaces: dict[str, Namespace] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pdb_list: list[PodDisruptionBudget] = []
        self.pod_groups: dict[str, PodGroup] = {}
        self.workload_index = WorkloadIndex()
        self.events: list[Event] = []
        self.deleted: dict[str, tuple[Pod, str]] = {}  # uid -> (pod, reason message)
        self.listeners: list[Callable[[ClusterChange], None]] = []
        self.binds = 0
        self.bind_log: list[tuple[str, str]] = []

    # -- loading ----------------------------------------------------------------------
    def load(self, nodes: Iterable[Node], pods: Iterable[Pod], namespaces: Iterable[Namespace] = (),
             priority_classes: Iterable[PriorityClass] = (), pdbs: Iterable[PodDisruptionBudget] = (),
             pod_groups: Iterable[PodGroup] = (), workloads: Iterable[Workload] = ()) -> None:
        for w in workloads:
            self.workload_index.put(w)
        for g in pod_groups:
            self.pod_groups[g.key] = g
        for n in nodes:
            self.nodes[n.name] = n
        for p in pods:
            if p.node_name and not p.start_time:
                p = dataclasses.replace(p, start_time=RUNNING_START)
            self.pods[p.uid] = p
        for ns in namespaces:
            self.namespaces[ns.name] = ns
        for pc in priority_classes:
            self.priority_classes[pc.name] = pc
        self.pdb_list.extend(pdbs)

    def _notify(self, change: ClusterChange) -> None:
        for fn in self.listeners:
            fn(change)

    # -- ClusterObjects -----------------------------------------------------------------
    def namespace(self, name: str) -> Namespace | None:
        ns = self.namespaces.get(name)
        if ns is None:
            # A namespace the manifests do not declare exists implicitly, with its name label.
            ns = Namespace(name, {"kubernetes.io/metadata.name": name})
        return ns

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.pdb_list

    def priority_class(self, name: str) -> PriorityClass | None:
        return self.priority_classes.get(name)

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.pod_groups.get(f"{namespace}/{name}")

    def all_pods(self) -> Sequence[Pod]:
        return list(self.pods.values())

    def workloads(self) -> WorkloadIndex:
        return self.workload_index

    # -- ClusterSink --------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> Status:
        cur = self.pods.get(pod.uid)
        if cur is None:
            return error(f"pod {pod.key} not found")
        if cur.node_name:
            return error(f"pod {pod.key} is already assigned to node {cur.node_name!r}")
        if node_name not in self.nodes:
            return error(f"node {node_name!r} not found")
        self.binds += 1
        start = (BIND_EPOCH + dt.timedelta(seconds=self.binds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        raw = _copy_spec_status(cur.raw)
        raw["spec"]["nodeName"] = node_name
        status = raw["status"]
        status["startTime"] = start
        status.pop("nominatedNodeName", None)
        bound = cur.evolve(raw=raw, node_name=node_name, start_time=start, nominated_node_name="")
        self.pods[pod.uid] = bound
        self.bind_log.append((pod.key, node_name))
        self._notify(ClusterChange("pod-bound", bound, cur))
        return SUCCESS

    def delete_pod(self, pod: Pod, reason: str, message: str) -> Status:
        cur = self.pods.pop(pod.uid, None)
        if cur is None:
            return error(f"pod {pod.key} not found")
        self.deleted[pod.uid] = (cur, message)
        self.record_event(cur, "Normal", reason, message)
        self._notify(ClusterChange("pod-deleted", cur))
        return SUCCESS

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        cur = self.pods.get(pod.uid)
        if cur is None:
            return
        raw = _copy_spec_status(cur.raw)
        status = raw["status"]
        if node_name:
            status["nominatedNodeName"] = node_name
        else:
            status.pop("nominatedNodeName", None)
        new = dataclasses.replace(cur, raw=raw, nominated_node_name=node_name)
        self.pods[pod.uid] = new
        self._notify(ClusterChange("pod-updated", new, cur))

    def set_pod_scheduled_condition(self, pod: Pod, status: str, reason: str, message: str) -> None:
        cur = self.pods.get(pod.uid)
        if cur is None:
            return
        raw = _copy_spec_status(cur.raw)
        conds = [c for c in raw["status"].get("conditions", []) if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": status, "reason": reason, "message": message})
        raw["status"]["conditions"] = conds
        self.pods[pod.uid] = dataclasses.replace(cur, raw=raw)

    def record_event(self, obj: Pod, type_: str, reason: str, message: str) -> None:
        self.events.append(Event(self.now(), type_, reason, obj.namespace, obj.name, message))

    def pending_pods(self) -> list[Pod]:
        return [p for p in self.pods.values() if not p.node_name]
