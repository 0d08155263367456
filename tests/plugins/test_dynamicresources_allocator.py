"""The structured allocator, ported from upstream's table
(k8s.io/dynamic-resource-allocation/structured/allocator_test.go, TestAllocator): the
cases that apply to v1.34's default features. Names as upstream's: driver-a, pool-1,
node-1, device-1, class-a (selector ``device.driver == "driver-a"``), claim-0, req-0;
``localNodeSelector(node-1)`` is matchFields metadata.name In [node-1]. Expected results
are upstream's ``expectResults`` / ``expectError`` for each case.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, allocation_result
from kubesched.plugins.dynamicresources.explain import explain_failure

DRIVER_A, DRIVER_B = "driver-a", "driver-b"


def node(name: str = "node-1") -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"region": "r1"}},
                           "status": {"allocatable": {"cpu": "1", "pods": "10"}}})


def cls(name: str, driver: str) -> DeviceClass:
    return DeviceClass.from_dict({"metadata": {"name": name},
                                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})


def dev(name: str, memory: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    if memory:
        d["capacity"] = {"memory": {"value": memory}}
    return d


def slice_(name: str, pool: str, driver: str, *devices: dict[str, Any], count: int = 1, gen: int = 1,
           node_name: str = "node-1") -> ResourceSlice:
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": node_name, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
        "devices": list(devices)}})


def one(name: str, pool: str, driver: str, count: int = 1) -> ResourceSlice:
    return slice_(name, pool, driver, dev("device-1"), count=count)


def req(name: str, klass: str, count: int | None = 1, selector: str = "", mode: str = "ExactCount") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": klass, "allocationMode": mode}
    if mode == "ExactCount":
        exactly["count"] = count
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": exactly}


def claim(name: str, *requests: dict[str, Any], constraints: list[Any] | None = None) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return ResourceClaim.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}})


def local(*results: tuple[str, str, str, str]) -> dict[str, Any]:
    return {"devices": {"results": [{"request": r, "driver": d, "pool": p, "device": x} for r, d, p, x in results]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}


MEM1 = 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'
MEM2 = 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'
A = [cls("class-a", DRIVER_A)]
AB = [cls("class-a", DRIVER_A), cls("class-b", DRIVER_B)]
ALL_A = req("req-0", "class-a", None, mode="All")

CASES = [
    ("simple", [claim("claim-0", req("req-0", "class-a"))], A, [one("slice-1", "pool-1", DRIVER_A)], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"))]),
    ("small-and-large", [claim("claim-0", req("req-0", "class-a", 1, MEM1), req("req-1", "class-a", 1, MEM2))], A,
     [slice_("slice-1", "pool-1", DRIVER_A, dev("device-1", "1Gi"), dev("device-2", "2Gi"))], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"), ("req-1", DRIVER_A, "pool-1", "device-2"))]),
    ("small-and-large-backtrack-requests",
     [claim("claim-0", req("req-0", "class-a", 1, MEM1), req("req-1", "class-a", 1, MEM2))], A,
     [slice_("slice-1", "pool-1", DRIVER_A, dev("device-2", "2Gi"), dev("device-1", "1Gi"))], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"), ("req-1", DRIVER_A, "pool-1", "device-2"))]),
    ("small-and-large-backtrack-claims",
     [claim("claim-0", req("req-0", "class-a", 1, MEM1)), claim("claim-1", req("req-1", "class-a", 1, MEM2))], A,
     [slice_("slice-1", "pool-1", DRIVER_A, dev("device-2", "2Gi"), dev("device-1", "1Gi"))], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1")), local(("req-1", DRIVER_A, "pool-1", "device-2"))]),
    ("devices-split-across-different-slices", [claim("claim-0", req("req-0", "class-a", 2))], A,
     [one("slice-1", "pool-1", DRIVER_A), one("slice-2", "pool-2", DRIVER_A)], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"), ("req-0", DRIVER_A, "pool-2", "device-1"))]),
    ("no-slices", [claim("claim-0", req("req-0", "class-a"))], A, [], set(), None),
    ("not-enough-suitable-devices", [claim("claim-0", req("req-0", "class-a")), claim("claim-0", req("req-1", "class-a"))],
     A, [one("slice-1", "pool-1", DRIVER_A)], set(), None),
    ("all-devices-single", [claim("claim-0", ALL_A)], A, [one("slice-1", "pool-1", DRIVER_A)], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"))]),
    ("all-devices-many", [claim("claim-0", ALL_A)], A,
     [one("slice-1", "pool-1", DRIVER_A), one("slice-1b", "pool-2", DRIVER_A)], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1"), ("req-0", DRIVER_A, "pool-2", "device-1"))]),
    ("all-devices-plus-another",
     [claim("claim-0", ALL_A), claim("claim-1", req("req-0", "class-b"))], AB,
     [one("slice-1", "pool-1", DRIVER_A), one("slice-1b", "pool-1", DRIVER_B)], set(),
     [local(("req-0", DRIVER_A, "pool-1", "device-1")), local(("req-0", DRIVER_B, "pool-1", "device-1"))]),
    ("all-devices-many-plus-another-reversed",
     [claim("claim-1", req("req-0", "class-b")), claim("claim-0", ALL_A)], AB,
     [slice_("slice-1", "pool-1", DRIVER_A, dev("device-1"), dev("device-2")), one("slice-1b", "pool-1", DRIVER_B)],
     set(), [local(("req-0", DRIVER_B, "pool-1", "device-1")),
             local(("req-0", DRIVER_A, "pool-1", "device-1"), ("req-0", DRIVER_A, "pool-1", "device-2"))]),
    ("all-devices-slice-without-devices", [claim("claim-0", ALL_A)], A, [slice_("slice-1", "pool-1", DRIVER_A)],
     set(), None),
    ("all-devices-no-slices", [claim("claim-0", ALL_A)], A, [], set(), None),
    ("all-devices-some-allocated", [claim("claim-0", ALL_A)], A,
     [slice_("slice-1", "pool-1", DRIVER_A, dev("device-1"), dev("device-2"))], {(DRIVER_A, "pool-1", "device-1")},
     None),
]


@pytest.mark.parametrize(("claims", "classes", "slices", "in_use", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_allocator(claims: list[ResourceClaim], classes: list[DeviceClass], slices: list[ResourceSlice],
                   in_use: set[tuple[str, str, str]], want: list[dict[str, Any]] | None) -> None:
    n = node()
    alloc = Allocator(claims, in_use, {c.name: c for c in classes}.get, slices)
    picks = alloc.allocate(n)
    got = None if picks is None else [allocation_result(p, n) for p in picks]
    assert got == want


@pytest.mark.parametrize(("claims", "classes", "slices", "message"), [
    pytest.param([claim("claim-0", ALL_A)], A, [one("slice-1", "pool-1", DRIVER_A, count=2)],
                 "claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is "
                 "currently being updated", id="all-devices-of-the-incomplete-pool"),
    pytest.param([claim("claim-0", req("req-0", "class-a"))], A,
                 [one("slice-1", "pool-1", DRIVER_A, count=2), one("slice-1-2", "pool-1", DRIVER_A, count=2)],
                 "invalid resource pools were encountered", id="duplicate-slice"),
    pytest.param([claim("claim-0", req("req-0", "class-a"))], [], [one("slice-1", "pool-1", DRIVER_A)],
                 "could not retrieve device class class-a", id="no-classes"),
])
def test_allocator_errors(claims: list[ResourceClaim], classes: list[DeviceClass], slices: list[ResourceSlice],
                          message: str) -> None:
    alloc = Allocator(claims, set(), {c.name: c for c in classes}.get, slices)
    with pytest.raises(AllocationError) as exc:
        alloc.allocate(node())
    assert message in str(exc.value)


def test_match_attribute_constraint_backtracks() -> None:
    """matchAttribute, hand-computed from upstream's semantics: two devices with equal
    ``driver-a/model`` are picked, skipping the first device whose model has no partner."""
    devices = [{"name": "device-1", "attributes": {"model": {"string": "x"}}},
               {"name": "device-2", "attributes": {"model": {"string": "y"}}},
               {"name": "device-3", "attributes": {"model": {"string": "y"}}}]
    c = claim("claim-0", req("req-0", "class-a"), req("req-1", "class-a"),
              constraints=[{"matchAttribute": "driver-a/model"}])
    alloc = Allocator([c], set(), {"class-a": A[0]}.get, [slice_("slice-1", "pool-1", DRIVER_A, *devices)])
    picks = alloc.allocate(node())
    assert picks is not None
    assert allocation_result(picks[0], node()) == local(("req-0", DRIVER_A, "pool-1", "device-2"),
                                                        ("req-1", DRIVER_A, "pool-1", "device-3"))


def test_first_available_takes_the_first_subrequest_that_fits() -> None:
    """firstAvailable, hand-computed from upstream's semantics: subrequests in order; the
    result names ``request/subrequest``."""
    c = ResourceClaim.from_dict({"metadata": {"name": "claim-0"}, "spec": {"devices": {"requests": [
        {"name": "req-0", "firstAvailable": [
            {"name": "big", "deviceClassName": "class-a", "count": 2},
            {"name": "small", "deviceClassName": "class-a", "count": 1}]}]}}})
    alloc = Allocator([c], set(), {"class-a": A[0]}.get, [one("slice-1", "pool-1", DRIVER_A)])
    picks = alloc.allocate(node())
    assert picks is not None
    assert allocation_result(picks[0], node()) == local(("req-0/small", DRIVER_A, "pool-1", "device-1"))


def test_explain_names_the_request_and_the_reason() -> None:
    """``explain_failure`` (kubesched's addition to "cannot allocate all claims"): the first
    request that cannot be met alone, or the constraint, worded as computed here by hand."""
    devices = [{"name": "device-1", "attributes": {"model": {"string": "x"}}},
               {"name": "device-2", "attributes": {"model": {"string": "y"}}}]
    slices = [slice_("slice-1", "pool-1", DRIVER_A, *devices)]
    n = node()
    model_h = 'device.attributes["driver-a"].model == "h"'
    cases = [
        (claim("claim-0", req("req-0", "class-b")), AB,
         "claim default/claim-0: request req-0: no device of class class-b on the node"),
        (claim("claim-0", req("req-0", "class-a", 1, model_h)), A,
         "claim default/claim-0: request req-0: selector false for all 2 device(s) of class class-a"),
        (claim("claim-0", req("req-0", "class-a"), req("req-1", "class-a"),
               constraints=[{"matchAttribute": "driver-a/model"}]), A,
         "claim default/claim-0: constraint matchAttribute driver-a/model unmet by the free devices"),
    ]
    for c, classes, want in cases:
        alloc = Allocator([c], set(), {k.name: k for k in classes}.get, slices)
        assert alloc.allocate(n) is None
        assert explain_failure(alloc, n) == want
    used = Allocator([claim("claim-0", req("req-0", "class-a", 2))], {(DRIVER_A, "pool-1", "device-1")},
                     {"class-a": A[0]}.get, slices)
    assert used.allocate(n) is None
    assert explain_failure(used, n) == "claim default/claim-0: request req-0: devices in use (1 of 2 matching, 2 needed)"
