"""DeviceTaintRules applied to ResourceSlices, ported from upstream's
k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker_test.go
(TestListPatchedResourceSlices): its objects (driver1.example.com/pool-1 slice s1 with
device-1, driver2.example.com/pool-2 slice s2 with device-2, the NoExecute taint
example.com/taint=tainted, the rule "rule" with no selector or a driver/pool/device one)
and its ``expectedPatchedSlices`` after the events of each case. The 1.34 class/CEL
selectors follow tracker.go ``applyPatches`` at v1.34 (a missing class: no match).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.api.dra import DeviceClass, ResourceSlice
from kubesched.plugins.dynamicresources.taintrules import TaintedSlices, apply_rules

D1, D2 = "driver1.example.com", "driver2.example.com"
TAINT1 = {"key": "example.com/taint", "value": "tainted", "effect": "NoExecute"}
TAINT2 = {"key": "example.com/taint2", "value": "tainted2", "effect": "NoExecute"}


def slice_(name: str, driver: str, pool: str, *devices: dict[str, Any]) -> ResourceSlice:
    return ResourceSlice.from_dict({"metadata": {"name": name}, "spec": {
        "driver": driver, "allNodes": True, "pool": {"name": pool, "generation": 0, "resourceSliceCount": 1},
        "devices": list(devices)}})


def rule(name: str = "rule", **selector: Any) -> DeviceTaintRule:
    spec: dict[str, Any] = {"taint": TAINT1}
    if selector:
        spec["deviceSelector"] = selector
    return DeviceTaintRule.from_dict({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
                                      "metadata": {"name": name}, "spec": spec})


def s1(*names: str) -> ResourceSlice:
    return slice_("s1", D1, "pool-1", *({"name": n} for n in names or ("device-1",)))


def s2(*names: str) -> ResourceSlice:
    return slice_("s2", D2, "pool-2", *({"name": n} for n in names or ("device-2",)))


def taints(slices: list[ResourceSlice]) -> dict[str, list[str]]:
    """slice/device -> its taint keys (devices without taints left out)."""
    return {f"{s.name}/{d.name}": [t.key for t in d.taints] for s in slices for d in s.devices if d.taints}


NO_CLASSES: dict[str, DeviceClass] = {}

CASES = [
    ("add-slices-no-patches", [s1(), s2()], [], {}),
    ("patch-all-slices", [s1()], [rule()], {"s1/device-1": ["example.com/taint"]}),
    ("update-patch", [s1(), s2()], [rule(pool="pool-2")], {"s2/device-2": ["example.com/taint"]}),
    ("add-taint-for-driver", [s1(), s2()], [rule(driver=D1)], {"s1/device-1": ["example.com/taint"]}),
    ("add-taint-for-pool", [s1(), s2()], [rule(pool="pool-1")], {"s1/device-1": ["example.com/taint"]}),
    ("add-taint-for-device", [s1(), s2()], [rule(device="device-1")], {"s1/device-1": ["example.com/taint"]}),
    ("filter-all-criteria", [s1(), s2()], [rule(driver=D1, pool="pool-1", device="device-1")],
     {"s1/device-1": ["example.com/taint"]}),
    ("update-patched-slice", [s1("device-0", "device-1", "device-2"), s2("device-1")], [rule(device="device-1")],
     {"s1/device-1": ["example.com/taint"], "s2/device-1": ["example.com/taint"]}),
]


@pytest.mark.parametrize("slices,rules,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_upstream_tracker_cases(slices: list[ResourceSlice], rules: list[DeviceTaintRule],
                                want: dict[str, list[str]]) -> None:
    assert taints(apply_rules(slices, rules, NO_CLASSES.get)) == want


def test_merge_taints_keeps_the_slice_taints_first() -> None:
    """merge-taints: a device's own taint, then the rule's."""
    own = slice_("s1", D1, "pool-1", {"name": "device-1", "taints": [TAINT2]})
    assert taints(apply_rules([own], [rule()], NO_CLASSES.get)) == {
        "s1/device-1": ["example.com/taint2", "example.com/taint"]}


def test_untouched_slices_and_unchanged_inputs_are_reused() -> None:
    slices = [s1(), s2()]
    out = apply_rules(slices, [rule(driver=D1)], NO_CLASSES.get)
    assert out[1] is slices[1] and out[0] is not slices[0]
    assert slices[0].devices[0].taints == ()  # the informer's slice is not changed
    cache, rules = TaintedSlices(), [rule()]
    first = cache.get(slices, rules, NO_CLASSES.get, 1)
    assert cache.get(slices, rules, NO_CLASSES.get, 2) is first
    assert cache.get(slices, [], NO_CLASSES.get, 2) is slices


def test_v1alpha3_class_and_cel_selectors_of_1_34() -> None:
    """tracker.go (v1.34) applyPatches: the class's selectors must match (a class that does
    not exist: the rule does not apply); a CEL selector that fails at run time: no match."""
    cls = DeviceClass.from_dict({"metadata": {"name": "device-class-1"}, "spec": {
        "selectors": [{"cel": {"expression": f'device.driver == "{D1}"'}}]}})
    by_class = rule(deviceClassName="device-class-1")
    assert taints(apply_rules([s1(), s2()], [by_class], {"device-class-1": cls}.get)) == {
        "s1/device-1": ["example.com/taint"]}
    assert taints(apply_rules([s1(), s2()], [by_class], NO_CLASSES.get)) == {}
    failing = rule(selectors=[{"cel": {"expression": 'device.attributes["x.example.com"].missing == 1'}}])
    assert taints(apply_rules([s1()], [failing], NO_CLASSES.get)) == {}
