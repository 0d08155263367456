"""Device taints, tolerations, binding conditions and DeviceTaintRules as manifests carry
them: the fields of k8s.io/api resource/v1 types.go (Device.taints, bindingConditions,
bindingFailureConditions, bindsToNode; ExactDeviceRequest.tolerations) and the
DeviceTaintRule of v1alpha3/v1beta2 types.go; toleration rules as upstream's
pkg/apis/resource/validation (an empty key needs operator Exists, Exists takes no value).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubesched.api.decode import load_manifests
from kubesched.api.devicetaints import DeviceTaint, DeviceTaintRule, DeviceToleration
from kubesched.api.drabinding import BindingFailed, ready_for_binding
from kubesched.api.dra import ResourceClaim, ResourceSlice
from kubesched.api.errors import DecodeError

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    taints: [{key: example.com/broken, value: "yes", effect: NoExecute, timeAdded: "2026-01-01T00:00:00Z"}]
    bindingConditions: [Attached]
    bindingFailureConditions: [AttachFailed]
    bindsToNode: true
---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: drain}
spec:
  deviceSelector: {driver: gpu.example.com, pool: n1}
  taint: {key: example.com/drain, effect: NoSchedule}
"""


def load(tmp_path: Path, text: str) -> list[object]:
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(text))
    return load_manifests([str(path)]).dra


def test_device_fields_and_a_device_taint_rule_are_read(tmp_path: Path) -> None:
    s, rule = load(tmp_path, SLICE)
    assert isinstance(s, ResourceSlice) and isinstance(rule, DeviceTaintRule)
    d = s.devices[0]
    assert d.taints == (DeviceTaint("example.com/broken", "yes", "NoExecute"),)
    assert (d.binding_conditions, d.binding_failure_conditions, d.binds_to_node) == (
        ("Attached",), ("AttachFailed",), True)
    assert (rule.driver, rule.pool, rule.device, rule.taint) == (
        "gpu.example.com", "n1", None, DeviceTaint("example.com/drain", "", "NoSchedule"))


def test_a_device_taint_rule_in_an_unserved_version_is_refused(tmp_path: Path) -> None:
    text = SLICE.replace("resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
    with pytest.raises(DecodeError, match='no matches for kind "DeviceTaintRule" in version "resource.k8s.io/v1beta1"'):
        load(tmp_path, text)


@pytest.mark.parametrize("taint,field", [
    ("{value: x, effect: NoSchedule}", "spec.devices[0].taints[0].key"),
    ("{key: k}", "spec.devices[0].taints[0].effect"),
])
def test_a_taint_needs_key_and_effect(tmp_path: Path, taint: str, field: str) -> None:
    text = SLICE.split("---")[0].replace(
        '[{key: example.com/broken, value: "yes", effect: NoExecute, timeAdded: "2026-01-01T00:00:00Z"}]',
        f"[{taint}]")
    with pytest.raises(DecodeError) as info:
        load(tmp_path, text)
    assert field in str(info.value) and "Required value" in str(info.value)


def claim(tolerations: list[dict[str, str]]) -> ResourceClaim:
    return ResourceClaim.from_dict({"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "tolerations": tolerations}}]}}})


def test_tolerations_default_to_equal() -> None:
    r = claim([{"key": "k", "value": "v"}, {"operator": "Exists"}]).spec.requests[0].exactly
    assert r is not None and r.tolerations == (DeviceToleration("k", "Equal", "v", ""),
                                               DeviceToleration("", "Exists", "", ""))


@pytest.mark.parametrize("tol,message", [
    ({"value": "v"}, "operator must be Exists when `key` is empty"),
    ({"key": "k", "operator": "Exists", "value": "v"}, "value must be empty when `operator` is 'Exists'"),
    ({"key": "k", "operator": "In"}, 'Unsupported value: "In"'),
])
def test_bad_tolerations(tol: dict[str, str], message: str) -> None:
    with pytest.raises(DecodeError) as info:
        claim([tol])
    assert message in str(info.value) and "spec.devices.requests[0].exactly.tolerations[0]" in str(info.value)


def status(*conditions: dict[str, str]) -> dict[str, object]:
    return {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "d", "pool": "p", "device": "x", "bindingConditions": ["A", "B"],
         "bindingFailureConditions": ["F"]}]}},
        "devices": [{"driver": "d", "pool": "p", "device": "x", "conditions": list(conditions)}]}}


def test_ready_for_binding() -> None:
    """dynamicresources.go isClaimReadyForBinding: every binding condition True, no failure
    condition True (then the error names the claim, reason and message)."""
    assert not ready_for_binding("c", status({"type": "A", "status": "True"}))
    assert ready_for_binding("c", status({"type": "A", "status": "True"}, {"type": "B", "status": "True"}))
    assert not ready_for_binding("c", {"status": {}})
    with pytest.raises(BindingFailed, match='claim c binding failed: reason=Lost, message="gone"'):
        ready_for_binding("c", status({"type": "F", "status": "True", "reason": "Lost", "message": "gone"}))
