"""Device taints and binding conditions in the allocator (DRADeviceTaints,
DRADeviceBindingConditions), kept apart from the search itself.

Why this exists: with either gate on, upstream's scheduler allocates with an allocator
variant that knows these device fields (``structured/internal/incubating`` and
``experimental``, ``allocator_*.go``):

- ``isSelectable``: without DRADeviceBindingConditions (and DRAResourceClaimDeviceStatus) a
  device with ``bindingConditions`` is never picked;
- ``allocateDevice``: with DRADeviceTaints a device is picked only when no ``NoSchedule`` or
  ``NoExecute`` taint of it is left untolerated by the request (``taintPreventsAllocation``);
- the allocation result carries the request's ``tolerations`` and, with binding conditions,
  the device's ``bindingConditions``/``bindingFailureConditions``; a device with
  ``bindsToNode`` restricts the claim to the chosen node (``createNodeSelector``).

With both gates off (1.34, 1.35 by default) none of this runs and the allocator behaves
exactly as the stable variant does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.api.devicetaints import taint_prevents_allocation
from kubesched.api.dra import Device, ExactRequest, ResourceClaim
from kubesched.api.objects import Node
from kubesched.framework.features import Features
from kubesched.framework.features.features import step_at
from kubesched.plugins.dynamicresources.pools import Candidate


@dataclass(frozen=True, slots=True)
class DeviceFeatures:
    taints: bool = False  # DRADeviceTaints: device taints prevent allocation
    taint_rules: bool = False  # DeviceTaintRules add taints (DRADeviceTaintRules; before 1.35 DRADeviceTaints)
    binding: bool = False  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus

    @property
    def extended(self) -> bool:
        """The allocator variant that reads taints and binding conditions is in use."""
        return self.taints or self.binding

    @classmethod
    def of(cls, fts: Features) -> "DeviceFeatures":
        rules_gate = "DRADeviceTaintRules" if step_at("DRADeviceTaintRules", fts.version) else "DRADeviceTaints"
        return cls(fts.enabled("DRADeviceTaints"), fts.enabled(rules_gate),
                   fts.enabled("DRADeviceBindingConditions") and fts.enabled("DRAResourceClaimDeviceStatus"))


OFF = DeviceFeatures()


def excluded(f: DeviceFeatures, device: Device) -> bool:
    """``isSelectable``'s first check: binding conditions without the feature."""
    return f.extended and not f.binding and bool(device.binding_conditions)


def tainted(f: DeviceFeatures, req: ExactRequest, device: Device) -> bool:
    """``allocateDevice``'s taint check (only with DRADeviceTaints)."""
    return f.taints and bool(device.taints) and taint_prevents_allocation(device.taints, req.tolerations)


def _request(claim: ResourceClaim, name: str) -> ExactRequest | None:
    for r in claim.spec.requests:
        for q in ((r.exactly,) if r.exactly is not None else r.first_available):
            if q is not None and q.name == name:
                return q
    return None


def extend_result(f: DeviceFeatures, out: dict[str, Any], claim: ResourceClaim,
                  picks: list[tuple[str, Candidate]], node: Node) -> dict[str, Any]:
    """Add what the extended allocator writes to the result ``allocation_result`` built."""
    if not f.extended:
        return out
    for r, (req_name, c) in zip(out["devices"]["results"], picks):
        req = _request(claim, req_name)
        if req is not None and req.tolerations:
            r["tolerations"] = [_toleration(t) for t in req.tolerations]
        if f.binding and c.device.binding_conditions:
            r["bindingConditions"] = list(c.device.binding_conditions)
            r["bindingFailureConditions"] = list(c.device.binding_failure_conditions)
    if f.binding and any(c.device.binds_to_node for _, c in picks):
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}
    return out


def _toleration(t: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.key:
        out["key"] = t.key
    out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    return out
