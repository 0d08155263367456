"""``kubesched serve`` driven by the real kubectl: apply, get, describe, watch, patch,
cordon, label, annotate, delete, create (protobuf bodies), scale, drain."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from serve_harness import REPO, Server, kubectl_path, pod_manifest

pytestmark = pytest.mark.slow


def rows(out: str) -> dict[str, list[str]]:
    lines = out.strip().splitlines()
    return {line.split()[0]: line.split() for line in lines[1:]}


def test_apply_examples_twice(server: Server) -> None:
    first = server.kubectl("apply", "-f", str(REPO / "examples" / "mixed-cluster.yaml")).stdout
    assert "pod/web-0 created" in first and "node/general-a1 created" in first
    assert "priorityclass.scheduling.k8s.io/production created" in first
    again = server.kubectl("apply", "-f", str(REPO / "examples" / "mixed-cluster.yaml")).stdout
    assert "pod/web-0 unchanged" in again


def test_get_wide_and_json(server: Server) -> None:
    out = server.kubectl("get", "pods", "-A", "-o", "wide").stdout
    header = out.splitlines()[0].split()
    assert header[:6] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert header[6:] == ["IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    web0 = next(line.split() for line in out.splitlines() if " web-0 " in line)
    assert web0[2:4] == ["0/1", "Pending"] and "general-a1" in web0
    nodes = server.kubectl("get", "nodes").stdout
    assert nodes.splitlines()[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert rows(nodes)["node-01"][1] == "Ready"
    doc = json.loads(server.kubectl("get", "pods", "-n", "shop", "-o", "json").stdout)
    assert doc["kind"] == "List" and {p["metadata"]["name"] for p in doc["items"]} >= {"web-0", "web-1"}
    web0_doc = next(p for p in doc["items"] if p["metadata"]["name"] == "web-0")
    assert web0_doc["spec"]["priority"] == 10000 and web0_doc["spec"]["schedulerName"] == "default-scheduler"


def test_describe_shows_scheduler_events(server: Server) -> None:
    uid = server.kubectl("get", "pod", "-n", "shop", "web-1", "-o", "jsonpath={.metadata.uid}").stdout
    status, _ = server.request("POST", "/apis/events.k8s.io/v1/namespaces/shop/events", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web-1.sched"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-1", "action": "Scheduling", "reason": "FailedScheduling",
        "type": "Warning", "note": "0/9 nodes are available: 9 Insufficient cpu.",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-1", "uid": uid}})
    assert status == 201
    out = server.kubectl("describe", "pod", "-n", "shop", "web-1").stdout
    assert "Priority Class Name:  production" in out
    assert "FailedScheduling" in out and "default-scheduler" in out and "9 Insufficient cpu." in out
    node = server.kubectl("describe", "node", "general-a1").stdout
    assert "Non-terminated Pods:" in node and "web-0" in node and "topology.kubernetes.io/zone=zone-a" in node
    events = server.kubectl("get", "events", "-n", "shop").stdout
    assert "pod/web-1" in events and "FailedScheduling" in events


def test_cordon_label_annotate_patch(server: Server) -> None:
    server.kubectl("cordon", "node-01")
    assert rows(server.kubectl("get", "node", "node-01").stdout)["node-01"][1] == "Ready,SchedulingDisabled"
    server.kubectl("uncordon", "node-01")
    server.kubectl("label", "node", "node-01", "disk=ssd")
    server.kubectl("label", "node", "node-01", "disk=nvme", "--overwrite")
    server.kubectl("annotate", "node", "node-01", "owner=team-a")
    server.kubectl("taint", "node", "node-01", "dedicated=gpu:NoSchedule")
    server.kubectl("patch", "node", "node-01", "--type=merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    server.kubectl("patch", "node", "node-01", "--type=json", "-p",
                   '[{"op":"add","path":"/metadata/labels/j","value":"2"}]')
    server.kubectl("patch", "node", "node-01", "-p", '{"spec":{"taints":[{"key":"k","effect":"NoExecute"}]}}')
    node = json.loads(server.kubectl("get", "node", "node-01", "-o", "json").stdout)
    labels = node["metadata"]["labels"]
    assert (labels["disk"], labels["m"], labels["j"]) == ("nvme", "1", "2")
    assert node["metadata"]["annotations"]["owner"] == "team-a"
    assert node["spec"]["taints"] == [{"key": "k", "effect": "NoExecute"}]
    assert not node["spec"].get("unschedulable")
    server.kubectl("label", "node", "node-01", "disk-")
    assert "disk" not in json.loads(server.kubectl("get", "node", "node-01", "-o", "json").stdout)["metadata"]["labels"]


def test_watch_in_background(server: Server, tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig)}
    out_file = tmp_path / "watch.out"
    with open(out_file, "w") as out, subprocess.Popen(
            [kubectl_path(), "get", "pods", "-n", "watched", "-w", "--request-timeout=0"],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=env) as proc:
        try:
            time.sleep(1.0)
            for i in range(3):
                manifest = pod_manifest(f"w{i}")
                manifest["metadata"]["namespace"] = "watched"
                server.kubectl("apply", "-f", "-", input=json.dumps(manifest))
            server.kubectl("label", "pod", "-n", "watched", "w0", "seen=yes")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                text = out_file.read_text()
                if all(f"w{i}" in text for i in range(3)) and text.count("w0 ") >= 2:
                    break
                time.sleep(0.1)
        finally:
            proc.terminate()
    text = out_file.read_text()
    assert all(f"w{i}" in text for i in range(3)) and text.count("w0 ") >= 2, text
    assert text.splitlines()[0].split()[:3] == ["NAME", "READY", "STATUS"]


def test_delete_graceful_and_forced(server: Server) -> None:
    server.kubectl("run", "gone", "--image=nginx")
    assert "deleted" in server.kubectl("delete", "pod", "gone").stdout  # unbound: removed at once
    server.kubectl("run", "bound", "--image=nginx", "--overrides", '{"spec":{"nodeName":"node-02"}}')
    server.kubectl("delete", "pod", "bound", "--wait=false")
    assert rows(server.kubectl("get", "pod", "bound").stdout)["bound"][2] == "Terminating"
    server.kubectl("delete", "pod", "bound", "--grace-period=0", "--force")
    assert server.kubectl("get", "pod", "bound", check=False).returncode != 0


def test_typed_commands_send_protobuf(server: Server) -> None:
    server.kubectl("create", "namespace", "team")
    server.kubectl("create", "deployment", "web", "-n", "team", "--image=nginx:1.27", "--replicas=2", "--port=80")
    server.kubectl("create", "configmap", "cfg", "-n", "team", "--from-literal=a=b")
    server.kubectl("create", "priorityclass", "urgent", "--value=5000")
    server.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "team"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}))
    server.kubectl("scale", "deployment", "web", "-n", "team", "--replicas=4")
    dep = json.loads(server.kubectl("get", "deploy", "web", "-n", "team", "-o", "json").stdout)
    assert dep["spec"]["replicas"] == 4 and dep["metadata"]["generation"] == 2
    assert dep["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert rows(server.kubectl("get", "pc").stdout)["urgent"][1] == "5000"
    server.kubectl("delete", "deployment", "web", "-n", "team")
    server.kubectl("delete", "namespace", "team")
    assert server.kubectl("get", "ns", "team", check=False).returncode != 0


def test_drain_evicts_through_the_eviction_subresource(server: Server) -> None:
    server.kubectl("run", "victim", "--image=nginx", "--overrides", '{"spec":{"nodeName":"node-03"}}')
    out = server.kubectl("drain", "node-03", "--force", "--grace-period=0", "--ignore-daemonsets",
                         "--timeout=30s").stdout
    assert "pod/victim evicted" in out
    assert "SchedulingDisabled" in server.kubectl("get", "node", "node-03").stdout


def test_errors_are_reported_like_a_cluster(server: Server) -> None:
    bad = server.kubectl("apply", "-f", "-", check=False,
                         input=json.dumps(pod_manifest("badq", cpu="two")))
    assert bad.returncode != 0
    # a quantity is parsed while the body is decoded, so a real cluster answers 400 BadRequest
    assert ('Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as '
            "a Pod: quantities must match the regular expression") in bad.stderr
    unknown = server.kubectl("get", "widgets", check=False)
    assert unknown.returncode != 0 and "doesn't have a resource type" in unknown.stderr
    missing = server.kubectl("get", "pod", "nope", check=False)
    assert 'pods "nope" not found' in missing.stderr
