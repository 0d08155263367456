"""kube-scheduler's metrics that describe state, read from the scheduler when scraped (so the
scheduling cycle pays nothing for them). Names, labels and help texts as upstream v1.34's
``pkg/scheduler/metrics/metrics.go``:

``scheduler_unschedulable_pods{plugin, profile}``
    pods in the unschedulable pool, per plugin that rejected them (a pod counts for each).
``scheduler_inflight_events{event}``
    what the queue remembers while pods are in flight: cluster events by label, and
    ``PodPopped`` for each pod in flight.
``scheduler_goroutines{operation}``
    kubesched counts threads, not goroutines: ``binding`` is the number of binding cycles
    running on the binder's threads.
``scheduler_scheduler_cache_size{type}``
    ``nodes``, ``pods`` and ``assumed_pods`` in the cache (upstream's full name repeats
    ``scheduler``: subsystem ``scheduler``, name ``scheduler_cache_size``).
``scheduler_plugin_evaluation_total{plugin, extension_point, profile}``
    plugin calls at PreFilter, Filter, PreScore and Score (Filter and Score per node), from
    each profile's ``Framework.evaluations``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.queue.clusterevents import event_label

if TYPE_CHECKING:
    from kubesched.live.scheduler import LiveScheduler

LOCK_TIMEOUT = 2.0
POD_POPPED = "PodPopped"


class SchedulerState(Collector):
    """The state metrics of the scheduler last attached (none before: families without samples)."""

    def __init__(self) -> None:
        self.live: "LiveScheduler | None" = None

    def collect(self) -> Iterator[Any]:
        unsched = GaugeMetricFamily(
            "scheduler_unschedulable_pods", "[ALPHA] The number of unschedulable pods broken down by plugin name. "
            "A pod will increment the gauge for all plugins that caused it to not schedule and so this metric "
            "have meaning only when broken down by plugin.", labels=["plugin", "profile"])
        inflight = GaugeMetricFamily(
            "scheduler_inflight_events", "[ALPHA] Number of events currently tracked in the scheduling queue.",
            labels=["event"])
        goroutines = GaugeMetricFamily(
            "scheduler_goroutines", "[ALPHA] Number of running goroutines split by the work they do such as "
            "binding.", labels=["operation"])
        cache = GaugeMetricFamily(
            "scheduler_scheduler_cache_size", "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the "
            "scheduler cache.", labels=["type"])
        evals = CounterMetricFamily(
            "scheduler_plugin_evaluation", "[ALPHA] Number of attempts to schedule pods by each plugin and the "
            "extension point (available only in PreFilter, Filter, PreScore, and Score).",
            labels=["plugin", "extension_point", "profile"])
        live = self.live
        if live is not None and live.sched.lock.acquire(timeout=LOCK_TIMEOUT):
            try:
                self._fill(live, unsched, inflight, goroutines, cache, evals)
            finally:
                live.sched.lock.release()
        yield from (unsched, inflight, goroutines, cache, evals)

    @staticmethod
    def _fill(live: "LiveScheduler", unsched: GaugeMetricFamily, inflight: GaugeMetricFamily,
              goroutines: GaugeMetricFamily, cache: GaugeMetricFamily, evals: CounterMetricFamily) -> None:
        counts: dict[tuple[str, str], int] = {}
        for qpi in live.queue.unschedulable_pods.values():
            for plugin in qpi.unschedulable_plugins:
                key = (plugin, qpi.pod.scheduler_name)
                counts[key] = counts.get(key, 0) + 1
        for (plugin, profile), n in sorted(counts.items()):
            unsched.add_metric([plugin, profile], n)
        events: dict[str, int] = {}
        aq = live.queue.active_q
        if aq.in_flight:
            events[POD_POPPED] = len(aq.in_flight)
        for e in aq.in_flight_log():
            ev = getattr(e, "event", None)
            if ev is not None:
                label = event_label(ev)
                events[label] = events.get(label, 0) + 1
        for label, n in sorted(events.items()):
            inflight.add_metric([label], n)
        goroutines.add_metric(["binding"], live.binder.in_flight)
        c = live.cache
        assumed = sum(1 for st in c.pod_states.values() if st.assumed)
        for kind, n in (("assumed_pods", assumed), ("nodes", len(c.nodes)), ("pods", len(c.pod_states))):
            cache.add_metric([kind], n)
        for profile, fw in sorted(live.sched.profiles.items()):
            for (plugin, point), n in sorted(fw.evaluations.items()):
                evals.add_metric([plugin, point, profile], n)
