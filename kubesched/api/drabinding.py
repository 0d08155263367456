"""A ResourceClaim's binding conditions, as its status says them (DRADeviceBindingConditions).

Why this exists: a device with ``bindingConditions`` is allocated with them copied into
the claim's ``status.allocation.devices.results[]``; the pod may only be bound once its
driver (a controller outside the scheduler) has set each of those conditions ``True`` in
``status.devices[]`` for that device, and must not be bound if one of the
``bindingFailureConditions`` is ``True`` there. The scheduler waits up to its binding
timeout, counted from ``status.allocation.allocationTimestamp``.

Upstream: ``k8s.io/api/resource/v1/types.go`` (DeviceRequestAllocationResult,
AllocatedDeviceStatus, AllocationResult.allocationTimestamp) and the DynamicResources
plugin's ``isClaimReadyForBinding`` / ``isClaimTimeout`` / ``getAllocatedDeviceStatus``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError


class BindingFailed(Exception):
    """A binding failure condition is True: ``claim <name> binding failed: reason=..., message="..."``."""


@dataclass(frozen=True, slots=True)
class PendingDevice:
    """One allocated device with binding conditions."""

    driver: str
    pool: str
    device: str
    conditions: tuple[str, ...]
    failure_conditions: tuple[str, ...]


def _m(obj: Any) -> Mapping[str, Any]:
    return obj if isinstance(obj, Mapping) else {}


def _strs(obj: Any) -> tuple[str, ...]:
    return tuple(x for x in obj if isinstance(x, str)) if isinstance(obj, list) else ()


def pending_devices(raw: Mapping[str, Any]) -> list[PendingDevice]:
    """The claim's allocated devices that have binding conditions (none when unallocated)."""
    alloc = _m(_m(raw.get("status")).get("allocation"))
    out = []
    for r in _m(alloc.get("devices")).get("results") or []:
        r = _m(r)
        conds = _strs(r.get("bindingConditions"))
        if conds:
            out.append(PendingDevice(str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""),
                                     conds, _strs(r.get("bindingFailureConditions"))))
    return out


def _device_conditions(raw: Mapping[str, Any], d: PendingDevice) -> dict[str, Mapping[str, Any]] | None:
    """``getAllocatedDeviceStatus``: the device's entry of ``status.devices`` (by driver,
    pool, device), as condition type -> condition; None when it has no entry."""
    for s in _m(raw.get("status")).get("devices") or []:
        s = _m(s)
        if (s.get("driver"), s.get("pool"), s.get("device")) == (d.driver, d.pool, d.device):
            return {str(c.get("type")): c for c in (s.get("conditions") or []) if isinstance(c, Mapping)}
    return None


def ready_for_binding(name: str, raw: Mapping[str, Any]) -> bool:
    """Upstream ``isClaimReadyForBinding``: allocated, and every device's binding conditions
    True; raises :class:`BindingFailed` when a failure condition is True."""
    if _m(raw.get("status")).get("allocation") is None:
        return False
    for d in pending_devices(raw):
        conds = _device_conditions(raw, d)
        if conds is None:
            return False
        for f in d.failure_conditions:
            c = conds.get(f)
            if c is not None and c.get("status") == "True":
                raise BindingFailed(f'claim {name} binding failed: reason={c.get("reason") or ""}, '
                                    f'message="{c.get("message") or ""}"')
        if not all((conds.get(t) or {}).get("status") == "True" for t in d.conditions):
            return False
    return True


def parse_time(value: Any, path: str) -> dt.datetime:
    """An RFC 3339 time of the API (``2026-01-02T03:04:05Z``)."""
    if not isinstance(value, str):
        raise DecodeError(f"must be a time string, got {value!r}", field=path)
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise DecodeError(f'Invalid value: "{value}": not an RFC 3339 time', field=path) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def allocation_timestamp(raw: Mapping[str, Any]) -> dt.datetime | None:
    """``status.allocation.allocationTimestamp`` (None when unset or unreadable)."""
    value = _m(_m(raw.get("status")).get("allocation")).get("allocationTimestamp")
    if value is None:
        return None
    try:
        return parse_time(value, "status.allocation.allocationTimestamp")
    except DecodeError:
        return None


def format_time(t: dt.datetime) -> str:
    """``metav1.Time`` as the API writes it: UTC, whole seconds."""
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
