"""QueueingHints of the volume plugins, after upstream's hint tests in
``volumebinding/volume_binding_test.go`` (TestIsSchedulableAfterPersistentVolumeClaimChange,
...StorageClassChange, ...CSIStorageCapacityChange, ...CSINodeChange) and
``volumerestrictions/volume_restrictions_test.go`` (PVC added, pod deleted)."""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import QueueingHint, Resource
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumerestrictions import VolumeRestrictions
from kubesched.testing import storage as S
from kubesched.testing.wrappers import make_pod

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip


def _hint(plugin: Any, resource: Resource) -> Any:
    for e in plugin.events_to_register():
        if e.event.resource == resource and e.hint is not None:
            return e.hint
    raise AssertionError(f"no hint for {resource}")


def test_volume_binding_pvc_hint() -> None:
    hint = _hint(VolumeBinding(), Resource.PersistentVolumeClaim)
    pod = make_pod().name("pod-a").namespace("ns1").pvc("pvc1").obj()
    assert hint(pod, None, S.pvc("pvc1", "sc", ns="ns1")) == Q  # the pod's claim created
    assert hint(pod, None, S.pvc("pvc1", "sc", ns="ns2")) == SKIP  # other namespace
    assert hint(pod, None, S.pvc("pvc2", "sc", ns="ns1")) == SKIP  # a claim the pod does not use
    eph = make_pod().name("pod-e").set("spec.volumes", [
        {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]).obj()
    assert hint(eph, None, S.pvc("pod-e-v", "sc")) == Q  # ephemeral claims go by <pod>-<volume>


def test_volume_binding_storage_class_hint() -> None:
    hint = _hint(VolumeBinding(), Resource.StorageClass)
    pod = make_pod().name("p").pvc("c").obj()
    old = S.storage_class("sc", topologies=[{"zone": ["a"]}])
    assert hint(pod, None, old) == Q  # any new class
    assert hint(pod, old, S.storage_class("sc", topologies=[{"zone": ["a", "b"]}])) == Q
    assert hint(pod, old, S.storage_class("sc", topologies=[{"zone": ["a"]}])) == SKIP


def test_volume_binding_capacity_hint() -> None:
    hint = _hint(VolumeBinding(), Resource.CSIStorageCapacity)
    pod = make_pod().name("p").pvc("c").obj()
    small = S.capacity("c", "sc", "10Gi", {"zone": "a"})
    assert hint(pod, None, small) == Q
    assert hint(pod, small, S.capacity("c", "sc", "20Gi", {"zone": "a"})) == Q  # grew
    assert hint(pod, small, S.capacity("c", "sc", "5Gi", {"zone": "a"})) == SKIP  # shrank
    # maximumVolumeSize is the limit when set: a larger capacity with a smaller maximum does not help
    assert hint(pod, S.capacity("c", "sc", "10Gi", {"zone": "a"}, max_size="8Gi"),
                S.capacity("c", "sc", "20Gi", {"zone": "a"}, max_size="4Gi")) == SKIP


def test_volume_binding_csinode_hint() -> None:
    hint = _hint(VolumeBinding(), Resource.CSINode)
    pod = make_pod().name("p").pvc("c").obj()
    old = S.csi_node("n", {"d": 1})
    assert hint(pod, None, old) == Q
    assert hint(pod, old, S.csi_node("n", {"d": 2})) == SKIP
    assert hint(pod, old, S.csi_node("n", {"d": 1}, migrated="kubernetes.io/aws-ebs")) == Q


def test_volume_restrictions_hints() -> None:
    pl = VolumeRestrictions()
    added = _hint(pl, Resource.PersistentVolumeClaim)
    pod = make_pod().name("p").pvc("claim").obj()
    assert added(pod, None, S.pvc("claim", "sc")) == Q
    assert added(pod, None, S.pvc("other", "sc")) == SKIP
    deleted = _hint(pl, Resource.Pod)
    user = make_pod().name("user").pvc("claim").node("n").obj()
    stranger = make_pod().name("stranger").pvc("else").node("n").obj()
    assert deleted(pod, user, None) == Q
    assert deleted(pod, stranger, None) == SKIP


def test_node_volume_limits_csinode_update_hint() -> None:
    """nodevolumelimits csi_test.go (isSchedulableAfterCSINodeUpdated): only a grown limit queues."""
    from kubesched.plugins.nodevolumelimits import CSILimits
    hint = next(e.hint for e in CSILimits().events_to_register()
                if e.event.resource == Resource.CSINode and e.hint is not None)
    pod = make_pod().name("p").pvc("c").obj()
    old = S.csi_node("n", {"d": 1})
    assert hint(pod, old, S.csi_node("n", {"d": 2})) == Q
    assert hint(pod, old, S.csi_node("n", {"d": 1})) == SKIP
    assert hint(pod, old, S.csi_node("n", {"d": 1, "e": 3})) == Q  # a new driver with a limit
