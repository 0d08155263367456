"""The storage and DRA objects of a recording's replay (:mod:`.recorded`): which recorded
changes of them are applied, and how.

Applied: objects that appear and go (a StatefulSet's new PVC, a claim the resourceclaim
controller made from a template, a driver's new ResourceSlice, a new StorageClass) and the
changes of the objects nobody writes because of a binding (StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, DeviceClass, ResourceSlice, ResourceClaimTemplate). Not applied: updates
of PersistentVolumes, PersistentVolumeClaims, VolumeAttachments and ResourceClaims, which in
a live cluster are the binding's own consequences (the volume binding, the allocation): the
replay makes its own, from its own decisions, with the in-process PV controller and DRA
allocation; the recorded ones would overwrite them with the recorded scheduler's.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.dra import DRA_KINDS, parse_dra_object
from kubesched.api.storage import (
    STORAGE_KINDS, CSIDriver, CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass, decode_storage,
)
from kubesched.framework.events import ActionType, Resource
from kubesched.sim.driver import Simulation
from kubesched.sim.recording.reader import Event

BINDING_WRITES = ("PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "ResourceClaim")


def applies(ev: Event) -> bool:
    """Whether :func:`apply` handles ``ev`` (a storage or DRA kind, not a binding's write)."""
    if ev.kind not in STORAGE_KINDS and ev.kind not in DRA_KINDS:
        return False
    return not (ev.op == "update" and ev.kind in BINDING_WRITES)


def apply(sim: Simulation, ev: Event, raw: dict[str, Any]) -> None:
    """Apply ``ev`` (``raw``: its object, defaulted; {} for a delete) and tell the queue."""
    old, new = _storage(sim, ev, raw) if ev.kind in STORAGE_KINDS else _dra(sim, ev, raw)
    resource = Resource.__members__.get(ev.kind)  # the cluster event the queue's hints know it by
    if resource is None or (old is None and new is None):
        return
    action = ActionType.Delete if new is None else ActionType.Add if old is None else ActionType.Update
    sim.handlers.on_object_event(resource, action, old, new)


def _keyed(ev: Event) -> str:
    return f"{ev.namespace}/{ev.name}" if ev.namespace else ev.name


def _storage(sim: Simulation, ev: Event, raw: dict[str, Any]) -> tuple[Any, Any]:
    st = sim.storage
    new = decode_storage(raw, validate=False) if raw else None
    maps: dict[type, dict[str, Any]] = {PersistentVolume: st.pv_map, PersistentVolumeClaim: st.pvc_map,
                                        StorageClass: st.classes, CSINode: st.csi_nodes, CSIDriver: st.csi_drivers}
    lists: dict[str, list[Any]] = {"CSIStorageCapacity": st.capacities, "VolumeAttachment": st.attachments}
    old: Any = None
    if ev.kind in lists:
        items = lists[ev.kind]
        same = [o for o in items if (getattr(o, "namespace", ""), o.name) == (ev.namespace, ev.name)]
        old = same[0] if same else None
        items[:] = [o for o in items if o not in same]
        if new is not None:
            items.append(new)
    else:
        cls = {"PersistentVolume": PersistentVolume, "PersistentVolumeClaim": PersistentVolumeClaim,
               "StorageClass": StorageClass, "CSINode": CSINode, "CSIDriver": CSIDriver}[ev.kind]
        table = maps[cls]
        key = _keyed(ev) if ev.kind == "PersistentVolumeClaim" else ev.name
        old = table.pop(key, None)
        if new is not None:
            table[key] = new
    st._pv_list = None
    st.version += 1
    return old, new


def _dra(sim: Simulation, ev: Event, raw: dict[str, Any]) -> tuple[Any, Any]:
    dra = sim.dra
    new = parse_dra_object(raw) if raw else None
    tables: dict[str, dict[Any, Any]] = {"DeviceClass": dra.classes, "ResourceSlice": dra.slices,
                                         "ResourceClaim": dra.claims, "ResourceClaimTemplate": dra.templates}
    table = tables[ev.kind]
    key: Any = (ev.namespace, ev.name) if ev.kind in ("ResourceClaim", "ResourceClaimTemplate") else ev.name
    old = table.pop(key, None)
    if new is not None:
        table[key] = new
    dra._changed(slices=ev.kind == "ResourceSlice")
    return old, new
