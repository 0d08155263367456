"""The StatefulSet controller: pods with stable names and their own claims, in order.

As upstream's ``pkg/controller/statefulset`` (``stateful_set_control.go``,
``stateful_set_utils.go``):

* replica ``i`` is the pod ``<set>-<i>`` with the template's labels plus
  ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
  ``controller-revision-hash``, ``hostname`` = its name, ``subdomain`` = the set's
  ``serviceName``, and a controller reference to the set;
* each ``volumeClaimTemplates`` entry ``T`` gives replica ``i`` the claim ``T-<set>-<i>``
  (the template's labels plus the selector's ``matchLabels``), created before the pod if
  absent and reused if present; the pod's volume ``T`` points at it;
* ``OrderedReady`` (the default): pods are created one at a time in ordinal order, each
  only once the ones before it are Running and Ready; scaling down deletes the highest
  ordinal first, one at a time, only while the others are healthy. ``Parallel``: all at
  once. A pod that failed or succeeded is deleted and recreated under the same name;
* claims are never deleted (upstream's default ``persistentVolumeClaimRetentionPolicy``:
  ``Retain`` on scale-down and on deletion); deleting the set leaves its pods to the
  garbage collector and its claims in place;
* status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
  observedGeneration, currentRevision/updateRevision.

Not simulated: rolling updates of the template (new pods get the current template;
running pods are not replaced), ControllerRevision objects, orphan adoption, the
``Delete`` retention policies (claims are kept whatever the policy says).
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, controller_ref, deleting, key_of, meta, owner_key, pod_ready, pod_terminal, uid_of,
)
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.history import History
from kubesched.server.controllers.naming import template_hash
from kubesched.server.controllers.podmaking import REVISION_LABEL, STS_KIND, statefulset_claim, statefulset_pod

log = logging.getLogger(__name__)



def ordinal_of(set_name: str, pod: Obj) -> int | None:
    name = str(meta(pod).get("name") or "")
    prefix, _, suffix = name.rpartition("-")
    return int(suffix) if prefix == set_name and suffix.isdigit() else None


def running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and pod_ready(pod)


class StatefulSetController(Controller[Key]):
    name = "statefulset-controller"

    def __init__(self, registry: Registry, sets: Informer, pods: Informer, claims: Informer,
                 recorder: EventRecorder, *, workers: int = 1, history: History | None = None) -> None:
        super().__init__(workers)
        self.registry = registry
        self.sets = sets
        self.pods = pods
        self.claims = claims
        self.recorder = recorder
        self.history = history
        sets.add_handler(self._on_set)
        pods.add_handler(self._on_pod)

    def _on_set(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(key_of(obj))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            key = owner_key(pod, STS_KIND)
            if key is not None:
                self.queue.add(key)

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        sts = self.sets.get(*key)
        if sts is None:
            return
        name = key[1]
        pods: dict[int, Obj] = {}
        for pod in self.pods.by_index("namespace", key[0]):
            ref = controller_ref(pod)
            ordinal = ordinal_of(name, pod)
            if ref is not None and ref.get("uid") == uid_of(sts) and ordinal is not None:
                pods[ordinal] = pod
        if not deleting(sts):
            self._manage(key, sts, pods)
        self._update_status(key, sts, pods)

    def _manage(self, key: Key, sts: Obj, pods: dict[int, Obj]) -> None:
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas") or 0)
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        for i in range(replicas):
            pod = pods.get(i)
            if pod is not None and pod_terminal(pod) and not deleting(pod):
                self._delete(key, sts, pod)  # recreated under the same name once it is gone
                if ordered:
                    return
                continue
            if pod is None:
                if not self._create(key, sts, i) or ordered:
                    return
                continue
            if ordered and (deleting(pod) or not running_and_ready(pod)):
                return  # wait for it before the next ordinal
        condemned = sorted((i for i in pods if i >= replicas), reverse=True)
        for i in condemned:
            pod = pods[i]
            if deleting(pod):
                if ordered:
                    return
                continue
            if ordered and any(not running_and_ready(p) for j, p in pods.items() if j != i and j < replicas):
                return
            self._delete(key, sts, pod)
            if ordered:
                return

    def _create(self, key: Key, sts: Obj, ordinal: int) -> bool:
        ns, set_name = key
        for template in (sts.get("spec") or {}).get("volumeClaimTemplates") or []:
            if not self._ensure_claim(sts, f"{set_name}-{ordinal}", statefulset_claim(sts, template, ordinal)):
                return False
        pod = statefulset_pod(sts, ordinal)
        pod_name = f"{set_name}-{ordinal}"
        try:
            created = self.registry.create("pods", ns, pod)
        except ApiError as exc:
            if exc.reason == "AlreadyExists":  # the old pod is still terminating
                return False
            self.recorder.event(sts, WARNING, "FailedCreate", f"create Pod {pod_name} in StatefulSet {set_name} "
                                                              f"failed error: {exc.message}")
            raise
        self.expect(key, self.pods, created)
        self.recorder.event(sts, NORMAL, "SuccessfulCreate",
                            f"create Pod {pod_name} in StatefulSet {set_name} successful")
        return True

    def _ensure_claim(self, sts: Obj, pod_name: str, claim: Obj) -> bool:
        ns = str(meta(sts).get("namespace") or "")
        name = str(meta(claim).get("name"))
        existing = self.claims.get(ns, name)
        if existing is not None:
            if deleting(existing):
                self.recorder.event(sts, WARNING, "FailedCreate", f"pvc {name} is being deleted")
                return False
            return True
        try:
            self.registry.create("persistentvolumeclaims", ns, claim)
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                self.recorder.event(sts, WARNING, "FailedCreate", f"create Claim {name} for StatefulSet "
                                                                  f"{meta(sts).get('name')} failed error: {exc.message}")
                raise
        else:
            self.recorder.event(sts, NORMAL, "SuccessfulCreate",
                                f"create Claim {name} Pod {pod_name} in StatefulSet "
                                f"{meta(sts).get('name')} success")
        return True

    def _delete(self, key: Key, sts: Obj, pod: Obj) -> None:
        m = meta(pod)
        try:
            out, _ = self.registry.delete("pods", m.get("namespace"), str(m.get("name")),
                                          {"preconditions": {"uid": m.get("uid")}})
        except ApiError as exc:
            if exc.code in (404, 409):
                return
            raise
        self.expect(key, self.pods, out)
        self.recorder.event(sts, NORMAL, "SuccessfulDelete",
                            f"delete Pod {m.get('name')} in StatefulSet {key[1]} successful")

    # -- status -------------------------------------------------------------------------------
    def _update_status(self, key: Key, sts: Obj, pods: dict[int, Obj]) -> None:
        spec = sts.get("spec") or {}
        revision = f"{key[1]}-{template_hash(spec.get('template'))}"
        live = [p for p in pods.values() if not pod_terminal(p)]
        if self.history is not None and not deleting(sts):  # the revision named as the pods' label
            hashes = {str((meta(p).get("labels") or {}).get(REVISION_LABEL, "")).removeprefix(f"{key[1]}-")
                      for p in live}
            self.history.sync(sts, "apps/v1", "StatefulSet", spec.get("template") or {},
                              template_hash(spec.get("template")), hashes)
        current = sum(1 for p in live if (meta(p).get("labels") or {}).get(REVISION_LABEL) == revision)
        ready = sum(1 for p in live if running_and_ready(p) and not deleting(p))
        old = sts.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": meta(sts).get("generation", 1), "replicas": len(live),
            "readyReplicas": ready, "currentReplicas": current, "updatedReplicas": current,
            "availableReplicas": ready, "currentRevision": revision, "updateRevision": revision,
            "collisionCount": int(old.get("collisionCount") or 0)}
        if status == old:
            return
        new = dict(sts)
        new["status"] = status
        out = self.registry.update("statefulsets.apps", key[0], key[1], new, subresource="status")
        self.expect(key, self.sets, out)
