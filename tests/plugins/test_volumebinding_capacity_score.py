"""VolumeBinding's capacity score behind StorageCapacityScoring (on by default from v1.37).

Expected values are hand computed from upstream ``plugins/volumebinding/volume_binding.go``
(``Score``: static bindings' PV capacities, else the CSIStorageCapacity of each claim to
provision), ``scorer.go`` (``buildScorerFunction``: utilisation ``requested * 100 /
capacity`` through the shape, classes averaged with ``math.Round``), ``helper/shape_score.go``
(``BuildBrokenLinearFunction``) and ``apis/config/v1/defaults.go`` (default shape with the
gate: (0, 10), (100, 0), scaled by 10). Before v1.37 PreScore skips.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.storage import InProcessStorage
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.status import Code
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.plugin import VolumeBindingArgs
from kubesched.testing import storage as S
from kubesched.testing.handle import handle_for
from kubesched.testing.wrappers import make_node, make_pod

PROV = "csi-sc"
HOST = "kubernetes.io/hostname"


def nodes() -> list[Any]:
    return [make_node().name(n).label(HOST, n).capacity(cpu="1").obj() for n in ("node-a", "node-b")]


def scores(version: str, objects: list[Any], claims: tuple[str, ...] = ("pvc",),
           args: VolumeBindingArgs | None = None, batch: bool = False) -> dict[str, int] | Code:
    handle = handle_for([], nodes())
    store = InProcessStorage(lambda n: None)
    store.load(objects)
    handle.storage = handle.storage_writer = store
    handle.features = Features.for_version(version)
    pl = VolumeBinding(args, handle)
    w = make_pod().name("pod")
    for c in claims:
        w = w.pvc(c)
    pod = w.obj()
    state = CycleState()
    infos = handle.snapshot.node_infos
    _, st = pl.pre_filter(state, pod, infos)
    assert st.success or st.code == Code.Skip
    for ni in infos:
        assert pl.filter(state, pod, ni).success
    pre = pl.pre_score(state, pod, infos)
    if not pre.success:
        return pre.code
    if batch:
        table = handle.snapshot.table
        return dict(zip(table.names, pl.score_nodes(state, pod, table, table.all).tolist()))
    return {ni.name: pl.score(state, pod, ni) for ni in infos}


def provisioning(request: str = "50Gi") -> list[Any]:
    return [S.storage_class(PROV, provisioner="csi.example.com"), S.pvc("pvc", PROV, request=request),
            S.csi_driver("csi.example.com", True),
            S.capacity("cap-a", PROV, "100Gi", {HOST: "node-a"}), S.capacity("cap-b", PROV, "400Gi", {HOST: "node-b"})]


@pytest.mark.parametrize("batch", [False, True])
def test_provisioning_prefers_the_emptier_node(batch: bool) -> None:
    # node-a: 50Gi of 100Gi -> utilisation 50 -> 100 + (0-100)*(50-0)/100 = 50
    # node-b: 50Gi of 400Gi -> utilisation 5000/400 = 12 -> 100 - 100*12/100 = 88
    assert scores("1.37", provisioning(), batch=batch) == {"node-a": 50, "node-b": 88}


def test_static_bindings_use_the_pvs_capacity() -> None:
    # 50Gi claims on a 100Gi PV (node-a: 50) or a 200Gi PV (node-b: 25 -> 75)
    objects = [S.storage_class("local"), S.pvc("pvc", "local", request="50Gi"),
               S.pv("pv-a", "local", capacity="100Gi", affinity={HOST: ["node-a"]}),
               S.pv("pv-b", "local", capacity="200Gi", affinity={HOST: ["node-b"]})]
    assert scores("1.37", objects) == {"node-a": 50, "node-b": 75}


def test_configured_shape_is_used() -> None:
    # shape (0, 0), (100, 10): the fuller node scores higher: 50 and 12
    args = VolumeBindingArgs(shape=((0, 0), (100, 10)), shape_set=True)
    assert scores("1.37", provisioning(), args=args) == {"node-a": 50, "node-b": 12}


def test_pods_without_claims_score_zero_when_on() -> None:
    assert scores("1.37", [], claims=()) == {"node-a": 0, "node-b": 0}


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_skipped_before_v1_37(version: str) -> None:
    assert scores(version, provisioning()) == Code.Skip


def test_the_gate_decides_not_the_release() -> None:
    handle = handle_for([], nodes())
    handle.features = Features.for_version("1.36", "StorageCapacityScoring=true")
    assert VolumeBinding(None, handle).shape == ((0, 100), (100, 0))
    handle.features = Features.for_version("1.37", "StorageCapacityScoring=false")
    assert VolumeBinding(None, handle).shape is None
