"""What the plugins of one profile reach the scheduler through (upstream ``framework.Handle``),
the writes a plugin asks the scheduler for (preemption's), and the observer metrics hang on
each run of the scheduling algorithm."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.dra import DraLister, DraWriter
from kubesched.framework.extender import Extender
from kubesched.framework.features import Features
from kubesched.framework.interface import ClusterObjects, ClusterSink
from kubesched.framework.runtime.waiting import WaitingPod
from kubesched.framework.storage import StorageLister, StorageWriter

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler


class ProfileHandle:
    """The ``Handle`` plugins of one profile get (framework set once it is built)."""

    def __init__(self, sched: "Scheduler") -> None:
        self._sched = sched
        self.framework: Any = None

    @property
    def extenders(self) -> tuple[Extender, ...]:
        """The configured extenders (upstream ``Handle.Extenders()``), for preemption."""
        return self._sched.extenders

    @property
    def snapshot(self) -> Snapshot:
        return self._sched.snapshot

    @property
    def objects(self) -> ClusterObjects:
        return self._sched.objects

    @property
    def sink(self) -> ClusterSink:
        return self._sched.sink

    @property
    def features(self) -> Features:
        """The release and feature gates the plugins decide as (upstream ``feature.Features``)."""
        return self._sched.features

    @property
    def rng(self) -> random.Random:
        return self._sched.rng

    @property
    def tie_break_by_name(self) -> bool:
        return self._sched.tie_break_by_name

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._sched.queue.nominator.pods_for_node(node_name) if self._sched.queue else ()

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._sched.waiting.get(uid)

    def iterate_waiting_pods(self) -> list[WaitingPod]:
        return list(self._sched.waiting)

    def now(self) -> float:
        return self._sched.now()

    @property
    def storage(self) -> StorageLister:
        return self._sched.storage

    @property
    def storage_writer(self) -> StorageWriter:
        return self._sched.storage_writer

    @property
    def dra(self) -> DraLister:
        return self._sched.dra

    @property
    def dra_writer(self) -> DraWriter:
        return self._sched.dra_writer

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None:
        """Evict ``victim`` to make room for ``preemptor`` on ``node``."""
        self._sched.writes.preempt_pod(preemptor, victim, node, plugin)

    def clear_nominated_node(self, pod: Pod) -> None:
        """Take back ``pod``'s nomination (a higher-priority pod took its node)."""
        self._sched.writes.clear_nominated_node(pod)


class PreemptionWrites(Protocol):
    """How the scheduler carries out what preemption decided (upstream ``prepareCandidate``'s
    API calls): the scheduler's own :class:`SchedulerWrites`, or :class:`DroppedWrites`
    for a cycle that must change nothing."""

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None: ...

    def clear_nominated_node(self, pod: Pod) -> None: ...


class SchedulerWrites:
    """Through the scheduler's sink, queue and waiting pods."""

    def __init__(self, sched: "Scheduler") -> None:
        self._sched = sched

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None:
        """A victim still waiting at Permit is rejected, any other deleted (upstream
        ``PreemptPod``)."""
        sched = self._sched
        waiting = sched.waiting.get(victim.uid)
        if waiting is not None:
            waiting.reject(plugin, "preempted")
            return
        sched.sink.delete_pod(victim, "Preempted", f"Preempted by pod {preemptor.uid} on node {node}")

    def clear_nominated_node(self, pod: Pod) -> None:
        self._sched._clear_nomination(pod)


class DroppedWrites:
    """Writes asked for in a dry run (a what-if, the shadow's decision): none happens."""

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None:
        return None

    def clear_nominated_node(self, pod: Pod) -> None:
        return None


class AlgorithmObserver(Protocol):
    """Told of each scheduling algorithm run (metrics): ``before`` may mark the cycle's
    state (to sample per-plugin timing), ``after`` gets the seconds it took."""

    def before(self, state: CycleState) -> None: ...

    def after(self, seconds: float) -> None: ...
