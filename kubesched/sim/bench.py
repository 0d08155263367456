"""``kubesched bench``: run a scheduler_perf-shaped workload through the real scheduler loop.

Nothing is stubbed: the workload's nodes and pods go into the same wiring as
``kubesched simulate`` (:class:`~kubesched.sim.driver.Simulation`: in-process cluster,
cache, queue, one Framework per profile, explain off), and every pod goes queue ->
snapshot -> scheduling cycle -> assume -> bind through the cluster -> cache confirmation.
Objects are built directly from the templates of :mod:`kubesched.sim.workloads` (one
parse per template, then cheap copies), so decoding is not measured.

Init pods are scheduled first and not measured. The measured pods are then created at
once and run to completion; the metrics are those of upstream scheduler_perf:

* ``pods_per_second``: scheduled measured pods / wall time from the first create to the
  last bind;
* ``throughput_1s_*``: upstream's throughput collector, replayed on the bind times: a
  sample every second after the first one that saw a scheduled pod (that one is skipped),
  empty intervals merged into the next, the last partial interval dropped, percentiles by
  nearest rank. ``None`` when the run is shorter than two samples;
* ``algo_latency_*_ms``: upstream's ``scheduling_algorithm_duration_seconds``, which
  covers ``schedulePod`` (the snapshot update, PreFilter, Filter, PreScore, Score, host
  selection and, on failure, PostFilter) and not assume/reserve/permit/binding. It is
  timed from here (:class:`_AlgorithmTimer`), so the scheduling core carries no timing code;
* ``max_rss_mb``: the process's peak resident set size.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import math
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.dra import DeviceClass, ResourceClaimTemplate, ResourceSlice
from kubesched.api.defaults import apply_node_defaults, apply_pod_defaults
from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BIND_COMPLETED, ClaimRef, CSINode, PersistentVolume, PersistentVolumeClaim, apply_storage_defaults,
)
from kubesched.api.volumes import Volume
from kubesched.api.workloads import Workload as WorkloadObject
from kubesched.cluster.inprocess import ClusterChange
from kubesched.config import load_config
from kubesched.framework.features import Features
from kubesched.config.types import API_VERSION, KIND
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.results import ScheduleResult
from kubesched.scheduler.scheduler import Scheduler
from kubesched.sim.driver import MAX_ATTEMPTS_PER_POD, PodOutcome, Simulation
from kubesched.sim.fastinit import FastInit
from kubesched.sim.workloads import (
    NODE_TEMPLATES, OBJECT_TEMPLATES, POD_TEMPLATES, PV_TEMPLATES, WORKLOADS, CreateAny, CreateNodes, CreatePods,
    Workload,
)

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (phase, done, total)
PROGRESS_EVERY = 64  # attempts between two progress reports
FAST_INIT_THROUGH_LOOP = 100  # with fast_init, the last init pods of an op still scheduled
THROUGHPUT_INTERVAL = 1.0  # seconds, upstream throughputSampleInterval

RESULT_KEYS = (
    "pods_per_second", "throughput_1s_avg", "throughput_1s_p50", "throughput_1s_p90",
    "throughput_1s_p99", "algo_latency_p50_ms", "algo_latency_p99_ms", "max_rss_mb",
    "percentage_of_nodes_to_score", "nodes", "pods", "scheduled",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchSpec:
    workload: str
    nodes: int
    init_pods: int
    pods: int
    percentage_of_nodes_to_score: int = 100
    seed: int = 0
    scenario: str = ""  # a manifest file (kubesched.sim.scenario) instead of a workload
    fast_init: bool = False  # init pods bound directly, without the loop (kubesched.sim.fastinit)
    kubernetes_version: str = ""  # the release to decide as ("": the default release)
    feature_gates: str = ""  # --feature-gates overrides

    def features(self) -> Features:
        return Features.for_version(self.kubernetes_version or None, self.feature_gates or None)

    @property
    def params(self) -> dict[str, int]:
        return {"nodes": self.nodes, "initPods": self.init_pods, "measurePods": self.pods}


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchResult:
    pods_per_second: float
    throughput_1s_avg: float | None
    throughput_1s_p50: float | None
    throughput_1s_p90: float | None
    throughput_1s_p99: float | None
    algo_latency_p50_ms: float | None
    algo_latency_p99_ms: float | None
    max_rss_mb: float
    percentage_of_nodes_to_score: int
    nodes: int
    pods: int
    scheduled: int

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in RESULT_KEYS}


def nearest_rank(sorted_values: Sequence[float], pct: int) -> float | None:
    """Upstream's percentile of a sorted sample: element ``ceil(n * pct / 100) - 1``."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(len(sorted_values) * pct / 100) - 1)]


def throughput_samples(bind_times: Sequence[float], start: float, end: float,
                       interval: float = THROUGHPUT_INTERVAL) -> list[float]:
    """Pods/s samples as upstream's ``throughputCollector`` takes them with a ticker
    started at ``start`` and stopped at ``end``, given the sorted bind times."""
    samples: list[float] = []
    seen = 0  # binds up to the current tick
    last_count = 0
    last_tick = start
    started = False
    skipped = 0
    k = 1
    while start + k * interval <= end:
        tick = start + k * interval
        k += 1
        while seen < len(bind_times) and bind_times[seen] <= tick:
            seen += 1
        if seen == 0:
            continue
        if not started:
            started, last_count, last_tick = True, seen, tick
            continue
        if seen == last_count:
            skipped += 1
            continue
        rate = (seen - last_count) / (tick - last_tick)
        samples.extend([rate] * (skipped + 1))
        last_count, last_tick, skipped = seen, tick, 0
    return samples


class _AlgorithmTimer:
    """Times each scheduling cycle's algorithm: from the cycle's snapshot update (the first
    step of upstream ``schedulePod``) to the return of ``Scheduler.run_algorithm`` (which
    includes PostFilter when nothing fits, as upstream's scheduling_algorithm_duration does).
    Both methods are wrapped on this one scheduler instance; nothing else changes."""

    def __init__(self, sched: Scheduler, timer: Callable[[], float]) -> None:
        for owner, attr in ((sched.cache, "update_snapshot"), (sched, "run_algorithm")):
            if not callable(getattr(owner, attr, None)):
                raise AttributeError(f"cannot time the scheduling algorithm: no {attr}")
        self.samples: list[float] = []
        self._t0 = 0.0
        update = sched.cache.update_snapshot
        run_algorithm = sched.run_algorithm

        def timed_update(snap: Any) -> None:
            self._t0 = timer()
            update(snap)

        def timed_run_algorithm(*args: Any) -> ScheduleResult | None:
            try:
                return run_algorithm(*args)
            finally:
                self.samples.append(timer() - self._t0)

        setattr(sched.cache, "update_snapshot", timed_update)
        setattr(sched, "run_algorithm", timed_run_algorithm)


# -- objects --------------------------------------------------------------------------------
def _node_template(name: str) -> Node:
    raw = NODE_TEMPLATES[name]
    meta = {**raw["metadata"], "name": raw["metadata"]["generateName"] + "template"}
    return Node.from_dict(apply_node_defaults({**raw, "metadata": meta}))


def build_nodes(op: CreateNodes, count: int, first: int = 0) -> list[Node]:
    templates = [_node_template(t) for t in op.templates]
    out = []
    for i in range(first, first + count):
        tpl = templates[i % len(templates)]
        name = f"{tpl.raw['metadata']['generateName']}{i:05d}"
        labels = {lab.key: lab.values[i % len(lab.values)] if lab.values else name for lab in op.labels}
        raw = {**tpl.raw, "metadata": {**tpl.raw["metadata"], "name": name, "uid": name, "labels": labels}}
        out.append(dataclasses.replace(tpl, raw=raw, name=name, uid=name, labels=labels))
    return out


def _pod_template(name: str, namespace: str) -> Pod:
    raw = POD_TEMPLATES[name]
    meta = {**raw["metadata"], "name": raw["metadata"]["generateName"] + "template", "namespace": namespace}
    return Pod.from_dict(apply_pod_defaults({**raw, "metadata": meta}))


def copy_pod(pod: Pod, **changes: Any) -> Pod:
    """``dataclasses.replace(pod, **changes)`` at a fraction of the cost (:meth:`Pod.evolve`),
    which counts when a million pods are made."""
    return pod.evolve(**changes)


def build_pods(op: CreatePods, count: int, namespace: str, first_seq: int = 0) -> list[Pod]:
    """``count`` pods, pod ``i`` from ``op.templates[i % len]``; the template is parsed once
    (per namespace: affinity terms default to it) and copied with a new name and uid."""
    templates = [_pod_template(t, namespace) for t in op.templates]
    out = []
    for i in range(count):
        tpl = templates[i % len(templates)]
        seq = first_seq + i
        name = f"{tpl.raw['metadata']['generateName']}{seq:06d}"
        uid = f"bench-{seq:08d}"
        raw = {**tpl.raw, "metadata": {**tpl.raw["metadata"], "name": name, "uid": uid}}
        out.append(copy_pod(tpl, raw=raw, name=name, uid=uid, seq=seq, extra={}))
    return out


def build_csi_nodes(op: CreateNodes, nodes: Sequence[Node]) -> list[CSINode]:
    """``nodeAllocatableStrategy.csiNodeAllocatable``: one CSINode per node with the limits."""
    if not op.csi_allocatable:
        return []
    drivers = [{"name": d, "nodeID": "", "allocatable": {"count": c}} for d, c in op.csi_allocatable]
    out = []
    for n in nodes:
        ds = [{**d, "nodeID": n.name} for d in drivers]
        out.append(CSINode.from_dict({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                      "metadata": {"name": n.name}, "spec": {"drivers": ds}}, validate=False))
    return out


def attach_volumes(op: CreatePods, pods: list[Pod]) -> tuple[list[Pod], list[Any]]:
    """scheduler_perf's ``persistentVolumeTemplatePath``: a PV per pod from the template and a
    claim bound to it (``templates/pvc.yaml``), mounted by the pod. Templates are decoded
    once and copied."""
    source = PV_TEMPLATES[op.volume]
    key, body = next(iter(source.items()))
    pv_tpl = PersistentVolume.from_dict(apply_storage_defaults({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-template"},
        "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                 "persistentVolumeReclaimPolicy": "Retain", key: {**body, "volumeHandle": "x", "volumeID": "x"}},
        "status": {"phase": "Bound"}}), validate=False)
    pvc_tpl = PersistentVolumeClaim.from_dict(apply_storage_defaults({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "pvc-template", "annotations": {ANN_BIND_COMPLETED: "true"}},
        "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"}}), validate=False)
    objects: list[Any] = []
    out = []
    for pod in pods:
        pv_name = f"pv-{pod.uid}"
        claim = f"{pod.name}-pvc"
        objects.append(dataclasses.replace(pv_tpl, name=pv_name, claim_ref=ClaimRef(pod.namespace, claim),
                                           volume_handle=pv_name if key == "csi" else "",
                                           disk_id=pv_name if key != "csi" else ""))
        objects.append(dataclasses.replace(pvc_tpl, namespace=pod.namespace, name=claim, uid=f"{pod.uid}-pvc",
                                           volume_name=pv_name))
        vol = {"name": "vol", "persistentVolumeClaim": {"claimName": claim}}
        raw = {**pod.raw, "spec": {**pod.raw["spec"], "volumes": [vol]}}
        out.append(dataclasses.replace(pod, raw=raw, volumes=(Volume("vol", "persistentVolumeClaim", claim),),
                                       pvc_names=(claim,)))
    return out, objects
def dra_objects(nodes: list[Node], workload: Workload) -> list[Any]:
    """The DRA side of a ``devices_per_node`` workload: class ``gpu``, one ResourceSlice of
    that many devices per node, the template ``one-gpu`` in every pod namespace."""
    objs: list[Any] = [DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})]
    for n in nodes:
        objs.append(ResourceSlice.from_dict({"metadata": {"name": f"{n.name}-gpu"}, "spec": {
            "driver": "gpu.example.com", "nodeName": n.name,
            "pool": {"name": n.name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}}
                        for i in range(workload.devices_per_node)]}}))
    for i, op in enumerate(workload.ops):
        if isinstance(op, CreatePods):
            objs.append(ResourceClaimTemplate.from_dict({"metadata": {
                "name": "one-gpu", "namespace": op.namespace or f"namespace-{i}"}, "spec": {"spec": {
                    "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}))
    return objs


def _count(param: str, params: dict[str, int]) -> int:
    return params[param.removeprefix("$")]


# -- running --------------------------------------------------------------------------------
def settle() -> None:
    """Before the measured phase: collect garbage once, then move every object alive (the
    set-up's nodes and pods, the caches) out of the cyclic collector's reach (``gc.freeze``),
    as a long-running process does after loading its long-lived state. Without it, each full
    collection during the measured phase rescans the whole set-up (millions of objects at
    130,000 nodes), which says more about the set-up's size than about scheduling."""
    gc.collect()
    gc.freeze()


class Bench:
    """One workload, built and wired; :meth:`run` schedules it and measures."""

    def __init__(self, spec: BenchSpec, timer: Callable[[], float] = time.perf_counter) -> None:
        if spec.workload not in WORKLOADS:
            raise KeyError(spec.workload)
        self.spec = spec
        self.workload: Workload = WORKLOADS[spec.workload]
        self.timer = timer
        self.claims = self.workload.devices_per_node > 0  # pods get claims from templates
        nodes: list[Node] = []
        for op in self.workload.ops:
            if isinstance(op, CreateNodes):
                nodes += build_nodes(op, _count(op.count, spec.params), first=len(nodes))
        config = load_config({"apiVersion": API_VERSION, "kind": KIND,
                              "percentageOfNodesToScore": spec.percentage_of_nodes_to_score},
                             in_tree_registry())
        objects = [WorkloadObject.from_dict({**OBJECT_TEMPLATES[t], "metadata": {
            **OBJECT_TEMPLATES[t]["metadata"], "namespace": op.namespace}})
            for op in self.workload.ops if isinstance(op, CreateAny) for t in op.templates]
        dra = dra_objects(nodes, self.workload) if self.workload.devices_per_node else []
        self.sim = Simulation(Manifest(nodes=nodes, workloads=objects, dra=dra), config, seed=spec.seed,
                              explain=False, features=spec.features())
        for op in self.workload.ops:
            if isinstance(op, CreateNodes):
                self.sim.storage.load(build_csi_nodes(op, nodes))
        self.algo = _AlgorithmTimer(self.sim.sched, timer)
        self._measured: set[str] = set()
        self._bound = 0  # binds so far, every pod
        self.bind_times: list[float] = []  # measured pods only
        self.sim.cluster.listeners.append(self._on_change)
        self._fast: Any = None  # the fast init path's placement state, once used

    def _on_change(self, ch: ClusterChange) -> None:
        if ch.kind == "pod-bound":
            self._bound += 1
            if ch.pod.uid in self._measured:
                self.bind_times.append(self.timer())

    def _drain(self, phase: str, total: int, progress: Progress | None) -> None:
        """The driver's queue loop (``Simulation._run_queue`` without re-adding every pod):
        its own attempt and clock-advance steps, so the bench runs exactly what simulate
        runs (in-flight bookkeeping, backoff and flush timers on the virtual clock)."""
        sim = self.sim
        budget = MAX_ATTEMPTS_PER_POD * max(1, total)
        attempts = 0
        bound_before = self._bound
        while budget > 0:
            qpi = sim.queue.pop()
            if qpi is None:
                if not sim._advance():
                    break
                continue
            budget -= 1
            if sim._attempt(qpi).result == "Scheduled":
                # simulate's per-pod record is not the scheduler's memory: keep it for
                # pending pods only (a bound pod's record is never read again)
                del sim.outcomes[qpi.pod.uid]
            attempts += 1
            if progress is not None and attempts % PROGRESS_EVERY == 0:
                progress(phase, self._bound - bound_before, total)
        if progress is not None:
            progress(phase, self._bound - bound_before, total)

    def _create(self, pods: list[Pod]) -> None:
        """As the API server and the informers would: store the pods, queue them."""
        sim = self.sim
        if self.claims:
            sim.dra.create_template_claims(pods)  # the resourceclaim controller's part
        sim.cluster.load((), pods)
        for p in pods:
            sim.outcomes[p.uid] = PodOutcome(p)
            sim.queue.add(p)

    def run(self, progress: Progress | None = None) -> BenchResult:
        params = self.spec.params
        start = end = 0.0
        samples_before = 0
        seq = 0
        for i, op in enumerate(self.workload.ops):
            if not isinstance(op, CreatePods):
                continue
            n = _count(op.count, params)
            pods = build_pods(op, n, op.namespace or f"namespace-{i}", first_seq=seq)
            if op.volume:
                pods, volumes = attach_volumes(op, pods)
                self.sim.storage.load(volumes)
            seq += n
            phase = "measure" if op.collect_metrics else "init"
            if self.spec.fast_init and not op.collect_metrics:
                self._fast = self._fast or FastInit(self.sim)
                direct = max(0, n - FAST_INIT_THROUGH_LOOP)
                self._bound += self._fast.place(pods[:direct])
                log.info("init pods: %d bound directly (fast path)", direct)
                if direct < n:  # the last ones through the loop: plugin caches warm as after a loop init
                    self._create(pods[direct:])
                    self._drain(phase, n - direct, progress)
                continue
            if op.collect_metrics:
                settle()
                self._measured.update(p.uid for p in pods)
                samples_before = len(self.algo.samples)
                start = self.timer()
            self._create(pods)
            self._drain(phase, n, progress)
            if op.collect_metrics:
                end = self.bind_times[-1] if self.bind_times else self.timer()
            log.info("%s pods: %d created, %d bound so far", phase, n, self._bound)
        gc.unfreeze()  # the measuring is over: back to normal collection (tests run many benches)
        return self.result(start, end, samples_before)

    def result(self, start: float, end: float, samples_before: int) -> BenchResult:
        """The metrics of the measured pods bound between ``start`` and ``end``; algorithm
        samples from index ``samples_before`` on."""
        scheduled = len(self.bind_times)
        wall = end - start
        tput = sorted(throughput_samples(self.bind_times, start, end))
        algo = sorted(self.algo.samples[samples_before:])
        ms = [a * 1000.0 for a in algo]
        return BenchResult(
            pods_per_second=scheduled / wall if wall > 0 else 0.0,
            throughput_1s_avg=sum(tput) / len(tput) if tput else None,
            throughput_1s_p50=nearest_rank(tput, 50), throughput_1s_p90=nearest_rank(tput, 90),
            throughput_1s_p99=nearest_rank(tput, 99),
            algo_latency_p50_ms=nearest_rank(ms, 50), algo_latency_p99_ms=nearest_rank(ms, 99),
            max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            percentage_of_nodes_to_score=self.spec.percentage_of_nodes_to_score,
            nodes=self.spec.nodes, pods=self.spec.pods, scheduled=scheduled)
