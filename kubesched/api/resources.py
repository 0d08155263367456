"""Resource lists and the requests of a pod, computed as upstream computes them.

A manifest's ``requests``/``limits`` are parsed into exact quantities; the scheduler works
in upstream's ``framework.Resource`` form: integers, CPU in millicores and everything else
in units (``Quantity.Value()``, rounded up). A pod's requests follow component-helpers
``PodRequests``: containers summed, init containers maxed (a restartable init container, a
sidecar, counts for the rest of the pod's life), pod-level requests for cpu/memory/hugepages
override, overhead added. The non-zero requests used for scoring give a container with no
cpu or memory request 100m / 200Mi (``schedutil.DefaultMilliCPURequest`` /
``DefaultMemoryRequest``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import DecodeError, QuantityError
from kubesched.api.quantity import Quantity, parse_quantity

if TYPE_CHECKING:
    from kubesched.api.objects import Container

QuantityList = dict[str, Quantity]
ResourceList = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def is_scalar_resource_name(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages, kubernetes.io/-prefixed,
    attachable volumes."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    # extended resource: has a domain prefix outside kubernetes.io and is not "requests.*"
    return "/" in name and not name.startswith("requests.")


def parse_resource_list(obj: Any, path: str) -> QuantityList:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DecodeError("must be a map of resource names to quantities", field=path)
    out: QuantityList = {}
    for k, v in obj.items():
        try:
            out[str(k)] = parse_quantity(v)
        except QuantityError as exc:
            raise exc.at(field_prefix=f"{path}.{k}") from None
    return out


def to_resource(ql: Mapping[str, Quantity]) -> ResourceList:
    """``framework.Resource.Add``: cpu in millis, pods/memory/storage/scalars in units."""
    out: ResourceList = {}
    for name, q in ql.items():
        if name == CPU:
            out[CPU] = q.milli_value()
        elif name in (MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar_resource_name(name):
            out[name] = q.value()
    return out


def _add(dst: QuantityList, src: Mapping[str, Quantity]) -> None:
    for k, v in src.items():
        dst[k] = dst[k] + v if k in dst else v


def _max(dst: QuantityList, src: Mapping[str, Quantity]) -> None:
    for k, v in src.items():
        if k not in dst or v > dst[k]:
            dst[k] = v


def _with_defaults(reqs: Mapping[str, Quantity], defaults: Mapping[str, Quantity]) -> QuantityList:
    out = dict(reqs)
    for k, v in defaults.items():
        if k not in out:
            out[k] = v
    return out


def aggregate_requests(containers: Iterable["Container"], inits: Iterable["Container"],
                       defaults: Mapping[str, Quantity] | None = None) -> QuantityList:
    """``AggregateContainerRequests``; ``defaults`` fills a missing cpu/memory per container."""
    reqs: QuantityList = {}
    for c in containers:
        _add(reqs, _with_defaults(c.requests, defaults) if defaults else c.requests)
    sidecars: QuantityList = {}
    init_max: QuantityList = {}
    for c in inits:
        cr = _with_defaults(c.requests, defaults) if defaults else dict(c.requests)
        if c.restart_policy == "Always":
            _add(reqs, cr)
            _add(sidecars, cr)
            cr = dict(sidecars)
        else:
            tmp: QuantityList = {}
            _add(tmp, cr)
            _add(tmp, sidecars)
            cr = tmp
        _max(init_max, cr)
    _max(reqs, init_max)
    return reqs


def _pod_level(reqs: QuantityList, pod_level: Mapping[str, Quantity]) -> None:
    for k, v in pod_level.items():
        if k in (CPU, MEMORY) or k.startswith("hugepages-"):
            reqs[k] = v


def pod_resources(containers: tuple["Container", ...], inits: tuple["Container", ...],
                  overhead: Mapping[str, Quantity], pod_level: Mapping[str, Quantity],
                  ) -> tuple[ResourceList, int, int]:
    """Return (requests, non-zero cpu millis, non-zero memory bytes) as ``PodInfo.CalculateResource``."""
    pod_level = {k: v for k, v in pod_level.items() if k in (CPU, MEMORY) or k.startswith("hugepages-")}
    reqs = aggregate_requests(containers, inits)
    _pod_level(reqs, pod_level)
    _add(reqs, overhead)
    # getNonMissingContainerRequests: with pod-level requests set, only what is missing at
    # both container and pod level gets the default.
    defaults: QuantityList = {}
    if not pod_level or CPU not in reqs:
        defaults[CPU] = parse_quantity("100m")
    if not pod_level or MEMORY not in reqs:
        defaults[MEMORY] = parse_quantity(str(DEFAULT_MEMORY_REQUEST))
    non0 = reqs
    if defaults:
        non0 = aggregate_requests(containers, inits, defaults)
        _pod_level(non0, pod_level)
        _add(non0, overhead)
    zero = parse_quantity("0")
    return (to_resource(reqs), non0.get(CPU, zero).milli_value(), non0.get(MEMORY, zero).value())
