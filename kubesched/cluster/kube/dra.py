"""``KubeDra``: DynamicResources' view of a Kubernetes API server's DRA objects
(``DraLister``), and its PreBind writes to it (``DraWriter``).

Reads come from the informers of DeviceClasses, ResourceSlices, ResourceClaims and
ResourceClaimTemplates (dictionary look-ups, lists cached per :attr:`generation`, which
the live scheduler bumps on every informer event of these kinds). Writes are what
upstream's ``bindClaim`` sends: when the finalizer ``resource.kubernetes.io/
delete-protection`` is new, a ``PUT`` of the claim with it, then a ``PUT`` of its
``status`` subresource with ``allocation`` and ``reservedFor`` — each with the
resourceVersion the scheduler read, so a concurrent change fails the write (409) and
the binding cycle fails as upstream's does.

For extended resources backed by DRA it is also the ``ExtendedClaimWriter``: a ``POST``
of the claim (the server names it from ``generateName``), a ``DELETE`` (after a ``PUT``
without the finalizer), and a merge ``PATCH`` of the pod's ``status``.

A written claim is kept as *assumed* until its informer has caught up (upstream's assume
cache): the next pod sharing the claim reads the version just written, not a stale one
that would make its own write conflict.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.dra import FINALIZER, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kubesched.api.objects import Pod
from kubesched.cluster.kube.client import MERGE_PATCH
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.errors import KubeClientError
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.resources import PODS, RESOURCE_CLAIMS
from kubesched.framework.dra import DraWriteError


def _rv(claim: ResourceClaim | None) -> int:
    try:
        return int(((claim.raw if claim is not None else {}).get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


class KubeDra:
    def __init__(self, client: KubeClient, *, classes: Informer[DeviceClass], slices: Informer[ResourceSlice],
                 claims: Informer[ResourceClaim], templates: Informer[ResourceClaimTemplate],
                 guard: Callable[[], None] | None = None) -> None:
        self.client = client
        self._classes = classes
        self._slices = slices
        self._claims = claims
        self._templates = templates
        self.guard = guard  # the leader's fence, checked right before each write
        self._generation = 0
        self._slice_list: tuple[int, list[ResourceSlice]] | None = None
        self._claim_list: tuple[int, list[ResourceClaim]] | None = None
        self._in_flight: dict[str, ResourceClaim] = {}
        self._assumed: dict[tuple[str, str], ResourceClaim] = {}
        self._lock = threading.Lock()

    def changed(self) -> None:
        """An informer of these kinds delivered an event (called under the scheduler's lock)."""
        self._generation += 1

    # -- DraLister -------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self._generation

    def device_class(self, name: str) -> DeviceClass | None:
        return self._classes.get(name)

    def device_classes(self) -> Sequence[DeviceClass]:
        return self._classes.values()

    def resource_slices(self) -> Sequence[ResourceSlice]:
        cached = self._slice_list
        if cached is None or cached[0] != self._generation:
            cached = (self._generation, sorted(self._slices.values(), key=lambda s: s.name))
            self._slice_list = cached
        return cached[1]

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        seen = self._claims.get_namespaced(namespace, name)
        with self._lock:
            assumed = self._assumed.get((namespace, name))
            if assumed is None:
                return seen
            if seen is None or _rv(seen) >= _rv(assumed):
                del self._assumed[(namespace, name)]  # the informer caught up (or it is gone)
                return seen
            return assumed

    def resource_claims(self) -> Sequence[ResourceClaim]:
        cached = self._claim_list
        if cached is None or cached[0] != self._generation:
            claims = [self.resource_claim(c.namespace, c.name) for c in self._claims.values()]
            cached = (self._generation, [c for c in claims if c is not None])
            self._claim_list = cached
        return cached[1]

    @property
    def in_flight(self) -> dict[str, ResourceClaim]:
        return self._in_flight

    # -- DraWriter -------------------------------------------------------------------------------
    def update_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        meta = raw.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        current = self.resource_claim(ns, name)
        body = copy.deepcopy(raw)
        try:
            if current is not None and (current.raw.get("metadata") or {}).get("finalizers") != meta.get("finalizers"):
                written = self._put(RESOURCE_CLAIMS.object_path(ns, name), {**body, "status": current.raw.get("status")})
                body["metadata"] = {**body["metadata"], "resourceVersion": written["metadata"]["resourceVersion"]}
            out = self._put(RESOURCE_CLAIMS.object_path(ns, name, "status"), body)
        except KubeClientError as exc:
            raise DraWriteError(str(exc)) from exc
        claim: ResourceClaim = RESOURCE_CLAIMS.decode(out)
        with self._lock:
            if _rv(claim) > _rv(self._claims.get_namespaced(ns, name)):
                self._assumed[(ns, name)] = claim
        self._generation += 1
        return claim

    # -- ExtendedClaimWriter ---------------------------------------------------------------------
    def create_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        ns = str((raw.get("metadata") or {}).get("namespace") or "default")
        path = f"{RESOURCE_CLAIMS.prefix}/namespaces/{ns}/{RESOURCE_CLAIMS.plural}"
        try:
            out = self.client.request("POST", path, body=raw, guard=self.guard)
        except KubeClientError as exc:
            raise DraWriteError(f"create claim for extended resources: {exc}") from exc
        if not isinstance(out, dict):
            raise DraWriteError(f"POST {path}: the server answered no object")
        claim: ResourceClaim = RESOURCE_CLAIMS.decode(out)
        with self._lock:  # read back at once (bindClaim), before the informer has it
            self._assumed[(claim.namespace, claim.name)] = claim
        self._generation += 1
        return claim

    def delete_claim(self, namespace: str, name: str) -> None:
        current = self.resource_claim(namespace, name)
        try:
            if current is not None and FINALIZER in ((current.raw.get("metadata") or {}).get("finalizers") or []):
                body = copy.deepcopy(current.raw)
                body["metadata"]["finalizers"] = [f for f in body["metadata"]["finalizers"] if f != FINALIZER]
                self._put(RESOURCE_CLAIMS.object_path(namespace, name), body)
            self.client.request("DELETE", RESOURCE_CLAIMS.object_path(namespace, name), guard=self.guard)
        except KubeClientError as exc:
            if getattr(exc, "code", None) != 404:
                raise DraWriteError(str(exc)) from exc
        with self._lock:
            self._assumed.pop((namespace, name), None)
        self._generation += 1

    def set_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        path = PODS.object_path(pod.namespace, pod.name, "status")
        try:
            self.client.request("PATCH", path, body={"status": {"extendedResourceClaimStatus": status}},
                                content_type=MERGE_PATCH, guard=self.guard)
        except KubeClientError as exc:
            raise DraWriteError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {exc}") from exc

    def _put(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        out = self.client.request("PUT", path, body=body, guard=self.guard)
        if not isinstance(out, dict):
            raise DraWriteError(f"PUT {path}: the server answered no object")
        return out
