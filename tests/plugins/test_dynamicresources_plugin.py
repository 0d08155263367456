"""DynamicResources end to end in the in-process scheduler, with upstream v1.34's messages
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go and the assume
cache's ErrNotFound in pkg/scheduler/util/assumecache): PreEnqueue holds a pod whose claim
does not exist; PreFilter rejects a request naming a missing DeviceClass; Filter's
"cannot allocate all claims" and "resourceclaim not available on the node"; PostFilter's
"still not schedulable"; Reserve keeps two pods off one device; PreBind writes the
finalizer, ``status.allocation`` and ``status.reservedFor``. Expected values are those
messages and hand-computed placements (two nodes, devices listed per node).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest
from kubesched.api.dra import FINALIZER, parse_dra_object
from kubesched.api.objects import Node, Pod
from kubesched.config import load_config
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation

GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def gpus(node_name: str, *models: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                                 for i, m in enumerate(models)]}}


def template(name: str, klass: str = "gpu", selector: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": klass}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def pod(name: str, claim: str = "", template_name: str = "") -> dict[str, Any]:
    rc: dict[str, Any] = {"name": "gpu"}
    rc["resourceClaimName" if claim else "resourceClaimTemplateName"] = claim or template_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"},
                                                                             "claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [rc]}}


def simulate(*objects: dict[str, Any]) -> Simulation:
    raws = default_manifest(list(objects))
    m = Manifest()
    for raw in raws:
        if raw["kind"] == "Node":
            m.nodes.append(Node.from_dict(raw))
        elif raw["kind"] == "Pod":
            p = Pod.from_dict(raw, require_limits=False)
            p.seq = len(m.pods)
            m.pods.append(p)
        else:
            m.dra.append(parse_dra_object(raw))
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": 100}, in_tree_registry())
    sim = Simulation(m, cfg, tie_break="name", explain=True)
    sim.run(single_pass=True)
    return sim


def outcome(sim: Simulation, name: str) -> Any:
    return next(o for o in sim.results() if o.pod.name == name)


def test_missing_claim_holds_the_pod_at_pre_enqueue() -> None:
    sim = simulate(node("n1"), GPU_CLASS, gpus("n1", "a100"), pod("p", claim="nope"))
    o = outcome(sim, "p")
    assert (o.status, o.attempts) == ("Gated", [])
    assert o.gated == 'DynamicResources: could not find ResourceClaim "default/nope"'


def test_missing_device_class_is_a_pre_filter_rejection() -> None:
    sim = simulate(node("n1"), node("n2"), gpus("n1", "a100"), template("t", klass="no-such-class"),
                   pod("p", template_name="t"))
    att = outcome(sim, "p").attempts[0]
    assert att.message == ("0/2 nodes are available: request gpu: device class no-such-class does not exist. "
                           "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is "
                           "not helpful for scheduling.")


def test_two_pods_never_get_one_device_and_prebind_writes_the_claims() -> None:
    """n1 has one GPU, n2 none: the first pod takes n1/gpu-0; the second finds no free device."""
    sim = simulate(node("n1"), node("n2"), GPU_CLASS, gpus("n1", "a100"), template("t"),
                   pod("a", template_name="t"), pod("b", template_name="t"))
    assert outcome(sim, "a").node == "n1"
    b = outcome(sim, "b").attempts[0]
    assert b.filter["n1"]["reasons"] == ["cannot allocate all claims"]
    assert "devices in use" in b.filter["n1"]["detail"]
    assert "no device of class gpu" in b.filter["n2"]["detail"]
    assert b.message == ("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
                         "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    claim = sim.dra.claims[("default", "a-gpu")]
    assert claim.raw["metadata"]["finalizers"] == [FINALIZER]
    assert claim.allocation == {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}
    assert [(r.resource, r.name) for r in claim.reserved_for] == [("pods", "a")]
    assert claim.raw["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert sim.dra.in_flight == {}


def test_shared_claim_pins_its_second_consumer_to_the_node() -> None:
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    sim = simulate(node("n1"), node("n2"), GPU_CLASS, gpus("n1", "a100"), gpus("n2", "a100"), shared,
                   pod("a", claim="shared"), pod("b", claim="shared"))
    assert outcome(sim, "a").node == "n1"
    b = outcome(sim, "b")
    assert b.node == "n1"
    assert b.attempts[0].filter["n2"]["reasons"] == ["resourceclaim not available on the node"]
    assert [r.name for r in sim.dra.claims[("default", "shared")].reserved_for] == ["a", "b"]


@pytest.mark.parametrize(("selector", "want"), [
    ('device.attributes["gpu.example.com"].model == "h100"', "n2"),
    ('device.attributes["gpu.example.com"].model == "a100"', "n1"),
])
def test_request_selector_picks_the_node_with_the_model(selector: str, want: str) -> None:
    sim = simulate(node("n1"), node("n2"), GPU_CLASS, gpus("n1", "a100"), gpus("n2", "h100"),
                   template("t", selector=selector), pod("p", template_name="t"))
    assert outcome(sim, "p").node == want


def test_selector_runtime_error_is_upstreams_error_status() -> None:
    """A selector naming an attribute the device lacks: ``no such key`` from CEL, wrapped as
    the structured allocator does (``claim X: selector #0: CEL runtime error: ...``)."""
    sim = simulate(node("n1"), GPU_CLASS, gpus("n1", "a100"),
                   template("t", selector='device.attributes["gpu.example.com"].memory == 1'),
                   pod("p", template_name="t"))
    att = outcome(sim, "p").attempts[0]
    assert att.result == "Error"
    assert att.message == ('running "DynamicResources" filter plugin: claim default/p-gpu: selector #0: '
                           "CEL runtime error: no such key: memory")


@pytest.mark.parametrize("count", [1, 2, 3])
def test_batch_shortcut_agrees_with_the_per_node_search(count: int) -> None:
    """The batch form's shortcut for one claim with one ExactCount request (count free,
    selectable devices per node) agrees with the per-node structured search, with some
    devices already allocated: n1 has 3 GPUs of which 1 in use, n2 2 GPUs both free, n3 1
    GPU in use, n4 none. Hand count: count 1 -> n1, n2; 2 -> n1, n2; 3 -> none."""
    held = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "held", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"},
                {"request": "gpu", "driver": "gpu.example.com", "pool": "n3", "device": "gpu-0"}]}}}}
    tmpl = template("t")
    tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = count
    objs = [node("n1"), node("n2"), node("n3"), node("n4"), GPU_CLASS, gpus("n1", "a", "a", "a"),
            gpus("n2", "a", "a"), gpus("n3", "a"), held, tmpl, pod("p", template_name="t")]
    raws = default_manifest(objs)
    m = Manifest(nodes=[Node.from_dict(r) for r in raws if r["kind"] == "Node"],
                 pods=[Pod.from_dict(r, require_limits=False) for r in raws if r["kind"] == "Pod"],
                 dra=[parse_dra_object(r) for r in raws if r["kind"] not in ("Node", "Pod")])
    cfg = load_config(None, in_tree_registry())
    sim = Simulation(m, cfg, tie_break="name")
    sched = sim.sched
    sched.cache.update_snapshot(sched.snapshot)
    fw = sched.profiles["default-scheduler"]
    pl = fw.by_name["DynamicResources"]
    p = sim.cluster.pods[m.pods[0].uid]
    state = CycleState()
    _, st = pl.pre_filter(state, p, [])
    assert st.success
    table = sched.snapshot.table
    mask = pl.filter_nodes(state, p, table, table.all)
    batch = {table.names[i] for i, ok in zip(table.all.tolist(), mask.tolist()) if ok}
    per_node = {table.names[i] for i in table.all.tolist() if pl.filter(state, p, table.infos[i]).success}
    want = {1: {"n1", "n2"}, 2: {"n1", "n2"}, 3: set()}[count]
    assert batch == per_node == want


def test_reserve_puts_the_allocation_in_flight_and_unreserve_takes_it_back() -> None:
    """Upstream Reserve (SignalClaimPendingAllocation) / Unreserve (RemoveClaimPendingAllocation):
    between them the device counts as allocated for every other pod, and the claim itself
    is "in the process of being allocated"."""
    objs = [node("n1"), GPU_CLASS, gpus("n1", "a"), template("t"), pod("p", template_name="t")]
    raws = default_manifest(objs)
    m = Manifest(nodes=[Node.from_dict(r) for r in raws if r["kind"] == "Node"],
                 pods=[Pod.from_dict(r, require_limits=False) for r in raws if r["kind"] == "Pod"],
                 dra=[parse_dra_object(r) for r in raws if r["kind"] not in ("Node", "Pod")])
    sim = Simulation(m, load_config(None, in_tree_registry()), tie_break="name")
    sim.sched.cache.update_snapshot(sim.sched.snapshot)
    pl = sim.sched.profiles["default-scheduler"].by_name["DynamicResources"]
    p = sim.cluster.pods[m.pods[0].uid]
    state = CycleState()
    assert pl.pre_filter(state, p, [])[1].success
    table = sim.sched.snapshot.table
    assert pl.filter(state, p, table.infos[table.index["n1"]]).success
    assert pl.reserve(state, p, "n1").success
    claim = sim.dra.claims[("default", "p-gpu")]
    assert set(sim.dra.in_flight) == {claim.uid}
    assert sim.dra.in_flight[claim.uid].allocated_devices == (("gpu.example.com", "n1", "gpu-0"),)
    again = CycleState()
    st = pl.pre_filter(again, p, [])[1]
    assert st.message == "resource claim default/p-gpu is in the process of being allocated"
    pl.unreserve(state, p, "n1")
    assert sim.dra.in_flight == {}
    assert claim.allocation is None
