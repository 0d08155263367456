"""kube-scheduler's metrics (``pkg/scheduler/metrics`` names, labels, buckets) on the
``/metrics`` of ``kubesched serve``, next to the API server's; and the sampled per-plugin
timing of ``runtime._call``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from serve_harness import Server, eventually, pod_manifest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime.metrics import PLUGIN_RECORDER
from kubesched.framework.runtime.framework import _call
from kubesched.framework.status import Code, Status
from kubesched.live.metrics import exponential_buckets

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")


def samples(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    status, text = server.request("GET", "/metrics")
    assert status == 200 and isinstance(text, str)
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(got: dict[Any, float], name: str, **labels: str) -> float:
    return got.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.slow
def test_scheduler_metrics_on_serve_metrics(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "2", "--node-cpu", "2", *SCHEDULER_ONLY)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    for i in range(3):
        status, _ = server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest(f"p{i}", cpu="500m"))
        assert status == 201
    status, _ = server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("huge", cpu="64"))
    assert status == 201

    def settled() -> dict[Any, float] | None:
        got = samples(server)
        ok = (value(got, "scheduler_schedule_attempts_total", result="scheduled", profile="default-scheduler") == 3
              and value(got, "scheduler_schedule_attempts_total", result="unschedulable",
                        profile="default-scheduler") >= 1
              and value(got, "scheduler_pending_pods", queue="unschedulable") == 1)
        return got if ok else None

    got = eventually(settled)
    _, pods = server.request("GET", "/api/v1/namespaces/default/pods")
    bound = [p for p in pods["items"] if p["spec"].get("nodeName")]
    assert len(bound) == 3
    assert value(got, "scheduler_schedule_attempts_total", result="error", profile="default-scheduler") == 0
    assert value(got, "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled",
                 profile="default-scheduler") == 3
    assert value(got, "scheduler_scheduling_attempt_duration_seconds_bucket", result="scheduled",
                 profile="default-scheduler", le="+Inf") == 3
    attempts = sum(v for (n, _), v in got.items() if n == "scheduler_schedule_attempts_total")
    assert value(got, "scheduler_scheduling_algorithm_duration_seconds_count") == attempts
    for queue in ("active", "backoff", "gated"):
        assert value(got, "scheduler_pending_pods", queue=queue) == 0
    # the unschedulable pod ran PostFilter (DefaultPreemption): no victims could help
    assert value(got, "scheduler_preemption_attempts_total") >= 1
    assert value(got, "scheduler_preemption_victims_count") == 0
    assert value(got, "scheduler_framework_extension_point_duration_seconds_count", extension_point="PreFilter",
                 status="Success", profile="default-scheduler") == attempts
    assert value(got, "scheduler_framework_extension_point_duration_seconds_count", extension_point="Bind",
                 status="Success", profile="default-scheduler") == 3
    _, text = server.request("GET", "/metrics")
    assert "# TYPE scheduler_plugin_execution_duration_seconds histogram" in text  # sampled: maybe no samples
    assert 'le="0.0001"' in text  # the extension points' first upstream bucket
    assert value(got, "apiserver_request_total", verb="POST", group="", version="v1", resource="pods",
                 subresource="", scope="resource", component="", code="201") >= 0  # the server's own, still there


def test_upstream_buckets() -> None:
    assert exponential_buckets(1, 2, 7) == (1, 2, 4, 8, 16, 32, 64)
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)


class _Plugin:
    name = "Probe"

    def filter(self, state: CycleState, pod: Any, ni: Any) -> Status:
        return Status(Code.Unschedulable, ("no",), self.name)


@pytest.mark.parametrize("sampled", [True, False], ids=["sampled", "not-sampled"])
def test_plugin_calls_timed_only_in_sampled_cycles(sampled: bool) -> None:
    seen: list[tuple[str, str, str, float]] = []
    state = CycleState()
    state.write(PLUGIN_RECORDER, lambda *a: seen.append(a))
    state.record_plugin_metrics = sampled
    pl = _Plugin()
    st = _call(pl, "Filter", pl.filter, state, None, None)
    assert st.code == Code.Unschedulable
    assert [s[:3] for s in seen] == ([("Probe", "Filter", "Unschedulable")] if sampled else [])
    _call(pl, "AddPod", lambda *a: Status(Code.Success), state)
    assert [s[:3] for s in seen][1:] == ([("Probe", "PreFilterExtensionAddPod", "Success")] if sampled else [])
