"""The scheduler (upstream ``scheduler.go``): its state (cache, snapshot, queue, profiles,
waiting pods, extenders, the seeded RNG), built once per mode, with the scheduling cycle
(:mod:`.schedule_one`) and the binding cycle (:mod:`.binding_cycle`) as its behaviour.
The core does no I/O: decisions leave through the ``ClusterSink``."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.dra import DraLister, DraWriter, NoDra
from kubesched.framework.extender import Extender
from kubesched.framework.features import Features
from kubesched.framework.interface import ClusterObjects, ClusterSink
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.waiting import WaitingPods
from kubesched.framework.storage import NoStorage, StorageLister, StorageWriter
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.scheduler.handle import AlgorithmObserver, PreemptionWrites, ProfileHandle, SchedulerWrites
from kubesched.scheduler.schedule_one import SchedulingCycle


class Scheduler(SchedulingCycle):
    def __init__(self, cache: Cache, sink: ClusterSink, objects: ClusterObjects,
                 now: Callable[[], float], rng: random.Random, tie_break_by_name: bool = False,
                 explain: bool = False,
                 run_binding: Callable[[Callable[[], None]], None] | None = None,
                 storage: StorageLister | None = None, storage_writer: StorageWriter | None = None,
                 dra: DraLister | None = None, dra_writer: DraWriter | None = None,
                 extenders: Sequence[Extender] = (), features: Features | None = None) -> None:
        """``features``: the release and feature gates to decide as (default: the default
        release's, :meth:`Features.for_version`). ``run_binding``: how a binding cycle is run. None (the simulator) runs it at once,
        inside ``schedule_one``; a live scheduler passes an executor's submit so binding
        (API calls) overlaps the next scheduling cycle. Cache and queue updates then happen
        under ``lock``, which the live runner also holds for each scheduling cycle and for
        every informer event. ``storage``/``storage_writer``: what the volume plugins read
        and write (:mod:`kubesched.framework.storage`); none: a cluster without storage.
        ``dra``/``dra_writer``: what DynamicResources reads and writes
        (:mod:`kubesched.framework.dra`); none: a cluster without DRA objects."""
        self.cache = cache
        self.sink = sink
        self.objects = objects
        self.now = now
        self.rng = rng
        self.tie_break_by_name = tie_break_by_name
        self.explain = explain
        self.snapshot = Snapshot()
        self.profiles: dict[str, Framework] = {}
        self.queue: SchedulingQueue | None = None
        self.next_start_node_index = 0
        self.waiting = WaitingPods()
        self.run_binding = run_binding
        self.lock = threading.RLock()
        # Live schedulers set this to the informer's view: a pod that no longer exists (or is
        # already bound) is not sent back to the queue after a failure (handleSchedulingFailure).
        self.current_pod: Callable[[Pod], Pod | None] | None = None
        self.algorithm_observer: AlgorithmObserver | None = None
        self.storage: StorageLister = storage if storage is not None else NoStorage()
        self.storage_writer: StorageWriter = storage_writer if storage_writer is not None else NoStorage()
        no_dra = NoDra()
        self.dra: DraLister = dra if dra is not None else no_dra
        self.dra_writer: DraWriter = dra_writer if dra_writer is not None else no_dra
        # configured HTTP extenders (kubesched.framework.extender), called after Filter
        self.extenders: tuple[Extender, ...] = tuple(extenders)
        self.features = features if features is not None else Features.for_version()
        # what preemption's victim deletions go through (dropped in a dry run)
        self.writes: PreemptionWrites = SchedulerWrites(self)

    def new_handle(self) -> ProfileHandle:
        return ProfileHandle(self)

    def add_profile(self, name: str, fw: Framework) -> None:
        self.profiles[name] = fw
        fw.nominated_pods_for_node = self._nominated
        fw.nominated_nodes = lambda: self.queue.nominator.nodes() if self.queue else {}

    def _nominated(self, node: str) -> Sequence[Pod]:
        return self.queue.nominator.pods_for_node(node) if self.queue else ()
