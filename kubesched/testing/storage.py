"""Builders for storage objects in plugin tests, in the spirit of upstream's
``volumebinding/test_utils.go`` (``makePV``, ``makePVC``, ...): each returns the typed
object after the API server's defaulting, built from a raw manifest."""

from __future__ import annotations

from typing import Any

from kubesched.api.defaults import default_object
from kubesched.api.storage import (
    ANN_BIND_COMPLETED, CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim,
    StorageClass,
)


def pv(name: str, sc: str = "", *, capacity: str = "1Gi", phase: str = "Available",
       modes: tuple[str, ...] = ("ReadWriteOnce",), affinity: dict[str, list[str]] | None = None,
       claim: tuple[str, str] | None = None, labels: dict[str, str] | None = None,
       source: dict[str, Any] | None = None) -> PersistentVolume:
    """A PV; ``affinity`` is one required term of ``key In values`` expressions."""
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "accessModes": list(modes),
                            "storageClassName": sc, **(source or {"hostPath": {"path": f"/{name}"}})}
    if affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in sorted(affinity.items())]}]}}
    if claim:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    raw = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
           "spec": spec, "status": {"phase": phase}}
    return PersistentVolume.from_dict(default_object(raw, {}))


def pvc(name: str, sc: str | None = "", *, ns: str = "default", request: str = "1Gi",
        modes: tuple[str, ...] = ("ReadWriteOnce",), bound_pv: str = "", phase: str = "",
        annotations: dict[str, str] | None = None, owner_uid: str = "") -> PersistentVolumeClaim:
    """A PVC; ``bound_pv`` makes it fully bound (volumeName and bind-completed)."""
    ann = dict(annotations or {})
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": request}}}
    if sc is not None:
        spec["storageClassName"] = sc
    if bound_pv:
        spec["volumeName"] = bound_pv
        ann[ANN_BIND_COMPLETED] = "yes"
    meta: dict[str, Any] = {"name": name, "namespace": ns, "annotations": ann}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid,
                                    "controller": True}]
    raw = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
           "status": {"phase": phase or ("Bound" if bound_pv else "Pending")}}
    return PersistentVolumeClaim.from_dict(default_object(raw, {}))


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "kubernetes.io/no-provisioner",
                  topologies: list[dict[str, list[str]]] | None = None) -> StorageClass:
    raw: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies:
        raw["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": v} for k, v in t.items()]}
                                    for t in topologies]
    return StorageClass.from_dict(default_object(raw, {}))


def csi_node(name: str, drivers: dict[str, int | None], topology_keys: tuple[str, ...] = (),
             migrated: str = "") -> CSINode:
    """A CSINode with ``drivers`` (name -> allocatable count, None for no limit)."""
    ds = []
    for d, count in drivers.items():
        e: dict[str, Any] = {"name": d, "nodeID": name, "topologyKeys": list(topology_keys)}
        if count is not None:
            e["allocatable"] = {"count": count}
        ds.append(e)
    meta: dict[str, Any] = {"name": name}
    if migrated:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return CSINode.from_dict(default_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta,
                                             "spec": {"drivers": ds}}, {}))


def csi_driver(name: str, storage_capacity: bool) -> CSIDriver:
    return CSIDriver.from_dict(default_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                               "metadata": {"name": name},
                                               "spec": {"storageCapacity": storage_capacity}}, {}))


def capacity(name: str, sc: str, cap: str | None, labels: dict[str, str] | None,
             max_size: str | None = None) -> CSIStorageCapacity:
    raw: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": name, "namespace": "default"}, "storageClassName": sc}
    if cap is not None:
        raw["capacity"] = cap
    if max_size is not None:
        raw["maximumVolumeSize"] = max_size
    if labels is not None:
        raw["nodeTopology"] = {"matchLabels": labels}
    return CSIStorageCapacity.from_dict(default_object(raw, {}))
