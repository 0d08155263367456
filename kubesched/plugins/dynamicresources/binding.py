"""DynamicResources' binding conditions (DRADeviceBindingConditions) and its args.

Why this exists: when the allocator picked a device with ``bindingConditions``, upstream's
PreBind (``dynamicresources.go``), after writing allocation and reservation (and
``allocationTimestamp``), waits, polling every 5 s up to the binding timeout
(``DynamicResourcesArgs.bindingTimeout``, default 600 s), until the driver has set every
binding condition True in the claim's ``status.devices``; a True failure condition ends the
wait with ``claim <name> binding failed: ...``, the timeout with ``device binding timeout``.
PreBind then fails, Unreserve takes the pod out of ``reservedFor``, and on the next attempt
Filter treats the claim (still allocated) as unavailable on every node once it failed or
timed out, so PostFilter deallocates it and another device can be tried.

``DynamicResourcesArgs``: ``filterTimeout`` (accepted and checked as upstream does;
kubesched's allocator has no time limit) and ``bindingTimeout`` (at least 1 s; an error when
the binding-conditions gates are off, as upstream's ``ValidateDynamicResourcesArgs``).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.dra import FINALIZER, ResourceClaim
from kubesched.api.drabinding import BindingFailed, allocation_timestamp, pending_devices, ready_for_binding
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.framework.clock import CLOCK_EPOCH
from kubesched.framework.dra import DraWriteError

DEFAULT_BINDING_TIMEOUT = 600.0  # config.DynamicResourcesBindingTimeoutDefault
POLL_INTERVAL = 5.0
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    filter_timeout: float | None = None
    binding_timeout: float | None = None  # None: DEFAULT_BINDING_TIMEOUT
    filter_text: str = ""  # as written, for messages
    binding_text: str = ""


def _duration(value: Any, path: str) -> float:
    """A ``metav1.Duration`` (Go's ``time.ParseDuration``: ``600s``, ``10m``, ``1m30s``)."""
    text = value.strip() if isinstance(value, str) else None
    sign = -1.0 if text and text.startswith("-") else 1.0
    body = (text or "").lstrip("+-")
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while body and pos < len(body):
        m = _DURATION.match(body, pos)
        if m is None:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        raise DecodeError(f"invalid duration {value!r} (for example 600s or 10m)", field=path)
    return sign * total


def parse_args(raw: Any, path: str) -> DynamicResourcesArgs:
    """``DynamicResourcesArgs`` (kubescheduler.config.k8s.io/v1)."""
    if raw is None:
        return DynamicResourcesArgs()
    if not isinstance(raw, Mapping):
        raise DecodeError("must be an object", field=path)
    for k in raw:
        if k not in ("filterTimeout", "bindingTimeout", "apiVersion", "kind"):
            raise DecodeError(f'unknown field "{k}"', field=f"{path}.{k}")
    ft = None if raw.get("filterTimeout") is None else _duration(raw["filterTimeout"], f"{path}.filterTimeout")
    bt = None if raw.get("bindingTimeout") is None else _duration(raw["bindingTimeout"], f"{path}.bindingTimeout")
    return DynamicResourcesArgs(ft, bt, str(raw.get("filterTimeout") or ""), str(raw.get("bindingTimeout") or ""))


def check_args(args: DynamicResourcesArgs, binding: bool, filter_timeout_gate: bool) -> float:
    """``ValidateDynamicResourcesArgs`` against the gates; returns the binding timeout."""
    if args.filter_timeout is not None:
        if not filter_timeout_gate:
            raise ValueError("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
        if args.filter_timeout < 0:
            raise ValueError(f'filterTimeout: Invalid value: "{args.filter_text}": must be zero or positive')
    if args.binding_timeout is not None:
        if not binding:
            raise ValueError("bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                             "DRAResourceClaimDeviceStatus feature gate is disabled")
        if args.binding_timeout < 1:
            raise ValueError(f'bindingTimeout: Invalid value: "{args.binding_text}": must be at least 1 second')
    return DEFAULT_BINDING_TIMEOUT if args.binding_timeout is None else args.binding_timeout


def wall_time(now: float) -> dt.datetime:
    """A scheduler clock reading as the wall time the API writes."""
    return CLOCK_EPOCH + dt.timedelta(seconds=now)


def timed_out(claim: ResourceClaim, timeout: float, now: float) -> bool:
    """Upstream ``isClaimTimeout``: a device with binding conditions, allocated longer ago
    than the binding timeout."""
    ts = allocation_timestamp(claim.raw)
    if ts is None or not pending_devices(claim.raw):
        return False
    return ts + dt.timedelta(seconds=timeout) < wall_time(now)


def unavailable_after_binding_failure(claim: ResourceClaim, timeout: float, now: float) -> bool:
    """Filter, for an allocated claim: binding failed, or not ready and timed out."""
    try:
        ready = ready_for_binding(claim.name, claim.raw)
    except BindingFailed:
        return True
    return not ready and timed_out(claim, timeout, now)


def has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    return any(pending_devices(c.raw) for c in claims)


def pod_ready(claims: Sequence[ResourceClaim], current: Callable[[ResourceClaim], ResourceClaim | None],
              timeout: float, now: Callable[[], float]) -> bool:
    """Upstream ``isPodReadyForBinding`` over the claims as the cluster has them now;
    raises BindingFailed, or RuntimeError for a timed-out claim or a missing one."""
    for claim in claims:
        cur = current(claim)
        if cur is None:
            raise RuntimeError(f'resourceclaim.resource.k8s.io "{claim.name}" not found')
        if not ready_for_binding(cur.name, cur.raw):
            if timed_out(cur, timeout, now()):
                raise RuntimeError(f"claim {cur.name} binding timeout")
            return False
    return True


def bound_claim(current: ResourceClaim, key: str, allocation: dict[str, Any] | None, pod: Pod,
                allocated_at: str | None) -> dict[str, Any]:
    """The claim object PreBind writes (upstream ``bindClaim``): with the scheduler's
    ``allocation``, the finalizer and ``status.allocation``; the pod in ``reservedFor``;
    ``allocated_at`` (binding conditions on) stamps an allocation that has no timestamp."""
    raw = copy.deepcopy(current.raw)
    status = raw.setdefault("status", {})
    if allocation is not None:
        if current.allocation is not None:
            raise DraWriteError(f"claim {key} got allocated elsewhere in the meantime")
        fins = raw.setdefault("metadata", {}).setdefault("finalizers", [])
        if FINALIZER not in fins:
            fins.append(FINALIZER)
        status["allocation"] = allocation
    status["reservedFor"] = [*(status.get("reservedFor") or []),
                             {"resource": "pods", "name": pod.name, "uid": pod.uid}]
    written = status.get("allocation")
    if allocated_at is not None and isinstance(written, dict) and not written.get("allocationTimestamp"):
        written["allocationTimestamp"] = allocated_at
    return raw
