"""VolumeRestrictions, VolumeZone and NodeVolumeLimits, after upstream's tables:
``volumerestrictions/volume_restrictions_test.go`` (disk conflicts per volume type,
ReadWriteOncePod conflicts), ``volumezone/volume_zone_test.go`` (GA and beta zone/region
labels, ``__``-separated zone sets, nodes without zone labels, WaitForFirstConsumer claims
skipped) and ``nodevolumelimits/csi_test.go`` (per-driver limits from CSINode, volumes
shared by pods counted once, unbound claims counted through their class, in-tree EBS
migrated to ebs.csi.aws.com)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.storage import InProcessStorage
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.nodevolumelimits import CSILimits
from kubesched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT, VolumeRestrictions,
)
from kubesched.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from kubesched.testing import storage as S
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_node, make_pod

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def _handle(existing: list[Any], nodes: list[Any], objects: list[Any]) -> Any:
    handle = handle_for(existing, nodes)
    store = InProcessStorage(lambda n: None)
    store.load(objects)
    handle.storage = handle.storage_writer = store
    return handle


def _codes(plugin_cls: Any, pod: Any, existing: list[Any], nodes: list[Any], objects: list[Any]) -> dict[str, Any]:
    handle = _handle(existing, nodes, objects)
    return {n: (s.code, s.reasons) for n, s in filter_all(plugin_cls(None, handle), pod, handle).items()}


def _vol_pod(name: str, node: str = "", **volume: Any) -> Any:
    w = make_pod().name(name).set("spec.volumes", [{"name": "v", **volume}])
    if node:
        w.node(node)
    return w.obj()


OK = (Code.Success, ())
NODE = make_node().name("machine1").capacity(cpu="1").obj()


# -- VolumeRestrictions (volume_restrictions_test.go) ---------------------------------------
@pytest.mark.parametrize("mine,theirs,conflict", [
    ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "foo"}}, True),
    ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}, False),
    ({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
     {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, False),
    ({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "foo"}}, True),
    ({"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}, True),
    ({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}}, False),
    ({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}},
     {"rbd": {"monitors": ["c", "b"], "pool": "foo", "image": "bar"}}, True),
    ({"rbd": {"monitors": ["a"], "pool": "foo", "image": "bar"}},
     {"rbd": {"monitors": ["c"], "pool": "foo", "image": "bar"}}, False),
    ({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}},
     {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}}, True),
    ({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0,
                "readOnly": True}},
     {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0,
                "readOnly": True}}, False),
], ids=["gce-same", "gce-different", "gce-both-read-only", "ebs-same", "ebs-read-only-still-conflicts",
        "ebs-different", "rbd-shared-monitor", "rbd-no-shared-monitor", "iscsi-same", "iscsi-both-read-only"])
def test_disk_conflicts(mine: dict[str, Any], theirs: dict[str, Any], conflict: bool) -> None:
    got = _codes(VolumeRestrictions, _vol_pod("p", **mine), [_vol_pod("e", "machine1", **theirs)], [NODE], [])
    assert got == {"machine1": (Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,)) if conflict else OK}


def test_read_write_once_pod_conflict_and_preemption_state() -> None:
    """volume_restrictions_test.go TestAccessModeConflicts: a RWOP claim in use by a scheduled
    pod rejects every node (Unschedulable); removing that pod (preemption's RemovePod) clears it."""
    rwop = S.pvc("claim", "sc", modes=("ReadWriteOncePod",))
    user = make_pod().name("user").pvc("claim").node("machine1").obj()
    other_node = make_node().name("machine2").capacity(cpu="1").obj()
    pod = make_pod().name("p").pvc("claim").obj()
    got = _codes(VolumeRestrictions, pod, [user], [NODE, other_node], [rwop])
    assert got == {n: (Code.Unschedulable, (ERR_REASON_RWOP_CONFLICT,)) for n in ("machine1", "machine2")}
    handle = _handle([user], [NODE, other_node], [rwop])
    pl = VolumeRestrictions(None, handle)
    state = CycleState()
    assert pl.pre_filter(state, pod, handle.snapshot.node_infos)[1].success
    assert pl.remove_pod(state, pod, user, handle.snapshot.node_infos[0]).success
    assert pl.filter(state, pod, handle.snapshot.node_infos[1]).success
    assert pl.add_pod(state, pod, user, handle.snapshot.node_infos[0]).success
    assert pl.filter(state, pod, handle.snapshot.node_infos[1]).code == Code.Unschedulable


def test_missing_claim_rejects_at_prefilter() -> None:
    got = _codes(VolumeRestrictions, make_pod().name("p").pvc("nope").obj(), [], [NODE], [])
    assert got == {"machine1": (Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "nope" not found',))}


# -- VolumeZone (volume_zone_test.go) -------------------------------------------------------
def _zone_objects() -> list[Any]:
    return [S.pvc("pvc-1", "", bound_pv="vol-1"), S.pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
            S.pvc("pvc-2", "", bound_pv="vol-2"), S.pv("vol-2", labels={REGION: "us-west1-b", "uselessLabel": "none"}),
            S.pvc("pvc-3", "", bound_pv="vol-3"), S.pv("vol-3", labels={ZONE: "us-west1-c__us-west1-a"}),
            S.pvc("pvc-4", "wait", ), S.storage_class("wait")]


@pytest.mark.parametrize("claim,labels,ok", [
    ("pvc-1", {}, True),
    ("pvc-1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, True),
    ("pvc-1", {BETA_ZONE: "us-west1-b"}, False),
    ("pvc-1", {ZONE: "us-west1-a"}, True),
    ("pvc-2", {REGION: "us-west1-b"}, True),
    ("pvc-2", {REGION: "no_us-west1-b"}, False),
    ("pvc-3", {ZONE: "us-west1-a"}, True),
    ("pvc-3", {ZONE: "us-west1-b"}, False),
    ("pvc-4", {ZONE: "us-west1-b"}, True),
], ids=["node-without-labels", "beta-zone-matched", "beta-zone-mismatch", "beta-pv-label-ga-node-label",
        "region-matched", "region-mismatch", "zone-set-matched", "zone-set-mismatch", "wffc-unbound-skipped"])
def test_volume_zone(claim: str, labels: dict[str, str], ok: bool) -> None:
    node = make_node().name("host1").labels(labels).capacity(cpu="1").obj()
    got = _codes(VolumeZone, make_pod().name("p").pvc(claim).obj(), [], [node], _zone_objects())
    assert got == {"host1": OK if ok else (Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,))}


def test_volume_zone_missing_objects() -> None:
    node = make_node().name("host1").label(ZONE, "a").capacity(cpu="1").obj()
    objs = [S.pvc("nopv", "", bound_pv="ghost"), S.pvc("noclass", "gone")]
    assert _codes(VolumeZone, make_pod().name("p").pvc("nopv").obj(), [], [node], objs) == \
        {"host1": (Code.UnschedulableAndUnresolvable, ('persistentvolume "ghost" not found',))}
    assert _codes(VolumeZone, make_pod().name("p").pvc("noclass").obj(), [], [node], objs) == \
        {"host1": (Code.UnschedulableAndUnresolvable, ('storageclass.storage.k8s.io "gone" not found',))}


# -- NodeVolumeLimits (csi_test.go) ---------------------------------------------------------
EBS = "ebs.csi.aws.com"


def _csi_pv(name: str, driver: str, handle: str) -> Any:
    return S.pv(name, "", source={"csi": {"driver": driver, "volumeHandle": handle}})


def _limits_objects(limit: int) -> list[Any]:
    objs: list[Any] = [S.csi_node("machine1", {EBS: limit})]
    for i in range(4):
        objs += [S.pvc(f"csi-ebs.csi.aws.com-{i}", "", bound_pv=f"pv-{i}"), _csi_pv(f"pv-{i}", EBS, f"vol-{i}")]
    objs += [S.storage_class("csi-sc", provisioner=EBS), S.pvc("unbound", "csi-sc")]
    return objs


@pytest.mark.parametrize("new,existing,limit,fits", [
    (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"]], 4, True),
    (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"]], 2, False),
    (["csi-ebs.csi.aws.com-1"], [["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"]], 2, True),
    (["csi-ebs.csi.aws.com-0", "csi-ebs.csi.aws.com-3"], [["csi-ebs.csi.aws.com-1"]], 2, False),
    (["unbound"], [["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"]], 2, False),
    (["unbound"], [["csi-ebs.csi.aws.com-1"]], 2, True),
], ids=["fits", "exceeds", "shared-volume-counted-once", "two-new-volumes-exceed", "unbound-claim-by-class",
        "unbound-claim-fits"])
def test_csi_limits(new: list[str], existing: list[list[str]], limit: int, fits: bool) -> None:
    pod = make_pod().name("p")
    for c in new:
        pod.pvc(c)
    olds = []
    for i, claims in enumerate(existing):
        w = make_pod().name(f"e{i}").node("machine1")
        for c in claims:
            w.pvc(c)
        olds.append(w.obj())
    got = _codes(CSILimits, pod.obj(), olds, [NODE], _limits_objects(limit))
    assert got == {"machine1": OK if fits else (Code.Unschedulable, ("node(s) exceed max volume count",))}


def test_inline_ebs_migrated_counts_against_the_csi_limit() -> None:
    """csi_test.go "should count in-tree inline volumes if migration is enabled": an inline
    awsElasticBlockStore volume counts as ebs.csi.aws.com."""
    existing = _vol_pod("e", "machine1", awsElasticBlockStore={"volumeID": "vol-a"})
    pod = _vol_pod("p", awsElasticBlockStore={"volumeID": "vol-b"})
    got = _codes(CSILimits, pod, [existing], [NODE], [S.csi_node("machine1", {EBS: 1})])
    assert got == {"machine1": (Code.Unschedulable, ("node(s) exceed max volume count",))}
    assert _codes(CSILimits, pod, [existing], [NODE], [S.csi_node("machine1", {EBS: 2})]) == {"machine1": OK}
    assert _codes(CSILimits, pod, [existing], [NODE], []) == {"machine1": OK}  # no CSINode: no migration, no limit


def test_volume_attachments_count_against_the_limit() -> None:
    """NodeVolumeLimits' ``getNodeVolumeAttachmentInfo`` (nodevolumelimits/csi.go): a volume the
    attach/detach controller still has attached to the node counts, once, even when no pod on
    the node uses it (1 attached + 1 new > 1; <= 2)."""
    from kubesched.api.storage import VolumeAttachment
    va = VolumeAttachment.from_dict({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                     "metadata": {"name": "va"},
                                     "spec": {"attacher": EBS, "nodeName": "machine1",
                                              "source": {"persistentVolumeName": "pv-1"}}})
    pod = make_pod().name("p").pvc("csi-ebs.csi.aws.com-0").obj()
    got = _codes(CSILimits, pod, [], [NODE], _limits_objects(1) + [va])
    assert got == {"machine1": (Code.Unschedulable, ("node(s) exceed max volume count",))}
    assert _codes(CSILimits, pod, [], [NODE], _limits_objects(2) + [va]) == {"machine1": OK}
    # the pod's own volume attached by a VolumeAttachment is not new
    own = make_pod().name("p").pvc("csi-ebs.csi.aws.com-1").obj()
    assert _codes(CSILimits, own, [], [NODE], _limits_objects(1) + [va]) == {"machine1": OK}
