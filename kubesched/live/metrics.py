"""The live scheduler's Prometheus metrics, with kube-scheduler's names, labels, buckets
and help texts (``pkg/scheduler/metrics``).

Each :class:`SchedulerMetrics` has its own ``CollectorRegistry`` (several schedulers may
live in one process: tests); ``kubesched serve`` adds it to the API server's ``/metrics``.
Fed through the core's hooks: the loop's ``attempt_hooks`` (attempts, durations,
preemption victims), each profile's ``Framework.observer`` (extension points; PostFilter
runs count as preemption attempts) and ``Scheduler.algorithm_observer`` (the algorithm's
duration, and sampling of cycles for per-plugin timing, as upstream's
``pluginMetricsSamplePercent``), the scheduler's queue moves (``move_hooks``: incoming
pods) and informer events (``event_observer``: event handling latency).
``scheduler_pending_pods`` and the state metrics of :mod:`.metrics_state` are read when
scraped; ``process_*`` comes from prometheus_client's process collector (Linux ``/proc``).

``scheduler_pod_scheduling_sli_duration_seconds`` and ``scheduler_pod_scheduling_attempts``
are observed when a pod's node is chosen (see the simplification below), from the time of
its first attempt, with its attempt count (``attempts`` label ``1`` .. ``15+``).

One :class:`SchedulerMetrics` may outlive the scheduler it observes: :meth:`attach` points
it at a new one (``kubesched run`` builds a new scheduler when it loses its lease; its
counters go on, as they would in one kube-scheduler process).

Simplification: an attempt counts as ``scheduled`` once its node is chosen (upstream counts
it when the binding cycle ends); a binding that fails later is not re-counted as ``error``.
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime.metrics import PLUGIN_RECORDER, status_label
from kubesched.live.metrics_state import SchedulerState
from kubesched.queue.moves import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE, QueueMove
from kubesched.explanation.attempt import Attempt

if TYPE_CHECKING:
    from kubesched.live.scheduler import LiveScheduler

log = logging.getLogger(__name__)

PLUGIN_METRICS_SAMPLE_PERCENT = 10  # upstream's pluginMetricsSamplePercent
QUEUE_LABELS = {ACTIVE_Q: "active", BACKOFF_Q: "backoff", UNSCHEDULABLE: "unschedulable", GATED: "gated"}
ATTEMPTS_CAP = 15  # upstream getAttemptsLabel: "15+" from there on



def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Upstream's ``ExponentialBuckets``."""
    return tuple(start * factor ** i for i in range(count))


class _PendingPods(Collector):
    """The queue sizes of the scheduler last attached (none before: no samples)."""

    def __init__(self) -> None:
        self.live: "LiveScheduler | None" = None

    def collect(self) -> Iterator[Any]:
        fam = GaugeMetricFamily(
            "scheduler_pending_pods", "[STABLE] Number of pending pods, by the queue type. 'active' means number "
            "of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
            "pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
            "number of unschedulable pods that the scheduler never attempted to schedule because they are "
            "gated.", labels=["queue"])
        live = self.live
        if live is None:
            yield fam
            return
        q, lock = live.queue, live.sched.lock
        if lock.acquire(timeout=2.0):
            try:
                gated = sum(1 for p in q.unschedulable_pods.values() if p.gated)
                counts = {"active": len(q.active_q), "backoff": len(q.backoff_q),
                          "unschedulable": len(q.unschedulable_pods) - gated, "gated": gated}
            finally:
                lock.release()
            for name, n in counts.items():
                fam.add_metric([name], n)
        yield fam


class _Children:
    """A labelled metric's children by label values. prometheus_client's ``labels()``
    checks and converts the values and takes the metric's lock on every call; the live
    loop calls it about a dozen times per pod, so each child is looked up once (nothing
    here removes children, so a kept one is always the metric's)."""

    __slots__ = ("_metric", "_by")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._by: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._by.get(values)
        if child is None:  # two threads may both ask: labels() gives both the same child
            child = self._by[values] = self._metric.labels(*values)
        return child


class SchedulerMetrics:
    def __init__(self, sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT) -> None:
        self.registry = CollectorRegistry()
        self.sample_percent = sample_percent
        self._rng = random.Random()  # never the scheduler's own rng: decisions must not change
        r = self.registry
        self.attempts = Counter(
            "scheduler_schedule_attempts", "[STABLE] Number of attempts to schedule pods, by the result. "
            "'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler "
            "problem.", ["result", "profile"], registry=r)
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds", "[STABLE] Scheduling attempt latency in seconds "
            "(scheduling algorithm + binding)", ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds", "[ALPHA] Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims", "[STABLE] Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7), registry=r)
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "[STABLE] Total preemption attempts in the cluster till now",
            registry=r)
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds", "[STABLE] Latency for running all plugins "
            "of a specific extension point.", ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds", "[ALPHA] Duration for running a plugin at a specific "
            "extension point.", ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        # kubesched's own (upstream has no extender metric): one sample per extender call
        self.extender_duration = Histogram(
            "kubesched_extender_call_duration_seconds", "Latency of an HTTP scheduler extender call, by "
            "extender (urlPrefix) and verb (filter, prioritize).", ["extender", "verb"],
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.incoming_pods = Counter(
            "scheduler_queue_incoming_pods", "[STABLE] Number of pods added to scheduling queues by event and "
            "queue type.", ["queue", "event"], registry=r)
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds", "[BETA] E2e latency for a pod being scheduled, from "
            "the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
            ["attempts"], buckets=exponential_buckets(0.01, 2, 20), registry=r)
        self.pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts", "[STABLE] Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5), registry=r)
        self.event_handling = Histogram(
            "scheduler_event_handling_duration_seconds", "[ALPHA] Event handling latency in seconds.",
            ["event"], buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        # the children by label values, looked up a dozen times per pod (see _Children)
        self._ep_child = _Children(self.extension_point_duration)
        self._plugin_child = _Children(self.plugin_duration)
        self._incoming_child = _Children(self.incoming_pods)
        self._event_child = _Children(self.event_handling)
        self._attempts_child = _Children(self.attempts)
        self._attempt_duration_child = _Children(self.attempt_duration)
        self._sli_child = _Children(self.sli_duration)
        self._pending = _PendingPods()
        r.register(self._pending)
        self._state = SchedulerState()
        r.register(self._state)
        ProcessCollector(registry=r)  # process_cpu_seconds_total, process_resident_memory_bytes, ...

    # -- wiring ------------------------------------------------------------------------------
    def attach(self, live: "LiveScheduler") -> None:
        """Observe ``live``'s loop (attempts), each profile's extension points and the
        scheduling algorithm, and export its queue's sizes (instead of those of the
        scheduler attached before, if any)."""
        live.loop.attempt_hooks.append(self.on_attempt)
        for profile, fw in live.sched.profiles.items():
            fw.observer = functools.partial(self.on_extension_point, profile)
        live.sched.algorithm_observer = self
        live.move_hooks.append(self.on_move)
        live.event_observer = self.on_event
        self._pending.live = live
        self._state.live = live

    def on_extension_point(self, profile: str, point: str, result: Any, seconds: float) -> None:
        self._ep_child(point, status_label(result), profile).observe(seconds)
        if point == "PostFilter":
            self.preemption_attempts.inc()

    # the scheduling algorithm (Scheduler.algorithm_observer)
    def before(self, state: CycleState) -> None:
        if self._rng.randrange(100) < self.sample_percent:
            state.record_plugin_metrics = True
            state.write(PLUGIN_RECORDER, self.record_plugin)

    def after(self, seconds: float) -> None:
        self.algorithm_duration.observe(seconds)

    # -- observations --------------------------------------------------------------------------
    def record_plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self._plugin_child(plugin, point, status).observe(seconds)

    def on_move(self, move: QueueMove) -> None:
        queue = QUEUE_LABELS.get(move.dst)
        if queue is not None:
            self._incoming_child(queue, move.event).inc()

    def on_event(self, label: str, seconds: float) -> None:
        self._event_child(label).observe(seconds)

    def on_attempt(self, pod: Pod, att: Attempt, seconds: float) -> None:
        if att.result == "Error":
            result = "error"
        elif att.chosen is not None:
            result = "scheduled"
        else:
            result = "unschedulable"
        profile = pod.scheduler_name
        self._attempts_child(result, profile).inc()
        self._attempt_duration_child(result, profile).observe(seconds)
        if result == "scheduled" and att.pod_attempts > 0:
            n = att.pod_attempts
            self.pod_attempts.observe(n)
            if att.initial_attempt is not None:
                label = f"{ATTEMPTS_CAP}+" if n >= ATTEMPTS_CAP else str(n)
                self._sli_child(label).observe(max(0.0, att.time + seconds - att.initial_attempt))
        if att.nominated_node:
            self.preemption_victims.observe(len(att.victims))
        for key, secs in att.extender_seconds.items():
            ext, _, verb = key.rpartition(" ")
            self.extender_duration.labels(ext, verb).observe(secs)
