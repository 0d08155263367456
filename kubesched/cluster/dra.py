"""The DRA objects of an in-process cluster (simulate): store, lister, writer, claim controller.

Why this exists: the DynamicResources plugin reads DeviceClasses, ResourceSlices and
ResourceClaims through :class:`kubesched.framework.dra.DraLister` and writes claims through
``DraWriter``; in ``simulate`` both are this in-memory store. It also does, before the run,
what kube-controller-manager's resourceclaim controller does for pods that name a
ResourceClaimTemplate: it creates the claim ``<pod>-<claim>`` (owner: the pod, annotation
``resource.kubernetes.io/pod-claim-name``) and records it in the pod's
``status.resourceClaimStatuses`` (the real controller uses ``generateName``; a fixed name
makes runs reproducible, as ``../shared/fidelity-dra/README.md`` says upstream was driven).

For extended resources backed by DRA it is also the ``ExtendedClaimWriter``: the claim
DynamicResources creates in PreBind gets its ``generateName`` plus a suffix derived from
the pod's uid (the API server's is random; this keeps runs reproducible), and the pod's
``status.extendedResourceClaimStatus`` is set on the pod itself.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.api.dra import (
    API_VERSION, POD_CLAIM_NAME_ANNOTATION, DeviceClass, ResourceClaim, ResourceClaimTemplate,
    ResourceSlice,
)
from kubesched.api.errors import DecodeError
from kubesched.api.podclaims import pod_claims
from kubesched.api.objects import Pod
from kubesched.framework.dra import DraWriteError

Listener = Callable[[str, Any, Any], None]  # (kind, old, new)


class InProcessDra:
    """DRA objects in memory: implements ``DraLister`` and ``DraWriter``."""

    def __init__(self) -> None:
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
        self.templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
        self.taint_rules: dict[str, DeviceTaintRule] = {}
        self._rule_list: list[DeviceTaintRule] = []
        self._in_flight: dict[str, ResourceClaim] = {}
        self._generation = 0
        self._slice_list: list[ResourceSlice] | None = None
        self._claim_list: list[ResourceClaim] | None = None
        self.listeners: list[Listener] = []

    def load(self, objects: Iterable[Any]) -> None:
        for o in objects:
            if isinstance(o, DeviceClass):
                self.classes[o.name] = o
            elif isinstance(o, ResourceSlice):
                self.slices[o.name] = o
            elif isinstance(o, ResourceClaim):
                self.claims[(o.namespace, o.name)] = o
            elif isinstance(o, ResourceClaimTemplate):
                self.templates[(o.namespace, o.name)] = o
            elif isinstance(o, DeviceTaintRule):
                self.taint_rules[o.name] = o
        self._rule_list = sorted(self.taint_rules.values(), key=lambda r: r.name)
        self._changed()

    def _changed(self, slices: bool = True) -> None:
        self._generation += 1
        if slices:  # the slice list keeps its identity while no slice changes (the plugin indexes it)
            self._slice_list = None
        self._claim_list = None

    # -- the resourceclaim controller's part ---------------------------------------------------
    def create_template_claims(self, pods: Iterable[Pod]) -> None:
        """For every pending pod's template claim: the claim ``<pod>-<name>`` and the pod's
        ``status.resourceClaimStatuses`` entry. A missing template leaves the pod without
        the claim (it then waits at PreEnqueue, as upstream's would)."""
        for pod in pods:
            statuses = []
            for pc in pod_claims(pod.raw):
                if not pc.template_name:
                    continue
                tmpl = self.templates.get((pod.namespace, pc.template_name))
                if tmpl is None:
                    continue
                name = f"{pod.name}-{pc.name}"
                if (pod.namespace, name) not in self.claims:
                    self.claims[(pod.namespace, name)] = self._from_template(tmpl, pod, pc.name, name)
                statuses.append({"name": pc.name, "resourceClaimName": name})
            if statuses:  # a new status dict: pods built from one template may share the old one
                pod.raw["status"] = {**(pod.raw.get("status") or {}), "resourceClaimStatuses": statuses}
        self._changed(slices=False)

    @staticmethod
    def _from_template(tmpl: ResourceClaimTemplate, pod: Pod, pod_claim: str, name: str) -> ResourceClaim:
        tmeta = tmpl.raw.get("metadata") or {}
        spec = copy.deepcopy((tmpl.raw.get("spec") or {}).get("spec") or {})
        tspec_meta = (tmpl.raw.get("spec") or {}).get("metadata") or {}
        raw = {"apiVersion": API_VERSION, "kind": "ResourceClaim",
               "metadata": {"name": name, "namespace": pod.namespace, "uid": f"claim-{pod.namespace}-{name}",
                            "labels": dict(tspec_meta.get("labels") or {}),
                            "annotations": {**(tspec_meta.get("annotations") or {}),
                                            POD_CLAIM_NAME_ANNOTATION: pod_claim},
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name,
                                                 "uid": pod.uid, "controller": True,
                                                 "blockOwnerDeletion": True}]},
               "spec": spec}
        try:
            return ResourceClaim.from_dict(raw)
        except DecodeError as exc:
            raise exc.at(obj=f"ResourceClaimTemplate {pod.namespace}/{tmeta.get('name')}") from None

    # -- DraLister -------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self._generation

    def device_class(self, name: str) -> DeviceClass | None:
        return self.classes.get(name)

    def device_classes(self) -> Sequence[DeviceClass]:
        return list(self.classes.values())

    def resource_slices(self) -> Sequence[ResourceSlice]:
        if self._slice_list is None:
            self._slice_list = sorted(self.slices.values(), key=lambda s: s.name)
        return self._slice_list

    def device_taint_rules(self) -> Sequence[DeviceTaintRule]:
        return self._rule_list

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get((namespace, name))

    def resource_claims(self) -> Sequence[ResourceClaim]:
        if self._claim_list is None:
            self._claim_list = list(self.claims.values())
        return self._claim_list

    @property
    def in_flight(self) -> dict[str, ResourceClaim]:
        return self._in_flight

    # -- DraWriter ---------------------------------------------------------------------------------
    def update_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        meta = raw.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name")))
        old = self.claims.get(key)
        if old is None:
            raise DraWriteError(f'resourceclaims.resource.k8s.io "{key[1]}" not found')
        try:
            new = ResourceClaim.from_dict(raw)
        except DecodeError as exc:
            raise DraWriteError(f"ResourceClaim {key[0]}/{key[1]} is invalid: {exc}") from None
        self.claims[key] = new
        self._changed(slices=False)
        for fn in self.listeners:
            fn("ResourceClaim", old, new)
        return new

    def wait_for(self, check: Callable[[], bool], timeout: float, interval: float) -> bool:
        """No DRA driver runs in the in-process cluster, so nothing changes a claim while
        PreBind waits: one check decides (not ready: the wait would have timed out)."""
        return check()

    # -- ExtendedClaimWriter --------------------------------------------------------------------------
    def create_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        raw = copy.deepcopy(raw)
        meta = raw.setdefault("metadata", {})
        ns = str(meta.get("namespace") or "default")
        owner: dict[str, Any] = next(iter(meta.get("ownerReferences") or []), {})
        digest = hashlib.sha256(str(owner.get("uid") or meta.get("generateName")).encode()).hexdigest()
        name = str(meta.get("generateName") or "") + "".join("bcdfghjklmnpqrstvwxz2456789"[int(c, 16)]
                                                              for c in digest[:5])
        if (ns, name) in self.claims:
            raise DraWriteError(f'resourceclaims.resource.k8s.io "{name}" already exists')
        meta.update(name=name, namespace=ns, uid=f"claim-{ns}-{name}")
        try:
            claim = ResourceClaim.from_dict(raw)
        except DecodeError as exc:
            raise DraWriteError(f"ResourceClaim {ns}/{name} is invalid: {exc}") from None
        self.claims[(ns, name)] = claim
        self._changed(slices=False)
        for fn in self.listeners:
            fn("ResourceClaim", None, claim)
        return claim

    def delete_claim(self, namespace: str, name: str) -> None:
        old = self.claims.pop((namespace, name), None)
        if old is not None:
            self._changed(slices=False)

    def set_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        pod.raw["status"] = {**(pod.raw.get("status") or {}), "extendedResourceClaimStatus": status}

    # -- output ------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """``objects.resourceClaims``: final allocation and reservedFor per claim."""
        out: dict[str, Any] = {}
        for (ns, name), c in sorted(self.claims.items()):
            out[f"{ns}/{name}"] = {"allocation": c.allocation,
                                   "reservedFor": [f"{r.resource}/{r.name}" for r in c.reserved_for]}
        return {"resourceClaims": out}
