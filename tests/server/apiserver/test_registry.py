"""The registry (the in-process API): defaulting, admission, validation, update rules,
subresources, graceful deletion and watch semantics, on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.registry import subresources as sub
from kubesched.server.apiserver.registry.deletion import reap
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.watch.api import INITIAL_EVENTS_END, open_watch

from kubesched.testing.clock import ManualClock as Clock


def pod(name: str, cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": cpu}}}],
                     **spec}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def code_of(fn: Any, *args: Any, **kw: Any) -> int:
    with pytest.raises(ApiError) as info:
        fn(*args, **kw)
    return info.value.code


def test_pod_create_is_defaulted_and_admitted_like_simulate(reg: Registry) -> None:
    reg.create("priorityclasses.scheduling.k8s.io", None, {"metadata": {"name": "low"}, "value": 7,
                                                           "globalDefault": True})
    p = reg.create("pods", "default", pod("web", cpu="0.1"))
    meta, spec = p["metadata"], p["spec"]
    assert meta["uid"] and meta["creationTimestamp"] == "2027-01-15T08:00:00Z" and meta["generation"] == 1
    assert spec["priority"] == 7 and spec["priorityClassName"] == "low"
    assert spec["schedulerName"] == "default-scheduler" and spec["restartPolicy"] == "Always"
    assert spec["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    assert {t["key"] for t in spec["tolerations"]} == {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
    assert p["status"] == {"phase": "Pending", "qosClass": "Burstable"}


@pytest.mark.parametrize("body,code,field", [
    # a quantity is parsed while the body is decoded (Quantity.UnmarshalJSON): 400, as upstream
    (pod("web", cpu="lots"), 400, None),
    (pod("Web"), 422, "metadata.name"),
    ({"metadata": {"name": "x"}, "spec": {"containers": []}}, 422, "spec.containers"),
    (pod("web", tolerations=[{"operator": "Bogus"}]), 422, "spec.tolerations[0].operator"),
    (pod("web", priorityClassName="missing"), 403, None),
    ({"kind": "Node", "metadata": {"name": "x"}}, 400, None),
    ({"apiVersion": "apps/v1", "kind": "Pod", "metadata": {"name": "x"}}, 400, None),
], ids=["quantity", "name", "no-containers", "toleration", "priority-admission", "wrong-kind", "wrong-version"])
def test_create_rejections(reg: Registry, body: dict[str, Any], code: int, field: str | None) -> None:
    with pytest.raises(ApiError) as info:
        reg.create("pods", "default", body)
    assert info.value.code == code
    if field is not None:
        assert [c["field"] for c in info.value.status()["details"]["causes"]] == [field]


def test_namespaces_are_autoprovisioned_unless_strict(reg: Registry) -> None:
    reg.create("pods", "shop", pod("a"))
    assert reg.get("namespaces", None, "shop")["status"]["phase"] == "Active"
    reg.autoprovision_namespaces = False
    assert code_of(reg.create, "pods", "nowhere", pod("a")) == 404


def test_updates_conflicts_and_no_op(reg: Registry) -> None:
    n = reg.create("nodes", None, node("n1"))
    rv = n["metadata"]["resourceVersion"]
    n["metadata"]["labels"] = {"zone": "a"}
    n2 = reg.update("nodes", None, "n1", n)
    assert n2["metadata"]["labels"] == {"zone": "a"}
    assert code_of(reg.update, "nodes", None, "n1", n) == 409  # stale resourceVersion
    same = reg.update("nodes", None, "n1", n2)
    assert same["metadata"]["resourceVersion"] == n2["metadata"]["resourceVersion"] != rv
    del n2["metadata"]["resourceVersion"]
    n2["spec"] = {"unschedulable": True}
    assert reg.update("nodes", None, "n1", n2)["spec"]["unschedulable"] is True  # unconditional


def test_status_and_main_resource_do_not_overwrite_each_other(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    p = reg.get("pods", "default", "a")
    p["status"] = {"phase": "Running"}
    p["metadata"]["labels"] = {"changed": "by-status"}
    out = reg.update("pods", "default", "a", p, subresource="status")
    assert out["status"]["phase"] == "Running" and out["metadata"]["labels"] == {"app": "web"}
    out["status"] = {"phase": "Failed"}
    out["metadata"]["labels"] = {"x": "1"}
    out2 = reg.update("pods", "default", "a", out)
    assert out2["status"]["phase"] == "Running" and out2["metadata"]["labels"] == {"x": "1"}
    out2["spec"]["nodeName"] = "n1"
    assert code_of(reg.update, "pods", "default", "a", out2) == 422  # only binding sets nodeName


def test_binding_once_and_only_once(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    sub.bind(reg, "default", "a", {"target": {"kind": "Node", "name": "n1"}})
    p = reg.get("pods", "default", "a")
    assert p["spec"]["nodeName"] == "n1"
    assert [c["type"] for c in p["status"]["conditions"]] == ["PodScheduled"]
    assert code_of(sub.bind, reg, "default", "a", {"target": {"name": "n2"}}) == 409
    assert code_of(sub.bind, reg, "default", "missing", {"target": {"name": "n2"}}) == 404


@pytest.mark.parametrize("clears", [False, True])
def test_binding_clears_the_nomination_when_the_release_does(reg: Registry, clears: bool) -> None:
    """kube-apiserver's pods/binding (pkg/registry/core/pod/storage/storage.go
    setPodNodeAndMetadata) empties status.nominatedNodeName when ClearingNominatedNodeNameAfterBinding
    is on (1.35+); before, the nomination stays."""
    reg.clear_nominated_on_binding = clears
    reg.create("pods", "default", pod("a"))
    p = reg.get("pods", "default", "a")
    p["status"] = {"nominatedNodeName": "n1"}
    reg.update("pods", "default", "a", p, subresource="status")
    sub.bind(reg, "default", "a", {"target": {"kind": "Node", "name": "n1"}})
    p = reg.get("pods", "default", "a")
    assert p["spec"]["nodeName"] == "n1"
    assert p["status"].get("nominatedNodeName") == (None if clears else "n1")


def test_graceful_deletion_and_reaping(reg: Registry, clock: Clock) -> None:
    reg.create("pods", "default", pod("bound"))
    reg.create("pods", "default", pod("unbound"))
    sub.bind(reg, "default", "bound", {"target": {"name": "n1"}})
    obj, removed = reg.delete("pods", "default", "bound", {"gracePeriodSeconds": 10})
    assert not removed and obj["metadata"]["deletionGracePeriodSeconds"] == 10
    assert reg.delete("pods", "default", "unbound", {})[1]
    clock.t += 9
    assert reap(reg) == 0
    clock.t += 2
    assert reap(reg) == 1
    assert code_of(reg.get, "pods", "default", "bound") == 404


def test_finalizers_defer_deletion(reg: Registry) -> None:
    reg.create("configmaps", "default", {"metadata": {"name": "c", "finalizers": ["example.com/x"]}})
    obj, removed = reg.delete("configmaps", "default", "c")
    assert not removed and obj["metadata"]["deletionTimestamp"]
    obj["metadata"]["finalizers"] = []
    reg.update("configmaps", "default", "c", obj)
    assert code_of(reg.get, "configmaps", "default", "c") == 404


def test_eviction_respects_disruption_budgets(reg: Registry) -> None:
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "pdb"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    for name in ("a", "b"):
        reg.create("pods", "default", pod(name))
        sub.bind(reg, "default", name, {"target": {"name": "n1"}})
        p = reg.get("pods", "default", name)
        p["status"]["phase"] = "Running"
        p["status"]["conditions"].append({"type": "Ready", "status": "True"})
        reg.update("pods", "default", name, p, subresource="status")
    assert code_of(sub.evict, reg, "default", "a", {"kind": "Eviction"}) == 429
    pdb = reg.get("poddisruptionbudgets.policy", "default", "pdb")
    pdb["status"] = {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "observedGeneration": 1}
    reg.update("poddisruptionbudgets.policy", "default", "pdb", pdb, subresource="status")
    sub.evict(reg, "default", "a", {"deleteOptions": {"gracePeriodSeconds": 0}})
    assert code_of(reg.get, "pods", "default", "a") == 404
    status = reg.get("poddisruptionbudgets.policy", "default", "pdb")["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == ["a"]
    assert code_of(sub.evict, reg, "default", "b", {}) == 429


def test_namespace_deletion_removes_its_objects(reg: Registry) -> None:
    reg.create("pods", "team", pod("a"))
    reg.create("configmaps", "team", {"metadata": {"name": "c"}})
    assert reg.delete("namespaces", None, "team")[1]
    assert reg.list("pods", None)["items"] == [] and reg.list("configmaps", None)["items"] == []
    assert code_of(reg.delete, "namespaces", None, "default") == 403


def test_scale_subresource(reg: Registry) -> None:
    dep = {"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}},
                                                 "template": {"metadata": {"labels": {"app": "web"}},
                                                              "spec": pod("x")["spec"]}}}
    created = reg.create("deployments.apps", "default", dep)
    assert created["spec"]["replicas"] == 1 and created["spec"]["strategy"]["type"] == "RollingUpdate"
    res = reg.resource("deployments.apps")
    assert sub.get_scale(reg, res, "default", "web")["status"]["selector"] == "app=web"
    out = sub.update_scale(reg, res, "default", "web", {"spec": {"replicas": 3}}, "application/merge-patch+json")
    assert out["spec"]["replicas"] == 3
    d = reg.get("deployments.apps", "default", "web")
    assert d["spec"]["replicas"] == 3 and d["metadata"]["generation"] == 2
    bad = dict(dep, metadata={"name": "bad"})
    bad["spec"] = dict(dep["spec"], selector={"matchLabels": {"app": "other"}})
    assert code_of(reg.create, "deployments.apps", "default", bad) == 422


def test_events_v1_and_core_are_one_resource(reg: Registry) -> None:
    reg.create("events.k8s.io/events", "default", {
        "metadata": {"name": "e1"}, "reason": "FailedScheduling", "note": "0/3 nodes are available",
        "type": "Warning", "reportingController": "default-scheduler", "reportingInstance": "s",
        "action": "Scheduling", "eventTime": "2027-01-15T08:00:00.000000Z",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1"}})
    core = reg.list("events", "default", field_selector="involvedObject.name=web,involvedObject.kind=Pod")["items"]
    assert [(e["message"], e["reportingComponent"], e["apiVersion"]) for e in core] == [
        ("0/3 nodes are available", "default-scheduler", "v1")]
    v1 = reg.get("events.k8s.io/events", "default", "e1")
    assert v1["apiVersion"] == "events.k8s.io/v1" and v1["regarding"]["name"] == "web"


def test_generate_name_and_dry_run(reg: Registry) -> None:
    p = reg.create("pods", "default", {"metadata": {"generateName": "web-"}, "spec": pod("x")["spec"]})
    assert p["metadata"]["name"].startswith("web-") and len(p["metadata"]["name"]) == 9
    rv = reg.store.rv
    reg.create("pods", "default", pod("dry"), dry_run=True)
    assert reg.store.rv == rv and code_of(reg.get, "pods", "default", "dry") == 404


def test_watch_semantics(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    initial = open_watch(reg, "pods", "default", send_initial_events=True)
    items = initial.poll()
    assert [i.type for i in items] == ["ADDED", "BOOKMARK"]
    assert items[1].obj["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
    on_node = open_watch(reg, "pods", None, resource_version=str(reg.store.rv), field_selector="spec.nodeName=n1")
    sub.bind(reg, "default", "a", {"target": {"name": "n1"}})
    reg.patch("pods", "default", "a", "application/merge-patch+json", {"metadata": {"labels": {"x": "y"}}})
    reg.delete("pods", "default", "a", {"gracePeriodSeconds": 0})
    assert [i.type for i in on_node.next(1)] == ["ADDED", "MODIFIED", "DELETED"]
    resumed = open_watch(reg, "pods", "default", resource_version=items[0].obj["metadata"]["resourceVersion"])
    assert [i.type for i in resumed.poll()] == ["MODIFIED", "MODIFIED", "DELETED"]
    reg.store.compact(keep=1)
    assert code_of(open_watch, reg, "pods", "default", resource_version="1") == 410
