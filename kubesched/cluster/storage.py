"""``InProcessStorage``: the simulator's storage objects, and the controllers a real
cluster would run on them, emulated deterministically.

It is the volume plugins' lister and VolumeBinding's PreBind writer in ``simulate``. What
happens after a write is what the fidelity corpus (../shared/fidelity-storage/README.md)
says a real cluster does, at once:

* the PV controller completes a binding: a PV whose ``claimRef`` names a claim that is not
  bound yet gets the claim's uid and phase Bound; the claim gets ``volumeName``,
  ``bind-completed`` (and ``bound-by-controller``), phase Bound, capacity and access
  modes from the PV;
* an external provisioner serves a claim annotated with ``selected-node`` whose class has
  a real provisioner: a PV ``pvc-<claim uid>`` with the claim's size, modes and class, the
  class's reclaim policy, a CSI source of the provisioner's driver and a required node
  affinity on the node's values of the driver's topology keys (from the node's CSINode;
  ``kubernetes.io/hostname`` when it has none), then bound as above.

Before a run, generic ephemeral volumes get their claims (``<pod>-<volume>``), as the
ephemeral-volume controller would have made them. Nothing else runs at the start.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubesched.api.defaults import default_object
from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY, ANN_SELECTED_NODE, NO_PROVISIONER, CSIDriver,
    CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass, StorageObject,
    VolumeAttachment,
)
from kubesched.framework.storage import StorageWriteError

HOSTNAME = "kubernetes.io/hostname"
StorageListener = Callable[[str, Any, Any], None]  # (kind, old, new)


class InProcessStorage:
    def __init__(self, node: Callable[[str], Node | None]) -> None:
        self._node = node
        self.pv_map: dict[str, PersistentVolume] = {}
        self.pvc_map: dict[str, PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: list[CSIStorageCapacity] = []
        self.attachments: list[VolumeAttachment] = []
        self.listeners: list[StorageListener] = []
        self._pv_list: list[PersistentVolume] | None = None
        self.version = 0  # bumped on every change: lets plugins memoise what they read

    # -- loading ----------------------------------------------------------------------
    def load(self, objects: Iterable[StorageObject]) -> None:
        for o in objects:
            if isinstance(o, PersistentVolume):
                self.pv_map[o.name] = o
            elif isinstance(o, PersistentVolumeClaim):
                self.pvc_map[o.key] = o
            elif isinstance(o, StorageClass):
                self.classes[o.name] = o
            elif isinstance(o, CSINode):
                self.csi_nodes[o.name] = o
            elif isinstance(o, CSIDriver):
                self.csi_drivers[o.name] = o
            elif isinstance(o, CSIStorageCapacity):
                self.capacities.append(o)
            elif isinstance(o, VolumeAttachment):
                self.attachments.append(o)
        self._pv_list = None
        self.version += 1

    def create_ephemeral_claims(self, pods: Iterable[Pod]) -> None:
        """The ephemeral-volume controller: a claim ``<pod>-<volume>`` owned by the pod for each
        generic ephemeral volume that has none yet (spec and metadata from the template)."""
        for pod in pods:
            for vol in pod.volumes:
                if not vol.is_ephemeral or f"{pod.namespace}/{vol.claim_name}" in self.pvc_map:
                    continue
                tmpl = dict(vol.ephemeral_template or {})
                meta = dict(tmpl.get("metadata") or {})
                meta.update(name=vol.claim_name, namespace=pod.namespace, ownerReferences=[{
                    "apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                    "controller": True, "blockOwnerDeletion": True}])
                raw = default_object({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                                      "spec": copy.deepcopy(tmpl.get("spec") or {})}, {})
                pvc = PersistentVolumeClaim.from_dict(raw)
                self.pvc_map[pvc.key] = pvc

    # -- StorageLister ------------------------------------------------------------------
    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvc_map.get(f"{namespace}/{name}")

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pv_map.get(name)

    def pvs(self) -> Sequence[PersistentVolume]:
        if self._pv_list is None:
            self._pv_list = list(self.pv_map.values())
        return self._pv_list

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return self.capacities

    def volume_attachments(self) -> Sequence[VolumeAttachment]:
        return self.attachments

    # -- StorageWriter -------------------------------------------------------------------
    def update_pv(self, raw: dict[str, Any]) -> PersistentVolume:
        new = PersistentVolume.from_dict(raw)
        if new.name not in self.pv_map:
            raise StorageWriteError(f'persistentvolumes "{new.name}" not found')
        self._put_pv(new)
        if new.claim_ref is not None:
            self._complete_binding(new)
        return new

    def update_pvc(self, raw: dict[str, Any]) -> PersistentVolumeClaim:
        new = PersistentVolumeClaim.from_dict(raw)
        if new.key not in self.pvc_map:
            raise StorageWriteError(f'persistentvolumeclaims "{new.name}" not found')
        self._put_pvc(new)
        node_name = new.annotations.get(ANN_SELECTED_NODE)
        if node_name and not new.volume_name:
            self._provision(new, node_name)
        return new

    def wait_for(self, check: Callable[[], bool], timeout: float, interval: float = 1.0) -> bool:
        """The emulated controllers have already acted: one check decides (nothing else
        would change while upstream polls)."""
        return check()

    # -- emulated controllers ------------------------------------------------------------
    def _put_pv(self, pv: PersistentVolume) -> None:
        old = self.pv_map.get(pv.name)
        self.pv_map[pv.name] = pv
        self._pv_list = None
        self.version += 1
        for fn in self.listeners:
            fn("PersistentVolume", old, pv)

    def _put_pvc(self, pvc: PersistentVolumeClaim) -> None:
        old = self.pvc_map.get(pvc.key)
        self.pvc_map[pvc.key] = pvc
        self.version += 1
        for fn in self.listeners:
            fn("PersistentVolumeClaim", old, pvc)

    def _complete_binding(self, pv: PersistentVolume) -> None:
        """PV controller: finish binding ``pv`` to the claim its claimRef names."""
        ref = pv.claim_ref
        assert ref is not None
        pvc = self.pvc_map.get(ref.key)
        if pvc is None or (pvc.volume_name and ANN_BIND_COMPLETED in pvc.annotations):
            return
        raw = copy.deepcopy(pv.raw)
        raw["spec"]["claimRef"]["uid"] = pvc.uid
        raw.setdefault("status", {})["phase"] = "Bound"
        self._put_pv(PersistentVolume.from_dict(raw))
        craw = copy.deepcopy(pvc.raw)
        ann = craw.setdefault("metadata", {}).setdefault("annotations", {})
        ann[ANN_BIND_COMPLETED] = "yes"
        if not pvc.volume_name:
            ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        craw.setdefault("spec", {})["volumeName"] = pv.name
        status = craw.setdefault("status", {})
        status["phase"] = "Bound"
        status["accessModes"] = list(pv.access_modes)
        cap = (pv.raw.get("spec") or {}).get("capacity")
        if cap:
            status["capacity"] = dict(cap)
        self._put_pvc(PersistentVolumeClaim.from_dict(craw))

    def _provision(self, pvc: PersistentVolumeClaim, node_name: str) -> None:
        """External provisioner: a PV for the claim, on the selected node's topology."""
        sc = self.classes.get(pvc.class_name)
        node = self._node(node_name)
        if sc is None or not sc.provisioner or sc.provisioner == NO_PROVISIONER or node is None:
            return
        name = f"pvc-{pvc.uid}"
        if name in self.pv_map:
            return
        drv = self.csi_nodes[node_name].driver(sc.provisioner) if node_name in self.csi_nodes else None
        keys = drv.topology_keys if drv is not None and drv.topology_keys else ()
        exprs = [{"key": k, "operator": "In", "values": [node.labels[k]]} for k in keys if k in node.labels]
        if not keys:
            exprs = [{"key": HOSTNAME, "operator": "In", "values": [node_name]}]
        spec: dict[str, Any] = {
            "capacity": {"storage": str((pvc.raw["spec"].get("resources") or {}).get("requests", {}).get("storage"))},
            "accessModes": list(pvc.access_modes), "volumeMode": pvc.volume_mode,
            "storageClassName": pvc.class_name, "persistentVolumeReclaimPolicy": sc.reclaim_policy,
            "csi": {"driver": sc.provisioner, "volumeHandle": name},
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": pvc.namespace,
                         "name": pvc.name, "uid": pvc.uid},
        }
        if exprs:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
        raw = default_object({"apiVersion": "v1", "kind": "PersistentVolume",
                              "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: sc.provisioner}},
                              "spec": spec, "status": {"phase": "Pending"}}, {})
        pv = PersistentVolume.from_dict(raw)
        self._put_pv(pv)
        self._complete_binding(pv)

    # -- report ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The ``objects`` key of simulate's JSON: the final PVs and PVCs."""
        pvs: dict[str, Any] = {}
        for pv in sorted(self.pv_map.values(), key=lambda p: p.name):
            d: dict[str, Any] = {"phase": pv.phase}
            if pv.claim_ref is not None:
                d["claimRef"] = pv.claim_ref.key
            na = ((pv.raw.get("spec") or {}).get("nodeAffinity") or {}).get("required")
            if na is not None:
                d["nodeAffinity"] = na
            prov = pv.annotations.get(ANN_PROVISIONED_BY)
            if prov is not None:
                d["provisionedBy"] = prov
                d["capacity"] = str(pv.capacity) if pv.capacity is not None else None
            pvs[pv.name] = d
        pvcs: dict[str, Any] = {}
        for pvc in sorted(self.pvc_map.values(), key=lambda c: c.key):
            c: dict[str, Any] = {"phase": pvc.phase, "volumeName": pvc.volume_name}
            if ANN_SELECTED_NODE in pvc.annotations:
                c["selectedNode"] = pvc.annotations[ANN_SELECTED_NODE]
            pvcs[pvc.key] = c
        return {"persistentVolumeClaims": pvcs, "persistentVolumes": pvs}
