"""Decoding of the DRA fields for devices that are shared or partitioned.

Why this exists: two beta features of Kubernetes 1.36 add fields the structured allocator
reads, and keeping them apart from :mod:`kubesched.api.dra` keeps that module readable:

- DRAPartitionableDevices: a ResourceSlice's ``sharedCounters`` (counter sets of the
  pool) and a device's ``consumesCounters``; with ``perDeviceNodeSelection`` each device
  says where it is usable (``nodeName`` / ``nodeSelector`` / ``allNodes``);
- DRAConsumableCapacity: a device's ``allowMultipleAllocations`` and each capacity's
  ``requestPolicy``; a request's ``capacity.requests``; an allocation result's ``shareID``
  and ``consumedCapacity``.

The values are decoded whatever the gates say; the allocator reads them only when the gate
that owns them is on (the API server drops them when it is off).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.drafields import _dns_label, _list, _map, _str
from kubesched.api.errors import DecodeError
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.selectors import NodeSelector


def _opt_quantity(v: Any, path: str) -> Quantity | None:
    return None if v is None else parse_quantity(v, field=path)


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    """One ``consumesCounters`` entry of a device: counters taken from one counter set."""

    counter_set: str
    counters: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class CounterSet:
    """One ``sharedCounters`` entry of a ResourceSlice."""

    name: str
    counters: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    """A device capacity's ``requestPolicy`` (DRAConsumableCapacity)."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    min: Quantity | None = None  # validRange; None: no range
    max: Quantity | None = None
    step: Quantity | None = None


def read_counters(obj: Any, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for k, v in _map(obj, path).items():
        _dns_label(k, f"{path}[{k}]")
        val = _map(v, f"{path}[{k}]").get("value")
        if val is None:
            raise DecodeError("Required value", field=f"{path}[{k}].value")
        out[k] = parse_quantity(val, field=f"{path}[{k}].value")
    return out


def policy(obj: Any, path: str) -> CapacityPolicy | None:
    if obj is None:
        return None
    m = _map(obj, path)
    values = tuple(parse_quantity(v, field=f"{path}.validValues[{i}]")
                   for i, v in enumerate(_list(m.get("validValues"), f"{path}.validValues")))
    if any(b <= a for a, b in zip(values, values[1:])):
        raise DecodeError("Invalid value: must be sorted in ascending order without duplicates",
                          field=f"{path}.validValues")
    rng = m.get("validRange")
    if values and rng is not None:
        raise DecodeError("Invalid value: only one of validValues and validRange may be set", field=path)
    if rng is None:
        return CapacityPolicy(_opt_quantity(m.get("default"), f"{path}.default"), values)
    r = _map(rng, f"{path}.validRange")
    if r.get("min") is None:
        raise DecodeError("Required value", field=f"{path}.validRange.min")
    step = _opt_quantity(r.get("step"), f"{path}.validRange.step")
    if step is not None and step.value() <= 0:
        raise DecodeError("Invalid value: must be greater than zero", field=f"{path}.validRange.step")
    return CapacityPolicy(_opt_quantity(m.get("default"), f"{path}.default"), (),
                          _opt_quantity(r["min"], f"{path}.validRange.min"),
                          _opt_quantity(r.get("max"), f"{path}.validRange.max"), step)


def device_placement(m: Mapping[str, Any], path: str) -> tuple[str, NodeSelector | None, bool]:
    """A device's own nodeName / nodeSelector / allNodes (slices with perDeviceNodeSelection)."""
    node_name = _str(m.get("nodeName"), f"{path}.nodeName", required=False)
    sel = m.get("nodeSelector")
    selector = NodeSelector.parse(sel, f"{path}.nodeSelector") if sel is not None else None
    return node_name, selector, m.get("allNodes") is True


def counter_sets(obj: Any) -> tuple[CounterSet, ...]:
    out: list[CounterSet] = []
    for i, c in enumerate(_list(obj, "spec.sharedCounters")):
        p = f"spec.sharedCounters[{i}]"
        m = _map(c, p)
        name = _dns_label(m.get("name"), f"{p}.name")
        if any(x.name == name for x in out):
            raise DecodeError(f'Duplicate value: "{name}"', field=f"{p}.name")
        counters = read_counters(m.get("counters"), f"{p}.counters")
        if not counters:
            raise DecodeError("Required value", field=f"{p}.counters")
        out.append(CounterSet(name, counters))
    return tuple(out)


def check_placement(node_name: str, selector: NodeSelector | None, all_nodes: bool, per_device: bool,
                    path: str) -> None:
    """With perDeviceNodeSelection every device names where it is usable (exactly one of
    nodeName, nodeSelector, allNodes); without it, none does."""
    n = sum((bool(node_name), selector is not None, all_nodes))
    if per_device and n != 1:
        raise DecodeError("exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when "
                          "`perDeviceNodeSelection` is set", field=path)
    if not per_device and n:
        raise DecodeError("Forbidden: `nodeName`, `nodeSelector` and `allNodes` may only be set when "
                          "`perDeviceNodeSelection` is set", field=path)


def capacity_requests(obj: Any, path: str) -> tuple[tuple[str, Quantity], ...] | None:
    if obj is None:
        return None
    reqs = _map(_map(obj, path).get("requests"), f"{path}.requests")
    out = []
    for k, v in reqs.items():
        q = parse_quantity(v, field=f"{path}.requests[{k}]")
        if q.amount < 0:
            raise DecodeError(f"Invalid value: {v!r}: must be greater than or equal to 0",
                              field=f"{path}.requests[{k}]")
        out.append((str(k), q))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SharedResult:
    """An allocation result with a ``shareID`` (a device allocated with
    allowMultipleAllocations) and the capacity it consumes, names as the result spells them."""

    device: tuple[str, str, str]
    share_id: str
    consumed: tuple[tuple[str, Quantity], ...]


def shared_result(rm: Mapping[str, Any], rp: str, device: tuple[str, str, str]) -> SharedResult | None:
    share = rm.get("shareID")
    if share is None:
        return None
    consumed = tuple((str(k), parse_quantity(v, field=f"{rp}.consumedCapacity[{k}]"))
                     for k, v in _map(rm.get("consumedCapacity"), f"{rp}.consumedCapacity").items())
    return SharedResult(device, _str(share, f"{rp}.shareID"), consumed)
