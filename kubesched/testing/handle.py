"""A minimal ``Handle`` for plugin tests: a snapshot, cluster objects, a seeded RNG."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.workloads import WorkloadIndex
from kubesched.cache.cache import snapshot_of
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.dra import NoDra


@dataclass
class StaticObjects:
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    pdb_list: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    pod_groups: dict[str, Any] = field(default_factory=dict)
    pod_list: list[Pod] = field(default_factory=list)
    workload_index: WorkloadIndex = field(default_factory=WorkloadIndex)

    def workloads(self) -> WorkloadIndex:
        return self.workload_index

    def namespace(self, name: str) -> Namespace | None:
        return self.namespaces.get(name)

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.pdb_list

    def priority_class(self, name: str) -> PriorityClass | None:
        return self.priority_classes.get(name)

    def pod_group(self, namespace: str, name: str) -> Any:
        return self.pod_groups.get(f"{namespace}/{name}")

    def all_pods(self) -> Sequence[Pod]:
        return self.pod_list


@dataclass
class FakeHandle:
    snapshot: Snapshot
    objects: StaticObjects = field(default_factory=StaticObjects)
    framework: Any = None
    sink: Any = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    tie_break_by_name: bool = True
    nominated: dict[str, list[Pod]] = field(default_factory=dict)
    clock: float = 0.0
    storage: Any = None  # a StorageLister (kubesched.framework.storage); None: no storage objects
    storage_writer: Any = None
    dra: Any = field(default_factory=NoDra)  # a DraLister (kubesched.framework.dra)
    dra_writer: Any = None  # a DraWriter; None: the same object as ``dra``
    features: Any = None  # a Features (kubesched.framework.features); None: the default release's

    def __post_init__(self) -> None:
        if self.dra_writer is None:
            self.dra_writer = self.dra

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self.nominated.get(node_name, [])

    waiting: dict[str, Any] = field(default_factory=dict)

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> list[Any]:
        return list(self.waiting.values())

    def now(self) -> float:
        return self.clock

    preempted: list[tuple[str, str, str]] = field(default_factory=list)  # (preemptor, victim, node) keys
    cleared: list[str] = field(default_factory=list)  # pods whose nomination was cleared

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None:
        self.preempted.append((preemptor.key, victim.key, node))

    def clear_nominated_node(self, pod: Pod) -> None:
        self.cleared.append(pod.key)


def handle_for(pods: Iterable[Pod], nodes: Iterable[Any], namespaces: Iterable[Namespace] = ()) -> FakeHandle:
    snap = snapshot_of(list(pods), list(nodes))
    return FakeHandle(snap, StaticObjects({n.name: n for n in namespaces}))
