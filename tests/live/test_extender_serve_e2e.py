"""``kubesched serve`` and ``kubesched run`` with an extender, end to end: real processes,
real kubectl.

A real ``kubesched extender`` serves LabelGuard (tests/live/plugins/label_guard.py) with a
node and pod cache fed from the server through its kubeconfig; the server's scheduler calls
it with ``nodeCacheCapable: true`` (names only), weight 5, and lets it bind (``bindVerb``).
Then the extender goes down: a non-ignorable one stops scheduling with upstream's error
(no preemption, the pod stays Pending), an ignorable one is skipped
(pkg/scheduler/schedule_one.go findNodesThatPassExtenders, extender.go send).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from extender_harness import free_port, start_extender
from live_harness import RunProcess, eventually, write_config
from serve_harness import Server, pod_manifest

pytestmark = pytest.mark.slow

CONFIGS = Path(__file__).parent / "extender_configs"
SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")
# node: (disk, rank); LabelGuard scores 10 × (rank % 11)
LABELS = {"node-01": ("hdd", "9"), "node-02": ("ssd", "3"), "node-03": ("ssd", "7")}


def _config(tmp_path: Path, port: int, **extra: Any) -> Path:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [{"urlPrefix": f"http://127.0.0.1:{port}", "filterVerb": "filter",
                          "prioritizeVerb": "prioritize", "weight": 5, "httpTimeout": "10s", **extra}]}
    path = tmp_path / f"sched-{port}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _label(server: Server) -> None:
    for node, (disk, rank) in LABELS.items():
        server.kubectl("label", "node", node, f"disk={disk}", f"rank={rank}")


def _pods(server: Server) -> dict[str, dict[str, Any]]:
    doc = json.loads(server.kubectl("get", "pods", "-o", "json").stdout)
    return {p["metadata"]["name"]: p for p in doc["items"]}


def _condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in pod["status"].get("conditions") or () if c["type"] == "PodScheduled"), None)


def _create(server: Server, name: str, **labels: str) -> None:
    server.kubectl("apply", "-f", "-", input=json.dumps(pod_manifest(name, **labels)))


def test_pods_go_where_the_served_plugin_says_and_a_down_extender_fails_as_upstream(
        spawn: Callable[..., Server], tmp_path: Path) -> None:
    port = free_port()
    server = spawn("--nodes", "3", *SCHEDULER_ONLY, "--config",
                   str(_config(tmp_path, port, nodeCacheCapable=True, bindVerb="bind")))
    _label(server)
    proc, url = start_extender(CONFIGS / "label-guard-fit.yaml", "--kubeconfig", str(server.kubeconfig),
                               port=port)
    try:
        # hand computation: the extender's score s = rank % 11 counts s × 5 × 10 in the total,
        # 450 / 150 / 350 for node-01/02/03, far more than the default plugins' spread on
        # empty equal nodes and 10m pods. A frontend pod may not go to node-01 (hdd).
        _create(server, "web", tier="frontend")
        _create(server, "api", tier="backend")
        got = eventually(lambda: (p := _pods(server)) and all(p[n]["spec"].get("nodeName") for n in ("web", "api"))
                         and p, timeout=60)
        assert got["web"]["spec"]["nodeName"] == "node-03"
        assert got["api"]["spec"]["nodeName"] == "node-01"
        with urllib.request.urlopen(f"{url}/metrics", timeout=10) as r:
            metrics = r.read().decode()
        # the extender bound both (bindVerb), and was asked to filter and prioritize each
        for verb in ("filter", "prioritize", "bind"):
            assert f'kubesched_extender_requests_total{{code="200",verb="{verb}"}} 2.0' in metrics, verb
        _cache_sees_the_pods(server, url)
    finally:
        proc.terminate()
        proc.wait(10)

    _create(server, "late", tier="backend")  # the extender is down and not ignorable
    cond = eventually(lambda: _condition(_pods(server)["late"]), timeout=60)
    assert cond["status"] == "False" and cond["reason"] == "SchedulerError"
    assert cond["message"] == f'Post "http://127.0.0.1:{port}/filter": connect: connection refused'
    assert not _pods(server)["late"]["spec"].get("nodeName")


def _cache_sees_the_pods(server: Server, url: str) -> None:
    """The cache has the bound pods: a pod asking 7995m cpu of 8 fits only on node-02, the
    one without a 10m pod (NodeResourcesFit's reason). A full Node the cache does not know
    is evaluated from the request's object (no pods)."""
    big = pod_manifest("big", cpu="7995m")
    big["metadata"]["namespace"] = "default"
    res = _post(f"{url}/filter", {"Pod": big, "Nodes": None, "NodeNames": ["node-01", "node-02", "node-03"]})
    assert res == {"Nodes": None, "NodeNames": ["node-02"], "FailedAndUnresolvableNodes": {}, "Error": "",
                   "FailedNodes": {"node-01": "Insufficient cpu", "node-03": "Insufficient cpu"}}
    nodes = json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    ghost = json.loads(json.dumps(nodes[0]))
    ghost["metadata"] = {"name": "ghost", "labels": {"rank": "1"}}
    res = _post(f"{url}/filter", {"Pod": big, "Nodes": {"items": [*nodes, ghost]}, "NodeNames": None})
    assert [n["metadata"]["name"] for n in res["Nodes"]["items"]] == ["node-02", "ghost"]
    assert res["FailedNodes"] == {"node-01": "Insufficient cpu", "node-03": "Insufficient cpu"}


def _post(url: str, body: Any) -> Any:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_an_ignorable_extender_that_is_down_is_skipped(spawn: Callable[..., Server], tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    server = spawn("--nodes", "3", *SCHEDULER_ONLY, "--config", str(_config(tmp_path, port, ignorable=True)))
    _label(server)
    _create(server, "web", tier="frontend")
    got = eventually(lambda: (p := _pods(server)) and p["web"]["spec"].get("nodeName") and p, timeout=60)
    # LabelGuard is not asked: with default scores alone the nodes tie, and hdd node-01 is allowed
    assert got["web"]["spec"]["nodeName"] in LABELS


def test_run_with_a_served_plugin_as_extender(spawn: Callable[..., Server], tmp_path: Path) -> None:
    """``kubesched run`` against a server without its own scheduler, calling the extender
    (names only, its cache fed by the same server); the default binder binds."""
    port = free_port()
    server = spawn("--nodes", "3", *SCHEDULER_ONLY, "--no-scheduler")
    _label(server)
    proc, _ = start_extender(CONFIGS / "label-guard-only.yaml", "--kubeconfig", str(server.kubeconfig), port=port)
    config = write_config(tmp_path / "run.yaml", leaderElect=False)
    config.write_text(config.read_text() + yaml.safe_dump(
        {"extenders": [{"urlPrefix": f"http://127.0.0.1:{port}", "filterVerb": "filter",
                        "prioritizeVerb": "prioritize", "weight": 5, "nodeCacheCapable": True}]}))
    run = RunProcess(server, config, "only", tmp_path)
    try:
        run.wait_for("kubesched scheduler running", timeout=60)
        _create(server, "web", tier="frontend")  # as in the serve test: node-03 (450 is hdd node-01's)
        _create(server, "api", tier="backend")
        got = eventually(lambda: (p := _pods(server)) and all(p[n]["spec"].get("nodeName") for n in ("web", "api"))
                         and p, timeout=60)
        assert (got["web"]["spec"]["nodeName"], got["api"]["spec"]["nodeName"]) == ("node-03", "node-01")
    finally:
        run.stop()
        proc.terminate()
        proc.wait(10)
