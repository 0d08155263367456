"""Explain, result annotations and metrics of the scheduler inside a real ``kubesched serve``:
``/debug/explain/<ns>/<pod>`` over HTTP (JSON and ``?output=text``), ``kubesched explain
--kubeconfig`` against it (and its errors), kube-scheduler-simulator's annotations seen with
kubectl, and the upstream metric names on ``/metrics``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from live_harness import eventually
from serve_harness import REPO, Server, free_port, pod_manifest
from upstream_metrics import UPSTREAM, exposed

pytestmark = pytest.mark.slow

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")
KSS = "kube-scheduler-simulator.sigs.k8s.io/"


def explain_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "explain", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def annotations(server: Server, name: str) -> dict[str, str]:
    pod = json.loads(server.kubectl("get", "pod", name, "-o", "json").stdout)
    return dict(pod["metadata"].get("annotations") or {})


def test_explain_annotations_and_metrics_of_serve(spawn: Callable[..., Server], tmp_path: Path) -> None:
    # 3 nodes of 8 cpu (serve's default): a 20-cpu pod fits nowhere, a 10m pod fits everywhere
    server = spawn("--nodes", "3", "--result-annotations", *SCHEDULER_ONLY)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    server.kubectl("apply", "-f", "-", input=json.dumps(pod_manifest("big", cpu="20")))
    server.kubectl("apply", "-f", "-", input=json.dumps(pod_manifest("small")))

    # the unschedulable pod: its explanation over HTTP, JSON
    def explained() -> Any:
        status, doc = server.request("GET", "/debug/explain/default/big")
        return doc if status == 200 else None
    doc = eventually(explained, timeout=60)
    assert doc["pod"] == "default/big" and doc["result"] == "Unschedulable"
    assert doc["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert len(doc["filter"]) == 3
    assert all(v["plugin"] == "NodeResourcesFit" and v["reasons"] == ["Insufficient cpu"]
               for v in doc["filter"].values())
    assert doc["evaluation"] == {"nodes": 3, "evaluated": 3, "notEvaluated": 0, "reason": None}
    assert doc["attempts"][-1]["attempt"] == doc["attemptsTotal"] >= 1
    assert any(e["event"] == "move" and e["to"] == "unschedulable" for e in doc["history"])
    assert any(e["event"] == "attempt" and e["result"] == "Unschedulable" for e in doc["history"])

    # ... as text, and through `kubesched explain --kubeconfig`
    status, text = server.request("GET", "/debug/explain/default/big?output=text")
    assert status == 200 and "0/3 nodes are available: 3 Insufficient cpu." in text and "NodeResourcesFit" in text
    out = explain_cli("--kubeconfig", str(server.kubeconfig), "default/big")
    assert out.returncode == 0, out.stderr
    assert "default/big" in out.stdout and "Insufficient cpu" in out.stdout and "History" in out.stdout
    as_json = explain_cli("--kubeconfig", str(server.kubeconfig), "default/big", "-o", "json")
    assert json.loads(as_json.stdout)["filter"] == doc["filter"]

    # errors: a pod never tried, a server that is not there, both ways of asking at once
    status, body = server.request("GET", "/debug/explain/default/nobody")
    assert status == 404 and "no scheduling attempt" in body["error"]
    out = explain_cli("--kubeconfig", str(server.kubeconfig), "default/nobody")
    assert out.returncode == 2 and "pod default/nobody: no scheduling attempt" in out.stderr
    assert "Traceback" not in out.stderr
    out = explain_cli("--scheduler-url", f"http://127.0.0.1:{free_port()}", "default/big")
    assert out.returncode == 2 and "cannot reach the scheduler at" in out.stderr and "Traceback" not in out.stderr
    out = explain_cli("--kubeconfig", str(server.kubeconfig), "-f", "x.yaml", "default/big")
    assert out.returncode == 2 and "exclude each other" in out.stderr

    # the scheduled pod: kube-scheduler-simulator's annotations, written after binding
    ann = eventually(lambda: (a := annotations(server, "small")) and KSS + "bind-result" in a and a, timeout=60)
    node = json.loads(server.kubectl("get", "pod", "small", "-o", "json").stdout)["spec"]["nodeName"]
    assert ann[KSS + "selected-node"] == node
    assert json.loads(ann[KSS + "bind-result"]) == {"DefaultBinder": "success"}
    filt = json.loads(ann[KSS + "filter-result"])
    assert len(filt) == 3 and node in filt
    assert all(set(v.values()) == {"passed"} for v in filt.values())
    final = json.loads(ann[KSS + "finalscore-result"])
    assert set(final) == set(filt) and all(isinstance(v, str) for s in final.values() for v in s.values())
    assert len(json.loads(ann[KSS + "result-history"])) >= 1
    big = eventually(lambda: (a := annotations(server, "big")) and KSS + "filter-result" in a and a, timeout=60)
    big_filter = json.loads(big[KSS + "filter-result"])
    assert len(big_filter) == 3 and all(v == {"NodeUnschedulable": "passed", "NodeName": "passed", "TaintToleration": "passed",
                     "NodeAffinity": "passed", "NodePorts": "passed", "NodeResourcesFit": "Insufficient cpu"}
               for v in big_filter.values())
    assert big[KSS + "selected-node"] == ""

    # upstream's metric names on the server's /metrics
    status, metrics = server.request("GET", "/metrics")
    assert status == 200
    for name in ("scheduler_queue_incoming_pods_total", "scheduler_unschedulable_pods",
                 "scheduler_pod_scheduling_sli_duration_seconds_bucket", "scheduler_pod_scheduling_attempts_bucket",
                 "scheduler_plugin_evaluation_total", "scheduler_event_handling_duration_seconds_bucket",
                 "# TYPE scheduler_inflight_events gauge", "scheduler_goroutines", "scheduler_scheduler_cache_size",
                 "process_resident_memory_bytes", "process_cpu_seconds_total"):
        assert name in metrics, name
    got = exposed(metrics)
    for name, (kind, labels, _buckets) in UPSTREAM.items():  # upstream's table (upstream_metrics.py)
        assert name in got and got[name][0] == kind, name
        if got[name][3]:  # has samples
            assert got[name][1] == frozenset(labels), name
    assert 'scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"} 1.0' in metrics
    assert 'scheduler_scheduler_cache_size{type="nodes"} 3.0' in metrics
