"""kubesched's scheduler metrics against upstream v1.34's names, label sets and buckets (the
table in ``upstream_metrics.py``, transcribed from ``pkg/scheduler/metrics/metrics.go``)."""

from __future__ import annotations

import math

from prometheus_client import generate_latest
from upstream_metrics import PROCESS, UPSTREAM, exposed

from kubesched.framework.status import Status
from kubesched.live.metrics import SchedulerMetrics
from kubesched.queue.moves import QueueMove
from kubesched.explanation.attempt import Attempt
from kubesched.testing.wrappers import make_pod


def test_names_labels_and_buckets_match_upstream() -> None:
    m = SchedulerMetrics()
    # one observation through each hook, so every labelled family has a sample
    m.on_move(QueueMove(0.0, "ns/p", None, "activeQ", "PodAdd"))
    m.on_event("NodeAdd", 0.0002)
    m.on_extension_point("default-scheduler", "Filter", Status(), 0.001)
    m.record_plugin("NodeResourcesFit", "Filter", "Success", 0.00002)
    pod = make_pod().name("p").obj()
    m.on_attempt(pod, Attempt(time=10.0, result="Scheduled", chosen="n1", pod_attempts=2, initial_attempt=7.5), 0.5)
    got = exposed(generate_latest(m.registry).decode())
    for name, (kind, labels, buckets) in UPSTREAM.items():
        assert name in got, name
        g_kind, g_labels, g_buckets, _ = got[name]
        assert g_kind == kind, name
        if name in ("scheduler_pending_pods", "scheduler_inflight_events", "scheduler_goroutines",
                    "scheduler_scheduler_cache_size", "scheduler_unschedulable_pods",
                    "scheduler_plugin_evaluation_total"):
            continue  # read from a running scheduler when scraped: checked by the serve e2e test
        assert g_labels == frozenset(labels), name
        if buckets is not None:
            assert g_buckets is not None and len(g_buckets) == len(buckets), name
            assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(g_buckets, buckets)), name
    for name in PROCESS:
        assert name in got, name


def test_sli_and_attempts_observed_for_a_scheduled_pod() -> None:
    m = SchedulerMetrics()
    pod = make_pod().name("p").obj()
    # first tried at t=7.5, chosen at t=10 after 0.5 s of cycle: 3 s, on its 2nd attempt
    m.on_attempt(pod, Attempt(time=10.0, result="Scheduled", chosen="n1", pod_attempts=2, initial_attempt=7.5), 0.5)
    m.on_attempt(pod, Attempt(time=1.0, result="Unschedulable", pod_attempts=1, initial_attempt=1.0), 0.1)
    assert m.registry.get_sample_value("scheduler_pod_scheduling_sli_duration_seconds_sum", {"attempts": "2"}) == 3.0
    assert m.registry.get_sample_value("scheduler_pod_scheduling_attempts_sum") == 2.0
    assert m.registry.get_sample_value("scheduler_pod_scheduling_attempts_count") == 1.0
    m.on_attempt(pod, Attempt(time=20.0, result="Scheduled", chosen="n1", pod_attempts=17, initial_attempt=0.0), 0)
    assert m.registry.get_sample_value("scheduler_pod_scheduling_sli_duration_seconds_count", {"attempts": "15+"}) == 1


def test_repeated_observations_land_in_their_own_label_sets() -> None:
    """The children are looked up once and kept (live/metrics.py ``_Children``): repeated
    calls with the same and with different label values still count per label set."""
    m = SchedulerMetrics()
    for _ in range(3):
        m.on_extension_point("default-scheduler", "Filter", Status(), 0.001)
    m.on_extension_point("other", "Filter", Status(), 0.001)
    m.on_move(QueueMove(0.0, "ns/p", None, "activeQ", "PodAdd"))
    m.on_move(QueueMove(0.0, "ns/q", None, "activeQ", "PodAdd"))
    m.on_event("NodeAdd", 0.0002)
    m.on_event("NodeAdd", 0.0002)
    m.on_event("PodAdd", 0.0002)
    pod = make_pod().name("p").obj()
    m.on_attempt(pod, Attempt(time=1.0, result="Unschedulable", pod_attempts=1, initial_attempt=1.0), 0.1)
    m.on_attempt(pod, Attempt(time=2.0, result="Unschedulable", pod_attempts=2, initial_attempt=1.0), 0.1)
    r = m.registry
    ep = "scheduler_framework_extension_point_duration_seconds_count"
    assert r.get_sample_value(ep, {"extension_point": "Filter", "status": "Success",
                                   "profile": "default-scheduler"}) == 3
    assert r.get_sample_value(ep, {"extension_point": "Filter", "status": "Success", "profile": "other"}) == 1
    assert r.get_sample_value("scheduler_queue_incoming_pods_total", {"queue": "active", "event": "PodAdd"}) == 2
    ev = "scheduler_event_handling_duration_seconds_count"
    assert r.get_sample_value(ev, {"event": "NodeAdd"}) == 2 and r.get_sample_value(ev, {"event": "PodAdd"}) == 1
    assert r.get_sample_value("scheduler_schedule_attempts_total",
                              {"result": "unschedulable", "profile": "default-scheduler"}) == 2
