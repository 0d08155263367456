"""A pod's requests while it is being resized in place, as component-helpers computes them.

kube-scheduler accounts a bound pod by what it may hold, not only by its spec: with
``InPlacePodVerticalScaling`` (on in every release kubesched supports) ``PodRequests`` takes,
per resource, the largest of the spec, what the kubelet allocated
(``status.containerStatuses[].allocatedResources``) and what the containers run with
(``status.containerStatuses[].resources.requests``). A resize the kubelet marked infeasible
(condition ``PodResizePending``, reason ``Infeasible``) no longer counts its spec.

With ``InPlacePodLevelResourcesVerticalScaling`` (beta and on from 1.36) the same holds for
pod-level resources: the pod's ``status.allocatedResources`` and ``status.resources.requests``
(less the pod overhead) join its ``spec.resources.requests``, and when both pod-level status
maps are set they stand for the containers' aggregate (``AggregateContainerRequests``).

Upstream: ``staging/src/k8s.io/component-helpers/resource/helpers.go`` (``PodRequests``,
``AggregateContainerRequests``, ``effectivePodLevelResources``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import DecodeError
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.resources import (
    CPU, DEFAULT_MEMORY_REQUEST, MEMORY, QuantityList, ResourceList, parse_resource_list, to_resource,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Container

Lists = tuple[QuantityList | None, QuantityList | None]  # (allocatedResources, resources.requests)
_ZERO = parse_quantity("0")
# Pod.extra key: (requests, non0 cpu, non0 memory) with InPlacePodLevelResourcesVerticalScaling,
# kept only when they differ from the pod's own (kubesched.framework.resized picks them)
POD_LEVEL_RESIZE = "requestsWithPodLevelResize"


@dataclass(frozen=True, slots=True)
class ResizeStatus:
    """The parts of a pod's status that resizing puts resources in (None: the field is absent,
    Go's nil map)."""

    containers: Mapping[str, Lists]
    allocated: QuantityList | None  # status.allocatedResources
    resources: bool  # status.resources is set
    requests: QuantityList | None  # status.resources.requests
    infeasible: bool  # PodResizePending with reason Infeasible

    @classmethod
    def parse(cls, status: Mapping[str, Any]) -> "ResizeStatus | None":
        """None when the status says nothing about resources (a pod never resized)."""
        containers: dict[str, Lists] = {}
        for key in ("containerStatuses", "initContainerStatuses"):
            items = status.get(key) or []
            if not isinstance(items, list):
                raise DecodeError("must be a list", field=f"status.{key}")
            for i, cs in enumerate(items):
                if isinstance(cs, Mapping) and str(cs.get("name") or "") not in containers:
                    containers[str(cs.get("name") or "")] = _lists(cs, f"status.{key}[{i}]")
        allocated, requests = _lists(status, "status")
        infeasible = False
        for cond in status.get("conditions") or []:
            if isinstance(cond, Mapping) and cond.get("type") == "PodResizePending":
                infeasible = cond.get("reason") == "Infeasible"
                break
        found = {k: v for k, v in containers.items() if v != (None, None)}
        if not found and allocated is None and not isinstance(status.get("resources"), Mapping):
            return None
        return cls(found, allocated, isinstance(status.get("resources"), Mapping), requests, infeasible)


def _lists(obj: Mapping[str, Any], path: str) -> Lists:
    allocated = obj.get("allocatedResources")
    res = obj.get("resources")
    if res is not None and not isinstance(res, Mapping):
        raise DecodeError("must be an object", field=f"{path}.resources")
    requests = res.get("requests") if res is not None else None
    return (None if allocated is None else parse_resource_list(allocated, f"{path}.allocatedResources"),
            None if requests is None else parse_resource_list(requests, f"{path}.resources.requests"))


def _add(dst: QuantityList, src: Mapping[str, Quantity] | None) -> None:
    for k, v in (src or {}).items():
        dst[k] = dst[k] + v if k in dst else v


def _max(*lists: Mapping[str, Quantity] | None) -> QuantityList:
    out: QuantityList = {}
    for src in lists:
        for k, v in (src or {}).items():
            if k not in out or v > out[k]:
                out[k] = v
    return out


def _aggregate(containers: Iterable["Container"], inits: Iterable["Container"],
               get: Callable[["Container"], QuantityList | None], defaults: QuantityList) -> QuantityList:
    """``aggregateContainerResourcesByFn``: containers summed, restartable init containers
    added, each init container maxed with the sidecars started before it; ``defaults`` fill
    a missing cpu/memory per container (``applyNonMissing``)."""
    def one(c: "Container") -> QuantityList:
        own = dict(get(c) or {})
        for k, v in defaults.items():
            own.setdefault(k, v)
        return own

    reqs: QuantityList = {}
    for c in containers:
        _add(reqs, one(c))
    sidecars: QuantityList = {}
    init_max: QuantityList = {}
    for c in inits:
        cr = one(c)
        if c.restart_policy == "Always":
            _add(reqs, cr)
            _add(sidecars, cr)
            cr = dict(sidecars)
        else:
            _add(cr, sidecars)
        init_max = _max(init_max, cr)
    return _max(reqs, init_max)


def container_requests(containers: tuple["Container", ...], inits: tuple["Container", ...], st: ResizeStatus,
                       pod_level_resize: bool, defaults: QuantityList) -> QuantityList:
    """``AggregateContainerRequests`` with ``UseStatusResources``."""
    spec = _aggregate(containers, inits, lambda c: c.requests, defaults)
    if pod_level_resize and st.allocated is not None and st.requests is not None:
        allocated, actuated = st.allocated, st.requests
    else:
        def alloc(c: "Container") -> QuantityList | None:
            a = st.containers.get(c.name, (None, None))[0]
            return a if a is not None else (None if st.infeasible else c.requests)

        def actual(c: "Container") -> QuantityList | None:
            a, r = st.containers.get(c.name, (None, None))
            return r if r is not None else alloc(c)

        allocated = _aggregate(containers, inits, alloc, defaults)
        actuated = _aggregate(containers, inits, actual, defaults)
    return _max(actuated, allocated) if st.infeasible else _max(spec, actuated, allocated)


def _less_overhead(lst: QuantityList | None, overhead: Mapping[str, Quantity]) -> QuantityList | None:
    """``subtractResourceList``: only names present, floored at zero."""
    if lst is None:
        return None
    out = dict(lst)
    for k, v in overhead.items():
        if k in out:
            out[k] = out[k] - v if out[k] > v else _ZERO
    return out


def pod_level_requests(spec: QuantityList, st: ResizeStatus, pod_level_resize: bool,
                       overhead: Mapping[str, Quantity]) -> QuantityList:
    """``PodRequests``' pod-level requests: the spec's, or with the gate and a pod-level
    status, ``effectivePodLevelResources`` (the spec dropped for an infeasible resize)."""
    if not pod_level_resize or not (st.resources or st.allocated is not None):
        return spec
    return _max(None if st.infeasible else spec, _less_overhead(st.requests, overhead),
                _less_overhead(st.allocated, overhead))


def resized_pod_resources(containers: tuple["Container", ...], inits: tuple["Container", ...],
                          overhead: Mapping[str, Quantity], pod_level: Mapping[str, Quantity],
                          st: ResizeStatus, pod_level_resize: bool) -> tuple[ResourceList, int, int]:
    """(requests, non-zero cpu millis, non-zero memory bytes) as ``PodInfo.calculateResource``
    computes them with ``UseStatusResources`` (and ``InPlacePodLevelResourcesVerticalScaling``
    when ``pod_level_resize``)."""
    pod_level = {k: v for k, v in pod_level.items() if k in (CPU, MEMORY) or k.startswith("hugepages-")}

    def requests(defaults: QuantityList) -> QuantityList:
        reqs = container_requests(containers, inits, st, pod_level_resize, defaults)
        if pod_level:
            for k, v in pod_level_requests(dict(pod_level), st, pod_level_resize, overhead).items():
                if k in (CPU, MEMORY) or k.startswith("hugepages-"):
                    reqs[k] = v
        _add(reqs, overhead)
        return reqs

    reqs = requests({})
    defaults: QuantityList = {}
    if not pod_level or CPU not in reqs:
        defaults[CPU] = parse_quantity("100m")
    if not pod_level or MEMORY not in reqs:
        defaults[MEMORY] = parse_quantity(str(DEFAULT_MEMORY_REQUEST))
    non0 = requests(defaults) if defaults else reqs
    return to_resource(reqs), non0.get(CPU, _ZERO).milli_value(), non0.get(MEMORY, _ZERO).value()
