"""Simulated kubelets, the node lifecycle controller, taint eviction and pod GC, in an
in-process cluster on short timings (heartbeat 0.3 s, grace 1.5 s, start/stop 0.2 s)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cluster_harness import Cluster, active, deployment, eventually, running

from kubesched.server.nodes import NodePool
from kubesched.server.nodes.zones import TokenBucket

MakeCluster = Callable[..., Cluster]
UNREACHABLE = "node.kubernetes.io/unreachable"


def node(c: Cluster, name: str) -> dict[str, Any]:
    out = c.get("nodes", None, name)
    assert out is not None
    return out


def cond(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((x for x in obj.get("status", {}).get("conditions") or [] if x["type"] == type_), {})


def taints(c: Cluster, name: str) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in node(c, name).get("spec", {}).get("taints") or []}


def pod(name: str, node_name: str = "", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {"name": name, "annotations": annotations or {}},
                           "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}
    if node_name:
        out["spec"]["nodeName"] = node_name
    return out


def test_nodes_heartbeat_with_leases_and_ready_conditions(node_cluster: MakeCluster) -> None:
    c = node_cluster(binder=False)
    leases = eventually(lambda: len(c.registry.list("leases.coordination.k8s.io", "kube-node-lease")["items"]) == 3
                        and c.registry.list("leases.coordination.k8s.io", "kube-node-lease")["items"])
    lease = next(x for x in leases if x["metadata"]["name"] == "node-01")
    n1 = node(c, "node-01")
    assert lease["spec"]["holderIdentity"] == "node-01" and lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "node-01",
                                                     "uid": n1["metadata"]["uid"]}]
    first = lease["spec"]["renewTime"]
    eventually(lambda: (c.get("leases.coordination.k8s.io", "kube-node-lease", "node-01") or {})["spec"]["renewTime"]
               != first)
    assert [(x["type"], x["status"], x["reason"]) for x in n1["status"]["conditions"]] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"), ("Ready", "True", "KubeletReady")]
    cidrs = eventually(lambda: all(node(c, f"node-0{i}")["spec"].get("podCIDR") for i in (1, 2, 3))
                       and {node(c, f"node-0{i}")["spec"]["podCIDR"] for i in (1, 2, 3)})
    assert len(cidrs) == 3


def test_lease_renewal_survives_another_writer_and_a_deletion(node_cluster: MakeCluster) -> None:
    """The kubelet updates the Lease it last wrote (upstream's latestLease); when someone
    else changed it since (409) it patches the current one, and when it is gone (404) it
    creates it again: the lease keeps being renewed, held by the node."""
    c = node_cluster(binder=False)
    lease_res, ns = "leases.coordination.k8s.io", "kube-node-lease"
    eventually(lambda: c.get(lease_res, ns, "node-01") is not None)
    c.registry.patch(lease_res, ns, "node-01", "application/merge-patch+json",
                     {"spec": {"holderIdentity": "someone-else"}})
    eventually(lambda: (c.get(lease_res, ns, "node-01") or {}).get("spec", {}).get("holderIdentity") == "node-01")
    renewed = (c.get(lease_res, ns, "node-01") or {})["spec"]["renewTime"]
    eventually(lambda: (c.get(lease_res, ns, "node-01") or {}).get("spec", {}).get("renewTime") != renewed)
    c.registry.delete(lease_res, ns, "node-01")
    lease = eventually(lambda: c.get(lease_res, ns, "node-01"))
    assert lease["spec"]["holderIdentity"] == "node-01" and lease["spec"]["leaseDurationSeconds"] == 40


def test_pods_start_after_the_delay_and_finish_after_their_run_duration(node_cluster: MakeCluster) -> None:
    c = node_cluster(binder=False)
    eventually(lambda: node(c, "node-02")["spec"].get("podCIDR"))
    created = time.monotonic()
    c.registry.create("pods", "default", pod("job", "node-02", {"kubesched.io/run-duration": "1s"},
                                             restartPolicy="Never"))
    c.registry.create("pods", "default", pod("svc", "node-02"))
    assert c.get("pods", "default", "job")["status"]["phase"] == "Pending"  # type: ignore[index]
    job = eventually(lambda: (c.get("pods", "default", "job") or {}).get("status", {}).get("phase") == "Running"
                     and c.get("pods", "default", "job"))
    assert time.monotonic() - created >= 0.15
    cidr = node(c, "node-02")["spec"]["podCIDR"].rsplit(".", 1)[0]
    assert job["status"]["podIP"].startswith(cidr + ".") and job["status"]["hostIP"] == "10.0.0.2"
    assert cond(job, "Ready")["status"] == "True" and cond(job, "ContainersReady")["status"] == "True"
    assert job["status"]["containerStatuses"][0]["state"]["running"]
    done = eventually(lambda: (c.get("pods", "default", "job") or {}).get("status", {}).get("phase") == "Succeeded"
                      and c.get("pods", "default", "job"))
    assert time.monotonic() - created >= 1.0
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    svc = c.get("pods", "default", "svc")
    assert svc is not None and svc["status"]["phase"] == "Running" and svc["status"]["podIP"] != job["status"]["podIP"]
    c.registry.delete("pods", "default", "svc")  # grace 30 s; its containers stop after the 0.2 s stop delay
    assert (c.get("pods", "default", "svc") or {})["metadata"].get("deletionTimestamp")
    eventually(lambda: c.get("pods", "default", "svc") is None, timeout=5)


def test_a_silent_node_goes_not_ready_is_tainted_and_its_pods_are_evicted(node_cluster: MakeCluster) -> None:
    c = node_cluster()
    short = [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}]
    c.registry.create("pods", "default", pod("patient", "node-01"))  # default toleration: 300 s
    c.registry.create("pods", "default", pod("forever", "node-01", tolerations=[{"operator": "Exists"}]))
    c.registry.create("deployments.apps", "default", deployment("web", 6, tolerations=short))
    eventually(lambda: len(running(c.pods(label_selector="app=web"))) == 6
               and any(p["spec"]["nodeName"] == "node-01" for p in c.pods(label_selector="app=web")))
    eventually(lambda: (c.get("pods", "default", "patient") or {}).get("status", {}).get("phase") == "Running")
    c.registry.patch("nodes", None, "node-01", "application/merge-patch+json",
                     {"metadata": {"annotations": {"kubesched.io/heartbeat": "stopped"}}})
    stopped_at = time.monotonic()
    n = eventually(lambda: cond(node(c, "node-01"), "Ready").get("status") == "Unknown" and node(c, "node-01"))
    assert time.monotonic() - stopped_at >= 1.0
    assert cond(n, "Ready")["reason"] == "NodeStatusUnknown" and cond(n, "DiskPressure")["status"] == "Unknown"
    eventually(lambda: taints(c, "node-01") == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")})
    patient = c.get("pods", "default", "patient")
    assert patient is not None and cond(patient, "Ready")["status"] == "False"  # MarkPodsNotReady

    def web_on(name: str) -> list[dict[str, Any]]:
        return [p for p in active(c.pods(label_selector="app=web")) if p["spec"].get("nodeName") == name]

    eventually(lambda: not web_on("node-01") and len(running(c.pods(label_selector="app=web"))) == 6)
    evicted = [p for p in c.pods(label_selector="app=web") if p["metadata"].get("deletionTimestamp")]
    assert evicted and all(cond(p, "DisruptionTarget").get("reason") == "DeletionByTaintManager" for p in evicted)
    patient = c.get("pods", "default", "patient")
    assert patient is not None and not patient["metadata"].get("deletionTimestamp")
    assert not (c.get("pods", "default", "forever") or {})["metadata"].get("deletionTimestamp")

    c.registry.patch("nodes", None, "node-01", "application/merge-patch+json",
                     {"metadata": {"annotations": {"kubesched.io/heartbeat": None}}})
    eventually(lambda: cond(node(c, "node-01"), "Ready").get("status") == "True" and not taints(c, "node-01"))
    eventually(lambda: cond(c.get("pods", "default", "patient") or {}, "Ready").get("status") == "True")


def test_when_every_node_is_down_nothing_is_evicted(node_cluster: MakeCluster) -> None:
    c = node_cluster(pools=[NodePool(2)], binder=False)
    c.registry.create("pods", "default", pod("p", "node-01"))
    for name in ("node-01", "node-02"):
        c.registry.patch("nodes", None, name, "application/merge-patch+json",
                         {"metadata": {"annotations": {"kubesched.io/heartbeat": "stopped"}}})
    eventually(lambda: all(taints(c, n) == {(UNREACHABLE, "NoSchedule")} for n in ("node-01", "node-02")))
    time.sleep(1.0)
    assert all(taints(c, n) == {(UNREACHABLE, "NoSchedule")} for n in ("node-01", "node-02"))
    assert not (c.get("pods", "default", "p") or {})["metadata"].get("deletionTimestamp")


def test_pods_of_a_deleted_node_are_garbage_collected_and_replaced(node_cluster: MakeCluster) -> None:
    c = node_cluster()
    c.registry.create("deployments.apps", "default", deployment("app", 3))
    eventually(lambda: len(running(c.pods())) == 3)
    victims = {p["metadata"]["name"] for p in c.pods() if p["spec"]["nodeName"] == "node-03"}
    assert victims
    c.registry.delete("nodes", None, "node-03")
    eventually(lambda: c.get("leases.coordination.k8s.io", "kube-node-lease", "node-03") is None)
    eventually(lambda: not victims & {p["metadata"]["name"] for p in c.pods()} and len(running(c.pods())) == 3)
    assert all(p["spec"]["nodeName"] != "node-03" for p in c.pods())


def test_cordoned_nodes_get_the_unschedulable_taint(node_cluster: MakeCluster) -> None:
    c = node_cluster(binder=False)
    c.registry.patch("nodes", None, "node-02", "application/merge-patch+json", {"spec": {"unschedulable": True}})
    eventually(lambda: taints(c, "node-02") == {("node.kubernetes.io/unschedulable", "NoSchedule")})
    c.registry.patch("nodes", None, "node-02", "application/merge-patch+json", {"spec": {"unschedulable": None}})
    eventually(lambda: not taints(c, "node-02"))


def test_token_bucket_allows_a_burst_of_one_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(0.5, lambda: now[0])
    assert bucket.try_accept() and not bucket.try_accept()
    now[0] = 1.0
    assert not bucket.try_accept()
    now[0] = 2.0
    assert bucket.try_accept()
    assert not TokenBucket(0.0, lambda: now[0]).try_accept()
