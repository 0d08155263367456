"""Storage object in-use protection: a claim a pod uses, and a bound volume, outlive a
``kubectl delete`` until they are free, as upstream's ``pvc-protection`` and
``pv-protection`` controllers (``pkg/controller/volume/pvcprotection``, ``pvprotection``)
with the ``StorageObjectInUseProtection`` admission plugin that adds the finalizers
(done by the API server's strategies: :mod:`kubesched.server.apiserver.strategies.storage`).

* a claim being deleted keeps ``kubernetes.io/pvc-protection`` while a scheduled pod that
  has not finished uses it (a ``persistentVolumeClaim`` volume naming it, or the pod's own
  generic ephemeral volume); the finalizer is removed, and the claim is gone, once none does;
* a volume being deleted keeps ``kubernetes.io/pv-protection`` while it is ``Bound``.
"""

from __future__ import annotations

import copy
import logging

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, deleting, meta, pod_terminal
from kubesched.server.controllers.informer import Informer, Obj

log = logging.getLogger(__name__)

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"


def claims_used_by(pod: Obj) -> set[str]:
    """The claim names a pod uses if it is scheduled and has not finished (``podUsesPVC``)."""
    if not (pod.get("spec") or {}).get("nodeName") or pod_terminal(pod):
        return set()
    return claim_names(pod)


def claim_names(pod: Obj) -> set[str]:
    out = set()
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(v, dict):
            continue
        if isinstance(v.get("persistentVolumeClaim"), dict):
            out.add(str(v["persistentVolumeClaim"].get("claimName")))
        elif isinstance(v.get("ephemeral"), dict):
            out.add(f"{meta(pod).get('name')}-{v.get('name')}")
    return out


class ProtectionController(Controller[tuple[str, str, str]]):
    """Keys: ``("pvc", namespace, name)`` and ``("pv", "", name)``."""

    name = "storage-protection-controller"

    def __init__(self, registry: Registry, pvcs: Informer, pvs: Informer, pods: Informer) -> None:
        super().__init__(1)
        self.registry = registry
        self.pvcs = pvcs
        self.pvs = pvs
        self.pods = pods
        pvcs.add_handler(self._on_pvc)
        pvs.add_handler(self._on_pv)
        pods.add_handler(self._on_pod)

    def _on_pvc(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and deleting(new):
            self.queue.add(("pvc", str(meta(new).get("namespace") or ""), str(meta(new).get("name"))))

    def _on_pv(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and deleting(new):
            self.queue.add(("pv", "", str(meta(new).get("name"))))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            if pod is not None:
                ns = str(meta(pod).get("namespace") or "")
                for name in claim_names(pod):
                    self.queue.add(("pvc", ns, name))

    def sync(self, key: tuple[str, str, str]) -> None:
        kind, ns, name = key
        if kind == "pvc":
            pvc = self.pvcs.get(ns, name)
            if pvc is None or not deleting(pvc) or PVC_PROTECTION not in (meta(pvc).get("finalizers") or []):
                return
            if any(name in claims_used_by(p) for p in self.pods.by_index("namespace", ns)):
                return
            if self._used_live(ns, name):
                return
            self._drop(pvc, "persistentvolumeclaims", PVC_PROTECTION)
        else:
            pv = self.pvs.get("", name)
            if pv is None or not deleting(pv) or PV_PROTECTION not in (meta(pv).get("finalizers") or []):
                return
            if (pv.get("status") or {}).get("phase") == "Bound":
                return
            self._drop(pv, "persistentvolumes", PV_PROTECTION)

    def _used_live(self, ns: str, name: str) -> bool:
        """The informer may not have seen a pod created just before the claim's deletion:
        as upstream's controller (``askAPIServer`` in ``pvc_protection_controller.go``),
        the claim is released only when a live list of the namespace's pods agrees."""
        items = self.registry.list("pods", ns).get("items") or []
        return any(name in claims_used_by(p) for p in items if isinstance(p, dict))

    def _drop(self, obj: Obj, resource: str, finalizer: str) -> None:
        new = copy.deepcopy(obj)
        new["metadata"]["finalizers"] = [f for f in meta(obj).get("finalizers") or [] if f != finalizer]
        self.registry.update(resource, meta(obj).get("namespace"), str(meta(obj)["name"]), new)
        log.info("removed %s from %s %s", finalizer, resource, meta(obj).get("name"))
