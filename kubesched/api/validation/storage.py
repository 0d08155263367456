"""Validation of the storage kinds, as kube-apiserver v1.34 validates them on create.

Upstream ``pkg/apis/core/validation`` (``ValidatePersistentVolume``,
``ValidatePersistentVolumeClaim``) and ``pkg/apis/storage/validation``
(``ValidateStorageClass``, ``ValidateCSINode``, ``ValidateCSIDriver``,
``ValidateCSIStorageCapacity``): the checks whose failure would change what the volume
plugins see (access modes, capacity, exactly one volume source, binding mode, limits), each
raising the first error with upstream's message and field path. Also the small decoding
helpers :mod:`kubesched.api.storage` uses (typed reads that name the field on bad input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import DecodeError, QuantityError
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.validation.field import forbidden, invalid, not_supported, required
from kubesched.api.validation.meta import (
    name_is_dns_subdomain, name_is_path_segment, string_map, validate_label_name, validate_object_meta,
)
from kubesched.api.validation.strings import is_qualified_name, qualified_name_ok

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte", "iscsi",
    "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "azureDisk",
    "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi",
)


# -- decoding helpers ---------------------------------------------------------------------
def obj_meta(raw: Mapping[str, Any], *parts: str) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
    """``metadata`` and up to two more top-level objects (``spec``, ``status``), each
    checked to be an object; absent ones are empty."""
    out = []
    for key in ("metadata", *parts):
        v = raw.get(key)
        if v is None:
            v = {}
        if not isinstance(v, Mapping):
            raise DecodeError("must be an object", field=key)
        out.append(v)
    while len(out) < 3:
        out.append({})
    return out[0], out[1], out[2]


def text(v: Any, path: str) -> str:
    if not v:
        raise required(path, "name or generateName is required" if path == "metadata.name" else "")
    if not isinstance(v, str):
        raise DecodeError(f"must be a string, got {v!r}", field=path)
    return v


def str_map(v: Any, path: str) -> dict[str, str]:
    return string_map(v, path, "ObjectMeta." + path if path.startswith("metadata.") else path)


def str_list(v: Any, path: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise DecodeError("must be a list of strings", field=path)
    return list(v)


def quantity(v: Any, path: str) -> Quantity:
    try:
        return parse_quantity(v, field=path)
    except QuantityError as exc:
        raise exc.at(field_prefix="" if exc.field else path) from None


def pv_source(spec: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The PV's volume source key and body (``("", {})`` when none is set)."""
    for key in PV_SOURCES:
        body = spec.get(key)
        if body is not None:
            if not isinstance(body, Mapping):
                raise DecodeError("must be an object", field=f"spec.{key}")
            return key, body
    return "", {}


def _obj(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise DecodeError("must be an object", field=path)
    return v


# -- validation ---------------------------------------------------------------------------
def _access_modes(spec: Mapping[str, Any], path: str) -> None:
    modes = str_list(spec.get("accessModes"), path)
    if not modes:
        raise required(path, "at least 1 access mode is required")
    for m in modes:
        if m not in ACCESS_MODES:
            raise not_supported(path, m, ACCESS_MODES)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        raise forbidden(path, "may not use ReadWriteOncePod with other access modes")


def _positive_storage(v: Any, path: str) -> None:
    q = quantity(v, path)
    if q.amount <= 0:
        raise invalid(path, str(q), "must be greater than zero")


def _volume_mode(spec: Mapping[str, Any]) -> None:
    vm = spec.get("volumeMode")
    if vm is not None and vm not in ("Block", "Filesystem"):
        raise not_supported("spec.volumeMode", vm, ("Block", "Filesystem"))


def _class_name(spec: Mapping[str, Any]) -> None:
    sc = spec.get("storageClassName")
    if sc:
        msgs = name_is_dns_subdomain(str(sc), False)
        if msgs:
            raise invalid("spec.storageClassName", sc, msgs[0])


def validate_pv(meta: Mapping[str, Any], spec: Mapping[str, Any], labels: Mapping[str, str],
                annotations: Mapping[str, str]) -> None:
    """``ValidatePersistentVolume``: name, access modes, capacity, reclaim policy, class,
    exactly one volume source, node affinity (required for local volumes)."""
    validate_object_meta(meta, labels, annotations, name_is_path_segment, namespaced=False)
    _access_modes(spec, "spec.accessModes")
    cap = _obj(spec.get("capacity"), "spec.capacity")
    if not cap:
        raise required("spec.capacity")
    for k in cap:
        if k != "storage":
            raise not_supported("spec.capacity", k, ("storage",))
    _positive_storage(cap["storage"], "spec.capacity[storage]")
    rp = spec.get("persistentVolumeReclaimPolicy")
    if rp and rp not in RECLAIM_POLICIES:
        raise not_supported("spec.persistentVolumeReclaimPolicy", rp, RECLAIM_POLICIES)
    _class_name(spec)
    _volume_mode(spec)
    sources = [k for k in PV_SOURCES if spec.get(k) is not None]
    if not sources:
        raise required("spec", "must specify a volume type")
    if len(sources) > 1:
        raise forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type")
    src = _obj(spec[sources[0]], f"spec.{sources[0]}")
    if sources[0] == "csi":
        if not src.get("driver"):
            raise required("spec.csi.driver")
        if not src.get("volumeHandle"):
            raise required("spec.csi.volumeHandle")
    if sources[0] == "local" and not src.get("path"):
        raise required("spec.local.path")
    na = _obj(spec.get("nodeAffinity"), "spec.nodeAffinity")
    if sources[0] == "local" and not na.get("required"):
        raise required("spec.nodeAffinity", "Local volume requires node affinity")
    if na:
        req = _obj(na.get("required"), "spec.nodeAffinity.required")
        if na.get("required") is not None and not req.get("nodeSelectorTerms"):
            raise required("spec.nodeAffinity.required.nodeSelectorTerms", "must have at least one node selector term")


def validate_pvc(meta: Mapping[str, Any], spec: Mapping[str, Any], labels: Mapping[str, str],
                 annotations: Mapping[str, str]) -> None:
    """``ValidatePersistentVolumeClaim``: name, then the spec (:func:`validate_pvc_spec`)."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=True)
    validate_pvc_spec(spec, "spec")


def validate_pvc_spec(spec: Mapping[str, Any], path: str) -> None:
    """``ValidatePersistentVolumeClaimSpec`` (also a generic ephemeral volume's template, as
    pod validation checks it): access modes, a positive storage request, class name,
    volume mode."""
    _access_modes(spec, f"{path}.accessModes")
    res = _obj(spec.get("resources"), f"{path}.resources")
    req = _obj(res.get("requests"), f"{path}.resources.requests")
    if req.get("storage") is None:
        raise required(f"{path}.resources[storage]")
    _positive_storage(req["storage"], f"{path}.resources[storage]")
    sc = spec.get("storageClassName")
    if sc:
        msgs = name_is_dns_subdomain(str(sc), False)
        if msgs:
            raise invalid(f"{path}.storageClassName", sc, msgs[0])
    vm = spec.get("volumeMode")
    if vm is not None and vm not in ("Block", "Filesystem"):
        raise not_supported(f"{path}.volumeMode", vm, ("Block", "Filesystem"))


def validate_storage_class(meta: Mapping[str, Any], raw: Mapping[str, Any], labels: Mapping[str, str],
                           annotations: Mapping[str, str]) -> None:
    """``ValidateStorageClass``: provisioner, reclaim policy, binding mode, allowed topologies."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=False)
    prov = raw.get("provisioner")
    if not prov:
        raise required("provisioner")
    if not isinstance(prov, str) or not qualified_name_ok(prov):
        raise invalid("provisioner", prov, is_qualified_name(str(prov))[0] if isinstance(prov, str) else "")
    rp = raw.get("reclaimPolicy")
    if rp is not None and rp not in ("Delete", "Retain"):
        raise not_supported("reclaimPolicy", rp, ("Delete", "Retain"))
    bm = raw.get("volumeBindingMode")
    if bm is not None and bm not in ("Immediate", "WaitForFirstConsumer"):
        raise not_supported("volumeBindingMode", bm, ("Immediate", "WaitForFirstConsumer"))
    terms = raw.get("allowedTopologies")
    if terms is not None and not isinstance(terms, list):
        raise DecodeError("must be a list", field="allowedTopologies")
    for i, t in enumerate(terms or []):
        path = f"allowedTopologies[{i}].matchLabelExpressions"
        exprs = _obj(t, f"allowedTopologies[{i}]").get("matchLabelExpressions")
        if not exprs:
            raise required(path, "must have at least one label selector requirement")
        if not isinstance(exprs, list):
            raise DecodeError("must be a list", field=path)
        for j, e in enumerate(exprs):
            e = _obj(e, f"{path}[{j}]")
            validate_label_name(str(e.get("key") or ""), f"{path}[{j}].key")
            if not str_list(e.get("values"), f"{path}[{j}].values"):
                raise required(f"{path}[{j}].values", "must specify as least one value")
    params = raw.get("parameters")
    if params is not None:
        string_map(params, "parameters", "StorageClass.parameters")


def validate_csi_node(meta: Mapping[str, Any], spec: Mapping[str, Any], labels: Mapping[str, str],
                      annotations: Mapping[str, str]) -> None:
    """``ValidateCSINode``: unique driver names, node IDs, topology keys, a non-negative
    ``allocatable.count``."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=False)
    drivers = spec.get("drivers")
    if drivers is not None and not isinstance(drivers, list):
        raise DecodeError("must be a list", field="spec.drivers")
    seen: set[str] = set()
    for i, d in enumerate(drivers or []):
        path = f"spec.drivers[{i}]"
        d = _obj(d, path)
        name = d.get("name")
        if not name:
            raise required(f"{path}.name")
        if name in seen:
            raise DecodeError(f'Duplicate value: "{name}"', field=f"{path}.name")
        seen.add(str(name))
        if not d.get("nodeID"):
            raise required(f"{path}.nodeID")
        for j, k in enumerate(str_list(d.get("topologyKeys"), f"{path}.topologyKeys")):
            if not k:
                raise required(f"{path}.topologyKeys[{j}]")
        count = _obj(d.get("allocatable"), f"{path}.allocatable").get("count")
        if count is not None:
            if isinstance(count, bool) or not isinstance(count, int):
                raise DecodeError(f"must be an integer, got {count!r}", field=f"{path}.allocatable.count")
            if count < 0:
                raise invalid(f"{path}.allocatable.count", count, "must be greater than or equal to 0")


def validate_csi_driver(meta: Mapping[str, Any], spec: Mapping[str, Any], labels: Mapping[str, str],
                        annotations: Mapping[str, str]) -> None:
    """``ValidateCSIDriver``: name, lifecycle modes, boolean fields."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=False)
    for key in ("attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish",
                "preventPodSchedulingIfMissing"):
        v = spec.get(key)
        if v is not None and not isinstance(v, bool):
            raise DecodeError(f"must be a boolean, got {v!r}", field=f"spec.{key}")
    for i, m in enumerate(str_list(spec.get("volumeLifecycleModes"), "spec.volumeLifecycleModes")):
        if m not in ("Persistent", "Ephemeral"):
            raise not_supported(f"spec.volumeLifecycleModes[{i}]", m, ("Persistent", "Ephemeral"))


def validate_capacity(meta: Mapping[str, Any], raw: Mapping[str, Any], labels: Mapping[str, str],
                      annotations: Mapping[str, str]) -> None:
    """``ValidateCSIStorageCapacity``: a storage class name, non-negative quantities."""
    validate_object_meta(meta, labels, annotations, name_is_dns_subdomain, namespaced=True)
    sc = raw.get("storageClassName")
    if not sc:
        raise required("storageClassName")
    for key in ("capacity", "maximumVolumeSize"):
        if raw.get(key) is not None and quantity(raw[key], key).amount < 0:
            raise invalid(key, str(raw[key]), "must be greater than or equal to 0")
