"""``kubectl get`` columns of the storage objects and StatefulSets, as upstream prints them
(``pkg/printers/internalversion/printers.go``: ``printPersistentVolume``,
``printPersistentVolumeClaim``, ``printStorageClass``, ``printCSINode``, ``printCSIDriver``,
``printStorageCapacity``, ``printVolumeAttachment``, ``printStatefulSet``).

Kept apart from :mod:`.tables` so that module stays about the machinery and the core
kinds; :data:`STORAGE_PRINTERS` is merged into its table of printers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Row = list[Any]
Printer = tuple[list[dict[str, Any]], Callable[[Mapping[str, Any], float], Row]]
NONE = "<none>"
UNSET = "<unset>"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def col(name: str, priority: int = 0, type_: str = "string", fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": name, "priority": priority}


def access_modes(modes: Any) -> str:
    """``GetAccessModesAsString``: RWO, ROX, RWX, RWOP in that order, each once."""
    modes = modes or []
    short = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
             ("ReadWriteOncePod", "RWOP"))
    return ",".join(s for m, s in short if m in modes)


def claim_class(pvc: Mapping[str, Any]) -> str:
    """``storageutil.GetPersistentVolumeClaimClass``: the beta annotation, else the field."""
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return str(ann["volume.beta.kubernetes.io/storage-class"])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


def _pv_row(pv: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, status = pv.get("metadata") or {}, pv.get("spec") or {}, pv.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    phase = status.get("phase") or ""
    if meta.get("deletionTimestamp"):
        phase = "Terminating"
    return [meta.get("name"), (spec.get("capacity") or {}).get("storage", ""), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), phase, claim, claim_class(pv),
            spec.get("volumeAttributesClassName") or UNSET, status.get("reason", ""),
            age(meta.get("creationTimestamp"), now), spec.get("volumeMode") or "<unset>"]


def _pvc_row(pvc: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, status = pvc.get("metadata") or {}, pvc.get("spec") or {}, pvc.get("status") or {}
    phase = status.get("phase") or ""
    if meta.get("deletionTimestamp"):
        phase = "Terminating"
    capacity, modes = "", ""
    if spec.get("volumeName"):
        capacity = (status.get("capacity") or {}).get("storage", "")
        modes = access_modes(status.get("accessModes"))
    return [meta.get("name"), phase, spec.get("volumeName", ""), capacity, modes, claim_class(pvc),
            spec.get("volumeAttributesClassName") or UNSET, age(meta.get("creationTimestamp"), now),
            spec.get("volumeMode") or "<unset>"]


def _sc_row(sc: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta = sc.get("metadata") or {}
    ann = meta.get("annotations") or {}
    name = str(meta.get("name"))
    if any(ann.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [name, sc.get("provisioner", ""), sc.get("reclaimPolicy") or "Delete",
            sc.get("volumeBindingMode") or "Immediate", bool(sc.get("allowVolumeExpansion")),
            age(meta.get("creationTimestamp"), now)]


def _csidriver_row(d: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec = d.get("metadata") or {}, d.get("spec") or {}
    tokens = spec.get("tokenRequests") or []
    tokens_cell = ",".join(str(t.get("audience") or "<api-server-audience>") for t in tokens) or NONE
    modes = ",".join(spec.get("volumeLifecycleModes") or []) or NONE
    return [meta.get("name"), bool(spec.get("attachRequired", True)), bool(spec.get("podInfoOnMount")),
            bool(spec.get("storageCapacity")), tokens_cell, bool(spec.get("requiresRepublish")), modes,
            age(meta.get("creationTimestamp"), now)]


def _va_row(va: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, status = va.get("metadata") or {}, va.get("spec") or {}, va.get("status") or {}
    return [meta.get("name"), spec.get("attacher", ""), (spec.get("source") or {}).get("persistentVolumeName", ""),
            spec.get("nodeName", ""), bool(status.get("attached")), age(meta.get("creationTimestamp"), now)]


def _sts_row(s: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, status = s.get("metadata") or {}, s.get("spec") or {}, s.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [meta.get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            age(meta.get("creationTimestamp"), now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers)]


def _named(fn: Callable[[Mapping[str, Any]], Row]) -> Callable[[Mapping[str, Any], float, Callable[[Any, float], str]],
                                                                Row]:
    def row(o: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
        meta = o.get("metadata") or {}
        return [meta.get("name")] + fn(o) + [age(meta.get("creationTimestamp"), now)]
    return row


AGE = col("Age")
NAME = col("Name", fmt="name")
RowFn = Callable[[Mapping[str, Any], float, Callable[[Any, float], str]], Row]

STORAGE_COLUMNS: dict[str, tuple[list[dict[str, Any]], RowFn]] = {
    "core/persistentvolumes": ([NAME, col("Capacity"), col("Access Modes"), col("Reclaim Policy"), col("Status"),
                                col("Claim"), col("StorageClass"), col("VolumeAttributesClass"), col("Reason"),
                                AGE, col("VolumeMode", 1)], _pv_row),
    "core/persistentvolumeclaims": ([NAME, col("Status"), col("Volume"), col("Capacity"), col("Access Modes"),
                                     col("StorageClass"), col("VolumeAttributesClass"), AGE,
                                     col("VolumeMode", 1)], _pvc_row),
    "storage.k8s.io/storageclasses": ([NAME, col("Provisioner"), col("ReclaimPolicy"), col("VolumeBindingMode"),
                                       col("AllowVolumeExpansion"), AGE], _sc_row),
    "storage.k8s.io/csinodes": ([NAME, col("Drivers", type_="integer"), AGE],
                                _named(lambda o: [len((o.get("spec") or {}).get("drivers") or [])])),
    "storage.k8s.io/csidrivers": ([NAME, col("AttachRequired", type_="boolean"),
                                   col("PodInfoOnMount", type_="boolean"), col("StorageCapacity", type_="boolean"),
                                   col("TokenRequests"), col("RequiresRepublish", type_="boolean"), col("Modes"),
                                   AGE], _csidriver_row),
    "storage.k8s.io/csistoragecapacities": ([NAME, col("StorageClassName"), col("Capacity"), AGE],
                                            _named(lambda o: [o.get("storageClassName", ""),
                                                              o.get("capacity") or NONE])),
    "storage.k8s.io/volumeattachments": ([NAME, col("Attacher"), col("PV"), col("Node"),
                                          col("Attached", type_="boolean"), AGE], _va_row),
    "apps/statefulsets": ([NAME, col("Ready"), AGE, col("Containers", 1), col("Images", 1)], _sts_row),
}


def storage_printers(age: Callable[[Any, float], str]) -> dict[str, Printer]:
    """The printers, given the table module's age formatter."""
    out: dict[str, Printer] = {}
    for key, (columns, fn) in STORAGE_COLUMNS.items():
        out[key] = (columns, (lambda f: lambda o, now: f(o, now, age))(fn))
    return out
