"""NodeVolumeLimits with VolumeLimitScaling (alpha in 1.35, on from 1.37).

Upstream's rule (kubernetes/kubernetes#135012, ``nodevolumelimits/csi.go`` ``Filter`` and
``checkCSIDriverOnNode``): once the pod's new CSI volumes are known and not empty, each one's
driver must be installed on the node (listed in its CSINode) when that driver's CSIDriver sets
``spec.preventPodSchedulingIfMissing: true``; otherwise Unschedulable with
"<driver> CSI driver is not installed on the node" (the text upstream's e2e test
``test/e2e/storage/csimock`` waits for). A CSIDriver without the field, or no CSIDriver,
changes nothing; without the gate nothing changes. The stored upstream ``csi_test.go`` predates
the gate, so the cases below are built from that rule, each expectation stated with it.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.storage import CSIDriver
from kubesched.cluster.storage import InProcessStorage
from kubesched.framework.events import QueueingHint
from kubesched.framework.features import Features
from kubesched.framework.status import Code
from kubesched.plugins.nodevolumelimits import CSILimits
from kubesched.testing import storage as S
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_node, make_pod

EBS, GCE = "ebs.csi.aws.com", "pd.csi.storage.gke.io"
OK = (Code.Success, ())
MISSING = (Code.Unschedulable, (f"{EBS} CSI driver is not installed on the node",))
NODES = [make_node().name(n).capacity(cpu="1").obj() for n in ("with-driver", "other-driver", "no-csinode")]


def _driver(prevent: bool | None) -> CSIDriver:
    spec: dict[str, Any] = {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}
    return CSIDriver.from_dict({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                "metadata": {"name": EBS}, "spec": spec})


def _objects(prevent: bool | None, limit: int | None = None) -> list[Any]:
    objs: list[Any] = [S.csi_node("with-driver", {EBS: limit}), S.csi_node("other-driver", {GCE: 5}),
                       S.pvc("bound", "", bound_pv="pv-0"),
                       S.pv("pv-0", "", source={"csi": {"driver": EBS, "volumeHandle": "vol-0"}}),
                       S.pvc("bound-1", "", bound_pv="pv-1"),
                       S.pv("pv-1", "", source={"csi": {"driver": EBS, "volumeHandle": "vol-1"}}),
                       S.storage_class("csi-sc", provisioner=EBS), S.pvc("unbound", "csi-sc")]
    if prevent is not None:
        objs.append(_driver(prevent))
    return objs


def _filter(version: str, gates: str | None, pod: Any, objects: list[Any], existing: tuple[Any, ...] = (),
            batch: bool = False) -> dict[str, Any]:
    handle = handle_for(list(existing), NODES)
    store = InProcessStorage(lambda n: None)
    store.load(objects)
    handle.storage = handle.storage_writer = store
    handle.features = Features.for_version(version, gates)
    plugin = CSILimits(None, handle)
    return {n: (s.code, s.reasons) for n, s in filter_all(plugin, pod, handle, batch=batch).items()}


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("claim", ["bound", "unbound"])
def test_prevent_pod_scheduling_if_missing(claim: str, batch: bool) -> None:
    """1.37 (gate on): the driver opts in, so only the node whose CSINode lists it fits; the
    node with another driver and the node without a CSINode are refused. A claim bound to a
    CSI PV and an unbound claim provisioned by the driver's class count alike."""
    pod = make_pod().name("p").pvc(claim).obj()
    got = _filter("1.37", None, pod, _objects(prevent=True), batch=batch)
    assert got == {"with-driver": OK, "other-driver": MISSING, "no-csinode": MISSING}


@pytest.mark.parametrize("prevent", [False, None], ids=["field-false", "no-csidriver"])
def test_driver_not_opted_in_changes_nothing(prevent: bool | None) -> None:
    pod = make_pod().name("p").pvc("bound").obj()
    assert set(_filter("1.37", None, pod, _objects(prevent)).values()) == {OK}


@pytest.mark.parametrize("version,gates", [("1.36", None), ("1.35", None), ("1.37", "VolumeLimitScaling=false")])
def test_without_the_gate_nothing_changes(version: str, gates: str | None) -> None:
    """Off (1.35 and 1.36 by default, or turned off): v1.34's behaviour, no CSINode means no limit."""
    pod = make_pod().name("p").pvc("bound").obj()
    assert set(_filter(version, gates, pod, _objects(prevent=True)).values()) == {OK}


def test_alpha_gate_can_be_turned_on_in_1_35() -> None:
    pod = make_pod().name("p").pvc("bound").obj()
    got = _filter("1.35", "VolumeLimitScaling=true", pod, _objects(prevent=True))
    assert got == {"with-driver": OK, "other-driver": MISSING, "no-csinode": MISSING}


def test_limits_still_apply_where_the_driver_is_installed() -> None:
    """with-driver allows 1 EBS volume and an existing pod there holds vol-1: 1 + 1 > 1."""
    existing = make_pod().name("e").node("with-driver").pvc("bound-1").obj()
    pod = make_pod().name("p").pvc("bound").obj()
    got = _filter("1.37", None, pod, _objects(prevent=True, limit=1), (existing,))
    assert got["with-driver"] == (Code.Unschedulable, ("node(s) exceed max volume count",))
    assert got["other-driver"] == MISSING


def test_pods_without_csi_volumes_are_not_checked() -> None:
    pod = make_pod().name("p").obj()
    assert set(_filter("1.37", None, pod, _objects(prevent=True)).values()) == {OK}


def test_driver_installed_later_requeues() -> None:
    """A CSINode update that adds a driver can make a refused pod fit (with the gate); without
    it only a larger allocatable count does (v1.34's isSchedulableAfterCSINodeUpdated)."""
    pod = make_pod().name("p").pvc("bound").obj()
    old, new = S.csi_node("n", {GCE: 5}), S.csi_node("n", {GCE: 5, EBS: None})
    for version, want in (("1.37", QueueingHint.Queue), ("1.36", QueueingHint.QueueSkip)):
        handle = handle_for([], NODES)
        handle.features = Features.for_version(version)
        hints = {str(e.event): e.hint for e in CSILimits(None, handle).events_to_register()}
        hint = next(h for k, h in hints.items() if "CSINode" in k and "Update" in k)
        assert hint is not None and hint(pod, old, new) is want


def test_csidriver_field_decodes_and_validates() -> None:
    assert _driver(True).prevent_pod_scheduling_if_missing
    assert not _driver(None).prevent_pod_scheduling_if_missing
    with pytest.raises(Exception, match="spec.preventPodSchedulingIfMissing"):
        CSIDriver.from_dict({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
                             "spec": {"preventPodSchedulingIfMissing": "yes"}})
