"""The PersistentVolume controller: binds claims to volumes and releases them, as
kube-controller-manager's ``pkg/controller/volume/persistentvolume`` does.

Claims (``syncClaim``), once per change of a claim, a volume or a class:

* a claim whose binding completed (``pv.kubernetes.io/bind-completed``) only has its
  phase kept right: ``Bound`` while its volume names it, ``Lost`` when the volume is gone;
* an unbound claim without ``spec.volumeName`` gets the best matching volume
  (:func:`~.volumeutil.find_best_match`; under WaitForFirstConsumer only a volume the
  scheduler pre-bound with ``claimRef`` matches). With none: a claim of a class with a
  provisioner that does not wait (or whose node was selected) is handed to the external
  provisioner (annotation ``volume.kubernetes.io/storage-provisioner``, event
  ``ExternalProvisioning``); a waiting one gets the ``WaitForFirstConsumer`` event;
* an unbound claim that names a volume is bound to it if the volume is free or already
  points at the claim.

Binding (``bind``) writes, in upstream's order: the volume's ``claimRef`` (with the
claim's uid; ``bound-by-controller`` if the controller chose it) and phase ``Bound``;
the claim's ``volumeName`` with ``bind-completed`` (and ``bound-by-controller`` if the
controller set ``volumeName``), then its status: phase ``Bound``, capacity and access
modes of the volume.

Volumes (``syncVolume``): free ones become ``Available``; one whose claim is gone (or
replaced: another uid) becomes ``Released`` and is reclaimed by its policy: ``Retain``
keeps it, ``Delete`` deletes it (the simulated cluster has no storage backend to free).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Obj
from kubesched.server.controllers.volumeutil import (
    ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER, NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, annotations_of, bound_to_claim, claim_class,
    claim_ref, find_best_match, meta, phase, spec,
)

log = logging.getLogger(__name__)

Key = tuple[str, str, str]  # ("pv", "", name) or ("pvc", namespace, name)
RESYNC = 15.0


class PersistentVolumeController(Controller[Key]):
    name = "persistentvolume-binder-controller"

    def __init__(self, registry: Registry, volumes: Informer, claims: Informer, classes: Informer,
                 recorder: EventRecorder, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.volumes = volumes
        self.claims = claims
        self.classes = classes
        self.recorder = recorder
        self._said: dict[str, str] = {}  # claim uid -> the last reason recorded (no event per resync)
        volumes.add_handler(self._on_volume)
        claims.add_handler(self._on_claim)
        classes.add_handler(self._on_class)

    # -- events -------------------------------------------------------------------------------
    def _on_volume(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(("pv", "", str(meta(obj).get("name"))))
        ref = spec(obj).get("claimRef")
        if isinstance(ref, dict) and ref.get("name"):
            self.queue.add(("pvc", str(ref.get("namespace") or ""), str(ref["name"])))
        elif new is not None and phase(new) == "Available":  # free: the claims waiting may take it
            self._on_class(None, None)

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(("pvc", str(meta(obj).get("namespace") or ""), str(meta(obj).get("name"))))
        if new is None:  # the volumes it held are released
            self._said.pop(str(meta(obj).get("uid") or ""), None)
            for pv in self.volumes.objects():
                ref = spec(pv).get("claimRef") or {}
                if ref.get("uid") and ref.get("uid") == meta(obj).get("uid"):
                    self.queue.add(("pv", "", str(meta(pv).get("name"))))

    def _on_class(self, old: Obj | None, new: Obj | None) -> None:
        for pvc in self.claims.objects():
            if not annotations_of(pvc).get(ANN_BIND_COMPLETED):
                self.queue.add(("pvc", str(meta(pvc).get("namespace") or ""), str(meta(pvc).get("name"))))

    def sync(self, key: Key) -> None:
        kind, ns, name = key
        if kind == "pv":
            pv = self.volumes.get("", name)
            if pv is not None:
                self._sync_volume(pv)
        else:
            pvc = self.claims.get(ns, name)
            if pvc is not None and not meta(pvc).get("deletionTimestamp"):
                self._sync_claim(pvc)

    # -- claims -------------------------------------------------------------------------------
    def _sync_claim(self, pvc: Obj) -> None:
        if annotations_of(pvc).get(ANN_BIND_COMPLETED):
            pv = self.volumes.get("", str(spec(pvc).get("volumeName") or ""))
            if pv is None:
                self._claim_status(pvc, "Lost", None)
                if phase(pvc) != "Lost":
                    self.recorder.event(pvc, WARNING, "ClaimLost", "Bound claim has lost reference to "
                                        "PersistentVolume. Data on the volume is lost!")
            elif bound_to_claim(pv, pvc):
                self._bind(pv, pvc)
            return
        volume_name = str(spec(pvc).get("volumeName") or "")
        if volume_name:
            pv = self.volumes.get("", volume_name)
            if pv is not None and (spec(pv).get("claimRef") is None or bound_to_claim(pv, pvc)):
                self._bind(pv, pvc)
            else:
                self._claim_status(pvc, "Pending", None)
            return
        cls = self.classes.get("", claim_class(pvc)) if claim_class(pvc) else None
        delay = cls is not None and cls.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
        best = find_best_match(pvc, self.volumes.objects(), delay_binding=delay)
        if best is not None:
            self._bind(dict(best), pvc)
            return
        selected = ANN_SELECTED_NODE in annotations_of(pvc)
        if delay and not selected:
            self._event(pvc, NORMAL, "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
        elif claim_class(pvc):
            self._provision(pvc, cls)
        else:
            self._event(pvc, NORMAL, "FailedBinding",
                        "no persistent volumes available for this claim and no storage class is set")
        self._claim_status(pvc, "Pending", None)
        # upstream resyncs every claim each --pvclaimbinder-sync-period (15 s)
        self.queue.add_after(("pvc", str(meta(pvc).get("namespace") or ""), str(meta(pvc)["name"])), RESYNC)

    def _provision(self, pvc: Obj, cls: Obj | None) -> None:
        """Hand the claim to its class's external provisioner (``provisionClaim``)."""
        if cls is None:
            self._event(pvc, WARNING, "ProvisioningFailed", f'storageclass.storage.k8s.io "{claim_class(pvc)}" not found')
            return
        provisioner = str(cls.get("provisioner") or "")
        if provisioner == NO_PROVISIONER:
            self._event(pvc, NORMAL, "FailedBinding",
                        "no persistent volumes available for this claim and no storage class is set")
            return
        ann = annotations_of(pvc)
        if ann.get(ANN_STORAGE_PROVISIONER) == provisioner:
            return
        ann[ANN_STORAGE_PROVISIONER] = ann[ANN_BETA_STORAGE_PROVISIONER] = provisioner
        new = copy.deepcopy(pvc)
        new["metadata"]["annotations"] = ann
        self.registry.update("persistentvolumeclaims", meta(pvc).get("namespace"), str(meta(pvc)["name"]), new)
        self.recorder.event(pvc, NORMAL, "ExternalProvisioning",
                            f"Waiting for a volume to be created either by the external provisioner "
                            f"'{provisioner}' or manually by the system administrator. If volume creation is "
                            "delayed, please verify that the provisioner is running and correctly registered.")

    def _event(self, pvc: Obj, type_: str, reason: str, message: str) -> None:
        """Record once per claim and reason in a row (upstream's recorder would count the
        repeats of each resync into one Event)."""
        uid = str(meta(pvc).get("uid") or "")
        if self._said.get(uid) != reason:
            self._said[uid] = reason
            self.recorder.event(pvc, type_, reason, message)

    def _bind(self, pv: Obj, pvc: Obj) -> None:
        """Volume claimRef and phase, then claim volumeName, annotations and status."""
        name, ns = str(meta(pv)["name"]), meta(pvc).get("namespace")
        ref = spec(pv).get("claimRef") or {}
        if not bound_to_claim(pv, pvc) or not ref.get("uid"):
            new = copy.deepcopy(pv)
            if not bound_to_claim(pv, pvc):
                new["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
            new["spec"]["claimRef"] = claim_ref(pvc)
            pv = self.registry.update("persistentvolumes", None, name, new)
        if phase(pv) != "Bound":
            new = copy.deepcopy(pv)
            new["status"] = {**(pv.get("status") or {}), "phase": "Bound"}
            new["status"].pop("message", None)
            new["status"].pop("reason", None)
            pv = self.registry.update("persistentvolumes", None, name, new, subresource="status")
        ann = annotations_of(pvc)
        if spec(pvc).get("volumeName") != name or ann.get(ANN_BIND_COMPLETED) != "yes":
            new = copy.deepcopy(pvc)
            if spec(pvc).get("volumeName") != name:
                new["spec"]["volumeName"] = name
                ann[ANN_BOUND_BY_CONTROLLER] = "yes"
            ann[ANN_BIND_COMPLETED] = "yes"
            new["metadata"]["annotations"] = ann
            pvc = self.registry.update("persistentvolumeclaims", ns, str(meta(pvc)["name"]), new)
        self._claim_status(pvc, "Bound", pv)

    def _claim_status(self, pvc: Obj, to: str, pv: Obj | None) -> None:
        status: dict[str, Any] = dict(pvc.get("status") or {})
        status["phase"] = to
        if pv is not None:
            status["accessModes"] = list(spec(pv).get("accessModes") or [])
            status["capacity"] = dict(spec(pv).get("capacity") or {})
        elif to == "Pending":
            status.pop("accessModes", None)
            status.pop("capacity", None)
        if status == (pvc.get("status") or {}):
            return
        new = copy.deepcopy(pvc)
        new["status"] = status
        self.registry.update("persistentvolumeclaims", meta(pvc).get("namespace"), str(meta(pvc)["name"]), new,
                             subresource="status")

    # -- volumes ------------------------------------------------------------------------------
    def _sync_volume(self, pv: Obj) -> None:
        ref = spec(pv).get("claimRef")
        if not isinstance(ref, dict):
            self._volume_phase(pv, "Available")
            return
        if not ref.get("uid"):
            self._volume_phase(pv, "Available")  # reserved for a claim: the claim's sync binds it
            return
        pvc = self.claims.get(str(ref.get("namespace") or ""), str(ref.get("name") or ""))
        if pvc is not None and meta(pvc).get("uid") != ref.get("uid"):
            pvc = None
        if pvc is None:
            if phase(pv) not in ("Released", "Failed"):
                pv = self._volume_phase(pv, "Released")
            self._reclaim(pv)
        elif spec(pvc).get("volumeName") == meta(pv).get("name"):
            self._volume_phase(pv, "Bound")
        elif not spec(pvc).get("volumeName"):
            self.queue.add(("pvc", str(meta(pvc).get("namespace")), str(meta(pvc).get("name"))))
        elif annotations_of(pv).get(ANN_BOUND_BY_CONTROLLER):  # the claim went elsewhere: unbind
            new = copy.deepcopy(pv)
            new["spec"].pop("claimRef", None)
            new["metadata"]["annotations"].pop(ANN_BOUND_BY_CONTROLLER, None)
            pv = self.registry.update("persistentvolumes", None, str(meta(pv)["name"]), new)
            self._volume_phase(pv, "Available")

    def _reclaim(self, pv: Obj) -> None:
        policy = spec(pv).get("persistentVolumeReclaimPolicy") or "Retain"
        name = str(meta(pv)["name"])
        if policy == "Delete" and not meta(pv).get("deletionTimestamp"):
            try:
                self.registry.delete("persistentvolumes", None, name, {"preconditions": {"uid": meta(pv).get("uid")}})
            except ApiError as exc:
                if exc.code not in (404, 409):
                    raise
            log.info("deleted released volume %s (reclaim policy Delete)", name)
        elif policy == "Retain" and phase(pv) == "Released":
            log.debug("volume %s released and retained", name)

    def _volume_phase(self, pv: Obj, to: str) -> Obj:
        if phase(pv) == to:
            return pv
        new = copy.deepcopy(pv)
        new["status"] = {**(pv.get("status") or {}), "phase": to}
        return self.registry.update("persistentvolumes", None, str(meta(pv)["name"]), new, subresource="status")
