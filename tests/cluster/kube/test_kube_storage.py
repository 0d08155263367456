"""``KubeStorage`` against ``kubesched serve``'s API server over HTTP: the storage
informers feed the lister, PreBind's writes are PUTs that a stale resourceVersion makes
fail (``StorageWriteError``), and ``wait_for`` polls as upstream's binder does
(``pkg/scheduler/framework/plugins/volumebinding/binder.go``: ``BindPodVolumes`` polls
``checkBindings`` every second until ``bindTimeoutSeconds``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from kube_helpers import eventually

from kubesched.server.apiserver.server import ApiServer
from kubesched.cluster.kube import KubeClient
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.resources import STORAGE_RESOURCES
from kubesched.cluster.kube.storage import KubeStorage
from kubesched.framework.storage import StorageWriteError


@pytest.fixture
def storage(client: KubeClient) -> Iterator[KubeStorage]:
    infs = [Informer(client, r) for r in STORAGE_RESOURCES]
    for i in infs:
        i.start()
    for i in infs:
        assert i.wait_for_sync(10)
    yield KubeStorage(client, pvs=infs[0], pvcs=infs[1], classes=infs[2], csinodes=infs[3], csidrivers=infs[4],
                      capacities=infs[5], attachments=infs[6])
    for i in infs:
        i.stop()


def test_lister_sees_objects_and_prebind_writes_go_to_the_server(apiserver: ApiServer,
                                                                  storage: KubeStorage) -> None:
    reg = apiserver.registry
    reg.create("storageclasses.storage.k8s.io", None, {"metadata": {"name": "wffc"}, "provisioner": "p.example.com",
                                                       "volumeBindingMode": "WaitForFirstConsumer"})
    reg.create("csinodes.storage.k8s.io", None, {"metadata": {"name": "node-01"}, "spec": {"drivers": [
        {"name": "p.example.com", "nodeID": "node-01", "topologyKeys": ["zone"], "allocatable": {"count": 3}}]}})
    reg.create("persistentvolumes", None, {"metadata": {"name": "pv1"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "p.example.com",
                                                                                 "volumeHandle": "h1"}}})
    reg.create("persistentvolumeclaims", "ns", {"metadata": {"name": "c"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "wffc"}})
    eventually(lambda: storage.pvc("ns", "c") and storage.pv("pv1") and storage.csi_node("node-01")
               and storage.storage_class("wffc"))
    sc = storage.storage_class("wffc")
    assert sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer" and sc.reclaim_policy == "Delete"
    node = storage.csi_node("node-01")
    assert node is not None and node.driver("p.example.com") is not None
    assert [p.name for p in storage.pvs()] == ["pv1"]

    claim = storage.pvc("ns", "c")
    assert claim is not None
    raw = dict(claim.raw)
    raw["metadata"] = {**raw["metadata"], "annotations": {"volume.kubernetes.io/selected-node": "node-01"}}
    written = storage.update_pvc(raw)
    assert written.annotations["volume.kubernetes.io/selected-node"] == "node-01"
    stored = reg.get("persistentvolumeclaims", "ns", "c")
    assert stored["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "node-01"}
    # the same (now stale) version again: the server refuses it, the binder sees an error
    with pytest.raises(StorageWriteError, match="modified"):
        storage.update_pvc(raw)
    vol = storage.pv("pv1")
    assert vol is not None
    pv_raw = dict(vol.raw)
    pv_raw["spec"] = {**pv_raw["spec"], "claimRef": {"namespace": "ns", "name": "c",
                                                     "uid": stored["metadata"]["uid"]}}
    assert storage.update_pv(pv_raw).claim_ref is not None
    eventually(lambda: (p := storage.pv("pv1")) and p.claim_ref is not None)


def test_wait_for_polls_each_interval_until_done_timeout_or_stop(storage: KubeStorage) -> None:
    calls: list[float] = []
    start = time.monotonic()

    def third_time() -> bool:
        calls.append(time.monotonic() - start)
        return len(calls) == 3

    assert storage.wait_for(third_time, timeout=5.0, interval=0.1)
    assert len(calls) == 3 and calls[0] >= 0.1  # the first check after one interval, as upstream
    assert not storage.wait_for(lambda: False, timeout=0.3, interval=0.1)

    def boom() -> bool:
        raise StorageWriteError("pv deleted")

    with pytest.raises(StorageWriteError):
        storage.wait_for(boom, timeout=1.0, interval=0.05)
    threading.Timer(0.2, storage.stopping.set).start()
    began = time.monotonic()
    assert not storage.wait_for(lambda: False, timeout=30.0, interval=1.0)
    assert time.monotonic() - began < 10.0  # ended by the stop, not by the 30 s timeout
