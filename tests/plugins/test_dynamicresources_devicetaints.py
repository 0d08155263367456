"""Device taints and binding conditions in the structured allocator.

The ``tainted-*`` cases are upstream's table (k8s.io/dynamic-resource-allocation/structured/
allocator_test.go, TestAllocator, since moved to internal/allocatortesting/allocator_testing.go),
with its names and objects: taint-key/taint-value NoSchedule, taint-key/taint-value-2
NoExecute; tolerationNoSchedule = Exists taint-key NoSchedule, tolerationNoExecute = Equal
taint-key taint-value-2 NoExecute; ``deviceTaints`` is the DRADeviceTaints gate. Expected
picks are upstream's ``expectResults`` (none: nil). The binding-conditions pool case is
internal/allocatortesting/lexicographical_testing.go
("lexicographical-sorting-pools-with-binding-conditions"); the result fields (tolerations,
bindingConditions, bindsToNode's node selector) and the ignored ``None`` effect follow
internal/incubating/allocator_incubating.go (``Allocate``, ``taintPreventsAllocation``,
``createNodeSelector``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.devicetaints import DeviceTaint, DeviceToleration, tolerates
from kubesched.api.dra import ResourceClaim, ResourceSlice
from kubesched.plugins.dynamicresources.allocator import Allocator, allocation_result
from kubesched.plugins.dynamicresources.devicefeatures import DeviceFeatures, extend_result
from kubesched.plugins.dynamicresources.explain import explain_failure
from tests.plugins.test_dynamicresources_allocator import A, AB, DRIVER_A, claim, node, req

NS = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
NE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOL_NS = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOL_NE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TAINTS = DeviceFeatures(taints=True)
OFF = DeviceFeatures()


def dev(name: str, *taints: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, **({"taints": list(taints)} if taints else {}), **extra}


def slice_(*devices: dict[str, Any], pool: str = "pool-1", name: str = "slice-1") -> ResourceSlice:
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": {
        "driver": DRIVER_A, "nodeName": "node-1", "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
        "devices": list(devices)}})


def tolerating(r: dict[str, Any], *tols: dict[str, Any]) -> dict[str, Any]:
    r = {**r, "exactly": {**r["exactly"], "tolerations": list(tols)}}
    return r


def first_available(*subs: tuple[str, str]) -> dict[str, Any]:
    return {"name": "req-0", "firstAvailable": [{"name": n, "deviceClassName": c} for n, c in subs]}


def picks(claims: list[ResourceClaim], classes: Any, slices: list[ResourceSlice], f: DeviceFeatures,
          in_use: set[tuple[str, str, str]] | None = None) -> list[list[tuple[str, str, str]]] | None:
    by_name = {c.name: c for c in classes}
    got = Allocator(claims, in_use or set(), by_name.get, slices, f).allocate(node())
    return None if got is None else [[(r, c.pool.name, c.device.name) for r, c in p] for p in got]


ADMIN = {"name": "req-0", "exactly": {"deviceClassName": "class-a", "adminAccess": True}}
ALL = {"name": "req-0", "exactly": {"deviceClassName": "class-a", "allocationMode": "All"}}
IN_USE = {(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")}

TAINT_CASES = [
    ("tainted-two-devices", [req("req-0", "class-a")], A, [dev("device-1", NS), dev("device-2", NE)], TAINTS,
     None, None),
    ("tainted-one-device-two-taints", [req("req-0", "class-a")], A, [dev("device-1", NS, NE)], TAINTS, None, None),
    ("tainted-two-devices-tolerated", [tolerating(req("req-0", "class-a"), TOL_NE)], A,
     [dev("device-1", NS), dev("device-2", NE)], TAINTS, None, [[("req-0", "pool-1", "device-2")]]),
    ("tainted-one-device-two-taints-both-tolerated", [tolerating(req("req-0", "class-a"), TOL_NS, TOL_NE)], A,
     [dev("device-1", NS, NE)], TAINTS, None, [[("req-0", "pool-1", "device-1")]]),
    ("tainted-disabled", [req("req-0", "class-a")], A, [dev("device-1", NS, NE)], OFF, None,
     [[("req-0", "pool-1", "device-1")]]),
    ("tainted-prioritized-list", [first_available(("subreq-0", "class-b"), ("subreq-1", "class-a"))], AB,
     [dev("device-1", NS)], TAINTS, None, None),
    ("tainted-prioritized-list-disabled", [first_available(("subreq-0", "class-b"), ("subreq-1", "class-a"))], AB,
     [dev("device-1", NS)], OFF, None, [[("req-0/subreq-1", "pool-1", "device-1")]]),
    ("tainted-admin-access", [ADMIN], A, [dev("device-1", NS)], TAINTS, IN_USE, None),
    ("tainted-admin-access-disabled", [ADMIN], A, [dev("device-1", NS)], OFF, IN_USE,
     [[("req-0", "pool-1", "device-1")]]),
    ("tainted-all-devices-single", [ALL], A, [dev("device-1", NS)], TAINTS, None, None),
    ("tainted-all-devices-single-disabled", [ALL], A, [dev("device-1", NS)], OFF, None,
     [[("req-0", "pool-1", "device-1")]]),
]


@pytest.mark.parametrize("requests,classes,devices,f,in_use,want",
                         [c[1:] for c in TAINT_CASES], ids=[c[0] for c in TAINT_CASES])
def test_upstream_taint_cases(requests: list[dict[str, Any]], classes: Any, devices: list[dict[str, Any]],
                              f: DeviceFeatures, in_use: Any, want: Any) -> None:
    assert picks([claim("claim-0", *requests)], classes, [slice_(*devices)], f, in_use) == want


def test_a_taint_with_effect_none_does_not_prevent_allocation() -> None:
    """taintPreventsAllocation: only NoSchedule and NoExecute count; None (1.35+) and
    unknown effects are ignored."""
    devices = [dev("device-1", {"key": "k", "effect": "None"}, {"key": "k2", "effect": "SomeFutureEffect"})]
    assert picks([claim("claim-0", req("req-0", "class-a"))], A, [slice_(*devices)], TAINTS) == \
        [[("req-0", "pool-1", "device-1")]]


@pytest.mark.parametrize("tol,taint,want", [
    (DeviceToleration("taint-key", "Exists", "", "NoSchedule"), DeviceTaint("taint-key", "v", "NoSchedule"), True),
    (DeviceToleration("taint-key", "Exists", "", "NoSchedule"), DeviceTaint("taint-key", "v", "NoExecute"), False),
    (DeviceToleration("", "Exists", "", ""), DeviceTaint("any", "v", "NoExecute"), True),
    (DeviceToleration("taint-key", "Equal", "v", ""), DeviceTaint("taint-key", "v", "NoExecute"), True),
    (DeviceToleration("taint-key", "Equal", "v", ""), DeviceTaint("taint-key", "w", "NoExecute"), False),
    (DeviceToleration("other", "Exists", "", ""), DeviceTaint("taint-key", "v", "NoSchedule"), False),
])
def test_tolerates_taint(tol: DeviceToleration, taint: DeviceTaint, want: bool) -> None:
    """resourceclaim.ToleratesTaint: empty effect/key match any; Exists matches any value."""
    assert tolerates(tol, taint) is want


BINDING_POOLS = [
    slice_(dev("device-1", bindingConditions=["Ready"], bindingFailureConditions=["Failed"]), pool="pool-1"),
    slice_(dev("device-2"), pool="pool-3", name="slice-2"),
    slice_(dev("device-3"), pool="pool-2", name="slice-3"),
]


@pytest.mark.parametrize("f,want", [
    # lexicographical-sorting-pools-with-binding-conditions: the feature off, device-1 is never picked
    (DeviceFeatures(taints=True), [[("req-0", "pool-2", "device-3"), ("req-0", "pool-3", "device-2")]]),
    (DeviceFeatures(taints=True, binding=True), [[("req-0", "pool-1", "device-1"), ("req-0", "pool-2", "device-3")]]),
])
def test_devices_with_binding_conditions_need_the_feature(f: DeviceFeatures, want: Any) -> None:
    assert picks([claim("claim-0", req("req-0", "class-a", 2))], A, BINDING_POOLS, f) == want


def test_allocation_result_carries_binding_conditions_tolerations_and_binds_to_node() -> None:
    shared = ResourceSlice.from_dict({"metadata": {"name": "s"}, "spec": {
        "driver": DRIVER_A, "allNodes": True, "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": 1},
        "devices": [dev("device-1", NS, bindingConditions=["Attached"], bindingFailureConditions=["Failed"],
                        bindsToNode=True)]}})
    c = claim("claim-0", tolerating(req("req-0", "class-a"), TOL_NS))
    f = DeviceFeatures(taints=True, binding=True)
    got = Allocator([c], set(), {"class-a": A[0]}.get, [shared], f).allocate(node())
    assert got is not None
    out = extend_result(f, allocation_result(got[0], node()), c, got[0], node())
    assert out["devices"]["results"] == [{
        "request": "req-0", "driver": DRIVER_A, "pool": "pool-1", "device": "device-1",
        "tolerations": [{"key": "taint-key", "operator": "Exists", "effect": "NoSchedule"}],
        "bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}]
    # an allNodes slice gives no node selector; bindsToNode pins the claim to the chosen node
    assert out["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}
    # with the gates off the result is the stable allocator's
    assert extend_result(OFF, allocation_result(got[0], node()), c, got[0], node()) == allocation_result(
        got[0], node())
    assert "nodeSelector" not in allocation_result(got[0], node())


def test_explain_names_untolerated_taints() -> None:
    """kubesched's addition to "cannot allocate all claims" (no upstream counterpart)."""
    a = Allocator([claim("claim-0", req("req-0", "class-a"))], set(), {"class-a": A[0]}.get,
                  [slice_(dev("device-1", NS))], TAINTS)
    assert a.allocate(node()) is None
    assert explain_failure(a, node()) == ("claim default/claim-0: request req-0: 1 of 1 free matching device(s) "
                                          "tainted without toleration or waiting for binding conditions the "
                                          "scheduler may not use, 1 needed")
