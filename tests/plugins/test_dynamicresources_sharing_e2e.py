"""DynamicResources with DRAPartitionableDevices and DRAConsumableCapacity, end to end in
the simulator: on by default from Kubernetes 1.36, off in 1.34/1.35 (upstream
pkg/features/kube_features.go). Placements are computed by hand from upstream's allocator
rules (structured/internal/*/allocator_*.go): counters of a pool are shared by the devices
consuming them; a device with allowMultipleAllocations serves claims while its capacity
lasts, each result with a share ID and the capacity it consumed.
"""

from __future__ import annotations

import uuid
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest
from kubesched.api.dra import parse_dra_object
from kubesched.api.objects import Node, Pod
from kubesched.config import load_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation

DRIVER = "gpu.example.com"
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def slice_(name: str, count: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "n1", "generation": 1,
                                                                  "resourceSliceCount": count}, **spec}}


def claim_pod(name: str, capacity: str | None = None) -> list[dict[str, Any]]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu"}
    if capacity is not None:
        exactly["capacity"] = {"requests": {"memory": capacity}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}}
    return [claim, pod]


def simulate(version: str, *objects: dict[str, Any]) -> Simulation:
    m = Manifest()
    for raw in default_manifest(list(objects)):
        if raw["kind"] == "Node":
            m.nodes.append(Node.from_dict(raw))
        elif raw["kind"] == "Pod":
            p = Pod.from_dict(raw, require_limits=False)
            p.seq = len(m.pods)
            m.pods.append(p)
        else:
            m.dra.append(parse_dra_object(raw))
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                      in_tree_registry())
    sim = Simulation(m, cfg, tie_break="name", explain=True, features=Features.for_version(version))
    sim.run(single_pass=True)
    return sim


def placed(sim: Simulation) -> dict[str, str | None]:
    return {o.pod.name: o.node for o in sim.results()}


def devices(sim: Simulation, name: str) -> list[str]:
    alloc = sim.dra.claims[("default", name)].allocation or {}
    return [r["device"] for r in alloc.get("devices", {}).get("results", [])]


def partitioned() -> list[dict[str, Any]]:
    def dev(name: str, mem: str) -> dict[str, Any]:
        return {"name": name, "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": mem}}}]}
    return [NODE, CLASS,
            slice_("n1-devices", 2, devices=[dev("half-0", "4Gi"), dev("big", "6Gi"), dev("half-1", "4Gi")]),
            slice_("n1-counters", 2, sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}]),
            *claim_pod("a"), *claim_pod("b"), *claim_pod("c")]


def test_partitions_share_the_counters_from_1_36() -> None:
    """8Gi of counters: half-0 (4Gi) for a; big (6Gi) no longer fits, so half-1 for b; c waits."""
    sim = simulate("1.36", *partitioned())
    assert placed(sim) == {"a": "n1", "b": "n1", "c": None}
    assert (devices(sim, "a"), devices(sim, "b")) == (["half-0"], ["half-1"])


def test_partitions_are_plain_devices_before_1_36() -> None:
    """The gate off (1.35): counters are not looked at, every device is allocated in turn."""
    sim = simulate("1.35", *partitioned())
    assert placed(sim) == {"a": "n1", "b": "n1", "c": "n1"}
    assert devices(sim, "b") == ["big"]


def shared_device() -> list[dict[str, Any]]:
    return [NODE, CLASS, slice_("n1-gpu", 1, devices=[{"name": "gpu-0", "allowMultipleAllocations": True,
                                                       "capacity": {"memory": {"value": "8Gi"}}}]),
            *claim_pod("a", "4Gi"), *claim_pod("b", "3Gi"), *claim_pod("c", "2Gi")]


def test_a_shareable_device_serves_claims_while_capacity_lasts() -> None:
    """8Gi: a takes 4Gi, b 3Gi, c (2Gi) would exceed it. Each result has a share ID (a UUID,
    different for each) and the capacity it consumed."""
    sim = simulate("1.36", *shared_device())
    assert placed(sim) == {"a": "n1", "b": "n1", "c": None}
    results = [(sim.dra.claims[("default", n)].allocation or {})["devices"]["results"][0] for n in ("a", "b")]
    assert [r["consumedCapacity"] for r in results] == [{"memory": "4Gi"}, {"memory": "3Gi"}]
    ids = [r["shareID"] for r in results]
    assert len({uuid.UUID(i) for i in ids}) == 2


def test_a_shareable_device_is_exclusive_before_1_36() -> None:
    sim = simulate("1.35", *shared_device())
    assert placed(sim) == {"a": "n1", "b": None, "c": None}
    assert "shareID" not in (sim.dra.claims[("default", "a")].allocation or {})["devices"]["results"][0]


def test_explain_names_counters_and_capacity() -> None:
    """kubesched's addition to "cannot allocate all claims" (no upstream text): with the
    features on, the shortfall may be counters or capacity rather than devices."""
    sim = simulate("1.36", *shared_device())
    o = next(o for o in sim.results() if o.pod.name == "c")
    assert o.attempts[0].filter["n1"]["detail"] == \
        "the claims together need more devices, shared counters or device capacity than are free"
