"""Extended resources backed by DRA (gate DRAExtendedResource, on from v1.36).

Cases and expected values from upstream's tables:
- pkg/scheduler/framework/plugins/noderesources/fit_test.go, TestEnoughRequests (the
  ``draExtendedResourceEnabled`` cases: node allocatable ``makeAllocatableResources(10, 20,
  32, 5, 20, 5)``, a DeviceClass ``device-class-name`` with extendedResourceName
  ``extended.resource.dra.io/something``);
- pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go, TestPlugin's
  ``extended-resource-*`` and ``implicit-extended-resource-*`` cases (class
  ``my-resource-class`` with extendedResourceName ``example.com/gpu``, slices with devices
  ``instance-1``..``instance-4`` on ``worker``, the claims ``extendedResourceClaim*`` and
  allocation results ``container-0-request-0`` etc.);
- the request naming and init-container reuse of extendeddynamicresources.go
  ``createRequestsAndMappings`` (hand computation shown per case).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import FINALIZER, parse_dra_object
from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import snapshot_of
from kubesched.cluster.dra import InProcessDra
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.dra_extended import DeviceClassResolver
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.features import Features
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.extended import SPECIAL_NAME, requests_and_mappings
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.plugins.noderesources.fit import Fit
from kubesched.testing.handle import FakeHandle
from kubesched.testing.harness import filter_all

ON, OFF = Features.for_version("1.36"), Features.for_version("1.35")
CLASS = "my-resource-class"
GPU = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/my-resource-class"


def device_class(name: str, ern: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if ern is not None:
        spec["extendedResourceName"] = ern
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def slice_(node: str, *devices: str, driver: str = "some-driver") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d} for d in devices]}}


def mk_node(name: str = "worker", **extra: str) -> Node:
    alloc = {"cpu": "10", "memory": "20Gi", "pods": "32", **extra}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                           "status": {"capacity": alloc, "allocatable": alloc}}, validate=False)


def mk_pod(*containers: dict[str, str], init: tuple[dict[str, str], ...] = (), sidecar: dict[str, str] | None = None,
           name: str = "my-pod", claims: tuple[str, ...] = ()) -> Pod:
    """``st.MakePod().Name("my-pod").UID("1234").Req(...)``: one container per request map."""
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "i", "resources": {"requests": dict(c)}}
                                           for i, c in enumerate(containers)]}
    inits = [{"name": f"i{i}", "image": "i", "resources": {"requests": dict(c)}} for i, c in enumerate(init)]
    if sidecar is not None:
        inits.append({"name": "side", "image": "i", "restartPolicy": "Always", "resources": {"requests": dict(sidecar)}})
    if inits:
        spec["initContainers"] = inits
    if claims:
        spec["resourceClaims"] = [{"name": c, "resourceClaimName": c} for c in claims]
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": "1234"}, "spec": spec},
                         validate=False)


def dra_with(*objects: dict[str, Any]) -> InProcessDra:
    dra = InProcessDra()
    dra.load([parse_dra_object(o) for o in objects])
    return dra


def handle(nodes: list[Node], dra: InProcessDra, features: Features = ON) -> FakeHandle:
    return FakeHandle(snapshot_of([], nodes), dra=dra, features=features)


def extended_claim(name: str, request: str, klass: str, node: str = "worker",
                   device: str = "instance-1") -> dict[str, Any]:
    """``extendedResourceClaim`` / ``extendedResourceClaimNode2``: a claim a previous cycle created."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "generateName": "my-pod-extended-resources-",
                         "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234",
                                              "controller": True}]},
            "spec": {"devices": {"requests": [{"name": request, "exactly": {"deviceClassName": klass}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"driver": "some-driver", "pool": "worker", "device": device, "request": request}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}}


# -- NodeResourcesFit (fit_test.go TestEnoughRequests) -----------------------------------------------
DRA_RES = "extended.resource.dra.io/something"
FIT_NODE = {"cpu": "10m", "memory": "20", "pods": "32", "example.com/aaa": "5", "ephemeral-storage": "20",
            "hugepages-2Mi": "5"}


def fit_filter(p: Pod, features: Features) -> list[tuple[Code, tuple[str, ...]] | None]:
    n = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node"},
                        "status": {"capacity": FIT_NODE, "allocatable": FIT_NODE}}, validate=False)
    h = handle([n], dra_with(device_class("device-class-name", DRA_RES)), features)
    plugin = Fit(None, h)
    out = []
    for batch in (False, True):
        st = filter_all(plugin, p, h, batch=batch)["node"]
        out.append(None if st.success else (st.code, st.reasons))
    return out


FIT_CASES = [
    ("extended resource backed by device plugin", {"example.com/aaa": "1"}, ON, None),
    ("extended resource backed by DRA", {"cpu": "1m", "memory": "1", DRA_RES: "1"}, ON, None),
    ("extended resource backed by DRA not enabled", {"cpu": "1m", "memory": "1", DRA_RES: "1"}, OFF,
     (Code.UnschedulableAndUnresolvable, (f"Insufficient {DRA_RES}",))),
    ("extended resource NOT backed by DRA", {"cpu": "1m", "memory": "1", "example.com/bbb": "1"}, ON,
     (Code.UnschedulableAndUnresolvable, ("Insufficient example.com/bbb",))),
    ("extended resource was backed by Device Plugin (Allocatable: 0)", {DRA_RES: "1"}, ON, None),
]


@pytest.mark.parametrize("requests,features,want", [c[1:] for c in FIT_CASES], ids=[c[0] for c in FIT_CASES])
def test_fit_leaves_mapped_resources_to_dra(requests: dict[str, str], features: Features, want: Any) -> None:
    assert fit_filter(mk_pod(requests), features) == [want, want]


def test_fit_checks_a_mapped_resource_the_node_advertises() -> None:
    """A node whose allocatable has the resource (a device plugin) is checked as before:
    ``shouldDelegateResourceToDRA`` is false when allocatable > 0 (fit.go)."""
    got = fit_filter(mk_pod({"example.com/aaa": "6"}), ON)
    assert got == [(Code.UnschedulableAndUnresolvable, ("Insufficient example.com/aaa",))] * 2


def test_fit_device_class_events_only_with_the_gate() -> None:
    """fit.go EventsToRegister adds DeviceClass Add|Update with DRAExtendedResource."""
    def events(features: Features) -> list[Any]:
        return [e.event for e in Fit(None, handle([mk_node()], dra_with(), features)).events_to_register()]
    assert not any(e.resource == Resource.DeviceClass for e in events(OFF))
    assert [e.action for e in events(ON) if e.resource == Resource.DeviceClass] == [ActionType.Add | ActionType.Update]


HINT_CASES = [
    # isSchedulableAfterDeviceClassEvent (fit.go), by hand from its branches
    ("added class whose implicit name the pod requests", None, device_class(CLASS), {IMPLICIT: "1"}, True),
    ("added class with the requested extendedResourceName", None, device_class(CLASS, GPU), {GPU: "1"}, True),
    ("added class the pod does not request", None, device_class(CLASS, GPU), {"example.com/other": "1"}, False),
    ("update keeping the extendedResourceName", device_class(CLASS, GPU), device_class(CLASS, GPU), {GPU: "1"},
     False),
    ("update setting the requested extendedResourceName", device_class(CLASS), device_class(CLASS, GPU),
     {GPU: "1"}, True),
]


@pytest.mark.parametrize("old,new,requests,queue", [c[1:] for c in HINT_CASES], ids=[c[0] for c in HINT_CASES])
def test_fit_hint_after_device_class(old: Any, new: Any, requests: dict[str, str], queue: bool) -> None:
    plugin = Fit(None, handle([mk_node()], dra_with(), ON))
    got = plugin.hint_after_device_class(mk_pod(requests), old and parse_dra_object(old), parse_dra_object(new))
    assert got == (QueueingHint.Queue if queue else QueueingHint.QueueSkip)


# -- DynamicResources (dynamicresources_test.go TestPlugin) ------------------------------------------
def run_cycle(dra: InProcessDra, p: Pod, nodes: list[Node]) -> tuple[DynamicResources, CycleState, dict[str, Any]]:
    h = handle(nodes, dra)
    plugin = DynamicResources(None, h)
    state = CycleState()
    _, pre = plugin.pre_filter(state, p, h.snapshot.node_infos)
    filters = {ni.name: plugin.filter(state, p, ni) for ni in h.snapshot.node_infos} if pre.success else {}
    return plugin, state, {"prefilter": pre, "filter": filters}


def created_claim(dra: InProcessDra) -> Any:
    made = [c for c in dra.claims.values() if c.name.startswith("my-pod-extended-resources-")]
    assert len(made) == 1
    return made[0]


def test_extended_resource_name_with_resources() -> None:
    """``extended-resource-name-with-resources``: Reserve puts the in-memory claim in flight
    with ``container-0-request-0`` on instance-1; PreBind creates the claim (generateName,
    annotation, owner), allocated and reserved for the pod, and records it on the pod."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    assert got["filter"]["worker"].success
    assert plugin.reserve(state, p, "worker").success
    (flight,) = dra.in_flight.values()
    assert flight.name == SPECIAL_NAME
    assert (flight.allocation or {})["devices"]["results"] == [
        {"request": "container-0-request-0", "driver": "some-driver", "pool": "worker", "device": "instance-1"}]
    assert plugin.pre_bind(state, p, "worker").success
    claim = created_claim(dra)
    meta = claim.raw["metadata"]
    assert meta["generateName"] == "my-pod-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"][0]["uid"] == "1234" and meta["ownerReferences"][0]["controller"] is True
    assert meta["finalizers"] == [FINALIZER]
    assert claim.raw["spec"]["devices"]["requests"] == [
        {"name": "container-0-request-0",
         "exactly": {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]
    assert claim.allocation["devices"]["results"][0]["device"] == "instance-1"
    assert [(r.name, r.uid) for r in claim.reserved_for] == [("my-pod", "1234")]
    assert p.raw["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "c0", "resourceName": GPU, "requestName": "container-0-request-0"}],
        "resourceClaimName": claim.name}
    assert dra.in_flight == {}


def test_extended_resource_name_no_resource() -> None:
    """``extended-resource-name-no-resource``: no slice, so Filter cannot allocate; PostFilter
    has nothing to deallocate or delete."""
    dra = dra_with(device_class(CLASS, GPU))
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    st = got["filter"]["worker"]
    assert (st.code, st.reasons) == (Code.UnschedulableAndUnresolvable, ("cannot allocate all claims",))
    _, post = plugin.post_filter(state, p, {"worker": st})
    assert (post.code, post.reasons) == (Code.Unschedulable, ("still not schedulable",))


def test_non_dra_extended_resource_name_is_skipped() -> None:
    """``non-DRA-extended-resource-name-with-zero-allocatable``: the class has no
    extendedResourceName, so PreFilter skips the pod."""
    dra = dra_with(device_class(CLASS), slice_("worker", "instance-1"))
    _, _, got = run_cycle(dra, mk_pod({GPU: "1"}), [mk_node(**{GPU: "0"})])
    assert got["prefilter"].code == Code.Skip


def test_gate_off_skips_the_pod() -> None:
    """Without DRAExtendedResource (1.35) a pod without claims is skipped, as before."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    h = handle([mk_node()], dra, OFF)
    _, st = DynamicResources(None, h).pre_filter(CycleState(), mk_pod({GPU: "1"}), h.snapshot.node_infos)
    assert st.code == Code.Skip


def test_zero_allocatable_goes_to_dra() -> None:
    """``extended-resource-name-with-zero-allocatable``: allocatable 0 counts as not served."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node(**{GPU: "0"})])
    assert got["filter"]["worker"].success
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    assert created_claim(dra).allocation["devices"]["results"][0]["request"] == "container-0-request-0"


def test_one_device_plugin_one_dra() -> None:
    """``extended-resource-one-device-plugin-one-dra``: the node serves example.com/gpu by a
    device plugin; example.com/gpu2 (class my-resource-class2) is allocated as
    ``container-0-request-1`` (its index among the container's sorted request names)."""
    dra = dra_with(device_class(CLASS, GPU), device_class(CLASS + "2", "example.com/gpu2"),
                   slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1", "example.com/gpu2": "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node(**{GPU: "1"})])
    assert got["filter"]["worker"].success
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    claim = created_claim(dra)
    assert claim.raw["spec"]["devices"]["requests"] == [
        {"name": "container-0-request-1",
         "exactly": {"deviceClassName": CLASS + "2", "allocationMode": "ExactCount", "count": 1}}]
    assert claim.allocation["devices"]["results"][0]["request"] == "container-0-request-1"


def test_implicit_extended_resource_name() -> None:
    """``implicit-extended-resource-name-with-resources``: one container asks for the implicit
    name (1) and example.com/gpu (2), both class my-resource-class: requests
    container-0-request-0 (instance-1) and container-0-request-1 (instance-2, instance-3)."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1", "instance-2", "instance-3", "instance-4"))
    p = mk_pod({IMPLICIT: "1", GPU: "2"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    assert got["filter"]["worker"].success
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    results = created_claim(dra).allocation["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [
        ("container-0-request-0", "instance-1"), ("container-0-request-1", "instance-2"),
        ("container-0-request-1", "instance-3")]


def test_implicit_extended_resource_name_two_containers() -> None:
    """``implicit-extended-resource-name-two-containers-with-resources``."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1", "instance-2", "instance-3", "instance-4"))
    p = mk_pod({IMPLICIT: "1"}, {GPU: "2"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    results = created_claim(dra).allocation["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [
        ("container-0-request-0", "instance-1"), ("container-1-request-0", "instance-2"),
        ("container-1-request-0", "instance-3")]


@pytest.mark.parametrize("node", ["worker", "worker-2"], ids=["has-claim", "delete-claim"])
def test_claim_of_an_earlier_cycle_is_deleted(node: str) -> None:
    """``extended-resource-name-with-resources-has-claim`` / ``-delete-claim``: Filter says
    "cannot schedule extended resource claim"; PostFilter deletes the claim."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"),
                   extended_claim("my-pod-extended-resources-0", "container-0-request-0", CLASS, node=node))
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node()])
    st = got["filter"]["worker"]
    assert (st.code, st.reasons) == (Code.UnschedulableAndUnresolvable, ("cannot schedule extended resource claim",))
    _, post = plugin.post_filter(state, p, {"worker": st})
    assert (post.code, post.reasons) == (Code.Unschedulable, ("deletion of ResourceClaim completed",))
    assert ("default", "my-pod-extended-resources-0") not in dra.claims


def test_bind_failure_deletes_the_created_claim() -> None:
    """``extended-resource-name-bind-failure``: Unreserve after PreBind removes the claim."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1"})
    plugin, state, _ = run_cycle(dra, p, [mk_node()])
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    created_claim(dra)
    plugin.unreserve(state, p, "worker")
    assert not [c for c in dra.claims.values() if c.name.startswith("my-pod-extended-resources-")]


def test_skip_bind_releases_the_devices() -> None:
    """``extended-resource-name-skip-bind``: Unreserve before PreBind takes the in-memory
    claim out of flight and creates nothing."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1"})
    plugin, state, _ = run_cycle(dra, p, [mk_node()])
    assert plugin.reserve(state, p, "worker").success
    assert len(dra.in_flight) == 1
    plugin.unreserve(state, p, "worker")
    assert dra.in_flight == {} and not dra.claims


def test_claim_creation_failure_is_a_prebind_error() -> None:
    """``extended-resource-name-claim-creation-failure``: the create error fails PreBind."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    p = mk_pod({GPU: "1"})
    plugin, state, _ = run_cycle(dra, p, [mk_node()])
    assert plugin.reserve(state, p, "worker").success

    def refuse(raw: dict[str, Any]) -> Any:
        from kubesched.framework.dra import DraWriteError
        raise DraWriteError("claim creation errors")
    dra.create_claim = refuse  # type: ignore[method-assign]
    st = plugin.pre_bind(state, p, "worker")
    assert (st.code, st.reasons) == (Code.Error, ("claim creation errors",))
    assert dra.in_flight == {}


def test_not_served_anywhere_cannot_fit() -> None:
    """filterExtendedResources: a request the node neither advertises nor a class maps,
    beside one that is mapped: "cannot fit resource"."""
    dra = dra_with(device_class(CLASS, GPU), slice_("worker", "instance-1"))
    _, _, got = run_cycle(dra, mk_pod({GPU: "1", "example.com/other": "1"}), [mk_node()])
    st = got["filter"]["worker"]
    assert (st.code, st.reasons) == (Code.UnschedulableAndUnresolvable, ("cannot fit resource",))


def test_served_by_device_plugin_needs_no_claim() -> None:
    """All requests served by a device plugin on the node: Filter passes without DRA and
    PreBind creates nothing (``bindClaim``: no allocation, no requests)."""
    dra = dra_with(device_class(CLASS, GPU))
    p = mk_pod({GPU: "1"})
    plugin, state, got = run_cycle(dra, p, [mk_node(**{GPU: "2"})])
    assert got["filter"]["worker"].success
    assert plugin.reserve(state, p, "worker").success and plugin.pre_bind(state, p, "worker").success
    assert not dra.claims and "extendedResourceClaimStatus" not in (p.raw.get("status") or {})


# -- createRequestsAndMappings --------------------------------------------------------------------------
def test_init_container_reuses_a_later_container_request() -> None:
    """An init container (index 0) asking for 1 reuses container 1's request of 2 (sum 2 >= 1):
    no own request; its mapping names container-1-request-0. By hand from
    ``createResourceRequestAndMappings`` with ``reusableRequests = longLived[0:]``."""
    resolver = DeviceClassResolver([parse_dra_object(device_class(CLASS, GPU))])
    reqs, maps = requests_and_mappings(mk_pod({GPU: "2"}, init=({GPU: "1"},)), {GPU: 3}, resolver)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-1-request-0", 2)]
    assert maps == [{"containerName": "c0", "resourceName": GPU, "requestName": "container-1-request-0"},
                    {"containerName": "i0", "resourceName": GPU, "requestName": "container-1-request-0"}]


def test_largest_init_request_stands_for_all() -> None:
    """Two init containers (3 and 1) and no regular container asking: each gets its own
    request; the larger (container-0-request-0, 3) is kept and both map to it."""
    resolver = DeviceClassResolver([parse_dra_object(device_class(CLASS, GPU))])
    reqs, maps = requests_and_mappings(mk_pod({}, init=({GPU: "3"}, {GPU: "1"})), {GPU: 3}, resolver)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-0-request-0", 3)]
    assert [m["requestName"] for m in maps] == ["container-0-request-0", "container-0-request-0"]


def test_sidecar_is_long_lived() -> None:
    """A sidecar (restartPolicy Always) gets its own request like a regular container; its
    index is its place among init containers (0)."""
    resolver = DeviceClassResolver([parse_dra_object(device_class(CLASS, GPU))])
    reqs, _ = requests_and_mappings(mk_pod({GPU: "1"}, sidecar={GPU: "1"}), {GPU: 2}, resolver)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 1), ("container-1-request-0", 1)]


def test_resolver_implicit_and_explicit_names() -> None:
    """extended/cache.go: the explicit name and ``deviceclass.resource.kubernetes.io/<class>``
    both map; of two classes naming one resource the later wins."""
    r = DeviceClassResolver([parse_dra_object(device_class("a", GPU)), parse_dra_object(device_class("b", GPU))])
    got_a, got_b, got_gpu = r.device_class("deviceclass.resource.kubernetes.io/a"), \
        r.device_class("deviceclass.resource.kubernetes.io/b"), r.device_class(GPU)
    assert (got_a and got_a.name, got_b and got_b.name, got_gpu and got_gpu.name) == ("a", "b", "b")
    assert r.device_class("example.com/none") is None
