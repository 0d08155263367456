"""Storage objects: core/v1 PersistentVolumes and PersistentVolumeClaims, and the
storage.k8s.io/v1 kinds (StorageClass, CSINode, CSIDriver, CSIStorageCapacity,
VolumeAttachment) — upstream's defaulting and the validation that matters to scheduling.

Defaulting is upstream's ``pkg/apis/core/v1/defaults.go`` and ``pkg/apis/storage/v1/
defaults.go``: a PV's reclaim policy is ``Retain`` and its volume mode ``Filesystem``; a
claim's volume mode is ``Filesystem``; a StorageClass binds ``Immediate`` and reclaims
``Delete``; a CSIDriver requires attachment, has no storage capacity tracking and serves
``Persistent`` volumes. The registry strategies (``pkg/registry/core/persistentvolume``
and ``.../persistentvolumeclaim``) start a new object at phase ``Pending`` and stamp a
PV's ``lastPhaseTransitionTime`` whenever its phase changes.

Validation keeps what a controller or the scheduler would choke on out of the store, with
upstream's field paths and messages: a PV needs a capacity, access modes and exactly one
volume source; a claim needs access modes and a storage request, and its spec is
immutable once created except ``resources.requests`` and the first ``volumeName``; a
StorageClass needs a provisioner, and its provisioner, parameters, reclaim policy and
binding mode never change. New PVs and claims get the in-use protection finalizers
(``kubernetes.io/pv-protection``, ``kubernetes.io/pvc-protection``) as the
StorageObjectInUseProtection admission plugin adds them; the protection controller
(:mod:`kubesched.server.controllers.protection`) removes them once the object is free.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import (
    CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
    VolumeAttachment,
)
from kubesched.server.apiserver.strategies.base import Context, StatusStrategy, Strategy, spec_of
from kubesched.server.apiserver.strategies.validation import Cause, decode_cause, forbidden, invalid, required

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
PV_RECLAIM = ("Delete", "Recycle", "Retain")
SC_RECLAIM = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
VOLUME_MODES = ("Block", "Filesystem")
PV_PHASES = ("Available", "Bound", "Failed", "Pending", "Released")
# the PV sources of core/v1 PersistentVolumeSpec: exactly one must be set
PV_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi",
              "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte",
              "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi")


def typed(cls: Any, obj: dict[str, Any], causes: list[Cause]) -> list[Cause]:
    """``causes``, or if there are none, what the scheduler's own decoder (the one the
    informers and ``simulate`` use) finds wrong: what is stored is what it can read."""
    if causes:
        return causes
    try:
        cls.from_dict(obj)
    except DecodeError as exc:
        return [decode_cause(exc, obj)]
    return []


def unsupported(field: str, value: Any, supported: tuple[str, ...]) -> Cause:
    quoted = ", ".join(f'"{s}"' for s in supported)
    return ("FieldValueNotSupported", field, f'Unsupported value: "{value}": supported values: {quoted}')


def _quantity(field: str, value: Any, causes: list[Cause]) -> None:
    try:
        parse_quantity(value)
    except DecodeError:
        causes.append(invalid(field, value, "quantities must match the regular expression "
                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))


def _access_modes(spec: dict[str, Any], causes: list[Cause], *, message: str = "") -> None:
    modes = spec.get("accessModes")
    if not isinstance(modes, list) or not modes:
        causes.append(("FieldValueRequired", "spec.accessModes",
                       f"Required value: {message}" if message else "Required value"))
        return
    for m in modes:
        if m not in ACCESS_MODES:
            causes.append(unsupported("spec.accessModes", m, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        causes.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))


def _volume_mode(spec: dict[str, Any], causes: list[Cause]) -> None:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        causes.append(unsupported("spec.volumeMode", mode, VOLUME_MODES))


def protect(obj: dict[str, Any], finalizer: str) -> None:
    """The StorageObjectInUseProtection admission plugin: the in-use protection finalizer."""
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if isinstance(finalizers, list) and finalizer not in finalizers:
        finalizers.append(finalizer)


class PersistentVolumeStrategy(StatusStrategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        protect(obj, "kubernetes.io/pv-protection")
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
            spec.setdefault("volumeMode", "Filesystem")
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": ctx.timestamp()}

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        status = obj.get("status")
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        causes: list[Cause] = []
        _access_modes(spec, causes)
        cap = spec.get("capacity")
        if not isinstance(cap, dict) or not cap:
            causes.append(required("spec.capacity"))
        else:
            if "storage" not in cap or len(cap) > 1:
                causes.append(("FieldValueNotSupported", "spec.capacity",
                               f'Unsupported value: {sorted(cap)}: supported values: "storage"'))
            for k, v in cap.items():
                _quantity(f"spec.capacity[{k}]", v, causes)
        sources = [s for s in PV_SOURCES if spec.get(s) is not None]
        if not sources:
            causes.append(("FieldValueRequired", "spec", "Required value: must specify a volume type"))
        elif len(sources) > 1:
            causes.append(forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy not in PV_RECLAIM:
            causes.append(unsupported("spec.persistentVolumeReclaimPolicy", policy, PV_RECLAIM))
        _volume_mode(spec, causes)
        if spec.get("local") is not None and not spec.get("nodeAffinity"):
            causes.append(required("spec.nodeAffinity"))
        phase = (status or {}).get("phase") if isinstance(status, dict) else None
        if phase is not None and phase not in PV_PHASES:
            causes.append(unsupported("status.phase", phase, PV_PHASES))
        return typed(PersistentVolume, obj, causes)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        # the one place an update sees the time: a new phase is stamped (upstream's
        # strategy does it in PrepareForUpdate of the status subresource)
        status = new.get("status")
        if isinstance(status, dict) and status.get("phase") != (old.get("status") or {}).get("phase"):
            status["lastPhaseTransitionTime"] = ctx.timestamp()
        causes: list[Cause] = []
        for key in ("volumeMode", "nodeAffinity"):
            if spec_of(old).get(key) is not None and spec_of(new).get(key) != spec_of(old).get(key):
                causes.append(invalid(f"spec.{key}", spec_of(new).get(key), "field is immutable"))
        sources = [s for s in PV_SOURCES if spec_of(old).get(s) is not None]
        for s in sources:
            if spec_of(new).get(s) != spec_of(old).get(s):
                causes.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is "
                                        "immutable after creation"))
                break
        return causes


class PersistentVolumeClaimStrategy(StatusStrategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        protect(obj, "kubernetes.io/pvc-protection")
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
        obj["status"] = {"phase": "Pending"}

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return typed(PersistentVolumeClaim, obj, validate_claim_spec(obj.get("spec"), "spec"))

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        a, b = copy.deepcopy(spec_of(new)), copy.deepcopy(spec_of(old))
        if not b.get("volumeName"):  # the first volumeName is the binding: allowed once
            a.pop("volumeName", None)
            b.pop("volumeName", None)
        for s in (a, b):
            (s.get("resources") or {}).pop("requests", None)
            s.pop("volumeAttributesClassName", None)
        if a != b:
            return [forbidden("spec", "spec is immutable after creation except resources.requests and "
                              "volumeAttributesClassName for bound claims")]
        return []


def validate_claim_spec(spec: Any, path: str) -> list[Cause]:
    """A claim's spec (also a StatefulSet's volumeClaimTemplates and an ephemeral volume's)."""
    if not isinstance(spec, dict):
        return [required(path)]
    causes: list[Cause] = []
    _access_modes(spec, causes, message="at least 1 access mode is required")
    requests = (spec.get("resources") or {}).get("requests") if isinstance(spec.get("resources"), dict) else None
    if not isinstance(requests, dict) or "storage" not in requests:
        causes.append(("FieldValueRequired", f"{path}.resources[storage]", "Required value"))
    else:
        for k, v in requests.items():
            _quantity(f"{path}.resources.requests[{k}]", v, causes)
    _volume_mode(spec, causes)
    return [(r, f.replace("spec.", f"{path}.", 1) if path != "spec" else f, m) for r, f, m in causes]


class StorageClassStrategy(Strategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        if not obj.get("provisioner"):
            causes.append(required("provisioner"))
        if obj.get("reclaimPolicy") not in SC_RECLAIM:
            causes.append(unsupported("reclaimPolicy", obj.get("reclaimPolicy"), SC_RECLAIM))
        if obj.get("volumeBindingMode") not in BINDING_MODES:
            causes.append(unsupported("volumeBindingMode", obj.get("volumeBindingMode"), BINDING_MODES))
        topo = obj.get("allowedTopologies")
        if topo is not None and not isinstance(topo, list):
            causes.append(invalid("allowedTopologies", topo, "must be a list"))
        for i, term in enumerate(topo or [] if isinstance(topo, list) else []):
            for j, e in enumerate((term or {}).get("matchLabelExpressions") or []):
                if not isinstance(e, dict) or not e.get("key"):
                    causes.append(required(f"allowedTopologies[{i}].matchLabelExpressions[{j}].key"))
                elif not e.get("values"):
                    causes.append(("FieldValueRequired",
                                   f"allowedTopologies[{i}].matchLabelExpressions[{j}].values",
                                   "Required value: must specify as least one value for key"))
        return typed(StorageClass, obj, causes)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        for key in ("parameters", "provisioner", "reclaimPolicy"):
            if new.get(key) != old.get(key):
                causes.append(forbidden(key, f"updates to {key} are forbidden."))
        if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
            causes.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
        return causes


class CSIDriverStrategy(Strategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return typed(CSIDriver, obj, [])

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("attachRequired", True)
        spec.setdefault("podInfoOnMount", False)
        spec.setdefault("storageCapacity", False)
        spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
        spec.setdefault("volumeLifecycleModes", ["Persistent"])
        spec.setdefault("requiresRepublish", False)
        spec.setdefault("seLinuxMount", False)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        for key in ("attachRequired", "podInfoOnMount", "volumeLifecycleModes"):
            if spec_of(new).get(key) != spec_of(old).get(key):
                return [invalid(f"spec.{key}", spec_of(new).get(key), "field is immutable")]
        return []


class CSINodeStrategy(Strategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        drivers = spec_of(obj).get("drivers")
        if not isinstance(drivers, list):
            return [required("spec.drivers")]
        causes: list[Cause] = []
        seen: set[str] = set()
        for i, d in enumerate(drivers):
            name = (d or {}).get("name") if isinstance(d, dict) else None
            if not name:
                causes.append(required(f"spec.drivers[{i}].name"))
            elif name in seen:
                causes.append(("FieldValueDuplicate", f"spec.drivers[{i}].name", f'Duplicate value: "{name}"'))
            else:
                seen.add(name)
            if isinstance(d, dict) and not d.get("nodeID"):
                causes.append(required(f"spec.drivers[{i}].nodeID"))
            count = ((d or {}).get("allocatable") or {}).get("count") if isinstance(d, dict) else None
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
                causes.append(invalid(f"spec.drivers[{i}].allocatable.count", count,
                                      "must be greater than or equal to 0"))
        return typed(CSINode, obj, causes)


class CSIStorageCapacityStrategy(Strategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        if not obj.get("storageClassName"):
            causes.append(required("storageClassName"))
        for key in ("capacity", "maximumVolumeSize"):
            if obj.get(key) is not None:
                _quantity(key, obj[key], causes)
        return typed(CSIStorageCapacity, obj, causes)


class VolumeAttachmentStrategy(StatusStrategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        spec = spec_of(obj)
        causes: list[Cause] = []
        for key in ("attacher", "nodeName"):
            if not spec.get(key):
                causes.append(required(f"spec.{key}"))
        src = spec.get("source")
        if not isinstance(src, dict) or (src.get("persistentVolumeName") is None) == \
                (src.get("inlineVolumeSpec") is None):
            causes.append(("FieldValueRequired", "spec.source",
                           "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
        return typed(VolumeAttachment, obj, causes)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        if spec_of(new) != spec_of(old):
            return [invalid("spec", spec_of(new), "field is immutable")]
        return []


STORAGE_STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "persistentvolumes"): PersistentVolumeStrategy(),
    ("", "persistentvolumeclaims"): PersistentVolumeClaimStrategy(),
    ("storage.k8s.io", "storageclasses"): StorageClassStrategy(),
    ("storage.k8s.io", "csidrivers"): CSIDriverStrategy(),
    ("storage.k8s.io", "csinodes"): CSINodeStrategy(),
    ("storage.k8s.io", "csistoragecapacities"): CSIStorageCapacityStrategy(),
    ("storage.k8s.io", "volumeattachments"): VolumeAttachmentStrategy(),
}
