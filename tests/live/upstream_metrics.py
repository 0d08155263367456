"""kube-scheduler v1.34's metrics, transcribed from upstream ``pkg/scheduler/metrics/metrics.go``
(kubernetes/kubernetes, release-1.34): full name -> (type, label names, histogram buckets).
``ExponentialBuckets(start, factor, count)`` is written out as that call's arguments.

Not provided by kubesched: ``scheduler_permit_wait_duration_seconds``, the deprecated
``scheduler_pod_scheduling_duration_seconds`` and ``scheduler_queueing_hint_execution_duration_seconds``
(registered upstream only with the QueueingHints feature gate's instrumentation)."""

from __future__ import annotations

from typing import Any


def exp(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor ** i for i in range(count))


UPSTREAM: dict[str, tuple[str, tuple[str, ...], tuple[float, ...] | None]] = {
    "scheduler_schedule_attempts_total": ("counter", ("result", "profile"), None),
    "scheduler_scheduling_attempt_duration_seconds": ("histogram", ("result", "profile"), exp(0.001, 2, 15)),
    "scheduler_scheduling_algorithm_duration_seconds": ("histogram", (), exp(0.001, 2, 15)),
    "scheduler_event_handling_duration_seconds": ("histogram", ("event",), exp(0.0001, 2, 12)),
    "scheduler_preemption_victims": ("histogram", (), exp(1, 2, 7)),
    "scheduler_preemption_attempts_total": ("counter", (), None),
    "scheduler_pending_pods": ("gauge", ("queue",), None),
    "scheduler_inflight_events": ("gauge", ("event",), None),
    "scheduler_goroutines": ("gauge", ("operation",), None),
    "scheduler_pod_scheduling_sli_duration_seconds": ("histogram", ("attempts",), exp(0.01, 2, 20)),
    "scheduler_pod_scheduling_attempts": ("histogram", (), exp(1, 2, 5)),
    "scheduler_framework_extension_point_duration_seconds": (
        "histogram", ("extension_point", "status", "profile"), exp(0.0001, 2, 12)),
    "scheduler_plugin_execution_duration_seconds": (
        "histogram", ("plugin", "extension_point", "status"), exp(0.00001, 1.5, 20)),
    "scheduler_queue_incoming_pods_total": ("counter", ("queue", "event"), None),
    "scheduler_scheduler_cache_size": ("gauge", ("type",), None),
    "scheduler_unschedulable_pods": ("gauge", ("plugin", "profile"), None),
    "scheduler_plugin_evaluation_total": ("counter", ("plugin", "extension_point", "profile"), None),
}
PROCESS = ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
           "process_start_time_seconds", "process_open_fds", "process_max_fds")


def exposed(text: str) -> dict[str, tuple[str, frozenset[str], tuple[float, ...] | None, int]]:
    """Prometheus text -> full name -> (type, label names, buckets, number of samples)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, Any] = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name + ("_total" if fam.type == "counter" else "")
        labels: set[str] = set()
        buckets: set[float] = set()
        for s in fam.samples:
            labels |= set(s.labels) - {"le"}
            if s.name.endswith("_bucket") and s.labels.get("le") not in (None, "+Inf"):
                buckets.add(float(s.labels["le"]))
        out[name] = (fam.type, frozenset(labels), tuple(sorted(buckets)) if fam.type == "histogram" else None,
                     len(fam.samples))
    return out
