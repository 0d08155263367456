"""Partitionable devices (DRAPartitionableDevices) in the structured allocator, ported from
upstream's shared allocator table
(k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
the ``partitionable-devices-*`` cases). Names as upstream's: driver-a, pool-1, node-1
(region-1), counter-set-1, class-a (selector ``device.driver == "driver-a"``). A device
built ``fromCounters`` there has the counters it consumes as its capacity; that is spelled
out here, and subrequests are "subreq-N" (API validation refuses upstream's "subReq-N"). Expected
results are upstream's ``expectResults`` for each case.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, allocation_result
from kubesched.plugins.dynamicresources.sharing import AllocatedState, Sharing

A, B = "driver-a", "driver-b"
ON = Sharing(partitionable=True)
OFF_BUT_OTHER = Sharing(consumable=True)  # upstream's experimental allocator with the gate off
LOCAL = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


def node(name: str = "node-1", region: str = "region-1") -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"region": region, "planet": "earth"}},
                           "status": {"allocatable": {"cpu": "1", "pods": "10"}}})


def cls(name: str, driver: str) -> DeviceClass:
    return DeviceClass.from_dict({"metadata": {"name": name},
                                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})


def dev(name: str, *uses: tuple[str, dict[str, str]], capacity: bool = True, **extra: Any) -> dict[str, Any]:
    """A device consuming counters; ``capacity``: upstream's ``fromCounters``."""
    d: dict[str, Any] = {"name": name, **extra}
    if uses:
        d["consumesCounters"] = [{"counterSet": s, "counters": {k: {"value": v} for k, v in c.items()}}
                                 for s, c in uses]
        if capacity:
            d["capacity"] = {k: {"value": v} for _, c in uses for k, v in c.items()}
    return d


def where(sel: Any) -> dict[str, Any]:
    if sel == "all":
        return {"allNodes": True}
    if sel == "per-device":
        return {"perDeviceNodeSelection": True}
    if isinstance(sel, dict):
        return {"nodeSelector": sel}
    return {"nodeName": sel}


def devices_slice(name: str, pool: str, *devices: dict[str, Any], count: int = 2, on: Any = "node-1",
                  driver: str = A) -> ResourceSlice:
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": {
        "driver": driver, **where(on), "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "devices": list(devices)}})


def counters_slice(name: str, pool: str, sets: dict[str, dict[str, str]], count: int = 2, on: Any = "node-1",
                   driver: str = A) -> ResourceSlice:
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": {
        "driver": driver, **where(on), "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "sharedCounters": [{"name": n, "counters": {k: {"value": v} for k, v in c.items()}}
                           for n, c in sets.items()]}})


def req(name: str, count: int = 1, klass: str = "class-a", selector: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": klass, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": exactly}


def first_available(name: str, *subs: tuple[str, str]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": [
        {"name": n, "deviceClassName": "class-a", "count": 1, "selectors": [{"cel": {"expression": s}}]}
        for n, s in subs]}


def claim(name: str, *requests: dict[str, Any]) -> ResourceClaim:
    return ResourceClaim.from_dict({"metadata": {"name": name, "namespace": "default"},
                                    "spec": {"devices": {"requests": list(requests)}}})


def result(selector: dict[str, Any] | None, *picks: tuple[str, str, str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"devices": {"results": [{"request": r, "driver": d, "pool": p, "device": x}
                                                   for r, d, p, x in picks]}}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def allocate(claims: list[ResourceClaim], slices: list[ResourceSlice], sharing: Sharing = ON,
             allocated: set[tuple[str, str, str]] | None = None, classes: list[DeviceClass] | None = None,
             n: Node | None = None) -> list[dict[str, Any]] | None:
    n = n or node()
    used = allocated or set()
    classes = classes or [cls("class-a", A)]
    alloc = Allocator(claims, used, {c.name: c for c in classes}.get, slices, sharing=sharing, state=AllocatedState(set(used)))
    picks = alloc.allocate(n)
    return None if picks is None else [allocation_result(p, n, c, sharing) for p, c in zip(picks, claims)]


def mem(v: str) -> tuple[str, dict[str, str]]:
    return ("counter-set-1", {"memory": v})


MEM6 = f'device.capacity["{A}"].memory.compareTo(quantity("6Gi")) >= 0'
MEM4 = f'device.capacity["{A}"].memory.compareTo(quantity("4Gi")) >= 0'
SET1_8 = {"counter-set-1": {"memory": "8Gi"}}
SET1_18 = {"counter-set-1": {"memory": "18Gi"}}


def test_single_device() -> None:
    """partitionable-devices-single-device."""
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi"), capacity=False)),
                    counters_slice("slice-2", "pool-1", SET1_8)])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-1"))]


def test_prioritized_list() -> None:
    """partitionable-devices-prioritized-list: device-2 (6Gi) would fit subreq-0 but not
    beside device-1 within 8Gi, so req-1 takes subreq-1 with device-3."""
    got = allocate([claim("claim-0", req("req-0"), first_available("req-1", ("subreq-0", MEM6), ("subreq-1", MEM4)))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi")), dev("device-2", mem("6Gi")),
                                  dev("device-3", mem("4Gi"))),
                    counters_slice("slice-2", "pool-1", SET1_8)])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-1"), ("req-1/subreq-1", A, "pool-1", "device-3"))]


def test_multiple_devices() -> None:
    """partitionable-devices-multiple-devices."""
    got = allocate([claim("claim-0", req("req-0"), req("req-1"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi")), dev("device-2", mem("6Gi")),
                                  dev("device-3", mem("4Gi"))),
                    counters_slice("slice-2", "pool-1", SET1_8)])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-3"))]


def test_multiple_capacity_pools() -> None:
    """partitionable-devices-multiple-capacity-pools: counter-set-2 (8 cpus) rules out device-2."""
    def cpus(v: str) -> tuple[str, dict[str, str]]:
        return ("counter-set-2", {"cpus": v})
    got = allocate([claim("claim-0", req("req-0"), first_available("req-1", ("subreq-0", MEM6), ("subreq-1", MEM4)))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi"), cpus("4")),
                                  dev("device-2", mem("6Gi"), cpus("6")), dev("device-3", mem("4Gi"), cpus("4"))),
                    counters_slice("slice-2", "pool-1", {"counter-set-1": {"memory": "18Gi"},
                                                         "counter-set-2": {"cpus": "8"}})])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-1"), ("req-1/subreq-1", A, "pool-1", "device-3"))]


def test_multiple_counters() -> None:
    """partitionable-devices-multiple-counters: device-1 takes 6 of counter-set-1's 8 cpus,
    leaving too few for any partner; device-2 and device-3 fit together."""
    def two(m1: str, c1: str, c2: str, m2: str) -> tuple[tuple[str, dict[str, str]], ...]:
        return (("counter-set-1", {"memory": m1, "cpus": c1}), ("counter-set-2", {"cpus": c2, "memory": m2}))
    got = allocate([claim("claim-0", req("req-0"), req("req-1"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", *two("4Gi", "6", "4", "2Gi"), capacity=False),
                                  dev("device-2", *two("6Gi", "4", "6", "6Gi"), capacity=False),
                                  dev("device-3", *two("4Gi", "4", "4", "4Gi"), capacity=False)),
                    counters_slice("slice-2", "pool-1", {"counter-set-1": {"cpus": "8", "memory": "18Gi"},
                                                         "counter-set-2": {"cpus": "12", "memory": "18Gi"}})])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-2"), ("req-1", A, "pool-1", "device-3"))]


def test_multiple_pools_with_allocated_devices() -> None:
    """partitionable-devices-multiple-pools: allocated devices consume their pool's counters."""
    def c(cpus: str, memory: str) -> tuple[str, dict[str, str]]:
        return ("counter-set-1", {"cpus": cpus, "memory": memory})
    both = {"counter-set-1": {"cpus": "8", "memory": "18Gi"}}
    slices = [devices_slice("slice-1", "pool-1", dev("device-1", c("6", "4Gi")), dev("device-2", c("4", "6Gi")),
                            dev("device-3", c("4", "4Gi"))),
              counters_slice("slice-2", "pool-1", both),
              devices_slice("slice-3", "pool-2", dev("device-1", c("6", "4Gi")), dev("device-2", c("1", "7Gi")),
                            dev("device-3", c("1", "7Gi"))),
              counters_slice("slice-4", "pool-2", both)]
    got = allocate([claim("claim-0", req("req-0"), req("req-1"))], slices,
                   allocated={(A, "pool-1", "device-2"), (A, "pool-1", "device-3"), (A, "pool-2", "device-1")})
    assert got == [result(LOCAL, ("req-0", A, "pool-2", "device-2"), ("req-1", A, "pool-2", "device-3"))]


def test_unused_counters_in_counter_set() -> None:
    """partitionable-devices-unused-counters-in-counter-set."""
    got = allocate([claim("claim-0", req("req-0", 2))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("5Gi"), capacity=False),
                                  dev("device-2", mem("4Gi"), capacity=False),
                                  dev("device-3", mem("4Gi"), capacity=False)),
                    counters_slice("slice-2", "pool-1", {"counter-set-1": {"memory": "8Gi", "unused": "1Gi"}})])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-2"), ("req-0", A, "pool-1", "device-3"))]


@pytest.mark.parametrize("big", ["16Gi", "20Gi"], ids=["no-capacity-available", "overallocated-capacity-pool"])
def test_no_counters_left(big: str) -> None:
    """partitionable-devices-no-capacity-available / -overallocated-capacity-pool (a pool of
    one slice declared, two published: nothing is allocated)."""
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi")), dev("device-2", mem(big)), count=1),
                    counters_slice("slice-2", "pool-1", SET1_18, count=1)],
                   allocated={(A, "pool-1", "device-2")})
    assert got is None


def test_with_attribute_selector_backtracks_over_counters() -> None:
    """partitionable-devices-with-attribute-selector: req-1 needs the special device-1, so
    req-0 ends with device-2 and device-3."""
    def d(name: str, cpu: str, special: bool) -> dict[str, Any]:
        return dev(name, ("counter-set-1", {cpu: "1"}), ("counter-set-2", {"mem": "10Gi"}), capacity=False,
                   attributes={"special": {"bool": special}})
    got = allocate([claim("claim-0", req("req-0", 2), req("req-1", selector=f'device.attributes["{A}"].special'))],
                   [devices_slice("slice-1", "pool-1", d("device-1", "cpu1", True), d("device-2", "cpu2", False),
                                  d("device-3", "cpu3", False)),
                    counters_slice("slice-2", "pool-1", {"counter-set-1": {"cpu1": "1", "cpu2": "1", "cpu3": "1"},
                                                         "counter-set-2": {"mem": "30Gi"}})])
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-2"), ("req-0", A, "pool-1", "device-3"),
                          ("req-1", A, "pool-1", "device-1"))]


def test_disabled_device_consumes_counters() -> None:
    """partitionable-devices-disabled-device-consumes-counters / -other-device-do-not-consume-counters:
    with the gate off a device that consumes counters is never allocated, others are."""
    counted = dev("device-1", mem("4Gi"), capacity=False)
    assert allocate([claim("claim-0", req("req-0"))],
                    [devices_slice("slice-1", "pool-1", counted, count=1)], sharing=OFF_BUT_OTHER) is None
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", counted, dev("device-2"), count=1)], sharing=OFF_BUT_OTHER)
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-2"))]


def test_disabled_per_device_node_selection() -> None:
    """partitionable-devices-disabled-per-device-node-selection."""
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", dev("device-2", nodeName="node-1"), count=1, on="per-device")],
                   sharing=OFF_BUT_OTHER)
    assert got is None


def test_per_device_node_selection_node_name() -> None:
    """partitionable-devices-per-device-node-selection-nodename: device-2 is on node-2."""
    got = allocate([claim("claim-0", first_available("req-0", ("subreq-0", MEM6), ("subreq-1", MEM4)))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi"), nodeName="node-1"),
                                  dev("device-2", mem("6Gi"), nodeName="node-2"), on="per-device"),
                    counters_slice("slice-2", "pool-1", SET1_18, on="per-device")])
    assert got == [result(LOCAL, ("req-0/subreq-1", A, "pool-1", "device-1"))]


def test_per_device_node_selection_node_selector() -> None:
    """partitionable-devices-per-device-node-selection-node-selector: the allocation carries
    the device's selector."""
    region = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In",
                                                           "values": ["region-1"]}]}]}
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi"), nodeSelector=region),
                                  on="per-device"),
                    counters_slice("slice-2", "pool-1", SET1_18, on="per-device")])
    assert got == [result(region, ("req-0", A, "pool-1", "device-1"))]


def test_per_device_node_selection_multiple_devices() -> None:
    """partitionable-devices-per-device-node-selection-node-selector-multiple-devices: one
    device names the node, so the allocation is node-local."""
    region = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In",
                                                           "values": ["region-1"]}]}]}
    set2 = ("counter-set-2", {"memory": "4Gi"})
    got = allocate([claim("claim-0", req("req-0", 3), req("req-1", 3, "class-b"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("4Gi"), nodeSelector=region),
                                  dev("device-2", mem("4Gi"), nodeName="node-1"),
                                  dev("device-3", mem("4Gi"), allNodes=True), on="per-device"),
                    counters_slice("slice-2", "pool-1", SET1_18, on="per-device"),
                    devices_slice("slice-3", "pool-2", dev("device-1", set2), dev("device-2", set2),
                                  dev("device-3", set2), driver=B),
                    counters_slice("slice-4", "pool-2", {"counter-set-2": {"memory": "12Gi"}}, driver=B)],
                   classes=[cls("class-a", A), cls("class-b", B)])
    assert got == [result(LOCAL, *[("req-0", A, "pool-1", f"device-{i}") for i in (1, 2, 3)],
                          *[("req-1", B, "pool-2", f"device-{i}") for i in (1, 2, 3)])]


def test_invalid_pool_is_an_error() -> None:
    """A device consuming a counter set its pool does not define makes the pool invalid
    (upstream ``validateDeviceCounterConsumption``)."""
    with pytest.raises(AllocationError, match="counter set counter-set-2 not found"):
        allocate([claim("claim-0", req("req-0"))],
                 [devices_slice("slice-1", "pool-1", dev("device-1", ("counter-set-2", {"memory": "1Gi"}))),
                  counters_slice("slice-2", "pool-1", SET1_8)])


def test_gate_off_keeps_the_stable_path() -> None:
    """With both gates off (v1.34/v1.35) counters are not looked at: the device is allocated
    as before (the API server drops the fields when the gate is off)."""
    got = allocate([claim("claim-0", req("req-0"))],
                   [devices_slice("slice-1", "pool-1", dev("device-1", mem("20Gi")), count=1)], sharing=Sharing())
    assert got == [result(LOCAL, ("req-0", A, "pool-1", "device-1"))]
