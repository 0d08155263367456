"""``LiveScheduler``: the scheduling core running against a Kubernetes API server.

Wiring, as upstream's ``scheduler.New`` and ``Run`` do it::

    informers (pods, nodes, namespaces, PriorityClasses, PDBs, PodGroups; Services,
               ReplicationControllers, ReplicaSets, StatefulSets, read by PodTopologySpread's
               default selector; the storage objects: PVs, PVCs, StorageClasses, CSINodes,
               CSIDrivers, CSIStorageCapacities, VolumeAttachments, read by the volume plugins
               through KubeStorage; the DRA objects: DeviceClasses, ResourceSlices,
               ResourceClaims, ResourceClaimTemplates, read and written by DynamicResources
               through KubeDra)
        │ add / update / delete, under sched.lock
        ▼
    EventHandlers ──► Cache, SchedulingQueue ──► SchedulingLoop (one thread) ──► Scheduler
                                                         │ binding cycles   ──► Binder threads
                                                         ▼
                                                      KubeSink ──► binding, status, deletes, events

:meth:`start` starts the informers and a thread that waits for their caches to sync
before the first scheduling cycle (:meth:`start_informers` and :meth:`start_scheduling`
separately: a standby keeps its cache warm and schedules once it leads). :meth:`stop` is
graceful: no more pods are popped, binding cycles in flight get ``stop_timeout`` seconds
to finish, then the sink closes (later binding cycles fail at once and their assumed
pods are forgotten), informers stop. A LiveScheduler runs once: after :meth:`stop`, build
a new one (its cache is rebuilt from the API), as a new leader does.

Hooks for the outer layers (``kubesched run``, leader election, metrics, debug endpoints):
:attr:`ready` (caches synced and the loop running), :meth:`explain` (the last attempt
of a pod, as ``kubesched explain`` shows it), :attr:`informers` (``has_synced``,
``stats``), :attr:`sched`, :attr:`cache`, :attr:`queue`, :attr:`sink` (``binds``),
:attr:`loop` (``cycles``, ``attempts``, ``attempt_hooks`` for metrics), :attr:`metrics`
(kube-scheduler's Prometheus metrics: ``metrics.registry``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.cluster.extender import HTTPExtender
from kubesched.api.workloads import WorkloadIndex
from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.errors import FencedError
from kubesched.cluster.kube.events import EventRecorder
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.objects import KubeObjects
from kubesched.cluster.kube.resources import (
    CSI_DRIVERS, CSI_NODES, CSI_STORAGE_CAPACITIES, DEVICE_CLASSES, DEVICE_TAINT_RULES, NAMESPACES, NODES, PDBS,
    POD_GROUPS, PODS, PRIORITY_CLASSES, PVCS, PVS, REPLICA_SETS, REPLICATION_CONTROLLERS, RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS, RESOURCE_SLICES, SERVICES, STATEFUL_SETS, STORAGE_CLASSES, VOLUME_ATTACHMENTS,
)
from kubesched.cluster.kube.dra import KubeDra
from kubesched.cluster.kube.sink import KubeSink
from kubesched.cluster.kube.storage import KubeStorage
from kubesched.config import SchedulerConfig
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.framework.clock import RealClock
from kubesched.framework.events import ActionType, Resource
from kubesched.framework.registry import Registry
from kubesched.explanation.kssresults import ProfilePlugins
from kubesched.live.annotations import ResultAnnotator
from kubesched.live.binder import Binder
from kubesched.explanation.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_PER_POD
from kubesched.explanation.store import ExplainStore
from kubesched.live.loop import SchedulingLoop
from kubesched.live.whatif import LiveWhatIf
from kubesched.live.metrics import SchedulerMetrics
from kubesched.framework.features import Features
from kubesched.plugins.dynamicresources.devicefeatures import DeviceFeatures
from kubesched.queue.moves import QueueMove
from kubesched.explanation.attempt import Attempt
from kubesched.scheduler.factory import QueueOptions, new_scheduler

log = logging.getLogger(__name__)


def _pod_label(pod: Any, action: str) -> str:
    """Upstream's event label of a pod event: AssignedPod<Action> or UnscheduledPod<Action>."""
    return f"{'Assigned' if getattr(pod, 'node_name', '') else 'Unscheduled'}Pod{action}"


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveOptions:
    seed: int | None = None  # None: a random seed for tie-breaking
    tie_break_by_name: bool = False
    explain: bool = True  # record per-node verdicts and scores for explain()
    binding_workers: int = 16
    stop_timeout: float = 10.0
    explain_attempts_per_pod: int = DEFAULT_PER_POD  # attempts kept per pod for explain()
    explain_max_attempts: int = DEFAULT_MAX_ATTEMPTS  # attempts kept in all (oldest dropped)
    result_annotations: bool = False  # write kube-scheduler-simulator's result annotations
    informer_backoff: tuple[float, float, float] = (0.4, 2.0, 30.0)
    # the release and gates to decide as (None: the default release; a callable: asked once
    # the scheduler is built, e.g. the API server's own release)
    features: Features | Callable[[], Features] | None = None


class LiveScheduler:
    def __init__(self, config: SchedulerConfig, client: KubeClient, options: LiveOptions = LiveOptions(),
                 registry: Registry | None = None, *, fence: Callable[[], None] | None = None,
                 metrics: SchedulerMetrics | None = None) -> None:
        """``fence``: called right before each write of a decision (leader election's
        ``LeaderElector.fence``: it raises ``FencedError`` once the lease is not provably
        ours); ``metrics``: the metrics to feed (a replica keeps one across the schedulers it
        builds, so counters survive a lost lease); default a new one."""
        self.config = config
        self.client = client
        self.options = options
        self.clock = RealClock()
        self.cache = Cache()
        self.recorder = EventRecorder(client)
        inf = self._informer
        self.pods = inf(PODS)
        self.nodes = inf(NODES)
        self.namespaces = inf(NAMESPACES)
        self.priority_classes = inf(PRIORITY_CLASSES)
        self.pdbs = inf(PDBS)
        self.pod_groups = inf(POD_GROUPS)
        # the volume plugins' objects, and the cluster events they register for
        self.storage_informers: list[tuple[Informer[Any], Resource]] = [
            (inf(PVS), Resource.PersistentVolume), (inf(PVCS), Resource.PersistentVolumeClaim),
            (inf(STORAGE_CLASSES), Resource.StorageClass), (inf(CSI_NODES), Resource.CSINode),
            (inf(CSI_DRIVERS), Resource.CSIDriver), (inf(CSI_STORAGE_CAPACITIES), Resource.CSIStorageCapacity),
            (inf(VOLUME_ATTACHMENTS), Resource.VolumeAttachment)]
        # PodTopologySpread's default selector reads these (no events: upstream registers none)
        self.workloads = {"Service": inf(SERVICES), "ReplicationController": inf(REPLICATION_CONTROLLERS),
                          "ReplicaSet": inf(REPLICA_SETS), "StatefulSet": inf(STATEFUL_SETS)}
        features = options.features() if callable(options.features) else options.features
        features = features if features is not None else Features.for_version()
        # DeviceTaintRules only where they taint devices (the release's gates): a cluster whose
        # scheduler does not read them need not let it (RBAC)
        rules = DEVICE_TAINT_RULES if DeviceFeatures.of(features).taint_rules else ()
        # DynamicResources' objects (templates: read by the resourceclaim controller, kept for explain)
        self.dra_informers: list[tuple[Informer[Any], Resource | None]] = [
            (inf(DEVICE_CLASSES), Resource.DeviceClass), (inf(RESOURCE_SLICES), Resource.ResourceSlice),
            (inf(RESOURCE_CLAIMS), Resource.ResourceClaim), (inf(RESOURCE_CLAIM_TEMPLATES), None),
            # a rule changes the devices of slices: upstream's tracker reports slice updates
            *((inf(r), Resource.ResourceSlice) for r in rules)]
        self.informers: list[Informer[Any]] = [self.nodes, self.pods, self.namespaces, self.priority_classes,
                                               self.pdbs, self.pod_groups, *self.workloads.values()] + [
            i for i, _ in self.storage_informers] + [i for i, _ in self.dra_informers]
        self._stopping_storage = threading.Event()
        sinf = [i for i, _ in self.storage_informers]
        self.storage = KubeStorage(client, pvs=sinf[0], pvcs=sinf[1], classes=sinf[2], csinodes=sinf[3],
                                   csidrivers=sinf[4], capacities=sinf[5], attachments=sinf[6],
                                   stopping=self._stopping_storage)
        self.workload_index = WorkloadIndex()
        self.objects = KubeObjects(pods=self.pods, namespaces=self.namespaces, pdbs=self.pdbs,
                                   priority_classes=self.priority_classes, pod_groups=self.pod_groups,
                                   workloads=self.workload_index)
        self.sink = KubeSink(client, self.recorder, pod_by_uid=self.objects.pod_by_uid, fence=fence)
        self.recorder.guard = self.sink.guard
        dinf = [i for i, _ in self.dra_informers]
        self.dra = KubeDra(client, classes=dinf[0], slices=dinf[1], claims=dinf[2], templates=dinf[3],
                           guard=self.sink.guard, stopping=self._stopping_storage, taint_rules=dinf[4:])
        self.binder = Binder(options.binding_workers, after_each=self._after_binding)
        seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
        # queue moves go to these (explain history, metrics); the queue keeps no log of its own
        self.move_hooks: list[Callable[[QueueMove], None]] = []
        self.sched = new_scheduler(
            config, cache=self.cache, sink=self.sink, objects=self.objects, now=self.clock.now,
            rng=random.Random(seed), registry=registry, tie_break_by_name=options.tie_break_by_name,
            explain=options.explain, run_binding=self.binder.submit, storage=self.storage,
            storage_writer=self.storage, dra=self.dra, dra_writer=self.dra,
            extenders=[HTTPExtender(e) for e in config.extenders],
            features=features,
            queue=QueueOptions(pod_lister=self.objects.current_pod, listener=self._on_move, keep_moves=False))
        profiles = self.sched.profiles
        self.store = ExplainStore(options.explain_attempts_per_pod, options.explain_max_attempts)
        self.whatif = LiveWhatIf(self.sched, self.pods.get_namespaced, lambda: list(self.priority_classes.values()))
        self.move_hooks.append(self.store.on_move)
        assert self.sched.queue is not None
        self.queue = self.sched.queue
        self.sched.current_pod = self.objects.current_pod
        if self.sched.features.enabled("NominatedNodeNameForExpectation"):
            self.sched.nominate_for_expectation = self._nominate_now
        self.handlers = EventHandlers(self.sched)
        self.loop = SchedulingLoop(self.sched, self.queue, self.handlers, self.clock.now,
                                   after_cycle=self.sink.flush, store=self.store,
                                   may_decide=None if fence is None else self._may_decide)
        self.handlers.notify = self.loop.wake
        # told of each informer event handled (event label, seconds): metrics
        self.event_observer: Callable[[str, float], None] | None = None
        self._wire()
        self.metrics = metrics or SchedulerMetrics()  # kube-scheduler's metrics, in their own registry
        self.metrics.attach(self)
        self.annotator: ResultAnnotator | None = None  # --result-annotations: KSS's keys on each pod
        if options.result_annotations:
            self.annotator = ResultAnnotator(
                client, {name: ProfilePlugins.of(fw.points) for name, fw in profiles.items()},
                self.objects.current_pod, guard=self.sink.guard)
            self.loop.attempt_hooks.append(self.annotator.on_attempt)
        self._thread: threading.Thread | None = None
        self._informers_started = False
        self._ready = threading.Event()
        self._stopped = threading.Event()

    def _informer(self, resource: Any) -> Informer[Any]:
        return Informer(self.client, resource, backoff=self.options.informer_backoff)

    def _wire(self) -> None:
        h = self.handlers
        for informer in self.informers:
            informer.lock = self.sched.lock
        t = self._timed
        self.pods.on_add = t(lambda p: _pod_label(p, "Add"), h.on_pod_add)
        self.pods.on_update = t(lambda _o, p: _pod_label(p, "Update"), h.on_pod_update)
        self.pods.on_delete = t(lambda p, *_: _pod_label(p, "Delete"), h.on_pod_delete)
        self.nodes.on_add = t(lambda *_: "NodeAdd", h.on_node_add)
        self.nodes.on_update = t(lambda *_: "NodeUpdate", h.on_node_update)
        self.nodes.on_delete = t(lambda *_: "NodeDelete", h.on_node_delete)
        on_object_event = t(lambda r, a, *_: f"{getattr(r, 'value', r)}{a.name}", h.on_object_event)
        index = self.workload_index  # by namespace, as upstream's listers; no queue events
        for informer in self.workloads.values():
            informer.on_add = index.put
            informer.on_update = lambda _old, new: index.put(new)
            informer.on_delete = lambda o, _stale: index.remove(o.kind, o.namespace, o.name)
        for informer, resource in [(self.namespaces, Resource.Namespace), (self.pod_groups, Resource.PodGroup),
                                   *self.storage_informers]:
            informer.on_add = lambda o, r=resource: on_object_event(r, ActionType.Add, None, o)
            informer.on_update = lambda a, b, r=resource: on_object_event(r, ActionType.Update, a, b)
            informer.on_delete = lambda o, _stale, r=resource: on_object_event(r, ActionType.Delete, o, None)
        bump = self.dra.changed
        for informer, maybe in self.dra_informers:
            def event(action: ActionType, old: Any, new: Any, r: Resource | None = maybe) -> None:
                bump()
                if r is not None:
                    on_object_event(r, action, old, new)
            informer.on_add = lambda o, ev=event: ev(ActionType.Add, None, o)
            informer.on_update = lambda a, b, ev=event: ev(ActionType.Update, a, b)
            informer.on_delete = lambda o, _stale, ev=event: ev(ActionType.Delete, o, None)

    def _timed(self, label: Callable[..., str], handler: Callable[..., None]) -> Callable[..., None]:
        """``handler``, timed for ``event_observer`` (scheduler_event_handling_duration_seconds)."""
        def run(*args: Any) -> None:
            observer = self.event_observer
            if observer is None:
                handler(*args)
                return
            started = time.perf_counter()
            try:
                handler(*args)
            finally:
                observer(label(*args), time.perf_counter() - started)
        return run

    # -- running -------------------------------------------------------------------------------
    @property
    def profiles(self) -> list[str]:
        return list(self.sched.profiles)

    @property
    def ready(self) -> bool:
        """The caches have synced and pods are being scheduled."""
        return self._ready.is_set() and not self._stopped.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def start(self) -> None:
        """Start the informers and the scheduling thread (which waits for the caches)."""
        self.start_informers()
        self.start_scheduling()

    def start_informers(self) -> None:
        """Fill the cache and the queue without scheduling yet (a standby replica keeps
        them warm: upstream's ``delayCacheUntilActive: false``). Idempotent."""
        if self._informers_started:
            return
        self._informers_started = True
        self.recorder.start()
        for informer in self.informers:
            informer.start()

    def start_scheduling(self) -> None:
        """Start popping pods once the caches have synced (a leader does). Idempotent."""
        self.start_informers()
        if self._thread is None:
            if self.annotator is not None:
                self.annotator.start()
            self._thread = threading.Thread(target=self._run, name="scheduling-loop", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not all(i.has_synced for i in self.informers):
            if self.loop.stopping.wait(0.1):
                return
        log.info("caches synced (%d nodes, %d pods); scheduling for %s", len(self.nodes), len(self.pods),
                 ", ".join(self.profiles))
        self._ready.set()
        self.loop.run()

    def stop(self, timeout: float | None = None, *, abandon: bool = False) -> None:
        """Stop popping pods, let binding cycles in flight finish (up to ``timeout``,
        default ``stop_timeout``), release the rest, stop the informers. ``abandon``:
        write nothing more from now on (leadership is lost: another replica may be
        binding already), so bindings in flight fail and are forgotten at once."""
        timeout = self.options.stop_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        self._stopped.set()
        self._stopping_storage.set()  # PreBind's waits (PV controller, DRA binding conditions) end now
        if abandon:
            self.sink.close()
        self.loop.stop()
        if self._thread is not None:
            self._thread.join(max(0.1, deadline - time.monotonic()))
        if not self.binder.wait_idle(max(0.0, deadline - time.monotonic())):
            log.warning("%d binding(s) still in flight at shutdown: released", self.binder.in_flight)
        if self.annotator is not None:
            self.annotator.stop(max(0.1, deadline - time.monotonic()))
        self.sink.close()  # what has not finished fails fast now: its assumed pod is forgotten
        self.binder.shutdown()
        self.binder.wait_idle(5.0)
        for informer in self.informers:
            informer.stop()
        if self._informers_started:
            self.recorder.stop()
        log.info("scheduler stopped")

    def _may_decide(self) -> bool:
        """The sink's guard lets writes through (the lease is provably ours)."""
        try:
            self.sink.guard()
        except FencedError:
            return False
        return True

    def _on_move(self, move: QueueMove) -> None:
        for hook in self.move_hooks:
            try:
                hook(move)
            except Exception:  # noqa: BLE001 - an observer's bug must not stop the queue
                log.exception("queue move hook failed")

    def _nominate_now(self, pod: Pod, node: str) -> None:
        """The binding cycle's interim ``status.nominatedNodeName``, sent before it goes on."""
        self.sink.set_nominated_node(pod, node)
        self.sink.flush()

    def _after_binding(self) -> None:
        self.sink.flush()
        self.loop.wake()

    # -- hooks -----------------------------------------------------------------------------------
    def attempt(self, namespace: str, name: str) -> Attempt | None:
        """The pod's last scheduling attempt (None if it was never tried)."""
        return self.loop.last_attempt(f"{namespace}/{name}")

    def adopt_explanations(self, store: ExplainStore) -> None:
        """Record into ``store`` from now on (a restarted scheduler keeps its predecessor's
        explanations and attempt histories)."""
        self.move_hooks.remove(self.store.on_move)
        self.store = self.loop.store = store
        self.move_hooks.append(store.on_move)

    def explain(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod's explain document (README "Explain JSON"): its last attempt's keys
        (``time`` in seconds since 1970), its kept ``attempts`` and ``history``; None if
        it was never tried."""
        # not under the scheduler's lock: building a document over 5,000 nodes must not hold up
        # the loop; a binding thread only replaces an attempt's result, chosen node and message
        doc = self.store.document(f"{namespace}/{name}", self.clock.to_unix)
        if doc is not None:  # a pod still pending: every blocker, on the current cache (live.whatif)
            self.whatif.add_blockers(doc)
        return doc

    def explain_fixes(self, namespace: str, name: str, limit: int) -> dict[str, Any] | None:
        """What would make the pending pod schedule (``?fixes=N`` of ``/debug/explain``);
        None when the pod is not pending in this scheduler."""
        return self.whatif.fixes(namespace, name, limit)
