"""Storage objects the volume plugins read: PersistentVolume, PersistentVolumeClaim,
StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment.

Why this exists: upstream's VolumeBinding, VolumeZone, VolumeRestrictions and
NodeVolumeLimits decide from these objects (through listers), so kubesched needs them
typed, defaulted and validated as kube-apiserver v1.34 would have them. Each class has
``from_dict(raw)`` (decode + validate + read the scheduling fields; ``raw`` is kept, with
the API server's defaults applied by :func:`apply_storage_defaults`, for round trips) and
is immutable: a change (a PV bound to a claim) is a new object built from a new ``raw``
(:meth:`PersistentVolume.from_dict` again), as an informer delivers a new version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.quantity import Quantity
from kubesched.api.selectors import LabelSelector, NodeSelector
from kubesched.api.validation.storage import (
    ACCESS_MODES, pv_source, quantity, str_list, str_map, text, validate_csi_driver, validate_csi_node,
    validate_capacity, validate_pv, validate_pvc, validate_storage_class, obj_meta,
)

# Annotations and names shared with controllers (upstream pkg/controller/volume/persistentvolume/util).
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT = "WaitForFirstConsumer"
STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment")
STORAGE = "storage"


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolume:
    """A PV. ``source`` is the volume source key (``csi``, ``local``, ``awsElasticBlockStore``,
    ...); ``csi_driver``/``volume_handle`` are set for CSI PVs, ``disk_id`` for in-tree disks."""

    raw: dict[str, Any]
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    capacity: Quantity | None  # spec.capacity.storage
    access_modes: tuple[str, ...]
    storage_class_name: str
    volume_mode: str  # Filesystem | Block
    reclaim_policy: str
    node_affinity: NodeSelector | None  # spec.nodeAffinity.required
    claim_ref: ClaimRef | None
    phase: str
    source: str
    csi_driver: str = ""
    volume_handle: str = ""
    disk_id: str = ""
    deletion_timestamp: str | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "PersistentVolume":
        meta, spec, status = obj_meta(raw, "spec", "status")
        name = text(meta.get("name"), "metadata.name")
        labels = str_map(meta.get("labels"), "metadata.labels")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        if validate:
            validate_pv(meta, spec, labels, annotations)
        cap = (spec.get("capacity") or {}).get("storage")
        na = (spec.get("nodeAffinity") or {}).get("required")
        cr = spec.get("claimRef")
        claim = None
        if isinstance(cr, Mapping):
            claim = ClaimRef(str(cr.get("namespace") or ""), str(cr.get("name") or ""), str(cr.get("uid") or ""))
        source, body = pv_source(spec)
        csi = source == "csi"
        ident = {"awsElasticBlockStore": "volumeID", "gcePersistentDisk": "pdName", "azureDisk": "diskName",
                 "cinder": "volumeID", "portworxVolume": "volumeID"}.get(source, "")
        return cls(raw=raw, name=name, uid=str(meta.get("uid") or ""), labels=labels, annotations=annotations,
                   capacity=None if cap is None else quantity(cap, "spec.capacity.storage"),
                   access_modes=tuple(str_list(spec.get("accessModes"), "spec.accessModes")),
                   storage_class_name=str(spec.get("storageClassName") or ""),
                   volume_mode=str(spec.get("volumeMode") or "Filesystem"),
                   reclaim_policy=str(spec.get("persistentVolumeReclaimPolicy") or "Retain"),
                   node_affinity=None if na is None else NodeSelector.parse(na, "spec.nodeAffinity.required"),
                   claim_ref=claim, phase=str(status.get("phase") or "Pending"), source=source,
                   csi_driver=str(body.get("driver") or "") if csi else "",
                   volume_handle=str(body.get("volumeHandle") or "") if csi else "",
                   disk_id=str(body.get(ident) or "") if ident else "",
                   deletion_timestamp=meta.get("deletionTimestamp"))


@dataclass(frozen=True, slots=True, eq=False)
class PersistentVolumeClaim:
    """A PVC. ``storage_class_name`` is None when the field is unset (then the default class
    applies at admission; the binder reads an unset class as "")."""

    raw: dict[str, Any]
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    access_modes: tuple[str, ...]
    request: Quantity | None  # spec.resources.requests.storage
    storage_class_name: str | None
    volume_name: str
    volume_mode: str
    selector: LabelSelector | None
    phase: str
    capacity: Quantity | None  # status.capacity.storage
    deletion_timestamp: str | None = None
    controller_uid: str = ""  # uid of the controlling owner reference (an ephemeral claim's pod)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def class_name(self) -> str:
        """``storagehelpers.GetPersistentVolumeClaimClass``: the field, else the beta annotation."""
        if self.storage_class_name is not None:
            return self.storage_class_name
        return self.annotations.get("volume.beta.kubernetes.io/storage-class", "")

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "PersistentVolumeClaim":
        meta, spec, status = obj_meta(raw, "spec", "status")
        name = text(meta.get("name"), "metadata.name")
        labels = str_map(meta.get("labels"), "metadata.labels")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        if validate:
            validate_pvc(meta, spec, labels, annotations)
        req = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        cap = (status.get("capacity") or {}).get("storage")
        sc = spec.get("storageClassName")
        sel = spec.get("selector")
        owners = meta.get("ownerReferences") or []
        return cls(raw=raw, namespace=str(meta.get("namespace") or "default"), name=name,
                   uid=str(meta.get("uid") or ""), labels=labels, annotations=annotations,
                   access_modes=tuple(str_list(spec.get("accessModes"), "spec.accessModes")),
                   request=None if req is None else quantity(req, "spec.resources.requests.storage"),
                   storage_class_name=None if sc is None else str(sc),
                   volume_name=str(spec.get("volumeName") or ""),
                   volume_mode=str(spec.get("volumeMode") or "Filesystem"),
                   selector=None if sel is None else LabelSelector.parse(sel, "spec.selector"),
                   phase=str(status.get("phase") or "Pending"),
                   capacity=None if cap is None else quantity(cap, "status.capacity.storage"),
                   deletion_timestamp=meta.get("deletionTimestamp"),
                   controller_uid=next((str(o.get("uid") or "") for o in owners
                                        if isinstance(o, Mapping) and o.get("controller")), ""))


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One ``allowedTopologies`` term: every key's value must be among its values."""

    requirements: tuple[tuple[str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) in vals for k, vals in self.requirements)


@dataclass(frozen=True, slots=True, eq=False)
class StorageClass:
    raw: dict[str, Any]
    name: str
    provisioner: str
    volume_binding_mode: str  # Immediate | WaitForFirstConsumer
    reclaim_policy: str  # Delete | Retain
    allowed_topologies: tuple[TopologySelectorTerm, ...]
    parameters: dict[str, str]
    annotations: dict[str, str]

    @property
    def is_default(self) -> bool:
        return (self.annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
                or self.annotations.get("storageclass.beta.kubernetes.io/is-default-class") == "true")

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "StorageClass":
        meta, _, _ = obj_meta(raw)
        name = text(meta.get("name"), "metadata.name")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        if validate:
            validate_storage_class(meta, raw, str_map(meta.get("labels"), "metadata.labels"), annotations)
        terms = []
        for t in raw.get("allowedTopologies") or []:
            terms.append(TopologySelectorTerm(tuple(
                (str(e.get("key")), frozenset(str(v) for v in e.get("values") or []))
                for e in t.get("matchLabelExpressions") or [])))
        return cls(raw=raw, name=name, provisioner=str(raw.get("provisioner") or ""),
                   volume_binding_mode=str(raw.get("volumeBindingMode") or BINDING_IMMEDIATE),
                   reclaim_policy=str(raw.get("reclaimPolicy") or "Delete"), allowed_topologies=tuple(terms),
                   parameters=str_map(raw.get("parameters"), "parameters"), annotations=annotations)


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    topology_keys: tuple[str, ...]
    allocatable_count: int | None  # allocatable.count: the node's volume limit for this driver


@dataclass(frozen=True, slots=True, eq=False)
class CSINode:
    raw: dict[str, Any]
    name: str
    drivers: tuple[CSINodeDriver, ...]
    annotations: dict[str, str]

    def driver(self, name: str) -> CSINodeDriver | None:
        for d in self.drivers:
            if d.name == name:
                return d
        return None

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "CSINode":
        meta, spec, _ = obj_meta(raw, "spec")
        name = text(meta.get("name"), "metadata.name")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        if validate:
            validate_csi_node(meta, spec, str_map(meta.get("labels"), "metadata.labels"), annotations)
        drivers = []
        for d in spec.get("drivers") or []:
            count = (d.get("allocatable") or {}).get("count")
            drivers.append(CSINodeDriver(str(d.get("name") or ""), str(d.get("nodeID") or ""),
                                         tuple(str(k) for k in d.get("topologyKeys") or ()), count))
        return cls(raw=raw, name=name, drivers=tuple(drivers), annotations=annotations)


@dataclass(frozen=True, slots=True, eq=False)
class CSIDriver:
    raw: dict[str, Any]
    name: str
    attach_required: bool  # defaults to true
    storage_capacity: bool  # defaults to false
    pod_info_on_mount: bool
    volume_lifecycle_modes: tuple[str, ...]
    # VolumeLimitScaling: pods using the driver do not go to nodes whose CSINode lacks it
    prevent_pod_scheduling_if_missing: bool = False

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "CSIDriver":
        meta, spec, _ = obj_meta(raw, "spec")
        name = text(meta.get("name"), "metadata.name")
        if validate:
            validate_csi_driver(meta, spec, str_map(meta.get("labels"), "metadata.labels"),
                                str_map(meta.get("annotations"), "metadata.annotations"))
        ar = spec.get("attachRequired")
        return cls(raw=raw, name=name, attach_required=True if ar is None else bool(ar),
                   storage_capacity=bool(spec.get("storageCapacity")),
                   pod_info_on_mount=bool(spec.get("podInfoOnMount")),
                   volume_lifecycle_modes=tuple(str_list(spec.get("volumeLifecycleModes") or ["Persistent"],
                                                         "spec.volumeLifecycleModes")),
                   prevent_pod_scheduling_if_missing=spec.get("preventPodSchedulingIfMissing") is True)


@dataclass(frozen=True, slots=True, eq=False)
class CSIStorageCapacity:
    raw: dict[str, Any]
    namespace: str
    name: str
    storage_class_name: str
    node_topology: LabelSelector | None  # None: no node can use it
    capacity: Quantity | None
    maximum_volume_size: Quantity | None

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "CSIStorageCapacity":
        meta, _, _ = obj_meta(raw)
        name = text(meta.get("name"), "metadata.name")
        if validate:
            validate_capacity(meta, raw, str_map(meta.get("labels"), "metadata.labels"),
                              str_map(meta.get("annotations"), "metadata.annotations"))
        topo = raw.get("nodeTopology")
        cap, mvs = raw.get("capacity"), raw.get("maximumVolumeSize")
        return cls(raw=raw, namespace=str(meta.get("namespace") or "default"), name=name,
                   storage_class_name=str(raw.get("storageClassName") or ""),
                   node_topology=None if topo is None else LabelSelector.parse(topo, "nodeTopology"),
                   capacity=None if cap is None else quantity(cap, "capacity"),
                   maximum_volume_size=None if mvs is None else quantity(mvs, "maximumVolumeSize"))


@dataclass(frozen=True, slots=True, eq=False)
class VolumeAttachment:
    raw: dict[str, Any]
    name: str
    attacher: str
    node_name: str
    pv_name: str  # spec.source.persistentVolumeName ("" for an inline volume)
    attached: bool

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "VolumeAttachment":
        meta, spec, status = obj_meta(raw, "spec", "status")
        name = text(meta.get("name"), "metadata.name")
        if validate:
            for key in ("attacher", "nodeName"):
                if not spec.get(key):
                    raise DecodeError("Required value", field=f"spec.{key}")
        src = spec.get("source") or {}
        if not isinstance(src, Mapping):
            raise DecodeError("must be an object", field="spec.source")
        return cls(raw=raw, name=name, attacher=str(spec.get("attacher") or ""),
                   node_name=str(spec.get("nodeName") or ""), pv_name=str(src.get("persistentVolumeName") or ""),
                   attached=bool(status.get("attached")))


def apply_storage_defaults(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The API server's defaulting for the storage kinds (core/v1 and storage/v1
    ``SetDefaults_*``): PV reclaim policy Retain, volumeMode Filesystem, phase Pending;
    PVC volumeMode Filesystem, phase Pending; StorageClass reclaimPolicy Delete and
    volumeBindingMode Immediate; CSIDriver attachRequired true, podInfoOnMount and
    storageCapacity false, requiresRepublish false, fsGroupPolicy ReadWriteOnceWithFSType,
    volumeLifecycleModes [Persistent]. Metadata (namespace, uid) is the caller's."""
    kind = raw.get("kind")
    out = dict(raw)
    if kind == "PersistentVolume":
        spec = dict(_obj(raw.get("spec"), "spec"))
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        out["spec"] = spec
        status = dict(_obj(raw.get("status"), "status"))
        status.setdefault("phase", "Pending")
        out["status"] = status
    elif kind == "PersistentVolumeClaim":
        meta = dict(_obj(raw.get("metadata"), "metadata"))
        if not meta.get("uid") and meta.get("name"):
            # deterministic, as the storage corpus names it: provisioned PVs are pvc-<uid>
            meta["uid"] = f"uid-{meta.get('namespace') or 'default'}-{meta['name']}"
            out["metadata"] = meta
        spec = dict(_obj(raw.get("spec"), "spec"))
        spec.setdefault("volumeMode", "Filesystem")
        out["spec"] = spec
        status = dict(_obj(raw.get("status"), "status"))
        status.setdefault("phase", "Pending")
        out["status"] = status
    elif kind == "StorageClass":
        out.setdefault("reclaimPolicy", "Delete")
        out.setdefault("volumeBindingMode", BINDING_IMMEDIATE)
    elif kind == "CSIDriver":
        spec = dict(_obj(raw.get("spec"), "spec"))
        for key, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                           ("requiresRepublish", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
                           ("volumeLifecycleModes", ["Persistent"])):
            spec.setdefault(key, value)
        out["spec"] = spec
    return out


def _obj(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DecodeError("must be an object", field=path)
    return obj


StorageObject = (PersistentVolume | PersistentVolumeClaim | StorageClass | CSINode | CSIDriver | CSIStorageCapacity
                 | VolumeAttachment)


def decode_storage(raw: dict[str, Any], *, validate: bool = True) -> StorageObject:
    """Decode a storage object of any of :data:`STORAGE_KINDS` by its ``kind``."""
    cls = {"PersistentVolume": PersistentVolume, "PersistentVolumeClaim": PersistentVolumeClaim,
           "StorageClass": StorageClass, "CSINode": CSINode, "CSIDriver": CSIDriver,
           "CSIStorageCapacity": CSIStorageCapacity, "VolumeAttachment": VolumeAttachment}.get(str(raw.get("kind")))
    if cls is None:
        raise DecodeError(f"not a storage kind: {raw.get('kind')!r}", field="kind")
    obj: StorageObject = cls.from_dict(raw, validate=validate)  # type: ignore[attr-defined]
    return obj


__all__ = [
    "ACCESS_MODES", "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_PROVISIONED_BY", "ANN_SELECTED_NODE",
    "BINDING_IMMEDIATE", "BINDING_WAIT", "CSIDriver", "CSINode", "CSINodeDriver", "CSIStorageCapacity", "ClaimRef",
    "NO_PROVISIONER", "PersistentVolume", "PersistentVolumeClaim", "STORAGE_KINDS", "StorageClass", "StorageObject",
    "TopologySelectorTerm", "VolumeAttachment", "apply_storage_defaults", "decode_storage",
]
