"""Resource names and quantities, as core validation checks ``ResourceRequirements``.

``validateResourceRequirements`` for containers, overhead and pod-level resources
(names, non-negative and integer quantities, hugepage sizes, requests at most limits and
equal for non-overcommittable resources), ``validatePodResourceConsistency`` and the
node's ``ValidateNodeResources``. Quantities arrive parsed (the decoders parse them
once); only their signs and ratios are looked at, which is cheap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kubesched.api.errors import DecodeError
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.resources import aggregate_requests
from kubesched.api.validation.field import GoJSON, forbidden, invalid, not_supported, required
from kubesched.api.validation.strings import is_qualified_name, qualified_name_ok

if TYPE_CHECKING:
    from kubesched.api.objects import Container

__all__ = [
    "validate_container_resources", "validate_node_resources", "validate_overhead",
    "validate_pod_resources",
]

_STANDARD = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
    "requests.storage", "services.nodeports", "services.loadbalancers",
})
_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_INTEGER = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
_QOS = ("cpu", "memory")
_POD_LEVEL_SUPPORTED = ("cpu", "hugepages-", "memory")
HUGEPAGES_PREFIX = "hugepages-"
NEGATIVE = "must be greater than or equal to 0"


def is_native(name: str) -> bool:
    """``IsNativeResource``: unprefixed or in the ``kubernetes.io/`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``."""
    return not is_native(name) and not name.startswith("requests.") and qualified_name_ok("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native(name) and not name.startswith(HUGEPAGES_PREFIX)


def _is_standard(name: str) -> bool:
    return name in _STANDARD or name.startswith((HUGEPAGES_PREFIX, "requests.hugepages-"))


def _resource_name_error(name: str, path: str) -> DecodeError | None:
    """``validateResourceName``'s first error."""
    if not qualified_name_ok(name):
        return invalid(path, GoJSON(name), is_qualified_name(name)[0])
    if "/" not in name and not _is_standard(name):
        return invalid(path, GoJSON(name), "must be a standard resource type or fully qualified")
    return None


def _check_container_resource_name(name: str, path: str) -> None:
    """``validateContainerResourceName``."""
    err = _resource_name_error(name, path)
    if err is not None:
        raise err
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not name.startswith(HUGEPAGES_PREFIX):
            raise invalid(path, GoJSON(name), "must be a standard resource for containers")
    elif not is_native(name) and not is_extended(name):
        raise invalid(path, GoJSON(name), "doesn't follow extended resource name standard")


def _check_pod_resource_name(name: str, path: str) -> None:
    """``validatePodResourceName``."""
    err = _resource_name_error(name, path)
    if err is not None:
        raise err
    if name not in _QOS and not name.startswith(HUGEPAGES_PREFIX):
        raise not_supported(path, GoJSON(name), _POD_LEVEL_SUPPORTED)


def check_quantity(name: str, q: Quantity, path: str) -> None:
    """``ValidateResourceQuantityValue``: not negative; whole for integer resources."""
    if q.amount.numerator < 0:
        raise invalid(path, str(q), NEGATIVE)
    if (name in _INTEGER or is_extended(name)) and q.milli_value() % 1000:
        raise invalid(path, GoJSON(str(q)), "must be an integer")


def _check_hugepages(name: str, q: Quantity, path: str) -> None:
    """``validateResourceQuantityHugePageValue``: a whole number of pages."""
    try:
        page = parse_quantity(name[len(HUGEPAGES_PREFIX):])
    except DecodeError:
        page = None
    ok = page is not None and page.amount > 0 and page.milli_value() % 1000 == 0 and \
        q.value() % page.value() == 0
    if not ok:
        raise invalid(path, str(q), f"{q} is not positive integer multiple of {name}")


@dataclass(frozen=True, slots=True)
class _Kind:
    """What validation needs to know of a (valid) resource name."""

    integer: bool
    overcommit: bool
    hugepages: bool
    qos: bool


_container_kinds: dict[str, _Kind] = {}
_pod_kinds: dict[str, _Kind] = {}


def _kind(name: str, pod_level: bool, path: str, list_key: str) -> _Kind:
    """Check the name once (the path is built only then) and remember what it is."""
    cache = _pod_kinds if pod_level else _container_kinds
    kind = cache.get(name)
    if kind is None:
        check = _check_pod_resource_name if pod_level else _check_container_resource_name
        check(name, f"{path}.{list_key}[{name}]")
        kind = _Kind(name in _INTEGER or is_extended(name), is_overcommit_allowed(name),
                     name.startswith(HUGEPAGES_PREFIX), name in _QOS)
        if len(cache) < 4096:
            cache[name] = kind
    return kind


def _compare(a: Fraction, b: Fraction) -> int:
    """The sign of ``a - b``, in integer arithmetic."""
    an, ad, bn, bd = a.numerator, a.denominator, b.numerator, b.denominator
    return an - bn if ad == bd else an * bd - bn * ad


def _requirements(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity], path: str, *,
                  pod_level: bool, require_limits: bool = True) -> None:
    """``validateResourceRequirements``: limits first, then requests."""
    hugepages = qos = False
    for name, q in limits.items():
        kind = _kind(name, pod_level, path, "limits")
        if q.amount.numerator < 0 or (kind.integer and q.milli_value() % 1000):
            check_quantity(name, q, f"{path}.limits[{name}]")
        if kind.hugepages:
            hugepages = True
            _check_hugepages(name, q, f"{path}.limits[{name}]")
        qos = qos or kind.qos
    for name, q in requests.items():
        kind = _kind(name, pod_level, path, "requests")
        if q.amount.numerator < 0 or (kind.integer and q.milli_value() % 1000):
            check_quantity(name, q, f"{path}.requests[{name}]")
        lim = limits.get(name)
        if lim is not None:
            diff = _compare(q.amount, lim.amount)
            if diff and not kind.overcommit:
                raise invalid(f"{path}.requests", str(q), f"must be equal to {name} limit of {lim}")
            if diff > 0:
                raise invalid(f"{path}.requests", str(q), f"must be less than or equal to {name} limit of {lim}")
        elif require_limits and not kind.overcommit:
            raise required(f"{path}.limits", "Limit must be set for non overcommitable resources")
        if kind.hugepages:
            hugepages = True
            _check_hugepages(name, q, f"{path}.requests[{name}]")
        qos = qos or kind.qos
    if hugepages and not qos:
        raise forbidden(path, "HugePages require cpu or memory")


def validate_container_resources(c: "Container", path: str, *, require_limits: bool = True) -> None:
    """``ValidateContainerResourceRequirements`` of one parsed container (``require_limits``
    False skips "Limit must be set for non overcommitable resources", see
    :class:`~kubesched.api.validation.pod.PodParts`)."""
    if c.requests or c.limits:
        _requirements(c.requests, c.limits, f"{path}.resources", pod_level=False, require_limits=require_limits)


def validate_overhead(overhead: Mapping[str, Quantity], path: str) -> None:
    """``validateOverhead``: the overhead is checked as container limits."""
    _requirements({}, overhead, path, pod_level=False)


def validate_pod_resources(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity],
                           containers: Sequence["Container"], inits: Sequence["Container"], path: str) -> None:
    """``validatePodResources`` (PodLevelResources): names, quantities, then each pod-level
    value against what the containers ask for."""
    _requirements(requests, limits, path, pod_level=True)
    for name, total in aggregate_requests(containers, inits).items():
        pod_q = requests.get(name)
        if pod_q is not None and total.amount > pod_q.amount:
            raise invalid(f"{path}.requests[{name}]", str(pod_q),
                          f"must be greater than or equal to aggregate container requests of {total}")
    if any(n.startswith(HUGEPAGES_PREFIX) for n in limits):
        as_limits = [_with_limits_as_requests(c) for c in containers]
        init_limits = [_with_limits_as_requests(c) for c in inits]
        for name, total in aggregate_requests(as_limits, init_limits).items():
            pod_q = limits.get(name)
            if name.startswith(HUGEPAGES_PREFIX) and pod_q is not None and total.amount > pod_q.amount:
                raise invalid(f"{path}.limits[{name}]", str(pod_q),
                              f"must be greater than or equal to aggregate container limits of {total}")
    for i, c in enumerate(containers):
        for name, q in c.limits.items():
            pod_q = limits.get(name)
            if pod_q is not None and q.amount > pod_q.amount:
                raise invalid(f"{path}.containers[{i}][{name}].limits", str(q),
                              f"must be less than or equal to pod limits of {pod_q}")


def _with_limits_as_requests(c: "Container") -> "Container":
    return dataclasses.replace(c, requests=c.limits)


def validate_node_resources(capacity: Mapping[str, Quantity], allocatable: Mapping[str, Quantity]) -> None:
    """``ValidateNodeResources``: capacity then allocatable (paths with dots, as upstream's)."""
    for key, ql in (("capacity", capacity), ("allocatable", allocatable)):
        for name, q in ql.items():
            check_quantity(name, q, f"status.{key}.{name}")
