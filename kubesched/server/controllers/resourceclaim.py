"""The resourceclaim controller: ResourceClaims from templates for pods, and claims released
when their pods are done.

As upstream's ``pkg/controller/resourceclaim`` (kube-controller-manager):

* A pod claim ``C`` naming a ResourceClaimTemplate gets a ResourceClaim with
  ``generateName: <pod>-<C>-`` (the base shortened to 57 characters as upstream does),
  the template's labels, annotations and spec, the annotation
  ``resource.kubernetes.io/pod-claim-name: C`` and the pod as controlling owner (so the
  garbage collector deletes it with the pod). The pod's
  ``status.resourceClaimStatuses`` then names it, which is what the scheduler's
  DynamicResources PreEnqueue waits for. A claim the pod already owns for ``C`` is reused,
  so a lost status write never creates a second claim. Nothing is created for a pod that
  is done (terminal, or deleted before it was scheduled).
* A claim's ``status.reservedFor`` keeps only pods that still exist with the same uid
  and are not done. A claim reserved for nobody any more is deallocated
  (``status.allocation`` removed, as for structured parameters) and loses the
  ``resource.kubernetes.io/delete-protection`` finalizer the scheduler put on it (so
  does an unallocated claim being deleted; an unallocated live one keeps it: the
  scheduler's PreBind adds it just before it writes the allocation). A claim
  generated for a pod that is done (or gone, or replaced) and reserved for nobody is
  deleted, rather than waiting for the pod's deletion.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kubesched.api.dra import API_VERSION, FINALIZER, POD_CLAIM_NAME_ANNOTATION
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, controller_ref, deleting, meta, owner_reference, pod_terminal, uid_of, update_with_retry,
)
from kubesched.server.controllers.events import WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Obj

log = logging.getLogger(__name__)

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
MAX_BASE_LEN = 57  # upstream: leaves room for the 5-character random suffix and "-"
Key = tuple[str, str, str]  # ("pod" | "claim", namespace, name)


def generate_name_base(pod_name: str, claim_name: str) -> str:
    """``<pod>-<claim>-``, shortened as upstream does: the first and last 28 characters."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > MAX_BASE_LEN:
        base = base[:MAX_BASE_LEN // 2] + base[len(base) - MAX_BASE_LEN // 2:]
    return base


def template_claims(pod: Obj) -> list[tuple[str, str]]:
    """(pod claim name, template name) of each template claim of ``pod``."""
    out = []
    for c in (pod.get("spec") or {}).get("resourceClaims") or []:
        if isinstance(c, dict) and c.get("resourceClaimTemplateName"):
            out.append((str(c.get("name")), str(c["resourceClaimTemplateName"])))
    return out


def claim_names(pod: Obj) -> list[str]:
    """The ResourceClaims a pod uses: direct names and those recorded in its status (the
    scheduler's claim for extended resources in ``extendedResourceClaimStatus`` too)."""
    names = [str(c["resourceClaimName"]) for c in (pod.get("spec") or {}).get("resourceClaims") or []
             if isinstance(c, dict) and c.get("resourceClaimName")]
    status = pod.get("status") or {}
    names += [str(s["resourceClaimName"]) for s in status.get("resourceClaimStatuses") or []
              if isinstance(s, dict) and s.get("resourceClaimName")]
    ext = status.get("extendedResourceClaimStatus")
    if isinstance(ext, dict) and ext.get("resourceClaimName"):
        names.append(str(ext["resourceClaimName"]))
    return names


def pod_done(pod: Obj) -> bool:
    """Upstream ``isPodDone``: terminal, or being deleted without ever having been scheduled."""
    return pod_terminal(pod) or (deleting(pod) and not (pod.get("spec") or {}).get("nodeName"))


class ResourceClaimController(Controller[Key]):
    name = "resource-claim-controller"

    def __init__(self, registry: Registry, pods: Informer, claims: Informer, templates: Informer,
                 recorder: EventRecorder, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.pods = pods
        self.claims = claims
        self.templates = templates
        self.recorder = recorder
        pods.add_handler(self._on_pod)
        claims.add_handler(self._on_claim)
        templates.add_handler(self._on_template)

    # -- events ----------------------------------------------------------------------------------
    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new if new is not None else old
        if pod is None:
            return
        ns = str(meta(pod).get("namespace") or "")
        if new is not None and template_claims(new) and not pod_done(new):
            self.queue.add(("pod", ns, str(meta(new).get("name"))))
        if new is None or pod_done(new):  # release what it had reserved
            for name in claim_names(pod):
                self.queue.add(("claim", ns, name))

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        claim = new if new is not None else old
        if claim is None:
            return
        ns, name = str(meta(claim).get("namespace") or ""), str(meta(claim).get("name"))
        if new is not None:
            self.queue.add(("claim", ns, name))
        else:  # a generated claim deleted under a live pod: make a new one
            ref = controller_ref(claim)
            if ref is not None and ref.get("kind") == "Pod":
                self.queue.add(("pod", ns, str(ref.get("name"))))

    def _on_template(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        ns, name = str(meta(new).get("namespace") or ""), str(meta(new).get("name"))
        for pod in self.pods.objects(ns):
            if any(t == name for _, t in template_claims(pod)) and not pod_done(pod):
                self.queue.add(("pod", ns, str(meta(pod).get("name"))))

    def sync(self, key: Key) -> None:
        kind, ns, name = key
        if kind == "pod":
            self._sync_pod(ns, name)
        else:
            self._sync_claim(ns, name)

    # -- pods: claims from templates -------------------------------------------------------------
    def _sync_pod(self, ns: str, name: str) -> None:
        pod = self.pods.get(ns, name)
        if pod is None or pod_done(pod):
            return
        recorded = {str(s.get("name")): s.get("resourceClaimName")
                    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or [] if isinstance(s, dict)}
        statuses: list[dict[str, Any]] = []
        changed = False
        for pod_claim, template_name in template_claims(pod):
            claim_name = recorded.get(pod_claim)
            if claim_name and self.claims.get(ns, str(claim_name)) is not None:
                statuses.append({"name": pod_claim, "resourceClaimName": claim_name})
                continue
            existing = self._owned_claim(pod, pod_claim)
            if existing is None:
                existing = self._create(pod, pod_claim, template_name)
                if existing is None:
                    continue
            statuses.append({"name": pod_claim, "resourceClaimName": meta(existing)["name"]})
            changed = True
        if changed:
            self._record_statuses(pod, statuses)

    def _owned_claim(self, pod: Obj, pod_claim: str) -> Obj | None:
        for c in self.claims.objects(str(meta(pod).get("namespace") or "")):
            ref = controller_ref(c)
            if ref is not None and ref.get("uid") == uid_of(pod) and \
                    (meta(c).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == pod_claim:
                return c
        return None

    def _create(self, pod: Obj, pod_claim: str, template_name: str) -> Obj | None:
        ns = str(meta(pod).get("namespace") or "")
        template = self.templates.get(ns, template_name)
        if template is None:
            self.recorder.event(pod, WARNING, "FindPodClaimTemplate",
                                f'PodResourceClaim {pod_claim}: resource claim template "{template_name}": '
                                f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found')
            return None
        tspec = template.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        claim_meta: dict[str, Any] = {
            "generateName": generate_name_base(str(meta(pod).get("name")), pod_claim), "namespace": ns,
            "ownerReferences": [owner_reference(pod, "v1", "Pod")],
            "annotations": {**copy.deepcopy(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim}}
        if tmeta.get("labels"):
            claim_meta["labels"] = copy.deepcopy(tmeta["labels"])
        body = {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": claim_meta,
                "spec": copy.deepcopy(tspec.get("spec") or {})}
        try:
            created = self.registry.create(CLAIMS, ns, body)
        except ApiError as exc:
            self.recorder.event(pod, WARNING, "FailedCreate",
                                f"PodResourceClaim {pod_claim}: create ResourceClaim: {exc.message}")
            if exc.code == 422:
                return None
            raise
        self.expect(("pod", ns, str(meta(pod).get("name"))), self.claims, created)
        log.info("created ResourceClaim %s/%s for pod %s", ns, meta(created)["name"], meta(pod).get("name"))
        return created

    def _record_statuses(self, pod: Obj, statuses: list[dict[str, Any]]) -> None:
        ns, name = str(meta(pod).get("namespace") or ""), str(meta(pod).get("name"))

        def mutate(cur: Obj) -> Obj | None:
            if uid_of(cur) != uid_of(pod):
                return None
            status = cur.setdefault("status", {})
            keep = [s for s in status.get("resourceClaimStatuses") or []
                    if isinstance(s, dict) and s.get("name") not in {x["name"] for x in statuses}]
            merged = keep + statuses
            if status.get("resourceClaimStatuses") == merged:
                return None
            status["resourceClaimStatuses"] = merged
            return cur

        update_with_retry(lambda: self.registry.get("pods", ns, name), mutate,
                          lambda o: self.registry.update("pods", ns, name, o, subresource="status"))

    # -- claims: reservations, deallocation, deletion ----------------------------------------------
    def _sync_claim(self, ns: str, name: str) -> None:
        claim = self.claims.get(ns, name)
        if claim is None:
            return
        status = claim.get("status") or {}
        reserved = [r for r in status.get("reservedFor") or [] if isinstance(r, dict)]
        valid = [r for r in reserved if self._still_needed(ns, r)]
        deallocated = not valid and status.get("allocation") is not None
        if len(valid) != len(reserved) or deallocated:
            def release(cur: Obj) -> Obj | None:
                st = cur.setdefault("status", {})
                rs = [r for r in st.get("reservedFor") or [] if isinstance(r, dict) and self._still_needed(ns, r)]
                if rs == (st.get("reservedFor") or []) and (rs or st.get("allocation") is None):
                    return None
                if rs:
                    st["reservedFor"] = rs
                else:
                    st.pop("reservedFor", None)
                    st.pop("allocation", None)  # structured parameters: deallocated by the controller
                return cur

            claim = update_with_retry(lambda: self.registry.get(CLAIMS, ns, name), release,
                                      lambda o: self.registry.update(CLAIMS, ns, name, o, subresource="status")
                                      ) or claim
            log.info("ResourceClaim %s/%s: reservedFor now %d pod(s)", ns, name, len(valid))
        if valid:
            return
        # the finalizer goes with the allocation (or when the claim is being deleted), never
        # between the scheduler's two PreBind writes (finalizer first, then the allocation)
        if (deallocated or deleting(claim)) and FINALIZER in (meta(claim).get("finalizers") or []) \
                and (claim.get("status") or {}).get("allocation") is None:
            def unprotect(cur: Obj) -> Obj | None:
                fins = meta(cur).get("finalizers") or []
                if FINALIZER not in fins or (cur.get("status") or {}).get("allocation") is not None:
                    return None
                cur["metadata"]["finalizers"] = [f for f in fins if f != FINALIZER]
                return cur

            update_with_retry(lambda: self.registry.get(CLAIMS, ns, name), unprotect,
                              lambda o: self.registry.update(CLAIMS, ns, name, o))
        self._delete_if_owner_done(claim)

    def _still_needed(self, ns: str, ref: dict[str, Any]) -> bool:
        if ref.get("resource") != "pods" or ref.get("apiGroup"):
            return True  # another kind of consumer: not ours to judge
        pod = self.pods.get(ns, str(ref.get("name")))
        return pod is not None and uid_of(pod) == ref.get("uid") and not pod_done(pod)

    def _delete_if_owner_done(self, claim: Obj) -> None:
        ref = controller_ref(claim)
        if ref is None or ref.get("kind") != "Pod" or deleting(claim):
            return
        ns = str(meta(claim).get("namespace") or "")
        pod = self.pods.get(ns, str(ref.get("name")))
        if pod is not None and uid_of(pod) == ref.get("uid") and not pod_done(pod):
            return
        try:
            self.registry.delete(CLAIMS, ns, str(meta(claim).get("name")))
            log.info("deleted ResourceClaim %s/%s: its pod is done", ns, meta(claim).get("name"))
        except ApiError as exc:
            if exc.code != 404:
                raise
