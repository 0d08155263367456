"""A pod's volumes, as the volume plugins read them (core/v1 ``Volume``).

Why this exists: four scheduler plugins look at ``pod.spec.volumes`` — VolumeBinding and
VolumeZone at claims (``persistentVolumeClaim`` and generic ``ephemeral``, whose claim is
named ``<pod>-<volume>``), VolumeRestrictions at the in-tree disks that conflict between
pods (GCE PD, AWS EBS, iSCSI, RBD), NodeVolumeLimits at everything that attaches to a node
(claims, inline CSI volumes, in-tree disks migrated to CSI). :class:`Volume` keeps exactly
those fields, decoded once when the pod is; ``source`` names the one volume source set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.validation.storage import validate_pvc_spec

# The volume sources of core/v1 VolumeSource, as the API names them (validation allows one).
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
    "image",
)


@dataclass(frozen=True, slots=True)
class Volume:
    """One entry of ``spec.volumes``. ``claim_name`` is set for a PVC volume and for a
    generic ephemeral one (``<pod>-<volume>``, the ephemeral-volume controller's name);
    ``disk_id`` is the in-tree disk's identity (EBS volumeID, GCE pdName, Azure diskName,
    Cinder volumeID, iSCSI IQN, RBD image) and ``csi_driver`` an inline CSI driver."""

    name: str
    source: str  # one of VOLUME_SOURCES ("" when none is set)
    claim_name: str = ""
    read_only: bool = False
    ephemeral_template: Mapping[str, Any] | None = None  # the volumeClaimTemplate
    csi_driver: str = ""
    csi_volume_handle: str = ""
    disk_id: str = ""
    # iSCSI target portal / RBD monitors and pool: what else identifies the disk
    portal: str = ""
    lun: int = 0
    monitors: tuple[str, ...] = ()
    pool: str = ""

    @property
    def is_pvc(self) -> bool:
        return self.source == "persistentVolumeClaim"

    @property
    def is_ephemeral(self) -> bool:
        return self.source == "ephemeral"

    @classmethod
    def parse(cls, obj: Any, path: str, pod_name: str) -> "Volume":
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        name = obj.get("name")
        if name is not None and not isinstance(name, str):
            raise DecodeError(f"must be a string, got {name!r}", field=f"{path}.name")
        name = name or ""
        sources = [k for k in VOLUME_SOURCES if obj.get(k) is not None]
        source = sources[0] if sources else ""
        body = obj.get(source) if source else None
        if body is not None and not isinstance(body, Mapping):
            raise DecodeError("must be an object", field=f"{path}.{source}")
        b: Mapping[str, Any] = body or {}
        ro = bool(b.get("readOnly"))
        if source == "persistentVolumeClaim":
            claim = b.get("claimName")
            if claim is not None and not isinstance(claim, str):
                raise DecodeError(f"must be a string, got {claim!r}", field=f"{path}.{source}.claimName")
            return cls(name, source, claim_name=claim or "", read_only=ro)
        if source == "ephemeral":
            tmpl = b.get("volumeClaimTemplate")
            if tmpl is not None and not isinstance(tmpl, Mapping):
                raise DecodeError("must be an object", field=f"{path}.ephemeral.volumeClaimTemplate")
            return cls(name, source, claim_name=f"{pod_name}-{name}", ephemeral_template=tmpl)
        if source == "csi":
            return cls(name, source, read_only=ro, csi_driver=str(b.get("driver") or ""))
        ident = {"awsElasticBlockStore": "volumeID", "gcePersistentDisk": "pdName",
                 "azureDisk": "diskName", "cinder": "volumeID", "iscsi": "iqn", "rbd": "image",
                 "vsphereVolume": "volumePath", "portworxVolume": "volumeID"}.get(source)
        if ident is None:
            return cls(name, source, read_only=ro)
        lun = b.get("lun", 0)
        monitors = b.get("monitors") or []
        return cls(name, source, read_only=ro, disk_id=str(b.get(ident) or ""),
                   portal=str(b.get("targetPortal") or ""),
                   lun=lun if isinstance(lun, int) and not isinstance(lun, bool) else 0,
                   monitors=tuple(str(m) for m in monitors) if isinstance(monitors, list) else (),
                   pool=str(b.get("pool") or "rbd") if source == "rbd" else "")


def parse_volumes(raw: Any, pod_name: str) -> tuple[Volume, ...]:
    """``spec.volumes`` of a pod (validated by the pod's validation beforehand)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DecodeError("must be a list", field="spec.volumes")
    return tuple(Volume.parse(v, f"spec.volumes[{i}]", pod_name) for i, v in enumerate(raw))


def validate_volumes(raw: Any) -> None:
    """The parts of ``ValidateVolumes`` the scheduler depends on: unique names, exactly one
    source, a claim name for PVC volumes, a claim template for ephemeral ones."""
    if not isinstance(raw, list):
        return
    seen: set[str] = set()
    for i, v in enumerate(raw):
        path = f"spec.volumes[{i}]"
        if not isinstance(v, Mapping):
            raise DecodeError("must be an object", field=path)
        name = v.get("name")
        if not name:
            raise DecodeError("Required value", field=f"{path}.name")
        if name in seen:
            raise DecodeError(f'Duplicate value: "{name}"', field=f"{path}.name")
        seen.add(str(name))
        sources = [k for k in VOLUME_SOURCES if v.get(k) is not None]
        if not sources:
            raise DecodeError("Required value: must specify a volume type", field=path)
        if len(sources) > 1:
            raise DecodeError("Forbidden: may not specify more than 1 volume type", field=f"{path}.{sources[1]}")
        if sources[0] == "persistentVolumeClaim":
            pvc = v["persistentVolumeClaim"]
            if not isinstance(pvc, Mapping) or not pvc.get("claimName"):
                raise DecodeError("Required value", field=f"{path}.persistentVolumeClaim.claimName")
        if sources[0] == "ephemeral":
            eph = v["ephemeral"]
            if not isinstance(eph, Mapping) or eph.get("volumeClaimTemplate") is None:
                raise DecodeError("Required value", field=f"{path}.ephemeral.volumeClaimTemplate")
            tmpl = eph["volumeClaimTemplate"]
            if not isinstance(tmpl, Mapping):
                raise DecodeError("must be an object", field=f"{path}.ephemeral.volumeClaimTemplate")
            spec = tmpl.get("spec")
            if not isinstance(spec, Mapping):
                raise DecodeError("Required value", field=f"{path}.ephemeral.volumeClaimTemplate.spec")
            validate_pvc_spec(spec, f"{path}.ephemeral.volumeClaimTemplate.spec")
