"""The PV and PVC views VolumeBinding decides on: the listers' objects, overlaid with what
this scheduler assumed at Reserve and has not seen come back from the API yet.

Why this exists: upstream's ``AssumeCache`` lets the next pod see a PV as already bound
(``claimRef`` set) or a PVC as already annotated for provisioning as soon as the previous
pod was reserved, before the API writes of its binding cycle land. An assumed object stays
visible until the lister holds a different version of the object (the API's answer, or
anybody else's change), or until it is restored (Unreserve, a failed write).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.framework.storage import StorageLister

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


def _version(obj: PersistentVolume | PersistentVolumeClaim) -> str:
    meta = obj.raw.get("metadata") or {}
    return str(meta.get("resourceVersion") or "")


def newer_than(a: PersistentVolume | PersistentVolumeClaim, b: PersistentVolume | PersistentVolumeClaim) -> bool:
    """True when ``a`` has a larger resourceVersion than ``b`` (both set and numeric), as
    upstream's ``CompareResourceVersion(a, b) > 0``."""
    va, vb = _version(a), _version(b)
    return va.isdigit() and vb.isdigit() and int(va) > int(vb)


class _Overlay(Generic[T]):
    def __init__(self) -> None:
        self.assumed: dict[str, tuple[T | None, T]] = {}  # key -> (lister's object then, assumed)

    def view(self, key: str, current: T | None) -> T | None:
        entry = self.assumed.get(key)
        if entry is None:
            return current
        base, assumed = entry
        if current is base or (current is not None and base is not None and _version(current)
                               and _version(current) == _version(base)):
            return assumed
        del self.assumed[key]  # the lister moved on: the API's object wins
        return current

    def assume(self, key: str, current: T | None, obj: T) -> None:
        self.assumed[key] = (current, obj)

    def restore(self, key: str) -> None:
        self.assumed.pop(key, None)


class AssumeCache:
    """PV and PVC reads for VolumeBinding, with Reserve's assumptions on top."""

    def __init__(self, lister: StorageLister) -> None:
        self.lister = lister
        self._pvs: _Overlay[PersistentVolume] = _Overlay()
        self._pvcs: _Overlay[PersistentVolumeClaim] = _Overlay()

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self._pvs.view(name, self.lister.pv(name))

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.view(f"{namespace}/{name}", self.lister.pvc(namespace, name))

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        """``ListPVs``: the PVs of one class (assumed versions where there are)."""
        out = []
        for pv in self.lister.pvs():
            view = self._pvs.view(pv.name, pv) if self._pvs.assumed else pv
            if view is not None and view.storage_class_name == storage_class:
                out.append(view)
        return out

    def assume_pv(self, pv: PersistentVolume) -> None:
        self._pvs.assume(pv.name, self.lister.pv(pv.name), pv)

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._pvcs.assume(pvc.key, self.lister.pvc(pvc.namespace, pvc.name), pvc)

    def restore_pvs(self, names: Sequence[str]) -> None:
        for n in names:
            self._pvs.restore(n)

    def restore_pvcs(self, keys: Sequence[str]) -> None:
        for k in keys:
            self._pvcs.restore(k)
