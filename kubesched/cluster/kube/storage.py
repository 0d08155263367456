"""``KubeStorage``: the volume plugins' view of a Kubernetes API server's storage objects
(``StorageLister``), and VolumeBinding's PreBind writes to it (``StorageWriter``).

Reads come from the informers of PersistentVolumes, PersistentVolumeClaims,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments (dict
look-ups: they run inside Filter). Writes are what upstream's binder writes
(``BindPodVolumes``): a ``PUT`` of the PV with its ``claimRef`` and a ``PUT`` of the claim
with the ``volume.kubernetes.io/selected-node`` annotation, with the resourceVersion the
scheduler read, so a concurrent change makes the write fail (409) and the binding cycle
fail as upstream's does. The written object is returned decoded; the informers see it
through their watch like any other change (the plugin keeps its own assumed versions
meanwhile, as upstream's assume cache does).

:meth:`KubeStorage.wait_for` polls (upstream's 1 s ``PollUntilContextTimeout`` up to
``bindTimeoutSeconds``) until the PV controller has completed the binding; it runs in
the binding cycle's worker thread, never on the scheduling thread, and ends early when
the scheduler stops.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.storage import (
    CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
    VolumeAttachment,
)
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.errors import KubeClientError
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.resources import PVCS, PVS
from kubesched.framework.storage import StorageWriteError


class KubeStorage:
    def __init__(self, client: KubeClient, *, pvs: Informer[PersistentVolume], pvcs: Informer[PersistentVolumeClaim],
                 classes: Informer[StorageClass], csinodes: Informer[CSINode], csidrivers: Informer[CSIDriver],
                 capacities: Informer[CSIStorageCapacity], attachments: Informer[VolumeAttachment],
                 stopping: threading.Event | None = None) -> None:
        self.client = client
        self._pvs = pvs
        self._pvcs = pvcs
        self._classes = classes
        self._csinodes = csinodes
        self._csidrivers = csidrivers
        self._capacities = capacities
        self._attachments = attachments
        self.stopping = stopping if stopping is not None else threading.Event()

    # -- StorageLister ---------------------------------------------------------------------------
    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.get_namespaced(namespace, name)

    def pv(self, name: str) -> PersistentVolume | None:
        return self._pvs.get(name)

    def pvs(self) -> Sequence[PersistentVolume]:
        return self._pvs.values()

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self._csinodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._csidrivers.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return self._capacities.values()

    def volume_attachments(self) -> Sequence[VolumeAttachment]:
        return self._attachments.values()

    # -- StorageWriter ---------------------------------------------------------------------------
    def update_pv(self, raw: dict[str, Any]) -> PersistentVolume:
        name = str((raw.get("metadata") or {}).get("name") or "")
        try:
            out = self.client.request("PUT", PVS.object_path("", name), body=raw)
        except KubeClientError as exc:
            raise StorageWriteError(str(exc)) from exc
        pv: PersistentVolume = PVS.decode(out)
        return pv

    def update_pvc(self, raw: dict[str, Any]) -> PersistentVolumeClaim:
        meta = raw.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        try:
            out = self.client.request("PUT", PVCS.object_path(ns, name), body=raw)
        except KubeClientError as exc:
            raise StorageWriteError(str(exc)) from exc
        pvc: PersistentVolumeClaim = PVCS.decode(out)
        return pvc

    def wait_for(self, check: Callable[[], bool], timeout: float, interval: float = 1.0) -> bool:
        """Call ``check`` every ``interval`` seconds (first after one interval) until it is
        True (True), raises (propagated) or ``timeout`` passes or the scheduler stops (False)."""
        waited = 0.0
        while waited < timeout:
            step = min(interval, timeout - waited)
            if self.stopping.wait(step):
                return False
            waited += step
            if check():
                return True
        return False

