"""Simulated nodes in the real ``kubesched serve``, seen through the real kubectl: nodes
from flags and a pool file, heartbeats, pods that start and finish, and failure injection
with ``kubesched node stop|start|kill``: NotReady, the unreachable taints, eviction
after the toleration time, and rescheduling elsewhere by the scheduler inside."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from serve_cluster_helpers import FAST, eventually, get_json, node_cmd, ready
from serve_harness import Server, started

pytestmark = pytest.mark.slow

UNREACHABLE = "node.kubernetes.io/unreachable"
POOLS = """
- count: 1
  namePrefix: gpu
  capacity: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "4"}
  labels: {accelerator: a100}
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("nodes")
    (base / "pools.yaml").write_text(POOLS)
    yield from started(base, "--nodes", "3", "--zones", "3", "--node-labels", "tier=general", "--node-cpu", "4",
                       "--node-pool", str(base / "pools.yaml"), *FAST)


def pod_rows(server: Server, selector: str) -> list[dict[str, Any]]:
    return list(get_json(server, "pods", "-l", selector)["items"])


def taints(server: Server, name: str) -> set[tuple[str, str]]:
    node = get_json(server, "node", name)
    return {(t["key"], t["effect"]) for t in node["spec"].get("taints") or []}


def test_nodes_from_flags_and_a_pool_file(server: Server) -> None:
    out = server.kubectl("get", "nodes", "-L", "topology.kubernetes.io/zone,tier").stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert set(rows) == {"node-01", "node-02", "node-03", "gpu-01"}
    assert all(r[1] == "Ready" for r in rows.values())
    assert [rows[f"node-0{i}"][-2:] for i in (1, 2, 3)] == [["zone-a", "general"], ["zone-b", "general"],
                                                             ["zone-c", "general"]]
    gpu = get_json(server, "node", "gpu-01")
    assert gpu["status"]["allocatable"]["nvidia.com/gpu"] == "4" and gpu["metadata"]["labels"]["accelerator"] == "a100"
    assert gpu["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    leases = get_json(server, "leases", "-n", "kube-node-lease")["items"]
    assert {x["metadata"]["name"] for x in leases} == set(rows)
    before = {x["metadata"]["name"]: x["spec"]["renewTime"] for x in leases}
    eventually(lambda: all(x["spec"]["renewTime"] != before[x["metadata"]["name"]]
                           for x in get_json(server, "leases", "-n", "kube-node-lease")["items"]))
    described = server.kubectl("describe", "node", "node-01").stdout
    assert "KubeletReady" in described and "PodCIDR:" in described


def test_pods_run_after_the_start_delay_and_succeed_after_their_run_duration(server: Server) -> None:
    server.kubectl("run", "job", "--image=busybox", "--restart=Never", "--labels=app=job",
                   "--annotations=kubesched.io/run-duration=2s")
    pod = eventually(lambda: next((p for p in pod_rows(server, "app=job") if p["status"].get("phase") == "Running"),
                                  None))
    started_at = time.monotonic()
    assert pod["status"]["podIP"] and pod["status"]["startTime"]
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
    row = server.kubectl("get", "pod", "job").stdout.splitlines()[1].split()
    assert row[1:3] == ["1/1", "Running"]
    eventually(lambda: server.kubectl("get", "pod", "job").stdout.splitlines()[1].split()[2] == "Completed")
    assert time.monotonic() - started_at >= 1.0
    assert get_json(server, "pod", "job")["status"]["phase"] == "Succeeded"
    server.kubectl("delete", "pod", "job")


def test_a_node_whose_heartbeat_stops_is_tainted_and_its_pods_move(server: Server) -> None:
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hb"},
                "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "hb"}},
                         "template": {"metadata": {"labels": {"app": "hb"}}, "spec": {
                             "tolerations": [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute",
                                              "tolerationSeconds": 2}],
                             "containers": [{"name": "c", "image": "nginx",
                                             "resources": {"requests": {"cpu": "100m"}}}]}}}}
    server.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    server.kubectl("rollout", "status", "deployment/hb", "--timeout=60s", timeout=90)
    on_node: dict[str, list[str]] = {}
    for p in pod_rows(server, "app=hb"):
        on_node.setdefault(p["spec"]["nodeName"], []).append(p["metadata"]["name"])
    victim = max(sorted(on_node), key=lambda n: len(on_node[n]))
    assert "heartbeat stopped" in node_cmd(server, "stop", victim)
    stopped = time.monotonic()
    eventually(lambda: server.kubectl("get", "node", victim).stdout.splitlines()[1].split()[1] == "NotReady")
    assert time.monotonic() - stopped >= 1.5  # the node monitor grace period is 2 s
    eventually(lambda: taints(server, victim) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")})
    described = server.kubectl("describe", "node", victim).stdout
    assert "NodeStatusUnknown" in described and "Kubelet stopped posting node status." in described
    tainted = time.monotonic()
    eventually(lambda: all(p["metadata"].get("deletionTimestamp") or p["spec"].get("nodeName") != victim
                           for p in pod_rows(server, "app=hb")))
    assert time.monotonic() - tainted >= 1.0  # tolerationSeconds: 2
    events = server.kubectl("get", "events", "--field-selector", "reason=TaintManagerEviction").stdout
    assert all(name in events for name in on_node[victim])

    eventually(lambda: len([p for p in pod_rows(server, "app=hb") if not p["metadata"].get("deletionTimestamp")
                            and p["status"].get("phase") == "Running"]) == 6, timeout=30)
    replaced = [p for p in pod_rows(server, "app=hb") if not p["metadata"].get("deletionTimestamp")]
    healthy = {n["metadata"]["name"] for n in get_json(server, "nodes")["items"] if ready(n) == "True"}
    assert len(replaced) == 6 and all(p["spec"]["nodeName"] in healthy - {victim, "gpu-01"} for p in replaced)

    assert "heartbeat started" in node_cmd(server, "start", victim)
    eventually(lambda: server.kubectl("get", "node", victim).stdout.splitlines()[1].split()[1] == "Ready"
               and not taints(server, victim))
    server.kubectl("delete", "deployment", "hb")


def test_a_killed_node_is_removed_with_its_pods_and_can_start_again(server: Server) -> None:
    server.kubectl("create", "deployment", "kl", "--image=nginx", "--replicas=3")
    server.kubectl("rollout", "status", "deployment/kl", "--timeout=60s", timeout=90)
    node = next(p["spec"]["nodeName"] for p in pod_rows(server, "app=kl"))
    assert "killed" in node_cmd(server, "kill", node)
    assert server.kubectl("get", "node", node, check=False).returncode != 0
    eventually(lambda: server.kubectl("get", "lease", "-n", "kube-node-lease", node, check=False).returncode != 0)
    eventually(lambda: all(p["spec"].get("nodeName") != node for p in pod_rows(server, "app=kl")))
    assert "started again" in node_cmd(server, "start", node)
    back = eventually(lambda: (n := get_json(server, "node", node)) and ready(n) == "True" and n)
    assert back["metadata"]["labels"]["tier"] == "general"
    eventually(lambda: len([p for p in pod_rows(server, "app=kl") if p["status"].get("phase") == "Running"
                            and not p["metadata"].get("deletionTimestamp")]) == 3)
    server.kubectl("delete", "deployment", "kl")


def test_finished_pods_free_their_node_for_pending_ones(server: Server) -> None:
    def big(name: str, duration: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "labels": {"app": "big"}}
        if duration:
            meta["annotations"] = {"kubesched.io/run-duration": duration}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "3500m"}}}]}}

    eventually(lambda: not [p for p in get_json(server, "pods")["items"]
                            if p["metadata"].get("labels", {}).get("app") != "big"])
    for i in (1, 2, 3):
        server.kubectl("apply", "-f", "-", input=json.dumps(big(f"hog-{i}", "3s")))
    eventually(lambda: sum(p["status"].get("phase") == "Running" for p in pod_rows(server, "app=big")) == 3)
    server.kubectl("apply", "-f", "-", input=json.dumps(big("waiter", None)))
    time.sleep(1.0)
    assert not get_json(server, "pod", "waiter")["spec"].get("nodeName")  # every general node is full
    waiter = eventually(lambda: (p := get_json(server, "pod", "waiter"))["status"].get("phase") == "Running" and p,
                        timeout=30)
    hogs = {p["spec"]["nodeName"]: p["status"]["phase"] for p in pod_rows(server, "app=big")
            if p["metadata"]["name"] != "waiter"}
    assert hogs[waiter["spec"]["nodeName"]] == "Succeeded"
    server.kubectl("delete", "pods", "-l", "app=big")
