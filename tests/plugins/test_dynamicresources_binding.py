"""DynamicResources with device taints and binding conditions, per release, in the
in-process scheduler.

Expected values are hand-derived from upstream's scheduler plugin
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: PreBind's wait and
``device binding timeout``, ``isClaimReadyForBinding``'s ``claim <name> binding failed:
reason=..., message="..."``, Filter's "resourceclaim not available on the node" for a claim
whose binding failed or timed out, PostFilter clearing ``status.devices``, bindClaim's
``allocationTimestamp``), the allocator (internal/incubating/allocator_incubating.go) and the
gate defaults of pkg/features/kube_features.go (DRADeviceTaints and
DRADeviceBindingConditions on from 1.36, DRADeviceTaintRules from 1.37). Two nodes; n1's
first device is the one the stable allocator would take.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest
from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.api.dra import parse_dra_object
from kubesched.api.objects import Node, Pod
from kubesched.config import load_config
from kubesched.api.errors import KubeschedError
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation
from tests.plugins.test_dra_extended_resources import CLASS, GPU, device_class, dra_with, mk_node, mk_pod, run_cycle
from tests.plugins.test_dynamicresources_plugin import GPU_CLASS, node, pod

DRIVER = "gpu.example.com"
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default", "uid": "c-uid"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def slice_(node_name: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": list(devices)}}


def manifest(*objects: dict[str, Any]) -> Manifest:
    m = Manifest()
    for raw in default_manifest(list(objects)):
        if raw["kind"] == "Node":
            m.nodes.append(Node.from_dict(raw))
        elif raw["kind"] == "Pod":
            p = Pod.from_dict(raw, require_limits=False)
            p.seq = len(m.pods)
            m.pods.append(p)
        elif raw["kind"] == "DeviceTaintRule":
            m.dra.append(DeviceTaintRule.from_dict(raw))
        else:
            m.dra.append(parse_dra_object(raw))
    return m


def simulate(version: str, *objects: dict[str, Any], gates: str = "", args: Any = None) -> Simulation:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if args is not None:
        profile["pluginConfig"] = [{"name": "DynamicResources", "args": args}]
    fts = Features.for_version(version, gates)
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": 100, "profiles": [profile]}, in_tree_registry())
    sim = Simulation(manifest(*objects), cfg, tie_break="name", explain=True, features=fts)
    sim.run(single_pass=True)
    return sim


def outcome(sim: Simulation) -> Any:
    return next(o for o in sim.results() if o.pod.name == "p")


def allocation(sim: Simulation) -> Any:
    return sim.dra.claims[("default", "c")].raw.get("status", {})


NO_SCHEDULE = {"key": "example.com/broken", "value": "true", "effect": "NoSchedule"}
TAINTED = (node("n1"), node("n2"), GPU_CLASS, CLAIM, pod("p", claim="c"),
           slice_("n1", {"name": "gpu-0", "taints": [NO_SCHEDULE]}), slice_("n2", {"name": "gpu-0"}))


@pytest.mark.parametrize("version,gates,want", [
    ("1.35", "", "n1"),  # DRADeviceTaints off: the taint is not read
    ("1.36", "", "n2"),
    ("1.37", "", "n2"),
    ("1.36", "DRADeviceTaints=false", "n1"),
])
def test_a_tainted_device_is_not_allocated(version: str, gates: str, want: str) -> None:
    assert outcome(simulate(version, *TAINTED, gates=gates)).node == want


def test_a_tolerated_taint_allows_the_device_and_the_result_records_the_toleration() -> None:
    tol = {"key": "example.com/broken", "operator": "Exists", "effect": "NoSchedule"}
    claim = {**CLAIM, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "tolerations": [tol]}}]}}}
    sim = simulate("1.36", *TAINTED[:3], claim, *TAINTED[4:])
    assert outcome(sim).node == "n1"
    assert allocation(sim)["allocation"]["devices"]["results"][0]["tolerations"] == [tol]


RULE = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "drain-n1"},
        "spec": {"deviceSelector": {"driver": DRIVER, "pool": "n1"}, "taint": NO_SCHEDULE}}
PLAIN = (node("n1"), node("n2"), GPU_CLASS, CLAIM, pod("p", claim="c"),
         slice_("n1", {"name": "gpu-0"}), slice_("n2", {"name": "gpu-0"}))


@pytest.mark.parametrize("version,gates,want", [
    ("1.36", "", "n1"),  # DRADeviceTaintRules is beta but off in 1.36
    ("1.36", "DRADeviceTaintRules=true", "n2"),
    ("1.37", "", "n2"),
    ("1.34", "DRADeviceTaints=true", "n2"),  # before the rules gate existed, DRADeviceTaints decides
])
def test_a_device_taint_rule_taints_the_devices_it_selects(version: str, gates: str, want: str) -> None:
    assert outcome(simulate(version, *PLAIN, RULE, gates=gates)).node == want


BOUND = {"name": "gpu-0", "bindingConditions": ["Attached"], "bindingFailureConditions": ["AttachFailed"],
         "bindsToNode": True}


def test_devices_with_binding_conditions_are_skipped_without_the_feature() -> None:
    objects = (node("n1"), node("n2"), GPU_CLASS, CLAIM, pod("p", claim="c"), slice_("n1", BOUND),
               slice_("n2", {"name": "gpu-0"}))
    assert outcome(simulate("1.36", *objects, gates="DRADeviceBindingConditions=false")).node == "n2"
    assert outcome(simulate("1.35", *objects)).node == "n1"  # both gates off: the stable allocator


def test_without_a_driver_the_binding_times_out() -> None:
    """No controller sets the conditions in the in-process cluster: PreBind's wait ends with
    upstream's error, the claim stays allocated (Unreserve only drops reservedFor) with the
    device's conditions and the allocation time."""
    sim = simulate("1.36", node("n1"), GPU_CLASS, CLAIM, pod("p", claim="c"), slice_("n1", BOUND))
    o = outcome(sim)
    assert (o.status, o.message) == ("Error", 'running PreBind plugin "DynamicResources": device binding timeout')
    status = allocation(sim)
    result = status["allocation"]["devices"]["results"][0]
    assert (result["bindingConditions"], result["bindingFailureConditions"]) == (["Attached"], ["AttachFailed"])
    assert status["allocation"]["allocationTimestamp"] == "2100-01-01T00:00:00Z"  # the simulator's clock 0
    assert status["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]
    assert not status.get("reservedFor")


def allocated_claim(conditions: list[dict[str, Any]], timestamp: str = "2100-01-01T00:00:00Z") -> dict[str, Any]:
    return {**CLAIM, "status": {
        "allocation": {"allocationTimestamp": timestamp, "devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0",
             "bindingConditions": ["Attached"], "bindingFailureConditions": ["AttachFailed"]}]}},
        "devices": [{"driver": DRIVER, "pool": "n1", "device": "gpu-0", "conditions": conditions}]}}


def cond(type_: str, status: str) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": "Driver", "message": f"{type_} is {status}",
            "lastTransitionTime": "2100-01-01T00:00:00Z"}


def test_the_pod_binds_once_the_driver_set_the_conditions() -> None:
    sim = simulate("1.36", node("n1"), GPU_CLASS, allocated_claim([cond("Attached", "True")]), pod("p", claim="c"),
                   slice_("n1", BOUND))
    assert (outcome(sim).status, outcome(sim).node) == ("Scheduled", "n1")
    assert [r["name"] for r in allocation(sim)["reservedFor"]] == ["p"]


def test_a_failed_binding_makes_the_claim_unavailable_and_post_filter_deallocates_it() -> None:
    sim = simulate("1.36", node("n1"), GPU_CLASS,
                   allocated_claim([cond("Attached", "False"), cond("AttachFailed", "True")]), pod("p", claim="c"),
                   slice_("n1", BOUND))
    first = outcome(sim).attempts[0].to_json()
    assert "1 resourceclaim not available on the node" in first["message"]
    status = allocation(sim)
    assert "allocation" not in status and "devices" not in status


def test_a_claim_not_ready_after_the_binding_timeout_is_unavailable() -> None:
    """allocationTimestamp an hour before the simulator's clock 0: past the 600 s default."""
    sim = simulate("1.36", node("n1"), GPU_CLASS, allocated_claim([], timestamp="2099-12-31T23:00:00Z"),
                   pod("p", claim="c"), slice_("n1", BOUND))
    assert "resourceclaim not available on the node" in outcome(sim).attempts[0].to_json()["message"]


def test_a_longer_binding_timeout_keeps_the_claim() -> None:
    sim = simulate("1.36", node("n1"), GPU_CLASS, allocated_claim([], timestamp="2099-12-31T23:00:00Z"),
                   pod("p", claim="c"), slice_("n1", BOUND), args={"bindingTimeout": "2h"})
    o = outcome(sim)
    assert (o.status, o.message) == ("Error", 'running PreBind plugin "DynamicResources": device binding timeout')


@pytest.mark.parametrize("version,args,error", [
    ("1.35", {"bindingTimeout": "10m"},
     "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
     "disabled"),
    ("1.36", {"bindingTimeout": "500ms"}, 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'),
    ("1.36", {"bindingTimeout": "ten minutes"}, "invalid duration 'ten minutes'"),
    ("1.36", {"filterTimeout": "-1s"}, 'filterTimeout: Invalid value: "-1s": must be zero or positive'),
])
def test_dynamic_resources_args_are_validated_against_the_gates(version: str, args: Any, error: str) -> None:
    """ValidateDynamicResourcesArgs (pkg/scheduler/apis/config/validation)."""
    with pytest.raises(KubeschedError) as info:
        simulate(version, node("n1"), args=args)
    assert error in str(info.value)


def test_the_claim_for_extended_resources_skips_tainted_devices_too() -> None:
    """The per-node claim for extended resources backed by DRA is allocated by the same
    allocator, so a NoSchedule taint keeps it off the device (1.36: both gates on)."""
    tainted = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "worker-d"},
               "spec": {"driver": "some-driver", "nodeName": "worker",
                        "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "instance-1", "taints": [NO_SCHEDULE]}, {"name": "instance-2"}]}}
    dra = dra_with(device_class(CLASS, GPU), tainted)
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    assert got["filter"]["worker"].success and plugin.reserve(state, p, "worker").success
    (flight,) = dra.in_flight.values()
    assert [r["device"] for r in (flight.allocation or {})["devices"]["results"]] == ["instance-2"]
