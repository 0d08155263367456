"""Storage objects: API defaulting and validation (upstream pkg/apis/core/v1/defaults.go,
pkg/apis/storage/v1/defaults.go, pkg/apis/core/validation ValidatePersistentVolume /
ValidatePersistentVolumeClaim, pkg/apis/storage/validation)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.decode import load_manifests
from kubesched.api.defaults import default_object
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.api.storage import (
    CSIDriver, CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass, decode_storage,
)


def _pv(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/x"}}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"}, "spec": base}


def _pvc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "ns"},
            "spec": base}


def test_defaults_pv_pvc_class_driver() -> None:
    pv = decode_storage(default_object(_pv(), {}))
    assert isinstance(pv, PersistentVolume)
    assert (pv.reclaim_policy, pv.volume_mode, pv.phase) == ("Retain", "Filesystem", "Pending")
    pvc = decode_storage(default_object(_pvc(), {}))
    assert isinstance(pvc, PersistentVolumeClaim)
    assert (pvc.uid, pvc.phase, pvc.volume_mode, pvc.storage_class_name) == ("uid-ns-c", "Pending", "Filesystem", None)
    sc = decode_storage(default_object({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                        "metadata": {"name": "s"}, "provisioner": "x.csi"}, {}))
    assert isinstance(sc, StorageClass)
    assert (sc.volume_binding_mode, sc.reclaim_policy) == ("Immediate", "Delete")
    drv = decode_storage(default_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                         "metadata": {"name": "x.csi"}, "spec": {}}, {}))
    assert isinstance(drv, CSIDriver)
    assert drv.attach_required is True and drv.storage_capacity is False


@pytest.mark.parametrize("raw,field,msg", [
    (_pv(accessModes=[]), "spec.accessModes", "Required value"),
    (_pv(accessModes=["ReadWriteOncePod", "ReadWriteOnce"]), "spec.accessModes",
     "may not use ReadWriteOncePod with other access modes"),
    (_pv(capacity={}), "spec.capacity", "Required value"),
    (_pv(persistentVolumeReclaimPolicy="Keep"), "spec.persistentVolumeReclaimPolicy", "Unsupported value"),
    (_pv(hostPath=None), "spec", "must specify a volume type"),
    (_pv(local={"path": "/d"}), "spec.local", "may not specify more than 1 volume type"),
    (_pvc(resources={}), "spec.resources[storage]", "Required value"),
    (_pvc(resources={"requests": {"storage": "0"}}), "spec.resources[storage]", "must be greater than zero"),
    (_pv(capacity={"storage": "0"}), "spec.capacity[storage]", "must be greater than zero"),
    (_pvc(accessModes=["ReadWriteSometimes"]), "spec.accessModes", "Unsupported value"),
], ids=["pv-no-modes", "pv-rwop-mixed", "pv-no-capacity", "pv-bad-reclaim", "pv-no-source", "pv-two-sources",
        "pvc-no-request", "pvc-zero-request", "pv-zero-capacity", "pvc-bad-mode"])
def test_validation_errors_name_the_field(raw: dict[str, Any], field: str, msg: str) -> None:
    with pytest.raises(DecodeError) as exc:
        decode_storage(default_object(raw, {}))
    assert exc.value.field == field
    assert msg in exc.value.message


def test_local_pv_requires_node_affinity() -> None:
    raw = _pv(hostPath=None, local={"path": "/d"})
    with pytest.raises(DecodeError, match="Local volume requires node affinity"):
        decode_storage(default_object(raw, {}))


def test_csinode_allocatable_must_not_be_negative() -> None:
    raw = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
           "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"count": -1}}]}}
    with pytest.raises(DecodeError) as exc:
        CSINode.from_dict(raw)
    assert exc.value.field == "spec.drivers[0].allocatable.count"


def test_pod_volumes_parsed_with_ephemeral_claim_names() -> None:
    pod = Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "claim"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}}]}})
    assert [(v.source, v.claim_name, v.disk_id) for v in pod.volumes] == [
        ("persistentVolumeClaim", "claim", ""), ("ephemeral", "p-scratch", ""), ("awsElasticBlockStore", "", "vol-1")]
    assert pod.pvc_names == ("claim", "p-scratch")


def test_pod_volume_without_claim_name_is_rejected() -> None:
    with pytest.raises(DecodeError) as exc:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                                           "volumes": [{"name": "v", "persistentVolumeClaim": {}}]}})
    assert exc.value.field == "spec.volumes[0].persistentVolumeClaim.claimName"


def test_manifest_with_pvc_pods_loads(tmp_path: Any) -> None:
    f = tmp_path / "m.yaml"
    f.write_text("""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: c}}]
""")
    m = load_manifests([str(f)])
    assert [type(o).__name__ for o in m.storage] == ["PersistentVolumeClaim"]
    assert m.pods[0].pvc_names == ("c",)


def test_ephemeral_template_is_validated_with_the_pod() -> None:
    """Pod validation checks a generic ephemeral volume's claim template as a PVC spec
    (upstream ValidateVolumes -> ValidatePersistentVolumeClaimSpec)."""
    with pytest.raises(DecodeError) as exc:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [
            {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}}}]}})
    assert exc.value.field == "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes"
