"""The storage controllers of ``kubesched serve`` in an in-process cluster: the PV
controller, the simulated CSI provisioner, the ephemeral-volume controller and the
StatefulSet controller. What a real cluster writes comes from upstream:
``pkg/controller/volume/persistentvolume/pv_controller.go`` (syncClaim, syncVolume, bind),
``.../persistentvolume/index.go`` (findByClaim), ``pkg/controller/volume/ephemeral``,
``pkg/controller/statefulset/stateful_set_control.go`` and
``../shared/fidelity-storage/README.md`` ("after a pod is chosen")."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cluster_harness import Cluster, eventually

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.subresources import bind
from kubesched.server.nodes import NodePool

ZONE = "topology.kubernetes.io/zone"
ZONAL = ({"name": "zonal.csi.example.com", "topologyKeys": [ZONE]},)


@pytest.fixture
def storage_cluster(tmp_path: Path) -> Any:
    started: list[Cluster] = []

    def make(binder: bool = False) -> Cluster:
        pools = [NodePool(3, "zonal", {"cpu": "4", "memory": "8Gi", "pods": "110"}, zones=3, csi_drivers=ZONAL),
                 NodePool(1, "plain", {"cpu": "4", "memory": "8Gi", "pods": "110"})]
        c = Cluster(tmp_path / f"data{len(started)}", pools, binder=binder)
        started.append(c)
        return c

    yield make
    for c in started:
        c.stop()


def pv(name: str, size: str, modes: list[str], *, policy: str | None = None, cls: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": modes, "hostPath": {"path": f"/{name}"}}
    if policy:
        spec["persistentVolumeReclaimPolicy"] = policy
    if cls:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name}, "spec": spec}


def pvc(name: str, size: str = "1Gi", cls: str | None = "", modes: tuple[str, ...] = ("ReadWriteOnce",)
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name}, "spec": spec}


def get(c: Cluster, res: str, name: str, ns: str | None = "default") -> dict[str, Any] | None:
    return c.get(res, ns if res not in ("persistentvolumes",) else None, name)


def bound(c: Cluster, name: str) -> dict[str, Any] | None:
    claim = get(c, "persistentvolumeclaims", name)
    return claim if claim and claim.get("status", {}).get("phase") == "Bound" else None


def events(c: Cluster, reason: str) -> list[str]:
    return [e["message"] for e in c.registry.list("events", "default")["items"] if e["reason"] == reason]


def test_immediate_claim_binds_the_smallest_volume_of_the_fewest_access_modes(
        storage_cluster: Callable[..., Cluster]) -> None:
    """findByClaim: groups of volumes by access modes, fewest modes first; in the first
    group with a fit, the smallest big enough. For a 1Gi RWO claim: the RWO group holds
    5Gi, 2Gi and 500Mi (too small) -> 2Gi ``b``; ``c`` (RWO+ROX, 1Gi) is in a larger group
    and ``e`` is of another class."""
    c = storage_cluster()
    for v in (pv("a", "5Gi", ["ReadWriteOnce"]), pv("b", "2Gi", ["ReadWriteOnce"]),
              pv("c", "1Gi", ["ReadWriteOnce", "ReadOnlyMany"]), pv("d", "500Mi", ["ReadWriteOnce"]),
              pv("e", "1Gi", ["ReadWriteOnce"], cls="other")):
        c.registry.create("persistentvolumes", None, v)
    claim = c.registry.create("persistentvolumeclaims", "default", pvc("data"))
    got = eventually(lambda: bound(c, "data"))
    assert got["spec"]["volumeName"] == "b"
    assert got["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                              "pv.kubernetes.io/bound-by-controller": "yes"}
    assert got["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    vol = eventually(lambda: (v := get(c, "persistentvolumes", "b")) and v["status"]["phase"] == "Bound" and v)
    assert vol["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert vol["spec"]["claimRef"]["name"] == "data" and vol["spec"]["claimRef"]["namespace"] == "default"
    assert vol["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    eventually(lambda: all(get(c, "persistentvolumes", n)["status"]["phase"] == "Available"  # type: ignore[index]
                           for n in "acde"))


def test_deleted_claim_releases_retain_volumes_and_deletes_delete_volumes(
        storage_cluster: Callable[..., Cluster]) -> None:
    """syncVolume: the claim is gone -> Released, then reclaimVolume by policy."""
    c = storage_cluster()
    c.registry.create("persistentvolumes", None, pv("kept", "1Gi", ["ReadWriteOnce"]))  # default Retain
    c.registry.create("persistentvolumes", None, pv("gone", "1Gi", ["ReadWriteOnce"], policy="Delete", cls="x"))
    c.registry.create("storageclasses.storage.k8s.io", None, {"metadata": {"name": "x"},
                                                              "provisioner": "kubernetes.io/no-provisioner"})
    c.registry.create("persistentvolumeclaims", "default", pvc("one"))
    c.registry.create("persistentvolumeclaims", "default", pvc("two", cls="x"))
    eventually(lambda: bound(c, "one") and bound(c, "two"))
    assert get(c, "persistentvolumeclaims", "two")["spec"]["volumeName"] == "gone"  # type: ignore[index]
    c.registry.delete("persistentvolumeclaims", "default", "one")
    c.registry.delete("persistentvolumeclaims", "default", "two")
    kept = eventually(lambda: (v := get(c, "persistentvolumes", "kept")) and v["status"]["phase"] == "Released" and v)
    assert kept["spec"]["claimRef"]["name"] == "one"  # a released volume keeps its claimRef
    eventually(lambda: get(c, "persistentvolumes", "gone") is None)
    # a new claim does not get the released volume: it is not Available
    c.registry.create("persistentvolumeclaims", "default", pvc("three"))
    time.sleep(1.0)
    assert get(c, "persistentvolumeclaims", "three")["status"]["phase"] == "Pending"  # type: ignore[index]


def test_wait_for_first_consumer_provisions_in_the_selected_nodes_zone(
        storage_cluster: Callable[..., Cluster]) -> None:
    """A WaitForFirstConsumer claim waits (event WaitForFirstConsumer); once the scheduler
    wrote selected-node, the provisioner creates ``pvc-<uid>`` with node affinity to the
    node's value of each topology key its CSINode lists for the driver, or to the node's
    hostname when the node has no such driver; the PV controller binds it."""
    c = storage_cluster()
    c.registry.create("storageclasses.storage.k8s.io", None, {
        "metadata": {"name": "zonal"}, "provisioner": "zonal.csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer"})
    claims = {n: c.registry.create("persistentvolumeclaims", "default", pvc(n, "3Gi", "zonal"))
              for n in ("in-zone", "on-host")}
    eventually(lambda: events(c, "WaitForFirstConsumer"))
    time.sleep(0.5)
    assert not c.registry.list("persistentvolumes")["items"]
    for name, node in (("in-zone", "zonal-02"), ("on-host", "plain-01")):
        cur = get(c, "persistentvolumeclaims", name)
        assert cur is not None
        cur["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": node}
        c.registry.update("persistentvolumeclaims", "default", name, cur)
    for name, term in (("in-zone", {"key": ZONE, "operator": "In", "values": ["zone-b"]}),
                       ("on-host", {"key": "kubernetes.io/hostname", "operator": "In", "values": ["plain-01"]})):
        got = eventually(lambda: bound(c, name))
        uid = claims[name]["metadata"]["uid"]
        assert got["spec"]["volumeName"] == f"pvc-{uid}"
        vol = get(c, "persistentvolumes", f"pvc-{uid}")
        assert vol is not None
        assert vol["spec"]["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}
        assert vol["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "zonal.csi.example.com"}
        assert (vol["spec"]["capacity"], vol["spec"]["storageClassName"], vol["spec"]["csi"]["driver"],
                vol["spec"]["persistentVolumeReclaimPolicy"]) == (
            {"storage": "3Gi"}, "zonal", "zonal.csi.example.com", "Delete")
        assert vol["spec"]["claimRef"]["uid"] == uid
        assert got["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
        assert got["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "zonal.csi.example.com"


def test_immediate_class_provisions_at_once_within_allowed_topologies(
        storage_cluster: Callable[..., Cluster]) -> None:
    c = storage_cluster()
    c.registry.create("storageclasses.storage.k8s.io", None, {
        "metadata": {"name": "fast"}, "provisioner": "zonal.csi.example.com", "reclaimPolicy": "Retain",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-c"]}]}]})
    claim = c.registry.create("persistentvolumeclaims", "default", pvc("now", cls="fast"))
    got = eventually(lambda: bound(c, "now"))
    vol = get(c, "persistentvolumes", f"pvc-{claim['metadata']['uid']}")
    assert vol is not None and got["spec"]["volumeName"] == vol["metadata"]["name"]
    assert vol["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-c"]}]}]
    assert vol["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


def test_ephemeral_volume_claim_is_created_for_and_owned_by_its_pod(
        storage_cluster: Callable[..., Cluster]) -> None:
    c = storage_cluster()
    pod = c.registry.create("pods", "default", {"metadata": {"name": "app"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"kind": "scratch"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": "none"}}}}]}})
    claim = eventually(lambda: get(c, "persistentvolumeclaims", "app-scratch"))
    assert claim["metadata"]["labels"] == {"kind": "scratch"}
    assert claim["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "app",
                                                     "uid": pod["metadata"]["uid"], "controller": True,
                                                     "blockOwnerDeletion": True}]
    c.registry.delete("pods", "default", "app", {"gracePeriodSeconds": 0})
    eventually(lambda: get(c, "persistentvolumeclaims", "app-scratch") is None)


def statefulset(name: str, replicas: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {
        "replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "none"}}]}}


def pod_names(c: Cluster, app: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.pods(label_selector=f"app={app}")
                  if not p["metadata"].get("deletionTimestamp"))


@pytest.mark.slow
def test_statefulset_creates_pods_in_order_with_their_claims_and_keeps_claims(
        storage_cluster: Callable[..., Cluster]) -> None:
    """OrderedReady: ``web-1`` only once ``web-0`` is Running and Ready; claims
    ``data-web-<i>`` before their pods; scale-down from the highest ordinal; claims kept
    on scale-down and when the set is deleted (retention policy Retain/Retain)."""
    c = storage_cluster()  # no binder: pods run only when the test binds them
    sts = c.registry.create("statefulsets.apps", "default", statefulset("web", 3))
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    for i in range(3):
        eventually(lambda: pod_names(c, "web") == [f"web-{j}" for j in range(i + 1)])
        time.sleep(0.5)
        assert pod_names(c, "web") == [f"web-{j}" for j in range(i + 1)]  # the next waits for this one
        pod = c.get("pods", "default", f"web-{i}")
        assert pod is not None
        assert pod["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": f"data-web-{i}"}}
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (f"web-{i}", "web")
        assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == f"web-{i}"
        assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == str(i)
        claim = get(c, "persistentvolumeclaims", f"data-web-{i}")
        assert claim is not None and claim["metadata"]["labels"] == {"app": "web"}
        assert "ownerReferences" not in claim["metadata"]
        bind(c.registry, "default", f"web-{i}", {"target": {"kind": "Node", "name": "zonal-01"}})
    eventually(lambda: (s := c.get("statefulsets.apps", "default", "web")) and s.get("status", {}).get(
        "readyReplicas") == 3)
    scaled = c.get("statefulsets.apps", "default", "web")
    assert scaled is not None
    scaled["spec"]["replicas"] = 1
    c.registry.update("statefulsets.apps", "default", "web", scaled)
    eventually(lambda: pod_names(c, "web") == ["web-0"], timeout=60)
    claims = sorted(p["metadata"]["name"] for p in c.registry.list("persistentvolumeclaims", "default")["items"])
    assert claims == ["data-web-0", "data-web-1", "data-web-2"]
    c.registry.delete("statefulsets.apps", "default", "web")
    eventually(lambda: not c.pods(label_selector="app=web"), timeout=60)
    claims = sorted(p["metadata"]["name"] for p in c.registry.list("persistentvolumeclaims", "default")["items"])
    assert claims == ["data-web-0", "data-web-1", "data-web-2"]


def test_storage_objects_get_upstreams_defaults_and_validation(storage_cluster: Callable[..., Cluster]) -> None:
    """pkg/apis/core/v1/defaults.go, pkg/apis/storage/v1/defaults.go; the messages of
    pkg/apis/core/validation and pkg/apis/storage/validation."""
    c = storage_cluster()
    sc = c.registry.create("storageclasses.storage.k8s.io", None, {"metadata": {"name": "d"}, "provisioner": "p"})
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    vol = c.registry.create("persistentvolumes", None, pv("v", "1Gi", ["ReadWriteOnce"]))
    assert (vol["spec"]["persistentVolumeReclaimPolicy"], vol["spec"]["volumeMode"], vol["status"]["phase"]) == (
        "Retain", "Filesystem", "Pending")
    claim = c.registry.create("persistentvolumeclaims", "default", pvc("x", cls=None))
    assert (claim["spec"]["volumeMode"], claim["status"]["phase"]) == ("Filesystem", "Pending")
    drv = c.registry.create("csidrivers.storage.k8s.io", None, {"metadata": {"name": "drv"}, "spec": {}})
    assert (drv["spec"]["attachRequired"], drv["spec"]["storageCapacity"], drv["spec"]["volumeLifecycleModes"]) == (
        True, False, ["Persistent"])
    bad = [("persistentvolumes", None, {"metadata": {"name": "bad"}, "spec": {}},
            ["spec.accessModes: Required value", "spec.capacity: Required value",
             "spec: Required value: must specify a volume type"]),
           ("persistentvolumeclaims", "default", {"metadata": {"name": "bad"}, "spec": {}},
            ["spec.accessModes: Required value: at least 1 access mode is required",
             "spec.resources[storage]: Required value"]),
           ("persistentvolumeclaims", "default", {"metadata": {"name": "bad"}, "spec": {
               "accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}}},
            ['spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
             '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"']),
           ("csinodes.storage.k8s.io", None, {"metadata": {"name": "bad"}, "spec": {"drivers": [
               {"name": "d", "nodeID": "n", "allocatable": {"count": -1}}]}},
            ["spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"]),
           ("storageclasses.storage.k8s.io", None, {"metadata": {"name": "bad"}, "volumeBindingMode": "Later"},
            ["provisioner: Required value", 'volumeBindingMode: Unsupported value: "Later": supported values: '
             '"Immediate", "WaitForFirstConsumer"'])]
    for res, ns, obj, messages in bad:
        with pytest.raises(ApiError) as exc:
            c.registry.create(res, ns, obj)
        assert exc.value.code == 422
        for m in messages:
            assert m in exc.value.message, (m, exc.value.message)
    # a quantity that does not parse fails decoding (resource.Quantity's UnmarshalJSON), before validation: 400
    with pytest.raises(ApiError) as exc:
        c.registry.create("persistentvolumeclaims", "default", {"metadata": {"name": "bad"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "lots"}}}})
    assert exc.value.code == 400 and "quantities must match the regular expression" in exc.value.message
    claim = eventually(lambda: bound(c, "x"))  # the PV controller is done writing it
    claim["spec"]["accessModes"] = ["ReadWriteMany"]
    with pytest.raises(ApiError) as exc:
        c.registry.update("persistentvolumeclaims", "default", "x", claim)
    assert "spec: Forbidden: spec is immutable after creation" in exc.value.message
    sc["reclaimPolicy"] = "Retain"
    with pytest.raises(ApiError) as exc:
        c.registry.update("storageclasses.storage.k8s.io", None, "d", sc)
    assert "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden." in exc.value.message


def test_a_claim_in_use_and_a_bound_volume_outlive_their_deletion_until_free(
        storage_cluster: Callable[..., Cluster]) -> None:
    """pvcprotection: the finalizer stays while a scheduled, unfinished pod uses the claim;
    pvprotection: while the volume is Bound (pkg/controller/volume/pvcprotection,
    pvprotection; the finalizers added on create by StorageObjectInUseProtection)."""
    c = storage_cluster()
    vol = c.registry.create("persistentvolumes", None, pv("disk", "1Gi", ["ReadWriteOnce"]))
    assert vol["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    made = c.registry.create("persistentvolumeclaims", "default", pvc("used"))
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    eventually(lambda: bound(c, "used"))
    c.registry.create("pods", "default", {"metadata": {"name": "user"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "used"}}]}})
    bind(c.registry, "default", "user", {"target": {"kind": "Node", "name": "zonal-01"}})
    c.registry.delete("persistentvolumes", None, "disk")
    c.registry.delete("persistentvolumeclaims", "default", "used")
    time.sleep(1.0)
    claim = get(c, "persistentvolumeclaims", "used")
    assert claim is not None and claim["metadata"].get("deletionTimestamp")  # Terminating, kept
    disk = get(c, "persistentvolumes", "disk")
    assert disk is not None and disk["metadata"].get("deletionTimestamp") and disk["status"]["phase"] == "Bound"
    c.registry.delete("pods", "default", "user", {"gracePeriodSeconds": 0})
    eventually(lambda: get(c, "persistentvolumeclaims", "used") is None, timeout=30)
    eventually(lambda: get(c, "persistentvolumes", "disk") is None, timeout=30)  # Released, then free
