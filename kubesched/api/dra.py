"""Dynamic Resource Allocation objects (resource.k8s.io/v1) as the scheduler sees them.

Why this exists: DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate are
what the DynamicResources plugin and its structured allocator read, and a pod's
``spec.resourceClaims`` / ``status.resourceClaimStatuses`` say which claims it needs. Each
object is parsed once, with kube-apiserver's defaulting (a DeviceRequest's
``exactly.allocationMode`` defaults to ExactCount, ``count`` to 1) and the validation
upstream applies (``pkg/apis/resource/validation``), into frozen values; ``raw`` keeps the
(defaulted) dictionary so claims round-trip and PreBind can write them back.

Device attribute and capacity names are stored fully qualified: an unqualified name
(``model``) belongs to the driver's domain (``gpu.example.com/model``), as upstream's CEL
environment and ``matchAttribute`` treat it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.devicetaints import DeviceTaint, DeviceToleration, parse_taints, parse_tolerations
from kubesched.api.drafields import _dns_label, _list, _map, _str
from kubesched.api.drasharing import (
    CapacityPolicy, CounterConsumption, CounterSet, SharedResult, capacity_requests, check_placement, counter_sets,
    device_placement, policy, read_counters, shared_result,
)
from kubesched.api.errors import DecodeError
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.selectors import NodeSelector

API_VERSION = "resource.k8s.io/v1"
FINALIZER = "resource.kubernetes.io/delete-protection"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
EXACT_COUNT = "ExactCount"
ALL = "All"
RESERVED_FOR_MAX = 256  # ResourceClaimReservedForMaxSize
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

AttrValue = tuple[str, Any]  # ("int" | "bool" | "string" | "version", value)


def qualify(name: str, driver: str) -> str:
    """A device attribute/capacity name with its domain (the driver's when unqualified)."""
    return name if "/" in name else f"{driver}/{name}"


def _qualified_name(obj: Any, path: str) -> str:
    s = _str(obj, path)
    domain, sep, ident = s.rpartition("/")
    if not sep or not _DNS_SUBDOMAIN.match(domain) or not _C_IDENT.match(ident) or len(ident) > 32:
        raise DecodeError(f'Invalid value: "{s}": must be a domain and a C identifier, separated by a slash',
                          field=path)
    return s


# -- DeviceClass ---------------------------------------------------------------------------
def _selectors(obj: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, s in enumerate(_list(obj, path)):
        cel = _map(_map(s, f"{path}[{i}]").get("cel"), f"{path}[{i}].cel")
        if not cel:
            raise DecodeError("Required value", field=f"{path}[{i}].cel")
        out.append(_str(cel.get("expression"), f"{path}[{i}].cel.expression"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    raw: dict[str, Any] = field(compare=False, repr=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "DeviceClass":
        meta = _map(raw.get("metadata"), "metadata")
        spec = _map(raw.get("spec"), "spec")
        return cls(_str(meta.get("name"), "metadata.name"), _selectors(spec.get("selectors"), "spec.selectors"),
                   raw)


# -- ResourceSlice -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class Device:
    """Compared and hashed by identity: caches of CEL results are keyed by the device."""

    name: str
    attributes: Mapping[str, AttrValue]  # qualified name -> typed value
    capacity: Mapping[str, Quantity]  # qualified name -> value
    taints: tuple[DeviceTaint, ...] = ()  # read with DRADeviceTaints (kubesched.api.devicetaints)
    binding_conditions: tuple[str, ...] = ()  # read with DRADeviceBindingConditions
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    # DRAPartitionableDevices: counters taken from the pool's counter sets, and where the
    # device is usable when its slice has perDeviceNodeSelection
    consumes_counters: tuple[CounterConsumption, ...] = ()
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    # DRAConsumableCapacity: shareable by several allocations; each capacity's request policy
    allow_multiple_allocations: bool = False
    policies: Mapping[str, CapacityPolicy] = field(default_factory=dict)  # qualified name -> policy
    capacity_names: Mapping[str, str] = field(default_factory=dict)  # qualified -> as the slice spells it


_ATTR_TYPES = {"int": int, "bool": bool, "string": str, "version": str}


def _attribute(obj: Any, path: str) -> AttrValue:
    m = _map(obj, path)
    set_ = [k for k in _ATTR_TYPES if m.get(k) is not None]
    if len(set_) != 1:
        raise DecodeError("exactly one value must be specified", field=path)
    kind = set_[0]
    v = m[kind]
    if not isinstance(v, _ATTR_TYPES[kind]) or (kind == "int" and isinstance(v, bool)):
        raise DecodeError(f"must be of type {kind}, got {v!r}", field=f"{path}.{kind}")
    return kind, v


def _device(obj: Any, path: str, driver: str) -> Device:
    m = _map(obj, path)
    name = _dns_label(m.get("name"), f"{path}.name")
    attrs: dict[str, AttrValue] = {}
    for k, v in _map(m.get("attributes"), f"{path}.attributes").items():
        attrs[qualify(k, driver)] = _attribute(v, f"{path}.attributes[{k}]")
    cap: dict[str, Quantity] = {}
    policies: dict[str, CapacityPolicy] = {}
    spelled: dict[str, str] = {}
    for k, v in _map(m.get("capacity"), f"{path}.capacity").items():
        cm = _map(v, f"{path}.capacity[{k}]")
        if cm.get("value") is None:
            raise DecodeError("Required value", field=f"{path}.capacity[{k}].value")
        qk = qualify(k, driver)
        if qk in spelled and "/" not in k:
            continue  # the driver-qualified spelling of the same capacity takes precedence
        cap[qk] = parse_quantity(cm["value"], field=f"{path}.capacity[{k}].value")
        spelled[qk] = k
        pol = policy(cm.get("requestPolicy"), f"{path}.capacity[{k}].requestPolicy")
        if pol is not None:
            policies[qk] = pol
    if len(attrs) + len(cap) > 32:
        raise DecodeError("Too many: must have at most 32 attributes and capacities combined", field=path)
    consumes = []
    for i, c in enumerate(_list(m.get("consumesCounters"), f"{path}.consumesCounters")):
        cp = f"{path}.consumesCounters[{i}]"
        cm = _map(c, cp)
        consumes.append(CounterConsumption(_dns_label(cm.get("counterSet"), f"{cp}.counterSet"),
                                           read_counters(cm.get("counters"), f"{cp}.counters")))
    node_name, selector, all_nodes = device_placement(m, path)
    return Device(name, attrs, cap, taints=parse_taints(m.get("taints"), f"{path}.taints"),
                  binding_conditions=_strings(m.get("bindingConditions"), f"{path}.bindingConditions"),
                  binding_failure_conditions=_strings(m.get("bindingFailureConditions"),
                                                      f"{path}.bindingFailureConditions"),
                  binds_to_node=m.get("bindsToNode") is True, consumes_counters=tuple(consumes),
                  node_name=node_name, node_selector=selector, all_nodes=all_nodes,
                  allow_multiple_allocations=m.get("allowMultipleAllocations") is True, policies=policies,
                  capacity_names=spelled)


def _strings(obj: Any, path: str) -> tuple[str, ...]:
    return tuple(_str(x, f"{path}[{i}]") for i, x in enumerate(_list(obj, path)))


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    node_selector: NodeSelector | None
    all_nodes: bool
    devices: tuple[Device, ...]
    raw: dict[str, Any] = field(compare=False, repr=False)
    per_device_node_selection: bool = False  # DRAPartitionableDevices
    shared_counters: tuple[CounterSet, ...] = ()  # DRAPartitionableDevices

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ResourceSlice":
        meta = _map(raw.get("metadata"), "metadata")
        spec = _map(raw.get("spec"), "spec")
        driver = _str(spec.get("driver"), "spec.driver")
        if not _DNS_SUBDOMAIN.match(driver):
            raise DecodeError(f'Invalid value: "{driver}": must be a DNS subdomain', field="spec.driver")
        pool = _map(spec.get("pool"), "spec.pool")
        count = pool.get("resourceSliceCount")
        gen = pool.get("generation", 0)
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise DecodeError(f"must be greater than zero, got {count!r}", field="spec.pool.resourceSliceCount")
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
            raise DecodeError(f"must be a non-negative integer, got {gen!r}", field="spec.pool.generation")
        node_name = _str(spec.get("nodeName"), "spec.nodeName", required=False)
        sel_raw = spec.get("nodeSelector")
        all_nodes = spec.get("allNodes") is True
        per_device = spec.get("perDeviceNodeSelection") is True
        shared = counter_sets(spec.get("sharedCounters"))
        chosen = sum((bool(node_name), sel_raw is not None, all_nodes, per_device))
        if chosen != 1 and not (shared and chosen == 0):
            raise DecodeError("exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` "
                              "is required", field="spec")
        selector = NodeSelector.parse(sel_raw, "spec.nodeSelector") if sel_raw is not None else None
        devices = tuple(_device(d, f"spec.devices[{i}]", driver)
                        for i, d in enumerate(_list(spec.get("devices"), "spec.devices")))
        seen: set[str] = set()
        for i, d in enumerate(devices):
            if d.name in seen:
                raise DecodeError(f'Duplicate value: "{d.name}"', field=f"spec.devices[{i}].name")
            seen.add(d.name)
            check_placement(d.node_name, d.node_selector, d.all_nodes, per_device, f"spec.devices[{i}]")
        return cls(_str(meta.get("name"), "metadata.name"), driver, _str(pool.get("name"), "spec.pool.name"),
                   gen, count, node_name, selector, all_nodes, devices, raw, per_device, shared)


# -- claims ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ExactRequest:
    """An ``exactly`` request or one ``firstAvailable`` subrequest (same fields)."""

    name: str  # "req" or "req/sub"
    device_class_name: str
    selectors: tuple[str, ...]
    allocation_mode: str
    count: int
    admin_access: bool = False
    tolerations: tuple[DeviceToleration, ...] = ()  # read with DRADeviceTaints
    # DRAConsumableCapacity: ``capacity.requests`` (name as written -> amount); None: not set
    capacity: tuple[tuple[str, Quantity], ...] | None = None


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: ExactRequest | None
    first_available: tuple[ExactRequest, ...]


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...]  # empty: every request of the claim
    match_attribute: str


def default_exact(obj: dict[str, Any]) -> None:
    """API defaulting of an ExactDeviceRequest / DeviceSubRequest, in place."""
    obj.setdefault("allocationMode", EXACT_COUNT)
    if obj["allocationMode"] == EXACT_COUNT:
        obj.setdefault("count", 1)


def default_claim_spec(spec: Any) -> None:
    """API defaulting of a ResourceClaimSpec, in place."""
    if not isinstance(spec, dict):
        return
    devices = spec.get("devices")
    for r in (devices.get("requests") or []) if isinstance(devices, dict) else []:
        if isinstance(r, dict):
            if isinstance(r.get("exactly"), dict):
                default_exact(r["exactly"])
            for s in r.get("firstAvailable") or []:
                if isinstance(s, dict):
                    default_exact(s)


def _exact(obj: Any, path: str, name: str) -> ExactRequest:
    m = _map(obj, path)
    cls_name = _str(m.get("deviceClassName"), f"{path}.deviceClassName")
    mode = m.get("allocationMode", EXACT_COUNT)
    count = m.get("count")
    if mode == EXACT_COUNT:
        count = 1 if count is None else count
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise DecodeError(f"Invalid value: {count!r}: must be greater than zero", field=f"{path}.count")
    elif mode == ALL:
        if count is not None:
            raise DecodeError("Invalid value: must not be set when allocationMode is All", field=f"{path}.count")
        count = 0
    else:
        raise DecodeError(f'Unsupported value: "{mode}": supported values: "All", "ExactCount"',
                          field=f"{path}.allocationMode")
    return ExactRequest(name, cls_name, _selectors(m.get("selectors"), f"{path}.selectors"), mode, count,
                        m.get("adminAccess") is True, parse_tolerations(m.get("tolerations"), f"{path}.tolerations"),
                        capacity_requests(m.get("capacity"), f"{path}.capacity"))


def _request(obj: Any, path: str) -> DeviceRequest:
    m = _map(obj, path)
    name = _dns_label(m.get("name"), f"{path}.name")
    has_exact, subs = m.get("exactly") is not None, _list(m.get("firstAvailable"), f"{path}.firstAvailable")
    if has_exact == bool(subs):
        raise DecodeError("exactly one of `exactly` or `firstAvailable` is required", field=path)
    if has_exact:
        return DeviceRequest(name, _exact(m["exactly"], f"{path}.exactly", name), ())
    out: list[ExactRequest] = []
    for i, s in enumerate(subs):
        sp = f"{path}.firstAvailable[{i}]"
        sub = _dns_label(_map(s, sp).get("name"), f"{sp}.name")
        if any(x.name == f"{name}/{sub}" for x in out):
            raise DecodeError(f'Duplicate value: "{sub}"', field=f"{sp}.name")
        out.append(_exact(s, sp, f"{name}/{sub}"))
    return DeviceRequest(name, None, tuple(out))


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]

    @classmethod
    def parse(cls, obj: Any, path: str) -> "ClaimSpec":
        devices = _map(_map(obj, path).get("devices"), f"{path}.devices")
        reqs = tuple(_request(r, f"{path}.devices.requests[{i}]")
                     for i, r in enumerate(_list(devices.get("requests"), f"{path}.devices.requests")))
        names = {r.name for r in reqs}
        if len(names) != len(reqs):
            raise DecodeError("Duplicate value: request names must be unique", field=f"{path}.devices.requests")
        known = names | {s.name for r in reqs for s in r.first_available}
        cons = []
        for i, c in enumerate(_list(devices.get("constraints"), f"{path}.devices.constraints")):
            cp = f"{path}.devices.constraints[{i}]"
            cm = _map(c, cp)
            rs = tuple(_str(x, f"{cp}.requests[{j}]") for j, x in enumerate(_list(cm.get("requests"), f"{cp}.requests")))
            for j, r in enumerate(rs):
                if r not in known:
                    raise DecodeError(f'Invalid value: "{r}": must be the name of a request in the claim or the '
                                      "name of a request and a subrequest separated by '/'",
                                      field=f"{cp}.requests[{j}]")
            if cm.get("matchAttribute") is None:
                raise DecodeError("Required value", field=f"{cp}.matchAttribute")
            cons.append(DeviceConstraint(rs, _qualified_name(cm.get("matchAttribute"), f"{cp}.matchAttribute")))
        return cls(reqs, tuple(cons))


@dataclass(frozen=True, slots=True)
class ConsumerRef:
    resource: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    spec: ClaimSpec
    allocation: dict[str, Any] | None  # status.allocation as the API has it
    allocated_devices: tuple[tuple[str, str, str], ...]  # (driver, pool, device) of the allocation
    node_selector: NodeSelector | None  # status.allocation.nodeSelector
    reserved_for: tuple[ConsumerRef, ...]
    owner_uid: str  # the controlling owner's uid ("" if none)
    deleting: bool
    raw: dict[str, Any] = field(compare=False, repr=False)
    shared_results: tuple[SharedResult, ...] = ()  # results with a shareID (DRAConsumableCapacity)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ResourceClaim":
        raw = copy.deepcopy(raw)
        default_claim_spec(raw.get("spec"))
        meta = _map(raw.get("metadata"), "metadata")
        name, ns = _str(meta.get("name"), "metadata.name"), str(meta.get("namespace") or "default")
        status = _map(raw.get("status"), "status")
        alloc = status.get("allocation")
        devs: list[tuple[str, str, str]] = []
        shares: list[SharedResult] = []
        sel = None
        if alloc is not None:
            am = _map(alloc, "status.allocation")
            results = _list(_map(am.get("devices"), "status.allocation.devices").get("results"),
                            "status.allocation.devices.results")
            for i, r in enumerate(results):
                rp = f"status.allocation.devices.results[{i}]"
                rm = _map(r, rp)
                devs.append((_str(rm.get("driver"), f"{rp}.driver"), _str(rm.get("pool"), f"{rp}.pool"),
                             _str(rm.get("device"), f"{rp}.device")))
                shared = shared_result(rm, rp, devs[-1])
                if shared is not None:
                    shares.append(shared)
            if am.get("nodeSelector") is not None:
                sel = NodeSelector.parse(am["nodeSelector"], "status.allocation.nodeSelector")
        reserved = []
        for i, r in enumerate(_list(status.get("reservedFor"), "status.reservedFor")):
            rm = _map(r, f"status.reservedFor[{i}]")
            reserved.append(ConsumerRef(_str(rm.get("resource"), f"status.reservedFor[{i}].resource"),
                                        _str(rm.get("name"), f"status.reservedFor[{i}].name"),
                                        _str(rm.get("uid"), f"status.reservedFor[{i}].uid", required=False)))
        if len(reserved) > RESERVED_FOR_MAX:
            raise DecodeError(f"Too many: {len(reserved)}: must have at most {RESERVED_FOR_MAX} items",
                              field="status.reservedFor")
        owner = next((str(o.get("uid") or "") for o in _list(meta.get("ownerReferences"), "metadata.ownerReferences")
                      if isinstance(o, Mapping) and o.get("controller") is True), "")
        return cls(ns, name, str(meta.get("uid") or f"claim-{ns}-{name}"), ClaimSpec.parse(raw.get("spec"), "spec"),
                   alloc, tuple(devs), sel, tuple(reserved), owner, bool(meta.get("deletionTimestamp")), raw,
                   tuple(shares))

    def reserved_for_pod(self, pod_uid: str) -> bool:
        """Upstream ``resourceclaim.IsReservedForPod``."""
        return any(r.resource == "pods" and r.uid == pod_uid for r in self.reserved_for)

    def can_be_reserved(self) -> bool:
        """Upstream ``resourceclaim.CanBeReserved``."""
        return len(self.reserved_for) < RESERVED_FOR_MAX


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    spec: ClaimSpec
    raw: dict[str, Any] = field(compare=False, repr=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ResourceClaimTemplate":
        raw = copy.deepcopy(raw)
        meta = _map(raw.get("metadata"), "metadata")
        tspec = _map(raw.get("spec"), "spec")
        default_claim_spec(tspec.get("spec"))
        return cls(str(meta.get("namespace") or "default"), _str(meta.get("name"), "metadata.name"),
                   ClaimSpec.parse(tspec.get("spec"), "spec.spec"), raw)


def parse_dra_object(raw: dict[str, Any]) -> Any:
    """Parse one DRA object of any of the four kinds."""
    kind = raw.get("kind")
    if kind == "DeviceClass":
        return DeviceClass.from_dict(raw)
    if kind == "ResourceSlice":
        return ResourceSlice.from_dict(raw)
    if kind == "ResourceClaim":
        return ResourceClaim.from_dict(raw)
    if kind == "ResourceClaimTemplate":
        return ResourceClaimTemplate.from_dict(raw)
    raise DecodeError(f"not a DRA kind: {kind}", field="kind")


DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
