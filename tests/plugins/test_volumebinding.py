"""VolumeBinding PreFilter/Filter, ported from upstream
``pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go`` (TestVolumeBinding:
the cases whose expectations do not depend on the StorageCapacityScoring gate) and the
FindPodVolumes cases of ``volumebinding/binder_test.go`` (static binding, provisioning,
allowed topologies, storage capacity)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.storage import InProcessStorage
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.testing import storage as S
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_node, make_pod

WAIT, IMMEDIATE, HDD = "wait-sc", "immediate-sc", "wait-hdd-sc"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
NO_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
HOST = "kubernetes.io/hostname"


def _classes() -> list[Any]:
    return [S.storage_class(WAIT), S.storage_class(IMMEDIATE, "Immediate"), S.storage_class(HDD)]


def _run(pod: Any, nodes: list[Any], objects: list[Any]) -> dict[str, Status]:
    handle = handle_for([], nodes)
    store = InProcessStorage(lambda n: None)
    store.load(_classes() + objects)
    handle.storage = handle.storage_writer = store
    return filter_all(VolumeBinding(None, handle), pod, handle)


def _node(name: str, **labels: str) -> Any:
    w = make_node().name(name).capacity(cpu="1")
    for k, v in labels.items():
        w.label(k.replace("__", "/").replace("_", "."), v)
    return w.obj()


def _want(statuses: dict[str, Status]) -> dict[str, tuple[Code, tuple[str, ...]]]:
    return {n: (s.code, s.reasons) for n, s in statuses.items()}


OK = (Code.Success, ())


@pytest.mark.parametrize("claims,objects,nodes,want", [
    (["pvc-a"], [S.pvc("pvc-a", WAIT, bound_pv="pv-a"), S.pv("pv-a", WAIT)], ["node-a"], [OK]),
    (["pvc-a"], [], ["node-a"],
     [(Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "pvc-a" not found',))]),
    (["pvc-a", "pvc-b"], [S.pvc("pvc-a", WAIT, bound_pv="pv-a")], ["node-a"],
     [(Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "pvc-b" not found',))]),
    (["pvc-a"], [S.pvc("pvc-a", IMMEDIATE)], ["node-a"],
     [(Code.UnschedulableAndUnresolvable, ("pod has unbound immediate PersistentVolumeClaims",))]),
    (["pvc-a"], [S.pvc("pvc-a", WAIT)], ["node-a"], [(Code.UnschedulableAndUnresolvable, (BIND_CONFLICT,))]),
    (["pvc-a", "pvc-b"], [S.pvc("pvc-a", WAIT, bound_pv="pv-a"), S.pvc("pvc-b", WAIT),
                          S.pv("pv-a", WAIT, affinity={"foo": ["bar"]})], [("node-a", {"foo": "barbar"})],
     [(Code.UnschedulableAndUnresolvable, (NODE_CONFLICT, BIND_CONFLICT))]),
    (["pvc-a"], [S.pvc("pvc-a", WAIT, bound_pv="pv-a")], ["node-a"],
     [(Code.UnschedulableAndUnresolvable, (PV_NOT_EXIST,))]),
    (["pvc-a"], [S.pvc("pvc-a", WAIT, bound_pv="pv-a", phase="Lost")], ["node-a"],
     [(Code.UnschedulableAndUnresolvable,
       ('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',))]),
    (["pvc-a"], [S.pvc("pvc-a", WAIT, request="50Gi")]
     + [S.pv(f"pv-{n}-{i}", WAIT, capacity=c, affinity={HOST: [f"node-{n}"]})
        for n, c in (("a", "200Gi"), ("b", "100Gi")) for i in (0, 1)],
     ["node-a", "node-b", "node-c"], [OK, OK, (Code.UnschedulableAndUnresolvable, (BIND_CONFLICT,))]),
    (["pvc-0", "pvc-1"], [S.pvc("pvc-0", WAIT, request="50Gi"), S.pvc("pvc-1", HDD, request="100Gi")]
     + [S.pv(f"pv-{n}-{i}", WAIT if i < 2 else HDD, capacity=c, affinity={HOST: [f"node-{n}"]})
        for n, c in (("a", "200Gi"), ("b", "100Gi")) for i in range(4)],
     ["node-a", "node-b", "node-c"], [OK, OK, (Code.UnschedulableAndUnresolvable, (BIND_CONFLICT,))]),
], ids=["all-bound", "pvc-does-not-exist", "part-of-pvcs-do-not-exist", "immediate-claims-not-bound",
        "unbound-claims-no-matches", "bound-and-unbound-unsatisfied", "pv-not-found", "pv-not-found-claim-lost",
        "local-volumes-close-capacity", "local-volumes-close-capacity-multiple-pvcs"])
def test_volume_binding_table(claims: list[str], objects: list[Any], nodes: list[Any], want: list[Any]) -> None:
    pod = make_pod().name("pod-a")
    for c in claims:
        pod.pvc(c)
    node_objs = [_node(n) if isinstance(n, str) else make_node().name(n[0]).labels(n[1]).capacity(cpu="1").obj()
                 for n in nodes]
    got = _want(_run(pod.obj(), node_objs, objects))
    assert got == {n.name: w for n, w in zip(node_objs, want)}


def test_pod_without_claims_is_skipped() -> None:
    """volume_binding_test.go "pod has not pvcs": PreFilter skips, every node passes."""
    assert _want(_run(make_pod().name("pod-a").obj(), [_node("node-a")], [])) == {"node-a": OK}


# binder_test.go TestFindPodVolumesWithProvisioning / WithCSIStorageCapacity: provisioning classes
PROV = "provisionable-sc"


@pytest.mark.parametrize("objects,want", [
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV)], OK),
    ([S.storage_class(PROV, provisioner="test-provisioner", topologies=[{"zone": ["z2"]}]), S.pvc("pvc", PROV)],
     (Code.UnschedulableAndUnresolvable, (BIND_CONFLICT,))),
    ([S.storage_class(PROV, provisioner="test-provisioner", topologies=[{"zone": ["z1"]}]), S.pvc("pvc", PROV)], OK),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV),
      S.csi_driver("test-provisioner", True)], (Code.UnschedulableAndUnresolvable, (NO_SPACE,))),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV, request="1Gi"),
      S.csi_driver("test-provisioner", True), S.capacity("c", PROV, "1Gi", {"zone": "z1"})], OK),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV, request="2Gi"),
      S.csi_driver("test-provisioner", True), S.capacity("c", PROV, "1Gi", {"zone": "z1"})],
     (Code.UnschedulableAndUnresolvable, (NO_SPACE,))),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV, request="2Gi"),
      S.csi_driver("test-provisioner", True), S.capacity("c", PROV, "10Gi", {"zone": "z1"}, max_size="1Gi")],
     (Code.UnschedulableAndUnresolvable, (NO_SPACE,))),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV, request="1Gi"),
      S.csi_driver("test-provisioner", True), S.capacity("c", PROV, "1Gi", {"zone": "z2"})],
     (Code.UnschedulableAndUnresolvable, (NO_SPACE,))),
    ([S.storage_class(PROV, provisioner="test-provisioner"), S.pvc("pvc", PROV, request="1Gi"),
      S.csi_driver("test-provisioner", False)], OK),
    ([S.storage_class(PROV, provisioner="test-provisioner"),
      S.pvc("pvc", PROV, annotations={"volume.kubernetes.io/selected-node": "other-node"})],
     (Code.UnschedulableAndUnresolvable, (BIND_CONFLICT,))),
], ids=["provision", "allowed-topologies-mismatch", "allowed-topologies-match", "capacity-driver-no-objects",
        "capacity-sufficient", "capacity-insufficient", "maximum-volume-size-wins", "capacity-other-topology",
        "driver-without-capacity-tracking", "selected-other-node"])
def test_find_pod_volumes_provisioning(objects: list[Any], want: Any) -> None:
    pod = make_pod().name("pod-a").pvc("pvc").obj()
    got = _want(_run(pod, [make_node().name("node1").label("zone", "z1").capacity(cpu="1").obj()], objects))
    assert got == {"node1": want}


def test_static_binding_prefers_smallest_pv() -> None:
    """binder_test.go "unbound-pvc,pv-different-size": the smallest PV that fits is chosen
    (Reserve assumes it: the PV then carries the claimRef)."""
    pod = make_pod().name("pod-a").pvc("pvc").obj()
    handle = handle_for([], [_node("node1")])
    store = InProcessStorage(lambda n: None)
    store.load(_classes() + [S.pvc("pvc", WAIT, request="1Gi"), S.pv("pv-big", WAIT, capacity="10Gi"),
                             S.pv("pv-small", WAIT, capacity="2Gi"), S.pv("pv-too-small", WAIT, capacity="500Mi")])
    handle.storage = handle.storage_writer = store
    pl = VolumeBinding(None, handle)
    from kubesched.framework.cycle_state import CycleState
    state = CycleState()
    _, st = pl.pre_filter(state, pod, handle.snapshot.node_infos)
    assert st.success
    assert pl.filter(state, pod, handle.snapshot.node_infos[0]).success
    assert pl.reserve(state, pod, "node1").success
    assumed = pl.binder.cache.get_pv("pv-small")
    assert assumed is not None and assumed.claim_ref is not None and assumed.claim_ref.key == "default/pvc"
    assert store.pv("pv-small") is not None and store.pv("pv-small").claim_ref is None  # type: ignore[union-attr]
    pl.unreserve(state, pod, "node1")
    reverted = pl.binder.cache.get_pv("pv-small")
    assert reverted is not None and reverted.claim_ref is None


def _cycle(objects: list[Any], node: Any) -> tuple[Any, Any, Any, Any]:
    from kubesched.framework.cycle_state import CycleState
    pod = make_pod().name("pod-a").pvc("pvc").obj()
    handle = handle_for([], [node])
    store = InProcessStorage({node.name: node}.get)
    store.load(_classes() + objects)
    handle.storage = handle.storage_writer = store
    pl = VolumeBinding(None, handle)
    state = CycleState()
    assert pl.pre_filter(state, pod, handle.snapshot.node_infos)[1].success
    assert pl.filter(state, pod, handle.snapshot.node_infos[0]).success
    assert pl.reserve(state, pod, node.name).success
    return pl, state, pod, store


def test_prebind_static_binding_and_provisioning() -> None:
    """binder_test.go TestBindPodVolumes: a static binding writes the PV's claimRef (with the
    claim's uid, bound-by-controller) and the PV controller completes it; a provisioning writes
    selected-node and waits until the provisioned PV is bound."""
    node = make_node().name("node1").label("zone", "z1").capacity(cpu="1").obj()
    pl, state, pod, store = _cycle([S.pvc("pvc", WAIT), S.pv("pv-1", WAIT)], node)
    assert pl.pre_bind(state, pod, "node1").success
    pv, pvc = store.pv("pv-1"), store.pvc("default", "pvc")
    assert pv is not None and pvc is not None
    assert pv.claim_ref is not None and pv.claim_ref.uid == "uid-default-pvc" and pv.phase == "Bound"
    assert pv.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert (pvc.volume_name, pvc.phase, pvc.annotations["pv.kubernetes.io/bind-completed"]) == ("pv-1", "Bound", "yes")

    pl, state, pod, store = _cycle([S.storage_class(PROV, provisioner="p.csi"), S.pvc("pvc", PROV)], node)
    assert pl.pre_bind(state, pod, "node1").success
    pvc = store.pvc("default", "pvc")
    assert pvc is not None and pvc.annotations["volume.kubernetes.io/selected-node"] == "node1"
    assert pvc.volume_name == "pvc-uid-default-pvc" and pvc.phase == "Bound"


def test_prebind_write_refused_is_an_error_and_unreserve_reverts() -> None:
    """binder_test.go "bind-api-update fails": the PVC is gone when PreBind writes: an Error
    status; Unreserve drops the assumed (annotated) claim."""
    node = make_node().name("node1").capacity(cpu="1").obj()
    pl, state, pod, store = _cycle([S.storage_class(PROV, provisioner="p.csi"), S.pvc("pvc", PROV)], node)
    assert pl.binder.cache.get_pvc("default", "pvc").annotations.get(  # type: ignore[union-attr]
        "volume.kubernetes.io/selected-node") == "node1"
    del store.pvc_map["default/pvc"]
    st = pl.pre_bind(state, pod, "node1")
    assert st.code == Code.Error and 'persistentvolumeclaims "pvc" not found' in st.message
    pl.unreserve(state, pod, "node1")
    assert pl.binder.cache.get_pvc("default", "pvc") is None


def test_pre_bind_pre_flight() -> None:
    """Upstream v1.35 volume_binding.go ``PreBindPreFlight``: Success while a claim is still to
    bind on the node, Skip when every claim is bound, an error for a node without a plan."""
    node = make_node().name("node1").capacity(cpu="1").obj()
    pl, state, pod, _ = _cycle([S.storage_class(PROV, provisioner="p.csi"), S.pvc("pvc", PROV)], node)
    assert pl.pre_bind_pre_flight(state, pod, "node1").code == Code.Success
    st = pl.pre_bind_pre_flight(state, pod, "node2")
    assert st.code == Code.Error and st.message == 'no pod volumes found for node "node2"'
    bound = [S.pv("pv-1", WAIT, claim=("default", "pvc"), phase="Bound"), S.pvc("pvc", WAIT, bound_pv="pv-1")]
    pl, state, pod, _ = _cycle(bound, node)
    assert pl.pre_bind_pre_flight(state, pod, "node1").code == Code.Skip
