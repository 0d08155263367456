"""Property: the volume plugins' batch forms (NodeVolumeLimits' per-node columns,
VolumeBinding's all-bound fast path) agree exactly with their per-node forms, on random
clusters with CSI limits, bound, shared and unbound claims and in-tree disks; and the
columns stay right as the snapshot changes under them (pods bound between cycles)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import snapshot_of
from kubesched.cluster.storage import InProcessStorage
from kubesched.plugins.nodevolumelimits import CSILimits
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.testing import storage as S
from kubesched.testing.handle import FakeHandle
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_node, make_pod

DRIVERS = ["a.csi", "b.csi"]


@st.composite
def clusters(draw: Any) -> tuple[Any, list[Any], list[Any], list[Any]]:
    n = draw(st.integers(1, 6))
    nodes = [make_node().name(f"n{i}").label("zone", draw(st.sampled_from(["z1", "z2"]))).capacity(cpu="8").obj()
             for i in range(n)]
    objects: list[Any] = [S.storage_class("wait-a", provisioner="a.csi"), S.storage_class("wait-b", provisioner="b.csi")]
    for i in range(n):
        if draw(st.booleans()):
            limits = {d: draw(st.one_of(st.none(), st.integers(0, 3))) for d in DRIVERS if draw(st.booleans())}
            objects.append(S.csi_node(f"n{i}", limits))
    claims = []
    for j in range(draw(st.integers(1, 8))):
        d = draw(st.sampled_from(DRIVERS))
        if draw(st.booleans()):
            aff = {"zone": [draw(st.sampled_from(["z1", "z2"]))]} if draw(st.booleans()) else None
            objects.append(S.pv(f"pv{j}", "", affinity=aff, source={"csi": {"driver": d, "volumeHandle": f"h{j}"}}))
            objects.append(S.pvc(f"c{j}", "", bound_pv=f"pv{j}"))
        else:
            objects.append(S.pvc(f"c{j}", "wait-a" if d == "a.csi" else "wait-b"))
        claims.append(f"c{j}")
    existing = []
    for k in range(draw(st.integers(0, 8))):
        w = make_pod().name(f"e{k}").node(f"n{draw(st.integers(0, n - 1))}")
        for c in draw(st.lists(st.sampled_from(claims), max_size=3, unique=True)):
            w.pvc(c)
        if draw(st.integers(0, 4)) == 0:
            w.set("spec.volumes", [{"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-x"}}])
        existing.append(w.obj())
    vols: list[Any] = [{"name": c, "persistentVolumeClaim": {"claimName": c}}
                       for c in draw(st.lists(st.sampled_from(claims), min_size=1, max_size=3, unique=True))]
    if draw(st.integers(0, 2)) == 0:  # an in-tree disk: counted as ebs.csi.aws.com where a CSINode exists
        vols.append({"name": "ebs", "awsElasticBlockStore": {"volumeID": draw(st.sampled_from(["vol-x", "vol-y"]))}})
        for i in range(n):
            if draw(st.booleans()):
                objects.append(S.csi_node(f"n{i}", {"ebs.csi.aws.com": draw(st.integers(0, 2))}))
                break
    pod = make_pod().name("incoming").set("spec.volumes", vols)
    return pod.obj(), existing, nodes, objects


def _handle(existing: list[Any], nodes: list[Any], objects: list[Any]) -> FakeHandle:
    h = FakeHandle(snapshot_of(existing, nodes))
    store = InProcessStorage(lambda n: None)
    store.load(objects)
    h.storage = h.storage_writer = store
    return h


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_volume_plugins_batch_and_per_node_agree(cluster: tuple[Any, list[Any], list[Any], list[Any]]) -> None:
    pod, existing, nodes, objects = cluster
    handle = _handle(existing, nodes, objects)
    for cls in (CSILimits, VolumeBinding):
        pl = cls(None, handle)
        per_node = filter_all(pl, pod, handle)
        batch = filter_all(pl, pod, handle, batch=True)
        assert per_node == batch, cls.__name__
        # the same plugin instance again (its columns cached), after the snapshot changed
        if existing:
            moved = existing[1:]
            handle.snapshot = snapshot_of(moved, nodes)
            assert filter_all(pl, pod, handle) == filter_all(pl, pod, handle, batch=True), cls.__name__
            handle.snapshot = snapshot_of(existing, nodes)
