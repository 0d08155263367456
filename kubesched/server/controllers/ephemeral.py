"""The ephemeral-volume controller: a PVC for each generic ephemeral volume of a pod.

As upstream's ``pkg/controller/volume/ephemeral``: a pod volume ``V`` with an
``ephemeral.volumeClaimTemplate`` gets the claim ``<pod>-<V>`` in the pod's namespace,
with the template's labels, annotations and spec, owned by the pod (controller
reference, ``blockOwnerDeletion``) so the garbage collector deletes it with the pod. A
claim of that name that the pod does not own is left alone: a ``FailedBinding``-style
warning event says so, and the scheduler keeps the pod Pending (VolumeBinding reports
it), as upstream.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, deleting, meta, owner_reference, uid_of
from kubesched.server.controllers.events import WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj

log = logging.getLogger(__name__)


def ephemeral_claims(pod: Obj) -> list[tuple[str, dict[str, Any]]]:
    """(claim name, volumeClaimTemplate) of each generic ephemeral volume of ``pod``."""
    out = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if isinstance(v, dict) and isinstance(v.get("ephemeral"), dict):
            template = v["ephemeral"].get("volumeClaimTemplate")
            if isinstance(template, dict):
                out.append((f"{meta(pod).get('name')}-{v.get('name')}", template))
    return out


class EphemeralVolumeController(Controller[Key]):
    name = "ephemeral-volume-controller"

    def __init__(self, registry: Registry, pods: Informer, claims: Informer, recorder: EventRecorder, *,
                 workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.pods = pods
        self.claims = claims
        self.recorder = recorder
        pods.add_handler(self._on_pod)
        claims.add_handler(self._on_claim)

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and ephemeral_claims(new) and not deleting(new):
            self.queue.add((str(meta(new).get("namespace") or ""), str(meta(new).get("name"))))

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        if new is None and old is not None:  # recreate a claim deleted under a live pod
            for ref in meta(old).get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("kind") == "Pod":
                    self.queue.add((str(meta(old).get("namespace") or ""), str(ref.get("name"))))

    def sync(self, key: Key) -> None:
        pod = self.pods.get(*key)
        if pod is None or deleting(pod):
            return
        ns = key[0]
        for name, template in ephemeral_claims(pod):
            existing = self.claims.get(ns, name)
            if existing is not None:
                refs = meta(existing).get("ownerReferences") or []
                if not any(isinstance(r, dict) and r.get("uid") == uid_of(pod) for r in refs):
                    self.recorder.event(pod, WARNING, "FailedBinding",
                                        f"PVC {ns}/{name} was not created for the pod")
                continue
            tmeta = template.get("metadata") or {}
            pvc_meta: dict[str, Any] = {"name": name, "namespace": ns,
                                        "ownerReferences": [owner_reference(pod, "v1", "Pod")]}
            for k in ("labels", "annotations"):
                if tmeta.get(k):
                    pvc_meta[k] = copy.deepcopy(tmeta[k])
            pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": pvc_meta,
                   "spec": copy.deepcopy(template.get("spec") or {})}
            try:
                created = self.registry.create("persistentvolumeclaims", ns, pvc)
            except ApiError as exc:
                if exc.reason == "AlreadyExists":
                    continue
                self.recorder.event(pod, WARNING, "FailedCreate", f"creating ephemeral volume {name}: {exc.message}")
                if exc.code == 422:
                    continue
                raise
            self.expect(key, self.claims, created)
            log.info("created ephemeral volume claim %s/%s", ns, name)
