"""Workload objects end to end, against real ``kubesched serve`` processes and kubectl:

* default topology spreading: a real ``kubesched run`` process schedules a Deployment of 9
  replicas selected by a Service (both applied with kubectl; serve's Deployment and
  ReplicaSet controllers create the pods) on 9 nodes in 3 zones, through its informers for
  Services and ReplicaSets;
* serve serves ReplicationControllers and StatefulSets;
* a LiveScheduler's workload listers follow adds, updates and deletes.

Upstream facts (podtopologyspread plugin.go / scoring.go, helper/spread.go): the pods have
no constraints of their own, their controller is a ReplicaSet and a Service selects them,
so the system default constraints apply (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway).
PreScore weights each constraint by log(size + 2), size = 9 nodes for hostname and 3 zones
for zone; Score is round(c_host * log(11) + (3 - 1) + c_zone * log(5) + (5 - 1)) with the
matching pods counted on the node and in its zone; NormalizeScore gives
100 * (max + min - s) // max (100 everywhere when max is 0); the profile weight is 2.
Every attempt's PodTopologySpread scores (from ``/debug/explain``) are checked against
that formula over the pods placed before it, and the greedy result of the formula is one
pod per node, three per zone.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import RunProcess, api_pods, eventually, write_config
from serve_harness import API_ONLY, Server

pytestmark = pytest.mark.slow

ZONE = "topology.kubernetes.io/zone"


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"schedulerName": "kubesched",
                                           "containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests": {"cpu": "100m"}}}]}}}}


def expected_spread_scores(nodes: dict[str, str], placed: list[str]) -> dict[str, int]:
    """Upstream's PodTopologySpread score (weighted) for each node, given the nodes of the
    pods placed so far (every node feasible)."""
    host_w, zone_w = math.log(len(nodes) + 2), math.log(len(set(nodes.values())) + 2)
    per_node, per_zone = Counter(placed), Counter(nodes[n] for n in placed)
    raw = {n: round(per_node[n] * host_w + 2 + per_zone[z] * zone_w + 4) for n, z in nodes.items()}
    hi, lo = max(raw.values()), min(raw.values())
    return {n: 2 * (100 if hi == 0 else 100 * (hi + lo - s) // hi) for n, s in raw.items()}


def test_deployment_spreads_as_upstream_default_spreading(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn("--nodes", "9", "--zones", "3", "--no-node-agent", "--no-node-lifecycle", "--no-scheduler")
    doc = json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in doc["items"]}
    assert len(nodes) == 9 and Counter(nodes.values()) == {"zone-a": 3, "zone-b": 3, "zone-c": 3}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    server.kubectl("apply", "-f", "-", input=json.dumps(service))
    run = RunProcess(server, write_config(tmp_path / "config.yaml", "kubesched"), "spread", tmp_path)
    try:
        run.wait_for("kubesched scheduler running")
        server.kubectl("apply", "-f", "-", input=json.dumps(deployment(9)))
        pods = eventually(lambda: (p := api_pods(server)) and len(p) == 9
                          and all(x["spec"].get("nodeName") for x in p.values()) and p, timeout=60)
        attempts = {}
        for name in pods:
            status, body = run.get(f"/debug/explain/default/{name}")
            assert status == 200, body
            attempts[name] = json.loads(body)
    finally:
        assert run.stop() == 0
    placed: list[str] = []
    for name, att in sorted(attempts.items(), key=lambda kv: kv[1]["time"]):
        want = expected_spread_scores(nodes, placed)
        assert {n: s["PodTopologySpread"] for n, s in att["scores"].items()} == want, (name, placed)
        assert att["chosen"] == pods[name]["spec"]["nodeName"]
        placed.append(att["chosen"])
    assert Counter(placed) == {n: 1 for n in nodes}  # one per node: three per zone


def test_kubectl_serves_replication_controllers_and_stateful_sets(spawn: Callable[..., Server]) -> None:
    """``v1 ReplicationController`` and ``apps/v1 StatefulSet`` through kubectl: apply, get
    (short names from discovery), the RC's selector defaulted from its template, delete."""
    server = spawn("--nodes", "1", "--no-node-agent", "--no-node-lifecycle", "--no-scheduler", "--no-controllers")
    template = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "redis"}]}}
    docs = [{"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "db"},
             "spec": {"replicas": 2, "template": template}},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
             "spec": {"serviceName": "web", "replicas": 3, "selector": {"matchLabels": {"app": "db"}},
                      "template": template}}]
    server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    assert server.kubectl("get", "rc,sts", "-o", "name").stdout.split() == [
        "replicationcontroller/db", "statefulset.apps/web"]
    rc = json.loads(server.kubectl("get", "rc", "db", "-o", "json").stdout)
    assert rc["spec"]["selector"] == {"app": "db"} and rc["spec"]["replicas"] == 2
    server.kubectl("delete", "sts", "web")
    assert server.kubectl("get", "sts", "-o", "name").stdout.split() == []


def test_live_listers_follow_services_and_controllers(spawn: Callable[..., Server],
                                                      live: Callable[..., Any]) -> None:
    """The LiveScheduler's workload listers (what DefaultSelector reads) follow the API:
    a Service and a ReplicaSet appear, a Service's new selector replaces the old one, a
    deleted Service disappears; objects of another namespace stay apart."""
    server = spawn("--nodes", "1", *API_ONLY)
    sched = live(server)
    lister = sched.objects.workloads()

    def apply(doc: dict[str, Any]) -> None:
        server.kubectl("apply", "-f", "-", input=json.dumps(doc))

    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    apply(svc)
    apply({**svc, "metadata": {"name": "web", "namespace": "team"}})
    apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
           "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    eventually(lambda: lister.get("ReplicaSet", "default", "rs") is not None
               and [s.label_selector for s in lister.list("Service", "default")] == [{"app": "web"}])
    assert [s.namespace for s in lister.list("Service", "team")] == ["team"]
    apply({**svc, "spec": {"selector": {"app": "web", "tier": "fe"}, "ports": [{"port": 80}]}})
    eventually(lambda: [s.label_selector for s in lister.list("Service", "default")] == [{"app": "web", "tier": "fe"}])
    server.kubectl("delete", "service", "web")
    eventually(lambda: lister.list("Service", "default") == [])
    assert len(lister.list("Service", "team")) == 1
