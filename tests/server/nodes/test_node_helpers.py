"""Pure parts of the simulated nodes: durations, pod CIDRs, pod statuses, node pools,
taints and tolerations (``getMinTolerationTime`` from upstream's
``pkg/controller/tainteviction/taint_eviction_test.go``)."""

from __future__ import annotations

import re

from pathlib import Path
from typing import Any

import pytest

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Taint, Toleration
from kubesched.server.nodes import podstatus as PS
from kubesched.server.nodes.pools import csinode_object, load_pool_file, pool_node, template_pool, zone_name
from kubesched.server.nodes.taints import desired_no_schedule, matching_tolerations, min_toleration_seconds


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("500ms", 0.5), ("0", 0.0), ("2h3m4s", 7384.0),
    ("", None), ("30", None), ("-1s", None), ("1d", None), ("s", None), (30, None),
], ids=lambda v: repr(v))
def test_go_durations(text: Any, seconds: float | None) -> None:
    assert PS.parse_duration(text) == seconds


@pytest.mark.parametrize("index", [0, 1, 255, 256, 3071, 3072, 40000])
def test_pod_cidrs_are_distinct_and_invertible(index: int) -> None:
    cidr = PS.pod_cidr(index)
    assert PS.cidr_index(cidr) == index and cidr.endswith(".0/24")


def test_running_then_succeeded_status() -> None:
    pod = {"metadata": {"uid": "u1"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}],
                                               "initContainers": [{"name": "i", "image": "busybox"}]},
           "status": {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
               {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    st = PS.running_status(pod, 1767225600.0, "10.0.0.1", "10.244.0.2")
    assert st["phase"] == "Running" and st["podIP"] == "10.244.0.2" and st["hostIPs"] == [{"ip": "10.0.0.1"}]
    assert st["startTime"] == "2026-01-01T00:00:00Z" and st["qosClass"] == "BestEffort"
    assert [(c["type"], c["status"]) for c in st["conditions"]] == [
        ("PodReadyToStartContainers", "True"), ("Initialized", "True"), ("Ready", "True"), ("ContainersReady", "True"),
        ("PodScheduled", "True")]
    [cs] = st["containerStatuses"]
    assert cs["ready"] and cs["started"] and "running" in cs["state"] and cs["imageID"].startswith("nginx@sha256:")
    assert st["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    done = PS.succeeded_status({**pod, "status": st}, 1767225630.0)
    assert done["phase"] == "Succeeded"
    assert {c["type"]: (c["status"], c.get("reason")) for c in done["conditions"]}["Ready"] == ("False", "PodCompleted")
    term = done["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"], term["finishedAt"]) == (0, "Completed", "2026-01-01T00:00:30Z")


def test_node_pools_from_flags_and_files(tmp_path: Path) -> None:
    pool = template_pool(4, "32", "128Gi", 110, "tier=general,team=a", zones=3)
    nodes = [pool_node(pool, f"node-0{i + 1}", i, i + 1, 0.0) for i in range(4)]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == \
        ["zone-a", "zone-b", "zone-c", "zone-a"]
    assert nodes[0]["metadata"]["labels"]["tier"] == "general"
    assert nodes[0]["status"]["capacity"] == {"cpu": "32", "memory": "128Gi", "pods": "110"}
    f = tmp_path / "pools.yaml"
    f.write_text("""
- count: 2
  namePrefix: gpu
  capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
  labels: {accel: a100}
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
- count: 1
  namePrefix: small
""")
    gpu, small = load_pool_file(f)
    node = pool_node(gpu, "gpu-01", 0, 1, 0.0)
    assert node["status"]["capacity"] == {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}
    assert node["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert small.count == 1 and small.capacity["cpu"] == "8"
    assert zone_name(26) == "zone-aa"


def test_pool_csi_drivers_become_each_nodes_csinode(tmp_path: Path) -> None:
    f = tmp_path / "pools.yaml"
    f.write_text("""
- count: 2
  zones: 2
  csiDrivers:
  - {name: ebs.csi.aws.com, topologyKeys: [topology.kubernetes.io/zone], allocatable: 25}
  - {name: nfs.csi.k8s.io}
""")
    (pool,) = load_pool_file(f)
    node = pool_node(pool, "node-02", 1, 2, 0.0)
    node["metadata"]["uid"] = "u2"
    assert csinode_object(pool, node) == {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": "node-02", "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-02",
                                                             "uid": "u2"}]},
        "spec": {"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "node-02", "topologyKeys": ["topology.kubernetes.io/zone"],
             "allocatable": {"count": 25}},
            {"name": "nfs.csi.k8s.io", "nodeID": "node-02"}]}}


@pytest.mark.parametrize(("doc", "message"), [
    ("- {count: -1}", "count: must be a non-negative integer"),
    ("- {count: 1, capacity: {cpu: lots}}", "capacity.cpu"),
    ("- {count: 1, taints: [{key: k, effect: Sometimes}]}", "effect"),
    ("- {count: 1, colour: red}", "unknown field(s) colour"),
    ("- {count: 1}\n- {count: 2}", "namePrefix must differ"),
    ("count: 1", "expected a list of pools"),
    ("- {count: 1, csiDrivers: x}", "pools[0].csiDrivers: must be a list"),
    ("- {count: 1, csiDrivers: [{topologyKeys: [z]}]}", "pools[0].csiDrivers[0].name: Required value"),
    ("- {count: 1, csiDrivers: [{name: d, allocatable: -2}]}", "csiDrivers[0].allocatable: must be a non-negative"),
    ("- {count: 1, csiDrivers: [{name: d, topologyKeys: z}]}", "csiDrivers[0].topologyKeys: must be a list"),
    ("- {count: 1, csiDrivers: [{name: d}, {name: d}]}", 'csiDrivers[1].name: Duplicate value: "d"'),
], ids=["negative-count", "bad-quantity", "bad-taint", "unknown-field", "same-prefix", "not-a-list",
        "csi-not-list", "csi-no-name", "csi-bad-limit", "csi-bad-keys", "csi-duplicate"])
def test_bad_pool_files_are_reported(tmp_path: Path, doc: str, message: str) -> None:
    f = tmp_path / "pools.yaml"
    f.write_text(doc)
    with pytest.raises(KubeschedError, match=re.escape(message)):
        load_pool_file(f)


def _tol(seconds: int | None) -> Toleration:
    return Toleration("", "Exists", "", "", seconds)


@pytest.mark.parametrize(("tolerations", "want"), [
    ([], 0.0),
    ([_tol(None)], -1.0),
    ([_tol(1), _tol(2)], 1.0),
    ([_tol(1), _tol(None)], 1.0),
    ([_tol(None), _tol(1)], 1.0),
], ids=["none", "forever", "min", "set-then-unset", "unset-then-set"])
def test_min_toleration_time(tolerations: list[Toleration], want: float) -> None:
    assert min_toleration_seconds(tolerations) == want


def test_matching_tolerations_needs_every_taint_tolerated() -> None:
    unreachable = Taint("node.kubernetes.io/unreachable", "", "NoExecute")
    other = Taint("k", "v", "NoExecute")
    tol = Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300)
    assert matching_tolerations([unreachable], [tol]) == (True, [tol])
    assert matching_tolerations([unreachable, other], [tol]) == (False, [])
    assert matching_tolerations([], []) == (True, [])


@pytest.mark.parametrize(("node", "want"), [
    ({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, []),
    ({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
     [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]),
    ({"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "DiskPressure", "status": "True"}]}},
     [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]),
    ({"spec": {"unschedulable": True}, "status": {}}, [{"key": "node.kubernetes.io/unschedulable",
                                                       "effect": "NoSchedule"}]),
], ids=["ready", "unknown", "not-ready-disk-pressure", "cordoned"])
def test_no_schedule_taints_follow_conditions(node: dict[str, Any], want: list[dict[str, str]]) -> None:
    assert desired_no_schedule(node) == want


def test_node_command_reports_a_missing_server_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kubesched.cli.main import main

    assert main(["node", "stop", "node-01", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: cannot read kubeconfig") and len(err.strip().splitlines()) == 1
    (tmp_path / "kubeconfig").write_text(
        "clusters: [{cluster: {server: 'http://127.0.0.1:9'}}]\nusers: [{user: {}}]\n")
    assert main(["node", "kill", "node-01", "--data-dir", str(tmp_path)]) == 2
    assert "cannot reach the kubesched API server at http://127.0.0.1:9" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--node-pool", "missing.yaml"], "--node-pool missing.yaml"),
    (["--nodes", "2", "--zones", "-1"], "--zones must not be negative"),
    (["--nodes", "2", "--node-labels", "novalue"], "--node-labels: 'novalue' is not key=value"),
    (["--node-heartbeat-interval", "0"], "--node-heartbeat-interval must be positive"),
    (["--nodes", "1", "--node-pool", "POOL"], "node pools must have different namePrefix"),
], ids=["missing-pool-file", "negative-zones", "bad-labels", "zero-heartbeat", "prefix-clash"])
def test_serve_rejects_bad_node_flags_before_starting(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      args: list[str], message: str) -> None:
    from kubesched.cli.main import main

    pool = tmp_path / "pool.yaml"
    pool.write_text("- {count: 1}\n")
    argv = ["serve", "--data-dir", str(tmp_path / "data"), "--port", "0"] + [str(pool) if a == "POOL" else a
                                                                           for a in args]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "data" / "store.db").exists()
