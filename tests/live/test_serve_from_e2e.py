"""``kubesched serve --from SNAPSHOT``: a serve whose workload (a Deployment, a Job, a bare
pod, a Service, a PDB, a PriorityClass, a namespace) was snapshotted is rebuilt in another
serve, and the real kubectl lists the same objects in both; the garbage collector, which is
running, keeps every pod (their owners came along). A snapshot without the owners (as
snapshots were before they kept Deployments and Jobs) keeps the pods as orphans and says
how many owner references it dropped.

What must be equal is what `kubectl get` shows of each object and the scheduler reads:
names, a pod's node and its owner's kind and name, a node's allocatable, a Deployment's and
a ReplicaSet's replicas. That the garbage collector has run is shown by a canary it must
delete (a ConfigMap owned by a pod that never existed: upstream's garbage collector deletes
a dependent whose owners are all absent, pkg/controller/garbagecollector/garbagecollector.go
attemptToDeleteItem), created after the load.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import eventually
from serve_harness import REPO, Server

pytestmark = pytest.mark.slow

KINDS = ("namespaces", "priorityclasses", "nodes", "deployments", "replicasets", "jobs", "services",
         "poddisruptionbudgets", "pods")


def workload() -> list[dict[str, Any]]:
    labels = {"app": "web"}
    container = {"name": "c", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "100m"}}}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"replicas": 3, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": "shop"},
         "spec": {"template": {"spec": {"restartPolicy": "Never", "priorityClassName": "high",
                                        "containers": [container]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "shop"},
         "spec": {"containers": [container]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"selector": labels, "ports": [{"port": 80}]}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}}},
    ]


def listing(server: Server) -> dict[str, Any]:
    """What kubectl lists of each kind, reduced to what must survive the round trip."""
    out: dict[str, Any] = {}
    for kind in KINDS:
        items = json.loads(server.kubectl("get", kind, "-A", "-o", "json").stdout)["items"]
        rows = {}
        for o in items:
            m = o["metadata"]
            key = f"{m.get('namespace', '')}/{m['name']}"
            owners = sorted(f"{r['kind']}/{r['name']}" for r in m.get("ownerReferences") or ())
            row: dict[str, Any] = {"owners": owners}
            if kind == "pods":
                row["node"] = o["spec"].get("nodeName")
            elif kind == "nodes":
                row["allocatable"] = o["status"]["allocatable"]
            elif kind in ("deployments", "replicasets"):
                row["replicas"] = o["spec"]["replicas"]
            rows[key] = row
        out[kind] = rows
    return out


def gc_has_run(server: Server) -> None:
    canary = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "canary", "namespace": "shop",
              "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "never",
                                   "uid": "00000000-0000-0000-0000-000000000000"}]}}
    server.kubectl("apply", "-f", "-", input=json.dumps(canary))
    eventually(lambda: "NotFound" in server.kubectl("get", "configmap", "-n", "shop", "canary",
                                                    check=False).stderr, timeout=60)


def kubesched(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_serve_from_a_snapshot_lists_the_same_objects(spawn: Callable[..., Server], tmp_path: Path) -> None:
    first = spawn("--nodes", "3")
    (tmp_path / "w.yaml").write_text(yaml.safe_dump_all(workload()))
    first.kubectl("apply", "-f", str(tmp_path / "w.yaml"))
    eventually(lambda: (lambda pods: len(pods) == 5 and all(p["spec"].get("nodeName") for p in pods))(
        json.loads(first.kubectl("get", "pods", "-n", "shop", "-o", "json").stdout)["items"]))
    snap = tmp_path / "snap"
    res = kubesched("snapshot", "--kubeconfig", str(first.kubeconfig), "--output-dir", str(snap))
    assert res.returncode == 0, res.stderr
    assert {"22-deployments.yaml", "25-jobs.yaml"} <= {p.name for p in snap.iterdir()}
    before = listing(first)

    second = spawn("--from", str(snap))
    assert any(line.startswith(f"loaded from {snap}: ") for line in second.output)
    gc_has_run(second)
    assert listing(second) == before

    # a snapshot from before owners were kept: the pods stay, orphaned, and the line says so
    old = tmp_path / "old"
    shutil.copytree(snap, old)
    for name in ("17-replicasets.yaml", "22-deployments.yaml", "25-jobs.yaml"):
        (old / name).unlink()
    third = spawn("--from", str(old))
    line = next(line for line in third.output if line.startswith("loaded from"))
    assert ("owner references to objects not in the snapshot dropped (their dependents kept): "
            "1 to a Job, 3 to a ReplicaSet") in line
    gc_has_run(third)
    pods = listing(third)["pods"]
    assert {k: v["node"] for k, v in pods.items()} == {k: v["node"] for k, v in before["pods"].items()}
    assert all(v["owners"] == [] for v in pods.values())


def test_serve_from_errors_are_one_line(spawn: Callable[..., Server], tmp_path: Path) -> None:
    res = kubesched("serve", "--data-dir", str(tmp_path / "d"), "--port", "0", "--from", str(tmp_path / "nothing"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr == f"kubesched: error: --from {tmp_path / 'nothing'}: no such file or directory\n"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "Not_A_Name"}}))
    res = kubesched("serve", "--data-dir", str(tmp_path / "e"), "--port", "0", "--from", str(bad))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f'kubesched: error: --from {bad}: Node "Not_A_Name": '), res.stderr
    # a data directory that holds a cluster already is not merged into
    server = spawn("--nodes", "1")
    server.stop()
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
    res = kubesched("serve", "--data-dir", str(server.data_dir), "--port", "0", "--from", str(good))
    assert res.returncode == 2
    assert res.stderr == (f"kubesched: error: --from {good}: the data directory already holds nodes: "
                          "start from an empty --data-dir\n")


def test_serve_from_a_recording_starts_from_its_starting_state(spawn: Callable[..., Server], tmp_path: Path) -> None:
    """The ``initial`` objects of a recording (a hand-made one: the format of
    docs/record-replay.md) are the cluster; its later events are not applied."""
    import gzip

    def node(name: str) -> dict[str, Any]:
        res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"u-{name}"},
                "status": {"capacity": res, "allocatable": res}}

    def pod(name: str, node_name: str = "") -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.example/app:1"}]}
        if node_name:
            spec["nodeName"] = node_name
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop", "uid": f"u-{name}"},
                "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}

    rows = [{"format": "kubesched.recording", "version": 1, "source": "test", "started": "2026-01-01T00:00:00Z"},
            {"op": "initial", "object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}},
            {"op": "initial", "object": node("n1")}, {"op": "initial", "object": node("n2")},
            {"op": "initial", "object": pod("running", "n2")},
            {"op": "synced", "t": 0.0, "counts": {}},
            {"t": 1.0, "op": "add", "object": pod("later")},
            {"t": 2.0, "op": "delete", "kind": "Node", "namespace": "", "name": "n1", "uid": "u-n1"}]
    path = tmp_path / "rec.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    server = spawn("--no-scheduler", "--no-node-agent", "--no-node-lifecycle", "--from", str(path))
    line = next(line for line in server.output if line.startswith("loaded from"))
    assert line.startswith(f"loaded from {path}: 1 Namespace, 2 Node, 1 Pod")
    nodes = json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["n1", "n2"]
    pods = json.loads(server.kubectl("get", "pods", "-n", "shop", "-o", "json").stdout)["items"]
    assert [(p["metadata"]["name"], p["spec"].get("nodeName")) for p in pods] == [("running", "n2")]
