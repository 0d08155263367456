"""Consumable capacity (DRAConsumableCapacity) in the structured allocator, ported from
upstream's shared allocator table
(k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
the ``consumable-capacity-*`` cases). Names as upstream's: driver-a, pool-1, node-1,
device-1, capacity-0; ``withCapacityRequestPolicyRange`` is the policy default 2, validRange
min 2 / step 2 / max 4; ``withCapacityRequestPolicyValidValues(d, ...)`` is default d and
validValues [d, extra...]. Upstream's share ID is a fixed UID in its tests; here the
allocation result gets the IDs the test hands out. Expected results are upstream's
``expectResults`` / ``expectError`` for each case (``[]`` there: no allocation, None here).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, allocation_result
from kubesched.plugins.dynamicresources.sharing import AllocatedState, Sharing

A = "driver-a"
ON = Sharing(consumable=True)
SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
RANGE = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}


def node() -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                           "status": {"allocatable": {"cpu": "1", "pods": "10"}}})


def cls(multi: bool | None = True) -> DeviceClass:
    expr = f'device.driver == "{A}"'
    if multi is not None:
        expr += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    return DeviceClass.from_dict({"metadata": {"name": "class-a"},
                                  "spec": {"selectors": [{"cel": {"expression": expr}}]}})


def dev(name: str, value: str | None = None, policy: dict[str, Any] | None = None, multi: bool = True,
        cap_name: str = "capacity-0", **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, **extra}
    if multi:
        d["allowMultipleAllocations"] = True
    if value is not None:
        c: dict[str, Any] = {"value": value}
        if policy is not None:
            c["requestPolicy"] = policy
        d["capacity"] = {cap_name: c}
    return d


def valid_values(default: str, *extra: str) -> dict[str, Any]:
    return {"default": default, "validValues": [default, *extra]}


def slices(*devices: dict[str, Any]) -> list[ResourceSlice]:
    return [ResourceSlice.from_dict({"metadata": {"name": "slice-1"}, "spec": {
        "driver": A, "nodeName": "node-1", "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": 1},
        "devices": list(devices)}})]


def exact(name: str, amount: str | None = None, mode: str = "ExactCount") -> dict[str, Any]:
    e: dict[str, Any] = {"deviceClassName": "class-a", "allocationMode": mode}
    if mode == "ExactCount":
        e["count"] = 1
    if amount is not None:
        e["capacity"] = {"requests": {"capacity-0": amount}}
    return {"name": name, "exactly": e}


def claim(name: str, *requests: dict[str, Any], constraints: list[Any] | None = None) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return ResourceClaim.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}})


def shared(request: str, device: str, consumed: str | None) -> dict[str, Any]:
    r: dict[str, Any] = {"request": request, "driver": A, "pool": "pool-1", "device": device, "shareID": SHARE}
    if consumed is not None:
        r["consumedCapacity"] = {"capacity-0": consumed}
    return r


def local(*results: dict[str, Any]) -> dict[str, Any]:
    return {"devices": {"results": list(results)}, "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}


def allocate(claims: list[ResourceClaim], sl: list[ResourceSlice], klass: DeviceClass | None = None,
             capacity: dict[tuple[str, str, str], dict[str, Any]] | None = None,
             sharing: Sharing = ON) -> list[dict[str, Any]] | None:
    n = node()
    state = AllocatedState(set(), set(), {d: {k: v for k, v in c.items()} for d, c in (capacity or {}).items()})
    k = klass or cls()
    alloc = Allocator(claims, set(), {k.name: k}.get, sl, sharing=sharing, state=state)
    picks = alloc.allocate(n)
    if picks is None:
        return None
    return [allocation_result(p, n, c, sharing, lambda: SHARE) for p, c in zip(picks, claims)]


TWO_CLAIMS_ONE_EACH = [claim("claim-0", exact("req-0", "1")), claim("claim-1", exact("req-0", "1"))]
TWO_CLAIMS_PLAIN = [claim("claim-0", exact("req-0")), claim("claim-1", exact("req-0"))]

CASES = [
    ("range-policy-with-capacity-request", TWO_CLAIMS_ONE_EACH, [dev("device-1", "4", RANGE)],
     [local(shared("req-0", "device-1", "2")), local(shared("req-0", "device-1", "2"))]),
    ("range-policy-step", [claim("claim-0", exact("req-0", "3"))], [dev("device-1", "4", RANGE)],
     [local(shared("req-0", "device-1", "4"))]),
    ("valid-values-policy", [claim("claim-0", exact("req-0", "2"))], [dev("device-1", "4", valid_values("1", "2"))],
     [local(shared("req-0", "device-1", "2"))]),
    ("valid-values-policy-round-up", [claim("claim-0", exact("req-0", "2"))],
     [dev("device-1", "3", valid_values("1", "3"))], [local(shared("req-0", "device-1", "3"))]),
    ("violates-zero-request-policy", [claim("claim-0", exact("req-0", "1"))],
     [dev("device-1", "1", valid_values("0"))], None),
    ("exceeded-consumable-capacity-request",
     [claim("claim-0", exact("req-0", "1")), claim("claim-1", exact("req-0", "2"))], [dev("device-1", "2", RANGE)],
     None),
    ("request-over-max-sharing-policy", [claim("claim-0", exact("req-0", "6"))], [dev("device-1", "10", RANGE)], None),
    ("missing-capacity-request", [claim("claim-0", exact("req-0", "1"))],
     [dev("device-1", "1", cap_name="capacity-1")], None),
    ("allocation-mode-all-with-missing-capacity-request", [claim("claim-0", exact("req-0", "1", "All"))],
     [dev("device-1", "1", cap_name="capacity-1")], None),
    ("without-capacity-without-capacity-request", TWO_CLAIMS_PLAIN, [dev("device-1")],
     [local(shared("req-0", "device-1", None)), local(shared("req-0", "device-1", None))]),
    ("without-policy-without-capacity-request", TWO_CLAIMS_PLAIN, [dev("device-1", "1"), dev("device-2", "1")],
     [local(shared("req-0", "device-1", "1")), local(shared("req-0", "device-2", "1"))]),
    ("without-policy-without-capacity-request-block", TWO_CLAIMS_PLAIN, [dev("device-1", "2")], None),
    ("without-policy-with-capacity-request", TWO_CLAIMS_ONE_EACH, [dev("device-1", "2")],
     [local(shared("req-0", "device-1", "1")), local(shared("req-0", "device-1", "1"))]),
    ("with-policy-without-capacity-request", TWO_CLAIMS_PLAIN, [dev("device-1", "4", RANGE)],
     [local(shared("req-0", "device-1", "2")), local(shared("req-0", "device-1", "2"))]),
    ("with-zero-request-policy", TWO_CLAIMS_PLAIN, [dev("device-1", "1", valid_values("0"))],
     [local(shared("req-0", "device-1", "0")), local(shared("req-0", "device-1", "0"))]),
    ("allocation-mode-all-filter-out-no-capacity", [claim("claim-0", exact("req-0", "2", "All"))],
     [dev("device-1", "2"), dev("device-2")], [local(shared("req-0", "device-1", "2"))]),
    ("allocation-mode-all-filter-out-insufficient-capacity", [claim("claim-0", exact("req-0", "2", "All"))],
     [dev("device-1", "2"), dev("device-2", "1")], [local(shared("req-0", "device-1", "2"))]),
]


@pytest.mark.parametrize(("claims", "devices", "want"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_consumable_capacity(claims: list[ResourceClaim], devices: list[dict[str, Any]],
                             want: list[dict[str, Any]] | None) -> None:
    assert allocate(claims, slices(*devices)) == want


@pytest.mark.parametrize(("device_2_range", "want_device"), [(False, "device-1"), (True, "device-2")],
                         ids=["use-remaining", "next-device"])
def test_with_allocated_capacity(device_2_range: bool, want_device: str) -> None:
    """consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining /
    -next-device: 2 of device-1's capacity is consumed by an earlier allocation."""
    used = {(A, "pool-1", "device-1"): {f"{A}/capacity-0": 2}}
    devices = [dev("device-1", "4" if not device_2_range else "2", RANGE)]
    if device_2_range:
        devices.append(dev("device-2", "2", RANGE))
    assert allocate([claim("claim-0", exact("req-0", "2"))], slices(*devices), capacity=used) == \
        [local(shared("req-0", want_device, "2"))]
    if not device_2_range:  # ...-with-no-available-consumable-capacity
        assert allocate([claim("claim-0", exact("req-0", "2"))], slices(dev("device-1", "2", RANGE)),
                        capacity=used) is None


def test_allocation_mode_all_with_capacity() -> None:
    """consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient /
    -allocating-insufficient / -in-use-insufficient: ``All`` skips devices whose capacity is
    used up by earlier allocations, but fails when this claim used it up."""
    plain = cls(None)
    used = {(A, "pool-1", "device-1"): {f"{A}/capacity-0": 1}}
    every = [claim("claim-0", exact("req-0", "1", "All"))]
    assert allocate(every, slices(dev("device-1", "2"), dev("device-2", "1")), plain, used) == \
        [local(shared("req-0", "device-1", "1"), shared("req-0", "device-2", "1"))]
    both = [claim("claim-0", exact("req-0", "1"), exact("req-1", "1", "All"))]
    assert allocate(both, slices(dev("device-1", "1"), dev("device-2", "1")), plain) is None
    assert allocate(every, slices(dev("device-1", "1"), dev("device-2", "1")), plain, used) == \
        [local(shared("req-0", "device-2", "1"))]


def test_dedicated_devices() -> None:
    """consumable-capacity-dedicated-device-with-consumable-capacity-request /
    -with-multiple-consumable-capacity-request, allow-multiple-allocations-exclude-multi-
    allocatable-device-by-class-selector / -not-allocate-multi-allocatable-device-which-already-
    dedicated / -not-allocate-dedicated-device-which-change-from-multi-allocatable."""
    dedicated = cls(False)
    plain = {"request": "req-0", "driver": A, "pool": "pool-1", "device": "device-1"}
    assert allocate([claim("claim-0", exact("req-0", "1"))], slices(dev("device-1", "1", multi=False)),
                    dedicated) == [local(plain)]
    assert allocate(TWO_CLAIMS_ONE_EACH, slices(dev("device-1", "2", RANGE, multi=False)), dedicated) is None
    assert allocate([claim("claim-0", exact("req-0", "1"))], slices(dev("device-1", "1")), dedicated) is None
    one = [claim("claim-0", exact("req-0", "1"))]
    k = cls()
    alloc = Allocator(one, {(A, "pool-1", "device-1")}, {k.name: k}.get, slices(dev("device-1", "2", RANGE)), sharing=ON,
                      state=AllocatedState({(A, "pool-1", "device-1")}))
    assert alloc.allocate(node()) is None
    assert allocate(one, slices(dev("device-1", "2", RANGE, multi=False)), k,
                    {(A, "pool-1", "device-1"): {f"{A}/capacity-0": 1}}) is None


def _counted(name: str, uses: dict[str, dict[str, str]], policy: dict[str, Any] | None = None,
             policy_on: str = "") -> dict[str, Any]:
    """A shareable device whose capacity is the counters it consumes (upstream's fromCounters)."""
    capacity: dict[str, Any] = {k: {"value": v} for c in uses.values() for k, v in c.items()}
    if policy is not None:
        capacity[policy_on]["requestPolicy"] = policy
    return {"name": name, "allowMultipleAllocations": True, "capacity": capacity,
            "consumesCounters": [{"counterSet": s, "counters": {k: {"value": v} for k, v in c.items()}}
                                 for s, c in uses.items()]}


def _pool(devices: list[dict[str, Any]], sets: dict[str, dict[str, str]]) -> list[ResourceSlice]:
    pool = {"name": "pool-1", "generation": 1, "resourceSliceCount": 2}
    return [ResourceSlice.from_dict({"metadata": {"name": "slice-1"}, "spec": {
                "driver": A, "nodeName": "node-1", "pool": pool, "devices": devices}}),
            ResourceSlice.from_dict({"metadata": {"name": "slice-2"}, "spec": {
                "driver": A, "nodeName": "node-1", "pool": pool, "sharedCounters": [
                    {"name": n, "counters": {k: {"value": v} for k, v in c.items()}} for n, c in sets.items()]}})]


def _first_available(name: str, *subs: tuple[str, str, str | None]) -> dict[str, Any]:
    out = []
    for n, expr, amount in subs:
        s: dict[str, Any] = {"name": n, "deviceClassName": "class-a", "selectors": [{"cel": {"expression": expr}}]}
        if amount is not None:
            s["capacity"] = {"requests": {"capacity-0": amount}}
        out.append(s)
    return {"name": name, "firstAvailable": out}


def test_with_partitionable_device() -> None:
    """allow-multiple-allocations-with-partitionable-device: counters rule out device-2;
    each result records the capacity it consumes (the whole, without a request)."""
    devices = [_counted("device-1", {"counter-set-1": {"memory": "4Gi"}}),
               _counted("device-2", {"counter-set-1": {"memory": "6Gi"}}),
               _counted("device-3", {"counter-set-1": {"memory": "4Gi"}})]
    mem = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'
    c = claim("claim-0", exact("req-0"), _first_available("req-1", ("subreq-0", mem.format("6Gi"), None),
                                                          ("subreq-1", mem.format("4Gi"), None)))
    got = allocate([c], _pool(devices, {"counter-set-1": {"memory": "8Gi"}}), sharing=Sharing(True, True))
    r0, r1 = shared("req-0", "device-1", None), shared("req-1/subreq-1", "device-3", None)
    r0["consumedCapacity"] = r1["consumedCapacity"] = {"memory": "4Gi"}
    assert got == [local(r0, r1)]


def test_with_partitionable_device_multiple_capacity_pools() -> None:
    """consumable-capacity-with-partitionable-device-multiple-capacity-pools: req-0 and
    req-1/subreq-1 share device-1, req-2 gets device-3 (device-2 would exceed counter-set-1);
    capacity-1 is consumed at its policy's default 2."""
    def d(name: str, c0: str) -> dict[str, Any]:
        return _counted(name, {"counter-set-1": {"capacity-0": c0}, "counter-set-2": {"capacity-1": "4"}},
                        RANGE, "capacity-1")
    cap = 'device.capacity["driver-a"]["capacity-0"].compareTo(quantity("{}")) >= 0'
    c = claim("claim-0", exact("req-0", "1"), exact("req-2", "2"),
              _first_available("req-1", ("subreq-0", cap.format("4"), "1"), ("subreq-1", cap.format("2"), "1")))
    got = allocate([c], _pool([d("device-1", "2"), d("device-2", "4"), d("device-3", "2")],
                              {"counter-set-1": {"capacity-0": "4"}, "counter-set-2": {"capacity-1": "8"}}),
                   klass=cls(None), sharing=Sharing(True, True))
    results = [shared("req-0", "device-1", None), shared("req-2", "device-3", None),
               shared("req-1/subreq-1", "device-1", None)]
    for r, c0 in zip(results, ("1", "2", "1")):
        r["consumedCapacity"] = {"capacity-0": c0, "capacity-1": "2"}
    assert got == [local(*results)]


def test_backtrack_with_match_attribute() -> None:
    """consumable-capacity-with-multi-allocatable-device-backtrack: claim-0's two requests
    must share one stringAttribute, so both land on device-1 (4); claim-1 takes device-2."""
    def d(name: str, value: str, attr: str) -> dict[str, Any]:
        return dev(name, value, RANGE, attributes={"stringAttribute": {"string": attr}})
    claims = [claim("claim-0", exact("req-0", "2"), exact("req-1", "2"),
                    constraints=[{"matchAttribute": f"{A}/stringAttribute"}]),
              claim("claim-1", exact("req-0", "2"))]
    got = allocate(claims, slices(d("device-2", "2", "stringAttributeValue1"),
                                  d("device-1", "4", "stringAttributeValue2")), klass=cls(None))
    assert got == [local(shared("req-0", "device-1", "2"), shared("req-1", "device-1", "2")),
                   local(shared("req-0", "device-2", "2"))]


def test_with_subrequest() -> None:
    """consumable-capacity-multi-allocatable-device-with-subrequest: 4 exceeds the range's
    max, 2 fits."""
    c = ResourceClaim.from_dict({"metadata": {"name": "claim-0"}, "spec": {"devices": {"requests": [
        {"name": "req-0", "firstAvailable": [
            {"name": "subreq-0", "deviceClassName": "class-a", "capacity": {"requests": {"capacity-0": "4"}}},
            {"name": "subreq-1", "deviceClassName": "class-a", "capacity": {"requests": {"capacity-0": "2"}}}]}]}}})
    assert allocate([c], slices(dev("device-1", "2", RANGE))) == [local(shared("req-0/subreq-1", "device-1", "2"))]


def test_allocating_capacity_counts_within_one_claim() -> None:
    """consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient
    (its first part): req-0 takes 1 of device-1's 2; ``All`` then still finds 1 left on
    device-1 and 1 on device-2."""
    c = claim("claim-0", exact("req-0", "1"), exact("req-1", "1", "All"))
    got = allocate([c], slices(dev("device-1", "2"), dev("device-2", "1")), klass=cls(None))
    assert got == [local(shared("req-0", "device-1", "1"), shared("req-1", "device-1", "1"),
                         shared("req-1", "device-2", "1"))]


def test_capacity_request_with_the_gate_off() -> None:
    """consumable-capacity-disabled-feature (another beta feature on): an error naming the request."""
    with pytest.raises(AllocationError, match="claim default/claim-0, request req-0: has capacity requests, "
                                              "but the DRAConsumableCapacity feature is disabled"):
        allocate([claim("claim-0", exact("req-0", "1"))], slices(dev("device-1", "1", multi=False)),
                 klass=cls(None), sharing=Sharing(partitionable=True))


def test_shared_results_do_not_make_the_device_in_use() -> None:
    """GatherAllocatedState with the gate on: a result with a shareID adds its consumed
    capacity; the device stays available while capacity is left (upstream
    dynamicresources allocateddevices.go)."""
    from kubesched.plugins.dynamicresources.sharing import allocated_state

    class Lister:
        in_flight: dict[str, ResourceClaim] = {}

        def resource_claims(self) -> list[ResourceClaim]:
            return [ResourceClaim.from_dict({"metadata": {"name": "old"}, "spec": {"devices": {"requests": [
                exact("req-0")]}}, "status": {"allocation": {"devices": {"results": [
                    shared("req-0", "device-1", "1"), {"request": "req-0", "driver": A, "pool": "pool-1",
                                                       "device": "device-2"}]}}}})]

    st = allocated_state(Lister(), True)  # type: ignore[arg-type]
    assert st.exclusive == {(A, "pool-1", "device-2")}
    assert st.capacity == {(A, "pool-1", "device-1"): {f"{A}/capacity-0": 1}}
    off = allocated_state(Lister(), False)  # type: ignore[arg-type]
    assert off.exclusive == {(A, "pool-1", "device-1"), (A, "pool-1", "device-2")}
