"""How the volume plugins reach storage objects: a lister to read, a writer for PreBind.

Why this exists: upstream's volume plugins read PVs, PVCs, StorageClasses, CSINodes,
CSIDrivers and CSIStorageCapacities from informer listers, and VolumeBinding's PreBind
writes through the API (PV ``claimRef``, PVC ``volume.kubernetes.io/selected-node``) and
then polls until the PV controller has finished the binding. The scheduling core never
imports ``cluster/``, so these two small protocols are what the framework handle hands the
plugins; simulate's in-process cluster and serve/run's informers implement them.

``StorageLister`` methods must be cheap (dictionary reads): they run inside Filter. A
lister may also have an integer attribute ``version`` that changes whenever any of its
objects changes; NodeVolumeLimits then memoises what it read (per-node columns) until it
changes. Without it the plugins read afresh every cycle (correct, slower).
``StorageWriter.update_*`` raise :class:`StorageWriteError` when the write is refused (a
conflict, a deleted object); ``wait_for`` polls ``check`` every ``interval`` seconds (the
first call after one interval, as upstream's ``PollUntilContextTimeout(..., false, ...)``)
until it returns True (done), raises (give up with that error) or ``timeout`` passes
(returns False).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kubesched.api.storage import (
    CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass,
    VolumeAttachment,
)


class StorageWriteError(Exception):
    """A PreBind write the API refused; the message is the API's."""


class StorageLister(Protocol):
    """Read access to the storage objects (upstream's listers)."""

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...

    def pv(self, name: str) -> PersistentVolume | None: ...

    def pvs(self) -> Sequence[PersistentVolume]: ...

    def storage_class(self, name: str) -> StorageClass | None: ...

    def csi_node(self, name: str) -> CSINode | None: ...

    def csi_driver(self, name: str) -> CSIDriver | None: ...

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]: ...

    def volume_attachments(self) -> Sequence[VolumeAttachment]: ...


class StorageWriter(Protocol):
    """What VolumeBinding's PreBind writes (upstream ``BindPodVolumes``)."""

    def update_pv(self, raw: dict[str, Any]) -> PersistentVolume: ...

    def update_pvc(self, raw: dict[str, Any]) -> PersistentVolumeClaim: ...

    def wait_for(self, check: Callable[[], bool], timeout: float, interval: float = 1.0) -> bool: ...


class NoStorage:
    """A cluster without storage objects: every lookup misses, every write is refused."""

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return None

    def pv(self, name: str) -> PersistentVolume | None:
        return None

    def pvs(self) -> Sequence[PersistentVolume]:
        return ()

    def storage_class(self, name: str) -> StorageClass | None:
        return None

    def csi_node(self, name: str) -> CSINode | None:
        return None

    def csi_driver(self, name: str) -> CSIDriver | None:
        return None

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return ()

    def volume_attachments(self) -> Sequence[VolumeAttachment]:
        return ()

    def update_pv(self, raw: dict[str, Any]) -> PersistentVolume:
        raise StorageWriteError("this cluster has no storage API")

    def update_pvc(self, raw: dict[str, Any]) -> PersistentVolumeClaim:
        raise StorageWriteError("this cluster has no storage API")

    def wait_for(self, check: Callable[[], bool], timeout: float, interval: float = 1.0) -> bool:
        return check()
