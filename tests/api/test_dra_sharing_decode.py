"""Decoding of the DRA fields for partitioned and shared devices (k8s.io/api resource/v1
types.go: ResourceSliceSpec.sharedCounters / perDeviceNodeSelection, Device.consumesCounters
/ nodeName / nodeSelector / allNodes / allowMultipleAllocations, DeviceCapacity.requestPolicy,
ExactDeviceRequest.capacity, DeviceRequestAllocationResult.shareID / consumedCapacity).
Rules from the field comments there: exactly one node selection per slice (a slice of
counter sets needs none), each device of a perDeviceNodeSelection slice names its own, a
request policy has validValues or validRange, not both. A bad object is one error naming
the file, object and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.api.errors import DecodeError
from kubesched.api.quantity import parse_quantity

DRIVER = "gpu.example.com"


def slice_(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": DRIVER, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, **spec}}


def load(tmp_path: Path, obj: dict[str, Any]) -> Any:
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(obj))
    return load_manifests([str(f)])


def test_counters_per_device_placement_and_policies(tmp_path: Path) -> None:
    m = load(tmp_path, slice_(perDeviceNodeSelection=True, devices=[{
        "name": "half", "nodeName": "n1", "allowMultipleAllocations": True,
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "4Gi"}}}],
        "capacity": {"bw": {"value": "10", "requestPolicy": {"default": "2",
                                                             "validRange": {"min": "2", "step": "2", "max": "4"}}}}}]))
    (s,) = m.dra
    d = s.devices[0]
    assert (s.per_device_node_selection, d.node_name, d.allow_multiple_allocations) == (True, "n1", True)
    assert d.consumes_counters[0].counter_set == "gpu-0"
    assert d.consumes_counters[0].counters == {"memory": parse_quantity("4Gi")}
    pol = d.policies[f"{DRIVER}/bw"]
    assert (pol.default, pol.min, pol.step, pol.max) == tuple(parse_quantity(v) for v in ("2", "2", "2", "4"))
    assert d.capacity_names == {f"{DRIVER}/bw": "bw"}


def test_a_slice_of_counter_sets_needs_no_node_selection(tmp_path: Path) -> None:
    m = load(tmp_path, slice_(sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}]))
    assert m.dra[0].shared_counters[0].counters == {"memory": parse_quantity("8Gi")}


def test_claim_capacity_requests_and_shared_results(tmp_path: Path) -> None:
    m = load(tmp_path, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": "c", "namespace": "default"},
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                            "deviceClassName": "gpu", "capacity": {"requests": {"bw": "3"}}}}]}},
                        "status": {"allocation": {"devices": {"results": [
                            {"request": "r", "driver": DRIVER, "pool": "p", "device": "d", "shareID": "u-1",
                             "consumedCapacity": {"bw": "4"}},
                            {"request": "r", "driver": DRIVER, "pool": "p", "device": "e"}]}}}})
    (c,) = m.dra
    assert c.spec.requests[0].exactly.capacity == (("bw", parse_quantity("3")),)
    assert [(r.device, r.share_id, r.consumed) for r in c.shared_results] == \
        [((DRIVER, "p", "d"), "u-1", (("bw", parse_quantity("4")),))]


@pytest.mark.parametrize(("obj", "message"), [
    pytest.param(slice_(perDeviceNodeSelection=True, devices=[{"name": "d"}]),
                 "m.yaml: ResourceSlice s: spec.devices[0]: exactly one of `nodeName`, `nodeSelector`, `allNodes` "
                 "is required when `perDeviceNodeSelection` is set", id="per-device-without-placement"),
    pytest.param(slice_(nodeName="n1", devices=[{"name": "d", "allNodes": True}]),
                 "m.yaml: ResourceSlice s: spec.devices[0]: Forbidden: `nodeName`, `nodeSelector` and `allNodes` "
                 "may only be set when `perDeviceNodeSelection` is set", id="device-placement-without-per-device"),
    pytest.param(slice_(allNodes=True, sharedCounters=[{"name": "a", "counters": {"m": {"value": "1"}}},
                                                       {"name": "a", "counters": {"m": {"value": "1"}}}]),
                 'm.yaml: ResourceSlice s: spec.sharedCounters[1].name: Duplicate value: "a"',
                 id="duplicate-counter-set"),
    pytest.param(slice_(allNodes=True, devices=[{"name": "d", "capacity": {"bw": {"value": "1", "requestPolicy": {
        "validValues": ["1"], "validRange": {"min": "1"}}}}}]),
                 "m.yaml: ResourceSlice s: spec.devices[0].capacity[bw].requestPolicy: Invalid value: only one of "
                 "validValues and validRange may be set", id="policy-values-and-range"),
    pytest.param(slice_(allNodes=True, devices=[{"name": "d", "consumesCounters": [
        {"counterSet": "c", "counters": {"m": {}}}]}]),
                 "m.yaml: ResourceSlice s: spec.devices[0].consumesCounters[0].counters[m].value: Required value",
                 id="counter-without-value"),
])
def test_errors(tmp_path: Path, obj: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError) as exc:
        load(tmp_path, obj)
    assert str(exc.value) == f"{tmp_path}/{message}"
