"""Extended resources backed by DRA: the pod's special ResourceClaim (upstream
``extendeddynamicresources.go``, gate DRAExtendedResource).

Why this exists: a pod may ask for ``example.com/gpu: 2`` (or ``deviceclass.resource.
kubernetes.io/<class>``) in its containers' resources without a ResourceClaim. When a
DeviceClass maps that name and a node's allocatable has none of it, DynamicResources
allocates devices for it through one claim per pod that only the scheduler writes:

- PreFilter: the claim a previous cycle created (annotation
  ``resource.kubernetes.io/extended-resource-claim: "true"``, controlled by the pod), else
  an in-memory claim named ``<extended-resources>`` with no requests;
- Filter, per node: each mapped request the node's allocatable does not serve becomes a
  device request ``container-<i>-request-<j>`` of that class (``i``: the container's index
  among init containers then containers, ``j``: the resource's index in the container's
  sorted request names), counted per container; an init container that is not a sidecar
  first reuses requests of later long-lived containers, and the largest of such requests
  stands for all of them. A request neither in allocatable nor mapped: "cannot fit
  resource"; a claim left by an earlier cycle that has requests: "cannot schedule extended
  resource claim" (PostFilter deletes it);
- PreBind: the claim is created (``generateName: <pod>-extended-resources-``), allocated
  and reserved like any other, and the pod's ``status.extendedResourceClaimStatus`` names
  it with the container/resource/request mappings.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.dra import API_VERSION, ResourceClaim
from kubesched.api.objects import Container, Pod
from kubesched.framework.dra_extended import CLAIM_ANNOTATION, DeviceClassResolver, is_dra_extended_resource_name
from kubesched.framework.status import Status, unresolvable
from kubesched.framework.types import NodeInfo

SPECIAL_NAME = "<extended-resources>"  # specialClaimInMemName: never a valid claim name
Mapping_ = dict[str, str]  # a ContainerExtendedResourceRequest: containerName, resourceName, requestName


@dataclass(frozen=True, slots=True)
class NodeClaim:
    """Filter's claim for one node and the mappings PreBind records on the pod."""

    claim: ResourceClaim
    mappings: tuple[Mapping_, ...]


def find_extended_claim(pod: Pod, claims: Sequence[ResourceClaim]) -> ResourceClaim | None:
    """``findExtendedResourceClaim``: the annotated claim the pod controls."""
    for c in claims:
        meta = c.raw.get("metadata") or {}
        if (meta.get("annotations") or {}).get(CLAIM_ANNOTATION) != "true":
            continue
        for o in meta.get("ownerReferences") or []:
            if o.get("name") == pod.name and o.get("uid") == pod.uid and o.get("controller") is True:
                return c
    return None


def special_claim(pod: Pod) -> ResourceClaim:
    """The in-memory claim with no requests (a temporary uid marks its allocation in flight)."""
    return ResourceClaim.from_dict({
        "apiVersion": API_VERSION, "kind": "ResourceClaim",
        "metadata": {"namespace": pod.namespace, "name": SPECIAL_NAME, "uid": f"extended-resources-{pod.uid}",
                     "generateName": f"{pod.name}-extended-resources-",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                          "controller": True}],
                     "annotations": {CLAIM_ANNOTATION: "true"}},
        "spec": {}})


def is_special(claim: ResourceClaim) -> bool:
    return claim.name == SPECIAL_NAME


def filter_extended(claim: ResourceClaim, pod: Pod, ni: NodeInfo, resolver: DeviceClassResolver,
                    no_user_claim: bool) -> tuple[NodeClaim | None, Status | None]:
    """``filterExtendedResources``: the node's claim (None: nothing for DRA to allocate here)
    or an UnschedulableAndUnresolvable status."""
    if claim.spec.requests:
        return None, unresolvable("cannot schedule extended resource claim")
    alloc = ni.allocatable
    wanted: dict[str, int] = {}
    for name, q in sorted(pod.requests.items()):
        if not is_dra_extended_resource_name(name) or q == 0:
            continue
        if resolver.device_class(name) is not None and alloc.get(name, 0) == 0:
            wanted[name] = q
        elif name not in alloc:
            return None, unresolvable("cannot fit resource")
    if (no_user_claim and not wanted) or claim.allocation is not None:
        return None, None
    requests, mappings = requests_and_mappings(pod, wanted, resolver)
    raw = copy.deepcopy(claim.raw)
    raw["spec"] = {"devices": {"requests": requests}}
    return NodeClaim(ResourceClaim.from_dict(raw), tuple(mappings)), None


def _as_int64(q: Any) -> int | None:
    """``Quantity.AsInt64``: the whole value, None when it has a fraction."""
    a = q.amount
    return a.numerator if a.denominator == 1 and -(2 ** 63) <= a.numerator < 2 ** 63 else None


def _container_request(index: int, c: Container, resource: str, cls: str,
                       reusable: Sequence[dict[str, Any] | None]) -> tuple[dict[str, Any] | None, list[Mapping_]]:
    """``createResourceRequestAndMappings``: the container's own request (None when it needs
    none beyond ``reusable``) and its mappings."""
    q = c.requests.get(resource)
    crq = _as_int64(q) if q is not None else None
    if not crq:
        return None, []
    maps: list[Mapping_] = []
    total = 0
    for r in reusable:
        if r is not None:
            total += int(r["exactly"]["count"])
            maps.append({"containerName": c.name, "resourceName": resource, "requestName": r["name"]})
            if total >= crq:
                return None, maps
    name = f"container-{index}-request-{sorted(c.requests).index(resource)}"
    maps.append({"containerName": c.name, "resourceName": resource, "requestName": name})
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount",
                                      "count": crq - total}}, maps


def requests_and_mappings(pod: Pod, wanted: Mapping[str, int],
                          resolver: DeviceClassResolver) -> tuple[list[dict[str, Any]], list[Mapping_]]:
    """``createRequestsAndMappings``: device requests sorted by name, mappings per resource
    (long-lived containers first, then non-sidecar init containers)."""
    containers = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    short = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    long_ = [i for i in range(len(containers)) if i not in short]
    requests: list[dict[str, Any]] = []
    mappings: list[Mapping_] = []
    for resource in sorted(wanted):
        cls = resolver.device_class(resource)
        if cls is None:
            continue
        long_reqs: list[dict[str, Any] | None] = [None] * len(containers)
        long_maps: list[Mapping_] = []
        for i in long_:
            long_reqs[i], maps = _container_request(i, containers[i], resource, cls.name, ())
            long_maps += maps
        biggest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_maps: list[Mapping_] = []
        for i in short:
            req, maps = _container_request(i, containers[i], resource, cls.name, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_maps += maps
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            short_maps = [{**m, "requestName": biggest["name"]} if m["requestName"] in short_names else m
                          for m in short_maps]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_reqs if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


def claim_to_create(node_claim: ResourceClaim) -> dict[str, Any]:
    """``createExtendedResourceClaimInAPI``: the node's claim without name, uid and status."""
    raw = copy.deepcopy(node_claim.raw)
    meta = raw.setdefault("metadata", {})
    meta.pop("name", None)
    meta.pop("uid", None)
    raw.pop("status", None)
    return raw


def pod_status(claim_name: str, mappings: Sequence[Mapping_]) -> dict[str, Any]:
    """``status.extendedResourceClaimStatus`` for the pod."""
    return {"requestMappings": [dict(m) for m in mappings], "resourceClaimName": claim_name}
