"""Building a scheduler, the one way every mode does it (upstream ``scheduler.New``): the
scheduler's state, a framework per profile of the configuration (default plugins and
weights of the release the features name), and the scheduling queue those profiles sort
and gate. ``simulate`` (:mod:`kubesched.sim.driver`), ``run`` and ``serve``
(:mod:`kubesched.live.scheduler`) and ``extender`` (:mod:`kubesched.live.plugin_extender`)
differ only in what they hand in: the cluster's source and sink, the clock, how binding
runs, and what hears the queue's moves."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.config import SchedulerConfig, build_profiles
from kubesched.framework.dra import DraLister, DraWriter
from kubesched.framework.extender import Extender
from kubesched.framework.features import Features
from kubesched.framework.interface import ClusterObjects, ClusterSink
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import default_multipoint, in_tree_registry
from kubesched.framework.storage import StorageLister, StorageWriter
from kubesched.queue.moves import QueueMove
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.scheduler.scheduler import Scheduler


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueOptions:
    """The scheduling queue: ``pod_lister`` gives a pod's current version (None: gone),
    ``listener`` hears every move, ``keep_moves`` False keeps no log of them (a
    long-running scheduler)."""

    pod_lister: Callable[[Pod], Pod | None]
    listener: Callable[[QueueMove], None] | None = None
    keep_moves: bool = True


def new_scheduler(config: SchedulerConfig, *, cache: Cache, sink: ClusterSink, objects: ClusterObjects,
                  now: Callable[[], float], rng: random.Random, features: Features | None = None,
                  registry: Registry | None = None, tie_break_by_name: bool = False, explain: bool = False,
                  run_binding: Callable[[Callable[[], None]], None] | None = None,
                  storage: StorageLister | None = None, storage_writer: StorageWriter | None = None,
                  dra: DraLister | None = None, dra_writer: DraWriter | None = None,
                  extenders: Sequence[Extender] = (), queue: QueueOptions | None = None) -> Scheduler:
    """A scheduler with a framework per profile of ``config`` (plugins from ``registry``, the
    in-tree ones by default) and, with ``queue``, its scheduling queue. Raises
    :class:`~kubesched.framework.errors.ProfileError` for a profile that cannot be built."""
    sched = Scheduler(cache, sink, objects, now, rng, tie_break_by_name=tie_break_by_name, explain=explain,
                      run_binding=run_binding, storage=storage, storage_writer=storage_writer, dra=dra,
                      dra_writer=dra_writer, extenders=extenders, features=features)
    profiles = build_profiles(config, registry or in_tree_registry(), default_multipoint(sched.features),
                              sched.new_handle)
    for name, fw in profiles.items():
        sched.add_profile(name, fw)
    if queue is not None:
        sched.queue = SchedulingQueue.for_profiles(
            profiles, now, initial_backoff=float(config.pod_initial_backoff_seconds),
            max_backoff=float(config.pod_max_backoff_seconds), pod_lister=queue.pod_lister,
            listener=queue.listener, keep_moves=queue.keep_moves)
    return sched
