"""``kubesched snapshot`` of a real ``kubesched serve`` (through its kubeconfig, with the real
kubectl creating the objects) round-trips through ``simulate``.

Design of the round trip: the serve's own scheduler binds the pods, one at a time (each
pod is created once the previous one is bound, all at the same priority). The snapshot then
holds every pod bound where serve put it. The test takes those pods' ``spec.nodeName`` off
(the rest of the snapshot untouched) and simulates them as pending: in file order, which is
the snapshot's order (creationTimestamp, then name: the order serve saw them), with the
default configuration, as serve ran. Each simulated decision must land on the node serve
chose. The cluster is built so that no decision is a tie (nodes of different sizes, pods of
different requests), and the test checks that every simulated attempt had one best node, so
the comparison cannot pass or fail by a lucky or unlucky random tie-break.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import eventually
from serve_harness import REPO, Server

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation

pytestmark = pytest.mark.slow

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")


def cluster_docs() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token", "namespace": "shop"},
         "stringData": {"password": "hunter2"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"},
         "data": {"a": "b"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
    ]
    for i in range(1, 5):  # 4, 6, 8, 10 cpu; 8, 12, 16, 20 Gi; two zones
        res = {"cpu": str(2 * i + 2), "memory": f"{4 * i + 4}Gi", "pods": "110"}
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}",
                                            "topology.kubernetes.io/zone": f"zone-{(i + 1) // 2}"}},
            "status": {"capacity": res, "allocatable": res}})
    return docs


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"q{i:02d}", "namespace": "shop", "labels": {"app": "web" if i % 2 == 0 else "batch"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
                "requests": {"cpu": f"{(i * 370) % 1500 + 300}m", "memory": f"{i * 300}Mi"}}}]}}


def snapshot(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "snapshot", "--kubeconfig",
                           str(server.kubeconfig), *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_snapshot_of_serve_round_trips_through_simulate(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster_docs()))
    server.kubectl("apply", "-f", str(tmp_path / "cluster.yaml"))
    eventually(lambda: len(json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)["items"]) == 4)
    bound: dict[str, str] = {}
    for i in range(1, 9):
        server.kubectl("apply", "-f", "-", input=json.dumps(pod(i)))
        bound[f"shop/q{i:02d}"] = eventually(lambda: server.kubectl(
            "get", "pod", "-n", "shop", f"q{i:02d}", "-o", "jsonpath={.spec.nodeName}").stdout)
    # a finished pod: left out of the snapshot (the scheduler's informer never lists it)
    done = pod(9) | {"metadata": {"name": "finished", "namespace": "shop"}}
    done["spec"] = {**done["spec"], "nodeName": "node-1"}
    server.kubectl("apply", "-f", "-", input=json.dumps(done))
    server.kubectl("patch", "pod", "-n", "shop", "finished", "--subresource=status", "--type=merge",
                   "-p", '{"status": {"phase": "Succeeded"}}')

    out = tmp_path / "snap"
    res = snapshot(server, "--output-dir", str(out))
    assert res.returncode == 0, res.stderr
    assert "8 Pod" in res.stderr and "finished pods left out: 1" in res.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["00-version.yaml", "01-namespaces.yaml", "02-priorityclasses.yaml", "03-nodes.yaml",
                     "15-services.yaml", "19-poddisruptionbudgets.yaml", "21-pods.yaml"]
    text = "".join((out / f).read_text() for f in files)
    assert "hunter2" not in text and "Secret" not in text and "ConfigMap" not in text
    assert "managedFields" not in text and "resourceVersion" not in text
    pods = [d for d in yaml.safe_load_all((out / "21-pods.yaml").read_text()) if d]
    assert [p["metadata"]["name"] for p in pods] == [f"q{i:02d}" for i in range(1, 9)]
    assert {f"shop/{p['metadata']['name']}": p["spec"]["nodeName"] for p in pods} == bound
    assert all(set(p["status"]) <= {"phase", "nominatedNodeName", "startTime", "resourceClaimStatuses"}
               for p in pods)
    # as it is, the snapshot is a cluster simulate reads: every pod bound, nothing to schedule
    as_is = Simulation(load_manifests([str(out)]), load_config(None, in_tree_registry()))
    assert len(as_is.cluster.nodes) == 4 and not as_is.outcomes

    # the same pods, pending: simulate places each where serve's scheduler bound it
    for p in pods:
        del p["spec"]["nodeName"]
    (out / "21-pods.yaml").write_text(yaml.safe_dump_all(pods))
    sim = Simulation(load_manifests([str(out)]), load_config(None, in_tree_registry()), explain=True)
    sim.run()
    results = sim.results()
    assert all(len(a.best) == 1 for o in results for a in o.attempts), "a tie: the comparison would be luck"
    assert {o.pod.key: o.node for o in results} == bound

    kept = snapshot(server, "--keep-finished", "--output-file", str(tmp_path / "all.yaml"))
    assert kept.returncode == 0, kept.stderr
    docs = [d for d in yaml.safe_load_all((tmp_path / "all.yaml").read_text()) if d]
    assert sorted(d["metadata"]["name"] for d in docs if d["kind"] == "Pod") == ["finished"] + sorted(
        k.split("/")[1] for k in bound)
    sim_all = Simulation(load_manifests([str(tmp_path / "all.yaml")]), load_config(None, in_tree_registry()))
    assert sim_all.ignored_pods() == ["shop/finished"]


def test_snapshot_of_an_unreachable_server_is_one_clear_line(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(server.kubeconfig.read_text())
    server.stop()
    res = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "snapshot", "--kubeconfig", str(kubeconfig)],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"kubesched: error: snapshot: cannot reach the API server at {server.url}")


def test_snapshot_of_a_v1_35_serve_is_simulated_as_v1_35(spawn: Callable[..., Server], tmp_path: Path) -> None:
    """serve --kubernetes-version 1.35 reports v1.35.4 at /version; its snapshot records that,
    and simulate without a version flag (the suite's default release is 1.34) decides as
    v1.35: the tainted node's reason is v1.35's ``node(s) had untolerated taint(s)``
    (upstream v1.35 taint_toleration.go), and DynamicResources scores (weight 2)."""
    server = spawn("--kubernetes-version", "1.35", "--no-scheduler", "--no-node-agent", "--no-node-lifecycle",
                   "--no-controllers")
    assert server.request("GET", "/version")[1]["gitVersion"].startswith("v1.35.4")
    res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "clean"}, "status": {"allocatable": res}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "tainted"},
             "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
             "status": {"allocatable": res}},
            {**pod(1), "metadata": {"name": "p", "namespace": "default"}}]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(docs))
    server.kubectl("apply", "-f", str(tmp_path / "cluster.yaml"))
    out = tmp_path / "snap"
    done = snapshot(server, "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "00-version.yaml").exists()
    sim = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", str(out), "-o", "json",
                          "--explain", "--single-pass", "--tie-break", "name"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert sim.returncode == 0, sim.stderr
    doc = json.loads(sim.stdout)
    assert doc["kubernetesVersion"] == "1.35"
    attempt = doc["pods"][0]["attempts"][0]
    assert attempt["filter"]["tainted"]["reasons"] == ["node(s) had untolerated taint(s)"]
    assert attempt["scores"]["clean"]["DynamicResources"] == 0
