"""Extended resources backed by DRA (gate DRAExtendedResource): which DeviceClass serves a
resource name, and when NodeResourcesFit leaves a request to DynamicResources.

Why this exists: both NodeResourcesFit and DynamicResources ask the same two questions
(plugins never import each other, so the answers live here, as upstream keeps them in the
DRA manager's ``DeviceClassResolver`` and ``schedutil``):

- which DeviceClass a resource name maps to: a class's ``spec.extendedResourceName``, and
  for every class its implicit name ``deviceclass.resource.kubernetes.io/<class>``. When
  two classes name the same resource, the class seen last wins, as upstream's informer-fed
  ``ExtendedResourceCache`` keeps the last Add/Update (here: the lister's order, which is
  the order the classes were created in);
- whether a request on a node goes to DRA (upstream ``shouldDelegateResourceToDRA``): the
  gate is on, the node's allocatable has none of it (no device plugin serves it there),
  and a class maps it.

``ExtendedClaimWriter`` is what DynamicResources' PreBind needs beyond ``DraWriter``:
create the pod's claim, delete a stale one, record ``status.extendedResourceClaimStatus``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from kubesched.api.dra import DeviceClass, ResourceClaim
from kubesched.api.objects import Pod
from kubesched.api.validation.strings import is_qualified_name

GATE = "DRAExtendedResource"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"  # ExtendedResourceClaimAnnotation


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: domain-prefixed, outside kubernetes.io, quota-able."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName``: an extended resource name, or a class's implicit one."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


class DeviceClassResolver:
    """Resource name -> the DeviceClass that provides it (upstream ``GetDeviceClass``)."""

    def __init__(self, classes: Iterable[DeviceClass]) -> None:
        self._by_name: dict[str, DeviceClass] = {}
        for c in classes:
            ern = (c.raw.get("spec") or {}).get("extendedResourceName")
            if isinstance(ern, str) and ern:
                self._by_name[ern] = c
            self._by_name[DEVICE_CLASS_PREFIX + c.name] = c

    def device_class(self, resource: str) -> DeviceClass | None:
        return self._by_name.get(resource)

    def __bool__(self) -> bool:
        return bool(self._by_name)


_RESOLVERS: dict[int, tuple[Any, int, DeviceClassResolver]] = {}


def resolver_of(lister: Any) -> DeviceClassResolver:
    """The resolver for a DRA lister's classes, rebuilt when its generation moves."""
    gen = int(getattr(lister, "generation", 0))
    hit = _RESOLVERS.get(id(lister))
    if hit is not None and hit[0] is lister and hit[1] == gen:
        return hit[2]
    classes = getattr(lister, "device_classes", None)
    resolver = DeviceClassResolver(classes() if classes is not None else ())
    if len(_RESOLVERS) > 64:
        _RESOLVERS.clear()
    _RESOLVERS[id(lister)] = (lister, gen, resolver)
    return resolver


def delegated_to_dra(name: str, allocatable: Mapping[str, int], resolver: DeviceClassResolver) -> bool:
    """``shouldDelegateResourceToDRA`` with the gate on: no device plugin serves ``name`` on
    the node (allocatable absent or 0) and a DeviceClass maps it."""
    return allocatable.get(name, 0) <= 0 and resolver.device_class(name) is not None


def mapped_requests(requests: Mapping[str, int], resolver: DeviceClassResolver) -> frozenset[str]:
    """The pod's non-zero requests a DeviceClass could serve (``hasDeviceClassMappedExtendedResource``)."""
    if not resolver:
        return frozenset()
    return frozenset(n for n, q in requests.items()
                     if q and is_dra_extended_resource_name(n) and resolver.device_class(n) is not None)


class ExtendedClaimWriter(Protocol):
    """The writes of DynamicResources for a pod's extended resources backed by DRA."""

    def create_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        """Create a claim (``metadata.generateName`` set, no name); the created claim."""
        ...

    def delete_claim(self, namespace: str, name: str) -> None:
        """Remove the finalizer, then delete (absent already: no error)."""
        ...

    def set_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        """Write the pod's ``status.extendedResourceClaimStatus``."""
        ...
