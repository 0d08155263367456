"""The Deployment and ReplicaSet controllers and the garbage collector, in an in-process
cluster (API server, controller manager, simulated nodes, a toy binder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cluster_harness import Cluster, active, deployment, eventually, running

from kubesched.server.apiserver.registry.subresources import evict
from kubesched.server.controllers.naming import ALPHANUMS, HASH_LABEL

MakeCluster = Callable[..., Cluster]


def rs_of(c: Cluster, name: str = "") -> list[dict[str, Any]]:
    items = c.registry.list("replicasets.apps", "default")["items"]
    return [rs for rs in items if not name or rs["metadata"]["name"].startswith(name)]


def dep(c: Cluster, name: str) -> dict[str, Any]:
    out = c.get("deployments.apps", "default", name)
    assert out is not None
    return out


def rolled_out(c: Cluster, name: str) -> bool:
    """kubectl rollout status's test (rollout_status.go)."""
    d = dep(c, name)
    st, want = d.get("status", {}), d["spec"]["replicas"]
    return (d["metadata"]["generation"] <= st.get("observedGeneration", 0) and st.get("updatedReplicas", 0) >= want
            and st.get("replicas", 0) <= st.get("updatedReplicas", 0)
            and st.get("availableReplicas", 0) >= st.get("updatedReplicas", 0))


def test_replicaset_keeps_its_pods_and_replaces_evicted_and_deleted_ones(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("replicasets.apps", "default", {
        "metadata": {"name": "rs"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "rs"}},
                                             "template": {"metadata": {"labels": {"app": "rs"}},
                                                          "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    pods = eventually(lambda: len(running(c.pods())) == 3 and c.pods())
    for p in pods:
        name, refs = p["metadata"]["name"], p["metadata"]["ownerReferences"]
        assert name.startswith("rs-") and len(name) == 8 and set(name[3:]) <= set(ALPHANUMS)
        assert refs == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                         "uid": c.get("replicasets.apps", "default", "rs")["metadata"]["uid"],  # type: ignore[index]
                         "controller": True, "blockOwnerDeletion": True}]
    st = eventually(lambda: (c.get("replicasets.apps", "default", "rs") or {}).get("status", {}).get(
        "availableReplicas") == 3 and c.get("replicasets.apps", "default", "rs")["status"])  # type: ignore[index]
    assert st["replicas"] == st["readyReplicas"] == st["fullyLabeledReplicas"] == 3 and st["observedGeneration"] == 1
    victim, gone = pods[0]["metadata"]["name"], pods[1]["metadata"]["name"]
    evict(c.registry, "default", victim, {"metadata": {"name": victim}})
    c.registry.delete("pods", "default", gone)
    names = eventually(lambda: len(running(c.pods())) == 3 and {p["metadata"]["name"] for p in running(c.pods())})
    assert victim not in names and gone not in names
    eventually(lambda: len(c.pods()) == 3)  # the terminating ones are removed by their kubelet


def test_replicaset_adopts_orphans_releases_relabelled_pods_and_scales_down(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("pods", "default", {"metadata": {"name": "orphan", "labels": {"app": "x"}},
                                          "spec": {"containers": [{"name": "c", "image": "i"}]}})
    c.registry.create("replicasets.apps", "default", {
        "metadata": {"name": "x"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                                            "template": {"metadata": {"labels": {"app": "x"}},
                                                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    eventually(lambda: len(active(c.pods())) == 2)
    orphan = c.get("pods", "default", "orphan")
    assert orphan is not None and orphan["metadata"]["ownerReferences"][0]["name"] == "x"
    c.registry.patch("pods", "default", "orphan", "application/merge-patch+json",
                     {"metadata": {"labels": {"app": "y"}}})
    released = eventually(lambda: not (c.get("pods", "default", "orphan") or {}).get("metadata", {}).get(
        "ownerReferences") and c.get("pods", "default", "orphan"))
    assert released["metadata"]["labels"] == {"app": "y"}
    eventually(lambda: len(active(c.pods(label_selector="app=x"))) == 2)
    c.registry.patch("replicasets.apps", "default", "x", "application/merge-patch+json", {"spec": {"replicas": 0}})
    eventually(lambda: not c.pods(label_selector="app=x"))


def test_deployment_rolls_out_scales_updates_and_rolls_back(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("deployments.apps", "default", deployment("web", 3))
    eventually(lambda: rolled_out(c, "web"))
    d = dep(c, "web")
    [rs] = rs_of(c)
    h = rs["metadata"]["labels"][HASH_LABEL]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH_LABEL: h}
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert {p["metadata"]["labels"][HASH_LABEL] for p in c.pods()} == {h}
    conds = {x["type"]: (x["status"], x["reason"]) for x in d["status"]["conditions"]}
    assert conds == {"Available": ("True", "MinimumReplicasAvailable"),
                     "Progressing": ("True", "NewReplicaSetAvailable")}
    assert [x["type"] for x in d["status"]["conditions"]] == ["Available", "Progressing"]
    assert d["status"]["replicas"] == d["status"]["readyReplicas"] == 3

    c.registry.patch("deployments.apps", "default", "web", "application/merge-patch+json", {"spec": {"replicas": 5}})
    eventually(lambda: rolled_out(c, "web") and dep(c, "web")["status"]["availableReplicas"] == 5)

    c.registry.patch("deployments.apps", "default", "web", "application/strategic-merge-patch+json",
                     {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}})
    eventually(lambda: rolled_out(c, "web") and len(running(c.pods())) == 5
               and all(p["spec"]["containers"][0]["image"] == "nginx:2" for p in active(c.pods())), timeout=30)
    by_rev = {rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs for rs in rs_of(c)}
    assert set(by_rev) == {"1", "2"} and by_rev["1"]["spec"]["replicas"] == 0 and by_rev["2"]["spec"]["replicas"] == 5

    old_template = by_rev["1"]["spec"]["template"]
    old_template["metadata"]["labels"].pop(HASH_LABEL)
    c.registry.patch("deployments.apps", "default", "web", "application/merge-patch+json",
                     {"spec": {"template": old_template}})  # kubectl rollout undo
    eventually(lambda: rolled_out(c, "web") and all(p["spec"]["containers"][0]["image"] == "nginx:1"
                                                    for p in active(c.pods())), timeout=30)
    revs = {rs["metadata"]["name"]: rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
            for rs in rs_of(c)}
    assert revs[by_rev["1"]["metadata"]["name"]] == "3" and len(revs) == 2


def test_recreate_deployment_converges_and_history_is_limited(cluster: MakeCluster) -> None:
    c = cluster()
    d = deployment("re", 2, strategy={"type": "Recreate"})
    d["spec"]["revisionHistoryLimit"] = 1
    c.registry.create("deployments.apps", "default", d)
    eventually(lambda: rolled_out(c, "re"))
    for image in ("v2", "v3"):
        c.registry.patch("deployments.apps", "default", "re", "application/strategic-merge-patch+json",
                         {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
        eventually(lambda image=image: rolled_out(c, "re") and {p["spec"]["containers"][0]["image"]
                                                                 for p in active(c.pods())} == {image}, timeout=30)
    eventually(lambda: len(rs_of(c)) == 2)  # the current one and revisionHistoryLimit=1 old one


def test_progress_deadline_is_reported(cluster: MakeCluster) -> None:
    c = cluster(binder=False)
    d = deployment("stuck", 1)
    d["spec"]["progressDeadlineSeconds"] = 1
    c.registry.create("deployments.apps", "default", d)
    cond = eventually(lambda: next((x for x in dep(c, "stuck").get("status", {}).get("conditions", [])
                                    if x["type"] == "Progressing" and x["reason"] == "ProgressDeadlineExceeded"), None),
                      timeout=10)
    assert cond["status"] == "False" and cond["message"].endswith("has timed out progressing.")


def test_seeded_pod_names_are_reproducible(tmp_path: Any) -> None:
    from kubesched.server.nodes import NodePool

    names = []
    for run in range(2):
        c = Cluster(tmp_path / f"run{run}", [NodePool(1)], nodes=None, binder=False, seed=42)
        try:
            c.registry.create("deployments.apps", "default", deployment("same", 4))
            names.append(eventually(lambda c=c: len(c.pods()) == 4 and sorted(p["metadata"]["name"] for p in c.pods())))
        finally:
            c.stop()
    assert names[0] == names[1]


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_deleting_a_deployment_collects_its_replicasets_and_pods(cluster: MakeCluster, policy: str) -> None:
    c = cluster()
    c.registry.create("deployments.apps", "default", deployment("gone", 3))
    eventually(lambda: rolled_out(c, "gone"))
    _, removed = c.registry.delete("deployments.apps", "default", "gone", {"propagationPolicy": policy})
    if policy == "Foreground":
        assert not removed
        d = dep(c, "gone")
        assert d["metadata"]["finalizers"] == ["foregroundDeletion"] and d["metadata"]["deletionTimestamp"]
    eventually(lambda: not rs_of(c) and not c.pods() and c.get("deployments.apps", "default", "gone") is None)


def test_orphan_deletion_keeps_the_dependents_without_owner(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("deployments.apps", "default", deployment("orph", 2))
    eventually(lambda: rolled_out(c, "orph"))
    c.registry.delete("deployments.apps", "default", "orph", {"propagationPolicy": "Orphan"})
    eventually(lambda: c.get("deployments.apps", "default", "orph") is None)
    [rs] = eventually(lambda: [r for r in rs_of(c) if not r["metadata"].get("ownerReferences")])
    assert len(active(c.pods())) == 2
    c.registry.delete("replicasets.apps", "default", rs["metadata"]["name"])
    eventually(lambda: not c.pods())


def test_an_object_whose_owner_does_not_exist_is_collected(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("configmaps", "default", {"metadata": {"name": "dangling", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nope", "uid": "0000"}]}})
    c.registry.create("configmaps", "default", {"metadata": {"name": "alien", "ownerReferences": [
        {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "1111"}]}})
    eventually(lambda: c.get("configmaps", "default", "dangling") is None)
    assert c.get("configmaps", "default", "alien") is not None  # an owner kind this server does not serve


def test_a_paused_deployment_scales_but_does_not_roll_out_until_resumed(cluster: MakeCluster) -> None:
    c = cluster()
    c.registry.create("deployments.apps", "default", deployment("pz", 2))
    eventually(lambda: rolled_out(c, "pz"))
    c.registry.patch("deployments.apps", "default", "pz", "application/merge-patch+json", {"spec": {"paused": True}})
    eventually(lambda: next((x["reason"] for x in dep(c, "pz")["status"]["conditions"] if x["type"] == "Progressing"),
                            None) == "DeploymentPaused")
    c.registry.patch("deployments.apps", "default", "pz", "application/strategic-merge-patch+json",
                     {"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "v2"}]}}}})
    eventually(lambda: len(running(c.pods())) == 3)
    assert len(rs_of(c)) == 1 and {p["spec"]["containers"][0]["image"] for p in c.pods()} == {"nginx:1"}
    c.registry.patch("deployments.apps", "default", "pz", "application/merge-patch+json", {"spec": {"paused": None}})
    eventually(lambda: rolled_out(c, "pz") and {p["spec"]["containers"][0]["image"] for p in active(c.pods())}
               == {"v2"}, timeout=30)
